"""The whole chain without a framework: fake runner -> child process -> log -> collector -> catalog."""

import json
import sys

import pytest
import yaml
from runner_helpers import run_into
from typer.testing import CliRunner

import collectors
from benchcat import store, sweep
from benchcat.cli import app
from benchcat.collect import collect
from runners import launch

PY = sys.executable


def only_record(catalog):
    cat = store.load(catalog)
    assert len(cat.records) == 1
    return next(iter(cat.records.values()))


def test_ok_run_collects_into_a_complete_record(tmp_path, tiny_weights):
    status, log = run_into(tmp_path / "logs", PY, framework="fake", weights=tiny_weights, steps=5, warmup=2)
    assert status == "ok" and launch.is_complete(log)
    assert collectors.detect(log.read_text()[:1000], "x.log").name == "benchcat-runner"
    report = collect(tmp_path / "logs", tmp_path / "catalog")
    assert not report.problems
    rec = only_record(tmp_path / "catalog")
    assert rec.benchmark.model == "bert-tiny" and rec.benchmark.seq_len == 32
    assert rec.benchmark.dataset == "synthetic"
    c = rec.config
    assert (c.framework, c.precision, c.batch_size, c.grad_accum, c.compile_mode) == ("fake", "fp32", 4, 1, "eager")
    assert c.sync_every_step is True and c.fused_ops is False and c.flags["device"] == "cpu"
    assert rec.system.cpu and rec.system.host
    sw = rec.software
    assert sw.framework_version and sw.python and sw.os and sw.other["numpy"]
    run = rec.runs[0]
    assert run.status == "ok" and run.iterations == 3 and run.warmup_skipped == 2
    assert {"throughput", "step_time", "compile_time", "warmup_time", "host_rss", "loss_step0"} <= set(run.values)
    assert "peak_memory" not in run.values  # the CPU reports none: left out, not invented


@pytest.mark.parametrize(("fault", "status", "words"), [
    ("oom", "oom", "MemoryError"),
    ("segfault", "segfault", "SIGSEGV"),
    ("error", "error", "forced error"),
    ("timeout", "timeout", "time limit"),
])
def test_forced_failures_get_their_status(tmp_path, tiny_weights, fault, status, words):
    got, log = run_into(tmp_path / "logs", PY, timeout=15, framework="fake", weights=tiny_weights, fault=fault)
    assert got == status and launch.is_complete(log)
    collect(tmp_path / "logs", tmp_path / "catalog")
    run = only_record(tmp_path / "catalog").runs[0]
    assert run.status == status and words in run.reason
    assert run.values == {}
    if fault in ("oom", "error"):
        assert words in run.excerpt


def test_interrupted_log_is_a_missing_run(tmp_path, tiny_weights):
    _, log = run_into(tmp_path / "logs", PY, framework="fake", weights=tiny_weights)
    lines = log.read_text().splitlines()
    log.write_text("\n".join(lines[:4]) + "\n")
    assert not launch.is_complete(log)
    report = collect(tmp_path / "logs", tmp_path / "catalog")
    assert [p.message for p in report.problems] == ["log has no summary or failure line (run interrupted?)"]
    assert only_record(tmp_path / "catalog").runs[0].status == "missing"


def write_sweep(tmp_path, **settings):
    doc = {
        "output": "logs",
        "matrix": {"framework": "fake", "batch_size": [2, 4], "seq_len": 16},
        "exclude": [{"batch_size": 4}],
        "settings": {"steps": 3, "warmup": 1, "repeats": 2, "timeout": 30, **settings},
    }
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_sweep_expands_runs_resumes_and_collects(tmp_path):
    plan = sweep.load(write_sweep(tmp_path))
    assert [(c.batch_size, c.run_id) for c in plan.runs] == [(2, "1"), (2, "2")]
    first = sweep.run(plan)
    assert first.statuses == {"ok": 2} and first.skipped == 0
    again = sweep.run(plan)
    assert again.skipped == 2 and not again.statuses
    collect(plan.output, tmp_path / "catalog")
    rec = only_record(tmp_path / "catalog")
    assert [r.run_id for r in rec.runs] == ["1", "2"]
    losses = {r.values["loss_step0"] for r in rec.runs}
    assert len(losses) == 1  # same seed, same data, same weights: the same step-0 loss


def test_sweep_errors_name_the_key(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("matrix: {framework: fake, colour: red}\n")
    with pytest.raises(sweep.SweepError, match="colour"):
        sweep.load(bad)
    bad.write_text("matrix: {framework: fake, precision: fp8}\n")
    with pytest.raises(sweep.SweepError, match="fp8"):
        sweep.load(bad)
    plan = sweep.load(write_sweep(tmp_path))
    with pytest.raises(sweep.SweepError, match="catalog env setup fake"):
        sweep.run(plan, python_for=lambda _fw: None)


def test_cli_run_writes_logs_and_catalog_and_never_imports_a_framework(tmp_path):
    path = write_sweep(tmp_path)
    runner = CliRunner()
    result = runner.invoke(app, ["run", str(path), "--catalog", str(tmp_path / "catalog")])
    assert result.exit_code == 0, result.output
    assert "2 runs: 2 ok" in result.output
    assert len(store.load(tmp_path / "catalog").records) == 1
    dry = runner.invoke(app, ["run", str(path), "--dry-run"])
    assert dry.output.count("done ") == 2
    listed = runner.invoke(app, ["runners"])
    assert listed.exit_code == 0 and "pytorch" in listed.output
    assert not {"tensorflow", "torch", "mindspore", "mxnet"} & set(sys.modules)


def test_header_has_config_and_machine(tmp_path, tiny_weights):
    _, log = run_into(tmp_path, PY, framework="fake", weights=tiny_weights)
    header = json.loads(log.read_text().splitlines()[0])
    assert header["config"]["framework"] == "fake" and header["machine"]["cpu_cores"]
    assert set(header["machine"]) >= {"host", "cpu", "ram_gib", "os", "git_commit", "accelerators", "env"}
