"""``catalog run``, ``catalog runners``, ``catalog env``: adapters over benchcat.sweep and benchcat.envs.

Registered on the main app by one import at the bottom of :mod:`benchcat.cli`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from . import envs
from .cli import CatalogDir, app, err, fail, out

env_app = typer.Typer(help="Framework environments used by `catalog run`.", no_args_is_help=True,
                      rich_markup_mode=None)
app.add_typer(env_app, name="env")


@app.command("run")
def run_sweep(
    sweep_file: Annotated[Path, typer.Argument(help="Sweep file (YAML): matrix, exclude, settings, output.")],
    catalog: CatalogDir = Path("catalog"),
    force: Annotated[bool, typer.Option(help="Re-run points whose logs are already complete.")] = False,
    collect: Annotated[bool, typer.Option(help="Collect the log tree into the catalog afterwards.")] = True,
    dry_run: Annotated[bool, typer.Option(help="Print the runs and their log paths; run nothing.")] = False,
    launcher: Annotated[str, typer.Option(help="local: child processes here; slurm: an sbatch job per point, from "
                                               "the sweep file's slurm: section (with --dry-run: print the scripts).")
                        ] = "local",
) -> None:
    """Run every point of a sweep (each repeat in a child process), then collect the logs.

    Example: catalog run examples/sweep.yaml --catalog catalog
    """
    from runners.launch import is_complete, log_name

    from . import query, sweep
    from .collect import collect as run_collect
    from .progress import bar

    try:
        plan = sweep.load(sweep_file)
    except sweep.SweepError as exc:
        fail(str(exc))
    if launcher != "local":
        from .cli_slurm import run_on_slurm

        return run_on_slurm(plan, launcher, catalog=catalog, force=force, collect=collect, dry_run=dry_run)
    if dry_run:
        for cfg in plan.runs:
            log = plan.output / log_name(cfg)
            out.print(f"{'done' if is_complete(log) else 'todo':5} {log}")
        return
    try:
        with bar(err, "running") as progress:
            report = sweep.run(plan, force=force, progress=progress, say=err.print)
    except sweep.SweepError as exc:
        fail(str(exc))
    counts = ", ".join(f"{n} {status}" for status, n in sorted(report.statuses.items())) or "nothing run"
    out.print(f"{report.total} runs: {counts}; {report.skipped} already complete; {report.seconds:.0f} s")
    for line in report.failed:
        out.print(f"  failed: {line}")
    if collect:
        result = run_collect(plan.output, catalog)
        for line in query.summary_lines(result):
            out.print(line)


@app.command("runners")
def list_runners() -> None:
    """List the framework runners and whether their environments are ready (imports no framework).

    Example: catalog runners
    """
    for name in envs.FRAMEWORKS:
        out.print(f"{name:12} {envs.status(name):8} {envs.env_path(name)}")
    out.print("fake         ready    (numpy only: runs in this interpreter, for tests)")


@env_app.command("setup")
def env_setup(
    framework: Annotated[str, typer.Argument(help=f"{', '.join(envs.FRAMEWORKS)} or all.")],
    force: Annotated[bool, typer.Option(help="Rebuild even when the environment is ready.")] = False,
    flavour: Annotated[str, typer.Option(help="cpu (tested) or gpu (documented pins, untested here).")] = "cpu",
) -> None:
    """Create a framework's virtual environment from runners/requirements/<framework>-<flavour>.txt.

    Example: catalog env setup pytorch
    """
    if flavour not in ("cpu", "gpu"):
        fail(f"unknown flavour {flavour!r}; valid: cpu, gpu")
    names = list(envs.FRAMEWORKS) if framework == "all" else [framework]
    for name in names:
        try:
            envs.setup(name, flavour=flavour, force=force, say=err.print)
        except KeyError as exc:
            fail(exc.args[0])


@env_app.command("list")
def env_list() -> None:
    """Show each framework environment: ready, stale (requirements changed) or missing.

    Example: catalog env list
    """
    list_runners()
