"""The one typed record of benchcat, strict at the boundary.

A :class:`Record` is one benchmark configuration measured on one system with one software
stack, with all its repeated runs. Raw measurements are stored; derived comparisons
(speedup, efficiency, delta %) are computed when rendering and never stored here.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

SCHEMA_VERSION = 1

RunStatus = Literal["ok", "oom", "error", "segfault", "timeout", "missing"]
Method = Literal["log_speed", "time_window", "summary", "time_to_train", "table"]
Direction = Literal["higher", "lower"]


class Strict(BaseModel):
    """Base for every catalog model: unknown keys are an error, values are checked."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False)


def _sorted(value: dict) -> dict:
    """Dict fields are kept in key order, so serialised identities are canonical."""
    return dict(sorted(value.items()))


class Benchmark(Strict):
    """What was measured."""

    model: str = Field(description="Model name, normalised lower-case, e.g. bert-base, resnet50.")
    task: Literal["train", "infer"] = Field("train", description="Training or inference.")
    seq_len: int | None = Field(None, gt=0, description="Sequence length for language models.")
    image_size: int | None = Field(None, gt=0, description="Input image side in pixels.")
    dataset: str | None = Field(None, description="Dataset name, or 'synthetic'.")


class Config(Strict):
    """How it was run: every knob that changes the number."""

    framework: str = Field(description="Framework, lower-case: tensorflow, mindspore, mxnet, pytorch, ...")
    precision: str = Field("unknown", description="Numeric precision: fp32, fp16, bf16, amp, tf32, or unknown.")
    batch_size: int | None = Field(None, gt=0, description="Batch size per device.")
    grad_accum: int = Field(1, gt=0, description="Gradient accumulation steps per optimizer step.")
    compile_mode: str | None = Field(
        None, description="xla, graph, pynative, hybridize, torch.compile, eager, or null if unknown."
    )
    fused_ops: bool | None = Field(None, description="Fused optimizer / kernels enabled.")
    data_sink: bool | None = Field(None, description="MindSpore data sink or similar host-free loop.")
    sync_every_step: bool | None = Field(None, description="Host synchronises with the device each step.")
    parallel_mode: str | None = Field(None, description="data, model, pipeline, hybrid, or null.")
    nodes: int = Field(1, gt=0, description="Number of machines.")
    devices_per_node: int = Field(1, gt=0, description="Accelerators used per machine.")
    flags: dict[str, str] = Field(default_factory=dict, description="Other named settings.")

    _sort_flags = field_validator("flags")(_sorted)

    @property
    def devices(self) -> int:
        """Total devices, derived (never stored)."""
        return self.nodes * self.devices_per_node

    @property
    def topology(self) -> str:
        """DLPerf-style label such as 1n8g."""
        return f"{self.nodes}n{self.devices_per_node}g"


class System(Strict):
    """Where it ran."""

    name: str | None = Field(None, description="System name as the source gives it.")
    accelerator: str | None = Field(None, description="Accelerator model, e.g. A100-SXM4-40GB.")
    accelerator_memory_gb: float | None = Field(None, gt=0, description="Memory per accelerator (GB).")
    vendor: str | None = Field(None, description="Accelerator vendor.")
    accelerator_count: int | None = Field(None, gt=0, description="Accelerators per node on the machine.")
    cpu: str | None = Field(None, description="Host CPU model.")
    host: str | None = Field(None, description="Host name.")
    interconnect: str | None = Field(None, description="Interconnect between devices / nodes.")


class Software(Strict):
    """The software stack; unknown stays null."""

    framework_version: str | None = Field(None, description="Framework version.")
    cuda: str | None = Field(None, description="CUDA runtime version.")
    cudnn: str | None = Field(None, description="cuDNN version.")
    nccl: str | None = Field(None, description="NCCL version.")
    driver: str | None = Field(None, description="Accelerator driver version.")
    python: str | None = Field(None, description="Python version.")
    os: str | None = Field(None, description="Operating system.")
    other: dict[str, str] = Field(default_factory=dict, description="Other libraries and versions.")

    _sort_other = field_validator("other")(_sorted)


class Provenance(Strict):
    """Where a run's numbers came from."""

    root: str = Field(description="The collected root (or imported file) as given to the collector.")
    path: str = Field(description="Log path relative to the collected root, posix separators.")
    sha256: str = Field(description="sha256 of the log bytes.")
    collector: str = Field(description="Collector name.")
    collector_version: int = Field(description="Collector version.")
    lines: str = Field("", description="Line numbers the numbers came from, as ranges: '21-120,130'.")
    tool_version: str | None = Field(
        None, description="Version or commit of the tool that wrote the log (benchcat's git commit), if it says."
    )


class Run(Strict):
    """One repetition of a configuration."""

    run_id: str = Field(description="Run id as the source names it (free-form).")
    status: RunStatus = Field("ok", description="ok, oom, error, segfault, timeout or missing.")
    values: dict[str, float] = Field(
        default_factory=dict, description="Measured value per metric name (see Record.metrics)."
    )
    method: Method | None = Field(None, description="How the value was obtained.")
    warmup_skipped: int | None = Field(None, ge=0, description="Warm-up iterations skipped.")
    iterations: int | None = Field(None, ge=0, description="Iterations measured.")
    reason: str | None = Field(None, description="Why a run failed.")
    excerpt: str | None = Field(None, description="Short log excerpt around a failure.")
    source: Provenance


class MetricSummary(Strict):
    """Aggregate of one metric over the ok runs of a record."""

    unit: str = Field(description="Unit, e.g. samples/s, ms, min.")
    direction: Direction = Field(description="Whether higher or lower is better.")
    median: float | None = Field(None, description="Median over ok runs: the headline.")
    mean: float | None = Field(None, description="Mean over ok runs.")
    min: float | None = Field(None, description="Smallest value.")
    max: float | None = Field(None, description="Largest value.")
    count: int = Field(0, ge=0, description="Number of ok runs with a value.")
    cv: float | None = Field(None, description="Coefficient of variation (stdev / mean), population.")
    score: float | None = Field(None, description="A rule-specific score, e.g. MLPerf olympic mean.")
    score_rule: str | None = Field(None, description="Rule for score, e.g. 'olympic:5' (MLPerf).")
    score_note: str | None = Field(None, description="Why score is null although a rule is set.")


class Record(Strict):
    """One configuration on one system with one software stack, with all its runs."""

    id: str = Field(description="Stable id derived from the identity fields.")
    benchmark: Benchmark
    config: Config
    system: System = Field(default_factory=System)
    software: Software = Field(default_factory=Software)
    runs: list[Run] = Field(default_factory=list)
    headline: str = Field("throughput", description="Metric name shown as this record's number.")
    metrics: dict[str, MetricSummary] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list, description="Free-text notes.")


# Metric names the project knows: unit and direction.
METRICS: dict[str, tuple[str, Direction]] = {
    "throughput": ("samples/s", "higher"),
    "step_time": ("ms", "lower"),
    "time_to_train": ("min", "lower"),
    "compile_time": ("s", "lower"),
    "peak_memory": ("MiB", "lower"),
    "host_rss": ("MiB", "lower"),
    "step_time_cv": ("ratio", "lower"),
    "warmup_time": ("s", "lower"),
    "loss_step0": ("nats", "lower"),
}


def identity_json(benchmark: Benchmark, config: Config, system: System, software: Software) -> str:
    """The fields that make two measurements the same configuration, as canonical JSON."""
    return (
        f'{{"benchmark":{benchmark.model_dump_json()},"config":{config.model_dump_json()},'
        f'"software":{software.model_dump_json()},"system":{system.model_dump_json()}}}'
    )


def record_id(benchmark: Benchmark, config: Config, system: System, software: Software) -> str:
    """Stable id: readable prefix plus a hash of every identity field."""
    ident = identity_json(benchmark, config, system, software)
    return id_from_identity(ident, benchmark.model, config.framework, config.topology)


@lru_cache(maxsize=4096)
def id_from_identity(ident: str, model: str, framework: str, topology: str) -> str:
    """The id for an identity already serialised by :func:`identity_json` (cached: runs share it)."""
    digest = hashlib.sha256(ident.encode()).hexdigest()[:10]
    return f"{slug(model)}-{slug(framework)}-{topology}-{digest}"


def slug(text: str) -> str:
    out = "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")
    while "--" in out:
        out = out.replace("--", "-")
    return out or "x"


def json_schema() -> dict:
    """JSON Schema of one record."""
    schema = Record.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = f"benchcat record (schema_version {SCHEMA_VERSION})"
    return schema
