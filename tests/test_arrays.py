"""The array path (encode_to_numpy, encode_batch_numpy, encode_files): the same ids as encode,
whatever the threads, chunking, special tokens and number of documents."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import BytepairError, CorpusError, DisallowedSpecialTokenError, Tokenizer

from .strategies import text

SPECIALS = ["<|endoftext|>", "<s>", "<s><s>"]


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    from importlib.resources import files

    sample = (files("bytepair") / "data" / "tinyshakespeare.txt").read_text(encoding="utf-8")
    return bytepair.train_from_iterator([sample[:200_000]], vocab_size=600, special_tokens=SPECIALS)


@pytest.fixture(scope="module")
def o200k() -> Tokenizer:
    return bytepair.get_encoding("o200k_base")


with_specials = st.lists(
    st.one_of(text, st.sampled_from(SPECIALS), st.just("")), max_size=6
).map("".join)


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(with_specials, max_size=8), threads=st.sampled_from([1, 2, None]))
def test_batch_is_encode_of_each(tok: Tokenizer, texts: list[str], threads: int | None) -> None:
    ids, offsets = tok.encode_batch_numpy(texts, allowed_special="all", num_threads=threads)
    assert ids.dtype == np.uint16 and offsets.dtype == np.int64
    assert len(offsets) == len(texts) + 1 and offsets[0] == 0
    for i, t in enumerate(texts):
        assert ids[offsets[i] : offsets[i + 1]].tolist() == tok.encode(t, allowed_special="all")
    assert offsets[-1] == len(ids)


@settings(max_examples=30, deadline=None)
@given(t=with_specials)
def test_to_numpy_is_encode(o200k: Tokenizer, t: str) -> None:
    got = o200k.encode_to_numpy(t, allowed_special="all")
    assert got.dtype == np.uint32  # o200k's ids go past 65,535
    assert got.tolist() == o200k.encode(t, allowed_special="all")


def test_large_texts_cut_between_threads_give_the_same_ids(o200k: Tokenizer) -> None:
    from importlib.resources import files

    sample = (files("bytepair") / "data" / "tinyshakespeare.txt").read_text(encoding="utf-8")
    texts = [sample[:400_000], "héllo wörld 👍 " * 2000, "", sample[400_000:700_000]]
    want = [o200k.encode(t) for t in texts]
    for threads in (1, 2, 3):
        ids, offsets = o200k.encode_batch_numpy(texts, num_threads=threads)
        assert [ids[offsets[i] : offsets[i + 1]].tolist() for i in range(len(texts))] == want
    one = o200k.encode_to_numpy(texts[0], num_threads=2)
    assert one.tolist() == want[0]


@pytest.mark.parametrize("threads", [1, 2])
def test_batches_larger_than_a_round_give_each_texts_ids(o200k: Tokenizer, tok: Tokenizer, threads: int) -> None:
    # A batch of more than 8 MiB per thread is encoded in rounds (a text larger than a round
    # cut into chunks) and written into the output once at the end: every text's ids, the
    # separator at each document's edges only, at both widths.
    from bytepair import arrays

    line = "To be, or not to be: that is the question.  Ça va? 中文 👍\n\tcode(x) = 42;\n"
    big = line * (17 * 2**20 // len(line.encode()) + 1)  # larger than a round at 2 threads
    texts = [line * 3, big, "", line * 50_000, big[:1000], line * 150_000, "x"]
    edges = [(True, False), (False, True), (True, True), (True, True), (False, False), (True, True), (True, False)]
    sep = 199_999
    want = [o200k.encode_ordinary(t) for t in texts]
    for prepend in (True, False):
        ids, offsets = arrays.encode_documents(o200k, texts, allowed=[], dt=np.dtype(np.uint32),
                                               separator=(sep, prepend), num_threads=threads, edges=edges)
        for i, w in enumerate(want):
            starts, ends = edges[i]
            expect = [sep] * (prepend and starts) + w + [sep] * (not prepend and ends)
            assert ids[offsets[i] : offsets[i + 1]].tolist() == expect, f"text {i}"
        assert len(ids) == offsets[-1]
    flat, offsets = o200k.encode_batch_numpy(texts, num_threads=threads)
    assert [flat[offsets[i] : offsets[i + 1]].tolist() for i in range(len(texts))] == want
    assert len(tok) <= 2**16
    flat, offsets = tok.encode_batch_numpy(texts, num_threads=threads, dtype=np.uint16)
    assert flat.dtype == np.uint16
    assert [flat[offsets[i] : offsets[i + 1]].tolist() for i in range(len(texts))] == [tok.encode_ordinary(t) for t in texts]


def test_special_token_rules_follow_encode(tok: Tokenizer) -> None:
    with pytest.raises(DisallowedSpecialTokenError, match="endoftext"):
        tok.encode_to_numpy("a<|endoftext|>b")
    with pytest.raises(DisallowedSpecialTokenError, match="endoftext"):
        tok.encode_batch_numpy(["fine", "a<|endoftext|>b"])
    t = "a<|endoftext|>b<s><s><s>"
    assert tok.encode_to_numpy(t, disallowed_special=()).tolist() == tok.encode(t, disallowed_special=())
    ids, _ = tok.encode_batch_numpy([t], allowed_special={"<s>"}, disallowed_special=())
    assert ids.tolist() == tok.encode(t, allowed_special={"<s>"}, disallowed_special=())


def test_lone_surrogates_as_encode(tok: Tokenizer) -> None:
    t = "a\ud800b"
    assert tok.encode_to_numpy(t).tolist() == tok.encode(t)
    ids, offsets = tok.encode_batch_numpy(["x", t])
    assert ids[offsets[1] :].tolist() == tok.encode(t)


def test_dtype_is_checked_before_encoding(o200k: Tokenizer, tok: Tokenizer) -> None:
    with pytest.raises(BytepairError, match="does not fit in uint16"):
        o200k.encode_to_numpy("hello", dtype="uint16")
    with pytest.raises(BytepairError, match="uint16 or uint32"):
        tok.encode_to_numpy("hello", dtype="int8")
    wide = tok.encode_to_numpy("hello there", dtype=np.uint32)
    assert wide.dtype == np.uint32 and wide.tolist() == tok.encode("hello there")


def test_arrays_are_writable_and_empty_batches_work(tok: Tokenizer) -> None:
    ids = tok.encode_to_numpy("to be or not")
    ids[0] = 1  # a view of a bytearray the caller owns
    ids, offsets = tok.encode_batch_numpy([])
    assert len(ids) == 0 and offsets.tolist() == [0]
    with pytest.raises(TypeError, match="list of str"):
        tok.encode_batch_numpy("one string")  # type: ignore[arg-type]


def test_encode_files_reads_in_rust(tmp_path: Path, o200k: Tokenizer) -> None:
    texts = ["First file.\nWith <|endoftext|> as text.\n", "", "second 👍 file " * 500]
    paths = []
    for i, t in enumerate(texts):
        p = tmp_path / f"f{i}.txt"
        p.write_text(t, encoding="utf-8")
        paths.append(p)
    for threads in (1, 2):
        ids, offsets = o200k.encode_files(paths, num_threads=threads)
        assert [ids[offsets[i] : offsets[i + 1]].tolist() for i in range(3)] == [o200k.encode_ordinary(t) for t in texts]


def test_encode_files_bad_utf8_names_file_and_offset(tmp_path: Path, tok: Tokenizer) -> None:
    bad = tmp_path / "bad.txt"
    raw = b"good text \xff\xfe more \xe2\x82"
    bad.write_bytes(raw)
    with pytest.raises(CorpusError, match=r"bad\.txt: not valid UTF-8 at byte offset 10"):
        tok.encode_files([bad])
    ids, _ = tok.encode_files([bad], errors="replace")
    assert ids.tolist() == tok.encode_ordinary(raw.decode("utf-8", "replace"))
    with pytest.raises(FileNotFoundError, match="missing.txt"):
        tok.encode_files([tmp_path / "missing.txt"])
    with pytest.raises(TypeError, match="list of paths"):
        tok.encode_files(str(bad))  # type: ignore[arg-type]


def test_encode_files_larger_than_a_batch(tmp_path: Path, tok: Tokenizer) -> None:
    # encode_files reads 8 MiB per thread at a time, cut where the ids do not change: a file
    # of several batches gives the ids of the whole, and a bad byte in a later batch is named
    # by its offset in the file.
    line = "To be, or not to be: that is the question.  Ça va?\r\n  \tcode(x) = 42;\n\n"
    text = line * (9 * 2**20 // len(line.encode()) + 1)
    big = tmp_path / "big.txt"
    big.write_text(text, encoding="utf-8", newline="")
    want = tok.encode_ordinary(text)
    for threads in (1, 2):
        ids, offsets = tok.encode_files([big, big], num_threads=threads)
        assert offsets.tolist() == [0, len(want), 2 * len(want)]
        assert ids[: len(want)].tolist() == want and ids[len(want) :].tolist() == want
    raw = text.encode()
    at = len(raw) - 1000
    at = raw.index(b"\n", at) + 1
    bad = tmp_path / "bad.txt"
    bad.write_bytes(raw[:at] + b"\xff" + raw[at:])
    with pytest.raises(CorpusError, match=rf"bad\.txt: not valid UTF-8 at byte offset {at}"):
        tok.encode_files([bad])
    ids, _ = tok.encode_files([bad], errors="replace")
    assert ids.tolist() == tok.encode_ordinary((raw[:at] + b"\xff" + raw[at:]).decode("utf-8", "replace"))
    ids[0] = 1  # writable, as for the other array paths
    assert ids[0] == 1


def test_encode_files_normalizing_tokenizer(tmp_path: Path) -> None:
    t = bytepair.train_from_iterator(["Café CAFÉ café"] * 20, vocab_size=270, normalization="nfc+lowercase")
    p = tmp_path / "n.txt"
    p.write_text("CAFE\u0301 Café", encoding="utf-8")
    ids, _ = t.encode_files([p])
    assert ids.tolist() == t.encode_ordinary("CAFE\u0301 Café")
