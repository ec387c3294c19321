"""One flat vocabulary of record fields, shared by user format specs and table imports.

Users name fields flatly (``model``, ``precision``, ``accelerator``, ``cuda``, ``flags.impl``)
instead of by their place in the record; this module turns a flat dict of such fields into
the record's identity parts and normalises the values people write (``TF`` -> tensorflow,
``FP16`` -> fp16, ``8xA100_80GB_SXM4`` -> 8 x A100 80GB SXM4).
"""

from __future__ import annotations

import re
from typing import Any

from .schema import Benchmark, Config, Software, System

# field name -> (section, attribute). System.name is called "system" here.
SECTIONS = {"benchmark": Benchmark, "config": Config, "system": System, "software": Software}
FIELDS: dict[str, tuple[str, str]] = {}
for _section, _model in SECTIONS.items():
    for _attr, _info in _model.model_fields.items():
        if _attr in ("flags", "other"):
            continue
        FIELDS["system" if (_section, _attr) == ("system", "name") else _attr] = (_section, _attr)
# Derived fields: 'gpus' is the total device count, 'hardware' a label like 8xA100_80GB.
DERIVED = {"gpus", "hardware"}
ALIASES = {
    "n_gpu": "gpus",
    "gpu_num": "gpus",
    "num_gpus": "gpus",
    "node_num": "nodes",
    "n_nodes": "nodes",
    "batch": "batch_size",
    "bs": "batch_size",
    "seq_length": "seq_len",
    "seqlen": "seq_len",
    "accum": "grad_accum",
    "gradient_accumulation": "grad_accum",
}

FRAMEWORKS = {
    "tensorflow": "tensorflow",
    "tf": "tensorflow",
    "tf2": "tensorflow",
    "mindspore": "mindspore",
    "ms": "mindspore",
    "mxnet": "mxnet",
    "pytorch": "pytorch",
    "torch": "pytorch",
    "paddle": "paddlepaddle",
    "paddlepaddle": "paddlepaddle",
    "oneflow": "oneflow",
    "jax": "jax",
}
PRECISIONS = {"fp32": "fp32", "fp16": "fp16", "bf16": "bf16", "amp": "amp", "tf32": "tf32", "float32": "fp32",
              "float16": "fp16", "bfloat16": "bf16", "mixed": "amp"}  # fmt: skip
_HARDWARE = re.compile(r"\s*(\d+)\s*[xX×]\s*(.+?)\s*")


def canonical(name: str) -> str | None:
    """The field a user-facing name means, or None when it is not a field."""
    name = ALIASES.get(name, name)
    if name in FIELDS or name in DERIVED or name.startswith(("flags.", "other.")) and len(name) > 6:
        return name
    return None


def valid_names() -> str:
    return ", ".join(sorted([*FIELDS, *DERIVED, "flags.<name>", "other.<name>"]))


def normalise(name: str, value: Any) -> Any:
    """A value as the catalog stores it (lower-case framework and precision, slug model)."""
    if value is None or not isinstance(value, str):
        return value
    text = value.strip()
    if name == "framework":
        return FRAMEWORKS.get(text.lower(), text.lower())
    if name == "precision":
        return PRECISIONS.get(text.lower(), text.lower())
    if name == "model":
        return re.sub(r"[_\s]+", "-", text.lower())
    return text


def hardware(label: str) -> dict[str, Any]:
    """'8xA100_80GB_SXM4' -> {accelerator_count: 8, accelerator: 'A100 80GB SXM4'}."""
    m = _HARDWARE.fullmatch(label)
    if not m:
        return {"accelerator": label.replace("_", " ").strip()}
    return {"accelerator_count": int(m.group(1)), "accelerator": m.group(2).replace("_", " ").strip()}


def expand(flat: dict[str, Any]) -> dict[str, Any]:
    """Aliases resolved, derived fields ('hardware', 'gpus') replaced by real ones, values normalised."""
    out: dict[str, Any] = {}
    for key, value in flat.items():
        name = canonical(key) or key
        if name == "hardware" and isinstance(value, str):
            for k, v in hardware(value).items():
                out.setdefault(k, v)
            out.setdefault("system", value)
        else:
            out[name] = normalise(name, value)
    if "gpus" in out:
        gpus = int(out.pop("gpus"))
        nodes = int(out.get("nodes") or 1)
        if gpus % nodes:
            raise ValueError(f"{gpus} devices do not divide over {nodes} nodes")
        out["devices_per_node"] = gpus // nodes
    return out


def build(flat: dict[str, Any]) -> tuple[Benchmark, Config, System, Software]:
    """The identity parts of a record from flat fields; ValueError says what is missing or bad."""
    parts: dict[str, dict[str, Any]] = {s: {} for s in SECTIONS}
    for key, value in expand(flat).items():
        if value is None:
            continue
        if key.startswith("flags."):
            parts["config"].setdefault("flags", {})[key[6:]] = str(value)
        elif key.startswith("other."):
            parts["software"].setdefault("other", {})[key[6:]] = str(value)
        elif key in FIELDS:
            section, attr = FIELDS[key]
            parts[section][attr] = value
        else:
            raise ValueError(f"unknown field {key!r}; valid: {valid_names()}")
    for need, section in (("model", "benchmark"), ("framework", "config")):
        if need not in parts[section]:
            raise ValueError(f"no {need}: say it in the path, the log, or the static fields")
    try:
        return (
            Benchmark(**parts["benchmark"]),
            Config(**parts["config"]),
            System(**parts["system"]),
            Software(**parts["software"]),
        )
    except Exception as exc:  # pydantic says which field and why
        raise ValueError(str(exc).replace("\n", " ")) from exc


def _tokens(text: str) -> set[str]:
    words = re.findall(r"[a-z0-9]+", str(text).lower())
    return {w for w in words if w not in {"nvidia", "tesla", "gpu"}}


def agrees(name: str, label: Any, actual: Any) -> bool:
    """Whether a label (a folder or file name) is consistent with what a log says.

    Accelerator names agree when every word of the label appears in the log's name
    ('A100 SXM4' vs 'NVIDIA A100-SXM4-80GB'); other fields compare normalised values.
    """
    if name in ("accelerator", "system"):
        return _tokens(label) <= _tokens(actual)
    return str(normalise(name, label)).lower() == str(normalise(name, actual)).lower()
