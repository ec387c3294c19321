"""``catalog import``: a markdown file of result tables -> runs in the catalog, with an accounting.

Runs keep the table file as their provenance root, so importing the same file again replaces
exactly the runs it gave before (an unchanged file changes nothing).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from collectors.base import Problem

from .. import store, yamlio
from ..collect import apply, decode, root_label
from ..merge import observation_dict
from .interpret import BUCKETS, Account, Question, interpret
from .mapping import load_mapping


@dataclass
class ImportReport:
    root: str
    accounts: list[Account] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    revision: int = 0
    total: int = 0
    written: list[str] = field(default_factory=list)
    mapping: str | None = None


def import_tables(
    path: str | os.PathLike,
    catalog_dir: str | os.PathLike = "catalog",
    *,
    mapping: str | os.PathLike | None = None,
    wait: float = 0,
    dry_run: bool = False,
) -> ImportReport:
    """Import every table in the markdown file at ``path`` into the catalog at ``catalog_dir``."""
    table_path, catalog_path = Path(path), Path(catalog_dir)
    beside = table_path.with_name(f"{table_path.stem}.answers.yaml")
    if mapping is None and beside.is_file():
        mapping = beside
    answers = load_mapping(mapping)
    try:
        data = table_path.read_bytes()
    except OSError as exc:
        raise FileNotFoundError(f"{path}: cannot read: {exc.strerror}") from exc
    text, problems = decode(data, table_path.name)
    label = root_label(table_path, catalog_path)
    found = interpret(text, answers, label, hashlib.sha256(data).hexdigest())
    report = ImportReport(label, found.accounts, found.questions, problems + found.problems)
    report.mapping = None if mapping is None else str(mapping)
    observations = [observation_dict(obs) for obs in found.observations]
    for obs in observations:
        obs["run"]["source"]["root"] = label
    held = store.acquire(catalog_path, wait)
    try:
        store.recover(catalog_path)
        cat = store.load(catalog_path)
        apply(cat, observations, label, report, dry_run)
    finally:
        held.release()
    report.problems.sort(key=lambda p: (p.line or 0, p.message))
    return report


def accounting_lines(report: ImportReport) -> list[str]:
    """One line per table and a total: every measurement cell in exactly one bucket."""
    lines = []
    total = {b: 0 for b in BUCKETS}
    for a in report.accounts:
        parts = ", ".join(f"{a.counts[b]} {b}" for b in BUCKETS)
        extra = f"; {a.derived} derived checked" if a.derived else ""
        extra += f"; {a.blank_rows} blank rows" if a.blank_rows else ""
        shape = f"line {a.line}, {a.rows} rows x {a.columns} columns"
        lines.append(f"  {a.table} ({shape}): {a.cells} cells: {parts}{extra}")
        if a.context:
            lines.append("    from the text above it: " + ", ".join(f"{k}={v}" for k, v in sorted(a.context.items())))
        for b in BUCKETS:
            total[b] += a.counts[b]
    cells = sum(total.values())
    lines.insert(0, f"{len(report.accounts)} tables, {cells} measurement cells: "
                 + ", ".join(f"{total[b]} {b}" for b in BUCKETS))  # fmt: skip
    return lines


def mapping_skeleton(questions: list[Question], source: str) -> str:
    """The open questions as a mapping file to fill in: every answer null, the reason in a comment."""
    out = [f"# Answers for {source}: replace each null, then re-run with --mapping THIS_FILE.\n"]
    for section in ("defaults", "tables", "columns", "tokens", "cells"):
        asked = [q for q in questions if q.section == section]
        if not asked:
            continue
        out.append(f"{section}:\n")
        for q in asked:
            if q.sub:
                out.append(f"  {yamlio.scalar(q.key)}:\n    {q.sub}: null  # {q.where}: {q.hint}\n")
            else:
                out.append(f"  {yamlio.scalar(q.key)}: null  # {q.where}: {q.hint}\n")
    return "".join(out)


def report_lines(report: ImportReport) -> list[str]:
    lines = [f"imported {report.root}" + (f" with answers from {report.mapping}" if report.mapping else "")]
    lines += accounting_lines(report)
    lines.append(
        f"records: {len(report.added)} added, {len(report.changed)} changed, {report.unchanged} unchanged, "
        f"{len(report.removed)} removed (catalog revision {report.revision}, {report.total} records)"
    )
    errors = sum(1 for p in report.problems if p.level == "error")
    lines.append(f"problems: {len(report.problems)} ({errors} errors, {len(report.problems) - errors} warnings)")
    lines += [f"  {p}" for p in report.problems]
    if report.questions:
        lines.append(f"questions: {len(report.questions)} unanswered; the cells they hold back are not imported.")
        lines.append("Answer them in a mapping file (skeleton below) and re-run with --mapping FILE:")
        lines += mapping_skeleton(report.questions, report.root).rstrip("\n").split("\n")
    return lines
