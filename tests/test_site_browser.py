"""Real browser: Debian chromium driven by playwright opens the built fixture site on 127.0.0.1."""

import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urlparse

import pytest

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


@pytest.fixture
def served(fixture_site):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    mkdocs = Path(sys.executable).with_name("mkdocs")
    subprocess.run([str(mkdocs), "build", "--strict", "-q"], cwd=fixture_site, check=True, env=env)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(fixture_site / "site"))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


@pytest.mark.skipif(CHROMIUM is None, reason="Debian chromium is not installed (scripts/setup installs it as root)")
@pytest.mark.parametrize("scheme", ["default", "slate"])
def test_pages_draw_charts_offline_without_errors(served, scheme):
    sync_api = pytest.importorskip("playwright.sync_api")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    outside, errors = [], []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        context = browser.new_context(viewport={"width": 1400, "height": 1000}, color_scheme="light")
        context.add_init_script(
            f"localStorage.setItem('/.__palette', JSON.stringify({{index: {int(scheme == 'slate')}, "
            f"color: {{scheme: '{scheme}'}}}}))"
        )

        def route(r):
            host = urlparse(r.request.url).hostname
            if host not in ("127.0.0.1", "localhost"):
                outside.append(r.request.url)
                return r.abort()
            return r.continue_()

        context.route("**/*", route)
        page = context.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        for name, path in PAGES.items():
            page.goto(served + path, wait_until="networkidle")
            if name in ("scaling", "vendor"):
                page.wait_for_selector(".bc-chart svg.main-svg", timeout=15000)
                drawn = page.locator(".bc-chart svg.main-svg").count()
                assert drawn >= 1, f"{name}: no chart drawn"
                charts = page.locator("script.bc-chart-data").count()
                assert page.locator(".bc-chart .plot-container").count() == charts, f"{name}: a chart was not drawn"
            assert page.evaluate("document.body.getAttribute('data-md-color-scheme')") == scheme
            page.screenshot(path=str(ARTIFACTS / f"{name}-{scheme}.png"), full_page=True)
        # instant navigation: follow a nav link, the charts of the new page are drawn too
        page.goto(served, wait_until="networkidle")
        page.click("a.md-nav__link[href$='generated/scaling/']")
        page.click("a[href$='bert-base/']")
        page.wait_for_selector(".bc-chart svg.main-svg", timeout=15000)
        assert "alert(1)" not in page.evaluate("() => window.__alerted || ''")
        browser.close()
    assert outside == [], f"requests left localhost: {outside}"
    assert errors == [], f"console errors: {errors}"
