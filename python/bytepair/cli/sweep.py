"""``bytepair sweep``: compression, coverage and cost at several vocabulary sizes, from one training run."""

from __future__ import annotations

import argparse
import io
import sys
import warnings
from typing import Any

from bytepair.analysis.sweep import alpha_table, sweep
from bytepair.cli._analysis import corpora, corpus_arg, float_list, int_list
from bytepair.cli._common import PROG, CommandError, Formatter, pattern_arg, table, warn

_UNSET = object()


def _words(path: str) -> list[str]:
    from bytepair._files import open_regular
    from bytepair.errors import CorpusError

    # A FIFO or device is refused, as every input is (open_regular), not read without end.
    with io.TextIOWrapper(open_regular(path, CorpusError), encoding="utf-8") as f:
        words = [w.strip() for w in f if w.strip() and not w.startswith("#")]
    if not words:
        raise CommandError(f"--words {path} has no words (one per line; lines starting with # are comments)")
    return words


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    cs = corpora(args.corpus, text_field=args.text_field)
    options: dict[str, Any] = {}
    if args.pattern is not _UNSET:
        options["pattern"] = args.pattern
    out = sys.stdout
    if args.alpha is not None:
        if len(cs) < 2:
            parser.error("--alpha compares mixes of two or more sources: give CORPUS as NAME=PATH, several times")
        rows = [["alpha", "source", "bytes", "share", "tokens/word", "bytes/token"]]
        size = max(args.vocab_sizes)
        for a in alpha_table(cs, args.alpha, vocab_size=size, **options):
            rows.append([f"{a.alpha:g}", a.source, f"{a.text_bytes:,}", f"{100 * a.share:.1f}%", f"{a.tokens_per_word:.3f}", f"{a.bytes_per_token:.3f}"])
        print(f"mixing by alpha at vocabulary size {size:,} (one training run per alpha)", file=out)
        print("\n".join(table(rows, [True, False, True, True, True, True], ["  "] * 5)), file=out)
        return 0
    words = _words(args.words) if args.words else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = sweep(cs, args.vocab_sizes, d_model=args.d_model, words=words, **options)
    for w in caught:
        warn(str(w.message))
    rows = [["vocab size", "bytes/token", "tokens/word", "coverage", "bare", f"embedding V*{args.d_model}", "attention"]]
    data = result.rows()
    for r in data:
        rows.append(
            [
                f"{r['vocab_size']:,}",
                f"{r['bytes_per_token']:.3f}",
                f"{r['tokens_per_word']:.3f}",
                f"{100 * r['coverage']:.1f}%",
                f"{100 * r['coverage_bare']:.1f}%",
                f"{r['embedding_params']:,}",
                f"{r['attention_cost']:.3f}x",
            ]
        )
    print(
        f"{', '.join(c.name for c in cs)}: {result.text_bytes:,} bytes, {result.words:,} words; "
        f"one training run at {max(result.sizes):,}, smaller sizes are its first merges",
        file=out,
    )
    print("\n".join(table(rows, [True] * 7, ["  "] * 6)), file=out)
    print(
        "coverage: share of the word list that is one token with a leading space (inside a sentence), "
        "bare: without it (at the start of a line); attention: cost of "
        "attention over the corpus relative to the smallest size ((tokens/tokens_smallest)^2)",
        file=out,
    )
    if args.plot is not None:
        from bytepair.analysis.plots import plot_sweep

        plot_sweep(data, args.plot, title=f"Vocabulary size sweep on {', '.join(c.name for c in cs)}")
        print(f"wrote {args.plot}", file=sys.stderr)
    return 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = commands.add_parser(
        "sweep",
        formatter_class=Formatter,
        help="measure several vocabulary sizes from one training run",
        description="""\
Train once at the largest vocabulary size and measure every size asked for:
BPE vocabularies are nested (size V = the first V-256 merges of the largest),
so no size is trained again. Per size: compression (bytes/token, tokens/word),
the share of a word list that is a single token (default: the 1,000 most
frequent words of the bundled Shakespeare, public domain; --words FILE for
yours), embedding parameters V*d and the attention cost relative to the
smallest size.

With --alpha and several NAME=PATH sources: train once per alpha and print each
source's share of the mix and its tokens/word (to choose alpha).""",
        epilog=f"""\
examples:
  {PROG} sweep corpus.txt --vocab-sizes 1000,2000,4000,8000,16000 --plot sweep.png
  {PROG} sweep en=en.txt sw=sw.txt --vocab-sizes 8000 --alpha 1,0.5,0.3""",
    )
    p.add_argument("corpus", nargs="+", type=corpus_arg, metavar="CORPUS", help="files, globs or directories, or NAME=PATH sources")
    p.add_argument("--vocab-sizes", type=int_list, required=True, metavar="N,N,...", help="vocabulary sizes, e.g. 1000,2000,4000 (required)")
    p.add_argument("--d-model", type=int, default=768, metavar="D", help="model width for the embedding size V*D (default 768)")
    p.add_argument("--words", metavar="FILE", help="word list for coverage, one word per line (default: the shipped list)")
    p.add_argument("--alpha", type=float_list, metavar="A,A,...", help="mixing exponents to compare, e.g. 1,0.5,0.3 (needs several sources)")
    p.add_argument("--pattern", type=pattern_arg, default=_UNSET, metavar="P", help="split pattern for training (default gpt4)")
    p.add_argument("--plot", metavar="SWEEP.png", help="write the plots (PNG, or SVG for .svg); needs matplotlib (pip install matplotlib)")
    p.add_argument("--text-field", default="text", metavar="F", help="the text field of .jsonl lines (default: text)")
    p.set_defaults(run=run, subparser=p)
