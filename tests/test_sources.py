"""Training sources: paths, globs, directories, .jsonl, .gz/.zst, iterables; bad input."""

from __future__ import annotations

import builtins
import gzip
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bytepair
from bytepair import CorpusError, Source, training
from bytepair.patterns import resolve

from . import oracle
from .strategies import PATTERNS, corpus_with_specials, text

zstandard = pytest.importorskip("zstandard")

TEXT = "The quick brown fox jumps over the lazy dog.\nThe dog sleeps; the fox runs.\n\n日本語のテキスト\n" * 30


def regex_of(pattern: str | None) -> str | None:
    return resolve(pattern)[1]


@contextmanager
def tiny_blocks(n: int) -> Iterator[None]:
    old = training._READ_BYTES
    training._READ_BYTES = n
    try:
        yield
    finally:
        training._READ_BYTES = old


def write(path: Path, data: bytes) -> Path:
    if path.name.endswith(".gz"):
        data = gzip.compress(data)
    elif path.name.endswith(".zst"):
        data = zstandard.ZstdCompressor().compress(data)
    path.write_bytes(data)
    return path


@given(
    corpus=corpus_with_specials(),
    pattern=st.sampled_from(PATTERNS),
    suffix=st.sampled_from([".txt", ".txt.gz", ".zst"]),
    block=st.integers(1, 50),
    norm=st.sampled_from([None, "nfkc+lowercase"]),
)
def test_compressed_and_normalized_files_match_oracle(
    tmp_path_factory: pytest.TempPathFactory,
    corpus: tuple[list[str], list[str]],
    pattern: str | None,
    suffix: str,
    block: int,
    norm: str | None,
) -> None:
    docs, specials = corpus
    content = "\n".join(docs) + "Ａ\u0301 ΣΑΣ\n"
    path = write(tmp_path_factory.mktemp("c") / f"corpus{suffix}", content.encode("utf-8"))
    with tiny_blocks(block):
        tok = bytepair.train(
            path, vocab_size=256 + len(specials) + 40, pattern=pattern, special_tokens=specials,
            normalization=norm, min_frequency=1,
        )
    expected = oracle.train([oracle.normalize(content, norm, specials)], 256 + len(specials) + 40,
                            regex_of(pattern), specials, 1)
    assert tok.merges == expected


@given(
    docs=st.lists(text, max_size=8),
    suffix=st.sampled_from([".jsonl", ".jsonl.gz", ".ndjson.zst"]),
)
def test_jsonl_documents_match_oracle(
    tmp_path_factory: pytest.TempPathFactory, docs: list[str], suffix: str
) -> None:
    lines = "".join(json.dumps({"id": i, "body": d}) + "\n" for i, d in enumerate(docs))
    path = write(tmp_path_factory.mktemp("j") / f"docs{suffix}", lines.encode("utf-8"))
    if not any(docs):
        return
    tok = bytepair.train(Source(path, text_field="body"), vocab_size=300, min_frequency=1)
    assert tok.merges == oracle.train(docs, 300, regex_of("gpt4"), [], 1)
    assert tok.training["input"]["documents"] == len(docs)


def test_jsonl_lone_surrogates_become_replacement_characters(tmp_path: Path) -> None:
    p = write(tmp_path / "s.jsonl", b'{"text": "a\\ud800b a\\ud800b"}\n')
    tok = bytepair.train(p, vocab_size=300, min_frequency=1)
    assert tok.merges == oracle.train(["a\ufffdb a\ufffdb"], 300, regex_of("gpt4"), [], 1)


def test_globs_directories_and_lists_are_one_source(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "sub").mkdir()
    write(tmp_path / "a" / "one.txt", TEXT[:500].encode())
    write(tmp_path / "a" / "sub" / "two.txt.gz", TEXT[500:1500].encode())
    write(tmp_path / "a" / ".hidden.txt", b"\xff\xff not text")
    write(tmp_path / "b.jsonl", (json.dumps({"text": TEXT[1500:]}) + "\n").encode())
    docs = [TEXT[:500], TEXT[500:1500], TEXT[1500:]]
    want = bytepair.train_from_iterator(docs, vocab_size=400).merges
    assert bytepair.train([tmp_path / "a", tmp_path / "b.jsonl"], vocab_size=400).merges == want
    assert bytepair.train(str(tmp_path / "**" / "*.*"), vocab_size=400).merges == want
    tok = bytepair.train(Source(str(tmp_path / "a"), name="dir"), vocab_size=400)
    assert tok.training["sources"][0]["files"] == 2
    assert tok.training["sources"][0]["name"] == "dir"


def test_missing_sources_fail_before_counting(tmp_path: Path) -> None:
    good = write(tmp_path / "good.txt", TEXT.encode())
    with pytest.raises(FileNotFoundError, match="nope/\\*.txt: no file matches"):
        bytepair.train([Source(good, name="g"), Source(str(tmp_path / "nope" / "*.txt"), name="n")], vocab_size=300)
    with pytest.raises(FileNotFoundError, match="missing.txt: no such file"):
        bytepair.train([good, tmp_path / "missing.txt"], vocab_size=300)
    empty = tmp_path / "empty_dir"
    empty.mkdir()
    with pytest.raises(CorpusError, match="is a directory with no files"):
        bytepair.train(empty, vocab_size=300)


def test_text_passed_as_a_path_gets_a_short_error_that_says_what_to_use() -> None:
    for text in (TEXT, [TEXT], "two\nlines"):
        with pytest.raises(FileNotFoundError, match=r"is not a file: .*train_from_iterator\(\[text\]") as e:
            bytepair.train(text, vocab_size=300)
        assert len(str(e.value)) < 250


def test_bad_utf8_is_named_with_its_offset(tmp_path: Path) -> None:
    data = b"Line one\nLine two\n" * 5000 + b"caf\xe9\n"  # past the head that is checked first
    gz = write(tmp_path / "late.txt.gz", data)
    msg = r"late.txt.gz: not valid UTF-8 at byte offset 90003 of the decompressed stream"
    with tiny_blocks(1000), pytest.raises(CorpusError, match=msg):
        bytepair.train(gz, vocab_size=300)
    with tiny_blocks(1000), pytest.raises(CorpusError, match=msg):
        bytepair.train(gz, vocab_size=300, normalization="nfc")
    plain = write(tmp_path / "late.txt", data)
    with pytest.raises(CorpusError, match=r"late.txt: not valid UTF-8 at byte offset 90003 \(pass"):
        bytepair.train(plain, vocab_size=300)
    # The start of every file is checked before counting starts.
    head = write(tmp_path / "head.zst", b"\xffabc")
    with pytest.raises(CorpusError, match=r"head.zst: not valid UTF-8 at byte offset 0 of the decompressed"):
        bytepair.train([Source(write(tmp_path / "ok.txt", TEXT.encode()), name="ok"), Source(head, name="h")],
                       vocab_size=300)
    jl = write(tmp_path / "bad.jsonl", b'{"text": "fine"}\n{"text": "caf\xe9"}\n')
    with pytest.raises(CorpusError, match=r"bad.jsonl: not valid UTF-8 at byte offset 30"):
        bytepair.train(jl, vocab_size=300)


def test_errors_replace_counts_replacements_everywhere(tmp_path: Path) -> None:
    data = b"caf\xe9 au lait\n" * 3 + b"ok \xff\xfe\n"
    paths = [write(tmp_path / f"x{s}", data) for s in (".txt", ".txt.gz", ".zst")]
    for p in paths:
        tok = bytepair.train(p, vocab_size=300, errors="replace", min_frequency=1)
        assert tok.training["input"]["replaced_bytes"] == 5, p
        assert tok.training["sources"][0]["replaced_bytes"] == 5
    norm = bytepair.train(paths[0], vocab_size=300, errors="replace", normalization="nfc", min_frequency=1)
    assert norm.training["input"]["replaced_bytes"] == 5
    assert "replaced by U+FFFD" in bytepair.sources_table(norm)


def test_jsonl_errors_name_the_line(tmp_path: Path) -> None:
    p = write(tmp_path / "d.jsonl", b'{"text": "a"}\n\n{"txt": "b"}\n')
    with pytest.raises(CorpusError, match=r"d.jsonl: line 3 has no 'text' field"):
        bytepair.train(p, vocab_size=300)
    p = write(tmp_path / "e.jsonl", b'{"text": "a"}\n{oops\n')
    with pytest.raises(CorpusError, match=r"e.jsonl: line 2 is not valid JSON"):
        bytepair.train(p, vocab_size=300)
    p = write(tmp_path / "f.jsonl", b'{"text": 5}\n')
    with pytest.raises(CorpusError, match=r"f.jsonl: line 1: 'text' is int, not a string"):
        bytepair.train(p, vocab_size=300)


def test_corrupt_compressed_file(tmp_path: Path) -> None:
    p = tmp_path / "broken.txt.gz"
    p.write_bytes(b"this is not gzip data at all")
    with pytest.raises(CorpusError, match="broken.txt.gz: cannot decompress"):
        bytepair.train(p, vocab_size=300)


def test_zstd_without_the_extra_names_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = write(tmp_path / "c.txt.zst", TEXT.encode())
    real_import = builtins.__import__

    def no_zstd(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "zstandard":
            raise ImportError("no zstandard")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_zstd)
    with pytest.raises(bytepair.BytepairError, match=r"pip install zstandard"):
        bytepair.train(p, vocab_size=300)


def test_iterable_source_and_mixed_kinds(tmp_path: Path) -> None:
    p = write(tmp_path / "a.txt", TEXT.encode())

    def gen() -> Iterator[str]:
        yield from TEXT.split("\n\n")

    tok = bytepair.train([Source(p, name="file"), Source(texts=gen(), name="gen")], vocab_size=400)
    assert [s["name"] for s in tok.training["sources"]] == ["file", "gen"]
    with pytest.raises(TypeError, match="not both"):
        bytepair.train([p, Source(texts=["x"])], vocab_size=300)  # type: ignore[list-item]
    with pytest.raises(TypeError, match="exactly one"):
        Source()
    with pytest.raises(TypeError, match="not a single str"):
        Source(texts="abc")


def test_progress_bar_counts_bytes_of_every_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = [write(tmp_path / f"p{s}", TEXT.encode()) for s in (".txt", ".txt.gz", ".jsonl")]
    paths[2].write_text(json.dumps({"text": TEXT}) + "\n")
    bytepair.train(paths, vocab_size=300, progress=True)
    err = capsys.readouterr().err
    total = sum(os.path.getsize(p) for p in paths)
    assert "counting" in err and "merging" in err
    assert f"{total / 1000:.1f} KB/{total / 1000:.1f} KB" in err


def test_documents_of_each_kind_match_what_was_written(tmp_path: Path) -> None:
    from bytepair import sources

    docs = ["first doc\n", "zweites Dokument: äöü", "日本語のテキスト"]
    paths = [
        write(tmp_path / "a.txt", TEXT.encode()),
        write(tmp_path / "b.jsonl.gz", "".join(json.dumps({"text": d}) + "\n\n" for d in docs).encode()),
        write(tmp_path / "c.ndjson.zst", "".join(json.dumps({"body": d}) + "\n" for d in docs).encode()),
    ]
    files = sources.resolve(Source([str(p) for p in paths]), strict=True)
    assert [f.path for f in files] == [str(p) for p in paths]
    assert list(sources.documents(files[0])) == [TEXT]
    assert list(sources.documents(files[1])) == docs
    assert list(sources.documents(files[2], text_field="body")) == docs
    with pytest.raises(CorpusError, match="line 1 has no 'text' field"):
        list(sources.documents(files[2]))


def test_documents_name_the_offset_of_bad_utf8_or_replace_it(tmp_path: Path) -> None:
    from bytepair import sources

    bad = write(tmp_path / "bad.jsonl", b'{"text": "ok"}\n' + b'{"text": "x\xff"}\n')
    (f,) = sources.resolve(Source(str(bad)), strict=False)
    with pytest.raises(CorpusError, match=r"bad.jsonl: not valid UTF-8 at byte offset 26\b"):
        list(sources.documents(f))
    before = sources.Replaced.count
    assert list(sources.documents(f, errors="replace")) == ["ok", "x\ufffd"]
    assert sources.Replaced.count == before + 1


def test_training_on_parquet_rows_equals_training_on_the_same_documents(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    rows = ["the quick brown fox\n", "jumps over the lazy dog", "日本語のテキスト " * 3, "the fox, the dog"] * 5
    pq.write_table(pa.table({"body": rows}), tmp_path / "t.parquet", row_group_size=3)
    from_parquet = bytepair.train(Source(str(tmp_path / "t.parquet"), text_field="body"), vocab_size=300)
    from_texts = bytepair.train_from_iterator(rows, vocab_size=300)
    assert from_parquet.merges == from_texts.merges
    pq.write_table(pa.table({"text": rows}), tmp_path / "u.parquet")
    with pytest.raises(bytepair.BytepairError, match="not .jsonl/.gz/.zst/.parquet"):
        training._paths([str(tmp_path / "u.parquet")])  # what the Dask workers read
