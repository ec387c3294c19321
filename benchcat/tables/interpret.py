"""Tables + answers -> observations, with every measurement cell accounted for (pure: no I/O).

Each measurement cell ends in exactly one bucket: ``imported`` (a run with a value),
``failed`` (a failed run: OOM, seg fault, error), ``empty``, ``duplicate`` (the same
configuration and figure already given by an earlier table), or ``unanswered`` (a question
about its header, row, unit or identity is still open). Derived cells (speedup columns) are
recomputed and checked, never stored.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from collectors.base import Observation, Problem

from .. import fields
from ..formats.spec import unit_factor
from ..schema import Provenance, Run, record_id
from . import grammar
from .mapping import Mapping
from .markdown import Table, find_tables

COLLECTOR, VERSION = "table-import", 1
BUCKETS = ("imported", "failed", "empty", "duplicate", "unanswered")
_INT_FIELDS = {"batch_size", "seq_len", "grad_accum", "nodes", "devices_per_node", "gpus", "accelerator_count"}


@dataclass(frozen=True)
class Question:
    """Something only the user can say; ``key`` is where the answer goes in the mapping file."""

    section: str
    key: str
    where: str
    hint: str
    sub: str | None = None


@dataclass
class Account:
    table: str
    line: int
    columns: int
    rows: int
    counts: Counter = field(default_factory=Counter)
    derived: int = 0
    blank_rows: int = 0
    context: dict = field(default_factory=dict)  # facts read from the prose above, carried forward

    @property
    def cells(self) -> int:
        return sum(self.counts[b] for b in BUCKETS)


@dataclass
class Interpretation:
    observations: list[Observation] = field(default_factory=list)
    accounts: list[Account] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def ask(self, q: Question) -> None:
        if all((q.section, q.key, q.sub) != (o.section, o.key, o.sub) for o in self.questions):
            self.questions.append(q)


def metric_for(unit: str) -> tuple[str, float] | None:
    for name in ("throughput", "step_time"):
        try:
            return name, unit_factor(name, unit)
        except ValueError:
            continue
    return None


def _header_word(word: str) -> bool:
    return grammar.column_kind(word) != "measure" or grammar.unit_of(word) is not None


@dataclass
class _Column:
    kind: str  # row, label, env, derived, measure, ignore
    head: str
    target: str | None = None  # a row column: the field it holds
    values: dict = field(default_factory=dict)
    means: dict = field(default_factory=dict)  # a measurement column: the fields its header states
    unit: str | None = None
    open: bool = False  # an unanswered question makes the column unusable
    unknown: bool = False  # the whole column is the question: its cells are not asked about


class Interpreter:
    """One document's tables, read with one mapping."""

    def __init__(self, mapping: Mapping, path: str, sha256: str):
        self.mapping, self.path, self.sha256 = mapping, path, sha256
        self.out = Interpretation()
        self.seen: dict[str, tuple[str, str]] = {}  # record id -> (figure, where) of its first cell
        self.scaling: list[tuple[Observation, float, str, int]] = []
        self.headers: list[str] = []

    def problem(self, line: int | None, message: str, level: str = "warning") -> None:
        self.out.problems.append(Problem(self.path, line, message, level))  # type: ignore[arg-type]

    def run(self, text: str) -> Interpretation:
        facts: dict[str, Any] = {}
        for table in find_tables(text, _header_word):
            facts.update(grammar.context_facts([t for _, t in table.context]))
            self.table(table, facts)
        self.check_scaling()
        return self.out

    # ---- columns --------------------------------------------------------------------------

    def column(self, table: Table, col: int, head: str) -> _Column:
        where = f"{table.name} line {table.header_line} column {head!r}"
        answer = self.mapping.columns.get(head)
        if answer is not None:
            if answer.ignore:
                return _Column("ignore", head)
            if answer.field:
                return _Column("row", head, fields.canonical(answer.field) or answer.field, answer.values)
            return _Column("measure", head, means=dict(answer.fields), unit=answer.unit, values=answer.values)
        kind = grammar.column_kind(head)
        if kind == "row":
            return _Column("row", head, grammar.row_field(head))
        if kind != "measure":
            return _Column(kind, head)
        parsed = grammar.parse_header(head)
        column = _Column("measure", head, means=dict(parsed.fields), unit=parsed.unit)
        if not parsed.fields and parsed.unit is None:
            column.open = column.unknown = True
            self.out.ask(Question("columns", head, where, "{field: <row field>} or {fields: {...}, unit: ...}"))
            return column
        for word in parsed.unknown:
            if not self._word(word, column.means, where):
                column.open = True
        return column

    def _word(self, word: str, into: dict, where: str) -> bool:
        """Resolve a word the grammar does not know through the mapping; ask when unanswered."""
        answer = self.mapping.token(word)
        if answer is None:
            self.out.ask(Question("tokens", word, where, "{accelerator: ..., vendor: ...}, {flags.impl: ...} or {}"))
            return False
        into.update(answer)
        return True

    # ---- rows ---------------------------------------------------------------------------

    def row_fields(self, table: Table, line: int, cells: list[str], columns: list[_Column]) -> dict | None:
        """The fields a row's own cells state, or None when one of them is an open question."""
        row: dict[str, Any] = {}
        ok = True
        for column, raw in zip(columns, cells, strict=True):
            text = grammar.strip_emphasis(raw)
            where = f"{table.name} line {line} column {column.head!r}"
            if not text or column.kind not in ("row", "label", "env"):
                continue
            answer = self.mapping.cells.get(f"{column.head}: {text}")
            if answer is not None:
                row.update(answer)
            elif column.kind == "label":
                for word in grammar.split_words(text):
                    known = grammar.token_fields(word)
                    if known is not None:
                        row.update(known)
                    elif not self._word(word, row, where):
                        ok = False
            elif column.kind == "env":
                row.update(grammar.env_fields(text))
            elif text in column.values:
                row[column.target] = column.values[text]
            elif column.target in _INT_FIELDS and not text.isdigit():
                ok = False
                self.out.ask(Question("cells", f"{column.head}: {text}", where, f"not a number; e.g. {{{column.target}: N}}"))  # noqa: E501
            else:
                row[column.target] = int(text) if column.target in _INT_FIELDS else text
        return row if ok else None

    def table(self, table: Table, facts: dict[str, Any]) -> None:
        account = Account(table.name, table.header_line, len(table.header), len(table.rows), context=dict(facts))
        self.out.accounts.append(account)
        base = {**self.mapping.defaults, **facts, **self.mapping.tables.get(table.name, {})}
        unit = base.pop("unit", None)
        columns = [self.column(table, col, head) for col, head in enumerate(table.header)]
        self.headers = table.header
        measures = [i for i, c in enumerate(columns) if c.kind == "measure"]
        for i in measures:
            columns[i].unit = columns[i].unit or unit
            if columns[i].unit is not None and metric_for(columns[i].unit) is None:
                columns[i].open = True
                self.problem(table.header_line, f"{table.name} column {columns[i].head!r}: unit "
                             f"{columns[i].unit!r} is neither a throughput nor a time unit", "error")  # fmt: skip
            if columns[i].unit is None and not columns[i].open:
                columns[i].open = True
                where = f"{table.name} line {table.header_line} column {columns[i].head!r}"
                self.out.ask(Question("tables", table.name, where, "the unit, e.g. samples/s", sub="unit"))
        baseline_rows: dict[int, float] = {}
        for line, cells in table.rows:
            if not any(c.strip() for c in cells):
                account.blank_rows += 1
                continue
            row = self.row_fields(table, line, cells, columns)
            values: dict[int, grammar.Cell] = {}
            for i in measures:
                cell = self.cell(table, line, columns[i], cells[i])
                values[i] = cell
                bucket = self.place(table, line, i, columns[i], cell, base, row, values)
                account.counts[bucket] += 1
            for i, column in enumerate(columns):
                if column.kind == "derived" and cells[i].strip():
                    account.derived += 1
                    self.check_derived(table, line, column, cells[i], values, row or {}, baseline_rows)

    # ---- cells ----------------------------------------------------------------------------

    def cell(self, table: Table, line: int, column: _Column, raw: str) -> grammar.Cell:
        text = grammar.strip_emphasis(raw)
        answer = self.mapping.cells.get(f"{column.head}: {text}") or column.values.get(text)
        if isinstance(answer, dict):
            if answer.get("status"):
                return grammar.Cell("failed", raw, status=str(answer["status"]))
            if answer.get("value") is not None:
                return grammar.Cell("value", raw, float(answer["value"]))
        cell = grammar.parse_cell(raw)
        if cell.kind == "unknown" and not column.unknown:  # an unknown column is asked about once, not per cell
            where = f"{table.name} line {line} column {column.head!r}"
            hint = "{value: N} or {status: oom|error|segfault}"
            self.out.ask(Question("cells", f"{column.head}: {text}", where, hint))
        return cell

    def place(self, table, line, col, column, cell, base, row, values) -> str:
        """Turn one measurement cell into a run (or not); returns its accounting bucket."""
        if cell.kind == "empty":
            return "empty"
        if cell.kind == "unknown" or column.open or row is None:
            return "unanswered"
        flat = {**base, **column.means, **row}
        framework = fields.normalise("framework", flat.get("framework"))
        for key in [k for k in flat if k.startswith("other.") and fields.FRAMEWORKS.get(k[6:]) == framework]:
            flat.setdefault("framework_version", flat.pop(key))  # 'mindspore=1.7' on a MindSpore record
        missing = [n for n in ("model", "framework") if not flat.get(n)]
        for name in missing:
            hint = f"the {name} of every table (or under tables: per table)"
            self.out.ask(Question("defaults", name, f"{table.name} line {line}", hint))
        if missing:
            return "unanswered"
        try:
            benchmark, config, system, software = fields.build(flat)
        except ValueError as exc:
            self.problem(line, f"{table.name} column {column.head!r}: {exc}", "error")
            return "unanswered"
        if cell.efficiency is not None and config.devices == 1:
            where = f"{table.name} line {line} column {column.head!r}"
            self.out.ask(Question("tables", table.name, where, "cells state a scaling efficiency: devices?", "gpus"))
            return "unanswered"
        metric, factor = metric_for(column.unit)  # type: ignore[misc]
        rid = record_id(benchmark, config, system, software)
        figure = f"{cell.status or ''}{cell.value}"
        here = f"{table.name} line {line}"
        if rid in self.seen:
            first_figure, first_where = self.seen[rid]
            if first_figure == figure:
                return "duplicate"
            self.problem(line, f"{here} column {column.head!r}: {cell.text.strip()!r} differs from the same "
                         f"configuration at {first_where}; both kept as runs")  # fmt: skip
        else:
            self.seen[rid] = (figure, here)
        notes = self.notes(here, column, cell, values, col, line)
        source = Provenance(root="", path=table.name, sha256=self.sha256, collector=COLLECTOR,
                            collector_version=VERSION, lines=str(line))  # fmt: skip
        run_id = f"line{line}-col{col + 1}"
        if cell.kind == "failed":
            reason = f"{cell.status} (table cell {cell.text.strip()!r})"
            run = Run(run_id=run_id, status=cell.status, method="table", reason=reason, excerpt=cell.link,
                      source=source)  # fmt: skip
        else:
            run_values = {metric: cell.value * factor}
            if cell.compile_time is not None:
                run_values["compile_time"] = cell.compile_time
            run = Run(run_id=run_id, values=run_values, method="table", excerpt=cell.link, source=source)
        obs = Observation(benchmark=benchmark, config=config, system=system, software=software, run=run,
                          notes=notes, headline=metric)  # fmt: skip
        self.out.observations.append(obs)
        if cell.efficiency is not None:
            self.scaling.append((obs, cell.efficiency, here, line))
        return "failed" if cell.kind == "failed" else "imported"

    def notes(self, here, column, cell, values, col, line) -> list[str]:
        notes = []
        if cell.marks:
            notes.append(f"{here} column {column.head!r}: footnote mark {cell.marks!r} on {cell.text.strip()!r}")
        if cell.delta is not None:
            base_col = next((i for i, c in values.items() if c.kind == "value" and c.delta is None and i != col), None)
            if base_col is None:
                notes.append(f"{here} column {column.head!r}: stated {cell.delta:+g}% (no baseline in the row)")
            else:
                base = values[base_col].value
                recomputed = (cell.value / base - 1) * 100 if base else float("nan")
                against = self.headers[base_col]
                notes.append(f"{here} column {column.head!r}: stated {cell.delta:+g}% vs {against!r} ({base:g})")
                if not abs(recomputed - cell.delta) <= 1.0:
                    self.problem(line, f"{here} column {column.head!r}: stated delta {cell.delta:+g}% but "
                                 f"{cell.value:g} vs {base:g} is {recomputed:+.1f}%")  # fmt: skip
        if cell.efficiency is not None:
            notes.append(f"{here} column {column.head!r}: stated scaling efficiency {cell.efficiency:g}")
        return notes

    def check_derived(self, table, line, column, raw, values, row, baseline_rows) -> None:
        """A speedup cell: recomputed from the row's figure over the 1-device row's; warn on mismatch."""
        stated = grammar.parse_cell(raw)
        first = next((c for c in values.values() if c.kind == "value"), None)
        devices = int(row.get("gpus") or int(row.get("nodes") or 1) * int(row.get("devices_per_node") or 1))
        if first is None or stated.value is None:
            return
        if devices == 1:
            baseline_rows[0] = first.value
        base = baseline_rows.get(0)
        if base is None:
            self.problem(line, f"{table.name} line {line} column {column.head!r}: no 1-device row to check {raw!r}")
            return
        recomputed = first.value / base
        if abs(recomputed - stated.value) > max(0.01, 0.01 * stated.value):
            self.problem(line, f"{table.name} line {line} column {column.head!r}: stated {stated.value:g} but "
                         f"{first.value:g} / {base:g} = {recomputed:.2f}")  # fmt: skip

    def check_scaling(self) -> None:
        """Stated scaling efficiencies against the same configuration on one device, from any table."""
        single: dict[str, float] = {}
        for obs in self.out.observations:
            if obs.config.devices == 1 and obs.run.status == "ok":
                single.setdefault(record_id(obs.benchmark, obs.config, obs.system, obs.software),
                                  obs.run.values.get(obs.headline))  # fmt: skip
        for obs, stated, here, line in self.scaling:
            one = obs.config.model_copy(update={"nodes": 1, "devices_per_node": 1})
            base = single.get(record_id(obs.benchmark, one, obs.system, obs.software))
            if not base:
                obs.notes.append(f"{here}: scaling efficiency {stated:g} not checked (no 1-device figure)")
                continue
            recomputed = obs.run.values[obs.headline] / (obs.config.devices * base)
            if abs(recomputed - stated) > 0.015:
                self.problem(line, f"{here}: stated scaling efficiency {stated:g} but "
                             f"{obs.run.values[obs.headline]:g} / ({obs.config.devices} x {base:g}) = {recomputed:.2f}")  # fmt: skip # noqa: E501


def interpret(text: str, mapping: Mapping, path: str, sha256: str) -> Interpretation:
    """Every table in ``text`` read with ``mapping``: observations, accounting, questions, problems."""
    return Interpreter(mapping, path, sha256).run(text)
