"""``bytepair train``: train a tokenizer on files and print a summary of what was learned."""

from __future__ import annotations

import argparse
import contextlib
import importlib.resources
import os
import sys
import time
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import bytepair
from bytepair._display import token_repr
from bytepair._progress import size_text
from bytepair.cli._common import (
    PROG,
    CommandError,
    Formatter,
    load_tokenizer,
    pattern_arg,
    plural,
    positive,
    duration,
    warn,
)
from bytepair.tokenizer import Tokenizer
from bytepair.training import sources_table

SAMPLE = "tinyshakespeare.txt"
SAMPLE_VOCAB_SIZE = 1000
_UNSET_PATTERN = object()  # --pattern not given: gpt4, or the base tokenizer's


def _sample_path(stack: contextlib.ExitStack) -> str:
    resource = importlib.resources.files("bytepair").joinpath("data", SAMPLE)
    if not resource.is_file():
        raise CommandError(f"the sample corpus {SAMPLE} is missing from this installation of bytepair")
    return os.fspath(stack.enter_context(importlib.resources.as_file(resource)))


def _check_output(path: str) -> None:
    """Fails before training, not after, when the output cannot be written."""
    if os.path.isdir(path):
        raise CommandError(f"-o {path} is a directory; give a file name such as {os.path.join(path, 'tok.json')}")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise CommandError(f"cannot write {path}: the directory {directory} does not exist")
    if not os.access(directory, os.W_OK):
        raise CommandError(f"cannot write {path}: the directory {directory} is not writable")


def _check_roles(args: argparse.Namespace, base: Any) -> None:
    """Fails before training, not after, when a --role names an unknown role or a text that
    will not be a special token."""
    from bytepair.tokenizer import ROLES, reserved_name

    if not args.role:
        return
    known = set(args.special or ()) | set(base.special_tokens if base is not None else ())
    reserved = args.reserved_special_tokens or 0
    for role, token in args.role:
        if role not in ROLES:
            raise CommandError(f"--role {role}={token}: unknown role {role!r}; roles are {', '.join(ROLES)}")
        if token not in known and not any(token == reserved_name(i) for i in range(min(reserved, 1 << 20))):
            raise CommandError(f"--role {role}={token}: {token!r} is not a special token; add it with --special")


def _source_arg(value: str) -> tuple[str, str]:
    name, sep, path = value.partition("=")
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(f"expected NAME=PATH (a file, glob or directory), got {value!r}")
    return name, path


def _role_arg(value: str) -> tuple[str, str]:
    role, sep, token = value.partition("=")
    if not sep or not role or not token:
        raise argparse.ArgumentTypeError(f"expected ROLE=TOKEN, e.g. eos='<|endoftext|>', got {value!r}")
    return role, token


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    given = sum(bool(x) for x in (args.sample, args.files, args.source))
    if given > 1:
        parser.error("give training FILES, --source NAME=PATH options or --sample, not several of them")
    if not given:
        parser.error("give the training FILES (or --source NAME=PATH, or --sample to train on the bundled Shakespeare sample)")
    if args.vocab_size is None:
        if not args.sample:
            parser.error("--vocab-size is required (e.g. --vocab-size 32000)")
        args.vocab_size = SAMPLE_VOCAB_SIZE
    _check_output(args.output)
    from bytepair.cli import _sentencepiece

    if args.split_unknown_characters and args.model != "wordpiece":
        parser.error("--split-unknown-characters is an option of WordPiece training (--model wordpiece)")
    if _sentencepiece.is_sentencepiece(args.model):
        _sentencepiece.check_train_args(args)
    else:
        _sentencepiece.check_not_sentencepiece(args)
    if args.model == "wordpiece" and (args.tie_break != "lexicographic" or args.trace):
        parser.error("--tie-break and --trace are options of BPE training (--model bpe)")
    if args.model == "wordpiece":
        from bytepair.cli._wordpiece import check_train_args

        check_train_args(args)
    options: dict[str, Any] = {}
    if args.base is not None:
        options["base"] = load_tokenizer(args.base, command="train --base")
    if args.pattern is not _UNSET_PATTERN:
        options["pattern"] = args.pattern
    if args.normalization is not None:
        options["normalization"] = args.normalization
    if args.max_words_per_token is not None:
        options["max_words_per_token"] = args.max_words_per_token
    if args.max_pieces is not None:
        options["max_pieces"] = args.max_pieces
    _check_roles(args, options.get("base"))

    with contextlib.ExitStack() as stack:
        if args.sample:
            sources: Any = [_sample_path(stack)]
            names = sources
        elif args.source:
            grouped: dict[str, list[str]] = {}
            for name, path in args.source:
                grouped.setdefault(name, []).append(path)
            sources = [bytepair.Source(paths, name=name, text_field=args.text_field) for name, paths in grouped.items()]
            names = list(grouped)
        else:
            sources = [bytepair.Source(args.files, text_field=args.text_field)]
            names = list(args.files)
        if args.model == "wordpiece":  # WordPiece trains in cli/_wordpiece.py; the rest is BPE's
            from bytepair.cli import _wordpiece

            return _wordpiece.run_train(args, sources, names)
        if _sentencepiece.is_sentencepiece(args.model):  # a SentencePiece .model, trained in cli/_sentencepiece.py
            return _sentencepiece.run_train(args, sources, names)
        started = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tok = bytepair.train(
                sources,
                vocab_size=args.vocab_size,
                special_tokens=_specials(args),
                reserved_special_tokens=args.reserved_special_tokens,
                min_frequency=args.min_frequency,
                max_token_length=args.max_token_length,
                alpha=args.alpha,
                errors=args.errors,
                progress=args.progress,
                tie_break=args.tie_break,
                **options,
            )
        trained = time.perf_counter() - started
        for w in caught:
            if not str(w.message).startswith("training stopped early"):  # the summary says it
                warn(str(w.message))
        if args.role:
            tok = tok.with_special_tokens(roles=dict(args.role))
        tok.save(args.output)
        if args.verbose:  # the merges, learning order, with counts
            _print_merges(tok, sources, args.text_field, args.errors)
        if args.trace:
            _print_trace(tok, sources, args)

    _print_summary(tok, args, names, trained)
    return 0


def _specials(args: argparse.Namespace) -> list[str] | dict[str, int]:
    """--special tokens, at the first ids with --special-first (a repeated one is named by training)."""
    if args.special_first and len(set(args.special)) == len(args.special):
        return {t: i for i, t in enumerate(args.special)}
    return list(args.special)


def _documents(sources: Any, text_field: str, errors: str) -> Iterator[str]:
    from bytepair.sources import Source, documents, resolve

    for s in sources:
        src = s if isinstance(s, Source) else Source([s], text_field=text_field)
        for f in resolve(src, errors != "replace"):
            yield from documents(f, text_field=src.text_field, errors=errors)


def _print_trace(tok: Tokenizer, sources: Any, args: argparse.Namespace) -> None:
    from bytepair.analysis.trace import training_trace

    rounds = training_trace(tok, _documents(sources, args.text_field, args.errors), rounds=args.trace, top=args.trace_top)
    vocab = tok._vocab
    for r in rounds:
        print(f"round {r.merge + 1}:")
        for k, (a, b, count) in enumerate(r.pairs):
            made = f" -> {token_repr(vocab[r.new_id])} (id {r.new_id})" if k == 0 else ""
            mark = "merge" if k == 0 else "     "
            print(f"  {mark} ({a}, {b}) {token_repr(vocab[a])} + {token_repr(vocab[b])}: {count:,}{made}")


def _print_merges(tok: Tokenizer, sources: Any, text_field: str, errors: str) -> None:
    from bytepair.cli._verbose import print_merges

    base = tok.training.get("base")
    print_merges(tok, _documents(sources, text_field, errors), sys.stdout, first=base["merges"] if base else 0)


def compression_line(text_bytes: int, tokens: int, words: int) -> str:
    """The summary's compression line (BPE and WordPiece training)."""
    if not tokens:
        return "  compression      n/a (the training data is empty)"
    per_word = f", {tokens / words:.2f} tokens/word" if words else ""
    return (
        f"  compression      {text_bytes / tokens:.2f} bytes/token on the training data"
        f" ({text_bytes:,} bytes -> {tokens:,} tokens){per_word}"
    )


def _print_summary(tok: Tokenizer, args: argparse.Namespace, names: Sequence[str], trained: float) -> None:
    info = tok.training
    inputs: dict[str, Any] = info.get("input", {})
    seconds: dict[str, float] = info.get("seconds", {})
    learned: int = info.get("merges_learned", len(tok.merges))
    base = info.get("base")
    n_before = base["merges"] if base else 0
    n_special = len(tok.special_tokens)
    wanted_merges = learned + (args.vocab_size - tok.vocab_size)
    err = sys.stderr
    if args.sample:
        source = f"the sample {SAMPLE}"
    elif args.source:
        source = f"{plural(len(names), 'source')} ({', '.join(names)})"
    elif len(names) <= 3:
        source = ", ".join(names)
    else:
        source = f"{names[0]} and {len(names) - 1:,} more"
    timing = ", ".join(f"{k} {duration(v)}" for k, v in seconds.items())
    print(f"trained on {source} in {duration(trained)}" + (f" ({timing})" if timing else ""), file=err)
    n_bytes = inputs.get("bytes")
    if n_bytes is not None:
        docs = inputs.get("documents")
        line = f"  input            {size_text(n_bytes)}"
        if docs is not None:
            line += f", {plural(docs, 'document')}"
        if inputs.get("replaced_bytes"):
            line += f", {plural(inputs['replaced_bytes'], 'bad UTF-8 sequence')} replaced by U+FFFD"
        print(line, file=err)
    if "distinct_pieces" in info:
        print(f"  distinct pieces  {info['distinct_pieces']:,}", file=err)
    print(
        f"  merges           {learned:,} learned"
        + (f" of {wanted_merges:,} wanted" if learned < wanted_merges else "")
        + (f", after the base tokenizer's {n_before:,}" if base else ""),
        file=err,
    )
    if base:
        print(
            f"  vocab size       {tok.vocab_size:,} = the base's {base['vocab_size']:,} + {plural(learned, 'merge')}"
            f" + {plural(tok.vocab_size - base['vocab_size'] - learned, 'new special token')}",
            file=err,
        )
    else:
        print(
            f"  vocab size       {tok.vocab_size:,} = 256 bytes + {plural(learned, 'merge')}"
            f" + {plural(n_special, 'special token')}",
            file=err,
        )
    sources: list[dict[str, Any]] = info.get("sources") or []
    if not args.no_stats:
        text_bytes = sum(int(s.get("text_bytes") or 0) for s in sources)
        tokens = sum(int(s.get("tokens") or 0) for s in sources)
        words = sum(int(s.get("words") or 0) for s in sources)
        print(compression_line(text_bytes, tokens, words), file=err)
        if len(sources) > 1:
            print("", file=err)
            print(sources_table(tok), file=err)
            print("", file=err)
    if info.get("stopped_early", learned < wanted_merges):
        print(
            f"note: training stopped early: after {plural(learned, 'merge')} no pair of tokens occurs "
            f"{args.min_frequency} or more times (--min-frequency {args.min_frequency}), so the vocabulary has "
            f"{tok.vocab_size:,} tokens, not the {args.vocab_size:,} asked for. Train on more text, "
            "or lower --vocab-size or --min-frequency.",
            file=err,
        )
    print(f"wrote {args.output}; look inside with: {PROG} show {args.output}", file=err)


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    train = commands.add_parser(
        "train",
        formatter_class=Formatter,
        help="train a tokenizer on text files",
        description="""\
Train a byte-level BPE tokenizer and write it to one JSON file (--model
wordpiece: a WordPiece one; --model unigram or spm-bpe: a SentencePiece
Unigram or BPE model, written as a .model file).

Input: files, globs or directories of UTF-8 text (.txt and other text, .jsonl
with one document per line; either may be .gz or .zst compressed), as one
source (FILE...) or as named sources mixed by --alpha (--source NAME=PATH...).
Files are streamed, never held in memory whole, and checked before counting
starts. Progress bars go to stderr (by default only when stderr is a
terminal), then a summary: time, distinct pieces, merges learned and the
compression reached on the training data, per source when there are several.""",
        epilog=f"""\
examples:
  {PROG} train corpus.txt --vocab-size 32000 -o tok.json
  {PROG} train 'data/**/*.jsonl.gz' --vocab-size 50257 --pattern gpt2 --special '<|endoftext|>' -o gpt2ish.json
  {PROG} train --source en='en/*.txt' --source zh='zh/*.txt' --alpha 0.3 --vocab-size 65536 -o mix.json
  {PROG} train more.txt --base tok.json --vocab-size 40000 -o tok2.json   # continue training
  {PROG} train --sample --vocab-size 1000 -o shakespeare.json   # the bundled Shakespeare sample
  {PROG} train corpus.txt --model unigram --vocab-size 8000 --byte-fallback -o tok.model   # as spm_train
  {PROG} train corpus.txt --model spm-bpe --vocab-size 8000 -o bpe.model   # spm_train --model_type=bpe""",
    )
    train.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="text to train on: files, globs or directories (.txt, .jsonl, optionally .gz/.zst); one source",
    )
    train.add_argument(
        "--source",
        action="append",
        default=[],
        type=_source_arg,
        metavar="NAME=PATH",
        help="a named source (a file, glob or directory); repeat for more, and the same NAME to add paths to it",
    )
    train.add_argument(
        "--alpha",
        type=float,
        default=1.0,
        metavar="A",
        help="mixing of sources: each contributes in proportion to its size**A (1 = raw sizes, default; 0 = equal)",
    )
    train.add_argument(
        "--sample",
        action="store_true",
        help=f"train on the Shakespeare sample shipped with bytepair (vocab size {SAMPLE_VOCAB_SIZE} unless given)",
    )
    train.add_argument(
        "-o", "--output", required=True, metavar="TOK.json",
        help="where to write the tokenizer (required; with --model unigram or spm-bpe a .model file, e.g. tok.model)"
    )
    train.add_argument(
        "--vocab-size",
        type=int,
        metavar="N",
        help="tokens in the vocabulary: 256 bytes + merges + special tokens (required, except with --sample)",
    )
    train.add_argument(
        "--base",
        metavar="TOK",
        help="continue training this tokenizer file: its ids and merges stay, new merges follow",
    )
    train.add_argument(
        "--pattern",
        type=pattern_arg,
        default=_UNSET_PATTERN,
        metavar="P",
        help="split pattern: gpt2, gpt4 (default, or the base's), o200k, superword (with --base: SuperBPE's "
        "second stage), none (no splitting) or a custom regex",
    )
    train.add_argument(
        "--max-words-per-token",
        type=int,
        default=None,
        metavar="N",
        help="superword pieces of at most N words (implies --pattern superword; default 4)",
    )
    train.add_argument(
        "--max-pieces",
        type=int,
        default=None,
        metavar="N",
        help="bound the table of distinct pieces while counting: past N, the pieces counted least often are dropped",
    )
    train.add_argument(
        "--normalization",
        metavar="N",
        help="nfc, nfkc, lowercase, or steps joined by + (e.g. nfkc+lowercase); applied again at encode time. "
        "--model unigram or spm-bpe: nmt_nfkc (default), nfkc or identity, as spm_train's --normalization_rule_name",
    )
    train.add_argument(
        "--special",
        action="append",
        default=[],
        metavar="TOK",
        help="a special token, e.g. '<|endoftext|>' (repeat for more); its text in the files separates documents",
    )
    train.add_argument(
        "--special-first",
        action="store_true",
        help="give the --special tokens the first ids (0, 1, ...; as BERT and T5 lay them out), the bytes and merges after them",
    )
    train.add_argument(
        "--reserved-special-tokens",
        type=positive,
        default=0,
        metavar="N",
        help="reserve N special-token slots <|reserved_0|>... to claim later without changing any id",
    )
    train.add_argument(
        "--role",
        action="append",
        default=[],
        type=_role_arg,
        metavar="ROLE=TOK",
        help="give a special token a role kept in the file: bos, eos, pad, unk, sep, cls, mask (e.g. eos='<|endoftext|>')",
    )
    train.add_argument(
        "--min-frequency",
        type=int,
        default=2,
        metavar="F",
        help="stop early when no pair occurs at least F times (default 2)",
    )
    train.add_argument(
        "--max-token-length",
        type=int,
        default=None,
        metavar="B",
        help="never learn a token longer than B bytes",
    )
    train.add_argument(
        "--text-field",
        default="text",
        metavar="F",
        help="the field of each .jsonl line that holds the text (default: text)",
    )
    train.add_argument(
        "--errors",
        choices=["strict", "replace"],
        default="strict",
        help="bytes that are not UTF-8: stop with an error (strict, default) or replace them with U+FFFD",
    )
    train.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show progress bars on stderr (default: only when stderr is a terminal)",
    )
    train.add_argument(
        "--no-stats",
        action="store_true",
        help="do not print the compression (it is measured from the counts, without another pass)",
    )
    train.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="print the merges in the order they were learned, 't' + 'he' -> 'the', with how often each was applied",
    )
    train.add_argument(
        "--tie-break",
        choices=["lexicographic", "first", "hf"],
        default="lexicographic",
        help="which of the pairs of equal count is merged: the greater bytes (default), the first to occur "
        "in the text (minbpe, the notebooks; one source, counted in order) or Hugging Face's BpeTrainer's",
    )
    train.add_argument(
        "--trace",
        type=positive,
        metavar="N",
        help="print the first N rounds of training with the most frequent pairs and their counts "
        "(replayed on the training text, as a training notebook prints them)",
    )
    train.add_argument("--trace-top", type=positive, default=5, metavar="K", help="pairs shown per round with --trace (default 5)")
    # --model (bpe, wordpiece, unigram or spm-bpe), the WordPiece options and the SentencePiece options
    from bytepair.cli import _sentencepiece, _wordpiece

    _wordpiece.add_train_options(train)
    _sentencepiece.add_train_options(train)
    train.set_defaults(run=run, subparser=train)
