"""Consistency checks of a loaded catalog beyond the schema (pure)."""

from __future__ import annotations

from .aggregate import summarize_runs
from .schema import record_id
from .store import shard_path


def check(cat) -> list[str]:
    findings = []
    seen_runs: dict[tuple, str] = {}
    for rid in sorted(cat.records):
        r = cat.records[rid]
        expect = record_id(r.benchmark, r.config, r.system, r.software)
        if expect != rid:
            findings.append(f"{shard_path(r)}: {rid}: id does not match its identity fields (expected {expect})")
        if not r.runs:
            findings.append(f"{shard_path(r)}: {rid}: record has no runs")
        rules = {name: m.score_rule for name, m in r.metrics.items() if m.score_rule}
        if summarize_runs(r.runs, rules) != r.metrics:
            findings.append(f"{shard_path(r)}: {rid}: metrics do not match the runs (edited by hand? re-collect)")
        if r.headline not in r.metrics and any(run.status == "ok" for run in r.runs):  # all-failed (OOM) is fine
            findings.append(f"{shard_path(r)}: {rid}: headline metric {r.headline!r} has no values")
        for run in r.runs:
            key = (run.source.root, run.source.path, run.run_id)
            if key in seen_runs:
                findings.append(f"{shard_path(r)}: {rid}: run {key} also in {seen_runs[key]}")
            seen_runs[key] = rid
            if run.status == "ok" and not run.values:
                findings.append(f"{shard_path(r)}: {rid}: run {run.run_id} is ok but has no values")
            if run.status != "ok" and not run.reason:
                findings.append(f"{shard_path(r)}: {rid}: failed run {run.run_id} has no reason")
    revisions = [h.get("revision") for h in cat.history]
    if revisions != list(range(1, len(revisions) + 1)):
        findings.append(f"history.yaml: revisions are not 1..{len(revisions)}: {revisions[:10]}")
    if cat.history and cat.history[-1].get("revision") != cat.revision:
        findings.append(f"catalog.yaml: revision {cat.revision} but history ends at {cat.history[-1].get('revision')}")
    return findings
