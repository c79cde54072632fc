"""A small tokenizer whose tokens are made to break HTML pages, shared by the page-text tests
(tests/test_views.py) and the browser tests (tests/test_browser.py).

Each hostile string is one ordinary (merged) token, built by merges from its bytes, and also a
special token, so that it reaches a page both as vocabulary text and as a special token. The
script payloads set ``window.PWNED`` (or the document title) when they run: a page is safe only
if neither happens.
"""

from __future__ import annotations

from collections.abc import Sequence

import bytepair

# Each one targets a different way out of the page's JSON block or heading: ending the script
# element, opening / closing an HTML comment inside it (script data's escaped states), markup
# with an event handler, JavaScript's line terminators, and JSON's own quote and escape.
PAYLOAD = "<svg onload=window.PWNED=1>"
HOSTILE = [
    "</script>",
    "<!--",
    "-->",
    "<script>",
    PAYLOAD,
    "<img src=x onerror=document.title=/PWNED/.source>",
    "\u2028",
    "\u2029",
    '"',
    "\\",
    "'\"\\\\\"'",
    "<\\!--",
    "]]>",
    "&amp;&lt;",
    "__DATA__",
    "__TITLE__",
]
# The same strings as special tokens, bracketed: a special token with an ordinary token's text
# takes that token's id, and then it would not be a token of its own.
SPECIALS = [f"<|{s}|>" for s in HOSTILE]
# Placeholders of the page templates and markup, as a title or a path could hold them.
HOSTILE_TITLE = "t __TITLE__ __DATA__ __STYLE__ __TOKENS_JS__ " + PAYLOAD + " </h1><!-- & \"'"
# Text with every hostile string, as ordinary text and as a special token, between plain words.
TEXT = "plain " + " ".join(f"a {s} b" for s in HOSTILE + SPECIALS) + " end\n"


def _bpe(data: bytes, ranks: dict[tuple[bytes, bytes], int]) -> list[bytes]:
    """Byte-level BPE without a pre-tokenizer: merge the lowest-ranked adjacent pair until none is left."""
    parts = [bytes([b]) for b in data]
    while True:
        found = [(ranks[p], i) for i, p in enumerate(zip(parts, parts[1:])) if p in ranks]
        if not found:
            return parts
        _, i = min(found)
        parts[i : i + 2] = [parts[i] + parts[i + 1]]


def hostile_tokenizer(strings: Sequence[str] = HOSTILE, specials: Sequence[str] = SPECIALS) -> bytepair.Tokenizer:
    """Bytes 0-255, then merges that make each of ``strings`` one token: while a string still
    encodes to several tokens, its first two are merged (a merge ranked after all earlier ones
    leaves the strings already made whole as they are). Every merged token is a pair of earlier
    tokens, so the merge tree is complete; there is no pre-tokenizer pattern, so a string with
    spaces or punctuation can be one token."""
    vocab = {i: bytes([i]) for i in range(256)}
    ranks: dict[tuple[bytes, bytes], int] = {}
    for s in strings:
        while len(parts := _bpe(s.encode("utf-8"), ranks)) > 1:
            ranks[(parts[0], parts[1])] = len(ranks)
            vocab[len(vocab)] = parts[0] + parts[1]
    tok = bytepair.Tokenizer(vocab, list(ranks), special_tokens=list(specials), pattern=None)
    for s in strings:
        assert len(tok.encode(s, disallowed_special=())) == 1, s
    return tok
