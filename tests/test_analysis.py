"""The numbers behind stats, sweep, compare and the report: checked against values computed by
hand on small inputs and against encoding with the truncated tokenizers themselves."""

from __future__ import annotations

import math
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bytepair
from bytepair.analysis import (
    Corpus,
    TokenStats,
    alpha_table,
    byte_stats,
    compare,
    counts_at,
    decompose,
    gini,
    nested_merges,
    sweep,
    token_stats,
    tokens_at_every_size,
    word_spans,
    zipf_fit,
)
from bytepair.analysis.compare import measure
from bytepair.analysis.merges import merge_parts, merge_tree, truncate
from bytepair.analysis.nested import merge_counts
from bytepair.errors import BytepairError, CorpusError, VocabError

SAMPLE = (Path(bytepair.__file__).parent / "data" / "tinyshakespeare.txt").read_text(encoding="utf-8")
TEXT = SAMPLE[:40_000] + "Über naïve café, with 日本語 too: the theme of the thesis is there.\n" * 3


@pytest.fixture(scope="module")
def tok() -> bytepair.Tokenizer:
    return bytepair.train_from_iterator([TEXT], vocab_size=400)


# ----------------------------------------------------------------- bytes and pairs


def test_byte_and_pair_counts_by_hand() -> None:
    bs = byte_stats(["abab", "ba"])
    assert bs.bytes[ord("a")] == 3 and bs.bytes[ord("b")] == 3 and bs.total_bytes == 6
    # pairs within documents only: ab, ba, ab | ba  -> ab 2, ba 2 (none across the documents)
    assert bs.pairs[ord("a") * 256 + ord("b")] == 2
    assert bs.pairs[ord("b") * 256 + ord("a")] == 2
    assert bs.pairs.sum() == 4
    assert bs.top_bytes(1) == [(ord("a"), 3, 0.5)]  # tie: the lower byte first
    assert bs.top_pairs(2) == [((ord("a"), ord("b")), 2, 0.5), ((ord("b"), ord("a")), 2, 0.5)]
    assert bs.documents == 2


def test_byte_stats_counts_utf8_bytes() -> None:
    bs = byte_stats(["é"])
    assert bs.bytes[0xC3] == 1 and bs.bytes[0xA9] == 1 and bs.pairs[0xC3 * 256 + 0xA9] == 1


def test_empty_corpus_is_an_error() -> None:
    with pytest.raises(CorpusError, match="no documents"):
        byte_stats([])
    with pytest.raises(CorpusError, match="empty"):
        byte_stats(["", ""])


# ----------------------------------------------------------------- tokens and Zipf


def test_zipf_fit_of_exact_power_law() -> None:
    counts = np.array([0, 300, 1200, 400, 600], dtype=np.int64)  # 1200 / rank, ranks 1..4, in any order
    slope, intercept = zipf_fit(counts)
    assert slope == pytest.approx(-1.0)
    assert intercept == pytest.approx(math.log10(1200))


def test_zipf_needs_two_tokens() -> None:
    with pytest.raises(CorpusError):
        zipf_fit(np.array([5, 0, 0], dtype=np.int64))


def test_top_share_and_rare_share_by_hand() -> None:
    counts = np.array([6, 3, 1, 0], dtype=np.int64)
    dfs = np.array([3, 2, 1, 0], dtype=np.int64)
    ts = TokenStats(counts, dfs, documents=3, text_bytes=10, vocab_size=4, rare_threshold=0.5)
    assert ts.top_share(1) == pytest.approx(0.6)
    assert ts.top_share(2) == pytest.approx(0.9)
    # seen in fewer than 0.5 * 3 = 1.5 documents: ids 2 and 3 -> half the vocabulary
    assert ts.rare_share() == pytest.approx(0.5)
    assert ts.top(2) == [(0, 6, 0.6), (1, 3, 0.3)]


def test_token_stats_match_counting_each_encoding(tok: bytepair.Tokenizer) -> None:
    docs = ["the theme", "the fox, the dog", "日本語 café", "the"]
    ts = token_stats(tok, docs)
    expected: Counter[int] = Counter()
    df: Counter[int] = Counter()
    for d in docs:
        ids = tok.encode(d)
        expected.update(ids)
        df.update(set(ids))
    assert {i: int(c) for i, c in enumerate(ts.counts) if c} == dict(expected)
    assert {i: int(c) for i, c in enumerate(ts.document_counts) if c} == dict(df)
    assert ts.documents == 4 and ts.text_bytes == sum(len(d.encode()) for d in docs)
    # 0.01% of 4 documents is 0.0004: "rare" means never seen here
    assert ts.rare_share() == pytest.approx((tok.vocab_size - len(df)) / tok.vocab_size)


# ----------------------------------------------------------------- nested sizes


def test_trained_sizes_are_nested() -> None:
    """What the sweep relies on: training to V gives the first V-256 merges of a larger run."""
    big = bytepair.train_from_iterator([TEXT], vocab_size=420)
    for v in (256, 300, 377):
        small = bytepair.train_from_iterator([TEXT], vocab_size=v)
        assert small.merges == big.merges[: v - 256]
        assert truncate(big, v).merges == small.merges


@pytest.mark.parametrize("size", [256, 257, 300, 350, 399, 400])
def test_counts_at_every_size_match_encoding_with_the_truncated_tokenizer(tok: bytepair.Tokenizer, size: int) -> None:
    tree = nested_merges(tok)
    ids = tok.encode(TEXT)
    counts = np.bincount(ids, minlength=len(tree)).astype(np.int64)
    direct = truncate(tok, size).encode(TEXT)
    assert decompose(ids, tree, size) == direct
    assert tokens_at_every_size(tree, counts)[size] == len(direct)
    assert counts_at(tree, counts, size).tolist() == np.bincount(direct, minlength=size).tolist()


@given(st.text(alphabet="the fox日本語é \n,.", max_size=60))
def test_decompose_is_encoding_at_a_smaller_size(tok: bytepair.Tokenizer, text: str) -> None:
    tree = nested_merges(tok)
    for size in (256, 290, 333):
        assert decompose(tok.encode(text), tree, size) == truncate(tok, size).encode(text)


def test_merge_counts_by_hand() -> None:
    text = "the then the there\nthe other"
    t = bytepair.train_from_iterator([text], vocab_size=259)
    assert t.merges == [(b"t", b"h"), (b"th", b"e"), (b" ", b"the")]
    tree = merge_tree(t)
    counts = np.bincount(t.encode(text), minlength=len(tree)).astype(np.int64)
    # 'th' in: the, then, the, there, the, other = 6; 'the' likewise 6; ' the' in ' then', ' the', ' there' = 3
    assert merge_counts(tree, counts)[256:].tolist() == [6, 6, 3]


def test_merge_tree_of_a_rank_file_gives_the_tokens_parts() -> None:
    enc = bytepair.get_encoding("gpt2")
    the = enc.encode(" the")[0]
    parts = merge_parts(enc, the)
    assert parts is not None
    assert enc.token_bytes(parts[0]) + enc.token_bytes(parts[1]) == b" the"
    assert max(parts) < the


def test_truncate_rejects_sizes_outside_the_vocabulary(tok: bytepair.Tokenizer) -> None:
    with pytest.raises(VocabError, match="outside 256..400"):
        truncate(tok, 401)
    with pytest.raises(VocabError):
        truncate(tok, 255)


# ----------------------------------------------------------------- words and compare


def test_word_spans_by_hand() -> None:
    assert word_spans("Hello, world!").tolist() == [[0, 6], [7, 13]]
    # Han / Hiragana: one word per character (3 bytes each); "GPT-4" is one word
    assert word_spans("GPT-4は東京").tolist() == [[0, 5], [5, 8], [8, 11], [11, 14]]
    assert word_spans("  ").tolist() == []


@given(st.text(alphabet="ab 東は\u3000\n\tกx\U00020000\U0001f642", max_size=30))
def test_count_words_in_chunks_matches_word_spans(text: str) -> None:
    from unittest import mock

    from bytepair.analysis import words

    with mock.patch.object(words, "_CHUNK", 3):
        assert words.count_words(text) == len(word_spans(text))


def test_measure_with_a_bytes_only_tokenizer_by_hand() -> None:
    t = bytepair.train_from_iterator(["x"], vocab_size=256)  # no merges: one token per byte
    # "ab c": 4 tokens, 2 words, "ab" is cut by a boundary, "c" is not
    assert measure(t, "ab c") == (4, 2, 1, 4)
    # two Han characters, 3 bytes each: both cut
    assert measure(t, "東京") == (6, 2, 2, 6)


def test_measure_a_word_with_its_leading_space_is_not_split(tok: bytepair.Tokenizer) -> None:
    ids = tok.encode(" the")
    assert len(ids) == 1  # learned from TEXT
    assert measure(tok, "a the") [2] == 0


def test_gini_by_hand() -> None:
    assert gini([1, 1, 1]) == 0
    assert gini([0, 0, 1]) == pytest.approx(4 / (2 * 9 * (1 / 3)))
    assert gini([1, 3]) == pytest.approx(2 * 2 / (2 * 4 * 2))


def test_compare_parity_and_gini_by_hand(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("ab", encoding="utf-8")
    (tmp_path / "b.txt").write_text("abcd", encoding="utf-8")
    t = bytepair.train_from_iterator(["x"], vocab_size=256)
    result = compare([("bytes", t)], [Corpus("a", [str(tmp_path / "a.txt")]), Corpus("b", [str(tmp_path / "b.txt")])], parallel=True)
    rows = {r.corpus: r for r in result.rows}
    assert rows["a"].parity == 1.0 and rows["b"].parity == 2.0
    assert rows["b"].fertility == 4.0 and rows["b"].bytes_per_token == 1.0 and rows["b"].split_share == 1.0
    assert result.gini["bytes"] == pytest.approx(gini([2, 4]))
    with pytest.raises(BytepairError, match="reference 'zz'"):
        compare([("bytes", t)], [Corpus("a", [str(tmp_path / "a.txt")])], parallel=True, reference="zz")


def test_compare_rejects_a_corpus_without_text(tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_text(" \n", encoding="utf-8")
    t = bytepair.train_from_iterator(["x"], vocab_size=256)
    with pytest.raises(CorpusError, match="corpus sw has no text"):
        compare([("bytes", t)], [Corpus("sw", [str(tmp_path / "empty.txt")])])


# ----------------------------------------------------------------- sweep


@pytest.fixture
def text_file(tmp_path: Path) -> Path:
    p = tmp_path / "corpus.txt"
    p.write_text(TEXT, encoding="utf-8")
    return p


def test_sweep_rows_match_the_truncated_tokenizers(text_file: Path) -> None:
    words = ["the", "fox", "theme", "dog", "zebra"]
    result = sweep([Corpus("c", [str(text_file)])], [300, 260, 400], d_model=10, words=words)
    assert result.sizes == [260, 300, 400]
    n_words = len(TEXT.split()) + 2 * 3  # "日本語" (3 times) is 3 words, not 1
    rows = result.rows()
    base = len(truncate(result.tokenizer, 260).encode(TEXT))
    for row in rows:
        small = truncate(result.tokenizer, row["vocab_size"])
        n = len(small.encode(TEXT))
        assert row["bytes_per_token"] == pytest.approx(len(TEXT.encode()) / n)
        assert row["tokens_per_word"] == pytest.approx(n / n_words)
        single = sum(len(small.encode(" " + w)) == 1 for w in words)
        assert row["coverage"] == pytest.approx(single / len(words))
        bare = sum(len(small.encode(w)) == 1 for w in words)
        assert row["coverage_bare"] == pytest.approx(bare / len(words))
        assert row["embedding_params"] == row["vocab_size"] * 10
        assert row["attention_cost"] == pytest.approx((n / base) ** 2)


def test_sweep_bad_sizes(text_file: Path) -> None:
    c = [Corpus("c", [str(text_file)])]
    with pytest.raises(BytepairError, match="below 256"):
        sweep(c, [100, 300])



def test_sweep_reports_sizes_past_the_corpus_at_the_size_reached(text_file: Path) -> None:
    c = [Corpus("c", [str(text_file)])]
    with pytest.warns(bytepair.BytepairWarning, match=r"training stopped at ([\d,]+) tokens.*1,000,000 reported at \1"):
        result = sweep(c, [300, 1_000_000])
    reached = len(result.tokenizer.merges) + 256
    assert result.sizes == [300, reached] and result.unreached == [1_000_000]
    assert result.rows()[-1]["tokens"] == len(result.tokenizer.encode(TEXT))


def test_sweep_of_an_empty_corpus(tmp_path: Path) -> None:
    (tmp_path / "e.txt").write_text("", encoding="utf-8")
    with pytest.raises(CorpusError, match="the corpus is empty"):
        sweep([Corpus("e", [str(tmp_path / "e.txt")])], [256])


def test_alpha_table_shares_by_hand(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("the fox " * 400, encoding="utf-8")  # 3,200 bytes
    (tmp_path / "small.txt").write_text("le chat " * 100, encoding="utf-8")  # 800 bytes
    cs = [Corpus("big", [str(tmp_path / "big.txt")]), Corpus("small", [str(tmp_path / "small.txt")])]
    rows = alpha_table(cs, [1.0, 0.5], vocab_size=270)
    got = {(r.alpha, r.source): r.share for r in rows}
    assert got[(1.0, "big")] == pytest.approx(0.8)
    assert got[(0.5, "small")] == pytest.approx(800**0.5 / (800**0.5 + 3200**0.5))  # = 1/3
    for r in rows:
        assert r.tokens_per_word > 0


@given(st.lists(st.text(alphabet="ab \nçé日本\r", min_size=1, max_size=40), min_size=1, max_size=6))
def test_token_counts_from_training_equal_encoding_the_corpus(docs: list[str]) -> None:
    """train() keeps the merge loop's token counts; sweep uses them instead of encoding the
    corpus again. They must be exactly what encoding the text with the result gives."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bytepair.BytepairWarning)  # small corpora stop early
        tok = bytepair.train_from_iterator(docs, vocab_size=300, min_frequency=1)
    assert tok._training_counts is not None
    encoded = token_stats(tok, docs, document_frequencies=False)
    assert tok._training_counts == encoded.counts[: len(tok._training_counts)].tolist()
    assert sum(tok._training_counts) == encoded.counts.sum()


def test_sweep_from_training_counts_equals_sweep_from_encoding(tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(TEXT, encoding="utf-8")
    b.write_text("Ein Beispiel, ein zweites Beispiel.\r\nΈνα παράδειγμα.\n" * 7, encoding="utf-8")
    corpora = [Corpus("a", [str(a)]), Corpus("b", [str(b)])]
    fast = sweep(corpora, [260, 300, 350], words=["the", "ein"])
    assert fast.tokenizer._training_counts is not None
    slow = sweep(corpora, [260, 300, 350], words=["the", "ein"], tokenizer=fast.tokenizer)
    assert fast.rows() == slow.rows()
