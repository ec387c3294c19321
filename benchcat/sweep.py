"""``catalog run``: a sweep file -> one child-process run per matrix point and repeat -> logs -> catalog.

A sweep file (YAML)::

    output: logs              # log tree, relative to the sweep file (DLPerf layout)
    matrix:                   # every combination is run; a scalar is a one-value list
      framework: [tensorflow, mindspore, mxnet, pytorch]
      size: [tiny]
      batch_size: [8]
      seq_len: [64]
      precision: [fp32]
      compile: ["off", "on"]  # off/on or a framework's own mode name (xla, graph, hybridize, ...)
      grad_accum: [1]
    exclude:                  # drop combinations matching every key of an entry
      - {framework: mindspore, compile: "off"}
    settings: {steps: 30, warmup: 10, repeats: 3, timeout: 600, device: cpu}

Runs whose log is already complete (a summary or a failure line) are skipped, so an
interrupted sweep resumes where it stopped. Frameworks are never imported here.
"""

from __future__ import annotations

import itertools
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from runners import bert, envinfo, launch
from runners.common import RunConfig

from . import envs

MATRIX_KEYS = ("framework", "size", "batch_size", "seq_len", "precision", "compile", "grad_accum", "fused",
               "sync_every_step", "device", "nodes", "devices_per_node")
SETTING_KEYS = ("steps", "warmup", "repeats", "timeout", "device", "seed", "lr", "fused", "sync_every_step", "fault")
TOP_KEYS = ("output", "matrix", "exclude", "settings", "slurm")  # slurm: see benchcat.slurm


class SweepError(ValueError):
    pass


@dataclass
class Sweep:
    output: Path
    runs: list[RunConfig]
    timeout: float = 600
    slurm: dict | None = None  # the raw `slurm:` section; benchcat.slurm.options validates it


@dataclass
class SweepReport:
    output: Path
    total: int = 0
    skipped: int = 0
    statuses: Counter = field(default_factory=Counter)
    seconds: float = 0.0
    failed: list[str] = field(default_factory=list)


def _as_list(value) -> list:
    return list(value) if isinstance(value, list | tuple) else [value]


def load(path: str | Path) -> Sweep:
    """Parse and expand a sweep file; every error names the offending key."""
    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise SweepError(f"{path}: {exc}") from exc
    if not isinstance(doc, dict):
        raise SweepError(f"{path}: a sweep file is a mapping with {', '.join(TOP_KEYS)}")
    for name, allowed in (("", TOP_KEYS), ("matrix", MATRIX_KEYS), ("settings", SETTING_KEYS)):
        section = doc if not name else doc.get(name) or {}
        unknown = sorted(set(section) - set(allowed))
        if unknown:
            where = f"{name}: " if name else ""
            raise SweepError(f"{path}: {where}unknown key(s) {', '.join(unknown)}; valid: {', '.join(allowed)}")
    output = path.parent / str(doc.get("output", "logs"))
    settings = dict(doc.get("settings") or {})
    return Sweep(output=output, runs=expand(doc.get("matrix") or {}, settings, doc.get("exclude") or []),
                 timeout=float(settings.get("timeout", 600)), slurm=doc.get("slurm"))


def expand(matrix: dict, settings: dict, exclude: list[dict]) -> list[RunConfig]:
    """Every matrix combination (minus exclusions) times ``repeats``, in a stable order."""
    if "framework" not in matrix:
        raise SweepError("matrix: 'framework' is required")
    keys = [k for k in MATRIX_KEYS if k in matrix]
    repeats = int(settings.get("repeats", 1))
    fixed = {k: v for k, v in settings.items() if k not in ("repeats", "timeout")}
    runs = []
    for combo in itertools.product(*(_as_list(matrix[k]) for k in keys)):
        point = dict(zip(keys, combo, strict=True))
        if any(all(point.get(k) == v for k, v in rule.items()) for rule in exclude):
            continue
        for repeat in range(1, repeats + 1):
            try:
                runs.append(RunConfig.from_dict({**fixed, **point, "run_id": str(repeat)}))
            except (TypeError, ValueError) as exc:
                raise SweepError(f"matrix point {point}: {exc}") from exc
    return runs


def run(
    sweep: Sweep,
    *,
    force: bool = False,
    python_for: Callable[[str], Path | None] = envs.python,
    progress: Callable[[int, int], None] | None = None,
    say: Callable[[str], None] = lambda _line: None,
) -> SweepReport:
    """Run every point whose log is not complete yet; each repeat in its own child process."""
    report = SweepReport(output=sweep.output, total=len(sweep.runs))
    pending = [c for c in sweep.runs if force or not launch.is_complete(sweep.output / launch.log_name(c))]
    missing = sorted({c.framework for c in pending if python_for(c.framework) is None})
    if missing:
        raise SweepError(
            f"no environment for {', '.join(missing)}; create it with: "
            + "; ".join(f"catalog env setup {name}" for name in missing)
        )
    machine = envinfo.capture()
    weights: dict[tuple[str, int], tuple[str, str]] = {}
    start = time.monotonic()
    for done, cfg in enumerate(sweep.runs):
        if progress:
            progress(done, report.total)
        log = sweep.output / launch.log_name(cfg)
        if not force and launch.is_complete(log):
            report.skipped += 1
            continue
        key = (cfg.size, cfg.seed)
        if key not in weights:
            file = bert.weights_file(bert.size(cfg.size), cfg.seed)
            weights[key] = (str(file), bert.file_sha256(file))
        cfg.weights = weights[key][0]
        status = launch.run_one(cfg, str(python_for(cfg.framework)), log, sweep.timeout, machine,
                                extra={"weights_sha256": weights[key][1]})
        report.statuses[status] += 1
        if status != "ok":
            report.failed.append(f"{log.relative_to(sweep.output)}: {status}")
        say(f"{status:8} {log.relative_to(sweep.output)}")
    if progress:
        progress(report.total, report.total)
    report.seconds = time.monotonic() - start
    return report
