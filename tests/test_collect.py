"""The collect pipeline on hand-written DLPerf fixtures: answers, aggregation, golden output."""

import shutil

import pytest

from benchcat import store
from benchcat.collect import collect
from tests.conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "dlperf"
GOLDEN = ROOT / "tests" / "golden" / "dlperf"


@pytest.fixture
def site(tmp_path):
    logs = tmp_path / "logs"
    shutil.copytree(FIXTURES, logs)
    return tmp_path


def by_key(cat):
    return {
        (r.benchmark.model, r.config.precision, r.config.batch_size, r.config.topology): r for r in cat.records.values()
    }


def test_known_answers(site):
    report = collect(site / "logs", site / "catalog")
    cat = store.load(site / "catalog")
    recs = by_key(cat)
    fp32 = recs[("resnet50", "fp32", 128, "1n1g")]
    assert [r.run_id for r in fp32.runs] == ["1", "2", "4"]  # gaps in run ids are kept
    assert [r.values["throughput"] for r in fp32.runs] == [320.0, 305.0, 330.0]
    assert fp32.metrics["throughput"].median == 320.0
    assert fp32.metrics["throughput"].mean == 318.3333333
    assert all(r.warmup_skipped == 20 and r.iterations == 100 for r in fp32.runs)
    assert fp32.runs[0].source.lines == "4-8"  # the window lines after warm-up
    fp16 = recs[("resnet50", "fp16", 128, "1n8g")]
    assert fp16.config.devices == 8 and fp16.metrics["throughput"].median == 2400.0
    bert = recs[("bert-base", "fp16", 32, "1n2g")]
    assert bert.config.framework == "mxnet" and bert.config.devices_per_node == 2
    assert [round(r.values["throughput"], 4) for r in bert.runs] == [492.3077, 512.0]
    oom = recs[("resnet50", "fp32", 256, "1n1g")]
    assert oom.runs[0].status == "oom" and "ResourceExhaustedError" in oom.runs[0].excerpt
    assert oom.metrics["throughput"].count == 0 if "throughput" in oom.metrics else True
    assert report.skipped == ["README.txt"]
    assert [p.path for p in report.problems] == ["tensorflow/resnet50/bz256/1n1g/resnet50_b256_fp32_1.log"]


def test_golden(site, update_golden):
    collect(site / "logs", site / "catalog")
    produced = {p.relative_to(site / "catalog").as_posix(): p.read_text() for p in (site / "catalog").rglob("*.yaml")}
    if update_golden:
        shutil.rmtree(GOLDEN, ignore_errors=True)
        for rel, text in produced.items():
            (GOLDEN / rel).parent.mkdir(parents=True, exist_ok=True)
            (GOLDEN / rel).write_text(text)
    expected = {p.relative_to(GOLDEN).as_posix(): p.read_text() for p in GOLDEN.rglob("*.yaml")}
    assert produced == expected


def test_second_collect_is_byte_identical_and_reports_no_change(site):
    first = collect(site / "logs", site / "catalog")
    before = {p: p.read_bytes() for p in (site / "catalog").rglob("*.yaml")}
    again = collect(site / "logs", site / "catalog")
    assert len(first.added) == 4 and not again.added and not again.changed and not again.removed
    assert again.revision == first.revision == 1
    assert {p: p.read_bytes() for p in (site / "catalog").rglob("*.yaml")} == before


def test_fresh_catalogs_from_same_logs_are_identical(site, tmp_path):
    collect(site / "logs", site / "catalog")
    other = tmp_path / "elsewhere" / "site"
    shutil.copytree(site / "logs", other / "logs")
    collect(other / "logs", other / "catalog", jobs=1)
    a = {p.relative_to(site / "catalog"): p.read_bytes() for p in (site / "catalog").rglob("*.yaml")}
    b = {p.relative_to(other / "catalog"): p.read_bytes() for p in (other / "catalog").rglob("*.yaml")}
    assert a == b


def test_rerun_updates_the_record_and_history(site):
    collect(site / "logs", site / "catalog")
    src = site / "logs/tensorflow/resnet50/bz128/1n1g/resnet50_b128_fp32_4.log"
    shutil.copy(src, src.with_name("resnet50_b128_fp32_12.log"))
    report = collect(site / "logs", site / "catalog")
    assert len(report.changed) == 1 and not report.added and report.revision == 2
    cat = store.load(site / "catalog")
    rec = cat.records[report.changed[0]]
    assert [r.run_id for r in rec.runs] == ["1", "2", "4", "12"]
    assert rec.metrics["throughput"].median == 325.0
    assert cat.history[-1]["changed"] == [{"id": rec.id, "old": 320.0, "new": 325.0}]


def test_removed_logs_take_their_runs_and_records_with_them(site):
    collect(site / "logs", site / "catalog")
    shutil.rmtree(site / "logs/mxnet")
    report = collect(site / "logs", site / "catalog")
    assert len(report.removed) == 1 and report.removed[0].startswith("bert-base-mxnet-1n2g-")
    assert store.load(site / "catalog").history[-1]["removed"][0]["old"] == pytest.approx(502.1538462)


def test_runs_from_another_root_are_kept(site, tmp_path):
    collect(site / "logs", site / "catalog")
    more = site / "more" / "tensorflow/resnet50/bz128/1n1g"
    more.mkdir(parents=True)
    shutil.copy(
        site / "logs/tensorflow/resnet50/bz128/1n1g/resnet50_b128_fp32_1.log", more / "resnet50_b128_fp32_9.log"
    )
    report = collect(site / "more", site / "catalog")
    assert len(report.changed) == 1
    rec = store.load(site / "catalog").records[report.changed[0]]
    assert [(r.source.root, r.run_id) for r in rec.runs] == [("logs", "1"), ("logs", "2"), ("logs", "4"), ("more", "9")]


def test_dry_run_writes_nothing(site):
    report = collect(site / "logs", site / "catalog", dry_run=True)
    assert len(report.added) == 4 and not (site / "catalog" / "catalog.yaml").exists()
