"""Site commands of ``catalog``: render the generated pages, scaffold a new results site."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .cli import app, fail, out


@app.command()
def render(
    site: Annotated[Path, typer.Option("--site", help="Folder of the site's mkdocs.yml and benchcat.yml.")] = Path(
        "."
    ),
) -> None:
    """Write the generated pages (site_src/generated/) from the catalog, report specs and templates.

    Example: catalog render && zensical build
    """
    from .render import render_site
    from .spec import SpecError
    from .store import CatalogError

    try:
        settings, changed = render_site(site)
    except (CatalogError, SpecError, ValueError) as exc:
        fail(str(exc))
        raise
    out.print(f"rendered {settings.output}: {len(changed)} file(s) changed")


@app.command()
def init(
    target: Annotated[Path, typer.Argument(help="Folder of the new site (created; must be empty if it exists).")],
) -> None:
    """Scaffold a results site: mkdocs.yml, benchcat.yml, site_src/, an empty catalog/, reports/.

    Example: catalog init team-results && cd team-results && mkdocs serve
    """
    from .scaffold import ScaffoldError, scaffold

    try:
        written = scaffold(target)
    except ScaffoldError as exc:
        fail(str(exc))
        raise
    out.print(f"created {target} ({len(written)} files); next: cd {target} && catalog collect LOGS/ && mkdocs serve")
