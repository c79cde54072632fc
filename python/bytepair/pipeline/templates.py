"""Post-processors: what ``add_special_tokens=True`` adds around one text or a pair of texts.

The kinds of Hugging Face ``tokenizers`` (``post_processor`` in ``tokenizer.json``), each read by
:func:`post_processor_from_hf` and written back by ``to_hf``, with the same results (the tests
compare ids, type ids, special-token masks and offsets with transformers):

- :class:`TemplateProcessing`: ``single`` and ``pair`` templates of sequences (``$A``, ``$B``)
  and special tokens, each with a type id (``"[CLS] $A [SEP] $B:1 [SEP]:1"``).
- :class:`BertProcessing`: ``[CLS] $A [SEP]`` / ``[CLS] $A [SEP] $B:1 [SEP]:1``.
- :class:`RobertaProcessing`: ``<s> $A </s>`` / ``<s> $A </s> </s> $B </s>`` (type ids all 0),
  and byte-level offsets trimmed of their spaces (``trim_offsets``).
- :class:`ByteLevelProcessing`: adds nothing; trims the spaces off byte-level offsets.
- :class:`SequenceProcessing`: several in order (Llama 3: ByteLevel, then a BOS template).

A post-processor works on :class:`Encoding` values: the model's tokens of one text (ids,
offsets) and what the processors add (type ids, the special-token mask).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bytepair.errors import FormatError

__all__ = [
    "BertProcessing",
    "ByteLevelProcessing",
    "Encoding",
    "PostProcessor",
    "RobertaProcessing",
    "SequenceProcessing",
    "Layout",
    "TemplateProcessing",
    "default_layout",
    "post_processor_from_hf",
]

Offsets = list[tuple[int, int]]

#: ``edge_spaces(id) -> (leading, trailing)``: how many spaces the token's text starts and ends
#: with (byte-level tokens: ``Ġ``), for the processors that trim offsets; ``None`` for an added
#: token that strips whitespace, whose text is what it matched (``" <mask>"``).
EdgeSpaces = Callable[[int], "tuple[int, int] | None"]

#: What a post-processor makes of one text or a pair when offsets are not asked, as a row
#: plan: items in order, each ``("A" | "B" | ids of special tokens, type id)``. The model-inputs
#: fast path builds whole padded arrays from it (``bytepair._api``) instead of calling ``process``
#: per row; ``process`` stays the reference and gives the same rows.
Layout = list[tuple["str | tuple[int, ...]", int]]


def default_layout(pair: bool) -> Layout:
    """No post-processor: the text (type id 0), then the pair's second text (type id 1)."""
    return [("A", 0), ("B", 1)] if pair else [("A", 0)]


@dataclass
class Encoding:
    """One sequence of tokens on its way to the model: ``ids``, ``type_ids``, ``special``
    (1 for a token a post-processor or padding added), ``offsets`` (``None`` when not asked) and,
    once padded, ``mask`` (the attention mask)."""

    ids: list[int]
    type_ids: list[int]
    special: list[int]
    offsets: Offsets | None
    mask: list[int] | None = None  # the attention mask, set by padding
    text: str | None = None  # the text the offsets point into

    @classmethod
    def of(cls, ids: list[int], offsets: Offsets | None, type_id: int = 0, text: str | None = None) -> Encoding:
        return cls(ids, [type_id] * len(ids), [0] * len(ids), offsets, text=text)

    def window(self, start: int, stop: int) -> Encoding:
        return Encoding(
            self.ids[start:stop],
            self.type_ids[start:stop],
            self.special[start:stop],
            None if self.offsets is None else self.offsets[start:stop],
            text=self.text,
        )

    def __add__(self, other: Encoding) -> Encoding:
        offsets = None if self.offsets is None or other.offsets is None else self.offsets + other.offsets
        return Encoding(self.ids + other.ids, self.type_ids + other.type_ids, self.special + other.special, offsets)


class PostProcessor:
    """The interface: how many tokens a single text or a pair gets, and the processing itself."""

    def added(self, pair: bool) -> int:
        """The number of tokens ``process`` adds (truncation leaves room for them)."""
        return 0

    def process(self, encodings: list[Encoding], add_special_tokens: bool, edge_spaces: EdgeSpaces) -> list[Encoding]:
        """Processes one or two encodings (a text, or a pair); returns them, or one merged."""
        return encodings

    def layout(self, pair: bool, add_special_tokens: bool) -> Layout | None:
        """The rows ``process`` makes when offsets are not asked, as a :data:`Layout`; ``None``
        when they cannot be told that way (then ``process`` runs on each row)."""
        return None

    def to_hf(self) -> dict[str, Any]:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.to_hf() == self.to_hf()

    def __hash__(self) -> int:
        return hash(repr(self.to_hf()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_hf()!r})"


def merge(encodings: list[Encoding]) -> Encoding:
    """The default merge of a pair: the second text after the first (its type ids as they are)."""
    out = encodings[0]
    for e in encodings[1:]:
        out = out + e
    return out


@dataclass(frozen=True)
class Piece:
    """One item of a template: a sequence (``"A"``/``"B"``) or a special token, and a type id."""

    name: str
    type_id: int
    sequence: bool

    def to_hf(self) -> dict[str, Any]:
        key = "Sequence" if self.sequence else "SpecialToken"
        return {key: {"id": self.name, "type_id": self.type_id}}

    def __str__(self) -> str:
        text = "$" + self.name if self.sequence else self.name
        return text if not self.type_id else f"{text}:{self.type_id}"


def parse_template(template: str | Sequence[str | Piece]) -> list[Piece]:
    """``"[CLS] $A [SEP] $B:1 [SEP]:1"`` (or its items as a list) as pieces."""
    items = template.split() if isinstance(template, str) else list(template)
    out: list[Piece] = []
    for item in items:
        if isinstance(item, Piece):
            out.append(item)
            continue
        if not isinstance(item, str) or not item:
            raise FormatError(f"template items must be non-empty strings, got {item!r}")
        name, type_id = item, 0
        head, sep, tail = item.rpartition(":")
        if sep and head and tail.isascii() and tail.isdigit():
            name, type_id = head, int(tail)
        if name.startswith("$"):
            seq = name[1:] or "A"
            if seq.isdigit():  # "$1" is "$B:1" in tokenizers' notation: "$" followed by a type id
                seq, type_id = ("A" if seq == "0" else "B"), int(seq)
            out.append(Piece(seq, type_id, True))
        else:
            out.append(Piece(name, type_id, False))
    return out


@dataclass(eq=False, repr=False)
class TemplateProcessing(PostProcessor):
    """``single`` and ``pair`` templates; ``special_tokens`` is ``{name: (ids, tokens)}`` for
    every special-token name the templates use (one name may stand for several ids)."""

    single: list[Piece]
    pair: list[Piece]
    special_tokens: dict[str, tuple[list[int], list[str]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for what, template, wanted in (("single", self.single, {"A"}), ("pair", self.pair, {"A", "B"})):
            seqs = [p.name for p in template if p.sequence]
            for p in template:
                if p.sequence and p.name not in ("A", "B"):
                    raise FormatError(f"the {what} template names the sequence ${p.name} (only $A and $B exist)")
                if not p.sequence and p.name not in self.special_tokens:
                    raise FormatError(
                        f"the {what} template names the token {p.name!r}, which is not among its special_tokens"
                    )
            if what == "single" and "B" in seqs:
                raise FormatError(
                    f"the single template {' '.join(map(str, template))!r} names $B: a pair template cannot be used for one text"
                )
            if sorted(seqs) != sorted(wanted):
                raise FormatError(
                    f"the {what} template {' '.join(map(str, template))!r} must name "
                    f"{' and '.join('$' + s for s in sorted(wanted))} once each"
                )

    @classmethod
    def of(
        cls, single: str | Sequence[str], pair: str | Sequence[str] | None, special_tokens: Mapping[str, int]
    ) -> TemplateProcessing:
        """From tokenizers' string notation, ``special_tokens`` as ``{text: id}``."""
        s = parse_template(single)
        p = parse_template(pair) if pair is not None else [*s, Piece("B", 1, True)]
        return cls(s, p, {t: ([i], [t]) for t, i in special_tokens.items()})

    def _count(self, template: list[Piece]) -> int:
        return sum(len(self.special_tokens[p.name][0]) for p in template if not p.sequence)

    def added(self, pair: bool) -> int:
        return self._count(self.pair if pair else self.single)

    def process(self, encodings: list[Encoding], add_special_tokens: bool, edge_spaces: EdgeSpaces) -> list[Encoding]:
        template = self.pair if len(encodings) == 2 else self.single
        out: Encoding | None = None
        with_offsets = encodings[0].offsets is not None
        for p in template:
            if not add_special_tokens and not p.sequence:
                continue  # without special tokens the template still gives the texts their type ids
            if p.sequence:
                e = encodings[0 if p.name == "A" else 1]
                part = Encoding(e.ids, [p.type_id] * len(e.ids), e.special, e.offsets)
            else:
                ids = self.special_tokens[p.name][0]
                n = len(ids)
                part = Encoding(list(ids), [p.type_id] * n, [1] * n, [(0, 0)] * n if with_offsets else None)
            out = part if out is None else out + part
        return [out if out is not None else merge(encodings)]

    def layout(self, pair: bool, add_special_tokens: bool) -> Layout | None:
        out: Layout = []
        for p in self.pair if pair else self.single:
            if p.sequence:
                out.append((p.name, p.type_id))
            elif add_special_tokens:
                out.append((tuple(self.special_tokens[p.name][0]), p.type_id))
        return out

    def to_hf(self) -> dict[str, Any]:
        return {
            "type": "TemplateProcessing",
            "single": [p.to_hf() for p in self.single],
            "pair": [p.to_hf() for p in self.pair],
            "special_tokens": {
                name: {"id": name, "ids": list(ids), "tokens": list(tokens)}
                for name, (ids, tokens) in self.special_tokens.items()
            },
        }


def _trim(e: Encoding, edge_spaces: EdgeSpaces, add_prefix_space: bool) -> None:
    """Byte-level offsets without the spaces a token starts or ends with (tokenizers'
    ``trim_offsets``): ``Ġworld`` at (5, 11) becomes (6, 11)."""
    if e.offsets is None:
        return
    out: Offsets = []
    for k, (i, (start, end)) in enumerate(zip(e.ids, e.offsets, strict=True)):
        edges = edge_spaces(i)
        if edges is None:  # an added token with the whitespace it stripped
            match = "" if e.text is None else e.text[start:end]
            edges = (len(match) - len(match.lstrip()), len(match) - len(match.rstrip()))
        lead, trail = edges
        if lead:
            if add_prefix_space and lead == 1 and (k == 0 or start == 0):
                lead = 0
            start = min(start + lead, end)
        if trail and end >= trail:
            end = max(end - trail, start)
        out.append((start, end))
    e.offsets = out


@dataclass(eq=False, repr=False)
class ByteLevelProcessing(PostProcessor):
    """tokenizers' ``ByteLevel`` post-processor: adds no token; ``trim_offsets`` trims offsets."""

    trim_offsets: bool = True
    add_prefix_space: bool = True
    use_regex: bool = True

    def process(self, encodings: list[Encoding], add_special_tokens: bool, edge_spaces: EdgeSpaces) -> list[Encoding]:
        if self.trim_offsets:
            for e in encodings:
                _trim(e, edge_spaces, self.add_prefix_space)
        return encodings

    def layout(self, pair: bool, add_special_tokens: bool) -> Layout | None:
        return default_layout(pair)  # it only trims offsets

    def to_hf(self) -> dict[str, Any]:
        return {
            "type": "ByteLevel",
            "add_prefix_space": self.add_prefix_space,
            "trim_offsets": self.trim_offsets,
            "use_regex": self.use_regex,
        }


@dataclass(eq=False, repr=False)
class BertProcessing(PostProcessor):
    """``[CLS] $A [SEP]`` and ``[CLS] $A [SEP] $B:1 [SEP]:1``; ``sep``/``cls`` are ``(text, id)``."""

    sep: tuple[str, int]
    cls: tuple[str, int]

    def _template(self) -> TemplateProcessing:
        s, c = self.sep[0], self.cls[0]
        return TemplateProcessing.of(f"{c} $A {s}", f"{c} $A {s} $B:1 {s}:1", {s: self.sep[1], c: self.cls[1]})

    def added(self, pair: bool) -> int:
        return 3 if pair else 2

    def process(self, encodings: list[Encoding], add_special_tokens: bool, edge_spaces: EdgeSpaces) -> list[Encoding]:
        return self._template().process(encodings, add_special_tokens, edge_spaces)

    def layout(self, pair: bool, add_special_tokens: bool) -> Layout | None:
        return self._template().layout(pair, add_special_tokens)

    def to_hf(self) -> dict[str, Any]:
        return {"type": "BertProcessing", "sep": list(self.sep), "cls": list(self.cls)}


@dataclass(eq=False, repr=False)
class RobertaProcessing(PostProcessor):
    """``<s> $A </s>`` and ``<s> $A </s> </s> $B </s>`` (all type id 0), offsets trimmed as
    :class:`ByteLevelProcessing` does when ``trim_offsets``."""

    sep: tuple[str, int]
    cls: tuple[str, int]
    trim_offsets: bool = True
    add_prefix_space: bool = True

    def added(self, pair: bool) -> int:
        return 4 if pair else 2

    def process(self, encodings: list[Encoding], add_special_tokens: bool, edge_spaces: EdgeSpaces) -> list[Encoding]:
        if self.trim_offsets:
            for e in encodings:
                _trim(e, edge_spaces, self.add_prefix_space)
        if not add_special_tokens:  # RoBERTa has one type id: the pair's too is 0
            for e in encodings[1:]:
                e.type_ids = [0] * len(e.ids)
            return [merge(encodings)]
        return self._template().process(encodings, True, edge_spaces)

    def _template(self) -> TemplateProcessing:
        s, c = self.sep[0], self.cls[0]
        return TemplateProcessing.of(f"{c} $A {s}", f"{c} $A {s} {s} $B {s}", {s: self.sep[1], c: self.cls[1]})

    def layout(self, pair: bool, add_special_tokens: bool) -> Layout | None:
        if not add_special_tokens:
            return [("A", 0), ("B", 0)] if pair else [("A", 0)]
        return self._template().layout(pair, True)

    def to_hf(self) -> dict[str, Any]:
        return {
            "type": "RobertaProcessing",
            "sep": list(self.sep),
            "cls": list(self.cls),
            "trim_offsets": self.trim_offsets,
            "add_prefix_space": self.add_prefix_space,
        }


@dataclass(eq=False, repr=False)
class SequenceProcessing(PostProcessor):
    """Several post-processors, applied in order."""

    processors: list[PostProcessor]

    def added(self, pair: bool) -> int:
        return sum(p.added(pair) for p in self.processors)

    def process(self, encodings: list[Encoding], add_special_tokens: bool, edge_spaces: EdgeSpaces) -> list[Encoding]:
        for p in self.processors:
            encodings = p.process(encodings, add_special_tokens, edge_spaces)
        return encodings

    def layout(self, pair: bool, add_special_tokens: bool) -> Layout | None:
        # Without offsets a ByteLevel step changes nothing; one other step is then the whole.
        steps = [p for p in self.processors if type(p) is not ByteLevelProcessing]
        if not steps:
            return default_layout(pair)
        return steps[0].layout(pair, add_special_tokens) if len(steps) == 1 else None

    def to_hf(self) -> dict[str, Any]:
        return {"type": "Sequence", "processors": [p.to_hf() for p in self.processors]}


# ---------------------------------------------------------------------------------- reading

KINDS = ("TemplateProcessing", "BertProcessing", "RobertaProcessing", "ByteLevel", "Sequence")


def _bool(node: dict[str, Any], key: str, default: bool, where: str) -> bool:
    value = node.get(key, default)
    if not isinstance(value, bool):
        raise FormatError(f"{where}.{key} must be true or false, got {value!r}")
    return value


def _token_pair(value: Any, where: str) -> tuple[str, int]:
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not isinstance(value[0], str)
        or not isinstance(value[1], int)
        or isinstance(value[1], bool)
        or value[1] < 0
    ):
        raise FormatError(f"{where} must be [token, id], got {value!r:.80}")
    return value[0], value[1]


def _pieces(items: Any, where: str) -> list[Piece]:
    if not isinstance(items, list):
        raise FormatError(f"{where} must be a list")
    out = []
    for k, item in enumerate(items):
        path = f"{where}[{k}]"
        if not isinstance(item, dict) or len(item) != 1 or next(iter(item)) not in ("Sequence", "SpecialToken"):
            raise FormatError(f"{path} must be {{'Sequence': ...}} or {{'SpecialToken': ...}}, got {item!r:.80}")
        key, body = next(iter(item.items()))
        if not isinstance(body, dict) or not isinstance(body.get("id"), str):
            raise FormatError(f"{path}.{key} must be an object with an 'id' string")
        type_id = body.get("type_id", 0)
        if not isinstance(type_id, int) or isinstance(type_id, bool) or type_id < 0:
            raise FormatError(f"{path}.{key}.type_id must be a non-negative int, got {type_id!r}")
        out.append(Piece(body["id"], type_id, key == "Sequence"))
    return out


def post_processor_from_hf(node: Any, where: str, path: str = "post_processor") -> PostProcessor | None:
    """The post-processor of a ``tokenizer.json`` node (``None`` for ``null``); anything this
    module does not know raises :class:`FormatError` naming ``where`` (the file) and ``path``."""
    if node is None:
        return None
    if not isinstance(node, dict) or not isinstance(node.get("type"), str):
        raise FormatError(f"{where}: {path} must be an object with a 'type'")
    kind = node["type"]
    at = f"{where}: {path}"
    if kind == "TemplateProcessing":
        specials_doc = node.get("special_tokens", {})
        if not isinstance(specials_doc, dict):
            raise FormatError(f"{at}.special_tokens must be an object")
        specials: dict[str, tuple[list[int], list[str]]] = {}
        for name, entry in specials_doc.items():
            ids = entry.get("ids") if isinstance(entry, dict) else None
            tokens = entry.get("tokens") if isinstance(entry, dict) else None
            if (
                not isinstance(ids, list)
                or not isinstance(tokens, list)
                or len(ids) != len(tokens)
                or not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in ids)
                or not all(isinstance(t, str) for t in tokens)
            ):
                raise FormatError(f"{at}.special_tokens[{name!r}] must have 'ids' and 'tokens' lists of one length")
            specials[name] = (list(ids), list(tokens))
        single = _pieces(node.get("single"), f"{at}.single")
        pair = _pieces(node.get("pair"), f"{at}.pair")
        try:
            return TemplateProcessing(single, pair, specials)
        except FormatError as e:
            raise FormatError(f"{at}: {e}") from None
    if kind == "BertProcessing":
        return BertProcessing(_token_pair(node.get("sep"), f"{at}.sep"), _token_pair(node.get("cls"), f"{at}.cls"))
    if kind == "RobertaProcessing":
        return RobertaProcessing(
            _token_pair(node.get("sep"), f"{at}.sep"),
            _token_pair(node.get("cls"), f"{at}.cls"),
            trim_offsets=_bool(node, "trim_offsets", True, at),
            add_prefix_space=_bool(node, "add_prefix_space", True, at),
        )
    if kind == "ByteLevel":
        return ByteLevelProcessing(
            trim_offsets=_bool(node, "trim_offsets", True, at),
            add_prefix_space=_bool(node, "add_prefix_space", True, at),
            use_regex=_bool(node, "use_regex", True, at),
        )
    if kind == "Sequence":
        inner = node.get("processors")
        if not isinstance(inner, list):
            raise FormatError(f"{at}.processors must be a list")
        steps = [post_processor_from_hf(n, where, f"{path}.processors[{k}]") for k, n in enumerate(inner)]
        return SequenceProcessing([s for s in steps if s is not None])
    raise FormatError(f"{at}: the post-processor {kind!r} is not supported by bytepair (supported: {', '.join(KINDS)})")


def token_ids(processor: PostProcessor | None) -> dict[str, list[int]]:
    """Every special token a post-processor adds, ``{name: ids}`` (to check them against a vocabulary)."""
    if processor is None:
        return {}
    if isinstance(processor, TemplateProcessing):
        return {name: list(ids) for name, (ids, _) in processor.special_tokens.items()}
    if isinstance(processor, (BertProcessing, RobertaProcessing)):
        return {processor.sep[0]: [processor.sep[1]], processor.cls[0]: [processor.cls[1]]}
    if isinstance(processor, SequenceProcessing):
        out: dict[str, list[int]] = {}
        for p in processor.processors:
            out.update(token_ids(p))
        return out
    return {}
