"""Building self-contained HTML pages from the templates (package data): the CSS and the shared
token-view script are inlined and the data is embedded as JSON, so a page opened from disk needs
no network (its Content-Security-Policy forbids any request)."""

from __future__ import annotations

import html
import importlib.resources
import json
from collections.abc import Iterable
from typing import Any

from bytepair._display import token_repr
from bytepair.tokenizer import Tokenizer

__all__ = ["MergeInfo", "build_page", "template", "vocab_entries"]


def template(name: str) -> str:
    return importlib.resources.files("bytepair.views").joinpath("templates", name).read_text("utf-8")


def _json(data: Any) -> str:
    # Inside <script>: "</" would end the element; "<!--" could open a comment.
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/").replace("<!--", "<\\!--")


def build_page(name: str, title: str, data: Any) -> str:
    page = template(name)
    parts = {
        "__STYLE__": template("style.css"),
        "__TOKENS_JS__": template("tokens.js"),
        "__TITLE__": html.escape(title),
        "__DATA__": _json(data),
    }
    for key, value in parts.items():
        page = page.replace(key, value)
    return page


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
