"""The piece cache, shared by all threads of a tokenizer and of fixed size: the ids
never depend on it, and it costs memory only as it fills (an encoder that caches a few pieces
does not take the table's 32 MiB)."""

from __future__ import annotations

import sys
import threading

import pytest

import bytepair


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/self/status")
def test_a_tokenizer_that_caches_a_few_pieces_takes_little_memory() -> None:
    texts = ["the quick brown fox jumps over the lazy dog"] * 20
    toks = [bytepair.train_from_iterator(texts, vocab_size=260 + i) for i in range(24)]
    before = _rss_mb()
    for tok in toks:
        # Words that are not one token go through the piece cache.
        assert tok.decode(tok.encode("zebras quizzically vex jumpy foxes")) == "zebras quizzically vex jumpy foxes"
    grown = _rss_mb() - before
    # Each tokenizer's short-piece table is 32 MiB of address space; filled at once, 24 of them
    # would add 768 MB.
    assert grown < 100, f"{grown:.0f} MB for 24 tokenizers that cached a few pieces"


def test_threads_sharing_the_cache_get_the_ids_of_one_thread() -> None:
    tok = bytepair.get_encoding("o200k_base")
    words = ["naïvely", "Überraschung", "превосходство", "接続詞", "unthinkably", "ʻokina", "x" * 30]
    texts = [" ".join(words[(i + k) % len(words)] for k in range(200)) + f" {i}" for i in range(16)]
    tok._core.clear_cache()
    want = [tok.encode_ordinary(t) for t in texts]
    tok._core.clear_cache()
    got: dict[int, list[int]] = {}

    def work(i: int) -> None:
        for _ in range(3):
            got[i] = tok.encode_ordinary(texts[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(texts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [got[i] for i in range(len(texts))] == want
    assert tok.encode_batch(texts, num_threads=4) == want
