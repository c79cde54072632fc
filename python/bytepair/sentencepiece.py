"""SentencePieceTokenizer: a SentencePiece model (Unigram or BPE) on the Rust core.

The Rust extension holds the mechanism (the ``.model`` reader and writer, the normalizer with
its precompiled charsmap, the Viterbi and BPE encoders, byte fallback, decoding); this class
holds the policy: arguments, BOS/EOS, special tokens, files.

Behaviour is sentencepiece's ``SentencePieceProcessor``: ``encode(text)`` gives the ids its
``encode(text)`` gives (no BOS/EOS unless asked), ``decode(ids)`` the text its ``decode`` gives.
Control pieces (``<s>``, ``</s>``) written in the text are ordinary characters, as in
sentencepiece; user-defined symbols are matched whole.

Subword regularization takes sentencepiece's arguments: ``encode(text, enable_sampling=True,
alpha=0.1, nbest_size=-1)`` draws a segmentation (Unigram: from every segmentation, or from the
``nbest_size`` best, with probability proportional to ``exp(alpha * score)``; BPE: each merge
skipped with probability ``alpha``, BPE-dropout), and ``seed=`` makes the draw reproducible.

>>> tok = load_spm("tokenizer.model")  # doctest: +SKIP
>>> tok.tokenize("Hello world")  # doctest: +SKIP
['▁Hello', '▁world']
"""

from __future__ import annotations

import math
import os
import secrets
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from bytepair import _core
from bytepair._api import Encoded, ModelInputs
from bytepair.errors import BytepairError, UnknownTokenError
from bytepair.tokenizer import _check_threads

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import DTypeLike, NDArray

__all__ = ["SentencePieceTokenizer"]


def _opt_id(value: Any) -> int | None:
    return value if isinstance(value, int) and value >= 0 else None


class SentencePieceTokenizer(ModelInputs):
    """A SentencePiece model, read from a ``.model`` file (:meth:`from_file`, or
    ``bytepair.load``). ``model_type`` is ``"unigram"`` or ``"bpe"``.

    Ids are the model's; ``vocab_size`` counts every piece (normal, control, unknown,
    user-defined, unused and byte pieces). ``special_tokens`` are the control and unknown pieces.

    ``tok(text_or_batch, ...)`` builds model inputs as transformers does
    (:class:`bytepair._api.ModelInputs`): a ``.model`` file says nothing of where BOS / EOS go,
    so by default no token is added (sentencepiece's ``encode``); give the template with
    ``with_model_inputs(post_processor=TemplateProcessing.of("<s> $A", None, {"<s>": 1}))``.
    The roles are the file's: ``unk``, and ``bos`` / ``eos`` / ``pad`` where the model has them.
    """

    def __init__(self, core: _core.SentencePiece, *, name: str = "<bytes>") -> None:
        if not isinstance(core, _core.SentencePiece):
            raise TypeError(
                "SentencePieceTokenizer is made by SentencePieceTokenizer.from_file(path), "
                "from_bytes(data) or bytepair.load(path)"
            )
        self._core = core
        if type(self).encode is SentencePieceTokenizer.encode:
            # A call of ``tok.encode(text)`` goes straight to the extension, which takes the
            # common call itself and hands any other to ``_encode`` (the method's frame and its
            # keyword-only defaults were a fifth of a call on a line of text). A subclass that
            # overrides ``encode`` keeps its own.
            self.__dict__["encode"] = core.encode_entry()
        self._name = name
        self._spec: dict[str, Any] = core.spec()
        self._vocab: dict[str, int] | None = None
        # how it was trained, when bytepair trained it (a .model file does not keep this)
        self._training: dict[str, Any] = {}

    # ------------------------------------------------------------------ files

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> SentencePieceTokenizer:
        """Reads a SentencePiece ``.model`` file (no ``protobuf`` package needed)."""
        where = os.fspath(path)
        return cls(_core.SentencePiece.from_file(where), name=where)

    @classmethod
    def from_bytes(cls, data: bytes, *, name: str = "<bytes>") -> SentencePieceTokenizer:
        """Reads the bytes of a ``.model`` file (``name`` appears in errors)."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"data must be bytes, not {type(data).__name__}")
        return cls(_core.SentencePiece.from_bytes(bytes(data), name), name=name)

    def to_bytes(self) -> bytes:
        """The model as a ``.model`` file: what was read, written back (fields this reader does
        not know included)."""
        return self._core.to_bytes()

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes the model as a SentencePiece ``.model`` file, atomically."""
        from bytepair._atomic import write_atomic

        write_atomic(path, self.to_bytes())

    def __reduce__(self) -> tuple[Any, ...]:
        # the extension's object cannot be pickled: the tokenizer travels as its file's bytes
        return self._with_state((_from_bytes, (self.to_bytes(), self._name)))

    # ------------------------------------------------------------------ the vocabulary

    @property
    def model_type(self) -> str:
        """``"unigram"`` or ``"bpe"``."""
        return str(self._spec["model_type"])

    @property
    def vocab_size(self) -> int:
        return len(self)

    @property
    def n_vocab(self) -> int:
        return len(self)

    def __len__(self) -> int:
        return len(self._core)

    @property
    def vocab(self) -> dict[str, int]:
        """``{piece: id}`` (made on first use)."""
        if self._vocab is None:
            self._vocab = {p: i for i, (p, _, _) in enumerate(self._core.pieces())}
        return dict(self._vocab)

    def pieces(self) -> list[tuple[str, float, str]]:
        """Every piece as ``(piece, score, type)`` by id; types are sentencepiece's names
        (``NORMAL``, ``UNKNOWN``, ``CONTROL``, ``USER_DEFINED``, ``UNUSED``, ``BYTE``)."""
        return self._core.pieces()

    @property
    def special_tokens(self) -> dict[str, int]:
        """The control and unknown pieces: ``{piece: id}``."""
        return {p: i for i, (p, _, t) in enumerate(self._core.pieces()) if t in ("CONTROL", "UNKNOWN")}

    @property
    def unk_id(self) -> int:
        return int(self._spec["unk_id"])

    @property
    def bos_id(self) -> int | None:
        return _opt_id(self._spec["bos_id"])

    @property
    def eos_id(self) -> int | None:
        return _opt_id(self._spec["eos_id"])

    @property
    def pad_id(self) -> int | None:
        return _opt_id(self._spec["pad_id"])

    @property
    def training(self) -> dict[str, Any]:
        """How this model was trained by bytepair (options, input sizes, rounds); empty for a
        model read from a file."""
        return dict(self._training)

    @property
    def spec(self) -> dict[str, Any]:
        """The options of the model file that say how it encodes (model type, byte fallback,
        normalizer name and whitespace options, special ids)."""
        return dict(self._spec)

    def token_to_id(self, token: str) -> int | None:
        """The id of the piece ``token``, or None."""
        return self._core.piece_to_id(token) if isinstance(token, str) else None

    def id_to_token(self, id: int) -> str | None:
        """The piece of ``id``, or None."""
        if isinstance(id, int) and not isinstance(id, bool):
            return self._core.id_to_piece(id)
        return None

    def __repr__(self) -> str:
        return f"<SentencePieceTokenizer model_type={self.model_type} vocab_size={self.vocab_size}>"

    # ------------------------------------------------------------------ encoding

    def encode(
        self,
        text: str,
        *,
        add_bos: bool = False,
        add_eos: bool = False,
        enable_sampling: bool = False,
        alpha: float = 0.1,
        nbest_size: int = -1,
        seed: int | None = None,
    ) -> list[int]:
        """The ids of ``text``, as ``SentencePieceProcessor.encode`` gives them. With
        ``enable_sampling``, one segmentation drawn as sentencepiece draws it (see the module
        docs); the same ``seed`` draws the same one, and ``encode_batch`` gives text ``i`` the
        draw ``encode`` gives it alone only for ``i == 0``."""
        # each tokenizer's own ``encode`` is the extension's entry (``__init__``), which takes
        # the common call itself: this is the rest, and what a subclass's ``super()`` reaches
        return _encode(
            self._core,
            text,
            add_bos=add_bos,
            add_eos=add_eos,
            enable_sampling=enable_sampling,
            alpha=alpha,
            nbest_size=nbest_size,
            seed=seed,
        )

    def encode_with_offsets(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        """Ids and the ``(start, end)`` character offsets in ``text`` each comes from (the
        pieces of one character split into bytes all carry that character's span)."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, not {type(text).__name__}")
        return self._core.encode_with_offsets(_clean(text))

    def encode_batch(
        self,
        texts: Iterable[str],
        *,
        add_bos: bool = False,
        add_eos: bool = False,
        num_threads: int | None = None,
        enable_sampling: bool = False,
        alpha: float = 0.1,
        nbest_size: int = -1,
        seed: int | None = None,
    ) -> list[list[int]]:
        """The ids of each text, on ``num_threads`` threads (all cores by default). Sampling
        as in ``encode``: each text draws from a seed of its own, made from ``seed`` and its
        index, so a seeded batch gives the same ids on any number of threads."""
        _check_threads(num_threads)
        sample = _sample(self._core, enable_sampling, alpha, nbest_size, seed)
        items = texts if type(texts) is list else list(texts)
        lists = _batch(lambda ts: self._core.encode_batch(ts, num_threads=num_threads, sample=sample), items)
        if add_bos or add_eos:
            lists = [_wrap(ids, add_bos, add_eos, self.bos_id, self.eos_id) for ids in lists]
        return lists

    def encode_batch_numpy(
        self,
        texts: Iterable[str],
        *,
        num_threads: int | None = None,
        dtype: DTypeLike | None = None,
        enable_sampling: bool = False,
        alpha: float = 0.1,
        nbest_size: int = -1,
        seed: int | None = None,
    ) -> tuple[NDArray[Any], NDArray[np.int64]]:
        """:meth:`encode_batch` as ``(ids, offsets)``: every id in one flat array (``dtype``:
        ``uint16`` or ``uint32``; by default the smaller that holds every id), and text ``i``'s
        ids at ``ids[offsets[i]:offsets[i + 1]]`` (``offsets`` is int64, one longer than
        ``texts``). No Python list is made per text."""
        import numpy as np

        _check_threads(num_threads)
        sample = _sample(self._core, enable_sampling, alpha, nbest_size, seed)
        dt = _id_dtype(len(self), dtype)
        items = texts if type(texts) is list else list(texts)
        ids, offsets = _batch(
            lambda ts: self._core.encode_flat(ts, width=dt.itemsize, num_threads=num_threads, sample=sample), items
        )
        return (np.frombuffer(ids, dtype=dt.newbyteorder("<")).view(dt),
                np.frombuffer(offsets, dtype="<i8").view(np.int64))

    def tokenize(self, text: str) -> list[str]:
        """The pieces of ``text`` (byte pieces as ``<0xNN>``), as ``encode(out_type=str)``."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, not {type(text).__name__}")
        return self._core.encode_pieces(_clean(text))

    def normalize(self, text: str) -> str:
        """What the model sees of ``text``: normalized, spaces as ``▁`` when the model escapes
        them, the dummy prefix added."""
        return self._core.normalize(_clean(text))

    def convert_ids_to_tokens(self, ids: Iterable[int]) -> list[str]:
        out = []
        for i in ids:
            piece = self.id_to_token(i)
            if piece is None:
                raise UnknownTokenError(f"unknown token id {i!r}")
            out.append(piece)
        return out

    # ------------------------------------------------------------------ decoding

    def decode(self, ids: Iterable[int], *, skip_special_tokens: bool = False) -> str:
        """The text of ``ids``, as ``SentencePieceProcessor.decode`` gives it: control pieces
        are invisible, the unknown piece is `` ⁇ ``, ``▁`` is a space (the first one dropped),
        byte pieces are read as UTF-8 (each byte of a broken sequence is U+FFFD). With
        ``skip_special_tokens`` the special tokens (the unknown piece too) are left out."""
        items = list(ids)
        for i in items:
            if not isinstance(i, int) or isinstance(i, bool):
                raise TypeError(f"ids must be ints, got {type(i).__name__}")
        if skip_special_tokens:
            skip = self._added_vocab.special_ids
            items = [i for i in items if i not in skip]
        return self._core.decode(items)

    # ------------------------------------------------------------------ model inputs (bytepair._api)

    @property
    def special_tokens_map(self) -> dict[str, str]:
        """The roles the file gives: ``{"unk": "<unk>", "bos": "<s>", "eos": "</s>", ...}``
        (``pad`` only where the model has a pad piece)."""
        roles: dict[str, str] = {}
        for role, i in (("unk", self.unk_id), ("bos", self.bos_id), ("eos", self.eos_id), ("pad", self.pad_id)):
            piece = None if i is None else self.id_to_token(i)
            if piece is not None:
                roles[role] = piece
        return roles

    def _measure_edges(self, id: int) -> tuple[int, int]:
        text = (self.id_to_token(id) or "").replace("\u2581", " ")
        lead = len(text) - len(text.lstrip(" "))
        trail = len(text) - len(text.rstrip(" "))
        return (lead, trail) if lead < len(text) else (lead, lead)

    def _encode_texts(self, texts: list[str], offsets: bool) -> list[Encoded]:
        """``bytepair._api``'s core encode: ids (and character offsets) of each text."""
        if offsets:
            return [self.encode_with_offsets(t) for t in texts]
        return [(ids, None) for ids in self.encode_batch(texts)]


_T = TypeVar("_T")


def _batch(encode: Callable[[list[str]], _T], items: list[str]) -> _T:
    """``encode(items)``; a text that is not a str is a TypeError naming its type, and lone
    surrogates become U+FFFD (checked only when the core cannot take the texts as they are)."""
    try:
        return encode(items)
    except (TypeError, UnicodeEncodeError):
        for t in items:
            if not isinstance(t, str):
                raise TypeError(f"texts must be str, got {type(t).__name__}") from None
        return encode([_clean(t) for t in items])


def _id_dtype(vocab_size: int, dtype: DTypeLike | None) -> np.dtype[Any]:
    from bytepair.arrays import dtype_for

    return dtype_for(vocab_size - 1, dtype)


def _encode(
    core: _core.SentencePiece,
    text: str,
    *,
    add_bos: bool = False,
    add_eos: bool = False,
    enable_sampling: bool = False,
    alpha: float = 0.1,
    nbest_size: int = -1,
    seed: int | None = None,
) -> list[int]:
    """:meth:`SentencePieceTokenizer.encode` past its common call (a ``str``, no options),
    which ``_core.SentencePiece.encode_call`` takes itself."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, not {type(text).__name__}")
    sample = _sample(core, enable_sampling, alpha, nbest_size, seed)
    try:
        ids = core.encode(text, sample=sample)
    except UnicodeEncodeError:
        ids = core.encode(_clean(text), sample=sample)
    bos = _opt_id(core.bos_id) if add_bos else None
    eos = _opt_id(core.eos_id) if add_eos else None
    return _wrap(ids, add_bos, add_eos, bos, eos)


# a wrong argument's error names the method the caller called
_encode.__name__, _encode.__qualname__ = "encode", "SentencePieceTokenizer.encode"


def _wrap(ids: list[int], add_bos: bool, add_eos: bool, bos: int | None, eos: int | None) -> list[int]:
    """``ids`` with the model's BOS (id ``bos``) before them and its EOS after, as asked."""
    if add_bos:
        if bos is None:
            raise BytepairError("add_bos=True but this model has no BOS piece (bos_id is -1)")
        ids.insert(0, bos)
    if add_eos:
        if eos is None:
            raise BytepairError("add_eos=True but this model has no EOS piece (eos_id is -1)")
        ids.append(eos)
    return ids


def _sample(
    core: _core.SentencePiece, enable_sampling: bool, alpha: float, nbest_size: int, seed: int | None
) -> tuple[float, int, int] | None:
    """The core's ``sample`` argument, checked, or None when not sampling."""
    if not isinstance(enable_sampling, bool):
        raise TypeError(f"enable_sampling must be a bool, not {type(enable_sampling).__name__}")
    if not enable_sampling:
        return None
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not math.isfinite(alpha):
        raise BytepairError(f"alpha must be a finite number, got {alpha!r}")
    if core.model_type == "bpe":
        if not 0.0 <= alpha <= 1.0:
            raise BytepairError(f"alpha is the probability of dropping a merge for a BPE model: "
                                f"it must be in [0, 1], got {alpha!r}")
    elif alpha < 0:
        raise BytepairError(f"alpha must be >= 0 (the inverse temperature), got {alpha!r}")
    if isinstance(nbest_size, bool) or not isinstance(nbest_size, int):
        raise TypeError(f"nbest_size must be an int, not {type(nbest_size).__name__}")
    if nbest_size > _core.MAX_NBEST:
        raise BytepairError(f"nbest_size must be at most {_core.MAX_NBEST} (or negative: the "
                            f"whole lattice), got {nbest_size}")
    if seed is None:
        seed = secrets.randbits(64)
    elif isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int or None, not {type(seed).__name__}")
    return (float(alpha), max(nbest_size, -1), seed % 2**64)


def _clean(text: str) -> str:
    # lone surrogates cannot be UTF-8: they become U+FFFD, as in bytepair's other tokenizers
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _replace_surrogates(text)
    return text


def _replace_surrogates(text: str) -> str:
    return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)


def _from_bytes(data: bytes, name: str) -> SentencePieceTokenizer:
    return SentencePieceTokenizer.from_bytes(data, name=name)
