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


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "ci_may_skip(reason): this test may skip in CI too (e.g. it needs a GPU, which CI never has)"
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """In CI (CI=true) a skip is a failure: a missing browser, framework or Slurm must not pass silently."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and os.environ.get("CI") and not item.get_closest_marker("ci_may_skip"):
        if hasattr(report, "wasxfail"):
            return
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, where everything must run: {reason}"
