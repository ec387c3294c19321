"""``catalog import``: a short adapter over :func:`benchcat.tables.import_tables`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from . import store
from .cli import CatalogDir, app, fail, out


@app.command("import")
def import_table(
    table: Annotated[Path, typer.Argument(help="Markdown file with hand-written result tables.")],
    mapping: Annotated[
        Path | None, typer.Option("--mapping", help="Answers to the questions a previous import asked (YAML).")
    ] = None,
    catalog: CatalogDir = Path("catalog"),
    strict: Annotated[bool, typer.Option(help="Exit 1 when a question is open or a problem is found.")] = False,
    wait: Annotated[float, typer.Option(help="Seconds to wait for another writer's lock.")] = 0,
    dry_run: Annotated[bool, typer.Option(help="Report what would change; write nothing.")] = False,
) -> None:
    """Import result tables (OOM, seg fault, 176(-20%), 98/222s, 80(0.85) cells) as runs.

    Prints an accounting of every measurement cell and, for headers it cannot read, questions
    to answer in a mapping file.

    Example: catalog import examples/tables/iluvatar_vs_v100.md --mapping examples/tables/iluvatar_vs_v100.answers.yaml
    """
    from .tables import import_tables

    try:
        report = import_tables(table, catalog, mapping=mapping, wait=wait, dry_run=dry_run)
    except (store.CatalogError, FileNotFoundError, ValueError) as exc:
        fail(str(exc))
    from .tables import report_lines

    for line in report_lines(report):
        out.print(line)
    if strict and (report.questions or report.problems):
        raise typer.Exit(1)
