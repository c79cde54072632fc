"""save_pretrained directories and GPT-2's vocab.json + merges.txt, proven by transformers and tokenizers."""

from __future__ import annotations

import json
import os
import pathlib
import shutil

import pytest
import tokenizers

import bytepair
from bytepair.formats.gpt2 import dump_gpt2, load_gpt2
from tests.interop_texts import DATA, texts, training_text

os.environ.setdefault("HF_HUB_OFFLINE", "1")
import transformers  # noqa: E402  (after HF_HUB_OFFLINE: nothing is fetched)


@pytest.fixture(scope="module")
def trained() -> bytepair.Tokenizer:
    tok = bytepair.train_from_iterator(
        training_text(), vocab_size=600, special_tokens=["<|endoftext|>", "<s>", "<pad>", "<unk>"]
    )
    return tok.with_special_tokens(roles={"bos": "<s>", "eos": "<|endoftext|>", "pad": "<pad>", "unk": "<unk>"})


def auto(directory: pathlib.Path) -> object:
    return transformers.AutoTokenizer.from_pretrained(str(directory), local_files_only=True)


@pytest.mark.parametrize("source", ["trained", "cl100k_base", "split_style"])
def test_transformers_loads_save_pretrained_with_identical_ids(
    source: str, trained: bytepair.Tokenizer, tmp_path: pathlib.Path
) -> None:
    tok = {
        "trained": lambda: trained,
        "cl100k_base": lambda: bytepair.get_encoding("cl100k_base"),
        "split_style": lambda: bytepair.load(DATA / "hf_split_style/tokenizer.json"),
    }[source]()
    written = tok.save_pretrained(tmp_path)
    assert sorted(os.path.basename(p) for p in written) == [
        "merges.txt", "special_tokens_map.json", "tokenizer.json", "tokenizer_config.json", "vocab.json",
    ]
    hf = auto(tmp_path)
    sample = texts()[:80] + [texts()[-1]] + ["a<|endoftext|>b <s>c"]
    for text in sample:
        ids = tok.encode(text, allowed_special="all")
        assert hf.encode(text, add_special_tokens=False) == ids
        assert hf.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False) == tok.decode(ids)
    assert bytepair.load(tmp_path) == tok


def test_roles_become_transformers_special_tokens(trained: bytepair.Tokenizer, tmp_path: pathlib.Path) -> None:
    trained.save_pretrained(tmp_path)
    hf = auto(tmp_path)
    assert (hf.bos_token, hf.eos_token, hf.pad_token, hf.unk_token) == ("<s>", "<|endoftext|>", "<pad>", "<unk>")
    assert hf.eos_token_id == trained.eot_token
    assert hf.pad_token_id == trained.special_tokens["<pad>"]
    back = bytepair.load(tmp_path)
    assert back.special_tokens_map == trained.special_tokens_map


def test_reads_a_directory_written_by_transformers(tmp_path: pathlib.Path) -> None:
    fixture = bytepair.load(DATA / "hf_transformers_gpt2")
    assert fixture.special_tokens_map == {"bos": "<|endoftext|>", "eos": "<|endoftext|>"}
    hf_tok = tokenizers.Tokenizer.from_file(str(DATA / "hf_gpt2_style/tokenizer.json"))
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=hf_tok, eos_token="<|endoftext|>")
    fast.save_pretrained(str(tmp_path))
    tok = bytepair.load(tmp_path)
    for text in texts()[:100]:
        assert tok.encode(text, allowed_special="all") == fast.encode(text, add_special_tokens=False)
    # Without tokenizer.json, the directory's vocab.json + merges.txt are read.
    only = tmp_path / "gpt2_files"
    only.mkdir()
    shutil.copy(DATA / "hf_gpt2_style/vocab.json", only)
    shutil.copy(DATA / "hf_gpt2_style/merges.txt", only)
    shutil.copy(DATA / "hf_transformers_gpt2/tokenizer_config.json", only)
    assert bytepair.load(only).encode(texts()[-1], allowed_special="all") == hf_tok.encode(texts()[-1]).ids


def test_gpt2_files_written_by_tokenizers_are_read() -> None:
    tok = load_gpt2(DATA / "hf_gpt2_style/vocab.json", DATA / "hf_gpt2_style/merges.txt")
    assert tok.special_tokens == {"<|endoftext|>": 0}
    hf = tokenizers.Tokenizer.from_file(str(DATA / "hf_gpt2_style/tokenizer.json"))
    for text in texts():
        assert tok.encode(text, allowed_special="all") == hf.encode(text).ids
    assert bytepair.load(DATA / "hf_gpt2_style/vocab.json") == tok
    assert bytepair.load(DATA / "hf_gpt2_style/merges.txt") == tok


@pytest.mark.parametrize("source", ["trained", "gpt2"])
def test_dump_gpt2_is_read_by_tokenizers(source: str, trained: bytepair.Tokenizer, tmp_path: pathlib.Path) -> None:
    tok = trained if source == "trained" else bytepair.get_encoding("gpt2")
    dump_gpt2(tok, tmp_path / "vocab.json", tmp_path / "merges.txt")
    model = tokenizers.models.BPE.from_file(str(tmp_path / "vocab.json"), str(tmp_path / "merges.txt"))
    hf = tokenizers.Tokenizer(model)
    hf.pre_tokenizer = tokenizers.pre_tokenizers.Split(
        tokenizers.Regex(bytepair.formats.hf.to_oniguruma(tok.pattern or "")), behavior="isolated"
    )
    hf.pre_tokenizer = tokenizers.pre_tokenizers.Sequence(
        [hf.pre_tokenizer, tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]
    )
    hf.decoder = tokenizers.decoders.ByteLevel()
    for text in texts()[:150]:
        ids = tok.encode_ordinary(text)
        assert hf.encode(text).ids == ids
        assert hf.decode(ids) == tok.decode(ids)
    back = load_gpt2(tmp_path / "vocab.json", tmp_path / "merges.txt", pattern=tok.pattern)
    assert back.encode(texts()[-1], allowed_special="all") == tok.encode(texts()[-1], allowed_special="all")
    if source == "trained":
        assert back.merges == trained.merges and back.special_tokens == trained.special_tokens


@pytest.mark.parametrize(
    ("vocab_edit", "merges_text", "message"),
    [
        (None, "#version: 0.2\nĠ t\nzz q\n", "merges.txt, line 3: 'zz' is not a token"),
        (None, "#version: 0.2\nĠ t\nĠ t\n", "merges.txt, line 3: the merge 'Ġ t' repeats"),
        (None, "#version: 0.2\nĠtq\n", "merges.txt, line 2: expected two tokens"),
        ({"Ġt": 5}, None, "both have the id 5"),
        ({"!": -1}, None, "vocab.json: the id of '!' must be an int"),
    ],
)
def test_bad_gpt2_files_name_file_and_entry(
    vocab_edit: dict[str, int] | None, merges_text: str | None, message: str, tmp_path: pathlib.Path
) -> None:
    vocab = json.loads((DATA / "hf_gpt2_style/vocab.json").read_text(encoding="utf-8"))
    if vocab_edit:
        vocab.update(vocab_edit)
    (tmp_path / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (tmp_path / "merges.txt").write_text(
        merges_text or (DATA / "hf_gpt2_style/merges.txt").read_text(encoding="utf-8"), encoding="utf-8"
    )
    with pytest.raises(bytepair.FormatError) as e:
        load_gpt2(tmp_path / "vocab.json", tmp_path / "merges.txt")
    assert message in str(e.value)


def test_truncated_vocab_json(tmp_path: pathlib.Path) -> None:
    data = (DATA / "hf_gpt2_style/vocab.json").read_bytes()
    (tmp_path / "vocab.json").write_bytes(data[: len(data) // 2])
    shutil.copy(DATA / "hf_gpt2_style/merges.txt", tmp_path)
    with pytest.raises(bytepair.FormatError, match="vocab.json: not valid JSON"):
        bytepair.load(tmp_path / "vocab.json")


def test_a_token_given_twice_in_vocab_json_is_named(tmp_path: pathlib.Path) -> None:
    text = (DATA / "hf_gpt2_style/vocab.json").read_text(encoding="utf-8")
    (tmp_path / "vocab.json").write_text(text.replace('{"', '{"Ġt":999,"', 1), encoding="utf-8")
    shutil.copy(DATA / "hf_gpt2_style/merges.txt", tmp_path)
    with pytest.raises(bytepair.FormatError, match="the key 'Ġt' appears twice"):
        bytepair.load(tmp_path / "vocab.json")
