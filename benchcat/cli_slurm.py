"""``catalog run --launcher slurm``: the adapter over benchcat.slurm and benchcat.slurm_queue."""

from __future__ import annotations

from pathlib import Path

from . import envs, query, slurm, slurm_queue
from .cli import err, fail, out
from .sweep import Sweep

LAUNCHERS = ("local", "slurm")


def run_on_slurm(plan: Sweep, launcher: str, *, catalog: Path, force: bool, collect: bool, dry_run: bool) -> None:
    """Print the scripts (dry run), or submit, wait and collect the logs as the jobs finish."""
    from .collect import collect as run_collect
    from .progress import bar

    if launcher not in LAUNCHERS:
        fail(f"unknown launcher {launcher!r}; valid: {', '.join(LAUNCHERS)}")
    try:
        opts = slurm.options(plan.slurm)
        if dry_run:
            jobs, skipped = slurm.plan(plan, force=force)
            slurm_dir = plan.output.resolve() / slurm.SLURM_DIR
            slurm.write_scripts(jobs, opts, envs.python, plan.timeout, slurm_dir, write=False)
            for job in jobs:
                out.print(f"# ---- {job.path}\n{job.script}")
            out.print(f"# {len(jobs)} job(s) to submit; {skipped} repeat(s) already complete")
            return

        def collect_finished(_jobs) -> None:
            if collect:
                result = run_collect(plan.output, catalog, wait=60)
                err.print(query.summary_lines(result)[1])

        with bar(err, "slurm jobs") as progress:
            report = slurm_queue.run(plan, opts, envs.python, force=force, on_finished=collect_finished,
                                     progress=progress, say=err.print)
    except slurm.SlurmError as exc:
        fail(str(exc))
    counts = ", ".join(f"{n} {status}" for status, n in sorted(report.statuses.items())) or "nothing finished"
    out.print(f"{report.total} runs in {len(report.submitted)} job(s): {counts}; {report.skipped} already complete; "
              f"{report.queued} still queued from an earlier submission; {report.seconds:.0f} s")
    for line in report.failed:
        out.print(f"  failed: {line}")
    if report.unfinished:
        ids = ",".join(j.id for j in report.unfinished)
        out.print(f"{len(report.unfinished)} job(s) still queued or running after {opts.wait:g} s: {ids}; "
                  f"run the same command again later to wait for them and collect their logs")
    if collect and (report.submitted or report.queued):
        for line in query.summary_lines(run_collect(plan.output, catalog, wait=60)):
            out.print(line)
