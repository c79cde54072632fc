"""A SentencePiece-family model directory (``tokenizer.json`` + ``tokenizer_config.json``) takes its
special-token roles and model-input settings from the config, as ``AutoTokenizer`` does: the
directories of tests/model_zoo.py's ``SPM_ZOO`` and variants of their configs, against
``transformers.AutoTokenizer.from_pretrained(dir)``. transformers is the oracle."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import warnings
from typing import Any

import pytest

import bytepair
from bytepair.errors import FormatError
from bytepair.formats.hf_spm import HFSentencePieceTokenizer
from tests import model_zoo
from tests.test_model_inputs import run

transformers = pytest.importorskip("transformers")
pytest.importorskip("sentencepiece")

TEXTS = [
    "hello world",
    "The quick brown fox jumps over the lazy dog.",
    "x",
    "naïve café 東京 🙂 12345",
    "",
    "It's we're </s> <|im_end|> end",
]
PAIRS = (["hello world", "short"], ["The quick brown fox jumps over the lazy dog.", "numbers 12345 67890"])

CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    ((TEXTS[1],), {}),
    ((TEXTS,), {}),
    ((TEXTS,), {"padding": True}),
    ((TEXTS,), {"padding": "longest", "pad_to_multiple_of": 8}),
    ((TEXTS,), {"padding": "max_length", "truncation": True}),
    ((TEXTS,), {"padding": "max_length", "truncation": True, "max_length": 7, "padding_side": "right"}),
    ((TEXTS,), {"padding": True, "truncation": True, "max_length": 5, "padding_side": "left"}),
    ((TEXTS,), {"padding": True, "return_special_tokens_mask": True, "return_length": True}),
    ((TEXTS,), {"truncation": True, "max_length": 4, "return_overflowing_tokens": True, "stride": 1}),
    (PAIRS, {"padding": True}),
    (PAIRS, {"padding": True, "truncation": "only_first", "max_length": 9}),
    (PAIRS, {"padding": "max_length", "truncation": "longest_first", "max_length": 10, "return_special_tokens_mask": True}),
    ((TEXTS,), {"padding": True, "return_tensors": "np"}),
]


def _build(root: Any, name: str, changes: dict[str, Any] | None = None) -> str:
    directory = str(root / name)
    if not os.path.exists(directory):
        model_zoo.SPM_ZOO[name](directory)
    if changes is None:
        return directory
    copy = str(root / f"{name}_{abs(hash(json.dumps(changes, sort_keys=True, default=str)))}")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(directory, copy)
    return model_zoo._edit_config(copy, changes)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return tmp_path_factory.mktemp("spm_zoo")


def _auto(directory: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return transformers.AutoTokenizer.from_pretrained(directory)


def _roles(auto: Any) -> dict[str, str]:
    return {k.removesuffix("_token"): str(v) for k, v in auto.special_tokens_map.items() if k.endswith("_token")}


def check_directory(directory: str) -> None:
    ours, theirs = bytepair.load(directory), _auto(directory)
    assert isinstance(ours, HFSentencePieceTokenizer)
    assert ours.special_tokens_map == _roles(theirs)
    for args, kw in CALLS:
        want_kind, want = run(theirs, args, kw)
        got_kind, got = run(ours, args, kw)
        assert got_kind == want_kind, (args, kw, got, want)
        if want_kind == "ok":
            assert got == want, (args, kw)
    ids = theirs(TEXTS[5])["input_ids"] + [theirs.pad_token_id or 0]
    for skip in (True, False):
        assert ours.decode(ids, skip_special_tokens=skip) == theirs.decode(ids, skip_special_tokens=skip)


@pytest.mark.parametrize("name", list(model_zoo.SPM_ZOO))
def test_zoo_directories(root: Any, name: str) -> None:
    check_directory(_build(root, name))


VARIANTS = [
    ("llama2", {"pad_token": "<unk>", "padding_side": "right", "model_max_length": 6}),
    ("llama2", {"pad_token": None}),  # no pad token: padding refused by both
    ("llama2", {"eos_token": "</s>", "pad_token": model_zoo.added_token("<|im_end|>"), "bos_token": model_zoo._REMOVE}),
    ("t5", {"eos_token": "<extra_id_0>"}),  # T5's class builds its template with the eos id
    ("t5", {"pad_token": model_zoo._REMOVE, "tokenizer_class": "PreTrainedTokenizerFast"}),  # no class defaults
    ("t5", {"unk_token": "<pad>", "pad_token": "</s>", "truncation_side": "left"}),
]


@pytest.mark.parametrize(("name", "changes"), VARIANTS)
def test_config_variants(root: Any, name: str, changes: dict[str, Any]) -> None:
    check_directory(_build(root, name, changes))


def test_roles_travel(root: Any) -> None:
    ours = bytepair.load(_build(root, "llama2"))
    again = pickle.loads(pickle.dumps(ours))
    assert again.special_tokens_map == ours.special_tokens_map
    assert again(TEXTS, padding=True)["input_ids"] == ours(TEXTS, padding=True)["input_ids"]
    longer = ours.with_model_inputs(model_max_length=40)
    assert longer.special_tokens_map == ours.special_tokens_map


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"pad_token": "▁the"}, r"tokenizer_config.json: pad_token '▁the' is not a special token of tokenizer.json \(an ordinary token\)"),
        ({"eos_token": model_zoo.added_token("<new>")}, r"tokenizer_config.json: eos_token '<new>' is not a special token .*not in its vocabulary"),
    ],
)
def test_roles_that_transformers_would_add(root: Any, changes: dict[str, Any], message: str) -> None:
    directory = _build(root, "llama2", changes)
    ours_tokens = bytepair.load(_build(root, "llama2")).vocab
    if changes.get("pad_token") == "▁the":
        assert "▁the" in ours_tokens  # the piece is ordinary in this vocabulary
    with pytest.raises(FormatError, match=message):
        bytepair.load(directory)
