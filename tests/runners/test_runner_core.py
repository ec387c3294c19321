"""Framework-free parts of the runners: model definition, weights, data, env capture, statuses."""

import signal

import numpy as np
import pytest

from runners import bert, envinfo, launch
from runners.common import COMPILE_MODES, RunConfig


def test_weights_are_deterministic_and_cover_every_parameter(tmp_path):
    s = bert.size("tiny")
    a = bert.load_weights(bert.weights_file(s, 7, tmp_path / "a"))
    b = bert.load_weights(bert.weights_file(s, 7, tmp_path / "b"))
    assert list(a) == list(bert.param_shapes(s))
    for name, shape in bert.param_shapes(s).items():
        assert a[name].shape == shape and a[name].dtype == np.float32
        np.testing.assert_array_equal(a[name], b[name])
    assert not np.array_equal(a["pool.w"], bert.make_weights(s, 8)["pool.w"])


def test_batches_are_deterministic_and_in_range():
    s = bert.size("tiny")
    one, two = bert.batches(s, 4, 16, 3), bert.batches(s, 4, 16, 3)
    for (ids, y), (ids2, y2) in zip(one, two, strict=True):
        np.testing.assert_array_equal(ids, ids2)
        np.testing.assert_array_equal(y, y2)
        assert ids.shape == (4, 16) and ids.max() < s.vocab and set(y) <= {0, 1}
    with pytest.raises(ValueError, match="positions"):
        bert.batches(s, 1, s.max_positions + 1, 0)


def test_reference_forward_shape_and_initial_loss_near_log2():
    s = bert.size("tiny")
    w = bert.make_weights(s, 1)
    ids, y = bert.batches(s, 3, 8, 1)[0]
    logits = bert.forward(w, s, ids)
    assert logits.shape == (3, 2)
    assert abs(bert.cross_entropy(logits, y) - np.log(2)) < 0.05


def test_sizes_and_unknown_size():
    assert bert.size("base").hidden == 768 and bert.size("large").layers == 24
    with pytest.raises(KeyError, match="valid sizes"):
        bert.size("huge")


def test_run_config_checks_knobs():
    assert RunConfig(framework="tensorflow", compile="on").compile_mode == "xla"
    assert RunConfig(framework="mindspore", compile="off").compile_mode == "pynative"
    assert set(COMPILE_MODES) >= {"tensorflow", "mindspore", "mxnet", "pytorch"}
    for bad in ({"precision": "fp8"}, {"compile": "xla"}, {"warmup": 9, "steps": 9}, {"fault": "fire"}):
        with pytest.raises(ValueError):
            RunConfig(framework="pytorch", **bad)
    with pytest.raises(ValueError, match="unknown run settings"):
        RunConfig.from_dict({"framework": "pytorch", "colour": "red"})


def test_log_name_is_dlperf_compatible_and_unique_per_knob():
    from collectors._dlperf import parse_path

    cfg = RunConfig(framework="pytorch", batch_size=16, precision="bf16", run_id="2")
    info = parse_path(launch.log_name(cfg))
    assert (info.framework, info.model, info.batch_size, info.precision, info.run_id) == (
        "pytorch", "bert-tiny", 16, "bf16", "2")
    assert (info.nodes, info.devices_per_node) == (1, 1)
    names = {launch.log_name(RunConfig(framework="pytorch", **k)) for k in
             ({}, {"seq_len": 128}, {"grad_accum": 2}, {"compile": "on"}, {"fused": True}, {"sync_every_step": False})}
    assert len(names) == 6


def test_env_allow_list_never_keeps_secrets():
    env = {
        "CUDA_VISIBLE_DEVICES": "0,1", "XLA_FLAGS": "--xla_x", "OMP_NUM_THREADS": "2", "NCCL_DEBUG": "INFO",
        "TF_ENABLE_ONEDNN_OPTS": "0", "MS_TOKEN": "s3cret", "NCCL_API_KEY": "k", "HF_TOKEN": "t",
        "AWS_SECRET_ACCESS_KEY": "x", "TF_VAR_db_password": "p", "HOME": "/root", "PATH": "/bin",
        "TORCH_PASSWORD": "p",
    }
    kept = envinfo.allowed_env(env)
    assert kept == {"CUDA_VISIBLE_DEVICES": "0,1", "NCCL_DEBUG": "INFO", "OMP_NUM_THREADS": "2",
                    "TF_ENABLE_ONEDNN_OPTS": "0", "XLA_FLAGS": "--xla_x"}


def test_capture_says_unknown_as_none_and_finds_no_phantom_gpu(monkeypatch):
    monkeypatch.setattr(envinfo.shutil, "which", lambda _name: None)
    info = envinfo.capture()
    assert info["accelerators"] == []
    assert info["git_commit"] is None  # git "not installed": unknown, not guessed
    assert info["cpu_cores"] and info["host"]


def test_classify():
    assert launch.classify(-9, True, "", None)[0] == "timeout"
    assert launch.classify(-int(signal.SIGSEGV), False, "", None) == ("segfault", "killed by signal SIGSEGV")
    ms_crash = "device_context.cc:113] AllocateMemory] Allocate memory failed for size: 4503599627370496"
    assert launch.classify(-int(signal.SIGSEGV), False, ms_crash, None) == (
        "oom", "killed by signal SIGSEGV after an out-of-memory message"
    )
    assert launch.classify(-int(signal.SIGKILL), False, "", None)[0] == "error"
    assert launch.classify(1, False, "", {"type": "MemoryError", "message": "Unable to allocate"})[0] == "oom"
    tf_oom = {"type": "ResourceExhaustedError", "message": "OOM when allocating tensor with shape[...]"}
    assert launch.classify(1, False, "", tf_oom)[0] == "oom"
    assert launch.classify(1, False, "", {"type": "ValueError", "message": "bad"}) == ("error", "ValueError: bad")
    assert launch.classify(3, False, "", None) == ("error", "exit code 3 without a summary")


def test_mindspore_allocation_failure_is_oom():
    error = {"type": "RuntimeError", "message": "Allocate memory failed"}
    assert launch.classify(1, False, "", error)[0] == "oom"


def test_env_paths_are_named_by_their_pins(tmp_path, monkeypatch):
    from benchcat import envs

    monkeypatch.setenv("BENCHCAT_ENVS", str(tmp_path))
    cpu, gpu = envs.env_path("mxnet", "cpu"), envs.env_path("mxnet", "gpu")
    assert cpu.parent == tmp_path and cpu.name.startswith("mxnet-cpu-") and cpu != gpu
    assert envs.status("mxnet") == "missing" and envs.python("mxnet") is None
    assert envs.python("fake") is not None
    with pytest.raises(KeyError, match="valid frameworks"):
        envs.env_path("caffe")
