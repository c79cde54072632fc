"""The segment cache (whole texts of 64 bytes to 64 KiB kept with their ids): a text encoded a
second time comes from it, and must give tiktoken's ids through every call that uses it, at the
edges of the sizes it takes, when its budget makes it drop texts, and with it turned off."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from tests.interop_texts import reference

NAMES = ["gpt2", "cl100k_base", "o200k_base"]
SAMPLE = (
    "To be, or not to be, that is the question: Whether 'tis nobler in the mind to suffer "
    "the slings and arrows of outrageous fortune, Зачем? 中文字 🙂 … 12345 x=1;\n"
)


def _text(n: int, seed: int = 0) -> str:
    """About `n` bytes of mixed text (the sample rotated, so texts of one size differ)."""
    s = SAMPLE[seed % len(SAMPLE) :] + SAMPLE * (n // len(SAMPLE) + 2)
    out = s[:n]
    while len(out.encode()) > n:
        out = out[:-1]
    return out


@pytest.fixture(params=NAMES)
def pair(request: pytest.FixtureRequest) -> tuple[bytepair.Tokenizer, object]:
    tok = bytepair.get_encoding(request.param)
    tok._core.segment_cache(64 << 20)
    return tok, reference(request.param)


@pytest.mark.parametrize("size", [0, 1, 63, 64, 65, 1000, 8192, 65535, 65536, 65537, 200_000])
def test_a_text_again_gives_the_same_ids(pair: tuple[bytepair.Tokenizer, object], size: int) -> None:
    tok, ref = pair
    text = _text(size, seed=size)
    want = ref.encode_ordinary(text)  # type: ignore[attr-defined]
    for _ in range(3):
        assert tok.encode_ordinary(text) == want
        assert tok.encode(text) == want
        assert tok.count(text) == len(want)
        assert tok.encode_to_numpy(text).tolist() == want


def test_batches_read_what_single_calls_kept(pair: tuple[bytepair.Tokenizer, object]) -> None:
    tok, ref = pair
    texts = [_text(n, seed=n) for n in (50, 64, 300, 5000, 70_000)] * 2
    want = [ref.encode_ordinary(t) for t in texts]  # type: ignore[attr-defined]
    tok.encode_ordinary(texts[2])
    for threads in (1, 2):
        assert tok.encode_batch(texts, num_threads=threads) == want
        flat, offsets = tok.encode_batch_numpy(texts, num_threads=threads)
        assert [flat[offsets[i] : offsets[i + 1]].tolist() for i in range(len(texts))] == want


def test_special_tokens_are_never_taken_from_the_cache() -> None:
    tok = bytepair.get_encoding("cl100k_base")
    text = _text(200) + "<|endoftext|>" + _text(200, seed=7)
    ordinary = tok.encode_ordinary(text)
    assert tok.encode_ordinary(text) == ordinary
    special = tok.encode(text, allowed_special="all")
    assert special != ordinary and tok.eot_token in special
    assert tok.encode(text, allowed_special="all") == special
    with pytest.raises(bytepair.errors.DisallowedSpecialTokenError):
        tok.encode(text)


def test_a_small_budget_drops_texts_and_stays_exact() -> None:
    tok = bytepair.get_encoding("o200k_base")
    ref = reference("o200k_base")
    tok._core.segment_cache(64 << 10)
    texts = [_text(3000, seed=i) + str(i) for i in range(200)]
    for _ in range(2):
        for t in texts:
            assert tok.encode_ordinary(t) == ref.encode_ordinary(t)
    tok._core.segment_cache(0)
    assert tok._core.segment_cache() == 0
    assert [tok.encode_ordinary(t) for t in texts[:5]] == [ref.encode_ordinary(t) for t in texts[:5]]


@settings(max_examples=int(os.environ.get("BYTEPAIR_HYPOTHESIS_EXAMPLES", "150")), deadline=None)
@given(st.text(min_size=60, max_size=400), st.sampled_from(NAMES))
def test_any_text_twice_matches_tiktoken(text: str, name: str) -> None:
    tok = bytepair.get_encoding(name)
    want = reference(name).encode_ordinary(text)
    assert tok.encode_ordinary(text) == want
    assert tok.encode_ordinary(text) == want


def test_the_budget_comes_from_the_environment() -> None:
    code = "import bytepair; print(bytepair.get_encoding('gpt2')._core.segment_cache())"
    for value, want in (("0", 0), ("3", 3 << 20), ("", 64 << 20), ("junk", 64 << 20)):
        env = dict(os.environ, BYTEPAIR_SEGMENT_CACHE_MB=value)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        assert int(out.stdout) == want, value


def test_wordpiece_texts_again_give_hfs_ids() -> None:
    """WordPiece keeps whole texts too (ids only: a call with offsets always encodes)."""
    from tests.test_wordpiece import SENTENCES, hf_trained, ours

    hf = hf_trained()
    tok = ours(hf)
    tok._core.segment_cache(1 << 20)
    texts = [" ".join(SENTENCES[i:] + SENTENCES[:i]) for i in range(len(SENTENCES))]
    texts += [t[:63] for t in texts] + [t[:64] for t in texts] + [t * 200 for t in texts[:2]]
    want = [hf.encode(t, add_special_tokens=False) for t in texts]
    for _ in range(3):
        assert [tok.encode(t) for t in texts] == [w.ids for w in want]
        for threads in (1, 2):
            assert tok.encode_batch(texts, num_threads=threads) == [w.ids for w in want]
        assert [tok.encode_with_offsets(t) for t in texts] == [(w.ids, w.offsets) for w in want]
    tok._core.segment_cache(0)
    assert [tok.encode(t) for t in texts] == [w.ids for w in want]
