"""A sweep on Slurm: submit each job with ``sbatch --parsable``, follow it with ``squeue`` (``sacct``
once squeue has forgotten it), and give every repeat a complete log however its job ended.

A job that ends CANCELLED, TIMEOUT, OUT_OF_MEMORY, NODE_FAIL, ... before its repeats could record
their own ending gets, for each such repeat, a ``failure`` line (status from the Slurm state, the
job's output as the excerpt) in the runner log format, so the collector sees a failed run.
Submitted jobs are remembered in ``<output>/.slurm/jobs.json``: a rerun of the sweep does not
resubmit points whose jobs are still queued or running.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from runners import launch

from . import slurm_job
from .slurm import SLURM_DIR, Job, Options, Repeat, SlurmError, job_name, plan, write_scripts
from .sweep import Sweep, SweepReport

# Job states after which the job may still run (or run again); any other state is final.
ACTIVE = frozenset({
    "PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED", "REQUEUE_HOLD",
    "REQUEUE_FED", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED", "RESV_DEL_HOLD", "SPECIAL_EXIT",
})
STATE_STATUS = {"TIMEOUT": "timeout", "DEADLINE": "timeout", "OUT_OF_MEMORY": "oom"}  # others: error
MANIFEST = "jobs.json"


@dataclass
class SlurmReport(SweepReport):
    submitted: list[Job] = field(default_factory=list)
    queued: int = 0  # repeats left alone because an earlier job for them is still queued or running
    unfinished: list[Job] = field(default_factory=list)


def _call(cmd: list[str], timeout: float = 60) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except FileNotFoundError as exc:
        raise SlurmError(f"{cmd[0]} not found: run on a machine with Slurm's client tools on PATH") from exc
    except subprocess.TimeoutExpired as exc:
        raise SlurmError(f"{' '.join(cmd[:2])} did not answer within {timeout:g} s") from exc


def sbatch(script: Path) -> str:
    """Submit one script; returns its job id."""
    done = _call(["sbatch", "--parsable", str(script)])
    if done.returncode != 0 or not done.stdout.strip():
        raise SlurmError(f"sbatch {script}: {done.stderr.strip() or f'exit code {done.returncode}'}")
    return done.stdout.strip().split(";")[0]


def states(ids: list[str]) -> dict[str, tuple[str, str]]:
    """``{job id: (state, reason)}`` from squeue, then sacct for jobs squeue no longer lists.

    A job neither knows is ``UNKNOWN``; a failing squeue (controller down) raises SlurmError.
    """
    if not ids:
        return {}
    done = _call(["squeue", "--states=all", "--noheader", "--format=%i|%T|%r", "--jobs", ",".join(ids)])
    if done.returncode != 0 and "invalid job id" not in done.stderr.lower():
        raise SlurmError(f"squeue: {done.stderr.strip() or f'exit code {done.returncode}'}")
    found: dict[str, tuple[str, str]] = {}
    for line in done.stdout.splitlines():
        job, _, rest = line.strip().partition("|")
        state, _, reason = rest.partition("|")
        if job in ids:
            found[job] = (state, "" if reason in ("None", "(null)") else reason)
    missing = [i for i in ids if i not in found]
    if missing:
        acct = _call(["sacct", "--noheader", "--parsable2", "--allocations", "--format=JobIDRaw,State",
                      "--jobs", ",".join(missing)])
        for line in acct.stdout.splitlines() if acct.returncode == 0 else []:
            job, _, state = line.strip().partition("|")
            if job in missing and state:
                found[job] = (state.split()[0], state)  # "CANCELLED by 0" -> CANCELLED
    return {i: found.get(i, ("UNKNOWN", "neither squeue nor sacct knows this job any more")) for i in ids}


def log_status(log: Path) -> str | None:
    """``ok`` or the failure status of a complete log; None while it is incomplete."""
    if not launch.is_complete(log):
        return None
    last = json.loads(log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-1])
    return "ok" if last["kind"] == "summary" else last.get("status", "error")


def _tail(path: Path | None, limit: int = 1500) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[-limit:] if path else ""
    except OSError:
        return ""


def finalize(job: Job, state: str, reason: str, timeout: float) -> list[str]:
    """Each repeat's status once its job is over; repeats the job left incomplete become failed runs."""
    statuses = []
    output = job.path.with_name(f"{job.name}-{job.id}.out") if job.path else None  # sbatch --output
    for rep in job.repeats:
        status = log_status(rep.log)
        if status is None:
            work = slurm_job.work_file(rep.log)
            if not work.exists():  # the job ended before this repeat started
                head = launch.header(rep.cfg, timeout, {}, {**rep.extra, "slurm_job_id": job.id})
                work.parent.mkdir(parents=True, exist_ok=True)
                work.write_text(json.dumps(head, sort_keys=True) + "\n", encoding="utf-8")
            status = STATE_STATUS.get(state, "error")
            why = f"Slurm job {job.id} ended {state}" + (f" ({reason})" if reason and reason != state else "")
            if state == "COMPLETED":
                why = f"Slurm job {job.id} completed but this repeat left no summary or failure line"
            stderr = _tail(slurm_job.stderr_file(rep.log)) + _tail(output)
            launch.append_failure(work, status, why, None, 0.0, stderr)
            os.replace(work, rep.log)
            slurm_job.stderr_file(rep.log).unlink(missing_ok=True)
        statuses.append(status)
    return statuses


def wait(
    jobs: list[Job],
    timeout: float,
    poll: float,
    run_timeout: float,
    *,
    on_finished: Callable[[list[Job]], None] | None = None,
    progress: Callable[[int, int], None] | None = None,
    say: Callable[[str], None] = lambda _line: None,
    report: SweepReport | None = None,
) -> list[Job]:
    """Poll until every job is over or ``timeout`` seconds pass; returns the jobs still unfinished.

    Finished jobs are finalized, counted into ``report`` and handed to ``on_finished`` (to collect
    their logs) after each poll; unfinished jobs keep running in Slurm.
    """
    pending = {j.id: j for j in jobs}
    total = len(jobs)
    deadline = time.monotonic() + timeout
    last_counts = None
    while pending:
        try:
            known = states(list(pending))
        except SlurmError as exc:
            say(f"squeue failed, will retry: {exc}")
            known = {}
        finished = []
        for job_id, (state, reason) in known.items():
            if state in ACTIVE:
                continue
            job = pending.pop(job_id)
            statuses = finalize(job, state, reason, run_timeout)
            finished.append(job)
            say(f"{state:10} job {job_id} {job.name}: {', '.join(statuses)}")
            if report is not None:
                report.statuses.update(statuses)
                report.failed += [f"{r.log.relative_to(report.output)}: {s}"
                                  for r, s in zip(job.repeats, statuses, strict=True) if s != "ok"]
        if finished and on_finished:
            on_finished(finished)
        counts = Counter(state for job_id, (state, _) in known.items() if job_id in pending)
        if counts != last_counts and pending:
            say("queue: " + ", ".join(f"{n} {s.lower()}" for s, n in sorted(counts.items())) +
                f", {total - len(pending)} of {total} done")
            last_counts = counts
        if progress:
            progress(total - len(pending), total)
        left = deadline - time.monotonic()
        if not pending or left <= 0:
            break
        time.sleep(min(poll, left))
    return list(pending.values())


def _manifest(slurm_dir: Path) -> dict[str, list[str]]:
    try:
        data = json.loads((slurm_dir / MANIFEST).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def still_queued(slurm_dir: Path) -> tuple[dict[str, list[str]], set[Path]]:
    """Jobs of earlier submissions that are still active, and their logs."""
    recorded = _manifest(slurm_dir)
    live = {i: recorded[i] for i, (state, _) in states(list(recorded)).items() if state in ACTIVE}
    return live, {Path(log) for logs in live.values() for log in logs}


def resumed(sweep: Sweep, live: dict[str, list[str]], slurm_dir: Path, new: set[str]) -> list[Job]:
    """Jobs of an earlier submission of this sweep that are still active, to wait for them again."""
    by_log = {sweep.output.resolve() / launch.log_name(c): c for c in sweep.runs}
    jobs = []
    for job_id, logs in live.items():
        repeats = [Repeat(by_log[Path(log)], Path(log)) for log in logs if Path(log) in by_log]
        if job_id not in new and repeats:
            name = job_name(repeats[0].cfg)
            jobs.append(Job(name, repeats, path=slurm_dir / f"{name}.sbatch", id=job_id))
    return jobs


def run(
    sweep: Sweep,
    opts: Options,
    python_for: Callable[[str], Path | None],
    *,
    force: bool = False,
    on_finished: Callable[[list[Job]], None] | None = None,
    progress: Callable[[int, int], None] | None = None,
    say: Callable[[str], None] = lambda _line: None,
) -> SlurmReport:
    """Submit a job per point with incomplete logs, then (``opts.wait`` > 0) wait for them."""
    start = time.monotonic()
    output = sweep.output.resolve()
    slurm_dir = output / SLURM_DIR
    report = SlurmReport(output=output, total=len(sweep.runs))
    live, busy = still_queued(slurm_dir)
    jobs, report.skipped = plan(sweep, force=force, exclude=busy)
    report.queued = len(busy & {output / launch.log_name(c) for c in sweep.runs})
    report.skipped -= report.queued
    write_scripts(jobs, opts, python_for, sweep.timeout, slurm_dir)
    for job in jobs:
        for rep in job.repeats:
            rep.log.unlink(missing_ok=True)  # with --force: the old result goes, as a local run replaces it
        job.id = sbatch(job.path)
        live[job.id] = [str(r.log) for r in job.repeats]
        (slurm_dir / MANIFEST).write_text(json.dumps(live, indent=1, sort_keys=True) + "\n")
        say(f"submitted job {job.id} {job.name} ({len(job.repeats)} repeat(s))")
    report.submitted = jobs
    earlier = resumed(sweep, live, slurm_dir, {j.id for j in jobs})
    report.unfinished = jobs + earlier
    if report.unfinished and opts.wait > 0:
        report.unfinished = wait(jobs + earlier, opts.wait, opts.poll, sweep.timeout, on_finished=on_finished,
                                 progress=progress, say=say, report=report)
    report.seconds = time.monotonic() - start
    return report
