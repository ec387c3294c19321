"""The fixture site of the site tests: a small catalog modelled on the seed notes (Iluvatar vs
V100, BERT-base), with failures, a noisy cell, a series without a 1-device baseline, hostile
strings from "logs", report specs, a systems file and a redaction list."""

from __future__ import annotations

from pathlib import Path

from benchcat import store
from benchcat.scaffold import scaffold
from benchcat.synth_records import record

HOSTILE = "<script>alert(1)</script>"
PRIVATE_HOST = "gpu-node-7.corp.internal"

V100 = {"name": "Tesla V100-SXM2-32GB", "accelerator": "V100-SXM2-32GB", "vendor": "NVIDIA", "host": PRIVATE_HOST}
ILU = {"name": "Iluvatar BI-V100", "accelerator": "BI-V100", "vendor": "Iluvatar", "host": HOSTILE}
SW_V100 = {"framework_version": "2.4.1", "cuda": "11.0", "driver": "450.80.02"}
SW_ILU = {"framework_version": "2.4.1", "cuda": "10.2", "driver": "1.2|*beta*_[x](y)", "other": {"patch": HOSTILE}}
SEGV = "Fatal Python error: Segmentation fault\n  File \"/home/alice/bert/run.py\", line 12 <module>\n*** | `x` [a](b)"


def bert(system, software, values, seq=128, batch=128, prec="fp32", xla=False, devices=1, accum=1, failures=()):
    return record(
        "bert-base", "tensorflow", values, system=system, software=software, failures=failures, seq_len=seq,
        precision=prec, batch_size=batch, compile_mode="xla" if xla else None, devices_per_node=devices,
        grad_accum=accum, root=f"/logs/{PRIVATE_HOST}",
    )  # fmt: skip


def records():
    oom = [("oom", "ResourceExhaustedError: OOM when allocating tensor", "OOM when allocating tensor with shape[160,16,128,128]")]  # noqa: E501
    return [
        bert(ILU, SW_ILU, [110, 111, 109]),
        bert(ILU, SW_ILU, [139, 140, 138], prec="fp16"),
        bert(ILU, SW_ILU, [], prec="fp16", xla=True, failures=[("segfault", f"segfault on {PRIVATE_HOST}", SEGV)]),
        bert(V100, SW_V100, [120, 121, 119]),
        bert(V100, SW_V100, [225, 226, 224], prec="fp16"),
        bert(V100, SW_V100, [363, 365, 361], prec="fp16", xla=True),
        bert(ILU, SW_ILU, [], batch=160, failures=oom),
        bert(ILU, SW_ILU, [143, 143, 144], batch=160, prec="fp16"),
        bert(V100, SW_V100, [], batch=160, failures=oom),
        bert(V100, SW_V100, [230, 231, 229], batch=160, prec="fp16"),
        bert(V100, SW_V100, [375, 376, 374], batch=160, prec="fp16", xla=True),
        bert(ILU, SW_ILU, [47, 47.5, 46.5], seq=256, batch=32),
        bert(ILU, SW_ILU, [55, 55, 55], seq=256, batch=32, prec="fp16"),
        bert(V100, SW_V100, [54, 54.2, 53.8], seq=256, batch=32),
        bert(V100, SW_V100, [88, 87, 89], seq=256, batch=32, prec="fp16"),
        bert(ILU, SW_ILU, [50, 60, 70], seq=256, batch=48, prec="fp16"),  # noisy: CV ~ 13 %
        bert(V100, SW_V100, [96, 96.5, 95.5], seq=256, batch=48, prec="fp16"),
        bert(ILU, SW_ILU, [80, 80.5, 79.5], seq=256, batch=32, devices=2),
        bert(ILU, SW_ILU, [85, 86, 84], seq=256, batch=32, prec="fp16", devices=2),
        bert(V100, SW_V100, [98, 98.5, 97.5], seq=256, batch=32, devices=2),
        bert(V100, SW_V100, [155, 156, 154], seq=256, batch=32, prec="fp16", devices=2),
        bert(V100, SW_V100, [185, 186, 184], seq=256, batch=64, prec="fp16", devices=2),  # no 1-device run
        bert(V100, SW_V100, [92, 92.5, 91.5], seq=256, batch=32, prec="fp16", accum=2),
        bert(ILU, SW_ILU, [58, 58.5, 57.5], seq=256, batch=32, prec="fp16", accum=2),
    ]


REPORTS = {
    "framework-configs.yaml": """\
title: "BERT-base: Iluvatar vs V100, framework configurations"
description: One device, gradient accumulation 1; deltas against TF fp32 on V100.
where: {devices: 1, grad_accum: 1}
rows: [seq_len, batch_size]
columns:
  - {label: "Iluvatar + TF", match: {system: "*Iluvatar*", precision: fp32, compile_mode: null}}
  - {label: "Iluvatar + TF + fp16", match: {system: "*Iluvatar*", precision: fp16, compile_mode: null}}
  - {label: "Iluvatar + TF + XLA + fp16", match: {system: "*Iluvatar*", precision: fp16, compile_mode: xla}}
  - {label: "V100 + TF", match: {system: "*V100-SXM2*", precision: fp32, compile_mode: null}}
  - {label: "V100 + TF + fp16", match: {system: "*V100-SXM2*", precision: fp16, compile_mode: null}}
  - {label: "V100 + TF + XLA + fp16", match: {system: "*V100-SXM2*", precision: fp16, compile_mode: xla}}
baseline: {column: "V100 + TF"}
""",
    "grad-accum.yaml": """\
title: Gradient accumulation against accumulation 1
where: {seq_len: 256, compile_mode: null, devices: 1}
rows: [seq_len, batch_size, grad_accum]
columns: [system, precision]
baseline: {row: {grad_accum: 1}}
""",
    "iluvatar-vs-v100.yaml": """\
title: Iluvatar BI-V100 against V100
kind: vendor
a: {label: V100, match: {system: "*V100-SXM2*"}}
b: {label: Iluvatar, match: {system: "*Iluvatar*"}}
""",
}
SYSTEMS = """\
systems:
  "*V100-SXM2*": {price: 10000, watts: 300}
  "*Iluvatar*": {price: 6000, watts: 250}
"""
HISTORY = [
    {"revision": 1, "date": "2026-01-01T00:00:00Z", "source": f"/logs/{PRIVATE_HOST}", "added": [], "changed": [],
     "removed": []},
]  # fmt: skip


def build_site(root: Path, *, redact: str | None = None) -> Path:
    """A complete site folder (scaffolded like `catalog init`) holding the fixture catalog."""
    scaffold(root)
    cat = store.Catalog(path=root / "catalog", revision=2)
    for r in records():
        cat.records[r.id] = r
    first = sorted(cat.records)[0]
    cat.history = [*HISTORY, {"revision": 2, "date": "2026-01-02T00:00:00Z", "source": "rerun", "added": [],
                              "changed": [{"id": first, "old": 100.0, "new": 110.0}], "removed": []}]  # fmt: skip
    store.save(cat)
    (root / "reports" / "all.yaml").unlink()
    for name, text in REPORTS.items():
        (root / "reports" / name).write_text(text)
    (root / "systems.yaml").write_text(SYSTEMS)
    if redact is not None:  # replaces the scaffold's redact: block (which redacts system.host)
        settings = (root / "benchcat.yml").read_text().split("redact:")[0]
        (root / "benchcat.yml").write_text(settings + redact)
    return root
