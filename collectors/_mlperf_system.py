"""The environment of an MLPerf submission, from ``<submitter>/systems/<system>.json`` (not a collector)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from benchcat.schema import Config, Software, System

from ._dlperf import FRAMEWORKS

_EMPTY = {"", "n/a", "na", "none", "-"}
_STACK = {"cuda_version": "cuda", "cudnn_version": "cudnn", "nccl_version": "nccl", "cuda_driver_version": "driver"}
_VERSION = re.compile(r"v?(\d+(?:\.\d+)*\S*)")


def _text(doc: dict, key: str) -> str | None:
    value = doc.get(key)
    if value is None or isinstance(value, (dict, list)):
        return None
    value = str(value).strip()
    return None if value.lower() in _EMPTY else value


def _int(doc: dict, key: str) -> int | None:
    value = _text(doc, key)
    return int(value) if value and value.isdigit() and int(value) > 0 else None


@dataclass
class Environment:
    system: System = field(default_factory=System)
    software: Software = field(default_factory=Software)
    framework: str = "unknown"
    nodes: int = 1
    per_node: int = 1
    notes: list[str] = field(default_factory=list)

    def config(self, global_batch) -> Config:
        devices = self.nodes * self.per_node
        flags = {}
        batch = None
        if isinstance(global_batch, int) and global_batch > 0:
            flags["global_batch_size"] = str(global_batch)
            batch = global_batch // devices if global_batch % devices == 0 else None
        return Config(
            framework=self.framework,
            batch_size=batch,
            nodes=self.nodes,
            devices_per_node=self.per_node,
            parallel_mode="data",
            flags=flags,
        )


def environment(paths: list[str], ctx, problems: list, system_name: str | None) -> Environment:
    """Everything the systems JSON says; unknown stays null, a missing file is a warning."""
    env = Environment(system=System(name=system_name))
    raw = ctx.sidecars.get(paths[0]) if paths else None
    if raw is None:
        problems.append(
            ctx.problem(None, f"systems file {paths[0] if paths else '?'} not found; environment unknown", "warning")
        )
        return env
    try:
        doc = json.loads(raw)
    except ValueError as exc:
        problems.append(ctx.problem(None, f"systems file {paths[0]} is not valid JSON: {exc}"))
        return env
    memory = re.match(r"\s*(\d+(?:\.\d+)?)\s*GB", _text(doc, "accelerator_memory_capacity") or "", re.I)
    env.system = System(
        name=_text(doc, "system_name") or system_name,
        accelerator=_text(doc, "accelerator_model_name"),
        accelerator_memory_gb=float(memory.group(1)) if memory else None,
        accelerator_count=_int(doc, "accelerators_per_node"),
        cpu=_text(doc, "host_processor_model_name"),
        interconnect=_text(doc, "accelerator_interconnect"),
    )
    env.nodes = _int(doc, "number_of_nodes") or 1
    env.per_node = _int(doc, "accelerators_per_node") or 1
    software = Software(os=_text(doc, "operating_system"), python=_text(doc, "python_version"))
    stack = doc.get("other_software_stack")
    for item in stack if isinstance(stack, list) else [stack]:
        if isinstance(item, dict):
            for key, value in item.items():
                if key in _STACK:
                    setattr(software, _STACK[key], str(value))
                elif _text(item, key):
                    software.other[key] = str(value)
        elif isinstance(item, str) and item.strip().lower() not in _EMPTY:
            software.other["stack"] = item.strip()
    named = [part.strip() for part in (_text(doc, "framework") or "").split(",") if part.strip()]
    if len(named) == 1:
        words = named[0].split()
        known = [FRAMEWORKS[w.lower()] for w in words if w.lower() in FRAMEWORKS]
        if known:
            env.framework = known[0]
            version = [w for w in words if _VERSION.fullmatch(w)]
            software.framework_version = _VERSION.fullmatch(version[0]).group(1) if version else None
    elif named:
        # Several frameworks for one system (one per benchmark): the JSON cannot say which.
        software.other["frameworks"] = ", ".join(named)
        env.notes.append("framework not known: the systems file lists several")
    env.software = software
    return env
