"""Chart figures (plotly) embedded in pages as inert JSON; site_src/assets/charts.js draws them.

Figures carry data and structure only: colours, fonts and backgrounds are left to charts.js,
which follows the site's light/dark palette. A series trace carries ``meta.series``, its index
among the section's charted series, so charts.js gives a series the same colour in the
throughput bars and in the speedup lines (where the ideal line and short series are missing).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import plotly
import plotly.graph_objects as go

from .aggregate import Undefined
from .scaling import Section, Series

PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


def copy_plotly(assets: Path) -> Path:
    """Put the installed plotly package's plotly.min.js into the site's assets (never a CDN)."""
    target = assets / "plotly.min.js"
    if not target.exists() or target.stat().st_size != PLOTLY_JS.stat().st_size:
        assets.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(PLOTLY_JS, target)
    return target


def to_json(fig: go.Figure) -> str:
    """Deterministic, script-safe JSON of a figure (no template: charts.js styles it)."""
    doc = fig.to_plotly_json()
    doc["layout"].pop("template", None)
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=False)
    # Inside <script type="application/json"> only '</' could end the element; escape all markup.
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


# Legend under the plot, below the axis title; the figure grows with its series instead of scrolling.
LEGEND = {"orientation": "h", "yanchor": "top", "y": -0.25, "xanchor": "left", "x": 0}


def _height(series: int) -> int:
    return 380 + 22 * series


# A chart with hundreds of bars per group says nothing; the table under it lists every series.
MAX_SERIES = 24


def _ok_devices(s: Series) -> set[int]:
    return {p.devices for p in s.points if p.fact["status"] == "ok"}


def scaling_series(section: Section) -> list[Series]:
    """The series with a value on at least two device counts: a lone point says nothing about scaling."""
    return [s for s in section.series if len(_ok_devices(s)) >= 2]


def charted(section: Section) -> list[Series]:
    """The series the charts show, in the section's (the table's) order: the scaling series; past
    MAX_SERIES of them, those on the most device counts, then the fastest."""
    shown = scaling_series(section)
    if len(shown) > MAX_SERIES:

        def weight(s: Series) -> tuple:
            ok = [p.fact["value"] for p in s.points if p.fact["status"] == "ok"]
            return (-len(_ok_devices(s)), -max(ok), s.label)

        keep = {id(s) for s in sorted(shown, key=weight)[:MAX_SERIES]}
        shown = [s for s in shown if id(s) in keep]
    return shown


def _num(x) -> float | None:
    return x if isinstance(x, float | int) and not isinstance(x, Undefined) else None


def throughput_bars(section: Section) -> go.Figure:
    """Grouped bars: throughput per topology, one bar group per series."""
    topo = [t for t, _ in section.topologies]
    traces = []
    for i, s in enumerate(charted(section)):
        values = {p.topology: p.fact["value"] if p.fact["status"] == "ok" else None for p in s.points}
        traces.append(go.Bar(name=s.label, x=topo, y=[values.get(t) for t in topo], meta={"series": i}))
    layout = go.Layout(
        barmode="group",
        title={"text": f"{section.model} {section.precision}: throughput"},
        xaxis={"title": {"text": "devices (nodes x devices per node)"}, "type": "category"},
        yaxis={"title": {"text": section.unit or "value"}},
        legend=LEGEND,
        height=_height(len(traces)),
    )
    return go.Figure(data=traces, layout=layout)


def speedup_lines(section: Section) -> go.Figure:
    """Speedup over one device against device count, with the dashed ideal (linear) line."""
    devices = sorted({d for _, d in section.topologies})
    traces = [
        go.Scatter(
            name="ideal", x=devices, y=devices, mode="lines", line={"dash": "dash"}, hoverinfo="skip"
        )
    ]
    speedups = [1.0]
    for i, s in enumerate(charted(section)):
        pts = [(p.devices, _num(p.speedup)) for p in s.points if _num(p.speedup) is not None]
        if len(pts) > 1:  # a lone 1-device point says nothing about scaling
            xs, ys = [d for d, _ in pts], [v for _, v in pts]
            speedups += ys
            traces.append(go.Scatter(name=s.label, x=xs, y=ys, mode="lines+markers", meta={"series": i}))
    layout = go.Layout(
        title={"text": f"{section.model} {section.precision}: speedup over 1 device"},
        xaxis={"title": {"text": "devices"}, "type": "log", "tickvals": devices},
        yaxis={"title": {"text": "speedup (x)"}, "type": "log", "tickvals": speedup_ticks(devices, speedups)},
        legend=LEGEND,
        height=_height(len(traces)),
    )
    return go.Figure(data=traces, layout=layout)


def speedup_ticks(devices: list[int], speedups: list[float]) -> list[float]:
    """Ticks at the device counts, as on the x axis (the ideal line meets each pair), plus powers
    of two beyond them where a speedup falls below 1 (a slowdown) or above the most devices."""
    ticks = set(devices)
    low, high = min(speedups), max(speedups)
    k = 1
    while 2.0**-k * 2 > low and k < 20:
        ticks.add(2.0**-k)
        k += 1
    top = max(devices)
    while top < high and top < 2**20:
        top *= 2
        ticks.add(top)
    return sorted(ticks)


def ratio_bars(groups: list[tuple[str, float, int]], title: str) -> go.Figure:
    """Horizontal bars of the geometric-mean B/A ratio per model and precision, parity line at 1."""
    labels = [g[0] for g in groups]
    layout = go.Layout(
        title={"text": f"{title}: geometric-mean ratio per model and precision"},
        xaxis={"title": {"text": "ratio (B / A, >1: B better)"}, "rangemode": "tozero"},
        yaxis={"automargin": True, "type": "category"},
        shapes=[{"type": "line", "x0": 1, "x1": 1, "xref": "x", "y0": 0, "y1": 1, "yref": "paper",
                 "line": {"dash": "dash"}}],
        height=max(260, 22 * len(labels) + 120),
    )  # fmt: skip
    bars = go.Bar(
        x=[g[1] for g in groups], y=labels, orientation="h", name="B / A",
        customdata=[g[2] for g in groups], hovertemplate="%{y}: %{x:.3f} over %{customdata} pairs<extra></extra>",
    )  # fmt: skip
    return go.Figure(data=[bars], layout=layout)
