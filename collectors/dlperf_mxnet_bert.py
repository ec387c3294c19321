"""DLPerf MXNet BERT logs (gluon-nlp): ``INFO:root:[step N] ... latency=X ms/batch`` from every rank."""

from __future__ import annotations

import re
import statistics

from benchcat.schema import Run

from . import _dlperf as dl
from .base import Collector, FileContext, LineIndex, ParseResult, line_ranges

_LINE = re.compile(r"^INFO:root:\[step (?P<step>\d+)\][^\n]*?latency=\s*(?P<lat>[^\s,]+)\s*ms/batch", re.M)


class MxnetBertCollector(Collector):
    name = "dlperf-mxnet-bert"
    version = 1
    description = "DLPerf MXNet BERT (gluon-nlp) step lines with latency in ms/batch, one per rank."
    signatures = ("INFO:root:[step ",)

    def detect(self, head: str, path: str) -> bool:
        return "INFO:root:[step " in head and "ms/batch" in head

    def parse(self, text: str, ctx: FileContext) -> ParseResult:
        result = ParseResult()
        info = dl.parse_path(ctx.path)
        if info.framework is None:
            info = dl.DlperfPath(**{**info.__dict__, "framework": "mxnet"})
        for name in dl.missing_fields(info):
            result.problems.append(ctx.problem(None, f"{name} not in the DLPerf path; left unknown", "warning"))
        if info.batch_size is None:
            dl.failed_run(
                text, ctx, self, info, result, "batch size unknown: throughput cannot be computed from latency"
            )
            return result
        index = LineIndex(text)
        per_step: dict[int, list[float]] = {}
        lines: dict[int, list[int]] = {}
        for m in _LINE.finditer(text):
            line = index.line(m.start())
            latency = dl.checked(m.group("lat"), ctx, line, result.problems, "latency")
            if latency is None:
                continue
            step = int(m.group("step"))
            per_step.setdefault(step, []).append(latency)
            lines.setdefault(step, []).append(line)
        if not per_step:
            dl.failed_run(text, ctx, self, info, result, "no step lines with a latency")
            return result
        last = max(per_step)
        warmup = dl.warmup_for(last)
        devices = (info.nodes or 1) * (info.devices_per_node or 1)
        kept = [s for s in sorted(per_step) if s >= warmup]
        if not kept:
            dl.failed_run(text, ctx, self, info, result, f"only warm-up steps (last step {last}, warm-up {warmup})")
            return result
        ranks = {len(per_step[s]) for s in kept}
        if len(ranks) > 1:
            result.problems.append(
                ctx.problem(
                    None, f"steps have different rank counts {sorted(ranks)}: a rank stopped logging?", "warning"
                )
            )
        # Per step: the median latency across ranks, as DLPerf does; then the mean speed.
        speeds = [1000.0 / statistics.median(per_step[s]) * info.batch_size * devices for s in kept]
        if text and not text.endswith("\n"):
            result.problems.append(ctx.problem(index.count, "log ends mid-line (truncated run?)", "warning"))
        run = Run(
            run_id=info.run_id or "1",
            values={"throughput": sum(speeds) / len(speeds)},
            method="log_speed",
            warmup_skipped=warmup,
            iterations=len(kept),
            source=ctx.provenance(self, line_ranges([n for s in kept for n in lines[s]])),
        )
        result.observations.append(dl.observation(ctx, info, run))
        return result


COLLECTOR = MxnetBertCollector()
