"""The HTML pages in a real browser: headless Chromium (Debian's ``chromium`` and
``chromium-driver``) driven by selenium. The page is loaded from disk; the test moves the
report's slider and checks that the token view and the point on the compression curve change,
reads the hover text of a multi-byte token, and checks that there were no console errors and no
network requests. Screenshots go to ``$BYTEPAIR_TEST_ARTIFACTS`` (default: the test's tmp dir).

Skipped only when Chromium or selenium is missing outside CI; with ``CI`` set they must be there.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import bytepair
from bytepair.analysis import Corpus
from bytepair.views import write_html
from bytepair.views.report import write_report

SAMPLE = Path(bytepair.__file__).parent / "data" / "tinyshakespeare.txt"
SHOWN = "To be, or not to be: that is the question. 東京 café 🙂\n\tWhether 'tis nobler in the mind"


def _chromium() -> tuple[str, str] | None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    found = _chromium()
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        found = None
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("CI: the browser tests need chromium, chromium-driver and selenium (see .ci/run)")
        pytest.skip("chromium / chromedriver / selenium not installed (apt-get install chromium chromium-driver)")
    browser, chromedriver = found
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1200,1500"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    d = webdriver.Chrome(service=Service(chromedriver), options=options)
    try:
        yield d
    finally:
        d.quit()


@pytest.fixture
def artifacts(tmp_path: Path) -> Path:
    out = Path(os.environ.get("BYTEPAIR_TEST_ARTIFACTS", tmp_path))
    out.mkdir(parents=True, exist_ok=True)
    return out


@pytest.fixture(scope="module")
def tok() -> bytepair.Tokenizer:
    return bytepair.train(str(SAMPLE), vocab_size=1000)


def _load(driver: Any, path: Path) -> None:
    driver.get_log("browser")  # drop what earlier pages logged
    driver.get_log("performance")
    driver.get(path.resolve().as_uri())


def _check_clean(driver: Any) -> None:
    errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    assert errors == []
    requests = []
    for entry in driver.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg["method"] == "Network.requestWillBeSent":
            requests.append(msg["params"]["request"]["url"])
    assert [u for u in requests if not u.startswith("file://")] == []
    assert driver.execute_script("return performance.getEntriesByType('resource').length") == 0


def _hover(driver: Any, element: Any) -> str:
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(driver).move_to_element(element).perform()
    tip = driver.find_element("id", "tip")
    assert tip.is_displayed()
    return str(tip.text)


def _multibyte(driver: Any, char: str) -> Any:
    for span in driver.find_elements("css selector", "#view .tok"):
        if span.text.startswith(char):
            return span
    raise AssertionError(f"no token segment for {char!r}")


def test_report_slider_moves_the_view_and_the_curve_point(driver: Any, tok: bytepair.Tokenizer, tmp_path: Path, artifacts: Path) -> None:
    from selenium.webdriver.common.keys import Keys

    page = tmp_path / "report.html"
    write_report(page, tok, [Corpus("shakespeare", [str(SAMPLE)])], sample_text=SHOWN)
    _load(driver, page)
    view = driver.find_element("id", "view")
    point = driver.find_element("id", "curve-point")
    count = lambda: len(view.find_elements("css selector", ".tok"))  # noqa: E731
    before = (view.get_attribute("innerHTML"), point.get_attribute("cx"), point.get_attribute("cy"), count())
    # the page's own numbers: the sample at full size, as bytepair encodes it
    assert driver.execute_script("return BP.decompose(DATA.tree, DATA.sample_ids, 1000).length") == len(tok.encode(SHOWN))
    slider = driver.find_element("id", "size")
    slider.send_keys(Keys.HOME)  # to 256: bytes only
    after = (view.get_attribute("innerHTML"), point.get_attribute("cx"), point.get_attribute("cy"), count())
    assert after[0] != before[0] and after[1] != before[1] and after[2] != before[2]
    assert driver.find_element("id", "size-label").text == "256 tokens"
    # at 256 every byte is a token: segments = characters, with 東 (3 bytes) one segment of 3 tokens
    ids = [int(i) for s in view.find_elements("css selector", ".tok") for i in s.get_attribute("data-ids").split()]
    assert ids == list(SHOWN.encode())
    tip = _hover(driver, _multibyte(driver, "東"))
    assert "id 230" in tip and "bytes e6 (1 byte)" in tip and "bytes 9d" in tip and "bytes b1" in tip
    slider.send_keys(Keys.END)
    assert view.get_attribute("innerHTML") == before[0] and point.get_attribute("cx") == before[1]
    # a merged token's hover names its merge
    the = next(s for s in view.find_elements("css selector", ".tok") if s.text == "·the")
    i = tok.encode(" the")[0]
    left, right = (tok.token_bytes(j) for j in _parts(tok, i))
    tip = _hover(driver, the)
    assert f"id {i}" in tip and f"merged: {bytepair._display.token_repr(left)} + {bytepair._display.token_repr(right)} -> ' the'" in tip
    driver.find_element("id", "search").send_keys(" the")
    rows = driver.find_elements("css selector", "#merges tbody tr")
    assert rows and all(" the" in r.find_elements("css selector", "td")[3].text for r in rows)
    _check_clean(driver)
    driver.execute_script("window.scrollTo(0, 0)")
    driver.save_screenshot(str(artifacts / "report.png"))
    assert (artifacts / "report.png").stat().st_size > 10_000


def _parts(tok: bytepair.Tokenizer, i: int) -> tuple[int, int]:
    from bytepair.analysis.merges import merge_parts

    parts = merge_parts(tok, i)
    assert parts is not None
    return parts


def test_viz_page_hover_shows_id_bytes_and_merge(driver: Any, tmp_path: Path, artifacts: Path) -> None:
    enc = bytepair.get_encoding("cl100k_base")
    page = tmp_path / "viz.html"
    write_html(page, enc, enc.encode(SHOWN), name="cl100k_base")
    _load(driver, page)
    cafe = next(s for s in driver.find_elements("css selector", "#view .tok") if s.text == "·café")
    tip = _hover(driver, cafe)
    ids = [int(x) for x in cafe.get_attribute("data-ids").split()]
    assert ids == enc.encode(" café")
    for j in ids:
        assert f"id {j}" in tip and enc.token_bytes(j).hex(" ") in tip
    assert "merged:" in tip
    _check_clean(driver)
    driver.save_screenshot(str(artifacts / "viz.png"))
