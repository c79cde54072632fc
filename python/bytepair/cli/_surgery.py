"""What ``prune``, ``extend`` and ``graft`` share: writing the result, its id map and its summary."""

from __future__ import annotations

import argparse
import json
import os
import sys

from bytepair._atomic import write_atomic
from bytepair.cli.convert import FORMATS, _guess
from bytepair.surgery import Surgery
from bytepair.tokenizer import Tokenizer


def add_output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", required=True, metavar="OUT", help="file, directory or prefix to write (as `convert` writes)")
    parser.add_argument("--to", choices=FORMATS, help="output format (default: from OUT's name, as `convert`)")
    parser.add_argument("--id-map", metavar="PATH", help="where to write the id map as JSON (default: OUT.idmap.json)")
    parser.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")


def write_tokenizer(tok: Tokenizer, out: str, to: str) -> list[str]:
    """Writes ``tok`` to ``out`` in the format ``to`` (one of ``convert``'s); returns the paths."""
    if to == "bytepair":
        tok.save(out)
        return [out]
    if to == "hf":
        from bytepair.formats.hf import save_hf

        save_hf(tok, out)
        return [out]
    if to == "pretrained":
        return tok.save_pretrained(out)
    if to == "gpt2":
        from bytepair.formats.gpt2 import dump_gpt2

        os.makedirs(out, exist_ok=True)
        written = [os.path.join(out, "vocab.json"), os.path.join(out, "merges.txt")]
        dump_gpt2(tok, *written)
        return written
    if to == "tiktoken":
        from bytepair.formats.tiktoken import dump_tiktoken

        dump_tiktoken(tok, out)
        return [out]
    from bytepair.formats.minbpe import dump_minbpe

    prefix = out.removesuffix(".model")
    dump_minbpe(tok, prefix)
    return [prefix + ".model", prefix + ".vocab"]


def finish(result: Surgery, args: argparse.Namespace) -> int:
    """Writes the tokenizer and the id map, then prints the summary (unless --quiet)."""
    to = args.to or _guess(args.output)
    parent = os.path.dirname(os.path.normpath(args.output))
    if parent:
        os.makedirs(parent, exist_ok=True)
    written = write_tokenizer(result.tokenizer, args.output, to)
    id_map = args.id_map or os.path.normpath(args.output) + ".idmap.json"
    write_atomic(id_map, (json.dumps(result.id_map_json()) + "\n").encode())
    if not args.quiet:
        sys.stdout.write(result.summary() + "\n")
        print(f"wrote {', '.join(written)} ({to}); id map {id_map}")
    return 0
