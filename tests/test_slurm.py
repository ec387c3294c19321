"""benchcat.slurm without a cluster: the slurm: section, the scripts, the in-job steps, finalizing."""

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchcat import slurm, slurm_job, slurm_queue, sweep
from benchcat.cli import app
from benchcat.collect import collect
from benchcat.store import load
from runners import launch

SETTINGS = {"steps": 4, "warmup": 2, "repeats": 2, "timeout": 60}


def fake_sweep(tmp_path, matrix=None, settings=None) -> sweep.Sweep:
    runs = sweep.expand(matrix or {"framework": "fake", "batch_size": [2, 4]}, settings or SETTINGS, [])
    return sweep.Sweep(output=tmp_path / "logs", runs=runs, timeout=float((settings or SETTINGS)["timeout"]))


def python_for(_framework):
    return Path(sys.executable)


def scripts(sw, opts):
    jobs, skipped = slurm.plan(sw)
    slurm.write_scripts(jobs, opts, python_for, sw.timeout, sw.output / ".slurm", write=False)
    return jobs, skipped


def test_options_defaults_and_values():
    assert slurm.options(None) == slurm.Options()
    opts = slurm.options({"partition": "gpu", "account": "p42", "qos": "normal", "time": "1-02:00:00", "nodes": 2,
                          "gpus_per_node": 8, "cpus_per_task": 16, "mem": "64G", "setup": "module load cuda",
                          "sbatch": ["--exclusive"], "wait": 0, "poll": 2})
    assert opts.setup == ("module load cuda",) and opts.nodes == 2 and opts.wait == 0


@pytest.mark.parametrize("section, key", [
    ({"partiton": "gpu"}, "unknown key(s) partiton"),
    ({"nodes": 0}, "slurm.nodes"),
    ({"gpus_per_node": "two"}, "slurm.gpus_per_node"),
    ({"time": "ninety"}, "slurm.time"),
    ({"time": 0}, "slurm.time"),
    ({"mem": "lots"}, "slurm.mem"),
    ({"partition": "gpu; rm -rf /"}, "slurm.partition"),
    ({"sbatch": ["exclusive"]}, "slurm.sbatch"),
    ({"setup": ["a\nb"]}, "slurm.setup"),
    ({"wait": -1}, "slurm.wait"),
    ({"nodes": True}, "slurm.nodes"),
])
def test_options_errors_name_the_key(section, key):
    with pytest.raises(slurm.SlurmError, match=key.replace("(", r"\(").replace(")", r"\)")):
        slurm.options(section)


def test_one_job_per_point_with_its_repeats(tmp_path):
    jobs, skipped = scripts(fake_sweep(tmp_path), slurm.Options())
    assert skipped == 0 and len(jobs) == 2
    assert [[r.cfg.run_id for r in j.repeats] for j in jobs] == [["1", "2"], ["1", "2"]]
    assert len({j.name for j in jobs}) == 2


def test_script_runs_exactly_the_child_command(tmp_path):
    (job, _), _ = scripts(fake_sweep(tmp_path), slurm.Options(partition="debug", account="p1", qos="q"))
    for rep in job.repeats:
        child = shlex.join(launch.child_command(sys.executable, rep.cfg, slurm_job.work_file(rep.log)))
        assert f"timeout --kill-after=30 60 {child} >" in job.script
    head = [line for line in job.script.splitlines() if line.startswith("#SBATCH")]
    assert "#SBATCH --partition=debug" in head and "#SBATCH --account=p1" in head and "#SBATCH --qos=q" in head
    assert "#SBATCH --time=00:09:00" in head  # 2 repeats x (60 s + 1 minute) + 5 minutes
    assert not any("--gres" in line for line in head) and "srun" not in job.script


def test_gres_only_for_gpu_points_and_srun_for_multi_node(tmp_path):
    sw = fake_sweep(tmp_path, {"framework": "pytorch", "device": ["cpu", "gpu"]}, {**SETTINGS, "repeats": 1})
    jobs, _ = scripts(sw, slurm.Options(gpus_per_node=4, nodes=2, time="30"))
    by_device = {j.repeats[0].cfg.device: j.script for j in jobs}
    assert "--gres" not in by_device["cpu"]
    assert "#SBATCH --gres=gpu:4" in by_device["gpu"] and "#SBATCH --time=30" in by_device["gpu"]
    assert "srun --nodes=2 --ntasks-per-node=1" in by_device["gpu"]
    jobs, _ = scripts(sw, slurm.Options(gpus_per_node=0))
    assert not any("--gres" in j.script for j in jobs)


def test_script_runs_under_plain_bash_and_logs_are_collected(tmp_path):
    """The script is a bash script; run here without Slurm it writes the same logs a job would."""
    runs = sweep.expand({"framework": "fake"}, {**SETTINGS, "repeats": 1}, [])
    runs += sweep.expand({"framework": "fake"}, {**SETTINGS, "repeats": 1, "fault": "segfault"}, [])
    sw = sweep.Sweep(output=tmp_path / "logs", runs=runs, timeout=60)
    jobs, _ = slurm.plan(sw)
    slurm.write_scripts(jobs, slurm.Options(), python_for, sw.timeout, sw.output / ".slurm")
    codes = [subprocess.run(["bash", str(j.path)], capture_output=True, timeout=120).returncode for j in jobs]
    assert codes == [0, 1]
    assert [slurm_queue.log_status(j.repeats[0].log) for j in jobs] == ["ok", "segfault"]
    assert not list(sw.output.rglob(".*.running")) and not list(sw.output.rglob(".*.stderr"))
    header = json.loads(jobs[0].repeats[0].log.read_text().splitlines()[0])
    assert header["kind"] == "header" and header["machine"]["host"] and header["weights_sha256"]
    collect(sw.output, tmp_path / "catalog")
    runs = [r for rec in load(tmp_path / "catalog").records.values() for r in rec.runs]
    assert sorted(r.status for r in runs) == ["ok", "segfault"]


@pytest.mark.parametrize("rc, elapsed, expected", [
    (0, 1, (0, False)), (1, 1, (1, False)), (124, 5, (124, True)), (137, 70, (137, True)),
    (137, 3, (-9, False)), (139, 3, (-11, False)),
])
def test_exit_status(rc, elapsed, expected):
    assert slurm_job.exit_status(rc, elapsed, 60) == expected


@pytest.mark.parametrize("state, status", [("CANCELLED", "error"), ("TIMEOUT", "timeout"),
                                           ("OUT_OF_MEMORY", "oom"), ("NODE_FAIL", "error")])
def test_finalize_turns_an_unfinished_job_into_failed_runs(tmp_path, state, status):
    jobs, _ = scripts(fake_sweep(tmp_path, settings={**SETTINGS, "repeats": 2}), slurm.Options())
    job = jobs[0]
    job.id = "77"
    first = job.repeats[0]
    slurm_job.start(first.log, first.cfg, 60)  # repeat 1 started, repeat 2 never did
    assert slurm_queue.finalize(job, state, "", 60) == [status, status]
    for rep in job.repeats:
        failure = json.loads(rep.log.read_text().splitlines()[-1])
        assert failure["kind"] == "failure" and failure["status"] == status
        assert f"Slurm job 77 ended {state}" in failure["reason"]
    collect(tmp_path / "logs", tmp_path / "catalog")
    runs = [r for rec in load(tmp_path / "catalog").records.values() for r in rec.runs]
    assert [r.status for r in runs] == [status, status] and "77" in runs[0].reason


def test_cli_dry_run_prints_scripts_and_validates(tmp_path):
    doc = {"output": "logs", "matrix": {"framework": "fake", "batch_size": [2, 4]}, "settings": SETTINGS,
           "slurm": {"partition": "debug", "time": "10"}}
    file = tmp_path / "sweep.yaml"
    file.write_text(json.dumps(doc))
    result = CliRunner().invoke(app, ["run", str(file), "--launcher", "slurm", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert result.output.count("#!/bin/bash") == 2 and "#SBATCH --partition=debug" in result.output
    assert not (tmp_path / "logs").exists()  # nothing written, nothing submitted
    file.write_text(json.dumps({**doc, "slurm": {"gpus": 2}}))
    result = CliRunner().invoke(app, ["run", str(file), "--launcher", "slurm", "--dry-run"])
    assert result.exit_code == 2 and "slurm: unknown key(s) gpus" in result.output
    result = CliRunner().invoke(app, ["run", str(file), "--launcher", "k8s"])
    assert result.exit_code == 2 and "valid: local, slurm" in result.output


def test_states_from_squeue_then_sacct(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tools = {"squeue": "echo '11|RUNNING|None'; echo '12|FAILED|NonZeroExitCode'",
             "sacct": "echo '13|CANCELLED by 0'", "sbatch": "echo '42;cluster'"}
    for name, body in tools.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    assert slurm_queue.states(["11", "12", "13", "14"]) == {
        "11": ("RUNNING", ""), "12": ("FAILED", "NonZeroExitCode"), "13": ("CANCELLED", "CANCELLED by 0"),
        "14": ("UNKNOWN", "neither squeue nor sacct knows this job any more")}
    assert slurm_queue.sbatch(tmp_path / "job.sbatch") == "42"
    (bin_dir / "squeue").write_text("#!/bin/sh\necho 'slurm_load_jobs error: Unable to contact slurm controller' >&2\n"
                                    "exit 1\n")
    with pytest.raises(slurm.SlurmError, match="Unable to contact"):
        slurm_queue.states(["11"])
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    with pytest.raises(slurm.SlurmError, match="sbatch not found"):
        slurm_queue.sbatch(tmp_path / "job.sbatch")
