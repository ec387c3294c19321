"""Legacy markdown tables: cell and header grammar, accounting, questions, golden imports."""

from __future__ import annotations

import shutil
from pathlib import Path

import _golden
import pytest
import yaml

from benchcat import store, yamlio
from benchcat.formats import SpecError
from benchcat.tables import import_tables, interpret, load_mapping, mapping_skeleton, report_lines
from benchcat.tables.grammar import context_facts, parse_cell, parse_header
from benchcat.tables.mapping import Mapping

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "tables"
EXAMPLES = ROOT / "examples" / "tables"


@pytest.mark.parametrize(
    ("raw", "expect"),
    [
        ("255", {"kind": "value", "value": 255.0}),
        ("1,234.5", {"kind": "value", "value": 1234.5}),
        ("**480**", {"kind": "value", "value": 480.0}),
        ("OOM", {"kind": "failed", "status": "oom"}),
        ("OOM*", {"kind": "failed", "status": "oom", "marks": "*"}),
        ("**OOM**¹", {"kind": "failed", "status": "oom", "marks": "¹"}),
        ("error", {"kind": "failed", "status": "error"}),
        ("[seg fault](https://x/1)", {"kind": "failed", "status": "segfault", "link": "https://x/1"}),
        ("[error](http://l/2 \"log\")", {"kind": "failed", "status": "error", "link": "http://l/2"}),
        ("176(-20%)", {"kind": "value", "value": 176.0, "delta": -20.0}),
        ("115 (+3%)", {"kind": "value", "value": 115.0, "delta": 3.0}),
        ("98/222s", {"kind": "value", "value": 98.0, "compile_time": 222.0}),
        ("98/2min", {"kind": "value", "value": 98.0, "compile_time": 120.0}),
        ("80(0.85)", {"kind": "value", "value": 80.0, "efficiency": 0.85}),
        ("185(0.92)*", {"kind": "value", "value": 185.0, "efficiency": 0.92, "marks": "*"}),
        ("", {"kind": "empty"}),
        ("—", {"kind": "empty"}),
        ("n/a", {"kind": "empty"}),
        ("~95", {"kind": "unknown"}),
        ("fast", {"kind": "unknown"}),
    ],
)
def test_cell_grammar(raw, expect):
    cell = parse_cell(raw)
    for key, value in expect.items():
        assert getattr(cell, key) == value, (raw, key)


@pytest.mark.parametrize(
    ("text", "fields", "unit", "unknown"),
    [
        ("A100+tf+xla+fp16(example/sec)", {"accelerator": "A100", "vendor": "nvidia", "framework": "tensorflow",
                                           "compile_mode": "xla", "precision": "fp16"}, "example/sec", []),
        ("TF+fp16+xla, V100, samples/sec", {"framework": "tensorflow", "precision": "fp16", "compile_mode": "xla",
                                            "accelerator": "V100", "vendor": "nvidia"}, "samples/sec", []),
        ("our TF+fp16, V100, samples/sec", {"framework": "tensorflow", "precision": "fp16", "accelerator": "V100",
                                            "vendor": "nvidia"}, "samples/sec", ["our"]),
        ("8xH100 SXM+pytorch+bf16", {"accelerator": "H100 SXM", "accelerator_count": 8, "vendor": "nvidia",
                                     "framework": "pytorch", "precision": "bf16"}, None, []),
        ("TF+xla, lluvator, samples/sec", {"framework": "tensorflow", "compile_mode": "xla"}, "samples/sec",
         ["lluvator"]),
        ("samples/s", {}, "samples/s", []),
    ],
)  # fmt: skip
def test_header_grammar(text, fields, unit, unknown):
    header = parse_header(text)
    assert (header.fields, header.unit, header.unknown) == (fields, unit, unknown)


def test_context_facts():
    lines = ["Batch size = 64 & W/O xla & W/O clip", "BERT-base FP16", "- batch_size=seq_len=128", "cuda: 10.2",
             "Automatic mixed precision (AMP) is used by fp16 and fp32 kernels", "Created: 2022-10-31"]  # fmt: skip
    assert context_facts(lines) == {"batch_size": 128, "seq_len": 128, "precision": "fp16", "cuda": "10.2"}


def _import(tmp_path: Path, table: Path, mapping: Path | None = None):
    site = tmp_path / "site"
    (site / "tables").mkdir(parents=True, exist_ok=True)
    shutil.copy(table, site / "tables" / table.name)
    return import_tables(site / "tables" / table.name, site / "catalog", mapping=mapping), site


def _catalog_text(site: Path) -> str:
    cat = store.load(site / "catalog")
    records = [cat.records[r].model_dump(mode="json", exclude_none=True) for r in sorted(cat.records)]
    return yamlio.dumps({"records": records})


def test_golden_mixed_fixture(tmp_path, update_golden):
    report, site = _import(tmp_path, FIXTURES / "mixed.md")
    _golden.check("tables/mixed.report.txt", "\n".join(report_lines(report)) + "\n", update_golden)
    _golden.check("tables/mixed.records.yaml", _catalog_text(site), update_golden)


def test_mixed_fixture_behaviour(tmp_path):
    report, site = _import(tmp_path, FIXTURES / "mixed.md")
    messages = [p.message for p in report.problems]
    assert any("stated delta +40% but 300 vs 220 is +36.4%" in m for m in messages)
    assert not any("-20%" in m or "+3%" in m for m in messages)  # these check out (+3% has no baseline: OOM)
    assert any("stated scaling efficiency 0.5 but 700 / (8 x 98) = 0.89" in m for m in messages)
    assert not any("0.94" in m for m in messages)
    assert any("stated 3.5 but 300 / 100 = 3.00" in m for m in messages)
    assert {(q.section, q.key) for q in report.questions} == {("tokens", "MLU370"), ("cells", "TF+fp16, MLU370, samples/sec: ~95")}  # noqa: E501
    cat = store.load(site / "catalog")
    runs = {(r.benchmark.model, r.config.precision, r.config.devices, r.config.batch_size, r.system.accelerator): r
            for r in cat.records.values()}  # fmt: skip
    seg = runs[("bert-large", "fp16", 1, 48, "A100")].runs[0]
    assert (seg.status, seg.excerpt, seg.method, seg.source.path) == ("segfault", "http://logs.example/run/17", "table", "table-1")  # noqa: E501
    compiled = runs[("bert-large", "fp16", 1, 32, "A100")]
    assert compiled.runs[0].values == {"throughput": 98.0, "compile_time": 222.0}
    assert compiled.config.grad_accum == 4
    assert (compiled.software.cuda, compiled.software.framework_version) == ("11.1", "1.7")
    oom = runs[("resnet50", "fp32", 8, 256, "A100")]
    assert oom.runs[0].status == "oom" and any("footnote mark '*'" in n for n in oom.notes)
    gpt2 = [r for r in cat.records.values() if r.benchmark.model == "gpt2"]
    assert sorted(r.config.devices for r in gpt2) == [1, 2, 4] and all(r.config.precision == "fp16" for r in gpt2)
    totals = {b: sum(a.counts[b] for a in report.accounts) for b in ("imported", "failed", "empty", "duplicate",
                                                                    "unanswered")}  # fmt: skip
    assert totals == {"imported": 13, "failed": 4, "empty": 2, "duplicate": 2, "unanswered": 2}


def test_questions_round_trip_through_a_mapping_file(tmp_path):
    report, site = _import(tmp_path, FIXTURES / "mixed.md")
    skeleton = mapping_skeleton(report.questions, "mixed.md")
    doc = yaml.safe_load(skeleton)
    assert doc == {"tokens": {"MLU370": None}, "cells": {"TF+fp16, MLU370, samples/sec: ~95": None}}
    answers = skeleton.replace("MLU370: null", "MLU370: {accelerator: MLU370-X8, vendor: cambricon}")
    answers = answers.replace("~95\": null", "~95\": {value: 95}")
    (tmp_path / "answers.yaml").write_text(answers)
    again = import_tables(site / "tables" / "mixed.md", site / "catalog", mapping=tmp_path / "answers.yaml")
    assert again.questions == []
    before = sum(a.counts["imported"] for a in report.accounts)
    assert sum(a.counts["imported"] for a in again.accounts) == before + 2
    assert sum(a.counts["unanswered"] for a in again.accounts) == 0
    assert len(again.added) == 2 and again.removed == []
    cat = store.load(site / "catalog")
    mlu = [r for r in cat.records.values() if r.system.accelerator == "MLU370-X8"]
    assert sorted(r.metrics["throughput"].median for r in mlu) == [95, 120]


@pytest.mark.parametrize("table", ["dlperf_mxnet_bert.md", "iluvatar_vs_v100.md"])
def test_reimport_is_idempotent(tmp_path, table):
    answers = EXAMPLES / table.replace(".md", ".answers.yaml")
    first, site = _import(tmp_path, EXAMPLES / table)
    if answers.exists():  # found beside the table, without --mapping
        shutil.copy(answers, site / "tables" / answers.name)
        first = import_tables(site / "tables" / table, site / "catalog")
        assert first.mapping is not None
    assert first.added and first.questions == [] and first.problems == []
    files = {p: p.read_bytes() for p in (site / "catalog").rglob("*.yaml")}
    again = import_tables(site / "tables" / table, site / "catalog")
    assert (again.added, again.changed, again.removed, again.written) == ([], [], [], [])
    assert again.revision == first.revision
    assert {p: p.read_bytes() for p in (site / "catalog").rglob("*.yaml")} == files


def test_examples_import_with_every_cell_accounted():
    """The shipped example tables import fully (answers file found beside the table)."""
    text = (EXAMPLES / "iluvatar_vs_v100.md").read_text()
    found = interpret(text, load_mapping(EXAMPLES / "iluvatar_vs_v100.answers.yaml"), "x", "0")
    assert found.questions == [] and found.problems == []
    assert sum(a.counts["unanswered"] for a in found.accounts) == 0
    assert sum(a.cells for a in found.accounts) == 66


def _independent_count(text: str, row_headers: set[str]) -> int:
    """Non-empty cells outside row-field columns, counted without the importer's parser."""
    count, header = 0, None
    for line in text.splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if set("".join(cells)) <= set("-: "):
            continue
        if header is None or not any(header):
            header = cells
            continue
        count += sum(1 for h, c in zip(header, cells, strict=False) if c and h not in row_headers)
    return count


def test_seed_tables_every_numeric_cell_accounted(shared):
    seeds = shared / "seeds"
    text = (seeds / "iluvatar_vs_v100_notes.md").read_text()
    found = interpret(text, load_mapping(FIXTURES / "iluvatar_vs_v100.answers.yaml"), "seed", "0")
    totals = {b: sum(a.counts[b] for a in found.accounts) for b in ("imported", "failed", "empty", "duplicate",
                                                                   "unanswered")}  # fmt: skip
    assert totals == {"imported": 39, "failed": 19, "empty": 31, "duplicate": 33, "unanswered": 0}
    filled = _independent_count(text, {"Model size", "seq_len", "batch", "batch_size", "Configuration"})
    assert filled == totals["imported"] + totals["failed"] + totals["duplicate"]
    assert [p.message for p in found.problems] == [
        "table-4 line 75 column 'V100 + fp16': '185(0.92)' differs from the same configuration at table-1 line 23; "
        "both kept as runs"
    ]
    text = (seeds / "dlperf_mxnet_bert_readme.md").read_text()
    found = interpret(text, load_mapping(FIXTURES / "dlperf_mxnet_bert.answers.yaml"), "seed", "0")
    assert [a.counts["imported"] for a in found.accounts] == [6] * 6
    assert sum(a.derived for a in found.accounts) == 36 and found.problems == [] and found.questions == []
    medians = sorted(o.run.values["throughput"] for o in found.observations)
    assert (medians[0], medians[-1]) == (150.11, 14822.31)


def test_seed_without_answers_asks_instead_of_guessing(shared):
    text = (shared / "seeds" / "iluvatar_vs_v100_notes.md").read_text()
    found = interpret(text, Mapping(), "seed", "0")
    asked = {(q.section, q.key) for q in found.questions}
    assert {("tokens", "lluvator"), ("tokens", "our"), ("columns", "Model size"), ("defaults", "model"),
            ("cells", "batch: 32 x 2"), ("tables", "table-3")} <= asked  # fmt: skip
    assert found.observations == []
    assert sum(a.counts["unanswered"] for a in found.accounts) == 100


def test_bad_mapping_names_the_key(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text("tokenz: {our: {}}\ncolumns: {x: {feild: model}}\n")
    with pytest.raises(SpecError) as info:
        load_mapping(path)
    assert f"{path}: tokenz: Extra inputs are not permitted" in str(info.value)
    assert f"{path}: columns.x.feild: Extra inputs are not permitted" in str(info.value)


def test_cli_import(tmp_path):
    from typer.testing import CliRunner

    from benchcat.cli import app

    runner = CliRunner()
    assert "Example: catalog import" in runner.invoke(app, ["import", "--help"]).output
    shutil.copy(FIXTURES / "mixed.md", tmp_path / "mixed.md")
    res = runner.invoke(app, ["import", str(tmp_path / "mixed.md"), "--catalog", str(tmp_path / "c"), "--strict"])
    assert res.exit_code == 1
    assert "questions: 2 unanswered" in res.output and "MLU370: null" in res.output
    res = runner.invoke(app, ["import", str(tmp_path / "nope.md"), "--catalog", str(tmp_path / "c")])
    assert res.exit_code == 2 and "nope.md" in res.output


def test_find_tables_blank_header_and_pasted_text_tables():
    from benchcat.tables.interpret import _header_word
    from benchcat.tables.markdown import find_tables

    text = "intro\n\n| | |\n|---|---|\n|batch|V100, samples/s|\n|32|100|\n\n"
    text += "node_num gpu_num samples/s\n1 1 5\n1 2 9\nend\n"
    first, second = find_tables(text, _header_word)
    assert (first.header, first.header_line, first.rows) == (["batch", "V100, samples/s"], 5, [(6, ["32", "100"])])
    assert first.context == [(1, "intro")]
    assert (second.shape, second.header, [n for n, _ in second.rows]) == ("text", ["node_num", "gpu_num", "samples/s"], [9, 10])  # noqa: E501
