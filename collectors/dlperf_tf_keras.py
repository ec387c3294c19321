"""DLPerf TensorFlow 2 Keras logs: absl-prefixed ``TimeHistory: ... examples/second between steps A and B``."""

from __future__ import annotations

import re

from benchcat.schema import Run

from . import _dlperf as dl
from . import _speed as sp
from .base import Collector, FileContext, LineIndex, ParseResult, line_ranges

_LINE = re.compile(
    r"TimeHistory: (?P<secs>\S+) seconds, (?P<speed>\S+) examples/second between steps (?P<a>\d+) and (?P<b>\d+)"
)


class TfKerasCollector(Collector):
    name = "dlperf-tf-keras"
    version = 2
    description = "DLPerf TensorFlow 2 Keras TimeHistory lines (examples/second between steps A and B)."
    signatures = ("TimeHistory:",)

    def detect(self, head: str, path: str) -> bool:
        return "TimeHistory:" in head and "examples/second between steps" in head

    def parse(self, text: str, ctx: FileContext) -> ParseResult:
        result = ParseResult()
        info = dl.parse_path(ctx.path)
        if info.framework is None:
            info = dl.DlperfPath(**{**info.__dict__, "framework": "tensorflow"})
        for name in dl.missing_fields(info):
            result.problems.append(ctx.problem(None, f"{name} not in the DLPerf path; left unknown", "warning"))
        index = LineIndex(text)
        windows: dict[tuple[int, int], tuple[str, int]] = {}
        for m in _LINE.finditer(text):
            key = (int(m.group("a")), int(m.group("b")))
            # TF prints the same message twice (python logging and absl): keep the first.
            windows.setdefault(key, (m.group("speed"), index.line(m.start())))
        if not windows:
            dl.failed_run(text, ctx, self, info, result, "no TimeHistory lines")
            return result
        last = max(b for _, b in windows)
        warmup = dl.warmup_for(last)
        speeds, lines, iterations = [], [], 0
        for (a, b), (speed_text, line) in sorted(windows.items()):
            if a < warmup:
                continue
            value = dl.checked(speed_text, ctx, line, result.problems)
            if value is not None:
                speeds.append(value)
                lines.append(line)
                iterations += b - a
        if not speeds:
            dl.failed_run(
                text, ctx, self, info, result, f"no valid speed after the {warmup} warm-up steps (last step {last})"
            )
            return result
        sp.truncated(text, ctx, result, index)
        run = Run(
            run_id=info.run_id or "1",
            values={"throughput": sum(speeds) / len(speeds)},
            method="log_speed",
            warmup_skipped=warmup,
            iterations=iterations,
            source=ctx.provenance(self, line_ranges(lines)),
        )
        result.observations.append(dl.observation(ctx, info, run))
        return result


COLLECTOR = TfKerasCollector()
