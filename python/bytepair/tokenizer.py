"""The Tokenizer: encode text to token ids and back, save and load.

The Rust extension holds the mechanism (vocabulary, merges, pattern, special tokens);
this class holds the policy: argument checks, special-token rules, file I/O.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, AbstractSet, Any, Literal, NoReturn

from bytepair import _core, _normalize
from bytepair._api import Encoded, ModelInputs
from bytepair._inspect import Inspect
from bytepair.errors import BytepairError, DisallowedSpecialTokenError, FormatError, LimitError, VocabError
from bytepair.patterns import resolve

__all__ = ["Tokenizer"]

if TYPE_CHECKING:  # numpy only for the array methods' annotations
    import numpy as np
    from numpy.typing import DTypeLike, NDArray

    from bytepair.pipeline.added_tokens import AddedToken

SpecialSet = AbstractSet[str] | Literal["all"]
DisallowedSet = Collection[str] | Literal["all"]

_STREAM_CHUNK = 1 << 16

#: Roles a special token can play (Hugging Face's ``special_tokens_map`` names, without ``_token``).
ROLES = ("bos", "eos", "unk", "pad", "sep", "cls", "mask")


def reserved_name(i: int) -> str:
    """The text of reserved slot ``i``: ``<|reserved_i|>``."""
    return f"<|reserved_{i}|>"


def _disallowed_error(found: str) -> NoReturn:
    raise DisallowedSpecialTokenError(
        f"the text contains the special token {found!r}, which is not allowed. "
        f"To encode it as the special token, pass allowed_special={{{found!r}}} (or \"all\"); "
        f"to encode it as ordinary text, pass disallowed_special=() or use encode_ordinary().",
        token=found,
    )


def _repair_surrogates(text: str) -> str:
    """Lone surrogates cannot be UTF-8 encoded; like tiktoken, replace them with U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _repair_head(text: str) -> str:
    """:func:`_repair_surrogates` for the start of a stream: a high surrogate at the very end
    is kept as it is, since the next chunk may start with its low half."""
    if text and "\ud800" <= text[-1] <= "\udbff":
        return _repair_surrogates(text[:-1]) + text[-1]
    return _repair_surrogates(text)


@functools.lru_cache(maxsize=128)
def _special_regex(tokens: frozenset[str]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(t) for t in sorted(tokens, key=len, reverse=True)))


class Tokenizer(ModelInputs, Inspect):
    """A byte-level BPE tokenizer.

    ``vocab`` maps ids to token bytes and must contain all 256 single bytes; ``merges`` lists
    pairs of token bytes in priority order (each pair's concatenation must be in ``vocab``).
    ``special_tokens`` is ``{text: id}``, or a list of texts whose ids are found in ``vocab``
    by their bytes or appended after the largest id. ``pattern`` is a preset name
    (``"gpt2"``, ``"gpt4"``, ``"o200k"``), a custom regex, or ``None`` (no splitting).
    ``normalization`` (``None``, ``"nfc"``, ``"nfkc"``, ``"lowercase"``, or steps joined by
    ``+``) is applied to text outside special tokens before it is encoded.

    >>> tok = Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"ab"}, [(b"a", b"b")])
    >>> tok.encode("abc")
    [256, 99]

    Model inputs (``tok(texts, padding=True, ...)``, templates, chat templates) are
    :class:`bytepair._api.ModelInputs`'; a tokenizer read from a Hugging Face model directory
    brings its post-processor, added-token flags and ``tokenizer_config.json`` settings.
    """

    # Added-token flags (Hugging Face's lstrip, rstrip, single_word, normalized, special) of the
    # special tokens that have other flags than the default (special, nothing stripped), and the
    # texts of the non-special ones: always matched in text, never "disallowed", never skipped.
    _nonspecial: frozenset[str] = frozenset()
    _flagged = False  # some added token strips whitespace or needs word boundaries: _encode_flagged

    # Set by train() on the tokenizer it returns when no source was weighted: how often each id
    # occurs in the training text encoded with this tokenizer, from the merge loop's final
    # pieces (no second pass over the corpus). Not saved; analysis.sweep uses it.
    _training_counts: list[int] | None = None

    def __init__(
        self,
        vocab: Mapping[int, bytes],
        merges: Sequence[tuple[bytes, bytes]],
        *,
        special_tokens: Mapping[str, int] | Sequence[str] = (),
        pattern: str | None = "gpt4",
        normalization: str | None = None,
        training: Mapping[str, Any] | None = None,
    ) -> None:
        vocab = dict(vocab)
        by_bytes: dict[bytes, int] = {}
        for i, b in vocab.items():
            if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < 2**32:
                raise VocabError(f"vocab keys must be ints in [0, 2**32), got {i!r}")
            if not isinstance(b, bytes):
                raise VocabError(f"vocab[{i}] must be bytes, got {type(b).__name__}")
            by_bytes[b] = i
        merge_ids: list[tuple[int, int]] = []
        for n, pair in enumerate(merges):
            try:
                left, right = pair
            except (TypeError, ValueError):
                raise VocabError(f"merge {n} must be a pair of bytes, got {pair!r}") from None
            try:
                merge_ids.append((by_bytes[left], by_bytes[right]))
            except KeyError as e:
                raise VocabError(f"merge {n} names {e.args[0]!r}, which is not in the vocabulary") from None
        specials = self._resolve_specials(special_tokens, by_bytes, vocab)
        self._init(vocab, list(merges), merge_ids, specials, pattern, normalization, training)
        self._check_roles(self._roles)

    @staticmethod
    def _resolve_specials(
        special_tokens: Mapping[str, int] | Sequence[str],
        by_bytes: Mapping[bytes, int],
        vocab: Mapping[int, bytes],
    ) -> dict[str, int]:
        if isinstance(special_tokens, str):
            raise TypeError("special_tokens must be a mapping {text: id} or a list of texts, not a str")
        if isinstance(special_tokens, Mapping):
            for text, i in special_tokens.items():
                if not isinstance(text, str) or not text:
                    raise TypeError(f"special token texts must be non-empty str, got {text!r}")
                if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < 2**32:
                    raise VocabError(f"special token {text!r} has the id {i!r}; ids are ints in [0, 2**32)")
            return dict(special_tokens)
        specials: dict[str, int] = {}
        next_id = max(vocab, default=-1) + 1
        for text in special_tokens:
            if not isinstance(text, str):
                raise TypeError(f"special tokens must be str, got {text!r}")
            if text in specials:
                raise VocabError(f"special token {text!r} is given twice")
            _check_special_text(text)
            found = by_bytes.get(text.encode("utf-8"))
            if found is None:
                _check_free_id(text, next_id)
                found, next_id = next_id, next_id + 1
            specials[text] = found
        return specials

    def _init(
        self,
        vocab: dict[int, bytes],
        merges: list[tuple[bytes, bytes]] | None,
        merge_ids: list[tuple[int, int]] | None,
        specials: dict[str, int],
        pattern: str | None,
        normalization: str | None,
        training: Mapping[str, Any] | None,
        reserved: Collection[int] = (),
        roles: Mapping[str, str] | None = None,
    ) -> None:
        self._pattern_name, self._pattern = resolve(pattern)
        for text in specials:  # every constructor comes here, the file loaders' included
            _check_special_text(text)
        core = _core.Encoder(sorted(vocab.items()), merge_ids, self._pattern, sorted(specials.items(), key=lambda kv: kv[1]))
        self._adopt(
            core, vocab, merges, specials, training, normalization=normalization, reserved=reserved, roles=roles
        )

    def _adopt(
        self,
        core: _core.Encoder,
        vocab: dict[int, bytes] | None,
        merges: list[tuple[bytes, bytes]] | None,
        specials: dict[str, int],
        training: Mapping[str, Any] | None,
        *,
        normalization: str | None = None,
        reserved: Collection[int] = (),
        roles: Mapping[str, str] | None = None,
    ) -> None:
        """Takes the extension's encoder and the Python-side tables (the last step of every
        constructor)."""
        self._normalization = _normalize.canonical(normalization)
        # _normalize_stretch normalizes a stretch of text between special tokens; _normalize a
        # whole text, its special-token text kept as typed (``_normalize.split``, which every
        # encode path goes through; the array and corpus code call _normalize), or None.
        self._normalize_stretch = _normalize.function(self._normalization)
        self._normalize: _normalize.Normalizer | None = None
        if self._normalize_stretch is not None:
            self._normalize = functools.partial(_normalize.apply, fn=self._normalize_stretch, specials=frozenset(specials))
        self._core = core
        self._vocab_dict = vocab
        self._merges = merges
        self._special_tokens = dict(specials)
        self._training: dict[str, Any] = dict(training or {})
        self._special_set = frozenset(specials)
        # Short calls (a chat message, a few words) cost more in argument checks than in
        # encoding: with every option at its default the checks below are skipped.
        self._plain = self._normalize is None
        by_id = {i: t for t, i in specials.items()}
        for i in reserved:
            if i not in by_id:
                raise VocabError(f"reserved slot {i} is not a special token id")
        self._reserved = frozenset(reserved)
        self._roles: dict[str, str] = dict(roles or {})

    def _check_roles(self, roles: Mapping[str, str]) -> None:
        for role, text in roles.items():
            if role not in ROLES:
                raise VocabError(f"unknown special-token role {role!r}; roles are {', '.join(ROLES)}")
            if text not in self._special_tokens:
                raise VocabError(f"the {role} token {text!r} is not a special token of this tokenizer")

    @property
    def _vocab(self) -> dict[int, bytes]:
        """``{id: bytes}``; made from the extension on first use for tokenizers loaded from rank
        files (o200k_base's would be 200,000 bytes objects that most programs never look at)."""
        if self._vocab_dict is None:
            self._vocab_dict = dict(self._core.vocab())
        return self._vocab_dict

    @classmethod
    def _from_merges(
        cls,
        vocab: dict[int, bytes],
        merges: list[tuple[bytes, bytes]],
        merge_ids: list[tuple[int, int]],
        special_tokens: dict[str, int],
        pattern: str | None,
        training: Mapping[str, Any] | None = None,
        *,
        normalization: str | None = None,
        reserved: Collection[int] = (),
        roles: Mapping[str, str] | None = None,
    ) -> Tokenizer:
        """Builds from already consistent parts (the trainer's and the file loader's way in)."""
        self = cls.__new__(cls)
        self._init(vocab, merges, merge_ids, special_tokens, pattern, normalization, training, reserved, roles)
        self._check_roles(self._roles)
        return self

    @classmethod
    def _from_ranks(
        cls,
        ranks: Mapping[bytes, int],
        *,
        special_tokens: Mapping[str, int],
        pattern: str | None,
        training: Mapping[str, Any] | None = None,
        normalization: str | None = None,
        reserved: Collection[int] = (),
        roles: Mapping[str, str] | None = None,
    ) -> Tokenizer:
        """tiktoken's model: the rank of a token is its id, and a pair merges into the token its
        bytes make, lowest rank first."""
        self = cls.__new__(cls)
        vocab = {r: b for b, r in ranks.items()}
        self._init(vocab, None, None, dict(special_tokens), pattern, normalization, training, reserved, roles)
        self._check_roles(self._roles)
        return self

    @classmethod
    def _from_rank_file(
        cls, data: bytes, *, special_tokens: Mapping[str, int], pattern: str | None
    ) -> Tokenizer | None:
        """Like :meth:`_from_ranks` from the content of a rank file, read by the extension; None
        when that content is not in the common form (the caller then parses it in Python)."""
        self = cls.__new__(cls)
        self._pattern_name, self._pattern = resolve(pattern)
        specials = dict(special_tokens)
        for text in specials:
            _check_special_text(text)
        core = _core.Encoder.from_tiktoken(data, self._pattern, sorted(specials.items(), key=lambda kv: kv[1]))
        if core is None:
            return None
        self._adopt(core, None, None, specials, None)
        return self

    # ------------------------------------------------------------------ properties

    _name: str | None = None

    @property
    def name(self) -> str | None:
        """The name of a pretrained encoding (``"cl100k_base"``, ...), else ``None``."""
        return self._name

    @property
    def vocab_size(self) -> int:
        """Number of ids: ordinary tokens plus special tokens."""
        # A special token is counted apart unless its id is an ordinary token (with its bytes).
        return self._core.size + sum(1 for t, i in self._special_tokens.items() if self._core.lookup(t.encode()) != i)

    @property
    def vocab(self) -> dict[int, bytes]:
        """The ordinary tokens, ``{id: bytes}`` (a copy)."""
        return dict(self._vocab)

    @property
    def merges(self) -> list[tuple[bytes, bytes]]:
        """The merges in priority order, as pairs of token bytes (a copy). For a tokenizer
        defined by token ranks (tiktoken), the merges recovered from the ranks: each token's
        last merge, in id order, which encode every text as the ranks do."""
        return list(self._merge_list())

    @property
    def special_tokens(self) -> dict[str, int]:
        """``{text: id}`` of the special tokens (a copy)."""
        return dict(self._special_tokens)

    @property
    def pattern(self) -> str | None:
        """The split pattern's regex (``None``: the whole text is one piece)."""
        return self._pattern

    @property
    def pattern_name(self) -> str | None:
        """The preset name of the pattern, or ``None`` for a custom pattern or no pattern."""
        return self._pattern_name

    @property
    def normalization(self) -> str | None:
        """How text is normalized before it is encoded (``"nfc"``, ``"nfkc+lowercase"``, ...), or ``None``."""
        return self._normalization

    @property
    def special_tokens_map(self) -> dict[str, str]:
        """The roles of special tokens, ``{"bos": "<s>", "eos": "</s>", ...}`` (a copy)."""
        return dict(self._roles)

    @property
    def reserved_special_tokens(self) -> list[str]:
        """The reserved slots not yet claimed (``<|reserved_0|>``, ...), in id order."""
        return [t for t, i in sorted(self._special_tokens.items(), key=lambda kv: kv[1]) if i in self._reserved]

    def with_special_tokens(
        self, tokens: Mapping[str, int] | Sequence[str] = (), *, roles: Mapping[str, str] | None = None
    ) -> Tokenizer:
        """A copy of this tokenizer with more special tokens (and roles); no other id changes.

        ``tokens`` is a list of texts, each of which claims the first free reserved slot
        (``<|reserved_k|>``, lowest id first) or, when none is left, the id after the largest;
        or ``{text: id}``, where ``id`` is a reserved slot to claim or an id no token uses. A
        text that is already a special token keeps its id. ``roles`` names special tokens by
        role, ``{"bos": "<s>", "eos": "</s>", "pad": "<pad>", "unk": "<unk>"}`` (also
        ``sep``, ``cls``, ``mask``); they are kept in the file (:attr:`special_tokens_map`).
        """
        if isinstance(tokens, str):
            raise TypeError("tokens must be a list of texts or a mapping {text: id}, not a str")
        specials = dict(self._special_tokens)
        reserved = set(self._reserved)
        by_id = {i: t for t, i in specials.items()}

        def claim(text: str, i: int) -> None:
            if i in reserved:
                del specials[by_id[i]]
                reserved.discard(i)
            specials[text] = i
            by_id[i] = text

        items = list(tokens.items()) if isinstance(tokens, Mapping) else [(t, None) for t in tokens]
        for text, want in items:
            if not isinstance(text, str) or not text:
                raise TypeError(f"special token texts must be non-empty str, got {text!r}")
            if text in specials and specials[text] not in reserved:
                if want is not None and specials[text] != want:
                    raise VocabError(f"{text!r} is already the special token {specials[text]}, not {want}")
                continue
            if want is None:
                free = sorted(reserved)
                if free:
                    claim(text, free[0])
                else:
                    ids = list(self._vocab) + list(specials.values())
                    _check_free_id(text, max(ids, default=-1) + 1)
                    claim(text, max(ids, default=-1) + 1)
                continue
            if not isinstance(want, int) or isinstance(want, bool) or not 0 <= want < 2**32:
                raise VocabError(f"special token {text!r} has the id {want!r}; ids are ints in [0, 2**32)")
            if want in self._vocab:
                raise VocabError(f"id {want} is the ordinary token {self._vocab[want]!r}; pick a reserved slot or a free id")
            if want in by_id and want not in reserved:
                raise VocabError(f"id {want} is already the special token {by_id[want]!r}")
            claim(text, want)
        new_roles = dict(self._roles)
        for role, text in (roles or {}).items():
            new_roles[role] = text
        new_roles = {r: t for r, t in new_roles.items() if t in specials or r in (roles or {})}
        out = type(self).__new__(type(self))
        out._init(
            self._vocab,
            self._merges,
            None if self._merges is None else _merge_ids(self._vocab, self._merges),
            specials,
            self._pattern,
            self._normalization,
            self._training,
            reserved,
            new_roles,
        )
        out._pattern_name = self._pattern_name
        out._name = self._name
        out._carry_inputs(self)
        out._check_roles(new_roles)
        return out

    @property
    def training(self) -> dict[str, Any]:
        """How this tokenizer was trained (options, input sizes, bytepair version); may be empty."""
        return dict(self._training)

    def __repr__(self) -> str:
        pattern = self._pattern_name or ("custom" if self._pattern else None)
        return (
            f"<Tokenizer vocab_size={self.vocab_size} pattern={pattern!r} "
            f"special_tokens={len(self._special_tokens)}>"
        )

    # ------------------------------------------------------------------ interop API
    # The names users type in tiktoken and Hugging Face tokenizers, plus pickling and equality.

    def __len__(self) -> int:
        """:attr:`n_vocab`: one past the largest id (the size of an embedding table)."""
        return self.n_vocab

    @property
    def n_vocab(self) -> int:
        """One past the largest id, special tokens included (tiktoken's ``n_vocab``).

        This sizes an embedding table. It can exceed :attr:`vocab_size`, which counts the ids
        that exist: cl100k_base has 100,261 ids, the largest being 100,276.
        """
        return self.max_token_value + 1

    @property
    def max_token_value(self) -> int:
        """The largest id, special tokens included (tiktoken's ``max_token_value``)."""
        largest: int | None = getattr(self, "_max_id", None)
        if largest is None:
            largest = max([*self._vocab, *self._special_tokens.values()])
            self._max_id = largest
        return largest

    @property
    def eot_token(self) -> int:
        """The id of the end-of-text token: the ``eos`` role if set, else ``<|endoftext|>``."""
        text = self._roles.get("eos", "<|endoftext|>")
        if text not in self._special_tokens:
            raise VocabError("this tokenizer has no end-of-text token (no 'eos' role and no '<|endoftext|>')")
        return self._special_tokens[text]

    @property
    def special_tokens_set(self) -> set[str]:
        """The texts of the special tokens."""
        return set(self._special_tokens)

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of the one token whose text (special tokens included) or bytes are given;
        :class:`VocabError` if there is none."""
        if isinstance(text_or_bytes, str):
            if text_or_bytes in self._special_tokens:
                return self._special_tokens[text_or_bytes]
            data = text_or_bytes.encode("utf-8", "surrogatepass")
        elif isinstance(text_or_bytes, (bytes, bytearray, memoryview)):
            data = bytes(text_or_bytes)
        else:
            raise TypeError(f"encode_single_token() takes str or bytes, not {type(text_or_bytes).__name__}")
        found = self._core.lookup(data) if data else None
        if found is None:
            found = self._special_tokens.get(data.decode("utf-8", "replace"))
        if found is None:
            raise VocabError(f"{text_or_bytes!r} is not a single token of this tokenizer")
        return found

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token (tiktoken's name for :meth:`token_bytes`)."""
        return self.token_bytes(_as_id(token))

    def decode_tokens_bytes(self, tokens: Iterable[int]) -> list[bytes]:
        """The bytes of each token, in order."""
        return [self.token_bytes(i) for i in _as_ids(tokens)]

    def decode_batch(self, batch: Iterable[Iterable[int]], *, errors: str = "replace") -> list[str]:
        """:meth:`decode` of each list of ids (numpy arrays accepted, 2-D included)."""
        return [self.decode(ids, errors=errors) for ids in batch]

    def encode_ordinary_batch(self, texts: Sequence[str], *, num_threads: int | None = None) -> list[list[int]]:
        """:meth:`encode_ordinary` of each text, in parallel (``num_threads=None``: all cores)."""
        return self.encode_batch(texts, num_threads=num_threads, disallowed_special=())

    def token_to_id(self, token: str | bytes) -> int | None:
        """The id of a token, or ``None`` (Hugging Face's ``token_to_id``).

        A ``str`` is a token as Hugging Face's byte-level files write it (``"Ġthe"``: each byte
        shown as one character of GPT-2's byte-to-unicode table) or a special token's text;
        ``bytes`` are the token's own bytes.
        """
        if isinstance(token, str):
            if token in self._special_tokens:
                return self._special_tokens[token]
            from bytepair.formats.gpt2 import unicode_to_bytes

            raw = unicode_to_bytes(token)
            if raw is None:
                return None
        elif isinstance(token, (bytes, bytearray)):
            raw = bytes(token)
        else:
            raise TypeError(f"token_to_id() takes str or bytes, not {type(token).__name__}")
        return self._core.lookup(raw) if raw else None

    def id_to_token(self, id: int) -> str | None:
        """The token of an id as Hugging Face writes it (``"Ġthe"``; special tokens as their
        text), or ``None`` for an id no token has (Hugging Face's ``id_to_token``)."""
        id = _as_id(id)
        for text, i in self._special_tokens.items():
            if i == id and self._core.lookup(text.encode()) != i:
                return text
        if not 0 <= id <= _MAX_ID:
            return None
        try:
            data = self._core.token_bytes(id)
        except BytepairError:
            return None
        from bytepair.formats.gpt2 import bytes_to_unicode

        return bytes_to_unicode(data)

    def encode_with_offsets(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: DisallowedSet = "all",
    ) -> tuple[list[int], list[tuple[int, int]]]:
        """Encodes ``text`` and gives each token's ``(start, end)`` character offsets in it.

        A token holding part of a character's UTF-8 bytes spans that whole character (as Hugging
        Face's byte-level offsets do). With a normalization, offsets are into the normalized text.
        """
        ids = self.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        import numpy as np

        data = np.frombuffer(_repair_surrogates(self._norm(text)).encode("utf-8"), dtype=np.uint8)
        # char_of[k]: the index of the character holding byte k.
        char_of = np.cumsum((data & 0xC0) != 0x80) - 1
        lengths = np.fromiter((len(self._core.token_bytes(i)) for i in ids), dtype=np.int64, count=len(ids))
        ends = np.cumsum(lengths)
        starts = ends - lengths
        if len(ids):
            first = char_of[starts]
            last = char_of[ends - 1] + 1
            offsets = list(zip(first.tolist(), last.tolist(), strict=True))
        else:
            offsets = []
        return ids, offsets

    # ------------------------------------------------------------------ model inputs (bytepair._api)

    def _set_added(self, flags: Mapping[str, AddedToken]) -> None:
        """Takes the added-token flags of a file (``{text: AddedToken}``, for tokens that are
        special tokens of this tokenizer); only the ones that differ from the default are kept."""
        from bytepair.pipeline.added_tokens import AddedToken

        default = {t: AddedToken(t, i) for t, i in self._special_tokens.items()}
        self._added_flags = {t: f for t, f in flags.items() if t in default and f.id == default[t].id and f != default[t]}
        self._nonspecial = frozenset(t for t, f in self._added_flags.items() if not f.special)
        self.__dict__.pop("_added_cache", None)
        self._flagged = self._added_vocab.needs_python
        if self._nonspecial or self._flagged:
            self._plain = False  # the short-call paths know nothing of them

    def _carry_inputs(self, other: Tokenizer) -> None:
        """Keeps ``other``'s model-input settings (a copy with more special tokens)."""
        if other._added_flags:
            self._set_added(other._added_flags)
        self._post_processor = other._post_processor
        self._inputs = other._inputs
        source = other.__dict__.get("_chat_template_source")
        if source is not None:
            self._chat_template_source = source

    def convert_ids_to_tokens(self, ids: int | Iterable[int], *, skip_special_tokens: bool = False) -> Any:
        """The token of an id, or of each (as :meth:`id_to_token` writes them: ``"Ġthe"``)."""
        if isinstance(ids, int) or not isinstance(ids, Iterable):
            return self.id_to_token(_as_id(ids))
        skip = self._added_vocab.special_ids if skip_special_tokens else frozenset()
        return [self.id_to_token(i) for i in _as_ids(ids) if i not in skip]

    def _token_lengths(self) -> Any:
        """The byte length of every id as a numpy array indexed by id (special tokens too);
        None where the ids are too sparse for a table."""
        table = self.__dict__.get("_length_table")
        if table is None:
            import numpy as np

            top = self.max_token_value
            if top >= 1 << 24:
                return None
            table = np.zeros(top + 1, dtype=np.int64)
            ids = np.fromiter(self._vocab.keys(), dtype=np.int64, count=len(self._vocab))
            table[ids] = np.fromiter((len(b) for b in self._vocab.values()), dtype=np.int64, count=len(self._vocab))
            for text, i in self._special_tokens.items():
                table[i] = len(text.encode("utf-8"))
            self.__dict__["_length_table"] = table
        return table

    def _char_offsets(self, text: str, ids: list[int], base: int = 0) -> list[tuple[int, int]]:
        """Each token's ``(start, end)`` character span in ``text`` (+ ``base``); a token holding
        part of a character's bytes spans that character, as Hugging Face's offsets do."""
        import numpy as np

        if not ids:
            return []
        table = self._token_lengths()
        arr = np.asarray(ids, dtype=np.int64)
        if table is not None:
            lengths = table[arr]
        else:
            lengths = np.fromiter((len(self._core.token_bytes(i)) for i in ids), dtype=np.int64, count=len(ids))
        ends = np.cumsum(lengths)
        starts = ends - lengths
        if not text.isascii():
            data = np.frombuffer(_repair_surrogates(text).encode("utf-8"), dtype=np.uint8)
            char_of = np.cumsum((data & 0xC0) != 0x80) - 1
            starts, ends = char_of[starts], char_of[ends - 1] + 1
        if base:
            starts, ends = starts + base, ends + base
        return list(zip(starts.tolist(), ends.tolist(), strict=True))

    def _encode_flat_with_offsets(self, texts: list[str], allowed: list[int]) -> list[Encoded]:
        """Ids and character offsets of every text from one flat array (the array path's
        encoder): the offsets come from the token lengths with NumPy, no Python loop per token."""
        import numpy as np

        from bytepair import arrays

        flat, bounds = arrays.encode_documents(self, texts, allowed=allowed, dt=np.dtype(np.uint32), num_threads=None)
        ids_all: list[int] = flat.tolist()
        cuts: list[int] = bounds.tolist()
        lengths = self._token_lengths()[flat.astype(np.int64)]
        ends = np.cumsum(lengths)
        starts = ends - lengths
        joined = "".join(texts)
        if not joined.isascii():
            data = np.frombuffer(_repair_surrogates(joined).encode("utf-8"), dtype=np.uint8)
            char_of = np.cumsum((data & 0xC0) != 0x80) - 1
            if len(ends) and len(char_of) != int(ends[-1]):  # cannot be: the tokens are the texts' bytes
                raise BytepairError("internal error: the tokens do not cover the text")
            if len(ends):
                starts, ends = char_of[starts], char_of[ends - 1] + 1
        char_base = np.cumsum([0] + [len(t) for t in texts[:-1]], dtype=np.int64)
        base = np.repeat(char_base, np.diff(bounds))
        pairs = list(zip((starts - base).tolist(), (ends - base).tolist()))
        return [(ids_all[a:b], pairs[a:b]) for a, b in zip(cuts, cuts[1:])]

    def _batch_char_offsets(self, texts: list[str], all_ids: list[list[int]]) -> list[list[tuple[int, int]]]:
        """:meth:`_char_offsets` of every text at once: one pass of NumPy over the whole batch
        (the tokens of each text cover exactly its UTF-8 bytes, so the batch's tokens cover
        the bytes of the texts joined)."""
        import numpy as np

        table = self._token_lengths()
        counts = np.fromiter((len(ids) for ids in all_ids), dtype=np.int64, count=len(all_ids))
        total = int(counts.sum())
        if table is None or not total:
            return [self._char_offsets(t, ids) for t, ids in zip(texts, all_ids, strict=True)]
        flat = np.fromiter((i for ids in all_ids for i in ids), dtype=np.int64, count=total)
        lengths = table[flat]
        ends = np.cumsum(lengths)
        starts = ends - lengths
        joined = "".join(texts)
        char_base = np.cumsum([0] + [len(t) for t in texts[:-1]], dtype=np.int64)
        if not joined.isascii():
            data = np.frombuffer(_repair_surrogates(joined).encode("utf-8"), dtype=np.uint8)
            char_of = np.cumsum((data & 0xC0) != 0x80) - 1
            if len(char_of) != int(ends[-1]):  # not the bytes of the texts: one text at a time
                return [self._char_offsets(t, ids) for t, ids in zip(texts, all_ids, strict=True)]
            starts, ends = char_of[starts], char_of[ends - 1] + 1
        elif len(joined) != int(ends[-1]):
            return [self._char_offsets(t, ids) for t, ids in zip(texts, all_ids, strict=True)]
        base = np.repeat(char_base, counts)
        pairs = list(zip((starts - base).tolist(), (ends - base).tolist()))
        out: list[list[tuple[int, int]]] = []
        at = 0
        for n in counts.tolist():
            out.append(pairs[at : at + n])
            at += n
        return out

    def _measure_edges(self, id: int) -> tuple[int, int]:
        """Spaces at the start and end of a token (for ``trim_offsets``): byte-level tokens by
        their bytes (only the space byte shows as ``Ġ``), added tokens by their text."""
        data = self._core.token_bytes(id)
        added = self._added_vocab.special_ids | self._added_vocab.non_special_ids
        if id in added:
            text = data.decode("utf-8")
            return len(text) - len(text.lstrip()), len(text) - len(text.rstrip())
        return len(data) - len(data.lstrip(b" ")), len(data) - len(data.rstrip(b" "))

    def _encode_flagged(self, texts: list[str], allowed_special: SpecialSet) -> list[list[int]]:
        """The encode paths when some added token strips whitespace or needs word boundaries:
        the text is cut at the added tokens that are matched (the non-special ones, and the
        special ones allowed) as :class:`~bytepair.pipeline.AddedVocabulary` cuts it, and the
        stretches between are encoded as ordinary text, in one batch. Texts are checked."""
        from bytepair.pipeline.added_tokens import AddedVocabulary

        added = self._added_vocab
        if allowed_special != "all":
            keep = frozenset(allowed_special) | self._nonspecial
            added = AddedVocabulary(t for t in added if t.content in keep)
        cuts = [added.split(t) for t in texts]
        parts = [self._norm(t[a:b]) for t, cut in zip(texts, cuts, strict=True) for i, a, b in cut if i is None]
        try:
            encoded = iter(self._core.encode_batch(parts, [], num_threads=None))
        except UnicodeEncodeError:
            encoded = iter(self._core.encode_batch([_repair_surrogates(p) for p in parts], [], num_threads=None))
        out: list[list[int]] = []
        for cut in cuts:
            ids: list[int] = []
            for i, _, _ in cut:
                if i is None:
                    ids += next(encoded)
                else:
                    ids.append(i)
            out.append(ids)
        return out

    def _encode_texts(self, texts: list[str], offsets: bool) -> list[Encoded]:
        """``bytepair._api``'s core encode: each text with every added token matched (special or
        not, flags honoured), as Hugging Face's ``encode(text, add_special_tokens=False)``."""
        added = self._added_vocab
        if not added.needs_python:
            every = list(self._special_tokens.values())
            if offsets and self._normalize is None and self._token_lengths() is not None:
                return self._encode_flat_with_offsets(texts, every)
            if self._normalize is not None:
                all_ids = self._join(self._parts(texts, "all"), None)
            else:

                def run(ts: list[str], allowed: list[int]) -> list[list[int]]:
                    try:
                        return self._core.encode_batch(ts, allowed, num_threads=None)
                    except UnicodeEncodeError:
                        return self._core.encode_batch([_repair_surrogates(t) for t in ts], allowed, num_threads=None)

                free = self._special_free(texts)
                if free is None or not any(free):
                    all_ids = run(texts, every)
                elif all(free):
                    all_ids = run(texts, [])
                else:
                    plain = iter(run([t for t, f in zip(texts, free, strict=True) if f], []))
                    rest = iter(run([t for t, f in zip(texts, free, strict=True) if not f], every))
                    all_ids = [next(plain) if f else next(rest) for f in free]
            if not offsets:
                return [(ids, None) for ids in all_ids]
            normed = texts if self._normalize is None else [self._norm(t) for t in texts]
            return list(zip(all_ids, self._batch_char_offsets(normed, all_ids), strict=True))
        # Some added token strips whitespace or wants word boundaries: cut in Python, encode the
        # ordinary stretches of every text in one batch, put the pieces back in order.
        cuts = [added.split(t) for t in texts]
        stretches = [t[a:b] for t, cut in zip(texts, cuts, strict=True) for i, a, b in cut if i is None]
        parts = [self._norm(s) for s in stretches]
        try:
            encoded = self._core.encode_batch(parts, [], num_threads=None)
        except UnicodeEncodeError:
            encoded = self._core.encode_batch([_repair_surrogates(p) for p in parts], [], num_threads=None)
        out: list[Encoded] = []
        k = 0
        for text, cut in zip(texts, cuts, strict=True):
            ids: list[int] = []
            offs: list[tuple[int, int]] = []
            for i, a, b in cut:
                if i is None:
                    ids += encoded[k]
                    if offsets:
                        offs += self._char_offsets(parts[k], encoded[k], a)
                    k += 1
                else:
                    ids.append(i)
                    offs.append((a, b))
            out.append((ids, offs if offsets else None))
        return out

    def _encode_flat(self, texts: list[str]) -> tuple[Any, Any]:
        """``_encode_texts(texts, False)`` as one flat array and bounds, from the array path's
        encoder when no added token needs Python (no Python int per token)."""
        if self._added_vocab.needs_python or self._normalize is not None:
            return super()._encode_flat(texts)
        import numpy as np

        from bytepair import arrays

        every = list(self._special_tokens.values())
        dt = np.dtype(np.uint32)
        free = self._special_free(texts)
        if free is None or not any(free):
            return arrays.encode_documents(self, texts, allowed=every, dt=dt, num_threads=None)
        if all(free):
            return arrays.encode_documents(self, texts, allowed=[], dt=dt, num_threads=None)
        # The texts that hold a special token's text apart; then both put back in order.
        sel = np.array(free)
        parts = [
            (sel, arrays.encode_documents(self, [t for t, f in zip(texts, free, strict=True) if f], allowed=[], dt=dt)),
            (~sel, arrays.encode_documents(self, [t for t, f in zip(texts, free, strict=True) if not f], allowed=every, dt=dt)),
        ]
        lens = np.empty(len(texts), dtype=np.int64)
        for which, (_, part_bounds) in parts:
            lens[which] = np.diff(part_bounds)
        bounds = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum(lens, out=bounds[1:])
        flat = np.empty(int(bounds[-1]), dtype=dt)
        for which, (part_flat, part_bounds) in parts:
            part_lens = np.diff(part_bounds)
            step = np.arange(len(part_flat), dtype=np.int64) - np.repeat(part_bounds[:-1], part_lens)
            flat[np.repeat(bounds[:-1][which], part_lens) + step] = part_flat
        return flat, bounds

    def _special_free(self, texts: list[str]) -> list[bool] | None:
        """Which texts hold no added token's text, found by looking for the first two characters
        of each (``"<|"``): those are encoded with no added token allowed, which gives the same
        ids, faster, and with the encoder's segment cache (which does not serve calls that allow
        special tokens). None when the added tokens start in too many ways to look for."""
        heads: tuple[str, ...] | None = self.__dict__.get("_special_heads")
        if heads is None:
            heads = self.__dict__["_special_heads"] = tuple(sorted({t[:2] for t in self._special_tokens}))
        if not heads:
            return [True] * len(texts)
        if len(heads) > 8:
            return None
        return [not any(h in t for h in heads) for t in texts]

    def __reduce__(self) -> tuple[Any, ...]:
        # A shipped encoding travels by name (the worker loads its own copy, once); anything else
        # as its file's content, so that a spawned worker rebuilds an equal tokenizer.
        if self._name is not None:
            from bytepair.encodings import get_encoding

            if get_encoding(self._name) is self:
                return (get_encoding, (self._name,))
        from bytepair._fileformat import from_dict, to_dict

        return self._with_state((from_dict, (to_dict(self),)))

    def _content(self) -> tuple[Any, ...]:
        return (
            self._pattern,
            self._normalization,
            self._special_tokens,
            self._reserved,
            self._roles,
            self._merges,
            self._vocab,
        )

    def __eq__(self, other: object) -> bool:
        """Equal when they encode and decode alike and ship the same file content (vocabulary,
        merges or ranks, pattern, normalization, special tokens, roles); training notes aside."""
        if not isinstance(other, Tokenizer) or type(other) is not type(self):
            return NotImplemented
        if self is other:
            return True
        if self._core.size != other._core.size:
            return False
        return self._content() == other._content()

    def __hash__(self) -> int:
        return hash((self._pattern, self._normalization, self._core.size, frozenset(self._special_tokens.items())))

    def save_pretrained(self, save_directory: str | os.PathLike[str], *, model_max_length: Any = None) -> list[str]:
        """Writes a Hugging Face model directory (``tokenizer.json``, ``vocab.json``,
        ``merges.txt``, ``special_tokens_map.json``, ``tokenizer_config.json``) that
        ``transformers.AutoTokenizer.from_pretrained`` loads; returns the paths written. The
        post-processor, the added tokens' flags and the model-input settings go with it;
        ``model_max_length`` (an int) replaces the tokenizer's own."""
        from bytepair.formats import hf

        return hf.save_pretrained(self, save_directory, model_max_length=hf._UNSET if model_max_length is None else model_max_length)

    @classmethod
    def from_pretrained(cls, directory: str | os.PathLike[str]) -> Tokenizer:
        """Reads a Hugging Face model directory (``tokenizer.json``, or ``vocab.json`` +
        ``merges.txt``) of a byte-level BPE tokenizer."""
        from bytepair.formats.hf import load_pretrained

        tok = load_pretrained(directory)
        if not isinstance(tok, Tokenizer):
            raise FormatError(
                f"{os.fspath(directory)}: the model is WordPiece, not byte-level BPE; bytepair.load(path) reads it as a WordPieceTokenizer"
            )
        return tok

    def _merge_list(self) -> list[tuple[bytes, bytes]]:
        """The merges, recovered from the ranks for a rank model (each token's last merge, in
        id order: they encode every text as the ranks do)."""
        if self._merges is not None:
            return self._merges
        recovered: list[tuple[bytes, bytes]] | None = getattr(self, "_recovered_merges", None)
        if recovered is None:
            vocab = self._vocab
            recovered = [(vocab[a], vocab[b]) for a, b, _ in self._core.rank_merges()]
            self._recovered_merges = recovered
        return recovered

    # ------------------------------------------------------------------ encoding

    def _allowed_ids(self, allowed_special: SpecialSet) -> list[int]:
        if allowed_special == "all":
            return list(self._special_tokens.values())
        allowed = [self._special_tokens[t] for t in allowed_special if t in self._special_tokens]
        if self._nonspecial:  # non-special added tokens are always matched (Hugging Face's encode)
            allowed += [self._special_tokens[t] for t in self._nonspecial]
        return allowed

    def _disallowed(self, allowed_special: SpecialSet, disallowed_special: DisallowedSet) -> frozenset[str]:
        allowed = self._special_set if allowed_special == "all" else allowed_special
        if disallowed_special == "all":
            return frozenset(self._special_set - allowed - self._nonspecial)
        return frozenset(disallowed_special) - self._nonspecial

    def _check_disallowed(self, text: str, allowed_special: SpecialSet, disallowed_special: DisallowedSet) -> None:
        disallowed = self._disallowed(allowed_special, disallowed_special)
        if not disallowed:
            return
        if disallowed <= self._special_set:
            ids = [self._special_tokens[t] for t in disallowed]
            try:
                hit = self._core.find_special(text, ids)
            except UnicodeEncodeError:
                hit = self._core.find_special(_repair_surrogates(text), ids)
            found = None if hit is None else self._core.token_bytes(hit[1]).decode("utf-8")
        else:
            m = _special_regex(disallowed).search(text)
            found = None if m is None else m.group()
        if found is not None:
            _disallowed_error(found)

    def _norm(self, text: str) -> str:
        """Normalizes text outside special tokens (no-op without a normalization)."""
        if self._normalize is None:
            return text
        return self._normalize(text)

    def _encode_core(self, text: str, allowed: list[int], num_threads: int | None = 1) -> list[int]:
        try:
            return self._core.encode(text, allowed, num_threads=num_threads)
        except UnicodeEncodeError:
            return self._core.encode(_repair_surrogates(text), allowed, num_threads=num_threads)

    def encode(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: DisallowedSet = "all",
        num_threads: int | None = 1,
        max_tokens: int | None = None,
        max_bytes: int | None = None,
    ) -> list[int]:
        """Encodes ``text`` to token ids.

        ``max_bytes`` / ``max_tokens`` (for servers that encode untrusted requests): a text
        longer than that many UTF-8 bytes, or that encodes to more tokens, raises
        :class:`~bytepair.errors.LimitError` before it is encoded (the tokens are counted only
        up to the limit, so a huge text costs no more than the limit).

        Special-token text follows tiktoken's rules: tokens in ``allowed_special`` (a set, or
        ``"all"``) become their ids; tokens in ``disallowed_special`` (default ``"all"``: every
        special token not allowed) raise :class:`DisallowedSpecialTokenError`; pass
        ``disallowed_special=()`` to encode them as ordinary text.

        ``num_threads`` (default 1; ``None``: all cores) lets a large text be encoded by several
        threads, cut where the split pattern itself ends a piece: the ids are the same whatever
        the number of threads.
        """
        if (
            self._plain
            and type(text) is str
            and type(num_threads) is int
            and num_threads == 1
            and max_tokens is None
            and max_bytes is None
            and not allowed_special
            and disallowed_special == "all"
        ):
            # Every special token is disallowed and none allowed: the text has none (else the
            # checks below raise) and is then encoded as ordinary text.
            try:
                ids = self._core.encode_plain(text)
                if ids is not None:
                    return ids
            except UnicodeEncodeError:
                pass
        if not isinstance(text, str):
            raise TypeError(f"encode() takes a str, not {type(text).__name__}")
        num_threads = _check_threads(num_threads)
        self._check_disallowed(text, allowed_special, disallowed_special)
        if max_tokens is not None or max_bytes is not None:
            self._check_limits(text, max_tokens, max_bytes, allowed_special, num_threads)
        if self._flagged:
            return self._encode_flagged([text], allowed_special)[0]
        if self._normalize is not None:
            return self._join(self._parts([text], allowed_special), num_threads)[0]
        return self._encode_core(text, self._allowed_ids(allowed_special), num_threads)

    def encode_ordinary(
        self, text: str, *, num_threads: int | None = 1, max_tokens: int | None = None, max_bytes: int | None = None
    ) -> list[int]:
        """Encodes ``text`` treating special-token text as ordinary text (threads and limits as
        in :meth:`encode`). As everywhere, a normalization leaves special-token text as typed:
        the same ids as ``encode(text, disallowed_special=())``."""
        if (
            self._plain
            and type(text) is str
            and type(num_threads) is int
            and num_threads == 1
            and max_tokens is None
            and max_bytes is None
        ):
            try:
                return self._core.encode_ordinary(text)
            except UnicodeEncodeError:
                return self._core.encode_ordinary(_repair_surrogates(text))
        if not isinstance(text, str):
            raise TypeError(f"encode_ordinary() takes a str, not {type(text).__name__}")
        num_threads = _check_threads(num_threads)
        if max_tokens is not None or max_bytes is not None:
            self._check_limits(text, max_tokens, max_bytes, frozenset(), num_threads, ordinary=True)
        if self._nonspecial:  # not special: matched as Hugging Face matches them, like any word
            return self.encode(text, disallowed_special=(), num_threads=num_threads)
        if self._normalize is not None:
            text = self._normalize(text)
        try:
            return self._core.encode_ordinary(text, num_threads=num_threads)
        except UnicodeEncodeError:
            return self._core.encode_ordinary(_repair_surrogates(text), num_threads=num_threads)

    def _check_limits(
        self,
        text: str,
        max_tokens: int | None,
        max_bytes: int | None,
        allowed_special: SpecialSet,
        num_threads: int | None,
        *,
        ordinary: bool = False,
    ) -> None:
        """Raises LimitError when ``text`` is over ``max_bytes`` UTF-8 bytes or ``max_tokens``
        tokens, doing at most the work the limits allow."""
        if max_bytes is not None:
            max_bytes = _check_limit(max_bytes, "max_bytes")
            # A character is 1 to 4 bytes: decide from the length alone when that is enough.
            if max_bytes is not None and len(text) * 4 > max_bytes:
                n = len(text) if len(text) > max_bytes else len(text.encode("utf-8", "surrogatepass"))
                if n > max_bytes:
                    raise LimitError(f"the text is {n:,} bytes (UTF-8) or more, over max_bytes={max_bytes:,}")
        if max_tokens is not None:
            max_tokens = _check_limit(max_tokens, "max_tokens")
            if max_tokens is None:
                return
            if ordinary:
                if self._normalize is not None:
                    text = self._normalize(text)
                try:
                    n = self._core.count(text, [], limit=max_tokens, num_threads=num_threads)
                except UnicodeEncodeError:
                    n = self._core.count(_repair_surrogates(text), [], limit=max_tokens, num_threads=num_threads)
            else:
                n = self.count(text, allowed_special=allowed_special, disallowed_special=(), limit=max_tokens,
                               num_threads=num_threads)
            if n > max_tokens:
                raise LimitError(f"the text is more than max_tokens={max_tokens:,} tokens")

    def _batch(self, texts: Sequence[str], what: str, allowed_special: SpecialSet, disallowed_special: DisallowedSet) -> list[str]:
        if isinstance(texts, str):
            raise TypeError(f"{what}() takes a list of str; for one text use {what.removesuffix('_batch')}()")
        texts = list(texts)
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise TypeError(f"{what}() texts[{i}] is {type(t).__name__}, not str")
        disallowed = self._disallowed(allowed_special, disallowed_special)
        if not disallowed:
            return texts
        if disallowed <= self._special_set:
            # One call for the whole batch; a text that is not UTF-8 (a lone surrogate) is
            # checked on its own, as for a single call.
            try:
                hit = self._core.find_special_batch(texts, [self._special_tokens[t] for t in disallowed])
            except UnicodeEncodeError:
                pass
            else:
                if hit is not None:
                    _disallowed_error(self._core.token_bytes(hit[2]).decode("utf-8"))
                return texts
        for t in texts:
            self._check_disallowed(t, allowed_special, disallowed_special)
        return texts

    # Normalization never makes a special token: with a normalization, texts are split at the
    # special tokens first (leftmost-longest among all of them, on the text as given); each
    # stretch between them is normalized on its own and encoded as ordinary text, so a
    # stretch that normalizes to a special token's text (``＜｜endoftext｜＞`` under NFKC) stays
    # ordinary text. Allowed special tokens become their ids; the others stay, unnormalized,
    # in the ordinary text around them. Every path does this through _normalize.split: the
    # ones with special tokens through _parts, the ordinary ones (encode_ordinary, files,
    # corpus encoding) through _normalize, which is _parts with none allowed, as a string.

    def _parts(self, texts: Sequence[str], allowed_special: SpecialSet) -> list[list[str | int]]:
        """Per text: ordinary text (normalized) and special-token ids, in order, alternating and
        starting and ending with ordinary text (which may be empty)."""
        assert self._normalize_stretch is not None
        fn = self._normalize_stretch
        allowed = self._special_set if allowed_special == "all" else frozenset(allowed_special) | self._nonspecial
        out: list[list[str | int]] = []
        for text in texts:
            split = _normalize.split(text, fn, self._special_set, allowed)
            out.append([p if k % 2 == 0 else self._special_tokens[p] for k, p in enumerate(split)])
        return out

    def _join(self, parts: list[list[str | int]], num_threads: int | None) -> list[list[int]]:
        """Encodes the ordinary parts of each text (one batch) and puts the ids in place."""
        ordinary = [p for ps in parts for p in ps if isinstance(p, str) and p]
        try:
            encoded = iter(self._core.encode_batch(ordinary, [], num_threads=num_threads))
        except UnicodeEncodeError:
            repaired = [_repair_surrogates(t) for t in ordinary]
            encoded = iter(self._core.encode_batch(repaired, [], num_threads=num_threads))
        out: list[list[int]] = []
        for ps in parts:
            ids: list[int] = []
            for p in ps:
                if isinstance(p, int):
                    ids.append(p)
                elif p:
                    ids += next(encoded)
            out.append(ids)
        return out

    def _count_parts(self, parts: list[list[str | int]], limit: int | None, num_threads: int | None) -> list[int]:
        ordinary = [p for ps in parts for p in ps if isinstance(p, str) and p]
        try:
            counts = iter(self._core.count_batch(ordinary, [], limit=limit, num_threads=num_threads))
        except UnicodeEncodeError:
            repaired = [_repair_surrogates(t) for t in ordinary]
            counts = iter(self._core.count_batch(repaired, [], limit=limit, num_threads=num_threads))
        out = []
        for ps in parts:
            n = sum(1 if isinstance(p, int) else next(counts) if p else 0 for p in ps)
            out.append(n if limit is None else min(n, limit + 1))
        return out

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        num_threads: int | None = None,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: DisallowedSet = "all",
        max_tokens: int | None = None,
        max_bytes: int | None = None,
    ) -> list[list[int]]:
        """Encodes many texts in parallel (GIL released); ``num_threads=None`` uses all cores.
        The ids are those of :meth:`encode` on each text, whatever the number of threads.
        ``max_tokens`` / ``max_bytes`` apply to each text, as in :meth:`encode`."""
        num_threads = _check_threads(num_threads)
        texts = self._batch(texts, "encode_batch", allowed_special, disallowed_special)
        if max_bytes is not None:
            for t in texts:
                self._check_limits(t, None, max_bytes, allowed_special, 1)
        if max_tokens is not None and _check_limit(max_tokens, "max_tokens") is not None:
            counts = self.count_batch(texts, allowed_special=allowed_special, disallowed_special=(),
                                      limit=max_tokens, num_threads=num_threads)
            for i, n in enumerate(counts):
                if n > max_tokens:
                    raise LimitError(f"texts[{i}] is more than max_tokens={max_tokens:,} tokens")
        if self._flagged:
            return self._encode_flagged(texts, allowed_special)
        if self._normalize is not None:
            return self._join(self._parts(texts, allowed_special), num_threads)
        allowed = self._allowed_ids(allowed_special)
        try:
            return self._core.encode_batch(texts, allowed, num_threads=num_threads)
        except UnicodeEncodeError:
            return self._core.encode_batch([_repair_surrogates(t) for t in texts], allowed, num_threads=num_threads)

    def count(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: DisallowedSet = "all",
        limit: int | None = None,
        num_threads: int | None = 1,
    ) -> int:
        """The number of tokens of ``text``: ``len(encode(text, ...))`` with the same arguments
        (and the same errors), without building the list of ids.

        With ``limit=N``, counting stops as soon as the count exceeds ``N`` and the result is
        ``min(count, N + 1)``: ``count(text, limit=N) <= N`` tells whether the text fits in ``N``
        tokens, at the cost of reading only the start of a text that does not.
        """
        if (
            self._plain
            and type(text) is str
            and type(num_threads) is int
            and num_threads == 1
            and limit is None
            and not allowed_special
            and disallowed_special == "all"
        ):
            # As in encode(): no special token in the text, so it is counted as ordinary text.
            try:
                n = self._core.count_plain(text)
                if n is not None:
                    return n
            except UnicodeEncodeError:
                pass
        if not isinstance(text, str):
            raise TypeError(f"count() takes a str, not {type(text).__name__}")
        num_threads = _check_threads(num_threads)
        limit = _check_limit(limit)
        self._check_disallowed(text, allowed_special, disallowed_special)
        if self._flagged:
            n = len(self._encode_flagged([text], allowed_special)[0])
            return n if limit is None else min(n, limit + 1)
        if self._normalize is not None:
            return self._count_parts(self._parts([text], allowed_special), limit, num_threads)[0]
        allowed = self._allowed_ids(allowed_special)
        try:
            return self._core.count(text, allowed, limit=limit, num_threads=num_threads)
        except UnicodeEncodeError:
            return self._core.count(_repair_surrogates(text), allowed, limit=limit, num_threads=num_threads)

    def count_batch(
        self,
        texts: Sequence[str],
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: DisallowedSet = "all",
        limit: int | None = None,
        num_threads: int | None = None,
    ) -> list[int]:
        """:meth:`count` of each text, in parallel (``num_threads=None``: all cores); ``limit``
        applies to each text."""
        num_threads = _check_threads(num_threads)
        limit = _check_limit(limit)
        texts = self._batch(texts, "count_batch", allowed_special, disallowed_special)
        if self._flagged:
            return [len(ids) if limit is None else min(len(ids), limit + 1)
                    for ids in self._encode_flagged(texts, allowed_special)]
        if self._normalize is not None:
            return self._count_parts(self._parts(texts, allowed_special), limit, num_threads)
        allowed = self._allowed_ids(allowed_special)
        try:
            return self._core.count_batch(texts, allowed, limit=limit, num_threads=num_threads)
        except UnicodeEncodeError:
            repaired = [_repair_surrogates(t) for t in texts]
            return self._core.count_batch(repaired, allowed, limit=limit, num_threads=num_threads)

    def encode_iterable(
        self,
        texts: Iterable[str],
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: DisallowedSet = "all",
    ) -> Iterator[int]:
        """Encodes the concatenation of ``texts`` lazily, yielding ids, with bounded memory.

        ``list(tok.encode_iterable(chunks)) == tok.encode("".join(chunks))`` for any chunking.
        Text is encoded up to places where the pattern is known to split (a newline between
        a printable character and a letter or digit), so memory stays bounded for the preset
        patterns; with a custom pattern or no pattern the text is only encoded at the end.
        """
        if self._normalize is not None:
            yield from self._encode_normalized_stream(texts, allowed_special, disallowed_special)
            return
        allowed = self._allowed_ids(allowed_special)
        buf = ""
        for chunk in texts:
            if not isinstance(chunk, str):
                raise TypeError(f"encode_iterable() yields {type(chunk).__name__}, not str")
            buf += chunk
            if len(buf) >= _STREAM_CHUNK:
                head, buf = self._stream_head(buf)
                if head:
                    self._check_disallowed(head, allowed_special, disallowed_special)
                    yield from self._encode_core(head, allowed)
        if buf:
            self._check_disallowed(buf, allowed_special, disallowed_special)
            yield from self._encode_core(buf, allowed)

    def _stream_head(self, buf: str) -> tuple[str, str]:
        """``buf`` split where encoding the two sides apart gives the ids of the whole: (head
        to encode now, the rest to keep). Lone surrogates in the head are repaired, but a high
        surrogate at the end of ``buf`` waits for the low half in the next chunk."""
        try:
            used = self._core.safe_prefix(buf)
        except UnicodeEncodeError:
            buf = _repair_head(buf)
            try:
                used = self._core.safe_prefix(buf)
            except UnicodeEncodeError:  # only the held-back high surrogate is left unrepaired
                used = self._core.safe_prefix(buf[:-1])
        return buf[:used], buf[used:]

    def _encode_normalized_stream(
        self, texts: Iterable[str], allowed_special: SpecialSet, disallowed_special: DisallowedSet
    ) -> Iterator[int]:
        """encode_iterable with a normalization: the raw stream is cut after newlines no special
        token straddles (normalizing the parts apart changes nothing), each part is split at
        special tokens and normalized as :meth:`encode` does, and the ordinary text is encoded
        up to safe cuts as it comes."""
        raw = ""
        ordinary = ""

        def take(head: str) -> Iterator[int]:
            nonlocal ordinary
            self._check_disallowed(head, allowed_special, disallowed_special)
            for p in self._parts([head], allowed_special)[0]:
                if isinstance(p, int):
                    if ordinary:
                        yield from self._encode_core(ordinary, [])
                    ordinary = ""
                    yield p
                else:
                    ordinary += p

        for chunk in _checked_chunks(texts):
            raw += chunk
            if len(raw) < _STREAM_CHUNK:
                continue
            cut = _normalize.safe_cut(raw, self._special_set)
            if not cut:
                continue
            head, raw = raw[:cut], raw[cut:]
            yield from take(head)
            if len(ordinary) >= _STREAM_CHUNK:
                head, ordinary = self._stream_head(ordinary)
                if head:
                    yield from self._encode_core(head, [])
        yield from take(raw)
        if ordinary:
            yield from self._encode_core(ordinary, [])

    # ------------------------------------------------------------------ decoding

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The bytes of the tokens, joined. Unknown ids raise :class:`UnknownTokenError`."""
        if not isinstance(ids, list):
            ids = _as_ids(ids)
        try:
            return self._core.decode_bytes(ids)
        except (OverflowError, TypeError):
            return self._core.decode_bytes(_as_ids(ids))

    def decode(self, ids: Iterable[int], errors: str = "replace", *, skip_special_tokens: bool = False) -> str:
        """Decodes ids to text; bytes that are not valid UTF-8 are handled by ``errors``
        (as in :meth:`bytes.decode`: ``"replace"``, ``"strict"``, ``"ignore"``, ...).
        ``skip_special_tokens`` leaves out the special tokens (not the non-special added ones),
        as transformers' ``decode`` does."""
        if skip_special_tokens:
            skip = self._added_vocab.special_ids
            ids = [i for i in _as_ids(ids) if i not in skip]
        if type(ids) is list:  # the usual call, without decode_bytes' frame
            try:
                return self._core.decode_bytes(ids).decode("utf-8", errors)
            except (OverflowError, TypeError):
                pass
        return self.decode_bytes(ids).decode("utf-8", errors)

    def token_bytes(self, id: int) -> bytes:
        """The bytes of one token (special tokens included)."""
        id = _as_id(id)
        if not 0 <= id <= _MAX_ID:  # no such token; and the extension's ids are u32
            raise _core_unknown(id)
        return self._core.token_bytes(id)

    def decoder(self, errors: str = "replace") -> StreamDecoder:
        """A streaming decoder: feed it ids as they come, get text back; an incomplete UTF-8
        sequence is held until the ids that complete it arrive."""
        return StreamDecoder(self, errors=errors)

    # ------------------------------------------------------------------ files

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes the tokenizer to one JSON file (atomically: a temporary file, then rename)."""
        from bytepair._fileformat import save

        save(self, path)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Tokenizer:
        """Reads a tokenizer saved with :meth:`save`."""
        from bytepair._fileformat import load

        return load(path)

    # ------------------------------------------------------------------ numpy arrays
    # Flat uint16/uint32 ids made in Rust, no Python int per token; see bytepair/arrays.py.

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: DisallowedSet = "all",
        num_threads: int | None = 1,
        dtype: DTypeLike | None = None,
    ) -> NDArray[Any]:
        """:meth:`encode` as a numpy array (``uint16`` when every id fits, else ``uint32``)."""
        from bytepair import arrays

        if self._normalize is not None:
            if not isinstance(text, str):
                raise TypeError(f"encode_to_numpy() takes a str, not {type(text).__name__}")
            num_threads = _check_threads(num_threads)
            dt = arrays.id_dtype(self, dtype)
            self._check_disallowed(text, allowed_special, disallowed_special)
            return self._encode_parts_numpy([text], allowed_special, dt, num_threads)[0]
        return arrays.encode_to_numpy(
            self,
            text,
            allowed_special=allowed_special,
            disallowed_special=disallowed_special,
            num_threads=num_threads,
            dtype=dtype,
        )

    def encode_batch_numpy(
        self,
        texts: Sequence[str],
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: DisallowedSet = "all",
        num_threads: int | None = None,
        dtype: DTypeLike | None = None,
    ) -> tuple[NDArray[Any], NDArray[np.int64]]:
        """:meth:`encode_batch` as ``(ids, offsets)``: all ids in one flat array, and text ``i``'s
        ids at ``ids[offsets[i]:offsets[i + 1]]`` (``offsets`` is int64, one longer than ``texts``)."""
        from bytepair import arrays

        if self._normalize is not None:
            num_threads = _check_threads(num_threads)
            dt = arrays.id_dtype(self, dtype)
            texts = self._batch(texts, "encode_batch_numpy", allowed_special, disallowed_special)
            return self._encode_parts_numpy(texts, allowed_special, dt, num_threads)
        return arrays.encode_batch_numpy(
            self,
            texts,
            allowed_special=allowed_special,
            disallowed_special=disallowed_special,
            num_threads=num_threads,
            dtype=dtype,
        )

    def _encode_parts_numpy(
        self, texts: list[str], allowed_special: SpecialSet, dt: np.dtype[Any], num_threads: int | None
    ) -> tuple[NDArray[Any], NDArray[np.int64]]:
        """The array outputs of checked texts with a normalization: split and normalized by
        :meth:`_parts` as on every other encode path, the ordinary parts encoded as documents of
        one flat call, and the ids of the allowed special tokens put between them."""
        import numpy as np

        from bytepair import arrays

        parts = self._parts(texts, allowed_special)
        ordinary = [p for ps in parts for p in ps if isinstance(p, str)]
        ids, offsets = arrays.encode_documents(self, ordinary, allowed=[], dt=dt, num_threads=num_threads)
        if len(ordinary) == len(texts):  # no special token allowed and found: one part per text
            return ids, offsets
        pieces: list[NDArray[Any]] = []
        ends = [0]
        k = 0
        for ps in parts:
            n = ends[-1]
            for p in ps:
                if isinstance(p, str):
                    a, b = int(offsets[k]), int(offsets[k + 1])
                    pieces.append(ids[a:b])
                    n += b - a
                    k += 1
                else:
                    pieces.append(np.array([p], dtype=dt))
                    n += 1
            ends.append(n)
        return np.concatenate(pieces), np.array(ends, dtype=np.int64)

    def encode_files(
        self,
        paths: Sequence[str | os.PathLike[str]],
        *,
        errors: str = "strict",
        num_threads: int | None = None,
        dtype: DTypeLike | None = None,
    ) -> tuple[NDArray[Any], NDArray[np.int64]]:
        """Reads text files (in Rust, in parallel) and encodes each as one document, as
        :meth:`encode_ordinary` does: ``(ids, offsets)`` as in :meth:`encode_batch_numpy`.
        Bytes that are not UTF-8 raise :class:`CorpusError` naming the file and byte offset, or
        become U+FFFD with ``errors="replace"``."""
        from bytepair import arrays

        return arrays.encode_files(self, paths, errors=errors, num_threads=num_threads, dtype=dtype)


def _checked_chunks(texts: Iterable[str]) -> Iterator[str]:
    for chunk in texts:
        if not isinstance(chunk, str):
            raise TypeError(f"encode_iterable() yields {type(chunk).__name__}, not str")
        yield chunk


def _merge_ids(vocab: Mapping[int, bytes], merges: Sequence[tuple[bytes, bytes]]) -> list[tuple[int, int]]:
    ids = {b: i for i, b in vocab.items()}
    return [(ids[a], ids[b]) for a, b in merges]


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _check_threads(num_threads: int | None) -> int | None:
    """``num_threads`` checked, and capped at the number of cores this process may use: more
    threads are never faster, and the ids never depend on the number of threads."""
    if num_threads is not None and (
        not isinstance(num_threads, int) or isinstance(num_threads, bool) or num_threads < 1
    ):
        raise BytepairError(f"num_threads must be a positive int or None, got {num_threads!r}")
    return None if num_threads is None else min(num_threads, _cores())


def _check_limit(limit: int | None, name: str = "limit") -> int | None:
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
        raise BytepairError(f"{name} must be a non-negative int or None, got {limit!r}")
    # No text has 2**62 tokens: a larger limit is no limit (and would not fit the extension's int).
    return None if limit is None or limit >= 2**62 else limit


#: The largest id there can be: the extension's ids are u32.
_MAX_ID = 0xFFFFFFFF


def _check_special_text(text: str) -> None:
    """Special tokens are found in the UTF-8 of the text, and a lone surrogate has none: such a
    text is refused when the tokenizer is made, naming it (not a UnicodeEncodeError later)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise VocabError(
            f"the special token {text!r} holds a lone surrogate (U+{ord(text[e.start]):04X}), "
            "which is not text: it has no UTF-8 form"
        ) from None


def _check_free_id(text: str, i: int) -> None:
    """``i``, the id after the largest, for the special token ``text``: refused past u32."""
    if i > _MAX_ID:
        raise VocabError(
            f"no id is left for the special token {text!r}: the largest id is already 2**32 - 1, the "
            "last there can be; give it a free id ({text: id}) instead"
        )


def _core_unknown(id: int) -> Exception:
    from bytepair.errors import UnknownTokenError

    return UnknownTokenError(f"unknown token id {id}")


def _as_ids(ids: Iterable[int]) -> list[int]:
    if isinstance(ids, (str, bytes)):
        raise TypeError(f"expected a sequence of token ids, not {type(ids).__name__}")
    if not isinstance(ids, list):
        ids = _numpy_ids(ids)
    out = ids if isinstance(ids, list) else list(ids)
    for i in out:
        if not isinstance(i, int) or isinstance(i, bool):
            raise TypeError(f"token ids must be ints, got {i!r}")
        if i < 0 or i > _MAX_ID:
            raise _core_unknown(i)
    return out


def _numpy_ids(ids: Iterable[int]) -> Iterable[int]:
    """numpy integer arrays (any shape flattened) and scalars as a list of Python ints."""
    module = type(ids).__module__
    if module == "numpy" or module.startswith("numpy."):
        import numpy as np

        arr = np.asarray(ids)
        if arr.dtype.kind not in "iu":
            raise TypeError(f"token ids must be integers, got a numpy array of {arr.dtype}")
        out: list[int] = arr.reshape(-1).tolist()
        return out
    return ids


def _as_id(id: Any) -> int:
    """One token id: an int or a numpy integer."""
    if isinstance(id, int) and not isinstance(id, bool):
        return id
    module = type(id).__module__
    if (module == "numpy" or module.startswith("numpy.")) and hasattr(id, "dtype") and id.dtype.kind in "iu":
        return int(id)
    raise TypeError(f"token id must be an int, not {type(id).__name__}")


class StreamDecoder:
    """Decodes ids incrementally: ``feed(ids)`` returns the text completed so far."""

    def __init__(self, tokenizer: Tokenizer, *, errors: str = "replace") -> None:
        import codecs

        self._tok = tokenizer
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors)

    def feed(self, ids: Collection[int] | int) -> str:
        if not isinstance(ids, Collection) or hasattr(ids, "dtype") and getattr(ids, "ndim", 1) == 0:
            ids = [_as_id(ids)]
        return self._utf8.decode(self._tok.decode_bytes(ids))

    def flush(self) -> str:
        """Ends the stream; an incomplete sequence left over is decoded with the error policy."""
        return self._utf8.decode(b"", final=True)
