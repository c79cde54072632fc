"""Vocabulary surgery (bytepair.surgery; `bytepair prune / extend / graft`, `show --residues`).

Residues are checked against a brute-force oracle (every short text over a small alphabet,
encoded); pruning to N merges against training to N merges; exports against the owning
libraries (`tokenizers`, `tiktoken`); id maps against re-encoding.
"""

from __future__ import annotations

import itertools
import json
import random

import pytest

import bytepair
from bytepair import surgery
from bytepair.cli import main
from bytepair.sources import Source

BYTES = {i: bytes([i]) for i in range(256)}


def _corpus(seed: int, n: int = 400, words: tuple[str, ...] = ()) -> list[str]:
    rng = random.Random(seed)
    base = words or ("the", "then", "there", "these", "other", "café", "résumé", "naïve", "über", "東京", "1234", "x=y;")
    return [" ".join(rng.choice(base) for _ in range(rng.randint(3, 12))) + rng.choice([".", "!", "\n", ""]) for _ in range(n)]


@pytest.fixture(scope="module")
def docs() -> list[str]:
    return _corpus(1)


@pytest.fixture(scope="module")
def trained(docs: list[str]) -> bytepair.Tokenizer:
    return bytepair.train_from_iterator(docs, vocab_size=256 + 60 + 1, special_tokens=["<|endoftext|>"], min_frequency=1)


def _texts(alphabet: str, length: int) -> list[str]:
    return ["".join(t) for n in range(1, length + 1) for t in itertools.product(alphabet, repeat=n)]


def _emitted(tok: bytepair.Tokenizer, texts: list[str]) -> set[int]:
    return {i for ids in tok.encode_ordinary_batch(texts) for i in ids}


def _random_merges(rng: random.Random, letters: bytes, n: int) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """A hand-made merge list over ``letters``: random pairs of tokens so far, in random order,
    so that some tokens are not made by the merges from their own bytes."""
    tokens = [bytes([c]) for c in letters]
    vocab = dict(BYTES)
    merges: list[tuple[bytes, bytes]] = []
    seen = set()
    while len(merges) < n:
        a, b = rng.choice(tokens), rng.choice(tokens)
        if a + b in seen or len(a + b) > 5 or (a, b) in merges:
            continue
        seen.add(a + b)
        merges.append((a, b))
        tokens.append(a + b)
        vocab[256 + len(merges) - 1] = a + b
    rng.shuffle(merges)
    return vocab, merges


# ---------------------------------------------------------------------------- residues


def test_utf8_substrings_against_every_character() -> None:
    # The substrings of 1 to 3 bytes of any UTF-8 text, from every character's encoding: inside
    # one character, or a character's end then the next one's start (with a 1-byte character
    # between them for 3 bytes).
    chars = [chr(c).encode() for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    inside = {c[i:j] for c in chars for i in range(len(c)) for j in range(i + 1, len(c) + 1)}
    ends = {n: {c[-n:] for c in chars if len(c) >= n} for n in (1, 2)}
    starts = {n: {c[:n] for c in chars if len(c) >= n} for n in (1, 2)}
    ascii_ = {bytes([b]) for b in range(0x80)}

    def oracle(data: bytes) -> bool:
        if data in inside:
            return True
        for cut in range(1, len(data)):
            if data[:cut] in ends.get(cut, ()) and data[cut:] in starts.get(len(data) - cut, ()):
                return True
        return len(data) == 3 and data[:1] in ends[1] and data[1:2] in ascii_ and data[2:] in starts[1]

    rng = random.Random(0)
    pool = list(range(0x80, 0x100)) + [0x61, 0x20]
    samples = [bytes([x, y]) for x in range(256) for y in range(256)]
    samples += [bytes(rng.choice(pool) for _ in range(3)) for _ in range(20000)]
    for data in samples:
        assert surgery._utf8_substring(data) == oracle(data), data
    # Past three continuation bytes no character goes on.
    assert surgery._utf8_substring(b"\x80\x80\x80a") and not surgery._utf8_substring(b"\x80\x80\x80\x80")


@pytest.mark.parametrize("seed", range(6))
def test_residues_match_the_brute_force_oracle_on_hand_made_merge_lists(seed: int) -> None:
    rng = random.Random(seed)
    vocab, merges = _random_merges(rng, b"abc", 30)
    tok = bytepair.Tokenizer(vocab, merges, pattern=None)
    found = surgery.residues(tok)
    emitted = _emitted(tok, _texts("abc", 6))  # every token is at most 5 bytes
    over_abc = {i for i, b in vocab.items() if set(b) <= set(b"abc")}
    never = over_abc - emitted
    assert {i for i in found.proven if i in over_abc} == never
    assert found.undecided == []
    assert never, "the oracle should find residues in a shuffled merge list"
    for i, text in found.witness.items():
        assert i in tok.encode_ordinary(text)
    # Bytes that no UTF-8 text has are residues; every other byte is seen somewhere.
    assert {i for i in found.proven if len(vocab[i]) == 1} == {i for i in range(256) if i in (0xC0, 0xC1) or i >= 0xF5}


@pytest.mark.parametrize("seed", range(4))
def test_residues_with_a_pattern_are_sound_and_witnesses_complete(seed: int) -> None:
    # With a pattern, a hand-made merge list has tokens that cross piece boundaries ("a b"):
    # never emitted, but not proven either (undecided). What is proven, the oracle never sees;
    # what the oracle sees, the witness search finds.
    rng = random.Random(seed)
    vocab, merges = _random_merges(rng, b"ab c", 30)
    tok = bytepair.Tokenizer(vocab, merges, pattern="gpt2")
    found = surgery.residues(tok)
    emitted = _emitted(tok, _texts("ab c", 6))
    assert found.proven and found.undecided
    assert not set(found.proven) & emitted
    assert not set(found.undecided) & emitted
    assert {i for i in emitted if i not in found.witness} == set()


@pytest.mark.parametrize("pattern", ["gpt2", "gpt4", None])
def test_residues_of_trained_tokenizers_match_the_oracle(pattern: str | None) -> None:
    docs = _corpus(2, words=("ab", "ba", "aab", "bab", "a", "abba", "b"))
    tok = bytepair.train_from_iterator(docs, vocab_size=256 + 40, pattern=pattern, min_frequency=1, max_token_length=7)
    found = surgery.residues(tok)
    emitted = _emitted(tok, _texts("ab ", 7))
    longest = max(len(b) for b in tok.vocab.values())
    assert longest <= 7
    over = {i for i, b in tok.vocab.items() if set(b) <= set(b"ab ")}
    assert over - emitted == {i for i in found.proven if i in over} == set()
    assert found.undecided == []
    assert not set(found.proven) & emitted


def test_residues_of_partial_characters_match_the_oracle() -> None:
    # Tokens that are parts of UTF-8 characters: the oracle's texts hold every character
    # of two bytes that starts with 0xC2 or 0xC3 (U+0080-U+00FF).
    words = ("é", "è", "éa", "aé", "ée", "ê", "a", "e é")
    docs = _corpus(3, words=words)
    tok = bytepair.train_from_iterator(docs, vocab_size=256 + 30, pattern=None, min_frequency=1, max_token_length=4)
    found = surgery.residues(tok)
    latin = "".join(chr(c) for c in range(0x80, 0x100))
    texts = _texts("ae é" + latin, 2) + _texts("ae éèê", 4)
    emitted = _emitted(tok, texts)
    assert not set(found.proven) & emitted
    assert found.undecided == []
    small = {i for i, b in tok.vocab.items() if set(b) <= set(b"ae \xc3\xa9\xa8\xaa")}
    assert {i for i in small if i not in emitted} == {i for i in found.proven if i in small}


def test_residues_of_a_rank_model(tmp_path) -> None:
    # A rank file (tiktoken) emits a token its ranks do not make when its bytes are a whole piece.
    rng = random.Random(7)
    tokens = sorted({"".join(rng.choice("abc") for _ in range(rng.randint(2, 4))) for _ in range(40)}, key=lambda t: rng.random())
    ranks = {bytes([i]): i for i in range(256)} | {t.encode(): 256 + n for n, t in enumerate(tokens)}
    import base64

    path = tmp_path / "r.tiktoken"
    path.write_text("".join(f"{base64.b64encode(b).decode()} {r}\n" for b, r in ranks.items()))
    tok = bytepair.load_tiktoken(path, pattern=None)
    found = surgery.residues(tok)
    emitted = _emitted(tok, _texts("abc", 5))
    over = {i for i, b in tok.vocab.items() if set(b) <= set(b"abc")}
    assert over <= emitted
    assert not {i for i in found.proven if i in over}
    assert found.undecided == []


def test_show_residues(tmp_path, capsys) -> None:
    vocab = BYTES | {256: b"bc", 257: b"ab", 258: b"abc"}
    tok = bytepair.Tokenizer(vocab, [(b"b", b"c"), (b"a", b"b"), (b"ab", b"c")], pattern=None)
    path = tmp_path / "tok.json"
    tok.save(path)
    assert main(["show", str(path), "--residues", "--all"]) == 0
    out = capsys.readouterr().out
    assert "14 residues" in out
    rows = [line.split(None, 2) for line in out.splitlines()[2:]]
    assert ["258", "'abc'", "the merges never make it"] in rows
    assert ["255", "'\\xff'", "bytes no UTF-8 text has"] in rows


# ---------------------------------------------------------------------------- prune


def test_prune_keep_n_is_training_to_n(docs: list[str], trained: bytepair.Tokenizer) -> None:
    n = 25
    result = surgery.prune(trained, keep=n, corpus=Source(texts=docs))
    direct = bytepair.train_from_iterator(docs, vocab_size=256 + n + 1, special_tokens=["<|endoftext|>"], min_frequency=1)
    pruned = result.tokenizer
    assert pruned.merges == direct.merges
    assert pruned.vocab == direct.vocab
    assert pruned.special_tokens == direct.special_tokens
    for text in docs[:100] + ["<|endoftext|>" + docs[0]]:
        assert pruned.encode(text, allowed_special="all") == direct.encode(text, allowed_special="all")
    # The id map: bytes and the first n merges stay, the special token moves down, the rest go.
    assert all(result.id_map[i] == i for i in range(256 + n))
    assert result.id_map[trained.special_tokens["<|endoftext|>"]] == 256 + n
    assert sorted(result.removed) == list(range(256 + n, 256 + len(trained.merges)))
    # What changed on the corpus, measured by re-encoding.
    change = result.corpus
    assert change is not None and change.documents == len(docs)
    changed = sum(
        1 for d in docs if [result.id_map[i] for i in trained.encode(d)] != pruned.encode(d)
    )
    assert change.changed == changed > 0
    first = next(k for k, d in enumerate(docs) if [result.id_map[i] for i in trained.encode(d)] != pruned.encode(d))
    assert change.first_index == first


def test_prune_keep_n_of_a_rank_model_is_the_rank_prefix() -> None:
    tok = bytepair.get_encoding("r50k_base")
    result = surgery.prune(tok, keep=500)
    pruned = result.tokenizer
    assert pruned.vocab == {i: b for i, b in tok.vocab.items() if i < 756}
    assert pruned.special_tokens == {"<|endoftext|>": 756}
    text = "Hello world, this is a test of the rank prefix. Ünïcödé 東京"
    ids = pruned.encode(text)
    assert pruned.decode(ids) == text and max(ids) < 756


def test_prune_min_count(docs: list[str], trained: bytepair.Tokenizer) -> None:
    result = surgery.prune(trained, min_count=30, corpus=Source(texts=docs))
    counts: dict[int, int] = {}
    for ids in trained.encode_batch(docs):
        for i in ids:
            counts[i] = counts.get(i, 0) + 1
    pruned = result.tokenizer
    kept_bytes = {pruned.decode_single_token_bytes(v) for v in result.id_map.values() if v is not None}
    for i, b in trained.vocab.items():
        if counts.get(i, 0) >= 30:
            assert b in kept_bytes  # frequent tokens stay (and what they are made of)
    assert result.removed and all(counts.get(i, 0) < 30 for i in result.removed)
    for text in docs[:50]:
        assert pruned.decode(pruned.encode(text)) == text


@pytest.mark.parametrize("seed", range(4))
def test_drop_residues_changes_no_encoding(seed: int) -> None:
    rng = random.Random(seed)
    vocab, merges = _random_merges(rng, b"abc ", 40)
    tok = bytepair.Tokenizer(vocab, merges, pattern="gpt2", special_tokens=["<|endoftext|>"])
    found = surgery.residues(tok, witnesses=False)
    texts = _texts("abc ", 5) + ["".join(rng.choice("abc ") for _ in range(40)) for _ in range(200)]
    result = surgery.prune(tok, drop_residues=True, corpus=Source(texts=texts))
    assert set(result.removed) == {i for i, r in found.proven.items() if len(vocab[i]) > 1}
    assert result.removed
    assert result.corpus is not None and result.corpus.changed == 0
    new = result.tokenizer
    for text, old_ids in zip(texts, tok.encode_batch(texts)):
        assert [result.id_map[i] for i in old_ids] == new.encode(text)
    assert new.special_tokens["<|endoftext|>"] == len(new.vocab)  # compact ids, the special last
    assert sorted(new.vocab) == list(range(len(new.vocab)))


def _hf_ids(path: str, texts: list[str]) -> list[list[int]]:
    tokenizers = pytest.importorskip("tokenizers")
    hf = tokenizers.Tokenizer.from_file(path)
    return [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]


def test_pruned_tokenizers_export_to_hf_and_tiktoken(tmp_path, docs: list[str], trained: bytepair.Tokenizer) -> None:
    tiktoken = pytest.importorskip("tiktoken")
    import tiktoken.load
    texts = docs[:200] + ["naïve über 東京 x=y; 1234567", "  trailing   spaces \n\n", "a<|endoftext|>b"]
    rng = random.Random(5)
    vocab, merges = _random_merges(rng, b"abc ", 40)
    hand = bytepair.Tokenizer(vocab, merges, pattern="gpt2")
    cases = [
        surgery.prune(trained, keep=30),
        surgery.prune(trained, min_count=40, corpus=Source(texts=docs)),
        surgery.prune(hand, drop_residues=True),
    ]
    for n, result in enumerate(cases):
        tok = result.tokenizer
        ours = tok.encode_batch(texts, allowed_special="all")  # the special token, with its new id
        bytepair.save_hf(tok, tmp_path / f"{n}.json")
        assert _hf_ids(str(tmp_path / f"{n}.json"), texts) == ours
        ours = tok.encode_ordinary_batch(texts)
        if n == 2:
            continue  # a hand-made merge list is not a rank file (dump_tiktoken refuses)
        bytepair.dump_tiktoken(tok, tmp_path / f"{n}.tiktoken")
        ranks = tiktoken.load.load_tiktoken_bpe(str(tmp_path / f"{n}.tiktoken"))
        enc = tiktoken.Encoding(f"t{n}", pat_str=tok.pattern, mergeable_ranks=ranks, special_tokens={})
        assert enc.encode_ordinary_batch(texts) == ours
    # A pruned rank model, written back as a rank file.
    r = surgery.prune(bytepair.get_encoding("r50k_base"), keep=2000).tokenizer
    bytepair.dump_tiktoken(r, tmp_path / "r.tiktoken")
    ranks = tiktoken.load.load_tiktoken_bpe(str(tmp_path / "r.tiktoken"))
    enc = tiktoken.Encoding("r", pat_str=r.pattern, mergeable_ranks=ranks, special_tokens={})
    assert enc.encode_ordinary_batch(texts) == r.encode_ordinary_batch(texts)


def test_id_maps_keep_token_bytes(docs: list[str], trained: bytepair.Tokenizer) -> None:
    for result in (surgery.prune(trained, keep=10), surgery.prune(trained, min_count=20, corpus=Source(texts=docs))):
        new = result.tokenizer
        for old, i in result.id_map.items():
            if i is not None:
                assert new.decode_single_token_bytes(i) == trained.decode_single_token_bytes(old)
        assert len({i for i in result.id_map.values() if i is not None}) == new.vocab_size
        for text in docs[:50]:
            ids = new.encode(text)
            assert new.decode(ids) == text
            kept = [result.id_map[i] for i in trained.encode(text)]
            if None not in kept:  # every old token survived: some texts still encode alike
                assert new.decode(kept) == text


def test_prune_refuses_bad_requests(trained: bytepair.Tokenizer) -> None:
    with pytest.raises(bytepair.BytepairError, match="exactly one"):
        surgery.prune(trained)
    with pytest.raises(bytepair.BytepairError, match="exactly one"):
        surgery.prune(trained, keep=3, drop_residues=True)
    with pytest.raises(bytepair.BytepairError, match="needs corpus"):
        surgery.prune(trained, min_count=3)
    with pytest.raises(bytepair.BytepairError, match="more than"):
        surgery.prune(trained, keep=10**6)


# ---------------------------------------------------------------------------- extend, graft


def test_extend_keeps_every_old_id(docs: list[str], trained: bytepair.Tokenizer) -> None:
    domain = _corpus(9, words=("photosynthesis", "chlorophyll", "mitochondria", "the"))
    result = surgery.extend(trained, Source(texts=domain), add=20, min_frequency=1)
    new = result.tokenizer
    for i, b in trained.vocab.items():
        assert new.vocab[i] == b
    assert new.special_tokens == trained.special_tokens
    assert all(result.id_map[i] == i for i in result.id_map)
    assert len(result.added) == 20 and min(result.added) > trained.max_token_value
    assert result.corpus is not None and result.corpus.tokens_after < result.corpus.tokens_before
    assert new == bytepair.train_from_iterator(domain, vocab_size=trained.vocab_size + 20, base=trained, min_frequency=1)


def test_graft_keeps_a_ids(docs: list[str], trained: bytepair.Tokenizer) -> None:
    other_docs = _corpus(4, words=("alpha", "beta", "gamma", "the", "there"))
    b = bytepair.train_from_iterator(other_docs, vocab_size=256 + 50, special_tokens=["<pad>"], min_frequency=1)
    result = surgery.graft(trained, b, corpus=Source(texts=other_docs))
    g = result.tokenizer
    for i, data in trained.vocab.items():
        assert g.vocab[i] == data
    assert all(g.special_tokens[t] == i for t, i in trained.special_tokens.items())
    assert result.id_map == {i: i for i in result.id_map}
    assert result.added and min(result.added) > trained.max_token_value
    # B's map: a token that came is the same bytes; what did not come has a reason.
    assert result.other_id_map is not None
    for i, new in result.other_id_map.items():
        if new is not None and i in b.vocab:
            assert g.vocab[new] == b.vocab[i]
    assert g.special_tokens["<pad>"] == result.other_id_map[b.special_tokens["<pad>"]]
    assert result.corpus is not None and result.corpus.tokens_after < result.corpus.tokens_before
    for text in other_docs[:50] + docs[:50]:
        assert g.decode(g.encode(text)) == text
    # Grafting the continued training of A onto A gives that tokenizer back exactly.
    more = bytepair.train_from_iterator(other_docs, vocab_size=trained.vocab_size + 15, base=trained, min_frequency=1)
    assert surgery.graft(trained, more).tokenizer == more
    # Grafting A onto itself changes nothing.
    same = surgery.graft(trained, trained)
    assert same.tokenizer == trained and not same.added and not same.dropped


def test_graft_says_what_it_drops() -> None:
    a = bytepair.Tokenizer(BYTES | {256: b"ab"}, [(b"a", b"b")], pattern=None)
    # B makes "bc" then "abc" from "a" + "bc" (fine: both parts are tokens), and "xy" + "z" where
    # "xy" is a token B's merges do not make.
    b = bytepair.Tokenizer(
        BYTES | {256: b"bc", 257: b"abc", 258: b"xy", 259: b"xyz", 260: b"ab"},
        [(b"b", b"c"), (b"a", b"bc"), (b"xy", b"z"), (b"ab", b"c")],
        pattern=None,
    )
    result = surgery.graft(a, b)
    g = result.tokenizer
    assert g.vocab[257] == b"bc" and g.vocab[258] == b"abc"
    assert result.dropped == {
        259: "tokens of B whose merges need a part that did not come",
        258: "tokens of B that B's merges do not make",
    }
    assert result.other_id_map == {**{i: i for i in range(256)}, 256: 257, 257: 258, 258: None, 259: None, 260: 256}
    with pytest.raises(bytepair.BytepairError, match="same pattern"):
        surgery.graft(a, bytepair.Tokenizer(BYTES, [], pattern="gpt2"))


# ---------------------------------------------------------------------------- CLI


def test_cli_prune_extend_graft(tmp_path, docs: list[str], trained: bytepair.Tokenizer, capsys) -> None:
    tok = tmp_path / "tok.json"
    trained.save(tok)
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"text": d}) + "\n" for d in docs[:100]))
    out = tmp_path / "small.json"
    assert main(["prune", str(tok), "--keep", "20", "-o", str(out), "--corpus", str(corpus)]) == 0
    printed = capsys.readouterr().out
    assert "prune keep=20" in printed and "first change: " + str(corpus) + ":" in printed
    idmap = json.loads((tmp_path / "small.json.idmap.json").read_text())
    expected = surgery.prune(trained, keep=20)
    assert idmap["id_map"] == {str(k): v for k, v in expected.id_map.items()}
    assert idmap["removed"] == sorted(expected.removed) and idmap["added"] == []
    assert bytepair.load(out) == expected.tokenizer

    # Written back in the other formats bytepair writes, read back with the same ids.
    for name, to in (("g2", "gpt2"), ("m.model", "minbpe"), ("p", "pretrained"), ("r.tiktoken", "tiktoken")):
        assert main(["prune", str(tok), "--keep", "20", "-o", str(tmp_path / name), "--to", to, "-q"]) == 0
        back = bytepair.load(tmp_path / (name + "/vocab.json" if to == "gpt2" else name), **({"pattern": "gpt4"} if to == "tiktoken" else {}))
        assert back.encode_ordinary_batch(docs[:50]) == expected.tokenizer.encode_ordinary_batch(docs[:50]), to

    hf = tmp_path / "hf" / "tokenizer.json"
    hf.parent.mkdir()
    bytepair.save_hf(trained, hf)
    assert main(["prune", str(hf), "--drop-residues", "-o", str(tmp_path / "out" / "tokenizer.json"), "-q"]) == 0
    assert capsys.readouterr().out == ""
    assert (tmp_path / "out" / "tokenizer.json.idmap.json").exists()

    ext = tmp_path / "ext.tiktoken"
    assert main(["extend", str(tok), "--corpus", str(corpus), "--add", "5", "--min-frequency", "1", "-o", str(ext), "--id-map", str(tmp_path / "m.json")]) == 0
    assert "extend add=5" in capsys.readouterr().out
    assert json.loads((tmp_path / "m.json").read_text())["id_map"][str(trained.special_tokens["<|endoftext|>"])] == trained.special_tokens["<|endoftext|>"]

    assert main(["graft", str(tok), str(out), "-o", str(tmp_path / "g.json")]) == 0
    assert "graft" in capsys.readouterr().out
    assert main(["prune", str(tok), "-o", str(out)]) == 2
    assert main(["prune", str(tok), "--min-count", "3", "-o", str(out)]) == 2
