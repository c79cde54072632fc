"""WordPiece training: ``train_wordpiece(sources, ...)`` and ``train_wordpiece_from_iterator(texts, ...)``.

Words are counted under BERT normalization and pre-tokenization (the options the tokenizer will
encode with), on all cores, batch by batch; then the Rust merge loop (``rust/src/wordpiece/train.rs``)
builds the vocabulary with one of two rules:

- ``algorithm="score"`` (default): WordPiece's own rule, the pair with the highest
  ``count(ab) / (count(a) * count(b))``; ties go to the higher ``count(ab)``, then to the
  smallest ``(id(a), id(b))`` (ids in creation order: special tokens, characters, ``##``
  characters, merges). Pairs seen fewer than ``min_frequency`` times are never merged.
- ``algorithm="hf"``: Hugging Face's ``WordPieceTrainer`` (its BPE trainer with a ``##`` prefix):
  the most frequent pair, ties to the smallest ids, stop below ``min_frequency``. HF numbers
  the ``##`` characters in hash-map order, different on each run; here they are in code-point
  order, so the result is one of HF's possible results, the same every time.

Special tokens (default ``[PAD] [UNK] [CLS] [SEP] [MASK]``) take the first ids. With the score
rule their text in the corpus separates words and is not counted (as in BPE training); with the
HF rule it is counted like any text, as HF does.

The training record (``tok.training``, saved with the tokenizer) holds every merge in order as
``tok.training["merge_scores"]``: rows ``[left, right, score, count_ab, count_a, count_b]``:
the two tokens joined; count(ab), how often the pair occurs (words weighted by their counts);
count(a) and count(b), how often each token occurs, all as they were just before the merge; and
``score`` = count(ab) / (count(a) * count(b)), the value the ``"score"`` rule picks by (recorded
for ``algorithm="hf"`` too, though that rule picks by count(ab) alone). With the HF rule a merge
can make a token already in the vocabulary (it then takes no new id), so there can be more rows
than learned tokens.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from bytepair import _core, _feed, _progress
from bytepair.errors import BytepairError
from bytepair.tokenizer import _check_threads
from bytepair._feed import Feed, count_all, sources_feed
from bytepair.sources import Source
from bytepair.wordpiece import BERT_SPECIAL_TOKENS, WordPieceTokenizer, _check_utf8, _check_max_chars

__all__ = ["train_wordpiece", "train_wordpiece_from_iterator"]

# Ids are u32 and counts u64 in the extension: larger values are refused by name before any
# text is read, not an OverflowError after counting.
_MAX_VOCAB = 2**32
_MAX_FREQUENCY = 2**64 - 1


def _check(
    vocab_size: object,
    min_frequency: object,
    algorithm: object,
    specials: list[str],
    continuing_subword_prefix: object,
    max_input_chars_per_word: object,
) -> None:
    if not isinstance(vocab_size, int) or isinstance(vocab_size, bool) or not 1 <= vocab_size <= _MAX_VOCAB:
        raise BytepairError(f"vocab_size must be an int from 1 to 2**32, got {vocab_size!r}")
    if not isinstance(min_frequency, int) or isinstance(min_frequency, bool) or not 0 <= min_frequency <= _MAX_FREQUENCY:
        raise BytepairError(f"min_frequency must be an int from 0 to 2**64 - 1, got {min_frequency!r}")
    if algorithm not in ("score", "hf"):
        raise BytepairError(f'algorithm must be "score" or "hf", got {algorithm!r}')
    for t in specials:
        if not isinstance(t, str) or not t:
            raise BytepairError(f"special tokens must be non-empty str, got {t!r}")
    _check_utf8(specials, "special token")
    if not isinstance(continuing_subword_prefix, str):
        raise TypeError("continuing_subword_prefix must be a str")
    _check_utf8([continuing_subword_prefix], "continuing_subword_prefix")
    _check_max_chars(max_input_chars_per_word)


def _train(
    feed_all: Callable[[Feed], None],
    *,
    vocab_size: int,
    algorithm: str,
    min_frequency: int,
    special_tokens: Sequence[str],
    unk_token: str,
    continuing_subword_prefix: str,
    max_input_chars_per_word: int,
    clean_text: bool,
    handle_chinese_chars: bool,
    strip_accents: bool | None,
    lowercase: bool,
    split_unknown_characters: bool,
    num_threads: int | None,
    progress: bool | None,
    total_bytes: int | None,
    sources: list[dict[str, Any]],
    input_files: dict[str, Any],
    _continuation_order: list[str] | None = None,
) -> WordPieceTokenizer:
    specials = list(dict.fromkeys(special_tokens))
    _check(vocab_size, min_frequency, algorithm, specials, continuing_subword_prefix, max_input_chars_per_word)
    num_threads = _check_threads(num_threads)
    if unk_token not in specials:
        raise BytepairError(f"the unknown token {unk_token!r} must be one of special_tokens {specials!r}")
    strip = lowercase if strip_accents is None else strip_accents
    counter = _core.WordCounter(
        clean_text=clean_text,
        handle_chinese_chars=handle_chinese_chars,
        strip_accents=strip,
        lowercase=lowercase,
        split_on=specials if algorithm == "score" else [],
        unit_bytes=_feed._UNIT_BYTES,
        block_bytes=_feed._BLOCK_BYTES,
    )
    show = _progress.wanted(progress)
    started = time.perf_counter()
    feed = count_all(counter, feed_all, num_threads, show, total_bytes)
    counted = time.perf_counter() - started
    merge_bar = _progress.Progress("merging", total=vocab_size, unit="tokens") if show else None
    callback: Callable[[int], object] | None = merge_bar.update if merge_bar else None
    tokens, merge_rows = counter.train(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=specials,
        continuing_subword_prefix=continuing_subword_prefix,
        algorithm=algorithm,
        continuation_order=_continuation_order,
        progress=callback,
    )
    if merge_bar:
        merge_bar.update(len(tokens))
        merge_bar.close()
    merged = time.perf_counter()
    distinct, words = counter.sizes()
    n_bytes, n_chars, replaced = counter.text_stats()
    from bytepair import __version__

    tok = WordPieceTokenizer(
        tokens,
        unk_token=unk_token,
        continuing_subword_prefix=continuing_subword_prefix,
        max_input_chars_per_word=max_input_chars_per_word,
        clean_text=clean_text,
        handle_chinese_chars=handle_chinese_chars,
        strip_accents=strip_accents,
        lowercase=lowercase,
        special_tokens=specials,
        split_unknown_characters=split_unknown_characters,
    )
    # What the vocabulary does to the training data, from the counts (each distinct word
    # encoded once, in Rust): tokens, tokens per word, [UNK] tokens.
    n_tokens, n_unk = counter.encode_stats(tok._core, num_threads=num_threads)

    training = {
        "model": "wordpiece",
        "algorithm": algorithm,
        "vocab_size": vocab_size,
        "min_frequency": min_frequency,
        "special_tokens": specials,
        "distinct_words": distinct,
        "words": words,
        "characters": n_chars,
        "text_bytes": n_bytes,
        "replaced_bytes": replaced + feed.replaced,
        "tokens": n_tokens,
        "unk_tokens": n_unk,
        "sources": sources,
        "input": dict(input_files, bytes=n_bytes, replaced_bytes=replaced + feed.replaced),
        "seconds": {
            "counting": round(counted, 3),
            "merging": round(merged - started - counted, 3),
            "total": round(time.perf_counter() - started, 3),
        },
        "bytepair_version": __version__,
        # last: the one long entry of the record
        "merge_scores": [[tokens[a], tokens[b], n / (na * nb), n, na, nb] for a, b, n, na, nb in merge_rows],
    }
    tok._training = training
    return tok


def train_wordpiece_from_iterator(
    texts: Iterable[str],
    *,
    vocab_size: int,
    algorithm: str = "score",
    min_frequency: int = 2,
    special_tokens: Sequence[str] = BERT_SPECIAL_TOKENS,
    unk_token: str = "[UNK]",
    continuing_subword_prefix: str = "##",
    max_input_chars_per_word: int = 100,
    clean_text: bool = True,
    handle_chinese_chars: bool = True,
    strip_accents: bool | None = None,
    lowercase: bool = True,
    split_unknown_characters: bool = False,
    num_threads: int | None = None,
    progress: bool | None = None,
    _continuation_order: list[str] | None = None,
) -> WordPieceTokenizer:
    """Trains a WordPiece tokenizer on an iterable of ``str`` documents (see the module docstring
    for the two algorithms). ``vocab_size`` counts everything (special tokens, characters,
    ``##`` characters, merges); the characters are always all kept, even past ``vocab_size``.
    ``split_unknown_characters`` is the tokenizer's option (see :class:`WordPieceTokenizer`): it
    changes encoding only (and so the record's count of unknown tokens), not the vocabulary."""
    if isinstance(texts, (str, bytes)):
        raise TypeError("train_wordpiece_from_iterator() takes an iterable of texts, not one str")
    def feed_all(feed: Feed) -> None:
        for text in texts:
            feed.text(text)

    return _train(
        feed_all,
        vocab_size=vocab_size, algorithm=algorithm, min_frequency=min_frequency, special_tokens=special_tokens,
        unk_token=unk_token, continuing_subword_prefix=continuing_subword_prefix,
        max_input_chars_per_word=max_input_chars_per_word, clean_text=clean_text,
        handle_chinese_chars=handle_chinese_chars, strip_accents=strip_accents, lowercase=lowercase,
        split_unknown_characters=split_unknown_characters,
        num_threads=num_threads, progress=progress, total_bytes=None, sources=[{"name": "texts"}],
        input_files={},
        _continuation_order=_continuation_order,
    )


def train_wordpiece(
    sources: str | os.PathLike[str] | Source | Iterable[str | os.PathLike[str]] | Iterable[Source],
    *,
    vocab_size: int,
    algorithm: str = "score",
    min_frequency: int = 2,
    special_tokens: Sequence[str] = BERT_SPECIAL_TOKENS,
    unk_token: str = "[UNK]",
    continuing_subword_prefix: str = "##",
    max_input_chars_per_word: int = 100,
    clean_text: bool = True,
    handle_chinese_chars: bool = True,
    strip_accents: bool | None = None,
    lowercase: bool = True,
    split_unknown_characters: bool = False,
    errors: str = "strict",
    num_threads: int | None = None,
    progress: bool | None = None,
) -> WordPieceTokenizer:
    """Trains a WordPiece tokenizer on files (paths, globs, directories, ``.jsonl``, ``.gz``,
    ``.zst``: see :class:`bytepair.Source`) or on :class:`Source` objects, all counted together
    (no mixing weights). Other options as :func:`train_wordpiece_from_iterator`."""
    if errors not in ("strict", "replace"):
        raise BytepairError(f'errors must be "strict" or "replace", got {errors!r}')
    feed_all, total, info, paths = sources_feed(sources, errors)
    return _train(
        feed_all,
        vocab_size=vocab_size, algorithm=algorithm, min_frequency=min_frequency, special_tokens=special_tokens,
        unk_token=unk_token, continuing_subword_prefix=continuing_subword_prefix,
        max_input_chars_per_word=max_input_chars_per_word, clean_text=clean_text,
        handle_chinese_chars=handle_chinese_chars, strip_accents=strip_accents, lowercase=lowercase,
        split_unknown_characters=split_unknown_characters,
        num_threads=num_threads, progress=progress, total_bytes=total, sources=info,
        input_files={"files": [os.path.basename(p) for p in paths]},
    )
