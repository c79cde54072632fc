"""Batch calls make their lists out of the cyclic collector's sight (py/mod.rs, `BatchLists`)
and must give every one back to it: a list the collector does not track is never freed when a
user puts it in a cycle. Every batch shape that returns lists, on one and two threads, with a
collection forced while the lists are being made."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from importlib.resources import files
from typing import Any

import pytest

import bytepair


def _texts() -> list[str]:
    text = (files("bytepair") / "data" / "tinyshakespeare.txt").read_text(encoding="utf-8")[:200_000]
    lines = [line for line in text.splitlines() if line]
    return lines + ["", "x", "日本語のテキスト 12345"]


def _all_lists(value: Any) -> Iterator[list[Any]]:
    if isinstance(value, list):
        yield value
        for item in value:
            yield from _all_lists(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _all_lists(item)
    elif hasattr(value, "keys"):  # a BatchEncoding-like mapping
        for key in value.keys():
            yield from _all_lists(value[key])


def _check(result: Any, expect: int) -> None:
    lists = list(_all_lists(result))
    assert len(lists) >= expect
    untracked = [k for k, one in enumerate(lists) if not gc.is_tracked(one)]
    assert untracked == [], f"{len(untracked)} of {len(lists)} lists not tracked"
    # A cycle through one of them is collected.
    inner = lists[-1]
    inner.append(inner)
    del inner
    gc.collect()


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return _texts()


@pytest.fixture(autouse=True)
def _collect_often() -> Iterator[None]:
    # Collections during the batch: the lists already made are then in the older generations.
    old = gc.get_threshold()
    gc.set_threshold(10, 2, 2)
    try:
        yield
    finally:
        gc.set_threshold(*old)


@pytest.mark.parametrize("threads", [1, 2])
def test_byte_level_bpe(texts: list[str], threads: int) -> None:
    enc = bytepair.get_encoding("cl100k_base")
    result = enc.encode_batch(texts, num_threads=threads)
    assert result == [enc.encode(t) for t in texts]
    _check(result, len(texts))


def test_byte_level_bpe_in_rounds() -> None:
    # Over a round (8 MiB a thread): the batch is made in rounds, one large text on its own.
    enc = bytepair.get_encoding("cl100k_base")
    big = "To be, or not to be: that is the question. " * 220_000
    batch = ["first", big, "last"] + ["a line of text"] * 1000
    result = enc.encode_batch(batch, num_threads=1)
    assert [len(r) for r in result] == [len(enc.encode(t)) for t in batch]
    _check(result, len(batch))


@pytest.mark.parametrize("threads", [1, 2])
def test_wordpiece(texts: list[str], threads: int) -> None:
    tok = bytepair.train_wordpiece_from_iterator(texts, vocab_size=400)
    result = tok.encode_batch(texts, num_threads=threads)
    assert result == [tok.encode(t) for t in texts]
    _check(result, len(texts))


def test_sentencepiece(texts: list[str]) -> None:
    tok = bytepair.train_unigram_from_iterator(texts, vocab_size=400)
    for threads in (1, 2):
        result = tok.encode_batch(texts, num_threads=threads)
        assert result == [tok.encode(t) for t in texts]
        _check(result, len(texts))


def test_model_inputs(texts: list[str]) -> None:
    enc = bytepair.get_encoding("cl100k_base").with_special_tokens(roles={"pad": "<|endoftext|>"})
    result = enc(texts[:300], padding=True, return_attention_mask=True)
    _check(dict(result), 600)


def _shapes(texts: list[str]) -> dict[str, Any]:
    enc = bytepair.get_encoding("cl100k_base")
    inputs = enc.with_special_tokens(roles={"pad": "<|endoftext|>"})
    wordpiece = bytepair.train_wordpiece_from_iterator(texts, vocab_size=400)
    unigram = bytepair.train_unigram_from_iterator(texts, vocab_size=400)
    shapes = {
        "byte-level BPE": lambda: enc.encode_batch(texts, num_threads=1),
        "WordPiece": lambda: wordpiece.encode_batch(texts, num_threads=1),
        "SentencePiece": lambda: unigram.encode_batch(texts, num_threads=1),
        "model inputs": lambda: inputs(texts, padding=True, return_attention_mask=True),
    }
    # Each once first: what a first call imports (NumPy, for model inputs) makes containers of
    # its own, which the counts below are not about.
    for call in shapes.values():
        call()
    return shapes


def test_no_collection_starts_while_the_lists_are_made(texts: list[str]) -> None:
    # Python 3.11 starts a collection inside the allocation of every 700th container; the
    # lists of a batch are made with the collector off, and the one that came due runs once,
    # when it is back on (as 3.12 and later do it, after the call).
    gc.set_threshold(700, 10, 10)
    for name, call in _shapes(texts).items():
        started: list[int] = []

        def seen(phase: str, info: dict[str, int]) -> None:
            if phase == "start":
                started.append(info["generation"])

        gc.collect()
        gc.callbacks.append(seen)
        try:
            result = call()
        finally:
            gc.callbacks.remove(seen)
        assert len(started) <= 1, f"{name}: {len(started)} collections during one batch of {len(texts)} texts"
        _check(result, len(texts))


def test_a_due_collection_runs_before_the_lists_are_tracked(texts: list[str]) -> None:
    # Python 3.12 and later run a collection that came due inside a call once it has returned,
    # when the batch's lists are tracked again: it would go through every one of them. The
    # batch runs the due collection itself while they are still out of its sight.
    gc.set_threshold(700, 10, 10)
    for name, call in _shapes(texts).items():
        young: list[int] = []

        def seen(phase: str, info: dict[str, int]) -> None:
            if phase == "start" and info["generation"] == 0:
                young.append(len(gc.get_objects(0)))

        gc.collect()
        gc.callbacks.append(seen)
        try:
            result = call()
            # A collection still pending runs at the interpreter's next check, by now.
            after = [[k] for k in range(10)]
        finally:
            gc.callbacks.remove(seen)
        assert len(after) == 10
        assert young, f"{name}: no collection came due over {len(texts)} texts"
        assert max(young) < len(texts) // 2, f"{name}: a young collection went through {max(young)} objects"
        _check(result, len(texts))


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_left_as_it_was(texts: list[str], enabled: bool) -> None:
    for name, call in _shapes(texts).items():
        if enabled:
            gc.enable()
        else:
            gc.disable()
        try:
            call()
            assert gc.isenabled() is enabled, name
        finally:
            gc.enable()
