"""A vocab.txt says nothing of case or of its unknown token: bytepair reads both from the file.
A cased vocabulary is encoded cased (ids equal to Hugging Face's BertWordPieceTokenizer with
lowercase=False), an uncased one lowercased, and the unknown token is the file's own."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.cli import main
from bytepair.formats.bert import load_bert_vocab

SAMPLE = Path(bytepair.__file__).parent / "data" / "tinyshakespeare.txt"


@pytest.fixture(scope="module")
def cased_vocab(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tok = bytepair.train_wordpiece_from_iterator(
        [SAMPLE.read_text(encoding="utf-8")[:200_000]], vocab_size=600, lowercase=False, progress=False
    )
    path = tmp_path_factory.mktemp("cased") / "vocab.txt"
    path.write_text("".join(f"{t}\n" for t, _ in sorted(tok.vocab.items(), key=lambda kv: kv[1])), encoding="utf-8")
    return path


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(st.sampled_from("KING Lear the Fool, kING! é") | st.characters(blacklist_categories=("Cs", "Cn")), max_size=40))
def test_a_cased_vocab_txt_encodes_cased_as_hugging_face_does(cased_vocab: Path, text: str) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    tok = load_bert_vocab(cased_vocab)
    assert tok.normalizer_options["lowercase"] is False
    hf = tokenizers.BertWordPieceTokenizer(str(cased_vocab), lowercase=False, strip_accents=False)
    assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids


def test_uncased_and_unk_defaults(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "vocab.txt"
    path.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n##s\n[unused0]\n", encoding="utf-8")
    tok = load_bert_vocab(path)
    assert tok.normalizer_options["lowercase"] is True and tok.tokenize("HELLOs") == ["hello", "##s"]
    path.write_text("<pad>\n<unk>\nhello\n", encoding="utf-8")
    assert load_bert_vocab(path).unk_token == "<unk>"
    assert load_bert_vocab(path).tokenize("zz") == ["<unk>"]
    path.write_text("[UNK]\nHello\n", encoding="utf-8")
    assert main(["encode", "-t", str(path), "--tokens", "--text", "Hello hello"]) == 0
    assert capsys.readouterr().out.split() == ["Hello", "[UNK]"]
    path.write_text("a\nb\nX\n", encoding="utf-8")
    assert load_bert_vocab(path, unk_token="X").unk_token == "X"
    assert load_bert_vocab(path, unk_token="X", lowercase=True).normalizer_options["lowercase"] is True
