"""Derived comparisons at their edges: zero, missing and failed baselines; spec checks; redaction."""

import math

import pytest
import sitekit

from benchcat.aggregate import Undefined, delta_pct, efficiency, geomean, per_unit, ratio, speedup, spreads_overlap
from benchcat.compare import build, compare
from benchcat.facts import facts, matches
from benchcat.redact import Redactor
from benchcat.render import md
from benchcat.scaling import sections
from benchcat.spec import ReportSpec
from benchcat.vendor import evaluate


def fact(value, status="ok", lo=None, hi=None, direction="higher"):
    return {"value": value, "status": status, "min": lo if lo is not None else value,
            "max": hi if hi is not None else value, "direction": direction}  # fmt: skip


@pytest.mark.parametrize(
    ("value", "base", "reason"),
    [(5.0, 0.0, "baseline not positive"), (5.0, None, "no baseline"), (None, 5.0, "no value"),
     (5.0, -1.0, "baseline not positive"), (5.0, math.nan, "baseline not positive")],
)  # fmt: skip
def test_delta_undefined_edges(value, base, reason):
    d = delta_pct(value, base)
    assert isinstance(d, Undefined) and d.reason == reason


def test_delta_zero_value_is_minus_hundred_not_undefined():
    assert delta_pct(0.0, 50.0) == -100.0
    assert delta_pct(50.0, 50.0) == 0.0


def test_cell_against_failed_or_missing_baseline_says_why():
    d, tone = compare(fact(10.0, "oom"), fact(12.0))
    assert isinstance(d, Undefined) and d.reason == "baseline failed (oom)" and tone == ""
    d, _ = compare(None, fact(12.0))
    assert d.reason == "no baseline measured"
    d, _ = compare(fact(10.0), fact(None, "segfault"))
    assert isinstance(d, Undefined)
    d, tone = compare(fact(0.0), fact(1.0))
    assert d.reason == "baseline not positive"


def test_overlapping_spreads_are_noise_not_a_win():
    d, tone = compare(fact(100.0, lo=95, hi=105), fact(103.0, lo=101, hi=106))
    assert d == pytest.approx(3.0) and tone == "noise"
    d, tone = compare(fact(100.0, lo=99, hi=101), fact(110.0, lo=109, hi=111))
    assert tone == "better"
    d, tone = compare(fact(10.0, direction="lower"), fact(12.0, direction="lower"))
    assert d == pytest.approx(-20.0) and tone == "worse"
    assert not spreads_overlap((None, None), (1.0, 2.0))


def test_speedup_efficiency_edges():
    assert speedup(0.0, 10.0).reason == "no value"
    assert speedup(10.0, 0.0).reason == "baseline not positive"
    assert efficiency(40.0, 10.0, 8) == 0.5
    assert efficiency(40.0, 10.0, 8, baseline_devices=2) == 1.0
    assert isinstance(efficiency(None, 10.0, 8), Undefined)


def test_geomean_skips_non_positive_and_handles_empty():
    assert geomean([2.0, 0.0, -1.0, 8.0]) == pytest.approx(4.0)
    assert isinstance(geomean([0.0]), Undefined)
    assert geomean([1.25, 0.8]) == pytest.approx(1.0)


def test_ratio_follows_direction_and_per_unit():
    assert ratio(200.0, 100.0) == 2.0
    assert ratio(50.0, 100.0, "lower") == 2.0  # half the time is twice as good
    assert ratio(0.0, 100.0, "lower").reason == "no value"
    assert per_unit(100.0, 10.0, 2) == 5.0
    assert per_unit(100.0, None, 2).reason == "no cost given"


def test_scaling_without_single_device_run_is_undefined():
    frame = facts(sitekit.records())
    fp16 = next(s for s in sections(frame, "bert-base") if s.precision == "fp16")
    lone = next(s for s in fp16.series if "bs 64" in s.label)
    assert [p.topology for p in lone.points] == ["1n2g"]
    assert lone.points[0].speedup.reason == "no single-device baseline"
    two = next(s for s in fp16.series if s.label.startswith("Tesla") and "bs 32 · seq 256" == s.label[-15:])
    assert two.points[1].speedup == pytest.approx(155 / 88)
    assert two.points[1].efficiency == pytest.approx(155 / 88 / 2)


def test_comparison_cells_of_the_seed_table():
    spec = ReportSpec.model_validate({**__import__("yaml").safe_load(sitekit.REPORTS["framework-configs.yaml"]),
                                      "slug": "t"})  # fmt: skip
    table = build(spec, facts(sitekit.records()))
    rows = dict(table.rows)
    ilu_fp32, _, ilu_xla, v100, v100_fp16, _ = rows[(128, 128)]
    assert v100.tone == "base" and ilu_fp32.delta == pytest.approx((110 - 120) / 120 * 100)
    assert ilu_xla.status == "segfault" and ilu_xla.fact["failed_runs"] == 1
    oom_row = rows[(128, 160)]
    assert oom_row[0].status == "oom" and oom_row[1].delta.reason == "baseline failed (oom)"
    assert rows[(256, 48)][1].high_cv and table.failed == 3


def test_vendor_evaluation_pairs_geomean_and_env_diff():
    spec = ReportSpec.model_validate({**__import__("yaml").safe_load(sitekit.REPORTS["iluvatar-vs-v100.yaml"]),
                                      "slug": "v"})  # fmt: skip
    systems = {"*V100-SXM2*": {"price": 10000, "watts": 300}, "*Iluvatar*": {"price": 6000, "watts": 250}}
    ev = evaluate(spec, facts(sitekit.records()), systems)
    ratios = [p.ratio for p in ev.pairs if isinstance(p.ratio, float)]
    assert ev.geomean == pytest.approx(math.exp(sum(map(math.log, ratios)) / len(ratios)))
    assert ev.worst.ratio == min(ratios) and ev.best.ratio == max(ratios)
    assert {name for name, _, _ in ev.env_diff} >= {"cuda", "driver", "system"}
    assert ev.failure_rate["b"] == (2, 29)
    assert isinstance(ev.geomean_dollar, float) and ev.geomean_dollar > ev.geomean


def test_spec_errors_name_the_field():
    with pytest.raises(ValueError, match="unknown field"):
        ReportSpec(title="x", rows=["modle"])
    with pytest.raises(ValueError, match="exactly one"):
        ReportSpec(title="x", baseline={})
    with pytest.raises(ValueError, match="not in rows"):
        ReportSpec(title="x", rows=["batch_size"], baseline={"row": {"grad_accum": 1}})
    with pytest.raises(ValueError, match="needs sides"):
        ReportSpec(title="x", kind="vendor")


def test_matching_rules():
    assert matches("Tesla V100-SXM2", "*v100*") and not matches("A100", "*v100*")
    assert matches(None, None) and not matches(None, "x") and not matches("x", None)
    assert matches(2, [1, 2]) and matches(128, 128.0) and not matches("a", 1)


def test_markdown_escape_makes_every_active_character_inert():
    out = str(md("a|b *c* _d_ [e](f) `g` <h> & \\ # !\nnext"))
    for ch in "|*_[]`<>\\#!\n":
        assert ch not in out.replace("&#", "").replace(";", ""), ch
    assert "next" in out


def test_redactor_fields_values_patterns():
    r = sitekit.records()[0]
    red = Redactor.from_settings({"fields": ["system.host", "software.other"], "values": ["Iluvatar"],
                                  "patterns": [r"\d+\.\d+\.\d+"]})  # fmt: skip
    out = red.record(r)
    assert out.system.host == "[redacted]" and out.software.other == {"patch": "[redacted]"}
    assert "Iluvatar" not in out.model_dump_json()
    with pytest.raises(ValueError, match="unknown key"):
        Redactor.from_settings({"field": []})
