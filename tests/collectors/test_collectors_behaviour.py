"""What each collector must do, on small inline logs: numbers, methods, problems, failures."""

import importlib
import sys

import pytest
from collector_helpers import EXPECTED, FIXTURES, is_sidecar, parse, read_text

import collectors
from collectors import all_collectors


def _only(result):
    assert len(result.observations) == 1
    return result.observations[0]


def _absl_bert(steps, start="0901 23:59:30"):
    md, hms = start.split()
    h, m, s = (int(x) for x in hms.split(":"))
    out = []
    for step, dt in steps:
        t = h * 3600 + m * 60 + s + dt
        day = int(md[2:]) + int(t // 86400)
        t %= 86400
        out.append(f"INFO:tensorflow:Train Step: {step}/120  / loss = 9.1")
        out.append(
            f"I{md[:2]}{day:02d} {int(t // 3600):02d}:{int(t % 3600 // 60):02d}:{t % 60:09.6f} 1403 "
            f"model_training_utils.py:444] Train Step: {step}/120  / loss = 9.1"
        )
    return "\n".join(out) + "\n"


def test_tf_bert_time_window_across_midnight():
    text = _absl_bert([(10, 0), (20, 10), (70, 35), (120, 60)])  # 20 -> 120 takes 50 s, over midnight
    obs = _only(parse("tf-bert", text, "tensorflow/bert-base/bz32/1n2g/bert_base_b32_fp16_1.log"))
    assert obs.run.method == "time_window"
    assert obs.run.values["throughput"] == pytest.approx(100 * 32 * 2 / 50)
    assert (obs.run.warmup_skipped, obs.run.iterations) == (20, 100)
    assert obs.config.precision == "fp16" and obs.config.devices_per_node == 2


def test_tf_bert_truncated_window_is_a_problem_not_a_number():
    text = _absl_bert([(10, 0), (20, 10), (70, 35)])
    result = parse("tf-bert", text, "tensorflow/bert-base/bz32/1n1g/bert_base_b32_fp16_1.log")
    run = _only(result).run
    assert run.status == "error" and run.values == {}
    assert any(p.line == 6 and "stops at step 70" in p.message for p in result.problems)


def test_pytorch_median_across_interleaved_ranks_skips_warmup():
    lines = []
    for i in range(120):
        for t in (5.0, 5.0, 5.0) if i < 20 else (0.5, 0.4, 9.9):  # a straggler rank never wins
            lines.append(
                f"Epoch: [0][{i:3d}/500]\tTime {t:6.3f} ( 0.600)\tData  0.010 ( 0.020)\tLoss 6.9e+00 (6.9e+00)"
            )
    result = parse("pytorch-progress", "\n".join(lines) + "\n", "pytorch/resnet50/bz64/1n3g/resnet50_b64_fp32_1.log")
    run = _only(result).run
    assert run.values["throughput"] == pytest.approx(64 * 3 / 0.5)
    assert (run.warmup_skipped, run.iterations) == (20, 100)
    assert result.problems == []


def test_speedometer_nan_is_a_problem_and_is_left_out():
    lines = [
        f"INFO:root:Epoch[0] Batch [{b}]\tSpeed: {'NaN' if b == 60 else '400.00'} samples/sec\taccuracy=0.1"
        for b in range(20, 121, 20)
    ]
    result = parse("mxnet-speedometer", "\n".join(lines) + "\n", "mxnet/resnet50/bz64/1n1g/resnet50_b64_fp32_1.log")
    assert _only(result).run.values["throughput"] == 400.0
    assert [(p.line, "NaN" in p.message) for p in result.problems] == [(3, True)]


def test_paddle_bert_and_resnet_scale_by_batch_and_devices():
    bert = "".join(
        f"epoch: 1, progress: 1/1, step: {s}, loss: 7.5, ppl: 1800.0, next_sent_acc: 0.5, "
        f"speed: 2.00 steps/s, file: f, mask_type: mask_word\n"
        for s in range(1, 121)
    )
    obs = _only(parse("paddle", bert, "paddle/bert-base/bz32/1n8g/bert_base_b32_fp32_1.log"))
    assert obs.run.values["throughput"] == pytest.approx(2.0 * 32 * 8)
    resnet = "".join(
        f"[Pass 0, train batch {b}] \tloss 6.90, acc1 0.00, acc5 0.00, lr 0.1, elapse 0.2500 sec\n" for b in range(120)
    )
    obs = _only(parse("paddle", resnet, "paddle/resnet50/bz64/1n1g/resnet50_b64_fp32_1.log"))
    assert obs.run.values["throughput"] == pytest.approx(64 / 0.25)


def test_mindspore_data_sink_loops_and_warmup():
    text = ""
    for e in range(12):  # 12 sink loops of 10 steps; the first one compiles
        text += f"epoch: {e}, current epoch percent: 1.000, step: {(e + 1) * 10}, outputs are (Tensor(...))\n"
        per = 500.0 if e == 0 else 100.0
        text += f"epoch time: {per * 10:.3f} ms, per step time: {per:.3f} ms\n"
    obs = _only(parse("mindspore-timemonitor", text, "mindspore/bert-base/bz32/1n8g/bert_base_b32_fp16_1.log"))
    assert obs.config.data_sink is True
    assert obs.run.values["throughput"] == pytest.approx(32 * 8 * 1000 / 100.0)
    assert (obs.run.warmup_skipped, obs.run.iterations) == (20, 10)


def test_oneflow_log_wins_over_the_file_name_and_says_so():
    text = "batch_size_per_device = 96\ngpu_num_per_node = 4\nnode_num = 1\nuse_fp16 = True\n"
    text += "".join(
        f"step: {s}, total_loss: 9.7, mlm_loss: 8.9, nsp_loss: 0.7, throughput: 100.0\n" for s in range(19, 120, 20)
    )
    result = parse("oneflow", text, "oneflow/bert-base/bz64/1n8g/bert_base_b64_fp32_1.log")
    obs = _only(result)
    assert (obs.config.precision, obs.config.batch_size, obs.config.devices_per_node) == ("fp16", 96, 4)
    lines = {p.line for p in result.problems if "the log wins" in p.message}
    assert lines == {1, 2, 4}  # batch, devices and precision each disagree with the path


DLL_PARAM = "DLL 2020-09-15 14:29:01.000100 - PARAMETER arch : resnet50  batch_size : 128  amp : True  world_size : 4\n"


def _dll_iters(n=40):
    return "".join(
        f"DLL 2020-09-15 14:29:{10 + i // 10:02d}.{i:06d} - Epoch: 0 Iteration: {i}  "
        f"train.loss : 6.9  train.total_ips : {100.0 if i <= 20 else 1000.0} img/s\n"
        for i in range(1, n + 1)
    )


def test_dllogger_summary_wins_and_is_recorded_as_such():
    text = DLL_PARAM + _dll_iters() + "DLL 2020-09-15 14:30:00.0 - Summary: train.total_ips : 999.50 img/s\n"
    obs = _only(parse("dllogger", text, "runs/rn50/log.txt"))
    assert (obs.run.method, obs.run.values["throughput"]) == ("summary", 999.5)
    assert (obs.benchmark.model, obs.config.batch_size, obs.config.precision, obs.config.devices) == (
        "resnet50",
        128,
        "amp",
        4,
    )


def test_dllogger_iterations_without_summary_give_log_speed():
    obs = _only(parse("dllogger", DLL_PARAM + _dll_iters(), "runs/rn50/log.txt"))
    assert (obs.run.method, obs.run.values["throughput"], obs.run.iterations) == ("log_speed", 1000.0, 20)


def test_dllogger_json_form():
    import json

    rows = [{"type": "LOG", "step": "PARAMETER", "data": {"batch_size": 16, "amp": False, "world_size": 2}}]
    rows += [
        {"type": "LOG", "step": [0, i], "data": {"training_sequences_per_second": 50.0 if i > 20 else 5.0}}
        for i in range(1, 41)
    ]
    rows += [{"type": "LOG", "step": [], "data": {"training_sequences_per_second": 49.0}}]
    text = "".join("DLLL " + json.dumps(r) + "\n" for r in rows)
    obs = _only(parse("dllogger", text, "x/bert.json"))
    assert (obs.run.method, obs.run.values["throughput"], obs.config.precision) == ("summary", 49.0, "fp32")


def _mllog(key, t, value=None, status=None, prefix=""):
    meta = {"file": "t.py", "lineno": 1, **({"status": status} if status else {})}
    import json

    body = {"namespace": "", "time_ms": t, "event_type": "POINT_IN_TIME", "key": key, "value": value, "metadata": meta}
    return f"{prefix}:::MLLOG {json.dumps(body)}\n"


SYSTEM = '{"system_name": "s", "number_of_nodes": "2", "accelerators_per_node": "4", "framework": "MXNet 1.8"}'
PATH = "Org/results/s/ssd/result_3.txt"


def test_mlperf_time_to_train_with_rank_prefix_and_noise():
    text = "noise before\n" + _mllog("submission_benchmark", 0, "ssd", prefix="[1,0]<stdout>")
    text += _mllog("global_batch_size", 1, 1024) + _mllog("run_start", 1000, prefix="0: ") + "loss=3.2\n"
    text += _mllog("run_stop", 1000 + 90_000, status="success", prefix="0: ")
    result = parse("mlperf", text, PATH, {"Org/systems/s.json": SYSTEM})
    obs = _only(result)
    assert get_sidecars() == ["Org/systems/s.json"]
    assert obs.run.run_id == "3" and obs.run.values == {"time_to_train": 1.5}
    assert obs.score_rules == {"time_to_train": "olympic:5"} and obs.headline == "time_to_train"
    assert (obs.config.nodes, obs.config.devices_per_node, obs.config.batch_size) == (2, 4, 128)
    assert (obs.config.framework, obs.software.framework_version) == ("mxnet", "1.8")
    assert result.problems == []


def get_sidecars():
    return collectors.get_collector("mlperf").sidecars(PATH)


@pytest.mark.parametrize(
    ("tail", "status", "reason"),
    [
        (_mllog("run_stop", 5000, status="aborted"), "error", "run_stop status aborted"),
        ("training...\n", "error", "no run_stop"),
        ("RuntimeError: CUDA out of memory\n", "oom", "no run_stop"),
    ],
)
def test_mlperf_failed_runs_are_kept_with_status_and_reason(tail, status, reason):
    text = _mllog("submission_benchmark", 0, "bert") + _mllog("run_start", 1000) + tail
    result = parse("mlperf", text, "Org/results/s/bert/result_0.txt", {"Org/systems/s.json": SYSTEM})
    obs = _only(result)
    assert obs.run.status == status and reason in obs.run.reason and obs.run.values == {}
    assert obs.score_rules == {"time_to_train": "olympic:10"}
    assert any(p.level == "error" for p in result.problems)


def test_mlperf_missing_systems_file_is_a_warning_and_leaves_environment_unknown():
    text = _mllog("run_start", 0) + _mllog("run_stop", 60_000, status="success")
    result = parse("mlperf", text, PATH, {"Org/systems/s.json": None})
    obs = _only(result)
    assert obs.config.framework == "unknown" and obs.system.accelerator is None
    assert [p.level for p in result.problems] == ["warning"]


def test_tf_cnn_uses_the_nearest_metadata_file():
    c = collectors.get_collector("tf-cnn-benchmarks")
    path = "m/syn-replicated-fp16-1gpus/resnet50-64/throughput/1"
    assert c.sidecars(path)[:2] == [
        "m/syn-replicated-fp16-1gpus/resnet50-64/throughput/metadata",
        "m/syn-replicated-fp16-1gpus/resnet50-64/metadata",
    ]
    assert c.sidecars(path)[-1] == "metadata"
    text = "Model:       resnet50\nBatch size:  64 global\n64 per device\nDevices:     ['/gpu:0']\n"
    text += "total images/sec: 300.50\n"
    near, far = "GPU 0\tV100\nCUDA\tV10.1\n", "GPU 0\tK80\nCUDA\tV9.0\n"
    obs = _only(
        parse("tf-cnn-benchmarks", text, path, {"m/metadata": far, "m/syn-replicated-fp16-1gpus/metadata": near})
    )
    assert (obs.system.accelerator, obs.software.cuda, obs.config.precision) == ("V100", "10.1", "fp16")
    assert obs.run.values["throughput"] == 300.5


def test_collectors_are_registered_documented_and_import_no_framework():
    names = {c.name for c in all_collectors()}
    assert {
        "mxnet-speedometer",
        "pytorch-progress",
        "tf-bert",
        "paddle",
        "mindspore-timemonitor",
        "oneflow",
        "dllogger",
        "mlperf",
        "tf-cnn-benchmarks",
    } <= names
    assert collectors.broken() == {}
    for c in all_collectors():
        module = importlib.import_module(type(c).__module__)
        assert module.__doc__ and len(module.__doc__.strip().splitlines()) == 1, module.__name__
        assert c.description
    assert not {"tensorflow", "torch", "mxnet", "mindspore", "paddle", "oneflow"} & set(sys.modules)


def test_dllogger_parameters_win_over_the_path_and_say_so():
    result = parse("dllogger", DLL_PARAM + _dll_iters(), "pytorch/resnet50/bz256/1n8g/resnet50_b256_fp32_1.log")
    obs = _only(result)
    assert (obs.config.batch_size, obs.config.precision, obs.config.devices_per_node) == (128, "amp", 4)
    said = sorted(p.message.split(" but")[0] for p in result.problems if p.line == 1 and "the log wins" in p.message)
    assert said == ["path says batch_size=256", "path says devices_per_node=8", "path says precision=fp32"]


def test_mlperf_bad_values_are_problems_not_crashes():
    text = _mllog("gradient_accumulation_steps", 0, "two") + _mllog("run_start", "late")
    text += ':::MLLOG {"key": "run_stop", broken json\n' + _mllog("run_stop", 60_000, status="success")
    result = parse("mlperf", text, PATH, {"Org/systems/s.json": SYSTEM})
    obs = _only(result)
    assert obs.config.grad_accum == 1
    assert obs.run.status == "error" and "not after run_start" in obs.run.reason
    assert any("not valid JSON" in p.message for p in result.problems)


@pytest.mark.parametrize("fmt", sorted(EXPECTED))
def test_any_cut_of_a_fixture_parses_without_raising(fmt):
    """A killed run can stop anywhere: every prefix gives a result (records or problems), never an exception."""
    for path in sorted((FIXTURES / fmt).rglob("*")):
        if not path.is_file() or is_sidecar(path):
            continue
        text = read_text(path)
        rel = path.relative_to(FIXTURES / fmt).as_posix()
        for cut in range(0, len(text), max(1, len(text) // 23)):
            result = parse(EXPECTED[fmt], text[:cut], rel)
            assert result.observations or result.problems, (rel, cut)
