"""The ``catalog`` command: each sub-command is a short adapter over one library call."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from . import query, store
from .schema import json_schema

app = typer.Typer(
    help="benchcat: collect benchmark logs into a versioned catalog and publish it as a site.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)
out = Console(highlight=False, markup=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, markup=False, soft_wrap=True)

CatalogDir = Annotated[
    Path, typer.Option("--catalog", help="Catalog folder (default: ./catalog, beside the site's mkdocs.yml).")
]


def fail(message: str, code: int = 2) -> None:
    err.print(f"error: {message}")
    raise typer.Exit(code)


@app.command()
def collect(
    root: Annotated[Path, typer.Argument(help="Folder (or file) of logs to collect.")],
    catalog: CatalogDir = Path("catalog"),
    strict: Annotated[bool, typer.Option(help="Exit 1 when any problem is found.")] = False,
    collector: Annotated[
        str | None, typer.Option("--collector", help="Use this collector for every file instead of detecting.")
    ] = None,
    jobs: Annotated[int | None, typer.Option(help="Worker processes (default: all cores).")] = None,
    wait: Annotated[float, typer.Option(help="Seconds to wait for another writer's lock.")] = 0,
    max_mb: Annotated[int, typer.Option(help="Larger files are reported, not read.")] = 64,
    dry_run: Annotated[bool, typer.Option(help="Report what would change; write nothing.")] = False,
    formats: Annotated[
        list[Path] | None, typer.Option("--format", help="A user format spec (YAML); repeatable.")
    ] = None,
    problems_file: Annotated[
        Path | None, typer.Option(help="Write every problem here, one per line (the summary shows the first 200).")
    ] = None,
) -> None:
    """Parse every log under ROOT into the catalog and print a summary.

    Example: catalog collect logs/ --strict --format examples/formats/lab-a100.yaml
    """
    from .collect import collect as run_collect
    from .progress import bar

    try:
        with bar(err, "collecting") as progress:
            report = run_collect(
                root,
                catalog,
                jobs=jobs,
                max_bytes=max_mb * 1024 * 1024,
                only=collector,
                wait=wait,
                dry_run=dry_run,
                progress=progress,
                formats=formats,
            )
    except (store.CatalogError, FileNotFoundError, KeyError, ValueError) as exc:
        fail(str(exc).strip('"'))
    for line in query.summary_lines(report):
        out.print(line)
    if problems_file is not None:
        problems_file.write_text("".join(f"{line}\n" for line in query.problem_lines(report)), encoding="utf-8")
    if strict and report.problems:
        raise typer.Exit(1)


@app.command("list")
def list_records(
    catalog: CatalogDir = Path("catalog"),
    model: Annotated[str | None, typer.Option(help="Only this model.")] = None,
    framework: Annotated[str | None, typer.Option(help="Only this framework.")] = None,
    precision: Annotated[str | None, typer.Option(help="Only this precision.")] = None,
    system: Annotated[str | None, typer.Option(help="Only systems whose name or accelerator contains this.")] = None,
    fmt: Annotated[str, typer.Option("--format", help="table, json or csv.")] = "table",
) -> None:
    """List records, one line (or object, or CSV row) each.

    Example: catalog list --model bert-base --framework mindspore --format json
    """
    cat = _load(catalog)
    records = query.select(cat, model=model, framework=framework, precision=precision, system=system)
    if fmt == "json":
        json.dump([query.flat(r) for r in records], sys.stdout, indent=2, sort_keys=True)
        sys.stdout.write("\n")
    elif fmt == "csv":
        sys.stdout.write(query.to_csv(records))
    elif fmt == "table":
        # A terminal gets a table that fits it; a pipe gets full-width rows, never folded ids.
        console = out if out.is_terminal else Console(width=400, highlight=False, markup=False)
        console.print(query.table(records))
    else:
        fail(f"unknown format {fmt!r}; valid: table, json, csv")


@app.command()
def show(
    record_id: Annotated[str, typer.Argument(help="A record id, or a unique prefix of one.")],
    catalog: CatalogDir = Path("catalog"),
) -> None:
    """Print one record with all its runs, as stored.

    Example: catalog show bert-base-mxnet-1n8g
    """
    cat = _load(catalog)
    try:
        record = query.find(cat, record_id)
    except KeyError as exc:
        fail(exc.args[0])
    from . import yamlio

    out.print(yamlio.dumps(record.model_dump(mode="json", exclude_none=True)), end="")


@app.command()
def validate(catalog: CatalogDir = Path("catalog")) -> None:
    """Check the catalog against the schema and for internal consistency; exit 1 on findings.

    Example: catalog validate --catalog site/catalog
    """
    from .validate import check

    cat = _load(catalog)
    findings = check(cat)
    for finding in findings:
        out.print(finding)
    out.print(f"{len(cat.records)} records, revision {cat.revision}: {len(findings)} problem(s)")
    if findings:
        raise typer.Exit(1)


@app.command()
def schema() -> None:
    """Print the JSON Schema of a record.

    Example: catalog schema > catalog.schema.json
    """
    json.dump(json_schema(), sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")


@app.command()
def migrate(catalog: CatalogDir = Path("catalog")) -> None:
    """Upgrade every catalog file to the current schema_version, one step at a time.

    Example: catalog migrate --catalog catalog
    """
    try:
        held = store.acquire(catalog)
        try:
            cat = store.load(catalog, use_cache=False)
            written = store.save(cat) if cat.migrated else []
        finally:
            held.release()
    except store.CatalogError as exc:
        fail(str(exc))
    out.print(f"upgraded {len(cat.migrated)} file(s); wrote {len(written)}")


@app.command("collectors")
def list_collectors() -> None:
    """List the log formats benchcat reads (never imports a framework).

    Example: catalog collectors
    """
    import collectors

    for c in collectors.all_collectors():
        out.print(f"{c.name:24} v{c.version}  {c.description}")
    for name, why in collectors.broken().items():
        out.print(f"{name:24} BROKEN: {why}")


def _load(catalog: Path) -> store.Catalog:
    try:
        return store.load(catalog)
    except store.CatalogError as exc:
        fail(str(exc))
        raise


def main() -> None:  # console script entry point
    app()


# Sub-command modules register themselves on `app`: catalog import; catalog render / init;
# catalog run / runners / env.
from . import cli_import, cli_run, cli_site  # noqa: E402, F401
