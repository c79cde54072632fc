"""The documents of a JSON-lines file for corpus encoding, read in Rust (``rust/src/io/jsonl.rs``).

:func:`bytepair.sources.documents` reads a ``.jsonl`` file line by line with Python's ``json``:
on one reading thread that capped ``encode-corpus`` near 110 MB/s, and on a 2-core machine it
took a core from the encoder. Here the file (or its decompressed stream) is read in blocks of
``BLOCK_BYTES`` cut after their last newline, and ``_core.jsonl_block`` takes the text field of
each line in Rust, into one ``TextBlock`` per run of lines (the texts one after another in one
buffer, which the encoder takes as they are: ``BatchEncoder.encode_blocks``; no ``str`` is made
of a document). The first line it is not
sure of (bytes that are not UTF-8, anything but a strict-JSON object with the field as a
string, ``NaN``, very deep nesting) comes back here and is read by the very code
``documents`` uses, so errors (file and line, or file and byte offset), ``errors="replace"``
and what Python's ``json`` accepts stay exactly as they were; Rust then goes on from the next
line. The documents are the same strings, except that a lone surrogate from a ``\\uD800``
escape is U+FFFD already (the encoder replaced it so anyway).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bytepair import _core
    from bytepair.sources import SourceFile

BLOCK_BYTES = 8 << 20


def documents(f: SourceFile, *, text_field: str = "text", errors: str = "strict") -> Iterator[str]:
    """The text field of each JSON line of ``f``, as :func:`bytepair.sources.documents` reads them
    (empty ones left out)."""
    for item in blocks(f, text_field=text_field, errors=errors):
        if isinstance(item, str):
            yield item
        else:
            for i in range(len(item)):
                yield item.text(i)


def blocks(f: SourceFile, *, text_field: str = "text", errors: str = "strict") -> Iterator[_core.TextBlock | str]:
    """The non-empty documents of ``f`` in order: runs of them read in Rust, as ``TextBlock``s
    (no ``str`` made of each), and one ``str`` for each line read by Python's ``json``."""
    from bytepair import _core
    from bytepair.sources import DECOMPRESS_ERRORS, decompress_error, json_text, open_stream, utf8_error

    try:
        text_field.encode("utf-8")
    except UnicodeEncodeError:  # a field name Rust cannot hold: Python reads the file
        from bytepair.sources import documents as python_documents

        yield from (d for d in python_documents(f, text_field=text_field, errors=errors) if d)
        return
    handler = "bytepair.replace" if errors == "replace" else "strict"
    lineno = 0  # lines read so far
    offset = 0  # bytes of the (decompressed) stream before ``data``
    tail = b""
    with open(f.path, "rb") as raw:
        stream = open_stream(f, raw)
        while True:
            try:
                block = stream.read(BLOCK_BYTES)
            except DECOMPRESS_ERRORS as e:
                raise decompress_error(f, e) from None
            if block:
                data = tail + block
                cut = data.rfind(b"\n") + 1
                data, tail = data[:cut], data[cut:]
            else:
                data, tail = tail, b""
            pos = 0
            while pos < len(data):
                docs, used, lines = _core.jsonl_block(data, pos, text_field)
                if len(docs):
                    yield docs
                pos += used
                lineno += lines
                if pos < len(data):  # a line for Python's json, as documents() reads it
                    end = data.find(b"\n", pos)
                    end = len(data) if end < 0 else end + 1
                    lineno += 1
                    try:
                        text = data[pos:end].decode("utf-8", handler)
                    except UnicodeDecodeError as e:
                        raise utf8_error(f, offset + pos + e.start) from None
                    if text.strip():
                        doc = json_text(text, f.path, lineno, text_field)
                        if doc:
                            yield doc
                    pos = end
            offset += len(data)
            if not block:
                break
