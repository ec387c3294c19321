"""Scaling: throughput against device count, speedup over one device, efficiency (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from .aggregate import Undefined, efficiency, speedup
from .facts import best, group, sort_key

# A series is one line on the speedup chart: everything but the device count held fixed.
# Flags that only describe how the devices were driven (facts.TOPOLOGY_FLAGS) are left out.
SERIES = ["system", "framework", "batch_size", "seq_len", "grad_accum", "compile_mode", "scaling_flags"]


@dataclass
class Point:
    topology: str
    devices: int
    fact: dict
    speedup: float | Undefined
    efficiency: float | Undefined


@dataclass
class Series:
    label: str  # what tells this series from the others of its section
    points: list[Point] = field(default_factory=list)
    full: str = ""  # the whole label, common parts included (downloads)

    @property
    def at(self) -> dict[str, Point]:
        """Points by topology label."""
        return {p.topology: p for p in self.points}


@dataclass
class Section:
    """One model + precision: its series and the topologies seen."""

    model: str
    precision: str
    unit: str
    topologies: list[tuple[str, int]]
    series: list[Series]
    common: str = ""  # label parts every series shares, said once above the charts


def label_parts(values: dict) -> list[str]:
    parts = [str(values["system"]), str(values["framework"])]
    if values.get("batch_size") is not None:
        parts.append(f"bs {values['batch_size']}")
    if values.get("seq_len") is not None:
        parts.append(f"seq {values['seq_len']}")
    if values.get("grad_accum", 1) != 1:
        parts.append(f"accum {values['grad_accum']}")
    if values.get("compile_mode"):
        parts.append(str(values["compile_mode"]))
    if values.get("scaling_flags"):
        parts += str(values["scaling_flags"]).split(",")
    return parts


def _shorten(series: list[Series], parts: list[list[str]]) -> str:
    """Drop from each label what every series of the section shares; return the shared text.

    Legends of long flag strings (device=cpu,lr=...,seed=...) hid the one flag that differs.
    """
    if len(series) < 2:
        return ""
    shared = [p for p in parts[0] if all(p in other for other in parts[1:])]
    for s, mine in zip(series, parts, strict=True):
        s.label = " · ".join(p for p in mine if p not in shared) or s.full
    return " · ".join(shared)


def sections(rows: list[dict], model: str) -> list[Section]:
    """Per precision of ``model``: every series with its points, speedups against its 1-device point."""
    out = []
    mine = [r for r in rows if r["model"] == model]
    for (precision,), rows in sorted(group(mine, ["precision"]).items(), key=lambda kv: sort_key(kv[0][0])):
        topologies = sorted({(r["topology"], r["devices"]) for r in rows}, key=lambda t: (t[1], t[0]))
        units = sorted({r["unit"] for r in rows if r["unit"]})
        by_series = group(rows, SERIES)
        series, parts = [], []
        for key in sorted(by_series, key=lambda k: tuple(map(sort_key, k))):
            points_by_topo = group(by_series[key], ["topology"])
            chosen = {t: best(points_by_topo[(t,)]) for t, _ in topologies if (t,) in points_by_topo}
            ones = [f for f in chosen.values() if f["devices"] == 1 and f["status"] == "ok"]
            base = ones[0]["value"] if ones else None
            parts.append(label_parts(dict(zip(SERIES, key, strict=True))))
            full = " · ".join(parts[-1])
            s = Series(full, full=full)
            for topo, devices in topologies:
                f = chosen.get(topo)
                if f is None:
                    continue
                value = f["value"] if f["status"] == "ok" else None
                s.points.append(Point(topo, devices, f, speedup(value, base), efficiency(value, base, devices)))
            series.append(s)
        common = _shorten(series, parts)
        out.append(Section(model, str(precision), ", ".join(units), topologies, series, common))
    return out


def to_frame(secs: list[Section]) -> pd.DataFrame:
    lines = []
    for sec in secs:
        for s in sec.series:
            for p in s.points:
                lines.append({
                    "model": sec.model, "precision": sec.precision, "series": s.full, "topology": p.topology,
                    "devices": p.devices, "status": p.fact["status"], "value": p.fact["value"],
                    "speedup": p.speedup if isinstance(p.speedup, float) else None,
                    "efficiency": p.efficiency if isinstance(p.efficiency, float) else None,
                    "record": p.fact["id"],
                })  # fmt: skip
    return pd.DataFrame(lines)
