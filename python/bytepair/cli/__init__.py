"""The ``bytepair`` command: train, inspect and run tokenizers from the shell.

    bytepair train corpus.txt --vocab-size 32000 -o tok.json
    bytepair train --sample --vocab-size 1000 -o shakespeare.json
    bytepair show tok.json --limit 20
    echo "To be, or not to be" | bytepair encode -t tok.json
    bytepair encode -t tok.json input.txt | bytepair decode -t tok.json

One module per command, each with ``add_parser(commands)`` (its options and help) and
``run(args, parser)``; ``COMMANDS`` lists them in the order ``--help`` shows them.
Errors are printed as one line, ``bytepair: error: <message>``, with exit status 1 (2 for
wrong usage; ``diff`` fails with 2, as its 1 means "the tokenizers differ"); Ctrl-C exits
with 130. ``python -m bytepair`` runs the same command.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Sequence

# numpy (imported by the commands below) loads OpenBLAS, which starts a thread per core that
# spins for a while: importing numpy took 0.22-0.24 s of CPU, 0.09 s with one thread (a 2-core
# machine), time taken from the encoder's threads in `encode-corpus`. No command does linear
# algebra. A user's own setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import bytepair  # noqa: E402  (after the line above)
from bytepair.cli._common import PROG, CommandError, Formatter  # noqa: E402
from bytepair.errors import BytepairError  # noqa: E402

__all__ = ["COMMANDS", "main"]

# The order `bytepair --help` lists them in; each is the module bytepair.cli.<name with _>.
COMMANDS: tuple[str, ...] = (
    "train", "encode", "decode", "show", "convert", "prune", "extend", "graft",  # tokenizers
    "encode-corpus", "count",  # token shards for training (corpus/)
    "viz", "trace", "stats", "sweep", "compare", "diff", "report",  # looking at a tokenizer (analysis/, views/)
)


class _TopFormatter(Formatter):
    """Room for the longest command name (encode-corpus) beside its help."""

    def __init__(self, prog: str) -> None:
        argparse.RawDescriptionHelpFormatter.__init__(self, prog, max_help_position=34)


class _Version(argparse.Action):
    """``--version``, computed only when asked for (``bytepair.__version__`` reads the installed
    package's metadata: ``importlib.metadata`` alone was 9 ms of every command's start)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        print(f"{PROG} {bytepair.__version__}")
        parser.exit()


def _parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or (``only``) one with just that command: each command's module is
    imported when its parser is made, and the other commands' modules import the analysis
    pages and the views (14 ms of every run's start by ``python -X importtime``, beside the
    9 ms of ``--version``'s metadata, on the 2-core machine)."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        formatter_class=_TopFormatter,
        description="Train, inspect, convert and run byte-level BPE and WordPiece tokenizers; encode\n"
        "corpora into token shards for training; see what a tokenizer does to text.",
        epilog=f"""\
examples:
  {PROG} train --sample --vocab-size 1000 -o shakespeare.json
  {PROG} show shakespeare.json --limit 20
  echo "To be, or not to be" | {PROG} encode -t shakespeare.json
  {PROG} encode -t shakespeare.json play.txt | {PROG} decode -t shakespeare.json
  {PROG} viz -t o200k_base --text "naïve café 東京"
  {PROG} encode-corpus -t shakespeare.json corpus/ -o shards/
  {PROG} convert shakespeare.json hf_dir --to pretrained

Run `{PROG} COMMAND --help` for the options of each command.""",
    )
    parser.add_argument("--version", action=_Version)
    commands = parser.add_subparsers(title="commands", dest="command", metavar="COMMAND")
    for name in COMMANDS if only is None else (only,):
        importlib.import_module(f"bytepair.cli.{name.replace('-', '_')}").add_parser(commands)
    return parser


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
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = _parser(args_list[0] if args_list and args_list[0] in COMMANDS else None)
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
