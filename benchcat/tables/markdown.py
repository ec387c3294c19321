"""Finding result tables in a markdown (or pasted) document, with line numbers and context.

Two shapes are read: GitHub pipe tables (``| a | b |`` rows, a ``|---|`` separator; a header
row that is all blank means the first body row is the real header), and whitespace tables
pasted from a rendered page (a header of known column names such as ``node_num gpu_num
samples/s speedup`` followed by rows of as many numbers). The prose between tables is kept as
the table's context: ``batch_size = 64`` or a lone ``FP16`` there says something about it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_SEPARATOR = re.compile(r"\s*:?-{2,}:?\s*")
_SPLIT = re.compile(r"(?<!\\)\|")
_NUMBERISH = re.compile(r"[\d.,]+(?:\([^)]*\))?|OOM\*?|-")


@dataclass
class Table:
    """One table: header cells, body rows with their line numbers, and the prose before it."""

    index: int
    header: list[str]
    header_line: int
    rows: list[tuple[int, list[str]]]
    context: list[tuple[int, str]] = field(default_factory=list)
    shape: str = "pipe"

    @property
    def name(self) -> str:
        return f"table-{self.index}"


def _cells(line: str) -> list[str]:
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [c.strip().replace("\\|", "|") for c in _SPLIT.split(inner)]


def _pipe_table(block: list[tuple[int, str]]) -> tuple[list[str], int, list[tuple[int, list[str]]]]:
    rows = [(n, _cells(text)) for n, text in block]
    sep = next((i for i, (_, cells) in enumerate(rows) if cells and all(_SEPARATOR.fullmatch(c) for c in cells)), None)
    if sep is None:
        head, body = rows[0], rows[1:]
    else:
        head = rows[sep - 1] if sep > 0 else (rows[0][0], [])
        body = rows[sep + 1 :]
    header_line, header = head
    if not any(header) and body:  # a blank header row: the first body row is the header
        header_line, header = body[0]
        body = body[1:]
    width = len(header)
    body = [(n, (cells + [""] * width)[:width]) for n, cells in body]
    return header, header_line, body


def find_tables(text: str, header_word) -> list[Table]:
    """Every table in ``text``; ``header_word(word)`` says whether a word can head a pasted column."""
    lines = text.splitlines()
    tables: list[Table] = []
    context: list[tuple[int, str]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.strip().startswith("|"):
            block = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                block.append((i + 1, lines[i]))
                i += 1
            header, header_line, rows = _pipe_table(block)
            tables.append(Table(len(tables) + 1, header, header_line, rows, context))
            context = []
            continue
        words = line.split()
        if len(words) >= 2 and all(header_word(w) for w in words):
            rows = []
            j = i + 1
            while j < len(lines):
                cells = lines[j].split()
                if len(cells) != len(words) or not all(_NUMBERISH.fullmatch(c) for c in cells):
                    break
                rows.append((j + 1, cells))
                j += 1
            if rows:
                tables.append(Table(len(tables) + 1, words, i + 1, rows, context, "text"))
                context = []
                i = j
                continue
        if line.strip():
            context.append((i + 1, line.strip()))
        i += 1
    return tables
