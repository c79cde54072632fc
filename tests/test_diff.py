"""`bytepair diff` / `bytepair.diff`: equal tokenizers (one tokenizer in two formats) report no
difference; seeded differences (a merge removed, two ids swapped, special tokens dropped, other
encodings) are found, the reported input truly makes them differ, the shrinker never lengthens;
the vocabulary counts agree with a naive oracle; the command's exit statuses and JSON."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

import bytepair
from bytepair import Tokenizer
from bytepair.analysis.diff import DiffResult, compare_vocab, hostile_inputs, shrink
from bytepair.cli import main

# Few random mixes: the fixed hostile inputs already number thousands; tests stay fast.
MIXED = 50


@pytest.fixture(scope="module")
def gpt2() -> Tokenizer:
    return bytepair.get_encoding("gpt2")


@pytest.fixture(scope="module")
def gpt2_parts(gpt2: Tokenizer) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    return gpt2.vocab, gpt2.merges


def _rebuilt(
    gpt2: Tokenizer, vocab: dict[int, bytes], merges: list[tuple[bytes, bytes]], special_tokens: dict[str, int] | None = None
) -> Tokenizer:
    specials = gpt2.special_tokens if special_tokens is None else special_tokens
    return Tokenizer(vocab, merges, special_tokens=specials, pattern=gpt2.pattern)


def _ids(tok: Tokenizer, text: str) -> list[int]:
    return tok.encode(text, allowed_special="all")


def _check_shortest(r: DiffResult, a: Tokenizer, b: Tokenizer) -> None:
    """The reported input makes them differ, and the reported first difference is where it is."""
    d = r.shortest
    assert d is not None
    ia, ib = _ids(a, d.text), _ids(b, d.text)
    assert ia != ib
    assert (d.a_ids, d.b_ids) == (ia, ib)
    pos = next((i for i, (x, y) in enumerate(zip(ia, ib)) if x != y), min(len(ia), len(ib)))
    assert d.position == pos
    assert d.a_id == (ia[pos] if pos < len(ia) else None)
    assert d.b_id == (ib[pos] if pos < len(ib) else None)
    if d.a_id is not None:
        assert d.a_token == a.token_bytes(d.a_id)
    if d.b_id is not None:
        assert d.b_token == b.token_bytes(d.b_id)
    assert len(d.text) <= d.original_length
    assert 0 < r.differ <= r.documents


# ---------------------------------------------------------------------------- equal


def test_one_tokenizer_in_two_formats_is_equal(tmp_path: Path) -> None:
    o200k = bytepair.get_encoding("o200k_base")
    bytepair.dump_tiktoken(o200k, tmp_path / "o200k.tiktoken")
    bytepair.save_hf(o200k, tmp_path / "tokenizer.json")
    r = bytepair.diff(str(tmp_path / "o200k.tiktoken"), str(tmp_path / "tokenizer.json"), mixed=MIXED)
    assert r.equal and r.vocab.equal
    assert r.differ == 0 and r.shortest is None and r.complete
    assert r.vocab.same == len(o200k.vocab) and r.vocab.specials_same == o200k.special_tokens
    assert r.documents > 1000
    assert {s.source for s in r.sources} >= {"whitespace", "digits", "scripts", "specials", "invalid-utf8", "mixed"}


def test_gpt2_and_r50k_base_are_the_same_encoding(gpt2: Tokenizer) -> None:
    # tiktoken's gpt2 and r50k_base share ranks, pattern and special tokens: no difference.
    r50k = bytepair.get_encoding("r50k_base")
    assert gpt2.vocab == r50k.vocab and gpt2.pattern == r50k.pattern
    r = bytepair.diff("gpt2", "r50k_base", mixed=MIXED)
    assert r.equal and r.share == 0.0


# ---------------------------------------------------------------------------- seeded differences


def test_a_removed_merge_is_found(gpt2: Tokenizer, gpt2_parts: tuple[dict[int, bytes], list[tuple[bytes, bytes]]]) -> None:
    vocab, merges = gpt2_parts
    k = merges.index((b" t", b"he"))
    b = _rebuilt(gpt2, vocab, merges[:k] + merges[k + 1 :])
    r = bytepair.diff(gpt2, b, mixed=MIXED)
    assert r.vocab.equal  # the same ids and bytes: only encoding shows it
    assert not r.equal
    _check_shortest(r, gpt2, b)


def test_two_swapped_ids_are_found(gpt2: Tokenizer, gpt2_parts: tuple[dict[int, bytes], list[tuple[bytes, bytes]]]) -> None:
    vocab, merges = gpt2_parts
    by_bytes = {t: i for i, t in vocab.items()}
    x, y = by_bytes[b" the"], by_bytes[b" of"]
    swapped = dict(vocab)
    swapped[x], swapped[y] = vocab[y], vocab[x]
    b = _rebuilt(gpt2, swapped, merges)
    r = bytepair.diff(gpt2, b, mixed=MIXED)
    assert (r.vocab.changed, r.vocab.moved, r.vocab.only_a, r.vocab.only_b) == (2, 2, 0, 0)
    assert {i for i, _, _ in r.vocab.examples_changed} == {x, y}
    assert not r.equal
    _check_shortest(r, gpt2, b)
    d = r.shortest
    assert d is not None and {d.a_id, d.b_id} == {x, y} and d.a_token == d.b_token


def test_dropped_special_tokens_are_found(gpt2: Tokenizer, gpt2_parts: tuple[dict[int, bytes], list[tuple[bytes, bytes]]]) -> None:
    vocab, merges = gpt2_parts
    b = _rebuilt(gpt2, vocab, merges, special_tokens={})
    r = bytepair.diff(gpt2, b, mixed=MIXED)
    assert r.vocab.specials_only_a == gpt2.special_tokens and not r.vocab.equal
    assert next(s for s in r.sources if s.source == "specials").differ > 0
    _check_shortest(r, gpt2, b)
    # No part of a special token's text is one: the shortest input is the whole of it.
    assert r.shortest is not None and r.shortest.text == "<|endoftext|>"
    # Encoded as ordinary text, the special token's text is the same on both sides.
    assert bytepair.diff(gpt2, b, specials=False, texts=["<|endoftext|>"], hostile=False).differ == 0


def test_cl100k_and_o200k_differ() -> None:
    a, b = bytepair.get_encoding("cl100k_base"), bytepair.get_encoding("o200k_base")
    r = bytepair.diff(a, b, mixed=MIXED)
    assert not r.equal and not r.vocab.equal
    assert r.share > 0.5
    _check_shortest(r, a, b)


def test_shrinking_never_lengthens_and_keeps_the_difference(gpt2: Tokenizer) -> None:
    cl100k = bytepair.get_encoding("cl100k_base")
    long = "Some prose first.\nThen     a     line with spaces.\n" * 20 + "x = 12345678\n"
    differs = lambda s: _ids(gpt2, s) != _ids(cl100k, s)  # noqa: E731
    assert differs(long)
    small = shrink(long, differs, time_limit=5)
    assert differs(small) and len(small) <= len(long)
    assert shrink("same", lambda s: False) == "same"


def test_shrink_is_one_minimal_when_time_allows() -> None:
    rng = random.Random(5)
    for _ in range(20):
        text = "".join(rng.choice("ab9 x\n") for _ in range(rng.randrange(10, 120)))
        text += "ab9"

        def keep(s: str) -> bool:
            return "ab" in s and "9" in s

        small = shrink(text, keep, time_limit=5)
        assert keep(small) and len(small) <= len(text)
        assert all(not keep(small[:i] + small[i + 1 :]) for i in range(len(small)))


def test_the_corpus_is_compared_document_by_document(tmp_path: Path, gpt2: Tokenizer) -> None:
    cl100k = bytepair.get_encoding("cl100k_base")
    docs = ["plain words only", "x = 1234567", "naïve café", "    indented\n\tcode", "hello"]
    (tmp_path / "c").mkdir()
    with open(tmp_path / "c" / "docs.jsonl", "w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps({"text": d}) + "\n")
    (tmp_path / "c" / "notes.txt").write_text("one small text file\n", encoding="utf-8")
    r = bytepair.diff(gpt2, cl100k, corpus=str(tmp_path / "c"), hostile=False)
    expected = sum(_ids(gpt2, d) != _ids(cl100k, d) for d in [*docs, "one small text file\n"])
    assert (r.documents, r.differ) == (len(docs) + 1, expected)
    assert [s.source for s in r.sources] == ["corpus"]
    limited = bytepair.diff(gpt2, cl100k, corpus=str(tmp_path / "c" / "docs.jsonl"), hostile=False, max_docs=2)
    assert limited.documents == 2
    if expected:
        _check_shortest(r, gpt2, cl100k)
        assert r.shortest is not None and r.shortest.source.startswith("corpus:")


def test_wordpiece_tokenizers_are_compared_too(tmp_path: Path) -> None:
    lines = ["the king is dead, long live the king", "to be or not to be", "all the world's a stage"] * 30
    w = bytepair.train_wordpiece_from_iterator(lines, vocab_size=120)
    w.save(tmp_path / "w.json")
    assert bytepair.diff(w, str(tmp_path / "w.json"), mixed=MIXED).equal
    other = bytepair.train_wordpiece_from_iterator(lines[:30] + ["kings queens princes"] * 30, vocab_size=120)
    r = bytepair.diff(w, other, mixed=MIXED)
    assert not r.equal
    d = r.shortest
    assert d is not None and w.encode(d.text) != other.encode(d.text) and len(d.text) <= d.original_length


def test_time_limit_is_honoured_and_reported() -> None:
    r = bytepair.diff("cl100k_base", "o200k_base", time_limit=0.05, shrink_time=0.01)
    assert not r.complete and r.documents < sum(1 for _ in hostile_inputs(["<|endoftext|>"]))
    assert r.shortest is None or len(r.shortest.text) <= r.shortest.original_length


def test_hostile_inputs_cover_the_kinds_and_are_seeded() -> None:
    items = list(hostile_inputs(["<|x|>"], seed=1, mixed=20))
    kinds = {k for k, _ in items}
    assert kinds == {"whitespace", "digits", "scripts", "unicode", "invalid-utf8", "newlines", "code", "long", "specials", "mixed"}
    texts = [t for _, t in items]
    assert "\u3000" * 33 in texts and "\r\n" in "".join(texts) and "\ufffd" in "".join(texts)
    assert any("\u0905" <= c <= "\u0939" for t in texts for c in t)  # Devanagari
    assert any("\U00013000" <= c <= "\U0001342f" for t in texts for c in t)  # Egyptian hieroglyphs
    assert "<|x|>" in texts
    assert items == list(hostile_inputs(["<|x|>"], seed=1, mixed=20))
    assert items != list(hostile_inputs(["<|x|>"], seed=2, mixed=20))


# ---------------------------------------------------------------------------- vocabulary oracle


def _naive_vocab_counts(va: dict[int, bytes], vb: dict[int, bytes]) -> tuple[int, int, int, int, int]:
    same = only_a = only_b = changed = 0
    for i in set(va) | set(vb):
        if i in va and i in vb:
            if va[i] == vb[i]:
                same += 1
            else:
                changed += 1
        elif i in va:
            only_a += 1
        else:
            only_b += 1
    moved = 0
    for i, t in va.items():
        for j, u in vb.items():
            if t == u and i != j:
                moved += 1
    return same, only_a, only_b, changed, moved


def test_vocabulary_counts_match_a_naive_oracle() -> None:
    rng = random.Random(0)
    base = {i: bytes([i]) for i in range(256)}
    for trial in range(10):
        # Two vocabularies of multi-byte tokens, without merges: ids only, bytes shuffled around.
        words = sorted({bytes(rng.choice(b"abcdef") for _ in range(rng.randrange(2, 5))) for _ in range(80)})
        va = base | {256 + n: w for n, w in enumerate(words[:60])}
        pool = words[20:]
        rng.shuffle(pool)
        vb = base | {256 + rng.randrange(0, 90): w for w in pool[:50]}
        a = Tokenizer(va, [], special_tokens={"<s>": 1000, "</s>": 1001}, pattern=None)
        b = Tokenizer(vb, [], special_tokens={"<s>": 1000, "</s>": 1002, "<pad>": 1003}, pattern=None)
        got = compare_vocab(a, b, examples=3)
        assert (got.same, got.only_a, got.only_b, got.changed, got.moved) == _naive_vocab_counts(a.vocab, b.vocab), trial
        assert (got.size_a, got.size_b) == (len(a.vocab), len(b.vocab))
        assert got.specials_same == {"<s>": 1000} and got.specials_changed == {"</s>": (1001, 1002)}
        assert got.specials_only_b == {"<pad>": 1003} and not got.specials_only_a
        assert len(got.examples_only_a) == min(3, got.only_a)
        for i, x, y in got.examples_changed:
            assert (a.vocab[i], b.vocab[i]) == (x, y) and x != y


# ---------------------------------------------------------------------------- command line


def test_cli_exit_statuses_and_json(tmp_path: Path, gpt2: Tokenizer, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", "gpt2", "r50k_base", "--mixed", "10"]) == 0
    out = capsys.readouterr().out
    assert "no difference found" in out

    assert main(["diff", "gpt2", "cl100k_base", "--mixed", "10", "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["equal"] is False and result["differ"] > 0 and result["vocab"]["equal"] is False
    short = result["shortest"]
    cl100k = bytepair.get_encoding("cl100k_base")
    assert short["a"]["ids"] == _ids(gpt2, short["text"]) and short["b"]["ids"] == _ids(cl100k, short["text"])
    assert short["a"]["ids"] != short["b"]["ids"]
    if short["a"]["id"] is not None:
        assert bytes.fromhex(short["a"]["token"]["hex"]) == gpt2.token_bytes(short["a"]["id"])

    assert main(["diff", "gpt2", "cl100k_base", "--mixed", "10"]) == 1
    out = capsys.readouterr().out
    assert "the tokenizers differ" in out and "first difference at token" in out

    # Failures are status 2 (1 means "they differ"), with the usual one-line message.
    assert main(["diff", "gpt2", str(tmp_path / "missing.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bytepair: error: ") and err.count("\n") == 1
    (tmp_path / "bad.json").write_text("{}", encoding="utf-8")
    assert main(["diff", "gpt2", str(tmp_path / "bad.json")]) == 2
    assert capsys.readouterr().err.startswith("bytepair: error: ")
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9\n")
    assert main(["diff", "gpt2", "gpt2", "--corpus", str(tmp_path / "latin1.txt")]) == 2
    assert "latin1.txt" in capsys.readouterr().err
    assert main(["diff", "gpt2", "gpt2", "--max-docs", "-1"]) == 2
    assert main(["diff", "gpt2"]) == 2
    capsys.readouterr()
    assert main(["diff", "--help"]) == 0
    assert "1 when the tokenizers differ" in " ".join(capsys.readouterr().out.split())


def test_cli_reads_a_corpus_and_texts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "a.txt"
    corpus.write_text("hello world\n", encoding="utf-8")
    assert main(["diff", "gpt2", "r50k_base", "--no-hostile", "--corpus", str(corpus), "--text", "x y", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["documents"] == 2 and {s["source"] for s in result["sources"]} == {"text", "corpus"}
    assert os.path.exists(corpus)


def test_sentencepiece_models_are_compared_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spm = pytest.importorskip("sentencepiece")
    lines = (Path(__file__).parent / "data" / "spm_code.txt").read_text(encoding="utf-8").splitlines()
    for kind in ("unigram", "bpe"):
        with open(tmp_path / f"{kind}.model", "wb") as f:
            spm.SentencePieceTrainer.train(
                sentence_iterator=iter(lines), model_writer=f, vocab_size=600, model_type=kind, minloglevel=2
            )
    unigram = bytepair.load(tmp_path / "unigram.model")
    assert bytepair.diff(unigram, str(tmp_path / "unigram.model"), mixed=MIXED).equal
    r = bytepair.diff(unigram, str(tmp_path / "bpe.model"), mixed=MIXED)
    assert not r.equal and r.kind_a == "SentencePiece unigram"
    bpe = bytepair.load(tmp_path / "bpe.model")
    d = r.shortest
    assert d is not None and unigram.encode(d.text) == d.a_ids != d.b_ids == bpe.encode(d.text)
    # The command line reads .model files (other commands refuse them).
    assert main(["diff", str(tmp_path / "unigram.model"), str(tmp_path / "bpe.model"), "--mixed", "10"]) == 1
    assert "SentencePiece bpe" in capsys.readouterr().out
