"""Building self-contained HTML pages from the templates (package data): the CSS and the shared
token-view script are inlined and the data is embedded as JSON, so a page opened from disk needs
no network (its Content-Security-Policy forbids any request)."""

from __future__ import annotations

import html
import importlib.resources
import json
import re
from collections.abc import Iterable
from typing import Any

from bytepair._display import token_repr
from bytepair.tokenizer import Tokenizer

__all__ = ["MergeInfo", "build_page", "script_json", "template", "vocab_entries"]


def template(name: str) -> str:
    return importlib.resources.files("bytepair.views").joinpath("templates", name).read_text("utf-8")


# JSON's own escapes for the characters that mean something to the HTML parser inside a script
# element ("<" starts "</script>" and "<!--", which end the element early or switch the parser
# into script data's escaped states; ">" and "&" for good measure) and for U+2028 / U+2029 (line
# terminators to older JavaScript engines). Outside strings JSON has none of these characters,
# so the block stays valid JSON, and JSON.parse gives back the same data.
_SCRIPT_SAFE = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026", 0x2028: "\\u2028", 0x2029: "\\u2029"}

# Every placeholder of the templates; filled in one pass (see build_page).
_PLACEHOLDER = re.compile(r"__(?:STYLE|TOKENS_JS|TITLE|DATA)__")


def script_json(data: Any) -> str:
    """``data`` as JSON text that can stand inside ``<script type="application/json">`` as is: no
    ``<``, ``>``, ``&``, U+2028 or U+2029, each written as a ``\\u`` escape instead."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).translate(_SCRIPT_SAFE)


def build_page(name: str, title: str, data: Any) -> str:
    """The template ``name`` with the styles, the token-view script, ``title`` (as HTML text) and
    ``data`` (as a JSON block, read by the page's script with JSON.parse)."""
    parts = {
        "__STYLE__": template("style.css"),
        "__TOKENS_JS__": template("tokens.js"),
        "__TITLE__": html.escape(title),
        "__DATA__": script_json(data),
    }
    # One pass over the template: a filled value is never searched again, so a title or a token
    # holding placeholder text stays that text (filling the placeholders one after another put
    # the data into a title that held "__DATA__", and with it any markup of its tokens).
    return _PLACEHOLDER.sub(lambda m: parts[m.group(0)], template(name))


class MergeInfo:
    """Which two tokens each token was merged from, computed once per tokenizer (trained
    tokenizers: from the merge list; rank files: per id asked for, from the ranks)."""

    def __init__(self, tok: Tokenizer) -> None:
        self.tok = tok
        self._parts: dict[int, tuple[int, int] | None] = {}
        self._ranks: dict[bytes, int] | None = None
        if tok._merges is not None:
            from bytepair.analysis.merges import merge_tree

            tree = merge_tree(tok)
            self._parts = {i: (int(a), int(b)) for i, (a, b) in enumerate(tree.tolist()) if a >= 0}
            self._complete = True
        else:
            self._complete = False

    def parts(self, token_id: int) -> tuple[int, int] | None:
        if self._complete or token_id in self._parts:
            return self._parts.get(token_id)
        from bytepair.analysis.merges import _split_by_ranks

        if self._ranks is None:
            self._ranks = {b: i for i, b in self.tok._vocab.items()}
        t = self.tok._vocab.get(token_id)
        got = _split_by_ranks(t, token_id, self._ranks) if t is not None and len(t) > 1 else None
        self._parts[token_id] = got
        return got


def vocab_entries(tok: Tokenizer, ids: Iterable[int], info: MergeInfo) -> tuple[dict[int, list[str]], dict[int, list[int]]]:
    """``({id: [hex, display]}, {id: [left, right]})`` for ``ids`` and the two parts of each."""
    vocab: dict[int, list[str]] = {}
    tree: dict[int, list[int]] = {}

    def add(i: int) -> None:
        if i not in vocab:
            b = tok.token_bytes(i)
            vocab[i] = [b.hex(), token_repr(b, max_width=60)]

    for i in set(ids):
        add(i)
        p = info.parts(i)
        if p is not None:
            tree[i] = [p[0], p[1]]
            add(p[0])
            add(p[1])
    return vocab, tree
