"""Slurm sbatch scripts for a sweep: the ``slurm:`` section of a sweep file, one job per matrix point.

A sweep file may carry (every key optional)::

    slurm:
      partition: gpu          # --partition
      account: proj42         # --account
      qos: normal             # --qos
      time: "01:30:00"        # --time (minutes, MM:SS, HH:MM:SS or D-HH:MM:SS); default: the
                              #   sweep's (per-run timeout + 1 minute) x repeats + 5 minutes
      nodes: 1                # --nodes; above 1 each repeat runs under `srun`, one task per node
      gpus_per_node: 8        # --gres=gpu:N, only for points whose device is gpu (default 1 there)
      cpus_per_task: 16       # --cpus-per-task
      mem: 64G                # --mem
      setup:                  # shell lines run first in every job (modules, a venv, exports)
        - module load cuda/12.1
      sbatch: ["--exclusive"] # further sbatch options, verbatim
      wait: 3600              # seconds `catalog run` waits for the jobs (0: submit and return)
      poll: 10                # seconds between squeue polls while waiting

Why one job per matrix point rather than a job array: points can need different resources
(``--gres`` only for GPU points), each script is self-contained (``--dry-run`` prints exactly
what runs, and one point can be resubmitted by hand), and resuming a sweep submits only the
points with incomplete logs. The repeats of a point run one after another in the same job, so
they share one allocation and stay comparable. Everything here is pure; submitting, polling and
collecting are in :mod:`benchcat.slurm_queue`.
"""

from __future__ import annotations

import json
import math
import re
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from runners import bert, launch
from runners.common import RunConfig

from . import slurm_job
from .sweep import Sweep, SweepError

KEYS = ("partition", "account", "qos", "time", "nodes", "gpus_per_node", "cpus_per_task", "mem", "setup", "sbatch",
        "wait", "poll")
TIME_RE = re.compile(r"^(\d+-\d{1,2}(:\d{2}){0,2}|\d+(:\d{2}){0,2})$")
MEM_RE = re.compile(r"^\d+[KMGT]?$")
NAME_RE = re.compile(r"^[A-Za-z0-9_.,:+=@/-]+$")
SLURM_DIR = ".slurm"  # under the sweep's output: scripts and job output; a dot folder, so never collected


class SlurmError(SweepError):
    pass


@dataclass(frozen=True)
class Options:
    partition: str | None = None
    account: str | None = None
    qos: str | None = None
    time: str | None = None
    nodes: int = 1
    gpus_per_node: int | None = None
    cpus_per_task: int | None = None
    mem: str | None = None
    setup: tuple[str, ...] = ()
    sbatch: tuple[str, ...] = ()
    wait: float = 3600
    poll: float = 10


@dataclass
class Repeat:
    cfg: RunConfig
    log: Path
    extra: dict = field(default_factory=dict)


@dataclass
class Job:
    """One matrix point: its repeats, its sbatch script, and once submitted its Slurm job id."""

    name: str
    repeats: list[Repeat]
    script: str = ""
    path: Path | None = None
    id: str | None = None


def _int(key: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise SlurmError(f"slurm.{key}: expected an integer >= {low}, got {value!r}")
    return value


def _seconds(key: str, value, low: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < low:
        raise SlurmError(f"slurm.{key}: expected a number of seconds >= {low}, got {value!r}")
    return float(value)


def _word(key: str, value) -> str:
    if not isinstance(value, str) or not NAME_RE.match(value):
        raise SlurmError(f"slurm.{key}: expected a name (letters, digits, _.,:+=@/-), got {value!r}")
    return value


def _lines(key: str, value, option: bool = False) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(v, str) and v.strip() for v in items):
        raise SlurmError(f"slurm.{key}: expected a string or a list of strings, got {value!r}")
    if any("\n" in v for v in items):
        raise SlurmError(f"slurm.{key}: one line per list item")
    if option and not all(v.startswith("-") for v in items):
        raise SlurmError(f"slurm.{key}: every item is an sbatch option starting with '-', got {value!r}")
    return tuple(items)


def options(section: dict | None) -> Options:
    """Validate a sweep file's ``slurm:`` section; every error names its key."""
    section = section or {}
    if not isinstance(section, dict):
        raise SlurmError(f"slurm: expected a mapping with {', '.join(KEYS)}")
    unknown = sorted(set(section) - set(KEYS))
    if unknown:
        raise SlurmError(f"slurm: unknown key(s) {', '.join(map(str, unknown))}; valid: {', '.join(KEYS)}")
    kw: dict = {}
    for key in ("partition", "account", "qos"):
        if section.get(key) is not None:
            kw[key] = _word(key, section[key])
    if section.get("time") is not None:
        text = str(section["time"])
        if not TIME_RE.match(text) or text in ("0", "00:00", "00:00:00"):
            raise SlurmError(f"slurm.time: expected minutes, MM:SS, HH:MM:SS or D-HH:MM:SS, got {section['time']!r}")
        kw["time"] = text
    if section.get("mem") is not None:
        if not MEM_RE.match(str(section["mem"])):
            raise SlurmError(f"slurm.mem: expected a size such as 64G or 16000M, got {section['mem']!r}")
        kw["mem"] = str(section["mem"])
    for key, low in (("nodes", 1), ("gpus_per_node", 0), ("cpus_per_task", 1)):
        if section.get(key) is not None:
            kw[key] = _int(key, section[key], low)
    for key, low in (("wait", 0), ("poll", 0.1)):
        if section.get(key) is not None:
            kw[key] = _seconds(key, section[key], low)
    for key in ("setup", "sbatch"):
        if section.get(key) is not None:
            kw[key] = _lines(key, section[key], option=key == "sbatch")
    return Options(**kw)


def time_limit(opts: Options, timeout: float, repeats: int) -> str:
    """``--time``: the sweep file's, or (timeout + 1 minute) per repeat plus 5 minutes, as HH:MM:SS."""
    if opts.time:
        return opts.time
    minutes = math.ceil(((timeout + 60) * max(repeats, 1) + 300) / 60)
    return f"{minutes // 60:02d}:{minutes % 60:02d}:00"


def gpus(opts: Options, cfg: RunConfig) -> int:
    """GPUs per node for a point: none unless its device is gpu; then the sweep's count or 1."""
    if cfg.device != "gpu":
        return 0
    return 1 if opts.gpus_per_node is None else opts.gpus_per_node


def job_name(cfg: RunConfig) -> str:
    stem = Path(launch.log_name(cfg)).stem
    return f"bc-{cfg.framework}-{stem.rsplit('_', 1)[0]}"


def plan(
    sweep: Sweep,
    *,
    force: bool = False,
    exclude: set[Path] = frozenset(),
    weights: Callable[[RunConfig], tuple[str, str]] | None = None,
) -> tuple[list[Job], int]:
    """Jobs for every point with an incomplete log (``exclude``: logs of jobs still queued), and the
    number of repeats skipped. Repeats of a point share a job, in the sweep's order."""
    weights = weights or weights_of
    output = sweep.output.resolve()
    jobs: dict[str, Job] = {}
    known: dict[tuple[str, int], tuple[str, str]] = {}
    skipped = 0
    for cfg in sweep.runs:
        log = output / launch.log_name(cfg)
        if log in exclude or (not force and launch.is_complete(log)):
            skipped += 1
            continue
        if (cfg.size, cfg.seed) not in known:
            known[cfg.size, cfg.seed] = weights(cfg)
        path, digest = known[cfg.size, cfg.seed]
        cfg.weights = path
        name = job_name(cfg)
        jobs.setdefault(name, Job(name, [])).repeats.append(Repeat(cfg, log, {"weights_sha256": digest}))
    return list(jobs.values()), skipped


def weights_of(cfg: RunConfig) -> tuple[str, str]:
    """The shared initial weights of a (size, seed) and their sha256 (generated once, then cached)."""
    file = bert.weights_file(bert.size(cfg.size), cfg.seed)
    return str(file), bert.file_sha256(file)


def render(job: Job, opts: Options, python: str, timeout: float, slurm_dir: Path,
           benchcat_python: str = sys.executable) -> str:
    """The sbatch script of one job: header, setup lines, then start / child / finish per repeat."""
    first = job.repeats[0].cfg
    n_gpus = gpus(opts, first)
    directives = [
        f"--job-name={job.name}",
        f"--nodes={opts.nodes}",
        "--ntasks-per-node=1",
        f"--time={time_limit(opts, timeout, len(job.repeats))}",
        f"--output={slurm_dir / job.name}-%j.out",
    ]
    for key in ("partition", "account", "qos", "cpus_per_task", "mem"):
        value = getattr(opts, key)
        if value is not None:
            directives.append(f"--{key.replace('_', '-')}={value}")
    if n_gpus > 0:
        directives.append(f"--gres=gpu:{n_gpus}")
    directives.extend(opts.sbatch)
    q = shlex.quote
    lines = ["#!/bin/bash", *(f"#SBATCH {d}" for d in directives)]
    lines += [
        f"# benchcat sweep point {job.name}: {len(job.repeats)} repeat(s); written by `catalog run --launcher slurm`.",
        "set -u",
        f"cd {q(str(launch.PROJECT))}",
        *opts.setup,
        f"export PYTHONPATH={q(str(launch.PROJECT))}${{PYTHONPATH:+:$PYTHONPATH}}",
        "export PYTHONUNBUFFERED=1 TF_CPP_MIN_LOG_LEVEL=${TF_CPP_MIN_LOG_LEVEL:-2}",
        f"BENCHCAT={q(benchcat_python)}",
        "failed=0",
    ]
    srun = ["srun", f"--nodes={opts.nodes}", "--ntasks-per-node=1", "--kill-on-bad-exit=1"] if opts.nodes > 1 else []
    limit = f"{timeout:g}"
    for rep in job.repeats:
        work, err = slurm_job.work_file(rep.log), slurm_job.stderr_file(rep.log)
        config = json.dumps(rep.cfg.to_dict(), sort_keys=True)
        child = shlex.join(["timeout", "--kill-after=30", limit, *srun,
                            *launch.child_command(python, rep.cfg, work)])
        lines += [
            "",
            f"# repeat {rep.cfg.run_id} -> {rep.log}",
            f'"$BENCHCAT" -m benchcat.slurm_job start {q(str(rep.log))} --config {q(config)} --timeout {limit}'
            f" --extra {q(json.dumps(rep.extra, sort_keys=True))}",
            "started=$(date +%s.%N)",
            f"{child} > /dev/null 2> {q(str(err))}",
            f'"$BENCHCAT" -m benchcat.slurm_job finish {q(str(rep.log))} $? --started "$started"'
            f" --timeout {limit} || failed=1",
        ]
    lines += ["", 'exit "$failed"', ""]
    return "\n".join(lines)


def write_scripts(jobs: list[Job], opts: Options, python_for: Callable[[str], Path | None], timeout: float,
                  slurm_dir: Path, write: bool = True) -> None:
    """Render every job's script (and unless ``write`` is false, save it as ``slurm_dir/<job>.sbatch``)."""
    missing = sorted({j.repeats[0].cfg.framework for j in jobs if python_for(j.repeats[0].cfg.framework) is None})
    if missing:
        raise SlurmError(f"no environment for {', '.join(missing)}; create it with: "
                         + "; ".join(f"catalog env setup {name}" for name in missing))
    for job in jobs:
        python = str(python_for(job.repeats[0].cfg.framework))
        job.script = render(job, opts, python, timeout, slurm_dir)
        job.path = slurm_dir / f"{job.name}.sbatch"
        if write:
            slurm_dir.mkdir(parents=True, exist_ok=True)
            job.path.write_text(job.script, encoding="utf-8")
