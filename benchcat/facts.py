"""Records -> one flat row of facts each (a dict), the shape every report selects from.

A fact row names a record's configuration by plain field names (``model``, ``framework``,
``devices``, ``system`` ...), so report specs can match and group on them without knowing the
nested schema. Rows stay plain dicts while reports select and group them (pandas per-row access
is far too slow at 10,000 records); pandas takes over for the output tables. Pure: no I/O.
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import re
from collections import Counter

from .merge import headline_value
from .schema import Record

# Fields a report spec may name in rows, columns, where and match.
CONFIG_FIELDS = (
    "model", "task", "seq_len", "image_size", "dataset", "framework", "precision", "batch_size", "grad_accum",
    "compile_mode", "fused_ops", "data_sink", "sync_every_step", "parallel_mode", "nodes", "devices_per_node",
    "devices", "topology", "flags",
)  # fmt: skip
SYSTEM_FIELDS = ("system", "accelerator", "vendor", "host", "interconnect")
SOFTWARE_FIELDS = ("framework_version", "cuda", "cudnn", "nccl", "driver", "python", "os")
FIELDS = CONFIG_FIELDS + SYSTEM_FIELDS + SOFTWARE_FIELDS
FAILED = ("oom", "segfault", "error", "timeout", "missing")
# Flags that say how N devices were driven (launcher, threads per rank): they follow from the
# device count, so a scaling series must not split on them.
TOPOLOGY_FLAGS = ("launcher", "threads_per_rank")


def system_label(record: Record) -> str:
    return record.system.name or record.system.accelerator or "unknown system"


def env_key(record: Record) -> str:
    """Short stable key of a record's system + software (the environments page anchor)."""
    blob = record.system.model_dump_json() + record.software.model_dump_json()
    return "env-" + hashlib.sha256(blob.encode()).hexdigest()[:8]


def status(record: Record, metric: str) -> str:
    """ok when some run measured the metric; else the most common failure kind; else missing."""
    summary = record.metrics.get(metric)
    if summary is not None and summary.count:
        return "ok"
    kinds = Counter(run.status for run in record.runs if run.status != "ok")
    if not kinds:
        return "missing"
    return sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]


def fact(record: Record, metric: str | None = None) -> dict:
    """One flat row: configuration, system, software, and the metric's summary."""
    c, b, sy, sw = record.config, record.benchmark, record.system, record.software
    name = metric or record.headline
    summary = record.metrics.get(name)
    value = headline_value(record) if name == record.headline else (summary.median if summary else None)
    return {
        "id": record.id,
        "model": b.model, "task": b.task, "seq_len": b.seq_len, "image_size": b.image_size, "dataset": b.dataset,
        "framework": c.framework, "precision": c.precision, "batch_size": c.batch_size, "grad_accum": c.grad_accum,
        "compile_mode": c.compile_mode, "fused_ops": c.fused_ops, "data_sink": c.data_sink,
        "sync_every_step": c.sync_every_step, "parallel_mode": c.parallel_mode, "nodes": c.nodes,
        "devices_per_node": c.devices_per_node, "devices": c.devices, "topology": c.topology,
        "flags": ",".join(f"{k}={v}" for k, v in sorted(c.flags.items())) or None,
        "scaling_flags": ",".join(f"{k}={v}" for k, v in sorted(c.flags.items()) if k not in TOPOLOGY_FLAGS) or None,
        "system": system_label(record), "accelerator": sy.accelerator, "vendor": sy.vendor, "host": sy.host,
        "interconnect": sy.interconnect,
        "framework_version": sw.framework_version, "cuda": sw.cuda, "cudnn": sw.cudnn, "nccl": sw.nccl,
        "driver": sw.driver, "python": sw.python, "os": sw.os,
        "env": env_key(record),
        "metric": name,
        "unit": summary.unit if summary else "",
        "direction": summary.direction if summary else "higher",
        "value": value,
        "min": summary.min if summary else None,
        "max": summary.max if summary else None,
        "cv": summary.cv if summary else None,
        "count": summary.count if summary else 0,
        "runs": len(record.runs),
        "failed_runs": sum(run.status != "ok" for run in record.runs),
        "status": status(record, name),
    }  # fmt: skip


def facts(records, metric: str | None = None) -> list[dict]:
    """The fact rows of ``records``, sorted by id."""
    return [fact(r, metric) for r in sorted(records, key=lambda r: r.id)]


# Internal to scaling series (flags without the launcher ones): not a column anyone downloads.
_INTERNAL = ("scaling_flags",)


def catalog_csv(rows: list[dict]) -> str:
    """The catalog as CSV, one line per record: ``catalog list --format csv`` and the site's
    downloads/catalog.csv are this same text."""
    import pandas as pd

    if not rows:
        return ""
    frame = pd.DataFrame(rows).drop(columns=list(_INTERNAL), errors="ignore")
    return frame.to_csv(index=False, lineterminator="\n")


@functools.lru_cache(maxsize=1024)
def _glob(pattern: str) -> re.Pattern:
    return re.compile(fnmatch.translate(pattern.lower()))


def matches(value, wanted) -> bool:
    """Spec matching: None matches None; strings match case-insensitively with * and ? globs;
    a list matches any of its items; numbers and booleans match by equality."""
    if isinstance(wanted, list):
        return any(matches(value, w) for w in wanted)
    if wanted is None or value is None:
        return wanted is None and value is None
    if isinstance(wanted, str):
        return _glob(wanted).match(str(value).lower()) is not None
    if isinstance(wanted, bool) or isinstance(value, bool):
        return value == wanted
    try:
        return float(value) == float(wanted)
    except (TypeError, ValueError):
        return False


def select(rows: list[dict], where: dict) -> list[dict]:
    """The fact rows whose fields all match ``where``."""
    unknown = sorted(set(where) - set(FIELDS))
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(unknown)}; valid: {', '.join(FIELDS)}")
    items = list(where.items())
    return [row for row in rows if all(matches(row[name], wanted) for name, wanted in items)]


def group(rows: list[dict], fields: list[str]) -> dict[tuple, list[dict]]:
    """Fact rows by the tuple of their ``fields`` (None is a value like any other)."""
    out: dict[tuple, list[dict]] = {}
    for row in rows:
        out.setdefault(tuple(row[f] for f in fields), []).append(row)
    return out


def sort_key(value) -> tuple:
    """Orders mixed None / numbers / strings: numbers first, then strings, None last."""
    if value is None or (isinstance(value, float) and value != value):
        return (2, 0, "")
    if isinstance(value, bool):
        return (1, 0, str(value))
    if isinstance(value, int | float):
        return (0, value, "")
    return (1, 0, str(value))


def best(rows: list[dict]) -> dict | None:
    """The one record to show when several match a cell: measured first, most ok runs, then id."""
    if not rows:
        return None
    rows = sorted(rows, key=lambda r: (r["status"] != "ok", -r["count"], r["id"]))
    chosen = dict(rows[0])
    chosen["others"] = len(rows) - 1
    return chosen
