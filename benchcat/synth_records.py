"""Records built directly (no logs), for site tests, examples and the site benchmark.

``record(...)`` makes one record with known run values; ``generated(n)`` makes a large catalog
of systems x frameworks x models x configurations with a few failures and noisy cells, from a
seed, so the same call gives the same records.
"""

from __future__ import annotations

import random

from .aggregate import summarize_runs
from .schema import Benchmark, Config, Provenance, Record, Run, Software, System, record_id


def record(
    model: str,
    framework: str,
    values: list[float],
    *,
    system: dict | None = None,
    software: dict | None = None,
    failures: list[tuple[str, str, str]] = (),
    seq_len: int | None = None,
    root: str = "synthetic",
    **config,
) -> Record:
    """One record; ``failures`` are (status, reason, excerpt) runs added after the ok ones."""
    bench = Benchmark(model=model, seq_len=seq_len)
    cfg = Config(framework=framework, **config)
    sys_, sw = System(**(system or {})), Software(**(software or {}))
    rid = record_id(bench, cfg, sys_, sw)
    runs = []
    for i, value in enumerate(values, 1):
        runs.append(Run(run_id=str(i), values={"throughput": value}, method="log_speed", source=_src(root, rid, i)))
    for j, (status, reason, excerpt) in enumerate(failures, len(values) + 1):
        runs.append(Run(run_id=str(j), status=status, reason=reason, excerpt=excerpt, source=_src(root, rid, j)))
    return Record(
        id=rid, benchmark=bench, config=cfg, system=sys_, software=sw, runs=runs, metrics=summarize_runs(runs)
    )


def _src(root: str, rid: str, i: int) -> Provenance:
    return Provenance(root=root, path=f"{rid}/run{i}.log", sha256="0" * 64, collector="synthetic", collector_version=1)


MODELS = {"resnet50": (None, 400.0), "bert-base": (128, 220.0), "bert-large": (512, 70.0), "gpt2": (1024, 35.0)}


def generated(n: int = 10_000, systems: int = 40, frameworks: int = 4, seed: int = 0) -> list[Record]:
    """About ``n`` records: ``systems`` x ``frameworks`` x models x precisions x batches x topologies."""
    rng = random.Random(seed)
    fws = ["tensorflow", "pytorch", "mxnet", "mindspore", "paddle", "jax"][:frameworks]
    names = [f"System-{i:02d} ({['A100', 'V100', 'H100', 'MI250', 'BI-V100'][i % 5]})" for i in range(systems)]
    topologies = [(1, 1), (1, 2), (1, 4), (1, 8), (2, 8), (4, 8)]
    out: list[Record] = []
    combos = [
        (model, prec, batch, topo)
        for model in MODELS
        for prec in ("fp32", "fp16")
        for batch in (32, 64, 128)
        for topo in topologies
    ]
    per_pair = max(1, -(-n // (systems * len(fws))))
    for s, name in enumerate(names):
        speed = 0.5 + s / systems
        for fw in fws:
            for model, prec, batch, (nodes, gpus) in rng.sample(combos, min(per_pair, len(combos))):
                seq, base = MODELS[model]
                devices = nodes * gpus
                value = base * speed * (1.8 if prec == "fp16" else 1.0) * devices * 0.93 ** (devices - 1)
                spread = 0.15 if rng.random() < 0.03 else 0.01
                failures = [("oom", "CUDA out of memory", "RuntimeError: CUDA out of memory.")] if batch == 128 and rng.random() < 0.05 else []  # noqa: E501
                values = [] if failures and rng.random() < 0.5 else [value * rng.uniform(1 - spread, 1 + spread) for _ in range(3)]  # noqa: E501
                out.append(record(
                    model, fw, values, failures=failures, seq_len=seq, precision=prec, batch_size=batch, nodes=nodes,
                    devices_per_node=gpus, system={"name": name, "accelerator": name.split("(")[1][:-1]},
                    software={"framework_version": f"{fw}-2.{s % 3}", "cuda": "11.8" if s % 2 else "12.2"},
                ))  # fmt: skip
    return out[:n]
