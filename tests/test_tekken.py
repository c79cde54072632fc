"""Mistral's Tekken files against mistral_common's Tekkenizer: the two released files it ships
(Mistral NeMo's tekken_240718.json, Pixtral's tekken_240911.json), and files built here (listed
special tokens, fillers, a later version, unused vocab entries, bad fields). Both ways: a file
bytepair writes is read by mistral_common with the same ids.

mistral_common is a dev dependency: outside CI these tests skip without it, in CI they fail."""

from __future__ import annotations

import base64
import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.errors import FormatError
from bytepair.formats.tekken import dump_tekken, load_tekken
from bytepair.formats.tiktoken import read_ranks
from bytepair.pipeline import TemplateProcessing

try:
    from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy, TokenizerVersion
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer
except ImportError:  # pragma: no cover - CI installs .[dev]
    if os.environ.get("CI"):
        raise
    pytest.skip("the Tekken tests need mistral_common: pip install mistral_common", allow_module_level=True)

# Mistral's pattern as its released files spell it.
PATTERN = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)

TEXTS = [
    "",
    "Hello world!  How's it going?\n\n\tdone",
    "naïve café 東京 🙂 12345678 I'M sure, camelCaseWordsAndXMLHttpRequest",
    "   \n\r\n  x  ",
    "[INST] what is 2+2? [/INST]<s></s><unk> <pad>",  # special-token text is ordinary to mistral_common
    "def f(x):\n    return x ** 2  # comment\n",
    "a list.\n/path/to.\n//x",
    "\u0000\x7f\u200b\ufeff",
]


def _released(name: str) -> str:
    return str(resources.files("mistral_common") / "data" / name)


@pytest.fixture(scope="module", params=["tekken_240718.json", "tekken_240911.json"])
def released(request: pytest.FixtureRequest) -> tuple[Any, Any, str]:
    path = _released(request.param)
    return bytepair.load(path), Tekkenizer.from_file(path), path


def _check_same(ours: Any, ref: Any, text: str) -> None:
    plain = ref.encode(text, bos=False, eos=False)
    assert ours.encode_ordinary(text) == plain
    assert ours.encode(text, disallowed_special=()) == plain
    assert ours(text, add_special_tokens=False)["input_ids"] == ours.encode(text, allowed_special="all")
    if not any(s in text for s in ours.special_tokens):
        assert ours(text)["input_ids"] == ref.encode(text, bos=True, eos=False)
    assert ours.decode(plain) == ref.decode(plain)


def test_released_files(released: tuple[Any, Any, str]) -> None:
    ours, ref, _ = released
    assert isinstance(ours, bytepair.Tokenizer)
    assert ours.n_vocab == ref.n_words == 131_072
    assert {t: i for t, i in ours.special_tokens.items()} == {ref.id_to_piece(i): i for i in range(ref.num_special_tokens)}
    for role, token_id in (("bos", ref.bos_id), ("eos", ref.eos_id), ("unk", ref.unk_id), ("pad", ref.pad_id)):
        assert ours.special_tokens[ours.special_tokens_map[role]] == token_id
    for text in TEXTS:
        _check_same(ours, ref, text)
    ids = [ref.bos_id, *ref.encode("naïve 東京", bos=False, eos=False), ref.get_special_token("[INST]"), ref.eos_id]
    assert ours.decode(ids, skip_special_tokens=True) == ref.decode(ids)
    assert ours.decode(ids) == ref.decode(ids, special_token_policy=SpecialTokenPolicy.KEEP)
    for i in (0, 1, 999, 1000, 1255, 5000, 131_071):
        assert ours.decode_bytes([i]) == ref.id_to_byte_piece(i, SpecialTokenPolicy.KEEP)


@settings(max_examples=max(10, settings().max_examples // 2))
@given(
    text=st.lists(
        st.one_of(st.text(st.characters(codec="utf-8"), max_size=30), st.sampled_from(["<s>", "[INST]", " ", "\n", "I'M", "Ab"])),
        max_size=6,
    ).map("".join)
)
def test_property_against_mistral_common(released: tuple[Any, Any, str], text: str) -> None:
    ours, ref, _ = released
    assert ours.encode_ordinary(text) == ref.encode(text, bos=False, eos=False)


def test_bos_and_eos(released: tuple[Any, Any, str]) -> None:
    ours, ref, _ = released
    both = ours.with_model_inputs(post_processor=TemplateProcessing.of("<s> $A </s>", None, {"<s>": 1, "</s>": 2}))
    for text in TEXTS[1:4]:
        assert both(text)["input_ids"] == ref.encode(text, bos=True, eos=True)
        assert ours(text)["input_ids"] == ref.encode(text, bos=True, eos=False)
    out = ours(["hello there", "x"], padding=True)
    hello = ref.encode("hello there", bos=True, eos=False)
    assert out["input_ids"][1] == ref.encode("x", bos=True, eos=False) + [ref.pad_id] * (len(hello) - 2)


def test_released_written_back(released: tuple[Any, Any, str], tmp_path: Path) -> None:
    ours, ref, path = released
    out = tmp_path / "tekken_copy.json"
    dump_tekken(ours, out)
    original, written = json.loads(Path(path).read_text("utf-8")), json.loads(out.read_text("utf-8"))
    assert written == original  # everything the file held, image settings and unused entries included
    again = Tekkenizer.from_file(out)
    for text in TEXTS:
        assert again.encode(text, bos=True, eos=True) == ref.encode(text, bos=True, eos=True)
    assert bytepair.load(out) == ours


# ------------------------------------------------------------------ files built here


def _vocab(n: int) -> list[dict[str, Any]]:
    """Tekken's ordinary vocab: the 256 bytes, then o200k's longer tokens in rank order."""
    ranks = read_ranks(bytepair.__path__[0] + "/data/o200k_base.tiktoken.gz")
    longer = [t for t, _ in sorted(ranks.items(), key=lambda kv: kv[1]) if len(t) > 1]
    tokens = [bytes([b]) for b in range(256)] + longer[: n - 256]
    out = []
    for rank, t in enumerate(tokens):
        try:
            text: str | None = t.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        out.append({"rank": rank, "token_bytes": base64.b64encode(t).decode(), "token_str": text})
    return out


def _file(tmp_path: Path, *, n_special: int = 40, listed: int | None = 12, n_vocab: int = 6000, unused: int = 100,
          version: str = "v13", name: str = "tekken_test.json", **changes: Any) -> Path:
    doc: dict[str, Any] = {
        "config": {"pattern": PATTERN, "num_vocab_tokens": n_vocab + unused, "default_vocab_size": n_special + n_vocab,
                   "default_num_special_tokens": n_special, "version": version},
        "vocab": _vocab(n_vocab + unused),
        "type": "Tekken",
    }
    if listed is not None:
        names = ["<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
                 "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[THINK]", "[/THINK]"]
        doc["special_tokens"] = [{"rank": k, "token_str": names[k], "is_control": k != 3} for k in range(listed)]
    for key, value in changes.items():
        target = doc
        *parents, last = key.split(".")
        for p in parents:
            target = target[p]
        if value is _DROP:
            del target[last]
        else:
            target[last] = value
    path = tmp_path / name
    path.write_text(json.dumps(doc), "utf-8")
    return path


_DROP = object()


@pytest.mark.parametrize(
    "shape",
    [
        {},  # 12 listed, 28 fillers <SPECIAL_k>, unused entries after the vocab
        {"listed": None, "version": "v7", "n_special": 20},  # the legacy listing
        {"listed": 14, "n_special": 14, "unused": 0, "version": "v11"},
    ],
)
def test_built_files(tmp_path: Path, shape: dict[str, Any]) -> None:
    path = _file(tmp_path, **shape)
    ours, ref = bytepair.load(path), Tekkenizer.from_file(path)
    assert ours.n_vocab == ref.n_words
    assert ours.special_tokens == {ref.id_to_piece(i): i for i in range(ref.num_special_tokens)}
    for text in TEXTS:
        _check_same(ours, ref, text)
    # written back as read, and as a tokenizer of its own (no extras) for mistral_common
    out = tmp_path / "tekken_out.json"
    dump_tekken(ours, out)
    assert json.loads(out.read_text("utf-8")) == json.loads(path.read_text("utf-8"))
    assert ours.with_model_inputs(model_max_length=10).__dict__["_tekken"] == ours.__dict__["_tekken"]  # copies keep it
    plain = bytepair.Tokenizer(ours.vocab, ours.merges, special_tokens=ours.special_tokens, pattern=ours.pattern)
    dump_tekken(plain, out, version="v13")
    again = Tekkenizer.from_file(out)
    assert again.n_words == ref.n_words
    for text in TEXTS:
        assert again.encode(text, bos=True, eos=True) == ref.encode(text, bos=True, eos=True)
    assert bytepair.load(out) == ours


def test_pickled_and_saved_tokenizer_keeps_ids(tmp_path: Path) -> None:
    import pickle

    ours = load_tekken(_file(tmp_path))
    copy = pickle.loads(pickle.dumps(ours))
    assert copy("hello [INST] there")["input_ids"] == ours("hello [INST] there")["input_ids"]
    ours.save(tmp_path / "mine.json")
    assert bytepair.load(tmp_path / "mine.json").encode_ordinary(TEXTS[2]) == ours.encode_ordinary(TEXTS[2])


def test_trained_tokenizer_is_refused(tmp_path: Path) -> None:
    tok = bytepair.train_from_iterator(["hello world " * 20, "more text here"] * 5, vocab_size=270, special_tokens=["<s>"], pattern="gpt4")
    with pytest.raises(FormatError, match="special tokens at ids 0..0, and id 0 is not one"):
        dump_tekken(tok, tmp_path / "t.json")
    assert not (tmp_path / "t.json").exists()
    # A layout that fits (special tokens first, bytes next) is written, and mistral_common reads it.
    fitting = bytepair.Tokenizer(
        {1 + i: b for i, b in tok.vocab.items() if i < 270}, merges=tok.merges, special_tokens={"<s>": 0}, pattern="gpt4"
    )
    dump_tekken(fitting, tmp_path / "tekken_fit.json", version="v13")
    ref = Tekkenizer.from_file(tmp_path / "tekken_fit.json")
    assert ref.encode("hello world more", bos=True, eos=False) == [0, *fitting.encode("hello world more")]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"config.pattern": _DROP}, "config.pattern must be a non-empty regex"),
        ({"config.pattern": "(unclosed"}, "config.pattern"),
        ({"config.version": 7}, "config.version must be a string"),
        ({"config.version": "seven"}, "config.version must be a version like"),
        ({"config.default_vocab_size": "big"}, "config.default_vocab_size must be a non-negative integer"),
        ({"config.default_num_special_tokens": -1}, "config.default_num_special_tokens must be"),
        ({"config.default_vocab_size": 10**6}, "config.default_vocab_size 1000000 needs"),
        ({"special_tokens": _DROP}, "special_tokens is missing; files of version v13 must list them"),
        ({"special_tokens": {"a": 1}}, "special_tokens must be a list"),
        ({"special_tokens": [{"rank": 0, "token_str": "<unk>"}, {"rank": 5, "token_str": "<s>"}]}, r"special_tokens\[1\].rank must be 1"),
        ({"special_tokens": [{"rank": 0, "token_str": ""}]}, r"special_tokens\[0\].token_str must be a non-empty"),
        ({"special_tokens": [{"rank": 0, "token_str": "<s>"}, {"rank": 1, "token_str": "<s>"}]}, r"special_tokens\[1\].token_str '<s>' is also"),
        ({"special_tokens": [{"rank": 0, "token_str": "<s>", "is_control": "yes"}]}, r"special_tokens\[0\].is_control"),
        ({"vocab": {"x": 1}}, "vocab must be a list"),
    ],
)
def test_bad_files(tmp_path: Path, changes: dict[str, Any], message: str) -> None:
    path = _file(tmp_path, **changes)
    with pytest.raises(FormatError, match=message) as e:
        bytepair.load(path)
    assert "tekken_test.json" in str(e.value)


def test_bad_vocab_entries(tmp_path: Path) -> None:
    path = _file(tmp_path)
    doc = json.loads(path.read_text("utf-8"))
    for k, entry, message in [
        (7, {"rank": 8, "token_bytes": "Bw==", "token_str": None}, r"vocab\[7\].rank must be 7"),
        (7, {"rank": 7, "token_bytes": "B", "token_str": None}, r"vocab\[7\].token_bytes is not base64"),
        (7, {"rank": 7, "token_bytes": "CA==", "token_str": None}, r"vocab\[7\].token_bytes must be the single byte"),
        (300, {"rank": 300, "token_bytes": doc["vocab"][299]["token_bytes"], "token_str": None}, r"vocab\[300\].token_bytes .* is also vocab\[299\]"),
        (300, "x", r"vocab\[300\] must be an object"),
    ]:
        bad = json.loads(json.dumps(doc))
        bad["vocab"][k] = entry
        path.write_text(json.dumps(bad), "utf-8")
        with pytest.raises(FormatError, match=message):
            load_tekken(path)


def test_versions_agree_with_mistral_common() -> None:
    # the legacy listing (no special_tokens) holds up to v7, as mistral_common says
    assert [v.value for v in TokenizerVersion if v <= TokenizerVersion.v7][-1] == "v7"
