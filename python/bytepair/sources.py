"""Reading inputs: the files, globs, directories and iterables that training, corpus encoding
and analysis take, the same way for all three.

A source is files (paths, globs, directories; ``.txt`` or any other text, ``.jsonl`` /
``.ndjson`` with a text field, each optionally ``.gz`` or ``.zst`` compressed) or an iterable of
``str`` documents. ``resolve`` expands a source to its files and checks each one before any
work starts (exists, readable, decompresses, starts with UTF-8); ``documents`` yields the
documents of a file. Plain text files are one document each; each JSON line is one document.
"""

from __future__ import annotations

import codecs
import glob
import gzip
import io
import json
import os
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any

from bytepair._files import check_regular, open_regular
from bytepair.errors import CorpusError, MissingExtraError

__all__ = [
    "DECOMPRESS_ERRORS",
    "Replaced",
    "Source",
    "SourceFile",
    "check_file",
    "decompress_error",
    "documents",
    "expand",
    "open_stream",
    "resolve",
    "utf8_error",
]

PathLike = str | os.PathLike[str]

HEAD_BYTES = 1 << 16  # checked for UTF-8 before the work starts
GLOB_CHARS = frozenset("*?[")


class Source:
    """One training source: files, or an iterable of ``str`` documents.

    ``Source("data/zh/*.txt", name="zh")``: ``paths`` is a path, a glob (``**`` recurses), a
    directory (every file under it that is not hidden, recursively), or a list of those. Files
    are plain text (each file is one document), ``.jsonl`` / ``.ndjson`` (each line a JSON
    object whose ``text_field`` is one document), either optionally compressed as ``.gz`` or
    ``.zst`` (needs the ``zstandard`` package: ``pip install zstandard``).

    ``Source(texts=dataset["text"], name="wiki")``: any iterable of ``str`` documents (a list,
    a generator, a Hugging Face ``datasets`` column); it is iterated once.
    """

    def __init__(
        self,
        paths: PathLike | Iterable[PathLike] | None = None,
        *,
        texts: Iterable[str] | None = None,
        name: str | None = None,
        text_field: str = "text",
    ) -> None:
        if (paths is None) == (texts is None):
            raise TypeError("Source() takes paths or texts=..., exactly one of them")
        if texts is not None and isinstance(texts, (str, bytes)):
            raise TypeError("Source(texts=...) takes an iterable of str documents, not a single str")
        if not isinstance(text_field, str) or not text_field:
            raise TypeError(f"text_field must be a non-empty str, got {text_field!r}")
        if paths is not None:
            items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
            for p in items:
                if not isinstance(p, (str, os.PathLike)):
                    raise TypeError(f"paths must be str or os.PathLike, got {type(p).__name__}")
            self.paths: list[str] | None = [os.fspath(p) for p in items]
            default = self.paths[0] if len(self.paths) == 1 else f"{len(self.paths)} paths"
        else:
            self.paths = None
            default = "texts"
        self.texts = texts
        self.name = name if name is not None else default
        self.text_field = text_field

    def __repr__(self) -> str:
        what = f"texts={type(self.texts).__name__}" if self.paths is None else repr(self.paths)
        return f"Source({what}, name={self.name!r})"


@dataclass
class SourceFile:
    path: str
    size: int
    compression: str | None  # None, "gz", "zst"
    jsonl: bool
    parquet: bool = False  # rows of a Parquet file, read with pyarrow


def file_kind(path: str) -> tuple[str | None, bool]:
    name = os.path.basename(path).lower()
    compression = None
    for ext in ("gz", "zst"):
        if name.endswith("." + ext):
            compression, name = ext, name[: -len(ext) - 1]
    return compression, name.endswith((".jsonl", ".ndjson"))


def not_found(spec: str, what: str) -> FileNotFoundError:
    """The error for a path or glob that names no file. A str with a line break, or longer
    than any path, is most likely text passed where a path goes: say so, briefly."""
    if "\n" in spec or len(spec) > 4096:
        shown = repr(spec[:40]) + ("..." if len(spec) > 40 else "")
        return FileNotFoundError(
            f"{shown} ({len(spec):,} characters) is not a file: train() reads a str as a path; "
            "to train on text in memory use train_from_iterator([text], ...)"
        )
    return FileNotFoundError(f"{spec}: {what}")


def expand(spec: str) -> list[str]:
    """The files a path, glob or directory names (sorted), or an error naming it."""
    if os.path.isdir(spec):
        found = []
        for root, dirs, files in os.walk(spec):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            found += [os.path.join(root, f) for f in sorted(files) if not f.startswith(".")]
        if not found:
            raise CorpusError(f"{spec} is a directory with no files in it")
        return found
    if os.path.exists(spec) or not GLOB_CHARS & set(spec):
        if not os.path.exists(spec):
            raise not_found(spec, "no such file")
        return [spec]
    out: list[str] = []
    for hit in sorted(glob.glob(spec, recursive=True)):
        out += expand(hit) if os.path.isdir(hit) else [hit]
    if not out:
        raise not_found(spec, "no file matches this pattern")
    return out


def open_stream(f: SourceFile, raw: IO[bytes]) -> IO[bytes]:
    """The decompressed byte stream of an open file."""
    if f.compression == "gz":
        return io.BufferedReader(gzip.GzipFile(fileobj=raw, mode="rb"), buffer_size=1 << 20)
    if f.compression == "zst":
        zstandard = zstandard_module(f.path)
        reader: IO[bytes] = io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(raw), buffer_size=1 << 20)
        return reader
    return raw


def zstandard_module(path: str) -> Any:
    try:
        import zstandard  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise MissingExtraError(f"{path} is zstd-compressed; reading it needs the zstandard package", "zstd") from None
    return zstandard


DECOMPRESS_ERRORS: tuple[type[BaseException], ...] = (gzip.BadGzipFile, EOFError, zlib.error)


def decompress_error(f: SourceFile, e: BaseException) -> CorpusError:
    return CorpusError(f"{f.path}: cannot decompress ({f.compression}): {e}")


def check_file(f: SourceFile, strict: bool) -> None:
    """Fails now, not hours into counting, for a file that cannot be read or whose start is
    not UTF-8 (the rest is checked as it is read)."""
    check_regular(f.path, CorpusError)  # a FIFO would block the read, a device never end
    if not os.access(f.path, os.R_OK):
        raise PermissionError(f"{f.path}: not readable")
    if f.compression == "zst":
        zstandard_module(f.path)
    with open_regular(f.path, CorpusError) as raw:
        try:
            head = open_stream(f, raw).read(HEAD_BYTES)
        except DECOMPRESS_ERRORS as e:
            raise decompress_error(f, e) from None
        except Exception as e:  # zstandard.ZstdError and friends
            raise decompress_error(f, e) from None
    if strict:
        try:
            codecs.getincrementaldecoder("utf-8")("strict").decode(head, final=False)
        except UnicodeDecodeError as e:
            where = " of the decompressed stream" if f.compression else ""
            raise CorpusError(
                f"{f.path}: not valid UTF-8 at byte offset {e.start}{where} "
                '(pass errors="replace" to replace bad bytes)'
            ) from None


def resolve(source: Source, strict: bool) -> list[SourceFile]:
    files = []
    for spec in source.paths or []:
        for path in expand(spec):
            compression, jsonl = file_kind(path)
            files.append(SourceFile(path, os.path.getsize(path), compression, jsonl, is_parquet(path)))
    for f in files:
        if f.parquet:
            check_parquet(f, source.text_field)
        else:
            check_file(f, strict)
    return files


# -- Parquet: each row's text field is one document; needs pyarrow.


def is_parquet(path: str) -> bool:
    return path.lower().endswith(".parquet")


def pyarrow_parquet(path: str) -> Any:
    try:
        import pyarrow.parquet as pq  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        raise MissingExtraError(f"{path} is a Parquet file; reading it needs pyarrow", "parquet") from None
    return pq


def check_parquet(f: SourceFile, text_field: str) -> None:
    """Fails now for a Parquet file that cannot be opened or has no string column ``text_field``."""
    pq = pyarrow_parquet(f.path)
    try:
        schema = pq.ParquetFile(f.path).schema_arrow
    except OSError as e:
        raise CorpusError(f"{f.path}: not a readable Parquet file ({e})") from None
    except Exception as e:  # pyarrow.ArrowInvalid and friends
        raise CorpusError(f"{f.path}: not a readable Parquet file ({e})") from None
    if text_field not in schema.names:
        raise CorpusError(f"{f.path} has no column {text_field!r} (columns: {', '.join(schema.names)}); choose it with text_field=")
    kind = str(schema.field(text_field).type)
    if kind not in ("string", "large_string", "string_view"):
        raise CorpusError(f"{f.path}: column {text_field!r} is {kind}, not a string column")


def parquet_documents(f: SourceFile, text_field: str) -> Iterator[str]:
    """The non-null values of column ``text_field``, row by row, a record batch at a time."""
    pq = pyarrow_parquet(f.path)
    for batch in pq.ParquetFile(f.path).iter_batches(batch_size=4096, columns=[text_field]):
        for value in batch.column(0).to_pylist():
            if value is not None:
                yield value


class Replaced:
    """A UTF-8 error handler that replaces like "replace" and counts the replacements."""

    count = 0

    @classmethod
    def handler(cls, e: UnicodeError) -> tuple[str, int]:
        if not isinstance(e, UnicodeDecodeError):  # pragma: no cover
            raise e
        cls.count += 1
        return "\ufffd", e.end


codecs.register_error("bytepair.replace", Replaced.handler)


def utf8_error(f: SourceFile, offset: int) -> CorpusError:
    """The error for bytes that are not UTF-8 at ``offset`` of file ``f`` (of its decompressed stream)."""
    where = " of the decompressed stream" if f.compression else ""
    return CorpusError(
        f"{f.path}: not valid UTF-8 at byte offset {offset}{where} (pass errors=\"replace\" to replace bad bytes)"
    )


def documents(f: SourceFile, *, text_field: str = "text", errors: str = "strict") -> Iterator[str]:
    """The documents of one file: the whole text of a text file, or each JSON line's ``text_field``.

    ``errors`` is ``"strict"`` (bytes that are not UTF-8 raise :class:`CorpusError` naming the file
    and offset) or ``"replace"`` (they become U+FFFD; ``Replaced.count`` counts them). A text file
    is read whole: use it for analysis-sized inputs, not to stream a many-GB file.
    """
    if f.parquet:
        yield from parquet_documents(f, text_field)
        return
    handler = "bytepair.replace" if errors == "replace" else "strict"
    # Read to the end whatever size stat gives (procfs files say 0); a FIFO or device is refused.
    with open_regular(f.path, CorpusError) as raw:
        stream = open_stream(f, raw)
        try:
            if not f.jsonl:
                data = stream.read()
                try:
                    yield data.decode("utf-8", handler)
                except UnicodeDecodeError as e:
                    raise utf8_error(f, e.start) from None
                return
            offset = 0
            for lineno, line in enumerate(stream, 1):
                try:
                    text = line.decode("utf-8", handler)
                except UnicodeDecodeError as e:
                    raise utf8_error(f, offset + e.start) from None
                offset += len(line)
                if not text.strip():
                    continue
                yield json_text(text, f.path, lineno, text_field)
        except DECOMPRESS_ERRORS as e:
            raise decompress_error(f, e) from None


def json_text(line: str, path: str, lineno: int, field: str) -> str:
    """The ``field`` of one JSON line, or a :class:`CorpusError` naming the file and line."""
    try:
        doc = json.loads(line)
    except (json.JSONDecodeError, RecursionError) as e:
        msg = e.msg if isinstance(e, json.JSONDecodeError) else "nested too deeply"
        raise CorpusError(f"{path}: line {lineno} is not valid JSON: {msg}") from None
    if not isinstance(doc, dict) or field not in doc:
        raise CorpusError(f"{path}: line {lineno} has no {field!r} field (choose it with text_field=)")
    value = doc[field]
    if not isinstance(value, str):
        raise CorpusError(f"{path}: line {lineno}: {field!r} is {type(value).__name__}, not a string")
    return value
