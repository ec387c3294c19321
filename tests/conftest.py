import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"

os.environ.setdefault("SOURCE_DATE_EPOCH", "1700000000")


@pytest.fixture
def shared():
    """../shared beside the project; tests that read real logs skip when it is absent."""
    if not (SHARED / "reallogs").is_dir():
        pytest.skip("../shared/reallogs not present")
    return SHARED


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", help="re-write golden files")


@pytest.fixture
def update_golden(request):
    return request.config.getoption("--update-golden")


@pytest.fixture
def fixture_site(tmp_path):
    """A scaffolded site holding the fixture catalog of tests/sitekit.py (not yet rendered)."""
    import sitekit

    return sitekit.build_site(tmp_path / "site")
