"""Writing a SentencePiece model (a ``.model``, Unigram or BPE) as a Hugging Face
``tokenizer.json`` that ``tokenizers`` encodes as sentencepiece does:
``Tokenizer.from_str(to_hf_json(tok)).encode(text, add_special_tokens=False).ids`` is
``SentencePieceProcessor.encode(text)`` on ordinary text, and bytepair reads the file back
(:func:`bytepair.formats.hf_spm.from_hf_spm`) with the same ids.

The file is laid out as transformers' conversion of a ``.model`` lays it out, with the steps
that make it follow the model's own normalizer options (transformers' ``SpmConverter``):

- **model**: ``Unigram`` (the pieces and scores by id, ``unk_id``, ``byte_fallback``), or
  ``BPE`` (``{piece: id}``, ``unk_token``, ``fuse_unk``, ``byte_fallback``) with merges made
  from the piece scores: every split of a normal piece into two normal pieces, ranked by the
  score of the piece it makes, highest first (then by id). sentencepiece's BPE joins, at each
  step, the adjacent pair whose join is the piece of highest score; ``tokenizers`` joins the
  pair of lowest rank, so the two agree. (They can differ only where two pieces share a score,
  or where two pairs that make the same piece overlap, as ``ab``+``a`` and ``a``+``ba`` in
  ``ababa``: sentencepiece takes the leftmost, ``tokenizers`` the lower rank. Trained models
  give each piece a score of its own.)
- **normalizer**: the model's ``precompiled_charsmap`` as ``Precompiled`` when it has one;
  with ``remove_extra_whitespaces``, leading spaces dropped and runs of spaces made one
  (regex ``Replace``: only U+0020 counts, as in sentencepiece, which leaves newlines and other
  whitespace to the charsmap); spaces written as ``▁``; with ``remove_extra_whitespaces``,
  trailing ``▁`` dropped (sentencepiece drops them after escaping, a ``▁`` of the text
  included); with ``add_dummy_prefix``, a leading ``▁`` doubled, since ``Metaspace`` adds its
  ``▁`` only to text that does not start with one and sentencepiece adds it to any text.
- **pre_tokenizer**: ``Metaspace`` (``prepend_scheme`` ``always`` with ``add_dummy_prefix``,
  else ``never``; ``split`` false: the model sees the whole text, as sentencepiece's does),
  then, where the model has user-defined pieces, a ``Split`` (``Isolated``) that cuts them out,
  longest first: sentencepiece emits them whole wherever they occur and never joins them to
  their neighbours. A BPE model then has ``ignore_merges``, so that such a piece, alone in its
  cut, is that token. (A user-defined piece with a space is left out: sentencepiece escapes
  the space after matching it, so the piece never matches and is never emitted.)
- **decoder**: ``▁`` back to spaces, ``ByteFallback`` (byte fallback models), ``Fuse``, and the
  first space stripped (``Strip``) where sentencepiece drops the first ``▁`` in decoding.
- **added_tokens**: the control and unknown pieces (``<s>``, ``</s>``, ``<unk>``...), special,
  matched in the text as written (``normalized`` false), as transformers has them: a
  ``tokenizer.json`` turns ``<s>`` written in the text into that token, where sentencepiece's
  ``encode`` reads it as characters. That is the one difference by design. The text between
  such tokens is normalized and given its dummy prefix stretch by stretch, so each stretch
  has the ids sentencepiece gives it alone. User-defined pieces
  are not added tokens: ``tokenizers`` cuts added tokens out before normalizing, so the text
  on either side would lose or gain spaces and the dummy prefix that sentencepiece, which
  normalizes the whole text, gives it; the ``Split`` above keeps them whole instead.

In a Unigram file the control, unknown, byte and unused pieces get a score far below any
path of normal pieces (``(n + 1) * min(lowest normal score, -1) - 10`` for pieces of up to
``n`` characters): sentencepiece's lattice never uses them, ``tokenizers``' takes every piece
of the vocabulary, so ``<0x41>`` in the text would otherwise be the byte piece. This moves the
score ``tokenizers`` gives an unknown character (the lowest score less 10), which changes no
result: every path passes the same unknown characters, as no normal piece contains a
character that is not itself a piece (true of trained models).

What stays apart from sentencepiece: ``tokenizers`` runs the Viterbi search in double
precision and sentencepiece in single, so near-ties can fall the other way (rare, and more
likely in long texts); ``Precompiled`` applies the charsmap per grapheme cluster, sentencepiece
by longest match, which differs where a cluster of under 6 bytes starts with a character the
charsmap replaces (``ﬁ`` or ``²`` + a combining mark: the mark is lost; halfwidth katakana +
voiced mark; ``\r\n``, one cluster, is one space, which only shows without
``remove_extra_whitespaces``); in a BPE file with user-defined pieces, a stretch between two of
them (or after one, to the end) that is exactly a byte piece's text, as ``<0x41>`` in
``<sep><0x41>``, is that byte token (``ignore_merges``), where sentencepiece spells it.

Refused (:class:`~bytepair.FormatError`), as no ``tokenizer.json`` says them:
``treat_whitespace_as_suffix``, ``escape_whitespaces`` off, models other than Unigram and BPE,
unused pieces in a BPE model (sentencepiece joins through them and splits them again), and
user-defined pieces that the charsmap changes (sentencepiece matches them before normalizing)
or that hold a run of spaces (which sentencepiece keeps and ``remove_extra_whitespaces`` would
make one).
"""

from __future__ import annotations

import base64
import json
import os
from typing import Any

from bytepair.errors import FormatError
from bytepair.sentencepiece import SentencePieceTokenizer

__all__ = ["save_hf_json", "to_hf_json", "to_hf_dict"]

_SPACE = "\u2581"
# what Oniguruma (tokenizers) and bytepair's reader both read as a literal after a backslash
_REGEX_SPECIAL = frozenset(".^$|?*+()[]{}\\-/")


def _escape(text: str) -> str:
    return "".join("\\" + c if c in _REGEX_SPECIAL else c for c in text)


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if i >= len(buf):
            raise FormatError("the .model ends inside a varint")
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, i


def _fields(buf: bytes) -> list[tuple[int, int | bytes]]:
    """The fields of a protobuf message: (number, int or bytes), in order."""
    out: list[tuple[int, int | bytes]] = []
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        wire = key & 7
        if wire == 0:
            value, i = _varint(buf, i)
            out.append((key >> 3, value))
        elif wire == 2:
            n, i = _varint(buf, i)
            if i + n > len(buf):
                raise FormatError("the .model ends inside a field")
            out.append((key >> 3, buf[i : i + n]))
            i += n
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            out.append((key >> 3, buf[i : i + width]))
            i += width
        else:
            raise FormatError(f"the .model has a field of wire type {wire}")
    return out


def _charsmap(model: bytes) -> bytes:
    """``normalizer_spec.precompiled_charsmap`` of a ``.model``'s bytes (empty if none)."""
    spec = b""
    for num, value in _fields(model):
        if num == 3 and isinstance(value, bytes):
            spec = value  # a repeated message field: protobuf merges, the last value wins here
    found = b""
    for num, value in _fields(spec):
        if num == 2 and isinstance(value, bytes):
            found = value
    return found


def _user_symbols(
    user: list[str], charsmap: bytes, remove_extra_whitespaces: bool, where: str
) -> list[str]:
    """The user-defined pieces the ``Split`` cuts out (refusing those it cannot keep whole)."""
    normalize = None
    if charsmap and user:
        from bytepair.formats.hf_spm import _Charsmap, _Refuse

        node = {"precompiled_charsmap": base64.b64encode(charsmap).decode("ascii")}
        normalize = _Charsmap.from_node(node, "normalizer", _Refuse(where)).normalize
    out = []
    for s in user:
        # sentencepiece matches it in the text before normalizing and escapes its spaces; the
        # file normalizes the text first: the two must agree on it
        if normalize is not None and normalize(s).replace(" ", _SPACE) != s.replace(" ", _SPACE):
            raise FormatError(
                f"{where}: the user-defined piece {s!r:.60} is changed by the model's charsmap "
                f"(to {normalize(s)!r:.60}): sentencepiece keeps it as written, a tokenizer.json "
                "normalizes it first"
            )
        if " " in s:
            if remove_extra_whitespaces and "  " in s:
                raise FormatError(
                    f"{where}: the user-defined piece {s!r:.60} has a run of spaces, which "
                    "sentencepiece keeps where it is written and a tokenizer.json's whitespace "
                    "removal would make one"
                )
            # sentencepiece escapes its spaces after matching it, so the piece (with a plain
            # space) never matches the escaped text: it is never emitted, nor here
            continue
        out.append(s)
    return sorted(out, key=lambda s: (-len(s), s))


def to_hf_dict(tok: SentencePieceTokenizer) -> dict[str, Any]:
    """The ``tokenizer.json`` of a SentencePiece model, as a dict (see the module doc)."""
    from bytepair.formats.hf_spm import HFSentencePieceTokenizer

    if not isinstance(tok, SentencePieceTokenizer):
        raise TypeError(f"to_hf_json takes a SentencePieceTokenizer, not {type(tok).__name__}")
    if isinstance(tok, HFSentencePieceTokenizer):
        # read from a tokenizer.json: that file, as read
        doc: dict[str, Any] = json.loads(tok.to_bytes())
        return doc
    where = tok._name
    spec = tok.spec
    model_type = spec["model_type"]
    if model_type not in ("unigram", "bpe"):
        raise FormatError(f"{where}: a {model_type} model has no tokenizer.json form (Unigram and BPE have)")
    if spec["treat_whitespace_as_suffix"]:
        raise FormatError(
            f"{where}: treat_whitespace_as_suffix: a tokenizer.json cannot put the dummy ▁ "
            "at the end of the text (Metaspace and Prepend put it first)"
        )
    if not spec["escape_whitespaces"]:
        raise FormatError(
            f"{where}: escape_whitespaces is off: the model sees spaces as spaces, which "
            "bytepair does not write as a tokenizer.json"
        )
    pieces = tok.pieces()
    byte_fallback = bool(spec["byte_fallback"])
    add_dummy_prefix = bool(spec["add_dummy_prefix"])
    remove_ws = bool(spec["remove_extra_whitespaces"])
    unk_id = int(spec["unk_id"])
    if not 0 <= unk_id < len(pieces) or pieces[unk_id][2] != "UNKNOWN":
        raise FormatError(f"{where}: the model has no unknown piece")
    charsmap = _charsmap(tok.to_bytes())
    user = _user_symbols(
        [p for p, _, t in pieces if t == "USER_DEFINED"], charsmap, remove_ws, where
    )

    # ---- model
    model: dict[str, Any]
    if model_type == "unigram":
        normal = [s for _, s, t in pieces if t == "NORMAL"]
        if not normal:
            raise FormatError(f"{where}: the model has no normal pieces")
        hidden = [p for p, _, t in pieces if t in ("CONTROL", "UNKNOWN", "BYTE", "UNUSED")]
        longest = max((len(p) for p in hidden), default=1)
        low = (longest + 1) * min(min(normal), -1.0) - 10.0
        vocab = [
            [p, low if t in ("CONTROL", "UNKNOWN", "BYTE", "UNUSED") else float(s)]
            for p, s, t in pieces
        ]
        model = {"type": "Unigram", "unk_id": unk_id, "vocab": vocab, "byte_fallback": byte_fallback}
    else:
        unused = [p for p, _, t in pieces if t == "UNUSED"]
        if unused:
            raise FormatError(
                f"{where}: unused pieces ({unused[0]!r:.40}...) in a BPE model: sentencepiece "
                "joins through them and splits them again, which BPE merges cannot say"
            )
        normal_ids = {p: i for i, (p, _, t) in enumerate(pieces) if t == "NORMAL"}
        ranked: list[tuple[float, int, int, str, str]] = []
        for piece, i in normal_ids.items():
            score = pieces[i][1]
            for k in range(1, len(piece)):
                left, right = piece[:k], piece[k:]
                if left in normal_ids and right in normal_ids:
                    ranked.append((-score, i, k, left, right))
        ranked.sort()
        model = {
            "type": "BPE",
            "dropout": None,
            "unk_token": pieces[unk_id][0],
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": True,
            "byte_fallback": byte_fallback,
            "ignore_merges": bool(user),
            "vocab": {p: i for i, (p, _, _) in enumerate(pieces)},
            "merges": [[left, right] for *_, left, right in ranked],
        }

    # ---- normalizer
    steps: list[dict[str, Any]] = []
    if charsmap:
        steps.append({"type": "Precompiled", "precompiled_charsmap": base64.b64encode(charsmap).decode("ascii")})
    if remove_ws:
        steps.append({"type": "Replace", "pattern": {"Regex": r"\A +"}, "content": ""})
        steps.append({"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "})
    steps.append({"type": "Replace", "pattern": {"String": " "}, "content": _SPACE})
    if remove_ws:
        steps.append({"type": "Replace", "pattern": {"Regex": _SPACE + r"+\z"}, "content": ""})
    if add_dummy_prefix:
        steps.append({"type": "Replace", "pattern": {"Regex": r"\A" + _SPACE}, "content": _SPACE * 2})

    # ---- pre-tokenizer
    pre: list[dict[str, Any]] = [{
        "type": "Metaspace", "replacement": _SPACE,
        "prepend_scheme": "always" if add_dummy_prefix else "never", "split": False,
    }]
    if user:
        pattern = "|".join(_escape(s) for s in user)
        pre.append({"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False})

    # ---- decoder
    decoders: list[dict[str, Any]] = [{"type": "Replace", "pattern": {"String": _SPACE}, "content": " "}]
    if byte_fallback:
        decoders.append({"type": "ByteFallback"})
    decoders.append({"type": "Fuse"})
    if add_dummy_prefix or remove_ws:  # sentencepiece drops the first piece's ▁ then
        decoders.append({"type": "Strip", "content": " ", "start": 1, "stop": 0})

    added = [
        {"id": i, "content": p, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": True}
        for i, (p, _, t) in enumerate(pieces) if t in ("CONTROL", "UNKNOWN")
    ]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "Sequence", "normalizers": steps},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": pre},
        "post_processor": None,
        "decoder": {"type": "Sequence", "decoders": decoders},
        "model": model,
    }


def to_hf_json(tok: SentencePieceTokenizer) -> str:
    """The ``tokenizer.json`` of a SentencePiece model (Unigram or BPE), as text: what
    ``tokenizers.Tokenizer.from_str`` reads (see the module doc for what it holds and what is
    refused with a :class:`~bytepair.FormatError`)."""
    return json.dumps(to_hf_dict(tok), ensure_ascii=False, indent=2) + "\n"


def save_hf_json(tok: SentencePieceTokenizer, path: str | os.PathLike[str]) -> None:
    """Writes :func:`to_hf_json` of ``tok`` to ``path`` (UTF-8), atomically."""
    from bytepair._atomic import write_atomic

    write_atomic(path, to_hf_json(tok).encode("utf-8"))

