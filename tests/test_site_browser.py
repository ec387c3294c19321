"""Real browser: Debian chromium driven by playwright opens the built fixture site on 127.0.0.1."""

import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlparse

import pytest

from benchcat.render import render_site

CHROMIUM = shutil.which("chromium")
ARTIFACTS = Path(os.environ.get("BENCHCAT_ARTIFACTS", "tmp/artifacts"))
PAGES = {
    "home": "",
    "comparison": "generated/comparisons/framework-configs/",
    "scaling": "generated/scaling/bert-base/",
    "vendor": "generated/vendors/iluvatar-vs-v100/",
    "coverage": "generated/coverage/",
    "failures": "generated/failures/",
}
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian chromium is not installed (scripts/setup installs it when run as root)"
)


@contextmanager
def serve(folder: Path):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()


def build(site: Path, tool: str) -> Path:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    render_site(site)  # zensical runs no hooks
    args = ["build", "--strict", "-q"] if tool == "mkdocs" else ["build"]
    subprocess.run([str(Path(sys.executable).with_name(tool)), *args], cwd=site, check=True, env=env)
    return site / "site"


@contextmanager
def browser_page(scheme: str = "default"):
    """A chromium page that records console errors and aborts (and records) requests leaving localhost."""
    sync_api = pytest.importorskip("playwright.sync_api")
    outside, errors = [], []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        palette = f"{{index: {int(scheme == 'slate')}, color: {{scheme: '{scheme}'}}}}"
        context.add_init_script(f"localStorage.setItem('/.__palette', JSON.stringify({palette}))")

        def route(r):
            if urlparse(r.request.url).hostname not in ("127.0.0.1", "localhost"):
                outside.append(r.request.url)
                return r.abort()
            return r.continue_()

        context.route("**/*", route)
        page = context.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        yield page
        browser.close()
    assert outside == [], f"requests left localhost: {outside}"
    assert errors == [], f"console errors: {errors}"


def charts_drawn(page, name: str) -> None:
    page.wait_for_selector(".bc-chart svg.main-svg", timeout=15000)
    charts = page.locator("script.bc-chart-data").count()
    assert charts >= 1, f"{name}: no chart data"
    assert page.locator(".bc-chart .plot-container svg.main-svg").count() >= charts, f"{name}: a chart was not drawn"


@pytest.mark.parametrize("scheme", ["default", "slate"])
def test_pages_draw_charts_offline_without_errors(fixture_site, scheme):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with serve(build(fixture_site, "mkdocs")) as url, browser_page(scheme) as page:
        for name, path in PAGES.items():
            page.goto(url + path, wait_until="networkidle")
            if name in ("scaling", "vendor"):
                charts_drawn(page, name)
            assert page.evaluate("document.body.getAttribute('data-md-color-scheme')") == scheme
            page.screenshot(path=str(ARTIFACTS / f"{name}-{scheme}.png"), full_page=True)
        # instant navigation swaps the page body without reloading scripts: charts are drawn all the same
        page.goto(url, wait_until="networkidle")
        page.click("a.md-nav__link[href$='generated/scaling/']")
        page.click("a[href$='bert-base/']")
        charts_drawn(page, "scaling after instant navigation")


def test_zensical_site_draws_charts(fixture_site):
    with serve(build(fixture_site, "zensical")) as url, browser_page() as page:
        page.goto(url + PAGES["scaling"], wait_until="networkidle")
        charts_drawn(page, "scaling (zensical)")
        page.screenshot(path=str(ARTIFACTS / "scaling-zensical.png"), full_page=True)
