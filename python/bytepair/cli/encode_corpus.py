"""``bytepair encode-corpus``: a corpus to token shards (llm.c, Megatron or npy), resumable."""

from __future__ import annotations

import argparse

from bytepair.cli._common import PROG, TOK_HELP, Formatter, load_tokenizer, plural, positive


def _eot(value: str) -> str | None:
    return None if value.lower() == "none" else value


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from bytepair.corpus import encode_corpus

    if args.shard_tokens < 1:
        parser.error("--shard-tokens must be at least 1")
    tok = load_tokenizer(args.tokenizer, command="encode-corpus")
    doc = encode_corpus(
        tok,
        args.inputs,
        args.output,
        format=args.format,
        shard_tokens=args.shard_tokens,
        eot=args.eot,
        eot_position=args.eot_position,
        dtype=args.dtype,
        text_field=args.text_field,
        errors=args.errors,
        num_threads=args.threads,
        overwrite=args.overwrite,
        progress=None if not args.quiet else False,
    )
    summary = (
        f"{args.output}: {plural(doc['tokens'], 'token')} in {plural(len(doc['shards']), 'shard')} "
        f"({doc['options']['format']}, {doc['options']['dtype']}), {plural(doc['documents'], 'document')}"
    )
    if doc["replaced"]:
        summary += f"; {plural(doc['replaced'], 'invalid UTF-8 sequence')} replaced with U+FFFD"
    print(summary)
    return 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = commands.add_parser(
        "encode-corpus",
        formatter_class=Formatter,
        help="encode a corpus into token shards for training",
        description="""\
Encode a whole corpus into token shards of a fixed size, on all cores, in bounded
memory, with an end-of-text token between documents. INPUTS are files, globs,
directories, .jsonl (one document per line), optionally .gz / .zst, or .parquet.
A run that stops (killed, disk full) resumes when started again with the same
arguments, to the same bytes; OUTDIR/manifest.json records inputs, options, the
tokenizer's hash and every shard's sha256.""",
        epilog=f"""\
examples:
  {PROG} encode-corpus -t gpt2 data/*.jsonl.zst -o shards/
  {PROG} encode-corpus -t tok.json corpus/ -o out/ --format megatron --shard-tokens 50000000""",
    )
    p.add_argument("inputs", nargs="+", metavar="INPUTS", help="files, globs or directories to encode")
    p.add_argument("-t", "--tokenizer", required=True, metavar="TOK", help=TOK_HELP)
    p.add_argument("-o", "--output", required=True, metavar="OUTDIR", help="directory for the shards and manifest.json")
    p.add_argument("--format", choices=("llmc", "megatron", "npy"), default="llmc", help="shard format (default: llmc)")
    p.add_argument("--shard-tokens", type=positive, default=100_000_000, metavar="N", help="tokens per shard (default: 100,000,000)")
    p.add_argument("--eot", type=_eot, default="auto", metavar="TOKEN", help="special token between documents (default: <|endoftext|>; none for none)")
    p.add_argument("--eot-position", choices=("prepend", "append"), default=None, help="before or after each document (default: prepend for llmc/npy, append for megatron)")
    p.add_argument("--dtype", choices=("uint16", "uint32"), default=None, help="id type (default: uint16 when every id fits)")
    p.add_argument("--text-field", default="text", metavar="FIELD", help="JSON / Parquet field holding the text (default: text)")
    p.add_argument("--errors", choices=("strict", "replace"), default="strict", help="invalid UTF-8: fail naming file and offset, or replace with U+FFFD")
    p.add_argument("--threads", type=positive, default=None, metavar="N", help="threads (default: all cores)")
    p.add_argument("--overwrite", action="store_true", help="replace an OUTDIR made with another tokenizer, options or inputs")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    p.set_defaults(run=run, subparser=p)
