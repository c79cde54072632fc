"""SentencePiece training: ``train_sentencepiece(sources, *, model_type=...)`` and
``train_sentencepiece_from_iterator(texts, ...)`` for Unigram (``model_type="unigram"``, also
``train_unigram`` / ``train_unigram_from_iterator``) and SentencePiece's BPE (``"bpe"``).

Unigram is sentencepiece's algorithm (Kudo 2018): each line is normalized as the model will
normalize it (``normalization``: ``"nmt_nfkc"``, ``"nfkc"`` or ``"identity"``, with
``add_dummy_prefix`` and ``remove_extra_whitespaces``) and cut into words before each ``▁``;
distinct words are counted on all cores (``rust/src/words.rs``); the seed pieces are the
characters covering ``character_coverage`` of the text and the most frequent substrings of the
distinct words (``rust/src/unigram/seeds.rs``); rounds of EM and pruning shrink them to the size
(``rust/src/unigram/train.rs``). BPE counts the same words and merges the most frequent pair of
adjacent pieces, character by character (``rust/src/bpe/spm_train.rs``); its pieces are scored by
the order they were learned in, as sentencepiece's BPE models are. The result is a
:class:`SentencePieceTokenizer` whose ``.model`` sentencepiece loads and encodes to the same ids.

Pieces never mix scripts (``split_by_unicode_script``; a letter's script is the first word
of its Unicode name, Han, Hiragana and Katakana counting as one; numbers, punctuation and
symbols are one common script, marks join any), letters and numbers (``split_by_number``), or hold a digit with anything else (``split_digits``); ``▁`` only
starts a piece (ends it with ``treat_whitespace_as_suffix``).

Mixing. Several sources are mixed by ``alpha`` as byte-level BPE training mixes them
(:mod:`bytepair.training`): source i (n_i bytes of text) contributes in proportion to
n_i^alpha, its word counts multiplied by w_i = (n_max / n_i)^(1 - alpha) as the fixed-point
multiplier m_i = round(w_i * 65536) (``mixing_multipliers``), each scaled count rounded
``(count * m_i + 32768) // 65536``. Each source is counted apart, then folded into the total
(``WordCounter.absorb``); the characters kept for ``character_coverage``, the seed pieces and
the training all see the weighted counts. ``alpha=1`` (the default) counts the sources
together, as one.

Ids: the unknown piece, ``<s>``, ``</s>`` and the pad piece (those not ``None``), the control
symbols, the user-defined symbols, with ``byte_fallback`` the 256 ``<0xNN>`` pieces, then the
learned pieces, best score first. ``vocab_size`` counts them all. The result does not depend on
``num_threads``.
"""

from __future__ import annotations

import os
import time
import unicodedata
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from bytepair import _core, _feed, _progress, _spm_proto
from bytepair._charsmap import charsmap
from bytepair._feed import Feed, source_feeds
from bytepair.errors import BytepairError
from bytepair.sentencepiece import SentencePieceTokenizer
from bytepair.sources import Source
from bytepair.tokenizer import _check_threads
from bytepair.training import WEIGHT_DENOMINATOR, mixing_multipliers

__all__ = ["train_sentencepiece", "train_sentencepiece_from_iterator", "train_unigram", "train_unigram_from_iterator"]

MODEL_TYPES = {"unigram": 1, "bpe": 2}

NORMALIZATIONS = ("nmt_nfkc", "nfkc", "identity")
_MAX_PIECE_LENGTH = 255  # the seed search keeps common prefix lengths in a byte


def _int(name: str, value: object, low: int, high: int | None = None) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < low or (high is not None and value > high):
        bound = f"from {low} to {high}" if high is not None else f"of at least {low}"
        raise BytepairError(f"{name} must be an int {bound}, got {value!r}")
    return value


def _fraction(name: str, value: object, *, closed: bool) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and (0 < value <= 1 if closed else 0 < value < 1)
    if not ok:
        raise BytepairError(f"{name} must be a number in {'(0, 1]' if closed else '(0, 1)'}, got {value!r}")
    return float(value)  # type: ignore[arg-type]


def _symbols(name: str, value: object) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise BytepairError(f"{name} must be a sequence of str, got {value!r}")
    out = list(value)
    for s in out:
        if not isinstance(s, str) or not s:
            raise BytepairError(f"{name} must hold non-empty str, got {s!r}")
    return out


def _script(ch: str) -> str:
    """A character's script, from the first word of its Unicode name (Han, Hiragana and
    Katakana as one, as sentencepiece does)."""
    try:
        word = unicodedata.name(ch).split()[0]
    except ValueError:
        return "UNNAMED"
    if word in ("CJK", "HIRAGANA", "KATAKANA", "KATAKANA-HIRAGANA", "IDEOGRAPHIC"):
        return "HAN"
    return word


def _classes(
    chars: list[tuple[str, int]], *, by_script: bool, by_number: bool
) -> tuple[dict[str, int], list[str]]:
    """Each character's class for the seed rule (0 joins any class), and the digits."""
    ids: dict[str, int] = {}
    classes: dict[str, int] = {}
    digits: list[str] = []
    for ch, _ in chars:
        cat = unicodedata.category(ch)
        if cat == "Nd":
            digits.append(ch)
        if cat[0] == "N":
            # numbers are of the common script (they join punctuation, as in sentencepiece)
            key = "COMMON" if by_number else None
        elif cat[0] == "M":
            key = None  # a mark takes its base character's script
        elif cat[0] == "L":
            key = _script(ch) if by_script else None
        else:
            key = "COMMON" if by_script else None
        if key is not None:
            classes[ch] = ids.setdefault(key, len(ids) + 1)
    return classes, digits


def _word_counter(
    *,
    normalization: str,
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
    treat_whitespace_as_suffix: bool,
    user_defined_symbols: list[str],
) -> _core.WordCounter:
    """An empty counter of the words a model with these normalizer options trains on."""
    blob = b"" if normalization == "identity" else charsmap(normalization)
    return _core.WordCounter.sentencepiece(
        charsmap=blob,
        add_dummy_prefix=add_dummy_prefix,
        remove_extra_whitespaces=remove_extra_whitespaces,
        escape_whitespaces=True,
        treat_whitespace_as_suffix=treat_whitespace_as_suffix,
        user_defined_symbols=user_defined_symbols,
        unit_bytes=_feed._UNIT_BYTES,
        block_bytes=_feed._BLOCK_BYTES,
    )


def _count(
    new_counter: Callable[[], _core.WordCounter],
    feeds: list[Callable[[Feed], None]],
    *,
    alpha: float,
    num_threads: int | None,
    show: bool,
    total_bytes: int | None,
) -> tuple[_core.WordCounter, Feed, list[int], list[int], list[int]]:
    """Counts the sources (one feeding function each) and mixes them by ``alpha`` (see the
    module docstring): the counter of the (weighted) words, the feed (which knows what it
    replaced), each source's text size in bytes, its multiplier (of ``WEIGHT_DENOMINATOR``),
    and, when the sources were counted apart, each one's words (unweighted); else [].

    With ``alpha`` == 1 or one source, everything is counted into one counter, as is. Otherwise
    each source is counted apart and compacted (sorted words, not a hash table) before the next
    one starts; once all sizes are known, each is folded into the total with its multiplier and
    dropped: memory follows the distinct words of each source, as BPE's mixing does."""
    bar = _progress.Progress("counting", total=total_bytes, unit="bytes") if show else None
    counter = new_counter()
    feed = Feed(counter, num_threads, bar)
    sizes: list[int] = []
    parts: list[_core.WordCounter] = []
    if alpha == 1 or len(feeds) == 1:
        for feed_one in feeds:
            before = counter.text_stats()[0]
            feed_one(feed)
            feed.flush()
            sizes.append(counter.text_stats()[0] - before)
    else:
        for feed_one in feeds:
            part = new_counter()
            feed.switch(part)
            feed_one(feed)
            feed.flush()
            part.sizes()  # the counts merged into compact storage before the next source
            sizes.append(part.text_stats()[0])
            parts.append(part)
    if bar:
        bar.close()
    multipliers = mixing_multipliers(sizes, alpha)
    words = [part.sizes()[1] for part in parts]
    for m in multipliers[: len(parts)]:
        counter.absorb(parts.pop(0), m, WEIGHT_DENOMINATOR)  # each part dropped once folded in
    return counter, feed, sizes, multipliers, words


def _train(
    feeds: list[Callable[[Feed], None]],
    *,
    alpha: float,
    model_type: str,
    vocab_size: int,
    character_coverage: float,
    max_piece_length: int,
    split_digits: bool,
    split_by_unicode_script: bool,
    split_by_number: bool,
    byte_fallback: bool,
    user_defined_symbols: Sequence[str],
    control_symbols: Sequence[str],
    unk_piece: str,
    bos_piece: str | None,
    eos_piece: str | None,
    pad_piece: str | None,
    normalization: str,
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
    treat_whitespace_as_suffix: bool,
    seed_size: int,
    shrinking_factor: float,
    num_sub_iterations: int,
    num_threads: int | None,
    progress: bool | None,
    total_bytes: int | None,
    sources: list[dict[str, Any]],
) -> SentencePieceTokenizer:
    if model_type not in MODEL_TYPES:
        raise BytepairError(f'model_type must be "unigram" or "bpe", got {model_type!r}')
    if model_type == "bpe":
        for name, value, default in (
            ("seed_size", seed_size, 1_000_000), ("shrinking_factor", shrinking_factor, 0.75),
            ("num_sub_iterations", num_sub_iterations, 2),
        ):
            if value != default:
                raise BytepairError(f'{name} is an option of Unigram training, not of model_type="bpe"')
    character_coverage = _fraction("character_coverage", character_coverage, closed=True)
    shrinking_factor = _fraction("shrinking_factor", shrinking_factor, closed=False)
    max_piece_length = _int("max_piece_length", max_piece_length, 1, _MAX_PIECE_LENGTH)
    seed_size = _int("seed_size", seed_size, 1)
    num_sub_iterations = _int("num_sub_iterations", num_sub_iterations, 1)
    num_threads = _check_threads(num_threads)
    if normalization not in NORMALIZATIONS:
        raise BytepairError(f"normalization must be one of {', '.join(NORMALIZATIONS)}, got {normalization!r}")
    user = _symbols("user_defined_symbols", user_defined_symbols)
    control = _symbols("control_symbols", control_symbols)
    meta: list[tuple[str, int]] = []
    for role, piece in (("unk", unk_piece), ("bos", bos_piece), ("eos", eos_piece), ("pad", pad_piece)):
        if piece is None and role == "unk":
            raise BytepairError("unk_piece must be a non-empty str (a Unigram model needs an unknown piece)")
        if piece is not None:
            if not isinstance(piece, str) or not piece:
                raise BytepairError(f"{role}_piece must be a non-empty str or None, got {piece!r}")
            meta.append((piece, _spm_proto.UNKNOWN if role == "unk" else _spm_proto.CONTROL))
    meta += [(s, _spm_proto.CONTROL) for s in control]
    meta += [(s, _spm_proto.USER_DEFINED) for s in user]
    if byte_fallback:
        meta += [(f"<0x{b:02X}>", _spm_proto.BYTE) for b in range(256)]
    seen: set[str] = set()
    for piece, _ in meta:
        if piece in seen:
            raise BytepairError(f"the piece {piece!r} is given twice (special pieces and symbols must be distinct)")
        seen.add(piece)
    vocab_size = _int("vocab_size", vocab_size, len(meta) + 1, 2**31 - 1)

    blob = b"" if normalization == "identity" else charsmap(normalization)

    def new_counter() -> _core.WordCounter:
        return _word_counter(
            normalization=normalization, add_dummy_prefix=add_dummy_prefix,
            remove_extra_whitespaces=remove_extra_whitespaces, treat_whitespace_as_suffix=treat_whitespace_as_suffix,
            user_defined_symbols=user,
        )

    show = _progress.wanted(progress)
    started = time.perf_counter()
    counter, feed, sizes, multipliers, source_words = _count(
        new_counter, feeds, alpha=alpha, num_threads=num_threads, show=show, total_bytes=total_bytes
    )
    powered = [n**alpha if n else 0.0 for n in sizes]
    for src, n, m, p in zip(sources, sizes, multipliers, powered):
        src["text_bytes"] = n
        src["weight"] = m / WEIGHT_DENOMINATOR
        src["share"] = round(p / (sum(powered) or 1.0), 6)
    counted = time.perf_counter() - started
    chars = counter.char_counts()
    # the characters covering character_coverage are always pieces (the rule of the Rust side)
    total_chars, covered, required = sum(c for _, c in chars), 0, 0
    for _, c in chars:
        if total_chars == 0 or covered / total_chars >= character_coverage:
            break
        covered += c
        required += 1
    if len(meta) + required > vocab_size:
        raise BytepairError(
            f"vocab_size={vocab_size} is too small: {len(meta)} reserved pieces and the {required} characters "
            f"that cover character_coverage={character_coverage} of the text need {len(meta) + required}; "
            "raise vocab_size or lower character_coverage"
        )
    classes, digits = _classes(chars, by_script=split_by_unicode_script, by_number=split_by_number)
    wanted = vocab_size - len(meta)
    label = "pruning" if model_type == "unigram" else "merging"
    step_bar = _progress.Progress(label, total=None, unit="pieces") if show else None
    learned, record = counter.train_sentencepiece(
        model_type=model_type,
        pieces=wanted,
        character_coverage=character_coverage,
        max_piece_length=max_piece_length,
        seed_size=seed_size,
        shrinking_factor=shrinking_factor,
        sub_iterations=num_sub_iterations,
        treat_whitespace_as_suffix=treat_whitespace_as_suffix,
        classes=classes,
        alone=digits if split_digits else [],
        num_threads=num_threads,
        progress=step_bar.update if step_bar else None,
    )
    if step_bar:
        step_bar.close()
    learned = [(p, s) for p, s in learned if p not in seen]
    if len(learned) < wanted:
        warnings.warn(
            f"the corpus gives {len(learned)} pieces, fewer than the {wanted} asked for: the model has "
            f"{len(meta) + len(learned)} pieces, not vocab_size={vocab_size}",
            stacklevel=3,
        )
    pieces = [(p, 0.0, kind) for p, kind in meta] + [(p, s, _spm_proto.NORMAL) for p, s in learned]
    ids = {p: i for i, (p, _, _) in enumerate(pieces)}
    trainer: dict[str, Any] = {
        "model_type": MODEL_TYPES[model_type],
        "vocab_size": len(pieces),
        "character_coverage": character_coverage,
        "seed_sentencepiece_size": seed_size,
        "shrinking_factor": shrinking_factor,
        "num_sub_iterations": num_sub_iterations,
        "max_sentencepiece_length": max_piece_length,
        "split_by_unicode_script": split_by_unicode_script,
        "split_by_number": split_by_number,
        "treat_whitespace_as_suffix": treat_whitespace_as_suffix,
        "split_digits": split_digits,
        "control_symbols": control,
        "user_defined_symbols": user,
        "byte_fallback": byte_fallback,
        "unk_id": ids[unk_piece],
        "bos_id": -1 if bos_piece is None else ids[bos_piece],
        "eos_id": -1 if eos_piece is None else ids[eos_piece],
        "pad_id": -1 if pad_piece is None else ids[pad_piece],
        "unk_piece": unk_piece,
        "bos_piece": bos_piece or "<s>",
        "eos_piece": eos_piece or "</s>",
        "pad_piece": pad_piece or "<pad>",
    }
    normalizer = {
        "name": normalization,
        "precompiled_charsmap": blob,
        "add_dummy_prefix": add_dummy_prefix,
        "remove_extra_whitespaces": remove_extra_whitespaces,
        "escape_whitespaces": True,
    }
    tok = SentencePieceTokenizer.from_bytes(_spm_proto.model_bytes(pieces, trainer, normalizer), name="<trained>")
    distinct, words = counter.sizes()
    n_bytes, n_chars, replaced = counter.text_stats()
    from bytepair import __version__

    tok._training = {
        "model": model_type,
        "vocab_size": vocab_size,
        "pieces": len(pieces),
        "distinct_words": distinct,
        "words": sum(source_words) if source_words else words,
        "characters": n_chars,
        "text_bytes": n_bytes,
        "replaced_bytes": replaced + feed.replaced,
        "required_chars": record["required_chars"],
        "seed_pieces": record["seeds"],
        "rounds": [{"pieces": n, "objective": round(obj, 6)} for n, obj in record["rounds"]],
        "sources": sources,
        **({"alpha": alpha} if len(sources) > 1 else {}),
        **({"weighted_words": words} if source_words else {}),
        "seconds": {"counting": round(counted, 3), "total": round(time.perf_counter() - started, 3)},
        "bytepair_version": __version__,
    }
    return tok


def train_sentencepiece_from_iterator(
    texts: Iterable[str],
    *,
    vocab_size: int,
    model_type: str = "unigram",
    character_coverage: float = 0.9995,
    max_piece_length: int = 16,
    split_digits: bool = False,
    split_by_unicode_script: bool = True,
    split_by_number: bool = True,
    byte_fallback: bool = False,
    user_defined_symbols: Sequence[str] = (),
    control_symbols: Sequence[str] = (),
    unk_piece: str = "<unk>",
    bos_piece: str | None = "<s>",
    eos_piece: str | None = "</s>",
    pad_piece: str | None = None,
    normalization: str = "nmt_nfkc",
    add_dummy_prefix: bool = True,
    remove_extra_whitespaces: bool = True,
    treat_whitespace_as_suffix: bool = False,
    seed_size: int = 1_000_000,
    shrinking_factor: float = 0.75,
    num_sub_iterations: int = 2,
    num_threads: int | None = None,
    progress: bool | None = None,
) -> SentencePieceTokenizer:
    """Trains a SentencePiece model (``model_type`` ``"unigram"`` or ``"bpe"``) on an iterable of
    ``str`` documents, each line a sentence (see the module docstring). Options have
    sentencepiece's meaning and defaults (``max_piece_length`` is its
    ``max_sentencepiece_length``, ``seed_size`` its ``seed_sentencepiece_size``; ``seed_size``,
    ``shrinking_factor`` and ``num_sub_iterations`` are Unigram's)."""
    if isinstance(texts, (str, bytes)):
        raise TypeError("training takes an iterable of texts, not one str")

    def feed_all(feed: Feed) -> None:
        for text in texts:
            feed.text(text)

    return _train(
        [feed_all],
        alpha=1.0,
        model_type=model_type,
        vocab_size=vocab_size, character_coverage=character_coverage, max_piece_length=max_piece_length,
        split_digits=split_digits, split_by_unicode_script=split_by_unicode_script, split_by_number=split_by_number,
        byte_fallback=byte_fallback, user_defined_symbols=user_defined_symbols, control_symbols=control_symbols,
        unk_piece=unk_piece, bos_piece=bos_piece, eos_piece=eos_piece, pad_piece=pad_piece,
        normalization=normalization, add_dummy_prefix=add_dummy_prefix,
        remove_extra_whitespaces=remove_extra_whitespaces, treat_whitespace_as_suffix=treat_whitespace_as_suffix,
        seed_size=seed_size, shrinking_factor=shrinking_factor, num_sub_iterations=num_sub_iterations,
        num_threads=num_threads, progress=progress, total_bytes=None, sources=[{"name": "texts"}],
    )


def train_sentencepiece(
    sources: str | os.PathLike[str] | Source | Iterable[str | os.PathLike[str]] | Iterable[Source],
    *,
    vocab_size: int,
    model_type: str = "unigram",
    character_coverage: float = 0.9995,
    max_piece_length: int = 16,
    split_digits: bool = False,
    split_by_unicode_script: bool = True,
    split_by_number: bool = True,
    byte_fallback: bool = False,
    user_defined_symbols: Sequence[str] = (),
    control_symbols: Sequence[str] = (),
    unk_piece: str = "<unk>",
    bos_piece: str | None = "<s>",
    eos_piece: str | None = "</s>",
    pad_piece: str | None = None,
    normalization: str = "nmt_nfkc",
    add_dummy_prefix: bool = True,
    remove_extra_whitespaces: bool = True,
    treat_whitespace_as_suffix: bool = False,
    seed_size: int = 1_000_000,
    shrinking_factor: float = 0.75,
    num_sub_iterations: int = 2,
    alpha: float = 1.0,
    errors: str = "strict",
    num_threads: int | None = None,
    progress: bool | None = None,
) -> SentencePieceTokenizer:
    """Trains a SentencePiece model on files (paths, globs, directories, ``.jsonl``, ``.gz``,
    ``.zst``, Parquet: see :class:`bytepair.Source`; a list of those is one source) or a list of
    :class:`Source` objects (several sources, mixed by ``alpha``). ``alpha`` (in [0, 1]): source
    i contributes in proportion to n_i^alpha (n_i = its size in bytes of text); 1 keeps raw
    proportions, 0 weighs the sources equally (the exact rule: the module docstring). Each
    source's size, weight and share are in ``tok.training["sources"]``. Other options as
    :func:`train_sentencepiece_from_iterator`."""
    if errors not in ("strict", "replace"):
        raise BytepairError(f'errors must be "strict" or "replace", got {errors!r}')
    if not isinstance(alpha, (int, float)) or isinstance(alpha, bool) or not 0 <= alpha <= 1:
        raise BytepairError(f"alpha must be a number in [0, 1], got {alpha!r}")
    feeds, total, info, _ = source_feeds(sources, errors)
    return _train(
        feeds,
        alpha=alpha,
        model_type=model_type,
        vocab_size=vocab_size, character_coverage=character_coverage, max_piece_length=max_piece_length,
        split_digits=split_digits, split_by_unicode_script=split_by_unicode_script, split_by_number=split_by_number,
        byte_fallback=byte_fallback, user_defined_symbols=user_defined_symbols, control_symbols=control_symbols,
        unk_piece=unk_piece, bos_piece=bos_piece, eos_piece=eos_piece, pad_piece=pad_piece,
        normalization=normalization, add_dummy_prefix=add_dummy_prefix,
        remove_extra_whitespaces=remove_extra_whitespaces, treat_whitespace_as_suffix=treat_whitespace_as_suffix,
        seed_size=seed_size, shrinking_factor=shrinking_factor, num_sub_iterations=num_sub_iterations,
        num_threads=num_threads, progress=progress, total_bytes=total, sources=info,
    )


def train_unigram(
    sources: str | os.PathLike[str] | Source | Iterable[str | os.PathLike[str]] | Iterable[Source],
    *,
    vocab_size: int,
    **options: Any,
) -> SentencePieceTokenizer:
    """Trains a Unigram model: :func:`train_sentencepiece` with ``model_type="unigram"``."""
    return train_sentencepiece(sources, vocab_size=vocab_size, model_type="unigram", **options)


def train_unigram_from_iterator(texts: Iterable[str], *, vocab_size: int, **options: Any) -> SentencePieceTokenizer:
    """Trains a Unigram model on texts: :func:`train_sentencepiece_from_iterator` with
    ``model_type="unigram"``."""
    return train_sentencepiece_from_iterator(texts, vocab_size=vocab_size, model_type="unigram", **options)
