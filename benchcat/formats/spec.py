"""The format spec: which files, what their paths say, and how to read their numbers.

A spec is strict (unknown keys are errors) and every error names the key at fault, e.g.
``spec.yaml: metrics[0].regex: missing named group 'value'``. See site_src/user-formats.md.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .. import fields
from ..schema import METRICS

TIME_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "sec": 1.0, "min": 60.0, "h": 3600.0}
RATE_UNITS = {"samples/s", "samples/sec", "images/s", "images/sec", "img/s", "img/sec", "examples/s",
              "examples/sec", "example/sec", "sentences/s", "sentences/sec", "sequences/s", "sequences/sec",
              "seq/s"}  # fmt: skip
_PART = re.compile(r"\{([A-Za-z_][A-Za-z0-9_.]*)\}")


class SpecError(ValueError):
    """A spec that cannot be used, with the file and the key at fault."""


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _regex(pattern: str, group: str = "value") -> str:
    try:
        compiled = re.compile(pattern, re.M)
    except re.error as exc:
        raise ValueError(f"not a valid regular expression: {exc}") from exc
    if group not in compiled.groupindex:
        raise ValueError(f"missing named group '{group}' (write (?P<{group}>...))")
    return pattern


def _field(name: str) -> str:
    if fields.canonical(name) is None:
        raise ValueError(f"unknown field {name!r}; valid: {fields.valid_names()}")
    return name


def unit_factor(metric: str, unit: str) -> float:
    """Multiplier from ``unit`` to the catalog unit of ``metric``; ValueError when incompatible."""
    canon = METRICS[metric][0]
    if unit == canon:
        return 1.0
    if canon == "samples/s" and unit in RATE_UNITS:
        return 1.0
    if canon in TIME_UNITS and unit in TIME_UNITS:
        return TIME_UNITS[unit] / TIME_UNITS[canon]
    raise ValueError(f"unit {unit!r} cannot be converted to {canon} (the unit of {metric})")


class MetricOverride(_Spec):
    """Per-model changes to a metric: only the keys given replace the metric's own."""

    regex: str | None = None
    take: Literal["first", "last", "mean", "summary"] | None = None
    skip: int | None = Field(None, ge=0)
    window: int | None = Field(None, gt=0)

    _check = field_validator("regex")(lambda v: v if v is None else _regex(v))


class MetricSpec(_Spec):
    """One number read from the log with a regex whose group ``value`` holds it."""

    name: str = Field("throughput", description="A metric the catalog knows: throughput, step_time, ...")
    regex: str = Field(description="Regex with a named group 'value'; matched per line (re.M).")
    unit: str | None = Field(None, description="Unit the log prints; converted to the catalog's.")
    take: Literal["first", "last", "mean", "summary"] = Field(
        "last", description="first or last match; mean of the matches after 'skip' (at most 'window'); "
        "summary: exactly one match expected (a final summary line).",
    )
    skip: int = Field(0, ge=0, description="With take: mean, matches dropped first (warm-up).")
    window: int | None = Field(None, gt=0, description="With take: mean, at most this many matches.")
    models: dict[str, MetricOverride] = Field(default_factory=dict, description="Per-model overrides.")

    _check = field_validator("regex")(lambda v: _regex(v))

    @field_validator("name")
    @classmethod
    def _known(cls, v: str) -> str:
        if v not in METRICS:
            raise ValueError(f"unknown metric {v!r}; valid: {', '.join(sorted(METRICS))}")
        return v

    @model_validator(mode="after")
    def _unit(self) -> MetricSpec:
        if self.unit is not None:
            unit_factor(self.name, self.unit)
        return self

    def resolved(self, model: str | None) -> MetricSpec:
        """This metric with the overrides of ``model`` (matched case-insensitively) applied."""
        for key, override in self.models.items():
            if model is not None and fields.normalise("model", key) == model:
                changes = override.model_dump(exclude_none=True)
                return self.model_copy(update=changes)
        return self


class SidecarSpec(_Spec):
    """An environment file beside the log that fills system/software fields."""

    path: str = Field(description="Path relative to the log's folder; may use {parts} of the path pattern.")
    kind: Literal["keyvalue", "regex"] = Field("keyvalue", description="'key: value' lines, or regexes.")
    fields: dict[str, str] = Field(
        description="keyvalue: key in the file -> field. regex: field -> regex with a group 'value'."
    )

    @model_validator(mode="after")
    def _check(self) -> SidecarSpec:
        for key, value in self.fields.items():
            if self.kind == "keyvalue":
                _field(value)
            else:
                _field(key)
                _regex(value)
        return self


class FormatSpec(_Spec):
    """A user-declared log format."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$", description="Short name; the collector is spec:<name>.")
    description: str = Field("", description="One line naming the format.")
    files: str = Field("**/*", description="Glob of the logs, relative to the collected root.")
    exclude: list[str] = Field(default_factory=list, description="Globs of files that are not logs.")
    path: str | None = Field(None, description="Path pattern, e.g. {hardware}/{framework}_{model}/{run}.txt.")
    parts: dict[str, str] = Field(
        default_factory=dict, description="Path part -> regex it must match (default: shortest text without /)."
    )
    detect: str | None = Field(None, description="Regex that must occur near the start of a log.")
    run_id: str = Field("run", description="Path part that names the run; the file stem when absent.")
    values: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Field -> {as written: normalised value, or a dict of fields}."
    )
    log_fields: dict[str, str] = Field(default_factory=dict, description="Field -> regex with a group 'value'.")
    sidecars: list[SidecarSpec] = Field(default_factory=list)
    static: dict[str, Any] = Field(default_factory=dict, description="Fields neither path nor log says.")
    metrics: list[MetricSpec] = Field(min_length=1)
    headline: str = Field("throughput", description="Metric shown as the record's number.")

    @field_validator("detect")
    @classmethod
    def _detect(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                re.compile(v)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression: {exc}") from exc
        return v

    @field_validator("values", "static")
    @classmethod
    def _keys(cls, v: dict) -> dict:
        for key in v:
            _field(key)
        return v

    @field_validator("log_fields")
    @classmethod
    def _log_fields(cls, v: dict[str, str]) -> dict[str, str]:
        for key, pattern in v.items():
            _field(key)
            _regex(pattern)
        return v

    @field_validator("parts")
    @classmethod
    def _parts(cls, v: dict[str, str]) -> dict[str, str]:
        for name, pattern in v.items():
            try:
                if re.compile(pattern).groups:
                    raise ValueError(f"{name}: use (?:...) instead of capturing groups")
            except re.error as exc:
                raise ValueError(f"{name}: not a valid regular expression: {exc}") from exc
        return v

    @model_validator(mode="after")
    def _whole(self) -> FormatSpec:
        for part in _PART.findall(self.path or ""):
            if part != self.run_id and not part.startswith("_"):
                try:
                    _field(part)
                except ValueError as exc:
                    raise ValueError(f"path: {exc} (or name it in run_id, or start it with _ to ignore it)") from None
        if self.headline not in {m.name for m in self.metrics}:
            raise ValueError(f"headline: {self.headline!r} is not one of the metrics")
        return self

    def path_regex(self) -> re.Pattern | None:
        """The path pattern as a regex: each {part} one path component (or part of one)."""
        if self.path is None:
            return None
        out, pos = [], 0
        for m in _PART.finditer(self.path):
            out.append(re.escape(self.path[pos : m.start()]).replace(r"\*\*/", "(?:.*/)?"))
            out.append(f"(?P<{m.group(1).replace('.', '__')}>{self.parts.get(m.group(1), '[^/]+?')})")
            pos = m.end()
        out.append(re.escape(self.path[pos:]))
        return re.compile("".join(out))


def _where(loc: tuple) -> str:
    text = ""
    for item in loc:
        text += f"[{item}]" if isinstance(item, int) else (f".{item}" if text else str(item))
    return text


def parse_spec(doc: Any, origin: str) -> FormatSpec:
    """A spec from a parsed YAML document; SpecError names ``origin`` and the bad key."""
    if not isinstance(doc, dict):
        raise SpecError(f"{origin}: a format spec is a mapping (name:, files:, metrics:, ...)")
    try:
        return FormatSpec.model_validate(doc)
    except ValidationError as exc:
        lines = []
        for e in exc.errors():
            msg = e["msg"].removeprefix("Value error, ")
            if e["type"] == "extra_forbidden":
                msg = "unknown key"
            where = _where(e["loc"])
            lines.append(f"{origin}: {where}: {msg}" if where else f"{origin}: {msg}")
        raise SpecError("\n".join(lines)) from None


def load_spec(path: str | Path) -> FormatSpec:
    """Read and check one spec file."""
    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SpecError(f"{path}: cannot read: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise SpecError(f"{path}: invalid YAML: {exc}") from exc
    return parse_spec(doc, str(path))
