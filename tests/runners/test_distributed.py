"""Data-parallel runs: 1 vs 2 processes on the CPU through each framework's own launcher.

Each framework: a 1-process and a 2-process tiny run collect into records with 1 and 2 devices,
the global batch doubles, the per-rank step lines are merged (median across ranks per step), and
a rank killed mid-run gives a failed run with its reason instead of a hang. Under CI=true a
missing framework environment fails (runner_helpers.framework_python).
"""

import json
import re
import sys
import time

import pytest
from runner_helpers import framework_python, run_into

from benchcat import store
from benchcat.collect import collect
from runners import launch
from runners.common import RunConfig

DATA_PARALLEL = ("pytorch", "tensorflow", "mxnet", "mindspore")
TINY = {"steps": 5, "warmup": 2, "seq_len": 16, "batch_size": 4}


def lines(log, kind):
    return [obj for obj in map(json.loads, log.read_text().splitlines()) if obj["kind"] == kind]


def records_by_devices(catalog):
    return {rec.config.devices: rec for rec in store.load(catalog).records.values()}


def check_one_vs_two(framework, python, tmp_path, weights):
    logs = tmp_path / "logs"
    for devices in (1, 2):
        status, log = run_into(logs, python, timeout=240, framework=framework, weights=weights,
                               devices_per_node=devices, **TINY)
        assert status == "ok", log.read_text()[-3000:]
        head = lines(log, "header")[0]
        assert head["config"]["devices_per_node"] == devices and head["config"]["nodes"] == 1
        assert head["config"]["batch_size"] == 4
        if devices == 2:
            assert head["global_batch_size"] == 8 and head["per_device_batch_size"] == 4 and head["world_size"] == 2
            steps = lines(log, "step")
            assert sorted({s["rank"] for s in steps}) == [0, 1]
            assert len(steps) == 2 * TINY["steps"]
            assert sorted(s["rank"] for s in lines(log, "summary")) == [0, 1]
            assert all(s["samples_per_step"] == 8 for s in lines(log, "summary"))
    report = collect(logs, tmp_path / "catalog")
    assert not report.problems, report.problems
    recs = records_by_devices(tmp_path / "catalog")
    assert set(recs) == {1, 2}
    one, two = recs[1], recs[2]
    assert (two.config.nodes, two.config.devices_per_node, two.config.parallel_mode) == (1, 2, "data")
    assert two.config.batch_size == one.config.batch_size == 4  # per device; global = 4 x devices
    run = two.runs[0]
    assert run.status == "ok" and run.values["throughput"] > 0
    # the merge: throughput = global batch / per-step median across ranks
    log = next((tmp_path / "logs").rglob("*1n2g*/*.log"))
    per_step = {}
    for s in lines(log, "step"):
        if s["step"] >= TINY["warmup"]:
            per_step.setdefault(s["step"], []).append(s["time_s"])
    medians = [sorted(v)[0] / 2 + sorted(v)[1] / 2 for _, v in sorted(per_step.items())]
    assert run.values["throughput"] == pytest.approx(8 * len(medians) / sum(medians))
    return one, two


def check_killed_rank(framework, python, tmp_path, weights):
    status, log = run_into(tmp_path / "killed", python, timeout=240, framework=framework, weights=weights,
                           devices_per_node=2, fault="kill", **TINY)
    assert status != "ok"
    failure = lines(log, "failure")[-1]
    assert "rank 1" in failure["reason"] and "SIGKILL" in failure["reason"], failure
    collect(tmp_path / "killed", tmp_path / "killed-catalog")
    (rec,) = store.load(tmp_path / "killed-catalog").records.values()
    assert rec.runs[0].status == "error" and "rank 1" in rec.runs[0].reason


@pytest.mark.parametrize("framework", DATA_PARALLEL)
def test_one_vs_two_processes_collect_with_devices_and_global_batch(framework, tmp_path, tiny_weights):
    check_one_vs_two(framework, framework_python(framework), tmp_path, tiny_weights)


@pytest.mark.parametrize("framework", DATA_PARALLEL)
def test_a_killed_rank_is_a_failed_run_not_a_hang(framework, tmp_path, tiny_weights):
    check_killed_rank(framework, framework_python(framework), tmp_path, tiny_weights)


def test_fake_ranks_chain_and_kill(tmp_path, tiny_weights):
    """The launcher, shared log and collector merge without any framework (independent ranks)."""
    check_one_vs_two("fake", sys.executable, tmp_path, tiny_weights)
    check_killed_rank("fake", sys.executable, tmp_path, tiny_weights)


def test_plan_uses_each_frameworks_own_launcher_on_localhost(tmp_path):
    python = "/envs/x/bin/python"
    expected = {"pytorch": "torch.distributed.run", "mindspore": "mindspore.parallel.cluster.run"}
    for framework in DATA_PARALLEL:
        cfg = RunConfig(framework=framework, devices_per_node=2, batch_size=4)
        procs, info = launch.plan(python, cfg, tmp_path / "x.log")
        assert info["global_batch_size"] == 8 and info["world_size"] == 2 and info["launcher"]
        text = json.dumps([p.cmd for p in procs] + [p.env for p in procs])
        hosts = set(re.findall(r"(\d+\.\d+\.\d+\.\d+|localhost)", text))
        assert hosts == {"127.0.0.1"}, hosts
        if framework in expected:
            (proc,) = procs
            assert expected[framework] in proc.cmd and "--runner-log" in proc.cmd
        elif framework == "tensorflow":
            configs = [json.loads(p.env["TF_CONFIG"]) for p in procs]
            assert [c["task"]["index"] for c in configs] == [0, 1]
            assert len(set(configs[0]["cluster"]["worker"])) == 2
        else:
            roles = [p.env["DMLC_ROLE"] for p in procs]
            assert roles == ["scheduler", "server", "worker", "worker"]
            assert [p.worker for p in procs] == [False, False, True, True]
    procs, info = launch.plan(python, RunConfig(framework="pytorch"), tmp_path / "x.log")
    assert len(procs) == 1 and procs[0].cmd[:3] == [python, "-m", "runners.pytorch"] and "launcher" not in info


def test_a_hung_rank_is_bounded_by_the_run_timeout(tmp_path, tiny_weights):
    start = time.monotonic()
    status, log = run_into(tmp_path, sys.executable, timeout=8, framework="fake", weights=tiny_weights,
                           devices_per_node=2, fault="timeout", **TINY)
    assert status == "timeout" and time.monotonic() - start < 30
    assert lines(log, "failure")[-1]["status"] == "timeout"
