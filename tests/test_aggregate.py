import pytest

from benchcat.aggregate import Undefined, delta_pct, efficiency, geomean, speedup, summarize


def test_summary_median_mean_cv():
    s = summarize("throughput", [10.0, 12.0, 11.0, 30.0, 9.0])
    assert s.median == 11.0 and s.mean == 14.4 and s.min == 9.0 and s.max == 30.0 and s.count == 5
    assert s.cv == pytest.approx(0.5461, abs=1e-4)
    assert s.unit == "samples/s" and s.direction == "higher"


def test_even_count_median_is_the_middle_mean():
    assert summarize("throughput", [1.0, 2.0, 3.0, 10.0]).median == 2.5


def test_empty_summary_has_no_numbers():
    s = summarize("throughput", [])
    assert s.count == 0 and s.median is None and s.cv is None


def test_olympic_mean_scores_only_complete_sets():
    full = summarize("time_to_train", [1.752, 1.754, 1.754, 1.750, 1.751], "olympic:5")
    assert full.score == pytest.approx(1.7523333333)
    part = summarize("time_to_train", [65.904, 72.816, 62.375, 68.511, 65.949], "olympic:10")
    assert part.score is None and "5 of 10" in part.score_note


def test_speedup_without_baseline_is_undefined_never_one():
    assert isinstance(speedup(100.0, None), Undefined)
    assert isinstance(speedup(100.0, 0.0), Undefined)
    assert isinstance(speedup(None, 10.0), Undefined)
    assert speedup(80.0, 10.0) == 8.0
    assert efficiency(80.0, 10.0, 8) == 1.0
    assert isinstance(efficiency(80.0, None, 8), Undefined)


def test_delta_respects_direction():
    assert delta_pct(110.0, 100.0) == pytest.approx(10.0)
    assert delta_pct(110.0, 100.0, "lower") == pytest.approx(-10.0)
    assert isinstance(delta_pct(5.0, None), Undefined)


def test_geomean():
    assert geomean([2.0, 8.0]) == pytest.approx(4.0)
    assert isinstance(geomean([]), Undefined)
