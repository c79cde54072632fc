"""Training byte-level BPE tokenizers.

Pieces are counted in parallel by the Rust core (files are streamed in blocks, so memory
follows the number of distinct pieces, not the corpus size); the merge loop then learns
merges incrementally. The result is exactly what the textbook algorithm gives
(``tests/oracle.py``): most frequent pair first, ties to the lexicographically greatest
``(bytes, bytes)``, stopping at ``vocab_size`` or when no pair reaches ``min_frequency``.

Sources. A source is files (paths, globs, directories; ``.txt`` or any other text,
``.jsonl`` with a text field, each optionally ``.gz`` or ``.zst`` compressed) or an iterable
of ``str`` documents. Plain uncompressed text goes straight to the Rust reader; compressed
files, JSON lines and normalized text are read in Python and handed over in blocks cut where
the split pattern cuts anyway, so the counts are the same as for the whole text.

Mixing. With several sources and ``alpha`` < 1, source i (of n_i bytes) contributes in
proportion to n_i^alpha / sum_j n_j^alpha instead of n_i / sum_j n_j: its piece counts are
multiplied by the weight w_i = (n_max / n_i)^(1 - alpha) (the largest source keeps weight 1,
and w_i is proportional to the issue's (n_i^alpha / sum n^alpha) / (n_i / sum n)). To keep
counts integers, w_i is rounded to a multiple of 1/65536 (``mixing_multipliers``) and each
scaled count is rounded to the nearest integer, halves up:
``(count * m_i + 32768) // 65536`` with ``m_i = round(w_i * 65536)``.
"""

from __future__ import annotations

import codecs
import enum
import os
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

from bytepair import _core, _normalize
from bytepair._progress import Progress, size_text, wanted
from bytepair.errors import BytepairError, BytepairWarning, CorpusError
from bytepair.patterns import MAX_SUPERWORD_WORDS, is_superword, resolve, superword_pattern
from bytepair.sources import (
    DECOMPRESS_ERRORS,
    PathLike,
    Replaced,
    Source,
    SourceFile,
    decompress_error,
    json_text,
    open_stream,
    parquet_documents,
    utf8_error,
)
from bytepair.sources import documents as source_documents
from bytepair.sources import resolve as resolve_source
from bytepair.tokenizer import Tokenizer, _check_special_text, _repair_surrogates, reserved_name

__all__ = [
    "WEIGHT_DENOMINATOR",
    "Source",
    "mixing_multipliers",
    "sources_table",
    "train",
    "train_from_counts",
    "train_from_iterator",
]


_BATCH_BYTES = 8 << 20
_BATCH_DOCS = 4096
_READ_BYTES = 8 << 20  # block size for files read in Python
WEIGHT_DENOMINATOR = 1 << 16


class _Unset(enum.Enum):
    UNSET = enum.auto()


_UNSET = _Unset.UNSET


def _version() -> str:
    from bytepair import __version__

    return __version__




class _Counting:
    """Feeds sources to counters, with one progress bar over every file's (on-disk) bytes."""

    def __init__(
        self,
        *,
        replace: bool,
        normalize: _normalize.Normalizer | None,
        specials: Sequence[str],
        bar: Progress | None,
    ) -> None:
        self.replace = replace
        self.normalize = normalize
        self.specials = specials
        self.bar = bar
        self.done = 0  # on-disk bytes of the files finished
        self.replaced_in_python = 0

    def tick(self, n: int) -> None:
        if self.bar is not None:
            self.bar.update(self.done + n)

    def file(self, counter: _core.PieceCounter, f: SourceFile, text_field: str) -> None:
        if f.parquet:  # each row's text field is a document, read with pyarrow
            batch = _Batch(counter, self.normalize, self.specials)
            for doc in parquet_documents(f, text_field):
                batch.add(doc)
            batch.flush()
        elif f.compression is None and not f.jsonl and self.normalize is None:
            counter.add_file(f.path, replace_errors=self.replace, progress=self.tick if self.bar else None)
        else:
            with open(f.path, "rb") as raw:
                stream = open_stream(f, raw)
                try:
                    if f.jsonl:
                        self._jsonl(counter, f, stream, raw, text_field)
                    else:
                        self._text(counter, f, stream, raw)
                except DECOMPRESS_ERRORS as e:
                    raise decompress_error(f, e) from None
        self.done += f.size
        self.tick(0)

    def _decoder(self) -> codecs.IncrementalDecoder:
        return codecs.getincrementaldecoder("utf-8")("bytepair.replace" if self.replace else "strict")

    def _text(self, counter: _core.PieceCounter, f: SourceFile, stream: IO[bytes], raw: IO[bytes]) -> None:
        """One document read in blocks; Rust decodes it unless it must be normalized first."""
        pending = b""  # bytes not yet counted (Rust waits for a place to cut)
        offset = 0  # stream offset of pending[0]
        decoder = self._decoder() if self.normalize is not None else None
        text = ""  # decoded, not yet normalized
        read = 0
        while True:
            block = stream.read(_READ_BYTES)
            last = not block
            if decoder is None:
                pending += block
            else:
                held = len(decoder.getstate()[0])
                before = Replaced.count
                try:
                    text += decoder.decode(block, final=last)
                except UnicodeDecodeError as e:
                    raise utf8_error(f, read - held + e.start) from None
                self.replaced_in_python += Replaced.count - before
                cut = len(text) if last else _normalize.safe_cut(text, self.specials)
                if cut:
                    assert self.normalize is not None
                    pending += _normalize.apply(text[:cut], self.normalize, self.specials).encode("utf-8")
                    text = text[cut:]
            read += len(block)
            try:
                used = counter.add_bytes(pending, last=last, source=f.path, offset=offset, replace_errors=self.replace)
            except CorpusError as e:
                if f.compression is None:
                    raise
                raise CorpusError(str(e).replace(" (pass", " of the decompressed stream (pass", 1)) from None
            pending, offset = pending[used:], offset + used
            self.tick(raw.tell())
            if last:
                break
        counter.end_document()

    def _jsonl(
        self, counter: _core.PieceCounter, f: SourceFile, stream: IO[bytes], raw: IO[bytes], field: str
    ) -> None:
        errors = "bytepair.replace" if self.replace else "strict"
        offset = 0
        batch = _Batch(counter, self.normalize, self.specials)
        for lineno, line in enumerate(stream, 1):
            before = Replaced.count
            try:
                text = line.decode("utf-8", errors)
            except UnicodeDecodeError as e:
                raise utf8_error(f, offset + e.start) from None
            self.replaced_in_python += Replaced.count - before
            offset += len(line)
            if not text.strip():
                continue
            value = json_text(text, f.path, lineno, field)
            if batch.add(value):
                self.tick(raw.tell())
        batch.flush()

    def texts(self, counter: _core.PieceCounter, texts: Iterable[str]) -> None:
        batch = _Batch(counter, self.normalize, self.specials)
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"document {i} is {type(text).__name__}, not str")
            if batch.add(text) and self.bar is not None:
                self.tick(counter.bytes_counted)
        batch.flush()


class _Batch:
    """Documents handed to the counter in batches of a few MB."""

    def __init__(
        self, counter: _core.PieceCounter, normalize: _normalize.Normalizer | None, specials: Sequence[str]
    ) -> None:
        self.counter = counter
        self.normalize = normalize
        self.specials = specials
        self.docs: list[str] = []
        self.size = 0

    def add(self, text: str) -> bool:
        """Adds a document; True when the batch was just counted."""
        if self.normalize is not None:
            text = _normalize.apply(text, self.normalize, self.specials)
        self.docs.append(text)
        self.size += len(text)
        if self.size >= _BATCH_BYTES or len(self.docs) >= _BATCH_DOCS:
            self.flush()
            return True
        return False

    def flush(self) -> None:
        if not self.docs:
            return
        try:
            self.counter.add_texts(self.docs)
        except UnicodeEncodeError:
            self.counter.add_texts([_repair_surrogates(t) for t in self.docs])
        self.docs = []
        self.size = 0


# ---------------------------------------------------------------------------- options


def mixing_multipliers(sizes: Sequence[int], alpha: float) -> list[int]:
    """Each source's count multiplier, in units of 1/``WEIGHT_DENOMINATOR``:
    ``round((n_max / n_i) ** (1 - alpha) * 65536)``; 65536 (weight 1) for an empty source and
    for every source when ``alpha == 1``."""
    n_max = max(sizes, default=0)
    out = []
    for n in sizes:
        if alpha == 1 or n == 0:
            out.append(WEIGHT_DENOMINATOR)
        else:
            out.append(round((n_max / n) ** (1 - alpha) * WEIGHT_DENOMINATOR))
    return out


# The largest value each option can take: ids are u32 and counts u64 in the core, and a million
# reserved slots is already far more than any model uses (each is a string held in memory).
_MAXIMA = {
    "vocab_size": 2**32,
    "min_frequency": 2**64 - 1,
    "max_token_length": 2**32,
    "reserved_special_tokens": 2**20,
    "max_words_per_token": MAX_SUPERWORD_WORDS,
    "max_pieces": 2**63,
}


def _check_int(name: str, value: object, minimum: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, got {value!r}")
    if value < minimum:
        raise BytepairError(f"{name} must be an int >= {minimum}, got {value!r}")
    maximum = _MAXIMA.get(name)
    if maximum is not None and value > maximum:
        raise BytepairError(f"{name}={value} is too large: the limit is {maximum:,}")
    return value


def _check_specials(special_tokens: Sequence[str]) -> list[str]:
    if isinstance(special_tokens, str):
        raise TypeError("special_tokens must be a list of str, not a str")
    specials = list(special_tokens)
    for s in specials:
        if not isinstance(s, str) or not s:
            raise BytepairError(f"special tokens must be non-empty str, got {s!r}")
        _check_special_text(s)
    if len(set(specials)) != len(specials):
        raise BytepairError("special_tokens has duplicates")
    return specials


def _check_chosen_ids(chosen: dict[str, int], vocab_size: int, base: Tokenizer | None) -> None:
    """``special_tokens`` as ``{token: id}``: ids of their own, the ordinary tokens around them."""
    if base is not None:
        raise BytepairError("special_tokens with chosen ids ({token: id}) are for training from bytes, not with base=")
    seen: dict[int, str] = {}
    for token, i in chosen.items():
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < vocab_size:
            raise BytepairError(
                f"special token {token!r}: its id must be an int in [0, vocab_size={vocab_size}), not {i!r}"
            )
        if i in seen:
            raise BytepairError(f"special tokens {seen[i]!r} and {token!r} both ask for the id {i}")
        seen[i] = token


@dataclass
class _Plan:
    """The options checked and resolved: what to train and how ids are laid out."""

    regex: str | None
    normalization: str | None
    min_frequency: int
    max_token_length: int | None
    merges: int  # wanted
    vocab: dict[int, bytes]  # starting vocabulary
    merges_before: list[tuple[bytes, bytes]]
    merge_ids_before: list[tuple[int, int]]
    first_id: int  # of the first new merge
    specials_before: dict[str, int]
    reserved_before: list[int]
    roles: dict[str, str]
    new_specials: list[str]  # after the new merges, in order (reserved slots last)
    n_reserved: int
    base: Tokenizer | None
    tie_break: str = "lexicographic"
    special_ids: dict[str, int] | None = None  # chosen ids (special_tokens given as a mapping)
    max_pieces: int | None = None  # cap on distinct pieces while counting

    @property
    def all_specials(self) -> list[str]:
        return list(self.specials_before) + self.new_specials

    def core_base(self) -> tuple[_core.Encoder, int] | None:
        return None if self.base is None else (self.base._core, self.first_id)


def _superword(pattern: str | None | _Unset, max_words_per_token: int | None) -> str | None | _Unset:
    """``pattern`` with ``max_words_per_token`` applied: the ``"superword"`` pattern (implied
    when no pattern is given) with pieces of at most that many words."""
    if max_words_per_token is None:
        return pattern
    _check_int("max_words_per_token", max_words_per_token, 1)
    if isinstance(pattern, _Unset) or (isinstance(pattern, str) and resolve(pattern)[0] == "superword"):
        return superword_pattern(max_words_per_token)
    raise BytepairError(
        f"max_words_per_token={max_words_per_token} bounds the pieces of pattern='superword', not of pattern="
        f"{pattern!r:.80}: use pattern='superword', or write the bound into the regex itself"
    )


def _check_max_pieces(max_pieces: int | None) -> int | None:
    if max_pieces is not None:
        _check_int("max_pieces", max_pieces, 1)
    return max_pieces


def _plan(
    *,
    vocab_size: int,
    pattern: str | None | _Unset,
    special_tokens: Sequence[str] | Mapping[str, int],
    reserved_special_tokens: int,
    min_frequency: int,
    max_token_length: int | None,
    normalization: str | None | _Unset,
    base: Tokenizer | None,
    max_words_per_token: int | None = None,
) -> _Plan:
    pattern = _superword(pattern, max_words_per_token)
    chosen = dict(special_tokens) if isinstance(special_tokens, Mapping) else None
    specials = _check_specials(list(special_tokens))
    _check_int("vocab_size", vocab_size, 0)
    if chosen is not None:
        _check_chosen_ids(chosen, vocab_size, base)
    _check_int("min_frequency", min_frequency, 1)
    _check_int("reserved_special_tokens", reserved_special_tokens, 0)
    if max_token_length is not None:
        _check_int("max_token_length", max_token_length, 1)
    reserved_names = [reserved_name(i) for i in range(reserved_special_tokens)]
    if base is None:
        regex = resolve("gpt4" if isinstance(pattern, _Unset) else pattern)[1]
        norm = _normalize.canonical(None if isinstance(normalization, _Unset) else normalization)
        clash = set(specials) & set(reserved_names)
        if clash:
            raise BytepairError(f"special token {sorted(clash)[0]!r} is also the name of a reserved slot")
        minimum = 256 + len(specials) + reserved_special_tokens
        if vocab_size < minimum:
            raise BytepairError(
                f"vocab_size={vocab_size} is too small: the minimum is {minimum} (256 single bytes + "
                f"{len(specials)} special tokens + {reserved_special_tokens} reserved slots)"
                if reserved_special_tokens
                else f"vocab_size={vocab_size} is too small: the minimum is {minimum} "
                f"(256 single bytes + {len(specials)} special tokens)"
            )
        plan = _Plan(
            regex, norm, min_frequency, max_token_length, vocab_size - minimum,
            {i: bytes([i]) for i in range(256)}, [], [], 256, {}, [], {},
            specials + reserved_names, reserved_special_tokens, None,
        )
        plan.special_ids = chosen
        return plan
    if not isinstance(base, Tokenizer):
        raise TypeError(f"base must be a Tokenizer, got {type(base).__name__}")
    # A rank model (tiktoken) continues from the merges recovered from its ranks.
    base_merges = base._merge_list()
    # Another pattern than the base's (SuperBPE's second stage: pattern="superword"): the new
    # pieces are encoded with the base's merges (in rank order, over the whole piece, as the
    # result encodes them), and the result splits with the new pattern.
    regex = base.pattern if isinstance(pattern, _Unset) else resolve(pattern)[1]
    norm = base.normalization
    if not isinstance(normalization, _Unset) and _normalize.canonical(normalization) != norm:
        raise BytepairError(
            f"the base tokenizer's normalization is {norm!r}, but normalization={normalization!r} was asked for; "
            "continued training keeps the base's normalization (leave normalization out)"
        )
    specials_before = base.special_tokens
    new = [s for s in specials + reserved_names if s not in specials_before]
    if vocab_size < base.vocab_size:
        raise BytepairError(
            f"vocab_size={vocab_size} is smaller than the base tokenizer's vocab size {base.vocab_size}; "
            "continued training only adds tokens"
        )
    minimum = base.vocab_size + len(new)
    if vocab_size < minimum:
        raise BytepairError(
            f"vocab_size={vocab_size} is too small: the minimum is {minimum} "
            f"(the base's {base.vocab_size} + {len(new)} new special tokens)"
        )
    ids = list(base._vocab) + list(specials_before.values())
    first_id = max(ids) + 1
    from bytepair.tokenizer import _merge_ids

    return _Plan(
        regex, norm, min_frequency, max_token_length, vocab_size - minimum,
        dict(base._vocab), list(base_merges), _merge_ids(base._vocab, base_merges), first_id,
        specials_before, sorted(base._reserved), base.special_tokens_map,
        new, sum(1 for s in new if s in reserved_names), base,
    )


def _build(
    plan: _Plan,
    merge_ids: list[tuple[int, int]],
    training: dict[str, Any],
) -> Tokenizer:
    vocab = dict(plan.vocab)
    merges = list(plan.merges_before)
    next_id = plan.first_id
    for a, b in merge_ids:
        merges.append((vocab[a], vocab[b]))
        vocab[next_id] = vocab[a] + vocab[b]
        next_id += 1
    specials = dict(plan.specials_before)
    reserved = list(plan.reserved_before)
    n_plain = len(plan.new_specials) - plan.n_reserved
    for i, s in enumerate(plan.new_specials):
        specials[s] = next_id + i
        if i >= n_plain:
            reserved.append(next_id + i)
    merge_list = plan.merge_ids_before + list(merge_ids)
    if plan.special_ids is not None:
        vocab, merge_list, specials, reserved = _laid_out(
            plan.special_ids, vocab, merge_list, reserved_names=plan.new_specials[n_plain:]
        )
    return Tokenizer._from_merges(
        vocab,
        merges,
        merge_list,
        specials,
        plan.regex,
        training,
        normalization=plan.normalization,
        reserved=reserved,
        roles=plan.roles,
    )


def _laid_out(
    chosen: dict[str, int], vocab: dict[int, bytes], merge_ids: list[tuple[int, int]], *, reserved_names: list[str]
) -> tuple[dict[int, bytes], list[tuple[int, int]], dict[str, int], list[int]]:
    """The special tokens at their chosen ids; the ordinary tokens, in their order (bytes, then
    merges), at the ids left free from 0 up; reserved slots after them."""
    taken = set(chosen.values())

    def free() -> Iterator[int]:
        i = 0
        while True:
            if i not in taken:
                yield i
            i += 1

    ids = free()
    new_id = {old: next(ids) for old in sorted(vocab)}
    specials = dict(chosen)
    reserved = []
    for name in reserved_names:
        specials[name] = next(ids)
        reserved.append(specials[name])
    return (
        {new_id[i]: b for i, b in vocab.items()},
        [(new_id[a], new_id[b]) for a, b in merge_ids],
        specials,
        reserved,
    )


def _training_info(plan: _Plan, vocab_size: int, learned: int) -> dict[str, Any]:
    info: dict[str, Any] = {
        "bytepair_version": _version(),
        "vocab_size": vocab_size,
        "min_frequency": plan.min_frequency,
        "merges_learned": learned,
        "stopped_early": learned < plan.merges,
    }
    if plan.max_token_length is not None:
        info["max_token_length"] = plan.max_token_length
    if plan.tie_break != "lexicographic":
        info["tie_break"] = plan.tie_break
    if plan.base is not None:
        info["base"] = {"vocab_size": plan.base.vocab_size, "merges": len(plan.merges_before)}
        if plan.regex != plan.base.pattern:
            info["base"]["pattern"] = plan.base.pattern_name or plan.base.pattern
    if plan.max_pieces is not None:
        info["max_pieces"] = plan.max_pieces
    return info


def _warn_early_stop(plan: _Plan, vocab_size: int, learned: int, n_bytes: int, stacklevel: int = 4) -> None:
    """Training that learned fewer merges than asked gives a smaller vocabulary and moves the
    special tokens' ids down: say so, with the numbers."""
    if learned >= plan.merges or n_bytes == 0:  # an empty corpus has its own warning
        return
    got = vocab_size - (plan.merges - learned)
    specials = f"; the special tokens start at id {plan.first_id + learned}" if plan.new_specials else ""
    warnings.warn(
        f"training stopped early: vocab_size={vocab_size} was asked for but the vocabulary has {got} tokens "
        f"({learned} of {plan.merges} merges learned: no pair occurs min_frequency={plan.min_frequency} "
        f"times or more){specials}. Train on more text or lower min_frequency.",
        BytepairWarning,
        stacklevel=stacklevel,
    )


# ---------------------------------------------------------------------------- train


def _as_sources(sources: object) -> list[Source]:
    if isinstance(sources, Source):
        return [sources]
    if isinstance(sources, (str, os.PathLike)):
        return [Source(sources)]
    if isinstance(sources, bytes):
        raise TypeError("train() takes paths or Source objects, not bytes")
    if not isinstance(sources, Iterable):
        raise TypeError(f"train() takes paths or Source objects, not {type(sources).__name__}")
    items = list(sources)
    if items and all(isinstance(s, Source) for s in items):
        out: list[Source] = items
    elif all(isinstance(s, (str, os.PathLike)) for s in items):
        out = [Source(items)] if items else []
    else:
        bad = next((s for s in items if not isinstance(s, (str, os.PathLike, Source))), None)
        if bad is None:
            raise TypeError("train() takes a list of paths or a list of Source objects, not both: wrap the paths in Source")
        raise TypeError(f"train() takes paths or Source objects, got {type(bad).__name__}: {bad!r:.60}")
    if not out:
        raise BytepairError("train() needs at least one source")
    names = [s.name for s in out]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise BytepairError(f"two sources are named {dup!r}; give each Source its own name=")
    return out


TIE_BREAKS = ("lexicographic", "first", "hf")


def _check_tie_break(tie_break: object, base: Tokenizer | None) -> None:
    if tie_break not in TIE_BREAKS:
        raise BytepairError(f"tie_break must be one of {', '.join(map(repr, TIE_BREAKS))}, not {tie_break!r}")
    if tie_break != "lexicographic" and base is not None:
        raise BytepairError(f"tie_break={tie_break!r} trains from bytes; continued training (base=) breaks ties by bytes")


def _train_in_order(src: Source, plan: _Plan, *, vocab_size: int, errors: str) -> Tokenizer:
    """``tie_break="first"``: the pieces counted in Python, in the order they first occur (the
    order decides ties), then trained from those counts."""
    fn = _normalize.function(plan.normalization) or (lambda t: t)
    specials = plan.all_specials
    counts: dict[bytes, int] = {}
    documents = 0

    def add(text: str) -> None:
        # Special-token text separates documents and is never counted (as PieceCounter does).
        for stretch in _normalize.split(_repair_surrogates(text), fn, specials, specials)[::2]:
            for piece in _core.split_pieces(stretch, plan.regex):
                key = piece.encode("utf-8")
                counts[key] = counts.get(key, 0) + 1

    if src.texts is not None:
        for text in src.texts:
            if not isinstance(text, str):
                raise TypeError(f"training texts must be str, got {type(text).__name__}")
            add(text)
            documents += 1
    for f in resolve_source(src, strict=errors == "strict"):
        for text in source_documents(f, text_field=src.text_field, errors=errors):
            add(text)
            documents += 1
    return _from_counts(plan, list(counts.items()), vocab_size, stacklevel=4, input_extra={"documents": documents})


def train(
    sources: PathLike | Source | Iterable[PathLike] | Iterable[Source],
    *,
    vocab_size: int,
    pattern: str | None | _Unset = _UNSET,
    special_tokens: Sequence[str] | Mapping[str, int] = (),
    reserved_special_tokens: int = 0,
    min_frequency: int = 2,
    max_token_length: int | None = None,
    normalization: str | None | _Unset = _UNSET,
    alpha: float = 1.0,
    base: Tokenizer | None = None,
    errors: str = "strict",
    progress: bool | None = None,
    backend: str = "local",
    client: Any = None,
    tie_break: str = "lexicographic",
    max_words_per_token: int | None = None,
    max_pieces: int | None = None,
) -> Tokenizer:
    """Trains a byte-level BPE tokenizer.

    ``sources``: a path (a ``str`` is always one path), a glob, a directory, a list of those
    (one source), or a list of :class:`Source` (several sources, mixed by ``alpha``). Files
    are streamed, never held whole; memory follows the number of distinct pieces.

    ``vocab_size`` counts everything: 256 byte tokens, the merges, ``special_tokens`` and
    ``reserved_special_tokens`` slots (``<|reserved_0|>``, ...; claim them later with
    :meth:`Tokenizer.with_special_tokens`); given as ``{token: id}``, each special token gets its
    own id (``{"<pad>": 0}``: first, as BERT and T5 lay them out; ``{"<|endoftext|>": 256}``: after
    the bytes) and the bytes and merges take the ids left free, in order. ``pattern``: ``"gpt4"`` (default), ``"gpt2"``,
    ``"o200k"``, ``None`` or a regex. Special-token text separates documents and is never
    counted. ``min_frequency``: stop when no pair occurs this often. ``max_token_length``: never
    merge a pair whose token would be longer than this many bytes. ``normalization``: ``None``,
    ``"nfc"``, ``"nfkc"``, ``"lowercase"`` or steps joined by ``+``, applied to the training
    text and, identically, whenever the tokenizer encodes.

    ``alpha`` (in [0, 1]) mixes several sources: source i contributes in proportion to
    n_i^alpha (n_i = its size in bytes); 1 keeps raw proportions, 0 weighs them equally (see
    the module docstring for the exact integer rule). ``base``: continue training this
    tokenizer: its ids and merges stay, the text is first encoded with it, new merges get ids
    after its largest id, and ``vocab_size`` is the new total. ``errors="replace"`` replaces
    bytes that are not UTF-8 (and counts them) instead of raising :class:`CorpusError`.
    ``progress=None`` shows progress bars on stderr only when it is a terminal.

    Per-source sizes and compression are in ``tok.training["sources"]``
    (:func:`sources_table` formats them).

    ``backend="dask"`` counts on a Dask cluster (``client``, or the current default client):
    the workers read the files, so the paths must be valid there; see
    :mod:`bytepair.distributed`. The merges are the same as with ``backend="local"``.

    Superword tokens (SuperBPE's second stage): ``base=stage1, pattern="superword"`` counts
    pieces that cross the spaces between words (at most ``max_words_per_token`` words each, 4
    by default; never across a sentence end: :func:`bytepair.patterns.superword_pattern`),
    encodes each with the base's merges, and continues merging; the base's ids stay, and the
    result splits with the superword pattern. ``base`` with any other ``pattern`` works the same
    way. ``max_words_per_token`` alone (no ``pattern``) means ``pattern="superword"``.

    ``max_pieces`` bounds the table of distinct pieces while counting (superword pieces are
    many): after each block of text (16 MB of a plain file, 8 MB read in Python, a batch of
    documents; a custom pattern other than the superword ones cannot cut a file, which is then
    one block), when more than ``max_pieces`` distinct pieces are held, every piece whose count
    is at most k is dropped, k the smallest count that leaves at most ``max_pieces``; a dropped
    piece that occurs again is counted from zero. The result depends only on the text (not on
    threads); what was dropped is in ``tok.training["pruned"]``. Memory, whatever the input's
    size: the table holds at most ``max_pieces`` + P entries, P the pieces of one block (at most
    one per byte of it; in practice its distinct pieces, about 150,000 to 360,000 per 16 MiB of
    mixed text), at about 100 bytes an entry (longer pieces more), plus two blocks of text and
    the interpreter, extension and base; merging then works on at most ``max_pieces`` pieces.
    Threads do not enter (an occurrence adds at most one entry, and the workers' tables are
    summed at every prune); each source keeps its own table until merging. A document is never
    split, so a single document larger than a block is one block. ``None`` (default): no bound.

    ``tie_break`` chooses among pairs of equal count: ``"lexicographic"`` (the pair with the
    greater bytes, left token first; independent of the order of the text), ``"first"`` (the
    pair that occurs first in the text as merged so far: minbpe's and the notebooks'
    ``max(stats, key=stats.get)``; one source, counted in order in Python, so for small
    corpora) or ``"hf"`` (Hugging Face's ``BpeTrainer``: the smaller pair in its numbering of
    the bytes by their byte-level characters). ``"first"`` and ``"hf"`` train from bytes (no
    ``base``).

    >>> tok = train("corpus.txt", vocab_size=1000)  # doctest: +SKIP
    """
    if errors not in ("strict", "replace"):
        raise BytepairError(f"errors must be 'strict' or 'replace', got {errors!r}")
    if not isinstance(alpha, (int, float)) or isinstance(alpha, bool) or not 0 <= alpha <= 1:
        raise BytepairError(f"alpha must be a number in [0, 1], got {alpha!r}")
    _check_tie_break(tie_break, base)
    srcs = _as_sources(sources)
    plan = _plan(
        vocab_size=vocab_size,
        pattern=pattern,
        special_tokens=special_tokens,
        reserved_special_tokens=reserved_special_tokens,
        min_frequency=min_frequency,
        max_token_length=max_token_length,
        normalization=normalization,
        base=base,
        max_words_per_token=max_words_per_token,
    )
    plan.tie_break = tie_break
    plan.max_pieces = _check_max_pieces(max_pieces)
    if tie_break == "first":
        if max_pieces is not None:
            raise BytepairError("tie_break='first' counts in Python without a bound: leave max_pieces out")
        if backend != "local" or client is not None:
            raise BytepairError("tie_break='first' counts the text in order, on this machine: use backend='local'")
        if len(srcs) != 1:
            raise BytepairError("tie_break='first' takes one source: the order of its text decides ties")
        return _train_in_order(srcs[0], plan, vocab_size=vocab_size, errors=errors)
    if backend != "local" or client is not None:
        return _train_elsewhere(
            srcs, plan, vocab_size=vocab_size, backend=backend, client=client, errors=errors, progress=progress
        )
    # Every file is found, opened and its start checked before counting starts.
    files = [resolve_source(s, strict=errors == "strict") for s in srcs]
    show = wanted(progress)
    started = time.perf_counter()
    has_texts = any(s.texts is not None for s in srcs)
    total = None if has_texts else sum(f.size for fs in files for f in fs)
    bar = Progress("counting", total=total, unit="bytes") if show else None
    counting = _Counting(
        replace=errors == "replace",
        normalize=_normalize.function(plan.normalization),
        specials=plan.all_specials,
        bar=bar,
    )
    counters = []
    stats = []
    for src, fs in zip(srcs, files):
        counter = _core.PieceCounter(
            plan.regex, plan.all_specials, max_pieces=plan.max_pieces, newline_cuts=is_superword(plan.regex)
        )
        replaced_before = counting.replaced_in_python
        if src.texts is not None:
            counting.texts(counter, src.texts)
        for f in fs:
            counting.file(counter, f, src.text_field)
        counters.append(counter)
        stats.append(
            {
                "name": src.name,
                "files": len(fs),
                "bytes": counter.bytes_counted,
                "documents": counter.documents,
                "words": counter.words,
                "replaced_bytes": counter.replaced_bytes + counting.replaced_in_python - replaced_before,
            }
        )
    if bar is not None:
        bar.close()
    all_files = [f.path for fs in files for f in fs]
    tok = _train_counters(
        plan,
        counters,
        stats,
        alpha=alpha,
        vocab_size=vocab_size,
        show=show,
        started=started,
        files=[os.path.basename(p) for p in all_files] if not has_texts or all_files else None,
    )
    return tok


def _train_counters(
    plan: _Plan,
    counters: list[_core.PieceCounter],
    stats: list[dict[str, Any]],
    *,
    alpha: float,
    vocab_size: int,
    show: bool,
    started: float,
    files: list[str] | None,
) -> Tokenizer:
    n_bytes = sum(s["bytes"] for s in stats)
    if n_bytes == 0:
        warnings.warn(
            "the training corpus is empty: the tokenizer has only the 256 byte tokens"
            if plan.base is None
            else "the training corpus is empty: no merge was added to the base tokenizer",
            BytepairWarning,
            stacklevel=3,
        )
    sizes = [s["bytes"] for s in stats]
    multipliers = mixing_multipliers(sizes, alpha)
    pruned = [c.pruned for c in counters] if plan.max_pieces is not None else []
    bar = Progress("merging ", total=plan.merges, unit="merges") if show else None
    counted = time.perf_counter()
    merge_ids, distinct, per_source, token_counts = _core.train_counters(
        counters,
        multipliers,
        denominator=WEIGHT_DENOMINATOR,
        merges=plan.merges,
        min_frequency=plan.min_frequency,
        max_token_length=plan.max_token_length,
        base=plan.core_base(),
        progress=bar.update if bar else None,
        tie_break=plan.tie_break,
    )
    if bar:
        bar.close()
    powered = [n**alpha if n else 0.0 for n in sizes]
    total_powered = sum(powered) or 1.0
    for s, m, p, (text_bytes, tokens) in zip(stats, multipliers, powered, per_source):
        s["weight"] = m / WEIGHT_DENOMINATOR
        s["share"] = round(p / total_powered, 6)
        s["text_bytes"] = text_bytes
        s["tokens"] = tokens
        s["bytes_per_token"] = round(text_bytes / tokens, 4) if tokens else None
        s["tokens_per_word"] = round(tokens / s["words"], 4) if s["words"] else None
    _warn_early_stop(plan, vocab_size, len(merge_ids), n_bytes)
    info = _training_info(plan, vocab_size, len(merge_ids))
    inputs: dict[str, Any] = {} if files is None else {"files": files}
    inputs.update(
        bytes=n_bytes,
        documents=sum(s["documents"] for s in stats),
        replaced_bytes=sum(s["replaced_bytes"] for s in stats),
    )
    info["input"] = inputs
    if len(stats) > 1:
        info["alpha"] = alpha
    info["distinct_pieces"] = distinct
    if pruned:
        keys = ("prunes", "pieces", "occurrences", "max_threshold")
        info["pruned"] = {k: (max if k == "max_threshold" else sum)(p[i] for p in pruned) for i, k in enumerate(keys)}
    info["seconds"] = {
        "counting": round(counted - started, 3),
        "merging": round(time.perf_counter() - counted, 3),
    }
    info["sources"] = stats
    tok = _build(plan, merge_ids, info)
    if token_counts:  # kept in memory only (not in the file): see Tokenizer._training_counts
        tok._training_counts = token_counts
    return tok


def _train_elsewhere(
    srcs: list[Source],
    plan: _Plan,
    *,
    vocab_size: int,
    backend: str,
    client: Any,
    errors: str,
    progress: bool | None,
) -> Tokenizer:
    """train() with the counting done on a backend other than "local" (only "dask" so far)."""
    if backend != "dask":
        if backend == "local":
            raise BytepairError("client= is only used with backend='dask'")
        raise BytepairError(f"backend must be 'local' or 'dask', got {backend!r}")
    if len(srcs) != 1 or srcs[0].paths is None:
        raise BytepairError("backend='dask' trains on one source of files (paths); mix sources locally")
    if plan.normalization:
        raise BytepairError("backend='dask' does not normalize text yet; train locally to use normalization")
    from bytepair import distributed

    files = distributed.check_paths(srcs[0].paths)  # the files themselves are checked on the workers
    show = wanted(progress)
    started = time.perf_counter()
    counter = distributed.count(
        files,
        regex=plan.regex,
        special_tokens=plan.all_specials,
        replace_errors=errors == "replace",
        client=client,
        progress=show,
        max_pieces=plan.max_pieces,
    )
    stats = [
        {
            "name": srcs[0].name,
            "files": len(files),
            "bytes": counter.bytes_counted,
            "documents": counter.documents,
            "words": counter.words,
            "replaced_bytes": counter.replaced_bytes,
        }
    ]
    return _train_counters(
        plan,
        [counter],
        stats,
        alpha=1.0,
        vocab_size=vocab_size,
        show=show,
        started=started,
        files=[os.path.basename(f) for f in files],
    )


def _paths(paths: PathLike | Iterable[PathLike]) -> list[str]:
    """The plain-text files that paths, globs or directories name, checked as local training
    checks them (the Dask workers call this where they read the files)."""
    (source,) = _as_sources(paths) if not isinstance(paths, list) or paths else [Source([])]
    out = []
    for f in resolve_source(source, strict=False):
        if f.compression or f.jsonl or f.parquet:
            raise BytepairError(f"{f.path}: backend='dask' reads plain text files only, not .jsonl/.gz/.zst/.parquet")
        out.append(f.path)
    return out


def train_from_iterator(
    texts: Iterable[str],
    *,
    vocab_size: int,
    pattern: str | None | _Unset = _UNSET,
    special_tokens: Sequence[str] | Mapping[str, int] = (),
    reserved_special_tokens: int = 0,
    min_frequency: int = 2,
    max_token_length: int | None = None,
    normalization: str | None | _Unset = _UNSET,
    base: Tokenizer | None = None,
    progress: bool | None = None,
    tie_break: str = "lexicographic",
    max_words_per_token: int | None = None,
    max_pieces: int | None = None,
) -> Tokenizer:
    """Trains a byte-level BPE tokenizer on an iterable of ``str`` documents (the options are
    :func:`train`'s; this is ``train(Source(texts=texts), ...)``).

    Each document is split on its own (no piece spans two documents). Documents are handed to
    the Rust core in batches, so an iterator over a huge dataset is never held whole.
    """
    if isinstance(texts, (str, bytes)):
        raise TypeError("train_from_iterator() takes an iterable of str documents, not a single str")
    return train(
        Source(texts=texts),
        vocab_size=vocab_size,
        pattern=pattern,
        special_tokens=special_tokens,
        reserved_special_tokens=reserved_special_tokens,
        min_frequency=min_frequency,
        max_token_length=max_token_length,
        normalization=normalization,
        base=base,
        progress=progress,
        tie_break=tie_break,
        max_words_per_token=max_words_per_token,
        max_pieces=max_pieces,
    )


def train_from_counts(
    counts: Mapping[str, int] | Mapping[bytes, int] | Iterable[tuple[str | bytes, int]],
    *,
    vocab_size: int,
    pattern: str | None | _Unset = _UNSET,
    special_tokens: Sequence[str] | Mapping[str, int] = (),
    reserved_special_tokens: int = 0,
    min_frequency: int = 2,
    max_token_length: int | None = None,
    normalization: str | None | _Unset = _UNSET,
    base: Tokenizer | None = None,
    tie_break: str = "lexicographic",
    max_words_per_token: int | None = None,
) -> Tokenizer:
    """Trains from precomputed piece counts ``{piece: count}`` (pieces as ``str`` or UTF-8
    ``bytes``; counts are ints in [0, 2**64); a piece given twice, e.g. as str and as bytes,
    adds up). The result is exactly that of training on text whose pieces have these counts:
    count the pieces with the same ``pattern`` (and ``normalization``, which is stored for
    encoding) as the tokenizer will use. ``tie_break`` is :func:`train`'s; with ``"first"``, the
    order of ``counts`` is taken as the order in which the pieces first occur.
    """
    _check_tie_break(tie_break, base)
    plan = _plan(
        vocab_size=vocab_size,
        pattern=pattern,
        special_tokens=special_tokens,
        reserved_special_tokens=reserved_special_tokens,
        min_frequency=min_frequency,
        max_token_length=max_token_length,
        normalization=normalization,
        base=base,
        max_words_per_token=max_words_per_token,
    )
    items = counts.items() if isinstance(counts, Mapping) else counts
    pairs: list[tuple[bytes, int]] = []
    for item in items:
        piece, count = item
        if isinstance(piece, str):
            try:
                key = piece.encode("utf-8")
            except UnicodeEncodeError:
                key = _repair_surrogates(piece).encode("utf-8")
        elif isinstance(piece, bytes):
            key = piece
        else:
            raise TypeError(f"pieces must be str or bytes, got {type(piece).__name__}: {piece!r:.60}")
        if not isinstance(count, int) or isinstance(count, bool):
            raise TypeError(f"the count of {piece!r:.60} must be an int, got {count!r}")
        if not 0 <= count < 2**64:
            raise BytepairError(f"the count of {piece!r:.60} is {count}; counts must be in [0, 2**64)")
        pairs.append((key, count))
    plan.tie_break = tie_break
    return _from_counts(plan, pairs, vocab_size, stacklevel=4)


def _from_counts(
    plan: _Plan, pairs: list[tuple[bytes, int]], vocab_size: int, *, stacklevel: int, input_extra: dict[str, int] | None = None
) -> Tokenizer:
    text_bytes = sum(len(key) * count for key, count in pairs)
    started = time.perf_counter()
    merge_ids = _core.train_from_counts(
        pairs,
        merges=plan.merges,
        min_frequency=plan.min_frequency,
        max_token_length=plan.max_token_length,
        base=plan.core_base(),
        tie_break=plan.tie_break,
    )
    _warn_early_stop(plan, vocab_size, len(merge_ids), text_bytes, stacklevel=stacklevel)
    info = _training_info(plan, vocab_size, len(merge_ids))
    info["input"] = {"pieces": len(pairs), "bytes": text_bytes, **(input_extra or {})}
    info["seconds"] = {"merging": round(time.perf_counter() - started, 3)}
    return _build(plan, merge_ids, info)


# ---------------------------------------------------------------------------- report


def sources_table(tok_or_training: Tokenizer | Mapping[str, Any]) -> str:
    """The per-source report of a trained tokenizer as a text table: size, weight and share
    after mixing, and the compression reached on each source's text (bytes per token and tokens
    per word; words are runs of characters between ASCII whitespace)."""
    info = tok_or_training.training if isinstance(tok_or_training, Tokenizer) else tok_or_training
    sources: list[dict[str, Any]] = list(info.get("sources") or [])
    if not sources:
        return "no per-source report (this tokenizer was not trained from sources)"
    rows = [["source", "files", "size", "documents", "weight", "share", "bytes/token", "tokens/word"]]
    fmt: Callable[[object, str], str] = lambda v, spec: "-" if v is None else format(v, spec)  # noqa: E731
    for s in sources:
        rows.append(
            [
                str(s.get("name")),
                f"{s['files']:,}" if s.get("files") else "-",
                size_text(int(s.get("bytes") or 0)),
                f"{s.get('documents', 0):,}",
                fmt(s.get("weight"), ".3f"),
                fmt(s.get("share"), ".1%"),
                fmt(s.get("bytes_per_token"), ".2f"),
                fmt(s.get("tokens_per_word"), ".2f"),
            ]
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for n, r in enumerate(rows):
        cells = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:])]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    replaced = sum(int(s.get("replaced_bytes") or 0) for s in sources)
    if replaced:
        lines.append(f"{replaced:,} bad UTF-8 sequences were replaced by U+FFFD (errors='replace')")
    return "\n".join(lines)
