"""The surface every model kind shares, written once: model inputs as transformers builds them.

``tok(text_or_batch, text_pair=None, *, padding=..., truncation=..., ...)`` returns a
:class:`BatchEncoding` with transformers' names and meanings (``input_ids``, ``token_type_ids``,
``attention_mask``, ``special_tokens_mask``, ``offset_mapping``, ``length``,
``overflow_to_sample_mapping``); ``pad``, ``batch_decode``, ``convert_tokens_to_ids``,
``num_special_tokens_to_add``, ``apply_chat_template``, ``with_model_inputs`` and the pickling
of these settings come with it.

The contract: a model kind (``Tokenizer``, ``WordPieceTokenizer``, the SentencePiece kinds)
inherits :class:`ModelInputs` and supplies only

- ``_encode_texts(texts, offsets) -> [(ids, offsets or None), ...]``: the model's tokens of each
  text with its added tokens matched, as Hugging Face's ``encode(text, add_special_tokens=False)``
  gives them, and with ``offsets`` each token's ``(start, end)`` character span in its text. One
  call for the whole batch: this is where the fast batch encoders run.
- optionally ``_encode_flat(texts)``: the same ids as one flat array and the bounds of each text
  in it, from a flat batch encoder (the default joins ``_encode_texts``' lists).
- ``_added_vocab``: its :class:`~bytepair.pipeline.AddedVocabulary` (which ids are special).
- ``_post_processor``: its :class:`~bytepair.pipeline.PostProcessor`, or ``None``.
- ``_inputs``: its :class:`InputsConfig` (``model_max_length``, padding and truncation sides,
  ``model_input_names``, the chat template), read from and written to ``tokenizer_config.json``.
- ``special_tokens_map`` (``{"pad": "<pad>", ...}``), ``token_to_id``, ``id_to_token``,
  ``decode(ids, skip_special_tokens=...)``, and where its default here does not do,
  ``_set_added(flags)`` (a file's added-token flags).
- ``__reduce__`` wrapped by :meth:`ModelInputs._with_state`, so that the settings above travel.

Everything else (truncation with stride and overflow, the template, padding, NumPy arrays) is
here. Truncation leaves room for the template's tokens, the template is applied to every window,
then everything is padded: the order of ``tokenizers``' ``post_process``. Two paths give the
same rows (tests/test_model_inputs_paths.py compares them):

- the common call (no offsets, no overflow) works a batch at a time: every text's kept window
  found with NumPy, then the rows made from the post-processor's ``layout`` (its special tokens
  and type ids around ``$A`` / ``$B``); with ``return_tensors="np"`` straight into padded arrays
  from the batch's flat ids (``_encode_flat``: no Python int per token), else by slicing and
  joining each text's list;
- offsets or overflow: an :class:`~bytepair.pipeline.templates.Encoding` per row and window,
  the post-processor's ``process`` on each (``_rows``, ``_pad_rows``): slicing and concatenating
  lists, never a Python loop over tokens (but for ``trim_offsets``, which looks at each token's
  text).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from bytepair import _collector
from bytepair.errors import BytepairError
from bytepair.pipeline.added_tokens import AddedToken, AddedVocabulary
from bytepair.pipeline.templates import EdgeSpaces, Encoding, Layout, PostProcessor, default_layout, merge

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["BatchEncoding", "InputsConfig", "ModelInputs"]

Padding = bool | Literal["longest", "max_length", "do_not_pad"]
Truncation = bool | None | Literal["longest_first", "only_first", "only_second", "do_not_truncate"]
Encoded = tuple[list[int], list[tuple[int, int]] | None]

_PADDING = ("longest", "max_length", "do_not_pad")
_KEEP: Any = object()  # with_model_inputs: "not given"
_Self = TypeVar("_Self", bound="ModelInputs")
_TRUNCATION = ("longest_first", "only_first", "only_second", "do_not_truncate")
_SIDES = ("right", "left")
# Batches of at most this many texts take `_call_small`, which finds their windows text by text:
# NumPy's fixed costs made `tok(text, padding=True, truncation=True, max_length=512)` (Llama 3,
# a text of 1,000 characters, one thread) 296 us, now 42 us; the two paths are level at about
# 64 texts (16 texts 232 / 206 us, 32 texts 418 / 395 us, 64 texts 728 / 725 us).
_SMALL_BATCH = 32
#: transformers' stand-in for "no limit" (``int(1e30)``); anything above 1e20 counts as none.
VERY_LARGE = int(1e30)
_LARGE = int(1e20)


@dataclasses.dataclass(frozen=True)
class InputsConfig:
    """What ``tokenizer_config.json`` says about model inputs (transformers' meanings).

    ``model_max_length`` ``None`` is no limit (transformers writes ``1e30``);
    ``model_input_names`` decides whether ``token_type_ids`` / ``attention_mask`` are returned by
    default; ``chat_template`` is a Jinja template or ``{name: template}``.
    """

    model_max_length: int | None = None
    padding_side: str = "right"
    truncation_side: str = "right"
    model_input_names: tuple[str, ...] = ("input_ids", "attention_mask")
    clean_up_tokenization_spaces: bool = False
    chat_template: str | dict[str, str] | None = None

    def __post_init__(self) -> None:
        m = self.model_max_length
        if m is not None and (not isinstance(m, int) or isinstance(m, bool) or m < 0):
            raise BytepairError(f"model_max_length must be a non-negative int or None, got {m!r}")
        for name in ("padding_side", "truncation_side"):
            if getattr(self, name) not in _SIDES:
                raise BytepairError(f"{name} must be 'right' or 'left', got {getattr(self, name)!r}")


class BatchEncoding(dict[str, Any]):
    """What ``tok(...)`` returns: a ``dict`` of model inputs whose keys are also attributes
    (``enc.input_ids``), as transformers' ``BatchEncoding``."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def data(self) -> dict[str, Any]:
        return dict(self)


@dataclasses.dataclass(frozen=True)
class _Plan:
    """One call's options, checked and resolved (transformers' rules), never stored on the tokenizer."""

    add_special_tokens: bool
    padding: str
    truncation: str
    max_length: int | None
    stride: int
    pad_to_multiple_of: int | None
    padding_side: str
    truncation_side: str
    pad_id: int | None


def _check_int(value: Any, name: str, low: int) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise BytepairError(f"{name} must be an int >= {low} or None, got {value!r}")
    return value


def _windows(n: int, max_len: int, stride: int, side: str) -> list[tuple[int, int]]:
    """The windows of a sequence of ``n`` tokens cut to ``max_len`` with ``stride`` tokens of
    overlap: the kept one first, then the overflow, as ``tokenizers`` orders them."""
    if max_len >= n:
        return [(0, n)]
    if max_len == 0:
        return [(0, 0), (0, n)]
    if stride >= max_len:
        raise BytepairError(
            f"stride={stride} must be smaller than the {max_len} tokens a window of this sequence holds "
            "(max_length less the template's special tokens, shared between the texts of a pair)"
        )
    step = max_len - stride
    out: list[tuple[int, int]] = []
    if side == "right":
        start = 0
        while True:
            stop = min(start + max_len, n)
            out.append((start, stop))
            if stop == n:
                return out
            start += step
    stop = n
    while True:
        start = max(stop - max_len, 0)
        out.append((start, stop))
        if start == 0:
            return out
        stop -= step


def _pad_target(plan: _Plan, longest: int) -> int:
    """The length rows are padded to: the longest kept row or ``max_length``, rounded up to
    ``pad_to_multiple_of``; 0 when not padding."""
    if plan.padding == "longest":
        target = longest
    elif plan.padding == "max_length":
        assert plan.max_length is not None
        target = plan.max_length
    else:
        return 0
    if plan.pad_to_multiple_of and target % plan.pad_to_multiple_of:
        target += plan.pad_to_multiple_of - target % plan.pad_to_multiple_of
    return target


class ModelInputs:
    """The shared surface (see the module doc for what a model kind supplies)."""

    _post_processor: PostProcessor | None = None
    _inputs: InputsConfig = InputsConfig()
    _chat_template_source: str | None = None  # the file the chat template came from (errors name it)
    _added_flags: Mapping[str, AddedToken] = {}  # flags of a file's added tokens (`_set_added`)

    # --------------------------------------------------------------- supplied by the kind

    def _encode_texts(self, texts: list[str], offsets: bool) -> list[Encoded]:
        raise NotImplementedError

    def _encode_flat(self, texts: list[str]) -> tuple[NDArray[Any], NDArray[np.int64]]:
        """``_encode_texts(texts, False)`` as one flat array of ids and the ``len(texts) + 1``
        bounds of each text in it. A kind with a flat batch encoder gives it straight from Rust
        (no Python int per token); this default joins the lists."""
        import numpy as np

        encoded = self._encode_texts(texts, False)
        bounds = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(ids) for ids, _ in encoded], out=bounds[1:])
        flat = np.fromiter(itertools.chain.from_iterable(ids for ids, _ in encoded), dtype=np.int64, count=int(bounds[-1]))
        return flat, bounds

    @property
    def special_tokens(self) -> dict[str, int]:
        raise NotImplementedError

    @property
    def _added_vocab(self) -> AddedVocabulary:
        """The special tokens with the flags ``_set_added`` kept (``_added_flags``), made on
        first use; ``_set_added`` drops it."""
        cached: AddedVocabulary | None = self.__dict__.get("_added_cache")
        if cached is None:
            cached = self.__dict__["_added_cache"] = AddedVocabulary.of(self.special_tokens, self._added_flags)
        return cached

    @property
    def added_tokens(self) -> list[AddedToken]:
        """Every added token (the special tokens and the non-special ones) with its flags, in id order."""
        return sorted(self._added_vocab, key=lambda t: t.id)

    @property
    def special_tokens_map(self) -> dict[str, str]:
        raise NotImplementedError

    def token_to_id(self, token: str) -> int | None:
        raise NotImplementedError

    def id_to_token(self, id: int) -> str | None:
        raise NotImplementedError

    def _set_added(self, flags: Mapping[str, AddedToken]) -> None:
        """Takes the added-token flags of a file (``{text: AddedToken}``): those of this
        tokenizer's special tokens that differ from the default are kept."""
        specials = self.special_tokens
        self._added_flags = {t: f for t, f in flags.items() if specials.get(t) == f.id and f != AddedToken(t, f.id)}
        self.__dict__.pop("_added_cache", None)

    def _edge_spaces(self, id: int) -> tuple[int, int] | None:
        """Spaces at the start and end of a token's text (``Ġ`` in byte-level tokens); None for
        an added token that strips whitespace (its spaces are those it matched)."""
        if id in self._added_vocab.stripping_ids:
            return None
        cache: dict[int, tuple[int, int]] | None = self.__dict__.get("_edge_cache")
        if cache is None:
            cache = self.__dict__["_edge_cache"] = {}
        got = cache.get(id)
        if got is None:
            got = cache[id] = self._measure_edges(id)
        return got

    def _measure_edges(self, id: int) -> tuple[int, int]:
        """``_edge_spaces`` of a token, uncached: by its text; a kind may measure otherwise."""
        text = self.id_to_token(id) or ""
        lead = len(text) - len(text.lstrip("Ġ \t\n\r\u00a0\u3000"))
        trail = len(text) - len(text.rstrip("Ġ \t\n\r\u00a0\u3000"))
        return (lead, trail) if lead < len(text) else (lead, lead)

    # --------------------------------------------------------------- pickling

    def _inputs_state(self) -> dict[str, Any] | None:
        """What a file made by the kind's ``to_dict`` does not hold: the added-token flags, a
        post-processor read from a file, the ``tokenizer_config.json`` settings; None if default."""
        state: dict[str, Any] = {}
        flags = getattr(self, "_added_flags", None)
        if flags:
            state["flags"] = dict(flags)
        if "_post_processor" in self.__dict__ or self.__dict__.get("_pp_is_read"):
            state["post_processor"] = self._post_processor
        if self._inputs != InputsConfig():
            state["inputs"] = self._inputs
        if self._chat_template_source is not None:
            state["source"] = self._chat_template_source
        if "_config_roles" in self.__dict__:  # roles a model directory's config gave (formats.hf)
            state["roles"] = self.__dict__["_config_roles"]
        if "_tekken" in self.__dict__:  # what a Tekken file held beyond the tokenizer (formats.tekken)
            state["tekken"] = self.__dict__["_tekken"]
        return state or None

    def _with_state(self, reduced: tuple[Any, ...]) -> tuple[Any, ...]:
        """``__reduce__``'s value that also carries :meth:`_inputs_state` (a worker process
        gets the same model inputs: the same template, padding side, limits)."""
        state = self._inputs_state()
        if state is None:
            return reduced
        return (_rebuild, (reduced[0], reduced[1], state))

    # --------------------------------------------------------------- configuration

    def with_model_inputs(
        self: _Self,
        *,
        post_processor: PostProcessor | None | object = _KEEP,
        model_max_length: int | None | object = _KEEP,
        padding_side: str | object = _KEEP,
        truncation_side: str | object = _KEEP,
        model_input_names: Sequence[str] | object = _KEEP,
        chat_template: str | dict[str, str] | None | object = _KEEP,
    ) -> _Self:
        """A copy of this tokenizer with other model-input settings (those not given are kept):
        the post-processor (``TemplateProcessing.of("<s> $A", None, {"<s>": 1})``, or ``None``),
        ``model_max_length`` (``None``: no limit), the padding and truncation sides,
        ``model_input_names`` and the chat template. ``save_pretrained`` writes them."""
        import copy

        from bytepair.pipeline.templates import token_ids

        changes: dict[str, Any] = {}
        for name, value in (("model_max_length", model_max_length), ("padding_side", padding_side),
                            ("truncation_side", truncation_side), ("chat_template", chat_template)):
            if value is not _KEEP:
                changes[name] = value
        if model_input_names is not _KEEP:
            names: tuple[Any, ...] = tuple(model_input_names)  # type: ignore[arg-type]
            if not all(isinstance(n, str) for n in names) or "input_ids" not in names:
                raise BytepairError(f"model_input_names must be strings including 'input_ids', got {names!r}")
            changes["model_input_names"] = names
        inputs = dataclasses.replace(self._inputs, **changes)
        out = copy.copy(self)
        out._inputs = inputs
        if post_processor is not _KEEP:
            if post_processor is not None and not isinstance(post_processor, PostProcessor):
                raise TypeError(f"post_processor must be a PostProcessor or None, not {type(post_processor).__name__}")
            for name, ids in token_ids(post_processor).items():
                for i in ids:
                    if self.id_to_token(i) is None:
                        raise BytepairError(f"the post-processor's token {name!r} has the id {i}, which no token has")
            out._post_processor = post_processor
        return out

    @property
    def post_processor(self) -> PostProcessor | None:
        """What ``add_special_tokens=True`` adds (a template), or ``None``."""
        return self._post_processor

    @property
    def model_max_length(self) -> int | None:
        """The longest input the model takes (``None``: no limit), from ``tokenizer_config.json``."""
        return self._inputs.model_max_length

    @property
    def padding_side(self) -> str:
        return self._inputs.padding_side

    @property
    def truncation_side(self) -> str:
        return self._inputs.truncation_side

    @property
    def model_input_names(self) -> list[str]:
        return list(self._inputs.model_input_names)

    @property
    def chat_template(self) -> str | dict[str, str] | None:
        return self._inputs.chat_template

    @property
    def pad_token_id(self) -> int | None:
        text = self.special_tokens_map.get("pad")
        return None if text is None else self.token_to_id(text)

    @property
    def all_special_ids(self) -> list[int]:
        """The ids of the special added tokens (not the non-special ones)."""
        return sorted(self._added_vocab.special_ids)

    def num_special_tokens_to_add(self, pair: bool = False) -> int:
        """How many tokens the post-processor adds to one text (or a pair)."""
        return 0 if self._post_processor is None else self._post_processor.added(pair)

    # --------------------------------------------------------------- the call

    def __call__(
        self,
        text: str | Sequence[str],
        text_pair: str | Sequence[str] | None = None,
        *,
        add_special_tokens: bool = True,
        padding: Padding = False,
        truncation: Truncation = None,
        max_length: int | None = None,
        stride: int = 0,
        pad_to_multiple_of: int | None = None,
        padding_side: str | None = None,
        return_tensors: str | None = None,
        return_token_type_ids: bool | None = None,
        return_attention_mask: bool | None = None,
        return_overflowing_tokens: bool = False,
        return_special_tokens_mask: bool = False,
        return_offsets_mapping: bool = False,
        return_length: bool = False,
    ) -> BatchEncoding:
        """Model inputs for one text or a batch (and their pairs), as transformers'
        ``tokenizer(...)`` gives them: the same keys, values and errors.

        ``padding``: ``True``/``"longest"`` (to the longest in the batch), ``"max_length"``
        (to ``max_length``, else ``model_max_length``), ``False``/``"do_not_pad"``.
        ``truncation``: ``True``/``"longest_first"``, ``"only_first"``, ``"only_second"``,
        ``False``/``"do_not_truncate"``; ``None`` truncates only when ``max_length`` is given
        without padding. The template's special tokens count in ``max_length``.
        ``return_overflowing_tokens``: the cut-off tokens come back as more rows, windows of
        ``max_length`` that overlap by ``stride`` tokens, with ``overflow_to_sample_mapping``.
        ``return_tensors="np"``: NumPy int64 arrays (a batch must then be padded).
        """
        if (
            type(text) is str
            and text_pair is None
            and padding is False
            and truncation is None
            and max_length is None
            and stride == 0
            and pad_to_multiple_of is None
            and padding_side is None
            and return_tensors is None
            and return_token_type_ids is None
            and return_attention_mask is None
            and not (return_overflowing_tokens or return_special_tokens_mask or return_offsets_mapping or return_length)
        ):
            one = self._call_one(text, add_special_tokens)
            if one is not None:
                return one
        batched = isinstance(text, (list, tuple))
        if batched:
            texts = list(text)
            if isinstance(text_pair, str):
                raise BytepairError("for a batch of texts, text_pair must be a list of the same length, not one str")
            pairs: list[str] | None = None if text_pair is None else list(text_pair)
            if pairs is not None and len(pairs) != len(texts):
                raise BytepairError(f"{len(texts)} texts but {len(pairs)} text pairs")
        elif isinstance(text, str):
            texts = [text]
            if text_pair is not None and not isinstance(text_pair, str):
                raise BytepairError(f"text_pair of one text must be a str, not {type(text_pair).__name__}")
            # transformers takes an empty text_pair as no pair
            pairs = [text_pair] if text_pair else None
        else:
            raise TypeError(f"text must be a str or a list of str, not {type(text).__name__}")
        for name, seq in (("text", texts), ("text_pair", pairs or [])):
            for k, t in enumerate(seq):
                if not isinstance(t, str):
                    raise TypeError(f"{name}[{k}] is {type(t).__name__}, not str")
        if return_tensors not in (None, "np"):
            raise BytepairError(f"return_tensors must be None or 'np' (NumPy), got {return_tensors!r}")
        plan = self._plan(add_special_tokens, padding, truncation, max_length, stride, pad_to_multiple_of, padding_side)
        if return_token_type_ids is None:
            return_token_type_ids = "token_type_ids" in self._inputs.model_input_names
        if return_attention_mask is None:
            return_attention_mask = "attention_mask" in self._inputs.model_input_names

        return self._call(texts, pairs, batched, plan, return_tensors, return_token_type_ids,
                          return_attention_mask, return_overflowing_tokens, return_special_tokens_mask,
                          return_offsets_mapping, return_length)

    def _call_one(self, text: str, add_special_tokens: bool) -> BatchEncoding | None:
        """``tok(text)`` with every other option at its default: the template around the ids,
        and the model's default outputs, with none of the batch machinery (which cost a short
        text 20-40 microseconds against 1 for its encoding); None where the post-processor has
        no layout. The tests compare it with the reference path."""
        pp = self._post_processor
        layout = default_layout(False) if pp is None else pp.layout(False, add_special_tokens)
        if layout is None:
            return None
        names = self._inputs.model_input_names
        seqs = [self._encode_texts([text], False)[0][0]]
        out = self._rows_as_lists(seqs, 1, layout, "token_type_ids" in names,
                                  "attention_mask" in names, False)
        return self._finish(out, False, None, False)

    def _call(
        self,
        texts: list[str],
        pairs: list[str] | None,
        batched: bool,
        plan: _Plan,
        return_tensors: str | None,
        return_token_type_ids: bool,
        return_attention_mask: bool,
        return_overflowing_tokens: bool,
        return_special_tokens_mask: bool,
        return_offsets_mapping: bool,
        return_length: bool,
    ) -> BatchEncoding:
        offsets = return_offsets_mapping
        layout = None
        if texts and not offsets and not return_overflowing_tokens:
            pp = self._post_processor
            pair = pairs is not None
            layout = default_layout(pair) if pp is None else pp.layout(pair, plan.add_special_tokens)
        if layout is not None:
            out = self._call_flat(texts, pairs, layout, plan, return_tensors, return_token_type_ids,
                                  return_attention_mask, return_special_tokens_mask)
            if return_length:  # lists of rows, or one array of equal rows
                ids = out["input_ids"]
                out["length"] = [len(r) for r in ids] if isinstance(ids, list) else [ids.shape[1]] * len(ids)
            if return_tensors == "np" or not batched:
                return self._finish(out, batched, return_tensors, return_overflowing_tokens)
            return out
        # Row by row, the output is many lists and tuples of ints, which form no cycles: the
        # cyclic garbage collector, set off again and again by making them, is paused for it.
        # (The flat path's lists are made in the extension, which runs a due collection before
        # it hands them to the collector: paused there, that one would come after, through all.)
        with _collector.paused():
            encoded = self._encode_texts(texts + (pairs or []), offsets)
            a_side = encoded[: len(texts)]
            b_side = encoded[len(texts):] if pairs is not None else None
            rows: list[Encoding] = []
            sample: list[int] = []
            longest = 0  # the longest kept row: overflow rows are padded to it, not counted in it
            for k, (ids, offs) in enumerate(a_side):
                a = Encoding.of(ids, offs, text=texts[k])
                b = None
                if b_side is not None and pairs is not None:
                    b = Encoding.of(b_side[k][0], b_side[k][1], type_id=1, text=pairs[k])
                got = self._rows(a, b, plan)
                longest = max(longest, len(got[0].ids))
                if not return_overflowing_tokens:
                    got = got[:1]
                rows += got
                sample += [k] * len(got)
            self._pad_rows(rows, plan, longest)

            out = BatchEncoding()
            out["input_ids"] = [r.ids for r in rows]
            if return_token_type_ids:
                out["token_type_ids"] = [r.type_ids for r in rows]
            if return_attention_mask:
                out["attention_mask"] = [r.mask for r in rows]
            if return_special_tokens_mask:
                out["special_tokens_mask"] = [r.special for r in rows]
            if return_offsets_mapping:
                out["offset_mapping"] = [r.offsets for r in rows]
            if return_length:
                out["length"] = [len(r.ids) for r in rows]
            if return_overflowing_tokens:
                out["overflow_to_sample_mapping"] = sample
            return self._finish(out, batched, return_tensors, return_overflowing_tokens)

    @staticmethod
    def _finish(out: BatchEncoding, batched: bool, return_tensors: str | None, overflow: bool) -> BatchEncoding:
        """NumPy arrays when asked; for one text (not a batch) its row rather than a list of one."""
        if return_tensors == "np":
            return _to_numpy(out)
        if not batched and not overflow:
            for key, value in out.items():
                if value and isinstance(value[0], list):  # as transformers: "length" stays a list
                    out[key] = value[0]
        return out

    def _call_flat(
        self,
        texts: list[str],
        pairs: list[str] | None,
        layout: Layout,
        plan: _Plan,
        return_tensors: str | None,
        return_token_type_ids: bool,
        return_attention_mask: bool,
        return_special_tokens_mask: bool,
    ) -> BatchEncoding:
        """``_call`` without offsets or overflow, a batch at a time (a few texts: see
        :meth:`_call_small`): the kept window of every text found with NumPy (Python only for
        the rare truncations it does not do at once),
        then the rows made from the post-processor's :data:`Layout` — for ``"np"`` into one
        padded array per output from the flat ids of the batch (no Python int per token), for
        lists by :meth:`_padded_rows` from the same flat ids. The same rows as ``_rows`` and
        ``_pad_rows`` (the tests compare both paths)."""
        n = len(texts)
        if (return_tensors is None and plan.padding == "do_not_pad" and plan.truncation == "do_not_truncate"
                and n <= _SMALL_BATCH):
            # Every token kept and none added: the rows are the template around the ids, made
            # without NumPy (its arrays cost a single short text tens of microseconds); many
            # texts take the flat path below, which makes no Python int per token.
            seqs_ = [ids for ids, _ in self._encode_texts(texts + (pairs or []), False)]
            out = self._rows_as_lists(seqs_, n, layout, return_token_type_ids,
                                      return_attention_mask, return_special_tokens_mask)
            return out
        if n <= _SMALL_BATCH:
            out = self._call_small(texts, pairs, layout, plan, return_token_type_ids, return_attention_mask,
                                   return_special_tokens_mask)
            return out
        import numpy as np

        flat, bounds = self._encode_flat(texts + (pairs or []))
        lens = np.diff(bounds)
        a_start, a_stop, b_start, b_stop = self._kept(lens, n, pairs is not None, plan)
        length = np.zeros(n, dtype=np.int64)
        for what, _ in layout:
            length += a_stop - a_start if what == "A" else b_stop - b_start if what == "B" else len(what)
        longest = int(length.max())
        target = _pad_target(plan, longest)
        if return_tensors is None or longest > target:
            # Lists (rows of several lengths too, which _finish refuses for "np").
            starts = bounds[:-1]
            a = np.stack((starts[:n] + a_start, starts[:n] + a_stop), axis=1).ravel().tolist()
            b = (np.stack((starts[n:] + b_start, starts[n:] + b_stop), axis=1).ravel().tolist()
                 if pairs is not None else None)
            out = self._padded_rows(np.ascontiguousarray(flat, dtype=np.uint32).tobytes(), a, b, layout, plan, target,
                                    return_token_type_ids, return_attention_mask, return_special_tokens_mask)
            return out
        width = target
        at = np.arange(n, dtype=np.int64) * width  # where the next item of each row goes
        if plan.padding_side == "left":
            at += width - length
        size = n * width
        ids = np.full(size, plan.pad_id if plan.pad_id is not None else 0, dtype=np.int64)
        types = np.zeros(size, dtype=np.int64) if return_token_type_ids else None
        special = np.ones(size, dtype=np.int64) if return_special_tokens_mask else None
        mask = np.zeros(size, dtype=np.int64) if return_attention_mask else None
        for what, type_id in layout:
            if isinstance(what, tuple):
                dest = (at[:, None] + np.arange(len(what), dtype=np.int64)).ravel()
                ids[dest] = np.tile(np.asarray(what, dtype=np.int64), n)
                if special is not None:
                    special[dest] = 1
                item_len: Any = len(what)
            else:
                source = bounds[:n] + a_start if what == "A" else bounds[n:-1] + b_start
                item_len = a_stop - a_start if what == "A" else b_stop - b_start
                total = int(item_len.sum())
                step = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(item_len) - item_len, item_len)
                dest = np.repeat(at, item_len) + step
                ids[dest] = flat[np.repeat(source, item_len) + step]
                if special is not None:
                    special[dest] = 0
            if types is not None:
                types[dest] = type_id
            if mask is not None:
                mask[dest] = 1
            at += item_len
        out = BatchEncoding()
        out["input_ids"] = ids.reshape(n, width)
        if types is not None:
            out["token_type_ids"] = types.reshape(n, width)
        if mask is not None:
            out["attention_mask"] = mask.reshape(n, width)
        if special is not None:
            out["special_tokens_mask"] = special.reshape(n, width)
        return out

    def _kept(self, lens: NDArray[np.int64], n: int, pair: bool, plan: _Plan) -> tuple[NDArray[np.int64], ...]:
        """``(a_start, a_stop, b_start, b_stop)``: the kept window of each text (and of its
        pair) within its tokens, as ``_rows`` keeps them (``lens``: the token counts of the
        texts, then of their pairs)."""
        import numpy as np

        a_start, a_stop = np.zeros(n, dtype=np.int64), lens[:n].copy()
        b_start = np.zeros(n, dtype=np.int64)
        b_stop = lens[n:].copy() if pair else np.zeros(n, dtype=np.int64)
        if plan.truncation == "do_not_truncate":
            return a_start, a_stop, b_start, b_stop
        room = self._room(pair, plan)
        over = a_stop + b_stop > room
        if plan.stride == 0 and plan.truncation == "longest_first" and room > 0 and over.any():
            # _truncate's longest_first on every row at once (no stride: no error to raise).
            na, nb = a_stop, b_stop
            if not pair:
                ka, kb = np.minimum(na, room), nb
            else:
                short, long_ = np.minimum(na, nb), np.maximum(na, nb)
                keep_long = np.where(short > room, long_, np.maximum(short, room - short))
                halve = short + keep_long > room
                keep_short = np.where(halve, room // 2, short)
                keep_long = np.where(halve, room // 2 + room % 2, keep_long)
                first_short = na <= nb
                ka = np.where(over, np.where(first_short, keep_short, keep_long), na)
                kb = np.where(over, np.where(first_short, keep_long, keep_short), nb)
            ka, kb = np.minimum(ka, na), np.minimum(kb, nb)
            if plan.truncation_side == "left":
                a_start, b_start = na - ka, nb - kb
            return a_start, a_start + ka, b_start, b_start + kb
        for k in np.flatnonzero(over).tolist():
            wa, wb = self._truncate(int(a_stop[k]), int(b_stop[k]) if pair else None, room, plan)
            a_start[k], a_stop[k] = wa[0]
            if pair:
                b_start[k], b_stop[k] = wb[0]
        return a_start, a_stop, b_start, b_stop

    def _room(self, pair: bool, plan: _Plan) -> int:
        """The tokens a truncated text (with its pair) may keep: ``max_length`` less the
        template's special tokens, refused when those alone do not fit."""
        pp = self._post_processor
        added = pp.added(pair) if plan.add_special_tokens and pp is not None else 0
        assert plan.max_length is not None
        if added > plan.max_length:
            raise BytepairError(
                f"max_length={plan.max_length} is smaller than the {added} special tokens the "
                f"{'pair' if pair else 'single'} template adds; give a max_length of at least {added}"
            )
        return plan.max_length - added

    def _call_small(
        self,
        texts: list[str],
        pairs: list[str] | None,
        layout: Layout,
        plan: _Plan,
        return_token_type_ids: bool,
        return_attention_mask: bool,
        return_special_tokens_mask: bool,
    ) -> BatchEncoding:
        """:meth:`_call_flat` for a few texts: the windows found text by text with ``_truncate``
        (the rule ``_kept`` applies to many at once) rather than by NumPy's operations on
        arrays, whose fixed costs made a call of one or two texts about 150 microseconds,
        several times their encoding."""
        import numpy as np

        n = len(texts)
        flat, bounds = self._encode_flat(texts + (pairs or []))
        starts: list[int] = bounds.tolist()
        lens = [stop - start for start, stop in itertools.pairwise(starts)]
        a0, a1, b0 = [0] * n, lens[:n], [0] * n
        b1 = lens[n:] if pairs is not None else [0] * n
        if plan.truncation != "do_not_truncate":
            room = self._room(pairs is not None, plan)
            for k in range(n):
                if a1[k] + b1[k] > room:
                    wa, wb = self._truncate(a1[k], b1[k] if pairs is not None else None, room, plan)
                    a0[k], a1[k] = wa[0]
                    if pairs is not None:
                        b0[k], b1[k] = wb[0]
        fixed = sum(len(what) for what, _ in layout if not isinstance(what, str))
        count_a, count_b = sum(what == "A" for what, _ in layout), sum(what == "B" for what, _ in layout)
        longest = fixed + max((a1[k] - a0[k]) * count_a + (b1[k] - b0[k]) * count_b for k in range(n))
        a = [x for k in range(n) for x in (starts[k] + a0[k], starts[k] + a1[k])]
        b = [x for k in range(n) for x in (starts[n + k] + b0[k], starts[n + k] + b1[k])] if pairs is not None else None
        flat_bytes = np.ascontiguousarray(flat, dtype=np.uint32).tobytes()
        return self._padded_rows(flat_bytes, a, b, layout, plan, _pad_target(plan, longest), return_token_type_ids,
                                 return_attention_mask, return_special_tokens_mask)

    @staticmethod
    def _padded_rows(
        flat: bytes,
        a: list[int],
        b: list[int] | None,
        layout: Layout,
        plan: _Plan,
        target: int,
        return_token_type_ids: bool,
        return_attention_mask: bool,
        return_special_tokens_mask: bool,
    ) -> BatchEncoding:
        """The rows of a batch made in Rust (``_core.padded_rows``) from its ids as one buffer
        of native uint32 (``flat``): no Python int per token, no list sliced and joined per
        row. ``a[2k]``, ``a[2k + 1]`` / ``b[2k]``, ``b[2k + 1]``: the ``[start, stop)`` of text
        ``k``'s kept ids (and of its pair's) in ``flat``, flat so that no list is made per text."""
        from bytepair import _core

        items = [(0 if what == "A" else 1, [], t) if isinstance(what, str) else (-1, list(what), t) for what, t in layout]
        ids, types, mask, special = _core.padded_rows(
            flat, a, b, items, plan.pad_id, target, plan.padding_side == "left",
            return_token_type_ids, return_attention_mask, return_special_tokens_mask,
        )
        out = BatchEncoding()
        out["input_ids"] = ids
        if types is not None:
            out["token_type_ids"] = types
        if mask is not None:
            out["attention_mask"] = mask
        if special is not None:
            out["special_tokens_mask"] = special
        return out

    @staticmethod
    def _rows_as_lists(
        seqs: list[list[int]],
        n: int,
        layout: Layout,
        return_token_type_ids: bool,
        return_attention_mask: bool,
        return_special_tokens_mask: bool,
    ) -> BatchEncoding:
        """The rows of :meth:`_call_flat` when every token is kept and none is padded: each
        text's ids (``seqs``: the ``n`` texts, then their pairs) and the template's tokens
        joined, in Python (a few texts: cheaper than the flat path's arrays)."""
        items = [(what if isinstance(what, str) else list(what), t) for what, t in layout]
        all_ids, all_types, all_special, all_mask = [], [], [], []
        for k in range(n):
            ids: list[int] = []
            types: list[int] = []
            special: list[int] = []
            for what, t in items:
                if what == "A":
                    part = seqs[k]
                elif what == "B":
                    part = seqs[n + k]
                else:
                    part = what  # type: ignore[assignment]
                ids += part
                if return_special_tokens_mask:
                    special += [0 if what in ("A", "B") else 1] * len(part)
                if return_token_type_ids:
                    types += [t] * len(part)
            all_ids.append(ids)
            all_types.append(types)
            all_special.append(special)
            all_mask.append([1] * len(ids))
        out = BatchEncoding()
        out["input_ids"] = all_ids
        if return_token_type_ids:
            out["token_type_ids"] = all_types
        if return_attention_mask:
            out["attention_mask"] = all_mask
        if return_special_tokens_mask:
            out["special_tokens_mask"] = all_special
        return out

    def _plan(
        self,
        add_special_tokens: bool,
        padding: Padding,
        truncation: Truncation,
        max_length: int | None,
        stride: int,
        pad_to_multiple_of: int | None,
        padding_side: str | None,
    ) -> _Plan:
        """The call's options resolved as transformers resolves them, refused with the fix named."""
        max_length = _check_int(max_length, "max_length", 0)
        stride = _check_int(stride, "stride", 0) or 0
        pad_to_multiple_of = _check_int(pad_to_multiple_of, "pad_to_multiple_of", 1)
        if padding_side is not None and padding_side not in _SIDES:
            raise BytepairError(f"padding_side must be 'right' or 'left', got {padding_side!r}")
        if max_length is not None and padding is False and truncation is None:
            truncation = "longest_first"  # transformers: max_length alone truncates
        if padding is True:
            pad = "longest"
        elif padding is False:
            pad = "do_not_pad"
        elif padding in _PADDING:
            pad = str(padding)
        else:
            raise BytepairError(f"padding must be True, False or one of {', '.join(_PADDING)}; got {padding!r}")
        if truncation is True:
            trunc = "longest_first"
        elif truncation is False or truncation is None:
            trunc = "do_not_truncate"
        elif truncation in _TRUNCATION:
            trunc = str(truncation)
        else:
            raise BytepairError(f"truncation must be True, False or one of {', '.join(_TRUNCATION)}; got {truncation!r}")
        limit = self._inputs.model_max_length
        if limit is not None and limit > _LARGE:
            limit = None
        if max_length is None:
            if pad == "max_length":
                if limit is None:
                    pad = "do_not_pad"
                else:
                    max_length = limit
            if trunc != "do_not_truncate":
                if limit is None:
                    trunc = "do_not_truncate"
                else:
                    max_length = limit
        if trunc != "do_not_truncate" and max_length is not None:
            # tokenizers checks the stride against one text's room when truncation is set up
            single = max_length - self.num_special_tokens_to_add(False)
            if single >= 0 and stride > single:
                raise BytepairError(
                    f"stride={stride} is larger than what a window holds: max_length={max_length} less the "
                    f"template's {max_length - single} special tokens ({single}); give a smaller stride"
                )
        pad_id: int | None = None
        if pad != "do_not_pad":
            pad_id = self.pad_token_id
            if pad_id is None:
                raise BytepairError(
                    "padding needs a pad token and this tokenizer has none: give one a role, e.g. "
                    "tok.with_special_tokens(roles={'pad': <eos text>}), or set pad_token in tokenizer_config.json"
                )
        if (
            trunc != "do_not_truncate"
            and pad != "do_not_pad"
            and pad_to_multiple_of is not None
            and max_length is not None
            and max_length % pad_to_multiple_of
        ):
            raise BytepairError(
                f"truncation and padding are both on but max_length={max_length} is not a multiple of "
                f"pad_to_multiple_of={pad_to_multiple_of}"
            )
        return _Plan(
            add_special_tokens=bool(add_special_tokens),
            padding=pad,
            truncation=trunc,
            max_length=max_length,
            stride=stride,
            pad_to_multiple_of=pad_to_multiple_of,
            padding_side=padding_side or self._inputs.padding_side,
            truncation_side=self._inputs.truncation_side,
            pad_id=pad_id,
        )

    def _rows(self, a: Encoding, b: Encoding | None, plan: _Plan) -> list[Encoding]:
        """One input (a text or a pair): truncated into windows, each window post-processed.
        The kept window first, then the overflow in ``tokenizers``' order."""
        pp = self._post_processor
        pair = b is not None
        a_windows = [(0, len(a.ids))]
        b_windows = [(0, len(b.ids))] if b is not None else []
        if plan.truncation != "do_not_truncate":
            a_windows, b_windows = self._truncate(len(a.ids), None if b is None else len(b.ids), self._room(pair, plan), plan)
        edge: EdgeSpaces = self._edge_spaces
        combos: list[tuple[tuple[int, int], tuple[int, int] | None]]
        if b is None:
            combos = [(w, None) for w in a_windows]
        else:
            combos = [(a_windows[0], b_windows[0])]
            for wa in a_windows[1:]:
                combos += [(wa, wb) for wb in b_windows]
            combos += [(a_windows[0], wb) for wb in b_windows[1:]]
        out = []
        for wa, wb in combos:
            parts = [a.window(*wa)]
            if wb is not None:
                assert b is not None
                parts.append(b.window(*wb))
            if pp is not None:
                parts = pp.process(parts, plan.add_special_tokens, edge)
            out.append(merge(parts))
        return out

    @staticmethod
    def _truncate(
        na: int, nb: int | None, room: int, plan: _Plan
    ) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """The windows of each text so that the pair (or the text) fits in ``room`` tokens."""
        strategy, stride, side = plan.truncation, plan.stride, plan.truncation_side
        total = na + (nb or 0)
        if room == 0:  # as tokenizers: every text cut to nothing (all of it overflow), whatever the strategy
            return _windows(na, 0, stride, side), [] if nb is None else _windows(nb, 0, stride, side)
        if nb is None:
            if total <= room:
                return [(0, na)], []
            if strategy == "only_second":
                raise BytepairError("truncation='only_second' truncates the second text of a pair, and no text_pair was given")
            return _windows(na, room, stride, side), []
        if total <= room:
            return [(0, na)], [(0, nb)]
        if strategy == "longest_first":
            short, long_ = min(na, nb), max(na, nb)
            keep_short = short
            keep_long = long_ if short > room else max(short, room - short)
            if keep_short + keep_long > room:
                keep_short = room // 2
                keep_long = keep_short + room % 2
            ka, kb = (keep_short, keep_long) if na <= nb else (keep_long, keep_short)
            return _windows(na, ka, stride, side), _windows(nb, kb, stride, side)
        cut = total - room
        if strategy == "only_first":
            if na <= cut:
                raise BytepairError(
                    f"truncation='only_first' cannot fit the pair in max_length={plan.max_length}: the first text "
                    f"has {na} tokens and {cut} would have to go; truncate both (truncation=True) or raise max_length"
                )
            return _windows(na, na - cut, stride, side), [(0, nb)]
        if nb <= cut:
            raise BytepairError(
                f"truncation='only_second' cannot fit the pair in max_length={plan.max_length}: the second text "
                f"has {nb} tokens and {cut} would have to go; truncate both (truncation=True) or raise max_length"
            )
        return [(0, na)], _windows(nb, nb - cut, stride, side)

    @staticmethod
    def _pad_rows(rows: list[Encoding], plan: _Plan, longest: int) -> None:
        """Pads the rows in place (and gives each its attention mask): to ``longest``, the
        longest kept row (as tokenizers pads a batch: overflow rows do not count), or to
        ``max_length``."""
        target = _pad_target(plan, longest)
        left = plan.padding_side == "left"
        for r in rows:
            n = len(r.ids)
            gap = target - n if plan.padding != "do_not_pad" and target > n else 0
            mask = [1] * n
            if gap:
                assert plan.pad_id is not None
                pads, zeros, ones = [plan.pad_id] * gap, [0] * gap, [1] * gap
                if left:
                    r.ids, r.type_ids, r.special, mask = pads + r.ids, zeros + r.type_ids, ones + r.special, zeros + mask
                    if r.offsets is not None:
                        r.offsets = [(0, 0)] * gap + r.offsets
                else:
                    r.ids, r.type_ids, r.special, mask = r.ids + pads, r.type_ids + zeros, r.special + ones, mask + zeros
                    if r.offsets is not None:
                        r.offsets = r.offsets + [(0, 0)] * gap
            r.mask = mask

    # --------------------------------------------------------------- padding lists, decoding

    def pad(
        self,
        encoded_inputs: Mapping[str, Any] | Sequence[Mapping[str, Any]],
        *,
        padding: Padding = True,
        max_length: int | None = None,
        pad_to_multiple_of: int | None = None,
        padding_side: str | None = None,
        return_attention_mask: bool | None = None,
        return_tensors: str | None = None,
    ) -> BatchEncoding:
        """Pads model inputs made earlier (a ``{key: rows}`` mapping, or a list of
        ``{key: ids}`` rows) as transformers' ``pad`` does: ``input_ids`` with the pad id,
        ``attention_mask`` with 0, ``token_type_ids`` with 0, ``special_tokens_mask`` with 1."""
        if isinstance(encoded_inputs, Sequence) and not isinstance(encoded_inputs, Mapping):
            rows_in = list(encoded_inputs)
            keys = list(rows_in[0].keys()) if rows_in else ["input_ids"]
            data: dict[str, Any] = {k: [r[k] for r in rows_in] for k in keys}
        else:
            data = dict(encoded_inputs)  # type: ignore[arg-type]
        if "input_ids" not in data:
            raise BytepairError(f"pad() needs input_ids among the inputs, got {sorted(data)}")
        if return_tensors not in (None, "np"):
            raise BytepairError(f"return_tensors must be None or 'np' (NumPy), got {return_tensors!r}")
        ids = data["input_ids"]
        single = bool(ids) and not isinstance(ids[0], (list, tuple)) and not hasattr(ids[0], "__len__")
        if single or not ids:
            data = {k: [v] for k, v in data.items()}
        data = {k: [list(map(int, x)) if k != "offset_mapping" else list(x) for x in v] for k, v in data.items()}
        plan = self._plan(True, padding, False, max_length, 0, pad_to_multiple_of, padding_side)
        if return_attention_mask is None:
            return_attention_mask = "attention_mask" in self._inputs.model_input_names
        lengths = [len(x) for x in data["input_ids"]]
        target = 0
        if plan.padding == "longest":
            target = max(lengths, default=0)
        elif plan.padding == "max_length":
            target = plan.max_length or 0
        if plan.padding != "do_not_pad" and plan.pad_to_multiple_of and target % plan.pad_to_multiple_of:
            target += plan.pad_to_multiple_of - target % plan.pad_to_multiple_of
        if return_attention_mask and "attention_mask" not in data:
            data["attention_mask"] = [[1] * n for n in lengths]
        fill = {"input_ids": plan.pad_id, "attention_mask": 0, "token_type_ids": 0, "special_tokens_mask": 1}
        left = plan.padding_side == "left"
        out = BatchEncoding()
        for key, rows in data.items():
            if key not in fill:
                out[key] = rows
                continue
            padded = []
            for row, n in zip(rows, lengths, strict=True):
                gap = max(target - n, 0) if plan.padding != "do_not_pad" else 0
                extra = [fill[key]] * gap
                padded.append(extra + row if left else row + extra)
            out[key] = padded
        if return_tensors == "np":
            return _to_numpy(out)
        if single:
            for key, value in out.items():
                out[key] = value[0]
        return out

    def batch_decode(self, sequences: Sequence[Sequence[int]], *, skip_special_tokens: bool = False) -> list[str]:
        """:meth:`decode` of each row (transformers' ``batch_decode``)."""
        decode: Any = getattr(self, "decode")
        return [decode(list(map(int, s)), skip_special_tokens=skip_special_tokens) for s in sequences]

    def convert_tokens_to_ids(self, tokens: str | Sequence[str]) -> int | None | list[int | None]:
        """The id of a token (or of each), as its text is written in the vocabulary; for a token
        the vocabulary does not have, the unknown token's id (``None`` without one), as transformers."""
        unk_text = self.special_tokens_map.get("unk")
        unk = None if unk_text is None else self.token_to_id(unk_text)

        def one(t: str) -> int | None:
            i = self.token_to_id(t)
            return unk if i is None else i

        if isinstance(tokens, str):
            return one(tokens)
        return [one(t) for t in tokens]

    def apply_chat_template(
        self,
        conversation: Sequence[Mapping[str, Any]] | Sequence[Sequence[Mapping[str, Any]]],
        *,
        add_generation_prompt: bool = False,
        tokenize: bool = True,
        return_dict: bool = False,
        continue_final_message: bool = False,
        tools: Sequence[Any] | None = None,
        documents: Sequence[Mapping[str, str]] | None = None,
        chat_template: str | None = None,
        **kwargs: Any,
    ) -> Any:
        """Renders a conversation (a list of ``{"role": ..., "content": ...}``; or a batch of
        them) with the tokenizer's chat template, as transformers' ``apply_chat_template``:
        the text (``tokenize=False``), its ids (no template special tokens added: the chat
        template writes them), or with ``return_dict`` the model inputs. Needs ``jinja2``."""
        from bytepair.pipeline import chat

        return chat.apply(
            self,
            conversation,
            add_generation_prompt=add_generation_prompt,
            tokenize=tokenize,
            return_dict=return_dict,
            continue_final_message=continue_final_message,
            tools=tools,
            documents=documents,
            chat_template=chat_template,
            **kwargs,
        )


#: transformers' clean_up_tokenization, applied to a whole decoded text in this order.
_CLEAN_UP = (
    (" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
    (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"),
)


def clean_up_tokenization(text: str) -> str:
    """The space before punctuation and English contractions removed, as transformers does when
    ``clean_up_tokenization_spaces`` is true (WordPiece; transformers skips it for BPE)."""
    for a, b in _CLEAN_UP:
        text = text.replace(a, b)
    return text


def _rebuild(factory: Any, args: tuple[Any, ...], state: dict[str, Any]) -> Any:
    """Unpickles a tokenizer: the kind's own ``factory(*args)``, then :meth:`ModelInputs._inputs_state`."""
    tok = factory(*args)
    if "flags" in state:
        tok._set_added(state["flags"])
    if "post_processor" in state:
        tok._post_processor = state["post_processor"]
    if "inputs" in state:
        tok._inputs = state["inputs"]
    if "source" in state:
        tok._chat_template_source = state["source"]
    if "roles" in state:
        tok.__dict__["_config_roles"] = state["roles"]
    if "tekken" in state:
        tok.__dict__["_tekken"] = state["tekken"]
    return tok


def _to_numpy(out: BatchEncoding) -> BatchEncoding:
    import numpy as np

    arrays = BatchEncoding()
    for key, value in out.items():
        try:
            arrays[key] = np.asarray(value, dtype=np.int64)  # no copy of the fast path's arrays
        except ValueError:
            raise BytepairError(
                f"return_tensors='np' needs rows of one length, and {key} has rows of different lengths: "
                "pass padding=True (or padding='max_length')"
            ) from None
        if arrays[key].dtype == object:  # pragma: no cover - numpy < 1.24 makes ragged object arrays
            raise BytepairError(f"return_tensors='np' needs rows of one length ({key}): pass padding=True")
    return arrays
