"""Fuzzing with hypothesis: hostile files, vocabularies, texts and ids must give a result or a
documented error (``BytepairError``, ``TypeError``, ``OSError``), never another exception, a
panic or a crash.

Short by default (CI); a long run: ``BYTEPAIR_FUZZ_EXAMPLES=200000 pytest tests/test_fuzz.py``.
The seeds in ``tests/fuzz_seeds/`` (hostile tokenizer files, rank files, packed counts) are
mutated byte by byte as starting points.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bytepair import Tokenizer, _core
from bytepair.errors import BytepairError

EXAMPLES = int(os.environ.get("BYTEPAIR_FUZZ_EXAMPLES", "150"))
SEEDS = Path(__file__).parent / "fuzz_seeds"
DOCUMENTED = (BytepairError, TypeError, OSError)
BYTES = {i: bytes([i]) for i in range(256)}

fuzz = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def seeds(suffix: str) -> list[bytes]:
    return [p.read_bytes() for p in sorted(SEEDS.glob(f"*{suffix}"))]


@st.composite
def mutated(draw: st.DrawFn, suffix: str) -> bytes:
    data = bytearray(draw(st.sampled_from(seeds(suffix))))
    for _ in range(draw(st.integers(0, 8))):
        op = draw(st.sampled_from(["flip", "insert", "delete", "dup"]))
        at = draw(st.integers(0, len(data)))
        if op == "flip" and at < len(data):
            data[at] = draw(st.integers(0, 255))
        elif op == "insert":
            data[at:at] = draw(st.binary(max_size=8))
        elif op == "delete":
            del data[at : at + draw(st.integers(1, 16))]
        else:
            data[at:at] = data[at : at + draw(st.integers(1, 64))]
    return bytes(data)


@given(mutated(".json"))
@fuzz
def test_fuzz_load(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    path = tmp_path_factory.getbasetemp() / "fuzz.json"
    path.write_bytes(data)
    try:
        tok = Tokenizer.from_file(path)
    except DOCUMENTED:
        return
    text = "hello <|endoftext|> wörld\r\n"
    ids = tok.encode(text, disallowed_special=())
    assert tok.decode(ids) == tok.decode(tok.encode_ordinary(text))


@given(mutated(".tiktoken"))
@fuzz
def test_fuzz_rank_reader(data: bytes) -> None:
    try:
        enc = _core.Encoder.from_tiktoken(data, None, [])
    except DOCUMENTED:
        return
    if enc is not None:
        enc.decode_bytes(enc.encode("abc", []))


@given(mutated(".packed"))
@fuzz
def test_fuzz_packed_counts_reader(data: bytes) -> None:
    counter = _core.PieceCounter(None, [])
    try:
        counter.add_packed(data)
    except DOCUMENTED:
        return
    counter.take_counts()


ids = st.integers(-(2**70), 2**70) | st.integers(0, 300)


@given(
    st.dictionaries(ids, st.binary(max_size=4), max_size=8),
    st.lists(st.tuples(st.binary(max_size=3), st.binary(max_size=3)), max_size=4),
    st.dictionaries(st.text(max_size=4), ids, max_size=3) | st.lists(st.text(max_size=4), max_size=3),
    st.sampled_from([None, "gpt2", "gpt4", "o200k", r"\w+", "(", "GPT4", ""]),
)
@fuzz
def test_fuzz_tokenizer_constructor(vocab: dict[int, bytes], merges: list[tuple[bytes, bytes]], specials: object, pattern: str | None) -> None:
    try:
        tok = Tokenizer(BYTES | vocab, merges, special_tokens=specials, pattern=pattern)  # type: ignore[arg-type]
    except DOCUMENTED:
        return
    text = "ab cd\n" + "".join(tok.special_tokens)
    assert tok.decode_bytes(tok.encode(text, allowed_special="all")) == text.encode()


texts = st.text(alphabet=st.characters(codec=None), max_size=60) | st.text(alphabet="ab \n\r\t'é😀\ud83d\ude00<|>", max_size=200)


@given(texts, st.sampled_from(["gpt2", "gpt4", "o200k", None, r"[a-z]+"]), st.sampled_from([None, "nfkc"]))
@fuzz
def test_fuzz_encode(text: str, pattern: str | None, normalization: str | None) -> None:
    tok = Tokenizer(BYTES | {256: b"ab", 257: b"<|"}, [(b"a", b"b"), (b"<", b"|")], special_tokens=["<|>"],
                    pattern=pattern, normalization=normalization)
    try:
        ids = tok.encode(text, allowed_special="all")
    except DOCUMENTED:
        return
    want = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if normalization is None:
        assert tok.decode(ids) == want
    assert tok.count(text, allowed_special="all") == len(ids)
    k = len(text) // 2
    if not ("\ud800" <= text[k - 1 : k] <= "\udbff"):
        assert list(tok.encode_iterable([text[:k], text[k:]], allowed_special="all")) == ids


@given(st.lists(ids, max_size=20), st.sampled_from(["strict", "replace", "ignore", "nonsense"]))
@fuzz
def test_fuzz_decode(token_ids: list[int], errors: str) -> None:
    tok = Tokenizer(BYTES, [], special_tokens={"<s>": 300})
    try:
        tok.decode(token_ids, errors=errors)
    except (*DOCUMENTED, LookupError, UnicodeDecodeError):
        pass
