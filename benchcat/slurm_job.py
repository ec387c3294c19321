"""The two steps a benchcat sbatch script runs around each repeat: ``start`` and ``finish``.

``python -m benchcat.slurm_job start LOG --config JSON --timeout S [--extra JSON]`` writes the
log's header (machine captured on the compute node) into the hidden work file beside ``LOG``;
the script then runs ``launch.child_command`` into that file, stderr into a hidden sidecar;
``python -m benchcat.slurm_job finish LOG RC --started EPOCH --timeout S`` turns the exit status
into ``ok`` or a failure line (``launch.finish``/``launch.classify``, as for a local run) and
renames the work file to ``LOG``. A log at its DLPerf path is therefore always complete, so
collecting while jobs still run never sees half a log. Standard library + :mod:`runners` only.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from runners import launch
from runners.common import RunConfig

# GNU timeout's status when it stopped the command; 128 + n when the command died by signal n.
TIMEOUT_STATUS = 124


def work_file(log: Path) -> Path:
    """Where a repeat's log grows while its job runs (hidden: the collector skips dot files)."""
    return log.with_name(f".{log.name}.running")


def stderr_file(log: Path) -> Path:
    return log.with_name(f".{log.name}.stderr")


def start(log: Path, cfg: RunConfig, timeout: float, extra: dict | None = None) -> Path:
    log.parent.mkdir(parents=True, exist_ok=True)
    job = {k: os.environ[v] for k, v in (("slurm_job_id", "SLURM_JOB_ID"), ("slurm_nodes", "SLURM_JOB_NODELIST"))
           if os.environ.get(v)}
    work = work_file(log)
    head = launch.header(cfg, timeout, None, {**(extra or {}), **job})
    work.write_text(json.dumps(head, sort_keys=True) + "\n", encoding="utf-8")
    return work


def exit_status(rc: int, elapsed: float, timeout: float) -> tuple[int | None, bool]:
    """(returncode as subprocess reports it, timed out) from a shell exit status of ``timeout CMD``."""
    if rc == TIMEOUT_STATUS or (rc == 128 + 9 and elapsed >= timeout):
        return rc, True
    return (-(rc - 128) if 128 < rc < 160 else rc), False


def finish(log: Path, rc: int, elapsed: float, timeout: float) -> str:
    """Status of the repeat; the work file (with a failure line unless ok) becomes ``log``."""
    work, err = work_file(log), stderr_file(log)
    try:
        stderr = err.read_text(encoding="utf-8", errors="replace")
    except OSError:
        stderr = ""
    returncode, timed_out = exit_status(rc, elapsed, timeout)
    status = launch.finish(work, returncode, timed_out, stderr, elapsed)
    os.replace(work, log)
    err.unlink(missing_ok=True)
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchcat.slurm_job", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="step", required=True)
    p_start = sub.add_parser("start", help="write the header of LOG's work file")
    p_start.add_argument("log", type=Path)
    p_start.add_argument("--config", required=True, help="RunConfig as JSON")
    p_start.add_argument("--timeout", type=float, required=True)
    p_start.add_argument("--extra", default="{}", help="JSON merged into the header")
    p_finish = sub.add_parser("finish", help="record how the child ended; move the work file to LOG")
    p_finish.add_argument("log", type=Path)
    p_finish.add_argument("rc", type=int, help="shell exit status of `timeout ... CHILD`")
    p_finish.add_argument("--started", type=float, required=True, help="epoch seconds when the child started")
    p_finish.add_argument("--timeout", type=float, required=True)
    args = parser.parse_args(argv)
    if args.step == "start":
        start(args.log, RunConfig.from_dict(json.loads(args.config)), args.timeout, json.loads(args.extra))
        return 0
    status = finish(args.log, args.rc, time.time() - args.started, args.timeout)
    print(f"{status:8} {args.log}")
    return 0 if status == "ok" else 1


if __name__ == "__main__":
    raise SystemExit(main())
