"""bytepair.minbpe: the checks of minbpe's own test-suite, written anew, plus its file format.

minbpe's tests: encode/decode identity for the three tokenizers on odd and long texts,
GPT4Tokenizer equal to tiktoken's cl100k_base (special tokens too), the Wikipedia example
("aaabdaaabac" with 3 merges), and save/load with special tokens.
"""

from __future__ import annotations

import pathlib

import pytest

import bytepair
from bytepair.minbpe import BasicTokenizer, GPT4Tokenizer, RegexTokenizer
from tests.interop_texts import DATA, reference, texts

SPECIALS = {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259, "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}
LONG = (DATA / "multilingual.txt").read_text(encoding="utf-8") * 3
TEXTS = ["", "?", "hello world!!!? (안녕하세요!) lol123 😉", LONG]
SPECIAL_TEXT = """
<|endoftext|>Hello world this is one document
<|endoftext|>And this is another document
<|endoftext|><|fim_prefix|>And this one has<|fim_suffix|> tokens.<|fim_middle|> FIM
<|endoftext|>Last document!!! 👋<|endofprompt|>
""".strip()


@pytest.mark.parametrize("cls", [BasicTokenizer, RegexTokenizer, GPT4Tokenizer])
@pytest.mark.parametrize("text", TEXTS, ids=["empty", "question", "mixed", "long"])
def test_encode_decode_identity(cls: type, text: str) -> None:
    tok = cls()
    if cls is not GPT4Tokenizer:
        tok.train(LONG, 256 + 40)
    assert tok.decode(tok.encode(text)) == text


@pytest.mark.parametrize("text", TEXTS + texts()[:50], ids=lambda t: repr(t[:10]))
def test_gpt4_tokenizer_equals_tiktoken(text: str) -> None:
    assert GPT4Tokenizer().encode(text, allowed_special="none") == reference("cl100k_base").encode(text, disallowed_special=())


def test_gpt4_tokenizer_special_tokens() -> None:
    tok = GPT4Tokenizer()
    assert tok.special_tokens == SPECIALS
    assert tok.encode(SPECIAL_TEXT, allowed_special="all") == reference("cl100k_base").encode(SPECIAL_TEXT, allowed_special="all")
    with pytest.raises(ValueError):
        tok.encode(SPECIAL_TEXT)  # "none_raise"


def test_gpt4_tokenizer_tables_are_over_permuted_bytes() -> None:
    tok = GPT4Tokenizer()
    enc = bytepair.get_encoding("cl100k_base")
    assert sorted(tok.byte_shuffle.values()) == list(range(256))
    for i in [*range(0, 100_256, 4999), 100_255]:
        assert bytes(tok.inverse_byte_shuffle[b] for b in tok.vocab[i]) == enc.token_bytes(i)
    assert len(tok.merges) == 100_256 - 256


def test_wikipedia_example() -> None:
    tok = BasicTokenizer()
    text = "aaabdaaabac"
    tok.train(text, 256 + 3)
    assert tok.encode(text) == [258, 100, 258, 97, 99]
    assert tok.decode(tok.encode(text)) == text
    assert tok.merges == {(97, 97): 256, (256, 97): 257, (257, 98): 258}


@pytest.mark.parametrize("special_tokens", [{}, {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258}])
def test_save_load(special_tokens: dict[str, int], tmp_path: pathlib.Path) -> None:
    text = LONG
    tok = RegexTokenizer()
    tok.train(text, 256 + 64)
    tok.register_special_tokens(special_tokens)
    sample = text + "".join(special_tokens)
    ids = tok.encode(sample, allowed_special="all")
    assert tok.decode(ids) == sample
    prefix = tmp_path / "test_tokenizer_tmp"
    tok.save(str(prefix))
    again = RegexTokenizer()
    again.load(str(prefix) + ".model")
    assert again.decode(ids) == sample
    assert again.encode(sample, allowed_special="all") == ids
    assert again.merges == tok.merges and again.vocab == tok.vocab and again.special_tokens == special_tokens
    assert (tmp_path / "test_tokenizer_tmp.vocab").read_text(encoding="utf-8").splitlines()[256].endswith("] 256")


def test_allowed_special_forms() -> None:
    tok = RegexTokenizer()
    tok.train(LONG, 300)
    tok.register_special_tokens({"<|a|>": 300, "<|b|>": 301})
    text = "x<|a|>y<|b|>"
    assert tok.encode(text, allowed_special="all") == tok.encode("x") + [300] + tok.encode("y") + [301]
    assert tok.encode(text, allowed_special="none") == tok.encode_ordinary(text)
    assert tok.encode(text, allowed_special={"<|a|>"}) == tok.encode("x") + [300] + tok.encode_ordinary("y<|b|>")


def test_model_file_is_minbpes_layout_and_bytepair_reads_it(tmp_path: pathlib.Path) -> None:
    tok = BasicTokenizer()
    tok.train("aaabdaaabac", 256 + 3)
    tok.register_special_tokens({"<|end|>": 259})
    tok.save(str(tmp_path / "m"))
    assert (tmp_path / "m.model").read_text(encoding="utf-8") == "minbpe v1\n\n1\n<|end|> 259\n97 97\n256 97\n257 98\n"
    loaded = bytepair.load(tmp_path / "m.model")
    assert loaded.encode("aaabdaaabac<|end|>", allowed_special="all") == [258, 100, 258, 97, 99, 259]
    bytepair.dump_minbpe(loaded, tmp_path / "again")
    assert (tmp_path / "again.model").read_text(encoding="utf-8") == (tmp_path / "m.model").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("minbpe v2\n\n0\n", "line 1: expected 'minbpe v1'"),
        ("minbpe v1\n\nx\n", "line 3: expected the number of special tokens"),
        ("minbpe v1\n\n2\n<a> 256\n", "2 special tokens announced"),
        ("minbpe v1\n\n0\n97 97\n97 300\n", "line 5: the merge names the id 300"),
        ("minbpe v1\n\n0\n97 97\nabc\n", "line 5: expected two token ids"),
        ("minbpe v1\n\n0\n97 97\n97 97\n", "already the token 256"),
        ("minbpe v1\n\n1\n<big> 4000000000\n97 97\n", "far beyond"),
        ("minbpe v1\n\n1\n<a> 97\n97 97\n", "<a>"),
    ],
)
def test_bad_model_files(content: str, message: str, tmp_path: pathlib.Path) -> None:
    path = tmp_path / "bad.model"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(bytepair.FormatError, match="bad.model") as e:
        bytepair.load_minbpe(path)
    assert message in str(e.value)


def test_cl100k_cannot_be_written_as_a_minbpe_model(tmp_path: pathlib.Path) -> None:
    with pytest.raises(bytepair.FormatError, match="minbpe"):
        bytepair.dump_minbpe(bytepair.get_encoding("cl100k_base"), tmp_path / "x")
    assert list(tmp_path.iterdir()) == []
