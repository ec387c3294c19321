"""DLPerf MXNet BERT logs (gluon-nlp): ``INFO:root:[step N] ... latency=X ms/batch`` from every rank."""

from __future__ import annotations

from . import _dlperf as dl
from . import _scan
from . import _speed as sp
from .base import Collector, FileContext, LineIndex, ParseResult

_LINE = _scan.at_line_start(r"INFO:root:\[step (?P<step>\d+)\][^\n]*?latency=\s*(?P<lat>[^\s,]+)\s*ms/batch")


class MxnetBertCollector(Collector):
    name = "dlperf-mxnet-bert"
    version = 2
    description = "DLPerf MXNet BERT (gluon-nlp) step lines with latency in ms/batch, one per rank."
    signatures = ("INFO:root:[step ",)

    def detect(self, head: str, path: str) -> bool:
        return "INFO:root:[step " in head and "ms/batch" in head

    def parse(self, text: str, ctx: FileContext) -> ParseResult:
        info, result = sp.begin(ctx, "mxnet")
        if info.batch_size is None:
            dl.failed_run(
                text, ctx, self, info, result, "batch size unknown: throughput cannot be computed from latency"
            )
            return result
        index = LineIndex(text)
        samples: sp.Samples = {}
        for m in _LINE.finditer(_scan.padded(text)):
            sp.add(samples, int(m["step"]), m["lat"], index.line(m.start()), ctx, result.problems, "latency")
        # Per step: the median latency across ranks, as DLPerf does; then the mean speed.
        to_speed = sp.global_speed(info, lambda ms: 1000.0 / ms)
        sp.log_speed(text, ctx, self, info, result, samples, to_speed=to_speed, what="step lines with a latency")
        return result


COLLECTOR = MxnetBertCollector()
