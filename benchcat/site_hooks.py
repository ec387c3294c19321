"""MkDocs hooks (``hooks:`` in mkdocs.yml): a thin adapter that runs the same render as
``catalog render`` before every build, and makes ``mkdocs serve`` watch the catalog, the report
specs and the templates. Zensical does not run hooks: there, run ``catalog render`` first.
"""

from __future__ import annotations

import logging
from pathlib import Path

from benchcat.render import Settings, render_site

log = logging.getLogger("mkdocs.plugins.benchcat")


def _root(config) -> Path:
    return Path(config.config_file_path).resolve().parent


def on_pre_build(config, **kwargs) -> None:
    _, changed = render_site(_root(config), force=False)
    log.info("benchcat: rendered the catalog, %d generated file(s) changed", len(changed))


def on_serve(server, config, builder, **kwargs):
    settings = Settings.load(_root(config))
    for path in (settings.catalog, settings.reports, settings.templates, settings.systems):
        if path.exists():
            server.watch(str(path))
    return server
