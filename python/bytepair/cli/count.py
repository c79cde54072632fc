"""``bytepair count``: tokens per file and in total, bytes per token, through the array path."""

from __future__ import annotations

import argparse

from typing import TYPE_CHECKING

from bytepair.cli._common import PROG, TOK_HELP_ANY, Formatter, load_model, positive, table
from bytepair.tokenizer import Tokenizer

if TYPE_CHECKING:
    from bytepair.sources import SourceFile
    from bytepair.wordpiece import WordPieceTokenizer


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from bytepair.sentencepiece import SentencePieceTokenizer
    from bytepair.sources import Source, documents, resolve

    tok = load_model(args.tokenizer)
    files = resolve(Source(args.files, text_field=args.text_field), strict=args.errors == "strict")
    if isinstance(tok, SentencePieceTokenizer):
        from bytepair.cli import _spm

        rows = _rows(_spm.count_files(args, tok, files))
        print("\n".join(table(rows, right=[True, True, True, False], gaps=["  ", "  ", "  "])))
        return 0
    if not isinstance(tok, Tokenizer):
        return _run_wordpiece(args, tok, files)
    rows = [["tokens", "bytes", "bytes/token", "file"]]
    total_tokens = total_bytes = 0
    from bytepair.corpus import encode as corpus_encode

    # A file whose size is 0 may have text all the same (procfs): it is read below, as train and
    # encode-corpus read it, and its bytes are those read.
    plain = [
        f for f in files if f.compression is None and not f.jsonl and not f.parquet and tok._normalize is None and f.size
    ]
    small = [f for f in plain if f.size <= corpus_encode.STREAM_BYTES]
    counts: dict[str, int] = {}
    if small:  # read and encoded in Rust, all files at once on all threads
        _, offsets = tok.encode_files([f.path for f in small], errors=args.errors, num_threads=args.threads)
        counts = {f.path: int(offsets[i + 1] - offsets[i]) for i, f in enumerate(small)}
    for f in plain:
        if f.path not in counts:  # a large file: byte ranges cut at independent cuts, read in Rust
            ranges = [u.range for u in corpus_encode._file_ranges(f, tok) if u.range is not None]
            n = 0
            for i in range(0, len(ranges), 16):
                _, ends, _ = tok._core.encode_file_ranges(
                    ranges[i : i + 16], [], width=4, replace_errors=args.errors == "replace", num_threads=args.threads
                )
                n += int.from_bytes(ends[-8:], "little")  # the last offset: the tokens of these ranges
            counts[f.path] = n
    for f in files:
        size = f.size
        if f.path not in counts:
            n = 0
            batch: list[str] = []
            for doc in documents(f, text_field=args.text_field, errors=args.errors):
                batch.append(doc)
                if not f.size:
                    size += _text_bytes(doc)
                if len(batch) >= 4096:
                    n += sum(tok.count_batch(batch, disallowed_special=(), num_threads=args.threads))
                    batch = []
            n += sum(tok.count_batch(batch, disallowed_special=(), num_threads=args.threads))
            counts[f.path] = n
        n = counts[f.path]
        total_tokens += n
        total_bytes += size
        rows.append([f"{n:,}", f"{size:,}", f"{size / n:.3f}" if n else "-", f.path])
    if len(files) > 1:
        rows.append([f"{total_tokens:,}", f"{total_bytes:,}", f"{total_bytes / total_tokens:.3f}" if total_tokens else "-", "total"])
    print("\n".join(table(rows, right=[True, True, True, False], gaps=["  ", "  ", "  "])))
    return 0


def _text_bytes(doc: str) -> int:
    """The bytes of a document of a file that gives its size as 0 (procfs)."""
    return len(doc.encode("utf-8"))


def _rows(counts: list[tuple[int, int, str]]) -> list[list[str]]:
    rows = [["tokens", "bytes", "bytes/token", "file"]]
    for n, size, path in counts:
        rows.append([f"{n:,}", f"{size:,}", f"{size / n:.3f}" if n else "-", path])
    if len(counts) > 1:
        tokens, size = sum(c[0] for c in counts), sum(c[1] for c in counts)
        rows.append([f"{tokens:,}", f"{size:,}", f"{size / tokens:.3f}" if tokens else "-", "total"])
    return rows


def _run_wordpiece(args: argparse.Namespace, tok: WordPieceTokenizer, files: list[SourceFile]) -> int:
    """WordPiece: documents in batches through ``encode_batch_numpy`` (no special
    tokens added); a text file is one document, as for BPE."""
    from bytepair.sources import documents

    counts = []
    for f in files:
        n = 0
        size = f.size
        batch: list[str] = []
        for doc in documents(f, text_field=args.text_field, errors=args.errors):
            batch.append(doc)
            if not f.size:
                size += _text_bytes(doc)
            if len(batch) >= 4096:
                n += len(tok.encode_batch_numpy(batch, num_threads=args.threads)[0])
                batch = []
        if batch:
            n += len(tok.encode_batch_numpy(batch, num_threads=args.threads)[0])
        counts.append((n, size, f.path))
    print("\n".join(table(_rows(counts), right=[True, True, True, False], gaps=["  ", "  ", "  "])))
    return 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = commands.add_parser(
        "count",
        formatter_class=Formatter,
        help="count tokens per file and in total",
        description="""\
Count the tokens of each file and of all of them, with bytes per token (file
bytes as stored on disk). Text is encoded as ordinary text (special-token text
counts as text). FILES are files, globs or directories, as for encode-corpus.
A SentencePiece model (.model) counts the ids sentencepiece's encode(text)
gives for each document (a text file is one; no BOS / EOS).""",
        epilog=f"""\
examples:
  {PROG} count -t o200k_base README.md docs/""",
    )
    p.add_argument("files", nargs="+", metavar="FILES", help="files, globs or directories")
    p.add_argument("-t", "--tokenizer", required=True, metavar="TOK", help=TOK_HELP_ANY)
    p.add_argument("--text-field", default="text", metavar="FIELD", help="JSON field holding the text (default: text)")
    p.add_argument("--errors", choices=("strict", "replace"), default="strict", help="invalid UTF-8: fail, or replace with U+FFFD")
    p.add_argument("--threads", type=positive, default=None, metavar="N", help="threads (default: all cores)")
    p.set_defaults(run=run, subparser=p)
