"""The two paths of ``tok(...)`` give the same model inputs: the batch-at-once path (no offsets,
no overflow: windows and padding with NumPy, rows from the post-processor's layout) against the
reference path (``_rows`` / ``_pad_rows``, an Encoding per row), on every zoo directory and a
few hundred combinations of options; errors must be the same too. transformers is checked
against the reference path in test_model_inputs.py."""

from __future__ import annotations

import random
import warnings
from typing import Any

import pytest

import bytepair
from bytepair import _api
from bytepair.pipeline import templates
from tests import model_zoo

pytest.importorskip("tokenizers")
pytest.importorskip("numpy")

TEXTS = model_zoo.CORPUS[:8] + ["", "a", "x " * 40, "Hello <custom> [L] word [R] <both> end", "<|begin_of_text|> hi"]


@pytest.fixture(scope="module")
def zoo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("zoo_paths")
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, build in model_zoo.ZOO.items():
            out[name] = bytepair.load(build(str(root / name)))
    return out


def call(tok: Any, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    try:
        got = tok(*args, **kw)
    except Exception as e:  # the same error (kind and message) is wanted of both paths
        return ("error", type(e).__name__, str(e))
    return {k: (v.tolist(), str(v.dtype), v.shape) if hasattr(v, "dtype") else v for k, v in got.items()}


def reference(tok: Any, args: tuple[Any, ...], kw: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> Any:
    with monkeypatch.context() as m:
        for cls in (templates.PostProcessor, templates.TemplateProcessing, templates.ByteLevelProcessing,
                    templates.BertProcessing, templates.RobertaProcessing, templates.SequenceProcessing):
            m.setattr(cls, "layout", lambda self, pair, add: None)
        m.setattr(_api, "default_layout", lambda pair: None)
        return call(tok, args, kw)


def options(rng: random.Random) -> dict[str, Any]:
    kw: dict[str, Any] = {
        "padding": rng.choice([True, False, "longest", "max_length", "do_not_pad"]),
        "truncation": rng.choice([True, False, None, "longest_first", "only_first", "only_second"]),
        "max_length": rng.choice([None, 0, 1, 2, 3, 5, 9, 17, 40]),
        "stride": rng.choice([0, 0, 0, 1, 2]),
        "pad_to_multiple_of": rng.choice([None, None, 4, 8]),
        "padding_side": rng.choice([None, "left", "right"]),
        "add_special_tokens": rng.random() < 0.8,
        "return_tensors": rng.choice([None, "np"]),
    }
    for flag in ("return_token_type_ids", "return_attention_mask", "return_special_tokens_mask", "return_length"):
        kw[flag] = rng.choice([None, True, False]) if flag.endswith(("ids", "mask")) else rng.random() < 0.3
        if kw[flag] is None:
            del kw[flag]
    return kw


@pytest.mark.parametrize("small_batch", [_api._SMALL_BATCH, 0], ids=["few-texts", "numpy"])
@pytest.mark.parametrize("name", list(model_zoo.ZOO))
def test_fast_path_equals_reference(zoo: dict[str, Any], name: str, small_batch: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both batch paths: ``_call_small`` (a few texts, windows text by text) and the NumPy one
    (``_SMALL_BATCH`` 0 sends every batch there)."""
    monkeypatch.setattr(_api, "_SMALL_BATCH", small_batch)
    tok = zoo[name]
    rng = random.Random(name)
    for case in range(250):
        kw = options(rng)
        n = rng.choice([1, 2, 5])
        batch = [rng.choice(TEXTS) for _ in range(n)]
        args: tuple[Any, ...]
        if rng.random() < 0.2:
            args = (batch[0],) if rng.random() < 0.5 else (batch[0], rng.choice(TEXTS) or "b")
        elif rng.random() < 0.4:
            args = (batch, [rng.choice(TEXTS) for _ in range(n)])
        else:
            args = (batch,)
        fast = call(tok, args, kw)
        ref = reference(tok, args, kw, monkeypatch)
        assert fast == ref, (case, args, kw)


@pytest.mark.parametrize("name", list(model_zoo.ZOO))
def test_one_text_with_defaults_equals_reference(zoo: dict[str, Any], name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``tok(text)`` with every option at its default has a path of its own (``_call_one``)."""
    tok = zoo[name]
    for text in TEXTS:
        for kw in ({}, {"add_special_tokens": False}, {"padding": False}):
            assert call(tok, (text,), kw) == reference(tok, (text,), kw, monkeypatch), (text, kw)


def test_layouts_cover_the_zoo(zoo: dict[str, Any]) -> None:
    """Every zoo post-processor has a layout (else the fast path would never run on it)."""
    for name, tok in zoo.items():
        pp = tok.post_processor
        for pair in (False, True):
            for add in (False, True):
                assert (templates.default_layout(pair) if pp is None else pp.layout(pair, add)) is not None, name


def test_llama3_layout() -> None:
    pp = templates.TemplateProcessing.of("<s> $A", "<s> $A <s>:1 $B:1", {"<s>": 7})
    assert pp.layout(False, True) == [((7,), 0), ("A", 0)]
    assert pp.layout(True, True) == [((7,), 0), ("A", 0), ((7,), 1), ("B", 1)]
    assert pp.layout(True, False) == [("A", 0), ("B", 1)]
    seq = templates.SequenceProcessing([templates.ByteLevelProcessing(), pp])
    assert seq.layout(True, True) == pp.layout(True, True)
    assert templates.SequenceProcessing([pp, pp]).layout(False, True) is None


def test_texts_without_added_tokens_encoded_apart() -> None:
    """Texts that hold no added token's text are encoded with none allowed (the same ids, the
    segment cache serves them); a batch mixing both kinds comes back in order, in both forms."""
    import numpy as np

    tok = bytepair.get_encoding("cl100k_base").with_special_tokens(["<|a|>", "[X]"])
    every = list(tok.special_tokens.values())
    batch = ["plain text", "with <|endoftext|> inside", "", "<|a|>[X]", "no < | here", "end [X"] * 3
    assert tok._special_free(batch) == [True, False, True, False, True, False] * 3  # "[X" may start one
    want = tok._core.encode_batch(batch, every, num_threads=1)
    assert [ids for ids, _ in tok._encode_texts(batch, False)] == want
    flat, bounds = tok._encode_flat(batch)
    assert [flat[a:b].tolist() for a, b in zip(bounds[:-1], bounds[1:])] == want
    assert flat.dtype == np.uint32 and bounds.dtype == np.int64
    for same in (batch[:1], batch[1:2]):  # all free, none free
        flat, bounds = tok._encode_flat(same)
        assert flat.tolist() == tok._core.encode_batch(same, every, num_threads=1)[0]


def test_padded_rows_refuses_what_it_cannot_make() -> None:
    """``_core.padded_rows`` is fed by ``_call_flat``; a window outside the ids, a template item
    it does not know or padding without a pad id is a ValueError naming it, never a panic."""
    from array import array

    from bytepair import _core

    flat = array("I", [5, 6, 7]).tobytes()
    ids, types, mask, special = _core.padded_rows(flat, [0, 2, 2, 3], None, [(-1, [1], 0), (0, [], 0)], 9, 4,
                                                  True, True, True, True)
    assert ids == [[9, 1, 5, 6], [9, 9, 1, 7]]
    assert types == [[0, 0, 0, 0]] * 2 and mask == [[0, 1, 1, 1], [0, 0, 1, 1]]
    assert special == [[1, 1, 0, 0], [1, 1, 1, 0]]
    for a, layout, pad, needle in (
        ([0, 4], [(0, [], 0)], 9, "outside"),
        ([2, 1], [(0, [], 0)], 9, "outside"),
        ([0, 1, 2], [(0, [], 0)], 9, "not \\(start, stop\\) pairs"),
        ([0, 1], [(2, [], 0)], 9, "unknown template item"),
        ([0, 1], [(0, [], 0)], None, "pad id"),
    ):
        with pytest.raises(ValueError, match=needle):
            _core.padded_rows(flat, a, None, layout, pad, 3, False, False, True, False)
    with pytest.raises(ValueError, match="multiple of 4"):
        _core.padded_rows(flat[:5], [0, 1], None, [(0, [], 0)], 9, 0, False, False, False, False)
