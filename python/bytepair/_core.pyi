"""Type stub for the Rust extension ``bytepair._core`` (private: use the ``bytepair`` API)."""

from collections.abc import Callable
from typing import Any, final

from typing_extensions import Self

__all__ = ["Encoder", "PieceCounter", "file_cuts", "preset_patterns", "split_pieces", "train_counters", "train_from_counts"]
__all__ += ["WordCounter", "WordPiece", "bert_pre_tokenize"]  # WordPiece
__all__ += ["HfModel", "HfVocab"]  # the fast tokenizer.json reader
__all__ += ["jsonl_texts", "jsonl_block", "TextBlock"]  # JSON lines for corpus encoding
__all__ += ["BatchEncoder"]  # corpus encoding with reused buffers
__all__ += ["SentencePiece", "MAX_NBEST"]  # SentencePiece .model files
__all__ += ["compare_block"]  # bytepair.analysis.compare
__all__ += ["padded_rows"]  # the rows of a model-inputs call (bytepair._api)

MAX_NBEST: int

def preset_patterns() -> list[tuple[str, str]]: ...
def split_pieces(text: str, pattern: str | None) -> list[str]: ...
def train_from_counts(
    counts: list[tuple[bytes, int]],
    *,
    merges: int,
    min_frequency: int,
    max_token_length: int | None = None,
    base: tuple[Encoder, int] | None = None,
    tie_break: str = "lexicographic",
) -> list[tuple[int, int]]: ...
def file_cuts(path: str, pattern: str | None, special_tokens: list[str], targets: list[int]) -> list[int]: ...
def train_counters(
    counters: list[PieceCounter],
    weights: list[int],
    *,
    denominator: int,
    merges: int,
    min_frequency: int,
    max_token_length: int | None = None,
    base: tuple[Encoder, int] | None = None,
    progress: Callable[[int], object] | None = None,
    tie_break: str = "lexicographic",
) -> tuple[list[tuple[int, int]], int, list[tuple[int, int]], list[int]]: ...

@final
class PieceCounter:
    def __new__(
        cls,
        pattern: str | None,
        special_tokens: list[str],
        *,
        unit_bytes: int | None = None,
        block_bytes: int | None = None,
        max_pieces: int | None = None,
        newline_cuts: bool = False,
    ) -> Self: ...
    def add_texts(self, texts: list[str]) -> None: ...
    def add_file(
        self, path: str, *, replace_errors: bool = False, progress: Callable[[int], object] | None = None
    ) -> None: ...
    def add_bytes(
        self, data: bytes, *, last: bool, source: str, offset: int, replace_errors: bool = False
    ) -> int: ...
    def end_document(self) -> None: ...
    @property
    def words(self) -> int: ...
    @property
    def bytes_counted(self) -> int: ...
    @property
    def documents(self) -> int: ...
    @property
    def replaced_bytes(self) -> int: ...
    @property
    def pruned(self) -> tuple[int, int, int, int]: ...
    @property
    def peak_entries(self) -> int: ...
    def take_counts(self) -> list[tuple[bytes, int]]: ...
    def add_file_range(self, path: str, start: int, end: int, *, replace_errors: bool = False) -> None: ...
    def take_packed(self) -> bytes: ...
    def add_packed(self, packed: bytes) -> None: ...
    def train(
        self,
        *,
        merges: int,
        min_frequency: int,
        progress: Callable[[int], object] | None = None,
        max_token_length: int | None = None,
        base: tuple[Encoder, int] | None = None,
        tie_break: str = "lexicographic",
    ) -> tuple[list[tuple[int, int]], int]: ...

@final
class Encoder:
    def __new__(
        cls,
        vocab: list[tuple[int, bytes]],
        merges: list[tuple[int, int]] | None,
        pattern: str | None,
        special_tokens: list[tuple[str, int]],
    ) -> Self: ...
    @staticmethod
    def from_tiktoken(data: bytes, pattern: str | None, special_tokens: list[tuple[str, int]]) -> Encoder | None: ...
    def vocab(self) -> list[tuple[int, bytes]]: ...
    def encode_ordinary(self, text: str, *, num_threads: int | None = 1, chunk_bytes: int | None = None) -> list[int]: ...
    def encode(
        self, text: str, allowed: list[int], *, num_threads: int | None = 1, chunk_bytes: int | None = None
    ) -> list[int]: ...
    def encode_batch(
        self, texts: list[str], allowed: list[int], *, num_threads: int | None = None, chunk_bytes: int | None = None
    ) -> list[list[int]]: ...
    def count(
        self,
        text: str,
        allowed: list[int],
        *,
        limit: int | None = None,
        num_threads: int | None = 1,
        chunk_bytes: int | None = None,
    ) -> int: ...
    def count_batch(
        self,
        texts: list[str],
        allowed: list[int],
        *,
        limit: int | None = None,
        num_threads: int | None = None,
        chunk_bytes: int | None = None,
    ) -> list[int]: ...
    def clear_cache(self) -> None: ...
    def segment_cache(self, max_bytes: int | None = None) -> int: ...
    def encode_plain(self, text: str) -> list[int] | None: ...
    def count_plain(self, text: str) -> int | None: ...
    def find_special(self, text: str, among: list[int]) -> tuple[int, int] | None: ...
    def find_special_batch(self, texts: list[str], among: list[int]) -> tuple[int, int, int] | None: ...
    def decode_bytes(self, ids: list[int]) -> bytes: ...
    def token_bytes(self, id: int) -> bytes: ...
    def safe_prefix(self, text: str) -> int: ...
    def lookup(self, bytes: bytes) -> int | None: ...
    @property
    def size(self) -> int: ...
    @property
    def pattern(self) -> str | None: ...
    # the merges a rank model implies, and the model as tokenizer.json's vocab and merges
    def rank_merges(self) -> list[tuple[int, int, int]]: ...
    def hf_model_json(self, merges: list[tuple[int, int]] | None) -> tuple[str, str]: ...
    # Array outputs: ids as little-endian bytes of `width` (2 or 4) per id, offsets as u64.
    def encode_flat(
        self,
        texts: list[str],
        allowed: list[int],
        *,
        width: int,
        separator: tuple[int, bool] | None = None,
        num_threads: int | None = None,
        chunk_bytes: int | None = None,
        edges: list[tuple[bool, bool]] | None = None,
    ) -> tuple[memoryview, bytearray]: ...
    def encode_files(
        self,
        paths: list[str],
        allowed: list[int],
        *,
        width: int,
        separator: tuple[int, bool] | None = None,
        replace_errors: bool = False,
        num_threads: int | None = None,
    ) -> tuple[memoryview, bytearray, int]: ...
    def encode_file_ranges(
        self,
        ranges: list[tuple[str, int, int]],
        allowed: list[int],
        *,
        width: int,
        separator: tuple[int, bool] | None = None,
        replace_errors: bool = False,
        num_threads: int | None = None,
        edges: list[tuple[bool, bool]] | None = None,
    ) -> tuple[memoryview, bytearray, int]: ...
    # corpus encoding: the vocabulary as one buffer, and the largest ordinary id
    def vocab_table(self) -> tuple[bytes, int | None]: ...

# ---- compare (bytepair.analysis.compare) ----

def compare_block(
    text: str, encoders: list[Encoder], classes: bytes
) -> tuple[int, list[tuple[int, int, int]]]: ...

# ---- model inputs (bytepair._api) ----

def padded_rows(
    flat: bytes,
    a: list[int],
    b: list[int] | None,
    layout: list[tuple[int, list[int], int]],
    pad_id: int | None,
    target: int,
    left: bool,
    types: bool,
    mask: bool,
    special: bool,
) -> tuple[list[list[int]], list[list[int]] | None, list[list[int]] | None, list[list[int]] | None]: ...

# ---- WordPiece ----

@final
class WordPiece:
    def __new__(
        cls,
        vocab: list[tuple[int, str]],
        unk_token: str,
        continuing_subword_prefix: str,
        max_input_chars_per_word: int,
        clean_text: bool,
        handle_chinese_chars: bool,
        strip_accents: bool,
        lowercase: bool,
        special_tokens: list[tuple[str, int]],
        *,
        split_unknown_characters: bool = False,
    ) -> Self: ...
    def segment_cache(self, max_bytes: int | None = None) -> int: ...
    def encode(self, text: str) -> list[int]: ...
    def encode_with_offsets(self, text: str) -> tuple[list[int], list[tuple[int, int]]]: ...
    def encode_batch(
        self, texts: list[str], *, with_offsets: bool = False, num_threads: int | None = None
    ) -> list[tuple[list[int], list[tuple[int, int]]]]: ...
    def encode_batch_ids(self, texts: list[str], *, num_threads: int | None = None) -> list[list[int]]: ...
    def encode_batch_flat(
        self, texts: list[str], *, width: int, num_threads: int | None = None
    ) -> tuple[bytearray, bytearray]: ...

@final
class SentencePiece:
    @staticmethod
    def from_file(path: str) -> SentencePiece: ...
    @staticmethod
    def from_bytes(data: bytes, name: str) -> SentencePiece: ...
    def __len__(self) -> int: ...
    def encode(self, text: str, *, sample: tuple[float, int, int] | None = None) -> list[int]: ...
    def encode_call(
        self,
        text: str,
        *,
        add_bos: bool = False,
        add_eos: bool = False,
        enable_sampling: bool = False,
        alpha: float = 0.1,
        nbest_size: int = -1,
        seed: int | None = None,
    ) -> list[int]: ...
    def encode_entry(self) -> Callable[..., list[int]]: ...
    @property
    def model_type(self) -> str: ...
    @property
    def bos_id(self) -> int: ...
    @property
    def eos_id(self) -> int: ...
    def encode_with_offsets(self, text: str) -> tuple[list[int], list[tuple[int, int]]]: ...
    def encode_batch(
        self, texts: list[str], *, num_threads: int | None = None, sample: tuple[float, int, int] | None = None
    ) -> list[list[int]]: ...
    def encode_flat(
        self,
        texts: list[str],
        *,
        width: int,
        num_threads: int | None = None,
        sample: tuple[float, int, int] | None = None,
    ) -> tuple[memoryview, bytearray]: ...
    def encode_pieces(self, text: str) -> list[str]: ...
    def normalize(self, text: str) -> str: ...
    def decode(self, ids: list[int]) -> str: ...
    def piece_to_id(self, piece: str) -> int | None: ...
    def id_to_piece(self, id: int) -> str | None: ...
    def pieces(self) -> list[tuple[str, float, str]]: ...
    def spec(self) -> dict[str, Any]: ...
    def to_bytes(self) -> bytes: ...

def bert_pre_tokenize(
    text: str, *, clean_text: bool = True, handle_chinese_chars: bool = True, strip_accents: bool = True, lowercase: bool = True
) -> list[tuple[str, tuple[int, int]]]: ...

@final
class WordCounter:
    def __new__(
        cls,
        *,
        clean_text: bool,
        handle_chinese_chars: bool,
        strip_accents: bool,
        lowercase: bool,
        split_on: list[str],
        unit_bytes: int | None = None,
        block_bytes: int | None = None,
    ) -> Self: ...
    @staticmethod
    def sentencepiece(
        *,
        charsmap: bytes,
        add_dummy_prefix: bool,
        remove_extra_whitespaces: bool,
        escape_whitespaces: bool,
        treat_whitespace_as_suffix: bool,
        user_defined_symbols: list[str],
        unit_bytes: int | None = None,
        block_bytes: int | None = None,
    ) -> WordCounter: ...
    def char_counts(self) -> list[tuple[str, int]]: ...
    def train_sentencepiece(
        self,
        *,
        model_type: str,
        pieces: int,
        character_coverage: float,
        max_piece_length: int,
        seed_size: int,
        shrinking_factor: float,
        sub_iterations: int,
        treat_whitespace_as_suffix: bool,
        classes: dict[str, int],
        alone: list[str],
        num_threads: int | None = None,
        progress: Callable[[int], object] | None = None,
    ) -> tuple[list[tuple[str, float]], dict[str, Any]]: ...
    def add_texts(self, texts: list[str], *, num_threads: int | None = None) -> None: ...
    def add_file(
        self,
        path: str,
        *,
        replace_errors: bool = False,
        num_threads: int | None = None,
        progress: Callable[[int], object] | None = None,
    ) -> None: ...
    def add_bytes(
        self,
        data: bytes,
        *,
        last: bool,
        source: str,
        offset: int,
        replace_errors: bool = False,
        num_threads: int | None = None,
    ) -> int: ...
    def absorb(self, other: WordCounter, multiplier: int, denominator: int) -> None: ...
    def word_counts(self) -> list[tuple[str, int]]: ...
    def text_stats(self) -> tuple[int, int, int]: ...
    def sizes(self) -> tuple[int, int]: ...
    def encode_stats(self, encoder: WordPiece, *, num_threads: int | None = None) -> tuple[int, int]: ...
    def train(
        self,
        *,
        vocab_size: int,
        min_frequency: int,
        special_tokens: list[str],
        continuing_subword_prefix: str,
        algorithm: str,
        continuation_order: list[str] | None = None,
        progress: Callable[[int], object] | None = None,
    ) -> tuple[list[str], list[tuple[int, int, int, int, int]]]: ...

# ---- Hugging Face tokenizer.json, the fast reader ----

@final
class HfModel:
    @staticmethod
    def parse(data: bytes) -> HfModel | None: ...
    @property
    def vocab_span(self) -> tuple[int, int]: ...
    @property
    def merges_span(self) -> tuple[int, int]: ...
    def resolve(self, added: list[tuple[str, int]]) -> HfVocab | None: ...

@final
class HfVocab:
    @property
    def size(self) -> int: ...
    @property
    def multi_byte(self) -> int: ...
    @property
    def merge_count(self) -> int: ...
    def items(self) -> list[tuple[int, bytes]]: ...
    def merge_ids(self) -> list[tuple[int, int]]: ...
    def rank_encoder(self, pattern: str | None, special_tokens: list[tuple[str, int]]) -> Encoder | None: ...

# ---- JSON lines for corpus encoding ----

def jsonl_texts(data: bytes, start: int, field: str) -> tuple[list[str], int, int]: ...
def jsonl_block(data: bytes, start: int, field: str) -> tuple[TextBlock, int, int]: ...
@final
class TextBlock:
    def __len__(self) -> int: ...
    def ends(self) -> bytes: ...
    def text(self, i: int) -> str: ...

# ---- Corpus encoding with reused buffers ----

@final
class BatchEncoder:
    def __new__(cls, encoder: Encoder) -> Self: ...
    # Ids written into `out` (grown when too small), as `Encoder.encode_flat` / `encode_file_ranges`
    # return them; returns (number of ids, offsets as u64 little-endian[, replacements]).
    def encode_texts(
        self,
        texts: list[str],
        allowed: list[int],
        *,
        out: bytearray,
        width: int,
        separator: tuple[int, bool] | None = None,
        num_threads: int | None = None,
        chunk_bytes: int | None = None,
        edges: list[tuple[bool, bool]] | None = None,
    ) -> tuple[int, bytearray]: ...
    def encode_blocks(
        self,
        blocks: list[tuple[TextBlock, int, int]],
        allowed: list[int],
        *,
        out: bytearray,
        width: int,
        separator: tuple[int, bool] | None = None,
        num_threads: int | None = None,
        chunk_bytes: int | None = None,
    ) -> tuple[int, bytearray]: ...
    def encode_file_ranges(
        self,
        ranges: list[tuple[str, int, int]],
        allowed: list[int],
        *,
        out: bytearray,
        width: int,
        separator: tuple[int, bool] | None = None,
        replace_errors: bool = False,
        num_threads: int | None = None,
        chunk_bytes: int | None = None,
        edges: list[tuple[bool, bool]] | None = None,
    ) -> tuple[int, bytearray, int]: ...
