"""Released tokenizer files read with their recipe: Llama 3's tokenizer.model against tiktoken
built as Meta's reference tokenizer builds it. The rank file here is made from the shipped
o200k ranks (128,000 of them: a rank file of Llama 3's size and form), not downloaded."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.errors import FormatError
from bytepair.formats.tiktoken import read_ranks

tiktoken = pytest.importorskip("tiktoken")
from tiktoken.load import load_tiktoken_bpe  # noqa: E402

# Meta's reference (llama3/tokenizer.py), written out here on its own: pattern and special tokens.
PAT = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
NAMED = [
    "<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>", "<|reserved_special_token_1|>",
    "<|reserved_special_token_2|>", "<|reserved_special_token_3|>", "<|start_header_id|>", "<|end_header_id|>",
    "<|reserved_special_token_4|>", "<|eot_id|>",
]
N_RESERVED = 256


@pytest.fixture(scope="module")
def llama3(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any, str]:
    ranks = read_ranks(bytepair.__path__[0] + "/data/o200k_base.tiktoken.gz")
    path = str(tmp_path_factory.mktemp("llama3") / "tokenizer.model")
    # The last two ranks become tokens that only cl100k's pattern would make whole (a newline
    # and the spaces after it at the end of a text), so that the pattern shows in the ids.
    kept = [t for t, r in sorted(ranks.items(), key=lambda kv: kv[1]) if r < 128_000 - 2] + [b"\n ", b"\n\t"]
    with open(path, "wb") as f:
        for rank, token in enumerate(kept):
            f.write(base64.b64encode(token) + b" " + str(rank).encode() + b"\n")
    mergeable = load_tiktoken_bpe(path)
    specials = NAMED + [f"<|reserved_special_token_{i}|>" for i in range(5, N_RESERVED - 5)]
    reference = tiktoken.Encoding(
        name="llama3-reference",
        pat_str=PAT,
        mergeable_ranks=mergeable,
        special_tokens={t: len(mergeable) + i for i, t in enumerate(specials)},
    )
    return bytepair.load(path, encoding="llama3"), reference, path


TEXTS = [
    "Hello world!  How's it going?\n\n\tdone",
    "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>",
    "naïve café 東京 🙂 12345678 I'LL WE'RE",
    "   \n\r\n  x  ",
    "ends after a newline\n ",  # where Llama 3's pattern splits otherwise than cl100k's
    "tab\n\t",
    "crlf\r\n  ",
]


def test_same_ids_as_tiktoken(llama3: tuple[Any, Any, str]) -> None:
    ours, ref, _ = llama3
    assert ours.special_tokens == ref._special_tokens
    assert ours.n_vocab == ref.n_vocab == 128_256
    for text in TEXTS:
        assert ours.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
        assert ours.encode_ordinary(text) == ref.encode_ordinary(text)
        ids = ref.encode(text, allowed_special="all")
        assert ours.decode(ids) == ref.decode(ids)
    with pytest.raises(bytepair.DisallowedSpecialTokenError):
        ours.encode(TEXTS[1])


@settings(max_examples=max(10, settings().max_examples // 2))
@given(
    text=st.lists(
        st.one_of(st.text(st.characters(codec="utf-8"), max_size=30), st.sampled_from(NAMED + [" ", "\n", "'s", "  ", "\n ", "\r\n\t"])),
        max_size=6,
    ).map("".join)
)
def test_property_against_tiktoken(llama3: tuple[Any, Any, str], text: str) -> None:
    ours, ref, _ = llama3
    assert ours.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
    assert ours.encode_ordinary(text) == ref.encode_ordinary(text)
    assert ours.count(text, allowed_special="all") == len(ref.encode(text, allowed_special="all"))


def test_model_inputs_add_bos(llama3: tuple[Any, Any, str]) -> None:
    ours, ref, _ = llama3
    bos = ref._special_tokens["<|begin_of_text|>"]
    out = ours(["hello there", "x"], padding=False)
    assert out["input_ids"] == [[bos, *ref.encode_ordinary("hello there")], [bos, *ref.encode_ordinary("x")]]
    assert ours.special_tokens_map == {"bos": "<|begin_of_text|>", "eos": "<|end_of_text|>"}
    assert ours.decode(out["input_ids"][0], skip_special_tokens=True) == "hello there"


def test_bad_recipe_use(llama3: tuple[Any, Any, str], tmp_path: Any) -> None:
    _, _, path = llama3
    with pytest.raises(FormatError, match="unknown encoding 'llama9'.*llama3"):
        bytepair.load(path, encoding="llama9")
    with pytest.raises(TypeError, match="pattern"):
        bytepair.load(path, encoding="llama3", pattern="gpt4")
    small = tmp_path / "small.model"
    small.write_bytes(b"".join(base64.b64encode(bytes([i])) + b" " + str(i).encode() + b"\n" for i in range(100)))
    with pytest.raises(FormatError, match="small.model: not a Llama 3 tokenizer.model"):
        bytepair.load(small, encoding="llama3")


# Meta's Llama 4 reference (llama4/tokenizer.py), written out here on its own: o200k's pattern as
# its source spells it, and its 2,048 special tokens in order.
PAT4 = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def _llama4_specials() -> list[str]:
    def reserved(name: str, count: int, start: int = 0) -> list[str]:
        return [f"<|{name}_reserved_special_token_{i}|>" for i in range(start, start + count)]

    post_train = ["<|header_start|>", "<|header_end|>", "<|eom|>", "<|eot|>", "<|step|>"]
    post_train += [f"<|text_post_train_reserved_special_token_{i}|>" for i in range(6)]
    post_train += ["<|python_start|>", "<|python_end|>", "<|finetune_right_pad|>"] + reserved("text_post_train", 61, 8)
    vision = ["<|image_start|>", "<|image_end|>", "<|vision_reserved_special_token_0|>", "<|vision_reserved_special_token_1|>"]
    vision += ["<|tile_x_separator|>", "<|tile_y_separator|>"] + reserved("vision", 4, 2)
    vision += ["<|image|>", "<|vision_reserved_special_token_6|>", "<|patch|>"] + reserved("vision", 1041, 7)
    reasoning = reserved("reasoning", 8) + ["<|reasoning_thinking_start|>", "<|reasoning_thinking_end|>"]
    basic = ["<|begin_of_text|>", "<|end_of_text|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"]
    named = basic + post_train + vision + reasoning
    return named + [f"<|reserved_special_token_{i}|>" for i in range(2048 - len(named))]


NAMED4 = ["<|begin_of_text|>", "<|end_of_text|>", "<|header_start|>", "<|header_end|>", "<|eot|>", "<|eom|>",
          "<|python_start|>", "<|image|>", "<|patch|>", "<|reasoning_thinking_end|>", "<|reserved_special_token_903|>"]


@pytest.fixture(scope="module")
def llama4(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any, str]:
    ranks = read_ranks(bytepair.__path__[0] + "/data/o200k_base.tiktoken.gz")
    path = str(tmp_path_factory.mktemp("llama4") / "tokenizer.model")
    # All of o200k's 199,998 ranks, then two tokens (200,000 ranks: Llama 4's size) that only
    # o200k's pattern makes whole, not Llama 3's: upper-case words with their contraction.
    kept = [t for t, _ in sorted(ranks.items(), key=lambda kv: kv[1])] + [b"I'M", b"DON'T"]
    assert len(kept) == 200_000
    with open(path, "wb") as f:
        for rank, token in enumerate(kept):
            f.write(base64.b64encode(token) + b" " + str(rank).encode() + b"\n")
    mergeable = load_tiktoken_bpe(path)
    reference = tiktoken.Encoding(
        name="llama4-reference",
        pat_str=PAT4,
        mergeable_ranks=mergeable,
        special_tokens={t: len(mergeable) + i for i, t in enumerate(_llama4_specials())},
    )
    return bytepair.load(path, encoding="llama4"), reference, path


TEXTS4 = [
    "Hello world!  How's it going?\n\n\tdone",
    "<|begin_of_text|><|header_start|>user<|header_end|>\n\nhi<|eot|><|image_start|><|patch|><|image_end|>",
    "naïve café 東京 🙂 12345678 I'M sure WE'RE fine, DON'T, camelCaseWordsAndXMLHttpRequest",
    "   \n\r\n  x  ",
    "a list.\n/path/to.\n//x",
    "crlf\r\n  ",
    "<|reasoning_thinking_start|>think<|reasoning_thinking_end|><|finetune_right_pad|>",
]


def test_llama4_same_ids_as_tiktoken(llama4: tuple[Any, Any, str]) -> None:
    ours, ref, _ = llama4
    assert ours.special_tokens == ref._special_tokens
    assert len(ours.special_tokens) == 2048
    assert ours.n_vocab == ref.n_vocab == 202_048
    for text in TEXTS4:
        assert ours.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
        assert ours.encode_ordinary(text) == ref.encode_ordinary(text)
        ids = ref.encode(text, allowed_special="all")
        assert ours.decode(ids) == ref.decode(ids)
    # The two extra ranks are reached, so the pattern shows in the ids.
    assert ours.encode("I'M") == [199_998] and ours.encode("DON'T") == [199_999]
    with pytest.raises(bytepair.DisallowedSpecialTokenError):
        ours.encode(TEXTS4[1])


@settings(max_examples=max(10, settings().max_examples // 2))
@given(
    text=st.lists(
        st.one_of(
            st.text(st.characters(codec="utf-8"), max_size=30),
            st.sampled_from(NAMED4 + [" ", "\n", "'s", "'M", "I", "DON", "'T", ".\n/", "  ", "\n ", "\r\n\t", "Ab", "aB"]),
        ),
        max_size=6,
    ).map("".join)
)
def test_llama4_property_against_tiktoken(llama4: tuple[Any, Any, str], text: str) -> None:
    ours, ref, _ = llama4
    assert ours.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
    assert ours.encode_ordinary(text) == ref.encode_ordinary(text)


def test_llama4_model_inputs(llama4: tuple[Any, Any, str]) -> None:
    ours, ref, _ = llama4
    bos = ref._special_tokens["<|begin_of_text|>"]
    pad = ref._special_tokens["<|finetune_right_pad|>"]
    out = ours(["hello there", "x"], padding=True)
    hello = ref.encode_ordinary("hello there")
    assert out["input_ids"] == [[bos, *hello], [bos, *ref.encode_ordinary("x"), *[pad] * (len(hello) - 1)]]
    assert out["attention_mask"][1] == [1, 1] + [0] * (len(hello) - 1)
    assert ours.special_tokens_map == {"bos": "<|begin_of_text|>", "eos": "<|end_of_text|>", "pad": "<|finetune_right_pad|>"}
    assert ours.decode(out["input_ids"][0], skip_special_tokens=True) == "hello there"


def test_llama4_bad_files(tmp_path: Any) -> None:
    small = tmp_path / "small.model"
    small.write_bytes(b"".join(base64.b64encode(bytes([i])) + b" " + str(i).encode() + b"\n" for i in range(100)))
    with pytest.raises(FormatError, match="small.model: not a Llama 4 tokenizer.model .*200,000 ranks"):
        bytepair.load(small, encoding="llama4")
    broken = tmp_path / "broken.model"
    broken.write_bytes(b"not base64!! 0\n")
    with pytest.raises(FormatError, match="broken.model"):
        bytepair.load(broken, encoding="llama4")
