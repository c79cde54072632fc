"""bytepair._charsmap: sentencepiece ``precompiled_charsmap`` blobs built from ``unicodedata``.

The blob is checked three ways: a pure-Python reader of the double-array trie (written here
from the unit layout) against the rules' longest-match meaning; sentencepiece itself,
normalizing with a model whose ``normalizer_spec`` carries the blob; and bytepair's Rust
reader on the same model bytes, which must agree with sentencepiece.
"""

from __future__ import annotations

import io
import pathlib
import random
import struct
import unicodedata
from typing import Literal

import pytest
import sentencepiece as spm

from bytepair import SentencePieceTokenizer
from bytepair._charsmap import _encode_offset, build, charsmap, nfkc_rules
from bytepair.errors import BytepairError

DATA = pathlib.Path(__file__).parent / "data"


# ------------------------------------------------------------------ a reader of the blob


class Reader:
    """Longest-match lookups in a blob, following the unit layout: ``offset(u) = (u >> 10) <<
    ((u & (1 << 9)) >> 6)``, label ``u & ((1 << 31) | 0xff)``, bit 8 has_leaf, leaf value in
    the low 31 bits."""

    def __init__(self, blob: bytes) -> None:
        (size,) = struct.unpack_from("<I", blob)
        assert size % 4 == 0 and 4 + size < len(blob), "sentencepiece wants strings after the trie"
        self.units = struct.unpack_from(f"<{size // 4}I", blob, 4)
        self.strings = blob[4 + size :]
        assert self.strings.endswith(b"\0")
        # darts-clone does not check bounds: every block a lookup can reach must be there
        assert len(self.units) % 256 == 0

    @staticmethod
    def offset(u: int) -> int:
        return (u >> 10) << ((u & (1 << 9)) >> 6)

    def longest(self, data: bytes) -> tuple[int, bytes] | None:
        units = self.units
        pos = self.offset(units[0])
        best = None
        for i, b in enumerate(data):
            pos ^= b
            u = units[pos]  # an IndexError would be an out-of-bounds read in sentencepiece
            if u & ((1 << 31) | 0xFF) != b:
                break
            pos ^= self.offset(u)
            if (u >> 8) & 1:
                leaf = units[pos]
                assert leaf >> 31 == 1
                at = leaf & 0x7FFFFFFF
                best = (i + 1, self.strings[at : self.strings.index(b"\0", at)])
        return best


def dict_longest(rules: dict[bytes, bytes], data: bytes) -> tuple[int, bytes] | None:
    for n in range(len(data), 0, -1):
        if data[:n] in rules:
            return n, rules[data[:n]]
    return None


def apply(rules: dict[str, str], text: str) -> str:
    """sentencepiece's rewrite with ``rules``: the longest key at each position, else one
    character."""
    longest = max(map(len, rules))
    out, i = [], 0
    while i < len(text):
        for n in range(min(longest, len(text) - i), 0, -1):
            rep = rules.get(text[i : i + n])
            if rep is not None:
                out.append(rep)
                i += n
                break
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


# ------------------------------------------------------------------ round trips


ALPHABET = ["a", "b", "c", "é", "ж", "中", "😀", "\u0301", " ", "\x7f"]


def random_rules(rng: random.Random, n: int) -> dict[str, str]:
    rules: dict[str, str] = {}
    keys: list[str] = []
    while len(rules) < n:
        if keys and rng.random() < 0.4:
            # a key that extends an existing one, or one of its prefixes
            base = rng.choice(keys)
            key = base + "".join(rng.choices(ALPHABET, k=rng.randint(1, 2))) if rng.random() < 0.6 else base[:-1]
        else:
            key = "".join(rng.choices(ALPHABET, k=rng.randint(1, 4)))
        if key and key not in rules:
            keys.append(key)
            rules[key] = "".join(rng.choices(ALPHABET, k=rng.choice([0, 0, 1, 2, 3, 5])))
    return rules


@pytest.mark.parametrize("seed", range(40))
def test_round_trip(seed: int) -> None:
    rng = random.Random(seed)
    rules = random_rules(rng, rng.choice([1, 2, 5, 20, 80, 300]))
    blob = build(rules)
    reader = Reader(blob)
    by_bytes = {k.encode(): v.encode() for k, v in rules.items()}
    queries = [k.encode() for k in rules]
    queries += [k.encode() + "".join(rng.choices(ALPHABET, k=2)).encode() for k in rules]
    queries += ["".join(rng.choices(ALPHABET, k=rng.randint(1, 6))).encode() for _ in range(200)]
    queries += [bytes(rng.randrange(256) for _ in range(rng.randint(1, 5))) for _ in range(200)]
    for q in queries:
        assert reader.longest(q) == dict_longest(by_bytes, q), q
    # the same rules in another order give the same bytes
    assert build(dict(reversed(list(rules.items())))) == blob


def test_round_trip_large() -> None:
    """Enough keys for many blocks, and keys sharing their subtries."""
    rng = random.Random(7)
    rules = random_rules(rng, 4000)
    for i in range(300):
        rules[f"x{i}yz"] = "same"
        rules[f"x{i}yw"] = ""
    blob = build(rules)
    reader = Reader(blob)
    by_bytes = {k.encode(): v.encode() for k, v in rules.items()}
    for k in rules:
        q = k.encode() + b"a"
        assert reader.longest(q) == dict_longest(by_bytes, q)
    for _ in range(2000):
        q = "".join(rng.choices(ALPHABET + ["x", "y", "z", "1"], k=rng.randint(1, 6))).encode()
        assert reader.longest(q) == dict_longest(by_bytes, q)


def test_nul_bytes() -> None:
    rules = {"\x00": "", "\x00a": "x", "a": "b", "ab\x00c": "d"}
    reader = Reader(build(rules))
    by_bytes = {k.encode(): v.encode() for k, v in rules.items()}
    for q in [b"\x00", b"\x00a", b"\x00\x00", b"a\x00", b"ab\x00c", b"ab\x00", b"b\x00"]:
        assert reader.longest(q) == dict_longest(by_bytes, q)
    # a NUL right after a key would sit where that key's value is
    with pytest.raises(BytepairError, match="NUL"):
        build({"a": "b", "a\x00": "c"})


def test_build_refuses() -> None:
    with pytest.raises(BytepairError, match="empty"):
        build({"": "x"})
    with pytest.raises(BytepairError, match="NUL"):
        build({"a": "b\x00c"})
    with pytest.raises(BytepairError, match="surrogate"):
        build({"\ud800": "x"})
    with pytest.raises(BytepairError, match="prefixes"):
        build({"a" * n: "x" for n in range(1, 33)})
    build({"a" * n: "x" for n in range(1, 32)})  # 31 is sentencepiece's limit


def test_offsets() -> None:
    for off in [0, 1, 255, 256, (1 << 21) - 1, 1 << 21, 0x12345600, (1 << 29) - 256]:
        u = _encode_offset(off)
        assert u >> 31 == 0 and u & 0x1FF == 0
        assert Reader.offset(u) == off
    for off in [(1 << 21) + 1, 1 << 29]:
        with pytest.raises(BytepairError):
            _encode_offset(off)


def test_empty_rules() -> None:
    reader = Reader(build({}))
    assert all(reader.longest(bytes([b, b])) is None for b in range(256))


def test_charsmap_name() -> None:
    with pytest.raises(BytepairError, match="bogus"):
        charsmap("bogus")
    assert charsmap("nfkc") is charsmap("nfkc")


@pytest.mark.parametrize("name", ["nfkc", "nmt_nfkc"])
def test_tables(name: str) -> None:
    """Every rule of the shipped tables comes back from the blob, and each is NFKC's."""
    rules = nfkc_rules(nmt=name == "nmt_nfkc")
    reader = Reader(charsmap(name))
    for key, rep in rules.items():
        data = key.encode()
        assert reader.longest(data) == (len(data), rep.encode()), key
    special = {chr(c) for c in [*range(1, 9), 0xB, *range(0xE, 0x20), 0x7F, 0x8F, 0x9F]}
    spaces = set("\t\n\x0c\r\u061c\u1680\u200b\u200c\u200e\u200f\u2028\u2029\u2581\ufeff\ufffd")
    for key, rep in rules.items():
        if name == "nmt_nfkc" and key in special:
            assert rep == ""
        elif name == "nmt_nfkc" and key in spaces:
            assert rep == " "
        else:
            assert unicodedata.normalize("NFKC", key) == rep != key
    if name == "nmt_nfkc":
        assert "\uff5e" not in rules and "\u200d" not in rules and "\x00" not in rules
    else:
        assert rules["\uff5e"] == "~"


# ------------------------------------------------------------------ sentencepiece reads it


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def _fields(buf: bytes) -> list[tuple[int, bytes, bytes]]:
    """A protobuf message's fields: (number, payload of a length-delimited field, whole field)."""
    out = []
    i = 0

    def varint() -> int:
        nonlocal i
        v = shift = 0
        while True:
            b = buf[i]
            i += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return v

    while i < len(buf):
        start = i
        key = varint()
        wire = key & 7
        payload = b""
        if wire == 0:
            varint()
        elif wire == 2:
            n = varint()
            payload = buf[i : i + n]
            i += n
        else:
            i += 4 if wire == 5 else 8
        out.append((key >> 3, payload, buf[start:i]))
    return out


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def with_charsmap(model: bytes, name: str, blob: bytes) -> bytes:
    """``model`` with normalizer_spec.name and .precompiled_charsmap replaced."""
    out = bytearray()
    for number, payload, raw in _fields(model):
        if number != 3:  # normalizer_spec
            out += raw
            continue
        spec = _field(1, name.encode()) + _field(2, blob)
        spec += b"".join(raw for n, _, raw in _fields(payload) if n not in (1, 2))
        out += _field(3, spec)
    return bytes(out)


@pytest.fixture(scope="module")
def identity_model() -> bytes:
    lines = [line for line in (DATA / "multilingual.txt").read_text(encoding="utf-8").splitlines() if line]
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines * 3),
        model_writer=out,
        vocab_size=600,
        hard_vocab_limit=False,
        character_coverage=1.0,
        normalization_rule_name="identity",
        minloglevel=2,
    )
    return out.getvalue()


def spm_view(text: str) -> str:
    """sentencepiece's whitespace handling of normalized text: spaces collapsed and trimmed,
    written as ▁, with a dummy prefix."""
    words = [w for w in text.split(" ") if w]
    return "▁" + "▁".join(words) if words else ""


NMT_REMOVED = {c: "" for c in map(chr, [*range(1, 9), 0xB, *range(0xE, 0x20), 0x7F, 0x8F, 0x9F])}
NMT_SPACES = {c: " " for c in "\t\n\x0c\r\u061c\u1680\u200b\u200c\u200e\u200f\u2028\u2029\u2581\ufeff\ufffd"}


def nmt_nfkc(text: str) -> str:
    text = "".join(NMT_REMOVED.get(c, NMT_SPACES.get(c, c)) for c in text)
    return "\uff5e".join(unicodedata.normalize("NFKC", part) for part in text.split("\uff5e"))


TEXTS = [
    "ＡＢＣ　ｘｙｚ　１２３！？",  # fullwidth, ideographic space
    "ﬁnance ﬂow ﬀ ﬃ ĳ",  # ligatures
    "① ⑳ ⑴ ⒜ ㈱ ㍻ ㌔ ™ ½ x² H₂O",  # enclosed, squared, fractions, super/subscripts
    "ﾃﾞｼﾞﾀﾙ ｶﾀｶﾅ ﾊﾟﾝ ｳﾞｧｲｵﾘﾝ",  # halfwidth katakana with voiced marks
    "豈 更 車 Ⅻ ⅷ",  # compatibility ideographs, roman numerals
    "cafe\u0301 nai\u0308ve A\u030a n\u0303 c\u0327a",  # decomposed Latin
    "Vie\u0323\u0302t Nam ca\u0302\u0323u a\u0302\u0300",  # Vietnamese, marks in either order
    "\u1100\u1161\u11a8 \u1112\u1161\u11ab\u1100\u1173\u11af \uac00\u11a8 \u3131\u314f",  # jamo
    "ﻻ ﷺ ﺑﺴﻢ ﷲ",  # Arabic presentation forms
    "Ωmega K Å ſ µ",  # singletons, compatibility letters
    "e\u0341 \u03b1\u0313\u0300\u0345",  # singleton marks, Greek with three marks
    "naïve café — “quotes” … ‘x’",  # already NFKC
    "  leading  and   inner   spaces  ",
    "emoji 👩\u200d💻 ok",
]
NMT_TEXTS = [
    "tab\tnew\nline\rcr\x0cff",
    "ctrl\x01\x02x\x1f\x7fy\x8fz\x9f!",
    "zw\u200bsp\u200cnj\u200dj\u2028\u2029\ufeffbom\ufffd",
    "▁under\u2581score \u1680ogham",
    "wave～tilde ＡＢＣ",
]


@pytest.fixture(scope="module")
def models(identity_model: bytes) -> dict[str, bytes]:
    return {name: with_charsmap(identity_model, name, charsmap(name)) for name in ["nfkc", "nmt_nfkc"]}


@pytest.mark.parametrize("name", ["nfkc", "nmt_nfkc"])
def test_sentencepiece_normalizes(models: dict[str, bytes], name: str) -> None:
    sp = spm.SentencePieceProcessor(model_proto=models[name])
    expect = nmt_nfkc if name == "nmt_nfkc" else lambda t: unicodedata.normalize("NFKC", t)
    for text in TEXTS + (NMT_TEXTS if name == "nmt_nfkc" else []):
        assert sp.normalize(text) == spm_view(expect(text)), text
    if name == "nfkc":
        # nfkc has no rule for controls and tabs: sentencepiece keeps them
        assert sp.normalize("a\tb\x01c") == "▁a\tb\x01c"


@pytest.mark.parametrize("form", ["NFC", "NFD", "NFKD"])
def test_typical_text(models: dict[str, bytes], form: Literal["NFC", "NFD", "NFKD"]) -> None:
    """Text in many scripts, composed or decomposed, comes out as NFKC."""
    sp = spm.SentencePieceProcessor(model_proto=models["nfkc"])
    for line in (DATA / "multilingual.txt").read_text(encoding="utf-8").splitlines():
        text = unicodedata.normalize(form, line)
        assert sp.normalize(text) == spm_view(unicodedata.normalize("NFKC", line)), line


def test_rules_meaning(models: dict[str, bytes]) -> None:
    """sentencepiece applies the rules as their longest-match rewrite."""
    rules = nfkc_rules(nmt=True)
    sp = spm.SentencePieceProcessor(model_proto=models["nmt_nfkc"])
    for text in TEXTS + NMT_TEXTS:
        assert sp.normalize(text) == spm_view(apply(rules, text))


POOL = [
    *"aeouAEKnc zZ1",
    *"\u0300\u0301\u0302\u0308\u0323\u0327\u0340\u0341\u0345\u0313",  # marks
    *"\u1100\u1112\u1161\u1175\u11a8\u11c2\uac00\ud7a3\u3131\u314f\uffa1\uffc2",  # Hangul
    *"ｶﾃﾊﾞﾟウ\u3099ＡＥ～",  # halfwidth, fullwidth
    *"ﬁ①ﻻ豈Ω𝐀ª",  # compatibility
    *"\x00\x01\t\n\r\x7f\x85\u00a0\u200b\u200c\u200d\u2028\u3000\u2581\ufeff\ufffd",  # controls, spaces
    "😀",
    "é",
]


@pytest.mark.parametrize("name", ["nfkc", "nmt_nfkc"])
def test_bytepair_reads_it(models: dict[str, bytes], name: str) -> None:
    """bytepair's Rust reader normalizes as sentencepiece does, with the same model bytes."""
    sp = spm.SentencePieceProcessor(model_proto=models[name])
    tok = SentencePieceTokenizer.from_bytes(models[name])
    rng = random.Random(name)
    texts = TEXTS + NMT_TEXTS + (DATA / "multilingual.txt").read_text(encoding="utf-8").splitlines()
    texts += ["".join(rng.choices(POOL, k=rng.randint(1, 12))) for _ in range(500)]
    for text in texts:
        assert tok.normalize(text) == sp.normalize(text), text
    assert tok.encode(TEXTS[0]) == sp.encode(TEXTS[0])


def test_empty_blob_loads(identity_model: bytes) -> None:
    model = with_charsmap(identity_model, "empty", build({}))
    sp = spm.SentencePieceProcessor(model_proto=model)
    tok = SentencePieceTokenizer.from_bytes(model)
    assert sp.normalize("ﬁ a") == tok.normalize("ﬁ a") == "▁ﬁ▁a"
