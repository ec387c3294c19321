"""Per-step speeds -> one run, the way every DLPerf table does it (not a collector).

Collectors turn their lines into samples ``{step: [(value, line), ...]}`` (several values per
step when ranks interleave or lines repeat), then :func:`log_speed` takes the median across
ranks per step, skips the DLPerf warm-up and averages the rest.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import replace

from benchcat.schema import Run

from . import _dlperf as dl
from .base import TRUNCATED, FileContext, LineIndex, Observation, ParseResult, ends_mid_line, failure_in, line_ranges

Samples = dict[int, list[tuple[float, int]]]


def begin(ctx: FileContext, framework: str, warn: bool = True) -> tuple[dl.DlperfPath, ParseResult]:
    """What the DLPerf path says, with a default framework, and warnings for what it lacks."""
    result = ParseResult()
    info = dl.parse_path(ctx.path)
    if info.framework is None:
        info = replace(info, framework=framework)
    if warn:
        missing(ctx, info, result, "the DLPerf path")
    return info, result


def missing(ctx: FileContext, info: dl.DlperfPath, result: ParseResult, where: str) -> None:
    for name in dl.missing_fields(info):
        result.problems.append(ctx.problem(None, f"{name} not in {where}; left unknown", "warning"))


def log_wins(info: dl.DlperfPath, said: dict, ctx: FileContext, result: ParseResult) -> dl.DlperfPath:
    """Settings the log states ({field: (value, line)}) replace the path's; a disagreement is reported."""
    for name, (value, line) in said.items():
        old = getattr(info, name)
        if old is not None and old != value:
            result.problems.append(
                ctx.problem(line, f"path says {name}={old} but the log says {value}; the log wins", "warning")
            )
    return replace(info, **{name: value for name, (value, _) in said.items()})


def add(samples: Samples, step: int, value_text: str, line: int, ctx: FileContext, problems: list, what: str):
    """Check one logged number and file it under its step."""
    try:
        value = float(value_text)
    except ValueError:
        value = -1.0
    # The common case inline (NaN and inf fail the comparison); anything else is reported by checked().
    if not 0.0 < value <= dl.MAX_THROUGHPUT:
        value = dl.checked(value_text, ctx, line, problems, what)
        if value is None:
            return
    found = samples.get(step)
    if found is None:
        samples[step] = [(value, line)]
    else:
        found.append((value, line))


def truncated(text: str, ctx: FileContext, result: ParseResult, index: LineIndex | None = None) -> None:
    if ends_mid_line(text):
        count = index.count if index else text.count("\n") + 1
        result.problems.append(ctx.problem(count, TRUNCATED, "warning"))


def log_speed(
    text: str,
    ctx: FileContext,
    collector,
    info: dl.DlperfPath,
    result: ParseResult,
    samples: Samples,
    *,
    base: int = 0,
    last: int | None = None,
    to_speed: Callable[[float], float] = float,
    devices: int | None = None,
    what: str = "speed lines",
    **bench,
) -> Observation | None:
    """One run from the samples, or a failed run; ``base`` is the first step's number (0 or 1).

    ``to_speed`` turns the per-step median (a speed, or a step time) into samples/s.
    ``devices`` is how many ranks should log each step, when every rank logs. ``last`` is the
    run's last step when the samples are keyed by where an interval starts.
    """
    if not samples:
        dl.failed_run(text, ctx, collector, info, result, f"no {what}")
        return None
    last = max(samples) if last is None else last
    warmup = dl.warmup_for(last)
    kept = [s for s in sorted(samples) if s >= warmup + base]
    if not kept:
        dl.failed_run(text, ctx, collector, info, result, f"only warm-up steps (last step {last}, warm-up {warmup})")
        return None
    counts = {len(samples[s]) for s in kept}
    if len(counts) > 1 or (devices and devices > 1 and counts != {devices}):
        result.problems.append(
            ctx.problem(
                None,
                f"lines per step vary {sorted(counts)} (expected {devices or 1}): ranks missing or repeated",
                "warning",
            )
        )
    lines = [n for s in kept for _, n in samples[s]]
    died_after(text, ctx, result, max(lines))
    speeds = [to_speed(statistics.median(v for v, _ in samples[s])) for s in kept]
    truncated(text, ctx, result)
    run = Run(
        run_id=info.run_id or "1",
        values={"throughput": sum(speeds) / len(speeds)},
        method="log_speed",
        warmup_skipped=warmup,
        iterations=len(kept),
        source=ctx.provenance(collector, line_ranges(lines)),
    )
    obs = dl.observation(ctx, info, run, **bench)
    result.observations.append(obs)
    return obs


def epoch_offsets(pairs: list[tuple[int, int]], zero_based: bool) -> dict[int, int]:
    """Where each epoch's steps start when step numbers restart every epoch.

    ``pairs`` are (epoch, step in epoch). An epoch counts as long as its highest step (+1 when
    steps count from 0), so the global step is ``offsets[epoch] + step``.
    """
    length: dict[int, int] = {}
    for epoch, step in pairs:
        length[epoch] = max(step + zero_based, length.get(epoch, 0))
    offsets, total = {}, 0
    for epoch in sorted(length):
        offsets[epoch] = total
        total += length[epoch]
    return offsets


def global_speed(info: dl.DlperfPath, per_device: Callable[[float], float]) -> Callable[[float], float]:
    """Per-device rate -> job throughput: x batch per device x devices."""
    devices = (info.nodes or 1) * (info.devices_per_node or 1)
    return lambda x: per_device(x) * (info.batch_size or 0) * devices


def died_after(text: str, ctx: FileContext, result: ParseResult, last_line: int) -> None:
    """The run measured, then crashed (OOM, seg fault): keep the number, say so."""
    start = max(0, len(text) - 65536)  # a crash message is at the end; never scan a whole big log
    found = failure_in(text[start:])
    if found and found[0] in ("oom", "segfault"):
        line = text.count("\n", 0, start + found[1]) + 1
        if line > last_line:
            result.problems.append(ctx.problem(line, f"run died ({found[0]}) after its last measurement", "warning"))
