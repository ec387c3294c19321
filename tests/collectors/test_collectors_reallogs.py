"""Every known answer in ../shared/reallogs/SOURCES.md, reproduced exactly (skips without ../shared)."""

from collector_helpers import collect_tree

TF_CNN = {  # (precision, devices) -> total images/sec
    ("fp32", 1): 571.84,
    ("fp32", 2): 1135.93,
    ("fp32", 4): 2269.37,
    ("fp32", 8): 4526.99,
    ("fp16", 1): 1990.02,
    ("fp16", 2): 2868.39,
    ("fp16", 4): 4949.11,
    ("fp16", 8): 7932.14,
}


def test_tf_cnn_benchmarks_numbers_and_environment(shared, tmp_path):
    report, cat = collect_tree(shared / "reallogs" / "tf_cnn_benchmarks", tmp_path)
    assert report.problems == []
    found = {}
    for record in cat.records.values():
        c = record.config
        assert c.nodes == 1 and record.benchmark.model == "resnet50"
        assert c.batch_size == {"fp32": 224, "fp16": 448}[c.precision]
        assert record.benchmark.dataset == "synthetic"
        assert record.system.accelerator == "A100-SXM4-40GB"
        assert record.system.accelerator_count == 8  # the machine's GPUs, from metadata
        assert record.system.cpu == "7742"
        assert record.software.cuda == "11.0.221"
        assert record.software.framework_version == "2.3.0"
        assert record.software.python == "3.6.9"
        assert [r.method for r in record.runs] == ["summary"]
        found[(c.precision, c.devices)] = record.runs[0].values["throughput"]
    assert found == TF_CNN


def _mlperf(shared, tmp_path):
    _, cat = collect_tree(shared / "reallogs" / "mlperf", tmp_path)
    return {r.benchmark.model: r for r in cat.records.values()}


def test_mlperf_pcl_resnet_scores_1_752(shared, tmp_path):
    record = _mlperf(shared, tmp_path)["resnet"]
    runs = [round(r.values["time_to_train"], 3) for r in record.runs]
    assert runs == [1.752, 1.754, 1.754, 1.750, 1.751]
    summary = record.metrics["time_to_train"]
    assert record.headline == "time_to_train" and summary.unit == "min"
    assert summary.score_rule == "olympic:5"
    assert round(summary.score, 3) == 1.752
    assert record.config.framework == "mindspore" and record.software.framework_version == "1.2.1"
    assert (record.config.nodes, record.config.devices_per_node) == (32, 8)
    assert record.system.accelerator == "Ascend 910 Pro A"


def test_mlperf_dell_bert_is_incomplete_not_scored(shared, tmp_path):
    record = _mlperf(shared, tmp_path)["bert"]
    runs = [round(r.values["time_to_train"], 3) for r in record.runs]
    assert runs == [65.904, 72.816, 62.375, 68.511, 65.949]
    summary = record.metrics["time_to_train"]
    assert summary.score_rule == "olympic:10"
    assert summary.score is None
    assert summary.score_note == "incomplete: 5 of 10 required runs"
    assert record.software.cuda == "11.2" and record.software.nccl == "2.9.8"
    assert record.system.accelerator_memory_gb == 40.0
