"""Collector registry: one module per log format, looked up by name.

Listing collectors imports only this package's modules (never a framework). A module whose
import fails is listed in :func:`broken` with the reason instead of breaking the others.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from .base import Collector

_NOT_COLLECTORS = {"base"}


class UnknownCollector(KeyError):
    pass


@cache
def _load() -> tuple[dict[str, Collector], dict[str, str]]:
    found: dict[str, Collector] = {}
    broken: dict[str, str] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("_") or info.name in _NOT_COLLECTORS:
            continue
        try:
            module = importlib.import_module(f"{__name__}.{info.name}")
        except Exception as exc:  # noqa: BLE001 - reported, not hidden
            broken[info.name] = f"{type(exc).__name__}: {exc}"
            continue
        collector = getattr(module, "COLLECTOR", None)
        if not isinstance(collector, Collector):
            broken[info.name] = "module defines no COLLECTOR instance"
            continue
        if collector.name in found:
            raise RuntimeError(f"duplicate collector name {collector.name!r} in {info.name}.py")
        found[collector.name] = collector
    return found, broken


def all_collectors() -> list[Collector]:
    """Every registered collector, in the order detection tries them: (priority, name)."""
    return list(_ordered()[0])


@cache
def _ordered() -> tuple[tuple[Collector, ...], tuple[Collector, ...], tuple[Collector, ...]]:
    """Detection order, computed once: all, those with signatures, catch-alls."""
    found, _ = _load()
    ordered = tuple(sorted(found.values(), key=lambda c: (c.priority, c.name)))
    return ordered, tuple(c for c in ordered if c.signatures), tuple(c for c in ordered if not c.signatures)


def broken() -> dict[str, str]:
    """Modules that failed to load, with the reason."""
    return dict(_load()[1])


def get_collector(name: str) -> Collector:
    found, _ = _load()
    if name not in found:
        raise UnknownCollector(f"no collector named {name!r}; valid names: {', '.join(sorted(found))}")
    return found[name]


def fingerprint() -> str:
    """Names and versions of all collectors: a cache made under another set is stale."""
    return ",".join(f"{c.name}={c.version}" for c in sorted(all_collectors(), key=lambda c: c.name))


FIRST_WINDOW = 8192


def detect(head: str, path: str, extra: tuple[Collector, ...] = ()) -> Collector | None:
    """The collector for a file: ``extra`` ones (user specs) first; then format collectors by
    (priority, name) whose signature occurs in the first 8 KB; then those whose signature
    occurs further into the head; then collectors without signatures (catch-alls).

    Most logs name their format early, and a substring scan of the whole 256 KB head per
    collector was the largest cost of a collect. The answer depends on the file alone.
    """
    for collector in extra:
        if collector.detect(head, path):
            return collector
    _, with_sigs, catch_alls = _ordered()
    window = head[:FIRST_WINDOW]
    later = []
    for collector in with_sigs:
        if any(sig in window for sig in collector.signatures):
            if collector.detect(head, path):
                return collector
        elif len(head) > FIRST_WINDOW:
            later.append(collector)
    for collector in later:
        # The window was searched already: start where a signature could still begin.
        if any(head.find(sig, FIRST_WINDOW - len(sig) + 1) != -1 for sig in collector.signatures):
            if collector.detect(head, path):
                return collector
    for collector in catch_alls:
        if collector.detect(head, path):
            return collector
    return None
