"""Catalog + report specs + templates -> the generated markdown pages of the site.

``render(settings)`` is pure apart from reading its inputs: it returns every generated file by
path. ``write`` puts them under site_src/generated/, touching only files whose bytes change (so
``mkdocs serve`` does not loop) and removing files no longer generated. The same catalog renders
byte-identical pages: everything is sorted and nothing carries a timestamp.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from jinja2 import ChoiceLoader, Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from . import charts, compare, overview, scaling, store, vendor, yamlio
from .aggregate import Undefined
from .facts import catalog_csv, facts
from .gcpause import gc_paused
from .redact import Redactor
from .resources import data_root
from .schema import slug
from .spec import load_specs

SETTINGS_FILE = "benchcat.yml"
STAMP = ".render-stamp"  # fingerprint of the inputs of the last render (a dot file: no site page)
PACKAGE_TEMPLATES = data_root() / "templates"
# Characters that are markup in HTML or active in Markdown (tables, emphasis, links, code, raw HTML).
_ENTITIES = str.maketrans({c: f"&#{ord(c)};" for c in "\\`*_{}[]<>#|!~^&\"'"} | dict.fromkeys("\n\r\t", " "))


@dataclass
class Settings:
    """Where a site's inputs and outputs are, read from benchcat.yml beside mkdocs.yml."""

    root: Path
    catalog: Path
    reports: Path
    systems: Path
    templates: Path
    output: Path
    assets: Path
    cv_threshold: float = 0.05
    redact: Redactor = field(default_factory=Redactor)

    @classmethod
    def load(cls, root: str | os.PathLike = ".") -> Settings:
        root = Path(root).resolve()
        path = root / SETTINGS_FILE
        doc = (yamlio.loads(path.read_bytes()) or {}) if path.exists() else {}
        known = {"catalog", "reports", "systems", "templates", "output", "assets", "cv_threshold", "redact"}
        unknown = sorted(set(doc) - known)
        if unknown:
            raise ValueError(f"{path}: unknown key(s) {', '.join(unknown)}; valid: {', '.join(sorted(known))}")
        return cls(
            root=root,
            catalog=root / doc.get("catalog", "catalog"),
            reports=root / doc.get("reports", "reports"),
            systems=root / doc.get("systems", "systems.yaml"),
            templates=root / doc.get("templates", "templates"),
            output=root / doc.get("output", "site_src/generated"),
            assets=root / doc.get("assets", "site_src/assets"),
            cv_threshold=float(doc.get("cv_threshold", 0.05)),
            redact=Redactor.from_settings(doc.get("redact")),
        )


def md(value) -> Markup:
    """Text made inert in Markdown and HTML: markup characters become numeric entities."""
    if isinstance(value, Markup):
        return value
    text = "" if value is None else str(value)
    return Markup(text.translate(_ENTITIES))  # noqa: S704 (every markup char is an entity now)


def mdpre(value) -> Markup:
    """Multi-line text for a one-line <pre> block: each line escaped, newlines as entities."""
    return Markup("&#10;".join(md(line) for line in str(value or "").splitlines()))  # noqa: S704 (lines escaped)


def num(value) -> str:
    if value is None or isinstance(value, Undefined) or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    a = abs(value)
    if a >= 1000:
        return f"{value:,.0f}"
    if a >= 100:
        return f"{value:.1f}"
    if a >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def pct(value, signed: bool = True) -> str:
    if value is None or isinstance(value, Undefined):
        return "–"
    return f"{value:+.1f}%" if signed else f"{value:.1f}%"


def environment(settings: Settings) -> Environment:
    """Jinja2 with autoescape; the site's templates/ folder overrides the packaged templates."""
    loaders = [FileSystemLoader(str(settings.templates))] if settings.templates.is_dir() else []
    loaders.append(FileSystemLoader(str(PACKAGE_TEMPLATES)))
    env = Environment(
        loader=ChoiceLoader(loaders),
        autoescape=True,
        finalize=md,  # every {{ value }} is escaped for Markdown too, not only for HTML
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(md=md, mdpre=mdpre, num=num, pct=pct, slug=slug)
    env.globals.update(
        undefined=lambda v: isinstance(v, Undefined),
        anchor=overview.anchor,
        pct=pct,
        key_text=vendor.config_label,
    )
    return env


def _json(data) -> bytes:
    """Compact, sorted JSON, one line per top-level item of a list (diffable, yet small)."""
    dump = functools.partial(json.dumps, sort_keys=True, separators=(",", ":"), default=str, allow_nan=False)
    if isinstance(data, list):
        return ("[\n" + ",\n".join(map(dump, data)) + ("\n]\n" if data else "]\n")).encode()
    return (dump(data) + "\n").encode()


def _frame_files(name: str, frame) -> dict[str, bytes]:
    """A table as CSV and as JSON records (pandas' C writers; 15 significant digits)."""
    text = frame.to_json(orient="records", double_precision=15, force_ascii=False)
    return {
        f"downloads/{name}.csv": frame.to_csv(index=False, lineterminator="\n").encode(),
        f"downloads/{name}.json": (text.replace("},{", "},\n{") + "\n").encode(),
    }


@gc_paused
def render(settings: Settings) -> dict[str, bytes]:
    """Every generated file (path relative to the output folder -> bytes)."""
    cat = store.load(settings.catalog)
    red = settings.redact
    records = [red.record(cat.records[rid]) for rid in sorted(cat.records)]
    by_id = {r.id: r for r in records}
    history = red.deep(cat.history)
    systems_doc = yamlio.loads(settings.systems.read_bytes()) if settings.systems.exists() else None
    systems = (systems_doc or {}).get("systems") or {}
    specs = load_specs(settings.reports)
    rows = facts(records)
    env = environment(settings)
    files: dict[str, bytes] = {}
    tables: list[tuple[str, str]] = []  # (download name, title)

    def page(path: str, template: str, **context) -> None:
        depth = path.count("/")
        base = "generated/" if path == "_home.md" else "../" * depth
        text = env.get_template(template).render(base=base, revision=cat.revision, **context)
        files[path] = text.encode()

    comparisons, vendors = [], []
    for spec in specs:
        if spec.kind == "comparison":
            table = compare.build(spec, facts(records, spec.metric) if spec.metric else rows, settings.cv_threshold)
            comparisons.append(table)
            files.update(_frame_files(f"comparison-{spec.slug}", compare.to_frame(table)))
            tables.append((f"comparison-{spec.slug}", spec.title))
            page(f"comparisons/{spec.slug}.md", "comparison.md.j2", table=table)
        else:
            ev = vendor.evaluate(spec, facts(records, spec.metric) if spec.metric else rows, systems)
            vendors.append(ev)
            files.update(_frame_files(f"vendor-{spec.slug}", vendor.to_frame(ev)))
            tables.append((f"vendor-{spec.slug}", spec.title))
            labels = [vendor.config_label(p.key) for p in ev.pairs]
            groups = ev.by_group()
            chart = charts.to_json(charts.ratio_bars(groups, spec.title)) if groups else None
            page(f"vendors/{spec.slug}.md", "vendor.md.j2", ev=ev, labels=labels, groups=groups, chart_json=chart)
    page("comparisons/index.md", "comparisons.md.j2", tables=comparisons)
    page("vendors/index.md", "vendors.md.j2", evaluations=vendors)

    models = sorted({r["model"] for r in rows})
    scaling_pages = []
    for model in models:
        secs = scaling.sections(rows, model)
        figs = []
        for s in secs:
            shown = charts.charted(s)
            lines = charts.speedup_lines(s) if shown else None
            figs.append((
                s,
                charts.to_json(charts.throughput_bars(s)) if shown else None,
                charts.to_json(lines) if lines and len(lines.data) > 1 else None,  # more than the ideal line
                shown,
                len(charts.scaling_series(s)) > charts.MAX_SERIES,
            ))  # fmt: skip
        name = f"scaling-{slug(model)}"
        files.update(_frame_files(name, scaling.to_frame(secs)))
        tables.append((name, f"Scaling of {model}"))
        scaling_pages.append((model, slug(model), len(secs)))
        page(f"scaling/{slug(model)}.md", "scaling.md.j2", model=model, sections=figs, max_series=charts.MAX_SERIES)
    page("scaling/index.md", "scaling_index.md.j2", models=scaling_pages)

    cov_columns, cov_rows = overview.coverage(rows)
    files.update(_frame_files("coverage", overview.coverage_frame(cov_columns, cov_rows)))
    tables.append(("coverage", "Coverage matrix"))
    page("coverage.md", "coverage.md.j2", columns=cov_columns, rows=cov_rows)
    env_of = {f["id"]: f["env"] for f in rows}
    page("environments.md", "environments.md.j2", envs=overview.environments(records, env_of))
    page("failures.md", "failures.md.j2", models=overview.failures(records, env_of))
    revisions = overview.changes(history, by_id)
    page("changes.md", "changes.md.j2", revisions=revisions)

    # Records exactly as stored (pydantic's own JSON encoder: 10x faster than dumping dicts), and
    # one CSV line per record with the fact fields every report selects on.
    files["downloads/catalog.json"] = ("[\n" + ",\n".join(r.model_dump_json(exclude_none=True) for r in records)
                                       + ("\n]\n" if records else "]\n")).encode()  # fmt: skip
    files["downloads/catalog.csv"] = catalog_csv(rows).encode()
    files["downloads/history.json"] = _json(history)
    page("downloads.md", "downloads.md.j2", tables=sorted(tables))
    page(
        "_home.md",
        "home.md.j2",
        counts=overview.counts(records, rows),
        latest=revisions[:3],
        comparisons=comparisons,
        evaluations=vendors,
        scaling=scaling_pages,
    )
    return dict(sorted(files.items()))


def write(output: Path, files: dict[str, bytes]) -> list[str]:
    """Write files under ``output``; only changed bytes are written; stale files are removed."""
    changed = []
    output.mkdir(parents=True, exist_ok=True)
    for rel, data in files.items():
        target = output / rel
        if target.is_file() and target.read_bytes() == data:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, target)
        changed.append(rel)
    for path in sorted(output.rglob("*"), reverse=True):
        rel = path.relative_to(output).as_posix()
        if path.is_file() and rel not in files and rel != STAMP:
            path.unlink()
            changed.append(rel)
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    return sorted(changed)


def fingerprint(settings: Settings) -> str:
    """What the pages depend on: every input file's name, size and mtime, and benchcat's own code."""
    roots = [settings.catalog, settings.reports, settings.templates, PACKAGE_TEMPLATES, Path(__file__).parent]
    seen = []
    for top in roots:
        paths = sorted(top.rglob("*")) if top.is_dir() else []
        for p in paths:
            rel = p.relative_to(top).parts
            if p.is_file() and not any(part.startswith(".") for part in rel) and "__pycache__" not in rel:
                st = p.stat()
                seen.append((str(p), st.st_size, st.st_mtime_ns))
    for p in (settings.systems, settings.root / SETTINGS_FILE):
        seen.append((str(p), *((p.stat().st_size, p.stat().st_mtime_ns) if p.exists() else (None, None))))
    return hashlib.sha256(json.dumps(seen).encode()).hexdigest()


def render_site(root: str | os.PathLike = ".", *, force: bool = True) -> tuple[Settings, list[str]]:
    """Render the site at ``root`` (the folder of mkdocs.yml): pages, downloads and plotly.min.js.

    Without ``force``, nothing is done when no input changed since the last render (the mkdocs hook
    runs on every build; ``mkdocs build`` right after ``catalog render`` need not render twice).
    """
    settings = Settings.load(root)
    stamp = settings.output / STAMP
    stamp_text = fingerprint(settings)
    charts.copy_plotly(settings.assets)
    if not force and stamp.exists() and stamp.read_text() == stamp_text:
        return settings, []
    changed = write(settings.output, render(settings))
    stamp.write_text(stamp_text)
    return settings, changed
