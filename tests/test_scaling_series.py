"""Scaling series hold everything fixed but the device count, and how the devices were driven."""

from benchcat.aggregate import summarize_runs
from benchcat.facts import facts
from benchcat.scaling import sections
from benchcat.schema import Benchmark, Config, Provenance, Record, Run, Software, System, record_id


def record(devices: int, value: float, **flags) -> Record:
    bench = Benchmark(model="bert-tiny", seq_len=64)
    config = Config(framework="pytorch", precision="fp32", batch_size=8, devices_per_node=devices,
                    flags={"steps": "20", **flags})  # fmt: skip
    system = System(name="cpu-box")
    src = Provenance(root="logs", path=f"{devices}.log", sha256="0" * 64, collector="t", collector_version=1)
    runs = [Run(run_id="1", values={"throughput": value}, source=src)]
    return Record(id=record_id(bench, config, system, Software()), benchmark=bench, config=config, system=system,
                  runs=runs, metrics=summarize_runs(runs))  # fmt: skip


def test_launcher_and_threads_per_rank_do_not_split_a_series():
    rows = facts([record(1, 100.0), record(2, 150.0, launcher="torchrun", threads_per_rank="1")])
    (section,) = sections(rows, "bert-tiny")
    (series,) = section.series
    assert series.at["1n2g"].speedup == 1.5 and series.at["1n2g"].efficiency == 0.75


def test_other_flags_still_split_series():
    rows = facts([record(1, 100.0), record(2, 150.0, steps="30")])
    (section,) = sections(rows, "bert-tiny")
    assert len(section.series) == 2


def test_a_series_keeps_its_colour_index_in_both_charts():
    from benchcat.charts import speedup_lines, throughput_bars

    # "a-short" has no 1-device run, so the speedup chart leaves it out; "b-full" must not shift.
    rows = facts([record(2, 90.0, steps="a-short"), record(4, 160.0, steps="a-short"), record(1, 100.0, steps="b-full"),
                  record(2, 150.0, steps="b-full")])  # fmt: skip
    (section,) = sections(rows, "bert-tiny")
    bars = {t.name: t.meta["series"] for t in throughput_bars(section).data}
    lines = {t.name: t.meta["series"] for t in speedup_lines(section).data if t.name != "ideal"}
    assert len(bars) == 2 and len(lines) == 1
    ((name, index),) = lines.items()
    assert bars[name] == index == 1


def test_labels_drop_what_every_series_shares():
    rows = facts([record(1, 100.0, seed="1", steps="20"), record(1, 90.0, seed="1", steps="30")])
    (section,) = sections(rows, "bert-tiny")
    assert [s.label for s in section.series] == ["steps=20", "steps=30"]
    assert section.common == "cpu-box · pytorch · bs 8 · seq 64 · seed=1"
    assert section.series[0].full == "cpu-box · pytorch · bs 8 · seq 64 · seed=1 · steps=20"


def test_a_lone_series_keeps_its_whole_label():
    (section,) = sections(facts([record(1, 100.0)]), "bert-tiny")
    assert section.common == "" and section.series[0].label == "cpu-box · pytorch · bs 8 · seq 64 · steps=20"


def test_charts_leave_out_series_measured_on_one_device_count_and_keep_the_table_order():
    from benchcat.charts import charted, speedup_lines, throughput_bars

    rows = facts([record(1, 100.0, steps="9"), record(2, 150.0, steps="9"), record(1, 80.0, steps="10"),
                  record(2, 120.0, steps="10"), record(1, 500.0, steps="lone")])  # fmt: skip
    (section,) = sections(rows, "bert-tiny")
    table = [s.label for s in section.series if s.label != "steps=lone"]
    assert [s.label for s in charted(section)] == table == ["steps=10", "steps=9"]  # the table's order
    assert [t.name for t in throughput_bars(section).data] == table
    lines = speedup_lines(section)
    assert [t.name for t in lines.data] == ["ideal", *table]
    assert lines.layout.yaxis.tickvals == (1, 2)  # ticks at the device counts, as on the x axis


def test_a_section_without_scaling_gets_no_chart_and_says_why(tmp_path):
    from benchcat import store
    from benchcat.render import Settings, render
    from benchcat.scaffold import scaffold

    scaffold(tmp_path)
    cat = store.Catalog(path=tmp_path / "catalog", revision=1)
    for r in (record(1, 100.0, steps="a"), record(1, 90.0, steps="b")):
        cat.records[r.id] = r
    store.save(cat)
    page = render(Settings.load(tmp_path))["scaling/bert-tiny.md"].decode()
    assert "bc-chart" not in page
    assert "No series here was measured on more than one device count" in page
    assert "steps=a" in page and "steps=b" in page  # the table still lists both


def test_speedup_ticks_reach_slowdowns_and_superlinear_points():
    from benchcat.charts import speedup_ticks

    assert speedup_ticks([1, 2, 4], [1.0, 1.8, 3.5]) == [1, 2, 4]
    assert speedup_ticks([1, 2], [1.0, 0.43]) == [0.25, 0.5, 1, 2]  # a slowdown gets labels below 1
    assert speedup_ticks([1, 2], [1.0, 2.6]) == [1, 2, 4]  # superlinear: one more power of two
