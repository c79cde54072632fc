"""The WordPiece side of ``bytepair train`` / ``encode`` / ``decode`` / ``show``.

Each command loads its tokenizer with ``load_any`` (any format) and, when it is a
:class:`WordPieceTokenizer`, hands over to the function here.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from bytepair._progress import size_text
from bytepair.cli._common import PROG, CommandError, duration, open_input, plural, read_text
from bytepair.wordpiece import WordPieceTokenizer


def _lines(texts: Iterable[str]) -> Iterator[str]:
    """Blocks of text cut after a newline, so that no word is cut in two."""
    rest = ""
    for block in texts:
        block = rest + block
        cut = block.rfind("\n")
        if cut < 0:
            rest = block
            continue
        rest = block[cut + 1 :]
        yield block[: cut + 1]
    if rest:
        yield rest


def run_encode(args: argparse.Namespace, tok: WordPieceTokenizer) -> int:
    out = sys.stdout
    with contextlib.ExitStack() as stack:
        if args.text is not None:
            texts: Iterable[str] = [args.text]
        else:
            stream, name = stack.enter_context(open_input(args.file))
            texts = _lines(read_text(stream, name))
        count = 0
        first = True
        for text in texts:
            ids = tok.encode(text)
            count += len(ids)
            if args.count or not ids:
                continue
            shown = [tok.id_to_token(i) or "" for i in ids] if args.tokens else [str(i) for i in ids]
            out.write(("" if first else " ") + " ".join(shown))
            first = False
        out.write(f"{count}\n" if args.count else "\n")
    return 0


def run_decode(args: argparse.Namespace, tok: WordPieceTokenizer) -> int:
    from bytepair.cli.decode import _parse_ids
    from bytepair.errors import UnknownTokenError

    with open_input(args.file) as (stream, name):
        ids = [i for batch in _parse_ids(stream, name) for i in batch]
    try:
        text = tok.decode(ids)
    except UnknownTokenError as e:
        raise CommandError(f"{name}: {e} (were the ids made with another tokenizer?)") from None
    sys.stdout.write(text)
    sys.stdout.flush()
    return 0


def run_show(args: argparse.Namespace, tok: WordPieceTokenizer) -> int:
    vocab = [tok.id_to_token(i) or "" for i in range(tok.vocab_size)]
    specials = tok.special_tokens
    prefix = tok.continuing_subword_prefix
    singles = [t for t in vocab if t not in specials and len(t) == 1]
    continuing = [t for t in vocab if t not in specials and t.startswith(prefix) and len(t) == len(prefix) + 1]
    learned = [(i, t) for i, t in enumerate(vocab) if t not in specials and t not in singles and t not in continuing]
    opts = tok.normalizer_options
    lines = [
        args.tokenizer,
        "model           WordPiece (BERT normalization and pre-tokenization)",
        f"vocab size      {tok.vocab_size:,} = {plural(len(specials), 'special token')} + "
        f"{plural(len(singles), 'character')} + {len(continuing):,} {prefix}characters + "
        f"{len(learned):,} longer tokens",
        "normalizer      " + ", ".join(f"{k}={v}" for k, v in opts.items()),
        f"special tokens  {', '.join(f'{t!r} = {i}' for t, i in sorted(specials.items(), key=lambda kv: kv[1])) or 'none'}",
        f"unknown token   {tok.unk_token!r}; words over {tok.max_input_chars_per_word:,} characters are {tok.unk_token}"
        + (", and so is each character no piece matches (the rest of its word is matched)"
           if tok.split_unknown_characters else ", and so is a word with a part no piece matches"),
        f"template        {' '.join(tok.template) if tok.template else 'none'}",
    ]
    info = tok.training
    if info.get("algorithm"):
        lines.append(f"trained with    algorithm={info['algorithm']}, min_frequency={info.get('min_frequency')}")
    lines += _training_lines(info)
    limit = 0 if getattr(args, "all", False) else getattr(args, "limit", 20)
    shown = learned if not limit else learned[:limit]
    if shown:
        lines.append("")
        lines.append(f"learned tokens (first {len(shown):,} of {len(learned):,}, in id order):")
        lines += [f"  {i:>7}  {t}" for i, t in shown]
    from bytepair.cli.show import _printable  # tokens from a file: no terminal control codes

    sys.stdout.write("\n".join(_printable(line) for line in lines) + "\n")
    return 0


def _training_lines(info: dict[str, Any]) -> list[str]:
    """``show``'s training lines, as for BPE (``cli/show.py``), with words for pieces, and what
    the vocabulary does to its training data."""
    from bytepair.cli.show import _training_lines as bpe_lines

    shared = {k: v for k, v in info.items() if k in ("input", "vocab_size", "min_frequency", "bytepair_version")}
    seconds = info.get("seconds")
    if isinstance(seconds, dict):
        shared["seconds"] = {k: v for k, v in seconds.items() if k != "total"}
    lines = bpe_lines(shared)
    from bytepair.cli.show import _count  # the record is the file's: counts checked, no float overflow

    words, distinct = _count(info.get("words")), _count(info.get("distinct_words"))
    if lines and lines[0].startswith("trained on") and words is not None and distinct is not None:
        lines[0] += f", {plural(words, 'word')} ({distinct:,} distinct)"
    tokens, unk = _count(info.get("tokens")), _count(info.get("unk_tokens"))
    text_bytes = _count(info.get("text_bytes"))
    if tokens and unk is not None and text_bytes is not None:
        per_word = f", {tokens / words:.2f} tokens/word" if words else ""
        lines.append(f"on its data     {text_bytes / tokens:.2f} bytes/token{per_word}, {unk / tokens:.3%} unknown tokens")
    return lines


def check_train_args(args: argparse.Namespace) -> None:
    """BPE-only options given with --model wordpiece are an error, not silently ignored."""
    from bytepair.cli.train import _UNSET_PATTERN

    bpe_only = {
        "--base": args.base is not None,
        "--reserved-special-tokens": bool(args.reserved_special_tokens),
        "--role": bool(args.role),
        "--max-token-length": args.max_token_length is not None,
        "--pattern": args.pattern is not _UNSET_PATTERN,
        "--normalization": args.normalization is not None,
        "--alpha": args.alpha != 1.0,
        "--verbose": bool(getattr(args, "verbose", False)),
    }
    given = [k for k, v in bpe_only.items() if v]
    if given:
        raise CommandError(f"{given[0]} is for BPE training, not --model wordpiece")


def run_train(args: argparse.Namespace, sources: Sequence[Any], names: Sequence[str]) -> int:
    from bytepair.cli.train import compression_line
    from bytepair.wordpiece import BERT_SPECIAL_TOKENS
    from bytepair.wordpiece_training import train_wordpiece

    started = time.perf_counter()
    tok = train_wordpiece(
        list(sources),
        vocab_size=args.vocab_size,
        algorithm=args.algorithm,
        min_frequency=args.min_frequency,
        special_tokens=args.special or BERT_SPECIAL_TOKENS,
        lowercase=not args.cased,
        split_unknown_characters=args.split_unknown_characters,
        errors=args.errors,
        progress=args.progress,
    )
    trained = time.perf_counter() - started
    tok.save(args.output)
    info = tok.training
    err = sys.stderr
    source = ", ".join(names) if len(names) <= 3 else f"{names[0]} and {len(names) - 1:,} more"
    seconds: dict[str, float] = info.get("seconds", {})
    timing = ", ".join(f"{k} {duration(v)}" for k, v in seconds.items() if k != "total")
    print(f"trained WordPiece ({info['algorithm']}) on {source} in {duration(trained)}"
          + (f" ({timing})" if timing else ""), file=err)
    line = f"  input            {size_text(info['text_bytes'])}, {info['words']:,} words, {info['distinct_words']:,} distinct"
    if info.get("replaced_bytes"):
        line += f", {plural(info['replaced_bytes'], 'bad UTF-8 sequence')} replaced by U+FFFD"
    print(line, file=err)
    print(f"  vocab size       {tok.vocab_size:,} of {args.vocab_size:,} asked for", file=err)
    if not args.no_stats:
        print(compression_line(info["text_bytes"], info["tokens"], info["words"]), file=err)
        if info["tokens"]:
            print(f"  unknown tokens   {info['unk_tokens'] / info['tokens']:.3%} of tokens are {tok.unk_token}", file=err)
    if tok.vocab_size < args.vocab_size:
        print(f"note: training stopped early: no pair occurs {args.min_frequency} or more times "
              f"(--min-frequency {args.min_frequency}).", file=err)
    print(f"wrote {args.output}; look inside with: {PROG} show {args.output}", file=err)
    return 0


def add_train_options(train: argparse.ArgumentParser) -> None:
    """``bytepair train``'s WordPiece options."""
    train.add_argument(
        "--model",
        choices=["bpe", "wordpiece", "unigram", "spm-bpe"],
        default="bpe",
        help="byte-level BPE (default), WordPiece with BERT normalization ([PAD] [UNK] [CLS] [SEP] [MASK] first), "
        "or a SentencePiece Unigram (unigram) or BPE (spm-bpe) model written as a .model file "
        "(see the SentencePiece options)",
    )
    train.add_argument(
        "--algorithm",
        choices=["score", "hf"],
        default="score",
        help="WordPiece: merge by count(ab)/(count(a)count(b)) (score, default) or as Hugging Face's WordPieceTrainer (hf)",
    )
    train.add_argument("--cased", action="store_true", help="WordPiece: keep case and accents (no lowercasing)")
    train.add_argument(
        "--split-unknown-characters",
        action="store_true",
        help="WordPiece: a character no piece matches becomes [UNK] on its own and the rest of its word is "
        "still matched (hugg ##i ##n [UNK]), instead of the whole word becoming [UNK] (BERT's way); kept in "
        "the tokenizer file, not expressible in a Hugging Face tokenizer.json",
    )


