"""Redaction applied to the catalog before any page is written (sites go to vendors and other teams).

Settings (``redact:`` in benchcat.yml)::

    fields: [system.host, runs.source.root]   # dotted paths into a record: every value is replaced
    values: [secret-cluster-7]                # literal strings replaced wherever they appear
    patterns: ['/home/[^/ ]+']                # regular expressions replaced wherever they match
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .schema import Record

MARK = "[redacted]"


@dataclass
class Redactor:
    fields: list[str] = field(default_factory=list)
    values: list[str] = field(default_factory=list)
    patterns: list[str] = field(default_factory=list)

    @classmethod
    def from_settings(cls, settings: dict | None) -> Redactor:
        settings = settings or {}
        unknown = sorted(set(settings) - {"fields", "values", "patterns"})
        if unknown:
            raise ValueError(f"redact: unknown key(s) {', '.join(unknown)}; valid: fields, values, patterns")
        return cls(
            [str(f) for f in settings.get("fields") or []],
            [str(v) for v in settings.get("values") or [] if str(v)],
            [str(p) for p in settings.get("patterns") or []],
        )

    def __bool__(self) -> bool:
        return bool(self.fields or self.values or self.patterns)

    def text(self, value: str) -> str:
        for literal in sorted(self.values, key=len, reverse=True):
            value = value.replace(literal, MARK)
        for pattern in self.patterns:
            value = re.sub(pattern, MARK, value)
        return value

    def _hits(self, text: str) -> bool:
        return any(v in text for v in self.values) or any(re.search(p, text) for p in self.patterns)

    def deep(self, value):
        """Every string inside ``value`` (dicts, lists) with values and patterns replaced."""
        if not (self.values or self.patterns):
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.deep(k): self.deep(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.deep(v) for v in value]
        return value

    def record(self, record: Record) -> Record:
        if not self:
            return record
        fields = [path for path in self.fields if _present(record, path.split("."))]
        if not fields and not ((self.values or self.patterns) and self._hits(record.model_dump_json())):
            return record  # the common case: nothing to redact, checked without rebuilding the record
        doc = record.model_dump(mode="json")
        for path in fields:
            _blank(doc, path.split("."))
        return Record.model_validate(self.deep(doc))


def _present(node, parts: list[str]) -> bool:
    """Whether a dotted path holds any value in a record (lists of runs are walked)."""
    if isinstance(node, list):
        return any(_present(item, parts) for item in node)
    value = node.get(parts[0]) if isinstance(node, dict) else getattr(node, parts[0], None)
    if len(parts) == 1 or value is None:
        return bool(value) if isinstance(value, dict) else value is not None
    return _present(value, parts[1:])


def _blank(node, parts: list[str]) -> None:
    """Replace the value at a dotted path (lists are walked) by the mark; dicts lose their values."""
    if isinstance(node, list):
        for item in node:
            _blank(item, parts)
        return
    if not isinstance(node, dict) or parts[0] not in node:
        return
    if len(parts) > 1:
        _blank(node[parts[0]], parts[1:])
        return
    current = node[parts[0]]
    if isinstance(current, str):
        node[parts[0]] = MARK
    elif isinstance(current, dict):
        node[parts[0]] = {k: MARK for k in current}
