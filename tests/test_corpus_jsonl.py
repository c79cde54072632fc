"""JSON lines read in Rust for corpus encoding (``_core.jsonl_texts``, ``bytepair.corpus.jsonl``),
checked against Python's ``json`` module (the owner of the semantics, via
``bytepair.sources.documents``): the same documents, the same errors naming the file and the
line, and shards byte-identical to those made through the Python reader and from plain text."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import CorpusError, _core
from bytepair.corpus import jsonl
from bytepair.sources import SourceFile, documents, file_kind
from bytepair.tokenizer import _repair_surrogates


def _python(line: str, field: str = "text") -> str | None:
    """What Python's json makes of one line: the field's text as the encoder sees it, or None."""
    try:
        doc = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get(field), str):
        return None
    return _repair_surrogates(doc[field])


def _rust(line: bytes, field: str = "text") -> str | None:
    texts, used, lines = _core.jsonl_texts(line, 0, field)
    if used == 0:
        return None
    assert (used, lines) == (len(line), 1)
    return texts[0]


# Text with everything an escape can hold: ASCII, controls, non-BMP, and lone surrogates.
TEXT = st.text(
    alphabet=st.one_of(
        st.characters(max_codepoint=0x7F),
        st.sampled_from("\x00\x1f\x7f\u2028é中😀\ufffd\ud800\udbff\udc00\udfff"),
        st.characters(),
    ),
    max_size=40,
)


@settings(max_examples=400, deadline=None)
@given(text=TEXT, ascii=st.booleans(), extra=st.dictionaries(st.text(max_size=5), st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.none() | st.lists(st.booleans(), max_size=3) | TEXT | st.dictionaries(TEXT, TEXT, max_size=2), max_size=3))
def test_well_formed_lines_are_read_in_rust_as_json_reads_them(text: str, ascii: bool, extra: dict[str, object]) -> None:
    obj = {**extra, "text": text}
    line = json.dumps(obj, ensure_ascii=ascii)
    if not ascii and any("\ud800" <= c <= "\udfff" for c in line):
        ascii = True  # a lone surrogate is not UTF-8: only its escape can be written
        line = json.dumps(obj, ensure_ascii=True)
    got = _rust((line + "\n").encode("utf-8"))
    assert got is not None, line  # the fast path takes every line json.dumps writes
    assert got == _python(line)


PIECES = st.sampled_from(
    ['{', '}', '[', ']', '"', '\\', ':', ',', ' ', '"text"', '"te\\u0078t"', '"x"', '\\u', 'd800', 'dc00', 'DBFF',
     '\\ud83d', '\\ude00', '\\n', '\\/', '\\q', '\\u12G4', '1', '-0.5e+3', '01', 'NaN', 'Infinity', 'true', 'nul',
     'null', '\t', '\x0c', '\x01', 'é', '😀', '"a"', '{"text": "', '"}']
)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(PIECES, max_size=14), field=st.sampled_from(["text", "x"]))
def test_any_line_rust_takes_is_one_json_reads_the_same(parts: list[str], field: str) -> None:
    """Near-JSON noise: when Rust takes a line, Python's json reads the same text from it;
    when Python's json cannot, Rust leaves the line to it (and so to its error)."""
    for line in ("".join(parts), '{"text": "' + "".join(parts) + '"}'):
        if not line.strip():
            continue  # blank lines are skipped (the file-level test below checks that)
        got = _rust(line.encode("utf-8") + b"\n", field)
        want = _python(line, field)
        if got is not None:
            assert got == want, line
        if want is None:
            assert got is None, line


def _file(path: Path) -> SourceFile:
    compression, is_jsonl = file_kind(str(path))
    return SourceFile(str(path), os.path.getsize(path), compression, is_jsonl)


def _both(path: Path, errors: str = "strict") -> tuple[object, object]:
    def run(read: object) -> object:
        try:
            return [_repair_surrogates(d) for d in read(_file(path), text_field="text", errors=errors)]  # type: ignore[operator]
        except CorpusError as e:
            return ("error", str(e))

    def python(f: SourceFile, **kw: str) -> object:  # the corpus skips empty documents
        return (d for d in documents(f, **kw) if d)

    return run(jsonl.documents), run(python)


LINES = st.one_of(
    TEXT.map(lambda t: json.dumps({"text": t})),
    TEXT.map(lambda t: json.dumps({"id": 1, "text": t}, ensure_ascii=False) if t.isprintable() and not any("\ud800" <= c <= "\udfff" for c in t) else ""),
    st.sampled_from(["", "   ", "\x0c", "\u3000", '{"text": NaN}', '{"text": "a\\qb"}', '{"text": "\\ud800\\udc00"}', '{"text": 5}',
                     '{"no": "text"}', "[1]", '{"text": "a"} x', '{"text": "\\u00"}', '{"text": "x", "text": "y"}']),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(LINES, max_size=12), crlf=st.booleans(), last_newline=st.booleans(), bad=st.booleans())
def test_documents_and_errors_match_the_python_reader(tmp_path: Path, lines: list[str], crlf: bool, last_newline: bool, bad: bool) -> None:
    """Whole files, through both readers: the same documents, or the same error (file and line,
    or file and byte offset for bytes that are not UTF-8), strict and with errors="replace"."""
    end = "\r\n" if crlf else "\n"
    data = end.join(lines).encode("utf-8") + (end.encode() if last_newline else b"")
    if bad and lines:
        at = len(data) // 2
        data = data[:at] + b"\xff" + data[at:]
    path = tmp_path / "t.jsonl"
    path.write_bytes(data)
    for errors in ("strict", "replace"):
        fast, slow = _both(path, errors)
        assert fast == slow


def test_blocks_cut_lines_and_compressed_streams_read_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonl, "BLOCK_BYTES", 7)  # every line crosses a block boundary
    docs = [f"doc {i} é😀\n" * (i % 5) for i in range(60)]
    body = "".join(json.dumps({"text": d}) + "\n" for d in docs)
    body += '{"text": "a \\x escape"}\n'
    for name, write in (("p.jsonl", lambda p: p.write_text(body, encoding="utf-8")),
                        ("g.jsonl.gz", lambda p: p.write_bytes(gzip.compress(body.encode())))):
        path = tmp_path / name
        write(path)
        fast, slow = _both(path)
        assert fast == slow
        assert fast == ("error", f"{path}: line 61 is not valid JSON: Invalid \\escape")


def test_encode_corpus_names_the_file_and_line_of_a_bad_escape(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"text": "fine"}\n\n{"text": "\\ud800 lone is fine"}\n{"text": "bad \\u12G4"}\n', encoding="utf-8")
    with pytest.raises(CorpusError, match=r"bad\.jsonl: line 4 is not valid JSON"):
        bytepair.encode_corpus("gpt2", [str(path)], tmp_path / "out", progress=False)


@pytest.mark.parametrize("fmt", ["llmc", "megatron"])
def test_shards_from_jsonl_match_plain_text_and_the_python_reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str) -> None:
    from importlib.resources import files

    text = (files("bytepair") / "data" / "tinyshakespeare.txt").read_text(encoding="utf-8")[:40_000]
    docs = [p for p in text.split("\n\n") if p][:120]
    docs[3] += ' "quoted" \\ back\tslash é 中 😀 \u2028'
    (tmp_path / "d.jsonl").write_text("".join(json.dumps({"text": d}) + "\n" for d in docs), encoding="utf-8")
    plain = tmp_path / "plain"
    plain.mkdir()
    for i, d in enumerate(docs):  # one document per file, read in the same (sorted) order
        (plain / f"{i:04d}.txt").write_text(d, encoding="utf-8")

    def shards(inputs: list[str], out: str) -> dict[str, bytes]:
        bytepair.encode_corpus("gpt2", inputs, tmp_path / out, format=fmt, shard_tokens=1000, progress=False, batch_bytes=5000)
        return {p.name: p.read_bytes() for p in sorted((tmp_path / out).iterdir()) if p.name.startswith("shard_")}

    rust = shards([str(tmp_path / "d.jsonl")], "rust")
    assert len(rust) > 2
    assert shards([str(plain)], "plain") == rust
    monkeypatch.setattr(jsonl, "documents", documents)  # the Python reader
    assert shards([str(tmp_path / "d.jsonl")], "python") == rust
