"""``bytepair.patch_transformers()`` against transformers itself: for every directory of the model
zoo (tests/model_zoo.py, byte-level BPE, WordPiece and the SentencePiece family), what
``AutoTokenizer.from_pretrained(dir)`` returns is the same patched and unpatched, for single
texts, pairs and batches with every padding and truncation mode, offsets, overflow and NumPy
tensors; that bytepair did the encoding is checked, not assumed; and the fallbacks (a pipeline
bytepair does not read, a probe that differs, calls bytepair does not take) are exercised."""

from __future__ import annotations

import json
import logging
import os
import pickle
import shutil
import warnings
from typing import Any

import pytest

import bytepair
from tests import model_zoo

transformers = pytest.importorskip("transformers")
pytest.importorskip("sentencepiece")
if int(transformers.__version__.split(".")[0]) < 5:  # pragma: no cover - CI installs transformers >= 5
    if os.environ.get("CI"):
        pytest.fail("CI: patch_transformers needs transformers >= 5 (pyproject's dev extra)")
    pytest.skip("patch_transformers needs transformers >= 5", allow_module_level=True)

from transformers.tokenization_utils_tokenizers import TokenizersBackend  # noqa: E402

ALL_ZOO = {**model_zoo.ZOO, **model_zoo.SPM_ZOO}
TEXTS = [
    "Hello world! It's 12345 naïve café.",
    "x",
    "",
    "   spaces    and\nnewlines\r\n\r\nend  ",
    "The quick brown fox jumps over the lazy dog, twice: the quick brown fox jumps over the lazy dog.",
    "東京 日本語 🙂🚀 <s> </s> [CLS] <|begin_of_text|> <custom> word [L] x [R] <both>",
]
FIRST, SECOND = TEXTS[:4], TEXTS[2:6]

# (args, kwargs) of tokenizer(...) calls; each is compared patched and unpatched.
CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    ((TEXTS[0],), {}),
    ((TEXTS[5],), {"add_special_tokens": False}),
    ((TEXTS[0], TEXTS[4]), {}),
    ((TEXTS,), {}),
    ((TEXTS,), {"padding": True}),
    ((TEXTS,), {"padding": "longest", "pad_to_multiple_of": 8, "return_special_tokens_mask": True, "return_length": True}),
    ((TEXTS,), {"padding": "max_length", "truncation": True}),
    ((TEXTS,), {"padding": "max_length", "truncation": True, "max_length": 9, "padding_side": "left"}),
    ((TEXTS,), {"truncation": True, "max_length": 6}),
    ((TEXTS,), {"max_length": 5}),
    ((TEXTS,), {"truncation": True, "max_length": 7, "stride": 2, "return_overflowing_tokens": True, "padding": True}),
    ((FIRST, SECOND), {"padding": True}),
    ((FIRST, SECOND), {"padding": True, "truncation": "only_second", "max_length": 12}),
    ((FIRST, SECOND), {"truncation": "longest_first", "max_length": 10, "return_token_type_ids": True}),
    ((TEXTS,), {"padding": True, "return_tensors": "np"}),
    ((TEXTS,), {"return_offsets_mapping": True, "padding": True}),
    ((TEXTS[0],), {"return_offsets_mapping": True, "return_tensors": "np"}),
]


@pytest.fixture(scope="module")
def zoo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("patch_zoo")
    return {name: build(str(root / name)) for name, build in ALL_ZOO.items()}


def auto(directory: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return transformers.AutoTokenizer.from_pretrained(directory)


def outcome(tok: Any, args: tuple[Any, ...], kw: dict[str, Any]) -> tuple[str, Any]:
    """The call's result with the value types kept (lists, tuples, arrays and their dtype), or the
    exception's type and message."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = tok(*args, **kw)
    except Exception as e:
        return "error", (type(e).__name__, str(e))
    values = {}
    for key, value in out.items():
        if hasattr(value, "dtype"):
            values[key] = ("array", str(value.dtype), value.shape, value.tolist())
        else:
            values[key] = (type(value).__name__, repr(value))
    return "ok", (list(out), values, out.n_sequences)


@pytest.fixture()
def patched() -> Any:
    handle = bytepair.patch_transformers()
    yield handle
    handle.unpatch()


@pytest.mark.parametrize("name", list(ALL_ZOO))
def test_zoo_outputs_are_the_same(zoo: dict[str, str], name: str, patched: Any) -> None:
    patched.unpatch()
    plain = auto(zoo[name])
    want = [outcome(plain, args, kw) for args, kw in CALLS]
    handle = bytepair.patch_transformers()
    try:
        for hf in (plain, auto(zoo[name])):  # a tokenizer made before the patch, and one after
            assert handle.uses_bytepair(hf), name
            for (args, kw), expected in zip(CALLS, want, strict=True):
                assert outcome(hf, args, kw) == expected, (name, args, kw)
    finally:
        handle.unpatch()


@pytest.mark.parametrize("name", list(ALL_ZOO))
def test_bytepair_does_the_encoding(zoo: dict[str, str], name: str, patched: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    hf = auto(zoo[name])
    assert patched.uses_bytepair(hf)
    # transformers' errors come from transformers (bytepair refuses the call, transformers
    # raises); and bytepair gives no offsets for the SentencePiece family yet.
    calls = [(args, kw) for args, kw in CALLS if not kw.get("return_offsets_mapping") or name not in model_zoo.SPM_ZOO]
    want = [outcome(hf, args, kw) for args, kw in calls]
    calls, want = [c for c, w in zip(calls, want, strict=True) if w[0] == "ok"], [w for w in want if w[0] == "ok"]
    assert len(calls) >= 12

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("transformers' own encoding was called")

    monkeypatch.setattr(patched, "_original", refuse)
    assert [outcome(hf, args, kw) for args, kw in calls] == want


def test_encodings_and_pickling(zoo: dict[str, str], patched: Any) -> None:
    patched.unpatch()
    hf = auto(zoo["bert"])
    want = hf(FIRST, SECOND, padding=True)
    with bytepair.patch_transformers() as handle:
        got = hf(FIRST, SECOND, padding=True)
        assert handle.uses_bytepair(hf)
        assert got.is_fast and got.n_sequences == 2
        assert got.word_ids(1) == want.word_ids(1)
        assert got.sequence_ids(0) == want.sequence_ids(0)
        assert got.tokens(0) == want.tokens(0)
        assert got.char_to_token(0, 3) == want.char_to_token(0, 3)
        again = pickle.loads(pickle.dumps(got))
        assert dict(again) == dict(want) and again.tokens(2) == want.tokens(2)
    assert not handle.active


def test_unpatch_restores_transformers() -> None:
    original = TokenizersBackend.__dict__["_encode_plus"]
    handle = bytepair.patch_transformers()
    assert TokenizersBackend.__dict__["_encode_plus"] is not original
    assert bytepair.patch_transformers() is handle  # patching twice is one patch
    handle.unpatch()
    handle.unpatch()
    assert TokenizersBackend.__dict__["_encode_plus"] is original
    with bytepair.patch_transformers() as second:
        assert second is not handle and second.active
    assert TokenizersBackend.__dict__["_encode_plus"] is original


def test_changes_to_the_tokenizer_are_followed(zoo: dict[str, str], patched: Any) -> None:
    hf = auto(zoo["llama3"])
    kw = {"padding": True, "truncation": True, "max_length": 9}
    assert patched.uses_bytepair(hf)
    hf.padding_side = "left"
    hf.add_tokens(["brown fox"])
    hf.add_special_tokens({"additional_special_tokens": ["<|new|>"]})
    hf.model_max_length = 7
    got = outcome(hf, (TEXTS + ["a brown fox <|new|>"],), kw), outcome(hf, (TEXTS,), {"truncation": True})
    patched.unpatch()
    assert got == (outcome(hf, (TEXTS + ["a brown fox <|new|>"],), kw), outcome(hf, (TEXTS,), {"truncation": True}))


def _edited(src: str, dst: str, change: dict[str, Any]) -> str:
    shutil.copytree(src, dst)
    p = os.path.join(dst, "tokenizer.json")
    with open(p, encoding="utf-8") as f:
        doc = json.load(f)
    doc.update(change)
    with open(p, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    # the generic class: transformers runs tokenizer.json as written (GPT2Tokenizer would rebuild
    # the pipeline from the vocabulary and drop the change)
    return model_zoo._edit_config(dst, {"tokenizer_class": "PreTrainedTokenizerFast"})


def test_fallback_for_a_pipeline_bytepair_does_not_read(
    zoo: dict[str, str], tmp_path: Any, patched: Any, caplog: pytest.LogCaptureFixture
) -> None:
    d = _edited(zoo["gpt2"], str(tmp_path / "replace"), {"normalizer": {"type": "Replace", "pattern": {"String": "o"}, "content": "0"}})
    hf = auto(d)
    with caplog.at_level(logging.DEBUG, logger="bytepair.patch"):
        assert not patched.uses_bytepair(hf)
    reasons = [r.getMessage() for r in caplog.records if r.name == "bytepair.patch"]
    assert len(reasons) == 1 and "\n" not in reasons[0]
    assert "stays on transformers" in reasons[0] and "Replace is not supported" in reasons[0]
    got = [outcome(hf, args, kw) for args, kw in CALLS]
    patched.unpatch()
    assert got == [outcome(hf, args, kw) for args, kw in CALLS]


def test_fallback_when_a_probe_differs(
    zoo: dict[str, str], patched: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    real = bytepair.load

    def without_template(path: Any, **kw: Any) -> Any:  # a reader that drops the BOS template
        return real(path, **kw).with_model_inputs(post_processor=None)

    monkeypatch.setattr(bytepair, "load", without_template)
    hf = auto(zoo["llama3"])
    with caplog.at_level(logging.DEBUG, logger="bytepair.patch"):
        assert not patched.uses_bytepair(hf)
    assert any("encodes a probe text otherwise than transformers" in r.getMessage() for r in caplog.records)
    assert hf("hello")["input_ids"][0] == hf.bos_token_id


def test_calls_bytepair_does_not_take_go_to_transformers(zoo: dict[str, str], patched: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    hf = auto(zoo["roberta"])
    assert patched.uses_bytepair(hf)
    original = patched._original

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append("transformers")
        return original(*args, **kwargs)

    monkeypatch.setattr(patched, "_original", spy)
    words = [["Hello", "world"], ["x"]]
    got_words = hf(words, is_split_into_words=True, padding=True)
    got_split = hf(TEXTS[5], split_special_tokens=True)
    assert calls == ["transformers", "transformers"]
    hf("plain text")
    assert calls == ["transformers", "transformers"]
    patched.unpatch()
    assert TokenizersBackend.__dict__["_encode_plus"] is original  # what unpatch restores is not the spy
    assert dict(got_words) == dict(hf(words, is_split_into_words=True, padding=True))
    assert dict(got_split) == dict(hf(TEXTS[5], split_special_tokens=True))


def test_without_transformers_5(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transformers, "__version__", "4.57.1")
    with pytest.raises(bytepair.errors.MissingExtraError, match="transformers 5 or later .*pip install transformers"):
        bytepair.patch_transformers()


def test_chat_template_ids(zoo: dict[str, str], patched: Any) -> None:
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello there, naïve café?"}]
    hf = auto(zoo["llama3"])
    got = hf.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
    assert patched.uses_bytepair(hf), patched._states[hf].reason
    patched.unpatch()
    assert got == hf.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
