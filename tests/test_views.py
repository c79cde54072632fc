"""Token views: segments, the terminal view and the HTML page's content (the browser test is
tests/test_browser.py)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bytepair
from bytepair._display import token_repr
from bytepair.analysis import Corpus
from bytepair.views import colour, render_html, render_terminal, segments, visible, write_html
from tests.hostile_tokens import HOSTILE, HOSTILE_TITLE, SPECIALS, hostile_tokenizer
from tests.hostile_tokens import TEXT as HOSTILE_TEXT

ANSI = re.compile(r"\x1b\[[0-9;]*m")
TEXT = "To be, or not to be\n\tthat is 東京 café 🙂 the end"


@pytest.fixture(scope="module")
def tok() -> bytepair.Tokenizer:
    return bytepair.train_from_iterator(["To be, or not to be, that is the question. " * 50], vocab_size=300)


@given(st.text(max_size=40))
def test_segments_join_back_to_the_text_and_never_show_replacement_chars(text: str) -> None:
    enc = bytepair.get_encoding("cl100k_base")
    text = text.encode("utf-8", "replace").decode("utf-8")  # no lone surrogates
    segs = segments(enc, enc.encode(text, disallowed_special=()))
    assert "".join(s.text or "" for s in segs) == text
    for s in segs:
        assert s.text is not None
        assert b"".join(s.parts) == s.text.encode()
        if len(s.ids) > 1:  # grouped only because a character is split across the tokens
            assert any(_partial(p) for p in s.parts)


def _partial(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return False
    except UnicodeDecodeError:
        return True


def test_a_character_split_across_tokens_is_one_segment(tok: bytepair.Tokenizer) -> None:
    ids = tok.encode("東")
    assert len(ids) == 3  # no merge covers it: one token per byte
    [seg] = segments(tok, ids)
    assert seg.ids == ids and seg.text == "東" and not seg.whole
    plain = render_terminal(tok, ids, color=False)
    assert plain == "東‹e6|9d|b1›│\n"
    assert "\ufffd" not in plain


def test_bytes_that_never_make_a_character_are_hex(tok: bytepair.Tokenizer) -> None:
    segs = segments(tok, [0xE6, 0x41])  # a lead byte, then 'A'
    assert [s.text for s in segs] == [None, "A"]
    assert render_terminal(tok, [0xE6], color=False) == "‹e6›│\n"


def test_terminal_view_marks_whitespace_and_shows_ids(tok: bytepair.Tokenizer) -> None:
    ids = tok.encode("to be\n\tx")
    out = render_terminal(tok, ids, show_ids=True, color=False)
    tokens = [tok.token_bytes(i).decode() for i in ids]
    expected = "".join(visible(t) + f"[{i}]│" + ("\n" if t.endswith("\n") else "") for t, i in zip(tokens, ids))
    assert out == expected + "\n"
    assert visible(" \t\n\r\u00a0") == "·→↵␍\\u00a0"


def test_terminal_colours_are_stable_per_id(tok: bytepair.Tokenizer) -> None:
    ids = tok.encode(TEXT)
    out = render_terminal(tok, ids)
    r, g, b = colour(ids[0])
    assert out.startswith(f"\x1b[48;2;{r};{g};{b}m")
    assert colour(ids[0]) == colour(ids[0]) and colour(1) != colour(2)
    # removing the colours leaves the plain view without separators
    assert ANSI.sub("", out) == render_terminal(tok, ids, color=False).replace("│", "")


def _page_data(page: str) -> dict:  # type: ignore[type-arg]
    m = re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
    assert m is not None
    return json.loads(m.group(1))  # type: ignore[no-any-return]


def test_html_page_is_self_contained_and_holds_the_ids_and_merges(tok: bytepair.Tokenizer) -> None:
    ids = tok.encode(TEXT + " </script><!-- ")
    page = render_html(tok, ids)
    assert not re.search(r"(src|href)\s*=", page)
    assert "default-src 'none'" in page
    data = _page_data(page)
    assert data["ids"] == ids
    for i in ids:
        hexed, shown = data["vocab"][str(i)]
        assert bytes.fromhex(hexed) == tok.token_bytes(i)
    merged = [i for i in ids if i >= 256]
    assert merged
    for i in merged:
        left, right = data["tree"][str(i)]
        assert tok.token_bytes(left) + tok.token_bytes(right) == tok.token_bytes(i)


def test_html_for_a_pretrained_encoding_has_its_merges() -> None:
    enc = bytepair.get_encoding("cl100k_base")
    ids = enc.encode(" the tokenizer")
    data = _page_data(render_html(enc, ids))
    for i in ids:
        if len(enc.token_bytes(i)) > 1:
            left, right = data["tree"][str(i)]
            assert enc.token_bytes(left) + enc.token_bytes(right) == enc.token_bytes(i)


def test_templates_are_package_data() -> None:
    root = Path(bytepair.__file__).parent / "views" / "templates"
    assert {"viz.html", "report.html", "tokens.js", "style.css"} <= {p.name for p in root.iterdir()}


def _data_block(page: str) -> str:
    """The text of the page's JSON block as the HTML parser reads it: from the opening tag to the
    first ``</script`` (any case), which ends a script element wherever it stands."""
    opening = '<script type="application/json" id="data">'
    assert page.count(opening) == 1
    start = page.index(opening) + len(opening)
    return page[start : page.lower().index("</script", start)]


def _check_block(page: str) -> object:
    """The JSON block is inert in HTML (no "<": nothing in it can end the element or open a
    comment; no raw U+2028 / U+2029) and valid JSON; returns what it parses to."""
    block = _data_block(page)
    assert "<" not in block and ">" not in block and "&" not in block
    assert "\u2028" not in block and "\u2029" not in block
    return json.loads(block)


def _shown_title(page: str) -> tuple[str, list[str]]:
    """The ``<title>`` text and every ``<h1>``'s text as written in the page."""
    m = re.search(r"<title>(.*?)</title>", page, re.S)
    assert m is not None
    return m.group(1), re.findall(r"<h1>(.*?)</h1>", page, re.S)


@pytest.mark.parametrize("view", ["viz", "report", "viz-cli", "report-cli"])
def test_a_title_or_path_with_placeholders_and_markup_is_escaped_text(view: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bytepair.cli import main
    from bytepair.views.report import write_report

    tok = hostile_tokenizer()
    ids = tok.encode(HOSTILE_TEXT, allowed_special="all")
    page = tmp_path / "page.html"
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(HOSTILE_TEXT * 3, encoding="utf-8")
    # a path cannot hold "/" in a name: the placeholders and markup go into a directory's name
    path = tmp_path / "__DATA__ __TITLE__ <svg onload=window.PWNED=2> <!-- &" / "tok.json"
    path.parent.mkdir()
    tok.save(path)
    if view == "viz":
        title = HOSTILE_TITLE
        write_html(page, tok, ids, title=title)
    elif view == "report":
        title = f"bytepair report: {HOSTILE_TITLE}"
        write_report(page, tok, [Corpus("c", [str(corpus)])], name=HOSTILE_TITLE)
    elif view == "viz-cli":
        title = f"bytepair viz: {path}"
        assert main(["viz", "-t", str(path), "--text", HOSTILE_TEXT, "--html", str(page)]) == 0
    else:
        title = f"bytepair report: {path}"
        assert main(["report", "-t", str(path), str(corpus), "-o", str(page)]) == 0
    capsys.readouterr()
    text = page.read_text("utf-8")
    assert _shown_title(text) == (html.escape(title), [html.escape(title)])
    assert "<svg onload" not in text and "<img src" not in text  # the payloads appear only escaped
    _check_block(text)


# Strings that break a JSON block in a page or a JavaScript string: ending the script element
# (in any case, with a space), HTML comments (script data's escaped states), the old "<\!--"
# escape (not a JSON escape), JavaScript's line terminators, quotes and backslashes.
BREAKERS = [*HOSTILE, "</SCRIPT >", "</script", "<!-- <script>", "\u2028\u2029", "\\u003c", "\\\\\"", "'\"", "\x00\x1f\x7f"]


def test_embedded_json_parses_back_to_the_data_for_hostile_strings() -> None:
    from bytepair.views.page import build_page

    data = {"strings": BREAKERS, "keys": {s: i for i, s in enumerate(BREAKERS)}, "nested": [[s, {s: [s]}] for s in BREAKERS]}
    for name in ("viz.html", "report.html"):
        assert _check_block(build_page(name, "t", data)) == data


def test_viz_page_json_holds_hostile_tokens_and_special_tokens() -> None:
    tok = hostile_tokenizer()
    ids = tok.encode(HOSTILE_TEXT, allowed_special="all")
    got = _check_block(render_html(tok, ids))
    assert isinstance(got, dict)
    assert got["ids"] == ids and got["special"] == sorted(tok.special_tokens.values())
    for i in ids:
        hexed, shown = got["vocab"][str(i)]
        assert bytes.fromhex(hexed) == tok.token_bytes(i) and shown == token_repr(tok.token_bytes(i), max_width=60)
    # each hostile string is in the page's data as it is, as a token and as a special token
    shown_all = {v[1] for v in got["vocab"].values()}
    for s in HOSTILE + SPECIALS:
        assert token_repr(s.encode(), max_width=60) in shown_all


def test_report_page_json_is_the_report_data(tmp_path: Path) -> None:
    from bytepair.views.report import write_report

    corpus = tmp_path / "corpus.txt"
    corpus.write_text(HOSTILE_TEXT * 3, encoding="utf-8")
    page = tmp_path / "report.html"
    data = write_report(page, hostile_tokenizer(), [Corpus("<!-- </script> \u2028", [str(corpus)])], sample_text=HOSTILE_TEXT)
    # through JSON once, as the page's data is (integer keys become strings)
    assert _check_block(page.read_text("utf-8")) == json.loads(json.dumps(data))
