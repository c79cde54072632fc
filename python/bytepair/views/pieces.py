"""SentencePiece pieces as the token views draw them: the bytes of the text each piece stands
for, and what kind of piece it is.

A byte-level BPE token is its bytes. A SentencePiece piece is text instead: ``▁`` stands for a
space (the views then show it as ``·``, as any space), a byte piece (``<0x0A>``: sentencepiece's
BYTE type, or in a tokenizer.json that text, which its ByteFallback decoder reads as a byte) for
that byte, the unknown piece for the text it replaced, and every other piece (normal,
user-defined, control) for its own text, ``▁`` read as a space.

The unknown piece has no text of its own: what it stood for is read from the text the ids were
encoded from (``tokenize`` gives it in a ``.model`` file's pieces). A tokenizer.json of the
SentencePiece family does not say, so there it is drawn as the mark alone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from bytepair._display import token_repr
from bytepair.errors import UnknownTokenError

if TYPE_CHECKING:
    from bytepair.sentencepiece import SentencePieceTokenizer

__all__ = ["BYTE", "CONTROL", "NORMAL", "UNKNOWN", "USER", "PieceTexts"]

# The kinds of piece the views tell apart.
NORMAL, BYTE, UNKNOWN, USER, CONTROL = "normal", "byte", "unknown", "user", "control"
_KINDS = {"BYTE": BYTE, "USER_DEFINED": USER, "CONTROL": CONTROL}
_BYTE_PIECE = re.compile(r"<0x([0-9A-F]{2})>")
_NOTES = {
    BYTE: "a byte piece (byte fallback: a character the vocabulary lacks, as its UTF-8 bytes)",
    UNKNOWN: "the unknown piece: text the vocabulary cannot spell",
    USER: "a user-defined piece (always one piece where it occurs)",
    CONTROL: "a control piece",
}


class PieceTexts:
    """The pieces of one SentencePiece model (a ``.model`` file, or a SentencePiece-family
    tokenizer.json) as the views draw them; each piece is looked at once, when first asked for."""

    def __init__(self, tok: SentencePieceTokenizer) -> None:
        from bytepair.formats.hf_spm import HFSentencePieceTokenizer

        self.tok = tok
        self._hf = isinstance(tok, HFSentencePieceTokenizer)
        pieces = tok.pieces()
        self._types = [t for _, _, t in pieces]
        self._scores = None if self._hf else [s for _, s, _ in pieces]
        # the unknown piece by its role (a tokenizer.json without one has none; its proto's
        # stand-in, typed UNKNOWN there, is an ordinary token)
        unk = tok.special_tokens_map.get("unk")
        self.unk_id = tok.token_to_id(unk) if unk is not None else None
        self._bytes: dict[int, bytes] = {}
        self._kind: dict[int, str] = {}

    def piece(self, i: int) -> str:
        piece = self.tok.id_to_token(i)
        if piece is None:
            raise UnknownTokenError(f"unknown token id {i!r}")
        return piece

    def kind(self, i: int) -> str:
        """``normal``, ``byte``, ``unknown``, ``user`` (user-defined) or ``control``."""
        got = self._kind.get(i)
        if got is None:
            if i == self.unk_id:
                got = UNKNOWN
            else:
                t = self._types[i] if 0 <= i < len(self._types) else "CONTROL"
                got = _KINDS.get(t, NORMAL)
                if got == NORMAL and self._hf and _BYTE_PIECE.fullmatch(self.piece(i)):
                    got = BYTE
            self._kind[i] = got
        return got

    def token_bytes(self, i: int) -> bytes:
        """The bytes piece ``i`` stands for (the unknown piece: none of its own)."""
        got = self._bytes.get(i)
        if got is None:
            kind = self.kind(i)
            piece = self.piece(i)
            if kind == BYTE:
                m = _BYTE_PIECE.fullmatch(piece)
                assert m is not None, piece
                got = bytes([int(m.group(1), 16)])
            elif kind == UNKNOWN:
                got = b""
            else:
                got = _text_bytes(piece)
            self._bytes[i] = got
        return got

    def display(self, i: int) -> str:
        """The piece itself, quoted as bytepair shows tokens (``'▁the'``, ``'<0x0A>'``)."""
        return token_repr(_utf8(self.piece(i)), max_width=60)

    def note(self, i: int) -> str:
        """One line on what the piece is, for a token's tip."""
        kind = self.kind(i)
        if kind != NORMAL:
            return _NOTES[kind]
        if self._scores is not None and self.tok.model_type == "unigram":
            return f"a piece of the vocabulary (score {self._scores[i] + 0.0:.4f})"
        return "a piece of the vocabulary"

    def parts(self, ids: Sequence[int], text: str | None = None) -> list[bytes]:
        """The bytes each of ``ids`` stands for; the unknown piece's are the text it replaced
        when ``text`` (what the ids were encoded from) is given and the model says what that was
        (a ``.model`` file's ``tokenize``)."""
        parts = [self.token_bytes(int(i)) for i in ids]
        if text is None or self._hf or self.unk_id not in ids:
            return parts
        pieces = self.tok.tokenize(text)
        if len(pieces) != len(ids) or any(
            i != self.unk_id and p != self.piece(int(i)) for i, p in zip(ids, pieces, strict=False)
        ):
            raise ValueError("text is not what these ids were encoded from")
        for k, i in enumerate(ids):
            if i == self.unk_id:
                parts[k] = _text_bytes(pieces[k])
        return parts


def _utf8(s: str) -> bytes:
    return s.encode("utf-8", "surrogatepass")


def _text_bytes(piece: str) -> bytes:
    return _utf8(piece.replace("\u2581", " "))
