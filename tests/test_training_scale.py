"""Training at scale: mixing, continued training, max_token_length, precomputed counts,
normalization, reserved slots; each compared with the textbook oracle (tests/oracle.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bytepair
from bytepair import BytepairError, Source, Tokenizer
from bytepair.patterns import resolve
from bytepair.training import mixing_multipliers

from . import oracle
from .strategies import PATTERNS, corpus_with_specials, text


def regex_of(pattern: str | None) -> str | None:
    return resolve(pattern)[1]


def nbytes(docs: list[str]) -> int:
    return sum(len(d.encode("utf-8")) for d in docs)


def oracle_tokens(text: str, tok: Tokenizer, pattern: str | None) -> list[bytes]:
    ranks = {pair: i for i, pair in enumerate(tok.merges)}
    return [t for p in oracle.pieces(text, regex_of(pattern)) for t in oracle.encode_piece(p.encode("utf-8"), ranks)]


docs_st = st.lists(text, min_size=1, max_size=5)


# ---------------------------------------------------------------------------- mixing


@given(
    sources=st.lists(docs_st, min_size=1, max_size=3),
    alpha=st.sampled_from([0.0, 0.3, 0.5, 0.77, 1.0]),
    pattern=st.sampled_from(PATTERNS),
    extra=st.integers(0, 60),
    min_frequency=st.integers(1, 3),
)
def test_mixing_matches_oracle(
    sources: list[list[str]], alpha: float, pattern: str | None, extra: int, min_frequency: int
) -> None:
    srcs = [Source(texts=docs, name=f"s{i}") for i, docs in enumerate(sources)]
    if not any(any(d) for d in sources):
        return
    tok = bytepair.train(srcs, vocab_size=256 + extra, pattern=pattern, alpha=alpha, min_frequency=min_frequency)
    per_source = [oracle.count_pieces(docs, regex_of(pattern), []) for docs in sources]
    mixed = oracle.mix(per_source, [nbytes(d) for d in sources], alpha)
    assert tok.merges == oracle.train_counts(dict(mixed), extra, min_frequency)
    report = tok.training["sources"]
    assert [s["name"] for s in report] == [f"s{i}" for i in range(len(sources))]
    for s, docs in zip(report, sources):
        assert s["bytes"] == nbytes(docs)
        # Compression is measured on each source's own text with the final tokenizer.
        assert s["tokens"] == sum(len(tok.encode_ordinary(d)) for d in docs)


def test_mixing_weights_follow_the_formula() -> None:
    sizes = [1000, 250, 10]
    for alpha in (0.0, 0.3, 0.5, 1.0):
        m = mixing_multipliers(sizes, alpha)
        weights = [x / 65536 for x in m]
        shares = [n * w for n, w in zip(sizes, weights)]
        want = [n**alpha / sum(k**alpha for k in sizes) for n in sizes]
        got = [s / sum(shares) for s in shares]
        assert got == pytest.approx(want, rel=1e-4)
        assert min(m) == 65536  # the largest source keeps weight 1
    assert mixing_multipliers([5, 0, 7], 0.0)[1] == 65536


def test_alpha_zero_weighs_sources_equally() -> None:
    big = ["the cat sat on the mat. "] * 200
    small = ["qzqz xyxy "] * 2
    raw = bytepair.train([Source(texts=big, name="big"), Source(texts=small, name="small")], vocab_size=270, alpha=1)
    equal = bytepair.train([Source(texts=big, name="big"), Source(texts=small, name="small")], vocab_size=270, alpha=0)
    assert (b"q", b"z") not in raw.merges[:6]
    assert equal.merges[:2] == [(b"x", b"y"), (b"q", b"z")]
    assert [s["weight"] for s in equal.training["sources"]] == [1.0, 240.0]  # 4800 bytes / 20 bytes
    table = bytepair.sources_table(equal)
    assert "big" in table and "small" in table and "bytes/token" in table


def test_alpha_out_of_range_and_duplicate_names() -> None:
    with pytest.raises(ValueError, match=r"alpha must be a number in \[0, 1\]"):
        bytepair.train(Source(texts=["ab"]), vocab_size=300, alpha=1.5)
    with pytest.raises(ValueError, match="alpha"):
        bytepair.train(Source(texts=["ab"]), vocab_size=300, alpha=-0.1)
    with pytest.raises(ValueError, match="two sources are named 'x'"):
        bytepair.train([Source(texts=["a"], name="x"), Source(texts=["b"], name="x")], vocab_size=300)


# ---------------------------------------------------------------------------- continued training


@given(
    first=docs_st,
    second=docs_st,
    pattern=st.sampled_from(PATTERNS),
    k=st.integers(0, 30),
    extra=st.integers(0, 40),
    specials=st.lists(st.sampled_from(["<s>", "</s>", "<|endoftext|>"]), unique=True, max_size=2),
    reserved=st.integers(0, 2),
)
def test_continued_training_matches_oracle(
    first: list[str], second: list[str], pattern: str | None, k: int, extra: int, specials: list[str], reserved: int
) -> None:
    if not any(first) or not any(second):
        return
    base = bytepair.train_from_iterator(
        first,
        vocab_size=256 + k + len(specials) + reserved,
        pattern=pattern,
        special_tokens=specials,
        reserved_special_tokens=reserved,
        min_frequency=1,
    )
    tok = bytepair.train_from_iterator(second, vocab_size=base.vocab_size + extra, base=base, min_frequency=1)
    n_base = len(base.merges)
    counts = oracle.count_pieces(second, regex_of(pattern), list(base.special_tokens))
    expected = oracle.train_counts(dict(counts), extra, 1, base_merges=base.merges)
    # Every existing id and merge stays; new merges follow, with ids after every existing id.
    assert tok.merges[:n_base] == base.merges
    assert tok.merges[n_base:] == expected
    assert {i: tok.vocab[i] for i in base.vocab} == base.vocab
    assert tok.special_tokens == base.special_tokens
    first_new = max(list(base.vocab) + list(base.special_tokens.values())) + 1
    assert sorted(set(tok.vocab) - set(base.vocab)) == list(range(first_new, first_new + len(expected)))
    assert tok.vocab_size == base.vocab_size + len(expected)
    for doc in second:
        ids = tok.encode_ordinary(doc)
        assert [tok.token_bytes(i) for i in ids] == oracle_tokens(doc, tok, pattern)
        assert tok.decode(ids) == doc


@given(docs=docs_st, pattern=st.sampled_from(PATTERNS), k=st.integers(0, 40))
def test_continuing_from_a_prefix_gives_the_rest(docs: list[str], pattern: str | None, k: int) -> None:
    if not any(docs):
        return
    full = bytepair.train_from_iterator(docs, vocab_size=256 + 60, pattern=pattern, min_frequency=1)
    head = Tokenizer(
        {i: b for i, b in full.vocab.items() if i < 256 + k}, full.merges[:k], pattern=pattern
    )
    rest = bytepair.train_from_iterator(docs, vocab_size=256 + 60, base=head, min_frequency=1)
    assert rest.merges == full.merges
    assert rest.vocab == full.vocab


@given(docs=docs_st, extra=st.integers(0, 40))
def test_continuing_a_base_with_other_byte_ids(docs: list[str], extra: int) -> None:
    # Single bytes need not be ids 0..255 (Hugging Face's byte-level vocabularies are not),
    # and ids may have gaps: new merges still follow every existing id.
    if not any(docs):
        return
    vocab = {i: bytes([255 - i]) for i in range(256)}
    base = Tokenizer(vocab, [], special_tokens={"<s>": 300})
    tok = bytepair.train_from_iterator(docs, vocab_size=257 + extra, base=base, min_frequency=1)
    counts = oracle.count_pieces(docs, regex_of("gpt4"), ["<s>"])
    expected = oracle.train_counts(dict(counts), extra, 1)
    assert tok.merges == expected
    assert sorted(set(tok.vocab) - set(vocab)) == list(range(301, 301 + len(expected)))
    for doc in docs:
        assert [tok.token_bytes(i) for i in tok.encode_ordinary(doc)] == oracle_tokens(doc, tok, "gpt4")


def test_continued_training_errors() -> None:
    base = bytepair.train_from_iterator(["hello world"] * 5, vocab_size=270, pattern="gpt2")
    with pytest.raises(ValueError, match="smaller than the base tokenizer's vocab size"):
        bytepair.train_from_iterator(["x"], vocab_size=260, base=base)
    # Another pattern is allowed (SuperBPE's second stage; tests/test_superword.py): the result
    # splits with it, and the base's merges and ids stay.
    other = bytepair.train_from_iterator(["hello world"] * 5, vocab_size=300, base=base, pattern="gpt4")
    assert other.pattern_name == "gpt4" and other.merges[: len(base.merges)] == base.merges
    assert other.training["base"]["pattern"] == "gpt2"
    with pytest.raises(ValueError, match="normalization"):
        bytepair.train_from_iterator(["x"], vocab_size=300, base=base, normalization="nfc")
    # A rank encoding is a valid base too (merges recovered from the ranks):
    # tests/test_tiktoken_interop.py::test_training_continues_from_a_rank_encoding.
    same = bytepair.train_from_iterator(["hello world"] * 5, vocab_size=300, base=base, pattern="gpt2")
    assert same.merges[: len(base.merges)] == base.merges


# ---------------------------------------------------------------------------- max_token_length


@given(
    corpus=corpus_with_specials(),
    pattern=st.sampled_from(PATTERNS),
    extra=st.integers(0, 60),
    n=st.integers(1, 6),
)
def test_max_token_length_matches_oracle(
    corpus: tuple[list[str], list[str]], pattern: str | None, extra: int, n: int
) -> None:
    docs, specials = corpus
    if not any(docs):
        return
    tok = bytepair.train_from_iterator(
        docs,
        vocab_size=256 + len(specials) + extra,
        pattern=pattern,
        special_tokens=specials,
        min_frequency=1,
        max_token_length=n,
    )
    counts = oracle.count_pieces(docs, regex_of(pattern), specials)
    assert tok.merges == oracle.train_counts(dict(counts), extra, 1, max_token_length=n)
    assert all(len(a + b) <= n for a, b in tok.merges)


def test_max_token_length_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_token_length must be an int >= 1"):
        bytepair.train_from_iterator(["ab"], vocab_size=300, max_token_length=0)


# ---------------------------------------------------------------------------- train_from_counts


@given(corpus=corpus_with_specials(), pattern=st.sampled_from(PATTERNS), extra=st.integers(0, 60))
def test_train_from_counts_equals_training_on_the_text(
    corpus: tuple[list[str], list[str]], pattern: str | None, extra: int
) -> None:
    docs, specials = corpus
    if not any(docs):
        return
    vocab_size = 256 + len(specials) + extra
    on_text = bytepair.train_from_iterator(docs, vocab_size=vocab_size, pattern=pattern, special_tokens=specials)
    counts = oracle.count_pieces(docs, regex_of(pattern), specials)
    as_bytes = bytepair.train_from_counts(dict(counts), vocab_size=vocab_size, pattern=pattern, special_tokens=specials)
    as_str = bytepair.train_from_counts(
        {p.decode("utf-8"): c for p, c in counts.items()}, vocab_size=vocab_size, pattern=pattern, special_tokens=specials
    )
    assert as_bytes.merges == on_text.merges == as_str.merges
    assert as_bytes.special_tokens == on_text.special_tokens


def test_train_from_counts_big_counts_and_bad_input() -> None:
    big = 2**63
    tok = bytepair.train_from_counts({"ab": big, "cd": big - 1, b"ef": 2**64 - 1}, vocab_size=259)
    assert tok.merges == [(b"e", b"f"), (b"a", b"b"), (b"c", b"d")]
    with pytest.raises(ValueError, match="counts must be in"):
        bytepair.train_from_counts({"ab": -1}, vocab_size=300)
    with pytest.raises(TypeError, match="pieces must be str or bytes"):
        bytepair.train_from_counts({1: 2}, vocab_size=300)  # type: ignore[dict-item]
    # the same piece as str and as bytes adds up
    tok = bytepair.train_from_counts([("ab", 1), (b"ab", 1)], vocab_size=300)
    assert tok.merges == [(b"a", b"b")]


def test_dask_entry_points_still_work() -> None:
    from bytepair import _core

    counter = _core.PieceCounter(regex_of("gpt4"), [])
    counter.add_texts(["hello hello world"])
    counts = counter.take_counts()
    assert _core.train_from_counts(counts, merges=3, min_frequency=2)[0] == (108, 111)  # "lo": ties go to the greatest bytes


# ---------------------------------------------------------------------------- normalization


@given(
    corpus=corpus_with_specials(),
    pattern=st.sampled_from(PATTERNS),
    norm=st.sampled_from(["nfc", "nfkc", "lowercase", "nfkc+lowercase", "nfd"]),
    extra=st.integers(0, 40),
    probe=text,
)
def test_normalization_matches_oracle(
    corpus: tuple[list[str], list[str]], pattern: str | None, norm: str, extra: int, probe: str
) -> None:
    docs, specials = corpus
    docs = [d + "\uff21\u0301\u212b\u03a3 \u1e9b\u0323" for d in docs or [""]]  # forms that normalize
    tok = bytepair.train_from_iterator(
        docs, vocab_size=256 + len(specials) + extra, pattern=pattern, special_tokens=specials,
        normalization=norm, min_frequency=1,
    )
    normalized = [oracle.normalize(d, norm, specials) for d in docs]
    assert tok.merges == oracle.train(normalized, 256 + len(specials) + extra, regex_of(pattern), specials, 1)
    assert tok.normalization == norm
    for d in docs + [probe]:
        assert tok.encode(d, allowed_special="all") == oracle.encode(
            oracle.normalize(d, norm, specials), tok.merges, regex_of(pattern), tok.special_tokens
        )
        assert list(tok.encode_iterable([d[:7], d[7:]], allowed_special="all")) == tok.encode(d, allowed_special="all")


def test_normalization_is_stored_and_checked(tmp_path: "os.PathLike[str]") -> None:
    tok = bytepair.train_from_iterator(["Ｈello ＨELLO"] * 3, vocab_size=270, normalization="NFKC+lowercase")
    assert tok.normalization == "nfkc+lowercase"
    assert tok.encode("HELLO") == tok.encode("hello") == tok.encode("ＨＥＬＬＯ")
    path = os.path.join(tmp_path, "t.json")
    tok.save(path)
    back = bytepair.load(path)
    assert back.normalization == "nfkc+lowercase"
    assert back.encode("ＨＥＬＬＯ") == tok.encode("hello")
    with pytest.raises(ValueError, match="unknown normalization step 'nfx'"):
        bytepair.train_from_iterator(["a"], vocab_size=300, normalization="nfx")


# ---------------------------------------------------------------------------- reserved slots and roles


def test_reserved_slots_and_with_special_tokens(tmp_path: "os.PathLike[str]") -> None:
    tok = bytepair.train_from_iterator(
        ["hello world"] * 10, vocab_size=265, special_tokens=["<|endoftext|>"], reserved_special_tokens=3
    )
    n = len(tok.merges)
    assert n == 5
    assert tok.vocab_size == 265
    assert tok.special_tokens == {
        "<|endoftext|>": 256 + n,
        "<|reserved_0|>": 257 + n,
        "<|reserved_1|>": 258 + n,
        "<|reserved_2|>": 259 + n,
    }
    assert tok.reserved_special_tokens == ["<|reserved_0|>", "<|reserved_1|>", "<|reserved_2|>"]
    chat = tok.with_special_tokens(["<|im_start|>", "<|im_end|>"], roles={"eos": "<|endoftext|>"})
    assert chat.special_tokens["<|im_start|>"] == 257 + n
    assert chat.special_tokens["<|im_end|>"] == 258 + n
    assert chat.reserved_special_tokens == ["<|reserved_2|>"]
    assert chat.vocab_size == tok.vocab_size
    assert chat.merges == tok.merges and chat.vocab == tok.vocab
    assert chat.special_tokens_map == {"eos": "<|endoftext|>"}
    more = chat.with_special_tokens({"<pad>": 259 + n, "<tool>": 1000}, roles={"pad": "<pad>"})
    assert more.reserved_special_tokens == []
    assert more.special_tokens["<tool>"] == 1000
    last = more.with_special_tokens(["<x>"])
    assert last.special_tokens["<x>"] == 1001  # no slot left: after the largest id
    with pytest.raises(ValueError, match="ordinary token"):
        tok.with_special_tokens({"<bad>": 65})
    with pytest.raises(ValueError, match="already the special token"):
        tok.with_special_tokens({"<bad>": 256 + n})
    with pytest.raises(ValueError, match="unknown special-token role"):
        tok.with_special_tokens(roles={"boss": "<|endoftext|>"})
    with pytest.raises(ValueError, match="not a special token"):
        tok.with_special_tokens(roles={"bos": "<s>"})
    assert chat.encode("<|im_start|>hi", allowed_special="all")[0] == 257 + n
    path = os.path.join(tmp_path, "chat.json")
    more.save(path)
    back = bytepair.load(path)
    assert back.special_tokens == more.special_tokens
    assert back.special_tokens_map == {"eos": "<|endoftext|>", "pad": "<pad>"}
    assert back.reserved_special_tokens == []
    path2 = os.path.join(tmp_path, "tok.json")
    tok.save(path2)
    assert bytepair.load(path2).reserved_special_tokens == tok.reserved_special_tokens


def test_reserved_slot_minimum_vocab_size() -> None:
    with pytest.raises(ValueError, match="minimum is 261"):
        bytepair.train_from_iterator(["ab"], vocab_size=260, special_tokens=["<s>"], reserved_special_tokens=4)


# ---------------------------------------------------------------------------- determinism


def test_thread_count_does_not_change_mixed_or_continued_training() -> None:
    code = (
        "import bytepair,sys;"
        "from importlib.resources import files;"
        "t=(files('bytepair')/'data'/'tinyshakespeare.txt').read_text();"
        "a,b=t[:len(t)//3],t[len(t)//3:];"
        "S=bytepair.Source;"
        "tok=bytepair.train([S(texts=[a],name='a'),S(texts=[b],name='b')],vocab_size=600,alpha=0.3,max_token_length=8);"
        "tok2=bytepair.train_from_iterator([a.lower()],vocab_size=800,base=tok);"
        "print(repr(tok2.merges).__hash__())"
    )
    outs = set()
    for n in ("1", "2", "3"):
        env = dict(os.environ, RAYON_NUM_THREADS=n, PYTHONHASHSEED="0")
        outs.add(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout)
    assert len(outs) == 1


def test_counter_words_statistic() -> None:
    tok = bytepair.train(Source(texts=["one two  three\nfour", "five"], name="t"), vocab_size=260)
    (s,) = tok.training["sources"]
    assert s["words"] == 5
    assert s["tokens_per_word"] == pytest.approx(s["tokens"] / 5, rel=1e-3)
    assert Counter(s) == Counter(s)  # a plain dict, JSON-friendly


def test_continued_training_cannot_reorder_old_merges() -> None:
    # The README's example of what continued training cannot fix.
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"er"}
    base = Tokenizer(vocab, [(b"e", b"r")])
    docs = ["re rere rerere "] * 50
    cont = bytepair.train_from_iterator(docs, vocab_size=260, base=base)
    scratch = bytepair.train_from_iterator(docs, vocab_size=259)
    assert scratch.merges == [(b"r", b"e"), (b"re", b"re"), (b" ", b"rere")]
    assert cont.merges[1:] == [(b"r", b"er"), (b" ", b"rer"), (b"r", b"e")]
    assert (len(scratch.encode(" rere")), len(scratch.encode(" rerere"))) == (1, 2)
    assert (len(cont.encode(" rere")), len(cont.encode(" rerere"))) == (2, 3)


def test_core_counter_train_options() -> None:
    from bytepair import _core

    counter = _core.PieceCounter(regex_of("gpt4"), [])
    counter.add_texts(["aaaa bbbb aaaa"])
    merges, distinct = counter.train(merges=10, min_frequency=1, max_token_length=2)
    assert distinct == 3
    assert merges == [(97, 97), (98, 98)]  # " bb", "aaaa" would be longer than 2 bytes
    base = bytepair.train_from_iterator(["aaaa"] * 3, vocab_size=257)
    learned = _core.train_from_counts([(b"aaaa", 3)], merges=2, min_frequency=1, base=(base._core, 257))
    assert learned == [(256, 256)]
