"""The catalog on disk: atomic saves, crash recovery, the writer lock, schema versions, validation."""

import os
import shutil

import pytest

from benchcat import store
from benchcat.collect import collect
from benchcat.validate import check
from tests.test_collect import FIXTURES


@pytest.fixture
def site(tmp_path):
    shutil.copytree(FIXTURES, tmp_path / "logs")
    collect(tmp_path / "logs", tmp_path / "catalog")
    return tmp_path


def snapshot(catalog):
    return {p.relative_to(catalog).as_posix(): p.read_bytes() for p in catalog.rglob("*.yaml")}


def add_run(site):
    src = site / "logs/tensorflow/resnet50/bz128/1n1g/resnet50_b128_fp32_4.log"
    shutil.copy(src, src.with_name("resnet50_b128_fp32_5.log"))
    shutil.copytree(site / "logs/mxnet/bert-base/bz32/1n2g", site / "logs/mxnet/bert-base/bz32/1n4g")


def test_crash_while_writing_temp_files_leaves_the_old_catalog(site, monkeypatch):
    before = snapshot(site / "catalog")
    add_run(site)
    calls = []

    def dying_fsync(fd):
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", dying_fsync)
    with pytest.raises(OSError):
        collect(site / "logs", site / "catalog")
    monkeypatch.undo()
    assert snapshot(site / "catalog") == before
    assert store.load(site / "catalog").revision == 1
    assert not check(store.load(site / "catalog"))
    collect(site / "logs", site / "catalog")  # the next writer cleans up and goes on
    assert not list((site / "catalog").rglob("*.tmp-*"))


def test_crash_between_renames_is_rolled_forward(site, monkeypatch):
    add_run(site)
    real_save = store.save
    monkeypatch.setattr(store, "save", lambda cat: real_save(cat, crash_after=1))
    with pytest.raises(RuntimeError, match="simulated crash"):
        collect(site / "logs", site / "catalog")
    monkeypatch.undo()
    assert (site / "catalog" / store.JOURNAL).exists()
    cat = store.load(site / "catalog")  # a reader finishes the interrupted save
    assert not (site / "catalog" / store.JOURNAL).exists()
    assert cat.revision == 2 and len(cat.records) == 5
    assert not check(cat)


def test_second_writer_fails_clearly(site):
    held = store.acquire(site / "catalog")
    try:
        with pytest.raises(store.CatalogError, match="another benchcat process is writing"):
            collect(site / "logs", site / "catalog")
    finally:
        held.release()


def test_newer_schema_is_refused(site):
    path = site / "catalog/records/resnet50/tensorflow.yaml"
    path.write_text(path.read_text().replace("schema_version: 1", "schema_version: 99"))
    with pytest.raises(store.CatalogError, match=r"records/resnet50/tensorflow.yaml: schema_version 99 is newer"):
        store.load(site / "catalog")


def test_older_schema_is_upgraded_one_step_at_a_time(site, monkeypatch):
    # Pretend the current schema is 3 and the catalog on disk is 1: both steps must run, in order.
    steps = []

    def to_2(doc, name):
        steps.append((2, name))
        return doc

    def to_3(doc, name):
        steps.append((3, name))
        return doc

    monkeypatch.setattr(store, "SCHEMA_VERSION", 3)
    monkeypatch.setitem(store.MIGRATIONS, 2, to_2)
    monkeypatch.setitem(store.MIGRATIONS, 3, to_3)
    cat = store.load(site / "catalog", use_cache=False)
    assert [s for s, name in steps if name == "catalog.yaml"] == [2, 3]
    assert "records/resnet50/tensorflow.yaml" in cat.migrated
    with store.lock(site / "catalog"):
        store.save(cat)
    assert "schema_version: 3" in (site / "catalog/catalog.yaml").read_text()


def test_missing_migration_step_is_an_error(site, monkeypatch):
    monkeypatch.setattr(store, "SCHEMA_VERSION", 2)
    with pytest.raises(store.CatalogError, match="no migration from schema_version 1 to 2"):
        store.load(site / "catalog", use_cache=False)


def test_hand_edits_are_caught_by_validate(site):
    path = site / "catalog/records/resnet50/tensorflow.yaml"
    text = path.read_text()
    path.write_text(text.replace("median: 320.0", "median: 999.0", 1))
    findings = check(store.load(site / "catalog"))
    assert len(findings) == 1 and "metrics do not match the runs" in findings[0]


def test_unknown_keys_are_refused_with_the_file(site):
    path = site / "catalog/records/resnet50/tensorflow.yaml"
    path.write_text(path.read_text().replace("  headline: throughput", "  headline: throughput\n  speedup: 7.5", 1))
    with pytest.raises(
        store.CatalogError,
        match=r"(?s)records/resnet50/tensorflow.yaml: record 1: .*speedup.*Extra inputs are not permitted",
    ):
        store.load(site / "catalog")


def test_cache_never_hides_an_edit(site):
    store.load(site / "catalog")  # warm the cache
    path = site / "catalog/records/resnet50/tensorflow.yaml"
    path.write_text(path.read_text().replace("resnet50_b128_fp32_1.log", "renamed.log", 1))
    cat = store.load(site / "catalog")
    assert any(run.source.path.endswith("/renamed.log") for r in cat.records.values() for run in r.runs)


def test_unsafe_yaml_is_not_executed(site):
    (site / "catalog/catalog.yaml").write_text(
        "schema_version: 1\nrevision: !!python/object/apply:os.system ['true']\n"
    )
    with pytest.raises(store.CatalogError, match="invalid YAML"):
        store.load(site / "catalog")


def test_head_files_read_from_the_cache_equal_the_yaml(site):
    add_run(site)
    collect(site / "logs", site / "catalog")  # a second revision: history has two entries
    cached = store.load(site / "catalog")
    cached = store.load(site / "catalog")  # now every file comes from the JSON cache
    plain = store.load(site / "catalog", use_cache=False)
    assert (cached.revision, cached.settings, cached.history) == (plain.revision, plain.settings, plain.history)
    assert len(cached.history) == 2


def test_a_hand_edited_history_is_read_even_where_json_cannot_hold_it(site):
    store.load(site / "catalog")  # warm the cache
    path = site / "catalog/history.yaml"
    path.write_text(path.read_text().replace("date: ", "date: 2026-11-22 #", 1))  # a YAML timestamp
    cat = store.load(site / "catalog")
    assert str(cat.history[0]["date"]) == "2026-11-22"
