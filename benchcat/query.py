"""Selecting and flattening records for listings (pure functions)."""

from __future__ import annotations

from .merge import headline_value
from .schema import Record


def select(cat, *, model=None, framework=None, precision=None, system=None) -> list[Record]:
    out = []
    for rid in sorted(cat.records):
        r = cat.records[rid]
        if model and r.benchmark.model != model.lower():
            continue
        if framework and r.config.framework != framework.lower():
            continue
        if precision and r.config.precision != precision.lower():
            continue
        if system:
            names = f"{r.system.name or ''} {r.system.accelerator or ''}".lower()
            if system.lower() not in names:
                continue
        out.append(r)
    return out


def find(cat, key: str) -> Record:
    if key in cat.records:
        return cat.records[key]
    hits = [rid for rid in cat.records if rid.startswith(key)]
    if len(hits) == 1:
        return cat.records[hits[0]]
    if not hits:
        raise KeyError(f"no record id starts with {key!r}")
    raise KeyError(f"{key!r} matches {len(hits)} records: {', '.join(sorted(hits)[:5])} ...")


def flat(r: Record) -> dict:
    """One machine-readable object per record: identity, config, system, software, runs, metrics."""
    d = r.model_dump(mode="json")
    d["config"]["devices"] = r.config.devices
    d["headline_value"] = headline_value(r)
    return d


def to_csv(records: list[Record]) -> str:
    """One CSV row per record: the same columns as the site's downloads/catalog.csv."""
    from .facts import catalog_csv, facts

    return catalog_csv(facts(records))


def table(records: list[Record]):
    from rich import box
    from rich.table import Table

    t = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    t.add_column("id", no_wrap=True)
    for col in ("model", "framework", "precision", "batch", "topology", "system", "runs"):
        t.add_column(col, overflow="ellipsis")
    t.add_column("headline", justify="right", no_wrap=True)
    for r in records:
        value = headline_value(r)
        unit = r.metrics[r.headline].unit if r.headline in r.metrics else ""
        ok = sum(run.status == "ok" for run in r.runs)
        t.add_row(
            r.id,
            r.benchmark.model,
            r.config.framework,
            r.config.precision,
            str(r.config.batch_size or "?"),
            r.config.topology,
            r.system.name or r.system.accelerator or "?",
            f"{ok}/{len(r.runs)}",
            "-" if value is None else f"{value:,.2f} {unit}",
        )
    return t


SHOWN_PROBLEMS = 200  # the summary's list stops here; --problems-file has them all


def summary_lines(report) -> list[str]:
    lines = [
        f"read {report.files} files ({report.bytes_read / 1e6:.1f} MB) from {report.root}, "
        f"{report.cached} unchanged since last collect",
        f"records: {len(report.added)} added, {len(report.changed)} changed, {report.unchanged} unchanged, "
        f"{len(report.removed)} removed (catalog revision {report.revision}, {report.total} records)",
    ]
    if report.skipped:
        lines.append(f"skipped {len(report.skipped)} file(s) of unknown format:")
        lines.extend(f"  {report.root}/{p}" for p in report.skipped[:50])
        if len(report.skipped) > 50:
            lines.append(f"  ... and {len(report.skipped) - 50} more")
    errors = len(report.errors)
    lines.append(f"problems: {len(report.problems)} ({errors} errors, {len(report.problems) - errors} warnings)")
    lines += [f"  {line}" for line in problem_lines(report, SHOWN_PROBLEMS)]
    if len(report.problems) > SHOWN_PROBLEMS:
        lines.append(f"  ... and {len(report.problems) - SHOWN_PROBLEMS} more (--problems-file FILE writes them all)")
    return lines


def problem_lines(report, limit: int | None = None) -> list[str]:
    """The problems of a collect (the first ``limit``), as the summary prints them and --problems-file writes them."""
    return [f"{report.root}/{p}" for p in report.problems[:limit]]
