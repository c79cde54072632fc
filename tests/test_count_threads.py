"""Counting, thread control and chunked encoding of large texts.

``count`` must equal ``len(encode(...))`` with the same arguments, errors included; ``limit``
gives ``min(count, limit + 1)``. Ids must not depend on the number of threads nor on where a
text was cut into chunks: the chunk size is a private argument of the extension
(``chunk_bytes``) so that tests can force cuts every few bytes. Nothing here times anything.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from importlib.resources import files
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import BytepairError, DisallowedSpecialTokenError, Tokenizer

from .strategies import CUSTOM_PATTERN, text

EXAMPLES = settings(max_examples=int(os.environ.get("BYTEPAIR_HYPOTHESIS_EXAMPLES", "100")), deadline=None)

PRETRAINED = ["gpt2", "cl100k_base", "o200k_base"]
SHAKESPEARE = (files("bytepair") / "data" / "tinyshakespeare.txt").read_text(encoding="utf-8")
SPECIALS = ["<|endoftext|>", "<s>", "<s><s>", "\nb"]


@pytest.fixture(scope="module", params=["gpt2", "gpt4", "o200k", None, CUSTOM_PATTERN])
def trained(request: pytest.FixtureRequest) -> Tokenizer:
    return bytepair.train_from_iterator(
        [SHAKESPEARE[:100_000]], vocab_size=600, pattern=request.param, special_tokens=SPECIALS
    )


@pytest.fixture(scope="module", params=PRETRAINED)
def pretrained(request: pytest.FixtureRequest) -> Tokenizer:
    return bytepair.get_encoding(request.param)


# Text with many places where the presets may cut ("x\nA") and many where they may not.
_LINE = st.one_of(
    text,
    st.sampled_from(["Hello, world.", "x = 1", "  indented", "", "中文", "<s>", "<s><s>", "\nb", "<|endoftext|>"]),
    st.builds(lambda c, n: c * n, st.sampled_from(["a", " ", "1", "é", "\n"]), st.integers(1, 40)),
)
texts = st.lists(_LINE, max_size=30).map("\n".join)

POLICIES: list[dict[str, Any]] = [
    {"disallowed_special": ()},
    {"allowed_special": "all"},
    {"allowed_special": {"<s>"}, "disallowed_special": ()},
    {},
]


def _outcome(fn: Any) -> Any:
    try:
        return fn()
    except DisallowedSpecialTokenError:
        return DisallowedSpecialTokenError


def _check_count(tok: Tokenizer, s: str, policy: dict[str, Any], limit: int) -> None:
    expected = _outcome(lambda: len(tok.encode(s, **policy)))
    assert _outcome(lambda: tok.count(s, **policy)) == expected
    assert _outcome(lambda: tok.count(s, limit=limit, **policy)) == (
        expected if expected is DisallowedSpecialTokenError else min(expected, limit + 1)
    )


# ---------------------------------------------------------------------------------- count


@EXAMPLES
@given(s=texts, policy=st.sampled_from(POLICIES), limit=st.integers(0, 60))
def test_count_is_len_encode_pretrained(pretrained: Tokenizer, s: str, policy: dict[str, Any], limit: int) -> None:
    _check_count(pretrained, s, policy, limit)


@EXAMPLES
@given(s=texts, policy=st.sampled_from(POLICIES), limit=st.integers(0, 60))
def test_count_is_len_encode_trained(trained: Tokenizer, s: str, policy: dict[str, Any], limit: int) -> None:
    _check_count(trained, s, policy, limit)


def test_count_limit_exact_edges(pretrained: Tokenizer) -> None:
    s = SHAKESPEARE[:20_000]
    n = len(pretrained.encode_ordinary(s))
    assert pretrained.count(s) == n
    for limit in (0, 1, n - 1, n, n + 1, 10**12, 2**62, 10**30):
        assert pretrained.count(s, limit=limit) == min(n, limit + 1)
    assert pretrained.count("") == 0
    assert pretrained.count("", limit=0) == 0
    # limit with threads and chunks: still min(count, limit + 1)
    for threads in (1, 2, 3):
        for limit in (0, n // 3, n - 1, n):
            assert pretrained.count(s, limit=limit, num_threads=threads) == min(n, limit + 1)
            got = pretrained._core.count(s, [], limit=limit, num_threads=threads, chunk_bytes=97)
            assert got == min(n, limit + 1)


def test_count_batch(trained: Tokenizer) -> None:
    docs = [SHAKESPEARE[i : i + 3000] for i in range(0, 30_000, 3000)] + ["", "<s> x"]
    expected = [len(trained.encode(d, allowed_special="all")) for d in docs]
    for threads in (None, 1, 2, 4):
        assert trained.count_batch(docs, allowed_special="all", num_threads=threads) == expected
        assert trained.count_batch(docs, allowed_special="all", num_threads=threads, limit=100) == [
            min(n, 101) for n in expected
        ]
    with pytest.raises(DisallowedSpecialTokenError):
        trained.count_batch(docs)
    with pytest.raises(TypeError):
        trained.count_batch("one string")


def test_count_arguments_are_checked(trained: Tokenizer) -> None:
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(BytepairError, match="limit"):
            trained.count("x", limit=bad)  # type: ignore[arg-type]
    for bad_threads in (0, -2, 2.0, False):
        with pytest.raises(BytepairError, match="num_threads"):
            trained.count("x", num_threads=bad_threads)  # type: ignore[arg-type]
        with pytest.raises(BytepairError, match="num_threads"):
            trained.encode("x", num_threads=bad_threads)  # type: ignore[arg-type]
        with pytest.raises(BytepairError, match="num_threads"):
            trained.encode_ordinary("x", num_threads=bad_threads)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        trained.count(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="chunk_bytes"):
        trained._core.encode_ordinary("x", chunk_bytes=0)


def test_count_repairs_surrogates_as_encode(pretrained: Tokenizer) -> None:
    s = "x\ud800y \udfff"
    assert pretrained.count(s) == len(pretrained.encode(s))
    assert pretrained.count_batch([s, "ok"]) == [len(pretrained.encode(s)), len(pretrained.encode("ok"))]


# ---------------------------------------------------------------------------------- threads and chunks


@EXAMPLES
@given(s=texts, chunk=st.integers(1, 64), threads=st.integers(1, 4), policy=st.sampled_from(POLICIES[:3]))
def test_chunks_and_threads_give_the_same_ids(
    pretrained: Tokenizer, s: str, chunk: int, threads: int, policy: dict[str, Any]
) -> None:
    expected = pretrained.encode(s, **policy)
    allowed = pretrained._allowed_ids(policy.get("allowed_special", frozenset()))
    core = pretrained._core
    repaired = s.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    assert core.encode(repaired, allowed, num_threads=threads, chunk_bytes=chunk) == expected
    assert core.encode_batch([repaired, repaired], allowed, num_threads=threads, chunk_bytes=chunk) == [expected] * 2
    assert core.count(repaired, allowed, num_threads=threads, chunk_bytes=chunk) == len(expected)
    assert pretrained.encode(s, num_threads=threads, **policy) == expected


@EXAMPLES
@given(s=texts, chunk=st.integers(1, 64), threads=st.integers(1, 4))
def test_chunks_and_threads_trained(trained: Tokenizer, s: str, chunk: int, threads: int) -> None:
    repaired = s.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    allowed = list(trained.special_tokens.values())
    expected = trained.encode(repaired, allowed_special="all")
    assert trained._core.encode(repaired, allowed, num_threads=threads, chunk_bytes=chunk) == expected
    assert trained._core.count(repaired, allowed, num_threads=threads, chunk_bytes=chunk) == len(expected)


def test_one_large_document_split_across_threads(pretrained: Tokenizer) -> None:
    import inspect
    import json.decoder

    doc = (SHAKESPEARE[:200_000] + inspect.getsource(json.decoder) + "<|endoftext|>\n") * 2
    expected = pretrained.encode(doc, allowed_special="all")
    for threads in (1, 2, 3, 4, None):
        assert pretrained.encode(doc, allowed_special="all", num_threads=threads) == expected
        assert pretrained.count(doc, allowed_special="all", num_threads=threads) == len(expected)
        assert pretrained.encode_batch([doc, "", doc[:999]], allowed_special="all", num_threads=threads) == [
            expected,
            [],
            pretrained.encode(doc[:999], allowed_special="all"),
        ]
    for chunk in (1, 50, 4096, 65_536):
        assert pretrained._core.encode(doc, list(pretrained.special_tokens.values()), num_threads=2, chunk_bytes=chunk) == expected


def test_adversarial_texts_finish_and_agree(pretrained: Tokenizer) -> None:
    # Long single pieces (the heap path) and long runs that the pattern splits finely.
    cjk = "".join(chr(0x4E00 + (i * 7919) % 20_000) for i in range(30_000))
    for s in ("a" * 300_000, "1" * 300_000, " " * 300_000, cjk, "ab" * 100_000, "\n" * 100_000):
        ids = pretrained.encode_ordinary(s)
        assert pretrained.decode(ids) == s
        assert pretrained.count(s) == len(ids)
        assert pretrained.encode_ordinary(s, num_threads=2) == ids


def test_caches_change_no_ids(pretrained: Tokenizer) -> None:
    s = SHAKESPEARE[:50_000]
    pretrained._core.clear_cache()
    cold = pretrained.encode_ordinary(s)
    assert pretrained.encode_ordinary(s) == cold  # warm
    assert pretrained.encode_batch([s] * 4, num_threads=4) == [cold] * 4  # shards in use at once


# Over the 64 KiB below which a batch is encoded on the calling thread: the pool is used.
FORK_BATCH = ["hello world " * 1000] * 8


def _child_encodes(conn: Any) -> None:
    tok = bytepair.get_encoding("gpt2")
    conn.send(tok.encode_batch(FORK_BATCH, num_threads=2))
    conn.close()


@pytest.mark.skipif(sys.platform != "linux", reason="fork start method")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_threads_work_after_fork() -> None:
    tok = bytepair.get_encoding("gpt2")
    expected = tok.encode_batch(FORK_BATCH, num_threads=2)  # the parent's pool exists
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_child_encodes, args=(child,))
    proc.start()
    assert parent.poll(60), "the child hung: a thread pool inherited through fork"
    assert parent.recv() == expected
    proc.join(10)
    assert proc.exitcode == 0


def test_count_and_batch_follow_normalization() -> None:
    import bytepair

    tok = bytepair.train_from_iterator(
        ["Ｈｅｌｌｏ WORLD hello world"] * 5, vocab_size=300, normalization="nfkc+lowercase", special_tokens=["<S>"]
    )
    text = "Ｈｅｌｌｏ WORLD<S>ﬁne"
    ids = tok.encode(text, allowed_special="all")
    assert ids == tok.encode(text.replace("Ｈｅｌｌｏ", "hello").replace("WORLD", "world").replace("ﬁ", "fi"), allowed_special="all")
    assert tok.count(text, allowed_special="all") == len(ids)
    assert tok.count_batch([text, text], allowed_special="all") == [len(ids)] * 2
    assert tok.encode_batch([text], allowed_special="all") == [ids]
    assert tok.encode_ordinary("WORLD") == tok.encode_ordinary("world")
