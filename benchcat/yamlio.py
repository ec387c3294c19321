"""Deterministic YAML out, safe YAML in.

The catalog is written by a small emitter for the shapes records use (dicts, lists, str,
int, float, bool, None): sorted keys, shortest round-trip floats, strings quoted whenever a
YAML 1.1 reader could take them for something else. PyYAML's pure-Python dumper takes tens of
seconds for 10,000 records; this takes well under one. Reading always goes through PyYAML's
safe loader (the libyaml one when available), so hand-edited files are read the standard way.
"""

from __future__ import annotations

import json
import re

import yaml

_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9_.\-/+@()]*(?: [A-Za-z0-9_.\-/+@()]+)*")
_RESERVED = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "nan", "inf"}
# Characters PyYAML will not accept raw, or treats as line breaks inside quotes.
_UNSAFE = re.compile("[^\x09\x0a\x0d\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _string(value: str) -> str:
    if _PLAIN.fullmatch(value) and value.lower() not in _RESERVED:
        return value
    if value.isascii() and value.isprintable() and '"' not in value and "\\" not in value:
        return f'"{value}"'
    return _UNSAFE.sub(_escape, json.dumps(value, ensure_ascii=False))


def _float(value: float) -> str:
    text = repr(value)
    if text[-1] in "nf":  # nan, inf
        raise ValueError(f"refusing to write non-finite number {value!r}")
    if "e" in text:
        mantissa, exp = text.split("e")
        if "." not in mantissa:
            mantissa += ".0"
        if exp[0] not in "+-":
            exp = "+" + exp
        text = f"{mantissa}e{exp}"
    return text


def scalar(value) -> str:
    """One scalar as YAML text that reads back as the same value and type."""
    kind = type(value)
    if kind is str:
        return _string(value)
    if kind is float:
        return _float(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if kind is int:
        return str(value)
    if isinstance(value, str):
        return _string(str(value))
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return _float(float(value))
    raise TypeError(f"cannot write {type(value).__name__} to the catalog")


_STRINGS: dict[str, str] = {}  # value -> YAML form: names, statuses, versions repeat in every record
_HEADS: dict[str, dict[str, str]] = {}  # indent -> key -> "indent key:" (keys repeat a lot)


def _emit(value, indent: str, out: list[str]) -> None:
    """Append the block form of a dict or list (never empty) to out."""
    append = out.append
    if type(value) is dict:
        heads = _HEADS.get(indent)
        if heads is None:
            heads = _HEADS[indent] = {}
        inner = indent + "  "
        for key in sorted(value):
            item = value[key]
            head = heads.get(key)
            if head is None:
                head = f"{indent}{scalar(key)}:"
                if len(heads) < 10_000:
                    heads[key] = head
            kind = type(item)
            if kind is str:
                text = _STRINGS.get(item)
                if text is None:
                    text = _string(item)
                    if len(_STRINGS) < 50_000:
                        _STRINGS[item] = text
                append(f"{head} {text}\n")
            elif kind is float:
                append(f"{head} {_float(item)}\n")
            elif (kind is dict or kind is list) and item:
                append(head + "\n")
                _emit(item, inner if kind is dict else indent, out)
            else:
                append(f"{head} {_inline(item)}\n")
    else:
        for item in value:
            kind = type(item)
            if kind is dict and item:
                start = len(out)
                _emit(item, indent + "  ", out)
                out[start] = f"{indent}- {out[start][len(indent) + 2:]}"
            elif kind is list and item:
                append(f"{indent}-\n")
                _emit(item, indent + "  ", out)
            else:
                append(f"{indent}- {_inline(item)}\n")


def _inline(value) -> str:
    if type(value) is dict:
        return "{}"
    if type(value) is list:
        return "[]"
    return scalar(value)


def dumps(document: dict) -> str:
    """A mapping as deterministic block YAML."""
    if not document:
        return "{}\n"
    out: list[str] = []
    _emit(document, "", out)
    return "".join(out)


def loads(text: str | bytes):
    """Parse YAML with the safe loader only."""
    return yaml.load(text, Loader=_SafeLoader)  # noqa: S506 - a safe loader class
