"""Pretrained encodings: parity with tiktoken, built offline from the rank files bytepair ships.

tiktoken is the reference: each encoding is rebuilt as ``tiktoken.Encoding`` from the same
(decompressed) file, with the patterns and special tokens written out below from tiktoken's
published definitions, and every public encode/decode path is compared on fixed texts, the
shipped Shakespeare, Python source and hypothesis-generated strings.
"""

from __future__ import annotations

import gzip
import hashlib
import inspect
import os
import pathlib
import threading
from collections.abc import Callable
from typing import Any

import pytest
import tiktoken
import tiktoken.load
import tiktoken.model
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
import bytepair.encodings
from bytepair import DisallowedSpecialTokenError, FormatError, Tokenizer
from bytepair.formats.tiktoken import dump_tiktoken, load_tiktoken

EXAMPLES = settings(max_examples=int(os.environ.get("BYTEPAIR_HYPOTHESIS_EXAMPLES", "200")), deadline=None)

DATA = pathlib.Path(bytepair.__file__).parent / "data"

# tiktoken's definitions, independent of bytepair's presets (test_pattern_and_specials_are_tiktokens pins them).
_O200K_ALTERNATIVES = (
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
)
_O200K = "|".join(_O200K_ALTERNATIVES)
REFERENCE: dict[str, dict[str, Any]] = {
    "gpt2": {
        "file": "r50k_base.tiktoken.gz",
        "sha256": "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
        "pat_str": r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s""",
        "special_tokens": {"<|endoftext|>": 50256},
    },
    "cl100k_base": {
        "file": "cl100k_base.tiktoken.gz",
        "sha256": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        "pat_str": r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
        "special_tokens": {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    },
    "o200k_base": {
        "file": "o200k_base.tiktoken.gz",
        "sha256": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        "pat_str": _O200K,
        "special_tokens": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    },
}
NAMES = list(REFERENCE)

Pair = tuple[Tokenizer, tiktoken.Encoding]


# ---------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def rank_dir(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """The shipped rank files, decompressed: tiktoken reads plain local files."""
    out = tmp_path_factory.mktemp("ranks")
    for ref in REFERENCE.values():
        (out / ref["file"].removesuffix(".gz")).write_bytes(gzip.decompress((DATA / ref["file"]).read_bytes()))
    return out


_reference_cache: dict[str, tiktoken.Encoding] = {}


def _reference(name: str, rank_dir: pathlib.Path) -> tiktoken.Encoding:
    if name not in _reference_cache:
        ref = REFERENCE[name]
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("TIKTOKEN_CACHE_DIR", "")  # read the local file, write no cache
            ranks = tiktoken.load.load_tiktoken_bpe(
                str(rank_dir / ref["file"].removesuffix(".gz")), expected_hash=ref["sha256"]
            )
        _reference_cache[name] = tiktoken.Encoding(
            name, pat_str=ref["pat_str"], mergeable_ranks=ranks, special_tokens=ref["special_tokens"]
        )
    return _reference_cache[name]


@pytest.fixture(scope="session", params=NAMES)
def pair(request: pytest.FixtureRequest, rank_dir: pathlib.Path) -> Pair:
    name = request.param
    return bytepair.get_encoding(name), _reference(name, rank_dir)


# ---------------------------------------------------------------------------------- helpers

SPECIALS = sorted({t for ref in REFERENCE.values() for t in ref["special_tokens"]})

# Every form of allowed_special/disallowed_special tiktoken accepts.
POLICIES: list[dict[str, Any]] = [
    {},
    {"allowed_special": "all"},
    {"allowed_special": set()},
    {"allowed_special": frozenset()},
    {"allowed_special": {"<|endoftext|>"}},
    {"allowed_special": frozenset({"<|endoftext|>", "<|endofprompt|>"})},
    {"allowed_special": {"<|fim_prefix|>", "not a special token"}},
    {"disallowed_special": ()},
    {"disallowed_special": set()},
    {"disallowed_special": frozenset()},
    {"disallowed_special": []},
    {"allowed_special": "all", "disallowed_special": ()},
    {"allowed_special": "all", "disallowed_special": "all"},
    {"allowed_special": {"<|endoftext|>"}, "disallowed_special": ()},
    {"disallowed_special": {"<|endoftext|>"}},
    {"disallowed_special": frozenset({"<|endofprompt|>"})},
    {"disallowed_special": ("<|endoftext|>",)},
    {"disallowed_special": ["<|fim_middle|>"]},
    {"allowed_special": {"<|endoftext|>"}, "disallowed_special": {"<|endoftext|>"}},
    {"allowed_special": {"<|endoftext|>"}, "disallowed_special": {"<|endofprompt|>"}},
    {"disallowed_special": {"hello"}},  # custom strings, not special tokens
    {"disallowed_special": {"<|", "a.b", "(?"}},
    {"allowed_special": "all", "disallowed_special": {"\r\n"}},
]


def _outcome(fn: Callable[[], Any]) -> Any:
    """The result of ``fn()``, or the marker ``ValueError`` if it raises one."""
    try:
        return fn()
    except ValueError:
        return ValueError


def assert_same_encodings(ours: Tokenizer, theirs: tiktoken.Encoding, text: str) -> None:
    expected = theirs.encode_ordinary(text)
    assert ours.encode_ordinary(text) == expected
    assert ours.encode(text, disallowed_special=()) == expected
    assert ours.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")
    assert ours.decode_bytes(expected) == theirs.decode_bytes(expected)
    assert ours.decode(expected) == theirs.decode(expected)


def _chunks(text: str, n: int) -> list[str]:
    # cut at arbitrary character offsets, not at line ends: chunks start and end mid-word
    step = len(text) // n + 1
    return [text[i : i + step] for i in range(0, len(text), step)]


# ---------------------------------------------------------------------------------- tables


@pytest.mark.parametrize("name", NAMES)
def test_pattern_and_specials_are_tiktokens(name: str) -> None:
    tok = bytepair.get_encoding(name)
    assert tok.name == name
    assert tok.pattern == REFERENCE[name]["pat_str"]
    assert tok.special_tokens == REFERENCE[name]["special_tokens"]


def test_ranks_are_tiktokens(pair: Pair, rank_dir: pathlib.Path) -> None:
    ours, theirs = pair
    vocab = ours.vocab
    assert vocab == {rank: token for token, rank in theirs._mergeable_ranks.items()}
    assert sorted(vocab) == list(range(len(vocab)))  # dense: the strategies below rely on it
    for text, id in theirs._special_tokens.items():
        assert ours.token_bytes(id) == theirs.decode_single_token_bytes(id) == text.encode()
    assert ours.vocab_size == len(vocab) + len(theirs._special_tokens)


def test_cached_once_and_shared() -> None:
    assert bytepair.get_encoding("cl100k_base") is bytepair.get_encoding("cl100k_base")
    assert bytepair.get_encoding("r50k_base").name == "r50k_base"
    assert bytepair.list_encoding_names() == ["gpt2", "r50k_base", "cl100k_base", "o200k_base"]


def test_loaded_once_across_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    loads: list[str] = []
    real_load = bytepair.encodings._load

    def counting_load(name: str, spec: Any) -> Tokenizer:
        loads.append(name)
        return real_load(name, spec)

    monkeypatch.setattr(bytepair.encodings, "_cache", {})
    monkeypatch.setattr(bytepair.encodings, "_load", counting_load)
    barrier = threading.Barrier(6)
    got: list[Tokenizer] = []

    def worker() -> None:
        barrier.wait()
        got.append(bytepair.get_encoding("r50k_base"))

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert loads == ["r50k_base"]
    assert len(got) == 6 and all(t is got[0] for t in got)


# ---------------------------------------------------------------------------------- models

# Names both libraries know: the mapping must agree with tiktoken's.
MODELS = [
    "gpt-3.5-turbo", "gpt-3.5-turbo-0125", "gpt-3.5-turbo-16k", "gpt-35-turbo", "gpt-3.5",
    "gpt-4", "gpt-4-0613", "gpt-4-32k", "gpt-4-turbo", "gpt-4-turbo-2024-04-09",
    "gpt-4o", "gpt-4o-mini", "gpt-4o-2024-08-06", "gpt-4o-mini-2024-07-18", "chatgpt-4o-latest",
    "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano-2025-04-14", "gpt-4.5-preview", "gpt-4.5-preview-2025-02-27",
    "o1", "o1-mini", "o1-preview-2024-09-12", "o3", "o3-mini", "o3-pro", "o4-mini", "o4-mini-2025-04-16",
    "gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-5-2025-08-07", "gpt-5.1",
    "text-embedding-ada-002", "text-embedding-3-small", "text-embedding-3-large",
    "ft:gpt-4o-mini-2024-07-18:org::abc", "ft:gpt-4-0613:org::abc", "ft:gpt-3.5-turbo-0613:org::abc",
    "davinci-002", "babbage-002", "gpt2", "gpt-2", "davinci", "text-ada-001",
]  # fmt: skip


@pytest.mark.parametrize("model", MODELS)
def test_model_names_map_as_tiktoken(model: str) -> None:
    expected = tiktoken.model.encoding_name_for_model(model)
    assert bytepair.encodings.encoding_name_for_model(model) == expected
    assert bytepair.encoding_for_model(model) is bytepair.get_encoding(expected)


def test_model_names_beyond_tiktokens_table() -> None:
    assert bytepair.encoding_for_model("gpt-4.5").name == "o200k_base"
    assert bytepair.encoding_for_model("text-embedding-3-medium").name == "cl100k_base"


def test_unknown_names() -> None:
    with pytest.raises(ValueError, match="unknown encoding 'p50k_base'") as e:
        bytepair.get_encoding("p50k_base")
    for name in bytepair.list_encoding_names():
        assert name in str(e.value)
    with pytest.raises(ValueError, match="unknown model 'llama-3'") as e:
        bytepair.encoding_for_model("llama-3")
    for name in ["gpt-4o", "gpt-3.5-turbo", "text-embedding-3-small", "gpt-4o-", "o200k_base"]:
        assert name in str(e.value)
    with pytest.raises(ValueError, match="'text-davinci-003' uses the encoding 'p50k_base'"):
        bytepair.encoding_for_model("text-davinci-003")
    with pytest.raises(TypeError):
        bytepair.get_encoding(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        bytepair.encoding_for_model(4)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------- fixed texts

SCRIPTS = [
    "Hello, world! How's it going? I'M FINE, YOU'LL SEE, we'Ve been here.",
    "中文分词测试：我们今天去公园散步，天气很好。",
    "日本語のテキスト、カタカナとひらがなと漢字。",
    "한국어 문장입니다. 안녕하세요!",
    "العربية: مرحبا بالعالم، كيف حالك؟ ١٢٣٤٥٦",
    "हिन्दी पाठ: नमस्ते दुनिया, क्या हाल है? १२३",
    "ภาษาไทยไม่มีการเว้นวรรคระหว่างคำ",
    "עברית: שלום עולם, מה שלומך?",
    "Русский текст: Привет, мир! ПРИВЕТ МИР 'S",
    "Ελληνικά: Γειά σου Κόσμε",
    "emoji 👩‍👩‍👧‍👦 family, 🏳️‍🌈 flag, 👍🏽 skin tone, 🇫🇷 regional indicators",
    "combining: e\u0301 a\u0300\u0301\u0302 \u0301leading Z\u0351\u0352\u0353algo",
    "ǅungla ǈ title case, ʰmodifier, ǅ'S ǅ'll",
    "long s: 'ſ 'ſt ſ'S, Kelvin \u212a 'K",
    "digits 1 12 123 1234 12345678901234567890 ²³ ½ Ⅻ 𝟘𝟙𝟚 ١٢٣",
    "mixed\r\nline\rends\n\n\r\n\r\n  \n\t\n end   ",
    "   leading spaces and trailing   ",
    "tabs\t\tand\u00a0nbsp\u3000ideographic space\u2028line sep",
    "path/to/file.py //comment /* c */ <=> != === ... !!! ??? $$$",
    "x\ud800y lone \udfff surrogates \ud83d\ude00 paired-as-two",
    "<|endoftext|> inside <|endofprompt|> and <|fim_prefix|>x<|fim_middle|>y<|fim_suffix|>",
    "<|endo ftext|> <|endoftext| |endoftext|> <<|endoftext|>>",
    "a" * 1000,
    "ab" * 700 + " " + "\u00e9" * 300 + " " + "1" * 400,
    " " * 500 + "x",
    "\n" * 300 + "   ",
    "",
]


@pytest.mark.parametrize("text", SCRIPTS, ids=range(len(SCRIPTS)))
def test_fixed_texts(pair: Pair, text: str) -> None:
    ours, theirs = pair
    assert_same_encodings(ours, theirs, text)
    for policy in POLICIES:
        expected = _outcome(lambda p=policy: theirs.encode(text, **p))
        assert _outcome(lambda p=policy: ours.encode(text, **p)) == expected, policy


def test_shakespeare(pair: Pair) -> None:
    ours, theirs = pair
    text = (DATA / "tinyshakespeare.txt").read_text(encoding="utf-8")
    chunks = _chunks(text, 12)
    expected = theirs.encode_batch(chunks, disallowed_special=())
    assert ours.encode_batch(chunks, disallowed_special=()) == expected
    assert [ours.encode_ordinary(c) for c in chunks] == expected
    assert ours.decode(expected[3]) == chunks[3]
    assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)


def test_python_source(pair: Pair) -> None:
    import argparse
    import json.decoder
    import textwrap
    import typing

    ours, theirs = pair
    sources = [inspect.getsource(m) for m in (argparse, json.decoder, textwrap, typing)]
    assert ours.encode_batch(sources) == theirs.encode_batch(sources)
    for src in sources[1:3]:
        assert_same_encodings(ours, theirs, src)


# ---------------------------------------------------------------------------------- hypothesis

FRAGMENTS = [
    "'s", "'S", "'t", "'T", "'d", "'D", "'m", "'M", "'re", "'RE", "'Re", "'ve", "'Ve", "'VE",
    "'ll", "'LL", "'Ll", "'lL", "'ſ", "'", "''", "don", "DON", "I", "i", "Hello", "HELLO", "hELLO",
    " ", "  ", "    ", "\t", "\u00a0", "\u3000", "\r\n", "\r", "\n", "\n\n", "\r\n\r\n", " \r\n ",
    "0", "12", "123", "4567", "1234567890", "١٢٣", "²", "½", "Ⅻ", "é", "e\u0301", "\u0301", "ǅ", "ʰ",
    "中文", "日本語", "한국어", "العربية", "हिन्दी", "ไทย", "עברית", "Привет", "Ωμέγα",
    "😀", "👩‍👩‍👧", "🏳️‍🌈", "👍🏽", "\u200d", "\ufe0f",
    "\ud800", "\udfff", "\ud83d", "\ude00",
    "/", "//", ".", "...", "!", "?!", "$", "#", "_", "-", "—", "<", ">", "|", "<|", "|>",
    "<|endoftext|>", "<|endofprompt|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>",
    "<|endo", "ftext|>", "endoftext", "<|endoftext", "endoftext|>",
]  # fmt: skip
TRICKY = " \t\r\n'sStTlLvVeEdDmMrRaA019._/!-é\u0301中😀ǅʰſ\u00a0<|>"

_piece = st.one_of(
    st.sampled_from(FRAGMENTS),
    st.text(alphabet=TRICKY, max_size=12),
    st.text(st.characters(exclude_categories=()), max_size=8),  # any code point, surrogates too
    st.builds(lambda unit, n: unit * n, st.text(alphabet="ab1 é'", min_size=1, max_size=3), st.integers(40, 200)),
)
texts = st.lists(_piece, max_size=24).map("".join)


@EXAMPLES
@given(text=texts)
def test_encode_ordinary_hypothesis(pair: Pair, text: str) -> None:
    ours, theirs = pair
    expected = theirs.encode_ordinary(text)
    assert ours.encode_ordinary(text) == expected
    assert ours.decode(expected) == theirs.decode(expected)


@EXAMPLES
@given(text=texts, policy=st.sampled_from(POLICIES))
def test_encode_special_policies_hypothesis(pair: Pair, text: str, policy: dict[str, Any]) -> None:
    ours, theirs = pair
    expected = _outcome(lambda: theirs.encode(text, **policy))
    assert _outcome(lambda: ours.encode(text, **policy)) == expected
    if expected is ValueError:
        with pytest.raises(DisallowedSpecialTokenError):
            ours.encode(text, **policy)


@EXAMPLES
@given(batch=st.lists(texts, max_size=6), policy=st.sampled_from(POLICIES))
def test_encode_batch_hypothesis(pair: Pair, batch: list[str], policy: dict[str, Any]) -> None:
    ours, theirs = pair
    expected = _outcome(lambda: theirs.encode_batch(batch, num_threads=2, **policy))
    assert _outcome(lambda: ours.encode_batch(batch, num_threads=2, **policy)) == expected
    # A batch of under 64 KiB runs on the calling thread: with a long first text the same
    # batch goes through the pool (the lists made while the other thread encodes).
    if len(batch) > 1:
        big = [batch[0] + " the same words again" * 4000, *batch[1:]]
        expected = _outcome(lambda: theirs.encode_batch(big, num_threads=2, **policy))
        assert _outcome(lambda: ours.encode_batch(big, num_threads=2, **policy)) == expected


@EXAMPLES
@given(data=st.data())
def test_decode_hypothesis(pair: Pair, data: st.DataObject) -> None:
    ours, theirs = pair
    n = len(theirs._mergeable_ranks)
    ids = data.draw(
        st.lists(st.one_of(st.integers(0, n - 1), st.sampled_from(sorted(theirs._special_tokens.values()))), max_size=40)
    )
    assert ours.decode_bytes(ids) == theirs.decode_bytes(ids)
    assert ours.decode(ids) == theirs.decode(ids)
    assert ours.decode(ids, errors="ignore") == theirs.decode(ids, errors="ignore")


def test_decode_unknown_id(pair: Pair) -> None:
    ours, theirs = pair
    missing = max(theirs._special_tokens.values()) + 1
    with pytest.raises(bytepair.UnknownTokenError, match=str(missing)):
        ours.decode([0, missing])


# ---------------------------------------------------------------------------------- load/dump


def _write(path: pathlib.Path, lines: list[str], *, compress: bool = False) -> pathlib.Path:
    data = "".join(line + "\n" for line in lines).encode()
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def _byte_lines() -> list[str]:
    import base64

    return [f"{base64.b64encode(bytes([i])).decode()} {i}" for i in range(256)]


@pytest.mark.parametrize("compress", [False, True])
def test_load_tiktoken_small_file(tmp_path: pathlib.Path, compress: bool) -> None:
    lines = [*_byte_lines(), "aGk= 256", "", "IGhp 257"]  # "hi", a blank line, " hi"
    path = _write(tmp_path / "small.tiktoken", lines, compress=compress)
    tok = load_tiktoken(path, pattern="gpt2", special_tokens={"<|end|>": 258})
    assert tok.encode("hi hi<|end|>", allowed_special="all") == [256, 257, 258]
    assert tok.name is None
    digest = hashlib.sha256("".join(line + "\n" for line in lines).encode()).hexdigest()
    assert load_tiktoken(str(path), pattern="gpt2", expected_hash=digest.upper()).vocab == tok.vocab


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ("!!!! 256", "not valid base64"),
        ("aGk 256", "not valid base64"),  # missing padding
        ("aGk=", "expected two fields"),  # missing rank
        ("aGk= 256 7", "expected two fields"),
        ("aGk= x256", "not a non-negative integer"),
        ("aGk= -256", "not a non-negative integer"),
        ("aGk= 2.5", "not a non-negative integer"),
        ("aGk= 99999999999", "far beyond"),
        ("aGk= 4000000000", "far beyond"),
        ("aQ== 256", "already on line"),  # the token "i" again
        ("aGk= 255", "already on line"),  # rank 255 again
    ],
)
@pytest.mark.parametrize("compress", [False, True])
def test_load_tiktoken_malformed_line(tmp_path: pathlib.Path, bad: str, why: str, compress: bool) -> None:
    lines = _byte_lines()
    lines.insert(200, bad)  # line 201
    path = _write(tmp_path / "bad.tiktoken", lines, compress=compress)
    with pytest.raises(FormatError, match=why) as e:
        load_tiktoken(path, pattern="gpt2")
    message = str(e.value)
    assert str(path) in message
    assert "line 201" in message


def test_load_tiktoken_bad_gzip(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "bad.tiktoken.gz"
    path.write_bytes(gzip.compress(b"IQ== 0\n" * 50)[:30])
    with pytest.raises(FormatError, match="not a valid gzip file") as e:
        load_tiktoken(path, pattern="gpt2")
    assert str(path) in str(e.value)


@pytest.mark.parametrize("compress", [False, True])
def test_load_tiktoken_hash_mismatch(tmp_path: pathlib.Path, compress: bool) -> None:
    path = _write(tmp_path / "ranks.tiktoken", _byte_lines(), compress=compress)
    expected = "0" * 64
    actual = hashlib.sha256("".join(line + "\n" for line in _byte_lines()).encode()).hexdigest()
    with pytest.raises(FormatError) as e:
        load_tiktoken(path, pattern="gpt2", expected_hash=expected)
    message = str(e.value)
    assert str(path) in message and expected in message and actual in message


def test_load_tiktoken_missing_file(tmp_path: pathlib.Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_tiktoken(tmp_path / "nope.tiktoken", pattern="gpt2")


@pytest.mark.parametrize("name", NAMES)
def test_dump_reproduces_the_shipped_file(tmp_path: pathlib.Path, name: str) -> None:
    tok = bytepair.get_encoding(name)
    dump_tiktoken(tok, tmp_path / "out.tiktoken.gz")
    data = gzip.decompress((tmp_path / "out.tiktoken.gz").read_bytes())
    assert hashlib.sha256(data).hexdigest() == REFERENCE[name]["sha256"]
    assert os.listdir(tmp_path) == ["out.tiktoken.gz"]


def test_dump_trained_tokenizer_loads_in_tiktoken(tmp_path: pathlib.Path) -> None:
    text = (DATA / "tinyshakespeare.txt").read_text(encoding="utf-8")[:200_000]
    tok = bytepair.train_from_iterator([text], vocab_size=1000, pattern="gpt4")
    path = tmp_path / "trained.tiktoken"
    dump_tiktoken(tok, path)
    again = load_tiktoken(path, pattern="gpt4", special_tokens=tok.special_tokens)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIKTOKEN_CACHE_DIR", "")
        ranks = tiktoken.load.load_tiktoken_bpe(str(path))
    theirs = tiktoken.Encoding(
        "trained", pat_str=REFERENCE["cl100k_base"]["pat_str"], mergeable_ranks=ranks, special_tokens={}
    )
    sample = (DATA / "tinyshakespeare.txt").read_text(encoding="utf-8")[500_000:560_000]
    assert again.vocab == tok.vocab
    assert again.encode_ordinary(sample) == tok.encode_ordinary(sample) == theirs.encode_ordinary(sample)


def test_dump_is_atomic(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "ranks.tiktoken"
    path.write_bytes(b"precious\n")

    def failing_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        dump_tiktoken(bytepair.get_encoding("gpt2"), path)
    assert path.read_bytes() == b"precious\n"
    assert os.listdir(tmp_path) == ["ranks.tiktoken"]

