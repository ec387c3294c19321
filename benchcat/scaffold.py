"""``catalog init DIR``: a new results site for a team that installs benchcat as a package.

The skeleton is this project's own site (mkdocs.yml, benchcat.yml, the hand-written pages and
assets of site_src/), so a new site starts exactly like the one benchcat publishes itself.
"""

from __future__ import annotations

from pathlib import Path

from .resources import data_root

ROOT = data_root()
# Keep in step with [tool.setuptools.data-files] in pyproject.toml (a test checks).
SKELETON = [
    "mkdocs.yml",
    "site_src/index.md",
    "site_src/methodology.md",
    "site_src/publishing.md",
    "site_src/user-formats.md",
    "site_src/table-import.md",
    "site_src/assets/charts.js",
    "site_src/assets/benchcat.css",
]
HOOKS = '"""MkDocs hooks of this site: render the benchcat catalog before each build."""\n\n' \
    "from benchcat.site_hooks import on_pre_build, on_serve  # noqa: F401\n"
SETTINGS = """\
# benchcat site settings, read by `catalog render` and the mkdocs hook (paths relative to this file)
catalog: catalog
reports: reports
systems: systems.yaml
templates: templates        # a file here overrides the packaged template of the same name
cv_threshold: 0.05          # cells whose runs vary more than this (stdev / mean) are flagged
redact:                     # applied before any page is written
  fields: [system.host]     # dotted paths into a record
  values: []                # literal strings, replaced wherever they appear
  patterns: []              # regular expressions
"""
SYSTEMS = """\
# Optional cost per device, for throughput per dollar and per watt on vendor pages.
# Keys match system names (globs allowed).
systems: {}
#  "*A100*": {price: 15000, watts: 400}
"""
REPORT = """\
# A comparison table: rows are model configurations, columns system + framework + flags.
title: All configurations
rows: [model, precision, batch_size, devices]
columns: [system, framework]
"""
GITIGNORE = "/site/\nsite_src/generated/\nsite_src/assets/plotly.min.js\ncatalog/.cache/\ncatalog/.lock\n"


class ScaffoldError(Exception):
    pass


def scaffold(target: Path) -> list[str]:
    """Write a new site into ``target``; returns the files written."""
    if target.exists() and any(target.iterdir()):
        raise ScaffoldError(f"{target} exists and is not empty")
    missing = [rel for rel in SKELETON if not (ROOT / rel).is_file()]
    if missing:
        raise ScaffoldError(f"benchcat's site skeleton is incomplete ({', '.join(missing)}); reinstall benchcat")
    files: dict[str, str] = {rel: (ROOT / rel).read_text() for rel in SKELETON}
    files["mkdocs.yml"] = files["mkdocs.yml"].replace("benchcat/site_hooks.py", "hooks.py")
    files.update({
        "hooks.py": HOOKS, "benchcat.yml": SETTINGS, "systems.yaml": SYSTEMS, "reports/all.yaml": REPORT,
        ".gitignore": GITIGNORE, "templates/README.md": "Templates here override benchcat's of the same name.\n",
        "catalog/.gitkeep": "",
    })  # fmt: skip
    for rel, text in sorted(files.items()):
        path = target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return sorted(files)
