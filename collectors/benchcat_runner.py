"""benchcat's own runner logs: JSON lines (header with config + machine, framework, steps, summary or failure)."""

from __future__ import annotations

import json
import statistics

from benchcat.schema import Benchmark, Config, Run, Software, System

from .base import Collector, FileContext, Observation, ParseResult, line_ranges

# summary key -> (metric name, scale)
SUMMARY_METRICS = {
    "throughput": ("throughput", 1.0),
    "step_time_ms": ("step_time", 1.0),
    "step_time_cv": ("step_time_cv", 1.0),
    "compile_time_s": ("compile_time", 1.0),
    "warmup_time_s": ("warmup_time", 1.0),
    "peak_memory_mib": ("peak_memory", 1.0),
    "host_rss_mib": ("host_rss", 1.0),
    "loss_step0": ("loss_step0", 1.0),
}


def _str(value) -> str | None:
    return None if value is None else str(value)


class BenchcatRunnerCollector(Collector):
    name = "benchcat-runner"
    version = 2
    description = "benchcat runner logs (runners/<framework>.py): JSON lines with header, steps and summary."
    signatures = ('{"benchcat_runner":',)

    def detect(self, head: str, path: str) -> bool:
        return head.lstrip().startswith('{"benchcat_runner":')

    def parse(self, text: str, ctx: FileContext) -> ParseResult:
        result = ParseResult()
        lines: list[tuple[int, dict]] = []
        for number, raw in enumerate(text.splitlines(), 1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except ValueError as exc:
                result.problems.append(ctx.problem(number, f"not a JSON line: {exc.msg}"))
                continue
            if not isinstance(obj, dict) or "kind" not in obj:
                result.problems.append(ctx.problem(number, "JSON line without a 'kind'"))
                continue
            lines.append((number, obj))
        if not lines or lines[0][1]["kind"] != "header":
            result.problems.append(ctx.problem(1, "no header line; not collected"))
            return result
        header = lines[0][1]
        by_kind: dict[str, list[tuple[int, dict]]] = {}
        for number, obj in lines[1:]:
            by_kind.setdefault(obj["kind"], []).append((number, obj))
        framework = (by_kind.get("framework") or [(None, {})])[0][1]
        try:
            obs = self._identity(header, framework)
        except (KeyError, TypeError, ValueError) as exc:
            result.problems.append(ctx.problem(1, f"header is incomplete or invalid: {exc}"))
            return result
        cfg = header["config"]
        run = self._run(cfg, by_kind, ctx, result, header)
        obs.run = run
        result.observations.append(obs)
        return result

    def _identity(self, header: dict, fw: dict) -> Observation:
        cfg, machine = header["config"], header.get("machine") or {}
        accel = (machine.get("accelerators") or [None])[0] or {}
        flags = {
            "device": cfg["device"],
            "steps": str(cfg["steps"]),
            "warmup": str(cfg["warmup"]),
            "seed": str(cfg["seed"]),
            "lr": str(cfg["lr"]),
            "weights": "bert-npz",
        }
        if cfg.get("fault"):
            flags["fault"] = cfg["fault"]
        if header.get("launcher"):
            flags["launcher"] = header["launcher"]
        if header.get("threads_per_rank"):
            flags["threads_per_rank"] = str(header["threads_per_rank"])
        for name, value in (machine.get("env") or {}).items():
            flags[f"env.{name}"] = str(value)
        other = {
            key: str(fw[key])
            for key in (
                "numpy",
                "keras",
                "threads",
                "device_target",
                "cuda_enabled",
                "cudnn_enabled",
                "mkldnn_enabled",
                "is_cuda_build",
            )
            if fw.get(key) is not None
        }
        for key in ("cann", "cuda_driver_api"):
            if accel.get(key):
                other[key] = str(accel[key])
        notes = []
        if machine.get("cpu_cores") or machine.get("ram_gib"):
            notes.append(
                f"host {machine.get('host')}: {machine.get('cpu_cores')} CPU cores, {machine.get('ram_gib')} GiB RAM"
            )
        return Observation(
            benchmark=Benchmark(model=f"bert-{cfg['size']}", task="train", seq_len=cfg["seq_len"], dataset="synthetic"),
            config=Config(
                framework=cfg["framework"],
                precision=cfg["precision"],
                batch_size=cfg["batch_size"],
                grad_accum=cfg["grad_accum"],
                compile_mode=header.get("compile_mode"),
                fused_ops=cfg["fused"],
                data_sink=False,
                sync_every_step=cfg["sync_every_step"],
                nodes=cfg.get("nodes", 1),
                devices_per_node=cfg.get("devices_per_node", 1),
                parallel_mode="data" if cfg.get("nodes", 1) * cfg.get("devices_per_node", 1) > 1 else None,
                flags=flags,
            ),
            system=System(
                name=machine.get("host"),
                accelerator=accel.get("model") or fw.get("device_name"),
                accelerator_memory_gb=accel.get("memory_gb"),
                vendor=accel.get("vendor"),
                accelerator_count=accel.get("count"),
                cpu=machine.get("cpu"),
                host=machine.get("host"),
            ),
            software=Software(
                framework_version=_str(fw.get("framework_version")),
                cuda=_str(fw.get("cuda")),
                cudnn=_str(fw.get("cudnn")),
                nccl=_str(fw.get("nccl")),
                driver=_str(accel.get("driver")),
                python=_str(fw.get("python")),
                os=machine.get("os"),
                other=other,
            ),
            run=None,  # type: ignore[arg-type] - filled in by parse()
            notes=notes,
        )

    def _run(self, cfg: dict, by_kind: dict, ctx: FileContext, result: ParseResult, header: dict) -> Run:
        run_id = str(cfg.get("run_id", "1"))
        # The harness's own commit is provenance of the run, not part of the stack under test:
        # in the identity it would turn every re-run after a code change into a new record.
        commit = (header.get("machine") or {}).get("git_commit")
        steps = by_kind.get("step", [])
        summary = by_kind.get("summary")
        failure = by_kind.get("failure")
        world = cfg.get("nodes", 1) * cfg.get("devices_per_node", 1)
        if summary and (world == 1 or not failure):  # a rank that died after another finished fails the run
            if world > 1:
                summary = self._merge_ranks(cfg, world, summary, steps, ctx, result, header)
            number, s = summary[-1]
            values = {}
            for key, (metric, scale) in SUMMARY_METRICS.items():
                value = s.get(key)
                if value is None:
                    continue
                if not isinstance(value, int | float) or (value <= 0 and metric != "step_time_cv"):
                    result.problems.append(ctx.problem(number, f"{key} {value!r} is not a positive number"))
                    continue
                values[metric] = value * scale
            cited = [n for n, obj in steps if obj.get("step", -1) >= cfg["warmup"]] + [number]
            return Run(
                run_id=run_id,
                values=values,
                method="time_window",
                warmup_skipped=cfg["warmup"],
                iterations=s.get("steps_measured"),
                source=ctx.provenance(self, line_ranges(cited), tool_version=commit),
            )
        if failure:
            number, f = failure[-1]
            errors = by_kind.get("error")
            excerpt = (errors[-1][1].get("traceback") if errors else None) or f.get("stderr_tail") or ""
            reason = f.get("reason") or "failed"
            # A failed run is a result, not a parse problem: its status, reason and excerpt say it all.
            return Run(
                run_id=run_id,
                status=f.get("status", "error"),
                reason=reason,
                excerpt=excerpt[-600:] or None,
                iterations=len(steps),
                source=ctx.provenance(self, str(number), tool_version=commit),
            )
        last = steps[-1][0] if steps else 1
        result.problems.append(ctx.problem(last, "log has no summary or failure line (run interrupted?)"))
        return Run(
            run_id=run_id,
            status="missing",
            reason=f"log ends after {len(steps)} step(s) without a summary or failure line",
            iterations=len(steps),
            source=ctx.provenance(self, str(last), tool_version=commit),
        )

    def _merge_ranks(self, cfg, world, summary, steps, ctx, result, header) -> list[tuple[int, dict]]:
        """One summary from every rank's: step times are the median across ranks per step (DLPerf's
        rule), throughput is global samples over their sum; the rest is rank 0's."""
        by_rank = {obj.get("rank", 0): (n, obj) for n, obj in summary}
        number, first = by_rank.get(0, summary[0])
        if len(by_rank) != world:
            result.problems.append(ctx.problem(number, f"{len(by_rank)} of {world} ranks wrote a summary", "warning"))
        merged = dict(first, host_rss_mib=max(obj.get("host_rss_mib") or 0 for _, obj in summary) or None)
        per_step: dict[int, list[float]] = {}
        for _, obj in steps:
            if obj.get("step", -1) >= cfg["warmup"] and isinstance(obj.get("time_s"), int | float):
                per_step.setdefault(obj["step"], []).append(obj["time_s"])
        global_batch = header.get("global_batch_size") or cfg["batch_size"] * cfg["grad_accum"] * world
        if cfg.get("sync_every_step", True) and per_step:
            counts = {len(v) for v in per_step.values()}
            if counts != {world}:
                result.problems.append(
                    ctx.problem(None, f"lines per step vary {sorted(counts)} (expected {world})", "warning")
                )
            medians = [statistics.median(per_step[k]) for k in sorted(per_step)]
            merged["throughput"] = global_batch * len(medians) / sum(medians)
            merged["step_time_ms"] = 1000 * statistics.median(medians)
            mean = statistics.fmean(medians)
            merged["step_time_cv"] = statistics.pstdev(medians) / mean if len(medians) > 1 else None
        else:  # only windows: the slowest rank's window bounds the job
            window = max(obj["window_s"] for _, obj in summary)
            merged["throughput"] = global_batch * first["steps_measured"] / window
        return [(max(n for n, _ in summary), merged)]


COLLECTOR = BenchcatRunnerCollector()
