"""Comparison tables declared by report specs (pure: facts in, table values out).

A table is rows (model configurations) x columns (system + framework + flags); each cell is the
one record that matches both, shown as its median with a delta % against the baseline cell.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from .aggregate import Undefined, delta_pct, spreads_overlap
from .facts import best, group, matches, select, sort_key
from .spec import Column, ReportSpec


@dataclass
class Cell:
    """One table cell: the chosen record's numbers (or its failure), and the comparison."""

    fact: dict | None  # the chosen fact row, None when nothing matched (missing)
    delta: float | Undefined | None = None  # None: this is the baseline cell or there is no baseline
    tone: str = ""  # better, worse, noise, base
    high_cv: bool = False

    @property
    def status(self) -> str:
        return self.fact["status"] if self.fact else "missing"


@dataclass
class Table:
    spec: ReportSpec
    row_fields: list[str]
    columns: list[str]
    rows: list[tuple[tuple, list[Cell]]] = field(default_factory=list)
    unit: str = ""
    cv_threshold: float = 0.05

    @property
    def failed(self) -> int:
        return sum(c.fact is not None and c.status != "ok" for _, cells in self.rows for c in cells)

    @property
    def noisy(self) -> int:
        return sum(c.high_cv for _, cells in self.rows for c in cells)


def tone_of(cell_fact: dict, base_fact: dict, delta: float) -> str:
    """better / worse by the delta's sign; noise when the two run spreads overlap."""
    if spreads_overlap((cell_fact["min"], cell_fact["max"]), (base_fact["min"], base_fact["max"])):
        return "noise"
    return "better" if delta > 0 else "worse" if delta < 0 else "noise"


def compare(base_fact: dict | None, cell_fact: dict | None) -> tuple[float | Undefined, str]:
    """Delta % of a cell against its baseline cell, and the tone to colour it by."""
    if cell_fact is None or cell_fact["status"] != "ok":
        return Undefined("no value"), ""
    if base_fact is None:
        return Undefined("no baseline measured"), ""
    if base_fact["status"] != "ok":
        return Undefined(f"baseline failed ({base_fact['status']})"), ""
    delta = delta_pct(cell_fact["value"], base_fact["value"], cell_fact["direction"])
    if isinstance(delta, Undefined):
        return delta, ""
    return delta, tone_of(cell_fact, base_fact, delta)


def _columns(spec: ReportSpec, rows: list[dict]) -> list[Column]:
    """Declared columns, or one per distinct combination of the named fields."""
    if spec.columns and isinstance(spec.columns[0], Column):
        return list(spec.columns)
    names = list(spec.columns)
    combos = set(group(rows, names))
    out = []
    for combo in sorted(combos, key=lambda c: tuple(sort_key(v) for v in c)):
        label = " + ".join(str(v) for v in combo if v is not None) or "all"
        out.append(Column(label=label, match=dict(zip(names, combo, strict=True))))
    return out


def build(spec: ReportSpec, rows: list[dict], cv_threshold: float = 0.05) -> Table:
    """The comparison table of ``spec`` over the fact rows ``rows``."""
    rows = select(rows, spec.where)
    columns = _columns(spec, rows)
    threshold = spec.cv_threshold or cv_threshold
    table = Table(spec=spec, row_fields=list(spec.rows), columns=[c.label for c in columns], cv_threshold=threshold)
    if not rows:
        return table
    table.unit = ", ".join(sorted({r["unit"] for r in rows if r["unit"]}))
    per_column = [group(select(rows, c.match), spec.rows) for c in columns]
    row_keys = sorted(set().union(*per_column), key=lambda k: tuple(map(sort_key, k)))
    grid = {key: [best(p.get(key, [])) for p in per_column] for key in row_keys}
    base = spec.baseline
    base_col = table.columns.index(base.column) if base and base.column in table.columns else None
    for key in row_keys:
        base_key = _base_row(spec, grid, key) if base and base.row is not None else key
        cells = []
        for j, cell_fact in enumerate(grid[key]):
            cell = Cell(cell_fact)
            if cell_fact and cell_fact["status"] == "ok" and cell_fact["cv"] is not None:
                cell.high_cv = cell_fact["cv"] > threshold
            if base is not None:
                bj = j if base.row is not None else base_col
                if (base_key, bj) == (key, j):
                    cell.tone = "base"
                else:
                    base_fact = grid[base_key][bj] if base_key is not None and bj is not None else None
                    cell.delta, cell.tone = compare(base_fact, cell_fact)
            cells.append(cell)
        table.rows.append((key, cells))
    return table


def _base_row(spec: ReportSpec, grid: dict, key: tuple) -> tuple | None:
    """The key of the baseline row of row ``key``: the same row with the spec's fields replaced."""
    wanted = dict(zip(spec.rows, key, strict=True))
    wanted.update(spec.baseline.row)
    target = [wanted[f] for f in spec.rows]
    return next((k for k in grid if all(matches(v, w) for v, w in zip(k, target, strict=True))), None)


def to_frame(table: Table) -> pd.DataFrame:
    """The table in long form (one line per cell) for downloads."""
    lines = []
    for key, cells in table.rows:
        for label, cell in zip(table.columns, cells, strict=True):
            f = cell.fact or {}
            line = dict(zip(table.row_fields, key, strict=True))
            delta = cell.delta if isinstance(cell.delta, float) else None
            line.update(
                column=label,
                status=cell.status,
                value=f.get("value"),
                unit=f.get("unit"),
                delta_pct=None if delta is None else round(delta, 4),
                within_noise=cell.tone == "noise",
                runs=f.get("runs"),
                ok_runs=f.get("count"),
                cv=f.get("cv"),
                min=f.get("min"),
                max=f.get("max"),
                record=f.get("id"),
            )
            lines.append(line)
    return pd.DataFrame(lines)
