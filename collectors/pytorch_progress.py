"""PyTorch examples ProgressMeter logs, all ranks interleaved: ``Epoch: [E][ i/N]  Time  0.403 ( 2.123)``."""

from __future__ import annotations

import re

from . import _speed as sp
from .base import Collector, FileContext, LineIndex, ParseResult

_LINE = re.compile(r"Epoch: \[(?P<epoch>\d+)\]\[\s*(?P<i>\d+)/\s*(?P<n>\d+)\]\s+Time\s+(?P<time>\S+) \(\s*\S+\)")


class ProgressMeterCollector(Collector):
    name = "pytorch-progress"
    version = 2
    description = "PyTorch examples ProgressMeter lines (Epoch: [E][i/N] Time val (avg)), every rank in one file."
    signatures = ("Epoch: [",)

    def detect(self, head: str, path: str) -> bool:
        return _LINE.search(head) is not None and "Data " in head

    def parse(self, text: str, ctx: FileContext) -> ParseResult:
        info, result = sp.begin(ctx, "pytorch")
        index = LineIndex(text)
        samples: sp.Samples = {}
        for m in _LINE.finditer(text):
            # Global iteration: the epoch's batches (N) before this one, plus the 0-based index.
            step = int(m["epoch"]) * int(m["n"]) + int(m["i"])
            sp.add(samples, step, m["time"], index.line(m.start()), ctx, result.problems, "step time")
        if info.batch_size is None:
            sp.dl.failed_run(text, ctx, self, info, result, "batch size unknown: throughput needs batch / step time")
            return result
        devices = (info.nodes or 1) * (info.devices_per_node or 1)
        # Median step time across ranks per iteration, then batch x devices / time.
        to_speed = sp.global_speed(info, lambda t: 1.0 / t)
        sp.log_speed(
            text, ctx, self, info, result, samples, to_speed=to_speed, devices=devices, what="ProgressMeter lines"
        )
        return result


COLLECTOR = ProgressMeterCollector()
