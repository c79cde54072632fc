"""``bytepair.patch_transformers()``: transformers' fast tokenizers encode with bytepair.

transformers (5 and later) turns every ``tokenizer(...)`` call of a fast tokenizer
(``TokenizersBackend``, which ``PreTrainedTokenizerFast`` and ``AutoTokenizer``'s fast classes
are) into one ``_encode_plus`` call with the options already resolved (padding and truncation
strategies, ``max_length`` from ``model_max_length``). The patch wraps that one method on the
class, so it reaches tokenizers however they were made, and unpatching restores it.

For each tokenizer instance, on its first call, the patch writes the tokenizer as transformers
would save it (``save_pretrained``: the live ``tokenizer.json``, with what a model class rebuilt
on load and the tokens added since, and ``tokenizer_config.json`` with the roles and limits)
and reads that directory with ``bytepair.load``. It then encodes a few probe texts both ways
(single texts, a pair, with and without special tokens, padded): only if every output is equal
does the instance encode with bytepair. Anything else (a pipeline bytepair does not read, a
difference on a probe) leaves the instance on transformers, with a one-line reason logged at
debug level on the ``bytepair.patch`` logger. The result is kept per instance (weakly: nothing is
added to the tokenizer, so pickling and ``save_pretrained`` are unchanged) and remade when the
instance changes (tokens added, roles, sides, limits).

Per call, what bytepair does not do goes to transformers as before: words given pre-split
(``is_split_into_words``), ``split_special_tokens``, options of subclasses, an empty batch, and any
call bytepair refuses (offsets of a SentencePiece model, for one). The outputs are transformers'
``BatchEncoding`` with the same keys, values, order and tensors; its ``encodings`` (``tokens()``,
``word_ids()``, ``char_to_token()``) are made by transformers when first asked for, so they are
there as before, at transformers' cost (from the tokenizer as it is then: change its settings in
between and they follow the new ones).
"""

from __future__ import annotations

import inspect
import logging
import tempfile
import threading
import warnings
import weakref
from collections.abc import Callable
from typing import Any

from transformers.tokenization_utils_base import BatchEncoding, TruncationStrategy
from transformers.utils.generic import PaddingStrategy

from bytepair.errors import BytepairWarning
from transformers.tokenization_utils_tokenizers import TokenizersBackend

__all__ = ["TransformersPatch", "patch"]

logger = logging.getLogger("bytepair.patch")

# The keys transformers' _convert_encoding writes, in its order; overflow_to_sample_mapping last.
_KEY_ORDER = ("input_ids", "token_type_ids", "attention_mask", "special_tokens_mask", "offset_mapping", "length",
              "overflow_to_sample_mapping")
_PROBES = [
    "Hello world! It's 12345 — naïve café 東京 🙂",
    "  two  spaces\n\ttab\r\nline  ",
    "x",
]


class _LazyEncodings(BatchEncoding):
    """transformers' ``BatchEncoding`` whose ``encodings`` (tokenizers' ``Encoding`` objects,
    behind ``tokens()``, ``word_ids()``...) transformers makes when first asked for."""

    @property
    def _encodings(self) -> Any:
        make = self.__dict__.pop("_bytepair_make", None)
        if make is not None:
            self.__dict__["_bytepair_encodings"] = make()
        return self.__dict__.get("_bytepair_encodings")

    @_encodings.setter
    def _encodings(self, value: Any) -> None:
        self.__dict__.pop("_bytepair_make", None)
        self.__dict__["_bytepair_encodings"] = value


class _State:
    """The bytepair tokenizer of one transformers tokenizer, or why there is none."""

    __slots__ = ("fingerprint", "reason", "tok")

    def __init__(self, fingerprint: tuple[Any, ...], tok: Any, reason: str | None) -> None:
        self.fingerprint = fingerprint
        self.tok = tok
        self.reason = reason


def _fingerprint(hf: Any) -> tuple[Any, ...]:
    """What the bytepair copy depends on: the backend object and its size (tokens added), the
    special tokens, the post-processor's switches, the sides and limits."""
    return (
        id(hf._tokenizer),
        len(hf),
        tuple(hf.all_special_ids),
        hf.pad_token_id,
        hf.add_bos_token,
        hf.add_eos_token,
        hf.padding_side,
        hf.truncation_side,
        hf.model_max_length,
        tuple(hf.model_input_names),
    )


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:300]


class TransformersPatch:
    """The handle :func:`bytepair.patch_transformers` returns: ``unpatch()`` restores
    transformers (also on leaving a ``with`` block), ``active`` says whether it is in place."""

    def __init__(self) -> None:
        # what unpatch puts back, and what calls that bytepair does not take go to (the same method)
        self._restore: Callable[..., Any] = TokenizersBackend.__dict__["_encode_plus"]
        self._original: Callable[..., Any] = self._restore
        # The method's parameters after self, read from its signature once: each call is bound by
        # hand (inspect's binding costs more than bytepair's encoding of a short text).
        params = list(inspect.signature(self._original).parameters.values())[1:]
        self._names = [p.name for p in params if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
        self._defaults = {p.name: p.default for p in params if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD}
        if any(p.default is inspect.Parameter.empty for p in params[1:] if p.name in self._defaults):
            raise RuntimeError("transformers' _encode_plus takes other arguments than bytepair knows")  # pragma: no cover
        self._states: weakref.WeakKeyDictionary[Any, _State] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        self.active = False

    # ------------------------------------------------------------------ in and out

    def _install(self) -> None:
        patch = self

        def _encode_plus(hf: Any, *args: Any, **kwargs: Any) -> Any:
            return patch._encode(hf, args, kwargs)

        _encode_plus.__doc__ = self._original.__doc__
        _encode_plus.__wrapped__ = self._original  # type: ignore[attr-defined]
        # setattr: the wrapper takes the method's arguments as they come (see _encode)
        setattr(TokenizersBackend, "_encode_plus", _encode_plus)  # noqa: B010
        self.active = True

    def unpatch(self) -> None:
        """Restores transformers' own encoding (idempotent)."""
        global _ACTIVE
        if not self.active:
            return
        setattr(TokenizersBackend, "_encode_plus", self._restore)  # noqa: B010
        self._states = weakref.WeakKeyDictionary()
        self.active = False
        if _ACTIVE is self:
            _ACTIVE = None

    def __enter__(self) -> TransformersPatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.unpatch()

    def __repr__(self) -> str:
        return f"<bytepair.patch_transformers {'active' if self.active else 'undone'}>"

    def uses_bytepair(self, hf: Any) -> bool:
        """Whether ``hf`` (a transformers tokenizer) encodes with bytepair now; the reason it does
        not is logged at debug level."""
        return self._state(hf).tok is not None

    # ------------------------------------------------------------------ per tokenizer

    def _state(self, hf: Any) -> _State:
        try:
            fingerprint = _fingerprint(hf)
        except Exception as e:  # a subclass without some of transformers' attributes
            return self._refused(hf, (), f"its settings cannot be read ({_one_line(e)})")
        try:
            state = self._states.get(hf)
        except TypeError:  # not weakly referable: building on every call would be slow; leave it alone
            return self._refused(hf, fingerprint, "the tokenizer cannot be weakly referenced")
        if state is not None and state.fingerprint == fingerprint:
            return state
        with self._lock:
            state = self._states.get(hf)
            if state is None or state.fingerprint != fingerprint:
                tok, reason = self._build(hf)
                if reason is not None:
                    logger.debug("bytepair.patch_transformers: %s stays on transformers: %s", _name(hf), reason)
                state = _State(fingerprint, tok, reason)
                self._states[hf] = state
        return state

    @staticmethod
    def _refused(hf: Any, fingerprint: tuple[Any, ...], reason: str) -> _State:
        logger.debug("bytepair.patch_transformers: %s stays on transformers: %s", _name(hf), reason)
        return _State(fingerprint, None, reason)

    def _build(self, hf: Any) -> tuple[Any, str | None]:
        import bytepair

        if getattr(hf, "split_special_tokens", False):
            return None, "split_special_tokens is set"
        try:
            with warnings.catch_warnings(record=True) as caught, tempfile.TemporaryDirectory(prefix="bytepair-patch-") as directory:
                warnings.simplefilter("always")
                hf.save_pretrained(directory)
                tok = bytepair.load(directory)
        except Exception as e:  # any reader error: this tokenizer stays on transformers
            return None, f"bytepair cannot read it ({_one_line(e)})"
        # transformers' own warnings on saving are not bytepair's business; a warning of bytepair's
        # reader (something read approximately) is a reason not to take the tokenizer over.
        for w in caught:
            if issubclass(w.category, BytepairWarning):
                return None, f"bytepair warned on reading it ({str(w.message).splitlines()[0][:200]})"
        try:
            differs = self._probe(hf, tok)
        except Exception as e:
            return None, f"a probe text failed ({_one_line(e)})"
        if differs is not None:
            return None, differs
        return tok, None

    def _probe(self, hf: Any, tok: Any) -> str | None:
        """None if bytepair gives transformers' outputs on the probe texts, else what differs."""
        specials = [t for t in hf.all_special_tokens if isinstance(t, str)][:8]
        texts = [*_PROBES, " ".join([*specials, "x"]) + " " + "".join(specials)]
        pad = hf.pad_token_id is not None
        for text, pair in [(texts, None), (texts[:2], texts[2:4])]:
            for add in (True, False):
                args = {
                    "text": text,
                    "text_pair": pair,
                    "add_special_tokens": add,
                    "padding_strategy": PaddingStrategy.LONGEST if pad else PaddingStrategy.DO_NOT_PAD,
                    "return_special_tokens_mask": True,
                    "verbose": False,  # transformers warns of a long text once per tokenizer: not for a probe
                }
                want = self._original(hf, **args)
                got = self._run(hf, tok, {**self._defaults, **args})
                if got is None or dict(got) != dict(want):
                    return f"it encodes a probe text otherwise than transformers ({'pair' if pair else 'single'}, add_special_tokens={add})"
        return None

    # ------------------------------------------------------------------ per call

    def _encode(self, hf: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        names = self._names
        if len(args) > len(names) or not kwargs.keys() <= self._defaults.keys():
            return self._original(hf, *args, **kwargs)  # a subclass's own options, or a mistake
        a = dict(self._defaults)
        a.update(zip(names, args))
        a.update(kwargs)
        if a["is_split_into_words"] or "text" not in kwargs and not args:
            return self._original(hf, *args, **kwargs)
        state = self._state(hf)
        if state.tok is None:
            return self._original(hf, *args, **kwargs)
        got = self._run(hf, state.tok, a)
        if got is None:
            return self._original(hf, *args, **kwargs)
        return got

    def _run(self, hf: Any, tok: Any, a: dict[str, Any]) -> Any:
        """transformers' ``_encode_plus`` result made by bytepair, or None where bytepair does not
        do this call (the caller then asks transformers)."""
        text, pair = a["text"], a["text_pair"]
        batched = isinstance(text, (list, tuple))
        split = a["split_special_tokens"]
        if (split if split is not None else hf.split_special_tokens) or (batched and not text):
            return None
        if not _texts(text) or (pair is not None and not _texts(pair)):
            return None
        texts = list(text) if batched else [text]
        pairs = (list(pair) if batched else [pair]) if pair else None
        if batched and pair is not None and (isinstance(pair, str) or len(pair) != len(text)):
            return None  # transformers names the mistake
        padding = a["padding_strategy"]
        truncation = a["truncation_strategy"]
        # transformers sets these on its backend on every call; so does this path, so that what a
        # program reads back (backend_tokenizer.truncation / .padding) is the same.
        hf.set_truncation_and_padding(
            padding_strategy=padding,
            truncation_strategy=truncation,
            max_length=a["max_length"],
            stride=a["stride"],
            pad_to_multiple_of=a["pad_to_multiple_of"],
            padding_side=a["padding_side"],
        )
        tensors = a["return_tensors"]
        # NumPy arrays straight from bytepair's flat batch path (offsets come as lists: transformers
        # makes their array from tuples)
        direct = "np" if tensors == "np" and not a["return_offsets_mapping"] else None
        try:
            out = tok(
                texts,
                pairs,
                add_special_tokens=a["add_special_tokens"],
                padding=_PADDING[padding],  # the strategies are str enums: their values are the keys
                truncation=_TRUNCATION[truncation],
                max_length=a["max_length"],
                stride=a["stride"],
                pad_to_multiple_of=a["pad_to_multiple_of"],
                padding_side=a["padding_side"] or hf.padding_side,
                return_token_type_ids=a["return_token_type_ids"],
                return_attention_mask=a["return_attention_mask"],
                return_overflowing_tokens=a["return_overflowing_tokens"],
                return_special_tokens_mask=a["return_special_tokens_mask"],
                return_offsets_mapping=a["return_offsets_mapping"],
                return_length=a["return_length"],
                return_tensors=direct,
            )
        except Exception as e:  # BytepairError for what bytepair refuses; anything else the same way
            logger.debug("bytepair.patch_transformers: a call of %s goes to transformers: %s", _name(hf), _one_line(e))
            return None
        data = {k: out[k] for k in _KEY_ORDER if k in out}
        data.update((k, v) for k, v in out.items() if k not in data)
        if "offset_mapping" in data:
            data["offset_mapping"] = [[tuple(span) for span in row] for row in data["offset_mapping"]]
        for ids in data["input_ids"]:
            hf._eventual_warn_about_too_long_sequence(ids, a["max_length"], a["verbose"])
        original, again = self._original, {**a, "return_tensors": None}

        def encodings() -> Any:
            return original(hf, **again).encodings

        if not batched and tensors is None and not a["return_overflowing_tokens"]:
            data = {k: (v[0] if len(v) > 0 and isinstance(v[0], list) else v) for k, v in data.items()}
        result = _LazyEncodings(data, None, tensor_type=tensors, n_sequences=2 if pairs else 1)
        result.__dict__["_bytepair_make"] = encodings
        return result


def _texts(value: Any) -> bool:
    if isinstance(value, str):
        return True
    return isinstance(value, (list, tuple)) and all(isinstance(t, str) for t in value)


def _name(hf: Any) -> str:
    return f"{type(hf).__name__}({getattr(hf, 'name_or_path', '') or '?'})"


_PADDING: dict[str, str | bool] = {
    PaddingStrategy.LONGEST.value: "longest", PaddingStrategy.MAX_LENGTH.value: "max_length", PaddingStrategy.DO_NOT_PAD.value: False
}
_TRUNCATION: dict[str, str | bool] = {
    TruncationStrategy.LONGEST_FIRST.value: "longest_first",
    TruncationStrategy.ONLY_FIRST.value: "only_first",
    TruncationStrategy.ONLY_SECOND.value: "only_second",
    TruncationStrategy.DO_NOT_TRUNCATE.value: False,
}

_ACTIVE: TransformersPatch | None = None


def patch() -> TransformersPatch:
    """See :func:`bytepair.patch_transformers`."""
    global _ACTIVE
    if _ACTIVE is not None and _ACTIVE.active:
        return _ACTIVE
    handle = TransformersPatch()
    handle._install()
    _ACTIVE = handle
    return handle

