"""``bytepair encode-corpus``: a corpus to token shards (llm.c, Megatron or npy), resumable."""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING

from bytepair.cli._common import PROG, CommandError, Formatter, load_model, plural, positive

if TYPE_CHECKING:
    from bytepair.sentencepiece import SentencePieceTokenizer
    from bytepair.tokenizer import Tokenizer

TOK_HELP = (
    "tokenizer file (from `bytepair train`), a SentencePiece .model (or a SentencePiece-family "
    "tokenizer.json), or a pretrained encoding: gpt2, cl100k_base, o200k_base (required)"
)


def _eot(value: str) -> str | None:
    return None if value.lower() == "none" else value


def _alpha(value: str) -> float:
    try:
        alpha = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {value!r}") from None
    if not math.isfinite(alpha):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {value!r}")
    return alpha


def _int(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None


def _load(spec: str) -> Tokenizer | SentencePieceTokenizer:
    """A byte-level BPE tokenizer or a SentencePiece model; WordPiece is a one-line error."""
    from bytepair.wordpiece import WordPieceTokenizer

    tok = load_model(spec)
    if isinstance(tok, WordPieceTokenizer):
        raise CommandError(
            f"{spec} is a WordPiece tokenizer; `{PROG} encode-corpus` takes byte-level BPE tokenizers "
            "and SentencePiece models"
        )
    return tok


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from bytepair.corpus import encode_corpus

    if args.shard_tokens < 1:
        parser.error("--shard-tokens must be at least 1")
    sampling = args.sample_alpha is not None
    if not sampling and (args.nbest_size is not None or args.seed is not None):
        raise CommandError("--nbest-size and --seed set how --sample-alpha samples: give --sample-alpha too")
    if args.seed is not None and not 0 <= args.seed < 2**64:
        raise CommandError(f"--seed must be from 0 to 2**64 - 1, got {args.seed}")
    tok = _load(args.tokenizer)
    from bytepair.tokenizer import Tokenizer

    if sampling and isinstance(tok, Tokenizer):
        raise CommandError(
            f"{args.tokenizer} is a byte-level BPE tokenizer; --sample-alpha samples with SentencePiece "
            "models only (encode-corpus offers no BPE-dropout)"
        )
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
        enable_sampling=sampling,
        alpha=args.sample_alpha if sampling else 0.1,
        nbest_size=args.nbest_size if args.nbest_size is not None else -1,
        seed=args.seed if args.seed is not None else 0,
    )
    summary = (
        f"{args.output}: {plural(doc['tokens'], 'token')} in {plural(len(doc['shards']), 'shard')} "
        f"({doc['options']['format']}, {doc['options']['dtype']}), {plural(doc['documents'], 'document')}"
    )
    if "sampling" in doc["options"]:
        s = doc["options"]["sampling"]
        summary += f"; sampled (alpha {s['alpha']:g}, nbest_size {s['nbest_size']}, seed {s['seed']})"
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
tokenizer's hash and every shard's sha256.

With a SentencePiece model (.model file), each document is encoded whole, as
SentencePieceProcessor.encode does, and the default separator is the model's
</s>. --sample-alpha draws each document's segmentation (subword regularization)
from a seed made of --seed and the document's place in the corpus: the same shards
on any --threads, and after a resume.""",
        epilog=f"""\
examples:
  {PROG} encode-corpus -t gpt2 data/*.jsonl.zst -o shards/
  {PROG} encode-corpus -t tok.json corpus/ -o out/ --format megatron --shard-tokens 50000000
  {PROG} encode-corpus -t spm.model data/*.jsonl -o shards/
  {PROG} encode-corpus -t spm.model data/*.jsonl -o sampled/ --sample-alpha 0.1 --seed 1""",
    )
    p.add_argument("inputs", nargs="+", metavar="INPUTS", help="files, globs or directories to encode")
    p.add_argument("-t", "--tokenizer", required=True, metavar="TOK", help=TOK_HELP)
    p.add_argument("-o", "--output", required=True, metavar="OUTDIR", help="directory for the shards and manifest.json")
    p.add_argument("--format", choices=("llmc", "megatron", "npy"), default="llmc", help="shard format (default: llmc)")
    p.add_argument("--shard-tokens", type=positive, default=100_000_000, metavar="N", help="tokens per shard (default: 100,000,000)")
    p.add_argument("--eot", type=_eot, default="auto", metavar="TOKEN", help="special token between documents (default: <|endoftext|>, a SentencePiece model's </s>; none for none)")
    p.add_argument("--eot-position", choices=("prepend", "append"), default=None, help="before or after each document (default: prepend for llmc/npy, append for megatron)")
    p.add_argument("--dtype", choices=("uint16", "uint32"), default=None, help="id type (default: uint16 when every id fits)")
    p.add_argument("--text-field", default="text", metavar="FIELD", help="JSON / Parquet field holding the text (default: text)")
    p.add_argument("--errors", choices=("strict", "replace"), default="strict", help="invalid UTF-8: fail naming file and offset, or replace with U+FFFD")
    p.add_argument("--threads", type=positive, default=None, metavar="N", help="threads (default: all cores)")
    p.add_argument("--sample-alpha", type=_alpha, default=None, metavar="A",
                   help="SentencePiece models: sample segmentations with this alpha (Unigram: the inverse "
                        "temperature; BPE: the probability of dropping a merge)")
    p.add_argument("--nbest-size", type=_int, default=None, metavar="N",
                   help="with --sample-alpha, Unigram: sample from the N best segmentations (default: -1, all)")
    p.add_argument("--seed", type=_int, default=None, metavar="S",
                   help="with --sample-alpha: the seed of every draw (default: 0)")
    p.add_argument("--overwrite", action="store_true", help="replace an OUTDIR made with another tokenizer, options or inputs")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    p.set_defaults(run=run, subparser=p)
