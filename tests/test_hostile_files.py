"""Hostile files: special files (FIFOs, devices, procfs), small files that cost without bound
(doubling merges, gzip bombs, many added tokens), and values that once escaped the documented
error family (ids out of range, numbers of 5,000 digits, deep nesting, odd training records).
Each test failed before its fix.

Every call that could block on a FIFO, or read a device without end, runs in a child process
with a timeout (and an address-space cap), so a regression fails here instead of hanging the
suite or eating the machine's memory.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import bytepair
from bytepair import Tokenizer, WordPieceTokenizer, _files
from bytepair.cli import main
from bytepair.errors import BytepairError, CorpusError, FormatError, VocabError
from bytepair.formats import hf, load_tiktoken
from bytepair.formats.minbpe import load_minbpe
from bytepair.formats.tiktoken import GUNZIP_RATIO, dump_tiktoken, gunzip

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
needs_proc = pytest.mark.skipif(not os.path.exists("/proc/version"), reason="needs procfs")
needs_dev_zero = pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
ROOT = Path(__file__).resolve().parents[1]


def child(code: str, *, timeout: float = 60, mem_bytes: int = 2 << 30) -> subprocess.CompletedProcess[str]:
    """Runs ``code`` in a child Python with its address space capped (a read without end fails
    fast with MemoryError) and a timeout (a read that blocks fails the test, not the suite)."""
    prelude = f"import resource\nresource.setrlimit(resource.RLIMIT_AS, ({mem_bytes}, {mem_bytes}))\n"
    try:
        return subprocess.run(
            [sys.executable, "-c", prelude + textwrap.dedent(code)],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=ROOT,
            env=os.environ | {"RAYON_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "1"},
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"blocked for more than {timeout} s:\n{code}")


def refused(call: str, *, timeout: float = 60) -> str:
    """What ``call`` raised in a child: ``"<class name>: <message>"`` (the test fails if it
    returned, blocked or crashed)."""
    r = child(
        f"""
        import bytepair, bytepair.formats.hf, bytepair.formats.gpt2, bytepair.formats.bert, bytepair.formats.minbpe
        from bytepair.formats import load_tiktoken
        try:
            {call}
        except Exception as e:
            print(f"{{type(e).__name__}}: {{e}}")
        else:
            print("returned")
        """,
        timeout=timeout,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout.strip()


def small() -> Tokenizer:
    return Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"ab"}, [(b"a", b"b")])


def one_line_error(code: int, err: str, *needles: str) -> None:
    assert code == 1, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bytepair: error: "), err
    for needle in needles:
        assert needle in lines[0], err


# ------------------------------------------------------------------ special files: one rule


LOADERS = {
    "load": "bytepair.load({p!r})",
    "Tokenizer.from_file": "bytepair.Tokenizer.from_file({p!r})",
    "WordPieceTokenizer.from_file": "bytepair.WordPieceTokenizer.from_file({p!r})",
    "load_hf": "bytepair.formats.hf.load_hf({p!r})",
    "load_tiktoken": "load_tiktoken({p!r}, pattern='gpt2')",
    "load_minbpe": "bytepair.formats.minbpe.load_minbpe({p!r})",
    "load_bert_vocab": "bytepair.formats.bert.load_bert_vocab({p!r})",
}


@needs_fifo
@pytest.mark.parametrize("loader", LOADERS)
def test_a_fifo_is_refused_by_every_loader_not_read(tmp_path: Path, loader: str) -> None:
    fifo = tmp_path / "tok.json"
    os.mkfifo(fifo)
    out = refused(LOADERS[loader].format(p=str(fifo)))
    assert out == f"FormatError: {fifo} is not a regular file", out


@needs_fifo
@pytest.mark.parametrize("name", ["tokenizer.json", "tokenizer_config.json", "vocab.json", "vocab.txt"])
def test_load_of_a_directory_with_a_fifo_inside_is_refused(tmp_path: Path, name: str) -> None:
    if name == "tokenizer_config.json":  # beside a good tokenizer.json
        hf.save_pretrained(small(), tmp_path)
        (tmp_path / name).unlink()
    elif name == "vocab.json":
        (tmp_path / "merges.txt").write_text("#version: 0.2\n")
    os.mkfifo(tmp_path / name)
    out = refused(f"bytepair.load({str(tmp_path)!r})")
    assert out == f"FormatError: {tmp_path / name} is not a regular file", out


@needs_dev_zero
@pytest.mark.parametrize("name", ["tokenizer.json", "vocab.txt", "merges.txt", "vocab.json", "r.tiktoken"])
def test_a_link_to_dev_zero_is_refused_not_read_until_memory_runs_out(tmp_path: Path, name: str) -> None:
    if name == "merges.txt":  # beside a good vocab.json
        from bytepair.formats.gpt2 import dump_gpt2

        dump_gpt2(small(), tmp_path / "vocab.json", tmp_path / "real_merges.txt")
    (tmp_path / name).symlink_to("/dev/zero")
    call = {
        "tokenizer.json": f"bytepair.load({str(tmp_path)!r})",
        "vocab.txt": f"bytepair.load({str(tmp_path)!r})",
        "merges.txt": f"bytepair.load({str(tmp_path)!r})",
        "vocab.json": f"bytepair.formats.gpt2.load_gpt2({str(tmp_path / name)!r}, 'merges.txt')",
        "r.tiktoken": f"load_tiktoken({str(tmp_path / name)!r}, pattern='gpt2')",
    }[name]
    out = refused(call)
    assert out == f"FormatError: {tmp_path / name} is not a regular file", out


@needs_fifo
def test_show_of_a_fifo_is_a_one_line_error(tmp_path: Path) -> None:
    fifo = tmp_path / "tok.json"
    os.mkfifo(fifo)
    r = child(
        f"""
        import sys
        from bytepair.cli import main
        sys.exit(main(["show", {str(fifo)!r}]))
        """
    )
    one_line_error(r.returncode, r.stderr, "is not a regular file")


@needs_fifo
@needs_dev_zero
@pytest.mark.parametrize("kind", ["fifo", "dev_zero"])
def test_encode_files_refuses_special_files_as_train_does(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "in.txt"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    # encode_files returned 0 ids for both; train refuses them.
    for call in (
        f"bytepair.get_encoding('gpt2').encode_files([{str(path)!r}])",
        f"bytepair.train({str(path)!r}, vocab_size=300)",
        f"bytepair.Tokenizer({{i: bytes([i]) for i in range(256)}}, [], normalization='nfc').encode_files([{str(path)!r}])",
    ):
        out = refused(call)
        assert out == f"CorpusError: {path} is not a regular file", (call, out)


@needs_proc
def test_encode_files_reads_a_procfs_file_as_train_does() -> None:
    """procfs files say their size is 0 and have text: the extension, reading a file up to its
    size, gave 0 ids."""
    tok = bytepair.get_encoding("gpt2")
    text = Path("/proc/version").read_text()
    assert text and os.stat("/proc/version").st_size == 0
    want = tok.encode_ordinary(text)
    ids, offsets = tok.encode_files(["/proc/version"])
    assert ids.tolist() == want and offsets.tolist() == [0, len(want)]


@needs_proc
def test_encode_files_keeps_the_order_of_procfs_and_ordinary_files(tmp_path: Path) -> None:
    tok = bytepair.get_encoding("cl100k_base")
    a, empty = tmp_path / "a.txt", tmp_path / "empty.txt"
    a.write_text("hello world, once more")
    empty.write_text("")
    paths = [str(a), "/proc/version", str(empty), "/proc/version", str(a)]
    texts = [Path(p).read_text() for p in paths]
    ids, offsets = tok.encode_files(paths)
    assert ids.dtype == np.uint32
    got = [ids[offsets[k] : offsets[k + 1]].tolist() for k in range(len(paths))]
    assert got == [tok.encode_ordinary(t) for t in texts]


@needs_proc
def test_count_counts_a_procfs_file(capsys: pytest.CaptureFixture[str]) -> None:
    text = Path("/proc/version").read_text()
    n = len(bytepair.get_encoding("gpt2").encode_ordinary(text))
    assert main(["count", "-t", "gpt2", "/proc/version"]) == 0
    row = capsys.readouterr().out.splitlines()[1].split()
    assert row == [f"{n:,}", f"{len(text.encode()):,}", f"{len(text.encode()) / n:.3f}", "/proc/version"]


@needs_proc
def test_a_procfs_tokenizer_file_is_read_bounded(tmp_path: Path) -> None:
    """The helper's rule for a regular file of size 0: read to its end, up to a limit."""
    assert _files.read_bytes("/proc/version") == Path("/proc/version").read_bytes()
    with pytest.raises(FormatError, match="reports a size of 0"):
        _files.read_bytes("/proc/version", limit=10)
    with pytest.raises(IsADirectoryError):
        _files.read_bytes(tmp_path)
    with pytest.raises(FileNotFoundError):
        _files.read_bytes(tmp_path / "nope")


# ------------------------------------------------------------------ small files, bounded cost


def doubling_model(path: Path, lines: int) -> None:
    """A minbpe model whose every merge doubles the last token: line k makes 2**k bytes."""
    merges = ["97 97"] + [f"{256 + k} {256 + k}" for k in range(lines - 1)]
    path.write_text("\n".join(["minbpe v1", "", "0", *merges]) + "\n")


def test_minbpe_doubling_merges_are_a_format_error_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "dbl.model"
    doubling_model(path, 45)  # 2**45 bytes asked of a file of about 400
    assert path.stat().st_size < 400
    r = child(
        f"""
        from bytepair.formats.minbpe import load_minbpe
        from bytepair.minbpe import RegexTokenizer
        for load in (load_minbpe, RegexTokenizer().load):
            try:
                load({str(path)!r})
            except Exception as e:
                print(f"{{type(e).__name__}}: {{e}}")
        """,
        mem_bytes=1 << 30,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    assert len(lines) == 2 and all(line.startswith(f"FormatError: {path}, line 23: ") for line in lines), r.stdout


def test_minbpe_with_long_tokens_of_a_legit_size_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "spaces.model"
    doubling_model(path, 12)  # a token of 4,096 'a's: long, but not what a few lines can inflate
    tok = load_minbpe(path)
    assert tok.encode_ordinary("a" * 4096) == [256 + 11]


def test_cli_show_of_the_doubling_model_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "dbl.model"
    doubling_model(path, 45)
    r = child(
        f"""
        import sys
        from bytepair.cli import main
        sys.exit(main(["show", {str(path)!r}]))
        """,
        mem_bytes=1 << 30,
    )
    one_line_error(r.returncode, r.stderr, "line 23", "doubling")


@pytest.mark.parametrize("field", ["a special id", "a merge id"])
def test_minbpe_ids_that_int_refuses_are_format_errors(tmp_path: Path, field: str) -> None:
    path = tmp_path / "odd.model"
    body = ["1", "<s> 2²"] if field == "a special id" else ["0", "97 9²"]
    path.write_text("\n".join(["minbpe v1", "", *body]) + "\n")
    with pytest.raises(FormatError, match="line 4"):
        load_minbpe(path)


def gzip_bomb(path: Path, gib: int) -> None:
    """``gib`` GiB of zeros as gzip members of 64 MiB each: a file of about a MB."""
    member = gzip.compress(bytes(64 << 20), compresslevel=9, mtime=0)
    path.write_bytes(member * (gib * 16))


def test_a_gzip_bomb_rank_file_is_refused_before_it_is_decompressed(tmp_path: Path) -> None:
    path = tmp_path / "bomb.tiktoken.gz"
    gzip_bomb(path, 2)
    r = child(
        f"""
        import bytepair
        from bytepair.formats import load_tiktoken
        for call in (lambda: load_tiktoken({str(path)!r}, pattern="gpt2"), lambda: bytepair.load({str(path)!r})):
            try:
                call()
            except Exception as e:
                print(f"{{type(e).__name__}}: {{e}}")
        """,
        mem_bytes=1 << 30,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    assert len(lines) == 2 and all(line.startswith(f"FormatError: {path}: decompresses to more than") for line in lines), r.stdout


def test_gunzip_reads_what_gzip_reads_and_names_what_it_does_not(tmp_path: Path) -> None:
    data = b"".join(b"%d\n" % i for i in range(20_000))
    one = gzip.compress(data, mtime=0)
    for blob in (one, one + one, one + b"\0" * 7 + one, data):
        assert gunzip(blob, "f") == (gzip.decompress(blob) if blob[:2] == b"\x1f\x8b" else blob)
    with pytest.raises(FormatError, match="truncated"):
        gunzip(one[: len(one) // 2], "f")
    with pytest.raises(FormatError, match="not a valid gzip file"):
        gunzip(one + b"junk", "f")
    with pytest.raises(FormatError, match="not a valid gzip file"):
        gunzip(one[:20] + b"\xff" * 40 + one[60:], "f")
    # The bound: GUNZIP_RATIO times the compressed size plus 1 MiB.
    zeros = gzip.compress(bytes(2 << 20), mtime=0)
    assert GUNZIP_RATIO * len(zeros) + (1 << 20) < 2 << 20
    with pytest.raises(FormatError, match="decompresses to more than"):
        gunzip(zeros, "f")


def test_shipped_rank_files_are_far_inside_the_gzip_bound() -> None:
    data = Path(bytepair.__file__).parent / "data"
    for name in ("r50k_base", "cl100k_base", "o200k_base"):
        packed = (data / f"{name}.tiktoken.gz").read_bytes()
        assert len(gzip.decompress(packed)) < GUNZIP_RATIO * len(packed) / 8, name


def added_tokens_file(path: Path, n: int) -> None:
    doc = hf.to_hf_dict(small())
    doc["added_tokens"] = [
        {"id": 257 + k, "content": f"<|t{k}|>", "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": True}
        for k in range(n)
    ]
    path.write_text(json.dumps(doc))


def test_many_added_tokens_load(tmp_path: Path) -> None:
    """60,000 added tokens, each checked against the ids before it. How the time grows with
    their number is measured by `bench/bench_interop.py --added-tokens` (no test asserts a
    time): checking through all the earlier ids made 20,000 take 4.2 s and 60,000 about 38 s;
    a map from id to text makes 60,000 take well under a second."""
    path = tmp_path / "tokenizer.json"
    added_tokens_file(path, 60_000)
    for load in (bytepair.load, lambda p: hf.from_hf_dict(json.loads(p.read_text()), where=str(p))):
        tok = load(path)
        assert isinstance(tok, Tokenizer) and tok.encode("a<|t59999|>b", allowed_special="all") == [97, 257 + 59_999, 98]


def test_an_id_given_to_two_added_tokens_is_still_named(tmp_path: Path) -> None:
    doc = hf.to_hf_dict(small())
    doc["added_tokens"] = [{"id": 300, "content": "<a>"}, {"id": 301, "content": "<b>"}, {"id": 300, "content": "<c>"}]
    with pytest.raises(FormatError, match=r"added_tokens\[2\]: the id 300 is given to both '<a>' and '<c>'"):
        hf.from_hf_dict(doc)


# ------------------------------------------------------------------ the documented error family


@pytest.mark.parametrize("bad", [2**32, -1, 2**70, True])
def test_load_tiktoken_refuses_out_of_range_special_ids(tmp_path: Path, bad: int) -> None:
    path = tmp_path / "r.tiktoken"
    dump_tiktoken(small(), path)
    with pytest.raises(VocabError, match=r"ids are ints in \[0, 2\*\*32\)"):
        load_tiktoken(path, pattern="gpt2", special_tokens={"<s>": bad})


LONG_NUMBER = "1" * 5000  # past Python's int digits limit (4,300)


def _files_with_a_long_number(tmp_path: Path) -> dict[str, tuple[Path, Any]]:
    out: dict[str, tuple[Path, Any]] = {}
    p = tmp_path / "own.json"
    small().save(p)
    p.write_text(p.read_text().replace('"version":1', f'"version":{LONG_NUMBER}', 1))
    out["Tokenizer.from_file"] = (p, Tokenizer.from_file)
    out["load"] = (p, bytepair.load)
    wp = WordPieceTokenizer(["[UNK]", "a", "##b"])
    q = tmp_path / "wp.json"
    wp.save(q)
    q.write_text(q.read_text().replace('"version":1', f'"version":{LONG_NUMBER}', 1))
    out["WordPieceTokenizer.from_file"] = (q, WordPieceTokenizer.from_file)
    h = tmp_path / "tokenizer.json"
    hf.save_hf(small(), h)
    h.write_text(h.read_text().replace('"version":"1.0"', f'"version":{LONG_NUMBER}', 1))
    out["load_hf"] = (h, hf.load_hf)
    return out


@pytest.mark.parametrize("reader", ["Tokenizer.from_file", "load", "WordPieceTokenizer.from_file", "load_hf"])
def test_a_number_of_5000_digits_is_a_format_error(tmp_path: Path, reader: str) -> None:
    path, read = _files_with_a_long_number(tmp_path)[reader]
    assert LONG_NUMBER in path.read_text()
    with pytest.raises(FormatError, match="too many digits"):
        read(path)


def test_added_token_ids_that_int_refuses_are_skipped_in_a_model_directory(tmp_path: Path) -> None:
    from bytepair.formats.gpt2 import dump_gpt2

    dump_gpt2(small(), tmp_path / "vocab.json", tmp_path / "merges.txt")
    decoder = {"2²": {"content": "<x>"}, LONG_NUMBER: {"content": "<y>"}, "300": {"content": "<z>"}}
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"added_tokens_decoder": decoder}))
    tok = bytepair.load(tmp_path)
    assert isinstance(tok, Tokenizer) and tok.special_tokens == {"<z>": 300}


def test_wordpiece_file_options_too_large_for_the_extension_are_format_errors(tmp_path: Path) -> None:
    path = tmp_path / "wp.json"
    WordPieceTokenizer(["[UNK]", "a", "##b"]).save(path)
    doc = json.loads(path.read_text())
    doc["wordpiece"]["max_input_chars_per_word"] = 10**30
    path.write_text(json.dumps(doc))
    with pytest.raises(FormatError, match=str(path)):
        WordPieceTokenizer.from_file(path)
    with pytest.raises(FormatError, match=str(path)):
        bytepair.load(path)


def encoded_corpus(tmp_path: Path) -> tuple[Path, Path]:
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world\n" * 100)
    out = tmp_path / "out"
    bytepair.encode_corpus(bytepair.get_encoding("gpt2"), corpus, out, progress=False)
    return corpus, out


@pytest.mark.parametrize("content", ["deep", "deep_inside", "long_number"])
def test_a_hostile_manifest_is_a_corpus_error(tmp_path: Path, content: str) -> None:
    corpus, out = encoded_corpus(tmp_path)
    manifest = out / "manifest.json"
    if content == "deep":
        manifest.write_text('{"a":' * 100_000 + "1" + "}" * 100_000)
    elif content == "deep_inside":
        manifest.write_text('{"format":"bytepair-shards","version":1,"x":' + "[" * 100_000 + "]" * 100_000 + "}")
    else:
        manifest.write_text('{"format":"bytepair-shards","version":' + LONG_NUMBER + "}")
    with pytest.raises(CorpusError, match="not a valid manifest"):
        bytepair.encode_corpus(bytepair.get_encoding("gpt2"), corpus, out, progress=False)


def test_cli_encode_corpus_with_a_deep_manifest_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus, out = encoded_corpus(tmp_path)
    (out / "manifest.json").write_text('{"a":' * 100_000 + "1" + "}" * 100_000)
    code = main(["encode-corpus", "-t", "gpt2", str(corpus), "-o", str(out)])
    one_line_error(code, capsys.readouterr().err, "nested too deeply", "--overwrite")


@needs_fifo
def test_a_fifo_manifest_is_refused(tmp_path: Path) -> None:
    corpus, out = encoded_corpus(tmp_path)
    (out / "manifest.json").unlink()
    os.mkfifo(out / "manifest.json")
    out_text = refused(f"bytepair.encode_corpus(bytepair.get_encoding('gpt2'), {str(corpus)!r}, {str(out)!r}, progress=False)")
    assert out_text == f"CorpusError: {out / 'manifest.json'} is not a regular file", out_text


TRAINING_RECORDS = {
    "sources of ints": {"sources": [1, 2]},
    "sources of odd values": {"sources": [{"name": 1, "documents": None, "bytes": "x", "weight": []}, {"files": {}}]},
    "huge numbers": {"input": {"bytes": 10**400, "documents": 10**400}, "seconds": {"a": 10**400},
                     "base": {"vocab_size": 10**400, "merges": "x"}},
    "infinite seconds": {"seconds": {"a": 1e308, "b": 1e308}},
    "sources with huge bytes": {"sources": [{"name": "a", "bytes": 10**400}, {"name": "b", "bytes_per_token": 10**400}]},
}


@pytest.mark.parametrize("record", TRAINING_RECORDS)
def test_show_takes_any_training_record(tmp_path: Path, record: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "tok.json"
    small().save(path)
    doc = json.loads(path.read_text())
    doc["training"] = TRAINING_RECORDS[record]
    path.write_text(json.dumps(doc))
    assert main(["show", str(path)]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out.startswith(str(path))


def test_wordpiece_show_takes_any_training_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "wp.json"
    WordPieceTokenizer(["[UNK]", "a", "##b", "\x1b[31mred"]).save(path)
    doc = json.loads(path.read_text())
    doc["training"] = {"tokens": 1, "unk_tokens": 1, "text_bytes": 10**400, "words": 10**400, "input": {"bytes": 3}}
    path.write_text(json.dumps(doc))
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\\x1b[31mred" in out


def test_every_error_here_is_a_bytepair_error() -> None:
    """The classes the tests above expect are the documented family (errors.py)."""
    for cls in (FormatError, VocabError, CorpusError):
        assert issubclass(cls, BytepairError) and issubclass(cls, ValueError)
