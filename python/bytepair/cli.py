"""The ``bytepair`` command: train, inspect and run tokenizers from the shell.

    bytepair train corpus.txt --vocab-size 32000 -o tok.json
    bytepair train --sample --vocab-size 1000 -o shakespeare.json
    bytepair show tok.json --limit 20
    echo "To be, or not to be" | bytepair encode -t tok.json
    bytepair encode -t tok.json input.txt | bytepair decode -t tok.json

Errors are printed as one line, ``bytepair: error: <message>``, with exit status 1 (2 for
wrong usage); Ctrl-C exits with 130. ``python -m bytepair`` runs the same command.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import importlib.resources
import os
import sys
import time
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, BinaryIO, NoReturn, TextIO

import bytepair
from bytepair._display import pad, token_repr, width
from bytepair._progress import size_text
from bytepair.errors import BytepairError, DisallowedSpecialTokenError, UnknownTokenError, VocabError
from bytepair.tokenizer import Tokenizer
from bytepair.training import sources_table

__all__ = ["main"]

PROG = "bytepair"
SAMPLE = "tinyshakespeare.txt"
SAMPLE_VOCAB_SIZE = 1000
_BLOCK = 1 << 20  # bytes read at a time when streaming input
_TOKEN_COLUMNS = 32  # widest token shown by `show` before it is cut with "…"
_TOK_HELP = "tokenizer file (from `bytepair train`), or a pretrained encoding: gpt2, cl100k_base, o200k_base (required)"


_UNSET_PATTERN = object()  # --pattern not given: gpt4, or the base tokenizer's


class CommandError(Exception):
    """A failure to report as ``bytepair: error: <message>`` (exit status 1)."""


# ---------------------------------------------------------------------------- helpers


def _seconds(s: float) -> str:
    if s < 60:
        return f"{s:.2f} s" if s < 10 else f"{s:.1f} s"
    m, s = divmod(round(s), 60)
    return f"{m}:{s:02d} min" if m < 60 else f"{m // 60}:{m % 60:02d}:{s:02d} h"


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def _encoding_names() -> list[str]:
    try:
        from bytepair.encodings import list_encoding_names
    except ImportError:  # pragma: no cover - a build without the pretrained encodings
        return []
    return list_encoding_names()


def _load(spec: str) -> Tokenizer:
    """A tokenizer file, or the name of a pretrained encoding (``cl100k_base``) when no such file exists."""
    if os.path.isdir(spec):
        raise CommandError(f"{spec} is a directory, not a tokenizer file")
    if not os.path.exists(spec) and spec in _encoding_names():
        from bytepair.encodings import get_encoding

        return get_encoding(spec)
    if not os.path.exists(spec) and os.sep not in spec and not spec.endswith(".json") and _encoding_names():
        raise CommandError(
            f"{spec}: no such tokenizer file, nor a pretrained encoding ({', '.join(_encoding_names())})"
        )
    return Tokenizer.from_file(spec)


@contextlib.contextmanager
def _open_input(path: str | None) -> Iterator[tuple[BinaryIO, str]]:
    """Yields ``(binary stream, name for messages)``; ``None`` or ``"-"`` is stdin."""
    if path is None or path == "-":
        yield sys.stdin.buffer, "<stdin>"
    else:
        if os.path.isdir(path):
            raise CommandError(f"{path} is a directory, not a file")
        with open(path, "rb") as f:
            yield f, path


def _read_text(stream: BinaryIO, name: str) -> Iterator[str]:
    """Decodes UTF-8 in blocks (line endings kept as they are); bad UTF-8 is an error naming the offset."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    offset = 0
    while True:
        block = stream.read(_BLOCK)
        pending = len(decoder.getstate()[0])  # bytes of an incomplete character held from the last block
        try:
            text = decoder.decode(block, final=not block)
        except UnicodeDecodeError as e:
            at = offset - pending + e.start
            raise CommandError(f"{name} is not UTF-8 text (invalid byte at offset {at})") from None
        if text:
            yield text
        if not block:
            return
        offset += len(block)


def _stdout_bytes() -> BinaryIO:
    sys.stdout.flush()
    buffer: BinaryIO | None = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # pragma: no cover - stdout replaced by a text-only stream
        raise CommandError("stdout does not accept bytes")
    return buffer


class _Formatter(argparse.RawDescriptionHelpFormatter):
    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=30)


def _pattern_arg(value: str) -> str | None:
    return None if value.lower() == "none" else value


def _positive(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {value}")
    return n


# ---------------------------------------------------------------------------- train


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


def _cmd_train(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
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
    options: dict[str, Any] = {}
    if args.base is not None:
        options["base"] = _load(args.base)
    if args.pattern is not _UNSET_PATTERN:
        options["pattern"] = args.pattern
    if args.normalization is not None:
        options["normalization"] = args.normalization

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
        started = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tok = bytepair.train(
                sources,
                vocab_size=args.vocab_size,
                special_tokens=args.special,
                reserved_special_tokens=args.reserved_special_tokens,
                min_frequency=args.min_frequency,
                max_token_length=args.max_token_length,
                alpha=args.alpha,
                errors=args.errors,
                progress=args.progress,
                **options,
            )
        trained = time.perf_counter() - started
        for w in caught:
            _warn(str(w.message))
        if args.role:
            tok = tok.with_special_tokens(roles=dict(args.role))
        tok.save(args.output)

    _print_summary(tok, args, names, trained)
    return 0


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
        source = f"{_plural(len(names), 'source')} ({', '.join(names)})"
    elif len(names) <= 3:
        source = ", ".join(names)
    else:
        source = f"{names[0]} and {len(names) - 1:,} more"
    timing = ", ".join(f"{k} {_seconds(v)}" for k, v in seconds.items())
    print(f"trained on {source} in {_seconds(trained)}" + (f" ({timing})" if timing else ""), file=err)
    n_bytes = inputs.get("bytes")
    if n_bytes is not None:
        docs = inputs.get("documents")
        line = f"  input            {size_text(n_bytes)}"
        if docs is not None:
            line += f", {_plural(docs, 'document')}"
        if inputs.get("replaced_bytes"):
            line += f", {_plural(inputs['replaced_bytes'], 'bad UTF-8 sequence')} replaced by U+FFFD"
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
            f"  vocab size       {tok.vocab_size:,} = the base's {base['vocab_size']:,} + {_plural(learned, 'merge')}"
            f" + {_plural(tok.vocab_size - base['vocab_size'] - learned, 'new special token')}",
            file=err,
        )
    else:
        print(
            f"  vocab size       {tok.vocab_size:,} = 256 bytes + {_plural(learned, 'merge')}"
            f" + {_plural(n_special, 'special token')}",
            file=err,
        )
    sources: list[dict[str, Any]] = info.get("sources") or []
    if not args.no_stats:
        text_bytes = sum(int(s.get("text_bytes") or 0) for s in sources)
        tokens = sum(int(s.get("tokens") or 0) for s in sources)
        words = sum(int(s.get("words") or 0) for s in sources)
        if tokens:
            per_word = f", {tokens / words:.2f} tokens/word" if words else ""
            print(
                f"  compression      {text_bytes / tokens:.2f} bytes/token on the training data"
                f" ({text_bytes:,} bytes -> {tokens:,} tokens){per_word}",
                file=err,
            )
        else:
            print("  compression      n/a (the training data is empty)", file=err)
        if len(sources) > 1:
            print("", file=err)
            print(sources_table(tok), file=err)
            print("", file=err)
    if info.get("stopped_early", learned < wanted_merges):
        print(
            f"note: training stopped early: after {_plural(learned, 'merge')} no pair of tokens occurs "
            f"{args.min_frequency} or more times (--min-frequency {args.min_frequency}), so the vocabulary has "
            f"{tok.vocab_size:,} tokens, not the {args.vocab_size:,} asked for. Train on more text, "
            "or lower --vocab-size or --min-frequency.",
            file=err,
        )
    print(f"wrote {args.output}; look inside with: {PROG} show {args.output}", file=err)


def _warn(message: str) -> None:
    print(f"{PROG}: warning: {message}", file=sys.stderr)


# ---------------------------------------------------------------------------- encode / decode


def _cmd_encode(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.text is not None and args.file is not None:
        parser.error("give a FILE or --text, not both")
    tok = _load(args.tokenizer)
    if args.allow_special:
        options: dict[str, Any] = {"allowed_special": "all"}
    elif args.ordinary:
        options = {"disallowed_special": ()}
    else:
        options = {}
    out = sys.stdout
    with contextlib.ExitStack() as stack:
        if args.text is not None:
            texts: Iterable[str] = [args.text]
        else:
            stream, name = stack.enter_context(_open_input(args.file))
            texts = _read_text(stream, name)
        ids = tok.encode_iterable(texts, **options)
        try:
            if args.count:
                out.write(f"{sum(1 for _ in ids)}\n")
            else:
                _write_ids(out, tok, ids, as_tokens=args.tokens)
        except DisallowedSpecialTokenError as e:
            out.flush()
            raise CommandError(_special_hint(e)) from None
    return 0


def _write_ids(out: TextIO, tok: Tokenizer, ids: Iterable[int], *, as_tokens: bool) -> None:
    batch: list[str] = []
    first = True
    for i in ids:
        batch.append(token_repr(tok.token_bytes(i)) if as_tokens else str(i))
        if len(batch) >= 8192:
            out.write(("" if first else " ") + " ".join(batch))
            first = False
            batch = []
    out.write(("" if first or not batch else " ") + " ".join(batch) + "\n")


def _special_hint(e: DisallowedSpecialTokenError) -> str:
    what = getattr(e, "token", None)
    if isinstance(what, str):
        found = f"the input contains the special token {what!r}"
    else:
        # the library's message also names its keyword arguments; keep its first sentence only.
        found = str(e).split(". ")[0].replace("the text contains", "the input contains")
    return f"{found}; pass --allow-special to encode special tokens as their ids, or --ordinary to encode them as text"


def _parse_ids(stream: BinaryIO, name: str) -> Iterator[list[int]]:
    """Token ids separated by whitespace or commas (``[1, 2, 3]`` works too), in batches."""
    rest = b""
    while True:
        block = stream.read(_BLOCK)
        data = rest + block
        words = data.replace(b",", b" ").replace(b"[", b" ").replace(b"]", b" ").split()
        if block and words and not data[-1:].isspace() and data[-1:] not in (b",", b"[", b"]"):
            rest = words.pop()  # may continue in the next block
        else:
            rest = b""
        ids = []
        for w in words:
            if not w.isdigit():
                shown = w.decode("utf-8", "replace")
                raise CommandError(f"{name}: {shown[:40]!r} is not a token id (expected whole numbers >= 0)")
            ids.append(int(w))
        if ids:
            yield ids
        if not block:
            return


def _cmd_decode(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    tok = _load(args.tokenizer)
    with _open_input(args.file) as (stream, name):
        batches = _parse_ids(stream, name)
        out = _stdout_bytes()
        # Raw bytes: a token that ends inside a UTF-8 character is written as it is, so
        # `encode | decode` gives back the input byte for byte.
        for ids in batches:
            try:
                out.write(tok.decode_bytes(ids))
            except UnknownTokenError as e:
                raise CommandError(f"{name}: {e} (were the ids made with another tokenizer?)") from None
        out.flush()
    return 0


# ---------------------------------------------------------------------------- show


def _pattern_label(tok: Tokenizer) -> str:
    if tok.pattern_name is not None:
        return tok.pattern_name
    if tok.pattern is None:
        return "none (the whole text is one piece)"
    regex = tok.pattern.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    regex = regex if len(regex) <= 70 else regex[:69] + "…"
    return f"custom: {regex}"


def _training_lines(info: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    inputs = info.get("input")
    if isinstance(inputs, dict):
        parts = []
        files = inputs.get("files")
        if isinstance(files, list) and files:
            shown = ", ".join(str(f) for f in files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
            parts.append(shown)
        if isinstance(inputs.get("bytes"), int):
            parts.append(size_text(inputs["bytes"]))
        if isinstance(inputs.get("documents"), int):
            parts.append(_plural(inputs["documents"], "document"))
        if isinstance(info.get("distinct_pieces"), int):
            parts.append(_plural(info["distinct_pieces"], "distinct piece"))
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
    if isinstance(seconds, dict) and all(isinstance(v, (int, float)) for v in seconds.values()):
        opts.append("in " + _seconds(sum(seconds.values())))
    if info.get("bytepair_version"):
        opts.append(f"bytepair {info['bytepair_version']}")
    if opts:
        lines.append("training        " + ", ".join(opts))
    base = info.get("base")
    if isinstance(base, dict) and isinstance(base.get("vocab_size"), int):
        lines.append(
            f"continued from  a base of {base['vocab_size']:,} tokens and {base.get('merges', 0):,} merges, kept as they were"
        )
    return lines


def _table(rows: list[list[str]], right: Sequence[bool], gaps: Sequence[str]) -> list[str]:
    widths = [max(width(r[c]) for r in rows) for c in range(len(rows[0]))]
    out = []
    for r in rows:
        cells = [pad(cell, widths[c], right=right[c]) for c, cell in enumerate(r)]
        line = cells[0]
        for gap, cell in zip(gaps, cells[1:], strict=False):
            line += gap + cell
        out.append(line.rstrip())
    return out


def _cmd_show(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    tok = _load(args.tokenizer)
    limit = 0 if args.all else args.limit
    try:
        merges: list[tuple[bytes, bytes]] | None = tok.merges
    except VocabError:
        merges = None
    vocab = tok.vocab
    specials = tok.special_tokens
    pretrained = not os.path.exists(args.tokenizer)
    lines = [f"{args.tokenizer} (pretrained encoding, same ids as tiktoken)" if pretrained else args.tokenizer]
    if merges is not None:
        lines.append("model           byte-level BPE (merge list)")
        extra = len(vocab) - 256 - len(merges)
        size = f"{tok.vocab_size:,} = 256 bytes + {_plural(len(merges), 'merge')}"
        if extra:
            size += f" + {extra:,} other tokens"
    else:
        lines.append("model           byte-level BPE (token ranks, as tiktoken)")
        size = f"{tok.vocab_size:,} = {len(vocab):,} ranked tokens"
    n_new_specials = tok.vocab_size - len(vocab)
    size += f" + {_plural(n_new_specials, 'special token')}"
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
    sources = tok.training.get("sources")
    if isinstance(sources, list) and len(sources) > 1:
        lines.append("sources (alpha {}):".format(tok.training.get("alpha", 1.0)))
        lines.extend("  " + line for line in sources_table(tok).splitlines())
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
                _table(rows, [True, True, False, False, False, False, False], ["  ", "  ", " ", " ", " ", " "])
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
        lines.extend(_table(rows, [True, False, False], ["  ", "  "]))
    if shown_n < total:
        lines.append(f"... {total - shown_n:,} more {what}; see them with --limit N or --all")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


# ---------------------------------------------------------------------------- parser


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        formatter_class=_Formatter,
        description="Train, inspect and run byte-level BPE tokenizers.",
        epilog=f"""\
examples:
  {PROG} train --sample --vocab-size 1000 -o shakespeare.json
  {PROG} show shakespeare.json --limit 20
  echo "To be, or not to be" | {PROG} encode -t shakespeare.json
  {PROG} encode -t shakespeare.json play.txt | {PROG} decode -t shakespeare.json

Run `{PROG} COMMAND --help` for the options of each command.""",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {bytepair.__version__}")
    commands = parser.add_subparsers(title="commands", dest="command", metavar="COMMAND")

    train = commands.add_parser(
        "train",
        formatter_class=_Formatter,
        help="train a tokenizer on text files",
        description="""\
Train a byte-level BPE tokenizer and write it to one JSON file.

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
  {PROG} train --sample --vocab-size 1000 -o shakespeare.json   # the bundled Shakespeare sample""",
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
        "-o", "--output", required=True, metavar="TOK.json", help="where to write the tokenizer (required)"
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
        type=_pattern_arg,
        default=_UNSET_PATTERN,
        metavar="P",
        help="split pattern: gpt2, gpt4 (default, or the base's), o200k, none (no splitting) or a custom regex",
    )
    train.add_argument(
        "--normalization",
        metavar="N",
        help="nfc, nfkc, lowercase, or steps joined by + (e.g. nfkc+lowercase); applied again at encode time",
    )
    train.add_argument(
        "--special",
        action="append",
        default=[],
        metavar="TOK",
        help="a special token, e.g. '<|endoftext|>' (repeat for more); its text in the files separates documents",
    )
    train.add_argument(
        "--reserved-special-tokens",
        type=_positive,
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
    train.set_defaults(run=_cmd_train, subparser=train)

    encode = commands.add_parser(
        "encode",
        formatter_class=_Formatter,
        help="encode text to token ids",
        description="""\
Encode text to token ids and print them on one line, separated by spaces.

The whole input is encoded as one text (newlines included, so
`encode | decode` gives back the input byte for byte). The input is read from
FILE, or from stdin when FILE is - or missing, and must be UTF-8. Special-token
text in the input is an error unless --allow-special or --ordinary is given.""",
        epilog=f"""\
examples:
  echo "To be, or not to be" | {PROG} encode -t shakespeare.json
  {PROG} encode -t tok.json --text "hello world" --tokens    # show the tokens, not ids
  {PROG} encode -t cl100k_base corpus.txt --count            # count tokens as GPT-4 does
  {PROG} encode -t tok.json --allow-special chat.txt > ids.txt""",
    )
    encode.add_argument("file", nargs="?", metavar="FILE", help="input text file (default: stdin)")
    encode.add_argument("-t", "--tokenizer", required=True, metavar="TOK", help=_TOK_HELP)
    encode.add_argument("--text", metavar="TEXT", help="encode TEXT instead of reading a file")
    special = encode.add_mutually_exclusive_group()
    special.add_argument(
        "--allow-special", action="store_true", help="encode special-token text as the special tokens' ids"
    )
    special.add_argument("--ordinary", action="store_true", help="encode special-token text as ordinary text")
    output = encode.add_mutually_exclusive_group()
    output.add_argument("--count", action="store_true", help="print only the number of tokens")
    output.add_argument("--tokens", action="store_true", help="print each token's text, quoted, instead of its id")
    encode.set_defaults(run=_cmd_encode, subparser=encode)

    decode = commands.add_parser(
        "decode",
        formatter_class=_Formatter,
        help="decode token ids to text",
        description="""\
Decode token ids to text. Ids are read from FILE (or stdin when FILE is - or
missing), separated by whitespace or commas (so [1, 2, 3] works too). The
tokens' bytes are written to stdout exactly, with no newline added.""",
        epilog=f"""\
examples:
  echo 405 308 44 533 325 291 308 | {PROG} decode -t shakespeare.json
  {PROG} encode -t tok.json in.txt | {PROG} decode -t tok.json > out.txt   # out.txt == in.txt""",
    )
    decode.add_argument("file", nargs="?", metavar="FILE", help="file of token ids (default: stdin)")
    decode.add_argument("-t", "--tokenizer", required=True, metavar="TOK", help=_TOK_HELP)
    decode.set_defaults(run=_cmd_decode, subparser=decode)

    show = commands.add_parser(
        "show",
        formatter_class=_Formatter,
        help="describe a tokenizer and list its merges",
        description="""\
Describe a tokenizer (vocab size, split pattern, special tokens, how it was
trained) and list its merges in the order they were learned:

  rank   id  token    left   right
    12  268  ' the' = ' t' + 'he'

Tokens are quoted like Python strings: invisible characters are escaped (\\n,
\\u00a0), and bytes that are not whole UTF-8 characters are shown as \\xNN.
Tokenizers without a merge list (tiktoken's rank model) list tokens by id.""",
        epilog=f"""\
examples:
  {PROG} show shakespeare.json             # the first 50 merges
  {PROG} show shakespeare.json --limit 20
  {PROG} show tok.json --all | less        # every merge
  {PROG} show tok.json --tokens            # the vocabulary by id
  {PROG} show o200k_base --limit 300       # GPT-4o's tokens (pretrained encodings have no merge list)""",
    )
    show.add_argument(
        "tokenizer", metavar="TOK", help="tokenizer file, or a pretrained encoding name (cl100k_base, ...)"
    )
    show.add_argument(
        "--limit", type=_positive, default=50, metavar="N", help="list the first N merges (or tokens) (default 50; 0 = all)"
    )
    show.add_argument("--all", action="store_true", help="list them all (same as --limit 0)")
    show.add_argument("--tokens", action="store_true", help="list the vocabulary by id instead of the merges")
    show.set_defaults(run=_cmd_show, subparser=show)
    return parser


# ---------------------------------------------------------------------------- main


def _error_message(e: BaseException) -> str:
    if isinstance(e, OSError) and e.strerror and e.filename is not None:
        return f"{e.filename}: {e.strerror[:1].lower()}{e.strerror[1:]}"
    message = str(e) or type(e).__name__
    return " ".join(message.split("\n")) if "\n" in message else message


def _fail(message: str) -> int:
    sys.stdout.flush()
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the ``bytepair`` command with ``argv`` (default: ``sys.argv[1:]``); returns the exit status."""
    parser = _parser()
    args_list = list(sys.argv[1:] if argv is None else argv)
    if not args_list:
        parser.print_help()
        return 0
    try:
        args = parser.parse_args(args_list)
    except SystemExit as e:  # --help, --version, usage errors
        return e.code if isinstance(e.code, int) else 0 if e.code is None else 2
    if args.command is None:
        parser.print_help()
        return 0
    try:
        status: int = args.run(args, args.subparser)
        return status
    except SystemExit as e:  # parser.error() inside a command
        return e.code if isinstance(e.code, int) else 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`bytepair encode ... | head`): stop quietly, as SIGPIPE would.
        with contextlib.suppress(OSError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return 141
    except CommandError as e:
        return _fail(str(e))
    except (BytepairError, ValueError, OSError) as e:
        return _fail(_error_message(e))


def _exit() -> NoReturn:  # pragma: no cover - `python -m bytepair.cli`
    raise SystemExit(main())


if __name__ == "__main__":  # pragma: no cover
    _exit()
