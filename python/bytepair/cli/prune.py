"""``bytepair prune``: a smaller tokenizer, with an id map for the embedding table."""

from __future__ import annotations

import argparse

from bytepair.cli._common import PROG, Formatter, load_tokenizer, positive
from bytepair.cli._surgery import add_output_options, finish
from bytepair.surgery import prune


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    chosen = [args.keep is not None, args.min_count is not None, args.drop_residues]
    if sum(chosen) != 1:
        parser.error("give exactly one of --keep N, --corpus C --min-count K, --drop-residues")
    if args.min_count is not None and not args.corpus:
        parser.error("--min-count counts the tokens on a corpus: give --corpus C")
    tok = load_tokenizer(args.tokenizer, command="prune")
    result = prune(
        tok, keep=args.keep, min_count=args.min_count, drop_residues=args.drop_residues, corpus=args.corpus or None
    )
    return finish(result, args)


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = commands.add_parser(
        "prune",
        formatter_class=Formatter,
        help="remove tokens, keeping the tokenizer valid; write an id map",
        description="""\
Remove tokens from a byte-level BPE tokenizer, keeping it valid: a removed token
takes with it the merges that make it and every token that can then not be made.
The ids left are renumbered compactly in their old order (special tokens keep
their texts and roles, with new ids); the id map {old id: new id or null} is
written as JSON next to OUT (OUT.idmap.json, or --id-map PATH).

  --keep N          the first N merges (what training would have stopped at; for
                    a tiktoken rank file, the N lowest ranks above the bytes)
  --min-count K     tokens the corpus (--corpus) uses fewer than K times go,
                    except those needed to make a token that stays
  --drop-residues   the tokens no text ever encodes to, proven from the merges
                    (see `bytepair show --residues`): no text encodes differently

With --corpus, prints the share of documents whose ids change and the first one.""",
        epilog=f"""\
examples:
  {PROG} prune tok.json --keep 8000 -o tok8k.json
  {PROG} prune tok.json --corpus domain/ --min-count 5 -o small.json
  {PROG} prune path/to/tokenizer.json --drop-residues -o out/tokenizer.json --corpus held-out.txt""",
    )
    p.add_argument("tokenizer", metavar="TOK", help="tokenizer to prune (any format bytepair reads, or a pretrained name)")
    p.add_argument("--keep", type=positive, metavar="N", help="keep the first N merges")
    p.add_argument("--min-count", type=positive, metavar="K", help="remove tokens used fewer than K times on --corpus")
    p.add_argument("--drop-residues", action="store_true", help="remove the proven residues")
    p.add_argument("--corpus", nargs="+", metavar="C", help="files, globs or directories: counted for --min-count, and measured")
    add_output_options(p)
    p.set_defaults(run=run, subparser=p)
