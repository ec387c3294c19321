"""The `catalog` command: thin adapters, each documented, each doing what its help says."""

import csv
import io
import json
import re
import shutil

import jsonschema
import pytest
from typer.testing import CliRunner

from benchcat import facts, query, store
from benchcat.cli import app
from tests.test_collect import FIXTURES

runner = CliRunner()


@pytest.fixture
def site(tmp_path, monkeypatch):
    shutil.copytree(FIXTURES, tmp_path / "logs")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def invoke(*args):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_every_command_has_help_with_an_example():
    names = [c.name or c.callback.__name__ for c in app.registered_commands]
    assert {"collect", "list", "show", "validate", "schema", "migrate", "collectors"} <= set(names)
    for name in names:
        result = invoke(name, "--help")
        assert result.exit_code == 0 and "Example: catalog " in result.stdout, name


def test_collect_summary_and_strict(site):
    result = invoke("collect", "logs")
    assert result.exit_code == 0
    out = result.stdout
    assert "read 9 files" in out
    assert "records: 4 added, 0 changed, 0 unchanged, 0 removed (catalog revision 1, 4 records)" in out
    assert "skipped 1 file(s) of unknown format:\n  logs/README.txt" in out
    assert "problems: 1 (1 errors, 0 warnings)" in out
    assert "logs/tensorflow/resnet50/bz256/1n1g/resnet50_b256_fp32_1.log:" in out
    strict = invoke("collect", "logs", "--strict")
    assert strict.exit_code == 1 and "4 unchanged" in strict.stdout


def test_collect_shows_the_first_problems_and_writes_them_all_on_request(site, monkeypatch):
    monkeypatch.setattr(query, "SHOWN_PROBLEMS", 2)
    for i in range(3):  # three more empty logs: four problems with the fixture's own
        (site / "logs" / f"empty{i}.log").write_text("")
    result = invoke("collect", "logs", "--problems-file", "problems.txt")
    assert "problems: 4 (1 errors, 3 warnings)" in result.stdout
    assert "... and 2 more (--problems-file FILE writes them all)" in result.stdout
    written = (site / "problems.txt").read_text().splitlines()
    assert len(written) == 4 and "logs/empty2.log: warning: empty file" in written
    assert all(line in result.stdout for line in written[:2])


def test_unchanged_counts_the_records_this_root_feeds_not_the_whole_catalog(site):
    invoke("collect", "logs")
    other = site / "more" / "tensorflow" / "resnet50" / "bz64" / "1n1g"
    other.mkdir(parents=True)
    line = "I0826 keras_utils.py:133] TimeHistory: 9.9 seconds, {} examples/second between steps {} and {}\n"
    (other / "resnet50_b64_fp32_1.log").write_text("".join(line.format(100.0, a, a + 20) for a in range(0, 120, 20)))
    first = invoke("collect", "more").stdout
    assert "records: 1 added, 0 changed, 0 unchanged, 0 removed (catalog revision 2, 5 records)" in first
    again = invoke("collect", "more").stdout  # from the collect cache
    assert "records: 0 added, 0 changed, 1 unchanged, 0 removed (catalog revision 2, 5 records)" in again
    (site / "catalog" / ".cache" / "collect.json").unlink()  # and the same without it
    assert "records: 0 added, 0 changed, 1 unchanged, 0 removed (catalog revision 2, 5 records)" in invoke(
        "collect", "more"
    ).stdout


def test_collect_missing_root_is_a_clear_error(site):
    result = invoke("collect", "nowhere")
    assert result.exit_code == 2 and "nowhere: no such file or directory" in result.stderr


def test_list_filters_and_formats(site):
    invoke("collect", "logs")
    table = invoke("list", "--framework", "mxnet")
    assert table.exit_code == 0 and "bert-base" in table.stdout and "resnet50" not in table.stdout
    rows = json.loads(invoke("list", "--format", "json").stdout)
    assert len(rows) == 4
    row = next(r for r in rows if r["config"]["devices_per_node"] == 8)
    assert row["config"]["devices"] == 8 and row["headline_value"] == 2400.0 and len(row["runs"]) == 2
    assert set(row) >= {"id", "benchmark", "config", "system", "software", "runs", "metrics"}
    table = list(csv.DictReader(io.StringIO(invoke("list", "--format", "csv", "--model", "resnet50").stdout)))
    assert len(table) == 3 and {"id", "devices", "metric", "value", "runs", "failed_runs"} <= set(table[0])
    site_csv = facts.catalog_csv(facts.facts(query.select(store.load(site / "catalog"), model="resnet50")))
    assert invoke("list", "--format", "csv", "--model", "resnet50").stdout == site_csv  # one shape for both
    assert invoke("list", "--format", "xml").exit_code == 2


def test_show_by_prefix(site):
    invoke("collect", "logs")
    result = invoke("show", "bert-base-mxnet")
    assert result.exit_code == 0 and "throughput: 512.0" in result.stdout
    assert invoke("show", "resnet50").exit_code == 2  # ambiguous prefix
    assert "no record id starts with" in invoke("show", "zzz").stderr


def test_validate_ok_and_broken(site):
    invoke("collect", "logs")
    assert invoke("validate").exit_code == 0
    path = site / "catalog/records/bert-base/mxnet.yaml"
    path.write_text(re.sub(r"median: [0-9.]+", "median: 1.0", path.read_text(), count=1))
    result = invoke("validate")
    assert result.exit_code == 1 and "metrics do not match the runs" in result.stdout


def test_schema_describes_the_stored_records(site):
    invoke("collect", "logs")
    schema = json.loads(invoke("schema").stdout)
    validator = jsonschema.Draft202012Validator(schema)
    for row in json.loads(invoke("list", "--format", "json").stdout):
        row.pop("headline_value")
        row["config"].pop("devices")
        validator.validate(row)
    props = schema["$defs"]["Config"]["properties"]
    assert props["batch_size"]["description"] == "Batch size per device."
    assert schema["additionalProperties"] is False


def test_migrate_with_nothing_to_do(site):
    invoke("collect", "logs")
    result = invoke("migrate")
    assert result.exit_code == 0 and "upgraded 0 file(s)" in result.stdout


def test_collectors_lists_every_registered_format():
    import collectors

    out = invoke("collectors").stdout
    for c in collectors.all_collectors():
        assert c.name in out and c.description in out
    assert not collectors.broken()
