"""Token views: segments, the terminal view and the HTML page's content (the browser test is
tests/test_browser.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bytepair
from bytepair.views import colour, render_html, render_terminal, segments, visible

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
