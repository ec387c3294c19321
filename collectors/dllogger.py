"""NVIDIA DLLogger logs, stdout form (``DLL <datetime> - ...``) and JSON form (``DLLL {...}``)."""

from __future__ import annotations

import json
import re

from benchcat.schema import Run

from . import _scan
from . import _speed as sp
from .base import Collector, FileContext, LineIndex, ParseResult

_STDOUT = _scan.at_line_start(r"DLL \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ - ")
_JSON = _scan.at_line_start(r"DLLL (?P<json>\{[^\n]*\})" + _scan.EOL)
_ITER = re.compile(
    r"\nDLL \S+ \S+ - (?:Epoch: (\d+) )?Iteration: (\d+) [^\n]*?(?<![\w.])"
    r"([\w.]*(?:total_ips|throughput|_per_second|_per_sec)) : ([^\s]+)"
)
_OTHER = _scan.at_line_start(r"DLL \S+ \S+ - (?P<kind>PARAMETER|METADATA|Summary:) (?P<rest>[^\n]*)")
_PAIR = re.compile(r"(?P<key>[\w.]+) : (?P<value>\S+)")
_SPEED_KEYS = ("total_ips", "throughput", "_per_second", "_per_sec")
_TRUE = {"true", "1", "yes"}


def _speed_key(data: dict) -> str | None:
    for key in data:
        name = key.lower()
        if not name.startswith(("val", "eval", "test")) and name.endswith(_SPEED_KEYS):
            return key
    return None


class DlloggerCollector(Collector):
    name = "dllogger"
    version = 2
    description = (
        "NVIDIA DLLogger stdout (DLL ...) and JSON (DLLL {...}) logs: PARAMETER config, Summary or iterations."
    )
    signatures = ("DLL ", "DLLL {")

    def detect(self, head: str, path: str) -> bool:
        head = _scan.padded(head)
        return _STDOUT.search(head) is not None or _JSON.search(head) is not None

    def parse(self, text: str, ctx: FileContext) -> ParseResult:
        info, result = sp.begin(ctx, "unknown", warn=False)
        index = LineIndex(text)
        params: dict = {}
        summary: tuple[str, int] | None = None
        samples: sp.Samples = {}
        seen: dict[tuple, int] = {}
        for kind, step, data, line in self._entries(text, index, ctx, result):
            if kind == "param":
                for key, value in data.items():
                    params.setdefault(key, (value, line))
            elif (key := _speed_key(data)) is not None:
                if kind == "summary":
                    summary = (str(data[key]), line)
                elif step not in seen:  # a repeated line (same epoch and iteration) counts once
                    seen[step] = len(seen) + 1
                    sp.add(samples, seen[step], str(data[key]), line, ctx, result.problems, key)
        info = sp.log_wins(info, self._config(info, params), ctx, result)
        sp.missing(ctx, info, result, "the PARAMETER lines or the DLPerf path")
        if summary is not None:
            value = sp.dl.checked(summary[0], ctx, summary[1], result.problems)
            if value is not None:
                sp.truncated(text, ctx, result, index)
                run = Run(
                    run_id=info.run_id or "1",
                    values={"throughput": value},
                    method="summary",
                    source=ctx.provenance(self, str(summary[1])),
                )
                result.observations.append(sp.dl.observation(ctx, info, run))
                return result
        sp.log_speed(text, ctx, self, info, result, samples, base=1, what="Summary or iteration lines with a speed")
        return result

    def _entries(self, text: str, index: LineIndex, ctx: FileContext, result: ParseResult):
        """(kind, step, data, line) for each entry, kind being param, summary or iter."""
        # Iteration lines are most of a log: one regex takes the step and the speed at once.
        lines = _scan.padded(text)
        for m in _ITER.finditer(lines):
            epoch, it, key, value = m.group(1, 2, 3, 4)
            yield "iter", (epoch, int(it)), {key: value}, index.line(m.start())
        for m in _OTHER.finditer(lines):
            data = {p["key"]: p["value"] for p in _PAIR.finditer(m["rest"])}
            yield ("summary" if m["kind"] == "Summary:" else "param"), None, data, index.line(m.start())
        for m in _JSON.finditer(lines):
            line = index.line(m.start())
            try:
                entry = json.loads(m["json"])
            except ValueError:
                result.problems.append(ctx.problem(line, "DLLL line is not valid JSON"))
                continue
            step, data = entry.get("step"), entry.get("data") or {}
            if not isinstance(data, dict):
                continue
            if entry.get("type") == "METADATA" or step == "PARAMETER":
                yield "param", None, data, line
            elif step == [] or step == "":
                yield "summary", None, data, line
            else:
                yield "iter", json.dumps(step), data, line

    def _config(self, info, params: dict) -> dict:
        """batch_size, amp / precision, world_size and the model from the PARAMETER entries, with lines."""
        said: dict = {}

        def get(*keys):
            return next(
                ((str(params[k][0]), params[k][1]) for k in keys if params.get(k, ("",))[0] not in ("", None)),
                ("", None),
            )

        batch, line = get("batch_size")
        if batch.isdigit():
            said["batch_size"] = (int(batch), line)
        amp, line = get("amp")
        if amp:
            said["precision"] = ("amp" if amp.lower() in _TRUE else "fp32", line)
        elif (precision := get("precision"))[0]:
            said["precision"] = (precision[0].lower(), precision[1])
        world, line = get("world_size", "gpus")
        if world.isdigit():
            said["devices_per_node"] = (max(1, int(world) // (info.nodes or 1)), line)
            said["nodes"] = (info.nodes or 1, line)
        model, line = get("arch", "model", "model_name")
        if model:
            said["model"] = (sp.dl.normalise_model(model), line)
        return said


COLLECTOR = DlloggerCollector()
