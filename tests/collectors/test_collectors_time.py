"""Timestamps without dates or years, and the time-window method."""

import re

import pytest

from collectors import _time
from collectors.base import FileContext

CTX = FileContext(root="r", path="a/b.log", sha256="0")


def _absl(stamp: str) -> float:
    return _time.absl(re.match(_time.ABSL, stamp))


def test_absl_midnight_is_covered_by_the_day():
    assert _absl("I0902 00:00:01.5") - _absl("I0901 23:59:59.5") == pytest.approx(2.0)


def test_absl_new_year_wraps_forward():
    times = _time.unwrap([_absl("I1231 23:59:59.0"), _absl("I0101 00:00:03.0")], _time.ABSL_PERIOD)
    assert times[1] - times[0] == pytest.approx(4.0)


def test_absl_rejects_impossible_dates():
    assert re.match(_time.ABSL, "I1232 00:00:00.0") is None
    assert re.match(_time.ABSL, "I1301 00:00:00.0") is None


def test_clock_only_times_unwrap_across_midnight_twice():
    stamps = ["23:59:50", "00:00:10", "12:00:00", "23:59:59", "00:00:01"]
    out = _time.unwrap([_time.clock(*s.split(":")) for s in stamps], _time.DAY)
    assert out == sorted(out)
    assert out[1] - out[0] == pytest.approx(20.0)
    assert out[4] - out[3] == pytest.approx(2.0)
    assert out[4] - out[0] == pytest.approx(_time.DAY + 11.0)


def test_window_is_the_time_between_two_steps():
    problems = []
    assert _time.window({20: (100.0, 5), 120: (150.0, 25)}, 20, 120, CTX, problems) == (50.0, [5, 25])
    assert problems == []


def test_window_past_the_end_of_a_truncated_log_is_a_problem_with_a_line():
    problems = []
    assert _time.window({20: (100.0, 5), 90: (130.0, 19)}, 20, 120, CTX, problems) is None
    assert [(p.line, p.level) for p in problems] == [(19, "error")]
    assert "stops at step 90" in problems[0].message


def test_window_without_its_start_or_going_backwards_is_a_problem():
    problems = []
    assert _time.window({30: (100.0, 5), 120: (150.0, 25)}, 20, 120, CTX, problems) is None
    assert _time.window({20: (100.0, 5), 120: (90.0, 25)}, 20, 120, CTX, problems) is None
    assert [p.line for p in problems] == [5, 25]
