"""WordPiece: BERT normalization, pre-tokenization, encoding, offsets and decoding, against
Hugging Face `tokenizers` (the owner of the behaviour) and the naive greedy encoder of oracle.py."""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, normalizers, pre_tokenizers, processors, trainers

import bytepair
from bytepair import WordPieceTokenizer, _core
from bytepair.formats.hf_wordpiece import wordpiece_from_hf, wordpiece_to_hf
from bytepair.tokenizer import Tokenizer
from tests import oracle

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

# A little of many scripts, so that a trained vocabulary has pieces of each.
SENTENCES = [
    "The café's naïve façade — Ångström, Øresund, Straße; ÉCOLE élève.",
    "Привет, мир! Съешь же ещё этих мягких французских булок.",
    "مرحبا بالعالم، هذه جملة عربية للاختبار.",
    "नमस्ते दुनिया, यह एक परीक्षण वाक्य है।",
    "我们今天去公园散步。中文分词测试，汉字。日本語のテキストです。",
    "한국어 문장을 시험합니다. 안녕하세요!",
    "Γειά σου Κόσμε· ελληνικά κείμενα ΣΊΣΥΦΟΣ.",
    "emoji 😀🎉👍🏽 and symbols ©®™ ½ ∑ ≠ → «quotes» “smart” ‘single’",
    "don't won't it's we've they're I'm 3.14 1,000,000 (a) [b] {c} <d> @e #f $g %h ^i &j *k",
    "İstanbul ǅemal ﬁne ﬀ ℌ Ⅻ ① ｆｕｌｌｗｉｄｔｈ",
]

# Characters from the scripts above plus control characters, whitespace of all kinds,
# combining marks and punctuation: what the properties draw texts from.
ALPHABET = sorted(
    set("".join(SENTENCES))
    | set("\x00\x01\x07\x1b\x7f\x85\xa0\u200b\u200d\u2028\u3000\ufeff\ufffd\t\n\r \u0301\u0308\u0327\u093f")
    | set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~¡¿§¶·")
)
word_chars = st.sampled_from(ALPHABET)
texts = st.lists(
    st.one_of(
        st.text(word_chars, max_size=12),
        st.sampled_from(SENTENCES),
        st.sampled_from(SPECIALS),
        st.text(st.characters(blacklist_categories=("Cs", "Cn")), max_size=6),
    ),
    max_size=8,
).map(" ".join)

bert_options = st.fixed_dictionaries(
    {
        "clean_text": st.booleans(),
        "handle_chinese_chars": st.booleans(),
        "strip_accents": st.sampled_from([None, True, False]),
        "lowercase": st.booleans(),
    }
)


@functools.cache
def hf_trained(lowercase: bool = True, vocab_size: int = 600) -> HFTokenizer:
    tok = HFTokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=lowercase)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    with open(bytepair.__file__.replace("__init__.py", "data/tinyshakespeare.txt"), encoding="utf-8") as f:
        shakespeare = f.read(60_000)
    trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=SPECIALS, show_progress=False)
    tok.train_from_iterator([shakespeare] + SENTENCES * 5, trainer)
    vocab = tok.get_vocab()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    return tok


def hf_json(tok: HFTokenizer) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(tok.to_str())
    return data


def ours(tok: HFTokenizer) -> WordPieceTokenizer:
    return wordpiece_from_hf(hf_json(tok), path="test")


def with_options(tok: HFTokenizer, options: dict[str, Any], max_chars: int = 100) -> HFTokenizer:
    data = hf_json(tok)
    data["normalizer"].update(options)
    data["model"]["max_input_chars_per_word"] = max_chars
    return HFTokenizer.from_str(json.dumps(data))


# ---------------------------------------------------------------- normalization + pre-tokenization


@given(text=texts, options=bert_options)
def test_pre_tokenization_matches_hf(text: str, options: dict[str, Any]) -> None:
    norm = normalizers.BertNormalizer(**options)
    words = [w for w, _ in pre_tokenizers.BertPreTokenizer().pre_tokenize_str(norm.normalize_str(text))]
    # Offsets into the original text: a one-token WordLevel model makes every word one [UNK].
    level = HFTokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    level.normalizer = norm
    level.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    offsets = level.encode(text, add_special_tokens=False).offsets
    strip = options["lowercase"] if options["strip_accents"] is None else options["strip_accents"]
    got = _core.bert_pre_tokenize(text, **{**options, "strip_accents": strip})
    assert [w for w, _ in got] == words
    assert [o for _, o in got] == offsets


def test_every_code_point_alone_matches_hf() -> None:
    """One string holding every code point once (between spaces): the tables cover them all."""
    text = " ".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    norm = normalizers.BertNormalizer()
    words = [w for w, _ in pre_tokenizers.BertPreTokenizer().pre_tokenize_str(norm.normalize_str(text))]
    assert [w for w, _ in _core.bert_pre_tokenize(text)] == words


# ---------------------------------------------------------------- encoding


@given(text=texts, options=bert_options, pair=st.none() | texts, special=st.booleans())
def test_encode_matches_hf(text: str, options: dict[str, Any], pair: str | None, special: bool) -> None:
    hf = with_options(hf_trained(), options)
    tok = wordpiece_from_hf(hf_json(hf), path="test")
    if pair is not None and not special:
        pair = None
    want = hf.encode(text, pair, add_special_tokens=special)
    ids, offsets = tok.encode_with_offsets(text, pair, add_special_tokens=special)
    assert ids == want.ids
    assert offsets == want.offsets
    assert tok.tokenize(text) == hf.encode(text, add_special_tokens=False).tokens


@given(text=texts, max_chars=st.integers(1, 12))
def test_encode_max_chars_matches_hf(text: str, max_chars: int) -> None:
    hf = with_options(hf_trained(), {}, max_chars)
    tok = wordpiece_from_hf(hf_json(hf), path="test")
    assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids


small_vocab = st.lists(st.text("abc", min_size=1, max_size=4).map(lambda s: s) | st.text("abc", min_size=1, max_size=4).map("##".__add__), max_size=20)


@given(
    vocab=small_vocab,
    words=st.lists(st.text("abcd", min_size=1, max_size=30), max_size=6),
    max_chars=st.integers(1, 40),
)
def test_encode_matches_naive_greedy(vocab: list[str], words: list[str], max_chars: int) -> None:
    tokens = list(dict.fromkeys(["[UNK]", "a"] + vocab))
    tok = WordPieceTokenizer(tokens, max_input_chars_per_word=max_chars)
    text = " ".join(words)
    want = [t for w in words for t in oracle.wordpiece_word(w, tokens, "[UNK]", "##", max_chars)]
    assert tok.tokenize(text) == want
    # the same vocabulary in tokenizers
    hf = HFTokenizer(models.WordPiece({t: i for i, t in enumerate(tokens)}, unk_token="[UNK]", max_input_chars_per_word=max_chars))
    hf.normalizer = normalizers.BertNormalizer()
    hf.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids


def test_long_word_with_raised_limit() -> None:
    tokens = ["[UNK]", "a", "b", "##a", "##b", "##ab", "##aab", "##bba", "aab"]
    tok = WordPieceTokenizer(tokens, max_input_chars_per_word=1_000_000)
    word = "aab" * 3000 + "b"
    assert tok.tokenize(word) == oracle.wordpiece_word(word, tokens, "[UNK]", "##", 1_000_000)


@given(batch=st.lists(texts, max_size=6), threads=st.sampled_from([None, 1, 2, 3]), special=st.booleans())
def test_batch_is_one_by_one(batch: list[str], threads: int | None, special: bool) -> None:
    tok = ours(hf_trained())
    assert tok.encode_batch(batch, num_threads=threads, add_special_tokens=special) == [
        tok.encode(t, add_special_tokens=special) for t in batch
    ]
    assert tok.encode_batch_with_offsets(batch, num_threads=threads) == [tok.encode_with_offsets(t) for t in batch]


def test_lone_surrogates_are_dropped_like_replacement_chars() -> None:
    tok = ours(hf_trained())
    assert tok.encode_with_offsets("ab\ud800cd") == tok.encode_with_offsets("ab\ufffdcd")


# ---------------------------------------------------------------- decoding


@given(ids=st.lists(st.integers(0, 599), max_size=30), skip=st.booleans())
def test_decode_matches_hf(ids: list[int], skip: bool) -> None:
    hf = hf_trained()
    tok = ours(hf)
    assert tok.decode(ids, skip_special_tokens=skip) == hf.decode(ids, skip_special_tokens=skip)


def test_decode_unknown_id() -> None:
    tok = ours(hf_trained())
    with pytest.raises(bytepair.UnknownTokenError, match="600"):
        tok.decode([1, 600])
    assert tok.id_to_token(600) is None and tok.token_to_id("no such token") is None


# ---------------------------------------------------------------- files and interop


def test_save_load_roundtrip(tmp_path: Any) -> None:
    tok = WordPieceTokenizer(
        ours(hf_trained(lowercase=False)).vocab, lowercase=False, strip_accents=True, max_input_chars_per_word=7
    )
    path = tmp_path / "wp.json"
    tok.save(path)
    back = bytepair.load(str(path))
    assert isinstance(back, WordPieceTokenizer)
    assert back.vocab == tok.vocab and back.normalizer_options == tok.normalizer_options
    assert back.max_input_chars_per_word == 7 and back.template == tok.template
    for s in SENTENCES:
        assert back.encode_with_offsets(s, add_special_tokens=True) == tok.encode_with_offsets(s, add_special_tokens=True)
    with pytest.raises(bytepair.FormatError, match="WordPiece"):
        Tokenizer.from_file(path)


@given(text=texts)
def test_hf_json_roundtrip(text: str) -> None:
    hf = hf_trained(lowercase=False)
    back = HFTokenizer.from_str(json.dumps(wordpiece_to_hf(ours(hf))))
    assert back.encode(text).ids == hf.encode(text).ids
    assert back.encode(text).offsets == hf.encode(text).offsets


@pytest.mark.parametrize("lowercase", [True, False])
def test_save_pretrained_loads_in_transformers(tmp_path: Any, lowercase: bool) -> None:
    transformers = pytest.importorskip("transformers")
    hf = hf_trained(lowercase=lowercase)
    tok = ours(hf)
    tok.save_pretrained(tmp_path)
    auto = transformers.AutoTokenizer.from_pretrained(str(tmp_path))
    assert auto.is_fast
    for s in SENTENCES + ["[CLS] hello [MASK] world", "\x00 ctrl\x07 chars \u3000 中文"]:
        enc = auto(s, return_offsets_mapping=True)
        ids, offsets = tok.encode_with_offsets(s, add_special_tokens=True)
        assert enc["input_ids"] == ids
        assert [tuple(o) for o in enc["offset_mapping"]] == offsets
        assert auto.convert_ids_to_tokens(ids) == [tok.id_to_token(i) for i in ids]
        pair = auto(s, "second text", return_offsets_mapping=True)
        assert pair["input_ids"] == tok.encode(s, "second text", add_special_tokens=True)


def test_bert_vocab_roundtrip(tmp_path: Any) -> None:
    from bytepair.formats.bert import dump_bert_vocab, load_bert_vocab

    tok = ours(hf_trained())
    dump_bert_vocab(tok, tmp_path / "vocab.txt")
    back = load_bert_vocab(tmp_path / "vocab.txt")
    assert back.vocab == tok.vocab
    hf = HFTokenizer(models.WordPiece.from_file(str(tmp_path / "vocab.txt"), unk_token="[UNK]"))
    hf.normalizer = normalizers.BertNormalizer()
    hf.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    for s in SENTENCES:
        assert back.encode(s) == hf.encode(s, add_special_tokens=False).ids


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("", "empty"),
        ("[UNK]\na\nb\na\n", "line 4 repeats the token 'a' of line 2"),
        ("a\nb\n", r"no unknown token \(\[UNK\], <unk>, <UNK>, \[unk\]\); name the one to use"),
        ("[UNK]\n##a\n##b\n", "no token that can start a word"),
        ("[UNK]\n\na\n", "line 2 is empty"),
    ],
)
def test_bad_vocab_txt(tmp_path: Any, content: str, match: str) -> None:
    from bytepair.formats.bert import load_bert_vocab

    path = tmp_path / "vocab.txt"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(bytepair.FormatError, match=match):
        load_bert_vocab(path)


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda d: d["model"].update(vocab={}), "empty"),
        (lambda d: d["model"]["vocab"].update({"zzz": 10_000}), "out of range"),
        (lambda d: d["model"]["vocab"].update({"zzz": -1}), "out of range"),
        (lambda d: d["model"].update(unk_token="<unk>"), "unknown token"),
        (lambda d: d.update(normalizer={"type": "NFC"}), "normalizer"),
        (lambda d: d.update(pre_tokenizer={"type": "Whitespace"}), "pre_tokenizer"),
        (lambda d: d["model"].update(type="BPE"), "model type"),
        (lambda d: d["added_tokens"].append({"id": 3, "content": "nope"}), "added token"),
    ],
)
def test_bad_hf_json(edit: Any, match: str) -> None:
    data = hf_json(hf_trained())
    edit(data)
    with pytest.raises(bytepair.FormatError, match=match):
        wordpiece_from_hf(data, path="tokenizer.json")


def test_bad_constructor_arguments() -> None:
    with pytest.raises(bytepair.VocabError, match="empty"):
        WordPieceTokenizer([])
    with pytest.raises(bytepair.VocabError, match="out of range"):
        WordPieceTokenizer({"[UNK]": 0, "a": 5})
    with pytest.raises(bytepair.BytepairError, match="max_input_chars_per_word"):
        WordPieceTokenizer(["[UNK]", "a"], max_input_chars_per_word=0)
    with pytest.raises(bytepair.VocabError, match="template"):
        WordPieceTokenizer(["[UNK]", "a"]).encode("a", add_special_tokens=True)
