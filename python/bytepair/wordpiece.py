"""WordPieceTokenizer: BERT's tokenizer (normalization, pre-tokenization, WordPiece) on the Rust core.

The Rust extension holds the mechanism (the vocabulary trie, the BERT character tables); this
class holds the policy: argument checks, special tokens, templates, decoding, files.

Behaviour is Hugging Face's ``BertTokenizerFast`` (``tokenizers``' BertNormalizer,
BertPreTokenizer, WordPiece model and decoder): the same ids, tokens and character offsets.
Differences in defaults, chosen to match bytepair's BPE ``Tokenizer``: ``encode`` adds no
``[CLS]``/``[SEP]`` unless ``add_special_tokens=True``, and ``decode`` keeps special tokens
unless ``skip_special_tokens=True``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from bytepair import _core
from bytepair._api import Encoded, InputsConfig, ModelInputs
from bytepair._inspect import Inspect
from bytepair.errors import BytepairError, UnknownTokenError, VocabError
from bytepair.pipeline.templates import PostProcessor, TemplateProcessing
from bytepair.tokenizer import _check_threads

if TYPE_CHECKING:  # numpy arrays (encode_batch_numpy)
    import numpy as np
    from numpy.typing import DTypeLike, NDArray

__all__ = ["BERT_SPECIAL_TOKENS", "WordPieceTokenizer"]

#: The special tokens of BERT vocabularies, in the order (and so with the ids) training gives them.
BERT_SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")

# Hugging Face's WordPiece decoder's clean-up, applied to each token in turn, in this order.
_CLEANUP = (
    (" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
    (" 'm", "'m"), (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"),
)


def _check_template(template: Sequence[str] | None, what: str, sequences: tuple[str, ...], vocab: Mapping[str, int]) -> list[str] | None:
    if template is None:
        return None
    if isinstance(template, str):
        template = template.split()
    items = list(template)
    for item in items:
        if not isinstance(item, str):
            raise VocabError(f"{what} template: items must be strings, got {item!r}")
        if item.startswith("$"):
            if item not in sequences:
                raise VocabError(f"{what} template: {item!r} is not one of {', '.join(sequences)}")
        elif item not in vocab:
            raise VocabError(f"{what} template: the token {item!r} is not in the vocabulary")
    for s in sequences:
        if items.count(s) != 1:
            raise VocabError(f"{what} template must name {s} exactly once, got {' '.join(items)!r}")
    return items


class WordPieceTokenizer(ModelInputs, Inspect):
    """A WordPiece tokenizer with BERT normalization and pre-tokenization.

    ``vocab`` is ``{token: id}`` with ids ``0 .. len(vocab)-1``, or a list of tokens (the index
    is the id, as in BERT's ``vocab.txt``). Continuation pieces carry
    ``continuing_subword_prefix`` (``"##"``). A word with no full split into vocabulary pieces,
    or longer than ``max_input_chars_per_word`` characters, becomes ``unk_token``.

    ``split_unknown_characters=True`` (the name of TensorFlow Text's ``WordpieceTokenizer``
    option for the same thing) keeps the pieces that match instead, as lectures show WordPiece
    (``Hugg ##i ##n [UNK]``): where no vocabulary piece matches at a position of the word (with
    ``continuing_subword_prefix`` after its first position), that one character becomes
    ``unk_token`` and matching goes on at the next character, as a continuation. A word longer
    than ``max_input_chars_per_word`` is still one ``unk_token``. BERT and Hugging Face do not
    do this (the default, ``False``), and a Hugging Face ``tokenizer.json`` cannot say it:
    :meth:`save_pretrained` refuses such a tokenizer; bytepair's own file keeps the option.

    ``clean_text``, ``handle_chinese_chars``, ``strip_accents`` (``None``: as ``lowercase``) and
    ``lowercase`` are the options of Hugging Face's ``BertNormalizer``. ``special_tokens`` are
    texts recognized in the raw text before normalization (default: those of
    ``[PAD] [UNK] [CLS] [SEP] [MASK]`` in the vocabulary). ``template`` and ``pair_template``
    say what ``add_special_tokens=True`` adds: by default ``[CLS] $A [SEP]`` and
    ``[CLS] $A [SEP] $B [SEP]`` when those tokens exist.

    >>> tok = WordPieceTokenizer(["[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", ","])
    >>> tok.tokenize("Unaffable, UN")
    ['un', '##aff', '##able', ',', 'un']
    >>> tok.decode(tok.encode("Unaffable, UN", add_special_tokens=True))
    '[CLS] unaffable, un [SEP]'

    Model inputs (``tok(texts, text_pairs, padding=True, ...)``) are
    :class:`bytepair._api.ModelInputs`': the templates above are its post-processor (the
    pair's second text and what follows it get type id 1, as BERT's).
    """

    # Added-token flags read from a file ({text: AddedToken}), for the tokens whose flags are
    # not the default; a post-processor read from a file (else the templates make one).
    _pp_read: PostProcessor | None = None
    _pp_is_read = False
    # BERT's model takes token_type_ids (transformers' BertTokenizer returns them by default).
    _inputs = InputsConfig(model_input_names=("input_ids", "token_type_ids", "attention_mask"))

    def __init__(
        self,
        vocab: Mapping[str, int] | Sequence[str],
        *,
        unk_token: str = "[UNK]",
        continuing_subword_prefix: str = "##",
        max_input_chars_per_word: int = 100,
        clean_text: bool = True,
        handle_chinese_chars: bool = True,
        strip_accents: bool | None = None,
        lowercase: bool = True,
        special_tokens: Sequence[str] | None = None,
        template: Sequence[str] | str | None = None,
        pair_template: Sequence[str] | str | None = None,
        training: Mapping[str, Any] | None = None,
        split_unknown_characters: bool = False,
    ) -> None:
        if isinstance(vocab, Mapping):
            items = list(vocab.items())
        elif isinstance(vocab, (str, bytes)):
            raise TypeError("vocab must be a {token: id} mapping or a list of tokens, not a string")
        else:
            items = [(t, i) for i, t in enumerate(vocab)]
        if not items:
            raise VocabError("the vocabulary is empty")
        by_id: list[str | None] = [None] * len(items)
        token_ids: dict[str, int] = {}
        for t, i in items:
            if not isinstance(t, str):
                raise VocabError(f"vocabulary tokens must be str, got {t!r}")
            if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < len(items):
                raise VocabError(f"the token {t!r} has the id {i!r}, out of range 0..{len(items) - 1}")
            if t == "":
                raise VocabError(f"the token with id {i} is empty")
            if t in token_ids:
                raise VocabError(f"the token {t!r} appears twice (ids {token_ids[t]} and {i})")
            if by_id[i] is not None:
                raise VocabError(f"the id {i} is given to two tokens ({by_id[i]!r} and {t!r})")
            by_id[i] = t
            token_ids[t] = i
        _check_max_chars(max_input_chars_per_word)
        if not isinstance(split_unknown_characters, bool):
            raise BytepairError(f"split_unknown_characters must be True or False, got {split_unknown_characters!r}")
        if not isinstance(continuing_subword_prefix, str):
            raise TypeError("continuing_subword_prefix must be a str")
        _check_utf8([continuing_subword_prefix], "continuing_subword_prefix")
        _check_utf8(token_ids, "vocabulary token")
        if unk_token not in token_ids:
            raise VocabError(f"the unknown token {unk_token!r} is not in the vocabulary")
        if special_tokens is None:
            special_tokens = [t for t in BERT_SPECIAL_TOKENS if t in token_ids]
        specials = list(dict.fromkeys(special_tokens))
        for s in specials:
            if s not in token_ids:
                raise VocabError(f"the special token {s!r} is not in the vocabulary")
        ordinary = [t for t in token_ids if t not in specials and t != unk_token]
        if continuing_subword_prefix and ordinary and all(t.startswith(continuing_subword_prefix) for t in ordinary):
            raise VocabError(
                f"the vocabulary has no token that can start a word: every token but the special ones "
                f"starts with {continuing_subword_prefix!r}"
            )
        if template is None and pair_template is None and "[CLS]" in token_ids and "[SEP]" in token_ids:
            template, pair_template = ["[CLS]", "$A", "[SEP]"], ["[CLS]", "$A", "[SEP]", "$B", "[SEP]"]
        self._template = _check_template(template, "single", ("$A",), token_ids)
        self._pair_template = _check_template(pair_template, "pair", ("$A", "$B"), token_ids)
        self._tokens: list[str] = [t for t in by_id if t is not None]
        self._ids = token_ids
        self._unk = unk_token
        self._prefix = continuing_subword_prefix
        self._max_chars = max_input_chars_per_word
        self._split_unknown = split_unknown_characters
        self._bert = {
            "clean_text": bool(clean_text),
            "handle_chinese_chars": bool(handle_chinese_chars),
            "strip_accents": bool(lowercase if strip_accents is None else strip_accents),
            "lowercase": bool(lowercase),
        }
        self._strip_accents_option = strip_accents
        self._specials = specials
        self._training: dict[str, Any] = dict(training or {})
        self._core = _core.WordPiece(
            list(enumerate(self._tokens)),
            unk_token,
            continuing_subword_prefix,
            max_input_chars_per_word,
            self._bert["clean_text"],
            self._bert["handle_chinese_chars"],
            self._bert["strip_accents"],
            self._bert["lowercase"],
            [(s, token_ids[s]) for s in specials],
            split_unknown_characters=split_unknown_characters,
        )

    # ------------------------------------------------------------------ properties

    @property
    def vocab_size(self) -> int:
        """The number of tokens, special tokens included."""
        return len(self._tokens)

    @property
    def vocab(self) -> dict[str, int]:
        """``{token: id}`` (a copy)."""
        return dict(self._ids)

    @property
    def special_tokens(self) -> dict[str, int]:
        """The special tokens recognized in text, ``{text: id}``."""
        return {s: self._ids[s] for s in self._specials}

    @property
    def unk_token(self) -> str:
        return self._unk

    @property
    def continuing_subword_prefix(self) -> str:
        return self._prefix

    @property
    def max_input_chars_per_word(self) -> int:
        return self._max_chars

    @property
    def split_unknown_characters(self) -> bool:
        """Whether an unmatchable character becomes ``unk_token`` on its own (the rest of its
        word still matched) rather than the whole word (see the class docstring)."""
        return self._split_unknown

    @property
    def normalizer_options(self) -> dict[str, bool]:
        """The BertNormalizer options in effect (``strip_accents`` resolved)."""
        return dict(self._bert)

    @property
    def template(self) -> list[str] | None:
        return None if self._template is None else list(self._template)

    @property
    def pair_template(self) -> list[str] | None:
        return None if self._pair_template is None else list(self._pair_template)

    @property
    def training(self) -> dict[str, Any]:
        return dict(self._training)

    def __repr__(self) -> str:
        return f"<WordPieceTokenizer vocab_size={self.vocab_size} lowercase={self._bert['lowercase']}>"

    def __reduce__(self) -> tuple[Any, ...]:
        # The extension's WordPiece cannot be pickled: the tokenizer travels as its file's content
        # (to spawned workers, datasets.map(num_proc=...)) and is rebuilt from it there.
        from bytepair._wordpiece_file import from_dict, to_dict

        return self._with_state((from_dict, (to_dict(self),)))

    # ------------------------------------------------------------------ model inputs (bytepair._api)

    @property
    def _post_processor(self) -> PostProcessor | None:
        if self._pp_is_read:
            return self._pp_read
        if self._template is None:
            return None
        ids = {t: self._ids[t] for t in dict.fromkeys((self._template or []) + (self._pair_template or [])) if not t.startswith("$")}
        pair: list[str] | None = None
        if self._pair_template is not None:
            pair, type_id = [], 0
            for item in self._pair_template:
                type_id = 1 if item == "$B" else type_id
                pair.append(item if not type_id else f"{item}:{type_id}")
        return TemplateProcessing.of(self._template, pair, ids)

    @_post_processor.setter
    def _post_processor(self, value: PostProcessor | None) -> None:
        self._pp_read, self._pp_is_read = value, True

    @property
    def special_tokens_map(self) -> dict[str, str]:
        """The roles of special tokens, ``{"unk": "[UNK]", "sep": "[SEP]", ...}`` (BERT's names)."""
        roles = {"unk": self._unk}
        for role, text in (("sep", "[SEP]"), ("pad", "[PAD]"), ("cls", "[CLS]"), ("mask", "[MASK]")):
            if text in self._ids:
                roles[role] = text
        return roles

    def _encode_texts(self, texts: list[str], offsets: bool) -> list[Encoded]:
        """``bytepair._api``'s core encode: ids (and offsets) of each text, in one batch call."""
        for t in texts:
            _check_text(t)
        added = self._added_vocab
        if not added.needs_python:
            if not offsets:
                return [(ids, None) for ids in self.encode_batch(texts)]
            return [(ids, offs) for ids, offs in self.encode_batch_with_offsets(texts)]
        # Added tokens that strip whitespace or want word boundaries: cut in Python, the
        # stretches between encoded in one batch by a core that knows no added token.
        plain = self.__dict__.get("_plain_core")
        if plain is None:
            plain = self.__dict__["_plain_core"] = _core.WordPiece(
                list(enumerate(self._tokens)), self._unk, self._prefix, self._max_chars,
                self._bert["clean_text"], self._bert["handle_chinese_chars"], self._bert["strip_accents"],
                self._bert["lowercase"], [],
            )
        cuts = [added.split(t) for t in texts]
        stretches = [_repair_surrogates(t[a:b]) for t, cut in zip(texts, cuts, strict=True) for i, a, b in cut if i is None]
        encoded = plain.encode_batch(stretches, with_offsets=True, num_threads=None)
        out: list[Encoded] = []
        k = 0
        for cut in cuts:
            ids: list[int] = []
            offs: list[tuple[int, int]] = []
            for i, a, b in cut:
                if i is None:
                    ids += encoded[k][0]
                    offs += [(s + a, e + a) for s, e in encoded[k][1]]
                    k += 1
                else:
                    ids.append(i)
                    offs.append((a, b))
            out.append((ids, offs if offsets else None))
        return out

    def _encode_flat(self, texts: list[str]) -> tuple[Any, Any]:
        """``_encode_texts(texts, False)`` as one flat array and bounds, straight from the core
        when no added token needs Python (no Python int per token)."""
        if self._added_vocab.needs_python:
            return super()._encode_flat(texts)
        return self.encode_batch_numpy(texts, dtype="uint32")

    def token_to_id(self, token: str) -> int | None:
        """The id of ``token``, or None (as Hugging Face's ``token_to_id``)."""
        return self._ids.get(token)

    def id_to_token(self, id: int) -> str | None:
        """The token of ``id``, or None."""
        if isinstance(id, int) and not isinstance(id, bool) and 0 <= id < len(self._tokens):
            return self._tokens[id]
        return None

    # ------------------------------------------------------------------ encoding

    def _wrap(
        self, a: tuple[list[int], list[tuple[int, int]]], b: tuple[list[int], list[tuple[int, int]]] | None
    ) -> tuple[list[int], list[tuple[int, int]]]:
        template = self._template if b is None else self._pair_template
        if template is None:
            raise VocabError(
                "add_special_tokens=True needs a template: this vocabulary has no [CLS]/[SEP] "
                "(pass template=... to the tokenizer)"
            )
        ids: list[int] = []
        offsets: list[tuple[int, int]] = []
        for item in template:
            if item == "$A" or item == "$B":
                seq = a if item == "$A" else b
                assert seq is not None
                ids += seq[0]
                offsets += seq[1]
            else:
                ids.append(self._ids[item])
                offsets.append((0, 0))
        return ids, offsets

    def encode(self, text: str, text_pair: str | None = None, *, add_special_tokens: bool = False) -> list[int]:
        """The token ids of ``text`` (and ``text_pair``, which needs ``add_special_tokens=True``)."""
        if add_special_tokens or text_pair is not None:
            return self.encode_with_offsets(text, text_pair, add_special_tokens=add_special_tokens)[0]
        _check_text(text)
        try:
            return self._core.encode(text)
        except UnicodeEncodeError:
            return self._core.encode(_repair_surrogates(text))

    def encode_with_offsets(
        self, text: str, text_pair: str | None = None, *, add_special_tokens: bool = False
    ) -> tuple[list[int], list[tuple[int, int]]]:
        """Token ids and, for each, ``(start, end)`` character offsets into its text (as
        Hugging Face gives them; added template tokens get ``(0, 0)``)."""
        _check_text(text)
        if text_pair is not None:
            _check_text(text_pair)
            if not add_special_tokens:
                raise BytepairError("a text pair is joined by the pair template: pass add_special_tokens=True")
        if not add_special_tokens:
            return self._one(text)
        return self._wrap(self._one(text), None if text_pair is None else self._one(text_pair))

    def _one(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        try:
            return self._core.encode_with_offsets(text)
        except UnicodeEncodeError:
            return self._core.encode_with_offsets(_repair_surrogates(text))

    def encode_batch(
        self, texts: Sequence[str], *, add_special_tokens: bool = False, num_threads: int | None = None
    ) -> list[list[int]]:
        """The ids of each text, encoded on ``num_threads`` threads (all cores by default)."""
        if add_special_tokens:
            return [ids for ids, _ in self.encode_batch_with_offsets(texts, add_special_tokens=True, num_threads=num_threads)]
        if isinstance(texts, str):
            raise TypeError("encode_batch() takes a sequence of texts, not one str")
        texts = list(texts)
        for t in texts:
            _check_text(t)
        num_threads = _check_threads(num_threads)
        # The extension keeps its lists out of the cyclic collector's sight while it makes them
        # (py/mod.rs, `BatchLists`).
        try:
            return self._core.encode_batch_ids(texts, num_threads=num_threads)
        except UnicodeEncodeError:
            return self._core.encode_batch_ids([_repair_surrogates(t) for t in texts], num_threads=num_threads)

    def encode_batch_numpy(
        self, texts: Sequence[str], *, num_threads: int | None = None, dtype: DTypeLike | None = None
    ) -> tuple[NDArray[Any], NDArray[np.int64]]:
        """The ids of all texts as one flat numpy array, and document offsets: ``(ids, offsets)``
        as :meth:`bytepair.Tokenizer.encode_batch_numpy` (text ``i`` is
        ``ids[offsets[i]:offsets[i + 1]]``; ``uint16`` when every id is below 65,536, else
        ``uint32``). Made in Rust without a Python int per token; no special tokens added."""
        import numpy as np

        if isinstance(texts, str):
            raise TypeError("encode_batch_numpy() takes a sequence of texts, not one str")
        texts = list(texts)
        for t in texts:
            _check_text(t)
        num_threads = _check_threads(num_threads)
        from bytepair.arrays import dtype_for

        dt = dtype_for(self.vocab_size - 1, dtype)
        try:
            ids, offsets = self._core.encode_batch_flat(texts, width=dt.itemsize, num_threads=num_threads)
        except UnicodeEncodeError:
            texts = [_repair_surrogates(t) for t in texts]
            ids, offsets = self._core.encode_batch_flat(texts, width=dt.itemsize, num_threads=num_threads)
        return (
            np.frombuffer(ids, dtype=dt.newbyteorder("<")).view(dt),
            np.frombuffer(offsets, dtype="<i8").view(np.int64),
        )

    def encode_batch_with_offsets(
        self, texts: Sequence[str], *, add_special_tokens: bool = False, num_threads: int | None = None
    ) -> list[tuple[list[int], list[tuple[int, int]]]]:
        """Ids and offsets of each text, on ``num_threads`` threads (all cores by default)."""
        if isinstance(texts, str):
            raise TypeError("encode_batch() takes a sequence of texts, not one str")
        texts = list(texts)
        for t in texts:
            _check_text(t)
        num_threads = _check_threads(num_threads)
        with_offsets = True
        try:
            out = self._core.encode_batch(texts, with_offsets=with_offsets, num_threads=num_threads)
        except UnicodeEncodeError:
            texts = [_repair_surrogates(t) for t in texts]
            out = self._core.encode_batch(texts, with_offsets=with_offsets, num_threads=num_threads)
        if add_special_tokens:
            out = [self._wrap(e, None) for e in out]
        return out

    def tokenize(self, text: str, *, add_special_tokens: bool = False) -> list[str]:
        """The tokens of ``text`` as strings."""
        return [self._tokens[i] for i in self.encode(text, add_special_tokens=add_special_tokens)]

    # ------------------------------------------------------------------ decoding

    def convert_ids_to_tokens(self, ids: Iterable[int]) -> list[str]:
        out = []
        for i in ids:
            t = self.id_to_token(i)
            if t is None:
                raise UnknownTokenError(f"unknown token id {i!r}")
            out.append(t)
        return out

    def decode(self, ids: Iterable[int], *, skip_special_tokens: bool = False, cleanup: bool = True) -> str:
        """Text from ids as Hugging Face's WordPiece decoder gives it: continuation pieces are
        joined to the piece before, other pieces separated by a space, and (``cleanup``) the
        space before ``. ? ! ,`` and English contractions removed."""
        if isinstance(ids, (str, bytes)):
            raise TypeError(f"expected a sequence of token ids, not {type(ids).__name__}")
        tokens = self.convert_ids_to_tokens(ids)
        if skip_special_tokens:  # the special added tokens; the non-special ones stay
            specials = {t.content for t in self._added_vocab if t.special}
            tokens = [t for t in tokens if t not in specials]
        parts = []
        prefix = self._prefix
        for n, t in enumerate(tokens):
            if n:
                t = t[len(prefix):] if prefix and t.startswith(prefix) else " " + t
            if cleanup:
                for a, b in _CLEANUP:
                    t = t.replace(a, b)
            parts.append(t)
        text = "".join(parts)
        if self._inputs.clean_up_tokenization_spaces:  # tokenizer_config.json: transformers' clean-up too
            from bytepair._api import clean_up_tokenization

            text = clean_up_tokenization(text)
        return text

    # ------------------------------------------------------------------ files

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes the tokenizer to bytepair's JSON file (model kind ``"wordpiece"``), atomically."""
        from bytepair._wordpiece_file import save

        save(self, path)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> WordPieceTokenizer:
        """Reads a tokenizer saved with :meth:`save`."""
        from bytepair._wordpiece_file import load

        return load(path)

    def save_pretrained(self, save_directory: str | os.PathLike[str], *, model_max_length: Any = None) -> list[str]:
        """Writes a directory that ``transformers.AutoTokenizer.from_pretrained`` loads as a
        ``BertTokenizerFast``: ``tokenizer.json``, ``tokenizer_config.json``,
        ``special_tokens_map.json`` and ``vocab.txt``, with the post-processor, the added
        tokens' flags and the model-input settings (``model_max_length`` as given, else the
        tokenizer's). Returns the paths written."""
        from bytepair.formats import hf
        from bytepair.formats.hf_wordpiece import save_pretrained

        paths = save_pretrained(self, save_directory)
        hf.patch_pretrained(self, os.fspath(save_directory), hf._UNSET if model_max_length is None else model_max_length)
        return paths


def _repair_surrogates(text: str) -> str:
    """Lone surrogates cannot be UTF-8 encoded: each becomes U+FFFD (one character, so offsets
    still index the original text), which clean_text then drops."""
    return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)


#: The largest ``max_input_chars_per_word``: the extension holds it in 64 bits. A larger value
#: is no limit either, but would be an OverflowError there and in the files other tools read.
_MAX_INPUT_CHARS = 2**64 - 1


def _check_max_chars(value: object) -> int:
    """``max_input_chars_per_word`` checked: an int in [1, 2**64)."""
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= _MAX_INPUT_CHARS:
        raise BytepairError(f"max_input_chars_per_word must be an int from 1 to 2**64 - 1, got {value!r}")
    return value


def _check_utf8(texts: Iterable[str], what: str) -> None:
    """Tokens are matched in the UTF-8 of the text, and a lone surrogate has none: a token that
    holds one is refused, naming it (not a UnicodeEncodeError from the extension)."""
    texts = list(texts)
    try:  # one encode for a whole vocabulary (every surrogate code point fails, paired or not)
        "".join(texts).encode("utf-8")
        return
    except UnicodeEncodeError:
        pass
    for t in texts:
        try:
            t.encode("utf-8")
        except UnicodeEncodeError as e:
            raise VocabError(
                f"the {what} {t!r} holds a lone surrogate (U+{ord(t[e.start]):04X}), which is not text: "
                "it has no UTF-8 form"
            ) from None


def _check_text(text: object) -> None:
    if not isinstance(text, str):
        raise TypeError(f"expected str, got {type(text).__name__}")
