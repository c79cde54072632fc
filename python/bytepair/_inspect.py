"""What every model kind shows of its own encoding, for people learning how it works: the
pieces a text is cut into and every step of encoding them (:mod:`bytepair.analysis.trace`,
imported when first used)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bytepair.analysis.trace import PieceTrace

__all__ = ["Inspect"]


class Inspect:
    """``pre_tokenize`` and ``trace`` as methods of a tokenizer."""

    def pre_tokenize(self, text: str) -> list[tuple[str, tuple[int, int]]]:
        """The pieces ``text`` is split into before any merge, with their character spans (what
        Hugging Face's ``pre_tokenize_str`` gives): :func:`bytepair.analysis.pre_tokenize`."""
        from bytepair.analysis.trace import pre_tokenize

        tok: Any = self
        return pre_tokenize(tok, text)

    def trace(self, text: str) -> list[PieceTrace]:
        """Every step of encoding ``text``, piece by piece: each merge round of byte-level BPE
        with the pairs' merge numbers, WordPiece's longest matches (:func:`bytepair.analysis.trace`)."""
        from bytepair.analysis.trace import trace

        tok: Any = self
        return trace(tok, text)
