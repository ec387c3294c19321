"""User-declared formats: spec checks, label-vs-log mismatches, golden collects of spec trees."""

from __future__ import annotations

import shutil
from pathlib import Path

import _golden
import pytest
import yaml

from benchcat import store, yamlio
from benchcat.collect import collect
from benchcat.formats import SpecCollector, SpecError, load_spec, parse_spec
from collectors.base import FileContext

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "formats"
EXAMPLE = ROOT / "examples" / "formats"

GOOD = {
    "name": "t",
    "path": "{hardware}/{framework}_{model}_{precision}/{run}.txt",
    "metrics": [{"regex": r"speed (?P<value>[\d.]+)", "take": "last"}],
}


def _collect(tmp_path: Path, tree: Path, spec: Path) -> tuple[str, object]:
    """Collect a copy of ``tree`` into a fresh catalog; the records and problems as text."""
    site = tmp_path / "site"
    shutil.copytree(tree, site / "logs")
    report = collect(site / "logs", site / "catalog", formats=[spec], jobs=1)
    cat = store.load(site / "catalog")
    doc = {
        "records": [cat.records[rid].model_dump(mode="json", exclude_none=True) for rid in sorted(cat.records)],
        "problems": [str(p) for p in report.problems],
    }
    return yamlio.dumps(doc), report


@pytest.mark.parametrize(
    ("tree", "spec", "golden"),
    [
        (FIXTURES / "mini", FIXTURES / "mini.yaml", "formats/mini.yaml"),
        (EXAMPLE / "lab-a100", EXAMPLE / "lab-a100.yaml", "formats/lab-a100.yaml"),
    ],
)
def test_golden_collect(tmp_path, update_golden, tree, spec, golden):
    text, _ = _collect(tmp_path, tree, spec)
    _golden.check(golden, text, update_golden)


def test_label_disagreeing_with_log_loses_and_is_reported(tmp_path):
    _, report = _collect(tmp_path, EXAMPLE / "lab-a100", EXAMPLE / "lab-a100.yaml")
    cat = store.load(tmp_path / "site" / "catalog")
    mislabeled = [r for r in cat.records.values() if r.system.name == "8xA100_SXM4"]
    assert len(mislabeled) == 1
    assert mislabeled[0].system.accelerator == "NVIDIA A100-PCIE-40GB"  # the sidecar wins over the folder
    assert mislabeled[0].config.precision == "amp"  # the log's amp : True wins over _FP32
    messages = [p.message for p in report.problems if p.path.startswith("8xA100_SXM4/")]
    assert any("accelerator: the path says 'A100 SXM4'" in m and "PCIE" in m for m in messages)
    assert any("precision: the path says 'fp32' but the log says 'amp'" in m for m in messages)
    assert all(p.level == "warning" for p in report.problems)


def test_label_agreeing_with_log_is_quiet():
    spec = parse_spec(
        {**GOOD, "log_fields": {"accelerator": r"GPU: (?P<value>.+)", "precision": r"prec=(?P<value>\w+)"}}, "s"
    )
    c = SpecCollector(spec)
    text = "GPU: NVIDIA A100-SXM4-80GB\nprec=AMP\nspeed 10\n"
    result = c.parse(text, FileContext("", "8xA100_80GB_SXM4/tf_bert_amp/1.txt", "0"))
    assert result.problems == []
    obs = result.observations[0]
    assert (obs.system.accelerator, obs.system.accelerator_count) == ("NVIDIA A100-SXM4-80GB", 8)
    assert (obs.config.framework, obs.config.precision, obs.benchmark.model) == ("tensorflow", "amp", "bert")
    assert obs.run.values == {"throughput": 10.0}


def test_recollect_is_idempotent_and_cached(tmp_path):
    _collect(tmp_path, FIXTURES / "mini", FIXTURES / "mini.yaml")
    site = tmp_path / "site"
    before = {p: p.read_bytes() for p in (site / "catalog").rglob("*.yaml")}
    again = collect(site / "logs", site / "catalog", formats=[FIXTURES / "mini.yaml"], jobs=1)
    assert (again.added, again.changed, again.removed) == ([], [], [])
    assert again.cached == again.files
    assert {p: p.read_bytes() for p in (site / "catalog").rglob("*.yaml")} == before


def test_formats_from_catalog_settings(tmp_path):
    site = tmp_path / "site"
    shutil.copytree(FIXTURES / "mini", site / "logs")
    shutil.copy(FIXTURES / "mini.yaml", site / "mini.yaml")
    (site / "catalog").mkdir()
    head = "schema_version: 1\nrevision: 0\nsettings:\n  formats: [mini.yaml]\n"
    (site / "catalog" / "catalog.yaml").write_text(head)
    report = collect(site / "logs", site / "catalog", jobs=1)
    assert len(report.added) == 2
    assert store.load(site / "catalog").settings == {"formats": ["mini.yaml"]}


def test_without_spec_the_tree_is_unknown(tmp_path):
    report = collect(FIXTURES / "mini", tmp_path / "catalog", jobs=1)
    assert report.added == [] and len(report.skipped) == 5


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"metrics": [{"regex": r"speed (\d+)"}]}, "s.yaml: metrics[0].regex: missing named group 'value'"),
        ({"metrics": [{"regex": "speed (?P<value>"}]}, "s.yaml: metrics[0].regex: not a valid regular expression"),
        ({"metrics": [{"regex": "(?P<value>1)", "name": "speed"}]}, "s.yaml: metrics[0].name: unknown metric 'speed'"),
        ({"metrics": [{"regex": "(?P<value>1)", "unit": "tokens/s"}]}, "metrics[0]: unit 'tokens/s' cannot be"),
        ({"metrics": [{"regex": "(?P<value>1)", "tkae": "last"}]}, "s.yaml: metrics[0].tkae: unknown key"),
        ({"metrics": [{"regex": "(?P<value>1)", "take": "best"}]}, "s.yaml: metrics[0].take: Input should be"),
        ({"metrics": []}, "s.yaml: metrics: List should have at least 1 item"),
        ({"path": "{gpu}/{run}.txt"}, "s.yaml: path: unknown field 'gpu'"),
        ({"static": {"framwork": "tf"}}, "s.yaml: static: unknown field 'framwork'"),
        ({"log_fields": {"cuda": "CUDA (\\d+)"}}, "s.yaml: log_fields: missing named group 'value'"),
        ({"sidecars": [{"path": "env", "fields": {"GPU": "gpu"}}]}, "s.yaml: sidecars[0]: unknown field 'gpu'"),
        ({"headline": "step_time"}, "s.yaml: headline: 'step_time' is not one of the metrics"),
        ({"name": "Bad Name"}, "s.yaml: name: String should match pattern"),
        ({"fromat": 1}, "s.yaml: fromat: unknown key"),
    ],
)
def test_bad_spec_errors_point_at_the_key(tmp_path, change, message):
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({**GOOD, **change}))
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert message in str(info.value)
    assert str(info.value).startswith(str(path))


def test_bad_spec_stops_collect_before_writing(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("name: x\nmetrics: [{regex: 'no group'}]\n")
    with pytest.raises(SpecError):
        collect(FIXTURES / "mini", tmp_path / "catalog", formats=[path])
    assert not (tmp_path / "catalog" / "catalog.yaml").exists()


def test_cli_collect_with_format(tmp_path):
    from typer.testing import CliRunner

    from benchcat.cli import app

    res = CliRunner().invoke(
        app, ["collect", str(FIXTURES / "mini"), "--format", str(FIXTURES / "mini.yaml"), "--catalog",
              str(tmp_path / "c")],  # fmt: skip
    )
    assert res.exit_code == 0, res.output
    assert "2 added" in res.output
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nmetrics: [{regex: 'no group'}]\n")
    res = CliRunner().invoke(app, ["collect", str(FIXTURES / "mini"), "--format", str(bad), "--catalog", str(tmp_path)])
    assert res.exit_code == 2
    assert "metrics[0].regex: missing named group 'value'" in res.output


def test_take_rules_and_overrides():
    spec = parse_spec(
        {
            "name": "t",
            "path": "{model}/{run}.log",
            "static": {"framework": "tf"},
            "metrics": [
                {"regex": r"v=(?P<value>\d+)", "take": "mean", "skip": 1, "window": 2,
                 "models": {"Other": {"take": "first"}}},  # fmt: skip
                {"name": "step_time", "regex": r"t=(?P<value>[\d.]+)", "unit": "s", "take": "first"},
            ],
        },
        "s",
    )
    c = SpecCollector(spec)
    text = "v=1\nv=10\nv=20\nv=1000\nt=0.5\n"
    run = c.parse(text, FileContext("", "m/1.log", "0")).observations[0].run
    assert run.values == {"throughput": 15.0, "step_time": 500.0}
    assert (run.warmup_skipped, run.iterations, run.source.lines) == (1, 2, "2-3,5")
    other = c.parse(text, FileContext("", "other/1.log", "0")).observations[0].run
    assert other.values["throughput"] == 1.0
    short = c.parse("v=1\n", FileContext("", "m/2.log", "0"))
    assert short.observations[0].run.status == "error"
    assert any("all inside the 1 skipped" in p.message for p in short.problems)


def test_detect_uses_glob_exclude_pattern_and_head():
    spec = parse_spec({**GOOD, "files": "**/*.txt", "exclude": ["**/env.txt"], "detect": "^speed"}, "s")
    c = SpecCollector(spec)
    assert c.detect("speed 1\n", "a/tf_m_fp32/1.txt")
    assert c.detect("speed 1\n", "deep/er/a/tf_m_fp32/1.txt") is False  # pattern is anchored at the root
    assert not c.detect("speed 1\n", "a/tf_m_fp32/env.txt")
    assert not c.detect("hello\n", "a/tf_m_fp32/1.txt")
    assert not c.detect("speed 1\n", "a/tf_m_fp32/1.log")


def test_missing_sidecar_and_missing_identity_are_problems():
    spec = parse_spec({**GOOD, "sidecars": [{"path": "env.txt", "fields": {"GPU": "accelerator"}}]}, "s")
    c = SpecCollector(spec)
    assert c.sidecars("box/tf_m_fp32/1.txt") == ["box/tf_m_fp32/env.txt"]
    result = c.parse("speed 3\n", FileContext("", "box/tf_m_fp32/1.txt", "0", {"box/tf_m_fp32/env.txt": None}))
    assert [p.message for p in result.problems] == ["sidecar box/tf_m_fp32/env.txt not found; its fields stay unknown"]
    assert result.observations[0].run.values == {"throughput": 3.0}
    bare = SpecCollector(parse_spec({"name": "b", "path": "{model}/{run}.txt", "metrics": GOOD["metrics"]}, "s"))
    result = bare.parse("speed 3\n", FileContext("", "m/1.txt", "0"))
    assert result.observations == []
    assert [(p.level, p.message) for p in result.problems] == [
        ("error", "no framework: say it in the path, the log, or the static fields")
    ]


def test_parts_disambiguate_and_reject_groups(tmp_path):
    spec = {"name": "p", "path": "{framework}-{model}-{precision}/{run}.log", "metrics": GOOD["metrics"]}
    loose = SpecCollector(parse_spec(spec, "s")).parts("torch-bert-base-fp16/1.log")
    assert loose["model"] == "bert"  # the shortest match: why 'parts' exists
    strict = SpecCollector(parse_spec({**spec, "parts": {"precision": "fp16|fp32"}}, "s"))
    assert strict.parts("torch-bert-base-fp16/1.log") == {"framework": "torch", "model": "bert-base",
                                                          "precision": "fp16", "run": "1"}  # fmt: skip
    with pytest.raises(SpecError, match=r"s: parts: precision: use \(\?:\.\.\.\) instead of capturing groups"):
        parse_spec({**spec, "parts": {"precision": "(fp16|fp32)"}}, "s")
