"""The Oniguruma <-> bytepair pattern rewriting (formats/_regex_dialect.py) on deep nesting and
on named groups; meanings are checked by running Oniguruma through ``tokenizers``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from tokenizers import Regex, pre_tokenizers

import bytepair
from bytepair import _core
from bytepair.errors import FormatError
from bytepair.formats._regex_dialect import from_oniguruma, to_oniguruma

DEPTH = 50_000  # far past the interpreter's recursion limit (1000)


def onig_split(pattern: str, text: str) -> list[str]:
    return [p for p, _ in pre_tokenizers.Split(Regex(pattern), behavior="isolated").pre_tokenize_str(text)]


@pytest.mark.parametrize("rewrite", [from_oniguruma, to_oniguruma])
@pytest.mark.parametrize(
    "pattern",
    [
        "(" * DEPTH + "a" + ")" * DEPTH,
        "(?:" * DEPTH + "a" + ")" * DEPTH,
        "(?>" * DEPTH + "a" + ")" * DEPTH,
        "[" * DEPTH + "a" + "]" * DEPTH,
        "[[a]" * DEPTH + "]" * DEPTH,
        "(?:[" * DEPTH + "a" + "])" * DEPTH,
    ],
)
def test_deep_nesting_is_copied_as_it_is(rewrite: Any, pattern: str) -> None:
    assert rewrite(pattern) == pattern


def test_deep_nesting_is_rewritten_inside() -> None:
    assert from_oniguruma("(" * DEPTH + "a$" + ")" * DEPTH) == "(" * DEPTH + "a(?m:$)" + ")" * DEPTH
    assert to_oniguruma("(" * DEPTH + "a$" + ")" * DEPTH) == "(" * DEPTH + "a\\z" + ")" * DEPTH
    nested = "(" * DEPTH + "a{1,3}+" + "){2}+" * DEPTH
    assert to_oniguruma(nested) == "(?>(" * DEPTH + "(?>a{1,3})" + "){2})" * DEPTH
    # Read back, (?>X{n}) is written X{n}+ where the group is short; both mean the same.
    assert from_oniguruma(to_oniguruma("(" * 3 + "a{1,3}+" + "){2}+" * 3)) == "(" * 3 + "a{1,3}+" + "){2}+" * 3
    back = from_oniguruma(to_oniguruma(nested))
    assert back.startswith("(?>(" * 100) and back.endswith("){2})" * 100) and "(a{1,3}+){2}+" in back


@pytest.mark.parametrize("rewrite", [from_oniguruma, to_oniguruma])
@pytest.mark.parametrize(
    ("pattern", "at"),
    [("[" * DEPTH + "a]", 0), ("[a" * DEPTH, 0), ("(" * DEPTH + "a", 0), ("a(b)(" + "(" * DEPTH + "a" + ")" * DEPTH, 4)],
)
def test_deep_nesting_left_open_is_a_format_error(rewrite: Any, pattern: str, at: int) -> None:
    with pytest.raises(FormatError, match=rf"(unterminated character class|unbalanced parenthesis) at {at}$") as e:
        rewrite(pattern)
    assert len(str(e.value)) < 400  # the pattern is cut short in the message


@pytest.mark.parametrize(
    ("onig", "text"),
    [
        (r"(?<w>\w+$)|\s+|\S", "ab cd\nef gh\n"),
        (r"(?<w>^\w+)|\s+|\S", "ab cd\nef gh\n"),
        (r"(?<=a)\w+$|\s+|\S", "ab cd\nab gh"),
        (r"(?<!a)b$|\s+|\S|b", "cb\nab\ncb"),
    ],
)
def test_group_heads_are_read_and_bodies_rewritten(onig: str, text: str) -> None:
    # A named group's body was copied as it was: Oniguruma's $ (end of a line) stayed bytepair's
    # $ (end of the text).
    assert _core.split_pieces(text, from_oniguruma(onig)) == onig_split(onig, text)


def test_named_group_body_rewritten_both_ways() -> None:
    assert from_oniguruma("(?<n>a$)") == "(?<n>a(?m:$))"
    assert to_oniguruma("(?P<n>a$)") == "(?P<n>a\\z)"


def _hf_with_split(tmp_path: Path, regex: str) -> Path:
    tok = bytepair.train_from_iterator(["hello world, ab ab abc"] * 10, vocab_size=262)
    doc: dict[str, Any] = bytepair.formats.hf.to_hf_dict(tok)
    doc["pre_tokenizer"]["pretokenizers"][0]["pattern"] = {"Regex": regex}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.filterwarnings("ignore::bytepair.BytepairWarning")
@pytest.mark.parametrize("regex", ["[" * 1000 + "a]", "(" * 1000 + "a" + ")" * 1000, "[a" * 1000, "(?:" * DEPTH + "a" + ")" * DEPTH])
def test_load_hf_of_a_deep_split_regex(tmp_path: Path, regex: str) -> None:
    # Unbalanced ones are the reader's FormatError; a balanced one reaches the regex engine,
    # which refuses nesting this deep: a FormatError naming the file either way.
    path = _hf_with_split(tmp_path, regex)
    with pytest.raises(FormatError, match=rf"^{re.escape(str(path))}: .*(pattern|nested)"):
        bytepair.load_hf(path)


@pytest.mark.filterwarnings("ignore::bytepair.BytepairWarning")
def test_load_hf_of_a_nested_split_regex_the_engine_takes(tmp_path: Path) -> None:
    regex = "(?:" * 30 + r"\w+" + ")" * 30 + r"|\s+|[^\w\s]+"
    tok = bytepair.load_hf(_hf_with_split(tmp_path, regex))
    assert tok.decode(tok.encode("hello world, ab")) == "hello world, ab"
    assert _core.split_pieces("hello world, ab", tok.pattern) == onig_split(regex, "hello world, ab")


@pytest.mark.parametrize("onig", [r"\w+$|\s+|\S", r"^\w|\w+|\s+|\S", r"(?:\w+$)|\s+|\S"])
def test_line_anchors_read_and_written_back_keep_their_meaning(onig: str) -> None:
    # from_oniguruma writes Oniguruma's $ as (?m:$); written back as (?m:\z) it was the end of
    # the text, and a file read and saved again split otherwise.
    text = "ab cd\nef gh\n\nij"
    back = to_oniguruma(from_oniguruma(onig))
    assert back == onig
    assert onig_split(back, text) == onig_split(onig, text) == _core.split_pieces(text, from_oniguruma(onig))


def test_bytepair_line_anchors_are_oniguruma_line_anchors() -> None:
    assert to_oniguruma("a(?m:$)|(?m:^)b") == "a$|^b"
    assert to_oniguruma("a$|^b") == "a\\z|\\Ab"
