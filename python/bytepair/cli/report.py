"""``bytepair report``: one self-contained interactive HTML page about a tokenizer on a corpus."""

from __future__ import annotations

import argparse
import io
import os
import sys

from bytepair.cli._analysis import corpora, corpus_arg
from bytepair.cli._common import PROG, TOK_HELP, CommandError, Formatter, load_tokenizer
from bytepair.views.report import write_report


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if os.path.isdir(args.output):
        raise CommandError(f"-o {args.output} is a directory; give a file name such as report.html")
    tok = load_tokenizer(args.tokenizer, command="report")
    cs = corpora(args.corpus, text_field=args.text_field)
    sample = None
    if args.sample_text is not None:
        from bytepair._files import open_regular
        from bytepair.errors import CorpusError

        # A FIFO or device is refused, as every input is (open_regular), not read without end.
        with io.TextIOWrapper(open_regular(args.sample_text, CorpusError), encoding="utf-8") as f:
            sample = f.read()
    data = write_report(args.output, tok, cs, sample_text=sample, name=args.tokenizer)
    print(f"wrote {args.output} ({data['largest']:,} sizes of {args.tokenizer} on {data['text_bytes']:,} bytes); open it in a browser", file=sys.stderr)
    return 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = commands.add_parser(
        "report",
        formatter_class=Formatter,
        help="write an interactive HTML page about a tokenizer",
        description="""\
Write one self-contained HTML page (works opened from disk, no network): a
vocabulary-size slider that re-tokenizes a sample text at the chosen size and
moves a point on the compression curve, the Zipf plot, per-source fertility
and a searchable merge table. The corpus is encoded once, at the full size:
smaller sizes are the tokenizer's first merges (BPE vocabularies are nested).
The tokenizer must be a trained one (ids 0-255 are the bytes).""",
        epilog=f"""\
examples:
  {PROG} report -t shakespeare.json tinyshakespeare.txt -o report.html
  {PROG} report -t tok.json en=en.txt zh=zh.txt --sample-text intro.txt -o report.html""",
    )
    p.add_argument("corpus", nargs="+", type=corpus_arg, metavar="CORPUS", help="files, globs or directories, or NAME=PATH sources")
    p.add_argument("-t", "--tokenizer", required=True, metavar="TOK", help=TOK_HELP)
    p.add_argument("-o", "--output", required=True, metavar="REPORT.html", help="where to write the page (required)")
    p.add_argument("--sample-text", metavar="FILE", help="the text shown under the slider (default: the corpus' first 1,200 characters)")
    p.add_argument("--text-field", default="text", metavar="F", help="the text field of .jsonl lines (default: text)")
    p.set_defaults(run=run, subparser=p)
