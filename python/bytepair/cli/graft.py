"""``bytepair graft``: one tokenizer's tokens added to another's, the first one's ids kept."""

from __future__ import annotations

import argparse

from bytepair.cli._common import PROG, Formatter, load_tokenizer
from bytepair.cli._surgery import add_output_options, finish
from bytepair.surgery import graft


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    a = load_tokenizer(args.a, command="graft")
    b = load_tokenizer(args.b, command="graft")
    result = graft(a, b, corpus=args.corpus or None)
    return finish(result, args)


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = commands.add_parser(
        "graft",
        formatter_class=Formatter,
        help="add tokenizer B's tokens to A, A's ids kept",
        description="""\
Merge two vocabularies: every id of A stays; then B's merges, in B's order, each
one whose two parts are tokens by then and whose token A lacks, with new ids after
A's largest; then B's special tokens that A lacks. Not taken from B (and counted in
the output): a merge whose part did not come, a merge of a token A already makes
its own way, a token B's merges do not make. A and B must split and normalize
text alike. The id maps (A's: every id to itself; B's: to its new id or null)
are written next to OUT (OUT.idmap.json, or --id-map PATH).""",
        epilog=f"""\
examples:
  {PROG} graft general.json code.json -o both.json
  {PROG} graft general.json code.json -o both.json --corpus held-out/""",
    )
    p.add_argument("a", metavar="A", help="tokenizer whose ids are kept")
    p.add_argument("b", metavar="B", help="tokenizer whose other tokens are added")
    p.add_argument("--corpus", nargs="+", metavar="C", help="files, globs or directories to measure the change on")
    add_output_options(p)
    p.set_defaults(run=run, subparser=p)
