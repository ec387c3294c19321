"""A collector built from a format spec: path parts, sidecars and log regexes -> one run per file.

Fields come from four places, weakest first: the spec's static fields, the path (labels a
person typed: folder and file names), sidecar environment files, and the log itself. A later
source wins; where a label disagrees with what a sidecar or the log says, the log's value is
kept and the disagreement is reported as a warning.
"""

from __future__ import annotations

import hashlib
import json
import math
import posixpath
import re
from pathlib import Path
from typing import Any

from collectors.base import Collector, FileContext, LineIndex, Observation, ParseResult, excerpt, failure_in
from collectors.base import line_ranges as ranges

from .. import fields
from ..schema import Run
from .spec import _PART, FormatSpec, MetricSpec, SpecError, load_spec, parse_spec, unit_factor

_KEYVALUE = re.compile(r"^\s*([^:=#][^:=]*?)\s*[:=]\s*(.*?)\s*$")


def glob_regex(glob: str) -> re.Pattern:
    """A path glob where ``**/`` spans folders, ``*`` and ``?`` stay inside one."""
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out))


class SpecCollector(Collector):
    """One format spec as a collector; ``name`` is ``spec:<spec name>``."""

    version = 1

    def __init__(self, spec: FormatSpec):
        self.spec = spec
        self.name = f"spec:{spec.name}"
        self.description = spec.description or f"user format {spec.name}"
        blob = json.dumps(spec.model_dump(mode="json"), sort_keys=True)
        self.digest = hashlib.sha256(blob.encode()).hexdigest()[:12]
        self._files = glob_regex(spec.files)
        self._exclude = [glob_regex(g) for g in spec.exclude]
        self._path = spec.path_regex()
        self._detect = re.compile(spec.detect, re.M) if spec.detect else None

    def parts(self, path: str) -> dict[str, str] | None:
        """Named parts of the path pattern (dots restored), or None when the path does not fit."""
        if self._path is None:
            return {}
        m = self._path.fullmatch(path)
        return None if m is None else {k.replace("__", "."): v for k, v in m.groupdict().items()}

    def detect(self, head: str, path: str) -> bool:
        if not self._files.fullmatch(path) or any(g.fullmatch(path) for g in self._exclude):
            return False
        if self.parts(path) is None:
            return False
        return self._detect is None or self._detect.search(head) is not None

    def sidecars(self, path: str) -> list[str]:
        parts = self.parts(path) or {}
        parts.setdefault("stem", posixpath.splitext(posixpath.basename(path))[0])
        folder = posixpath.dirname(path)
        out = []
        for side in self.spec.sidecars:
            rel = _PART.sub(lambda m: parts.get(m.group(1), m.group(0)), side.path)
            out.append(posixpath.normpath(posixpath.join(folder, rel)))
        return out

    # ---- parsing -------------------------------------------------------------------------

    def _mapped(self, name: str, raw: Any) -> dict[str, Any]:
        """A raw value through the spec's value map: one field, or the fields a map entry names."""
        table = self.spec.values.get(name) or {}
        hit = table.get(raw) if raw in table else None
        if hit is None and isinstance(raw, str):
            hit = next((v for k, v in table.items() if str(k).lower() == raw.lower()), None)
        if isinstance(hit, dict):
            return dict(hit)
        return {name: raw if hit is None else hit}

    def _expand(self, raw: dict[str, Any], ctx: FileContext, problems: list, where: str) -> dict[str, Any]:
        flat: dict[str, Any] = {}
        for name, value in raw.items():
            flat.update(self._mapped(name, value))
        try:
            return fields.expand(flat)
        except ValueError as exc:
            problems.append(ctx.problem(None, f"{where}: {exc}"))
            return {}

    def _sidecar_fields(self, ctx: FileContext, problems: list) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for side, rel in zip(self.spec.sidecars, self.sidecars(ctx.path), strict=True):
            text = ctx.sidecars.get(rel)
            if text is None:
                problems.append(ctx.problem(None, f"sidecar {rel} not found; its fields stay unknown", "warning"))
                continue
            if side.kind == "keyvalue":
                wanted = {k.strip().lower(): v for k, v in side.fields.items()}
                for line in text.splitlines():
                    m = _KEYVALUE.match(line)
                    if m and m.group(1).lower() in wanted and m.group(2):
                        found[wanted[m.group(1).lower()]] = m.group(2)
            else:
                for name, pattern in side.fields.items():
                    m = re.search(pattern, text, re.M)
                    if m:
                        found[name] = m.group("value").strip()
        return found

    def _read_metric(self, metric: MetricSpec, text: str, index: LineIndex, ctx: FileContext, problems: list):
        """(value, lines used, matches kept) or None when the log has no usable match."""
        matches = []
        for m in re.finditer(metric.regex, text, re.M):
            line = index.line(m.start())
            try:
                value = float(m.group("value").replace(",", ""))
            except (TypeError, ValueError):
                problems.append(ctx.problem(line, f"{metric.name}: {m.group('value')!r} is not a number"))
                continue
            if not math.isfinite(value):
                problems.append(ctx.problem(line, f"{metric.name}: {m.group('value')} is not a finite number"))
                continue
            matches.append((value, line))
        if not matches:
            return None
        if metric.take == "first":
            kept = matches[:1]
        elif metric.take == "last":
            kept = matches[-1:]
        elif metric.take == "summary":
            if len(matches) > 1:
                lines = ", ".join(str(line) for _, line in matches)
                problems.append(ctx.problem(matches[-1][1], f"{metric.name}: summary line found {len(matches)} "
                                            f"times (lines {lines}); using the last", "warning"))  # fmt: skip
            kept = matches[-1:]
        else:
            kept = matches[metric.skip :]
            if metric.window:
                kept = kept[: metric.window]
            if not kept:
                problems.append(ctx.problem(matches[-1][1], f"{metric.name}: only {len(matches)} matches, "
                                            f"all inside the {metric.skip} skipped"))  # fmt: skip
                return None
        factor = unit_factor(metric.name, metric.unit) if metric.unit else 1.0
        value = sum(v for v, _ in kept) / len(kept) * factor
        return value, [line for _, line in kept], len(kept)

    def parse(self, text: str, ctx: FileContext) -> ParseResult:
        result = ParseResult()
        problems = result.problems
        parts = self.parts(ctx.path)
        if parts is None:
            problems.append(ctx.problem(None, f"path does not fit the pattern {self.spec.path!r}"))
            return result
        run_id = parts.pop(self.spec.run_id, None) or posixpath.splitext(posixpath.basename(ctx.path))[0]
        labels = self._expand({k: v for k, v in parts.items() if not k.startswith("_")}, ctx, problems, "path")
        index = LineIndex(text)
        told = self._expand(self._sidecar_fields(ctx, problems), ctx, problems, "sidecar")
        told_lines: dict[str, int] = {}
        log_raw = {}
        for name, pattern in self.spec.log_fields.items():
            m = re.search(pattern, text, re.M)
            if m:
                log_raw[name] = m.group("value").strip()
                told_lines[name] = index.line(m.start())
        logged = self._expand(log_raw, ctx, problems, "log")
        for name in list(told_lines):  # a mapped log field may set several fields; they share its line
            for key in self._expand({name: log_raw[name]}, ctx, [], "log"):
                told_lines.setdefault(key, told_lines[name])
        told.update(logged)
        flat = {**fields.expand(self.spec.static), **labels}
        for name, value in sorted(told.items()):
            if name in labels and not fields.agrees(name, labels[name], value):
                source = "the log" if name in logged else "the sidecar"
                problems.append(ctx.problem(told_lines.get(name), f"{name}: the path says {labels[name]!r} but "
                                            f"{source} says {value!r}; using {source}", "warning"))  # fmt: skip
            flat[name] = value
        try:
            ident = fields.build(flat)
        except ValueError as exc:
            problems.append(ctx.problem(None, str(exc)))
            return result
        model = ident[0].model
        values: dict[str, float] = {}
        lines: list[int] = []
        run_extra: dict[str, Any] = {}
        missing: list[str] = []
        for metric in self.spec.metrics:
            metric = metric.resolved(model)
            got = self._read_metric(metric, text, index, ctx, problems)
            if got is None:
                missing.append(metric.name)
                continue
            values[metric.name], used, count = got
            lines.extend(used)
            if metric.name == self.spec.headline:
                run_extra = {
                    "method": "summary" if metric.take == "summary" else "log_speed",
                    "warmup_skipped": metric.skip if metric.take == "mean" else None,
                    "iterations": count if metric.take == "mean" else None,
                }
        if self.spec.headline in values:
            for name in missing:
                problems.append(ctx.problem(None, f"{name}: no line matched; left out", "warning"))
            run = Run(run_id=run_id, values=values, source=ctx.provenance(self, ranges(lines)), **run_extra)
        else:
            run = self._failed(text, ctx, run_id, problems)
        result.observations.append(
            Observation(benchmark=ident[0], config=ident[1], system=ident[2], software=ident[3], run=run,
                        headline=self.spec.headline)  # fmt: skip
        )
        return result

    def _failed(self, text: str, ctx: FileContext, run_id: str, problems: list) -> Run:
        found = failure_in(text)
        index = LineIndex(text)
        if found:
            status, offset = found
            line = index.line(offset)
            reason = f"{status} at line {line}"
            problems.append(ctx.problem(line, f"run failed ({status}); no {self.spec.headline}", "warning"))
            snippet = excerpt(text, offset)
        else:
            status, line, snippet = "error", None, None
            reason = f"no line matched the {self.spec.headline} regex"
            problems.append(ctx.problem(None, reason))
        return Run(run_id=run_id, status=status, reason=reason, excerpt=snippet,
                   source=ctx.provenance(self, "" if line is None else str(line)))  # fmt: skip


def load_collectors(specs: list[str | Path | dict], base: Path | None = None) -> list[SpecCollector]:
    """Collectors for spec files (paths relative to ``base``) or inline spec mappings."""
    out: list[SpecCollector] = []
    for i, item in enumerate(specs):
        if isinstance(item, dict):
            spec = parse_spec(item, f"settings.formats[{i}]")
        else:
            path = Path(item)
            spec = load_spec(path if path.is_absolute() or base is None else base / path)
        collector = SpecCollector(spec)
        if any(c.name == collector.name for c in out):
            raise SpecError(f"{item}: a second format named {spec.name!r}; names must be unique")
        out.append(collector)
    return out


def from_settings(settings: dict, catalog_dir: Path) -> list[SpecCollector]:
    """The formats a catalog's settings declare (``settings: formats: [spec.yaml, ...]``).

    Paths are relative to the folder holding the catalog folder (the site's root).
    """
    specs = (settings or {}).get("formats") or []
    if not isinstance(specs, list):
        raise SpecError(f"{catalog_dir}/catalog.yaml: settings.formats: a list of spec files or mappings")
    return load_collectors(specs, catalog_dir.resolve().parent)
