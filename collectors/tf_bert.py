"""TensorFlow BERT (tf-models) logs: absl ``model_training_utils.py:NNN] Train Step: S/T  / loss = L`` lines."""

from __future__ import annotations

from benchcat.schema import Run

from . import _scan, _time
from . import _speed as sp
from .base import Collector, FileContext, LineIndex, ParseResult, line_ranges

_LINE = _scan.at_line_start(
    _time.ABSL + r" +\d+ model_training_utils\.py:\d+\] Train Step: (?P<step>\d+)/(?P<total>\d+)"
)


class TfBertCollector(Collector):
    name = "tf-bert"
    version = 2
    description = "TensorFlow BERT (tf-models) absl 'Train Step: S/T' lines, timed between two steps."
    signatures = ("] Train Step: ",)

    def detect(self, head: str, path: str) -> bool:
        return "] Train Step: " in head and _LINE.search(_scan.padded(head)) is not None

    def parse(self, text: str, ctx: FileContext) -> ParseResult:
        info, result = sp.begin(ctx, "tensorflow")
        index = LineIndex(text)
        found = [
            (int(m["step"]), int(m["total"]), _time.absl(m), m.start()) for m in _LINE.finditer(_scan.padded(text))
        ]
        if not found:
            sp.dl.failed_run(text, ctx, self, info, result, "no 'Train Step' lines")
            return result
        if info.batch_size is None:
            sp.dl.failed_run(text, ctx, self, info, result, "batch size unknown: throughput needs batch x steps / time")
            return result
        # absl has no year: unwrap across new year (midnight is covered by the day in MMDD).
        seconds = _time.unwrap([t for _, _, t, _ in found], _time.ABSL_PERIOD)
        points: dict[int, tuple[float, int]] = {}
        for (step, _, _, pos), t in zip(found, seconds, strict=True):
            points.setdefault(step, (t, index.line(pos)))  # a repeated line keeps the first time
        total = max(t for _, t, _, _ in found)
        warmup = sp.dl.warmup_for(total)
        start = min((s for s in points if s >= warmup), default=warmup)
        timed = _time.window(points, start, total, ctx, result.problems)
        if timed is None:
            why = f"no complete time window from step {start} to {total}"
            sp.dl.failed_run(text, ctx, self, info, result, why, reported=True)
            return result
        secs, lines = timed
        devices = (info.nodes or 1) * (info.devices_per_node or 1)
        sp.truncated(text, ctx, result, index)
        run = Run(
            run_id=info.run_id or "1",
            values={"throughput": (total - start) * info.batch_size * devices / secs},
            method="time_window",
            warmup_skipped=start,
            iterations=total - start,
            source=ctx.provenance(self, line_ranges(lines)),
        )
        result.observations.append(sp.dl.observation(ctx, info, run))
        return result


COLLECTOR = TfBertCollector()
