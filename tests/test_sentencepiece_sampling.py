"""Subword regularization for SentencePiece models: ``encode(..., enable_sampling=True, alpha=,
nbest_size=, seed=)``, checked against the exact distribution (every segmentation of a word
enumerated from the model's pieces and scores) and against sentencepiece's own sampler.

Draws are seeded (ours by ``seed``, sentencepiece's by ``set_random_generator_seed``), so each
comparison below is the same every run; the bounds leave room for sampling error at the sample
sizes used, and fail for a sampler that draws from another distribution (another temperature,
merges retried after a drop, the n best of another order).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bytepair import BytepairError, SentencePieceTokenizer
from tests.interop_texts import texts
from tests.test_sentencepiece import models, pairs, random_text  # noqa: F401  (module fixtures)

spm = pytest.importorskip("sentencepiece")

UNIGRAM = ["unigram", "unigram_bytes", "unigram_nfkc"]
BPE = ["bpe", "bpe_bytes", "bpe_identity"]
WORDS = ["nicer", "weather", "the", "tokenizers"]


def total_variation(a: Counter[Any], b: Counter[Any]) -> float:
    na, nb = sum(a.values()), sum(b.values())
    return sum(abs(a[k] / na - b[k] / nb) for k in set(a) | set(b)) / 2


def noise(a: Counter[Any], b: Counter[Any], samples: int) -> float:
    """A bound on the total variation that sampling alone makes: two samples of ``samples``
    draws from one distribution over K outcomes differ by about ``sqrt(K / (pi * samples))``
    (one sample from the exact distribution by ``1 / sqrt(2)`` of that); 2.5 times that, plus
    a little. A sampler of another distribution (another temperature, merges retried after a
    drop) is off by far more on these words."""
    k = len(set(a) | set(b))
    per = 1.0 if sum(b.values()) == samples else 0.5  # b a sample, or b the exact distribution
    return 2.5 * math.sqrt(per * k / (math.pi * samples)) + 0.01


def ours(tok: SentencePieceTokenizer, text: str, n: int, **kw: Any) -> Counter[tuple[int, ...]]:
    return Counter(tuple(tok.encode(text, enable_sampling=True, seed=i, **kw)) for i in range(n))


def theirs(sp: Any, text: str, n: int, **kw: Any) -> Counter[tuple[int, ...]]:
    spm.set_random_generator_seed(12345)
    return Counter(tuple(sp.encode(text, enable_sampling=True, **kw)) for _ in range(n))


def segmentations(tok: SentencePieceTokenizer, text: str) -> dict[tuple[int, ...], float]:
    """Every segmentation of ``text``'s normalized form into the model's normal pieces, with its
    score (the sum of its pieces' scores)."""
    norm = tok.normalize(text)
    score = {p: (tok.token_to_id(p), s) for p, s, kind in tok.pieces() if kind == "NORMAL"}
    out: dict[tuple[int, ...], float] = {}

    def walk(at: int, ids: tuple[int, ...], total: float) -> None:
        if at == len(norm):
            out[ids] = total
            return
        for end in range(at + 1, len(norm) + 1):
            hit = score.get(norm[at:end])
            if hit is not None:
                walk(end, ids + (hit[0],), total + hit[1])

    walk(0, (), 0.0)
    return out


def exact(paths: dict[tuple[int, ...], float], alpha: float) -> Counter[tuple[int, ...]]:
    m = max(paths.values())
    w = {k: math.exp(alpha * (v - m)) for k, v in paths.items()}
    z = sum(w.values())
    return Counter({k: v / z for k, v in w.items()})


@pytest.mark.parametrize("word", WORDS)
@pytest.mark.parametrize("alpha", [0.2, 1.0])
def test_unigram_lattice_draws_follow_the_exact_distribution(pairs: dict[str, Any], word: str, alpha: float) -> None:
    tok, _ = pairs["unigram"]
    paths = segmentations(tok, word)
    assert len(paths) >= 3
    drawn = ours(tok, word, 4000, alpha=alpha, nbest_size=-1)
    assert set(drawn) <= set(paths)
    want = exact(paths, alpha)
    assert total_variation(drawn, want) < noise(drawn, want, 4000)


@pytest.mark.parametrize("word", WORDS)
def test_unigram_nbest_draws_among_the_n_best(pairs: dict[str, Any], word: str) -> None:
    tok, _ = pairs["unigram"]
    paths = segmentations(tok, word)
    best = dict(sorted(paths.items(), key=lambda kv: -kv[1])[:3])
    drawn = ours(tok, word, 3000, alpha=0.5, nbest_size=3)
    assert set(drawn) <= set(best)
    want = exact(best, 0.5)
    assert total_variation(drawn, want) < noise(drawn, want, 3000)
    # the best is the Viterbi segmentation
    assert max(best, key=lambda k: best[k]) == tuple(tok.encode(word))


@pytest.mark.parametrize("name", UNIGRAM)
@pytest.mark.parametrize("nbest", [-1, 4])
def test_unigram_draws_match_sentencepiece(pairs: dict[str, Any], name: str, nbest: int) -> None:
    tok, sp = pairs[name]
    for word in ["nicer", "weather", "tokenizers"]:
        a = ours(tok, word, 3000, alpha=0.3, nbest_size=nbest)
        b = theirs(sp, word, 3000, alpha=0.3, nbest_size=nbest)
        assert total_variation(a, b) < noise(a, b, 3000), (name, word)


@pytest.mark.parametrize("name", BPE)
def test_bpe_dropout_matches_sentencepiece(pairs: dict[str, Any], name: str) -> None:
    tok, sp = pairs[name]
    for word in ["nicer", "the", "weather"]:
        for alpha in (0.1, 0.5):
            a = ours(tok, word, 3000, alpha=alpha)
            b = theirs(sp, word, 3000, alpha=alpha)
            assert total_variation(a, b) < noise(a, b, 3000), (name, word, alpha)


def check_draw(tok: SentencePieceTokenizer, sp: Any, text: str, seed: int, alpha: float, nbest: int) -> None:
    ids = tok.encode(text, enable_sampling=True, alpha=alpha, nbest_size=nbest, seed=seed)
    assert tok.encode(text, enable_sampling=True, alpha=alpha, nbest_size=nbest, seed=seed) == ids
    # any segmentation of the text reads back as the text
    assert tok.decode(ids) == sp.decode(sp.encode(text)), (text, ids)
    assert all(0 <= i < len(tok) for i in ids)


@settings(max_examples=60, deadline=None)
@given(text=random_text, seed=st.integers(0, 2**64 - 1), alpha=st.floats(0.0, 1.0), nbest=st.sampled_from([-1, 2, 5]))
@pytest.mark.parametrize("name", UNIGRAM + BPE)
def test_draws_repeat_from_the_seed_and_decode_to_the_text(
    pairs: dict[str, Any], name: str, text: str, seed: int, alpha: float, nbest: int
) -> None:
    tok, sp = pairs[name]
    check_draw(tok, sp, text, seed, alpha, nbest)


@pytest.mark.parametrize("name", UNIGRAM + BPE)
def test_draws_on_real_text_decode_to_the_text(pairs: dict[str, Any], name: str) -> None:
    tok, sp = pairs[name]
    for k, text in enumerate(texts()[:300]):
        check_draw(tok, sp, text, seed=k, alpha=0.3, nbest=[-1, 3][k % 2])


@pytest.mark.parametrize("name", UNIGRAM + BPE)
def test_what_draws_nothing(pairs: dict[str, Any], name: str) -> None:
    tok, sp = pairs[name]
    text = "The weather is nicer than the tokenizers say, 12345!"
    plain = tok.encode(text)
    if tok.model_type == "bpe":
        assert tok.encode(text, enable_sampling=True, alpha=0.0, seed=1) == plain
        # every merge dropped: one character (or a user-defined symbol, or a byte) a piece
        for i in tok.encode(text, enable_sampling=True, alpha=1.0, seed=1):
            piece = tok.id_to_token(i)
            assert piece is not None
            assert len(piece) == 1 or piece in ("<sep>", "foo") or piece.startswith("<0x"), piece
    else:
        for nbest in (0, 1):
            assert tok.encode(text, enable_sampling=True, nbest_size=nbest, seed=1) == plain
    assert tok.encode(text, enable_sampling=False, alpha=0.9, seed=1) == plain


def test_batches_draw_per_text_whatever_the_threads(pairs: dict[str, Any]) -> None:
    tok, _ = pairs["unigram_bytes"]
    batch = ["the weather is nicer", "tokenizers 12345", "日本語のテキスト", "the weather is nicer"] * 8
    one = tok.encode_batch(batch, enable_sampling=True, alpha=0.5, seed=99, num_threads=1)
    assert tok.encode_batch(batch, enable_sampling=True, alpha=0.5, seed=99, num_threads=2) == one
    assert one[0] == tok.encode(batch[0], enable_sampling=True, alpha=0.5, seed=99)
    # equal texts draw independently
    assert len({tuple(ids) for ids in one[::4]}) > 1
    assert tok.encode_batch(batch, enable_sampling=True, alpha=0.5, seed=100, num_threads=1) != one


def test_unseeded_draws_differ(pairs: dict[str, Any]) -> None:
    tok, _ = pairs["unigram"]
    draws = {tuple(tok.encode("the weather is nicer", enable_sampling=True, alpha=0.5)) for _ in range(50)}
    assert len(draws) > 1


@pytest.mark.parametrize(
    ("name", "kw", "error"),
    [
        ("unigram", dict(alpha=float("nan")), BytepairError),
        ("unigram", dict(alpha=-0.5), BytepairError),
        ("unigram", dict(alpha="0.1"), BytepairError),
        ("bpe", dict(alpha=1.5), BytepairError),
        ("unigram", dict(nbest_size=10**9), BytepairError),
        ("unigram", dict(nbest_size=2.0), TypeError),
        ("unigram", dict(seed="7"), TypeError),
        ("unigram", dict(enable_sampling=1), TypeError),
    ],
)
def test_bad_arguments_are_named(pairs: dict[str, Any], name: str, kw: dict[str, Any], error: type) -> None:
    tok, _ = pairs[name]
    args = dict(enable_sampling=True)
    args.update(kw)
    with pytest.raises(error) as e:
        tok.encode("some text", **args)
    key = next(iter(kw))
    assert key in str(e.value)
    with pytest.raises(error):
        tok.encode_batch(["some text"], **args)
