"""Rendered pages of the fixture site: golden files, determinism, escaping, redaction, builds."""

import html
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import sitekit
from typer.testing import CliRunner

from benchcat import store
from benchcat.cli import app
from benchcat.render import Settings, render, render_site

GOLDEN = Path(__file__).parent / "golden" / "site"
BIN = Path(sys.executable).parent
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


def build(site: Path, tool: str = "mkdocs") -> Path:
    args = [str(BIN / "mkdocs"), "build", "--strict", "-q"] if tool == "mkdocs" else [str(BIN / "zensical"), "build"]
    done = subprocess.run(args, cwd=site, env=ENV, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    return site / "site"


def site_text(built: Path) -> dict[str, bytes]:
    return {p.relative_to(built).as_posix(): p.read_bytes() for p in built.rglob("*") if p.is_file()}


def test_golden_pages(fixture_site, update_golden):
    files = render(Settings.load(fixture_site))
    if update_golden:
        shutil.rmtree(GOLDEN, ignore_errors=True)
        for rel, data in files.items():
            (GOLDEN / rel).parent.mkdir(parents=True, exist_ok=True)
            (GOLDEN / rel).write_bytes(data)
    expected = {p.relative_to(GOLDEN).as_posix() for p in GOLDEN.rglob("*") if p.is_file()}
    assert set(files) == expected, "generated files differ from tests/golden/site (pytest --update-golden)"
    for rel, data in files.items():
        assert data == (GOLDEN / rel).read_bytes(), f"{rel} differs from its golden file (pytest --update-golden)"


def test_same_catalog_renders_byte_identical_pages(fixture_site, tmp_path):
    first = render(Settings.load(fixture_site))
    assert render(Settings.load(fixture_site)) == first
    # the same records written in the opposite order, through a fresh catalog folder
    cat = store.load(fixture_site / "catalog")
    shuffled = store.Catalog(path=fixture_site / "catalog", revision=cat.revision, history=cat.history)
    for rid in sorted(cat.records, reverse=True):
        shuffled.records[rid] = cat.records[rid]
    shutil.rmtree(fixture_site / "catalog")
    store.save(shuffled)
    assert render(Settings.load(fixture_site)) == first


def test_write_touches_only_changed_files_and_drops_stale_ones(fixture_site):
    _, changed = render_site(fixture_site)
    assert "comparisons/framework-configs.md" in changed
    assert render_site(fixture_site)[1] == []
    (fixture_site / "reports" / "grad-accum.yaml").unlink()
    changed = render_site(fixture_site)[1]
    assert "comparisons/grad-accum.md" in changed
    assert not (fixture_site / "site_src/generated/comparisons/grad-accum.md").exists()


def test_hostile_strings_from_logs_show_as_text(tmp_path):
    site = sitekit.build_site(tmp_path / "s", redact="redact: {}\n")
    render_site(site)
    for path in (site / "site_src/generated").rglob("*.md"):
        text = path.read_text()
        assert "<script>alert" not in text, path
        assert "*beta*" not in text and "[x](y)" not in text, path
    built = site_text(build(site))
    for rel, data in built.items():
        if rel.endswith(".html"):
            assert b"<script>alert(1)" not in data, rel
            assert b"<em>beta</em>" not in data, rel
    envs = html.unescape(built["generated/environments/index.html"].decode())
    assert sitekit.HOSTILE in envs and "1.2|*beta*_[x](y)" in envs
    assert "&#60;script&#62;alert(1)" in built["generated/environments/index.html"].decode()  # text, not a tag


def test_redacted_value_appears_nowhere_in_the_built_site(tmp_path):
    secret = sitekit.PRIVATE_HOST
    site = sitekit.build_site(tmp_path / "s", redact=f"redact:\n  values: [{secret}]\n  patterns: ['/home/[a-z]+']\n")
    render_site(site)
    built = site_text(build(site))
    assert any(b"[redacted]" in data for data in built.values())
    for rel, data in built.items():
        assert secret.encode() not in data, f"{secret} in {rel}"
        assert b"/home/alice" not in data, rel
    for path in (site / "site_src/generated").rglob("*"):
        assert not path.is_file() or secret.encode() not in path.read_bytes(), path


def test_pages_carry_no_timestamp_and_charts_are_inert_json(fixture_site):
    files = render(Settings.load(fixture_site))
    page = files["scaling/bert-base.md"].decode()
    assert page.count('<script type="application/json" class="bc-chart-data"') == 4
    assert "cdn" not in b"".join(files.values()).decode().lower()
    render_site(fixture_site)
    assert (fixture_site / "site_src/assets/plotly.min.js").stat().st_size > 1_000_000


def test_empty_catalog_builds_strict(tmp_path):
    site = tmp_path / "new"
    runner = CliRunner()
    result = runner.invoke(app, ["init", str(site)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["render", "--site", str(site)])
    assert result.exit_code == 0, result.output
    built = build(site)
    assert b"The catalog is empty" in (built / "index.html").read_bytes()
    assert runner.invoke(app, ["init", str(site)]).exit_code != 0  # not over an existing site


def test_site_templates_override_packaged_ones(fixture_site):
    (fixture_site / "templates" / "coverage.md.j2").write_text("# Our coverage\n\n{{ rows|length }} rows\n")
    files = render(Settings.load(fixture_site))
    assert files["coverage.md"] == b"# Our coverage\n\n2 rows\n"


def test_mkdocs_and_zensical_build_the_same_pages(fixture_site):
    render_site(fixture_site)
    mk = site_text(build(fixture_site))
    assert "generated/comparisons/framework-configs/index.html" in mk
    shutil.rmtree(fixture_site / "site")
    if shutil.which("zensical", path=str(BIN)) is None:
        pytest.skip("zensical is not installed in this environment")
    zen = site_text(build(fixture_site, "zensical"))
    pages = ["index.html", "generated/comparisons/framework-configs/index.html",
             "generated/scaling/bert-base/index.html", "generated/vendors/iluvatar-vs-v100/index.html"]  # fmt: skip
    for page in pages:
        assert page in zen, page
    assert b"bc-chart-data" in zen["generated/scaling/bert-base/index.html"]
    assert b"Iluvatar BI-V100" in zen["index.html"]  # the snippet-included home counts
    assert "assets/plotly.min.js" in zen
