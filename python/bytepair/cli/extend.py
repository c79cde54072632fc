"""``bytepair extend``: more tokens for a released tokenizer, every old id kept."""

from __future__ import annotations

import argparse

from bytepair.cli._common import PROG, Formatter, load_tokenizer, positive
from bytepair.cli._surgery import add_output_options, finish
from bytepair.surgery import extend


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    tok = load_tokenizer(args.tokenizer, command="extend")
    result = extend(tok, args.corpus, add=args.add, min_frequency=args.min_frequency)
    return finish(result, args)


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = commands.add_parser(
        "extend",
        formatter_class=Formatter,
        help="learn more tokens on a corpus, every id kept",
        description="""\
Learn N more tokens for a tokenizer on a corpus (continued training: `train
--base TOK`): every existing id keeps its token, the new ones get ids after the
largest (special tokens included). Prints the tokens added and, on the corpus,
the share of documents whose ids change and the first one; the id map (old ids
map to themselves) is written next to OUT (OUT.idmap.json, or --id-map PATH).""",
        epilog=f"""\
examples:
  {PROG} extend tok.json --corpus medical/ --add 2000 -o tok-med.json
  {PROG} extend path/to/tokenizer.json --corpus code/ --add 500 -o out/tokenizer.json""",
    )
    p.add_argument("tokenizer", metavar="TOK", help="tokenizer to extend (any format bytepair reads, or a pretrained name)")
    p.add_argument("--corpus", nargs="+", required=True, metavar="C", help="files, globs or directories to learn from")
    p.add_argument("--add", type=positive, required=True, metavar="N", help="number of tokens to learn")
    p.add_argument("--min-frequency", type=positive, default=2, metavar="F", help="stop when no pair occurs F times (default 2)")
    add_output_options(p)
    p.set_defaults(run=run, subparser=p)
