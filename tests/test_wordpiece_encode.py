"""WordPiece encoding internals that the plain properties of test_wordpiece.py may not reach:
the word cache (kept per thread across calls, for one model at a time, emptied when full), its
three storage paths (words under 16 bytes, 16..64 bytes, longer ones uncached; words of up to
three pieces stored inline, longer ones in an arena), the ASCII fast path of normalization (a
table derived per option set), batches split into chunks across threads, and long words.
Everything is checked against `tokenizers` or the naive oracle, not against our own output."""

from __future__ import annotations

import itertools
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import models, normalizers, pre_tokenizers

from bytepair import WordPieceTokenizer
from bytepair.formats.hf_wordpiece import wordpiece_from_hf
from tests import oracle
from tests.test_wordpiece import SENTENCES, bert_options, hf_json, hf_trained, texts, with_options

LETTERS = "abcdefghij"
# Single letters and their continuations only: a word of n letters is exactly n pieces, so
# every word of more than three letters goes through the cache's arena.
LETTER_TOKENS = ["[UNK]"] + list(LETTERS) + ["##" + c for c in LETTERS]


def letter_pieces(word: str) -> list[str]:
    return [word[0]] + ["##" + c for c in word[1:]]


def hf_letters(max_chars: int = 100) -> HFTokenizer:
    hf = HFTokenizer(models.WordPiece({t: i for i, t in enumerate(LETTER_TOKENS)}, unk_token="[UNK]", max_input_chars_per_word=max_chars))
    hf.normalizer = normalizers.BertNormalizer()
    hf.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return hf


@settings(max_examples=40, deadline=None)
@given(text=texts, options=bert_options)
def test_first_and_cached_passes_match_hf(text: str, options: dict[str, Any]) -> None:
    """The first pass fills the cache, the second reads it: both equal HF, offsets included."""
    hf = with_options(hf_trained(), options)
    tok = wordpiece_from_hf(hf_json(hf), path="test")
    want = hf.encode(text, add_special_tokens=False)
    for _ in range(2):
        ids, offsets = tok.encode_with_offsets(text)
        assert ids == want.ids
        assert offsets == want.offsets
        assert tok.encode(text) == want.ids


def test_models_taking_turns_on_one_thread() -> None:
    """Two tokenizers (different vocabularies and options) alternating on the same thread: each
    call must see its own model's pieces, never the other's cached ones."""
    hf_a = hf_trained()
    hf_b = with_options(hf_trained(lowercase=False, vocab_size=300), {"lowercase": False, "strip_accents": False})
    a = wordpiece_from_hf(hf_json(hf_a), path="a")
    b = wordpiece_from_hf(hf_json(hf_b), path="b")
    for _ in range(3):
        for s in SENTENCES:
            assert a.encode(s) == hf_a.encode(s, add_special_tokens=False).ids
            assert b.encode(s) == hf_b.encode(s, add_special_tokens=False).ids
        assert a.encode_batch(SENTENCES, num_threads=2) == [e.ids for e in hf_a.encode_batch(SENTENCES, add_special_tokens=False)]
        assert b.encode_batch(SENTENCES, num_threads=2) == [e.ids for e in hf_b.encode_batch(SENTENCES, add_special_tokens=False)]


@settings(max_examples=60, deadline=None)
@given(
    words=st.lists(st.text(LETTERS, min_size=1, max_size=90), min_size=1, max_size=12),
    max_chars=st.sampled_from([5, 15, 16, 64, 65, 100]),
)
def test_every_cache_path_with_offsets(words: list[str], max_chars: int) -> None:
    """Words around the cache's limits (15/16 and 64/65 bytes; 3/4 pieces), twice over, with
    offsets, against HF and the oracle."""
    tok = WordPieceTokenizer(LETTER_TOKENS, max_input_chars_per_word=max_chars)
    hf = hf_letters(max_chars)
    text = " ".join(w.upper() if i % 2 else w for i, w in enumerate(words))
    want = hf.encode(text, add_special_tokens=False)
    naive = [t for w in words for t in oracle.wordpiece_word(w, LETTER_TOKENS, "[UNK]", "##", max_chars)]
    for _ in range(2):
        assert tok.tokenize(text) == naive
        assert tok.encode_with_offsets(text) == (want.ids, want.offsets)


def test_cache_emptied_when_full_keeps_ids_right() -> None:
    """More distinct words than a thread's cache holds (2**18), all of them in the arena, in one
    text and then again: the cache is emptied on the way, and every word still gets its pieces."""
    rng = random.Random(10)
    words = list({"".join(rng.choices(LETTERS, k=rng.randint(4, 20))) for _ in range(300_000)})
    assert len(words) > 1 << 18
    tok = WordPieceTokenizer(LETTER_TOKENS)
    ids = {t: i for i, t in enumerate(LETTER_TOKENS)}
    want = [ids[p] for w in words for p in letter_pieces(w)]
    text = " ".join(words)
    assert tok.encode(text) == want
    assert tok.encode(text) == want
    half = len(words) // 2
    assert tok.encode_batch([" ".join(words[half:]), " ".join(words[:half])], num_threads=2) == [
        [ids[p] for w in words[half:] for p in letter_pieces(w)],
        [ids[p] for w in words[:half] for p in letter_pieces(w)],
    ]


def test_every_ascii_character_under_every_option_set() -> None:
    """The ASCII table is derived per option set: every ASCII character alone, inside a word and
    beside punctuation, for all 16 option sets, ids and offsets as HF gives them."""
    hf_base = hf_trained()
    chars = [chr(c) for c in range(128)]
    text = " ".join(chars) + " " + " ".join(f"Ab{c}cD" for c in chars) + " " + "".join(chars) + " x"
    for clean, chinese, strip, lower in itertools.product([False, True], repeat=4):
        options = {"clean_text": clean, "handle_chinese_chars": chinese, "strip_accents": strip, "lowercase": lower}
        hf = with_options(hf_base, options)
        tok = wordpiece_from_hf(hf_json(hf), path="test")
        want = hf.encode(text, add_special_tokens=False)
        assert tok.encode_with_offsets(text) == (want.ids, want.offsets), options


def test_large_batch_in_chunks_matches_hf() -> None:
    """A batch of over 256 KiB is cut into chunks across threads; the ids, in order, are HF's."""
    rng = random.Random(7)
    docs = [" ".join(rng.choices(SENTENCES, k=rng.randint(1, 6))) for _ in range(2500)]
    assert sum(len(d.encode()) for d in docs) > 2 * (1 << 18)
    hf = hf_trained()
    tok = wordpiece_from_hf(hf_json(hf), path="test")
    want = [e.ids for e in hf.encode_batch(docs, add_special_tokens=False)]
    for threads in (1, 2, 3):
        assert tok.encode_batch(docs, num_threads=threads) == want
    ids, offsets = tok.encode_batch_numpy(docs, num_threads=2)
    assert [ids[offsets[i] : offsets[i + 1]].tolist() for i in range(len(docs))] == want


def test_long_word_where_every_step_walks_far() -> None:
    """The walk's worst case: from every position the trie follows the word far (a long token
    almost matches) and then falls back to one character. 1,500 characters against the (cubic)
    oracle; 20,000 against the same split, which the oracle's gives by its definition."""
    tokens = ["[UNK]", "a", "##a", "##" + "a" * 30 + "b", "a" * 25 + "c"]
    tok = WordPieceTokenizer(tokens, max_input_chars_per_word=1_000_000)
    small = "a" * 1_500
    want = oracle.wordpiece_word(small, tokens, "[UNK]", "##", 1_000_000)
    assert want == ["a"] + ["##a"] * 1_499
    assert tok.tokenize(small) == want
    word = "a" * 20_000
    assert tok.tokenize(word + " " + word) == (["a"] + ["##a"] * 19_999) * 2


@settings(max_examples=60, deadline=None)
@given(words=st.lists(st.text(alphabet="abcx", min_size=1, max_size=9), min_size=1, max_size=8))
def test_empty_continuation_prefix_matches_hf(words: list[str]) -> None:
    """With ``continuing_subword_prefix=""`` a word goes on with plain tokens, as in HF."""
    vocab = ["[UNK]", "a", "b", "ab", "c", "abc", "bc", "ca"]
    hf = HFTokenizer(models.WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="[UNK]", continuing_subword_prefix=""))
    hf.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok = wordpiece_from_hf(hf_json(hf), path="test")
    text = " ".join(words)
    want = hf.encode(text, add_special_tokens=False)
    for _ in range(2):  # the first pass fills the word cache, the second reads it
        assert tok.encode(text) == want.ids
        assert tok.encode_with_offsets(text) == (want.ids, want.offsets)
