"""Golden files: every fixture tree collected into a catalog, records and problems as YAML.

Re-write them with ``pytest --update-golden`` after a deliberate change, and review the diff.
"""

import pytest
from collector_helpers import EXPECTED, FIXTURES, GOLDEN, as_yaml, collect_tree


@pytest.mark.parametrize("fmt", sorted(EXPECTED))
def test_fixture_tree_matches_golden(fmt, tmp_path, update_golden):
    report, cat = collect_tree(FIXTURES / fmt, tmp_path)
    text = as_yaml(report, cat)
    golden = GOLDEN / f"{fmt}.yaml"
    if update_golden:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text)
    assert golden.exists(), f"no golden file {golden.name}; run pytest --update-golden"
    assert text == golden.read_text()


MIXED = {"dlperf", "formats", "tables"}  # mixed trees with their own tests (test_collect, test_formats, test_tables)


def test_every_fixture_folder_has_an_expected_collector():
    assert sorted(p.name for p in FIXTURES.iterdir() if p.is_dir() and p.name not in MIXED) == sorted(EXPECTED)
