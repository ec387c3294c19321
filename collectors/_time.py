"""Timestamps found in logs, as seconds, and the time-window method (not a collector).

absl prefixes (``I0901 10:11:12.345678``) carry month and day but no year; plain clocks
(``10:11:12``) carry no date at all. Both wrap (new year, midnight): :func:`unwrap` makes a
sequence monotonic by adding the period whenever time jumps far backwards.
"""

from __future__ import annotations

import calendar
import re

# absl: level letter, MMDD, then the clock. Group names are shared by every caller.
ABSL = r"[IWEF](?P<mo>0[1-9]|1[0-2])(?P<dd>0[1-9]|[12]\d|3[01]) (?P<hh>\d\d):(?P<mi>\d\d):(?P<ss>\d\d(?:\.\d+)?)"
DAY = 86400.0
# Day numbers are counted in a leap year so 29 Feb exists; Dec 31 -> Jan 1 is then one day
# whatever the real year was, because the period below is that same leap year. (A window over
# 28 Feb -> 1 Mar of a non-leap year comes out a day long: absl gives no year to tell.)
ABSL_PERIOD = 366 * DAY
_LEAP = 2000
_MONTH_START = [sum(calendar.monthrange(_LEAP, m)[1] for m in range(1, k)) for k in range(1, 13)]


def clock(hh: str, mi: str, ss: str) -> float:
    """Seconds since midnight."""
    return int(hh) * 3600 + int(mi) * 60 + float(ss)


def absl(m: re.Match) -> float:
    """Seconds since 1 Jan of an unknown (leap) year, from a match of :data:`ABSL`."""
    month = int(m["mo"])
    day = _MONTH_START[month - 1] + min(int(m["dd"]), calendar.monthrange(_LEAP, month)[1]) - 1
    return day * DAY + clock(m["hh"], m["mi"], m["ss"])


def unwrap(times: list[float], period: float) -> list[float]:
    """Make times monotonic across wraps: a drop of more than half a period adds a period."""
    out: list[float] = []
    offset = 0.0
    prev = None
    for t in times:
        if prev is not None and t + offset < prev - period / 2:
            offset += period
        prev = t + offset
        out.append(prev)
    return out


def window(
    points: dict[int, tuple[float, int]], start: int, end: int, ctx, problems: list
) -> tuple[float, list[int]] | None:
    """Seconds between the lines of two steps, or None with a problem naming the line.

    ``points`` maps step -> (seconds, line), already unwrapped. A window whose end is not in the
    log (a killed run) is reported, never shortened into a different number.
    """
    if not points:
        return None
    last = max(points)
    if start not in points:
        problems.append(ctx.problem(points[min(points)][1], f"time window start step {start} is not in the log"))
        return None
    if end not in points:
        problems.append(
            ctx.problem(
                points[last][1], f"time window ends at step {end} but the log stops at step {last} (truncated?)"
            )
        )
        return None
    (t0, l0), (t1, l1) = points[start], points[end]
    if t1 <= t0:
        problems.append(ctx.problem(l1, f"time goes backwards between steps {start} and {end}"))
        return None
    return t1 - t0, [l0, l1]
