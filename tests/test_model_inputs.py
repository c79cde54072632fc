"""Model inputs (``tok(...)``, ``pad``, ``decode``) against transformers, on a zoo of model
directories built offline (tests/model_zoo.py): bytepair.load(dir) must give exactly what
``AutoTokenizer.from_pretrained(dir)`` gives, and so must AutoTokenizer on bytepair's
``save_pretrained`` output. transformers is the oracle; no expected id is written here."""

from __future__ import annotations

import json
import os
import warnings
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.errors import BytepairError, FormatError
from tests import model_zoo

transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

ZOO = list(model_zoo.ZOO)


@pytest.fixture(scope="module")
def zoo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("zoo")
    return {name: build(str(root / name)) for name, build in model_zoo.ZOO.items()}


_LOADED: dict[str, tuple[Any, Any]] = {}


def pair_of(zoo: dict[str, str], name: str) -> tuple[Any, Any]:
    """(bytepair's tokenizer, transformers') of a zoo directory, made once."""
    key = zoo[name]
    if key not in _LOADED:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            hf = transformers.AutoTokenizer.from_pretrained(key)
        _LOADED[key] = (bytepair.load(key), hf)
    return _LOADED[key]


def plain(value: Any) -> Any:
    """Outputs as plain lists (NumPy arrays checked for int64 first), offsets as lists."""
    if hasattr(value, "dtype"):
        assert str(value.dtype) == "int64"
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def run(tok: Any, args: tuple[Any, ...], kw: dict[str, Any]) -> tuple[str, Any]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = tok(*args, **kw)
    except BaseException as e:  # tokenizers panics (PanicException is a BaseException)
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        return "error", e
    return "ok", {k: plain(v) for k, v in out.items()}


def special_count(tok: Any, pair: bool) -> int:
    return int(tok.num_special_tokens_to_add(pair))


def check_same(zoo: dict[str, str], name: str, args: tuple[Any, ...], **kw: Any) -> None:
    ours, theirs = pair_of(zoo, name)
    want_kind, want = run(theirs, args, kw)
    got_kind, got = run(ours, args, kw)
    pair = len(args) > 1 and args[1] is not None and (not isinstance(args[1], str) or args[1] != "")
    trunc = kw.get("truncation")
    limit = kw.get("max_length")
    if trunc is None and limit is not None and not kw.get("padding"):
        trunc = True  # transformers: max_length alone truncates
    if (
        trunc not in (None, False, "do_not_truncate")
        and limit is not None
        and kw.get("add_special_tokens", True)
        and special_count(ours, pair) > limit
    ):
        # transformers silently skips truncation here; bytepair refuses, naming max_length
        assert got_kind == "error" and isinstance(got, BytepairError), (name, args, kw, got)
        assert "max_length" in str(got)
        return
    if want_kind == "error":
        assert got_kind == "error", f"{name} {args} {kw}: transformers raised {want!r}, bytepair gave {got}"
        assert isinstance(got, BytepairError), got
        return
    assert got_kind == "ok", f"{name} {args} {kw}: bytepair raised {got!r}, transformers gave {want}"
    assert got == want, f"{name} {args} {kw}"


TEXTS = [
    "Hello world!",
    "The quick brown fox jumps over the lazy dog. " * 3,
    "naïve café 東京 🙂 tokens",
    "a [L] b  [R]  c word xword <custom> <both> <mask>  end",
    "",
    "   spaces\n\nand\ttabs   ",
]
PAIRS = ["pair text here", "Padding and truncation", "x", "hello <custom> [R] world"]


@pytest.mark.parametrize("name", ZOO)
@pytest.mark.parametrize("text", TEXTS)
def test_single_text(zoo: dict[str, str], name: str, text: str) -> None:
    check_same(zoo, name, (text,), return_offsets_mapping=True, return_special_tokens_mask=True, return_length=True)
    check_same(zoo, name, (text,), add_special_tokens=False, return_offsets_mapping=True)
    check_same(zoo, name, (text,), return_token_type_ids=True, return_attention_mask=False)


@pytest.mark.parametrize("name", ZOO)
def test_pairs(zoo: dict[str, str], name: str) -> None:
    for text, pair in zip(TEXTS, PAIRS * 2):
        check_same(zoo, name, (text, pair), return_offsets_mapping=True, return_special_tokens_mask=True,
                   return_token_type_ids=True)
        check_same(zoo, name, (text, pair), add_special_tokens=False, return_token_type_ids=True)
    check_same(zoo, name, (TEXTS, PAIRS + PAIRS[:2]), return_token_type_ids=True, padding=True)


@pytest.mark.parametrize("name", ZOO)
@pytest.mark.parametrize("padding", [False, True, "longest", "max_length", "do_not_pad"])
@pytest.mark.parametrize("truncation", [None, False, True, "longest_first", "only_first", "only_second", "do_not_truncate"])
def test_batches_every_mode(zoo: dict[str, str], name: str, padding: Any, truncation: Any) -> None:
    for max_length in (None, 6, 12):
        check_same(zoo, name, (TEXTS,), padding=padding, truncation=truncation, max_length=max_length,
                   return_special_tokens_mask=True, return_offsets_mapping=True)
        check_same(zoo, name, (TEXTS[:4], PAIRS), padding=padding, truncation=truncation, max_length=max_length,
                   return_token_type_ids=True)


@pytest.mark.parametrize("name", ZOO)
def test_overflow_stride_and_numpy(zoo: dict[str, str], name: str) -> None:
    long = TEXTS[1]
    for stride in (0, 1, 3):
        check_same(zoo, name, (long,), truncation=True, max_length=9, stride=stride, return_overflowing_tokens=True,
                   return_offsets_mapping=True, return_special_tokens_mask=True)
        check_same(zoo, name, (TEXTS,), truncation=True, max_length=9, stride=stride, return_overflowing_tokens=True,
                   padding=True, return_tensors="np")
        check_same(zoo, name, (long, long[:40]), truncation=True, max_length=14, stride=stride,
                   return_overflowing_tokens=True, return_token_type_ids=True)
    check_same(zoo, name, (long,), return_tensors="np")
    # max_length == the template's tokens: the kept rows are only those, the overflow longer;
    # padding goes to the longest kept row (overflow rows are not counted)
    ours, _ = pair_of(zoo, name)
    check_same(zoo, name, (["a", "hello world"],), truncation=True, max_length=special_count(ours, False),
               return_overflowing_tokens=True, padding=True, return_special_tokens_mask=True)
    check_same(zoo, name, (TEXTS,), padding="max_length", max_length=40, pad_to_multiple_of=8, return_tensors="np",
               truncation=True)
    check_same(zoo, name, (TEXTS,), padding=True, pad_to_multiple_of=5, padding_side="left")
    check_same(zoo, name, (TEXTS,), padding=True, pad_to_multiple_of=5, padding_side="right")
    ours, _ = pair_of(zoo, name)
    with pytest.raises(BytepairError, match="padding"):
        ours(TEXTS, return_tensors="np")  # ragged rows


texts = st.lists(
    st.one_of(
        st.text(st.characters(codec="utf-8"), max_size=12),
        st.sampled_from(["[L]", "[R]", "word", "<custom>", "<both>", "<mask>", "<s>", " ", "  ", "\n", "é", "東", "🙂", "x"]),
    ),
    max_size=8,
).map("".join)


@pytest.mark.parametrize("name", ZOO)
@settings(max_examples=max(5, settings().max_examples // 5))
@given(
    batch=st.lists(st.tuples(texts, texts), min_size=1, max_size=3),
    use_pair=st.booleans(),
    max_length=st.one_of(st.none(), st.integers(0, 24)),
    stride=st.integers(0, 6),
    padding=st.sampled_from([False, True, "max_length"]),
    truncation=st.sampled_from([None, True, "only_first", "only_second", False]),
    overflow=st.booleans(),
    multiple=st.one_of(st.none(), st.integers(1, 4)),
    batched=st.booleans(),
)
def test_property_against_transformers(
    zoo: dict[str, str], name: str, batch: list[tuple[str, str]], use_pair: bool, max_length: int | None,
    stride: int, padding: Any, truncation: Any, overflow: bool, multiple: int | None, batched: bool,
) -> None:
    a = [t for t, _ in batch] if batched else batch[0][0]
    b = ([p for _, p in batch] if batched else batch[0][1]) if use_pair else None
    check_same(zoo, name, (a, b), max_length=max_length, stride=stride, padding=padding, truncation=truncation,
               return_overflowing_tokens=overflow, pad_to_multiple_of=multiple, return_offsets_mapping=True,
               return_special_tokens_mask=True, return_token_type_ids=True, return_length=True)


@pytest.mark.parametrize("name", ZOO)
@settings(max_examples=max(5, settings().max_examples // 5))
@given(text=texts, skip=st.booleans())
def test_encode_decode_against_transformers(zoo: dict[str, str], name: str, text: str, skip: bool) -> None:
    ours, theirs = pair_of(zoo, name)
    ids = theirs(text, add_special_tokens=False)["input_ids"]
    if isinstance(ours, bytepair.Tokenizer):
        # encode() matches the non-special added tokens as Hugging Face does (special ones stay
        # tiktoken's "disallowed" unless allowed)
        # (lstrip / rstrip / single_word honoured there too)
        specials = {t.content for t in ours.added_tokens if t.special}
        if not any(s in text for s in specials):
            assert ours.encode(text) == ids
            assert ours.encode_ordinary(text) == ids
            assert ours.count(text) == len(ids)
        assert ours.encode(text, allowed_special="all") == ids
        assert ours.encode_batch([text, text], allowed_special="all") == [ids, ids]
        assert ours.count_batch([text], allowed_special="all") == [len(ids)]
    tokens = theirs.convert_ids_to_tokens(ids)
    assert ours.convert_ids_to_tokens(ids) == tokens
    assert ours.convert_tokens_to_ids(tokens) == theirs.convert_tokens_to_ids(tokens)
    with_specials = theirs(text)["input_ids"]
    assert ours.decode(with_specials, skip_special_tokens=skip) == theirs.decode(with_specials, skip_special_tokens=skip)
    assert ours.batch_decode([with_specials], skip_special_tokens=skip) == theirs.batch_decode(
        [with_specials], skip_special_tokens=skip
    )


def test_non_special_added_token_is_not_special(zoo: dict[str, str]) -> None:
    ours, theirs = pair_of(zoo, "added_tokens")
    text = "a <custom> b"
    want = theirs(text, add_special_tokens=False)["input_ids"]
    assert ours.encode(text) == want  # no DisallowedSpecialTokenError
    assert ours.encode_ordinary(text) == want
    assert ours.encode_batch([text, text]) == [want, want]
    custom = next(t for t in ours.added_tokens if t.content == "<custom>")
    assert not custom.special
    assert custom.id in want
    assert custom.id not in ours.all_special_ids
    with pytest.raises(bytepair.DisallowedSpecialTokenError):
        ours.encode("a </s> b")  # a special one still is
    assert ours.decode(want, skip_special_tokens=True) == theirs.decode(want, skip_special_tokens=True)


@pytest.mark.parametrize("name", ZOO)
def test_pad_against_transformers(zoo: dict[str, str], name: str) -> None:
    ours, theirs = pair_of(zoo, name)
    rows = [theirs(t)["input_ids"] for t in TEXTS]
    for kw in ({}, {"padding": "max_length", "max_length": 60}, {"pad_to_multiple_of": 8}, {"padding_side": "left"}):
        want = {k: plain(v) for k, v in theirs.pad({"input_ids": rows}, **kw).items()}
        got = {k: plain(v) for k, v in ours.pad({"input_ids": rows}, **kw).items()}
        assert got == want, kw
    want = theirs.pad([{"input_ids": r} for r in rows], return_tensors="np")
    got = ours.pad([{"input_ids": r} for r in rows], return_tensors="np")
    assert {k: plain(v) for k, v in got.items()} == {k: plain(v) for k, v in want.items()}


@pytest.mark.parametrize("name", ZOO)
def test_save_pretrained_round_trip(zoo: dict[str, str], name: str, tmp_path: Any) -> None:
    ours, theirs = pair_of(zoo, name)
    out = tmp_path / "saved"
    ours.save_pretrained(out)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = transformers.AutoTokenizer.from_pretrained(str(out))
    reloaded = bytepair.load(out)
    assert reloaded.model_max_length == ours.model_max_length
    assert reloaded.padding_side == ours.padding_side
    assert reloaded.truncation_side == ours.truncation_side
    assert reloaded.post_processor == ours.post_processor
    assert reloaded.added_tokens == ours.added_tokens
    assert reloaded.chat_template == ours.chat_template
    assert again.model_max_length == theirs.model_max_length
    assert again.padding_side == theirs.padding_side
    for args, kw in (
        ((TEXTS,), {"padding": True, "return_offsets_mapping": True, "return_special_tokens_mask": True}),
        ((TEXTS[:4], PAIRS), {"padding": True, "truncation": True, "max_length": 10, "return_token_type_ids": True}),
        ((TEXTS[1],), {"truncation": True, "max_length": 8, "stride": 2, "return_overflowing_tokens": True}),
    ):
        want_kind, want = run(theirs, args, kw)
        again_kind, from_saved = run(again, args, kw)
        _, ours_again = run(reloaded, args, kw)
        assert want_kind == again_kind == "ok"
        assert from_saved == want, (name, kw)
        assert ours_again == want, (name, kw)


def test_save_pretrained_model_max_length(zoo: dict[str, str], tmp_path: Any) -> None:
    ours, _ = pair_of(zoo, "gpt2")
    ours.save_pretrained(tmp_path / "a", model_max_length=77)
    config = json.loads((tmp_path / "a" / "tokenizer_config.json").read_text())
    assert config["model_max_length"] == 77
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert transformers.AutoTokenizer.from_pretrained(str(tmp_path / "a")).model_max_length == 77
    assert bytepair.load(tmp_path / "a").model_max_length == 77
    trained = bytepair.train_from_iterator(model_zoo.CORPUS, vocab_size=300)
    trained.save_pretrained(tmp_path / "b")
    assert bytepair.load(tmp_path / "b").model_max_length is None  # no limit, written as 1e30
    with pytest.raises(BytepairError, match="model_max_length"):
        trained.save_pretrained(tmp_path / "c", model_max_length=-1)


def test_template_kept_through_save_pretrained(zoo: dict[str, str], tmp_path: Any) -> None:
    """The issue's case: a BOS TemplateProcessing dropped by save_pretrained."""
    ours, theirs = pair_of(zoo, "llama3")
    ours.save_pretrained(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = transformers.AutoTokenizer.from_pretrained(str(tmp_path))
    assert again("hello")["input_ids"] == theirs("hello")["input_ids"]
    assert again("hello")["input_ids"][0] == theirs.bos_token_id


def test_reserved_slots_and_roles_through_save_pretrained(tmp_path: Any) -> None:
    tok = bytepair.train_from_iterator(
        model_zoo.CORPUS, vocab_size=300, special_tokens=["<|endoftext|>"], reserved_special_tokens=3
    )
    tok = tok.with_special_tokens(["<pad>"], roles={"pad": "<pad>", "eos": "<|endoftext|>"})
    assert len(tok.reserved_special_tokens) == 2
    tok.save_pretrained(tmp_path)
    back = bytepair.load(tmp_path)
    assert isinstance(back, bytepair.Tokenizer)
    assert back.special_tokens_map == tok.special_tokens_map
    assert back.special_tokens == tok.special_tokens
    assert back.reserved_special_tokens == tok.reserved_special_tokens
    # the next special token claims the next reserved slot, not a fresh id
    assert back.with_special_tokens(["<new>"]).special_tokens == tok.with_special_tokens(["<new>"]).special_tokens


# ---------------------------------------------------------------------------------- bad input


def _edit_tokenizer_json(src: str, dst: Any, change: Any) -> str:
    import shutil

    shutil.copytree(src, dst)
    p = os.path.join(dst, "tokenizer.json")
    with open(p, encoding="utf-8") as f:
        doc = json.load(f)
    change(doc)
    with open(p, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    return str(dst)


def test_template_naming_unknown_token(zoo: dict[str, str], tmp_path: Any) -> None:
    def change(doc: dict[str, Any]) -> None:
        doc["post_processor"]["processors"][1]["single"].append({"SpecialToken": {"id": "<nope>", "type_id": 0}})

    d = _edit_tokenizer_json(zoo["llama3"], tmp_path / "d", change)
    with pytest.raises(FormatError, match=r"tokenizer\.json.*<nope>"):
        bytepair.load(d)


def test_template_id_not_in_vocabulary(zoo: dict[str, str], tmp_path: Any) -> None:
    def change(doc: dict[str, Any]) -> None:
        doc["post_processor"]["special_tokens"]["[CLS]"]["ids"] = [10**6]

    d = _edit_tokenizer_json(zoo["bert"], tmp_path / "d", change)
    with pytest.raises(FormatError, match=r"tokenizer\.json.*\[CLS\].*1000000"):
        bytepair.load(d)


def test_pair_template_for_single_sequence(zoo: dict[str, str], tmp_path: Any) -> None:
    def change(doc: dict[str, Any]) -> None:
        doc["post_processor"]["single"] = doc["post_processor"]["pair"]

    d = _edit_tokenizer_json(zoo["bert"], tmp_path / "d", change)
    with pytest.raises(FormatError, match=r"tokenizer\.json.*single template.*\$B"):
        bytepair.load(d)


def test_unknown_post_processor(zoo: dict[str, str], tmp_path: Any) -> None:
    def change(doc: dict[str, Any]) -> None:
        doc["post_processor"] = {"type": "FancyProcessing"}

    for name in ("gpt2", "bert"):
        d = _edit_tokenizer_json(zoo[name], tmp_path / name, change)
        with pytest.raises(FormatError, match=r"tokenizer\.json.*FancyProcessing"):
            bytepair.load(d)


def test_max_length_smaller_than_specials(zoo: dict[str, str]) -> None:
    ours, theirs = pair_of(zoo, "bert")
    with pytest.raises(BytepairError, match=r"max_length=1 .*2 special tokens"):
        ours("hello world", truncation=True, max_length=1)
    with pytest.raises(BytepairError, match=r"max_length=2 .*3 special tokens"):
        ours("hello", "world", truncation=True, max_length=2)
    assert ours("hello world", truncation=True, max_length=2)["input_ids"] == theirs(
        "hello world", truncation=True, max_length=2
    )["input_ids"]


def test_bad_options_are_named(zoo: dict[str, str]) -> None:
    ours, _ = pair_of(zoo, "gpt2")
    with pytest.raises(BytepairError, match="padding"):
        ours("x", padding="longets")
    with pytest.raises(BytepairError, match="truncation"):
        ours("x", truncation="only_thrid", max_length=3)
    with pytest.raises(BytepairError, match="only_second"):
        ours("hello world", truncation="only_second", max_length=2)
    with pytest.raises(BytepairError, match="stride"):
        ours(TEXTS[1], truncation=True, max_length=4, stride=4)
    with pytest.raises(BytepairError, match="return_tensors"):
        ours("x", return_tensors="pt")
    with pytest.raises(TypeError):
        ours("x", paddding=True)  # type: ignore[call-arg]
    with pytest.raises(BytepairError, match="pad_to_multiple_of"):
        ours(TEXTS, padding="max_length", truncation=True, max_length=10, pad_to_multiple_of=4)
    nopad = bytepair.train_from_iterator(model_zoo.CORPUS, vocab_size=280)
    with pytest.raises(BytepairError, match="pad token"):
        nopad(["a", "bb"], padding=True)


def test_defaults_without_a_directory() -> None:
    """A tokenizer made in Python: no template, no limit, attention masks, no padding token."""
    tok = bytepair.train_from_iterator(model_zoo.CORPUS, vocab_size=280, special_tokens=["<pad>"])
    tok = tok.with_special_tokens(roles={"pad": "<pad>"})
    out = tok(["hello", "hello world"], padding=True)
    ids = tok.encode_batch(["hello", "hello world"])
    pad = tok.special_tokens["<pad>"]
    n = max(map(len, ids))
    assert out["input_ids"] == [r + [pad] * (n - len(r)) for r in ids]
    assert out.attention_mask == [[1] * len(r) + [0] * (n - len(r)) for r in ids]
    assert tok("hello", truncation=True)["input_ids"] == tok.encode("hello")  # no model_max_length: no limit


@pytest.mark.parametrize("name", ZOO)
def test_pickled_tokenizer_keeps_model_inputs(zoo: dict[str, str], name: str) -> None:
    """A worker process (datasets.map(num_proc=...)) gets the same template, flags and settings."""
    import pickle

    ours, _ = pair_of(zoo, name)
    again = pickle.loads(pickle.dumps(ours))
    assert again.post_processor == ours.post_processor
    assert again.added_tokens == ours.added_tokens
    assert (again.model_max_length, again.padding_side, again.chat_template) == (
        ours.model_max_length, ours.padding_side, ours.chat_template
    )
    for args, kw in (((TEXTS,), {"padding": True, "return_offsets_mapping": True}), ((TEXTS[1],), {"truncation": True})):
        assert run(again, args, kw) == run(ours, args, kw)
    check_same(zoo, name, (TEXTS,), padding=True, truncation=True)


@pytest.mark.parametrize("name", ZOO)
def test_unknown_tokens_to_ids(zoo: dict[str, str], name: str) -> None:
    ours, theirs = pair_of(zoo, name)
    for tokens in (["nope-not-a-token"], ["hello", "##zz", "[CLS]", "<s>", "Ġw"]):
        assert ours.convert_tokens_to_ids(tokens) == theirs.convert_tokens_to_ids(tokens)
    assert ours.convert_tokens_to_ids("nope-not-a-token") == theirs.convert_tokens_to_ids("nope-not-a-token")


def test_bert_vocab_txt_defaults(zoo: dict[str, str], tmp_path: Any) -> None:
    """A bare vocab.txt: BERT's defaults (template, token type ids) as BertTokenizerFast has them."""
    ours, _ = pair_of(zoo, "bert")
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(ours.convert_ids_to_tokens(range(ours.vocab_size))) + "\n", encoding="utf-8")
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "BertTokenizer"}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = transformers.AutoTokenizer.from_pretrained(str(tmp_path))
    tok = bytepair.load(vocab)
    kw: dict[str, Any] = {"padding": True, "return_special_tokens_mask": True, "return_offsets_mapping": True}
    assert run(tok, (TEXTS, PAIRS + PAIRS[:2]), kw) == run(theirs, (TEXTS, PAIRS + PAIRS[:2]), kw)
    assert run(tok, (TEXTS[1],), {"truncation": True, "max_length": 9}) == run(theirs, (TEXTS[1],), {"truncation": True, "max_length": 9})


EDGE_INPUTS = [("",), ("hello world foo",), ("a", "b"), ("", ""), ("hello world", "foo bar baz"), (["", "x"], ["", "hello world foo bar"])]


@pytest.mark.parametrize("name", ZOO)
def test_small_max_length_and_stride_grid(zoo: dict[str, str], name: str) -> None:
    """Every small max_length and stride, every strategy, with and without overflow: where
    transformers gives a result bytepair gives the same, where it raises (or panics) bytepair
    raises a BytepairError, and where it skips truncation without a word bytepair refuses."""
    for max_length in range(6):
        for stride in range(4):
            for args in EDGE_INPUTS:
                for truncation in (True, "only_first", "only_second"):
                    for overflow in (False, True):
                        check_same(zoo, name, args, max_length=max_length, stride=stride, truncation=truncation,
                                   return_overflowing_tokens=overflow, return_token_type_ids=True)


NEIGHBOURS = ["²", "½", "Ⅻ", "٣", "\u0301", "‿", "_", "a", "\u200d", "ª", "ʰ", "\u0903", "😀", "-", " ", "\u00a0", "\u3000",
              "\u2028", "\x85", "\x1c", "\x1f", "\u200b", "\t", "\n"]


def test_added_token_flags_at_every_kind_of_neighbour(zoo: dict[str, str]) -> None:
    """single_word's word characters and lstrip / rstrip's whitespace, as tokenizers has them."""
    for c in NEIGHBOURS:
        for text in (f"{c}word", f"word{c}", f"{c}word{c}", f"{c}{c}[L]{c}", f"[R]{c}{c}x", f"{c}<both>{c}"):
            check_same(zoo, "added_tokens", (text,), add_special_tokens=False, return_offsets_mapping=True)
            ours, theirs = pair_of(zoo, "added_tokens")
            assert ours.encode(text, allowed_special="all") == theirs(text, add_special_tokens=False)["input_ids"]


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("padding_side", "middle", "padding_side must be 'right' or 'left'"),
        ("truncation_side", 3, "truncation_side must be"),
        ("model_max_length", "big", "model_max_length must be a non-negative number"),
        ("model_input_names", "input_ids", "model_input_names must be a list"),
        ("chat_template", 7, "chat_template must be a string or a list"),
        ("chat_template", [{"name": "x"}], r"chat_template\[0\]"),
    ],
)
def test_bad_tokenizer_config_is_named(zoo: dict[str, str], tmp_path: Any, key: str, value: Any, message: str) -> None:
    import shutil

    for name in ("gpt2", "bert"):
        d = tmp_path / name
        shutil.copytree(zoo[name], d)
        config = json.loads((d / "tokenizer_config.json").read_text())
        config[key] = value
        (d / "tokenizer_config.json").write_text(json.dumps(config))
        with pytest.raises(FormatError, match=r"tokenizer_config\.json: " + message):
            bytepair.load(d)


def test_with_model_inputs_then_save_pretrained(tmp_path: Any) -> None:
    """A tokenizer trained here gets a BOS/EOS template and settings; transformers reads them back."""
    from bytepair.pipeline import TemplateProcessing

    tok = bytepair.train_from_iterator(model_zoo.CORPUS, vocab_size=300, special_tokens=["<s>", "</s>", "<pad>"])
    tok = tok.with_special_tokens(roles={"bos": "<s>", "eos": "</s>", "pad": "<pad>"})
    ids = tok.special_tokens
    template = TemplateProcessing.of("<s> $A </s>", "<s> $A </s> $B:1 </s>:1", {"<s>": ids["<s>"], "</s>": ids["</s>"]})
    tok2 = tok.with_model_inputs(post_processor=template, model_max_length=16, padding_side="left",
                                 model_input_names=["input_ids", "token_type_ids", "attention_mask"])
    assert tok.post_processor is None and tok.model_max_length is None  # the original is unchanged
    tok2.save_pretrained(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = transformers.AutoTokenizer.from_pretrained(str(tmp_path))
    for args, kw in (((TEXTS,), {"padding": True, "truncation": True}), ((TEXTS[:4], PAIRS), {"padding": "max_length", "truncation": True})):
        assert run(tok2, args, kw) == run(theirs, args, kw)
    with pytest.raises(BytepairError, match="1000000"):
        tok.with_model_inputs(post_processor=TemplateProcessing.of("<x> $A", None, {"<x>": 10**6}))
    with pytest.raises(BytepairError, match="padding_side"):
        tok.with_model_inputs(padding_side="up")


def test_clean_up_tokenization_spaces(zoo: dict[str, str], tmp_path: Any) -> None:
    """BERT directories often say clean_up_tokenization_spaces=true: decode cleans the whole text
    as transformers does (transformers skips it for BPE, and so does bytepair)."""
    import shutil

    texts = ["it ' s a test , isn ' t it ? yes ! i ' m sure .", "we ' re here , they ' ve gone", "a . b ' c ' d"]
    for name in ("bert", "gpt2"):
        d = tmp_path / name
        shutil.copytree(zoo[name], d)
        config = json.loads((d / "tokenizer_config.json").read_text())
        config["clean_up_tokenization_spaces"] = True
        (d / "tokenizer_config.json").write_text(json.dumps(config))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = transformers.AutoTokenizer.from_pretrained(str(d))
        ours = bytepair.load(d)
        for text in texts:
            ids = theirs(text)["input_ids"]
            for skip in (False, True):
                assert ours.decode(ids, skip_special_tokens=skip) == theirs.decode(ids, skip_special_tokens=skip)
