"""MLPerf training result logs: ``:::MLLOG {json}`` lines in ``<submitter>/results/<system>/<bench>/result_<i>.txt``."""

from __future__ import annotations

import json
import re

from benchcat.schema import Benchmark, Run

from . import _mlperf_system as msys
from .base import Collector, FileContext, LineIndex, Observation, ParseResult, excerpt, failure_in, line_ranges

_LINE = re.compile(r":::MLLOG (?P<json>[^\n]*)")
_KEYS = {"submission_benchmark", "global_batch_size", "gradient_accumulation_steps", "run_start", "run_stop"}
# Runs required per benchmark to be scored (MLPerf training rules v1.0); 5 for the others.
RUNS_REQUIRED = {"bert": 10, "rnnt": 10, "minigo": 10, "unet3d": 40}


def tree(path: str) -> tuple[list[str], str | None, str | None, str]:
    """(submitter dirs, system, benchmark, run id) from the results tree layout."""
    parts = path.split("/")
    stem = re.sub(r"\.txt$", "", parts[-1])
    run_id = stem.split("_")[-1] if "_" in stem else stem
    if "results" in parts[:-1]:
        k = len(parts) - 1 - parts[:-1][::-1].index("results") - 1
        rest = parts[k + 1 : -1]
        return parts[:k], (rest[0] if rest else None), (rest[1] if len(rest) > 1 else None), run_id
    return [], None, None, run_id


class MlperfCollector(Collector):
    name = "mlperf"
    version = 1
    description = "MLPerf training :::MLLOG result logs; time to train per run, systems JSON as environment."
    signatures = (":::MLLOG {",)

    def sidecars(self, path: str) -> list[str]:
        submitter, system, _, _ = tree(path)
        return ["/".join([*submitter, "systems", f"{system}.json"])] if system else []

    def detect(self, head: str, path: str) -> bool:
        return ":::MLLOG {" in head

    def parse(self, text: str, ctx: FileContext) -> ParseResult:
        result = ParseResult()
        _, system_name, bench_dir, run_id = tree(ctx.path)
        index = LineIndex(text)
        events: dict[str, list[tuple[dict, int, int]]] = {}
        for m in _LINE.finditer(text):
            line = index.line(m.start())
            try:
                event = json.loads(m["json"])
            except ValueError:
                result.problems.append(ctx.problem(line, "MLLOG line is not valid JSON", "warning"))
                continue
            if isinstance(event, dict) and event.get("key") in _KEYS:
                found = events.setdefault(event["key"], [])
                # Every rank may log the same event: only a different time is a second event.
                if all(e.get("time_ms") != event.get("time_ms") for e, _, _ in found):
                    found.append((event, line, m.start()))
        first = {key: found[0] for key, found in events.items()}
        benchmark = str(first["submission_benchmark"][0]["value"]) if "submission_benchmark" in first else bench_dir
        benchmark = (benchmark or "unknown").lower()
        env = msys.environment(self.sidecars(ctx.path), ctx, result.problems, system_name)
        config = env.config(first.get("global_batch_size", ({}, 0))[0].get("value"))
        if "gradient_accumulation_steps" in first:
            accum = first["gradient_accumulation_steps"][0].get("value")
            config.grad_accum = accum if isinstance(accum, int) and accum > 0 else 1
        run = self._run(text, ctx, events, run_id, result)
        need = RUNS_REQUIRED.get(benchmark, 5)
        result.observations.append(
            Observation(
                benchmark=Benchmark(model=benchmark),
                config=config,
                system=env.system,
                software=env.software,
                run=run,
                headline="time_to_train",
                score_rules={"time_to_train": f"olympic:{need}"},
                notes=env.notes,
            )
        )
        return result

    def _run(self, text: str, ctx: FileContext, events: dict, run_id: str, result: ParseResult) -> Run:
        starts, stops = events.get("run_start", []), events.get("run_stop", [])
        for key, found in (("run_start", starts), ("run_stop", stops)):
            if len(found) > 1:
                result.problems.append(
                    ctx.problem(found[1][1], f"{key} logged {len(found)} times; the first is used", "warning")
                )
        if not starts:
            return self._failed(text, ctx, run_id, result, "no run_start in the log", None, len(text))
        (start, l0, _) = starts[0]
        if not stops:
            why, end = "no run_stop: the log is truncated (killed run?)", len(text.rstrip("\n"))
            return self._failed(text, ctx, run_id, result, why, text.count("\n", 0, end) + 1, end)
        (stop, l1, at) = stops[0]
        status = str((stop.get("metadata") or {}).get("status", "success")).lower()
        if status != "success":
            return self._failed(text, ctx, run_id, result, f"run_stop status {status}", l1, at, lines=[l0, l1])
        t0, t1 = start.get("time_ms"), stop.get("time_ms")
        minutes = (t1 - t0) / 60000.0 if isinstance(t0, (int, float)) and isinstance(t1, (int, float)) else 0.0
        if not minutes > 0:
            return self._failed(text, ctx, run_id, result, "run_stop is not after run_start", l1, at, lines=[l0, l1])
        return Run(
            run_id=run_id,
            values={"time_to_train": minutes},
            method="time_to_train",
            source=ctx.provenance(self, line_ranges([l0, l1])),
        )

    def _failed(self, text, ctx, run_id, result, reason, line, at, lines=()) -> Run:
        """A run kept as failed: status from the log's failure marker if any, excerpt around ``at``."""
        found = failure_in(text)
        status, snippet = "error", excerpt(text, max(0, min(at, len(text) - 1)), after=0) or None
        if found:
            status, snippet = found[0], excerpt(text, found[1])
            reason = f"{reason}; log shows {found[0]}"
        result.problems.append(ctx.problem(line, reason))
        return Run(
            run_id=run_id,
            status=status,
            reason=reason,
            excerpt=snippet,
            source=ctx.provenance(self, line_ranges(list(lines))),
        )


COLLECTOR = MlperfCollector()
