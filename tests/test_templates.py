"""Post-processors (bytepair.pipeline.templates) against Hugging Face ``tokenizers``: the same
ids, type ids, special-token masks and offsets for templates, BERT, RoBERTa, ByteLevel and
Sequence processors, single texts and pairs; read from and written back to ``tokenizer.json``."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.errors import FormatError
from bytepair.pipeline.templates import (
    BertProcessing,
    ByteLevelProcessing,
    RobertaProcessing,
    SequenceProcessing,
    TemplateProcessing,
    parse_template,
    post_processor_from_hf,
)
from tests import model_zoo

tokenizers = pytest.importorskip("tokenizers")

SPECIALS = ["<s>", "</s>", "<pad>", "<sep>", "<cls>"]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A small byte-level BPE (tokenizers) with a few special tokens."""
    from tokenizers import pre_tokenizers

    tok = model_zoo._byte_level_bpe(330, SPECIALS, split=None)
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)  # type: ignore[attr-defined]
    return tok


def with_processor(base: Any, processor: Any, tmp_path: Any) -> tuple[Any, Any]:
    """(the tokenizers Tokenizer with ``processor``, bytepair's tokenizer read from its file)."""
    from tokenizers import Tokenizer

    base.post_processor = processor
    path = os.path.join(tmp_path, "tokenizer.json")
    base.save(path)
    return Tokenizer.from_file(path), bytepair.load(path)


def compare(hf: Any, ours: Any, text: str, pair: str | None, add_special_tokens: bool = True) -> None:
    if pair == "":
        return  # transformers (and bytepair's call) take an empty text_pair as none; tokenizers does not
    want = hf.encode(text, pair, add_special_tokens=add_special_tokens)
    got = ours(text, pair, add_special_tokens=add_special_tokens, return_token_type_ids=True,
               return_special_tokens_mask=True, return_offsets_mapping=True)
    assert got["input_ids"] == want.ids
    assert got["token_type_ids"] == want.type_ids
    assert got["special_tokens_mask"] == want.special_tokens_mask
    assert got["offset_mapping"] == want.offsets
    assert ours.num_special_tokens_to_add(pair is not None) == hf.post_processor.num_special_tokens_to_add(pair is not None) \
        if hf.post_processor is not None else True


items = st.lists(st.sampled_from(SPECIALS), max_size=3)
type_ids = st.integers(0, 2)
words = st.sampled_from(["hello world", " two  spaces ", "naïve 東京", "", "x", "a\nb", "  lead", "trail  "])


def template_text(draw: Any, seqs: list[str]) -> str:
    out: list[str] = []
    for s in seqs:
        for t in draw(items):
            out.append(f"{t}:{draw(type_ids)}")
        out.append(f"${s}:{draw(type_ids)}")
    for t in draw(items):
        out.append(f"{t}:{draw(type_ids)}")
    return " ".join(out)


@settings(max_examples=max(5, settings().max_examples // 10))
@given(data=st.data(), text=words, pair=words, add=st.booleans())
def test_template_processing(base: Any, tmp_path_factory: pytest.TempPathFactory, data: Any, text: str, pair: str, add: bool) -> None:
    from tokenizers import processors

    single = template_text(data.draw, ["A"])
    pair_t = template_text(data.draw, ["A", "B"])
    used = {t.split(":")[0] for t in (single + " " + pair_t).split() if not t.startswith("$")}
    proc = processors.TemplateProcessing(
        single=single, pair=pair_t, special_tokens=[(t, base.token_to_id(t)) for t in sorted(used)]
    )
    hf, ours = with_processor(base, proc, tmp_path_factory.mktemp("t"))
    compare(hf, ours, text, None, add)
    compare(hf, ours, text, pair, add)
    assert ours.post_processor.to_hf() == json.loads(hf.to_str())["post_processor"]


@settings(max_examples=max(5, settings().max_examples // 10))
@given(text=words, pair=words, trim=st.booleans(), prefix=st.booleans(), add=st.booleans(), kind=st.sampled_from(["bert", "roberta", "byte", "seq"]))
def test_other_processors(base: Any, tmp_path_factory: pytest.TempPathFactory, text: str, pair: str, trim: bool,
                          prefix: bool, add: bool, kind: str) -> None:
    from tokenizers import processors

    sep, cls = ("</s>", base.token_to_id("</s>")), ("<s>", base.token_to_id("<s>"))
    proc: Any
    if kind == "bert":
        proc = processors.BertProcessing(sep, cls)
    elif kind == "roberta":
        proc = processors.RobertaProcessing(sep, cls, trim_offsets=trim, add_prefix_space=prefix)
    elif kind == "byte":
        proc = processors.ByteLevel(trim_offsets=trim, add_prefix_space=prefix)
    else:
        proc = processors.Sequence([
            processors.ByteLevel(trim_offsets=trim, add_prefix_space=prefix),
            processors.TemplateProcessing(single="<s> $A", pair="<s> $A <s>:1 $B:1", special_tokens=[cls]),
        ])
    hf, ours = with_processor(base, proc, tmp_path_factory.mktemp("p"))
    compare(hf, ours, text, None, add)
    compare(hf, ours, text, pair, add)
    written = bytepair.formats.hf.to_hf_dict(ours)["post_processor"]
    assert post_processor_from_hf(written, "x") == ours.post_processor


def test_parse_template_notation() -> None:
    t = TemplateProcessing.of("[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1", {"[CLS]": 1, "[SEP]": 2})
    assert [str(p) for p in t.pair] == ["[CLS]", "$A", "[SEP]", "$B:1", "[SEP]:1"]
    assert [str(p) for p in parse_template("$0 $1")] == ["$A", "$B:1"]
    assert t.added(False) == 2 and t.added(True) == 3
    assert BertProcessing(("[SEP]", 2), ("[CLS]", 1)).added(True) == 3
    assert RobertaProcessing(("</s>", 2), ("<s>", 0)).added(True) == 4
    assert ByteLevelProcessing().added(True) == 0
    assert SequenceProcessing([ByteLevelProcessing(), t]).added(False) == 2


def test_template_errors_name_the_problem() -> None:
    with pytest.raises(FormatError, match="'<x>'"):
        TemplateProcessing.of("<x> $A", None, {})
    with pytest.raises(FormatError, match=r"single template .*\$B"):
        TemplateProcessing.of("$A $B", "$A $B", {})
    with pytest.raises(FormatError, match=r"\$A and \$B once each"):
        TemplateProcessing.of("$A", "$A $A", {})
    with pytest.raises(FormatError, match=r"f\.json: post_processor: the post-processor 'Nope'"):
        post_processor_from_hf({"type": "Nope"}, "f.json")
    with pytest.raises(FormatError, match=r"f\.json: post_processor\.processors\[1\]"):
        post_processor_from_hf({"type": "Sequence", "processors": [{"type": "ByteLevel"}, {"type": "Nope"}]}, "f.json")
    with pytest.raises(FormatError, match=r"post_processor\.sep must be \[token, id\]"):
        post_processor_from_hf({"type": "BertProcessing", "sep": "x", "cls": ["a", 1]}, "f.json")
    with pytest.raises(FormatError, match=r"trim_offsets must be true or false"):
        post_processor_from_hf({"type": "ByteLevel", "trim_offsets": "no"}, "f.json")
