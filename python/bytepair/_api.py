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
- ``_added_vocab``: its :class:`~bytepair.pipeline.AddedVocabulary` (which ids are special).
- ``_post_processor``: its :class:`~bytepair.pipeline.PostProcessor`, or ``None``.
- ``_inputs``: its :class:`InputsConfig` (``model_max_length``, padding and truncation sides,
  ``model_input_names``, the chat template), read from and written to ``tokenizer_config.json``.
- ``special_tokens_map`` (``{"pad": "<pad>", ...}``), ``token_to_id``, ``id_to_token``,
  ``decode(ids, skip_special_tokens=...)``, ``_set_added(flags)`` (a file's added-token flags).
- ``__reduce__`` wrapped by :meth:`ModelInputs._with_state`, so that the settings above travel.

Everything else (truncation with stride and overflow, the template, padding, NumPy arrays) is
here, on Python lists: the per-text work is slicing and concatenating lists, never a Python loop
over tokens (but for ``trim_offsets``, which looks at each token's text when offsets are asked).
Truncation leaves room for the template's tokens, the template is applied to every window, then
everything is padded: the order of ``tokenizers``' ``post_process``.
"""

from __future__ import annotations

import dataclasses
import gc
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeVar

from bytepair.errors import BytepairError
from bytepair.pipeline.added_tokens import AddedVocabulary
from bytepair.pipeline.templates import EdgeSpaces, Encoding, PostProcessor, merge

__all__ = ["BatchEncoding", "InputsConfig", "ModelInputs"]

Padding = bool | Literal["longest", "max_length", "do_not_pad"]
Truncation = bool | None | Literal["longest_first", "only_first", "only_second", "do_not_truncate"]
Encoded = tuple[list[int], list[tuple[int, int]] | None]

_PADDING = ("longest", "max_length", "do_not_pad")
_KEEP: Any = object()  # with_model_inputs: "not given"
_Self = TypeVar("_Self", bound="ModelInputs")
_TRUNCATION = ("longest_first", "only_first", "only_second", "do_not_truncate")
_SIDES = ("right", "left")
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


class ModelInputs:
    """The shared surface (see the module doc for what a model kind supplies)."""

    _post_processor: PostProcessor | None = None
    _inputs: InputsConfig = InputsConfig()
    _chat_template_source: str | None = None  # the file the chat template came from (errors name it)

    # --------------------------------------------------------------- supplied by the kind

    def _encode_texts(self, texts: list[str], offsets: bool) -> list[Encoded]:
        raise NotImplementedError

    @property
    def _added_vocab(self) -> AddedVocabulary:
        raise NotImplementedError

    @property
    def special_tokens_map(self) -> dict[str, str]:
        raise NotImplementedError

    def token_to_id(self, token: str) -> int | None:
        raise NotImplementedError

    def id_to_token(self, id: int) -> str | None:
        raise NotImplementedError

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
            text = self.id_to_token(id) or ""
            lead = len(text) - len(text.lstrip("Ġ \t\n\r\u00a0\u3000"))
            trail = len(text) - len(text.rstrip("Ġ \t\n\r\u00a0\u3000"))
            got = cache[id] = (lead, trail) if lead < len(text) else (lead, lead)
        return got

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

        # The output is many lists and tuples of ints, which form no cycles: the cyclic
        # garbage collector, set off again and again by making them, is paused for the call.
        paused = gc.isenabled()
        gc.disable()
        try:
            return self._call(texts, pairs, batched, plan, return_tensors, return_token_type_ids,
                              return_attention_mask, return_overflowing_tokens, return_special_tokens_mask,
                              return_offsets_mapping, return_length)
        finally:
            if paused:
                gc.enable()

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
        if return_tensors == "np":
            return _to_numpy(out)
        if not batched and not return_overflowing_tokens:
            for key, value in out.items():
                if value and isinstance(value[0], list):  # as transformers: "length" stays a list
                    out[key] = value[0]
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
        added = pp.added(pair) if plan.add_special_tokens and pp is not None else 0
        a_windows = [(0, len(a.ids))]
        b_windows = [(0, len(b.ids))] if b is not None else []
        if plan.truncation != "do_not_truncate":
            assert plan.max_length is not None
            if added > plan.max_length:
                raise BytepairError(
                    f"max_length={plan.max_length} is smaller than the {added} special tokens the "
                    f"{'pair' if pair else 'single'} template adds; give a max_length of at least {added}"
                )
            a_windows, b_windows = self._truncate(len(a.ids), None if b is None else len(b.ids), plan.max_length - added, plan)
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
        target = 0
        if plan.padding == "longest":
            target = longest
        elif plan.padding == "max_length":
            assert plan.max_length is not None
            target = plan.max_length
        if plan.padding != "do_not_pad" and plan.pad_to_multiple_of and target % plan.pad_to_multiple_of:
            target += plan.pad_to_multiple_of - target % plan.pad_to_multiple_of
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
    return tok


def _to_numpy(out: BatchEncoding) -> BatchEncoding:
    import numpy as np

    arrays = BatchEncoding()
    for key, value in out.items():
        try:
            arrays[key] = np.array(value, dtype=np.int64)
        except ValueError:
            raise BytepairError(
                f"return_tensors='np' needs rows of one length, and {key} has rows of different lengths: "
                "pass padding=True (or padding='max_length')"
            ) from None
        if arrays[key].dtype == object:  # pragma: no cover - numpy < 1.24 makes ragged object arrays
            raise BytepairError(f"return_tensors='np' needs rows of one length ({key}): pass padding=True")
    return arrays
