"""Observations -> records, and records -> the catalog (pure: no I/O)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from .aggregate import summarize_runs, tidy
from .schema import Record, Run, id_from_identity, identity_json


def natural(text: str) -> tuple:
    """'2' before '12'; non-numeric ids after numeric ones, alphabetically."""
    return (0, int(text), "") if text.isdigit() else (1, 0, text)


def run_order(root: str, run_id: str, path: str) -> tuple:
    """How a record's runs are ordered: by root, natural run id, then log path."""
    return (root, natural(str(run_id)), path)


def _run_key(run: dict) -> tuple:
    src = run["source"]
    return run_order(src["root"], run["run_id"], src["path"])


def observation_dict(obs) -> dict:
    """A collector's Observation as the plain dict that travels between processes and caches."""
    run = obs.run.model_dump()
    run["values"] = {name: tidy(v) for name, v in run["values"].items()}
    ident = identity_json(obs.benchmark, obs.config, obs.system, obs.software)
    return {
        "id": id_from_identity(ident, obs.benchmark.model, obs.config.framework, obs.config.topology),
        "ident": ident,
        "run": run,
        "notes": list(obs.notes),
        "headline": obs.headline,
        "score_rules": dict(obs.score_rules),
    }


def build_records(observations: list[dict]) -> dict[str, Record]:
    """Group observations (plain dicts from collectors) by record id into records."""
    groups: dict[str, list[dict]] = {}
    for obs in observations:
        groups.setdefault(obs["id"], []).append(obs)
    records = {}
    for rid, group in groups.items():
        first = {**json.loads(group[0]["ident"]), "headline": group[0]["headline"]}
        runs = sorted((o["run"] for o in group), key=_run_key)
        score_rules: dict[str, str] = {}
        notes: set[str] = set()
        for o in group:
            score_rules.update(o.get("score_rules") or {})
            notes.update(o.get("notes") or [])
        records[rid] = _record(rid, first, [Run.model_validate(r) for r in runs], score_rules, sorted(notes))
    return records


def _record(rid: str, ident: dict, runs: list[Run], score_rules: dict, notes: list[str]) -> Record:
    return Record(
        id=rid,
        benchmark=ident["benchmark"],
        config=ident["config"],
        system=ident["system"],
        software=ident["software"],
        runs=runs,
        headline=ident.get("headline", "throughput"),
        metrics=summarize_runs(runs, score_rules),
        notes=notes,
    )


def headline_value(record: Record) -> float | None:
    summary = record.metrics.get(record.headline)
    if summary is None:
        return None
    return summary.score if summary.score is not None else summary.median


@dataclass
class Changes:
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    old_values: dict[str, float | None] = field(default_factory=dict)


def merge_into(cat, fresh: dict[str, Record], root: str) -> Changes:
    """Replace the runs that came from ``root`` by ``fresh`` ones; keep runs from other roots.

    Records left without runs are removed. Mutates ``cat.records``; returns what changed.
    """
    changes = Changes()
    result: dict[str, Record] = {}
    for rid, old in cat.records.items():
        kept = [r for r in old.runs if r.source.root != root]
        new = fresh.get(rid)
        if new is None and len(kept) == len(old.runs):
            result[rid] = old
            continue
        runs = kept + (new.runs if new else [])
        if not runs:
            continue
        runs.sort(key=lambda r: run_order(r.source.root, r.run_id, r.source.path))
        rules = {name: m.score_rule for name, m in old.metrics.items() if m.score_rule}
        if new:
            rules.update({name: m.score_rule for name, m in new.metrics.items() if m.score_rule})
        notes = sorted(set(old.notes) | set(new.notes if new else []))
        ident = old.model_dump(include={"benchmark", "config", "system", "software", "headline"})
        result[rid] = _record(rid, ident, runs, rules, notes)
    for rid, new in fresh.items():
        if rid not in result and rid not in cat.records:
            result[rid] = new
    for rid in sorted(set(cat.records) | set(result)):
        before, after = cat.records.get(rid), result.get(rid)
        if before is None:
            changes.added.append(rid)
        elif after is None:
            changes.removed.append(rid)
            changes.old_values[rid] = headline_value(before)
        elif before != after:
            changes.changed.append(rid)
            changes.old_values[rid] = headline_value(before)
        elif any(r.source.root == root for r in after.runs):
            changes.unchanged += 1  # of the records this root feeds; the others are not its business
    cat.records = result
    return changes
