"""PaddlePaddle logs: BERT ``step: N, ... speed: X steps/s`` and ResNet ``[Pass P, train batch B] ... elapse X sec``."""

from __future__ import annotations

import re
from dataclasses import replace

from . import _speed as sp
from .base import Collector, FileContext, LineIndex, ParseResult

_BERT = re.compile(r"epoch: \d+, progress: [^\n]*?step: (?P<step>\d+), [^\n]*?speed: (?P<speed>\S+) steps/s")
_RESNET = re.compile(r"\[Pass (?P<pass>\d+), train batch (?P<batch>\d+)\][^\n]*?elapse (?P<elapse>\S+) sec")


class PaddleCollector(Collector):
    name = "paddle"
    version = 2
    description = "PaddlePaddle BERT (speed: X steps/s) and ResNet (elapse X sec) lines, DLPerf path for config."
    signatures = ("steps/s", "elapse ")

    def detect(self, head: str, path: str) -> bool:
        return _BERT.search(head) is not None or _RESNET.search(head) is not None

    def parse(self, text: str, ctx: FileContext) -> ParseResult:
        info, result = sp.begin(ctx, "paddlepaddle")
        index = LineIndex(text)
        samples: sp.Samples = {}
        bert = _BERT.search(text) is not None
        if bert:
            for m in _BERT.finditer(text):
                sp.add(samples, int(m["step"]), m["speed"], index.line(m.start()), ctx, result.problems, "speed")
            base, per_device = 1, float  # steps/s of one trainer (one per device)
        else:
            found = [(int(m["pass"]), int(m["batch"]), m["elapse"], m.start()) for m in _RESNET.finditer(text)]
            offset = sp.epoch_offsets([(p, b) for p, b, _, _ in found], zero_based=True)
            for p, b, elapse, pos in found:
                sp.add(samples, offset[p] + b, elapse, index.line(pos), ctx, result.problems, "batch time")
            base, per_device = 0, (lambda t: 1.0 / t)  # seconds per batch
        if info.model is None:
            info = replace(info, model="bert" if bert else "resnet50")
        if info.batch_size is None:
            sp.dl.failed_run(text, ctx, self, info, result, "batch size unknown: throughput needs it")
            return result
        sp.log_speed(text, ctx, self, info, result, samples, base=base, to_speed=sp.global_speed(info, per_device))
        return result


COLLECTOR = PaddleCollector()
