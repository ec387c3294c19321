"""MindSpore TimeMonitor logs with data sink: ``epoch time: X ms, per step time: Y ms`` after BERT/ResNet step lines."""

from __future__ import annotations

import re
from dataclasses import replace

from . import _speed as sp
from .base import Collector, FileContext, LineIndex, ParseResult

_MONITOR = re.compile(r"epoch time: (?P<epoch>\S+) ms, per step time: (?P<step>[^\s,]+) ms")
_BERT = re.compile(r"epoch: \d+, current epoch percent: \S+, step: \d+, outputs are")
_RESNET = re.compile(r"epoch: \d+ step: \d+, loss is")


class MindsporeCollector(Collector):
    name = "mindspore-timemonitor"
    version = 2
    description = "MindSpore TimeMonitor (epoch time / per step time, data sink) with BERT or ResNet step lines."
    signatures = ("per step time:",)

    def detect(self, head: str, path: str) -> bool:
        return "per step time:" in head and (_BERT.search(head) is not None or _RESNET.search(head) is not None)

    def parse(self, text: str, ctx: FileContext) -> ParseResult:
        info, result = sp.begin(ctx, "mindspore")
        if info.model is None:
            info = replace(info, model="bert" if _BERT.search(text) else "resnet50")
        index = LineIndex(text)
        samples: sp.Samples = {}
        first = 0
        for m in _MONITOR.finditer(text):
            line = index.line(m.start())
            epoch_ms = sp.dl.checked(m["epoch"], ctx, line, result.problems, "epoch time")
            step_ms = sp.dl.checked(m["step"], ctx, line, result.problems, "per step time")
            if epoch_ms is None or step_ms is None:
                continue
            # One "epoch" is one data-sink loop of N steps; N = epoch time / per step time.
            # Each loop is filed under its first step so the warm-up rule counts steps.
            sp.add(samples, first, m["step"], line, ctx, result.problems, "per step time")
            first += max(1, round(epoch_ms / step_ms))
        if info.batch_size is None:
            sp.dl.failed_run(text, ctx, self, info, result, "batch size unknown: throughput needs it")
            return result
        obs = sp.log_speed(
            text,
            ctx,
            self,
            info,
            result,
            samples,
            last=first,
            to_speed=sp.global_speed(info, lambda ms: 1000.0 / ms),
            what="TimeMonitor lines",
        )
        if obs is not None:
            obs.config.data_sink = True
        return result


COLLECTOR = MindsporeCollector()
