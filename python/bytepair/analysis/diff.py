"""Where two tokenizers disagree: ``bytepair.diff(a, b)``.

Ports of a tokenizer keep shipping with differences from the original on some inputs
(whitespace runs, byte fallback, special tokens, normalization). :func:`diff` compares

- the vocabularies, id by id: the ordinary tokens as bytes (a WordPiece or SentencePiece piece
  as its UTF-8 text), the special tokens by their text and id;
- the encodings, document by document, of a corpus and of generated hostile inputs
  (:func:`hostile_inputs`): the share of documents whose ids differ, and the shortest input found
  on which they differ, shrunk by delta debugging (lines, then words, then characters) within a
  time budget, with the first differing token of each side.

A document "differs" when the two id lists differ, or when one side raises and the other does
not (or raises another exception type). Everything here is deterministic for a given ``seed``
except what a time limit cuts short (``DiffResult.complete`` says so).
"""

from __future__ import annotations

import bisect
import os
import random
import re
import time
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Union

from bytepair._display import token_repr
from bytepair.errors import BytepairError
from bytepair.sentencepiece import SentencePieceTokenizer
from bytepair.tokenizer import Tokenizer
from bytepair.wordpiece import WordPieceTokenizer

__all__ = ["Disagreement", "DiffResult", "SourceCount", "VocabDiff", "diff", "hostile_inputs", "shrink"]

AnyTokenizer = Union[Tokenizer, WordPieceTokenizer, SentencePieceTokenizer]
#: A tokenizer object, a pretrained encoding name (``"o200k_base"``), or a path ``bytepair.load`` reads.
TokenizerLike = Union[AnyTokenizer, str, "os.PathLike[str]"]

#: A text file of a corpus is compared in blocks of about this many bytes, cut between lines where
#: no piece of the shipped pre-tokenizers crosses the cut (see ``Corpus.blocks``); a JSON-lines or
#: Parquet file record by record.
DOC_BYTES = 8 << 10

# Differing inputs kept, per kind of source, to be shrunk.
_KEEP = 6

# What encoding one input gave: the ids, or the name of the exception it raised.
_Outcome = Union[tuple[int, ...], str]


# ---------------------------------------------------------------------------------- results


@dataclass(frozen=True)
class VocabDiff:
    """The vocabularies compared id by id. Ordinary tokens are bytes (WordPiece and SentencePiece
    pieces as their UTF-8 text); special tokens are compared by text and id apart from them."""

    size_a: int  #: ordinary tokens of A
    size_b: int
    same: int  #: ids whose bytes are the same on both sides
    only_a: int  #: ids that are ordinary tokens in A only
    only_b: int
    changed: int  #: ids in both whose bytes differ
    moved: int  #: token bytes in both vocabularies under different ids
    examples_only_a: list[tuple[int, bytes]] = field(default_factory=list)
    examples_only_b: list[tuple[int, bytes]] = field(default_factory=list)
    examples_changed: list[tuple[int, bytes, bytes]] = field(default_factory=list)
    examples_moved: list[tuple[bytes, int, int]] = field(default_factory=list)
    specials_same: dict[str, int] = field(default_factory=dict)
    specials_only_a: dict[str, int] = field(default_factory=dict)
    specials_only_b: dict[str, int] = field(default_factory=dict)
    specials_changed: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def equal(self) -> bool:
        """The same bytes under the same ids, and the same special tokens under the same ids."""
        return not (self.only_a or self.only_b or self.changed or self.specials_only_a or self.specials_only_b
                    or self.specials_changed)


@dataclass(frozen=True)
class Disagreement:
    """An input on which the two tokenizers disagree, and where their ids first differ.

    ``position`` is the index of the first differing token; ``a_id`` is ``None`` when A's ids end
    there (B's ids go on), and likewise ``b_id``. ``a_error`` is the exception type A raised
    instead of encoding (then ``a_ids`` is empty and ``position`` 0)."""

    text: str
    source: str  #: where the input came from: "text", "corpus:PATH", "hostile:whitespace", ...
    original_length: int  #: characters of the input before it was shrunk
    position: int
    a_id: int | None
    b_id: int | None
    a_token: bytes | None
    b_token: bytes | None
    a_ids: list[int]
    b_ids: list[int]
    a_tokens: list[bytes]
    b_tokens: list[bytes]
    a_error: str | None = None
    b_error: str | None = None


@dataclass(frozen=True)
class SourceCount:
    """How many documents of one source were compared, and how many differ."""

    source: str
    documents: int
    differ: int


@dataclass(frozen=True)
class DiffResult:
    """What :func:`diff` found. ``equal`` is what a CI check wants."""

    a: str  #: names of the tokenizers, for reports
    b: str
    kind_a: str  #: "byte-level BPE", "WordPiece", "SentencePiece unigram", ...
    kind_b: str
    vocab: VocabDiff
    documents: int  #: inputs encoded by both
    differ: int  #: of which the ids differ
    sources: list[SourceCount]
    shortest: Disagreement | None  #: the shortest input found on which they differ, shrunk
    complete: bool  #: False when the time limit stopped the encoding before every input was compared
    seconds: float

    @property
    def share(self) -> float:
        """The share of documents whose ids differ (0.0 when none were compared)."""
        return self.differ / self.documents if self.documents else 0.0

    @property
    def equal(self) -> bool:
        """No difference found: vocabularies, special tokens, and the ids of every input compared."""
        return self.vocab.equal and self.differ == 0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: token bytes as ``{"hex": ..., "repr": ...}``."""
        v = self.vocab
        out: dict[str, Any] = {
            "equal": self.equal,
            "a": {"name": self.a, "kind": self.kind_a},
            "b": {"name": self.b, "kind": self.kind_b},
            "vocab": {
                "equal": v.equal,
                "size_a": v.size_a,
                "size_b": v.size_b,
                "same": v.same,
                "only_a": v.only_a,
                "only_b": v.only_b,
                "changed": v.changed,
                "moved": v.moved,
                "examples_only_a": [{"id": i, "token": _json_bytes(t)} for i, t in v.examples_only_a],
                "examples_only_b": [{"id": i, "token": _json_bytes(t)} for i, t in v.examples_only_b],
                "examples_changed": [{"id": i, "a": _json_bytes(x), "b": _json_bytes(y)} for i, x, y in v.examples_changed],
                "examples_moved": [{"token": _json_bytes(t), "a": x, "b": y} for t, x, y in v.examples_moved],
                "specials_same": v.specials_same,
                "specials_only_a": v.specials_only_a,
                "specials_only_b": v.specials_only_b,
                "specials_changed": {t: {"a": x, "b": y} for t, (x, y) in v.specials_changed.items()},
            },
            "documents": self.documents,
            "differ": self.differ,
            "share": self.share,
            "sources": [{"source": s.source, "documents": s.documents, "differ": s.differ} for s in self.sources],
            "complete": self.complete,
            "seconds": round(self.seconds, 3),
            "shortest": None,
        }
        d = self.shortest
        if d is not None:
            out["shortest"] = {
                "text": d.text,
                "source": d.source,
                "original_length": d.original_length,
                "position": d.position,
                "a": {"id": d.a_id, "token": None if d.a_token is None else _json_bytes(d.a_token),
                      "ids": d.a_ids, "error": d.a_error},
                "b": {"id": d.b_id, "token": None if d.b_token is None else _json_bytes(d.b_token),
                      "ids": d.b_ids, "error": d.b_error},
            }
        return out


def _json_bytes(b: bytes) -> dict[str, str]:
    return {"hex": b.hex(), "repr": token_repr(b)}


# ---------------------------------------------------------------------------------- tokenizers


def _resolve(tok: TokenizerLike) -> tuple[AnyTokenizer, str]:
    if isinstance(tok, (Tokenizer, WordPieceTokenizer, SentencePieceTokenizer)):
        name = tok.name if isinstance(tok, Tokenizer) and tok.name else type(tok).__name__
        return tok, name
    if isinstance(tok, (str, os.PathLike)):
        spec = os.fspath(tok)
        from bytepair.encodings import get_encoding, list_encoding_names

        if not os.path.exists(spec) and spec in list_encoding_names():
            return get_encoding(spec), spec
        from bytepair._detect import load

        return load(spec), spec
    raise TypeError(
        "diff() takes tokenizers (Tokenizer, WordPieceTokenizer, SentencePieceTokenizer), pretrained names "
        f"or paths, not {type(tok).__name__}"
    )


def _kind(tok: AnyTokenizer) -> str:
    if isinstance(tok, Tokenizer):
        return "byte-level BPE"
    if isinstance(tok, WordPieceTokenizer):
        return "WordPiece"
    return f"SentencePiece {tok.model_type}"


def _ordinary_vocab(tok: AnyTokenizer) -> dict[int, bytes]:
    if isinstance(tok, Tokenizer):
        return tok.vocab
    special_ids = set(tok.special_tokens.values())
    return {i: t.encode("utf-8", "surrogatepass") for t, i in tok.vocab.items() if i not in special_ids}


def _encoder(tok: AnyTokenizer, specials: bool) -> Callable[[str], list[int]]:
    if isinstance(tok, Tokenizer):
        if specials:
            return lambda text: tok.encode(text, allowed_special="all")
        return tok.encode_ordinary
    return tok.encode


def _token_bytes(tok: AnyTokenizer, i: int) -> bytes:
    if isinstance(tok, Tokenizer):
        return tok.token_bytes(i)
    t = tok.id_to_token(i)
    return b"" if t is None else t.encode("utf-8", "surrogatepass")


def _outcome(encode: Callable[[str], list[int]], text: str) -> _Outcome:
    try:
        return tuple(encode(text))
    except (BytepairError, ValueError, TypeError, UnicodeError, OverflowError) as e:
        return type(e).__name__


# ---------------------------------------------------------------------------------- vocabularies


def compare_vocab(a: AnyTokenizer, b: AnyTokenizer, *, examples: int = 5) -> VocabDiff:
    """The vocabularies of ``a`` and ``b`` compared id by id (see :class:`VocabDiff`); ``examples``
    of each kind of difference, lowest ids first."""
    va, vb = _ordinary_vocab(a), _ordinary_vocab(b)
    only_a = sorted(i for i in va if i not in vb)
    only_b = sorted(i for i in vb if i not in va)
    changed = sorted(i for i in va if i in vb and va[i] != vb[i])
    ia = {t: i for i, t in va.items()}
    ib = {t: i for i, t in vb.items()}
    moved = sorted((t for t in ia if t in ib and ia[t] != ib[t]), key=lambda t: (ia[t], t))
    sa, sb = a.special_tokens, b.special_tokens
    return VocabDiff(
        size_a=len(va),
        size_b=len(vb),
        same=sum(1 for i in va if i in vb and va[i] == vb[i]),
        only_a=len(only_a),
        only_b=len(only_b),
        changed=len(changed),
        moved=len(moved),
        examples_only_a=[(i, va[i]) for i in only_a[:examples]],
        examples_only_b=[(i, vb[i]) for i in only_b[:examples]],
        examples_changed=[(i, va[i], vb[i]) for i in changed[:examples]],
        examples_moved=[(t, ia[t], ib[t]) for t in moved[:examples]],
        specials_same={t: i for t, i in sorted(sa.items(), key=lambda kv: kv[1]) if sb.get(t) == i},
        specials_only_a={t: i for t, i in sorted(sa.items(), key=lambda kv: kv[1]) if t not in sb},
        specials_only_b={t: i for t, i in sorted(sb.items(), key=lambda kv: kv[1]) if t not in sa},
        specials_changed={t: (i, sb[t]) for t, i in sorted(sa.items(), key=lambda kv: kv[1]) if t in sb and sb[t] != i},
    )


# ---------------------------------------------------------------------------------- hostile inputs

# Every kind of whitespace the pre-tokenizers, normalizers and `str.split` disagree about.
WHITESPACE = (
    " ", "\t", "\n", "\r", "\r\n", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\xa0", "\u1680",
    "\u2000", "\u2002", "\u2003", "\u2007", "\u2009", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f",
    "\u3000", "\u180e", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff",
)
_WS_LENGTHS = (1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 32, 33, 64, 100)
_WS_CONTEXTS = ("{}", "a{}b", "{}word", "word{}", "x.{}\n", "{}1")
_DIGITS = (
    "0123456789", "٠١٢٣٤٥٦٧٨٩", "۰۱۲۳۴۵۶۷۸۹", "०१२३४५६७८९", "০১২৩৪৫৬৭৮৯", "๐๑๒๓๔๕๖๗๘๙", "０１２３４５６７８９",
    "𝟎𝟏𝟐𝟑𝟒𝟓𝟔𝟕𝟖𝟗", "¹²³⁴⁵⁶⁷⁸⁹⁰",
)
_NUMBERS = (
    "3.14159", "1,000,000", "-42", "+7", "1e10", "6.02e23", "0x1F", "0b1010", "2024-01-01", "12:30:45",
    "$100.00", "50%", "1/2", "v1.2.3", "#1", "No. 5", "10^9", "3rd", "21st", "1st,2nd", "9,99 €", "٣٫١٤",
)
_SAMPLES = (
    "The quick brown fox jumps over the lazy dog.", "naïve café, résumé, façade, Ångström", "ﬁ ﬂ ﬀ Ⅻ ½ ℌ ™ ㎏",
    "Ｈｅｌｌｏ　Ｗｏｒｌｄ", "Γειά σου κόσμε", "Привет, мир!", "Բարեւ աշխարհ", "שלום עולם", "مرحبا بالعالم",
    "ܫܠܡܐ ܥܠܡܐ", "ހެލޯ", "नमस्ते दुनिया", "ওহে বিশ্ব", "ਸਤਿ ਸ੍ਰੀ ਅਕਾਲ", "નમસ્તે", "ନମସ୍କାର", "வணக்கம் உலகம்",
    "హలో ప్రపంచం", "ನಮಸ್ಕಾರ", "ഹലോ ലോകം", "ආයුබෝවන්", "สวัสดีชาวโลก", "ສະບາຍດີ", "བཀྲ་ཤིས་བདེ་ལེགས།",
    "မင်္ဂလာပါ", "გამარჯობა", "안녕하세요 세계", "ሰላም ለዓለም", "ᏣᎳᎩ", "ᐊᐃᓐᖓᓂ", "᚛ᚑᚌᚐᚋ᚜", "ᚠᚢᚦᚨᚱᚲ",
    "សួស្តី", "ᠮᠣᠩᠭᠣᠯ", "こんにちは世界", "カタカナ", "你好，世界。", "東京は日本の首都です。", "ꆈꌠꁱꂷ",
    "Xin chào thế giới", "Dziękuję, żółć", "İstanbul ılık", "Straße STRASSE ẞ", "ΣΊΣΥΦΟΣ σίσυφος",
    "ǅemal ǈ ǋ", "Ελληνικά ά ά",
)
_UNICODE_EDGES = (
    "e\u0301", "\u00e9", "e\u0301\u0301\u0301", "a\u0308\u0304", "\u1100\u1161\u11a8", "\uac01",
    "👨‍👩‍👧‍👦", "🇫🇷🇯🇵", "👍🏽", "☺️", "☺︎", "‍", "\u202eabc\u202c", "\u200fאב\u200e", "\ufeffbom",
    "\x00", "a\x00b", "\x01\x02\x1b[31m\x7f", "\uffff", "\ufffe", "\U0010ffff", "\ue000\uf8ff", "\U000f0000",
    "\ufffd", "\ud800", "a\udcffb", "\udbff\udfff", "İ", "ß", "ﬃ", "ǰ", "ŉ", "Σ", "𝐀𝐁𝐂", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "Ⓐⓑ",
    "①②③", "㍿", "ｶﾀｶﾅ", "ﾞ", "\u0345", "\u0e33", "\u0f77", "\U0001f600\U0001f601", "\U0001f9d1\u200d\U0001f680",
)
_INVALID_UTF8 = (
    b"\xff", b"\xfe\xff", b"abc\x80def", b"\xc3", b"\xc3(", b"\xe2\x82", b"\xe2\x82(", b"\xf0\x9f\x98",
    b"\xf0\x9f\x98 x", b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xc0\xaf", b"\xe0\x80\xaf", b"\xf4\x90\x80\x80",
    b"\xf8\x88\x80\x80\x80", b"\x80\x80\x80", b"caf\xe9", b"\xef\xbb\xbf\xef\xbb", b"a\xc3\xa9\xa9b",
)
_NEWLINES = (
    "a\nb", "a\r\nb", "a\rb", "\n\n", "\r\n\r\n", "a\n\n\nb", "a \nb", "a\n b", "a\t\nb", " \n ", "\n\r",
    "line1\r\nline2\r\n", "\nword", "word\n", "  \n\n  ", "a\n\n", "\n\n\n\n x", "a\u2028b", "a\x85b",
    "a\r\n\r\nb", "x\r", " \r\n ", "1\n2", ".\n.", "a\n\tb", "a\n    b",
)
_CODE = (
    "def f(x):\n    return x", "if (a && b) { return; }", "    indented", "\tx = 1;", "\t\tpass",
    "http://example.com/a?b=c&d=e#f", "user@example.com", "'s 'S 't 're 've 'm 'll 'd", "'S'LL'VE",
    "’s ’t", "don't DON'T Don’t", "...", "?!?!", "--", "—", "«»", "“quoted”", "#hashtag", "@mention",
    "C++", "a_b_c", "camelCaseWord", "ALLCAPS", "snake_case_var", "<html><body></body></html>",
    '{"a": 1, "b": [true, null]}', "\\n \\t literal", "x+=1", "i++;", "a->b", "::", "/* */", "<!-- -->",
    "    def g():\n        pass\n", "SELECT * FROM t;", "$ ls -la", "~/.config", "C:\\Users\\x",
)
_LONG_UNITS = ("a", " ", "\n", "\t", "ab", " a", "x ", "0", "!", "é", "😀", "東", "\r\n", "-", "=", ".", "a\u0301")
_LONG_LENGTHS = (50, 257, 1000, 4096)


@lru_cache(maxsize=1)
def _script_groups() -> tuple[tuple[str, str], ...]:
    """Letters, marks and digits of every script, grouped by the first words of their Unicode
    names (``LATIN SMALL``, ``DEVANAGARI``, ``CJK``...): up to 24 characters of each group."""
    groups: dict[str, list[str]] = {}
    for cp in range(0x20, 0x323B0):
        c = chr(cp)
        if unicodedata.category(c)[0] not in "LMN":
            continue
        name = unicodedata.name(c, "")
        if not name:
            continue
        key = name.split(" LETTER ")[0] if " LETTER " in name else name.split()[0]
        g = groups.setdefault(key, [])
        if len(g) < 24:
            g.append(c)
    return tuple((k, "".join(v)) for k, v in groups.items())


def hostile_inputs(specials: Iterable[str] = (), *, seed: int = 0, mixed: int = 500) -> Iterator[tuple[str, str]]:
    """Inputs where tokenizers tend to disagree, as ``(category, text)``: whitespace runs of every
    kind and length, digit runs and numbers, a sample of every Unicode script (and sentences in
    many languages), Unicode edge cases (combining marks, emoji sequences, controls, lone
    surrogates), invalid UTF-8 repaired (U+FFFD, and surrogate escapes), newlines and CRLF, code
    and punctuation, long runs of one character, each of ``specials`` as text, and ``mixed``
    random concatenations of all of these (``seed`` picks them)."""
    rng = random.Random(seed)
    for w in WHITESPACE:
        for n in _WS_LENGTHS:
            for ctx in _WS_CONTEXTS:
                yield "whitespace", ctx.format(w * n)
    common = (" ", "\t", "\n", "\r\n", "\xa0", "\u3000")
    for w1 in common:
        for w2 in common:
            if w1 != w2:
                for k in (1, 2, 3):
                    for m in (1, 2, 3):
                        yield "whitespace", f"a{w1 * k}{w2 * m}b"
                        yield "whitespace", f"{w1 * k}{w2 * m}b"
    for digits in _DIGITS:
        for n in range(1, 25):
            run = "".join(digits[(i * 7 + n) % 10] for i in range(n))
            for ctx in ("{}", " {}", "a{}", "{}a", "{}.{}", "{},{}", "x {} y"):
                yield "digits", ctx.replace("{}", run)
    for number in _NUMBERS:
        yield "digits", number
        yield "digits", " " + number
    for key, chars in _script_groups():
        del key
        yield "scripts", chars[:8]
        yield "scripts", " " + chars[:8]
        yield "scripts", chars[:6] + " " + chars[6:14]
        yield "scripts", chars[:12] + "."
    for s in _SAMPLES:
        yield "scripts", s
        yield "scripts", " " + s
        yield "scripts", s.upper()
    for s in _UNICODE_EDGES:
        yield "unicode", s
        yield "unicode", f"a{s}b"
        yield "unicode", f" {s} "
        yield "unicode", unicodedata.normalize("NFD", s)
    for raw in _INVALID_UTF8:
        yield "invalid-utf8", raw.decode("utf-8", "replace")
        yield "invalid-utf8", "x " + raw.decode("utf-8", "replace") + " y"
        yield "invalid-utf8", raw.decode("utf-8", "surrogateescape")
    for _ in range(40):
        raw = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40)))
        yield "invalid-utf8", raw.decode("utf-8", "replace")
    for s in _NEWLINES:
        yield "newlines", s
        yield "newlines", s.replace("\n", "\r\n") if "\r" not in s else s.replace("\r\n", "\n")
    for s in _CODE:
        yield "code", s
        yield "code", s.replace("\n", "\r\n")
    for unit in _LONG_UNITS:
        for n in _LONG_LENGTHS:
            yield "long", unit * n
        yield "long", "x" + unit * 300 + "y"
    seen: set[str] = set()
    for s in sorted(specials):
        if s in seen:
            continue
        seen.add(s)
        for ctx in ("{}", " {}", "{} ", "a{}b", "{}{}", "{}\n", "hello {} world", "\n\n{}\n\n"):
            yield "specials", ctx.replace("{}", s)
        if len(s) > 1:
            yield "specials", s[:-1]
            yield "specials", s[1:]
            yield "specials", s[: len(s) // 2] + " " + s[len(s) // 2 :]
        yield "specials", s.upper() if s.upper() != s else s.lower()
    few = sorted(seen)[:8]
    for s in few:
        for t in few:
            if s != t:
                yield "specials", s + t
    pool = (
        [w * n for w in WHITESPACE[:8] for n in (1, 2, 3, 8)] + list(_NUMBERS) + list(_SAMPLES) + list(_UNICODE_EDGES)
        + list(_NEWLINES) + list(_CODE) + sorted(seen) + [r.decode("utf-8", "replace") for r in _INVALID_UTF8]
    )
    separators = ("", " ", "\n", "\t", "  ", "\r\n", " \n")
    for _ in range(mixed):
        parts = [rng.choice(pool) for _ in range(rng.randrange(2, 7))]
        yield "mixed", "".join(p + rng.choice(separators) for p in parts)


# ---------------------------------------------------------------------------------- shrinking

_WORDS = re.compile(r"\s+|\w+|[^\w\s]+")


def _ddmin(units: list[str], test: Callable[[str], bool], deadline: float) -> list[str]:
    """Delta debugging (Zeller and Hildebrandt 2002): a sublist of ``units``, in order, whose
    join still passes ``test``; 1-minimal when the deadline allows."""
    n = 2
    while len(units) >= 2 and time.monotonic() < deadline:
        size = -(-len(units) // n)  # ceil
        chunks = [units[i : i + size] for i in range(0, len(units), size)]
        for chunk in chunks:
            if test("".join(chunk)):
                units, n = chunk, 2
                break
        else:
            for k in range(len(chunks)):
                if time.monotonic() >= deadline:
                    return units
                rest = [u for j, c in enumerate(chunks) if j != k for u in c]
                if test("".join(rest)):
                    units, n = rest, max(n - 1, 2)
                    break
            else:
                if n >= len(units):
                    break
                n = min(2 * n, len(units))
    return units


def shrink(text: str, differs: Callable[[str], bool], *, time_limit: float = 5.0) -> str:
    """A shorter input on which ``differs`` still holds: delta debugging by lines, then words
    (runs of word characters, of whitespace, of other characters), then characters, within
    ``time_limit`` seconds. The result is never longer than ``text``; it is ``text`` itself when
    ``differs(text)`` is false."""
    deadline = time.monotonic() + time_limit
    cache: dict[str, bool] = {}

    def test(s: str) -> bool:
        if not s:
            return False
        if s not in cache:
            cache[s] = differs(s)
        return cache[s]

    if not test(text):
        return text
    best = text
    for split in (lambda s: s.splitlines(keepends=True), _WORDS.findall, list):
        units = split(best)
        if "".join(units) != best:  # a splitter that loses text (never expected): skip it
            continue
        candidate = "".join(_ddmin(units, test, deadline))
        if len(candidate) < len(best) and test(candidate):
            best = candidate
        if time.monotonic() >= deadline:
            break
    return best


# ---------------------------------------------------------------------------------- the diff


def _first_difference(a: _Outcome, b: _Outcome) -> int:
    if isinstance(a, str) or isinstance(b, str):
        return 0
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def _corpus_documents(paths: Sequence[str], text_field: str) -> Iterator[tuple[str, str]]:
    from bytepair.analysis.corpus import text_blocks
    from bytepair.sources import Source, documents, resolve

    for f in resolve(Source(list(paths), name="corpus", text_field=text_field), True):
        if f.jsonl or f.parquet:
            for d in documents(f, text_field=text_field):
                yield f"corpus:{f.path}", d
        else:
            for d in text_blocks(f, DOC_BYTES):
                yield f"corpus:{f.path}", d


def diff(
    a: TokenizerLike,
    b: TokenizerLike,
    *,
    corpus: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
    texts: Sequence[str] = (),
    hostile: bool = True,
    specials: bool = True,
    max_docs: int | None = None,
    mixed: int = 500,
    seed: int = 0,
    time_limit: float | None = None,
    shrink_time: float = 5.0,
    examples: int = 5,
    text_field: str = "text",
) -> DiffResult:
    """Where ``a`` and ``b`` disagree: their vocabularies, and their ids on ``texts``, on the
    documents of ``corpus`` (paths, globs, directories; .txt, .jsonl, .gz, .zst, .parquet as
    everywhere in bytepair; a text file in blocks of about 8 KiB, at most ``max_docs``
    documents; bytes that are not UTF-8 raise :class:`~bytepair.errors.CorpusError` naming the
    file and offset) and, with ``hostile``, on :func:`hostile_inputs` (``mixed`` random ones,
    ``seed``), each tokenizer's special tokens included.

    ``a`` and ``b`` are tokenizer objects (byte-level BPE, WordPiece, SentencePiece), pretrained
    names (``"cl100k_base"``) or paths in any format :func:`bytepair.load` reads. With
    ``specials`` (the default) special-token text encodes as the special token
    (``allowed_special="all"``); ``specials=False`` encodes it as ordinary text (BPE only;
    WordPiece and SentencePiece encode as their ``encode`` does).

    The shortest differing inputs are shrunk (:func:`shrink`) for up to ``shrink_time`` seconds
    in all. ``time_limit`` bounds the whole call: encoding stops early (``complete=False``)
    leaving a quarter of it, at most ``shrink_time``, for shrinking.

    >>> import bytepair
    >>> bytepair.diff("gpt2", "r50k_base", mixed=10).equal
    True
    """
    start = time.monotonic()
    ta, name_a = _resolve(a)
    tb, name_b = _resolve(b)
    if max_docs is not None and max_docs < 0:
        raise ValueError(f"max_docs must be >= 0, got {max_docs}")
    if mixed < 0:
        raise ValueError(f"mixed must be >= 0, got {mixed}")
    if time_limit is not None and time_limit <= 0:
        raise ValueError(f"time_limit must be > 0 seconds, got {time_limit}")
    if shrink_time < 0:
        raise ValueError(f"shrink_time must be >= 0 seconds, got {shrink_time}")
    vocab = compare_vocab(ta, tb, examples=examples)
    enc_a, enc_b = _encoder(ta, specials), _encoder(tb, specials)

    def inputs() -> Iterator[tuple[str, str]]:
        for t in texts:
            yield "text", t
        if corpus is not None:
            paths = [os.fspath(corpus)] if isinstance(corpus, (str, os.PathLike)) else [os.fspath(p) for p in corpus]
            docs = _corpus_documents(paths, text_field)
            for n, doc in enumerate(docs):
                if max_docs is not None and n >= max_docs:
                    break
                yield doc
        if hostile:
            yield from hostile_inputs(set(ta.special_tokens) | set(tb.special_tokens), seed=seed, mixed=mixed)

    reserve = 0.0 if time_limit is None else min(shrink_time, time_limit / 4)
    stop = None if time_limit is None else start + time_limit - reserve
    counts: dict[str, list[int]] = {}
    # The shortest differing inputs of each kind of source, (characters, order, source, text):
    # a few, so that memory does not grow with the corpus.
    kept: dict[str, list[tuple[int, int, str, str]]] = {}
    complete = True
    documents = n_differ = 0
    for source, text in inputs():
        if stop is not None and time.monotonic() >= stop:
            complete = False
            break
        documents += 1
        kind = source.split(":", 1)[0]
        c = counts.setdefault(kind, [0, 0])
        c[0] += 1
        if _outcome(enc_a, text) != _outcome(enc_b, text):
            n_differ += 1
            c[1] += 1
            shortest_of_kind = kept.setdefault(kind, [])
            entry = (len(text), n_differ, source, text)
            if len(shortest_of_kind) < _KEEP or entry < shortest_of_kind[-1]:
                bisect.insort(shortest_of_kind, entry)
                del shortest_of_kind[_KEEP:]

    def differs(s: str) -> bool:
        return _outcome(enc_a, s) != _outcome(enc_b, s)

    shortest: Disagreement | None = None
    if kept:
        budget_end = time.monotonic() + shrink_time
        if time_limit is not None:
            budget_end = min(budget_end, start + time_limit)
        # The shortest of each kind of source first (a long document may shrink below a short
        # one), then the shortest of all.
        candidates = sorted(lst[0] for lst in kept.values())[:_KEEP]
        candidates += [d for d in sorted(d for lst in kept.values() for d in lst)[:_KEEP] if d not in candidates]
        best: tuple[int, int, str, str, int] | None = None  # (characters, bytes, text, source, original)
        for k, (length, _, source, text) in enumerate(candidates):
            now = time.monotonic()
            if k and now >= budget_end:
                break
            share = max(budget_end - now, 0.0) / (len(candidates) - k)
            small = shrink(text, differs, time_limit=share) if share > 0 else text
            key = (len(small), len(small.encode("utf-8", "surrogatepass")), small, source, length)
            if best is None or key[:2] < best[:2]:
                best = key
        assert best is not None
        shortest = _disagreement(ta, tb, enc_a, enc_b, best[2], best[3], best[4])
    return DiffResult(
        a=name_a,
        b=name_b,
        kind_a=_kind(ta),
        kind_b=_kind(tb),
        vocab=vocab,
        documents=documents,
        differ=n_differ,
        sources=[SourceCount(s, n, d) for s, (n, d) in counts.items()],
        shortest=shortest,
        complete=complete,
        seconds=time.monotonic() - start,
    )


def _disagreement(
    ta: AnyTokenizer,
    tb: AnyTokenizer,
    enc_a: Callable[[str], list[int]],
    enc_b: Callable[[str], list[int]],
    text: str,
    source: str,
    original_length: int,
) -> Disagreement:
    oa, ob = _outcome(enc_a, text), _outcome(enc_b, text)
    ids_a = [] if isinstance(oa, str) else list(oa)
    ids_b = [] if isinstance(ob, str) else list(ob)
    pos = _first_difference(oa, ob)
    a_id = ids_a[pos] if pos < len(ids_a) else None
    b_id = ids_b[pos] if pos < len(ids_b) else None
    return Disagreement(
        text=text,
        source=source,
        original_length=original_length,
        position=pos,
        a_id=a_id,
        b_id=b_id,
        a_token=None if a_id is None else _token_bytes(ta, a_id),
        b_token=None if b_id is None else _token_bytes(tb, b_id),
        a_ids=ids_a,
        b_ids=ids_b,
        a_tokens=[_token_bytes(ta, i) for i in ids_a],
        b_tokens=[_token_bytes(tb, i) for i in ids_b],
        a_error=oa if isinstance(oa, str) else None,
        b_error=ob if isinstance(ob, str) else None,
    )
