"""``bytepair show``: describe a tokenizer and list its merges (or its tokens)."""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import Any

from bytepair._display import token_repr
from bytepair._progress import size_text
from bytepair.cli._common import PROG, Formatter, duration, load_model, plural, positive, table
from bytepair.sentencepiece import SentencePieceTokenizer
from bytepair.tokenizer import Tokenizer
from bytepair.training import sources_table
from bytepair.wordpiece import WordPieceTokenizer

_TOKEN_COLUMNS = 32  # widest token shown by `show` before it is cut with "…"


def _pattern_label(tok: Tokenizer) -> str:
    if tok.pattern_name is not None:
        return tok.pattern_name
    if tok.pattern is None:
        return "none (the whole text is one piece)"
    regex = tok.pattern.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    regex = regex if len(regex) <= 70 else regex[:69] + "…"
    return f"custom: {regex}"


def _count(value: Any) -> int | None:
    """A count from a tokenizer file's ``training`` record, or None: the record is the file's,
    untrusted (a string, a list, a number too large for a float, ...)."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63:
        return value
    return None


def _number(value: Any) -> float | None:
    """A finite number from the ``training`` record (``Infinity`` and ``NaN`` are JSON to Python), or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        x = float(value)
    except OverflowError:  # an int beyond any float
        return None
    return x if math.isfinite(x) else None


def _sources(info: dict[str, Any]) -> list[dict[str, Any]]:
    """The record's per-source entries with what ``sources_table`` reads checked: entries that
    are not objects dropped, values of the wrong type left out (shown as "-")."""
    sources = info.get("sources")
    out: list[dict[str, Any]] = []
    for s in sources if isinstance(sources, list) else []:
        if not isinstance(s, dict):
            continue
        entry: dict[str, Any] = {"name": str(s.get("name")), "documents": _count(s.get("documents")) or 0}
        for key in ("files", "bytes", "replaced_bytes"):
            if (n := _count(s.get(key))) is not None:
                entry[key] = n
        for key in ("weight", "share", "bytes_per_token", "tokens_per_word"):
            entry[key] = _number(s.get(key))
        out.append(entry)
    return out


def _training_lines(info: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    inputs = info.get("input")
    if isinstance(inputs, dict):
        parts = []
        files = inputs.get("files")
        if isinstance(files, list) and files:
            shown = ", ".join(str(f) for f in files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
            parts.append(shown)
        if (n := _count(inputs.get("bytes"))) is not None:
            parts.append(size_text(n))
        if (n := _count(inputs.get("documents"))) is not None:
            parts.append(plural(n, "document"))
        if (n := _count(info.get("distinct_pieces"))) is not None:
            parts.append(plural(n, "distinct piece"))
        if parts:
            lines.append("trained on      " + ", ".join(parts))
    opts = []
    if isinstance(info.get("vocab_size"), int):
        opts.append(f"asked for vocab size {info['vocab_size']:,}")
    if isinstance(info.get("min_frequency"), int):
        opts.append(f"min frequency {info['min_frequency']}")
    if isinstance(info.get("merges_learned"), int):
        opts.append(f"{info['merges_learned']:,} merges learned")
    if isinstance(info.get("max_token_length"), int):
        opts.append(f"max token length {info['max_token_length']} bytes")
    if info.get("stopped_early"):
        opts.append("stopped early (no pair reached the min frequency)")
    seconds = info.get("seconds")
    if isinstance(seconds, dict):
        times = [_number(v) for v in seconds.values()]
        total = sum(t for t in times if t is not None)
        if None not in times and 0 <= total < 1e12:  # duration() rounds: no inf, NaN or 10**400
            opts.append("in " + duration(total))
    if info.get("bytepair_version"):
        opts.append(f"bytepair {info['bytepair_version']}")
    if opts:
        lines.append("training        " + ", ".join(opts))
    base = info.get("base")
    if isinstance(base, dict) and (base_size := _count(base.get("vocab_size"))) is not None:
        lines.append(
            f"continued from  a base of {base_size:,} tokens and {_count(base.get('merges')) or 0:,} merges, kept as they were"
        )
    return lines


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    tok = load_model(args.tokenizer)
    if isinstance(tok, WordPieceTokenizer):
        from bytepair.cli import _wordpiece

        return _wordpiece.run_show(args, tok)
    if isinstance(tok, SentencePieceTokenizer):
        from bytepair.cli import _spm

        return _spm.run_show(args, tok)
    limit = 0 if args.all else args.limit
    if args.residues:
        return _show_residues(args.tokenizer, tok, limit)
    # A rank model (tiktoken) is shown by its ranks; tok.merges would give its recovered merges.
    merges: list[tuple[bytes, bytes]] | None = tok.merges if tok._merges is not None else None
    vocab = tok.vocab
    specials = tok.special_tokens
    pretrained = not os.path.exists(args.tokenizer)
    lines = [f"{args.tokenizer} (pretrained encoding, same ids as tiktoken)" if pretrained else args.tokenizer]
    if merges is not None:
        lines.append("model           byte-level BPE (merge list)")
        extra = len(vocab) - 256 - len(merges)
        size = f"{tok.vocab_size:,} = 256 bytes + {plural(len(merges), 'merge')}"
        if extra:
            size += f" + {extra:,} other tokens"
    else:
        lines.append("model           byte-level BPE (token ranks, as tiktoken)")
        size = f"{tok.vocab_size:,} = {len(vocab):,} ranked tokens"
    n_new_specials = tok.vocab_size - len(vocab)
    size += f" + {plural(n_new_specials, 'special token')}"
    lines.append(f"vocab size      {size}")
    lines.append(f"pattern         {_pattern_label(tok)}")
    if tok.normalization is not None:
        lines.append(f"normalization   {tok.normalization} (applied before encoding)")
    reserved = set(tok.reserved_special_tokens)
    named = {t: i for t, i in specials.items() if t not in reserved}
    if named:
        shown = ", ".join(f"{t!r} = {i}" for t, i in sorted(named.items(), key=lambda kv: kv[1]))
        lines.append(f"special tokens  {shown}")
    elif not reserved:
        lines.append("special tokens  none")
    if reserved:
        slots = sorted(specials[t] for t in reserved)
        if len(slots) == 1:
            span = str(slots[0])
        elif slots[-1] - slots[0] == len(slots) - 1:
            span = f"{slots[0]}-{slots[-1]}"
        else:
            span = ", ".join(map(str, slots))
        lines.append(
            f"reserved slots  {len(slots):,} unclaimed (ids {span}); claim them with Tokenizer.with_special_tokens"
        )
    if tok.special_tokens_map:
        lines.append("roles           " + ", ".join(f"{r} = {t!r}" for r, t in tok.special_tokens_map.items()))
    lines.extend(_training_lines(tok.training))
    sources = _sources(tok.training)
    if len(sources) > 1:
        alpha = tok.training.get("alpha", 1.0)
        lines.append(f"sources (alpha {alpha if _number(alpha) is not None else '?'}):")
        lines.extend("  " + line for line in sources_table({"sources": sources}).splitlines())
    lines.append("")

    if merges is not None and not args.tokens:
        ids = {b: i for i, b in vocab.items()}
        total = len(merges)
        shown_n = total if limit == 0 else min(limit, total)
        rows = [["rank", "id", "token", "", "left", "", "right"]]
        for rank, (a, b) in enumerate(merges[:shown_n]):
            rows.append(
                [
                    str(rank),
                    str(ids.get(a + b, "?")),
                    token_repr(a + b, _TOKEN_COLUMNS),
                    "=",
                    token_repr(a, _TOKEN_COLUMNS),
                    "+",
                    token_repr(b, _TOKEN_COLUMNS),
                ]
            )
        what = "merges"
        if total:
            lines.append(
                f"merges {'(all)' if shown_n == total else f'0-{shown_n - 1} of {total:,}'}, in the order learned:"
            )
            lines.extend(
                table(rows, [True, True, False, False, False, False, False], ["  ", "  ", " ", " ", " ", " "])
            )
        else:
            lines.append("no merges: this tokenizer has only the 256 byte tokens")
    else:
        entries = sorted(vocab.items()) + [
            (i, t.encode("utf-8")) for t, i in sorted(specials.items(), key=lambda kv: kv[1]) if i not in vocab
        ]
        special_ids = set(specials.values())
        total = len(entries)
        shown_n = total if limit == 0 else min(limit, total)
        rows = [["id", "token", ""]]
        for i, b in entries[:shown_n]:
            rows.append([str(i), token_repr(b, _TOKEN_COLUMNS * 2), "(special)" if i in special_ids else ""])
        what = "tokens"
        lines.append(f"tokens {'(all)' if shown_n == total else f'{shown_n:,} of {total:,}'}, by id:")
        lines.extend(table(rows, [True, False, False], ["  ", "  "]))
    if shown_n < total:
        lines.append(f"... {total - shown_n:,} more {what}; see them with --limit N or --all")
    sys.stdout.write("\n".join(_printable(line) for line in lines) + "\n")
    return 0


def _show_residues(name: str, tok: Tokenizer, limit: int) -> int:
    """``show --residues``: the tokens no text encodes to (bytepair.surgery.residues)."""
    from bytepair.surgery import residues

    found = residues(tok)
    ids = found.ids
    lines = [
        f"{name}: {plural(len(ids), 'residue')} (tokens no text encodes to, proven), "
        f"{len(found.witness):,} tokens seen in a text, {len(found.undecided):,} undecided"
    ]
    reasons = {"not-utf8": "bytes no UTF-8 text has", "unmade": "the merges never make it"}
    rows = [["id", "token", "why"]]
    shown = ids if limit == 0 else ids[:limit]
    for i in shown:
        rows.append([str(i), token_repr(tok.decode_single_token_bytes(i), _TOKEN_COLUMNS), reasons[found.proven[i]]])
    if ids:
        lines.extend(table(rows, [True, False, False], ["  ", "  "]))
    if len(shown) < len(ids):
        lines.append(f"... {len(ids) - len(shown):,} more; see them with --limit N or --all")
    if found.undecided:
        some = ", ".join(token_repr(tok.decode_single_token_bytes(i), _TOKEN_COLUMNS) for i in found.undecided[:10])
        lines.append(f"undecided (neither proven nor seen): {some}" + (" ..." if len(found.undecided) > 10 else ""))
    sys.stdout.write("\n".join(_printable(line) for line in lines) + "\n")
    return 0


def _printable(line: str) -> str:
    """``line`` with every character a terminal would act on (escape sequences, bell, line
    breaks, bidi controls...) shown as an escape: a tokenizer file is untrusted input."""
    if line.isprintable():
        return line
    return "".join(
        c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}"
        for c in line
    )


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    show = commands.add_parser(
        "show",
        formatter_class=Formatter,
        help="describe a tokenizer and list its merges",
        description="""\
Describe a tokenizer (vocab size, split pattern, special tokens, how it was
trained) and list its merges in the order they were learned:

  rank   id  token    left   right
    12  268  ' the' = ' t' + 'he'

Tokens are quoted like Python strings: invisible characters are escaped (\\n,
\\u00a0), and bytes that are not whole UTF-8 characters are shown as \\xNN.
Tokenizers without a merge list (tiktoken's rank model) list tokens by id.
A SentencePiece model (.model) shows its type, normalization and special
pieces, and lists its pieces by id with their scores and types.""",
        epilog=f"""\
examples:
  {PROG} show shakespeare.json             # the first 50 merges
  {PROG} show shakespeare.json --limit 20
  {PROG} show tok.json --all | less        # every merge
  {PROG} show tok.json --tokens            # the vocabulary by id
  {PROG} show gpt2 --residues              # tokens no text encodes to
  {PROG} show o200k_base --limit 300       # GPT-4o's tokens (pretrained encodings have no merge list)
  {PROG} show tok.model                    # a SentencePiece model's pieces, scores and types""",
    )
    show.add_argument(
        "tokenizer", metavar="TOK", help="tokenizer file (a SentencePiece .model too), or a pretrained encoding name (cl100k_base, ...)"
    )
    show.add_argument(
        "--limit", type=positive, default=50, metavar="N", help="list the first N merges (or tokens) (default 50; 0 = all)"
    )
    show.add_argument("--all", action="store_true", help="list them all (same as --limit 0)")
    show.add_argument("--tokens", action="store_true", help="list the vocabulary by id instead of the merges")
    show.add_argument(
        "--residues", action="store_true", help="list the tokens no text encodes to (proven from the merges; `prune --drop-residues`)"
    )
    show.set_defaults(run=run, subparser=show)


# ---------------------------------------------------------------------------- main
