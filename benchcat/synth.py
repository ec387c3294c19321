"""Synthetic DLPerf-style logs with known answers, for tests and benchmarks.

Every file is made from a seed, so the same call writes the same bytes. The throughput a
collector should find is returned alongside, so tests compare against an answer computed
here from the numbers written, not from the parser.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

NOISE = [
    "W{md} {hms}.{us:06d} 140405777909504 deprecation.py:323] From /usr/lib/python3/site-packages/tensorflow/python/ops/resource_variable_ops.py:1659: calling BaseResourceVariable.__init__ (from tensorflow.python.ops.resource_variable_ops) with constraint is deprecated",
    "I{md} {hms}.{us:06d} 140405777909504 gpu_device.cc:1325] Created TensorFlow device (/job:localhost/replica:0/task:0/device:GPU:{gpu} with 30555 MB memory) -> physical GPU (device: {gpu}, name: Tesla V100-SXM2-32GB, pci bus id: 0000:1a:00.0, compute capability: 7.0)",
    "I{md} {hms}.{us:06d} 140405777909504 cross_device_ops.py:702] batch_all_reduce: 161 all-reduces with algorithm = nccl, num_packs = 1, agg_small_grads_max_bytes = 0 and agg_small_grads_max_group = 10",
    "2020-08-26 15:{mm}:{ss}.{ms:03d}: I tensorflow/core/common_runtime/bfc_allocator.cc:970] Bin (256): \tTotal Chunks: 1{gpu}, Chunks in use: {gpu}. 3.2KiB allocated for chunks. 3.2KiB in use in bin.",
]


@dataclass(frozen=True)
class Written:
    path: Path
    framework: str
    model: str
    batch: int
    precision: str
    nodes: int
    gpus: int
    run_id: str
    throughput: float  # the value a correct collector must report for this run


def _stamp(rng: random.Random, step: int) -> dict:
    return {
        "md": "0826",
        "hms": f"15:{13 + step // 1000 % 40:02d}:{step % 60:02d}",
        "us": rng.randrange(10**6),
        "mm": f"{step // 60 % 60:02d}",
        "ss": f"{step % 60:02d}",
        "ms": rng.randrange(1000),
        "gpu": step % 8,
    }


def keras_log(
    rng: random.Random,
    speed: float,
    steps: int = 600,
    every: int = 100,
    target_bytes: int = 30_000,
    duplicate: bool = True,
) -> tuple[str, float]:
    """A TF2 Keras log; returns (text, the mean speed of the windows after warm-up)."""
    warmup = 20 if steps <= 120 else 100
    lines, kept = [], []
    noise_per_window = 1
    approx_windows = max(steps // every, 1)
    noise_per_window = max(1, target_bytes // (180 * (approx_windows + 1)))
    for _ in range(noise_per_window):
        lines.append(rng.choice(NOISE).format(**_stamp(rng, 0)))
    for a in range(0, steps, every):
        b = min(a + every, steps)
        value = round(speed * rng.uniform(0.97, 1.03), 2)
        secs = round(every * 32 / value, 2)
        body = f"TimeHistory: {secs:.2f} seconds, {value:.2f} examples/second between steps {a} and {b}"
        stamp = _stamp(rng, b)
        if duplicate:
            lines.append(f"WARNING:tensorflow:{body}")
        lines.append(f"I{stamp['md']} {stamp['hms']}.{stamp['us']:06d} 140405777909504 keras_utils.py:133] {body}")
        if a >= warmup:
            kept.append(value)
        for _ in range(noise_per_window):
            lines.append(rng.choice(NOISE).format(**_stamp(rng, b)))
    return "\n".join(lines) + "\n", sum(kept) / len(kept) if kept else float("nan")


def mxnet_bert_log(
    rng: random.Random, batch: int, devices_per_node: int, nodes: int, latency_ms: float, steps: int = 200
) -> tuple[str, float]:
    """A gluon-nlp BERT log, every rank printing every step; returns (text, expected throughput)."""
    warmup = 20 if steps <= 120 else 100
    lines = [f"INFO:root:Namespace(accumulate=1, batch_size={batch}, dtype='float16', log_interval=1)"]
    speeds = []
    for step in range(1, steps + 1):
        lats = [round(latency_ms * rng.uniform(0.95, 1.05), 1) for _ in range(devices_per_node)]
        for lat in lats:
            lines.append(
                f"INFO:root:[step {step}]\tmlm_loss={rng.uniform(6, 8):.5f}\tnsp_loss= {rng.uniform(0.6, 0.7):.2f}\t"
                f"throughput={rng.uniform(18, 22):.1f}K tks/s\tlr=0.0001000 time={lat / 1000:.2f}, latency={lat:.1f} ms/batch"
            )
        if step >= warmup:
            ordered = sorted(lats)
            n = len(ordered)
            median = ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2
            speeds.append(1000.0 / median * batch * devices_per_node * nodes)
    return "\n".join(lines) + "\n", sum(speeds) / len(speeds)


def dlperf_tree(
    root: Path,
    *,
    frameworks=("tensorflow", "mxnet"),
    batches=(32, 64),
    topologies=((1, 1), (1, 8)),
    precisions=("fp32", "fp16"),
    runs=("1", "2", "3", "4", "5"),
    seed: int = 0,
    target_bytes: int = 30_000,
) -> list[Written]:
    """Write a DLPerf tree; returns one :class:`Written` per log with its expected throughput."""
    rng = random.Random(seed)
    out = []
    for fw in frameworks:
        model = "resnet50" if fw == "tensorflow" else "bert-base"
        for batch in batches:
            for nodes, gpus in topologies:
                for prec in precisions:
                    base = batch * gpus * nodes * (9.0 if prec == "fp16" else 4.0) * (0.93 ** (gpus * nodes - 1) + 0.05)
                    for run in runs:
                        stem = model.replace("-", "_")
                        path = (
                            root / fw / model / f"bz{batch}" / f"{nodes}n{gpus}g" / f"{stem}_b{batch}_{prec}_{run}.log"
                        )
                        if fw == "tensorflow":
                            text, expect = keras_log(rng, base, target_bytes=target_bytes)
                        else:
                            latency = 1000.0 * batch * gpus * nodes / base
                            text, expect = mxnet_bert_log(rng, batch, gpus, nodes, latency)
                        path.parent.mkdir(parents=True, exist_ok=True)
                        path.write_text(text)
                        out.append(Written(path, fw, model, batch, prec, nodes, gpus, run, expect))
    return out
