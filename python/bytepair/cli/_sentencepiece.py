"""The SentencePiece side of ``bytepair train``: ``--model unigram`` trains a SentencePiece
Unigram model and ``--model spm-bpe`` a SentencePiece BPE one (:func:`bytepair.train_sentencepiece`
with ``model_type="unigram"`` or ``"bpe"``), written as a ``.model`` file.

The options are ``spm_train``'s, in the command line's spelling (``--max_sentencepiece_length``
is ``--max-piece-length``, ``--seed_sentencepiece_size`` is ``--seed-size``, ``--bos_id=-1`` is
``--no-bos``). Each defaults to ``None`` here, so that an option given with another ``--model``
is seen and refused, and an option not given takes :func:`train_sentencepiece`'s default.
``--seed-size``, ``--shrinking-factor`` and ``--num-sub-iterations`` are Unigram's only.
``--alpha`` mixes the ``--source`` options as it does for byte-level BPE.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections.abc import Sequence
from typing import Any

from bytepair._progress import size_text
from bytepair.cli._common import PROG, CommandError, duration, plural, warn
from bytepair.errors import BytepairError

NORMALIZATIONS = ("nmt_nfkc", "nfkc", "identity")  # those train_sentencepiece knows

# --model -> train_sentencepiece's model_type, and the name the summary gives it
MODEL_TYPES = {"unigram": "unigram", "spm-bpe": "bpe"}
_NAMES = {"unigram": "Unigram", "spm-bpe": "SentencePiece BPE"}
_FOR_SENTENCEPIECE = "for SentencePiece training (--model unigram or spm-bpe)"
_FOR_UNIGRAM = "for Unigram training (--model unigram)"

# (option, dest, keyword of train_sentencepiece): the options only the SentencePiece models take
_OPTIONS: tuple[tuple[str, str, str], ...] = (
    ("--character-coverage", "character_coverage", "character_coverage"),
    ("--max-piece-length", "max_piece_length", "max_piece_length"),
    ("--split-digits", "split_digits", "split_digits"),
    ("--split-by-unicode-script", "split_by_unicode_script", "split_by_unicode_script"),
    ("--split-by-number", "split_by_number", "split_by_number"),
    ("--byte-fallback", "byte_fallback", "byte_fallback"),
    ("--user-defined-symbols", "user_defined_symbols", "user_defined_symbols"),
    ("--control-symbols", "control_symbols", "control_symbols"),
    ("--unk-piece", "unk_piece", "unk_piece"),
    ("--bos-piece", "bos_piece", "bos_piece"),
    ("--eos-piece", "eos_piece", "eos_piece"),
    ("--pad-piece", "pad_piece", "pad_piece"),
    ("--add-dummy-prefix", "add_dummy_prefix", "add_dummy_prefix"),
    ("--remove-extra-whitespaces", "remove_extra_whitespaces", "remove_extra_whitespaces"),
    ("--treat-whitespace-as-suffix", "treat_whitespace_as_suffix", "treat_whitespace_as_suffix"),
    ("--seed-size", "seed_size", "seed_size"),
    ("--shrinking-factor", "shrinking_factor", "shrinking_factor"),
    ("--num-sub-iterations", "num_sub_iterations", "num_sub_iterations"),
    ("--threads", "threads", "num_threads"),
)
_UNIGRAM_ONLY = {"seed_size", "shrinking_factor", "num_sub_iterations"}  # dests
_NO_FLAGS = {"no_bos": "--no-bos", "no_eos": "--no-eos"}
_BOOLEANS = {
    "split_digits", "split_by_unicode_script", "split_by_number", "byte_fallback",
    "add_dummy_prefix", "remove_extra_whitespaces", "treat_whitespace_as_suffix",
}


def is_sentencepiece(model: str) -> bool:
    """Whether ``--model`` trains a SentencePiece ``.model`` (unigram, spm-bpe)."""
    return model in MODEL_TYPES


def _flag(args: argparse.Namespace, option: str, dest: str) -> str:
    """The option as the user gave it (``--no-split-digits`` for a boolean set to false)."""
    if dest in _BOOLEANS and getattr(args, dest) is False:
        return "--no-" + option[2:]
    return option


def check_not_sentencepiece(args: argparse.Namespace) -> None:
    """SentencePiece options given with --model bpe or wordpiece are an error, not silently ignored."""
    for option, dest, _ in _OPTIONS:
        if getattr(args, dest, None) is not None:
            purpose = _FOR_UNIGRAM if dest in _UNIGRAM_ONLY else _FOR_SENTENCEPIECE
            raise CommandError(f"{_flag(args, option, dest)} is {purpose}, not --model {args.model}")
    for dest, option in _NO_FLAGS.items():
        if getattr(args, dest, False):
            raise CommandError(f"{option} is {_FOR_SENTENCEPIECE}, not --model {args.model}")


def check_train_args(args: argparse.Namespace) -> None:
    """Byte-level BPE and WordPiece options given with --model unigram or spm-bpe are an error,
    and so are Unigram's own options with spm-bpe, --no-bos with --bos-piece, and a
    --normalization SentencePiece training does not know. Checked before training."""
    from bytepair.cli.train import _UNSET_PATTERN

    others = {
        "--base": args.base is not None,
        "--pattern": args.pattern is not _UNSET_PATTERN,
        "--max-words-per-token": args.max_words_per_token is not None,
        "--max-pieces": args.max_pieces is not None,
        "--special": bool(args.special),
        "--special-first": bool(args.special_first),
        "--reserved-special-tokens": bool(args.reserved_special_tokens),
        "--role": bool(args.role),
        "--min-frequency": args.min_frequency != 2,
        "--max-token-length": args.max_token_length is not None,
        "--no-stats": bool(args.no_stats),
        "--verbose": bool(args.verbose),
        "--tie-break": args.tie_break != "lexicographic",
        "--trace": args.trace is not None,
        "--trace-top": args.trace_top != 5,
        "--algorithm": args.algorithm != "score",
        "--cased": bool(args.cased),
    }
    hints = {
        "--special": "; use --user-defined-symbols or --control-symbols",
        "--max-token-length": "; use --max-piece-length",
    }
    given = [k for k, v in others.items() if v]
    if given:
        raise CommandError(
            f"{given[0]} is for byte-level BPE or WordPiece training (--model bpe or wordpiece), "
            f"not --model {args.model}{hints.get(given[0], '')}"
        )
    if args.model != "unigram":
        for option, dest, _ in _OPTIONS:
            if dest in _UNIGRAM_ONLY and getattr(args, dest) is not None:
                raise CommandError(f"{option} is {_FOR_UNIGRAM}, not --model {args.model}")
    for dest, option in _NO_FLAGS.items():
        piece = dest[3:] + "_piece"
        if getattr(args, dest) and getattr(args, piece) is not None:
            raise CommandError(f"{option} and --{piece.replace('_', '-')} contradict each other: give one")
    if args.threads is not None and args.threads < 1:
        raise CommandError(f"--threads must be at least 1, got {args.threads}")
    if args.normalization is not None and args.normalization not in NORMALIZATIONS:
        raise CommandError(
            f"--normalization {args.normalization}: with --model {args.model}, one of {', '.join(NORMALIZATIONS)}"
        )


def _options(args: argparse.Namespace) -> dict[str, Any]:
    """The keywords of train_sentencepiece that the command line set (the others keep its defaults)."""
    options: dict[str, Any] = {kw: getattr(args, dest) for _, dest, kw in _OPTIONS if getattr(args, dest) is not None}
    if args.no_bos:
        options["bos_piece"] = None
    if args.no_eos:
        options["eos_piece"] = None
    if args.normalization is not None:
        options["normalization"] = args.normalization
    if args.alpha != 1.0:
        options["alpha"] = args.alpha
    return options


def _cli_message(message: str, args: argparse.Namespace) -> str:
    """train_sentencepiece's message for a bad value names its keyword: name the option instead."""
    shared = (
        ("--vocab-size", "vocab_size", "vocab_size"),
        ("--normalization", "normalization", "normalization"),
        ("--alpha", "alpha", "alpha"),
    )
    for option, dest, kw in _OPTIONS + shared:
        if message.startswith(kw + " "):
            return _flag(args, option, dest) + message[len(kw) :]
    return message


def run_train(args: argparse.Namespace, sources: Sequence[Any], names: Sequence[str]) -> int:
    from bytepair import train_sentencepiece  # the package's name for it, wherever its module is

    options = _options(args)
    started = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            tok = train_sentencepiece(
                list(sources), vocab_size=args.vocab_size, model_type=MODEL_TYPES[args.model],
                errors=args.errors, progress=args.progress, **options,
            )
        except BytepairError as e:
            raise CommandError(_cli_message(str(e), args)) from None
    trained = time.perf_counter() - started
    for w in caught:
        if "fewer than the" not in str(w.message):  # the summary says it
            warn(str(w.message))
    if args.output.endswith(".json"):
        warn(f"-o {args.output}: the file is a SentencePiece .model (binary), not JSON")
    tok.save(args.output)
    _print_summary(tok, args, names, trained)
    return 0


def _print_summary(tok: Any, args: argparse.Namespace, names: Sequence[str], trained: float) -> None:
    info: dict[str, Any] = tok.training
    err = sys.stderr
    if args.sample:
        from bytepair.cli.train import SAMPLE

        source = f"the sample {SAMPLE}"
    elif args.source:
        source = f"{plural(len(names), 'source')} ({', '.join(names)})"
    elif len(names) <= 3:
        source = ", ".join(names)
    else:
        source = f"{names[0]} and {len(names) - 1:,} more"
    seconds: dict[str, float] = info.get("seconds", {})
    timing = ""
    if "counting" in seconds and "total" in seconds:  # setup: finding the files, building the normalizer's table
        total, counting = seconds["total"], seconds["counting"]
        learning = "EM and pruning" if args.model == "unigram" else "merging"
        timing = (
            f" (setup {duration(max(trained - total, 0.0))}, counting {duration(counting)}, "
            f"{learning} {duration(max(total - counting, 0.0))})"
        )
    print(f"trained {_NAMES[args.model]} on {source} in {duration(trained)}{timing}", file=err)
    line = (
        f"  input            {size_text(info['text_bytes'])}, {info['characters']:,} characters, "
        f"{plural(info['words'], 'word')} ({info['distinct_words']:,} distinct)"
    )
    if info.get("replaced_bytes"):
        line += f", {plural(info['replaced_bytes'], 'bad UTF-8 sequence')} replaced by U+FFFD"
    print(line, file=err)
    sources: list[dict[str, Any]] = info.get("sources") or []
    if len(sources) > 1:
        print(_sources_lines(sources, info.get("alpha", 1.0)), file=err)
    if args.model == "unigram":
        rounds: list[dict[str, Any]] = info.get("rounds", [])
        line = f"  seed pieces      {info['seed_pieces']:,}, {info['required_chars']:,} characters kept"
        if rounds:
            line += f"; {plural(len(rounds), 'round')} of EM and pruning, log-likelihood {rounds[-1]['objective']:.3f} per word"
    kinds: dict[str, int] = {}
    for _, _, kind in tok.pieces():
        kinds[kind] = kinds.get(kind, 0) + 1
    learned = kinds.pop("NORMAL", 0)
    if args.model != "unigram":  # the learned pieces: the merged ones, then the characters kept
        chars = info["required_chars"]
        line = f"  merges           {max(learned - chars, 0):,}, over {chars:,} characters kept"
    print(line, file=err)
    parts = [f"{n:,} {k.lower().replace('_', '-')}" for k, n in kinds.items()]
    print(
        f"  vocab size       {tok.vocab_size:,} = {learned:,} learned pieces"
        + (f" + {' + '.join(parts)}" if parts else ""),
        file=err,
    )
    if tok.vocab_size < args.vocab_size:
        print(
            f"note: the training text gives only {plural(learned, 'piece')}: the model has {tok.vocab_size:,}, "
            f"not the {args.vocab_size:,} asked for. Train on more text, or lower --vocab-size.",
            file=err,
        )
    print(
        f"wrote {args.output}, a SentencePiece model (sentencepiece and bytepair.load read it); "
        f"look inside with: {PROG} show {args.output}",
        file=err,
    )


def _sources_lines(sources: list[dict[str, Any]], alpha: float) -> str:
    """Each source's text size and its weight and share after mixing by --alpha, aligned."""
    names = [str(s.get("name")) for s in sources]
    sizes = [size_text(int(s.get("text_bytes") or 0)) for s in sources]
    weights = [f"{s['weight']:.3f}" for s in sources]
    wn, ws, ww = max(map(len, names)), max(map(len, sizes)), max(map(len, weights))
    lines = [f"  sources          mixed with --alpha {alpha:g}: size of text, weight, share"]
    for s, name, size, weight in zip(sources, names, sizes, weights):
        lines.append(f"    {name.ljust(wn)}  {size.rjust(ws)}  weight {weight.rjust(ww)}  share {s['share']:6.1%}")
    return "\n".join(lines)


def _symbols_arg(value: str) -> list[str]:
    items = value.split(",")
    if any(not s for s in items):
        raise argparse.ArgumentTypeError(f"expected symbols separated by commas, none of them empty, got {value!r}")
    return items


def add_train_options(train: argparse.ArgumentParser) -> None:
    """``bytepair train``'s SentencePiece options (spm_train's, spelled --like-this)."""
    g = train.add_argument_group(
        "SentencePiece options (--model unigram or spm-bpe)",
        "spm_train's flags spelled --like-this, with the same defaults; --max-piece-length is\n"
        "--max_sentencepiece_length, --seed-size --seed_sentencepiece_size, --no-bos --bos_id=-1.\n"
        "--seed-size, --shrinking-factor and --num-sub-iterations are for --model unigram only.",
    )
    g.add_argument("--character-coverage", type=float, metavar="F",
                   help="characters kept: the most frequent, covering this share of the text (default 0.9995)")
    g.add_argument("--max-piece-length", type=int, metavar="N", help="longest piece, in characters (default 16)")
    bool_opt = argparse.BooleanOptionalAction
    g.add_argument("--split-digits", action=bool_opt, default=None, help="each digit a piece of its own (default: no)")
    g.add_argument("--split-by-unicode-script", action=bool_opt, default=None,
                   help="no piece mixes scripts (default: yes)")
    g.add_argument("--split-by-number", action=bool_opt, default=None,
                   help="no piece mixes numbers and letters (default: yes)")
    g.add_argument("--byte-fallback", action=bool_opt, default=None,
                   help="add the 256 <0xNN> byte pieces: unknown characters become bytes, not <unk> (default: no)")
    g.add_argument("--user-defined-symbols", action="extend", type=_symbols_arg, metavar="A,B",
                   help="pieces always cut out of the text whole, comma-separated or repeated")
    g.add_argument("--control-symbols", action="extend", type=_symbols_arg, metavar="A,B",
                   help="pieces with ids that never come from text (e.g. <mask>), comma-separated or repeated")
    g.add_argument("--unk-piece", metavar="P", help="the unknown piece, id 0 (default <unk>)")
    g.add_argument("--bos-piece", metavar="P", help="the beginning-of-sentence piece (default <s>)")
    g.add_argument("--eos-piece", metavar="P", help="the end-of-sentence piece (default </s>)")
    g.add_argument("--pad-piece", metavar="P", help="a padding piece, e.g. <pad> (default: none)")
    g.add_argument("--no-bos", action="store_true", help="no beginning-of-sentence piece")
    g.add_argument("--no-eos", action="store_true", help="no end-of-sentence piece")
    g.add_argument("--add-dummy-prefix", action=bool_opt, default=None,
                   help="add a space before each text, so that a first word is cut as any other (default: yes)")
    g.add_argument("--remove-extra-whitespaces", action=bool_opt, default=None,
                   help="drop leading and trailing spaces and collapse runs of them (default: yes)")
    g.add_argument("--treat-whitespace-as-suffix", action=bool_opt, default=None,
                   help="the space marker ends pieces instead of starting them (default: no)")
    g.add_argument("--seed-size", type=int, metavar="N",
                   help="Unigram only: substrings kept as the seed vocabulary (spm's seed_sentencepiece_size; default 1000000)")
    g.add_argument("--shrinking-factor", type=float, metavar="F",
                   help="Unigram only: share of the pieces kept at each pruning round (default 0.75)")
    g.add_argument("--num-sub-iterations", type=int, metavar="N", help="Unigram only: EM iterations per round (default 2)")
    g.add_argument("--threads", type=int, metavar="N",
                   help="threads (default: all cores; the model does not depend on it)")
