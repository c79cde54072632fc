"""Model inputs (``tok(...)``, ``bytepair._api``) for the SentencePiece kinds: a ``.model`` file
against sentencepiece's ids with and without BOS / EOS, and a SentencePiece-family
``tokenizer.json`` against ``tokenizers`` (its post-processor, padding and truncation)."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from bytepair import BytepairError
from bytepair.pipeline import TemplateProcessing
from tests.interop_texts import texts
from tests.test_hf_spm import NAMES, files  # noqa: F401  (module fixtures)
from tests.test_hf_spm import pairs as hf_pairs  # noqa: F401
from tests.test_sentencepiece import models, pairs  # noqa: F401  (module fixtures)

pytest.importorskip("sentencepiece")
pytest.importorskip("tokenizers")

SPM = ["unigram", "unigram_bytes", "bpe", "bpe_bytes"]
SAMPLE = [t for t in texts() if t.strip()][:60] + ["", "x", "日本語のテキスト 12345"]


@pytest.mark.parametrize("name", SPM)
def test_model_file_inputs_are_sentencepiece_ids(pairs: dict[str, Any], name: str) -> None:
    tok, sp = pairs[name]
    # a .model says nothing of BOS / EOS: none added, as sentencepiece's encode
    out = tok(SAMPLE)
    assert out["input_ids"] == [sp.encode(t) for t in SAMPLE]
    assert out["attention_mask"] == [[1] * len(sp.encode(t)) for t in SAMPLE]
    assert tok(SAMPLE[0])["input_ids"] == sp.encode(SAMPLE[0])
    assert tok.special_tokens_map == {"unk": "<unk>", "bos": "<s>", "eos": "</s>"}
    # with the template a Llama-style model uses
    llama = tok.with_model_inputs(
        post_processor=TemplateProcessing.of("<s> $A </s>", None, {"<s>": tok.bos_id, "</s>": tok.eos_id})
    )
    assert llama(SAMPLE)["input_ids"] == [sp.encode(t, add_bos=True, add_eos=True) for t in SAMPLE]
    cut = llama(SAMPLE, truncation=True, max_length=6)["input_ids"]
    assert cut == [sp.encode(t, add_bos=True, add_eos=True)[:5] + [tok.eos_id] if len(sp.encode(t)) > 4
                   else sp.encode(t, add_bos=True, add_eos=True) for t in SAMPLE]
    # the settings travel with the tokenizer
    again = pickle.loads(pickle.dumps(llama))
    assert again(SAMPLE[:5])["input_ids"] == llama(SAMPLE[:5])["input_ids"]
    ids = llama(SAMPLE[0])["input_ids"]
    assert llama.decode(ids, skip_special_tokens=True) == sp.decode(sp.encode(SAMPLE[0]))
    assert llama.batch_decode([ids], skip_special_tokens=True) == [sp.decode(sp.encode(SAMPLE[0]))]
    # no pad piece: padding is refused by name, as transformers refuses it
    with pytest.raises(BytepairError, match="pad"):
        tok(SAMPLE[:3], padding=True)


def test_model_file_offsets_and_numpy(pairs: dict[str, Any]) -> None:
    tok, sp = pairs["unigram_bytes"]
    out = tok(SAMPLE[:10], return_offsets_mapping=True)
    assert out["input_ids"] == [sp.encode(t) for t in SAMPLE[:10]]
    assert out["offset_mapping"] == [tok.encode_with_offsets(t)[1] for t in SAMPLE[:10]]
    arr = tok(SAMPLE[:10], truncation=True, max_length=8, return_tensors="np")
    assert arr["input_ids"].tolist() == [sp.encode(t)[:8] for t in SAMPLE[:10]]


@pytest.mark.parametrize("name", NAMES)
def test_tokenizer_json_inputs_are_tokenizers(hf_pairs: dict[str, Any], name: str) -> None:
    tok, hf = hf_pairs[name]
    assert tok(SAMPLE)["input_ids"] == [e.ids for e in hf.encode_batch(SAMPLE)]
    roles = tok.special_tokens_map
    assert roles.get("unk") in (None, "<unk>")
    if name.endswith("_t5"):  # T5's files have a pad token: padded and truncated as tokenizers does
        assert "pad" in roles
    if "pad" in roles:
        pad = tok.token_to_id(roles["pad"])
        hf.enable_padding(pad_id=pad, pad_token=roles["pad"])
        hf.enable_truncation(max_length=12)
        try:
            want = hf.encode_batch(SAMPLE)
        finally:
            hf.no_padding()
            hf.no_truncation()
        got = tok(SAMPLE, padding=True, truncation=True, max_length=12)
        assert got["input_ids"] == [e.ids for e in want]
        assert got["attention_mask"] == [e.attention_mask for e in want]
    with pytest.raises(BytepairError, match="offsets"):
        tok(SAMPLE[:2], return_offsets_mapping=True)
