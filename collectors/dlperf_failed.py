"""DLPerf-layout logs that hold a failure (OOM, seg fault, error) instead of any speed line."""

from __future__ import annotations

from . import _dlperf as dl
from .base import Collector, FileContext, ParseResult, failure_in


class DlperfFailedCollector(Collector):
    name = "dlperf-failed"
    version = 2
    description = "A log in a DLPerf tree (<fw>/<model>/[bz<B>/]<N>n<G>g/<...>_<run>.log) that shows a failure."
    priority = 1000  # only when no format collector recognised the file

    def detect(self, head: str, path: str) -> bool:
        info = dl.parse_path(path)
        return info.nodes is not None and info.framework is not None and failure_in(head) is not None

    def parse(self, text: str, ctx: FileContext) -> ParseResult:
        result = ParseResult()
        dl.failed_run(text, ctx, self, dl.parse_path(ctx.path), result, "no speed lines")
        return result


COLLECTOR = DlperfFailedCollector()
