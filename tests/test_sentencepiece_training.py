"""SentencePiece training (bytepair.train_unigram, train_sentencepiece(model_type="bpe")): the
model sentencepiece loads, its ids, its layout, its rules for pieces, compression against
sentencepiece's own trainer on the same text (BPE: the same model, piece for piece, on prose),
and a result that depends on neither the thread count nor how the text was cut."""

from __future__ import annotations

import io
import os
import random
import unicodedata
from typing import Any

import pytest

import bytepair
from bytepair import BytepairError, SentencePieceTokenizer, _feed
from tests.interop_texts import texts, training_text

spm = pytest.importorskip("sentencepiece")

CODE = os.path.join(os.path.dirname(__file__), "data", "spm_code.txt")


def corpus_lines() -> list[str]:
    lines = [line for part in training_text() for line in part.splitlines() if line.strip()]
    with open(CODE, encoding="utf-8") as f:
        lines += [line for line in f.read().splitlines()[:1500] if line.strip()]
    return lines


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("unigram") / "corpus.txt"
    path.write_text("\n".join(corpus_lines()) + "\n", encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def trained(corpus: str) -> dict[str, SentencePieceTokenizer]:
    out = {
        "default": bytepair.train_unigram(corpus, vocab_size=1000),
        "identity": bytepair.train_unigram(corpus, vocab_size=800, normalization="identity", add_dummy_prefix=False),
        "bytes": bytepair.train_unigram(
            corpus, vocab_size=1000, byte_fallback=True, split_digits=True, character_coverage=0.995,
            user_defined_symbols=["<sep>", "foo"], control_symbols=["<mask>"], pad_piece="<pad>",
        ),
        "suffix": bytepair.train_unigram(corpus, vocab_size=800, treat_whitespace_as_suffix=True, normalization="nfkc"),
        "spaces": bytepair.train_unigram(corpus, vocab_size=800, remove_extra_whitespaces=False),
        "bpe": bytepair.train_sentencepiece(corpus, vocab_size=1000, model_type="bpe"),
        "bpe_bytes": bytepair.train_sentencepiece(
            corpus, vocab_size=1000, model_type="bpe", byte_fallback=True, split_digits=True,
            user_defined_symbols=["<sep>"], normalization="identity",
        ),
    }
    return out


def spm_of(tok: SentencePieceTokenizer) -> Any:
    return spm.SentencePieceProcessor(model_proto=tok.to_bytes())


def test_sentencepiece_loads_the_model_and_gives_its_ids(trained: dict[str, SentencePieceTokenizer]) -> None:
    # not the last text (all of them joined, 120 KB): 32-bit sums of scores tie deep in a long
    # text where sentencepiece's do not (rust/src/unigram/NOTES.md, "Known difference")
    sample = texts()[:-1]
    for name, tok in trained.items():
        sp = spm_of(tok)
        assert sp.get_piece_size() == len(tok), name
        assert [sp.id_to_piece(i) for i in range(len(tok))] == [tok.id_to_token(i) for i in range(len(tok))], name
        for t in sample:
            assert tok.encode(t) == sp.encode(t), (name, t[:80])
            assert tok.decode(tok.encode(t)) == sp.decode(sp.encode(t)), (name, t[:80])


def test_size_and_layout(trained: dict[str, SentencePieceTokenizer]) -> None:
    assert trained["bpe"].model_type == "bpe" and len(trained["bpe"]) == 1000
    tok = trained["default"]
    assert len(tok) == 1000 and tok.model_type == "unigram"
    assert [tok.id_to_token(i) for i in range(3)] == ["<unk>", "<s>", "</s>"]
    assert (tok.unk_id, tok.bos_id, tok.eos_id, tok.pad_id) == (0, 1, 2, None)
    tok = trained["bytes"]
    assert len(tok) == 1000
    head = ["<unk>", "<s>", "</s>", "<pad>", "<mask>", "<sep>", "foo"] + [f"<0x{b:02X}>" for b in range(256)]
    assert [tok.id_to_token(i) for i in range(len(head))] == head
    assert tok.pad_id == 3
    kinds = {p: k for p, _, k in tok.pieces()}
    assert kinds["<mask>"] == "CONTROL" and kinds["<sep>"] == "USER_DEFINED" and kinds["<0x41>"] == "BYTE"
    # learned pieces come best first
    scores = [s for _, s, k in tok.pieces() if k == "NORMAL"]
    assert scores == sorted(scores, reverse=True)
    # a character the corpus lacks falls back to bytes; user-defined symbols are whole
    sp = spm_of(tok)
    for t in ["snow ☃ man", "a<sep>b foo", "12345"]:
        assert tok.encode(t) == sp.encode(t)
    assert tok.token_to_id("<0xE2>") in tok.encode("☃")
    assert tok.token_to_id("<sep>") in tok.encode("a<sep>b")


def test_pieces_follow_the_rules(trained: dict[str, SentencePieceTokenizer]) -> None:
    def script(ch: str) -> str | None:
        cat = unicodedata.category(ch)
        if cat[0] == "L":
            word = unicodedata.name(ch, "?").split()[0]
            return "HAN" if word in ("CJK", "HIRAGANA", "KATAKANA") else word
        if cat[0] == "M":
            return None
        return "COMMON"

    for name, tok in trained.items():
        suffix = name == "suffix"
        for piece, _, kind in tok.pieces():
            if kind != "NORMAL":
                continue
            assert len(piece) <= 16
            inner = piece[:-1] if suffix else piece[1:]
            assert "▁" not in inner, (name, piece)
            scripts = {s for s in map(script, piece.replace("▁", "")) if s is not None}
            assert len(scripts) <= 1, (name, piece)
            if name in ("bytes", "bpe_bytes") and len(piece) > 1:
                assert not any(unicodedata.category(c) == "Nd" for c in piece), piece


def test_no_thread_count_or_cut_changes_the_model(corpus: str, monkeypatch: pytest.MonkeyPatch) -> None:
    one = bytepair.train_unigram(corpus, vocab_size=700, num_threads=1)
    two = bytepair.train_unigram(corpus, vocab_size=700, num_threads=2)
    assert one.to_bytes() == two.to_bytes()
    monkeypatch.setattr(_feed, "_UNIT_BYTES", 97)
    monkeypatch.setattr(_feed, "_BLOCK_BYTES", 1001)
    cut = bytepair.train_unigram(corpus, vocab_size=700, num_threads=2)
    assert cut.to_bytes() == one.to_bytes()
    lines = corpus_lines()
    docs = ("\n".join(lines[i : i + 7]) for i in range(0, len(lines), 7))
    it = bytepair.train_unigram_from_iterator(docs, vocab_size=700)
    assert it.to_bytes() == one.to_bytes()


def held_out() -> list[str]:
    text = (bytepair.__path__[0] + "/data/tinyshakespeare.txt")
    with open(text, encoding="utf-8") as f:
        shakespeare = f.read()[-300_000:]
    with open(CODE, encoding="utf-8") as f:
        code = f.read().splitlines()[1500:]
    return [line for line in shakespeare.splitlines() + code if line.strip()]


@pytest.mark.parametrize("vocab", [800, 2000])
def test_compresses_as_well_as_sentencepiece(corpus: str, vocab: int) -> None:
    """Held-out bytes per token within 2 % of sentencepiece's own Unigram trainer on the same
    text with the same options (identity normalization, so that both see the same text)."""
    ours = bytepair.train_unigram(corpus, vocab_size=vocab, normalization="identity")
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        input=corpus, model_writer=model, vocab_size=vocab, model_type="unigram",
        normalization_rule_name="identity", num_threads=1, minloglevel=2,
    )
    theirs = spm.SentencePieceProcessor(model_proto=model.getvalue())
    lines = held_out()
    size = sum(len(line.encode()) for line in lines)
    ours_bpt = size / sum(map(len, ours.encode_batch(lines)))
    theirs_bpt = size / sum(map(len, theirs.encode(lines)))
    assert ours_bpt >= 0.98 * theirs_bpt, (ours_bpt, theirs_bpt)


@pytest.mark.parametrize("normalization", ["identity", "nmt_nfkc"])
def test_bpe_is_sentencepieces_own_model_on_prose(tmp_path: Any, normalization: str) -> None:
    """On prose, SentencePiece BPE training gives sentencepiece's own trainer's model: the same
    pieces with the same scores in the same order (ties: the shorter piece, then the smaller)."""
    path = tmp_path / "prose.txt"
    with open(bytepair.__path__[0] + "/data/tinyshakespeare.txt", encoding="utf-8") as f:
        path.write_text(f.read()[:300_000], encoding="utf-8")
    ours = bytepair.train_sentencepiece(str(path), vocab_size=1500, model_type="bpe", normalization=normalization)
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        input=str(path), model_writer=model, vocab_size=1500, model_type="bpe",
        normalization_rule_name=normalization, num_threads=1, minloglevel=2,
    )
    theirs = spm.SentencePieceProcessor(model_proto=model.getvalue())
    assert [(p, s) for p, s, _ in ours.pieces()] == [
        (theirs.id_to_piece(i), theirs.get_score(i)) for i in range(theirs.get_piece_size())
    ]


def test_bpe_compresses_as_well_as_sentencepiece(corpus: str) -> None:
    ours = bytepair.train_sentencepiece(corpus, vocab_size=2000, model_type="bpe", normalization="identity")
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        input=corpus, model_writer=model, vocab_size=2000, model_type="bpe",
        normalization_rule_name="identity", num_threads=1, minloglevel=2,
    )
    theirs = spm.SentencePieceProcessor(model_proto=model.getvalue())
    lines = held_out()
    ours_tokens = sum(map(len, ours.encode_batch(lines)))
    theirs_tokens = sum(map(len, theirs.encode(lines)))
    assert ours_tokens <= 1.01 * theirs_tokens, (ours_tokens, theirs_tokens)


def test_a_small_corpus_gives_what_it_has_with_a_warning() -> None:
    with pytest.warns(UserWarning, match="fewer than"):
        tok = bytepair.train_unigram_from_iterator(["abc abd abe"] * 3, vocab_size=500)
    assert 3 < len(tok) < 500
    sp = spm_of(tok)
    assert tok.encode("abc abx") == sp.encode("abc abx")


def test_a_size_below_the_characters_is_refused() -> None:
    # 26 letters and the space cover the text; 3 special pieces + 256 bytes + 27 > 280
    docs = ["the quick brown fox jumps over the lazy dog " * 3] * 20
    with pytest.raises(BytepairError, match="vocab_size=280 is too small"):
        bytepair.train_unigram_from_iterator(docs, vocab_size=280, byte_fallback=True, character_coverage=1.0)
    with pytest.warns(UserWarning, match="fewer than"):  # this text gives no 40 pieces
        tok = bytepair.train_unigram_from_iterator(docs, vocab_size=3 + 256 + 40, byte_fallback=True, character_coverage=1.0)
    assert 3 + 256 + 27 <= len(tok) < 3 + 256 + 40


def test_training_record(trained: dict[str, SentencePieceTokenizer]) -> None:
    rec = trained["default"].training
    assert rec["model"] == "unigram" and rec["pieces"] == 1000
    assert rec["seed_pieces"] > 1000 and rec["required_chars"] > 26
    sizes = [r["pieces"] for r in rec["rounds"]]
    assert sizes == sorted(sizes, reverse=True) and sizes[-1] <= 1.1 * 1000


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(vocab_size=3), "vocab_size"),
        (dict(vocab_size=100, byte_fallback=True), "vocab_size"),
        (dict(vocab_size=100, normalization="nfd"), "normalization"),
        (dict(vocab_size=100, character_coverage=0.0), "character_coverage"),
        (dict(vocab_size=100, character_coverage=1.5), "character_coverage"),
        (dict(vocab_size=100, shrinking_factor=1.0), "shrinking_factor"),
        (dict(vocab_size=100, max_piece_length=0), "max_piece_length"),
        (dict(vocab_size=100, max_piece_length=256), "max_piece_length"),
        (dict(vocab_size=100, seed_size=0), "seed_size"),
        (dict(vocab_size=100, num_sub_iterations=0), "num_sub_iterations"),
        (dict(vocab_size=100, user_defined_symbols="ab"), "user_defined_symbols"),
        (dict(vocab_size=100, user_defined_symbols=["<s>"]), "'<s>' is given twice"),
        (dict(vocab_size=100, control_symbols=[""]), "control_symbols"),
        (dict(vocab_size=100, unk_piece=None), "unk_piece"),
        (dict(vocab_size=100, bos_piece=""), "bos_piece"),
        (dict(vocab_size=100, num_threads=0), "num_threads"),
        (dict(vocab_size=100, model_type="word"), "model_type"),
        (dict(vocab_size=100, model_type="bpe", seed_size=10), "seed_size is an option of Unigram"),
    ],
)
def test_bad_options_are_named(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(BytepairError, match=match):
        bytepair.train_sentencepiece_from_iterator(["some text here"], **kwargs)


def test_bad_inputs() -> None:
    with pytest.raises(TypeError):
        bytepair.train_unigram_from_iterator("one string", vocab_size=100)
    with pytest.raises(FileNotFoundError):
        bytepair.train_unigram("/no/such/file.txt", vocab_size=100)
    with pytest.raises(BytepairError, match="errors"):
        bytepair.train_unigram("/no/such/file.txt", vocab_size=100, errors="ignore")


def test_random_texts_round_trip_through_sentencepiece() -> None:
    rng = random.Random(5)
    alphabet = "abcdeé ÅΩжあ漢 12,.\t"
    docs = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 40))) for _ in range(300)]
    tok = bytepair.train_unigram_from_iterator(docs, vocab_size=300, byte_fallback=True, character_coverage=1.0)
    assert len(tok) == 300
    sp = spm_of(tok)
    for d in docs[:100] + ["zzz ☃ q", "   ", ""]:
        assert tok.encode(d) == sp.encode(d), d
        assert tok.decode(tok.encode(d)) == sp.decode(sp.encode(d))
