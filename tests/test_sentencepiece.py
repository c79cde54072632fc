"""SentencePiece models (Unigram and BPE) against the `sentencepiece` package.

Every model here is trained in the test by `sentencepiece.SentencePieceTrainer` on text the
repository holds (Shakespeare, many scripts, Python source), with the options that change how a
model encodes: byte fallback, split digits, user-defined symbols, the normalization rules
(nmt_nfkc, nfkc, identity) and the whitespace options. `bytepair.load(model).encode(text)` must
equal `SentencePieceProcessor.encode(text)`, and `decode` its `decode`, on real and random text.
"""

from __future__ import annotations

import os
import pickle
import random
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import FormatError, SentencePieceTokenizer, UnknownTokenError
from tests.interop_texts import texts, training_text
from tests.strategies import any_char, busy_char

spm = pytest.importorskip("sentencepiece")

# name -> trainer options (besides input, model_prefix)
CONFIGS: dict[str, dict[str, Any]] = {
    "unigram": dict(model_type="unigram", vocab_size=1000),
    "unigram_bytes": dict(
        model_type="unigram", vocab_size=1000, byte_fallback=True, split_digits=True,
        user_defined_symbols=["<sep>", "foo", "ab c"], character_coverage=0.995,
    ),
    "unigram_nfkc": dict(model_type="unigram", vocab_size=800, normalization_rule_name="nfkc"),
    "unigram_identity": dict(
        model_type="unigram", vocab_size=800, normalization_rule_name="identity", add_dummy_prefix=False,
    ),
    "unigram_spaces": dict(
        model_type="unigram", vocab_size=800, remove_extra_whitespaces=False, character_coverage=0.98,
    ),
    "unigram_suffix": dict(model_type="unigram", vocab_size=800, treat_whitespace_as_suffix=True),
    "bpe": dict(model_type="bpe", vocab_size=1000),
    "bpe_bytes": dict(
        model_type="bpe", vocab_size=1000, byte_fallback=True, split_digits=True,
        user_defined_symbols=["<sep>", "foo"], character_coverage=0.995,
    ),
    "bpe_nfkc": dict(model_type="bpe", vocab_size=800, normalization_rule_name="nfkc", character_coverage=0.98),
    "bpe_identity": dict(
        model_type="bpe", vocab_size=800, normalization_rule_name="identity", add_dummy_prefix=False,
        remove_extra_whitespaces=False, byte_fallback=True,
    ),
    "bpe_suffix": dict(model_type="bpe", vocab_size=800, treat_whitespace_as_suffix=True, byte_fallback=True),
}


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("spm")
    corpus = root / "corpus.txt"
    lines = [line for part in training_text() for line in part.splitlines() if line.strip()]
    # Python source, fixed (a copy of an earlier tokenizer.py): the models, and so the texts
    # their near-ties fall on, must not change whenever the package's own source does.
    code = os.path.join(os.path.dirname(__file__), "data", "spm_code.txt")
    with open(code, encoding="utf-8") as f:
        lines += [line for line in f.read().splitlines()[:1500] if line.strip()]
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = {}
    for name, opts in CONFIGS.items():
        prefix = str(root / name)
        spm.SentencePieceTrainer.train(
            input=str(corpus), model_prefix=prefix, minloglevel=2, num_threads=1, **opts
        )
        out[name] = prefix + ".model"
    return out


@pytest.fixture(scope="module")
def pairs(models: dict[str, str]) -> dict[str, tuple[SentencePieceTokenizer, Any]]:
    out = {}
    for name, path in models.items():
        tok = bytepair.load(path)
        assert isinstance(tok, SentencePieceTokenizer)
        out[name] = (tok, spm.SentencePieceProcessor(model_file=path))
    return out


EXTRA = [
    "", " ", "   ", "\u200b", "a\u200bb", "ℌ ﬁ ① Ⅻ ㍿ ｶﾞ", "x<sep>y ab c foo", "foofoo", "<s></s><unk>",
    "  lots   of   space  ", "tab\there\nnew\r\nline", "12345 678.9", "日本語のテキスト", "😀👍🏽 emoji",
    "Ünïcödé ßtraße", "\u3000full\u3000width\u3000", "a\u00a0b\u2003c", "\U0010ffff\ue000",
]


def check(tok: SentencePieceTokenizer, sp: Any, text: str) -> None:
    ids = sp.encode(text)
    assert tok.encode(text) == ids, (text, sp.encode(text, out_type=str), tok.tokenize(text))
    assert tok.tokenize(text) == sp.encode(text, out_type=str)
    assert tok.decode(ids) == sp.decode(ids), (text, ids)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_real_text(pairs: dict[str, tuple[SentencePieceTokenizer, Any]], name: str) -> None:
    tok, sp = pairs[name]
    for text in texts() + EXTRA:
        check(tok, sp, text)
    batch = texts()[:200]
    assert tok.encode_batch(batch) == [sp.encode(t) for t in batch]
    assert tok.encode_batch(batch, num_threads=2, add_bos=True, add_eos=True) == [
        sp.encode(t, add_bos=True, add_eos=True) for t in batch
    ]


@pytest.mark.parametrize("name", ["unigram", "unigram_bytes", "bpe_bytes", "bpe_identity"])
def test_numpy_batch_is_the_lists(pairs: dict[str, tuple[SentencePieceTokenizer, Any]], name: str) -> None:
    import numpy as np

    tok, _ = pairs[name]
    batch = texts() + EXTRA + ["x\ud800y"]
    lists = tok.encode_batch(batch)
    for threads in (1, 2):
        ids, offsets = tok.encode_batch_numpy(batch, num_threads=threads)
        assert ids.dtype == np.uint16 and offsets.dtype == np.int64 and len(offsets) == len(batch) + 1
        assert [ids[offsets[i] : offsets[i + 1]].tolist() for i in range(len(batch))] == lists
    wide, offsets = tok.encode_batch_numpy(batch[:5], dtype="uint32")
    assert wide.dtype == np.uint32 and wide.tolist() == [i for ids in lists[:5] for i in ids]
    empty, offsets = tok.encode_batch_numpy([])
    assert len(empty) == 0 and offsets.tolist() == [0]
    with pytest.raises(bytepair.BytepairError, match="dtype"):
        tok.encode_batch_numpy(batch[:1], dtype="int8")
    with pytest.raises(TypeError, match="int"):
        tok.encode_batch_numpy(["a", 3])  # type: ignore[list-item]


# characters the models know, any character, the ones normalization changes, user-defined
# symbols, and combining marks after ASCII letters (NFKC composes them: the normalizer's ASCII
# fast path must stop before such a letter)
random_text = st.lists(
    st.one_of(
        busy_char, any_char,
        st.sampled_from(list(" \u3000\u00a0ﬁ①ｶﾞ\u200b") + ["<sep>", "foo", "ab c", "  "]),
        st.sampled_from(["e\u0301", "A\u030a", "\u0301", "n\u0303x", "c\u0327\u0301", "ab\u0308", "1\u20e3"]),
    ),
    max_size=40,
).map("".join)


@settings(max_examples=int(os.environ.get("BYTEPAIR_HYPOTHESIS_EXAMPLES", "100")) * 2)
@given(text=random_text, name=st.sampled_from(list(CONFIGS)))
def test_random_text(pairs: dict[str, tuple[SentencePieceTokenizer, Any]], text: str, name: str) -> None:
    tok, sp = pairs[name]
    check(tok, sp, text)


@given(data=st.data(), name=st.sampled_from(list(CONFIGS)))
def test_decode_any_ids(pairs: dict[str, tuple[SentencePieceTokenizer, Any]], data: st.DataObject, name: str) -> None:
    tok, sp = pairs[name]
    ids = data.draw(st.lists(st.integers(0, len(tok) - 1), max_size=30))
    assert tok.decode(ids) == sp.decode(ids)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_vocabulary_and_files(pairs: dict[str, tuple[SentencePieceTokenizer, Any]], models: dict[str, str], name: str, tmp_path: Any) -> None:
    tok, sp = pairs[name]
    assert len(tok) == tok.vocab_size == tok.n_vocab == sp.get_piece_size()
    for i in range(len(tok)):
        piece = sp.id_to_piece(i)
        assert tok.id_to_token(i) == piece
        assert tok.token_to_id(piece) == sp.piece_to_id(piece)
    assert tok.id_to_token(len(tok)) is None and tok.token_to_id("no such piece \u2603") is None
    assert (tok.unk_id, tok.bos_id, tok.eos_id, tok.pad_id) == (sp.unk_id(), sp.bos_id(), sp.eos_id(), None)
    assert tok.model_type == CONFIGS[name]["model_type"]
    # written back byte for byte; saved files load in sentencepiece
    with open(models[name], "rb") as f:
        original = f.read()
    assert tok.to_bytes() == original
    out = tmp_path / "copy.model"
    bytepair.dump_spm(tok, out)
    assert out.read_bytes() == original
    assert spm.SentencePieceProcessor(model_file=str(out)).encode("hello world") == tok.encode("hello world")
    again = pickle.loads(pickle.dumps(tok))
    assert again.encode("To be, or not") == tok.encode("To be, or not")
    with pytest.raises(UnknownTokenError):
        tok.decode([len(tok)])
    with pytest.raises(UnknownTokenError):
        tok.decode([-1])


def test_offsets_cover_the_text(pairs: dict[str, tuple[SentencePieceTokenizer, Any]]) -> None:
    tok, sp = pairs["unigram"]
    text = "Hello  wörld, 日本"
    ids, offsets = tok.encode_with_offsets(text)
    assert ids == sp.encode(text)
    assert all(0 <= s <= e <= len(text) for s, e in offsets)
    assert [s for s, _ in offsets] == sorted(s for s, _ in offsets)


def test_user_defined_symbols_and_normalize(pairs: dict[str, tuple[SentencePieceTokenizer, Any]]) -> None:
    tok, sp = pairs["unigram_bytes"]
    assert tok.token_to_id("<sep>") == sp.piece_to_id("<sep>")
    assert "<sep>" in tok.tokenize("a<sep>b")
    assert tok.normalize("  ﬁ  x ") == "\u2581fi\u2581x"
    assert tok.spec["byte_fallback"] and tok.spec["split_digits"]
    assert tok.special_tokens == {"<unk>": 0, "<s>": 1, "</s>": 2}


# ---------------------------------------------------------------- bad files


def test_not_a_model(tmp_path: Any) -> None:
    bad = tmp_path / "x.model"
    bad.write_bytes(b"\x0a\x05\x0a\x03abc")  # one piece, no <unk>
    with pytest.raises(FormatError, match="x.model.*UNKNOWN"):
        bytepair.load(bad)
    with pytest.raises(FormatError, match="truncated"):
        SentencePieceTokenizer.from_bytes(b"\x0a\x7f\x0a", name="cut.model")


def _mutants(data: bytes, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    out = [data[:n] for n in rng.sample(range(len(data)), min(200, len(data)))]
    for _ in range(300):
        b = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        out.append(bytes(b))
    return out


@pytest.mark.parametrize("name", ["unigram_bytes", "bpe_bytes", "unigram_identity"])
def test_fuzzed_models_give_only_format_errors(models: dict[str, str], name: str) -> None:
    with open(models[name], "rb") as f:
        data = f.read()
    for i, mutant in enumerate(_mutants(data, seed=len(name))):
        try:
            tok = SentencePieceTokenizer.from_bytes(mutant, name="m.model")
        except FormatError as e:
            assert "m.model" in str(e)
            continue
        # what loads encodes and decodes without crashing
        ids = tok.encode("Hello wörld 12 日本 <sep>")
        tok.decode(ids)


def test_command_line_loads_them_where_it_runs_them(models: dict[str, str]) -> None:
    # encode, decode, count, show, diff, viz, stats and compare run them (tests/test_cli_spm_models.py,
    # tests/test_cli_spm_analysis.py); the rest say so
    from bytepair.cli._common import CommandError, load_any, load_model

    assert isinstance(load_model(models["unigram"]), SentencePieceTokenizer)
    with pytest.raises(CommandError, match="is a SentencePiece Unigram model; `bytepair trace` does not take"):
        load_any(models["unigram"], command="trace")


def test_lone_surrogates_are_replacement_characters(pairs: dict[str, tuple[SentencePieceTokenizer, Any]]) -> None:
    tok, sp = pairs["unigram_bytes"]
    assert tok.encode("a\ud800b") == tok.encode("a\ufffdb") == sp.encode("a\ufffdb")
    assert tok.encode_batch(["x\udfff", "y"]) == [sp.encode("x\ufffd"), sp.encode("y")]


class _Str(str):
    """A str subclass: the bound entry hands it to the method's full path."""


_options = st.fixed_dictionaries(
    {},
    optional={
        "add_bos": st.sampled_from([False, True, 0, 1, "", None]),
        "add_eos": st.sampled_from([False, True, 0, 1]),
        "enable_sampling": st.sampled_from([False, True, 0, None]),
        "alpha": st.sampled_from([0.0, 0.1, 0.5, 1.0, -1.0, 2.0, float("nan"), "x"]),
        "nbest_size": st.sampled_from([-1, 0, 1, 3, 10**9, 1.5]),
        "seed": st.sampled_from([None, 0, 7, 2**70, -3, "s", True]),
        "unknown": st.just(1),
    },
)


def _outcome(call: Any) -> Any:
    try:
        return ("ids", call())
    except Exception as e:  # the same exception, with the same message, or the same ids
        return (type(e), str(e))


@settings(max_examples=int(os.environ.get("BYTEPAIR_HYPOTHESIS_EXAMPLES", "100")) * 2)
@given(
    text=st.one_of(random_text, random_text.map(_Str), st.sampled_from([b"bytes", 3, None, "a\ud800b", "\udfff"])),
    options=_options,
    extra=st.sampled_from([(), ("positional",)]),
    name=st.sampled_from(list(CONFIGS)),
)
def test_the_bound_encode_is_the_method(
    pairs: dict[str, tuple[SentencePieceTokenizer, Any]], text: Any, options: dict[str, Any], extra: tuple[Any, ...], name: str
) -> None:
    """Each tokenizer's ``encode`` is the extension's entry (``encode_call``), which takes the
    common call itself and hands any other to the method's code: any text, options and wrong
    arguments give what the method gives (ids, or the same error and message). Sampling with
    a seed of None draws a new seed each call, so such calls are compared by their errors."""
    tok, _ = pairs[name]
    assert "encode" in tok.__dict__
    bound = _outcome(lambda: tok.encode(text, *extra, **options))
    method = _outcome(lambda: SentencePieceTokenizer.encode(tok, text, *extra, **options))
    random_draw = options.get("enable_sampling") is True and options.get("seed", None) is None
    if random_draw and bound[0] == "ids":
        assert method[0] == "ids"
    else:
        assert bound == method


def test_the_bound_encode_takes_any_arguments_as_the_method(pairs: dict[str, tuple[SentencePieceTokenizer, Any]]) -> None:
    """The extension's entry (a function CPython calls with its arguments in place) against the
    method on the calls the property test above does not make: no text, several positional
    arguments, the text as a keyword, keywords only; and no reference kept or lost."""
    tok, _ = pairs["unigram"]
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((), {}),
        (("a", "b", "c"), {}),
        ((), {"text": "hello world"}),
        ((), {"add_bos": True}),
        (("hello world",), {"add_bos": True, "add_eos": True}),
        (("hello world",), {"seed": 3, "enable_sampling": True, "alpha": 0.5}),
        (("hello", 1), {"add_bos": True}),
    ]
    for args, kwargs in calls:
        bound = _outcome(lambda: tok.encode(*args, **kwargs))
        method = _outcome(lambda: SentencePieceTokenizer.encode(tok, *args, **kwargs))
        assert bound == method, (args, kwargs)
    text = "".join(["refcount ", "text"])  # a str of its own, not interned
    flag = object()
    before = (sys.getrefcount(text), sys.getrefcount(flag), sys.getrefcount(tok._core))
    for _ in range(200):
        tok.encode(text)
        with pytest.raises(TypeError):
            tok.encode(text, bogus=flag)
        with pytest.raises(TypeError):
            tok.encode(text, flag)
    assert (sys.getrefcount(text), sys.getrefcount(flag), sys.getrefcount(tok._core)) == before


def test_the_bound_encode_keeps_what_the_method_has(pairs: dict[str, tuple[SentencePieceTokenizer, Any]]) -> None:
    import copy
    import inspect
    import pickle

    tok, sp = pairs["unigram"]
    method = inspect.signature(SentencePieceTokenizer.encode)
    assert list(inspect.signature(tok.encode).parameters) == list(method.parameters)[1:]
    text = "Hello world, the tokenizers"
    for other in (pickle.loads(pickle.dumps(tok)), copy.copy(tok), copy.deepcopy(tok)):
        assert other.encode(text) == sp.encode(text)
        assert other.encode(text, add_bos=True) == [sp.bos_id(), *sp.encode(text)]

    class Own(SentencePieceTokenizer):
        def encode(self, text: str, **options: Any) -> list[int]:  # type: ignore[override]
            return [-1]

    own = Own.from_file(tok._name)
    assert own.encode(text) == [-1] and "encode" not in own.__dict__
