"""The collector contract: pure text in, observations and problems out.

A collector module lives in ``collectors/<name>.py`` and defines one subclass of
:class:`Collector` named in a module-level ``COLLECTOR``. It must set ``name`` (unique),
``version`` (bump when its output for the same log changes; it invalidates caches) and
``description`` (one line naming the format it reads), ``signatures`` (literal strings
one of which every file of the format contains: the cheap pre-check before ``detect``),
optionally ``priority`` (lower is tried first; only catch-alls need it), and implement:

- ``detect(head, path)``: True when ``head`` (the first bytes of the file, decoded) is in
  its format. Detection is by content, never by file extension.
- ``parse(text, ctx)``: every observation (one run each, with its identity) and every
  problem found. It must be pure: no file access, no clock, no randomness, no framework
  import. Files it needs beside the log (a ``metadata`` file, a ``systems/*.json``) are
  named by ``sidecars(path)`` and arrive already read in ``ctx.sidecars``.

A parse never raises for bad input: it reports a :class:`Problem` naming the line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from benchcat.schema import Benchmark, Config, Provenance, Run, Software, System


@dataclass(frozen=True)
class Problem:
    """Something wrong with an input, at a file and (when known) a line."""

    path: str
    line: int | None
    message: str
    level: Literal["error", "warning"] = "error"

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.level}: {self.message}"

    def to_dict(self) -> dict:
        return {"path": self.path, "line": self.line, "message": self.message, "level": self.level}


@dataclass(frozen=True)
class FileContext:
    """What a collector knows about the file besides its text."""

    root: str
    path: str
    sha256: str
    sidecars: dict[str, str | None] = field(default_factory=dict)

    def provenance(self, collector: Collector, lines: str = "", tool_version: str | None = None) -> Provenance:
        return Provenance(
            root=self.root,
            path=self.path,
            sha256=self.sha256,
            collector=collector.name,
            collector_version=collector.version,
            lines=lines,
            tool_version=tool_version,
        )

    def problem(self, line: int | None, message: str, level: str = "error") -> Problem:
        return Problem(self.path, line, message, level)  # type: ignore[arg-type]


@dataclass
class Observation:
    """One run together with the identity of the configuration it belongs to."""

    benchmark: Benchmark
    config: Config
    run: Run
    system: System = field(default_factory=System)
    software: Software = field(default_factory=Software)
    notes: list[str] = field(default_factory=list)
    headline: str = "throughput"
    score_rules: dict[str, str] = field(default_factory=dict)


@dataclass
class ParseResult:
    observations: list[Observation] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


class Collector:
    """Base class; see the module docstring for the contract."""

    name: str = ""
    version: int = 1
    description: str = ""
    # Detection tries collectors by (priority, name): a catch-all goes last with a high number.
    priority: int = 100
    # Literal strings of which at least one occurs in every file of the format. detect() is only
    # called when the head contains one, so a miss costs a C substring scan, not a regex pass.
    # Empty: detect() is always called (catch-alls, user specs).
    signatures: tuple[str, ...] = ()

    def sidecars(self, path: str) -> list[str]:
        """Paths (relative to the collected root) of extra files this log needs."""
        return []

    def detect(self, head: str, path: str) -> bool:
        raise NotImplementedError

    def parse(self, text: str, ctx: FileContext) -> ParseResult:
        raise NotImplementedError


TRUNCATED = "log ends mid-line (truncated run?)"


def ends_mid_line(text: str) -> bool:
    """The last line has no newline: whatever wrote the log was stopped mid-write."""
    return bool(text) and not text.endswith("\n")


class LineIndex:
    """Offset -> 1-based line number.

    Counts newlines between the last offset asked and the next one (``str.count`` runs in C),
    so asking in text order costs one pass over the text and nothing per line that no match
    needs; asking backwards counts back over the distance.
    """

    def __init__(self, text: str):
        self._text = text
        self._offset = 0
        self._line = 1

    def line(self, offset: int) -> int:
        if offset >= self._offset:
            self._line += self._text.count("\n", self._offset, offset)
        else:
            self._line -= self._text.count("\n", offset, self._offset)
        self._offset = offset
        return self._line

    @property
    def count(self) -> int:
        """Number of lines (a last line without a newline counts)."""
        text = self._text
        return text.count("\n") + (1 if ends_mid_line(text) else 0)


def line_ranges(lines: list[int]) -> str:
    """[3,4,5,9] -> '3-5,9'."""
    out: list[str] = []
    start = prev = None
    for n in sorted(set(lines)):
        if prev is not None and n == prev + 1:
            prev = n
            continue
        if start is not None:
            out.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = n
    if start is not None:
        out.append(str(start) if start == prev else f"{start}-{prev}")
    return ",".join(out)


FAILURE_MARKERS = (
    (
        "oom",
        (
            "out of memory",
            "outofmemory",
            "resource_exhausted",
            "resourceexhaustederror",
            "oom-kill",
            "cuda error: out of memory",
        ),
    ),
    ("segfault", ("segmentation fault", "seg fault", "sigsegv", "core dumped")),
    ("timeout", ("timed out", "timeout expired", "watchdog caught collective operation timeout")),
    ("error", ("traceback (most recent call last)", "error:", "fatal")),
)


def failure_in(text: str) -> tuple[str, int] | None:
    """The first failure marker in a log: (status, offset), or None.

    A specific cause (oom, segfault, timeout) wins over a generic error marker found earlier:
    a traceback that ends in "out of memory" is an OOM.
    """
    lower = text.lower()
    specific: list[tuple[int, str]] = []
    generic: list[tuple[int, str]] = []
    for status, needles in FAILURE_MARKERS:
        for needle in needles:
            pos = lower.find(needle)
            if pos != -1:
                (generic if status == "error" else specific).append((pos, status))
    if not specific and not generic:
        return None
    pos, status = min(specific or generic)
    return status, pos


def excerpt(text: str, offset: int, before: int = 2, after: int = 3, limit: int = 600) -> str:
    """A few whole lines around offset, at most ``limit`` characters."""
    start = text.rfind("\n", 0, offset) + 1
    for _ in range(before):
        if start == 0:
            break
        start = text.rfind("\n", 0, start - 1) + 1
    end = offset
    for _ in range(after + 1):
        nxt = text.find("\n", end + 1 if end > offset else end)
        if nxt == -1:
            end = len(text)
            break
        end = nxt
    return text[start:end][:limit]
