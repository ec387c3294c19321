"""Shared rules of the DLPerf convention (not a collector itself).

Layout ``<framework>/<model>/bz<B>/<N>n<G>g/<model>_b<B>_<precision>_<run>.log``; older
trees have no ``bz<B>/`` level. Each file is one run; warm-up is the first 20 of 120
iterations, or the first 100 of 200/600.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

from benchcat.fields import FRAMEWORKS
from benchcat.schema import Benchmark, Config, Run

from .base import TRUNCATED, FileContext, LineIndex, Observation, ParseResult, ends_mid_line, excerpt, failure_in

PRECISIONS = ("fp32", "fp16", "bf16", "amp", "tf32")
_TOPOLOGY = re.compile(r"(\d+)n(\d+)g")
_BZ = re.compile(r"bz(\d+)")
_FILE_BATCH = re.compile(r"(?:^|_)bs?(\d+)(?:_|$)")
_FILE_PREC = re.compile(r"(?:^|_)(" + "|".join(PRECISIONS) + r")(?:_|$)")
_RUN_ID = re.compile(r"_([A-Za-z0-9]+)$")

# Plausible throughput bounds (samples/s): outside them a number is a parse problem.
MAX_THROUGHPUT = 1e8


@dataclass(frozen=True)
class DlperfPath:
    framework: str | None = None
    model: str | None = None
    batch_size: int | None = None
    precision: str | None = None
    nodes: int | None = None
    devices_per_node: int | None = None
    run_id: str | None = None


def normalise_model(name: str) -> str:
    return re.sub(r"[_\s]+", "-", name.strip().lower())


def parse_path(path: str) -> DlperfPath:
    """Everything the DLPerf tree layout says about one log file."""
    directory, _, name = path.rpartition("/")
    if not name:
        return DlperfPath()
    stem = re.sub(r"\.(log|txt|out)$", "", name, flags=re.I)
    framework, model, batch, nodes, gpus = _dir_info(directory)
    if batch is None:
        m = _FILE_BATCH.search(stem)
        batch = int(m.group(1)) if m else None
    m = _FILE_PREC.search(stem.lower())
    precision = m.group(1) if m else None
    m = _RUN_ID.search(stem)
    run_id = m.group(1) if m else None
    if run_id is not None and precision == run_id.lower():
        run_id = None
    return DlperfPath(framework, model, batch, precision, nodes, gpus, run_id)


@lru_cache(maxsize=4096)
def _dir_info(directory: str) -> tuple:
    """What the folders say (framework, model, batch, nodes, devices); shared by a folder's runs."""
    dirs = [p for p in directory.split("/") if p]
    nodes = gpus = batch = None
    topo_at = None
    for i, part in enumerate(dirs):
        m = _TOPOLOGY.fullmatch(part)
        if m:
            nodes, gpus, topo_at = int(m.group(1)), int(m.group(2)), i
        m = _BZ.fullmatch(part)
        if m:
            batch = int(m.group(1))
    framework = model = None
    for i, part in enumerate(dirs):
        if part.lower() in FRAMEWORKS:
            framework = FRAMEWORKS[part.lower()]
            rest = [p for p in dirs[i + 1 :] if not _BZ.fullmatch(p) and not _TOPOLOGY.fullmatch(p)]
            if rest:
                model = normalise_model(rest[0])
            break
    if model is None and topo_at is not None:
        above = [p for p in dirs[:topo_at] if not _BZ.fullmatch(p)]
        if above:
            model = normalise_model(above[-1])
    return framework, model, batch, nodes, gpus


def warmup_for(last_step: int) -> int:
    """DLPerf's warm-up rule: 20 of 120 iterations, 100 of 200 or more."""
    return 20 if last_step <= 120 else 100


def checked(value_text: str, ctx: FileContext, line: int, problems: list, what: str = "throughput"):
    """A number from a log, or None with a problem when it is NaN, negative or absurd."""
    try:
        value = float(value_text)
    except ValueError:
        problems.append(ctx.problem(line, f"{what} {value_text!r} is not a number"))
        return None
    if not math.isfinite(value):
        problems.append(ctx.problem(line, f"{what} is {value_text} (not a finite number)"))
        return None
    if value <= 0:
        problems.append(ctx.problem(line, f"{what} {value_text} is not positive"))
        return None
    if value > MAX_THROUGHPUT:
        problems.append(ctx.problem(line, f"{what} {value_text} is implausibly large"))
        return None
    return value


def observation(ctx: FileContext, info: DlperfPath, run: Run, **bench) -> Observation:
    config = Config(
        framework=info.framework or "unknown",
        precision=info.precision or "unknown",
        batch_size=info.batch_size,
        nodes=info.nodes or 1,
        devices_per_node=info.devices_per_node or 1,
    )
    return Observation(benchmark=Benchmark(model=info.model or "unknown", **bench), config=config, run=run)


def failed_run(
    text: str, ctx: FileContext, collector, info: DlperfPath, result: ParseResult, why: str, reported: bool = False
) -> None:
    """No usable number: keep the run as failed with its reason and a log excerpt.

    ``reported``: the caller already added the problem (at its line); do not add a second one.
    """
    found = failure_in(text)
    if found:
        status, offset = found
        reason = f"{why}; log shows {status}"
        snippet = excerpt(text, offset)
        line = text.count("\n", 0, offset) + 1
    else:
        # Nothing says why: point at where the log stops, and say if it stops mid-line.
        status, reason, snippet, line = "error", why, text[-400:] or None, LineIndex(text).count or None
        if ends_mid_line(text):
            reason += f"; {TRUNCATED}"
    if not reported:
        result.problems.append(ctx.problem(line, reason))
    run = Run(
        run_id=info.run_id or "1",
        status=status,
        reason=reason,
        excerpt=snippet,
        source=ctx.provenance(collector),
    )
    result.observations.append(observation(ctx, info, run))


def missing_fields(info: DlperfPath) -> list[str]:
    return [name for name in ("framework", "model", "batch_size", "nodes") if getattr(info, name) is None]
