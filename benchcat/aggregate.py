"""Aggregation over runs and the derived comparisons computed at render time (never stored)."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from .schema import METRICS, MetricSummary, Run


def tidy(x: float) -> float:
    """Round away float noise (10 significant digits) so stored numbers stay stable."""
    return float(f"{x:.10g}")


def summarize(name: str, values: list[float], score_rule: str | None = None) -> MetricSummary:
    """Median (the headline), mean, min, max, count and coefficient of variation."""
    unit, direction = METRICS.get(name, ("", "higher"))
    if not values:
        note = "no successful runs" if score_rule else None
        return MetricSummary(unit=unit, direction=direction, count=0, score_rule=score_rule, score_note=note)
    mean = statistics.fmean(values)
    cv = _pstdev(values, mean) / mean if len(values) > 1 and mean else None
    score, note = apply_score_rule(score_rule, values)
    return MetricSummary(
        unit=unit,
        direction=direction,
        median=tidy(statistics.median(values)),
        mean=tidy(mean),
        min=tidy(min(values)),
        max=tidy(max(values)),
        count=len(values),
        cv=None if cv is None else tidy(cv),
        score=score,
        score_rule=score_rule,
        score_note=note,
    )


def _pstdev(values: list[float], mean: float) -> float:
    """Population standard deviation in floats (statistics.pstdev uses exact fractions: 100x slower)."""
    return math.sqrt(math.fsum((x - mean) ** 2 for x in values) / len(values))


def apply_score_rule(rule: str | None, values: list[float]) -> tuple[float | None, str | None]:
    """Score rules by name. ``olympic:N``: N runs are required; drop best and worst, mean the rest.

    Returns the score (or None) and, when unscored, the reason.
    """
    if rule is None:
        return None, None
    kind, _, arg = rule.partition(":")
    if kind == "olympic":
        need = int(arg or 5)
        if len(values) < need:
            return None, f"incomplete: {len(values)} of {need} required runs"
        ordered = sorted(values)
        kept = ordered[1:-1] if len(ordered) > 2 else ordered
        return tidy(statistics.fmean(kept)), None
    raise ValueError(f"unknown score rule {rule!r}")


def summarize_runs(runs: list[Run], score_rules: dict[str, str] | None = None) -> dict[str, MetricSummary]:
    """One summary per metric name found in any run; failed runs count in no metric."""
    score_rules = score_rules or {}
    names = sorted({name for run in runs for name in run.values})
    out = {}
    for name in names:
        values = [run.values[name] for run in runs if run.status == "ok" and name in run.values]
        out[name] = summarize(name, values, score_rules.get(name))
    return out


# ---- derived comparisons: computed when asked, never stored ----------------------------


@dataclass(frozen=True)
class Undefined:
    """A comparison that cannot be computed, with the reason (shown instead of a number)."""

    reason: str

    def __str__(self) -> str:
        return "undefined"


def _usable(x: float | None) -> bool:
    return x is not None and math.isfinite(x) and x > 0


def speedup(value: float | None, baseline: float | None) -> float | Undefined:
    """value / baseline (throughput over the 1-device baseline); undefined without a baseline."""
    if not _usable(baseline):
        return Undefined("no single-device baseline" if baseline is None else "baseline not positive")
    if not _usable(value):
        return Undefined("no value")
    return value / baseline


def efficiency(value: float | None, baseline: float | None, devices: int, baseline_devices: int = 1):
    """Scaling efficiency: speedup / (devices / baseline devices)."""
    s = speedup(value, baseline)
    if isinstance(s, Undefined):
        return s
    return s / (devices / baseline_devices)


def delta_pct(value: float | None, baseline: float | None, direction: str = "higher"):
    """Percent change of value against baseline; positive means better in the metric's direction."""
    if not _usable(baseline):
        return Undefined("no baseline" if baseline is None else "baseline not positive")
    if value is None or not math.isfinite(value):
        return Undefined("no value")
    change = (value - baseline) / baseline * 100.0
    return change if direction == "higher" else -change


def geomean(ratios: list[float]) -> float | Undefined:
    """Geometric mean of positive ratios."""
    good = [r for r in ratios if _usable(r)]
    if not good:
        return Undefined("no comparable pairs")
    return math.exp(statistics.fmean(math.log(r) for r in good))


def ratio(value: float | None, baseline: float | None, direction: str = "higher") -> float | Undefined:
    """How many times better value is than baseline (>1 is better), in the metric's direction."""
    if direction == "higher":
        return speedup(value, baseline)
    inverse = speedup(baseline, value)
    if isinstance(inverse, Undefined):
        return Undefined("no value" if _usable(baseline) else inverse.reason)
    return inverse


def spreads_overlap(a: tuple[float | None, float | None], b: tuple[float | None, float | None]) -> bool:
    """Whether two runs' [min, max] ranges overlap: a difference that is within run-to-run noise.

    A side without numbers overlaps nothing; a single run is the range [value, value].
    """
    if None in a or None in b:
        return False
    return a[0] <= b[1] and b[0] <= a[1]


def per_unit(value: float | None, cost_per_device: float | None, devices: int) -> float | Undefined:
    """Throughput per unit of cost (dollar, watt) spent on ``devices`` devices."""
    if not _usable(cost_per_device):
        return Undefined("no cost given" if cost_per_device is None else "cost not positive")
    if value is None or not math.isfinite(value):
        return Undefined("no value")
    return value / (cost_per_device * devices)
