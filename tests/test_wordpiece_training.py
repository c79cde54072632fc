"""WordPiece training: both rules against the recounting oracle, and algorithm="hf" against
Hugging Face's WordPieceTrainer, id for id."""

from __future__ import annotations

import json
import pathlib
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import models, normalizers, pre_tokenizers, trainers

import bytepair
from bytepair import _core, train_wordpiece, train_wordpiece_from_iterator
from tests import oracle

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

busy = st.sampled_from(list("aaabbbcabcd  \n.,'") + ["é", "É", "中", "ß", "я", "Я"])
corpus = st.lists(
    st.lists(st.one_of(st.text(busy, max_size=10), st.sampled_from(["[UNK]", "[MASK]"])), max_size=6).map("".join),
    min_size=1,
    max_size=8,
)
multi = st.lists(
    st.text(st.sampled_from(list("the cat sat on a mat. Über straße café, naïve; Привет мир 中文字 한국어 😀!? ")), max_size=60),
    min_size=1,
    max_size=10,
)


def word_counts(texts: list[str], specials: list[str]) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for t in texts:
        for stretch, is_special in oracle.split_specials(t, specials):
            if not is_special:
                counts.update(w for w, _ in _core.bert_pre_tokenize(stretch))
    return dict(counts)


@given(texts=corpus, vocab_size=st.integers(1, 60), min_frequency=st.integers(0, 3))
def test_score_matches_oracle(texts: list[str], vocab_size: int, min_frequency: int) -> None:
    tok = train_wordpiece_from_iterator(texts, vocab_size=vocab_size, min_frequency=min_frequency, progress=False)
    record: list[tuple[str, str, int, int, int]] = []
    want, _ = oracle.wordpiece_train(
        word_counts(texts, SPECIALS), vocab_size=vocab_size, algorithm="score", min_frequency=min_frequency,
        special_tokens=SPECIALS, record=record,
    )
    assert [tok.id_to_token(i) for i in range(tok.vocab_size)] == want
    assert_scores(tok.training["merge_scores"], record)


def assert_scores(rows: list[list[Any]], record: list[tuple[str, str, int, int, int]]) -> None:
    """The training record's merges against the oracle's recount before each merge, and each
    score against count(ab) / (count(a) * count(b)) of those counts, exactly (both Python's
    correctly rounded int division)."""
    assert [tuple(r[:2]) + tuple(r[3:]) for r in rows] == record
    assert [r[2] for r in rows] == [n / (na * nb) for _, _, n, na, nb in record]


def test_scores_of_the_lecture() -> None:
    """The lecture's corpus (hai 5, lai 2, hau 6, kau 3, haus 10): the first merge is ##u ##s,
    count 10, with ##u 19 times and ##s 10 times: score 1/19, and h ##a scores 21/(21*26) = 1/26."""
    texts = ["hai " * 5 + "lai " * 2 + "hau " * 6 + "kau " * 3 + "haus " * 10]
    tok = train_wordpiece_from_iterator(texts, vocab_size=14, special_tokens=["[UNK]"], progress=False)
    rows = tok.training["merge_scores"]
    assert rows[0] == ["##u", "##s", 1 / 19, 10, 19, 10]
    assert tok.id_to_token(12) == "##us"
    # the record survives the file
    from bytepair._wordpiece_file import from_dict, to_dict

    again = from_dict(json.loads(json.dumps(to_dict(tok))))
    assert again.training["merge_scores"] == rows


@settings(suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(texts=corpus, vocab_size=st.integers(1, 60), min_frequency=st.integers(0, 3))
def test_hf_matches_oracle(texts: list[str], vocab_size: int, min_frequency: int) -> None:
    record: list[tuple[str, str, int, int, int]] = []
    want, repeated = oracle.wordpiece_train(
        word_counts(texts, []), vocab_size=vocab_size, algorithm="hf", min_frequency=min_frequency,
        special_tokens=SPECIALS, record=record,
    )
    assume(not repeated)
    tok = train_wordpiece_from_iterator(
        texts, vocab_size=vocab_size, min_frequency=min_frequency, algorithm="hf", progress=False
    )
    assert [tok.id_to_token(i) for i in range(tok.vocab_size)] == want
    assert_scores(tok.training["merge_scores"], record)


def hf_train(texts: list[str], vocab_size: int, min_frequency: int, lowercase: bool = True) -> dict[str, int]:
    tok = HFTokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=lowercase)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(
        vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=SPECIALS, show_progress=False
    )
    tok.train_from_iterator(texts, trainer)
    vocab: dict[str, int] = tok.get_vocab()
    return vocab


def hf_continuation_order(vocab: dict[str, int]) -> list[str]:
    """The `##c` tokens in the order HF's run numbered them (they follow the characters)."""
    by_id = sorted(vocab, key=vocab.__getitem__)
    return [t for t in by_id if t.startswith("##") and len(t) == 3]


@given(texts=st.one_of(corpus, multi), vocab_size=st.integers(1, 120), min_frequency=st.integers(0, 3), lowercase=st.booleans())
def test_hf_matches_tokenizers(texts: list[str], vocab_size: int, min_frequency: int, lowercase: bool) -> None:
    want = hf_train(texts, vocab_size, min_frequency, lowercase)
    tok = train_wordpiece_from_iterator(
        texts, vocab_size=vocab_size, min_frequency=min_frequency, algorithm="hf", lowercase=lowercase,
        progress=False, _continuation_order=hf_continuation_order(want),
    )
    assert tok.vocab == want


def test_score_matches_oracle_on_shakespeare() -> None:
    # Hundreds of merges over ~1,400 words: enough re-pushed pairs that the trainer's heap is
    # rebuilt from its live entries many times (the tiny hypothesis corpora rarely get there).
    with open(bytepair.__file__.replace("__init__.py", "data/tinyshakespeare.txt"), encoding="utf-8") as f:
        text = f.read(30_000)
    tok = train_wordpiece_from_iterator([text], vocab_size=400, min_frequency=2, progress=False)
    want, _ = oracle.wordpiece_train(
        word_counts([text], SPECIALS), vocab_size=400, algorithm="score", min_frequency=2, special_tokens=SPECIALS
    )
    assert [tok.id_to_token(i) for i in range(tok.vocab_size)] == want


def test_hf_matches_tokenizers_on_shakespeare() -> None:
    with open(bytepair.__file__.replace("__init__.py", "data/tinyshakespeare.txt"), encoding="utf-8") as f:
        text = f.read(300_000)
    want = hf_train([text], 2000, 2)
    tok = train_wordpiece_from_iterator(
        [text], vocab_size=2000, algorithm="hf", progress=False, _continuation_order=hf_continuation_order(want)
    )
    assert tok.vocab == want
    # Without HF's order (which changes from run to run), the result is the same every time.
    plain = train_wordpiece_from_iterator([text], vocab_size=2000, algorithm="hf", progress=False)
    assert plain.vocab == train_wordpiece_from_iterator([text], vocab_size=2000, algorithm="hf", progress=False).vocab


def test_train_from_files_is_from_iterator(tmp_path: Any) -> None:
    docs = ["Hello world, hello WORLD!\n" * 20, "Привет мир. café naïve\n" * 20]
    paths = []
    for i, d in enumerate(docs):
        p = tmp_path / f"{i}.txt"
        p.write_text(d, encoding="utf-8")
        paths.append(str(p))
    a = train_wordpiece(paths, vocab_size=80, progress=False)
    b = train_wordpiece_from_iterator(docs, vocab_size=80, progress=False)
    assert a.vocab == b.vocab
    assert [a.id_to_token(i) for i in range(5)] == SPECIALS
    assert a.training["algorithm"] == "score" and a.training["words"] > 0
    assert a.decode(a.encode("hello world")) == "hello world"


def test_training_bad_arguments() -> None:
    with pytest.raises(bytepair.BytepairError, match="algorithm"):
        train_wordpiece_from_iterator(["a"], vocab_size=10, algorithm="bpe")
    with pytest.raises(bytepair.BytepairError, match="unknown token"):
        train_wordpiece_from_iterator(["a"], vocab_size=10, special_tokens=["[PAD]"])
    with pytest.raises(TypeError):
        train_wordpiece_from_iterator("abc", vocab_size=10)
    with pytest.raises(FileNotFoundError):
        train_wordpiece("/no/such/file.txt", vocab_size=10)


def test_files_are_streamed_in_blocks(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import gzip

    from bytepair import _feed

    text = "Über straße café naïve, Привет мир!\nthe cat sat on the mat\n" * 40 + "no newline at the end"
    b = train_wordpiece_from_iterator([text], vocab_size=120, progress=False)
    # many blocks and units, cut between words (at spaces as well as newlines)
    monkeypatch.setattr(_feed, "_BATCH_CHARS", 64)
    monkeypatch.setattr(_feed, "_READ_BYTES", 7)
    monkeypatch.setattr(_feed, "_UNIT_BYTES", 5)
    monkeypatch.setattr(_feed, "_BLOCK_BYTES", 11)
    gz = tmp_path / "a.txt.gz"
    gz.write_bytes(gzip.compress(text.encode("utf-8")))
    plain = tmp_path / "a.txt"
    plain.write_text(text, encoding="utf-8")
    jsonl = tmp_path / "a.jsonl"
    jsonl.write_text(json.dumps({"text": text}) + "\n", encoding="utf-8")
    for path in (gz, plain, jsonl):
        a = train_wordpiece(str(path), vocab_size=120, progress=False)
        assert a.vocab == b.vocab, path
        assert a.training["words"] == b.training["words"]
        assert a.training["distinct_words"] == b.training["distinct_words"]
    assert b.training["text_bytes"] == len(text.encode("utf-8"))
    assert b.training["characters"] == len(text)
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"hello " * 30 + b"\xff world\n")
    with pytest.raises(bytepair.CorpusError, match="offset 180"):
        train_wordpiece(str(bad), vocab_size=50, progress=False)
    c = train_wordpiece(str(bad), vocab_size=50, errors="replace", progress=False)
    assert c.token_to_id("world") is not None or c.token_to_id("w") is not None


@pytest.mark.parametrize("algorithm", ["score", "hf"])
def test_training_summary_is_what_tokenizers_makes_of_the_text(algorithm: str) -> None:
    """tokens and [UNK] tokens of the training summary (counted in Rust from the word counts)
    equal what Hugging Face's encoder makes of the training text with the trained vocabulary."""
    from tokenizers import Tokenizer

    from bytepair.formats.hf_wordpiece import wordpiece_to_hf

    text = (pathlib.Path(__file__).parent / "data" / "multilingual.txt").read_text(encoding="utf-8") + " x" * 3 + " " + "a" * 150
    tok = train_wordpiece_from_iterator([text], vocab_size=300, algorithm=algorithm, min_frequency=3, progress=False)
    hf = Tokenizer.from_str(json.dumps(wordpiece_to_hf(tok)))
    ids = hf.encode(text, add_special_tokens=False).ids
    info = tok.training
    assert info["tokens"] == len(ids)
    assert info["unk_tokens"] == ids.count(tok.vocab["[UNK]"]) > 0
    assert info["text_bytes"] == len(text.encode("utf-8"))
