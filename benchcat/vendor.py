"""Vendor evaluation: system B against system A over every configuration both measured (pure)."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field

import pandas as pd

from .aggregate import Undefined, delta_pct, geomean, per_unit, ratio
from .compare import tone_of
from .facts import SOFTWARE_FIELDS, SYSTEM_FIELDS, best, group, select, sort_key
from .spec import ReportSpec


@dataclass
class Pair:
    key: dict
    a: dict | None
    b: dict | None
    ratio: float | Undefined = field(default_factory=lambda: Undefined("not compared"))
    delta: float | Undefined = field(default_factory=lambda: Undefined("not compared"))
    tone: str = ""
    per_dollar: tuple = (None, None)
    per_watt: tuple = (None, None)


@dataclass
class Evaluation:
    spec: ReportSpec
    pairs: list[Pair] = field(default_factory=list)
    geomean: float | Undefined = field(default_factory=lambda: Undefined("no comparable pairs"))
    geomean_dollar: float | Undefined = field(default_factory=lambda: Undefined("no prices given"))
    geomean_watt: float | Undefined = field(default_factory=lambda: Undefined("no power given"))
    best: Pair | None = None
    worst: Pair | None = None
    noise: int = 0
    failure_rate: dict = field(default_factory=dict)  # side -> (failed runs, runs)
    env_diff: list[tuple[str, list, list]] = field(default_factory=list)  # field, values A, values B

    @property
    def compared(self) -> int:
        return sum(isinstance(p.ratio, float) for p in self.pairs)

    def by_group(self) -> list[tuple[str, float, int]]:
        """Geometric-mean ratio per model and precision: (label, ratio, pairs compared)."""
        groups: dict[str, list[float]] = {}
        for p in self.pairs:
            if isinstance(p.ratio, float):
                label = " ".join(str(p.key[f]) for f in ("model", "precision") if p.key.get(f) is not None)
                groups.setdefault(label or "all", []).append(p.ratio)
        return [(label, geomean(r), len(r)) for label, r in sorted(groups.items())]


def cost_of(systems: dict, system: str, what: str) -> float | None:
    """Price or power per device for a system label, from the systems file (globs allowed)."""
    for pattern in sorted(systems):
        if fnmatch.fnmatchcase(system.lower(), pattern.lower()):
            value = (systems[pattern] or {}).get(what)
            return float(value) if value is not None else None
    return None


def evaluate(spec: ReportSpec, rows: list[dict], systems: dict | None = None) -> Evaluation:
    systems = systems or {}
    ev = Evaluation(spec=spec)
    rows = select(rows, spec.where)
    side_a, side_b = select(rows, spec.a.match), select(rows, spec.b.match)
    for name, side in (("a", side_a), ("b", side_b)):
        ev.failure_rate[name] = (sum(f["failed_runs"] for f in side), sum(f["runs"] for f in side))
    ga, gb = group(side_a, spec.match_on), group(side_b, spec.match_on)
    for key in sorted(set(ga) | set(gb), key=lambda k: tuple(map(sort_key, k))):
        pair = Pair(dict(zip(spec.match_on, key, strict=True)), best(ga.get(key, [])), best(gb.get(key, [])))
        _score(pair, systems)
        ev.pairs.append(pair)
    compared = [p for p in ev.pairs if isinstance(p.ratio, float)]
    ev.geomean = geomean([p.ratio for p in compared])
    ev.geomean_dollar = _geomean_of(compared, "per_dollar", "no prices given")
    ev.geomean_watt = _geomean_of(compared, "per_watt", "no power given")
    if compared:
        ordered = sorted(compared, key=lambda p: (p.ratio, p.b["id"]))
        ev.worst, ev.best = ordered[0], ordered[-1]
    ev.noise = sum(p.tone == "noise" for p in compared)
    ev.env_diff = _env_diff(side_a, side_b)
    return ev


def _score(pair: Pair, systems: dict) -> None:
    a, b = pair.a, pair.b
    if a is None or b is None:
        pair.ratio = pair.delta = Undefined(f"not measured on {'A' if a is None else 'B'}")
        return
    for side, f in (("A", a), ("B", b)):
        if f["status"] != "ok":
            pair.ratio = pair.delta = Undefined(f"{side} failed ({f['status']})")
            return
    pair.ratio = ratio(b["value"], a["value"], b["direction"])
    pair.delta = delta_pct(b["value"], a["value"], b["direction"])
    if isinstance(pair.delta, float):
        pair.tone = tone_of(b, a, pair.delta)
    if b["direction"] == "higher":
        for attr, what in (("per_dollar", "price"), ("per_watt", "watts")):
            per = [per_unit(f["value"], cost_of(systems, f["system"], what), f["devices"]) for f in (a, b)]
            setattr(pair, attr, tuple(per))


def _geomean_of(pairs: list[Pair], attr: str, reason: str) -> float | Undefined:
    ratios = []
    for p in pairs:
        a, b = getattr(p, attr)
        if isinstance(a, float) and isinstance(b, float) and a > 0:
            ratios.append(b / a)
    return geomean(ratios) if ratios else Undefined(reason)


def _env_diff(side_a: list[dict], side_b: list[dict]) -> list[tuple[str, list, list]]:
    """System and software fields whose sets of values differ between the two sides."""
    out = []
    for name in SYSTEM_FIELDS + SOFTWARE_FIELDS:
        va = sorted({str(f[name]) for f in side_a if f[name] is not None})
        vb = sorted({str(f[name]) for f in side_b if f[name] is not None})
        if va != vb:
            out.append((name, va, vb))
    return out


def config_label(key: dict) -> str:
    """A matched configuration in a few words: model, seq_len, framework, precision, batch, topology."""
    parts = [key.get("model"), key.get("task") if key.get("task") not in (None, "train") else None]
    if key.get("seq_len") is not None:
        parts.append(f"seq {key['seq_len']}")
    parts += [key.get("framework"), key.get("precision")]
    if key.get("batch_size") is not None:
        parts.append(f"bs {key['batch_size']}")
    if key.get("grad_accum") not in (None, 1):
        parts.append(f"accum {key['grad_accum']}")
    parts += [key.get("compile_mode"), key.get("flags")]
    if key.get("nodes") is not None and key.get("devices_per_node") is not None:
        parts.append(f"{key['nodes']}n{key['devices_per_node']}g")
    return " · ".join(str(p) for p in parts if p is not None)


def to_frame(ev: Evaluation) -> pd.DataFrame:
    """The full delta table in long form, for downloads."""
    lines = []
    for p in ev.pairs:
        line = dict(p.key)
        for side, f in (("a", p.a), ("b", p.b)):
            f = f or {}
            line.update({f"{side}_value": f.get("value"), f"{side}_status": f.get("status", "missing"),
                         f"{side}_record": f.get("id")})  # fmt: skip
        line["ratio"] = p.ratio if isinstance(p.ratio, float) else None
        line["delta_pct"] = p.delta if isinstance(p.delta, float) else None
        line["within_noise"] = p.tone == "noise"
        lines.append(line)
    return pd.DataFrame(lines)
