"""Parse speed of each built-in collector, in MB/s of log text (prints figures; not a test).

Each collector parses one fixture log blown up to about 32 MB, twice: "dense" (every line is
one the collector reads, like a DLLogger or all-ranks ProgressMeter log) and "noisy" (four
framework noise lines after each, like a typical TensorFlow log). Parse only: reading,
hashing and decoding are collect.py's and are not counted. Best of three.

Example: .venv/bin/python benchmarks/collectors_speed.py
"""

from __future__ import annotations

import time
from pathlib import Path

from benchcat.collect import decode
from collectors import get_collector
from collectors.base import FileContext

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"
CASES = {
    "mxnet-speedometer": "mxnet_speedometer/mxnet/resnet50/bz64/1n1g/resnet50_b64_fp32_1.log",
    "pytorch-progress": "pytorch_progress/pytorch/resnet50/bz128/1n2g/resnet50_b128_fp16_1.log",
    "tf-bert": "tf_bert/tensorflow/bert-base/bz32/1n1g/bert_base_b32_fp16_1.log",
    "paddle": "paddle/paddle/resnet50/bz64/1n1g/resnet50_b64_fp32_1.log",
    "mindspore-timemonitor": "mindspore/mindspore/bert-base/bz32/1n8g/bert_base_b32_fp16_1.log",
    "oneflow": "oneflow/oneflow/bert-base/bz96/1n8g/bert_base_b96_fp32_1.log",
    "dllogger": "dllogger/pytorch/resnet50/bz256/1n8g/resnet50_b256_amp_1.log",
    "mlperf": "mlperf/Acme/results/box8/resnet/result_0.txt",
    "tf-cnn-benchmarks": "tf_cnn_benchmarks/box-2x.logs/syn-replicated-fp16-2gpus/resnet50-256/throughput/1",
}
NOISE = (
    "2020-09-05 18:47:54.591426: I tensorflow/stream_executor/platform/default/dso_loader.cc:48] "
    "Successfully opened dynamic library libcudart.so.11.0\n"
    "W0905 18:47:57.235754 140293535807296 deprecation.py:323] From /usr/lib/python3/dist-packages/tensorflow/"
    "python/ops/resource_variable_ops.py:1659: calling BaseResourceVariable.__init__ is deprecated\n"
) * 2
TARGET = 32 << 20


def speed(name: str, rel: str, text: str) -> float:
    big = text * max(1, TARGET // len(text))
    ctx = FileContext(root="bench", path=rel, sha256="0" * 64)
    collector = get_collector(name)
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        collector.parse(big, ctx)
        best = min(best, time.perf_counter() - start)
    return len(big.encode()) / 1e6 / best


def main() -> None:
    print(f"{'collector':24s} {'dense MB/s':>10s} {'noisy MB/s':>10s}")
    for name, rel in CASES.items():
        text = decode((FIXTURES / rel).read_bytes(), rel)[0]
        noisy = "".join(line + "\n" + NOISE for line in text.split("\n"))
        print(f"{name:24s} {speed(name, rel, text):10.0f} {speed(name, rel, noisy):10.0f}")


if __name__ == "__main__":
    main()
