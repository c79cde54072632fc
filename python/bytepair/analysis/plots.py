"""Plots of the analysis numbers (matplotlib, imported only here and only when a plot is asked for).

Each function takes the numbers (from :mod:`stats`, :mod:`sweep`, :mod:`compare`), writes one
image (PNG, or SVG when the path ends in ``.svg``) atomically and returns the path. Every plot has
a title, axis labels and units.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from typing import Any


from bytepair._atomic import write_atomic
from bytepair.errors import MissingExtraError

__all__ = ["MissingExtraError", "plot_compare", "plot_sweep", "plot_zipf", "pyplot"]


def pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingExtraError("plotting needs matplotlib", "plot") from None
    return plt


def _save(fig: Any, path: str | os.PathLike[str]) -> str:
    path = os.fspath(path)
    fmt = "svg" if path.lower().endswith(".svg") else "png"
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=100, bbox_inches="tight")
    write_atomic(path, buf.getvalue())
    pyplot().close(fig)
    return path


def plot_zipf(ranks: Sequence[int], freqs: Sequence[int], slope: float, intercept: float, path: str | os.PathLike[str], *, title: str = "Token frequency by rank (Zipf)") -> str:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.loglog(ranks, freqs, ".", markersize=3, label="tokens")
    r0, r1 = ranks[0], ranks[-1]
    ax.loglog([r0, r1], [10**intercept * r0**slope, 10**intercept * r1**slope], "-", label=f"fit: slope {slope:.2f}")
    ax.set_title(title)
    ax.set_xlabel("rank (1 = most frequent)")
    ax.set_ylabel("frequency (occurrences)")
    ax.legend()
    ax.grid(True, which="major", alpha=0.3)
    return _save(fig, path)


def plot_sweep(rows: Sequence[dict[str, Any]], path: str | os.PathLike[str], *, title: str = "Vocabulary size sweep") -> str:
    plt = pyplot()
    sizes = [r["vocab_size"] for r in rows]
    fig, axes = plt.subplots(2, 2, figsize=(9, 6.5))
    panels = [
        ("bytes_per_token", "compression (bytes/token)"),
        ("tokens_per_word", "fertility (tokens/word)"),
        ("coverage", "word list: single-token share (%)"),
        ("attention_cost", "attention cost (relative to smallest)"),
    ]
    for ax, (key, label) in zip(axes.flat, panels):
        ys = [r[key] * (100 if key == "coverage" else 1) for r in rows]
        ax.plot(sizes, ys, "o-")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("vocabulary size (tokens)")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    return _save(fig, path)


def plot_compare(table: dict[str, dict[str, float]], metric: str, path: str | os.PathLike[str], *, title: str) -> str:
    """Grouped bars: ``table[tokenizer][corpus] = value`` of ``metric`` (the y-axis label)."""
    plt = pyplot()
    toks = list(table)
    corpora = list(next(iter(table.values()))) if table else []
    fig, ax = plt.subplots(figsize=(min(12, max(6, 0.3 * len(corpora) * max(1, len(toks)))), 4))
    w = 0.8 / max(1, len(toks))
    for k, t in enumerate(toks):
        xs = [i + (k - (len(toks) - 1) / 2) * w for i in range(len(corpora))]
        ax.bar(xs, [table[t][c] for c in corpora], width=w, label=t)
    ax.set_xticks(range(len(corpora)))
    ax.set_xticklabels(corpora)
    ax.set_xlabel("corpus")
    ax.set_ylabel(metric)
    ax.set_title(title)
    ax.legend()
    ax.grid(True, axis="y", alpha=0.3)
    return _save(fig, path)
