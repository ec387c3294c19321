"""The grammar of hand-written result tables: cells, column headers, row fields, context facts.

Cells: ``255``, ``**480**``, ``OOM``, ``OOM*`` (footnote mark), ``error``,
``[seg fault](link)``, ``176(-20%)`` (a stated delta), ``80(0.85)`` (a stated scaling
efficiency), ``98/222s`` (throughput / compile time), and empty.
Headers: hardware + framework + flags + unit, joined by ``+`` or ``,``, the unit optionally in
brackets: ``A100+tf+xla+fp16(example/sec)``, ``TF+fp16+xla, V100, samples/sec``. A word the
grammar does not know is returned as unknown, to be asked about, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .. import fields
from ..formats.spec import RATE_UNITS, TIME_UNITS

FAILURES = {
    "oom": "oom",
    "out of memory": "oom",
    "seg fault": "segfault",
    "segfault": "segfault",
    "segmentation fault": "segfault",
    "error": "error",
    "failed": "error",
    "fail": "error",
    "crash": "error",
    "nan": "error",
    "timeout": "timeout",
    "hang": "timeout",
}
EMPTY = {"", "-", "—", "–", "n/a", "na", "none", "/"}
DERIVED = {"speedup", "speed-up", "speed_up", "scaling", "scalability", "efficiency", "ratio"}
LABEL_COLUMNS = {"configuration", "config", "setup", "system", "hardware", "label", "name"}
ENV_COLUMNS = {"env", "environment", "software", "versions", "version", "notes", "note", "comment", "comments"}
COMPILE = {"xla": "xla", "graph": "graph", "eager": "eager", "pynative": "pynative", "hybridize": "hybridize",
           "torch.compile": "torch.compile", "jit": "jit"}  # fmt: skip
_ACCEL = re.compile(
    r"(?:nvidia\s*|tesla\s*)*((?:[ahvtpkl]\d{1,3}[a-z]?|l40s?|mi\d{3}x?|ascend\s*910[ab]?|gaudi\d?)"
    r"(?:[-\s](?:sxm\d?|pcie|nvl|\d+\s*gb))*)",
    re.I,
)
_COUNTED = re.compile(r"(\d+)\s*[x×]\s*(.+)", re.I)
_NUMBER = r"[+-]?\d[\d,]*(?:\.\d+)?|[+-]?\.\d+"
_VALUE = re.compile(rf"({_NUMBER})")
_DELTA = re.compile(rf"({_NUMBER})\s*\(\s*({_NUMBER})\s*%\s*\)")
_EFFICIENCY = re.compile(rf"({_NUMBER})\s*\(\s*({_NUMBER})\s*\)")
_COMPILE_TIME = re.compile(rf"({_NUMBER})\s*/\s*({_NUMBER})\s*(s|sec|min|ms)")
_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]*)[^)]*\)")
_MARKS = re.compile(r"(?:\s*(?:†|‡|§|\[\^\w+\]|[¹²³⁴⁵⁶⁷⁸⁹⁰]+))+$")
_STARS = re.compile(r"\s*\*+$")
_PAIR = re.compile(r"([A-Za-z][\w .-]*?)\s*[=:]\s*([^\s,;]+)")


def number(text: str) -> float:
    return float(text.replace(",", ""))


@dataclass
class Cell:
    """What one measurement cell says."""

    kind: str  # value, failed, empty, unknown
    text: str
    value: float | None = None
    status: str | None = None
    link: str | None = None
    delta: float | None = None
    efficiency: float | None = None
    compile_time: float | None = None
    marks: str = ""


def strip_emphasis(text: str) -> str:
    text = text.strip()
    for mark in ("**", "__", "*", "_", "`"):
        if len(text) > 2 * len(mark) and text.startswith(mark) and text.endswith(mark):
            text = text[len(mark) : -len(mark)].strip()
    return text


def parse_cell(raw: str) -> Cell:
    """One measurement cell; ``unknown`` when the grammar cannot read it."""
    text, marks = raw.strip(), ""
    for pattern in (_MARKS, _STARS):  # '**OOM**¹': the ¹ first, then the bold; 'OOM*': a star after
        text = strip_emphasis(text)
        m = pattern.search(text)
        if m and m.start() > 0:
            marks, text = m.group().strip() + marks, text[: m.start()]
    text = strip_emphasis(text)
    link = None
    m = _LINK.fullmatch(text)
    if m:
        text, link = strip_emphasis(m.group(1)), m.group(2)
    lower = text.lower()
    if lower in EMPTY:
        return Cell("empty", raw, link=link, marks=marks)
    if lower in FAILURES:
        return Cell("failed", raw, status=FAILURES[lower], link=link, marks=marks)
    if m := _DELTA.fullmatch(text):
        return Cell("value", raw, number(m.group(1)), delta=number(m.group(2)), link=link, marks=marks)
    if m := _EFFICIENCY.fullmatch(text):
        return Cell("value", raw, number(m.group(1)), efficiency=number(m.group(2)), link=link, marks=marks)
    if m := _COMPILE_TIME.fullmatch(text):
        seconds = number(m.group(2)) * {"s": 1, "sec": 1, "min": 60, "ms": 0.001}[m.group(3).lower()]
        return Cell("value", raw, number(m.group(1)), compile_time=seconds, link=link, marks=marks)
    if _VALUE.fullmatch(text):
        return Cell("value", raw, number(text), link=link, marks=marks)
    return Cell("unknown", raw, link=link, marks=marks)


def unit_of(text: str) -> str | None:
    """The unit a header part names, normalised, or None."""
    t = text.strip().lower().replace(" ", "")
    if t in RATE_UNITS or t in {"samples/second", "images/second"}:
        return t
    return t if t in TIME_UNITS and t not in ("sec",) else None


def token_fields(token: str) -> dict[str, Any] | None:
    """The fields one header or label word means, or None when the grammar does not know it."""
    t = token.strip()
    lower = t.lower()
    if lower in fields.FRAMEWORKS:
        return {"framework": fields.FRAMEWORKS[lower]}
    if lower in fields.PRECISIONS:
        return {"precision": fields.PRECISIONS[lower]}
    if lower in COMPILE:
        return {"compile_mode": COMPILE[lower]}
    m = _COUNTED.fullmatch(t)
    if m and _ACCEL.fullmatch(m.group(2)):
        return {"accelerator": m.group(2), "accelerator_count": int(m.group(1)), "vendor": _vendor(m.group(2))}
    if _ACCEL.fullmatch(t):
        return {"accelerator": t, "vendor": _vendor(t)}
    return None


def _vendor(accel: str) -> str:
    lower = accel.lower()
    if lower.startswith("mi"):
        return "amd"
    if lower.startswith("ascend"):
        return "huawei"
    if lower.startswith("gaudi"):
        return "intel"
    return "nvidia"


@dataclass
class Header:
    """A measurement header: the fields it states, its unit, and the words nobody knows."""

    text: str
    fields: dict[str, Any] = field(default_factory=dict)
    unit: str | None = None
    unknown: list[str] = field(default_factory=list)


def split_words(text: str) -> list[str]:
    """``TF+fp16+xla, V100`` -> TF, fp16, xla, V100; a part of several words is tried whole first."""
    words = []
    for part in re.split(r"[,+;&]", text):
        part = part.strip()
        if not part:
            continue
        if token_fields(part) is not None or unit_of(part) is not None:
            words.append(part)
        else:
            words.extend(part.split())
    return words


def parse_header(text: str) -> Header:
    header = Header(text)
    body = strip_emphasis(text)
    m = re.fullmatch(r"(.*?)\s*\(([^()]*)\)\s*", body)
    if m and unit_of(m.group(2)):
        body, header.unit = m.group(1), unit_of(m.group(2))
    for word in split_words(body):
        unit = unit_of(word)
        if unit:
            header.unit = unit
            continue
        known = token_fields(word)
        if known is None:
            header.unknown.append(word)
        else:
            header.fields.update(known)
    return header


def column_kind(text: str) -> str:
    """row (a row field such as batch_size), label, env, derived, or measure."""
    name = re.sub(r"[\s-]+", "_", strip_emphasis(text).lower())
    if fields.canonical(name) in fields.FIELDS or fields.canonical(name) in fields.DERIVED:
        return "row"
    if name in LABEL_COLUMNS:
        return "label"
    if name in ENV_COLUMNS:
        return "env"
    if name in DERIVED:
        return "derived"
    return "measure"


def row_field(text: str) -> str:
    return fields.canonical(re.sub(r"[\s-]+", "_", strip_emphasis(text).lower())) or text


def env_fields(text: str) -> dict[str, str]:
    """``cuda=11.1, mindspore=1.7`` -> software fields; other names (frameworks too) go to software.other."""
    out: dict[str, str] = {}
    for key, value in _PAIR.findall(text):
        key = key.strip().lower()
        out[key if key in ("cuda", "cudnn", "nccl", "driver", "python", "os") else f"other.{key}"] = value
    return out


_INTS = ("batch_size", "seq_len", "grad_accum", "nodes", "gpus", "devices_per_node", "accelerator_count")


def context_facts(lines: list[str]) -> dict[str, Any]:
    """Facts the prose above a table states, in a form nobody writes by accident.

    ``batch_size=seq_len=128`` and ``Batch size = 64 & W/O xla`` (numbers), ``cuda: 10.2`` or
    ``model: bert-base`` (a known field name, a colon or =, a value), and a short title line
    naming exactly one precision (``BERT-base FP16``).
    """
    facts: dict[str, Any] = {}
    for line in lines:
        text = line.lstrip("-*#> ").strip()
        chain = re.fullmatch(r"((?:[A-Za-z][\w ]*?\s*=\s*)+)(\d+)\b.*", text)
        if chain:
            for key in re.split(r"\s*=\s*", chain.group(1)):
                name = row_field(key) if key else None
                if name in _INTS:
                    facts[name] = int(chain.group(2))
            continue
        pair = re.fullmatch(r"`?([A-Za-z][\w.]*)`?\s*[:=]\s*`?([^`]+?)`?\.?", text)
        name = row_field(pair.group(1)) if pair else None
        if pair and (name in fields.FIELDS or name.startswith(("flags.", "other.")) or name == "unit"):
            value = pair.group(2).strip()
            facts[name] = int(value) if name in _INTS and value.isdigit() else fields.normalise(name, value)
            continue
        words = {w.lower() for w in re.findall(r"[A-Za-z0-9]+", text)}
        precisions = {fields.PRECISIONS[w] for w in words if w in fields.PRECISIONS}
        if len(precisions) == 1 and len(words) <= 3:  # a short title like "BERT-base FP16"
            facts["precision"] = precisions.pop()
    return facts
