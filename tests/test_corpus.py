"""encode_corpus / open_shards / the encode-corpus and count commands: the shards hold exactly
the ids of encode_ordinary with the end-of-text token between documents, in the layouts the
loaders of llm.c, modded-nanogpt and Megatron-LM read (parsed here independently, from their
published layouts), and a run killed at any moment resumes to the same bytes."""

from __future__ import annotations

import gzip
import json
import os
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import bytepair
from bytepair import BytepairError, CorpusError, Tokenizer
from bytepair.cli import main


@pytest.fixture(scope="module")
def gpt2() -> Tokenizer:
    return bytepair.get_encoding("gpt2")


def _sample() -> str:
    from importlib.resources import files

    return (files("bytepair") / "data" / "tinyshakespeare.txt").read_text(encoding="utf-8")


@pytest.fixture()
def corpus(tmp_path: Path) -> tuple[list[str], list[str]]:
    """Inputs of three kinds and their documents, in the order encode_corpus reads them."""
    text = _sample()[:60_000]
    paras = [p for p in text.split("\n\n") if p]
    d = tmp_path / "in"
    d.mkdir()
    (d / "a.txt").write_text(paras[0] + "\n<|endoftext|> is text here\n", encoding="utf-8")
    docs_b = paras[1:40] + [""] + paras[40:80]  # the empty one is skipped
    with gzip.open(d / "b.jsonl.gz", "wt", encoding="utf-8") as f:
        for p in docs_b:
            f.write(json.dumps({"text": p}) + "\n")
    (d / "c.jsonl").write_text("".join(json.dumps({"text": p}) + "\n" for p in paras[80:]), encoding="utf-8")
    docs = [(d / "a.txt").read_text(encoding="utf-8")] + [p for p in docs_b if p] + paras[80:]
    return [str(d / "a.txt"), str(d / "b.jsonl.gz"), str(d / "c.jsonl")], docs


def _expected(tok: Tokenizer, docs: list[str], eot: int, prepend: bool) -> list[int]:
    out: list[int] = []
    for doc in docs:
        ids = tok.encode_ordinary(doc)
        out += [eot] + ids if prepend else ids + [eot]
    return out


def _read_llmc(path: Path) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """The layout llm.c's dataloader.h checks: 256 int32 header, magic, version, count, then tokens."""
    raw = path.read_bytes()
    header = np.frombuffer(raw[:1024], dtype="<i4")
    dtype = {(20240520, 1): "<u2", (20240801, 7): "<u4"}[(int(header[0]), int(header[1]))]
    tokens = np.frombuffer(raw[1024:], dtype=dtype)
    assert len(tokens) == header[2] and not header[3:].any()
    return header, tokens


def _read_megatron(prefix: Path) -> list[np.ndarray[Any, Any]]:
    """Megatron-LM's _IndexReader layout: MMIDIDX header, version, dtype code, counts, arrays."""
    idx = (prefix.with_suffix(".idx")).read_bytes()
    assert idx[:9] == b"MMIDIDX\x00\x00"
    assert struct.unpack("<Q", idx[9:17])[0] == 1
    code = idx[17]
    dtype = {8: "<u2", 4: "<i4"}[code]
    seqs, ndoc = struct.unpack("<QQ", idx[18:34])
    lengths = np.frombuffer(idx, "<i4", seqs, 34)
    pointers = np.frombuffer(idx, "<i8", seqs, 34 + 4 * seqs)
    doc_index = np.frombuffer(idx, "<i8", ndoc, 34 + 12 * seqs)
    assert doc_index.tolist() == list(range(seqs + 1))
    data = (prefix.with_suffix(".bin")).read_bytes()
    size = np.dtype(dtype).itemsize
    return [np.frombuffer(data, dtype, int(n), int(p)) for n, p in zip(lengths, pointers)]


def test_llmc_shards_hold_the_ids_of_each_document(tmp_path: Path, gpt2: Tokenizer, corpus: Any) -> None:
    inputs, docs = corpus
    eot = gpt2.special_tokens["<|endoftext|>"]
    doc = bytepair.encode_corpus(gpt2, inputs, tmp_path / "out", shard_tokens=1000, num_threads=2, batch_bytes=3000)
    want = _expected(gpt2, docs, eot, prepend=True)
    got = []
    for k, shard in enumerate(doc["shards"]):
        header, tokens = _read_llmc(tmp_path / "out" / f"shard_{k:06d}.bin")
        assert tokens.dtype == np.uint16
        assert len(tokens) == (1000 if k < len(doc["shards"]) - 1 else len(want) - 1000 * k)
        got += tokens.tolist()
    assert got == want
    assert doc["complete"] and doc["documents"] == len(docs) and doc["tokens"] == len(want)
    shards = bytepair.open_shards(tmp_path / "out")
    assert len(shards) == len(want)
    assert shards[995:2010].tolist() == want[995:2010]  # spans two shards
    assert shards[10:20].tolist() == want[10:20] and int(shards[-1]) == want[-1]
    assert [d.tolist() for d in shards.documents()] == [[eot] + gpt2.encode_ordinary(d) for d in docs]


def test_megatron_and_npy(tmp_path: Path, gpt2: Tokenizer, corpus: Any) -> None:
    inputs, docs = corpus
    eot = gpt2.special_tokens["<|endoftext|>"]
    m = bytepair.encode_corpus(gpt2, inputs, tmp_path / "meg", format="megatron", shard_tokens=1500, num_threads=1)
    sequences = []
    for k in range(len(m["shards"])):
        sequences += [s.tolist() for s in _read_megatron(tmp_path / "meg" / f"shard_{k:06d}")]
    assert sequences == [gpt2.encode_ordinary(d) + [eot] for d in docs]  # whole documents, eot appended
    assert [d.tolist() for d in bytepair.open_shards(tmp_path / "meg").documents()] == sequences
    n = bytepair.encode_corpus(gpt2, inputs, tmp_path / "npy", format="npy", shard_tokens=777, eot_position="append")
    arrays = [np.load(tmp_path / "npy" / f["files"][0]["name"]) for f in n["shards"]]
    assert all(a.dtype == np.uint16 for a in arrays)
    assert np.concatenate(arrays).tolist() == _expected(gpt2, docs, eot, prepend=False)


@pytest.mark.parametrize("itemsize", [2, 4])
def test_npy_header_is_numpys_and_one_length_for_every_count(itemsize: int) -> None:
    # The last shard's count is patched into the header in place: its length must not depend on
    # the count's digits. And it must be the header NumPy writes itself (byte-identical files).
    import io

    from bytepair.corpus.formats import npy_header

    descr = "<u2" if itemsize == 2 else "<u4"
    for tokens in [0, 7, 10**6, 2**31 - 1, 10**15, 2**63 - 1]:
        buf = io.BytesIO()
        np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": (tokens,)})
        assert npy_header(itemsize, tokens) == buf.getvalue()
        assert len(npy_header(itemsize, tokens)) == 128
    body = np.arange(5, dtype=descr)
    assert np.load(io.BytesIO(npy_header(itemsize, 5) + body.tobytes())).tolist() == body.tolist()


def test_uint32_for_large_vocabularies_and_dtype_refused_before_writing(tmp_path: Path, corpus: Any) -> None:
    inputs, docs = corpus
    o200k = bytepair.get_encoding("o200k_base")
    m = bytepair.encode_corpus(o200k, inputs[:1], tmp_path / "wide", shard_tokens=10**6)
    header, tokens = _read_llmc(tmp_path / "wide" / "shard_000000.bin")
    assert (header[0], header[1]) == (20240801, 7) and tokens.dtype == np.uint32
    assert tokens.tolist() == [o200k.special_tokens["<|endoftext|>"]] + o200k.encode_ordinary(docs[0])
    assert m["options"]["dtype"] == "uint32"
    with pytest.raises(BytepairError, match="does not fit in uint16"):
        bytepair.encode_corpus(o200k, inputs, tmp_path / "narrow", dtype="uint16")
    assert not (tmp_path / "narrow").exists()


def test_other_options_refused_unless_overwrite(tmp_path: Path, gpt2: Tokenizer, corpus: Any) -> None:
    inputs, _ = corpus
    out = tmp_path / "o"
    bytepair.encode_corpus(gpt2, inputs, out, shard_tokens=5000)
    with pytest.raises(CorpusError, match="other options.*overwrite"):
        bytepair.encode_corpus(gpt2, inputs, out, shard_tokens=4000)
    with pytest.raises(CorpusError, match="another tokenizer"):
        bytepair.encode_corpus(bytepair.get_encoding("r50k_base"), inputs, out, shard_tokens=5000)
    again = bytepair.encode_corpus(gpt2, inputs, out, shard_tokens=4000, overwrite=True)
    assert all(s["tokens"] == 4000 for s in again["shards"][:-1])
    assert sorted(os.listdir(out)) == ["manifest.json"] + [f"shard_{k:06d}.bin" for k in range(len(again["shards"]))]


def test_hand_edits_are_detected(tmp_path: Path, gpt2: Tokenizer, corpus: Any) -> None:
    inputs, _ = corpus
    out = tmp_path / "o"
    bytepair.encode_corpus(gpt2, inputs, out, shard_tokens=3000)
    shard = out / "shard_000001.bin"
    raw = bytearray(shard.read_bytes())
    raw[2000] ^= 1
    shard.write_bytes(bytes(raw))
    with pytest.raises(CorpusError, match=r"shard_000001\.bin was modified"):
        bytepair.encode_corpus(gpt2, inputs, out, shard_tokens=3000)
    bytepair.encode_corpus(gpt2, inputs, out, shard_tokens=3000, overwrite=True)
    man = out / "manifest.json"
    man.write_text(man.read_text().replace('"tokens": 3000', '"tokens": 3001', 1))
    with pytest.raises(CorpusError, match="manifest.json was edited"):
        bytepair.encode_corpus(gpt2, inputs, out, shard_tokens=3000)
    with pytest.raises(CorpusError, match="edited"):
        bytepair.open_shards(out)


def test_bad_utf8_named_or_replaced(tmp_path: Path, gpt2: Tokenizer) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"text": "fine"}\n' * 5000 + b'{"text": "caf\xe9"}\n')
    with pytest.raises(CorpusError, match=r"bad\.jsonl: not valid UTF-8 at byte offset 85013"):
        bytepair.encode_corpus(gpt2, [str(bad)], tmp_path / "o")
    doc = bytepair.encode_corpus(gpt2, [str(bad)], tmp_path / "o2", errors="replace")
    assert doc["replaced"] == 1
    ids = bytepair.open_shards(tmp_path / "o2")[:]
    assert gpt2.decode(ids.tolist()).endswith("caf\ufffd")


def test_unwritable_outdir_is_a_clear_error(tmp_path: Path, gpt2: Tokenizer, corpus: Any, capsys: Any) -> None:
    inputs, _ = corpus
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(OSError, match="cannot create the output directory"):
        bytepair.encode_corpus(gpt2, inputs, blocker / "out")
    assert main(["encode-corpus", "-t", "gpt2", inputs[0], "-o", str(blocker / "out")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("bytepair: error:") and "cannot create" in err and "\n" not in err


def test_no_eot_token_is_a_clear_error(tmp_path: Path, corpus: Any) -> None:
    inputs, docs = corpus
    tok = bytepair.train_from_iterator(docs, vocab_size=300)
    with pytest.raises(BytepairError, match="no <\\|endoftext\\|> special token"):
        bytepair.encode_corpus(tok, inputs, tmp_path / "o")
    doc = bytepair.encode_corpus(tok, inputs, tmp_path / "o", eot=None)
    assert bytepair.open_shards(tmp_path / "o")[:].tolist() == [i for d in docs for i in tok.encode_ordinary(d)]
    assert doc["options"]["eot"] is None


KILL_SCRIPT = """
import sys, bytepair
from bytepair.corpus import encode as e
e.STREAM_BYTES, e.BLOCK_CHARS = 5000, 3000  # the text file is then read in pieces
bytepair.encode_corpus("gpt2", sys.argv[1:-1], sys.argv[-1], shard_tokens=997, batch_bytes=4000,
                       num_threads=2, progress=False)
"""


def _files(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


def test_killed_runs_resume_to_identical_bytes(tmp_path: Path, gpt2: Tokenizer, corpus: Any, monkeypatch: Any) -> None:
    from bytepair.corpus import encode as e

    monkeypatch.setattr(e, "STREAM_BYTES", 5000)  # as in KILL_SCRIPT
    monkeypatch.setattr(e, "BLOCK_CHARS", 3000)
    inputs, _ = corpus
    big = tmp_path / "big.txt"
    big.write_text(_sample()[:50_000], encoding="utf-8")
    inputs = [inputs[0], str(big), *inputs[1:]]
    whole = tmp_path / "whole"
    bytepair.encode_corpus(gpt2, inputs, whole, shard_tokens=997, batch_bytes=4000, num_threads=2, progress=False)
    n_shards = len(json.loads((whole / "manifest.json").read_text())["shards"])
    assert n_shards > 10
    out = tmp_path / "killed"
    cmd = [sys.executable, "-c", KILL_SCRIPT, *inputs, str(out)]
    kills = 0
    for target in (2, 6, 9):  # kill once the manifest lists this many shards (or a bit after)
        proc = subprocess.Popen(cmd)
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                done = len(json.loads((out / "manifest.json").read_text())["shards"])
            except (OSError, ValueError):
                done = 0
            if done >= target:
                proc.send_signal(signal.SIGKILL)
                kills += 1
                break
            time.sleep(0.001)
        proc.wait()
    assert kills >= 1
    proc = subprocess.run(cmd)
    assert proc.returncode == 0
    assert _files(out) == _files(whole)


def test_cli_encode_corpus_and_count(tmp_path: Path, gpt2: Tokenizer, corpus: Any, capsys: Any) -> None:
    inputs, docs = corpus
    out = tmp_path / "o"
    assert main(["encode-corpus", "-t", "gpt2", *inputs, "-o", str(out), "--shard-tokens", "2000", "-q"]) == 0
    text = capsys.readouterr().out
    total = sum(len(gpt2.encode_ordinary(d)) + 1 for d in docs)
    assert f"{total:,} tokens" in text and f"{len(docs)} documents" in text
    assert main(["encode-corpus", "-t", "gpt2", *inputs, "-o", str(out), "--format", "npy", "-q"]) == 1
    assert "overwrite" in capsys.readouterr().err
    assert main(["count", "-t", "gpt2", *inputs]) == 0
    lines = capsys.readouterr().out.splitlines()
    per_file = [sum(len(gpt2.encode_ordinary(d)) for d in docs[:1]), sum(len(gpt2.encode_ordinary(d)) for d in docs[1:80]), None]
    assert lines[1].split()[0] == f"{per_file[0]:,}" and lines[2].split()[0] == f"{per_file[1]:,}"
    want_total = sum(len(gpt2.encode_ordinary(d)) for d in docs)
    assert lines[-1].split()[0] == f"{want_total:,}" and lines[-1].endswith("total")


def test_parquet_rows_are_documents(tmp_path: Path, gpt2: Tokenizer) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = ["first row", None, "second, longer row " * 50, "", "third"]
    pq.write_table(pa.table({"id": list(range(5)), "content": rows}), tmp_path / "t.parquet", row_group_size=2)
    with pytest.raises(CorpusError, match="no column 'text'.*content"):
        bytepair.encode_corpus(gpt2, [str(tmp_path / "t.parquet")], tmp_path / "o")
    bytepair.encode_corpus(gpt2, [str(tmp_path / "t.parquet")], tmp_path / "o", text_field="content")
    eot = gpt2.special_tokens["<|endoftext|>"]
    want = [[eot] + gpt2.encode_ordinary(r) for r in rows if r]
    assert [d.tolist() for d in bytepair.open_shards(tmp_path / "o").documents()] == want
    (tmp_path / "bad.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(CorpusError, match="bad.parquet: not a readable Parquet file"):
        bytepair.encode_corpus(gpt2, [str(tmp_path / "bad.parquet")], tmp_path / "o3")


@pytest.mark.parametrize("fmt", ["llmc", "megatron", "npy"])
def test_large_text_files_are_read_in_pieces_with_the_same_ids(
    tmp_path: Path, gpt2: Tokenizer, corpus: Any, monkeypatch: Any, fmt: str
) -> None:
    from bytepair.corpus import encode as e

    inputs, docs = corpus
    big_text = _sample()[:80_000] + "tail without newline"
    with gzip.open(tmp_path / "big.txt.gz", "wt", encoding="utf-8") as f:
        f.write(big_text)
    (tmp_path / "big2.txt").write_text(big_text[:30_000], encoding="utf-8")
    inputs = [inputs[0], str(tmp_path / "big.txt.gz"), inputs[1], str(tmp_path / "big2.txt")]
    whole = bytepair.encode_corpus(gpt2, inputs, tmp_path / "whole", format=fmt, shard_tokens=3000, batch_bytes=9000)
    monkeypatch.setattr(e, "STREAM_BYTES", 1000)
    monkeypatch.setattr(e, "BLOCK_CHARS", 2048)
    pieces = bytepair.encode_corpus(gpt2, inputs, tmp_path / "pieces", format=fmt, shard_tokens=3000, batch_bytes=9000)
    shards = _files(tmp_path / "pieces")
    # Same shards; only the manifest's resume positions (counted in pieces) differ.
    assert shards.pop("manifest.json") != b"" and shards == {
        k: v for k, v in _files(tmp_path / "whole").items() if k != "manifest.json"
    }
    assert [s["files"] for s in pieces["shards"]] == [s["files"] for s in whole["shards"]]
    assert pieces["documents"] == whole["documents"] == len(docs[:1]) + 1 + len(docs[1:80]) + 1
    eot = gpt2.special_tokens["<|endoftext|>"]
    shown = [d.tolist() for d in bytepair.open_shards(tmp_path / "pieces").documents()]
    body = gpt2.encode_ordinary(big_text)
    assert (body + [eot] if fmt == "megatron" else [eot] + body) in shown


def test_large_text_file_bad_utf8_offset(tmp_path: Path, gpt2: Tokenizer, monkeypatch: Any) -> None:
    from bytepair.corpus import encode as e

    monkeypatch.setattr(e, "STREAM_BYTES", 1000)
    monkeypatch.setattr(e, "BLOCK_CHARS", 2048)
    bad = tmp_path / "big.txt"
    bad.write_bytes(b"ok line\n" * 1000 + b"\xff" + b"more\n" * 10)
    with pytest.raises(CorpusError, match=r"big\.txt: not valid UTF-8 at byte offset 8000"):
        bytepair.encode_corpus(gpt2, [str(bad)], tmp_path / "o")


def test_a_full_disk_leaves_the_last_shard_and_resumes(tmp_path: Path, gpt2: Tokenizer, corpus: Any, monkeypatch: Any) -> None:
    import errno

    from bytepair.corpus import formats

    inputs, _ = corpus
    whole = tmp_path / "whole"
    bytepair.encode_corpus(gpt2, inputs, whole, shard_tokens=1500, batch_bytes=5000)
    real = formats.ShardWriter.write
    calls = {"n": 0}

    def full(self: Any, ids: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 7:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(self, ids)

    monkeypatch.setattr(formats.ShardWriter, "write", full)
    out = tmp_path / "out"
    with pytest.raises(OSError, match="No space left") as info:
        bytepair.encode_corpus(gpt2, inputs, out, shard_tokens=1500, batch_bytes=5000)
    assert info.value.filename is not None and "shard_" in info.value.filename
    assert not [n for n in os.listdir(out) if n.endswith(".tmp")]  # nothing half-written left
    monkeypatch.setattr(formats.ShardWriter, "write", real)
    bytepair.encode_corpus(gpt2, inputs, out, shard_tokens=1500, batch_bytes=5000)
    assert _files(out) == _files(whole)


def test_documents_in_memory_are_refused_with_a_hint(tmp_path: Path, gpt2: Tokenizer) -> None:
    with pytest.raises(BytepairError, match=r"write documents held in memory to a \.jsonl"):
        bytepair.encode_corpus(gpt2, bytepair.Source(texts=["a", "b"]), tmp_path / "o")


def test_progress_line_shows_rates_and_eta(tmp_path: Path, gpt2: Tokenizer, corpus: Any, capsys: Any) -> None:
    inputs, _ = corpus
    bytepair.encode_corpus(gpt2, inputs, tmp_path / "o", progress=True)
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]
    assert "100.0%" in last and "B/s " in last and "M tokens/s" in last and "ETA" in last
    bytepair.encode_corpus(gpt2, inputs, tmp_path / "q", progress=False)
    assert capsys.readouterr().err == ""


def test_count_large_files_in_ranges(tmp_path: Path, gpt2: Tokenizer, monkeypatch: Any, capsys: Any) -> None:
    from bytepair.corpus import encode as e

    monkeypatch.setattr(e, "STREAM_BYTES", 1000)
    monkeypatch.setattr(e, "BLOCK_CHARS", 2048)
    text = _sample()[:50_000]
    (tmp_path / "big.txt").write_text(text, encoding="utf-8")
    (tmp_path / "small.txt").write_text("tiny", encoding="utf-8")
    assert main(["count", "-t", "gpt2", str(tmp_path / "big.txt"), str(tmp_path / "small.txt")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[0] == f"{len(gpt2.encode_ordinary(text)):,}" and lines[1].endswith("big.txt")
    assert lines[2].split()[0] == f"{len(gpt2.encode_ordinary('tiny')):,}"
