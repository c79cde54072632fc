"""``bytepair convert``: a tokenizer from any format bytepair reads to any it writes."""

from __future__ import annotations

import argparse
import os

from bytepair.cli._common import PROG, CommandError, Formatter, load_tokenizer

FORMATS = ("bytepair", "hf", "pretrained", "gpt2", "tiktoken", "minbpe")


def _guess(out: str) -> str:
    if out.endswith(".tiktoken") or out.endswith(".tiktoken.gz"):
        return "tiktoken"
    if out.endswith(".model"):
        return "minbpe"
    if os.path.basename(out) == "tokenizer.json":
        return "hf"
    if out.endswith(".json"):
        return "bytepair"
    raise CommandError(f"{out}: cannot tell the output format from the name; pass --to {{{','.join(FORMATS)}}}")


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    tok = load_tokenizer(args.input, command="convert")
    to = args.to or _guess(args.output)
    out = args.output
    if to == "bytepair":
        tok.save(out)
        written = [out]
    elif to == "hf":
        from bytepair.formats.hf import save_hf

        save_hf(tok, out)
        written = [out]
    elif to == "pretrained":
        written = tok.save_pretrained(out)
    elif to == "gpt2":
        from bytepair.formats.gpt2 import dump_gpt2

        os.makedirs(out, exist_ok=True)
        written = [os.path.join(out, "vocab.json"), os.path.join(out, "merges.txt")]
        dump_gpt2(tok, *written)
    elif to == "tiktoken":
        from bytepair.formats.tiktoken import dump_tiktoken

        dump_tiktoken(tok, out)
        written = [out]
    else:
        from bytepair.formats.minbpe import dump_minbpe

        prefix = out.removesuffix(".model")
        dump_minbpe(tok, prefix)
        written = [prefix + ".model", prefix + ".vocab"]
    if not args.quiet:
        print(f"wrote {', '.join(written)} ({to})")
    return 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    convert = commands.add_parser(
        "convert",
        formatter_class=Formatter,
        help="convert a tokenizer to another format",
        description="""\
Convert a tokenizer between formats. IN is any format bytepair reads (found by its
content): a bytepair JSON file, a Hugging Face tokenizer.json or model directory,
GPT-2's vocab.json (with merges.txt beside it), a tiktoken rank file of a shipped
encoding, a minbpe .model file, or a pretrained encoding name (cl100k_base).

--to names the output: bytepair (one JSON file), hf (tokenizer.json), pretrained
(a directory for transformers' AutoTokenizer.from_pretrained), gpt2 (a directory
with vocab.json and merges.txt), tiktoken (a rank file; the pattern and special
tokens are not part of it), minbpe (OUT.model and OUT.vocab). Without --to the
format is guessed from OUT's name.""",
        epilog=f"""\
examples:
  {PROG} convert tok.json hf-model --to pretrained
  {PROG} convert path/to/tokenizer.json tok.json
  {PROG} convert cl100k_base cl100k.tiktoken
  {PROG} convert tok.json tok.model --to minbpe""",
    )
    convert.add_argument("input", metavar="IN", help="tokenizer to read (any format, or a pretrained encoding name)")
    convert.add_argument("output", metavar="OUT", help="file, directory or prefix to write")
    convert.add_argument("--to", choices=FORMATS, help="output format (default: from OUT's name)")
    convert.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    convert.set_defaults(run=run, subparser=convert)
