"""The explorer in a real headless Chromium (Debian's chromium and chromium-driver, driven
by selenium): click through the buggy route-flow's violating trace, see the violated
property and the switch that holds the forgotten packet, reload the URL and see the same
state. A screenshot is saved under the test's tmp_path (and, with
``EXPLORER_SCREENSHOT=docs/explorer.png``, there too: how the README's picture is made).

Skipped, with the reason, where /usr/bin/chromium or /usr/bin/chromedriver is absent
(``.ci/run`` installs both with apt-get where it can)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from conftest import child_preexec
from explorer_serving import Served

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
BUGGY = ("route-flow", "-t", "linear:2", "--bug", "forget-last-hop")

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"needs Chromium at {CHROMIUM} (apt-get install chromium)"),
    pytest.mark.skipif(not CHROMEDRIVER.exists(),
                       reason=f"needs ChromeDriver at {CHROMEDRIVER} (apt-get install chromium-driver)"),
]


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    webdriver = pytest.importorskip("selenium.webdriver", reason="needs selenium (the 'test' extra)")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    # the flags this closed machine needs: no sandbox (root), no background connections
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--window-size=1400,1000", f"--user-data-dir={tmp_path / 'profile'}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def _at(driver: Any, path: str) -> None:
    """Wait until the page shows the state at ``path`` (the page sets body's data-path and
    data-state once it has rendered an answer)."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 60).until(
        lambda d: d.execute_script("return [document.body.dataset.state, document.body.dataset.path]")
        == ["ready", path])


def _text(driver: Any, css: str) -> str:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, css).text


def _classes(driver: Any, css: str) -> set[str]:
    from selenium.webdriver.common.by import By

    return set((driver.find_element(By.CSS_SELECTOR, css).get_attribute("class") or "").split())


def test_click_through_the_violating_trace(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    found = shutil.which("nice-attendre", path=str(Path(sys.executable).parent))
    assert found is not None
    trace_file = tmp_path / "t.json"
    report = subprocess.run([found, "verify", *BUGGY, "--trace-format", "json", "--trace-out", str(trace_file)],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300, preexec_fn=child_preexec())
    assert report.returncode == 1, report.stderr
    trace = json.loads(trace_file.read_text())
    server = Served(*BUGGY, cwd=tmp_path)
    try:
        browser.get(server.base)
        _at(browser, "")
        assert "route-flow (bug: forget-last-hop)" in _text(browser, "#run")
        path: list[str] = []
        for number, said in enumerate(trace["narration"], start=1):
            # the button narrated as the saved trace narrates the step
            buttons = browser.find_elements(By.CSS_SELECTOR, "#enabled button.event")
            chosen = [b for b in buttons if b.text.split("\n")[-1] == said[0]]
            assert len(chosen) == 1, (number, said[0], [b.text for b in buttons])
            path.append(chosen[0].get_attribute("data-index"))
            chosen[0].click()
            _at(browser, ".".join(path))
            assert browser.current_url.endswith("#path=" + ".".join(path))
        violated = browser.find_element(By.ID, "prop-no-forgotten-packets")
        assert violated.get_attribute("data-status") == "violated"
        assert "VIOLATED" in violated.text and "s2 still holds data h1#0 [h1->h2]" in violated.text
        assert _text(browser, "#enabled") == "nothing: the network is quiescent"
        assert "holding" in _classes(browser, "#node-s2") and "holding" not in _classes(browser, "#node-s1")
        assert "holds 1" in _text(browser, "#node-s2")
        # the last step (the controller took s2's packet-in and did nothing) changed s2 alone
        assert "6. controller: RouteFlow.on_packet_in handles packet-in(s2, port 1, h1#0)" in _text(browser, "#last-step")
        assert "changed" in _classes(browser, "#node-s2") and "changed" in _classes(browser, "#switch-s2")
        assert "changed" not in _classes(browser, "#node-s1")
        seen = {css: _text(browser, css) for css in ("#switches", "#properties", "#steps", "#trace-text", "#hosts")}
        # the URL alone reproduces the state
        url = browser.current_url
        browser.refresh()
        _at(browser, ".".join(path))
        assert browser.current_url == url
        assert {css: _text(browser, css) for css in seen} == seen
        assert "holding" in _classes(browser, "#node-s2")
        # back and forward
        browser.find_element(By.ID, "back").click()
        _at(browser, ".".join(path[:-1]))
        assert _classes(browser, "#prop-no-forgotten-packets") == {"property", "pending"}
        browser.find_element(By.ID, "forward").click()
        _at(browser, ".".join(path))
        shot = tmp_path / "explorer.png"
        assert browser.save_screenshot(str(shot))
        assert shot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
        wanted = os.environ.get("EXPLORER_SCREENSHOT")
        if wanted:
            shutil.copyfile(shot, wanted)
    finally:
        server.stop()


def test_an_unknown_path_shows_an_error(browser: Any, tmp_path: Path) -> None:
    server = Served(*BUGGY, cwd=tmp_path)
    try:
        browser.get(server.base + "?path=0.5")
        _at(browser, "error")
        assert "step 2: no event 5" in _text(browser, "#error")
    finally:
        server.stop()
