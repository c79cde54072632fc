"""Array outputs reuse the memory of earlier outputs their callers let go of
(rust/src/py/spares.rs), and never the memory of one still seen: through its array, a slice,
a view or the memoryview itself."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import bytepair


@pytest.fixture(scope="module")
def enc() -> bytepair.Tokenizer:
    return bytepair.get_encoding("cl100k_base")


def _texts(seed: int, docs: int) -> list[str]:
    # About 2,000 ids a document: 300 documents make an output of more than 1 MiB (kept).
    return [f"document {seed} number {i}: " + f"word{seed}x{i} and more text " * 330 for i in range(docs)]


def _expected(enc: bytepair.Tokenizer, texts: list[str]) -> np.ndarray:
    return np.concatenate([np.asarray(ids, dtype=np.uint32) for ids in enc.encode_ordinary_batch(texts)])


def test_outputs_still_seen_are_never_written(enc: bytepair.Tokenizer) -> None:
    first = _texts(1, 300)
    ids1, offsets1 = enc.encode_batch_numpy(first, num_threads=1)
    assert ids1.nbytes > 1 << 20
    want1 = ids1.copy()
    view = memoryview(ids1)[5:50]
    window = ids1[100:200]
    want_window = window.copy()
    ids1[:3] = 7  # outputs are writable; the caller's writes stay theirs
    want1[:3] = 7
    for seed in range(2, 6):
        texts = _texts(seed, 300 + seed)
        ids, _ = enc.encode_batch_numpy(texts, num_threads=1)
        assert np.array_equal(ids, _expected(enc, texts))
        assert np.array_equal(ids1, want1)
        del ids
        gc.collect()
    del ids1, offsets1
    gc.collect()
    # The slice and the view still hold the first output: later calls must not take it.
    for seed in range(6, 10):
        texts = _texts(seed, 300)
        ids, _ = enc.encode_batch_numpy(texts, num_threads=1)
        assert np.array_equal(ids, _expected(enc, texts))
        assert np.array_equal(window, want_window)
        assert bytes(view) == want1[5:50].tobytes()
        del ids


def test_the_bytearray_behind_an_output_is_never_taken_while_held(enc: bytepair.Tokenizer) -> None:
    """A caller may keep the bytearray under an output's memoryview after every view of it is
    gone (no buffer export then stops a resize): it is still theirs."""
    ids, _ = enc.encode_batch_numpy(_texts(20, 300), num_threads=1)
    base = ids
    while not isinstance(base, bytearray):
        base = base.obj if isinstance(base, memoryview) else base.base
    held = base
    want = bytes(held)
    del ids, base, _
    gc.collect()
    for seed in range(21, 25):
        texts = _texts(seed, 300)
        out, _ = enc.encode_batch_numpy(texts, num_threads=1)
        assert np.array_equal(out, _expected(enc, texts))
        del out
    assert bytes(held) == want


@pytest.mark.parametrize("docs", [300, 320, 500, 160, 300])
def test_outputs_of_every_size_after_dropped_ones(enc: bytepair.Tokenizer, docs: int) -> None:
    """Longer (room kept past the length), much longer (a new one) and much shorter outputs
    after outputs the caller dropped: each holds its own ids, stale bytes all overwritten."""
    for seed in range(3):
        texts = _texts(100 * docs + seed, docs)
        ids, offsets = enc.encode_batch_numpy(texts, num_threads=1)
        assert np.array_equal(ids, _expected(enc, texts))
        assert offsets[-1] == len(ids)
        ids[:] = 0xFFFF  # garbage for the next call to overwrite
        del ids, offsets
