"""A sweep through a real Slurm: a one-node cluster on this host (scripts/slurm-local), the real sbatch.

Needs Debian's slurm-wlm + munge (``scripts/setup test`` installs them as root) and root. Skips
locally when they are missing; fails in CI (``CI=true``), where the setup must have installed them.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchcat import slurm, slurm_queue, sweep
from benchcat.cli import app
from benchcat.collect import collect
from benchcat.store import load

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = {"steps": 4, "warmup": 2, "repeats": 2, "timeout": 15}
WAIT = 180  # seconds: bound on every wait for jobs


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    missing = [tool for tool in ("slurmctld", "slurmd", "munged", "sbatch", "squeue") if not shutil.which(tool)]
    why = None
    if missing:
        why = f"Slurm is not installed ({', '.join(missing)} missing): `scripts/setup test` installs it as root"
    elif os.geteuid() != 0:
        why = "the one-node test cluster (scripts/slurm-local) runs as root"
    if why:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {why}")
        pytest.skip(why)
    directory = tmp_path_factory.mktemp("slurm")
    before = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = str(directory / "slurm.conf")
    ports = dict(zip(("BENCHCAT_SLURMCTLD_PORT", "BENCHCAT_SLURMD_PORT"), free_ports(2), strict=True))
    start = time.monotonic()
    try:
        up = subprocess.run([ROOT / "scripts" / "slurm-local", "start", directory], capture_output=True, text=True,
                            timeout=120, env={**os.environ, **ports})
        assert up.returncode == 0, f"scripts/slurm-local start failed:\n{up.stdout}\n{up.stderr}"
        print(f"one-node Slurm up in {time.monotonic() - start:.1f} s")
        yield directory
    finally:
        subprocess.run([ROOT / "scripts" / "slurm-local", "stop", directory], capture_output=True, timeout=90)
        if before is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = before


def free_ports(n: int) -> list[str]:
    """Ports free right now, so the test cluster does not collide with a Slurm already on this host."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for sock in socks:
            sock.bind(("127.0.0.1", 0))
        return [str(sock.getsockname()[1]) for sock in socks]
    finally:
        for sock in socks:
            sock.close()


def python_for(_framework):
    return Path(sys.executable)


def catalog_runs(catalog: Path) -> list:
    return [(rec.config.batch_size, rec.config.flags.get("fault"), run)
            for rec in load(catalog).records.values() for run in rec.runs]


def test_sweep_through_sbatch_lands_in_catalog(cluster, tmp_path):
    runs = sweep.expand({"framework": "fake", "batch_size": [2, 4]}, SETTINGS, [])
    for fault in ("error", "timeout"):  # deliberately failing points: an exception, a hang past the timeout
        runs += sweep.expand({"framework": "fake"}, {**SETTINGS, "repeats": 1, "fault": fault}, [])
    sw = sweep.Sweep(output=tmp_path / "logs", runs=runs, timeout=SETTINGS["timeout"])
    catalog = tmp_path / "catalog"
    collected = []

    def on_finished(jobs):
        collected.append(len(jobs))
        collect(sw.output, catalog)

    opts = slurm.options({"time": "5", "wait": WAIT, "poll": 1})
    report = slurm_queue.run(sw, opts, python_for, on_finished=on_finished)
    assert not report.unfinished, "jobs still queued after the wait"
    assert len(report.submitted) == 4 and sum(collected) == 4
    assert dict(report.statuses) == {"ok": 4, "error": 1, "timeout": 1}
    got = sorted((b, fault or "", r.status) for b, fault, r in catalog_runs(catalog))
    assert got == [(2, "", "ok"), (2, "", "ok"), (4, "", "ok"), (4, "", "ok"), (8, "error", "error"),
                   (8, "timeout", "timeout")]
    reasons = {fault: r.reason for _, fault, r in catalog_runs(catalog) if fault}
    assert "forced error (fault injection)" in reasons["error"]
    assert "time limit" in reasons["timeout"]
    header = json.loads(report.submitted[0].repeats[0].log.read_text().splitlines()[0])
    assert header["slurm_job_id"] == report.submitted[0].id

    again = slurm_queue.run(sw, opts, python_for)  # resume: every log is complete, nothing is submitted
    assert again.submitted == [] and again.skipped == len(runs)


def test_jobs_slurm_ends_become_failed_runs(cluster, tmp_path):
    """scancel -> CANCELLED and the job's time limit -> TIMEOUT: each unfinished repeat is a failed run."""
    settings = {**SETTINGS, "repeats": 2, "fault": "timeout", "timeout": 300}  # repeat 1 hangs
    runs = sweep.expand({"framework": "fake", "batch_size": [2, 4]}, settings, [])
    sw = sweep.Sweep(output=tmp_path / "logs", runs=runs, timeout=300)
    report = slurm_queue.run(sw, slurm.options({"time": "1", "wait": 0}), python_for)
    cancelled, limited = report.submitted
    time.sleep(3)  # let it start, so that repeat 1 is cut short and repeat 2 never begins
    subprocess.run(["scancel", cancelled.id], check=True, timeout=30)
    assert slurm_queue.wait(report.submitted, WAIT, 1, sw.timeout, report=report) == []
    assert dict(report.statuses) == {"error": 2, "timeout": 2}
    collect(sw.output, tmp_path / "catalog")
    got = sorted((b, r.status, r.reason) for b, _, r in catalog_runs(tmp_path / "catalog"))
    assert [(b, status) for b, status, _ in got] == [(2, "error"), (2, "error"), (4, "timeout"), (4, "timeout")]
    assert all(f"Slurm job {cancelled.id} ended CANCELLED" in reason for _, _, reason in got[:2])
    assert all(f"Slurm job {limited.id} ended TIMEOUT" in reason for _, _, reason in got[2:])


def test_cli_run_launcher_slurm_submit_then_wait_later(cluster, tmp_path):
    doc = {"output": "logs", "matrix": {"framework": "fake"}, "settings": {**SETTINGS, "repeats": 1},
           "slurm": {"time": "5", "wait": 0}}
    file = tmp_path / "sweep.yaml"
    file.write_text(json.dumps(doc))
    args = ["run", str(file), "--launcher", "slurm", "--catalog", str(tmp_path / "catalog")]
    result = CliRunner().invoke(app, args)  # wait: 0 -> submit and return
    assert result.exit_code == 0, result.output
    assert "1 runs in 1 job(s): nothing finished" in result.output and "1 job(s) still queued" in result.output
    file.write_text(json.dumps({**doc, "slurm": {"wait": WAIT, "poll": 1}}))
    result = CliRunner().invoke(app, args)  # the same command again: no resubmission, waits, collects
    assert result.exit_code == 0, result.output
    assert "1 runs in 0 job(s): 1 ok; 0 already complete; 1 still queued from an earlier submission" in result.output
    assert [r.status for _, _, r in catalog_runs(tmp_path / "catalog")] == ["ok"]
