"""Hugging Face ``tokenizer.json`` files of the SentencePiece family: Unigram models (T5, ALBERT,
XLNet style, and those ``tokenizers`` trains) and SentencePiece-style BPE with byte fallback
(Llama 2, Mistral style), encoded with the ids ``tokenizers`` gives.

The text pipeline is ``tokenizers``' own, run here step by step: the added tokens are cut out
first (:mod:`bytepair.pipeline.added_tokens`), each stretch between them is normalized and
pre-tokenized as the file says, then the model encodes each piece:

- **Unigram**: ``tokenizers``' Viterbi search, run in Python (:class:`_Unigram`): in double
  precision and with its tie rule, over every token of the vocabulary. The Rust core's Viterbi is
  sentencepiece's, in single precision, and breaks near-ties otherwise.
- **BPE**: ``tokenizers`` merges characters by merge rank, lowest first, leftmost on ties; a
  character that is no token becomes its ``<0xNN>`` tokens (``byte_fallback``) or the unknown
  token. sentencepiece's own BPE merges by piece score instead, which is not the same order when
  a token is made by several merges (``▁the`` = ``▁t`` + ``he`` = ``▁th`` + ``e``, the usual case
  in converted files), so the merges run on bytepair's byte-level BPE core instead: each
  character's bytes are first joined into that character by merges ranked before the file's,
  then the file's merges follow in their order; bytes left over are characters that are no
  token, and get the byte tokens or the unknown token afterwards.

Supported components (anything else is a :class:`~bytepair.FormatError` naming the file, the
JSON path and the reason): normalizers ``NFC``/``NFD``/``NFKC``/``NFKD``, ``Lowercase``, ``Nmt``,
``StripAccents``,
``Prepend``, ``Strip``, ``Replace`` (a string, or a regex of plain characters, classes,
quantifiers, ``|``, groups, ``\\A`` and ``\\z``), ``Precompiled`` (a ``.model``'s charsmap, in
T5 and ALBERT files: applied per grapheme cluster as ``tokenizers`` does, which needs the
``regex`` package), ``Sequence``; pre-tokenizers ``Metaspace``, ``WhitespaceSplit``, ``Digits``,
``Split`` (``Isolated``), ``Sequence``; decoders ``Replace``, ``ByteFallback``, ``Fuse``, ``Strip``,
``Metaspace``, ``Sequence``; added tokens with their flags (``normalized=false`` ones matched in
the text as given, ``normalized=true`` ones in the normalized text by their normalized content,
as there: Llama 2's ``<s>`` is matched as ``▁<s>``).

``encode(text)`` is ``Tokenizer.encode(text, add_special_tokens=False).ids``; ``decode(ids)`` is
``Tokenizer.decode(ids)`` (special added tokens skipped, as its default).
"""

from __future__ import annotations

import dataclasses
import os
import re
import struct
import unicodedata
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from bytepair import _core, _hf_unicode, _spm_proto
from bytepair.errors import BytepairError, FormatError, UnknownTokenError
from bytepair.pipeline.added_tokens import AddedToken, AddedVocabulary
from bytepair.sentencepiece import SentencePieceTokenizer, _clean

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import DTypeLike, NDArray

__all__ = ["HFSentencePieceTokenizer", "from_hf_spm", "is_hf_spm", "load_hf_spm"]

_DEPTH = 16  # Sequence in Sequence: deeper files are refused, not recursed into

# ---------------------------------------------------------------------------------- detection


def _types(node: Any, key: str) -> list[str]:
    """The ``type`` of a component and, for a ``Sequence``, of its steps."""
    if not isinstance(node, dict):
        return []
    out = [str(node.get("type"))]
    inner = node.get(key)
    if isinstance(inner, list):
        out += [str(n.get("type")) for n in inner if isinstance(n, dict)]
    return out


def is_hf_spm(doc: Any) -> bool:
    """Whether a parsed ``tokenizer.json`` is of the SentencePiece family: its model is Unigram,
    or BPE with byte fallback or a ``▁``-style pipeline (Metaspace, Prepend, Replace) and no
    ByteLevel pre-tokenizer."""
    if not isinstance(doc, dict) or not isinstance(doc.get("model"), dict):
        return False
    kind = doc["model"].get("type")
    if kind == "Unigram":
        return True
    if kind != "BPE":
        return False
    pre = _types(doc.get("pre_tokenizer"), "pretokenizers")
    if "ByteLevel" in pre:
        return False
    if doc["model"].get("byte_fallback") is True or "Metaspace" in pre:
        return True
    norm = _types(doc.get("normalizer"), "normalizers")
    dec = _types(doc.get("decoder"), "decoders")
    return "Prepend" in norm or "Metaspace" in dec or "ByteFallback" in dec


# ---------------------------------------------------------------------------------- helpers


class _Refuse:
    """Makes the errors of one file: ``FormatError("<file>: <path>: <what>")``."""

    def __init__(self, where: str) -> None:
        self.where = where

    def __call__(self, path: str, what: str) -> FormatError:
        return FormatError(f"{self.where}: {path}: {what}")

    def obj(self, node: Any, path: str) -> dict[str, Any]:
        if not isinstance(node, dict) or not isinstance(node.get("type"), str):
            raise self(path, "must be an object with a 'type'")
        return node

    def flag(self, node: dict[str, Any], key: str, path: str, default: bool) -> bool:
        value = node.get(key, default)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self(f"{path}.{key}", f"must be true or false, got {value!r:.80}")
        return value

    def string(self, node: dict[str, Any], key: str, path: str) -> str:
        value = node.get(key)
        if not isinstance(value, str):
            raise self(f"{path}.{key}", f"must be a string, got {value!r:.80}")
        return value


def _is_space(c: str) -> bool:
    # Unicode White_Space (Rust's char::is_whitespace); str.isspace also takes U+001C..U+001F
    return c.isspace() and not "\x1c" <= c <= "\x1f"


# Oniguruma patterns read as Python `re` patterns: only constructs that mean the same in both.
_SAFE_ESCAPES = set("AzntrfvdDwW.\\^$|?*+()[]{}-/ ")


def _regex(pattern: str, path: str, refuse: _Refuse) -> re.Pattern[str]:
    out = []
    i = 0
    in_class = False
    while i < len(pattern):
        c = pattern[i]
        if c == "[":
            if in_class:  # Oniguruma nests sets, Python's re reads the "[" as itself
                raise refuse(path, f"the regex {pattern!r:.80} nests a character class, which bytepair does not read (yet)")
            in_class = True
            out.append(c)
            i += 1
            if pattern[i : i + 1] == "^":
                out.append("^")
                i += 1
            if pattern[i : i + 1] == "]":
                out.append("\\]")
                i += 1
            continue
        if c == "]":
            in_class = False
        if c == "\\":
            nxt = pattern[i + 1 : i + 2]
            if nxt not in _SAFE_ESCAPES or nxt in ("d", "D", "w", "W"):
                raise refuse(path, f"the regex {pattern!r:.80} uses \\{nxt}, which bytepair does not read (yet)")
            out.append("\\Z" if nxt == "z" else "\\" + nxt)
            i += 2
            continue
        if c == "(" and pattern[i + 1 : i + 2] == "?":
            raise refuse(path, f"the regex {pattern!r:.80} has a (?...) group, which bytepair does not read (yet)")
        if not in_class and c in "+*?}" and pattern[i + 1 : i + 2] == "+":
            raise refuse(path, f"the regex {pattern!r:.80} has a possessive quantifier")
        if c == "[" and ("[:" in pattern or "&&" in pattern):
            raise refuse(path, f"the regex {pattern!r:.80} has a POSIX class or a class intersection")
        out.append(c)
        i += 1
    try:
        # Oniguruma's Ruby syntax, as tokenizers compiles it: ^ and $ are line anchors
        rx = re.compile("".join(out), re.MULTILINE)
    except re.error as e:
        raise refuse(path, f"the regex {pattern!r:.80} does not compile: {e}") from None
    if rx.search("") is not None:
        raise refuse(path, f"the regex {pattern!r:.80} matches the empty string, which bytepair does not reproduce")
    return rx


def _pattern(node: Any, path: str, refuse: _Refuse) -> str | re.Pattern[str]:
    if isinstance(node, dict) and len(node) == 1:
        if isinstance(node.get("String"), str):
            return str(node["String"])
        if isinstance(node.get("Regex"), str):
            return _regex(node["Regex"], f"{path}.Regex", refuse)
    raise refuse(path, "must be {'String': ...} or {'Regex': ...}")


# ---------------------------------------------------------------------------------- normalizers

_NMT_DROP = frozenset([*range(0x01, 0x09), 0x0B, *range(0x0E, 0x20), 0x7F, 0x8F, 0x9F])
_NMT_SPACE = frozenset([0x09, 0x0A, 0x0C, 0x0D, 0x1680, *range(0x200B, 0x2010), 0x2028, 0x2029, 0x2581, 0xFEFF, 0xFFFD])
_NMT_TABLE: dict[int, str | None] = {**{c: None for c in _NMT_DROP}, **{c: " " for c in _NMT_SPACE}}

Step = Callable[[str], str]


def _normalizer(node: Any, path: str, refuse: _Refuse) -> list[Step]:
    if node is None:
        return []
    node = refuse.obj(node, path)
    kind = node["type"]
    if kind == "Sequence":
        inner = node.get("normalizers")
        if not isinstance(inner, list):
            raise refuse(f"{path}.normalizers", "must be a list")
        if path.count("[") >= _DEPTH:
            raise refuse(path, f"Sequences nested more than {_DEPTH} deep")
        return [s for k, n in enumerate(inner) for s in _normalizer(n, f"{path}.normalizers[{k}]", refuse)]
    if kind in ("NFC", "NFD", "NFKC", "NFKD"):
        form: Any = kind
        return [lambda s: _hf_unicode.normalize(form, s)]
    if kind == "Lowercase":
        return [_hf_unicode.lowercase]
    if kind == "StripAccents":  # drops marks (ALBERT, XLNet: after NFKD)
        return [_hf_unicode.strip_accents]
    if kind == "Nmt":
        return [lambda s: s.translate(_NMT_TABLE)]
    if kind == "Prepend":
        prefix = refuse.string(node, "prepend", path)
        return [lambda s: prefix + s if s else s]
    if kind == "Strip":
        left = refuse.flag(node, "strip_left", path, False)
        right = refuse.flag(node, "strip_right", path, False)

        def strip(s: str) -> str:
            a, b = 0, len(s)
            while left and a < b and _is_space(s[a]):
                a += 1
            while right and b > a and _is_space(s[b - 1]):
                b -= 1
            return s[a:b]

        return [strip]
    if kind == "Replace":
        pattern = _pattern(node.get("pattern"), f"{path}.pattern", refuse)
        content = refuse.string(node, "content", path)
        if isinstance(pattern, str):
            if not pattern:
                raise refuse(f"{path}.pattern", "an empty string")
            return [lambda s: s.replace(pattern, content)]
        return [lambda s: pattern.sub(lambda _m: content, s)]
    if kind == "Precompiled":
        return [_Charsmap.from_node(node, path, refuse).normalize]
    raise refuse(path, f"{kind} is not supported by bytepair for SentencePiece-style files")


class _Charsmap:
    """The ``Precompiled`` normalizer: a sentencepiece ``precompiled_charsmap`` (a little-endian
    ``u32`` size, a double-array trie of that many bytes, then the replacement strings, each
    ending in NUL) applied as ``tokenizers`` applies it, which is not sentencepiece's way: the
    text is cut into extended grapheme clusters; a cluster shorter than 6 bytes is replaced
    whole by the replacement of the *shortest* key that is a prefix of it, if any; otherwise
    each character is replaced by its own, if it has one. Grapheme clusters come from the
    ``regex`` package's ``\\X``, imported when a file needs them."""

    def __init__(self, blob: bytes, path: str, refuse: _Refuse) -> None:
        if len(blob) < 4:
            raise refuse(path, "precompiled_charsmap is shorter than its 4-byte header")
        (size,) = struct.unpack_from("<I", blob)
        if size % 4 or 4 + size > len(blob) or size == 0:
            raise refuse(path, f"precompiled_charsmap claims a trie of {size} bytes in {len(blob) - 4}")
        self.units = struct.unpack_from(f"<{size // 4}I", blob, 4)
        rest = blob[4 + size :]
        try:
            rest.decode("utf-8")
        except UnicodeDecodeError:
            raise refuse(path, "precompiled_charsmap: the replacement strings are not UTF-8") from None
        self.strings = rest
        self.cache: dict[str, str | None] = {}
        try:
            import regex  # type: ignore[import-untyped, import-not-found, unused-ignore]
        except ImportError:
            raise refuse(
                path,
                "the Precompiled normalizer needs grapheme clusters: pip install regex "
                "(or load the model's tokenizer.model with bytepair.load)",
            ) from None
        self.graphemes = regex.compile(r"\X")
        self.consonant = regex.compile(r"\p{InCB=Consonant}")
        self.linker = regex.compile(r"\p{InCB=Linker}")
        self.joiner = regex.compile(r"[\p{InCB=Linker}\p{InCB=Extend}]")

    def clusters(self, text: str) -> list[str]:
        """Extended grapheme clusters as Unicode 15.1's rules make them. ``regex``'s ``\\X``
        joins a linker (virama) to the consonant after it without asking for a consonant
        before (rule GB9c does): such clusters are cut again here."""
        out: list[str] = []
        for g in self.graphemes.findall(text):
            if len(g) < 3 or not self.linker.search(g):
                out.append(g)
                continue
            start = 0
            for k in range(1, len(g)):
                if not self.consonant.match(g[k]):
                    continue
                j = k - 1
                linked = False
                while j >= start and self.joiner.match(g[j]):
                    linked = linked or bool(self.linker.match(g[j]))
                    j -= 1
                if linked and (j < start or not self.consonant.match(g[j])):
                    out.append(g[start:k])
                    start = k
            out.append(g[start:])
        return out

    @classmethod
    def from_node(cls, node: dict[str, Any], path: str, refuse: _Refuse) -> _Charsmap:
        import base64
        import binascii

        raw = node.get("precompiled_charsmap")
        if not isinstance(raw, str):
            raise refuse(f"{path}.precompiled_charsmap", "must be a base64 string")
        try:
            blob = base64.b64decode(raw, validate=True)
        except (binascii.Error, ValueError):
            raise refuse(f"{path}.precompiled_charsmap", "is not valid base64") from None
        return cls(blob, f"{path}.precompiled_charsmap", refuse)

    def _first_key(self, key: bytes) -> int | None:
        """The value of the shortest key of the trie that is a prefix of ``key``."""
        units = self.units
        try:
            unit = units[0]
            pos = (unit >> 10) << ((unit & (1 << 9)) >> 6)
            for c in key:
                if c == 0:
                    return None
                pos ^= c
                unit = units[pos]
                if unit & ((1 << 31) | 0xFF) != c:
                    return None
                pos ^= (unit >> 10) << ((unit & (1 << 9)) >> 6)
                if (unit >> 8) & 1:
                    return int(units[pos] & ((1 << 31) - 1))
        except IndexError:  # a trie pointing outside itself: no key there
            return None
        return None

    def transform(self, chunk: str) -> str | None:
        if chunk in self.cache:
            return self.cache[chunk]
        at = self._first_key(chunk.encode("utf-8"))
        out = None
        if at is not None and at < len(self.strings):
            end = self.strings.find(b"\0", at)
            out = self.strings[at : len(self.strings) if end < 0 else end].decode("utf-8", "replace")
        if len(self.cache) < 1 << 16:
            self.cache[chunk] = out
        return out

    def normalize(self, text: str) -> str:
        out: list[str] = []
        for g in self.clusters(text):
            if len(g.encode("utf-8")) < 6:
                r = self.transform(g)
                if r is not None:
                    out.append(r)
                    continue
            for c in g:
                r = self.transform(c)
                out.append(c if r is None else r)
        return "".join(out)


# ---------------------------------------------------------------------------------- pre-tokenizers

# A pre-tokenizer step: (pieces, each with its start in the original text or -1) -> pieces
Piece = tuple[str, int]
PreStep = Callable[[list[Piece]], list[Piece]]


def _split_whitespace(pieces: list[Piece]) -> list[Piece]:
    out: list[Piece] = []
    for text, at in pieces:
        start = None
        for k, c in enumerate(text):
            if _is_space(c):
                if start is not None:
                    out.append((text[start:k], at + start if at >= 0 and start == 0 else -1))
                    start = None
            elif start is None:
                start = k
        if start is not None:
            out.append((text[start:], at + start if at >= 0 and start == 0 else -1))
    return out


def _pre_tokenizer(node: Any, path: str, refuse: _Refuse) -> list[PreStep]:
    if node is None:
        return []
    node = refuse.obj(node, path)
    kind = node["type"]
    if kind == "Sequence":
        inner = node.get("pretokenizers")
        if not isinstance(inner, list):
            raise refuse(f"{path}.pretokenizers", "must be a list")
        if path.count("[") >= _DEPTH:
            raise refuse(path, f"Sequences nested more than {_DEPTH} deep")
        steps = [s for k, n in enumerate(inner) for s in _pre_tokenizer(n, f"{path}.pretokenizers[{k}]", refuse)]
        return steps
    if kind == "WhitespaceSplit":
        return [_split_whitespace]
    if kind == "Digits":
        one = refuse.flag(node, "individual_digits", path, False)

        def digits(pieces: list[Piece]) -> list[Piece]:
            # numeric characters (Rust's char::is_numeric: Nd, Nl, No) isolated, one by one
            # or in runs
            out: list[Piece] = []
            for text, at in pieces:
                last = 0
                k = 0
                while k < len(text):
                    if unicodedata.category(text[k]) not in ("Nd", "Nl", "No"):
                        k += 1
                        continue
                    end = k + 1
                    while not one and end < len(text) and unicodedata.category(text[end]) in ("Nd", "Nl", "No"):
                        end += 1
                    if k > last:
                        out.append((text[last:k], at if last == 0 else -1))
                    out.append((text[k:end], at if k == 0 else -1))
                    last = k = end
                if last < len(text):
                    out.append((text[last:], at if last == 0 else -1))
            return out

        return [digits]
    if kind == "Metaspace":
        rep = refuse.string(node, "replacement", path)
        if len(rep) != 1:
            raise refuse(f"{path}.replacement", f"must be one character, got {rep!r:.80}")
        scheme = node.get("prepend_scheme")
        if scheme is None:  # files of tokenizers < 0.14
            scheme = "always" if refuse.flag(node, "add_prefix_space", path, True) else "never"
        if scheme not in ("always", "first", "never"):
            raise refuse(f"{path}.prepend_scheme", f"{scheme!r:.80} (expected always, first or never)")
        split = refuse.flag(node, "split", path, True)

        def metaspace(pieces: list[Piece]) -> list[Piece]:
            out: list[Piece] = []
            for text, at in pieces:
                text = text.replace(" ", rep)
                if text and not text.startswith(rep) and (scheme == "always" or (scheme == "first" and at == 0)):
                    text = rep + text
                if not split:
                    out.append((text, at))
                    continue
                starts = [k for k, c in enumerate(text) if c == rep and k > 0]
                for a, b in zip([0, *starts], [*starts, len(text)], strict=True):
                    if b > a:
                        out.append((text[a:b], at if a == 0 else -1))
            return out

        return [metaspace]
    if kind == "Split":
        pattern = _pattern(node.get("pattern"), f"{path}.pattern", refuse)
        behavior = node.get("behavior")
        if behavior not in ("Isolated", "isolated"):
            raise refuse(f"{path}.behavior", f"{behavior!r:.80} is not supported (only Isolated)")
        if refuse.flag(node, "invert", path, False):
            raise refuse(f"{path}.invert", "invert=true is not supported")
        rx = pattern if isinstance(pattern, re.Pattern) else re.compile(re.escape(pattern))

        def isolate(pieces: list[Piece]) -> list[Piece]:
            out: list[Piece] = []
            for text, at in pieces:
                last = 0
                for m in rx.finditer(text):
                    a, b = m.span()
                    if a == b:
                        continue
                    if a > last:
                        out.append((text[last:a], at if last == 0 else -1))
                    out.append((text[a:b], at if a == 0 else -1))
                    last = b
                if last < len(text):
                    out.append((text[last:], at if last == 0 else -1))
            return out

        return [isolate]
    raise refuse(path, f"{kind} is not supported by bytepair for SentencePiece-style files")


# ---------------------------------------------------------------------------------- decoders

Dec = Callable[[list[str]], list[str]]
_BYTE_TOKEN = re.compile(r"<0x(\+?[0-9A-Fa-f]|[0-9A-Fa-f]{2})>")


def _byte_fallback(tokens: list[str]) -> list[str]:
    out: list[str] = []
    run: list[int] = []

    def flush() -> None:
        if run:
            try:
                out.append(bytes(run).decode("utf-8"))
            except UnicodeDecodeError:
                out.extend("\ufffd" for _ in run)
            run.clear()

    for t in tokens:
        m = _BYTE_TOKEN.fullmatch(t) if len(t) == 6 else None
        if m is not None:
            run.append(int(m.group(1), 16))
            continue
        flush()
        out.append(t)
    flush()
    return out


def _decoder(node: Any, path: str, refuse: _Refuse) -> list[Dec]:
    if node is None:
        return []
    node = refuse.obj(node, path)
    kind = node["type"]
    if kind == "Sequence":
        inner = node.get("decoders")
        if not isinstance(inner, list):
            raise refuse(f"{path}.decoders", "must be a list")
        if path.count("[") >= _DEPTH:
            raise refuse(path, f"Sequences nested more than {_DEPTH} deep")
        return [d for k, n in enumerate(inner) for d in _decoder(n, f"{path}.decoders[{k}]", refuse)]
    if kind == "ByteFallback":
        return [_byte_fallback]
    if kind == "Fuse":
        return [lambda ts: ["".join(ts)]]
    if kind == "Replace":
        pattern = _pattern(node.get("pattern"), f"{path}.pattern", refuse)
        content = refuse.string(node, "content", path)
        if not isinstance(pattern, str) or not pattern:
            raise refuse(f"{path}.pattern", "only a non-empty string pattern is supported in a decoder")
        return [lambda ts: [t.replace(pattern, content) for t in ts]]
    if kind == "Strip":
        content = refuse.string(node, "content", path)
        start, stop = node.get("start", 0), node.get("stop", 0)
        if len(content) != 1 or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (start, stop)):
            raise refuse(path, "Strip needs one character 'content' and non-negative 'start' and 'stop'")

        def strip(ts: list[str]) -> list[str]:
            out = []
            for t in ts:
                a = 0
                while a < min(start, len(t)) and t[a] == content:
                    a += 1
                b = len(t)
                while len(t) - b < stop and b > a and t[b - 1] == content:
                    b -= 1
                out.append(t[a:b])
            return out

        return [strip]
    if kind == "Metaspace":
        rep = refuse.string(node, "replacement", path)
        scheme = node.get("prepend_scheme")
        if scheme is None:
            scheme = "always" if refuse.flag(node, "add_prefix_space", path, True) else "never"
        if len(rep) != 1 or scheme not in ("always", "first", "never"):
            raise refuse(path, "Metaspace needs one character 'replacement' and prepend_scheme always, first or never")
        drop_first = scheme != "never"

        def metaspace(ts: list[str]) -> list[str]:
            return [t.replace(rep, "" if k == 0 and drop_first else " ") for k, t in enumerate(ts)]

        return [metaspace]
    raise refuse(path, f"{kind} is not supported by bytepair for SentencePiece-style files")


# ---------------------------------------------------------------------------------- the model file


NORMAL, UNKNOWN, CONTROL = _spm_proto.NORMAL, _spm_proto.UNKNOWN, _spm_proto.CONTROL


def model_proto(
    pieces: Iterable[tuple[str, float, int]], *, model_type: int, unk_id: int, byte_fallback: bool
) -> bytes:
    """The bytes of a SentencePiece ``.model`` (``ModelProto``) holding ``pieces`` (text, score,
    type) and a normalizer that does nothing: no dummy prefix, no whitespace removal or escaping,
    no charsmap (the pipeline around the model does what the ``tokenizer.json`` says)."""
    trainer = {
        "model_type": model_type, "byte_fallback": byte_fallback, "unk_id": unk_id,
        "bos_id": -1, "eos_id": -1, "pad_id": -1,
    }
    normalizer = {
        "name": "identity", "precompiled_charsmap": b"", "add_dummy_prefix": False,
        "remove_extra_whitespaces": False, "escape_whitespaces": False,
    }
    return _spm_proto.model_bytes(pieces, trainer, normalizer)


def _merges(raw: Any, refuse: _Refuse) -> list[tuple[str, str]]:
    if not isinstance(raw, list):
        raise refuse("model.merges", "must be a list")
    out = []
    for n, m in enumerate(raw):
        if isinstance(m, list) and len(m) == 2 and all(isinstance(x, str) and x for x in m):
            out.append((m[0], m[1]))
        elif isinstance(m, str) and len(m.split(" ")) == 2 and all(m.split(" ")):
            a, b = m.split(" ")
            out.append((a, b))
        else:
            raise refuse(f"model.merges[{n}]", f"must be 'a b' or ['a', 'b'], got {m!r:.80}")
    return out


class _Bpe:
    """``tokenizers``' BPE model on bytepair's byte-level core (see the module doc)."""

    def __init__(self, model: dict[str, Any], vocab: dict[str, int], refuse: _Refuse) -> None:
        self.vocab = vocab
        n = max(vocab.values()) + 1
        self.byte_fallback = refuse.flag(model, "byte_fallback", "model", False)
        self.fuse_unk = refuse.flag(model, "fuse_unk", "model", False)
        self.ignore_merges = refuse.flag(model, "ignore_merges", "model", False)
        for key in ("continuing_subword_prefix", "end_of_word_suffix"):
            if model.get(key) not in (None, ""):
                raise refuse(f"model.{key}", f"{model[key]!r:.80} is not supported")
        if model.get("dropout") not in (None, 0, 0.0):
            raise refuse("model.dropout", "BPE-dropout is not supported in files (the ids would be random)")
        unk = model.get("unk_token")
        if unk is not None and (not isinstance(unk, str) or unk not in vocab):
            raise refuse("model.unk_token", f"{unk!r:.80} is not a token of model.vocab")
        self.unk: int | None = None if unk is None else vocab[unk]
        # <0xNN> -> id, for byte fallback (a character whose bytes all have one takes them)
        self.byte_ids: dict[int, int] = {}
        if self.byte_fallback:
            self.byte_ids = {b: vocab[f"<0x{b:02X}>"] for b in range(256) if f"<0x{b:02X}>" in vocab}
        merges = _merges(model.get("merges", []), refuse)
        # internal ids: the file's tokens keep theirs; single bytes and the byte prefixes of
        # characters that are not tokens get ids from n on
        internal: dict[bytes, int] = {t.encode("utf-8"): i for t, i in vocab.items()}
        extra: list[bytes] = []

        def intern(b: bytes) -> int:
            i = internal.get(b)
            if i is None:
                i = n + len(extra)
                internal[b] = i
                extra.append(b)
            return i

        for b in range(256):
            intern(bytes([b]))
        char_merges: list[tuple[int, int]] = []
        made: set[bytes] = set()
        for t in vocab:
            if len(t) == 1 and len(t.encode("utf-8")) > 1:
                raw = t.encode("utf-8")
                for k in range(2, len(raw) + 1):
                    if raw[:k] not in made:
                        made.add(raw[:k])
                        char_merges.append((intern(raw[: k - 1]), intern(bytes([raw[k - 1]]))))
                        intern(raw[:k])
        special = {self.unk} if self.unk is not None else set()
        special |= set(self.byte_ids.values())
        file_merges: list[tuple[int, int]] = []
        for k, (left, right) in enumerate(merges):
            if left not in vocab or right not in vocab or (left + right) not in vocab:
                raise refuse(f"model.merges[{k}]", f"({left!r:.40}, {right!r:.40}) names or makes no token of model.vocab")
            if vocab[left] in special or vocab[right] in special:
                raise refuse(
                    f"model.merges[{k}]",
                    f"merges the unknown or a byte token ({left!r:.40}, {right!r:.40}), which bytepair does not reproduce",
                )
            file_merges.append((vocab[left], vocab[right]))
        self.size = n
        self.extra = extra
        pairs = sorted(internal.items(), key=lambda kv: kv[1])
        try:
            self.core = _core.Encoder([(i, b) for b, i in pairs], char_merges + file_merges, None, [])
        except (BytepairError, ValueError) as e:
            raise refuse("model", f"the merges cannot be run: {e}") from None

    def _dropped(self, ch: str) -> bool:
        """Whether ``tokenizers`` drops the character: no token, no byte tokens for it, no
        unknown token (the characters on either side then merge as if adjacent)."""
        if ch in self.vocab or self.unk is not None:
            return False
        return not (self.byte_fallback and all(b in self.byte_ids for b in ch.encode("utf-8")))

    def encode(self, words: list[str]) -> list[int]:
        if not words:
            return []
        # ignore_merges: a word that is a token is that token (checked before anything else)
        whole = [self.vocab.get(w) if self.ignore_merges else None for w in words]
        todo = [w for w, i in zip(words, whole, strict=True) if i is None]
        if self.unk is None:
            todo = ["".join(c for c in w if not self._dropped(c)) for w in todo]
        lists = iter(self.core.encode_batch(todo, [], num_threads=1 if len(todo) < 64 else None))
        out: list[int] = []
        n = self.size
        for i in whole:
            if i is not None:
                out.append(i)
                continue
            pending = bytearray()
            for j in next(lists):
                if j < n:
                    if pending:
                        self._unknown(bytes(pending), out)
                        pending.clear()
                    out.append(j)
                else:
                    pending += self.extra[j - n]
            if pending:
                self._unknown(bytes(pending), out)
        return out

    def _unknown(self, raw: bytes, out: list[int]) -> None:
        """A run of characters that are no token, as ``tokenizers`` does it character by
        character: its byte tokens where it has them all (``byte_fallback``), else the unknown
        token (one for the run's unknown characters with ``fuse_unk``), or nothing where the
        model has no unknown token. As there, the unknown token of a run comes after the byte
        tokens of the run's other characters."""
        pending = False
        for ch in raw.decode("utf-8"):
            if self.byte_fallback:
                b = ch.encode("utf-8")
                if all(x in self.byte_ids for x in b):
                    out.extend(self.byte_ids[x] for x in b)
                    continue
            if self.unk is None:
                continue
            if pending and not self.fuse_unk:
                out.append(self.unk)
            pending = True
        if pending and self.unk is not None:
            out.append(self.unk)


_SHORT = 6


class _Unigram:
    """``tokenizers``' Unigram model: the Viterbi search over every token of the vocabulary
    (its trie holds them all, the unknown, control and byte tokens included), in double
    precision and with its tie rule (among paths of equal score to a position, the one whose
    last token starts first), unknown characters scored ``min(scores) - 10`` and joined, then
    byte fallback. Run here in Python: the Rust core's Viterbi is sentencepiece's, whose single
    precision sums break ties otherwise (a run of 53 ``-`` splits 13+13+13+13+1 there and
    1+13+13+13+13 in ``tokenizers``)."""

    def __init__(self, tokens: list[str], scores: list[float], unk_id: int, byte_fallback: bool) -> None:
        self.ids = {t: i for i, t in enumerate(tokens)}
        self.scores = scores
        self.unk_id = unk_id
        self.unk_score = min(scores) - 10.0
        # how far a search from a position may go: the longest token starting with its
        # character; past _SHORT characters only as far as some token continues the text (the
        # prefixes of long tokens are kept, not of every token: a 250k-piece vocabulary
        # would make millions of strings)
        self.longest: dict[str, int] = {}
        for t in tokens:
            if len(t) > self.longest.get(t[0], 0):
                self.longest[t[0]] = len(t)
        self.prefixes = {t[:k] for t in tokens if len(t) > _SHORT for k in range(_SHORT + 1, len(t) + 1)}
        self.byte_ids: dict[int, int] = {}
        if byte_fallback:
            self.byte_ids = {b: self.ids[f"<0x{b:02X}>"] for b in range(256) if f"<0x{b:02X}>" in self.ids}
        self.byte_fallback = byte_fallback
        self.cache: dict[str, list[int]] = {}

    def encode(self, words: list[str]) -> list[int]:
        out: list[int] = []
        for w in words:
            ids = self.cache.get(w)
            if ids is None:
                ids = self._encode(w)
                if len(self.cache) >= 1 << 16:
                    self.cache.clear()
                self.cache[w] = ids
            out.extend(ids)
        return out

    def _encode(self, s: str) -> list[int]:
        n = len(s)
        ids, scores, prefixes = self.ids, self.scores, self.prefixes
        best = [0.0] * (n + 1)
        start = [-1] * (n + 1)
        node = [0] * (n + 1)
        for i in range(n):
            here = best[i]
            single = False
            for j in range(i + 1, min(n, i + self.longest.get(s[i], 0)) + 1):
                piece = s[i:j]
                if j - i > _SHORT and piece not in prefixes:
                    break
                k = ids.get(piece)
                if k is None:
                    continue
                score = scores[k] + here
                if start[j] < 0 or score > best[j]:
                    best[j], start[j], node[j] = score, i, k
                if j == i + 1:
                    single = True
            if not single:
                score = self.unk_score + here
                if start[i + 1] < 0 or score > best[i + 1]:
                    best[i + 1], start[i + 1], node[i + 1] = score, i, self.unk_id
        # back from the end: runs of unknown nodes joined into one string
        texts: list[str] = []
        end = n
        unk_end = -1
        while end > 0:
            a = start[end]
            if node[end] == self.unk_id:
                if unk_end < 0:
                    unk_end = end
            else:
                if unk_end >= 0:
                    texts.append(s[end:unk_end])
                    unk_end = -1
                texts.append(s[a:end])
            end = a
        if unk_end >= 0:
            texts.append(s[0:unk_end])
        texts.reverse()
        out: list[int] = []
        for t in texts:
            found = ids.get(t)
            if found is not None:
                out.append(found)
                continue
            if self.byte_fallback:
                raw = t.encode("utf-8")
                if all(b in self.byte_ids for b in raw):
                    out.extend(self.byte_ids[b] for b in raw)
                    continue
            out.append(self.unk_id)
        return out


# ---------------------------------------------------------------------------------- the tokenizer


class HFSentencePieceTokenizer(SentencePieceTokenizer):
    """A SentencePiece-family ``tokenizer.json`` (Unigram, or BPE with byte fallback), encoding
    as Hugging Face ``tokenizers`` does. Made by :func:`from_hf_spm` or ``bytepair.load``."""

    _normalizers: list[Step]
    _pre: list[PreStep]
    _decoders: list[Dec]
    _added: AddedVocabulary
    _raw_added: AddedVocabulary
    _normalized_added: AddedVocabulary
    _model: _Bpe | _Unigram
    _doc: dict[str, Any]
    _tokens: list[str]  # by id, as tokenizers' id_to_token gives them
    _model_size: int
    _index: dict[str, int]  # the model's tokens and the added tokens' contents -> id
    _special_texts: frozenset[str]
    _post_processor: Any
    # Roles a model directory's tokenizer_config.json gives (formats.hf._spm_roles), or None:
    # then the names transformers' Llama and T5 classes default to.
    _config_roles: dict[str, str] | None = None

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> HFSentencePieceTokenizer:
        """Reads a ``tokenizer.json`` of the SentencePiece family."""
        return load_hf_spm(path)

    @classmethod
    def from_bytes(cls, data: bytes, *, name: str = "<bytes>") -> HFSentencePieceTokenizer:
        """Reads the bytes of a ``tokenizer.json`` of the SentencePiece family."""
        import json

        try:
            doc = json.loads(bytes(data).decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            raise FormatError(f"{name}: not valid JSON ({e})") from None
        return from_hf_spm(doc, where=name)

    def __reduce__(self) -> tuple[Any, ...]:
        return self._with_state((_from_doc, (self._doc, self._name)))

    def to_bytes(self) -> bytes:
        """The ``tokenizer.json`` this tokenizer was read from, as UTF-8 bytes (a ``.model``
        cannot hold its pipeline)."""
        import json

        return (json.dumps(self._doc, ensure_ascii=False, indent=2) + "\n").encode("utf-8")

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes the ``tokenizer.json`` this tokenizer was read from, atomically."""
        from bytepair._atomic import write_atomic

        write_atomic(path, self.to_bytes())

    @property
    def model_type(self) -> str:
        return "bpe" if isinstance(self._model, _Bpe) else "unigram"

    def __len__(self) -> int:
        return len(self._tokens)

    @property
    def vocab(self) -> dict[str, int]:
        return dict(self._index)

    @property
    def special_tokens(self) -> dict[str, int]:
        """The special added tokens: ``{text: id}``."""
        return {t.content: t.id for t in self._added if t.special}

    @property
    def added_tokens(self) -> list[AddedToken]:
        return list(self._added)

    @property
    def special_tokens_map(self) -> dict[str, str]:
        """The roles: those of the model directory's ``tokenizer_config.json`` when it was read
        from one; else (a ``tokenizer.json`` declares none) by the names transformers' Llama and T5
        tokenizers give them: ``<unk>``, ``<s>``, ``</s>``, ``<pad>`` where this file has them as
        special tokens (else the model's unknown token, whatever its name)."""
        if self._config_roles is not None:
            return dict(self._config_roles)
        specials = self.special_tokens
        roles = {role: text for role, text in (("unk", "<unk>"), ("bos", "<s>"), ("eos", "</s>"), ("pad", "<pad>"))
                 if text in specials}
        unk = self._model.unk_id if isinstance(self._model, _Unigram) else self._model.unk
        if "unk" not in roles and unk is not None and unk < len(self._tokens):
            roles["unk"] = self._tokens[unk]
        return roles

    def token_to_id(self, token: str) -> int | None:
        if not isinstance(token, str):
            return None
        return self._index.get(token)

    def id_to_token(self, id: int) -> str | None:
        if isinstance(id, int) and not isinstance(id, bool) and 0 <= id < len(self._tokens):
            return self._tokens[id]
        return None

    def __repr__(self) -> str:
        return f"<HFSentencePieceTokenizer model_type={self.model_type} vocab_size={self.vocab_size}>"

    # ------------------------------------------------------------------ encoding

    def _pieces(self, text: str, at: int) -> list[str]:
        """The pre-tokenizer's pieces of normalized text (``at``: where it starts in the
        original text, or -1 when not known to be 0)."""
        pieces: list[Piece] = [(text, at)] if text else []
        for pre in self._pre:
            pieces = pre(pieces)
        return [p for p, _ in pieces if p]

    def _encode(self, text: str) -> list[int]:
        # As tokenizers' AddedVocabulary: the text is cut at the normalized=false tokens, each
        # stretch between them normalized and cut at the normalized=true tokens (matched by
        # their normalized content), then pre-tokenized; the model encodes the pieces.
        text = _clean(text)
        out: list[int] = []
        words: list[str] = []

        def flush() -> None:
            if words:
                out.extend(self._model.encode(words))
                words.clear()

        for i, start, end in self._raw_added.split(text):
            if i is not None:
                flush()
                out.append(i)
                continue
            stretch = text[start:end]
            for step in self._normalizers:
                stretch = step(stretch)
            for j, a, b in self._normalized_added.split(stretch):
                if j is not None:
                    flush()
                    out.append(j)
                else:
                    words.extend(self._pieces(stretch[a:b], start if a == 0 else -1))
        flush()
        return out

    def encode(
        self,
        text: str,
        *,
        add_bos: bool = False,
        add_eos: bool = False,
        enable_sampling: bool = False,
        alpha: float = 0.1,
        nbest_size: int = -1,
        seed: int | None = None,
    ) -> list[int]:
        """The ids ``tokenizers`` gives: ``encode(text, add_special_tokens=False).ids`` (added
        tokens in the text, special or not, are matched, as there)."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, not {type(text).__name__}")
        _no_sampling(enable_sampling)
        if add_bos or add_eos:
            raise BytepairError("add_bos / add_eos: a tokenizer.json says where its special tokens go in its post_processor")
        return self._encode(text)

    def encode_batch(
        self,
        texts: Iterable[str],
        *,
        add_bos: bool = False,
        add_eos: bool = False,
        num_threads: int | None = None,
        enable_sampling: bool = False,
        alpha: float = 0.1,
        nbest_size: int = -1,
        seed: int | None = None,
    ) -> list[list[int]]:
        _no_sampling(enable_sampling)
        items = list(texts)
        for t in items:
            if not isinstance(t, str):
                raise TypeError(f"texts must be str, got {type(t).__name__}")
        return [self.encode(t, add_bos=add_bos, add_eos=add_eos) for t in items]

    def encode_batch_numpy(
        self,
        texts: Iterable[str],
        *,
        num_threads: int | None = None,
        dtype: DTypeLike | None = None,
        enable_sampling: bool = False,
        alpha: float = 0.1,
        nbest_size: int = -1,
        seed: int | None = None,
    ) -> tuple[NDArray[Any], NDArray[np.int64]]:
        """:meth:`encode_batch` as ``(ids, offsets)``, as the ``.model`` class gives them."""
        import numpy as np

        from bytepair.sentencepiece import _id_dtype

        lists = self.encode_batch(texts, num_threads=num_threads, enable_sampling=enable_sampling)
        dt = _id_dtype(len(self), dtype)
        offsets = np.zeros(len(lists) + 1, dtype=np.int64)
        np.cumsum([len(ids) for ids in lists], out=offsets[1:])
        return np.fromiter((i for ids in lists for i in ids), dtype=dt, count=int(offsets[-1])), offsets

    def encode_with_offsets(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        raise BytepairError("offsets are not available yet for tokenizer.json files of the SentencePiece family")

    def tokenize(self, text: str) -> list[str]:
        """The tokens of ``text`` (``Encoding.tokens``)."""
        return [self._tokens[i] for i in self.encode(text)]

    def normalize(self, text: str) -> str:
        """The text after the file's normalizer (added tokens not cut out)."""
        text = _clean(text)
        for step in self._normalizers:
            text = step(text)
        return text

    # ------------------------------------------------------------------ decoding

    def decode(self, ids: Iterable[int], *, skip_special_tokens: bool = True) -> str:
        """The text of ``ids`` as ``tokenizers``' ``decode`` gives it (special added tokens
        skipped unless ``skip_special_tokens=False``)."""
        tokens: list[str] = []
        for i in ids:
            if not isinstance(i, int) or isinstance(i, bool):
                raise TypeError(f"ids must be ints, got {type(i).__name__}")
            token = self.id_to_token(i)
            if token is None:
                raise UnknownTokenError(f"unknown token id {i!r}")
            # as there: a token is special by its text (a normalized=true token shows and is
            # decoded as its normalized content, which no special token has)
            if skip_special_tokens and token in self._special_texts:
                continue
            tokens.append(token)
        if not self._decoders:
            return " ".join(tokens)
        for dec in self._decoders:
            tokens = dec(tokens)
        return "".join(tokens)


def from_hf_spm(doc: Any, *, where: str = "tokenizer.json") -> HFSentencePieceTokenizer:
    """The tokenizer of a parsed SentencePiece-family ``tokenizer.json`` (``where`` names it in
    errors); a pipeline bytepair cannot reproduce exactly is a :class:`FormatError`."""
    refuse = _Refuse(where)
    if not isinstance(doc, dict) or not isinstance(doc.get("model"), dict):
        raise FormatError(f"{where}: not a Hugging Face tokenizer.json (no 'model')")
    model = doc["model"]
    kind = model.get("type")
    # the model's vocabulary, by id
    tokens: list[str]
    scores: list[float] = []
    unk_id: int | None
    if kind == "Unigram":
        raw = model.get("vocab")
        if not isinstance(raw, list) or not raw:
            raise refuse("model.vocab", "must be a non-empty list of [piece, score]")
        tokens = []
        for k, entry in enumerate(raw):
            ok = isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str) and entry[0]
            score = entry[1] if ok else None
            if not ok or isinstance(score, bool) or not isinstance(score, (int, float)) or score != score or abs(score) > 1e30:
                raise refuse(f"model.vocab[{k}]", f"must be [piece, finite score], got {entry!r:.80}")
            tokens.append(entry[0])
            scores.append(float(score))
        unk_id = model.get("unk_id")
        if not isinstance(unk_id, int) or isinstance(unk_id, bool) or not 0 <= unk_id < len(tokens):
            raise refuse("model.unk_id", f"must be the id of a piece, got {unk_id!r:.80} (a Unigram model without one is not supported)")
        byte_fallback = refuse.flag(model, "byte_fallback", "model", False)
        index = {t: i for i, t in enumerate(tokens)}
        if len(index) != len(tokens):
            raise refuse("model.vocab", "a piece is listed twice")
    elif kind == "BPE":
        raw = model.get("vocab")
        if not isinstance(raw, dict) or not raw:
            raise refuse("model.vocab", "must be a non-empty object {token: id}")
        ids = sorted(raw.values(), key=lambda v: v if isinstance(v, int) else -1)
        if any(not isinstance(v, int) or isinstance(v, bool) for v in ids) or ids != list(range(len(ids))):
            raise refuse("model.vocab", "the ids must be 0, 1, 2, ... without gaps")
        index = dict(raw)
        tokens = [""] * len(index)
        for t, i in index.items():
            if not t:
                raise refuse("model.vocab", "an empty token")
            tokens[i] = t
        unk = model.get("unk_token")
        unk_id = index.get(unk) if isinstance(unk, str) else None
    else:
        raise refuse("model", f"{kind!r:.80} is not a SentencePiece-family model (Unigram or BPE)")
    model_size = len(tokens)
    normalizers = _normalizer(doc.get("normalizer"), "normalizer", refuse)
    pre = _pre_tokenizer(doc.get("pre_tokenizer"), "pre_tokenizer", refuse)
    decoders = _decoder(doc.get("decoder"), "decoder", refuse)
    from bytepair.pipeline.templates import post_processor_from_hf

    post = post_processor_from_hf(doc.get("post_processor"), where)
    # added tokens: in the vocabulary, or after it without gaps
    added: list[AddedToken] = []
    entries = doc.get("added_tokens") or []
    if not isinstance(entries, list):
        raise refuse("added_tokens", "must be a list")
    beyond: dict[int, str] = {}
    for n, entry in enumerate(entries):
        at = AddedToken.from_hf(entry, f"{where}: added_tokens[{n}]")
        if at.id < model_size:
            if tokens[at.id] != at.content:
                raise refuse(f"added_tokens[{n}]", f"{at.content!r:.40} has the id {at.id}, which is {tokens[at.id]!r:.40} in model.vocab")
        else:
            beyond[at.id] = at.content
            if at.content in index:
                raise refuse(f"added_tokens[{n}]", f"{at.content!r:.40} has the id {at.id}, but model.vocab gives it {index[at.content]}")
        added.append(at)
    for k, i in enumerate(sorted(beyond)):
        if i != model_size + k:
            raise refuse("added_tokens", f"the id {i} leaves a gap after model.vocab ({model_size} tokens)")
    all_tokens = tokens + [beyond[i] for i in sorted(beyond)]
    vocabulary = AddedVocabulary(added)
    # tokenizers matches normalized=true tokens in the normalized text, by their normalized content
    in_normalized: dict[str, AddedToken] = {}
    for at in added:
        if not at.normalized:
            continue
        content = at.content
        for step in normalizers:
            content = step(content)
        if not content:
            raise refuse("added_tokens", f"{at.content!r:.40} (normalized=true) normalizes to nothing")
        other = in_normalized.get(content)
        if other is not None and other.id != at.id:
            raise refuse("added_tokens", f"{other.content!r:.40} and {at.content!r:.40} normalize to the same text")
        in_normalized[content] = dataclasses.replace(at, content=content)
    if kind == "Unigram":
        assert unk_id is not None
        encoder: _Bpe | _Unigram = _Unigram(tokens, scores, unk_id, byte_fallback)
        kinds = [UNKNOWN if i == unk_id else CONTROL if i in vocabulary.special_ids else NORMAL for i in range(model_size)]
        pieces = list(zip(tokens, scores, kinds, strict=True))
        pieces += [(t, 0.0, CONTROL) for t in all_tokens[model_size:]]
        proto = model_proto(pieces, model_type=1, unk_id=unk_id, byte_fallback=False)
    else:
        encoder = _Bpe(model, index, refuse)
        # the vocabulary as a BPE .model, for the pieces' texts (encoding runs on `bpe`)
        unk_for_proto = unk_id if unk_id is not None else index.get("<unk>", 0)
        kinds = [UNKNOWN if i == unk_for_proto else CONTROL if i in vocabulary.special_ids else NORMAL for i in range(model_size)]
        pieces = [(t, -float(i), kinds[i]) for i, t in enumerate(tokens)]
        pieces += [(t, 0.0, CONTROL) for t in all_tokens[model_size:]]
        proto = model_proto(pieces, model_type=2, unk_id=unk_for_proto, byte_fallback=False)
    try:
        core = _core.SentencePiece.from_bytes(proto, where)
    except (BytepairError, ValueError) as e:
        raise refuse("model", f"cannot be built as a SentencePiece model: {e}") from None
    tok = HFSentencePieceTokenizer(core, name=where)
    tok._normalizers = normalizers
    tok._pre = pre
    tok._decoders = decoders
    tok._added = vocabulary
    tok._raw_added = AddedVocabulary(t for t in added if not t.normalized)
    tok._normalized_added = AddedVocabulary(in_normalized.values())
    tok._model = encoder
    tok._doc = doc
    tok._tokens = list(all_tokens)
    for content, at in in_normalized.items():
        tok._tokens[at.id] = content
    tok._model_size = model_size
    tok._index = {**index, **{at.content: at.id for at in added}}
    tok._special_texts = frozenset(at.content for at in added if at.special)
    tok._post_processor = post
    return tok


def load_hf_spm(path: str | os.PathLike[str]) -> HFSentencePieceTokenizer:
    """Reads a ``tokenizer.json`` of the SentencePiece family (``bytepair.load`` finds such
    files by their content)."""
    from bytepair._json import read_json

    where = os.fspath(path)
    return from_hf_spm(read_json(where), where=where)


def _from_doc(doc: Any, where: str) -> HFSentencePieceTokenizer:
    return from_hf_spm(doc, where=where)


def _no_sampling(enable_sampling: bool) -> None:
    if enable_sampling:
        raise BytepairError(
            "enable_sampling: subword sampling runs on SentencePiece .model files (load the "
            "model's tokenizer.model); a tokenizer.json model does not sample yet"
        )
