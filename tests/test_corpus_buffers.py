"""Corpus encoding's reused buffers (``corpus.encode.Batches``, ``_core.BatchEncoder``): batch
after batch through the same texts buffers, id buffers and output slots, each batch has the ids
of ``encode_ordinary`` of its texts with the separators where its edges say, whatever came
before it (larger, smaller, texts or file ranges) and however many threads encode it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import Tokenizer
from bytepair.corpus.encode import Batches, Unit

from .strategies import text

EOT = "<|endoftext|>"


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    from importlib.resources import files

    sample = (files("bytepair") / "data" / "tinyshakespeare.txt").read_text(encoding="utf-8")
    return bytepair.train_from_iterator([sample[:100_000]], vocab_size=400, special_tokens=[EOT])


def _sample(n: int) -> str:
    from importlib.resources import files

    return (files("bytepair") / "data" / "tinyshakespeare.txt").read_text(encoding="utf-8")[:n]


def _expected(tok: Tokenizer, texts: list[str], edges: list[tuple[bool, bool]], eot: int | None, prepend: bool) -> list[int]:
    out: list[int] = []
    for t, (start, end) in zip(texts, edges):
        if eot is not None and prepend and start:
            out.append(eot)
        out += tok.encode_ordinary(t)
        if eot is not None and not prepend and end:
            out.append(eot)
    return out


# A batch: its texts (document text, or large pieces of the sample for growth) and their edges.
batch = st.lists(
    st.tuples(st.one_of(text, st.integers(0, 30_000).map(_sample)), st.booleans(), st.booleans()),
    min_size=1,
    max_size=5,
)


@settings(max_examples=25, deadline=None)
@given(
    batches=st.lists(batch, min_size=1, max_size=5),
    threads=st.sampled_from([1, 2]),
    sep=st.sampled_from([None, True, False]),
    slots=st.sampled_from([1, 2]),
)
def test_texts_batch_after_batch_have_the_ids_of_encode_ordinary(
    tok: Tokenizer, batches: list[list[tuple[str, bool, bool]]], threads: int, sep: bool | None, slots: int
) -> None:
    eot = tok.special_tokens[EOT]
    separator = None if sep is None else (eot, sep)
    encoder = Batches(tok, np.dtype(np.uint16), separator, threads, slots=slots)
    for units in batches:
        texts = [t for t, _, _ in units]
        edges = [(s, e) for _, s, e in units]
        ids, offsets = encoder.encode([Unit(t, s, e) for t, s, e in units])
        assert ids.tolist() == _expected(tok, texts, edges, None if sep is None else eot, bool(sep))
        # offsets[i] is where text i's ids (and its separators) start
        for i, (t, (s, e)) in enumerate(zip(texts, edges)):
            n = len(tok.encode_ordinary(t)) + (sep is not None and ((sep and s) or (not sep and e)))
            assert offsets[i + 1] - offsets[i] == n
        del ids, offsets  # the contract: views of a slot are dropped before it comes round again


def test_file_ranges_and_texts_share_the_buffers(tok: Tokenizer, tmp_path: Path) -> None:
    # Ranges large then small, then texts, then ranges again, at 1 and 2 threads, uint32.
    sample = _sample(60_000)
    path = tmp_path / "big.txt"
    path.write_text(sample, encoding="utf-8")
    data = sample.encode("utf-8")
    cut1 = data.index(b"\n", 20_000) + 1
    cut2 = data.index(b"\n", 50_000) + 1
    eot = tok.special_tokens[EOT]
    for threads in (1, 2):
        encoder = Batches(tok, np.dtype(np.uint32), (eot, True), threads)
        plan: list[list[tuple[int, int]] | list[str]] = [
            [(0, cut1), (cut1, cut2), (cut2, len(data))],
            [(cut1, cut2)],
            ["First text.", sample[:5_000]],
            [(0, len(data))],
        ]
        for step in plan:
            if isinstance(step[0], tuple):
                spans = [s for s in step if isinstance(s, tuple)]
                units = [Unit("", start=a == 0, end=b == len(data), range=(str(path), a, b)) for a, b in spans]
                texts = [data[a:b].decode("utf-8") for a, b in spans]
                edges = [(u.start, u.end) for u in units]
            else:
                texts = [s for s in step if isinstance(s, str)]
                units = [Unit(t) for t in texts]
                edges = [(True, True)] * len(texts)
            ids, _ = encoder.encode(units)
            assert ids.dtype == np.uint32
            assert ids.tolist() == _expected(tok, texts, edges, eot, True)
            del ids


def test_a_slot_still_viewed_is_not_resized(tok: Tokenizer) -> None:
    encoder = Batches(tok, np.dtype(np.uint16), None, 1, slots=1)
    small, _ = encoder.encode([Unit("a few words")])
    with pytest.raises(BufferError):  # the slot must grow, and a numpy view of it is alive
        encoder.encode([Unit(_sample(20_000))])
    assert small.tolist() == tok.encode_ordinary("a few words")
