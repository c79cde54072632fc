"""minbpe's tokenizers (``BasicTokenizer``, ``RegexTokenizer``, ``GPT4Tokenizer``) on bytepair's core.

Same method names, attributes and files as Andrej Karpathy's minbpe exercise, so code written
for it runs unchanged after ``from bytepair.minbpe import ...``; training and encoding run in
bytepair's Rust core.

- ``train(text, vocab_size, verbose=False)``: ``vocab_size - 256`` merges. Ties between pairs
  of equal count are broken as bytepair does (the greater pair of byte strings), where minbpe
  takes the pair seen first; merges differ only at such ties.
- ``encode(text, allowed_special="none_raise")``: ``"none_raise"`` raises if special-token text
  is found, ``"none"`` encodes it as ordinary text, ``"all"`` or a set of texts encodes those
  as their ids. ``decode(ids)`` replaces invalid UTF-8.
- ``merges`` (``{(left id, right id): id}``), ``vocab`` (``{id: bytes}``), ``special_tokens``,
  ``inverse_special_tokens``, ``pattern``; ``register_special_tokens({text: id})``.
- ``save(file_prefix)`` writes ``.model`` and ``.vocab``; ``load(model_file)`` reads ``.model``.
- ``GPT4Tokenizer()``: cl100k_base with the same ids as tiktoken; as in minbpe its ``vocab``
  and ``merges`` are over the permuted bytes (``byte_shuffle``), and it cannot be trained.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from typing import AbstractSet, Literal

from bytepair.formats import minbpe as _files
from bytepair.patterns import PATTERNS
from bytepair.tokenizer import Tokenizer as _Fast

__all__ = ["GPT2_SPLIT_PATTERN", "GPT4_SPLIT_PATTERN", "BasicTokenizer", "GPT4Tokenizer", "RegexTokenizer", "Tokenizer"]

GPT2_SPLIT_PATTERN = PATTERNS["gpt2"]
GPT4_SPLIT_PATTERN = PATTERNS["gpt4"]

AllowedSpecial = Literal["all", "none", "none_raise"] | AbstractSet[str]


class _MinbpeBase:
    """What the three tokenizers share (minbpe's ``Tokenizer`` base class)."""

    def __init__(self, pattern: str | None = None) -> None:
        self.pattern: str = pattern or ""
        self.merges: dict[tuple[int, int], int] = {}
        self.special_tokens: dict[str, int] = {}
        self.inverse_special_tokens: dict[int, str] = {}
        self.vocab: dict[int, bytes] = {i: bytes([i]) for i in range(256)}
        self._tok: _Fast | None = None
        self._built_for: tuple[object, ...] = ()

    # -- the fast tokenizer behind the minbpe tables, rebuilt when the tables change

    def _state(self) -> tuple[object, ...]:
        return (self.pattern, len(self.merges), tuple(self.special_tokens.items()), id(self.merges))

    def _core_tokenizer(self) -> _Fast:
        if self._tok is None or self._built_for != self._state():
            order = sorted(self.merges.items(), key=lambda kv: kv[1])
            vocab, merges = _files.tables([pair for pair, _ in order])
            self._tok = _Fast._from_merges(
                vocab, merges, [pair for pair, _ in order], dict(self.special_tokens), self.pattern or None
            )
            self._built_for = self._state()
        return self._tok

    def _adopt(self, tok: _Fast) -> None:
        ids = {b: i for i, b in tok._vocab.items()}
        self.merges = {(ids[a], ids[b]): ids[a + b] for a, b in tok._merge_list()}
        self.vocab = dict(tok._vocab)
        self.special_tokens = tok.special_tokens
        self.inverse_special_tokens = {i: t for t, i in self.special_tokens.items()}
        self._tok = tok
        self._built_for = self._state()

    # -- minbpe's API

    def train(self, text: str, vocab_size: int, verbose: bool = False) -> None:
        """Learns ``vocab_size - 256`` merges from ``text``."""
        from bytepair.training import train_from_iterator

        if vocab_size < 256:
            raise ValueError(f"vocab_size must be at least 256, got {vocab_size}")
        tok = train_from_iterator([text], vocab_size=vocab_size, pattern=self.pattern or None, min_frequency=1)
        self._adopt(tok)
        if verbose:
            for n, ((a, b), i) in enumerate(sorted(self.merges.items(), key=lambda kv: kv[1])):
                print(f"merge {n + 1}/{vocab_size - 256}: ({a}, {b}) -> {i} ({self.vocab[i]!r})")

    def register_special_tokens(self, special_tokens: dict[str, int]) -> None:
        """Sets the special tokens, ``{text: id}``."""
        self.special_tokens = dict(special_tokens)
        self.inverse_special_tokens = {i: t for t, i in self.special_tokens.items()}

    def encode(self, text: str, allowed_special: AllowedSpecial = "none_raise") -> list[int]:
        tok = self._core_tokenizer()
        if allowed_special == "none":
            return tok.encode_ordinary(text)
        if allowed_special == "none_raise":
            return tok.encode(text)
        if allowed_special == "all":
            return tok.encode(text, allowed_special="all")
        if isinstance(allowed_special, (set, frozenset)):
            return tok.encode(text, allowed_special=allowed_special, disallowed_special=())
        raise ValueError(f"allowed_special={allowed_special!r} not understood")

    def encode_ordinary(self, text: str) -> list[int]:
        return self._core_tokenizer().encode_ordinary(text)

    def decode(self, ids: Iterable[int]) -> str:
        return self._core_tokenizer().decode(ids, errors="replace")

    def save(self, file_prefix: str | os.PathLike[str]) -> None:
        """Writes ``<file_prefix>.model`` and ``<file_prefix>.vocab``."""
        _files.dump_minbpe(self._core_tokenizer(), file_prefix)

    def load(self, model_file: str | os.PathLike[str]) -> None:
        """Reads a ``.model`` file written by :meth:`save` (or by minbpe)."""
        if not os.fspath(model_file).endswith(".model"):
            raise ValueError(f"{os.fspath(model_file)}: minbpe model files end in .model")
        tok = _files.load_minbpe(model_file)
        self.pattern = tok.pattern or ""
        self._adopt(tok)


class BasicTokenizer(_MinbpeBase):
    """Byte-level BPE over the whole text, no splitting."""

    def __init__(self) -> None:
        super().__init__(None)


class RegexTokenizer(_MinbpeBase):
    """Byte-level BPE within the pieces of a split pattern (default: GPT-4's)."""

    def __init__(self, pattern: str | None = None) -> None:
        super().__init__(GPT4_SPLIT_PATTERN if pattern is None else pattern)


@functools.lru_cache(maxsize=1)
def _gpt4_tables() -> tuple[dict[int, int], dict[tuple[int, int], int], dict[int, bytes]]:
    """minbpe's tables for cl100k (made once per process): the byte permutation, the merges
    over cl100k ids (recovered from the ranks) and the vocabulary over the permuted bytes."""
    from bytepair.encodings import get_encoding

    enc = get_encoding("cl100k_base")
    shuffle = {i: enc.encode_single_token(bytes([i])) for i in range(256)}
    merges = {(a, b): t for a, b, t in enc._core.rank_merges()}
    vocab = {i: bytes([i]) for i in range(256)}
    for (a, b), t in sorted(merges.items(), key=lambda kv: kv[1]):
        vocab[t] = vocab[a] + vocab[b]
    return shuffle, merges, vocab


class GPT4Tokenizer(RegexTokenizer):
    """cl100k_base (GPT-4) through minbpe's interface: the same ids as tiktoken."""

    def __init__(self) -> None:
        from bytepair.encodings import get_encoding

        super().__init__(GPT4_SPLIT_PATTERN)
        enc = get_encoding("cl100k_base")
        shuffle, merges, vocab = _gpt4_tables()
        self.byte_shuffle: dict[int, int] = dict(shuffle)
        self.inverse_byte_shuffle: dict[int, int] = {v: k for k, v in self.byte_shuffle.items()}
        self.merges = dict(merges)
        self.vocab = dict(vocab)
        self._enc = enc
        self.register_special_tokens(dict(enc.special_tokens))

    def _core_tokenizer(self) -> _Fast:
        if set(self.special_tokens.items()) <= set(self._enc.special_tokens.items()):
            return self._enc
        return self._enc.with_special_tokens(self.special_tokens)

    def train(self, text: str, vocab_size: int, verbose: bool = False) -> None:
        raise NotImplementedError("GPT4Tokenizer is pretrained and cannot be trained")

    def save(self, file_prefix: str | os.PathLike[str]) -> None:
        raise NotImplementedError("GPT4Tokenizer is cl100k_base; save a trained tokenizer instead")

    def load(self, model_file: str | os.PathLike[str]) -> None:
        raise NotImplementedError("GPT4Tokenizer is cl100k_base and cannot be loaded from a file")

    def save_vocab(self, vocab_file: str | os.PathLike[str]) -> None:
        """Writes cl100k's tokens in minbpe's ``.vocab`` layout, bytes unpermuted."""
        from bytepair._atomic import write_atomic

        vocab = {i: bytes(self.inverse_byte_shuffle[x] for x in b) for i, b in self.vocab.items()}
        made = {t: pair for pair, t in self.merges.items()}
        lines = []
        for i, token in vocab.items():
            if i in made:
                a, b = made[i]
                lines.append(f"[{_files.render_token(vocab[a])}][{_files.render_token(vocab[b])}] -> [{_files.render_token(token)}] {i}")
            else:
                lines.append(f"[{_files.render_token(token)}] {i}")
        write_atomic(vocab_file, ("\n".join(lines) + "\n").encode("utf-8"))


# minbpe's module exposes its base class as ``Tokenizer``.
Tokenizer = _MinbpeBase
