"""The fast tokenizer.json reader (``bytepair.formats._hf_fast``, Rust ``hfjson``) against the
full Python reader: the same tokenizer on good files, and on broken or odd files the same
error (type and message, word for word) or the same tokenizer, for every entry point.

The reference is each entry point with the fast reader switched off, i.e. the full reader."""

from __future__ import annotations

import contextlib
import json
import pathlib
import shutil
import warnings
from collections.abc import Callable, Iterator
from typing import Any
from unittest import mock

import pytest
import tokenizers
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.formats import _hf_fast, gpt2, hf
from tests.interop_texts import DATA, texts

FIXTURES = ["hf_gpt2_style", "hf_split_style", "hf_transformers_gpt2"]
SAMPLE = "Hello, world! 12345 ünïcödé 漢字かな العربية\n  def f(x): return x**2 <|endoftext|><|eot_id|>"


def content(tok: bytepair.Tokenizer) -> tuple[Any, ...]:
    return (
        tok._vocab,
        tok._merges,
        tok._special_tokens,
        tok._pattern,
        tok.pattern_name,
        tok.normalization,
        tok._roles,
        tok._reserved,
        tok.encode(SAMPLE, allowed_special="all"),
    )


def outcome(fn: Callable[[pathlib.Path], Any], path: pathlib.Path) -> tuple[Any, ...]:
    """What ``fn(path)`` does: its tokenizer's content or its error, and its warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            tok = fn(path)
            result: tuple[Any, ...] = ("ok", type(tok).__name__, content(tok) if isinstance(tok, bytepair.Tokenizer) else None)
        except Exception as e:  # noqa: BLE001 - any exception must be the same one
            result = ("error", type(e), str(e))
    return (*result, [(w.category, str(w.message)) for w in caught])


@contextlib.contextmanager
def full_reader_only() -> Iterator[None]:
    with mock.patch.object(_hf_fast, "load", lambda *args, **kwargs: None):
        yield


ENTRY_POINTS: dict[str, Callable[[pathlib.Path], Any]] = {
    "load_hf": bytepair.load_hf,
    "load": bytepair.load,
    "load(dir)": lambda p: bytepair.load(p.parent),
    "load_pretrained": lambda p: hf.load_pretrained(p.parent),
}


def assert_same_as_full_reader(path: pathlib.Path) -> None:
    for name, fn in ENTRY_POINTS.items():
        got = outcome(fn, path)
        with full_reader_only():
            want = outcome(fn, path)
        assert got == want, name
    # The fast reader alone: None, or what the full reader does.
    fast = outcome(lambda p: _hf_fast.load(str(p)), path)
    if fast[:2] != ("ok", "NoneType"):
        assert fast == outcome(lambda p: hf.from_hf_dict(gpt2.read_json(str(p)), where=str(p)), path)


# ------------------------------------------------------------------ good files


def test_the_fast_reader_reads_the_fixtures(tmp_path: pathlib.Path) -> None:
    for fixture in FIXTURES:
        path = DATA / fixture / "tokenizer.json"
        fast = _hf_fast.load(str(path))
        assert fast is not None, fixture
        assert content(fast) == content(hf.from_hf_dict(gpt2.read_json(str(path)), where=str(path)))
        hf_tok = tokenizers.Tokenizer.from_file(str(path))
        for text in texts():
            assert fast.encode(text, allowed_special="all") == hf_tok.encode(text, add_special_tokens=False).ids
    # With roles from the directory's config files.
    d = tmp_path / "gpt2"
    shutil.copytree(DATA / "hf_transformers_gpt2", d)
    assert_same_as_full_reader(d / "tokenizer.json")
    assert bytepair.load(d).special_tokens_map == {"bos": "<|endoftext|>", "eos": "<|endoftext|>"}


def test_entry_points_take_the_fast_reader(tmp_path: pathlib.Path) -> None:
    d = tmp_path / "m"
    shutil.copytree(DATA / "hf_transformers_gpt2", d)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the full reader ran")

    with mock.patch.object(hf, "from_hf_dict", refuse), mock.patch.object(gpt2, "read_json", refuse):
        for fn in (bytepair.load_hf, bytepair.load):
            assert fn(DATA / "hf_split_style/tokenizer.json").encode("hello there") == bytepair.load(
                DATA / "hf_split_style/tokenizer.json"
            ).encode("hello there")
    with mock.patch.object(hf, "from_hf_dict", refuse):
        for tok in (bytepair.load(d), hf.load_pretrained(d), bytepair.load(d / "tokenizer.json")):
            assert isinstance(tok, bytepair.Tokenizer)


@pytest.mark.parametrize("name", ["r50k_base", "trained"])
def test_rank_models_come_back_as_rank_models(name: str, tmp_path: pathlib.Path) -> None:
    if name == "trained":
        tok = bytepair.train_from_iterator(texts() * 3, vocab_size=600, pattern="gpt4", special_tokens=["<|eot|>"])
        ranks = bytepair.Tokenizer._from_ranks(
            {b: i for i, b in tok._vocab.items()}, special_tokens=tok.special_tokens, pattern=tok.pattern
        )
    else:
        ranks = bytepair.get_encoding(name)
    path = tmp_path / "tokenizer.json"
    bytepair.save_hf(ranks, path)
    fast = _hf_fast.load(str(path))
    assert fast is not None and fast._merges is None
    assert fast == ranks
    for text in texts():
        assert fast.encode(text, allowed_special="all") == ranks.encode(text, allowed_special="all")
    assert_same_as_full_reader(path)


# ------------------------------------------------------------------ odd and broken files

SPLIT = (DATA / "hf_split_style/tokenizer.json").read_text(encoding="utf-8")  # indented, as tokenizers writes
GPT2 = (DATA / "hf_gpt2_style/tokenizer.json").read_text(encoding="utf-8")
C = json.dumps(json.loads(SPLIT), ensure_ascii=False, separators=(",", ":"))  # compact, for text edits


def _doc_edit(base: str, change: Callable[[dict[str, Any]], object]) -> str:
    doc = json.loads(base)
    change(doc)
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], object]:
    def change(doc: dict[str, Any]) -> None:
        node: Any = doc
        keys = path.split(".")
        for k in keys[:-1]:
            node = node[int(k)] if k.isdigit() else node[k]
        node[int(keys[-1]) if keys[-1].isdigit() else keys[-1]] = value

    return change


def _first_key(base: str) -> str:
    return next(iter(json.loads(base)["model"]["vocab"]))


EDITS: dict[str, str] = {
    # Text edits, as a file may have them.
    "as tokenizers writes it": SPLIT,
    "escaped keys": C.replace('"Ġt"', '"\\u0120t"').replace('"in"', '"\\u0069n"'),
    "escaped merges": C.replace('["Ġ","t"]', '["\\u0120","t"]'),
    "duplicate vocab key": C.replace('"vocab":{', '"vocab":{"Ġt":9999,', 1),
    "duplicate key elsewhere": C.replace('"version":', '"normalizer":null,"version":', 1),
    "model twice": C.replace('"model":{', '"model":{"type":"BPE"},"model":{', 1),
    "vocab twice": C.replace('"vocab":{', '"vocab":{},"vocab":{', 1),
    "merges twice": C.replace('"merges":[', '"merges":[],"merges":[', 1),
    "id as float": C.replace('"Ġt":', '"Ġt":1.0,"x":', 1),
    "id -0": C.replace('":0,', '":-0,', 1),
    "id with exponent": C.replace('":1,', '":1e0,', 1),
    "lone surrogate key": C.replace('"vocab":{', '"vocab":{"\\ud800":5000,', 1),
    "surrogate pair key": C.replace('"vocab":{', '"vocab":{"\\ud83d\\ude00":5000,', 1),
    "raw control character": C.replace('"Ġt"', '"Ġ\tt"', 1),
    "bad escape": C.replace('"Ġt"', '"Ġ\\qt"', 1),
    "invalid UTF-8": "",  # made below
    "BOM": "\ufeff" + C,
    "trailing garbage": C + " x",
    "NaN in the rest": C.replace('"version":"1.0"', '"version":NaN', 1),
    "deep nesting in the rest": C.replace('"version":"1.0"', '"version":' + "[" * 250 + "]" * 250, 1),
    "truncated": C[: len(C) // 2],
    "whitespace everywhere": json.dumps(json.loads(C), indent=3, ensure_ascii=True),
    # Edits of the parsed document.
    "merges as strings": _doc_edit(SPLIT, lambda d: d["model"].update(merges=[" ".join(m) for m in d["model"]["merges"]])),
    "mixed merge forms": _doc_edit(
        SPLIT, lambda d: d["model"].update(merges=[" ".join(m) if n % 2 else m for n, m in enumerate(d["model"]["merges"])])
    ),
    "merge list, not ranks": _doc_edit(SPLIT, lambda d: d["model"].update(ignore_merges=False)),
    "ignore_merges, merges not the ranks'": _doc_edit(
        SPLIT, lambda d: d["model"].update(merges=d["model"]["merges"][1:2] + d["model"]["merges"][:1] + d["model"]["merges"][2:])
    ),
    "ignore_merges on a GPT-2 file": _doc_edit(GPT2, lambda d: d["model"].update(ignore_merges=True)),
    "ignore_merges = 1": _doc_edit(SPLIT, lambda d: d["model"].update(ignore_merges=1)),
    "no merges key": _doc_edit(SPLIT, lambda d: d["model"].pop("merges")),
    "no merges": _doc_edit(SPLIT, lambda d: d["model"].update(merges=[])),
    "vocab a list": _doc_edit(SPLIT, _set("model.vocab", [1, 2])),
    "merges an object": _doc_edit(SPLIT, _set("model.merges", {})),
    "model a string": _doc_edit(SPLIT, _set("model", "bpe")),
    "bytepair's own format": _doc_edit(SPLIT, lambda d: d.update(format="bytepair-tokenizer")),
    "unknown merge token": _doc_edit(SPLIT, _set("model.merges.5", ["Ġt", "zzzz"])),
    "merge makes an unknown token": _doc_edit(SPLIT, _set("model.merges.5", ["Ġ", "Ġ"])),
    "merge twice": _doc_edit(SPLIT, lambda d: d["model"]["merges"].append(d["model"]["merges"][3])),
    "merge of three": _doc_edit(SPLIT, _set("model.merges.9", ["a", "b", "c"])),
    "merge 'a  b'": _doc_edit(SPLIT, _set("model.merges.7", "a  b")),
    "merge of a number": _doc_edit(SPLIT, _set("model.merges.7", ["a", 1])),
    "duplicate id": _doc_edit(SPLIT, lambda d: d["model"]["vocab"].update({"Ġt": d["model"]["vocab"]["in"]})),
    "missing byte": _doc_edit(SPLIT, lambda d: d["model"]["vocab"].pop("Ġ")),
    "id too large": _doc_edit(SPLIT, _set("model.vocab.Ġt", 2**32)),
    "id sparse": _doc_edit(SPLIT, _set("model.vocab.Ġt", 2**31)),
    "id a string": _doc_edit(SPLIT, _set("model.vocab.Ġt", "5")),
    "id true": _doc_edit(SPLIT, _set("model.vocab.Ġt", True)),
    "not byte-level, not added": _doc_edit(SPLIT, _set("model.vocab.<é>", 900)),
    "not byte-level, added": _doc_edit(
        SPLIT,
        lambda d: (
            d["model"]["vocab"].update({"<é>": 800}),
            d["added_tokens"].append({**d["added_tokens"][0], "id": 800, "content": "<é>"}),
        ),
    ),
    "added token in vocab under another id": _doc_edit(
        SPLIT, lambda d: d["model"]["vocab"].update({d["added_tokens"][0]["content"]: d["added_tokens"][1]["id"]})
    ),
    "added token on an ordinary id": _doc_edit(SPLIT, _set("added_tokens.0.id", 300)),
    "added token far away": _doc_edit(SPLIT, _set("added_tokens.0.id", 2**31)),
    "added token is a merge part": _doc_edit(
        SPLIT, lambda d: d["added_tokens"].append({**d["added_tokens"][0], "id": d["model"]["vocab"]["Ġt"], "content": "Ġt"})
    ),
    "added token an ordinary text": _doc_edit(
        SPLIT, lambda d: d["added_tokens"].append({**d["added_tokens"][0], "id": 5000, "content": "Ġt"})
    ),
    "unsupported normalizer": _doc_edit(SPLIT, _set("normalizer", {"type": "Strip"})),
    "unsupported and broken": _doc_edit(SPLIT, _set("normalizer", {"type": "Strip"})).replace('"Ġt":', '"Ġt":1.5,"y":', 1),
    "bad pattern": _doc_edit(SPLIT, _set("pre_tokenizer.pretokenizers.0.pattern", {"Regex": "(?<=a)b("})),
    "WordPiece": _doc_edit(SPLIT, _set("model.type", "WordPiece")),
    "dropout": _doc_edit(SPLIT, _set("model.dropout", 0.1)),
}


@pytest.mark.parametrize("name", list(EDITS))
def test_odd_and_broken_files_read_as_the_full_reader_reads_them(name: str, tmp_path: pathlib.Path) -> None:
    path = tmp_path / "tokenizer.json"
    if name == "invalid UTF-8":
        path.write_bytes(C.encode().replace("Ġt".encode(), b"\xc4\xff", 1))
    else:
        assert EDITS[name] not in (C, GPT2) or name == "as tokenizers writes it", name  # the edit changed something
        path.write_text(EDITS[name], encoding="utf-8")
    assert_same_as_full_reader(path)


def test_config_files_are_read_as_the_full_reader_reads_them(tmp_path: pathlib.Path) -> None:
    d = tmp_path / "m"
    shutil.copytree(DATA / "hf_transformers_gpt2", d)
    config = d / "tokenizer_config.json"
    for text in ("{", '{"bos_token": "<|endoftext|>", "bos_token": "x"}', '{"eos_token": "<nope>"}', "[]"):
        config.write_text(text, encoding="utf-8")
        assert_same_as_full_reader(d / "tokenizer.json")
    config.unlink()
    (d / "special_tokens_map.json").mkdir()  # unreadable
    assert_same_as_full_reader(d / "tokenizer.json")


PIECES = ['"', "\\", ",", "{", "}", "[", "]", ":", "0", "-", ".", "e", " ", "\\u0120", "\\ud800", "é", '"a b"', '["a","b"]', "Ġ"]


@settings(max_examples=60)
@given(data=st.data(), base=st.sampled_from([SPLIT, GPT2]))
def test_random_edits_read_as_the_full_reader_reads_them(data: st.DataObject, base: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    text = base
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(text)))
        kind = data.draw(st.sampled_from(["insert", "delete", "repeat"]))
        if kind == "insert":
            text = text[:at] + data.draw(st.sampled_from(PIECES)) + text[at:]
        elif kind == "delete":
            text = text[:at] + text[at + data.draw(st.integers(1, 4)) :]
        else:
            n = data.draw(st.integers(1, 40))
            text = text[:at] + text[at : at + n] + text[at:]
    path = tmp_path_factory.mktemp("edit") / "tokenizer.json"
    path.write_text(text, encoding="utf-8")
    for name in ("load_hf", "load"):
        got = outcome(ENTRY_POINTS[name], path)
        with full_reader_only():
            want = outcome(ENTRY_POINTS[name], path)
        assert got == want, name


# ------------------------------------------------------------------ the fast writer


def _export_cases() -> dict[str, bytepair.Tokenizer]:
    trained = bytepair.train_from_iterator(
        texts() * 2, vocab_size=500, pattern="gpt4", special_tokens=["<|eot|>", 'say "hi"\\', "é\n\t<ü>"], normalization="nfc"
    )
    gpt2_file = bytepair.load(DATA / "hf_gpt2_style/tokenizer.json")
    assert isinstance(gpt2_file, bytepair.Tokenizer)
    return {
        "trained, odd special texts": trained,
        "no split pattern": bytepair.train_from_iterator(texts(), vocab_size=300, pattern=None),
        "GPT-2 file (special in the vocabulary)": gpt2_file,
        "split file (rank model)": bytepair.load_hf(DATA / "hf_split_style/tokenizer.json"),
        "r50k_base": bytepair.get_encoding("r50k_base"),
        "with roles": trained.with_special_tokens(roles={"eos": "<|eot|>"}),
    }


@pytest.mark.parametrize("name", list(_export_cases()))
def test_save_hf_writes_what_json_writes(name: str, tmp_path: pathlib.Path) -> None:
    tok = _export_cases()[name]
    path = tmp_path / "tokenizer.json"
    bytepair.save_hf(tok, path)
    want = json.dumps(hf.to_hf_dict(tok), ensure_ascii=False, separators=(",", ":")) + "\n"
    assert path.read_text(encoding="utf-8") == want
    back = bytepair.load_hf(path)
    assert back.encode(SAMPLE, allowed_special="all") == tok.encode(SAMPLE, allowed_special="all")


def test_save_hf_refuses_what_to_hf_dict_refuses(tmp_path: pathlib.Path) -> None:
    base = bytepair.train_from_iterator(texts(), vocab_size=300, pattern="gpt4")
    # "Ġthe"-like: the GPT-2 string of an ordinary token, as a special token's text.
    taken = gpt2.bytes_to_unicode(base._vocab[290])
    tok = base.with_special_tokens({taken: 400, "<ok>": 401})
    with pytest.raises(bytepair.FormatError) as want:
        hf.to_hf_dict(tok)
    assert "reads as an ordinary token's string" in str(want.value)
    with pytest.raises(bytepair.FormatError) as got:
        bytepair.save_hf(tok, tmp_path / "tokenizer.json")
    assert str(got.value) == str(want.value)
    assert not (tmp_path / "tokenizer.json").exists()
    with pytest.raises(TypeError, match="expected a Tokenizer"):
        bytepair.save_hf("not a tokenizer", tmp_path / "tokenizer.json")  # type: ignore[arg-type]
