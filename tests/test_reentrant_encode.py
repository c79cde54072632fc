"""A short ``encode`` call keeps its buffers per thread and makes its list of ids while holding
them. Making a list can run Python code on the same thread: a garbage collection that calls a
``__del__`` which encodes too. That inner call must get its own buffers and the right ids,
never a panic (a "RefCell already borrowed" PanicException, here raised inside ``__del__``,
which pytest reports as an unraisable exception and fails on)."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import bytepair

SAMPLE = Path(bytepair.__file__).parent / "data" / "tinyshakespeare.txt"
LINES = SAMPLE.read_text(encoding="utf-8").splitlines()[:300]


def _kinds() -> Iterator[tuple[str, Callable[[], Any]]]:
    yield "byte-level BPE", lambda: bytepair.get_encoding("cl100k_base")
    yield "Unigram", lambda: bytepair.train_unigram_from_iterator(LINES, vocab_size=300)
    yield "SentencePiece BPE", lambda: bytepair.train_sentencepiece_from_iterator(LINES, vocab_size=300, model_type="bpe")
    yield "WordPiece", lambda: bytepair.train_wordpiece_from_iterator(LINES, vocab_size=300, progress=False)


@pytest.fixture(params=[name for name, _ in _kinds()])
def tok(request: pytest.FixtureRequest) -> Any:
    return dict(_kinds())[request.param]()


def test_encode_called_again_from_a_collection_during_encode(tok: Any) -> None:
    texts = ["To be, or not to be", "Wherefore art thou", "A horse! a horse!"]
    want = {t: tok.encode(t) for t in texts}
    got: list[tuple[str, list[int]]] = []

    class Encodes:
        """In a reference cycle, so only the cyclic collector frees it; encodes when it does."""

        def __init__(self, text: str) -> None:
            self.text = text
            self.me = self

        def __del__(self) -> None:
            got.append((self.text, tok.encode(self.text)))

    old = gc.get_threshold()
    gc.collect()
    gc.set_threshold(1)  # a collection at nearly every allocation of a container, lists included
    try:
        for k in range(200):
            Encodes(texts[k % len(texts)])
            assert tok.encode(texts[(k + 1) % len(texts)]) == want[texts[(k + 1) % len(texts)]]
    finally:
        gc.set_threshold(*old)
        gc.collect()
    assert got, "no collection ran inside the calls: the test did not test anything"
    for text, ids in got:
        assert ids == want[text]
