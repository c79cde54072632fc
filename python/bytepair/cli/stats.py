"""``bytepair stats``: byte and pair frequencies of a corpus; with a tokenizer, token frequencies and Zipf."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator

from bytepair._display import token_repr
from bytepair.analysis.corpus import Corpus
from bytepair.analysis.stats import byte_stats, token_stats
from bytepair.cli._analysis import corpora, corpus_arg
from bytepair.cli._common import PROG, Formatter, load_model, plural, table
from bytepair.tokenizer import Tokenizer
from bytepair.wordpiece import WordPieceTokenizer


def _documents(cs: list[Corpus]) -> Iterator[str]:
    for c in cs:
        yield from c.documents()


def _pct(x: float) -> str:
    return f"{100 * x:.2f}%"


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    cs = corpora(args.corpus, text_field=args.text_field)
    if args.plot is not None and args.tokenizer is None:
        parser.error("--plot draws the Zipf plot of tokens: give a tokenizer with -t")
    # loaded first: a tokenizer it cannot use is an error before any output
    tok = None if args.tokenizer is None else load_model(args.tokenizer)  # BPE, WordPiece or SentencePiece
    out = sys.stdout
    bs = byte_stats(_documents(cs))
    print(f"{bs.total_bytes:,} bytes in {plural(bs.documents, 'document')}", file=out)
    print("\nmost frequent bytes (share of all bytes)", file=out)
    rows = [["rank", "byte", "count", "share"]]
    for r, (b, c, s) in enumerate(bs.top_bytes(args.top), 1):
        rows.append([str(r), token_repr(bytes([b])), f"{c:,}", _pct(s)])
    print("\n".join(table(rows, [True, False, True, True], ["  "] * 3)), file=out)
    print("\nmost frequent adjacent byte pairs (share of all pairs)", file=out)
    rows = [["rank", "pair", "count", "share"]]
    for r, ((a, b), c, s) in enumerate(bs.top_pairs(args.top), 1):
        rows.append([str(r), token_repr(bytes([a, b])), f"{c:,}", _pct(s)])
    print("\n".join(table(rows, [True, False, True, True], ["  "] * 3)), file=out)
    if tok is None:
        return 0
    ts = token_stats(tok, _documents(cs))
    print(f"\n{args.tokenizer}: {ts.total:,} tokens, {ts.text_bytes / ts.total if ts.total else 0:.3f} bytes/token", file=out)
    rows = [["rank", "id", "token", "count", "share"]]
    for r, (i, c, s) in enumerate(ts.top(args.top), 1):
        if isinstance(tok, Tokenizer):
            shown = token_repr(tok.token_bytes(i), max_width=40)
        elif isinstance(tok, WordPieceTokenizer):
            shown = repr(tok.id_to_token(i))
        else:  # a SentencePiece piece, quoted as `show` and `encode --tokens` show it ('▁the', '<0x0A>')
            shown = token_repr((tok.id_to_token(i) or "").encode("utf-8", "surrogatepass"), max_width=40)
        rows.append([str(r), str(i), shown, f"{c:,}", _pct(s)])
    print("\n".join(table(rows, [True, True, False, True, True], ["  "] * 4)), file=out)
    print(f"\ntop 100 tokens' share of all tokens   {_pct(ts.top_share(100))}", file=out)
    print(
        f"vocabulary seen in < 0.01% of documents  {_pct(ts.rare_share())} "
        f"({plural(ts.documents, 'document')}; never-seen tokens included)",
        file=out,
    )
    if ts.total and (ts.counts > 0).sum() >= 2:
        ranks, freqs, slope, intercept = ts.zipf()
        print(f"Zipf slope (log-log fit of frequency on rank)  {slope:.3f}", file=out)
        if args.plot is not None:
            from bytepair.analysis.plots import plot_zipf

            plot_zipf(ranks.tolist(), freqs.tolist(), slope, intercept, args.plot, title=f"Zipf: {args.tokenizer} on {', '.join(c.name for c in cs)}")
            print(f"wrote {args.plot}", file=sys.stderr)
    return 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = commands.add_parser(
        "stats",
        formatter_class=Formatter,
        help="byte, pair and token frequencies of a corpus; Zipf plot",
        description="""\
Count what a corpus is made of: the most frequent bytes and adjacent byte
pairs (within documents), each with its share. With a tokenizer (-t): the most
frequent tokens, the share of all tokens taken by the top 100, the share of
the vocabulary seen in fewer than 0.01% of the documents, and the slope of a
log-log fit of token frequency on rank (Zipf; --plot draws it).""",
        epilog=f"""\
examples:
  {PROG} stats corpus.txt
  {PROG} stats 'data/*.jsonl' -t tok.json --top 30 --plot zipf.png""",
    )
    p.add_argument("corpus", nargs="+", type=corpus_arg, metavar="CORPUS", help="files, globs or directories (or NAME=PATH)")
    p.add_argument(
        "-t", "--tokenizer", metavar="TOK",
        help="also count tokens of this tokenizer (file, a SentencePiece .model too, or pretrained name)",
    )
    p.add_argument("--top", type=int, default=20, metavar="N", help="rows in each table (default 20)")
    p.add_argument("--plot", metavar="ZIPF.png", help="write the Zipf plot (PNG, or SVG for .svg); needs matplotlib (pip install matplotlib)")
    p.add_argument("--text-field", default="text", metavar="F", help="the text field of .jsonl lines (default: text)")
    p.set_defaults(run=run, subparser=p)


