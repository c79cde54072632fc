"""What the analysis commands (stats, sweep, compare, viz, report) share: corpus arguments,
number lists, and plots whose extra may be missing."""

from __future__ import annotations

import argparse
import os

from bytepair.analysis.corpus import Corpus

__all__ = ["corpora", "corpus_arg", "float_list", "int_list"]


def corpus_arg(value: str) -> tuple[str, str]:
    """``PATH`` (named after the file) or ``NAME=PATH``."""
    name, sep, path = value.partition("=")
    if sep and name and path and not os.path.exists(value):
        return name, path
    if not value:
        raise argparse.ArgumentTypeError("expected a path or NAME=PATH, got an empty string")
    return os.path.basename(value.rstrip("/" + os.sep)) or value, value


def corpora(items: list[tuple[str, str]], *, text_field: str = "text") -> list[Corpus]:
    grouped: dict[str, list[str]] = {}
    for name, path in items:
        grouped.setdefault(name, []).append(path)
    return [Corpus(name, paths, text_field) for name, paths in grouped.items()]


def int_list(value: str) -> list[int]:
    try:
        out = [int(v.replace("_", "")) for v in value.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected whole numbers separated by commas, got {value!r}") from None
    if not out:
        raise argparse.ArgumentTypeError("expected at least one number")
    return out


def float_list(value: str) -> list[float]:
    try:
        out = [float(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers separated by commas, got {value!r}") from None
    if not out or any(not 0 <= a <= 1 for a in out):
        raise argparse.ArgumentTypeError(f"expected numbers in [0, 1] separated by commas, got {value!r}")
    return out
