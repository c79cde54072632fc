"""Hugging Face ``tokenizer.json`` files of the SentencePiece family against ``tokenizers``.

SentencePiece models (Unigram and BPE, with and without byte fallback) are trained in the test on
tests/data/spm_code.txt plus multilingual text, then turned into ``tokenizer.json`` files the way
users get them: transformers' ``LlamaTokenizer`` / ``T5Tokenizer`` built from the model's pieces
and saved with ``save_pretrained``, transformers' ``SpmConverter.build_tokenizer_from_spm_proto``,
and tokenizers' own ``SentencePieceUnigramTokenizer`` / ``SentencePieceBPETokenizer`` trained on the
same text. ``bytepair.load(file).encode(text)`` must equal ``tokenizers``'
``encode(text, add_special_tokens=False).ids``, and ``decode`` its ``decode``, on the corpus lines,
fixed edge cases and random text.
"""

from __future__ import annotations

import json
import os
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import BytepairError, FormatError
from bytepair.formats.hf_spm import HFSentencePieceTokenizer, from_hf_spm
from tests.strategies import any_char, busy_char

spm = pytest.importorskip("sentencepiece")
tokenizers = pytest.importorskip("tokenizers")
transformers = pytest.importorskip("transformers")

DATA = os.path.join(os.path.dirname(__file__), "data")

USER = ["<sep>", "foo", "ab c"]
MODELS: dict[str, dict[str, Any]] = {
    "unigram": dict(model_type="unigram", vocab_size=700),
    "unigram_bytes": dict(model_type="unigram", vocab_size=700, byte_fallback=True, character_coverage=0.995),
    "bpe": dict(model_type="bpe", vocab_size=700, character_coverage=0.995),
    "bpe_bytes": dict(model_type="bpe", vocab_size=700, byte_fallback=True, character_coverage=0.995),
    # nmt_nfkc: the converted files get a Precompiled normalizer (the model's charsmap)
    "unigram_nfkc": dict(model_type="unigram", vocab_size=700, normalization_rule_name="nmt_nfkc"),
    "bpe_nfkc": dict(model_type="bpe", vocab_size=700, byte_fallback=True, normalization_rule_name="nmt_nfkc"),
    # user-defined symbols: added tokens (special=False) in the files, a Split and ignore_merges
    "unigram_user": dict(model_type="unigram", vocab_size=700, user_defined_symbols=USER),
    "bpe_user": dict(model_type="bpe", vocab_size=700, byte_fallback=True, user_defined_symbols=USER),
}


def _fields(buf: bytes) -> list[tuple[int, Any]]:
    """The top-level fields of a protobuf message: (number, int or bytes)."""
    out: list[tuple[int, Any]] = []
    i = 0

    def varint() -> int:
        nonlocal i
        v = shift = 0
        while True:
            b = buf[i]
            i += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return v

    while i < len(buf):
        key = varint()
        wire = key & 7
        if wire == 0:
            out.append((key >> 3, varint()))
        elif wire == 2:
            n = varint()
            out.append((key >> 3, buf[i : i + n]))
            i += n
        else:
            width = 4 if wire == 5 else 8
            out.append((key >> 3, buf[i : i + width]))
            i += width
    return out


def _charsmap(model_file: str) -> bytes:
    """normalizer_spec.precompiled_charsmap of a .model (no protobuf package needed)."""
    with open(model_file, "rb") as f:
        spec = [v for n, v in _fields(f.read()) if n == 3]
    found = [v for n, v in _fields(spec[0]) if n == 2] if spec else []
    return bytes(found[0]) if found else b""


def _lines() -> list[str]:
    with open(os.path.join(DATA, "spm_code.txt"), encoding="utf-8") as f:
        code = [line for line in f.read().splitlines()[:1500] if line.strip()]
    with open(os.path.join(DATA, "multilingual.txt"), encoding="utf-8") as f:
        return code + [line for line in f.read().splitlines() if line.strip()]


def _proto(sp: Any, byte_fallback: bool, charsmap: bytes) -> SimpleNamespace:
    """What transformers' converter reads of a ModelProto, from the processor (no protobuf)."""
    pieces = []
    for i in range(sp.get_piece_size()):
        kind = 2 if sp.is_unknown(i) else 3 if sp.is_control(i) else 6 if sp.is_byte(i) else 5 if sp.is_unused(i) else 1
        if kind == 1 and sp.id_to_piece(i) in USER:
            kind = 4
        pieces.append(SimpleNamespace(piece=sp.id_to_piece(i), score=sp.get_score(i), type=kind))
    return SimpleNamespace(
        pieces=pieces,
        trainer_spec=SimpleNamespace(byte_fallback=byte_fallback, unk_piece="<unk>", unk_id=sp.unk_id(), model_type=1),
        normalizer_spec=SimpleNamespace(
            precompiled_charsmap=charsmap, add_dummy_prefix=True, remove_extra_whitespaces=True, escape_whitespaces=True
        ),
    )


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    from tokenizers import AddedToken, SentencePieceBPETokenizer, SentencePieceUnigramTokenizer, Tokenizer
    from transformers import LlamaTokenizer, T5Tokenizer
    from transformers.convert_slow_tokenizer import SpmConverter
    from transformers.tokenization_utils_base import generate_merges

    root = tmp_path_factory.mktemp("hf_spm")
    lines = _lines()
    corpus = root / "corpus.txt"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out: dict[str, str] = {}

    def save(name: str, tok: Any) -> None:
        path = str(root / f"{name}.json")
        tok.save(path)
        out[name] = path

    for name, opts in MODELS.items():
        prefix = str(root / name)
        opts = {"normalization_rule_name": "identity", **opts}  # identity: no Precompiled step
        spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=prefix, minloglevel=2, num_threads=1, **opts)
        charsmap = _charsmap(prefix + ".model")
        sp = spm.SentencePieceProcessor(model_file=prefix + ".model")
        pieces = [(sp.id_to_piece(i), sp.get_score(i)) for i in range(sp.get_piece_size())]
        controls = [p for i, (p, _) in enumerate(pieces) if sp.is_control(i) or sp.is_unknown(i)]
        proto = _proto(sp, opts.get("byte_fallback", False), charsmap)
        if opts["model_type"] == "bpe":
            vocab = {p: i for i, (p, _) in enumerate(pieces)}
            for legacy in (False, True):
                llama = LlamaTokenizer(vocab=dict(vocab), merges=generate_merges(vocab), legacy=legacy)
                llama.add_tokens([AddedToken(u, normalized=False, special=False) for u in opts.get("user_defined_symbols", [])])
                d = root / f"{name}_llama_{legacy}"
                llama.save_pretrained(str(d))
                out[f"{name}_llama{'_legacy' if legacy else ''}"] = str(d / "tokenizer.json")
            conv = SpmConverter.build_tokenizer_from_spm_proto(proto, dict(vocab), legacy=True)
        else:
            t5 = T5Tokenizer(vocab=list(pieces), extra_ids=3, _spm_precompiled_charsmap=charsmap or None)
            t5.add_tokens([AddedToken(u, normalized=False, special=False) for u in opts.get("user_defined_symbols", [])])
            d = root / f"{name}_t5"
            t5.save_pretrained(str(d))
            out[f"{name}_t5"] = str(d / "tokenizer.json")
            conv = SpmConverter.build_tokenizer_from_spm_proto(proto, list(pieces), legacy=True)
        conv.add_special_tokens(controls)
        save(f"{name}_converted", conv)
    uni = SentencePieceUnigramTokenizer()
    uni.train_from_iterator(lines, vocab_size=600, unk_token="<unk>", special_tokens=["<unk>", "<s>"], show_progress=False)
    uni.add_tokens([
        AddedToken("ab", single_word=True, normalized=False),
        AddedToken("<m>", lstrip=True, rstrip=True, normalized=False),
        AddedToken("xyz", normalized=False, special=True),
    ])
    save("hf_unigram", uni)
    bpe = SentencePieceBPETokenizer(fuse_unk=False)
    bpe.train_from_iterator(lines, vocab_size=600, special_tokens=["<unk>"], show_progress=False, limit_alphabet=200)
    save("hf_bpe", bpe)
    bpe = SentencePieceBPETokenizer(fuse_unk=True)
    bpe.train_from_iterator(lines, vocab_size=600, special_tokens=["<unk>"], show_progress=False, limit_alphabet=200)
    save("hf_bpe_fuse", bpe)
    assert all(Tokenizer.from_file(p) for p in out.values())
    return out


NAMES = [
    *(f"{n}_{kind}" for n in ("unigram", "unigram_bytes", "unigram_nfkc", "unigram_user") for kind in ("t5", "converted")),
    *(f"{n}_{kind}" for n in ("bpe", "bpe_bytes", "bpe_nfkc", "bpe_user") for kind in ("llama", "llama_legacy", "converted")),
    "hf_unigram", "hf_bpe", "hf_bpe_fuse",
]


@pytest.fixture(scope="module")
def pairs(files: dict[str, str]) -> dict[str, tuple[HFSentencePieceTokenizer, Any]]:
    from tokenizers import Tokenizer

    out = {}
    for name in NAMES:
        tok = bytepair.load(files[name])
        assert isinstance(tok, HFSentencePieceTokenizer), name
        out[name] = (tok, Tokenizer.from_file(files[name]))
    return out


EXTRA = [
    "", " ", "   ", "a", " a", "a ", "  lots   of   space  ", "tab\there\nnew\r\nline", "12345 678.9",
    "日本語のテキスト", "😀👍🏽 emoji", "Ünïcödé ßtraße", "\u3000full\u3000width\u3000", "a\u00a0b\u2003c",
    "\U0010ffff\ue000", "<s>x</s> <unk>y", "<s>", " <s> ", "<0x41><0x0A>", "▁▁x ▁", "ﬁ ① Ⅻ",
    "def f(x):\n    return x  # ok", "<extra_id_0> a<extra_id_2>b",
    # grapheme clusters the Precompiled normalizer replaces whole (or not)
    "x<sep>y ab c foo foofoo abab <m>  x <m> ab", "\u00aa\u094d\u0922\u093c", "ﬁ\u0301 x", "ｶﾞ ｷﾞ", "\u1100\u1161\u11a8", "🇯🇵🇫", "👩\u200d💻 ok", "e\u0301\u0301\u0301",
]


def check(tok: HFSentencePieceTokenizer, hf: Any, text: str) -> None:
    want = hf.encode(text, add_special_tokens=False).ids
    got = tok.encode(text)
    assert got == want, (text, hf.encode(text, add_special_tokens=False).tokens, tok.tokenize(text))
    assert tok.decode(want) == hf.decode(want), (text, want)
    assert tok.decode(want, skip_special_tokens=False) == hf.decode(want, skip_special_tokens=False), (text, want)


@pytest.mark.parametrize("name", NAMES)
def test_corpus_and_edge_cases(pairs: dict[str, tuple[HFSentencePieceTokenizer, Any]], name: str) -> None:
    tok, hf = pairs[name]
    lines = _lines()
    for text in lines[::7] + EXTRA + ["\n".join(lines[:300])]:
        check(tok, hf, text)
    assert tok.encode_batch(lines[:50]) == [e.ids for e in hf.encode_batch(lines[:50], add_special_tokens=False)]
    assert len(tok) == hf.get_vocab_size()
    for i in range(len(tok)):
        assert tok.id_to_token(i) == hf.id_to_token(i)
        assert tok.token_to_id(hf.id_to_token(i)) == hf.token_to_id(hf.id_to_token(i))


random_text = st.lists(
    st.one_of(
        busy_char, any_char,
        st.sampled_from([" ", "  ", "\t", "\n", "▁", "😀", "\u0301", "<s>", "</s>", "<unk>", "<0x41>", "1", "99", "ß",
                         "ﬁ", "①", "ｶ", "\u094d", "\u0915", *USER, "<m>", "xyz", "``", "''", "é", "²", "Ⅻ", "٣"]),
    ),
    max_size=40,
).map("".join)


@settings(max_examples=int(os.environ.get("BYTEPAIR_HYPOTHESIS_EXAMPLES", "100")) * 3, deadline=None)
@given(text=random_text, name=st.sampled_from(NAMES))
def test_random_text(pairs: dict[str, tuple[HFSentencePieceTokenizer, Any]], text: str, name: str) -> None:
    tok, hf = pairs[name]
    check(tok, hf, text)


@settings(deadline=None)
@given(data=st.data(), name=st.sampled_from(NAMES))
def test_decode_any_ids(pairs: dict[str, tuple[HFSentencePieceTokenizer, Any]], data: st.DataObject, name: str) -> None:
    tok, hf = pairs[name]
    ids = data.draw(st.lists(st.integers(0, len(tok) - 1), max_size=30))
    assert tok.decode(ids) == hf.decode(ids)
    assert tok.decode(ids, skip_special_tokens=False) == hf.decode(ids, skip_special_tokens=False)


def test_pickle_and_directory(pairs: dict[str, tuple[HFSentencePieceTokenizer, Any]], files: dict[str, str]) -> None:
    import pickle

    tok, hf = pairs["bpe_bytes_llama"]
    again = pickle.loads(pickle.dumps(tok))
    assert again.encode("Hello  world 😀") == hf.encode("Hello  world 😀", add_special_tokens=False).ids
    # saved as the tokenizer.json it came from, read back by path or bytes
    path = os.path.join(os.path.dirname(files["bpe_bytes_converted"]), "copy.json")
    tok.save(path)
    for copy in (HFSentencePieceTokenizer.from_file(path), HFSentencePieceTokenizer.from_bytes(tok.to_bytes())):
        assert copy.encode("Hello  world 😀 <s>") == tok.encode("Hello  world 😀 <s>")
    with pytest.raises(FormatError, match="not valid JSON"):
        HFSentencePieceTokenizer.from_bytes(b"{", name="x.json")
    # a save_pretrained directory loads too
    d = bytepair.load(os.path.dirname(files["unigram_t5"]))
    assert isinstance(d, HFSentencePieceTokenizer)
    assert d.model_type == "unigram"


def _doc(files: dict[str, str], name: str) -> dict[str, Any]:
    with open(files[name], encoding="utf-8") as f:
        doc: dict[str, Any] = json.load(f)
    return doc


def test_refused_pipelines_name_the_file_and_the_reason(files: dict[str, str]) -> None:
    doc = _doc(files, "unigram_t5")
    cases: list[tuple[dict[str, Any], str]] = []
    cases.append(({**doc, "normalizer": {"type": "Precompiled", "precompiled_charsmap": ""}}, "precompiled_charsmap"))
    cases.append(({**doc, "normalizer": {"type": "Precompiled", "precompiled_charsmap": "AAAA/w=="}}, "claims a trie"))
    cases.append(({**doc, "normalizer": {"type": "BertNormalizer"}}, "BertNormalizer"))
    cases.append(({**doc, "pre_tokenizer": {"type": "Punctuation", "behavior": "Isolated"}}, "Punctuation"))
    cases.append(({**doc, "decoder": {"type": "WordPiece"}}, "WordPiece"))
    cases.append(({**doc, "model": {**doc["model"], "unk_id": None}}, "unk_id"))
    top = max([len(doc["model"]["vocab"]) - 1] + [e["id"] for e in doc["added_tokens"]])
    added = [*doc["added_tokens"], {"id": top + 1, "content": "\x01", "normalized": True, "special": False}]
    cases.append(({**doc, "added_tokens": added, "normalizer": {"type": "Nmt"}}, "normalizes to nothing"))
    bpe = _doc(files, "bpe_bytes_llama")
    vocab = dict(bpe["model"]["vocab"])
    vocab["<0x41>a"] = len(vocab)
    merges = [*bpe["model"]["merges"], ["<0x41>", "a"]]
    cases.append(({**bpe, "model": {**bpe["model"], "vocab": vocab, "merges": merges}}, "byte token"))
    cases.append(({**bpe, "model": {**bpe["model"], "merges": [*merges, ["a", "zz"]]}}, "model.merges["))
    cases.append(({**bpe, "model": {**bpe["model"], "dropout": 0.1}}, "dropout"))
    cases.append(({**bpe, "normalizer": {"type": "Replace", "pattern": {"Regex": r"\p{L}"}, "content": "x"}}, "\\p"))
    for rx, why in (("[a[b]]", "nests a character class"), ("(?i)a", "(?...)"), ("a++", "possessive"), ("x*", "empty string")):
        cases.append(({**bpe, "normalizer": {"type": "Replace", "pattern": {"Regex": rx}, "content": "x"}}, why))
    for bad, why in cases:
        with pytest.raises(FormatError) as e:
            from_hf_spm(bad, where="some/tokenizer.json")
        assert "some/tokenizer.json" in str(e.value) and why in str(e.value), (why, str(e.value))


def test_normalized_added_tokens_without_a_normalizer(files: dict[str, str]) -> None:
    from tokenizers import Tokenizer

    doc = _doc(files, "bpe_bytes_llama")
    n = len(doc["model"]["vocab"])
    doc["added_tokens"] += [
        {"id": n, "content": "hello", "special": False, "normalized": True, "lstrip": False, "rstrip": False, "single_word": False},
        {"id": n + 1, "content": "[M]", "special": True, "normalized": True, "lstrip": True, "rstrip": False, "single_word": False},
    ]
    hf = Tokenizer.from_str(json.dumps(doc))
    tok = from_hf_spm(doc, where="x.json")
    for text in ("hello world <s>hello</s>", "a [M] b  [M]hello", "xhellox [M]"):
        check(tok, hf, text)


def test_byte_level_files_still_go_to_the_byte_level_reader(tmp_path: Any) -> None:
    tok = bytepair.train_from_iterator(["hello world"] * 20, vocab_size=260)
    p = tmp_path / "tokenizer.json"
    bytepair.formats.hf.save_hf(tok, p)
    assert isinstance(bytepair.load(p), bytepair.Tokenizer)


json_leaf = st.none() | st.booleans() | st.integers(-3, 2**33) | st.floats(allow_nan=True) | st.text(max_size=6)
json_value = st.one_of(
    json_leaf,
    st.lists(json_leaf, max_size=3),
    st.dictionaries(st.text(max_size=8), json_leaf, max_size=3),
    st.lists(st.dictionaries(st.sampled_from(["type", "content", "id", "pattern"]), json_leaf, max_size=3), max_size=2),
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths into a document's small parts (the pipeline, added tokens, a few vocabulary and
    merge entries), for mutation."""
    out = [prefix]
    if isinstance(node, dict):
        items = list(node.items())
    elif isinstance(node, list):
        items = list(enumerate(node))[:4] + list(enumerate(node))[-2:]
    else:
        return out
    for k, v in items:
        out += _paths(v, (*prefix, k))
    return out


@settings(max_examples=int(os.environ.get("BYTEPAIR_HYPOTHESIS_EXAMPLES", "100")) * 2, deadline=None)
@given(data=st.data(), name=st.sampled_from(["unigram_nfkc_t5", "bpe_bytes_llama", "bpe_nfkc_converted", "hf_bpe"]))
def test_mutated_files_load_or_give_format_errors(files: dict[str, str], data: st.DataObject, name: str) -> None:
    doc = _doc(files, name)
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_paths(doc)[1:]))
        node = doc
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = data.draw(json_value)
    try:
        tok = from_hf_spm(doc, where="mutant.json")
    except FormatError as e:
        assert "mutant.json" in str(e)
        return
    for text in ("Hello  world", "<s>x</s> 😀", "", " a\u0301ﬁ"):
        ids = tok.encode(text)
        assert all(0 <= i < len(tok) for i in ids)
        tok.decode(ids)


def _pipelines() -> dict[str, dict[str, Any]]:
    """Components set on a file's tokenizer (JSON, as tokenizers writes them), one variant each."""
    from tokenizers import Regex, decoders, normalizers, pre_tokenizers

    def js(component: Any) -> Any:
        return json.loads(component.__getstate__() if hasattr(component, "__getstate__") else component)

    meta = {
        f"metaspace_{scheme}_{split}": {
            "pre_tokenizer": pre_tokenizers.Metaspace(prepend_scheme=scheme, split=split),
            "decoder": decoders.Metaspace(prepend_scheme=scheme, split=split),
        }
        for scheme in ("always", "first", "never")
        for split in (True, False)
    }
    variants: dict[str, dict[str, Any]] = {
        **meta,
        "strip_replace": {
            "normalizer": normalizers.Sequence(
                [normalizers.Strip(left=False, right=True), normalizers.Replace(Regex(" {2,}"), "▁"), normalizers.Lowercase()]
            ),
            "pre_tokenizer": pre_tokenizers.Sequence(
                [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Metaspace(prepend_scheme="first")]
            ),
            "decoder": decoders.Sequence([decoders.Replace("▁", " "), decoders.Strip(" ", 1, 0)]),
        },
        "regex_replace": {
            "normalizer": normalizers.Sequence(
                [normalizers.Replace(Regex("^ +| +$"), ""), normalizers.Replace(Regex("[0-9]{2,}|a\\.b"), "#"),
                 normalizers.Replace(Regex("(x|y)+"), "xy")]
            ),
            "pre_tokenizer": pre_tokenizers.Metaspace(),
            "decoder": decoders.Metaspace(),
        },
        "albert_digits": {  # ALBERT's normalizer; digits split
            "normalizer": normalizers.Sequence(
                [normalizers.Replace("``", '"'), normalizers.Replace("''", '"'), normalizers.NFKD(),
                 normalizers.StripAccents(), normalizers.Lowercase(), normalizers.Replace(Regex(" {2,}"), " ")]
            ),
            "pre_tokenizer": pre_tokenizers.Sequence(
                [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Digits(individual_digits=False),
                 pre_tokenizers.Metaspace(), pre_tokenizers.Digits(individual_digits=True)]
            ),
            "decoder": decoders.Metaspace(),
        },
        "llama2": {  # Llama 2's own tokenizer.json
            "normalizer": normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")]),
            "decoder": decoders.Sequence(
                [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)]
            ),
        },
        "nmt_nfkc_prepend": {
            "normalizer": normalizers.Sequence(
                [normalizers.Nmt(), normalizers.NFKC(), normalizers.Strip(), normalizers.Prepend("▁"),
                 normalizers.Replace(Regex(r"\A +| +\z"), ""), normalizers.Replace(" ", "▁")]
            ),
            "pre_tokenizer": pre_tokenizers.Split(Regex("x|ab|▁▁"), behavior="isolated"),
            "decoder": decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()]),
        },
    }
    return {name: {k: js(v) for k, v in parts.items()} for name, parts in variants.items()}


PIPELINES = _pipelines()


@settings(max_examples=int(os.environ.get("BYTEPAIR_HYPOTHESIS_EXAMPLES", "100")) * 2, deadline=None)
@given(
    text=random_text,
    variant=st.sampled_from(sorted(PIPELINES)),
    name=st.sampled_from(["unigram_bytes_t5", "bpe_bytes_llama", "bpe_user_llama"]),
    normalized=st.booleans(),
)
def test_each_component_as_tokenizers_runs_it(
    files: dict[str, str], text: str, variant: str, name: str, normalized: bool
) -> None:
    """Each component variant set on a file (its added tokens normalized=true or not, as Llama 2's
    file has them) runs as tokenizers runs it."""
    from tokenizers import Tokenizer

    doc = _doc(files, name)
    doc.update({"normalizer": None, **PIPELINES[variant]})
    if normalized:
        doc["added_tokens"] = [{**e, "normalized": True} for e in doc["added_tokens"]]
    hf = Tokenizer.from_str(json.dumps(doc))
    tok = from_hf_spm(json.loads(hf.to_str()), where=variant)
    check(tok, hf, text)
    for e in doc["added_tokens"]:
        assert tok.id_to_token(e["id"]) == hf.id_to_token(e["id"])
        for t in (e["content"], hf.id_to_token(e["id"])):
            assert tok.token_to_id(t) == hf.token_to_id(t)
    check(tok, hf, " " + text + "  x ")


def test_sampling_is_refused_by_name(pairs: dict[str, tuple[HFSentencePieceTokenizer, Any]]) -> None:
    for tok, _ in pairs.values():
        assert tok.encode("the weather", enable_sampling=False) == tok.encode("the weather")
        with pytest.raises(BytepairError, match="enable_sampling"):
            tok.encode("the weather", enable_sampling=True, seed=1)
        with pytest.raises(BytepairError, match="enable_sampling"):
            tok.encode_batch(["the weather"], enable_sampling=True)
