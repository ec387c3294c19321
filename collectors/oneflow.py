"""OneFlow benchmark logs: ``step: N, total_loss: ..., throughput: X [unix time]`` with ``key = value`` config lines."""

from __future__ import annotations

from . import _scan
from . import _speed as sp
from .base import Collector, FileContext, LineIndex, ParseResult

_LINE = _scan.at_line_start(
    r"step: (?P<step>\d+), total_loss: [^\n]*?throughput: (?P<speed>[^\s,]+)(?: \d+(?:\.\d+)?)?" + _scan.EOL
)
_ARG = _scan.at_line_start(r"(?P<key>[a-z_0-9]+) = (?P<value>[^\n]*?)" + _scan.EOL)
_TRUE = {"true", "1", "yes"}


class OneflowCollector(Collector):
    name = "oneflow"
    version = 2
    description = "OneFlow benchmark step lines with throughput, config from 'key = value' argument lines."
    signatures = ("total_loss:",)

    def detect(self, head: str, path: str) -> bool:
        return "total_loss:" in head and _LINE.search(_scan.padded(head)) is not None

    def parse(self, text: str, ctx: FileContext) -> ParseResult:
        info, result = sp.begin(ctx, "oneflow")
        index = LineIndex(text)
        args = {}
        lines = _scan.padded(text)
        for m in _ARG.finditer(lines):
            args.setdefault(m["key"], (m["value"].strip("'\""), index.line(m.start())))
        info = self._config(info, args, ctx, result)
        samples: sp.Samples = {}
        for m in _LINE.finditer(lines):
            sp.add(samples, int(m["step"]), m["speed"], index.line(m.start()), ctx, result.problems, "throughput")
        # The printed throughput is the job's (batch per device x devices / interval time).
        obs = sp.log_speed(text, ctx, self, info, result, samples, what="step lines with a throughput")
        if obs is not None and "seq_length" in args and args["seq_length"][0].isdigit():
            obs.benchmark.seq_len = int(args["seq_length"][0])
        return result

    def _config(self, info, args: dict, ctx: FileContext, result: ParseResult):
        """The log's own settings win over the path; a disagreement is reported."""
        said = {}
        for key, field in (
            ("batch_size_per_device", "batch_size"),
            ("gpu_num_per_node", "devices_per_node"),
            ("node_num", "nodes"),
            ("num_nodes", "nodes"),
        ):
            if key in args and args[key][0].isdigit():
                said[field] = (int(args[key][0]), args[key][1])
        if "use_fp16" in args:
            said["precision"] = ("fp16" if args["use_fp16"][0].lower() in _TRUE else "fp32", args["use_fp16"][1])
        if "model" in args and info.model is None:
            said["model"] = (sp.dl.normalise_model(args["model"][0]), args["model"][1])
        return sp.log_wins(info, said, ctx, result)


COLLECTOR = OneflowCollector()
