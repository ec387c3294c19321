"""Catalog-wide page data: home counts, coverage, environments, failures, changes (pure)."""

from __future__ import annotations

import hashlib
from collections import Counter

import pandas as pd

from .aggregate import delta_pct
from .facts import group, sort_key, system_label

CHANGE_ROWS = 200  # rows per kind and revision on the changes page; the rest is in the downloads


def anchor(record_id: str) -> str:
    """A safe HTML id for a record's failure entry, whatever characters the id holds."""
    return "fail-" + hashlib.sha256(record_id.encode()).hexdigest()[:10]


def counts(records, rows: list[dict]) -> dict:
    runs = [run for r in records for run in r.runs]
    return {
        "records": len(records),
        "runs": len(runs),
        "ok_runs": sum(run.status == "ok" for run in runs),
        "failed_runs": sum(run.status != "ok" for run in runs),
        "systems": sorted({r["system"] for r in rows}),
        "frameworks": sorted({r["framework"] for r in rows}),
        "models": sorted({r["model"] for r in rows}),
    }


def coverage(rows: list[dict]) -> tuple[list[tuple[str, str]], list[tuple[tuple, list[dict]]]]:
    """Columns (model, precision); rows (system, framework) with, per cell, how many configurations
    were measured and how many failed by kind. An empty dict is a hole: nothing was attempted."""
    columns = sorted(group(rows, ["model", "precision"]))
    cells = group(rows, ["system", "framework", "model", "precision"])
    out = []
    for system, fw in sorted(group(rows, ["system", "framework"])):
        line = []
        for model, precision in columns:
            facts = cells.get((system, fw, model, precision), [])
            line.append(dict(sorted(Counter(f["status"] for f in facts).items())))
        out.append(((system, fw), line))
    return columns, out


def coverage_frame(columns, rows) -> pd.DataFrame:
    lines = []
    for (system, fw), line in rows:
        for (model, precision), cell in zip(columns, line, strict=True):
            lines.append({"system": system, "framework": fw, "model": model, "precision": precision,
                          "measured": cell.get("ok", 0), "failed": sum(v for k, v in cell.items() if k != "ok"),
                          "failures": ",".join(f"{k}:{v}" for k, v in cell.items() if k != "ok")})  # fmt: skip
    return pd.DataFrame(lines)


def environments(records, env_of: dict[str, str]) -> list[dict]:
    """One entry per distinct system + software stack, with the records measured on it.

    ``env_of``: record id -> environment key, as the fact rows carry it (computed once)."""
    envs: dict[str, dict] = {}
    for r in sorted(records, key=lambda r: r.id):
        key = env_of[r.id]
        env = envs.get(key)
        if env is None:
            system = r.system.model_dump()
            software = r.software.model_dump()
            other = software.pop("other")
            env = envs[key] = {
                "key": key,
                "label": system_label(r),
                "system": [(k, system[k]) for k in sorted(system) if system[k] is not None],
                "software": [(k, software[k]) for k in sorted(software) if software[k] is not None]
                + [(k, other[k]) for k in sorted(other)],
                "records": 0,
                "models": set(),
                "frameworks": set(),
            }
        env["records"] += 1
        env["models"].add(r.benchmark.model)
        env["frameworks"].add(r.config.framework)
    for env in envs.values():
        env["models"], env["frameworks"] = sorted(env["models"]), sorted(env["frameworks"])
    _tell_apart(list(envs.values()))
    return sorted(envs.values(), key=lambda e: (e["label"], e["key"]))


def _tell_apart(envs: list[dict]) -> None:
    """Headings of stacks on the same system name the framework and version, then what else differs:
    five headings that all said "vm" told the reader nothing."""
    by_label: dict[str, list[dict]] = {}
    for env in envs:
        by_label.setdefault(env["label"], []).append(env)
    for label, same in by_label.items():
        if len(same) < 2:
            continue
        for env in same:
            version = dict(env["software"]).get("framework_version")
            env["label"] = f"{label} · {', '.join(env['frameworks'])}" + (f" {version}" if version else "")
        named: dict[str, list[dict]] = {}
        for env in same:
            named.setdefault(env["label"], []).append(env)
        for still in (clash for clash in named.values() if len(clash) > 1):
            pairs = [set(env["system"]) | set(env["software"]) for env in still]
            shared = set.intersection(*pairs)
            for env, mine in zip(still, pairs, strict=True):
                differ = sorted(p for p in mine - shared if p[0] != "framework_version")[:3]
                if differ:
                    env["label"] += " · " + " · ".join(f"{k} {v}" for k, v in differ)


def failures(records, env_of: dict[str, str]) -> list[tuple[str, list[dict]]]:
    """Per model, every record with failed runs: its config and each failure's reason and excerpt."""
    by_model: dict[str, list[dict]] = {}
    for r in sorted(records, key=lambda r: r.id):
        failed = [run for run in r.runs if run.status != "ok"]
        if not failed:
            continue
        by_model.setdefault(r.benchmark.model, []).append({
            "id": r.id, "anchor": anchor(r.id), "system": system_label(r), "env": env_of[r.id],
            "config": f"{r.config.framework} {r.config.precision} bs {r.config.batch_size or '?'} "
                      f"{r.config.topology}",
            "runs": [{"run": run.run_id, "status": run.status, "reason": run.reason or "", "excerpt": run.excerpt or "",
                      "source": _source(run.source)} for run in failed],
        })  # fmt: skip
    return sorted(by_model.items(), key=lambda kv: sort_key(kv[0]))


def _source(src) -> str:
    """Where a failed run came from, whole: the log under its collected root, or the imported table."""
    if src.collector == "table-import":
        return f"{src.path} of {src.root}"
    return f"log {src.root}/{src.path}" if src.root else f"log {src.path}"


def changes(history: list[dict], records: dict) -> list[dict]:
    """Catalog revisions, newest first, with old -> new headline values and delta %."""
    out = []
    for entry in sorted(history, key=lambda e: e.get("revision", 0), reverse=True):
        item = {k: entry.get(k) for k in ("revision", "date", "source")}
        for kind in ("added", "changed", "removed"):
            lines = []
            for change in entry.get(kind) or []:
                rid = str(change.get("id"))
                rec = records.get(rid)
                direction = rec.metrics[rec.headline].direction if rec and rec.headline in rec.metrics else "higher"
                old, new = change.get("old"), change.get("new")
                lines.append({"id": rid, "old": old, "new": new,
                              "delta": delta_pct(new, old, direction) if kind == "changed" else None})  # fmt: skip
            item[kind] = lines[:CHANGE_ROWS]
            item[f"{kind}_more"] = max(0, len(lines) - CHANGE_ROWS)
            item[f"{kind}_count"] = len(lines)
        out.append(item)
    return out
