"""Training gives exactly the textbook algorithm's merges (tests/oracle.py)."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bytepair
from bytepair import _core
from bytepair.patterns import resolve

from . import oracle
from .strategies import PATTERNS, corpus_with_specials, text


def regex_of(pattern: str | None) -> str | None:
    return resolve(pattern)[1]


@given(
    corpus=corpus_with_specials(),
    pattern=st.sampled_from(PATTERNS),
    extra=st.integers(0, 80),
    min_frequency=st.integers(1, 3),
)
def test_train_from_iterator_matches_oracle(
    corpus: tuple[list[str], list[str]], pattern: str | None, extra: int, min_frequency: int
) -> None:
    docs, specials = corpus
    vocab_size = 256 + len(specials) + extra
    tok = bytepair.train_from_iterator(
        docs, vocab_size=vocab_size, pattern=pattern, special_tokens=specials, min_frequency=min_frequency
    ) if any(docs) else None
    if tok is None:
        return
    expected = oracle.train(docs, vocab_size, regex_of(pattern), specials, min_frequency)
    assert tok.merges == expected
    assert tok.vocab_size == 256 + len(expected) + len(specials)
    # Special tokens come right after the merges, in the order given.
    assert tok.special_tokens == {s: 256 + len(expected) + i for i, s in enumerate(specials)}


@given(corpus=corpus_with_specials(), pattern=st.sampled_from(PATTERNS), extra=st.integers(0, 60))
def test_encoding_matches_oracle(corpus: tuple[list[str], list[str]], pattern: str | None, extra: int) -> None:
    docs, specials = corpus
    if not any(docs):
        return
    tok = bytepair.train_from_iterator(
        docs, vocab_size=256 + len(specials) + extra, pattern=pattern, special_tokens=specials, min_frequency=1
    )
    rx = regex_of(pattern)
    for doc in docs:
        assert tok.encode_ordinary(doc) == oracle.encode(doc, tok.merges, rx)
        assert tok.encode(doc, allowed_special="all") == oracle.encode(doc, tok.merges, rx, tok.special_tokens)
        assert tok.decode(tok.encode(doc, allowed_special="all")) == doc


@given(docs=st.lists(text, min_size=1, max_size=4), probe=text, pattern=st.sampled_from(PATTERNS))
def test_roundtrip_any_text(docs: list[str], probe: str, pattern: str | None) -> None:
    tok = bytepair.train_from_iterator(docs * 3, vocab_size=300, pattern=pattern, min_frequency=1) if any(
        docs
    ) else None
    if tok is None:
        return
    ids = tok.encode_ordinary(probe)
    assert tok.decode(ids) == probe
    assert tok.decode_bytes(ids) == probe.encode("utf-8")
    assert ids == oracle.encode(probe, tok.merges, regex_of(pattern))


@given(corpus=corpus_with_specials(), pattern=st.sampled_from(PATTERNS), block=st.integers(1, 64))
def test_file_counting_with_tiny_blocks_matches_oracle(
    tmp_path_factory: pytest.TempPathFactory, corpus: tuple[list[str], list[str]], pattern: str | None, block: int
) -> None:
    docs, specials = corpus
    content = "\n".join(docs)
    path = tmp_path_factory.mktemp("c") / "corpus.txt"
    path.write_text(content, encoding="utf-8", newline="")
    counter = _core.PieceCounter(regex_of(pattern), specials, unit_bytes=block, block_bytes=block)
    counter.add_file(str(path))
    got = dict(counter.take_counts())
    assert got == dict(oracle.count_pieces([content], regex_of(pattern), specials))


@given(corpus=corpus_with_specials(), pattern=st.sampled_from(PATTERNS), unit=st.integers(1, 40))
def test_unit_cuts_do_not_change_counts(corpus: tuple[list[str], list[str]], pattern: str | None, unit: int) -> None:
    docs, specials = corpus
    counter = _core.PieceCounter(regex_of(pattern), specials, unit_bytes=unit)
    counter.add_texts(docs)
    assert dict(counter.take_counts()) == dict(oracle.count_pieces(docs, regex_of(pattern), specials))


def test_train_on_files_equals_train_from_iterator(tmp_path: "os.PathLike[str]") -> None:
    sample = bytepair_sample()
    docs = [sample[: len(sample) // 2], sample[len(sample) // 2 :]]
    paths = []
    for i, d in enumerate(docs):
        p = os.path.join(tmp_path, f"part{i}.txt")
        with open(p, "w", encoding="utf-8", newline="") as f:
            f.write(d)
        paths.append(p)
    a = bytepair.train(paths, vocab_size=600)
    b = bytepair.train_from_iterator(docs, vocab_size=600)
    assert a.merges == b.merges
    assert a.training["input"]["bytes"] == len(sample.encode("utf-8"))


def test_sample_corpus_matches_oracle_counts_and_first_merges() -> None:
    sample = bytepair_sample()[:200_000]
    tok = bytepair.train_from_iterator([sample], vocab_size=256 + 40)
    assert tok.merges == oracle.train([sample], 256 + 40, regex_of("gpt4"))


def bytepair_sample() -> str:
    from importlib.resources import files

    return (files("bytepair") / "data" / "tinyshakespeare.txt").read_text(encoding="utf-8")


def test_min_frequency_stops_early() -> None:
    tok = bytepair.train_from_iterator(["ab ab cd"], vocab_size=1000, min_frequency=2)
    # " ab" occurs... pieces: "ab", " ab", " cd": only (a, b) occurs twice.
    assert tok.merges == [(b"a", b"b")]
    assert tok.training["stopped_early"] is True


def test_counts_over_32_bits_do_not_overflow() -> None:
    big = 3 * 2**32 + 5
    merges = _core.train_from_counts([(b"ab", big), (b"cd", big - 1), (b"ef", 7)], merges=3, min_frequency=2)
    assert merges == [(97, 98), (99, 100), (101, 102)]


def test_thread_count_does_not_change_merges() -> None:
    import subprocess
    import sys

    code = (
        "import bytepair,sys;"
        "from importlib.resources import files;"
        "t=(files('bytepair')/'data'/'tinyshakespeare.txt').read_text();"
        "tok=bytepair.train_from_iterator([t*2], vocab_size=700);"
        "print(hash(tuple(tok.merges)))"
    )
    outs = set()
    for n in ("1", "2", "3"):
        env = dict(os.environ, RAYON_NUM_THREADS=n, PYTHONHASHSEED="0")
        outs.add(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout)
    assert len(outs) == 1
