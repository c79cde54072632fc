"""Superword training (SuperBPE's second stage): ``train(..., base=stage1, pattern="superword")``.

The oracle here is written out in full, for clarity: split with the superword regex (Python's
``regex`` module, not the Rust engine), encode each piece with the base's merges in rank order,
then the textbook merge loop (most frequent pair, ties to the greatest (bytes, bytes)).
"""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import _core
from bytepair.errors import BytepairError, PatternError
from bytepair.patterns import PATTERNS, superword_pattern

from . import oracle

WORDS = "the of and to a in is it that was for on are as with his they at be this from I have or by one had".split()
TAILS = [".", ",", "!", "?", "", ";", " 42"]


def corpus(n: int, seed: int) -> list[str]:
    """Sentences of common words, where some word sequences repeat (so superwords pay)."""
    rng = random.Random(seed)
    phrases = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 4))) for _ in range(12)]
    docs = []
    for _ in range(n):
        parts = []
        for _ in range(rng.randint(1, 4)):
            words = [rng.choice(phrases) if rng.random() < 0.6 else rng.choice(WORDS) for _ in range(rng.randint(1, 5))]
            sentence = " ".join(words)
            parts.append(sentence[0].upper() + sentence[1:] + rng.choice(TAILS))
        docs.append(" ".join(parts) + ("\n" if rng.random() < 0.3 else ""))
    return docs


# ---------------------------------------------------------------------------- the oracle


pieces = oracle.pieces
merge_all = oracle.merge


def bpe(piece: bytes, merges: list[tuple[bytes, bytes]]) -> list[bytes]:
    """Plain BPE over the bytes of one piece: the merge of lowest rank first, until none."""
    rank = {pair: i for i, pair in enumerate(merges)}
    word = [bytes([b]) for b in piece]
    while True:
        found = [p for p in zip(word, word[1:]) if p in rank]
        if not found:
            return word
        word = merge_all(word, min(found, key=rank.__getitem__))


def stage2(docs: list[str], base: bytepair.Tokenizer, pattern: str, n_merges: int) -> list[tuple[bytes, bytes]]:
    counts = Counter(p.encode() for d in docs for p in pieces(d, pattern))
    words = [(bpe(piece, base.merges), c) for piece, c in counts.items()]
    learned: list[tuple[bytes, bytes]] = []
    while len(learned) < n_merges:
        stats: Counter[tuple[bytes, bytes]] = Counter()
        for w, c in words:
            for pair in zip(w, w[1:]):
                stats[pair] += c
        if not stats:
            break
        best = max(stats, key=lambda p: (stats[p], p))
        learned.append(best)
        words = [(merge_all(w, best), c) for w, c in words]
    return learned


def naive_encode(tok: bytepair.Tokenizer, text: str) -> list[int]:
    ids = {b: i for i, b in tok.vocab.items()}
    return [ids[t] for p in pieces(text, tok.pattern) for t in bpe(p.encode(), tok.merges)]


@pytest.fixture(scope="module")
def stages() -> tuple[bytepair.Tokenizer, bytepair.Tokenizer]:
    docs = corpus(300, 1)
    one = bytepair.train_from_iterator(docs, vocab_size=256 + 60 + 1, special_tokens=["<|endoftext|>"], min_frequency=1)
    two = bytepair.train_from_iterator(docs, vocab_size=one.vocab_size + 80, base=one, pattern="superword", min_frequency=1)
    return one, two


# ---------------------------------------------------------------------------- the pattern


def test_superword_pattern_pieces() -> None:
    p = PATTERNS["superword"]
    assert p == superword_pattern(4)
    assert _core.split_pieces("by the way, it is. Next one here now yes", p) == [
        "by the way", ",", " it is", ".", " Next one here now", " yes"
    ]
    assert _core.split_pieces("a b c d e", superword_pattern(2)) == ["a b", " c d", " e"]
    assert _core.split_pieces("end.Next  two\nlines", p) == ["end", ".", "Next", " ", " two", "\n", "lines"]
    assert _core.split_pieces("我们是。你好！好", p) == ["我们是", "。", "你好", "！", "好"]
    with pytest.raises(PatternError):
        superword_pattern(0)


@given(st.lists(st.sampled_from(list("ab .!?,'\n\t1é。") + ["cd", " ef"]), max_size=40).map("".join), st.integers(1, 5))
@settings(max_examples=150, deadline=None)
def test_superword_pattern_same_in_rust_and_python_regex(text: str, n: int) -> None:
    p = superword_pattern(n)
    got = _core.split_pieces(text, p)
    assert got == pieces(text, p)
    for piece in got:  # sentence-bounded and at most n words
        assert not any(c in piece for c in ".!?。\n") or not regex.search(r"\p{L}", piece)
        assert len(regex.findall(r"\p{L}+", piece)) <= n


# ---------------------------------------------------------------------------- training


def test_stage2_matches_oracle(stages: tuple[bytepair.Tokenizer, bytepair.Tokenizer]) -> None:
    one, two = stages
    docs = corpus(300, 1)
    expected = stage2(docs, one, PATTERNS["superword"], 80)
    n = len(one.merges)
    assert two.merges[:n] == one.merges
    assert two.merges[n:] == expected
    # Every stage-1 id stays, the special token too; new ids come after the largest one.
    assert {i: two.vocab[i] for i in one.vocab} == one.vocab
    assert two.special_tokens == one.special_tokens
    first = max([*one.vocab, *one.special_tokens.values()]) + 1
    assert [two.vocab[first + i] for i in range(len(expected))] == [a + b for a, b in expected]
    assert two.pattern == PATTERNS["superword"] and two.pattern_name == "superword"
    assert two.training["base"]["pattern"] == "gpt4"
    assert any(b" " in t.strip(b" ") for t in two.vocab.values())  # superwords were learned


@pytest.mark.parametrize("n", [1, 2, 3])
def test_max_words_per_token_matches_oracle(n: int) -> None:
    docs = corpus(120, 2)
    one = bytepair.train_from_iterator(docs, vocab_size=256 + 30, min_frequency=1)
    two = bytepair.train_from_iterator(docs, vocab_size=one.vocab_size + 40, base=one, max_words_per_token=n, min_frequency=1)
    assert two.pattern == superword_pattern(n)
    assert two.merges[len(one.merges) :] == stage2(docs, one, superword_pattern(n), 40)
    assert all(len(regex.findall(rb"[a-zA-Z]+", t)) <= n for t in two.vocab.values())


def test_max_words_per_token_needs_the_superword_pattern() -> None:
    one = bytepair.train_from_iterator(["a b"], vocab_size=256)
    with pytest.raises(BytepairError, match="bounds the pieces of pattern='superword'"):
        bytepair.train_from_iterator(["a b"], vocab_size=300, base=one, pattern="gpt2", max_words_per_token=2)
    with pytest.raises(BytepairError, match="max_words_per_token"):
        bytepair.train_from_iterator(["a b"], vocab_size=300, base=one, pattern="superword", max_words_per_token=0)


def test_encoding_equals_naive_reference(stages: tuple[bytepair.Tokenizer, bytepair.Tokenizer]) -> None:
    _, two = stages
    held_out = corpus(40, 99)
    long_words = " ".join(["the " * 3 + "x" * 60] * 4) + ". " + "of and " * 40
    for text in held_out + [long_words, "", "  the  of\n\nand 12345 é!"]:
        assert two.encode(text) == naive_encode(two, text), text
        assert two.decode(two.encode(text)) == text


@given(st.lists(st.sampled_from(WORDS + [" ", ".", ",", "  ", "\n", "é", "1"]), max_size=60).map("".join))
@settings(max_examples=100, deadline=None)
def test_encoding_equals_naive_reference_on_any_text(text: str) -> None:
    two = _STAGES[1]
    assert two.encode(text) == naive_encode(two, text)


_docs = corpus(200, 3)
_one = bytepair.train_from_iterator(_docs, vocab_size=256 + 40, min_frequency=1)
_STAGES = (_one, bytepair.train_from_iterator(_docs, vocab_size=_one.vocab_size + 60, base=_one, pattern="superword"))


def test_stage2_from_files_equals_from_texts(tmp_path, stages: tuple[bytepair.Tokenizer, bytepair.Tokenizer]) -> None:
    one, two = stages
    path = tmp_path / "c.txt"
    path.write_text("<|endoftext|>".join(corpus(300, 1)))
    from_file = bytepair.train(path, vocab_size=two.vocab_size, base=one, pattern="superword", min_frequency=1)
    assert from_file.merges == two.merges


# ---------------------------------------------------------------------------- bounded counting


@given(
    st.lists(st.sampled_from(["the", " of", "\n", "\r\n", ".", " ", "  ", "7", "é", "<s>", "A", "\n\n", "x."]), max_size=80).map(
        "".join
    ),
    st.integers(8, 64),
    st.integers(1, 16),
)
@settings(max_examples=150, deadline=None)
def test_newline_cuts_change_no_count(tmp_path_factory, text: str, block: int, unit: int) -> None:
    # Files read in small blocks and texts cut into small units, after a newline followed by a
    # letter or digit: the counts of the whole text, special tokens included.
    p = superword_pattern(3)
    expected = Counter(
        x.encode() for part in regex.split("<s>", text) for x in pieces(part, p)
    )
    path = tmp_path_factory.mktemp("nl") / "t.txt"
    path.write_bytes(text.encode())
    counter = _core.PieceCounter(p, ["<s>"], unit_bytes=unit, block_bytes=block, newline_cuts=True)
    counter.add_file(str(path))
    assert dict(counter.take_counts()) == dict(expected)
    counter = _core.PieceCounter(p, ["<s>"], unit_bytes=unit, newline_cuts=True)
    counter.add_texts([text])
    assert dict(counter.take_counts()) == dict(expected)



def simulate_cap(batches: list[list[str]], pattern: str, cap: int) -> Counter[bytes]:
    """The documented prune policy, after each batch: when more than cap pieces are held, drop
    every piece counted k times or fewer, k the (cap+1)-th largest count."""
    counts: Counter[bytes] = Counter()
    for batch in batches:
        counts.update(p.encode() for d in batch for p in pieces(d, pattern))
        if len(counts) > cap:
            k = sorted(counts.values(), reverse=True)[cap]
            counts = Counter({p: c for p, c in counts.items() if c > k})
    return counts


@pytest.mark.parametrize("cap", [5, 40, 200])
def test_max_pieces_policy_is_exact_and_deterministic(cap: int) -> None:
    docs = corpus(200, 4)
    batches = [docs[i : i + 37] for i in range(0, len(docs), 37)]
    p = PATTERNS["superword"]
    expected = simulate_cap(batches, p, cap)
    for unit in (16, 1 << 20):  # many shards or one: the same result
        counter = _core.PieceCounter(p, [], unit_bytes=unit, max_pieces=cap)
        for b in batches:
            counter.add_texts(b)
        prunes = counter.pruned[0]
        assert dict(counter.take_counts()) == dict(expected)
        assert prunes >= 1


def test_capped_table_stays_bounded_as_the_input_grows(tmp_path) -> None:
    """Memory of a capped count follows the cap and the block size, not the input: the most
    table entries ever held (``peak_entries``, all workers' shards, taken where the table is
    largest: just before a prune) stay at most ``max_pieces`` plus the pieces of one block (each
    byte starts at most one piece; a file is counted one block plus the uncut end of the previous
    at a time), for a file 8 times as long. Without the cap they follow the input."""
    rng = random.Random(7)
    vocab = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 7))) for _ in range(5000)]

    def text(n_bytes: int) -> str:
        lines, size = [], 0
        while size < n_bytes:  # lines start with a letter: the file can be cut after each
            line = " ".join(rng.choice(vocab) for _ in range(rng.randint(4, 12))) + ".\n"
            lines.append(line)
            size += len(line)
        return "".join(lines)

    p, cap, block = PATTERNS["superword"], 200, 4096
    peaks = []
    for n in (64 << 10, 512 << 10):
        path = tmp_path / f"t{n}.txt"
        path.write_text(text(n))
        capped = _core.PieceCounter(p, [], block_bytes=block, max_pieces=cap, newline_cuts=True)
        capped.add_file(str(path))
        assert capped.pruned[0] >= n // (8 * block)  # pruned over and over
        peaks.append(capped.peak_entries)
        unbounded = _core.PieceCounter(p, [], block_bytes=block, newline_cuts=True)
        unbounded.add_file(str(path))
        unbounded_peak = unbounded.peak_entries
        distinct = len(unbounded.take_counts())
        assert unbounded_peak >= distinct
    assert all(cap < peak <= cap + 2 * block for peak in peaks), peaks
    assert distinct > 2 * (cap + 2 * block)  # the bound is not met by the text alone


def test_train_with_max_pieces(stages: tuple[bytepair.Tokenizer, bytepair.Tokenizer], tmp_path) -> None:
    one, _ = stages
    docs = corpus(300, 1)
    kept = simulate_cap([docs], PATTERNS["superword"], 50)
    capped = bytepair.train_from_iterator(docs, vocab_size=one.vocab_size + 40, base=one, pattern="superword", max_pieces=50)
    again = bytepair.train_from_iterator(docs, vocab_size=one.vocab_size + 40, base=one, pattern="superword", max_pieces=50)
    assert capped.merges == again.merges
    from_counts = bytepair.train_from_counts(kept, vocab_size=one.vocab_size + 40, base=one, pattern="superword")
    assert capped.merges == from_counts.merges
    info = capped.training
    assert info["max_pieces"] == 50 and info["distinct_pieces"] <= 50
    assert info["pruned"]["prunes"] == 1 and info["pruned"]["pieces"] > 0
    # Files: pruned after each block of the file (one block here).
    path = tmp_path / "c.txt"
    path.write_text("".join(docs))
    file_tok = bytepair.train(path, vocab_size=one.vocab_size + 40, base=one, pattern="superword", max_pieces=50)
    assert file_tok.training["distinct_pieces"] <= 50
    with pytest.raises(BytepairError, match="max_pieces"):
        bytepair.train_from_iterator(docs, vocab_size=300, max_pieces=0)


def test_dask_counts_superword_pieces(tmp_path, stages: tuple[bytepair.Tokenizer, bytepair.Tokenizer]) -> None:
    distributed = pytest.importorskip("distributed")
    one, two = stages
    path = tmp_path / "c.txt"
    path.write_text("<|endoftext|>".join(corpus(300, 1)))
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None) as client:
        tok = bytepair.train(
            path, vocab_size=two.vocab_size, base=one, pattern="superword", min_frequency=1, backend="dask", client=client
        )
        capped = bytepair.train(
            path, vocab_size=two.vocab_size, base=one, pattern="superword", backend="dask", client=client, max_pieces=50
        )
    assert tok.merges == two.merges
    local = bytepair.train(path, vocab_size=two.vocab_size, base=one, pattern="superword", max_pieces=50)
    assert capped.merges == local.merges  # one task, one block: the same prune


# ---------------------------------------------------------------------------- exports


def test_bytepair_json_round_trip(stages: tuple[bytepair.Tokenizer, bytepair.Tokenizer], tmp_path) -> None:
    _, two = stages
    two.save(tmp_path / "t.json")
    back = bytepair.Tokenizer.from_file(tmp_path / "t.json")
    text = " ".join(corpus(20, 5))
    assert back.pattern == two.pattern and back.encode(text) == two.encode(text)


def test_hf_tokenizer_json_round_trip(stages: tuple[bytepair.Tokenizer, bytepair.Tokenizer], tmp_path) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    from bytepair.formats.hf import load_hf, to_hf_dict

    _, two = stages
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(to_hf_dict(two)))
    theirs = tokenizers.Tokenizer.from_file(str(path))
    for text in corpus(40, 6) + ["of and " * 30, "  the\n\nof. A"]:
        assert theirs.encode(text).ids == two.encode(text), text
    assert load_hf(path).encode("by the way. It is") == two.encode("by the way. It is")


def test_tiktoken_round_trip(stages: tuple[bytepair.Tokenizer, bytepair.Tokenizer]) -> None:
    pytest.importorskip("tiktoken")
    from bytepair.formats.tiktoken import to_tiktoken

    _, two = stages
    enc = to_tiktoken(two)
    for text in corpus(40, 7) + ["of and " * 30]:
        assert enc.encode(text) == two.encode(text), text
