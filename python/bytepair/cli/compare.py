"""``bytepair compare``: several tokenizers over per-language or per-domain corpora."""

from __future__ import annotations

import argparse
import sys

from bytepair.analysis.compare import CompareRow, compare
from bytepair.analysis.words import WORD_DEFINITION
from bytepair.cli._analysis import corpora
from bytepair.cli._common import PROG, Formatter, load_model, table
from bytepair.cli.train import _source_arg

METRICS = {"fertility": "tokens/word", "split": "words split (%)", "bytes_per_token": "bytes/token", "parity": "parity (tokens / reference)"}


def _metric(r: CompareRow, metric: str) -> float:
    if metric == "fertility":
        return r.fertility
    if metric == "split":
        return 100 * r.split_share
    if metric == "bytes_per_token":
        return r.bytes_per_token
    return float("nan") if r.parity is None else r.parity


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if not args.corpus:
        parser.error("give the corpora as --corpus NAME=PATH (repeat for each language or domain)")
    if args.reference is not None and not args.parallel:
        parser.error("--reference needs --parallel (parity is measured on translations of one text)")
    if args.metric == "parity" and not args.parallel:
        parser.error("--metric parity needs --parallel")
    cs = corpora(args.corpus, text_field=args.text_field)
    toks = [(spec, load_model(spec)) for spec in args.tokenizers]  # BPE, WordPiece or SentencePiece, mixed
    result = compare(toks, cs, parallel=args.parallel, reference=args.reference, progress=args.progress)
    head = ["tokenizer", "corpus", "tokens", "words", "tokens/word", "split", "bytes/token"]
    if args.parallel:
        head.append(f"parity vs {result.reference}")
    rows = [head]
    for r in result.rows:
        row = [r.tokenizer, r.corpus, f"{r.tokens:,}", f"{r.words:,}", f"{r.fertility:.3f}", f"{100 * r.split_share:.1f}%", f"{r.bytes_per_token:.3f}"]
        if args.parallel:
            row.append(f"{r.parity:.3f}")
        rows.append(row)
    out = sys.stdout
    print("\n".join(table(rows, [False, False] + [True] * (len(head) - 2), ["  "] * (len(head) - 1))), file=out)
    what = "token counts on parallel text" if args.parallel else "fertility"
    print("\nGini across corpora (" + what + "; 0 = equal): " + ", ".join(f"{t} {g:.3f}" for t, g in result.gini.items()), file=out)
    print(f"words: {WORD_DEFINITION}; split: share of words cut by a token boundary", file=out)
    if args.plot is not None:
        from bytepair.analysis.plots import plot_compare

        data: dict[str, dict[str, float]] = {}
        for r in result.rows:
            data.setdefault(r.tokenizer, {})[r.corpus] = _metric(r, args.metric)
        plot_compare(data, METRICS[args.metric], args.plot, title=f"{METRICS[args.metric]} by corpus")
        print(f"wrote {args.plot}", file=sys.stderr)
    return 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = commands.add_parser(
        "compare",
        formatter_class=Formatter,
        help="compare tokenizers across languages (fertility, parity)",
        description=f"""\
Measure tokenizers (files: byte-level BPE, WordPiece, SentencePiece .model
files too; or gpt2, cl100k_base, o200k_base) on named corpora:
fertility (tokens/word), the share of words split into two or more tokens,
bytes/token, and with --parallel (the corpora are translations of the same
text) parity: tokens of each corpus / tokens of the reference (Petrov et al.
2023). The Gini coefficient across corpora sums up how unequal the costs are.

Words: {WORD_DEFINITION}.""",
        epilog=f"""\
examples:
  {PROG} compare tok.json cl100k_base --corpus code=src/ --corpus prose=books/
  {PROG} compare gpt2 cl100k_base o200k_base --parallel --reference en \\
      --corpus en=en.txt --corpus sw=sw.txt --corpus zh=zh.txt --metric parity --plot parity.png""",
    )
    p.add_argument("tokenizers", nargs="+", metavar="TOK", help="tokenizer files (a SentencePiece .model too) or pretrained names")
    p.add_argument("--corpus", action="append", default=[], type=_source_arg, metavar="NAME=PATH", help="a named corpus (repeat)")
    p.add_argument("--parallel", action="store_true", help="the corpora are translations of one text: measure parity")
    p.add_argument("--reference", metavar="NAME", help="the reference corpus for parity (default: the first)")
    p.add_argument("--plot", metavar="BARS.png", help="write a bar chart of --metric (needs matplotlib: pip install matplotlib)")
    p.add_argument("--metric", choices=list(METRICS), default="fertility", help="what --plot draws (default fertility)")
    p.add_argument("--text-field", default="text", metavar="F", help="the text field of .jsonl lines (default: text)")
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar on stderr (default: only when stderr is a terminal)",
    )
    p.set_defaults(run=run, subparser=p)
