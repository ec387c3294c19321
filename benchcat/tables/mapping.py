"""The answers file: what the user says about headers, columns and cells the grammar could not read.

``catalog import`` prints its questions as a skeleton of this file; fill in the nulls, re-run
with ``--mapping``. Every answer is a mapping of fields (see :mod:`benchcat.fields`); ``{}``
means "this word says nothing, ignore it".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..formats.spec import SpecError, _where


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ColumnAnswer(_Strict):
    """What a column is: a row field (``field: model``) with optional value translations."""

    field: str | None = Field(None, description="Row field this column holds, e.g. model, batch_size.")
    values: dict[str, Any] = Field(default_factory=dict, description="Cell text -> value of that field.")
    fields: dict[str, Any] = Field(default_factory=dict, description="A measurement column: the fields it means.")
    unit: str | None = Field(None, description="A measurement column: its unit.")
    ignore: bool = Field(False, description="The column holds nothing to import.")


class Mapping(_Strict):
    defaults: dict[str, Any] = Field(default_factory=dict, description="Fields (and 'unit') for every table.")
    tables: dict[str, dict[str, Any]] = Field(default_factory=dict, description="table-N -> fields (and 'unit').")
    tokens: dict[str, dict[str, Any] | None] = Field(default_factory=dict, description="Header word -> fields.")
    columns: dict[str, ColumnAnswer | None] = Field(default_factory=dict, description="Column header -> answer.")
    cells: dict[str, dict[str, Any] | None] = Field(
        default_factory=dict, description="'<column>: <cell text>' -> fields, or {value: N} / {status: oom}."
    )

    def token(self, word: str) -> dict[str, Any] | None:
        for key, answer in self.tokens.items():
            if key.lower() == word.lower():
                return answer
        return None


def load_mapping(path: str | Path | None) -> Mapping:
    if path is None:
        return Mapping()
    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except OSError as exc:
        raise SpecError(f"{path}: cannot read: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise SpecError(f"{path}: invalid YAML: {exc}") from exc
    try:
        return Mapping.model_validate(doc)
    except ValidationError as exc:
        lines = [f"{path}: {_where(e['loc'])}: {e['msg']}" for e in exc.errors()]
        raise SpecError("\n".join(lines)) from None
