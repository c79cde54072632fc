"""The HTML pages in a real browser: headless Chromium (Debian's ``chromium`` and
``chromium-driver``) driven by selenium. The page is loaded from disk; the test moves the
report's slider and checks that the token view and the point on the compression curve change,
reads the hover text of a multi-byte token, and checks that there were no console errors and no
network requests. Screenshots go to ``$BYTEPAIR_TEST_ARTIFACTS`` (default: the test's tmp dir).

The hostile-page tests open the ``viz --html`` and ``report`` pages of every shipped encoding
(each has a token with ``<!--``) and of a tokenizer made of tokens that break out of script
blocks and headings (tests/hostile_tokens.py), loaded from a path holding the templates'
placeholders and markup: each page must draw, log no error, and run none of the payloads.

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
from bytepair.cli import main
from bytepair.views import write_html
from bytepair.views.report import write_report
from tests.hostile_tokens import HOSTILE_TITLE, PAYLOAD, TEXT, hostile_tokenizer

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


# A directory name for the hostile tokenizer: the templates' placeholders and markup, as a path
# given to ``viz -t`` / ``report -t`` may hold them (the page title is made from that path).
HOSTILE_DIR = "__DATA__ __TITLE__ __STYLE__ <svg onload=window.PWNED=2> <!-- & x"
# The corpus file's name becomes the report's source name.
HOSTILE_CORPUS = "<svg onload=window.PWNED=3> <!-- \u2028.txt"
VIZ_TEXT = SHOWN + " <!-- x --> </script> " + TEXT


@pytest.fixture(scope="module")
def tokenizers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The ``-t`` argument for each page's tokenizer: every shipped encoding by name, and two
    tokenizers saved under :data:`HOSTILE_DIR`: the hostile one, and one whose only merged token
    is the script payload (with nothing else in its data to garble the markup around it, a
    payload pasted into the heading runs)."""
    out = {n: n for n in bytepair.list_encoding_names()}
    for which, tok in (("hostile", hostile_tokenizer()), ("payload", hostile_tokenizer([PAYLOAD], []))):
        path = tmp_path_factory.mktemp(which) / HOSTILE_DIR / "tok.json"
        path.parent.mkdir()
        tok.save(path)
        out[which] = str(path)
    return out


TOKENIZERS = [*bytepair.list_encoding_names(), "hostile", "payload"]


def _nothing_injected(driver: Any, title: str) -> None:
    """The title is shown as text in the tab and the one heading, no payload ran, and no element
    has an event-handler attribute (the pages set none; markup from data would)."""
    got = driver.execute_script(
        """return {pwned: typeof window.PWNED, title: document.title,
                   h1: Array.from(document.querySelectorAll("h1"), e => e.textContent),
                   handlers: Array.from(document.querySelectorAll("*")).filter(
                     e => Array.from(e.attributes).some(a => a.name.startsWith("on"))).length,
                   scripts: document.scripts.length}"""
    )
    assert got == {"pwned": "undefined", "title": title, "h1": [title], "handlers": 0, "scripts": 3}


def _shown_ids(driver: Any) -> list[int]:
    """The ids of the token view's segments, in order (read in one call: a round trip per span
    would cost more than the page)."""
    got = driver.execute_script("return Array.from(document.querySelectorAll('#view .tok'), s => s.dataset.ids).join(' ')")
    return [int(i) for i in str(got).split()]


@pytest.mark.parametrize("which", TOKENIZERS)
def test_viz_page_of_hostile_tokens_draws_and_runs_no_injected_script(
    driver: Any, tokenizers: dict[str, str], which: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = tokenizers[which]
    page = tmp_path / "viz.html"
    assert main(["viz", "-t", name, "--text", VIZ_TEXT, "--html", str(page)]) == 0
    capsys.readouterr()
    tok = bytepair.Tokenizer.from_file(name) if which in ("hostile", "payload") else bytepair.get_encoding(name)
    _load(driver, page)
    _nothing_injected(driver, f"bytepair viz: {name}")
    shown = _shown_ids(driver)
    assert shown  # a page whose data did not parse draws no token
    assert shown == tok.encode(VIZ_TEXT, disallowed_special=())
    assert driver.find_element("id", "summary").text.startswith(name + ": ")
    _check_clean(driver)


@pytest.mark.parametrize("which", TOKENIZERS)
def test_report_page_of_hostile_tokens_draws_and_runs_no_injected_script(
    driver: Any, tokenizers: dict[str, str], which: str, tmp_path: Path, artifacts: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = tokenizers[which]
    corpus = tmp_path / HOSTILE_CORPUS
    corpus.write_text(VIZ_TEXT * 3, encoding="utf-8")
    page = tmp_path / "report.html"
    assert main(["report", "-t", name, str(corpus), "-o", str(page)]) == 0
    capsys.readouterr()
    _load(driver, page)
    _nothing_injected(driver, f"bytepair report: {name}")
    # every section drew: the sample's tokens, the curve and its point, the Zipf points, the
    # fertility bar named after the corpus file, the merge table
    assert driver.find_elements("css selector", "#view .tok")
    assert driver.find_elements("css selector", "#curve polyline")
    assert driver.find_element("id", "curve-point").get_attribute("cx")
    assert driver.find_elements("css selector", "#zipf circle")
    assert HOSTILE_CORPUS in driver.execute_script("return document.getElementById('fertility').textContent")
    assert driver.find_elements("css selector", "#merges tbody tr")
    assert driver.find_element("id", "about").text.startswith(name + ": ")
    _check_clean(driver)
    if which == "hostile":
        driver.save_screenshot(str(artifacts / "report-hostile.png"))


@pytest.mark.parametrize("text", [TEXT, f"a {PAYLOAD} b"], ids=["hostile", "payload"])
def test_write_html_title_with_placeholders_and_markup_is_text(driver: Any, text: str, tmp_path: Path) -> None:
    tok = hostile_tokenizer()
    ids = tok.encode(text, allowed_special="all")
    page = tmp_path / "viz.html"
    write_html(page, tok, ids, title=HOSTILE_TITLE)
    _load(driver, page)
    _nothing_injected(driver, HOSTILE_TITLE)
    assert _shown_ids(driver) == ids
    _check_clean(driver)
