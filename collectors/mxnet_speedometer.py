"""MXNet Speedometer logs (gluon-cv, NGC MXNet): ``Epoch[E] Batch [B]\\tSpeed: X samples/sec``."""

from __future__ import annotations

import re

from . import _speed as sp
from .base import Collector, FileContext, LineIndex, ParseResult

_LINE = re.compile(r"Epoch\[(?P<epoch>\d+)\] Batch \[(?P<batch>\d+)\]\s+Speed: (?P<speed>\S+) samples/sec")


class SpeedometerCollector(Collector):
    name = "mxnet-speedometer"
    version = 2
    description = "MXNet Speedometer lines (Epoch[E] Batch [B] Speed: X samples/sec), DLPerf path for config."
    signatures = ("samples/sec",)

    def detect(self, head: str, path: str) -> bool:
        return _LINE.search(head) is not None

    def parse(self, text: str, ctx: FileContext) -> ParseResult:
        info, result = sp.begin(ctx, "mxnet")
        index = LineIndex(text)
        # Batch numbers restart every epoch: the global step adds the batches of earlier epochs.
        # The speed is the job's (one kvstore process per job); lines repeated for the same
        # batch (duplicates, several workers) count once each through the per-step median.
        raw = [(int(m["epoch"]), int(m["batch"]), m["speed"], m.start()) for m in _LINE.finditer(text)]
        offsets = sp.epoch_offsets([(epoch, batch) for epoch, batch, _, _ in raw], zero_based=False)
        samples: sp.Samples = {}
        for epoch, batch, speed, pos in raw:
            sp.add(samples, offsets[epoch] + batch, speed, index.line(pos), ctx, result.problems, "speed")
        # A line at batch B reports the batches before it: the one at the warm-up boundary is warm-up.
        sp.log_speed(text, ctx, self, info, result, samples, base=1, what="Speedometer lines")
        return result


COLLECTOR = SpeedometerCollector()
