"""Report specs: small YAML files that declare comparison tables and vendor evaluations.

A comparison::

    title: BERT-base, Iluvatar vs V100
    where: {model: bert-base}                 # which records (fields of benchcat.facts)
    rows: [seq_len, batch_size, grad_accum]   # one row per distinct combination
    columns:                                  # field names (one column per combination) ...
      - {label: V100 + TF, match: {system: "*V100*", precision: fp32}}   # ... or labelled matches
    baseline: {column: V100 + TF}             # or {row: {grad_accum: 1}}

A vendor evaluation (``kind: vendor``) pairs records of side ``a`` and side ``b`` that agree
on ``match_on`` and compares ``b`` against ``a``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from . import yamlio
from .facts import FIELDS
from .schema import Strict, slug

DEFAULT_ROWS = ["model", "seq_len", "batch_size", "grad_accum", "devices"]
DEFAULT_COLUMNS = ["system", "framework", "precision", "compile_mode"]
DEFAULT_MATCH_ON = [
    "model", "task", "seq_len", "image_size", "framework", "precision", "batch_size", "grad_accum",
    "compile_mode", "nodes", "devices_per_node", "flags",
]  # fmt: skip


class Column(Strict):
    """One declared column: its heading and the fields a record must match to fill it."""

    label: str = Field(description="Column heading, e.g. 'V100 + TF + XLA + fp16'.")
    match: dict[str, Any] = Field(default_factory=dict, description="Field -> wanted value (globs, lists).")


class Baseline(Strict):
    """What deltas are computed against: a column of the same row, or a row of the same column."""

    column: str | None = Field(None, description="Label of the baseline column.")
    row: dict[str, Any] | None = Field(None, description="Row fields replaced to find the baseline row.")

    @model_validator(mode="after")
    def _one(self):
        if (self.column is None) == (self.row is None):
            raise ValueError("baseline needs exactly one of column or row")
        return self


class Side(Strict):
    label: str = Field(description="How the side is named on the page.")
    match: dict[str, Any] = Field(description="Field -> wanted value selecting this side's records.")


class ReportSpec(Strict):
    """One declared report page."""

    title: str
    kind: Literal["comparison", "vendor"] = "comparison"
    description: str = ""
    metric: str | None = Field(None, description="Metric to show; default: each record's headline.")
    where: dict[str, Any] = Field(default_factory=dict)
    rows: list[str] = Field(default_factory=lambda: list(DEFAULT_ROWS))
    columns: list[Column] | list[str] = Field(default_factory=lambda: list(DEFAULT_COLUMNS))
    baseline: Baseline | None = None
    cv_threshold: float | None = Field(None, gt=0, description="Flag cells above this CV (default: site's).")
    a: Side | None = None
    b: Side | None = None
    match_on: list[str] = Field(default_factory=lambda: list(DEFAULT_MATCH_ON))
    slug: str = ""

    @model_validator(mode="after")
    def _check(self):
        names = list(self.rows) + list(self.where) + list(self.match_on)
        for col in self.columns:
            names += list(col.match) if isinstance(col, Column) else [col]
        for side in (self.a, self.b):
            names += list(side.match) if side else []
        if self.baseline and self.baseline.row:
            names += list(self.baseline.row)
        unknown = sorted(set(names) - set(FIELDS))
        if unknown:
            raise ValueError(f"unknown field(s) {', '.join(unknown)}; valid: {', '.join(FIELDS)}")
        if self.baseline and self.baseline.row and set(self.baseline.row) - set(self.rows):
            raise ValueError(f"baseline row fields {sorted(set(self.baseline.row) - set(self.rows))} are not in rows")
        if self.kind == "vendor" and (self.a is None or self.b is None):
            raise ValueError("a vendor report needs sides a and b")
        labels = [c.label for c in self.columns if isinstance(c, Column)]
        if self.baseline and self.baseline.column and labels and self.baseline.column not in labels:
            raise ValueError(f"baseline column {self.baseline.column!r} is not one of {labels}")
        return self


class SpecError(Exception):
    """A report spec that cannot be read, with its file."""


def load_specs(folder: Path) -> list[ReportSpec]:
    """Every ``*.yaml`` / ``*.yml`` under ``folder``, sorted by file name; slug from the file name."""
    specs = []
    if not folder.is_dir():
        return specs
    seen: dict[str, Path] = {}
    for path in sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")]):
        try:
            doc = yamlio.loads(path.read_bytes()) or {}
            doc.setdefault("slug", slug(path.stem))
            spec = ReportSpec.model_validate(doc)
        except Exception as exc:
            raise SpecError(f"{path}: {exc}") from exc
        if spec.slug in seen:
            raise SpecError(f"{path}: report slug {spec.slug!r} already used by {seen[spec.slug]}")
        seen[spec.slug] = path
        specs.append(spec)
    return specs
