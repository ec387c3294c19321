"""Broken, truncated and hostile inputs: a problem naming file (and line), the rest still goes in."""

import json
import os
import shutil

import pytest

from benchcat import collect as collect_mod
from benchcat import store
from benchcat.collect import collect
from tests.test_collect import FIXTURES

GOOD = "tensorflow/resnet50/bz128/1n1g/resnet50_b128_fp32_1.log"
KERAS_DIR = "tensorflow/resnet50/bz64/1n1g"


def keras_line(a, b, speed):
    return (
        f"I0826 15:13:29.256277 1404 keras_utils.py:133] TimeHistory: 9.99 seconds, {speed} examples/second "
        f"between steps {a} and {b}\n"
    )


@pytest.fixture
def logs(tmp_path):
    root = tmp_path / "logs"
    shutil.copytree(FIXTURES, root)
    (root / KERAS_DIR).mkdir(parents=True)
    return root


def run(logs):
    report = collect(logs, logs.parent / "catalog")
    cat = store.load(logs.parent / "catalog")
    good = [r for r in cat.records.values() if any(run.source.path == GOOD for run in r.runs)]
    assert good and good[0].metrics["throughput"].median == 320.0, "the good logs must still go in"
    return report, cat


def problems_for(report, name):
    return [p for p in report.problems if p.path.endswith(name)]


def test_empty_file(logs):
    (logs / KERAS_DIR / "resnet50_b64_fp32_1.log").write_text("")
    report, _ = run(logs)
    assert [p.message for p in problems_for(report, "fp32_1.log") if "b64" in p.path] == ["empty file"]


def test_binary_garbage(logs):
    (logs / KERAS_DIR / "resnet50_b64_fp32_1.log").write_bytes(bytes(range(256)) * 64)
    report, _ = run(logs)
    (p,) = [p for p in report.problems if "b64" in p.path]
    assert p.line == 1 and "binary" in p.message and p.level == "error"


def test_truncated_log_keeps_complete_windows_and_warns(logs):
    text = "".join(keras_line(a, a + 20, s) for a, s in [(0, "50.00"), (20, "200.00"), (40, "220.00")])
    text += "I0826 15:13:29.256277 1404 keras_utils.py:133] TimeHistory: 9.99 seconds, 23"  # killed mid-write
    (logs / KERAS_DIR / "resnet50_b64_fp32_1.log").write_text(text)
    report, cat = run(logs)
    (rec,) = [r for r in cat.records.values() if r.config.batch_size == 64]
    assert rec.runs[0].values["throughput"] == 210.0
    (p,) = problems_for(report, "b64_fp32_1.log")
    assert p.line == 4 and "truncated" in p.message


def test_crlf_and_latin1(logs):
    text = "# h\u00f4te: caf\u00e9\n" + "".join(keras_line(a, a + 20, "100.00") for a in range(0, 120, 20))
    (logs / KERAS_DIR / "resnet50_b64_fp32_1.log").write_bytes(text.replace("\n", "\r\n").encode("latin-1"))
    report, cat = run(logs)
    (rec,) = [r for r in cat.records.values() if r.config.batch_size == 64]
    assert rec.runs[0].values["throughput"] == 100.0 and rec.runs[0].source.lines == "3-7"
    (p,) = problems_for(report, "b64_fp32_1.log")
    assert p.line == 1 and "latin-1" in p.message and p.level == "warning"


def test_only_warmup_steps(logs):
    (logs / KERAS_DIR / "resnet50_b64_fp32_1.log").write_text(keras_line(0, 20, "80.00"))
    report, cat = run(logs)
    (rec,) = [r for r in cat.records.values() if r.config.batch_size == 64]
    assert rec.runs[0].status == "error" and "warm-up" in rec.runs[0].reason
    assert rec.metrics.get("throughput") is None or rec.metrics["throughput"].count == 0
    (p,) = problems_for(report, "b64_fp32_1.log")
    assert p.line == 1 and "warm-up" in p.message  # where the log stops


def test_log_killed_during_warmup_names_its_last_line_and_says_truncated(logs):
    text = keras_line(0, 20, "80.00") + keras_line(20, 40, "90.00")[:60]
    (logs / KERAS_DIR / "resnet50_b64_fp32_1.log").write_text(text)
    report, cat = run(logs)
    (p,) = problems_for(report, "b64_fp32_1.log")
    assert p.line == 2 and "mid-line" in p.message
    (rec,) = [r for r in cat.records.values() if r.config.batch_size == 64]
    assert rec.runs[0].status == "error" and "truncated" in rec.runs[0].reason


@pytest.mark.parametrize("bad, words", [("nan", "not a finite"), ("-300.00", "not positive"), ("1e12", "implausibly")])
def test_nan_negative_absurd_values_are_problems_at_their_line(logs, bad, words):
    text = "".join(keras_line(a, a + 20, bad if a == 60 else "100.00") for a in range(0, 120, 20))
    (logs / KERAS_DIR / "resnet50_b64_fp32_1.log").write_text(text)
    report, cat = run(logs)
    (p,) = problems_for(report, "b64_fp32_1.log")
    assert p.line == 4 and words in p.message
    (rec,) = [r for r in cat.records.values() if r.config.batch_size == 64]
    assert rec.runs[0].values["throughput"] == 100.0  # the bad window is left out, not averaged in


def test_huge_file_is_reported_not_read(logs):
    with open(logs / "huge.log", "wb") as fh:  # 200 MB, one line (sparse: costs no disk)
        fh.truncate(200 * 1024 * 1024)
    report, _ = run(logs)
    (p,) = problems_for(report, "huge.log")
    assert p.message == "file is 200 MiB, over the 64 MiB limit; not read"


def test_long_single_line_under_the_limit_is_just_unknown(logs):
    (logs / "one-line.txt").write_bytes(b"x" * (20 * 1024 * 1024))
    report, _ = run(logs)
    assert "one-line.txt" in report.skipped


def test_unreadable_file(logs, monkeypatch):
    target = logs / KERAS_DIR / "resnet50_b64_fp32_1.log"
    target.write_text(keras_line(0, 20, "1.00"))
    real_open = os.open  # tests run as root here, so chmod 000 would not stop the read

    def fake_open(path, *a, **k):
        if str(path) == str(target):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *a, **k)

    monkeypatch.setattr(collect_mod.os, "open", fake_open)
    report, _ = run(logs)
    (p,) = problems_for(report, "b64_fp32_1.log")
    assert p.message == "cannot read: Permission denied"


def test_symlink_loops(logs):
    os.symlink("..", logs / "tensorflow" / "loop")
    os.symlink("self", logs / "self")
    report, _ = run(logs)
    messages = {p.path: p.message for p in report.problems}
    assert "symlink loop" in messages["tensorflow/loop"]
    assert "looping symlink" in messages["self"]


def test_collector_crash_is_a_problem_not_a_crash(logs, monkeypatch):
    import collectors

    keras = collectors.get_collector("dlperf-tf-keras")
    monkeypatch.setattr(type(keras), "parse", lambda self, text, ctx: 1 / 0)
    report, cat = collect(logs, logs.parent / "catalog"), store.load(logs.parent / "catalog")
    assert any("ZeroDivisionError" in p.message for p in report.problems)
    assert any(r.config.framework == "mxnet" for r in cat.records.values())


def test_hostile_strings_stay_inert_data(logs, tmp_path):
    evil = "<img src=x onerror=alert(1)>"  # a folder name cannot hold a slash
    d = logs / "tensorflow" / evil / "bz8" / "1n1g"
    d.mkdir(parents=True)
    (d / "x_b8_fp32_1.log").write_text("".join(keras_line(a, a + 20, "10.00") for a in range(0, 120, 20)))
    _, cat = run(logs)
    (rec,) = [r for r in cat.records.values() if r.config.batch_size == 8]
    evil = "<img-src=x-onerror=alert(1)>"  # model names are normalised (spaces -> -), markup survives
    assert rec.benchmark.model == evil
    from typer.testing import CliRunner

    from benchcat.cli import app

    out = CliRunner().invoke(app, ["list", "--format", "json", "--catalog", str(logs.parent / "catalog")])
    assert evil in [r["benchmark"]["model"] for r in json.loads(out.stdout)]
    shown = CliRunner().invoke(app, ["show", rec.id, "--catalog", str(logs.parent / "catalog")])
    assert evil in shown.stdout
