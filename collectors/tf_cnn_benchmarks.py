"""tf_cnn_benchmarks logs: the header block (``Model:``, ``Batch size:``, ``Devices:``) and ``total images/sec: X``."""

from __future__ import annotations

import posixpath
import re

from benchcat.schema import Run

from . import _dlperf as dl
from . import _scan
from .base import Collector, FileContext, LineIndex, ParseResult

_HEADER = _scan.at_line_start(r"Batch size:\s+(?P<glob>\d+) global\s*\n\s*(?P<per>\d+) per device")
_FIELD = _scan.at_line_start(
    r"(?P<key>TensorFlow|Model|Dataset|Mode|Devices|Variables|AllReduce|Data format|Num batches):"
    r"[ \t]+(?P<value>[^\n]*?)" + _scan.EOL
)
_TOTAL = _scan.at_line_start(r"total images/sec: (?P<value>\S+)")
_PREC = re.compile(r"(?:^|[-_])(" + "|".join(dl.PRECISIONS) + r")(?:[-_]|$)")
_META = re.compile(r"^(?P<key>[^\t\n]+)\t(?P<value>[^\n]*?)\s*$", re.M)


class TfCnnCollector(Collector):
    name = "tf-cnn-benchmarks"
    version = 2
    description = "tf_cnn_benchmarks logs: header block and 'total images/sec', environment from a 'metadata' file."
    signatures = ("Model:",)

    def sidecars(self, path: str) -> list[str]:
        """Every ``metadata`` file above the log, nearest first: the nearest one found is used."""
        out, folder = [], posixpath.dirname(path)
        while True:
            out.append(posixpath.join(folder, "metadata") if folder else "metadata")
            if not folder:
                return out
            folder = posixpath.dirname(folder)

    def detect(self, head: str, path: str) -> bool:
        return "Model:" in head and _HEADER.search(_scan.padded(head)) is not None

    def parse(self, text: str, ctx: FileContext) -> ParseResult:
        result = ParseResult()
        index = LineIndex(text)
        lines = _scan.padded(text)
        fields = {m["key"]: m["value"] for m in _FIELD.finditer(lines)}
        header = _HEADER.search(lines)
        devices = len(re.findall(r"'[^']*'", fields.get("Devices", ""))) or 1
        # The header never names the precision; the run's folder does (syn-replicated-fp16-8gpus).
        prec = [m.group(1) for part in ctx.path.lower().split("/")[:-1] for m in [_PREC.search(part)] if m]
        if not prec:
            result.problems.append(ctx.problem(None, "precision is neither in the log nor in the path", "warning"))
        name = posixpath.basename(ctx.path)
        info = dl.DlperfPath(
            framework="tensorflow",
            model=dl.normalise_model(fields.get("Model", "unknown")),
            batch_size=int(header["per"]) if header else None,
            precision=prec[-1] if prec else None,
            nodes=1,
            devices_per_node=devices,
            run_id=name if name.isalnum() else "1",
        )
        totals = list(_TOTAL.finditer(lines))
        if not totals:
            dl.failed_run(text, ctx, self, info, result, "no 'total images/sec' line (run did not finish)")
            obs = result.observations[-1]
        else:
            line = index.line(totals[-1].start())
            if len(totals) > 1:
                result.problems.append(
                    ctx.problem(line, f"{len(totals)} 'total images/sec' lines; the last is used", "warning")
                )
            value = dl.checked(totals[-1]["value"], ctx, line, result.problems)
            if value is None:
                dl.failed_run(text, ctx, self, info, result, "'total images/sec' is not a usable number")
                obs = result.observations[-1]
            else:
                batches = fields.get("Num batches", "")
                run = Run(
                    run_id=info.run_id,
                    values={"throughput": value},
                    method="summary",
                    iterations=int(batches) if batches.isdigit() else None,
                    source=ctx.provenance(self, str(line)),
                )
                obs = dl.observation(ctx, info, run)
                result.observations.append(obs)
        dataset = fields.get("Dataset", "")
        obs.benchmark.dataset = "synthetic" if "(synthetic)" in dataset else (dataset.split()[0] if dataset else None)
        obs.benchmark.task = "infer" if fields.get("Mode", "training").startswith("inf") else "train"
        obs.config.parallel_mode = "data"
        obs.config.flags = {k.lower(): fields[k] for k in ("Variables", "AllReduce", "Data format") if k in fields}
        self._environment(obs, fields, ctx, result)
        return result

    def _environment(self, obs, fields: dict, ctx: FileContext, result: ParseResult) -> None:
        found = next(((p, t) for p in self.sidecars(ctx.path) if (t := ctx.sidecars.get(p)) is not None), None)
        obs.software.framework_version = fields.get("TensorFlow")
        if found is None:
            result.problems.append(ctx.problem(None, "no metadata file beside the run; environment unknown", "warning"))
            return
        meta = {m["key"].strip(): m["value"] for m in _META.finditer(found[1])}
        gpus = [v for k, v in meta.items() if re.fullmatch(r"GPU \d+", k)]
        if gpus and len(set(gpus)) == 1:
            obs.system.accelerator = gpus[0]
        elif gpus:
            obs.system.accelerator = ", ".join(sorted(set(gpus)))
        obs.system.accelerator_count = len(gpus) or None
        obs.system.cpu = meta.get("CPU")
        obs.software.framework_version = meta.get("TF") or obs.software.framework_version
        obs.software.cuda = meta["CUDA"].lstrip("Vv") if meta.get("CUDA") else None
        obs.software.python = meta.get("Python")
        if meta.get("Kernel"):
            obs.software.other = {"kernel": meta["Kernel"]}


COLLECTOR = TfCnnCollector()
