"""Hostile use of the API: special tokens forged by normalization on every encode path, ids and
options beyond the extension's integers, special tokens that are not text, pickling WordPiece,
Ctrl-C during the array outputs, and a special id of 2**32 - 1."""

from __future__ import annotations

import copy
import multiprocessing
import pickle
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import Tokenizer, WordPieceTokenizer
from bytepair.errors import BytepairError, DisallowedSpecialTokenError, LimitError, UnknownTokenError, VocabError
from tests import oracle
from tests.test_interrupt import PRELUDE, run_child

BYTES = {i: bytes([i]) for i in range(256)}

# ------------------------------------------------------------------ special tokens forged by normalization

# Special tokens, two of which are not in their own normal form (their text must stay as typed).
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|IM_END|>", "ＳＥＰ"]
# Texts that are not special tokens but normalize to one under some normalization.
FORGED = [
    "＜｜endoftext｜＞",
    "<|endoftext｜>",
    "<|ENDOFTEXT|>",
    "<|Im_Start|>",
    "＜|im_start|＞",
    "＜｜ＩＭ＿ＳＴＡＲＴ｜＞",
    "<|im_end|>",
    "SEP",
    "ｓｅｐ",
]
NORMALIZATIONS = ["nfkc", "lowercase", "nfkc+lowercase", "nfc", "nfkd+lowercase"]


def normalizing(normalization: str) -> Tokenizer:
    vocab = BYTES | {256: b"ab", 257: b"<|", 258: b"|>"}
    return Tokenizer(
        vocab, [(b"a", b"b"), (b"<", b"|"), (b"|", b">")], special_tokens=SPECIALS, normalization=normalization
    )


def expected(tok: Tokenizer, text: str, allowed: frozenset[str]) -> list[int]:
    """The ids every path must give, worked out apart: the text split at special tokens as typed
    (leftmost-longest), the allowed ones their ids, every other stretch normalized on its own
    and the rest (special-token text not allowed, kept as typed) encoded as ordinary text."""
    plain = Tokenizer(tok.vocab, tok.merges, pattern=tok.pattern)
    ids: list[int] = []
    ordinary = ""
    for stretch, special in oracle.split_specials(text, list(tok.special_tokens)):
        if special and stretch in allowed:
            ids += plain.encode_ordinary(ordinary) + [tok.special_tokens[stretch]]
            ordinary = ""
        else:
            ordinary += stretch if special else oracle.normalize(stretch, tok.normalization)
    return ids + plain.encode_ordinary(ordinary)


def _batch_numpy(tok: Tokenizer, text: str, **kw: Any) -> list[int]:
    ids, offsets = tok.encode_batch_numpy(["x", text, ""], **kw)
    assert offsets[3] == len(ids) and ids[: offsets[1]].tolist() == tok.encode("x")
    out: list[int] = ids[offsets[1] : offsets[2]].tolist()
    return out


def _iterable(tok: Tokenizer, text: str, **kw: Any) -> list[int]:
    k = len(text) // 2
    return list(tok.encode_iterable([text[:k], text[k:]], **kw))


# Every encode path that takes special-token options, as text -> ids.
PATHS: dict[str, Callable[..., list[int]]] = {
    "encode": lambda tok, t, **kw: tok.encode(t, **kw),
    "encode max_tokens": lambda tok, t, **kw: tok.encode(t, max_tokens=10**6, max_bytes=10**6, **kw),
    "encode num_threads": lambda tok, t, **kw: tok.encode(t, num_threads=2, **kw),
    "encode_batch": lambda tok, t, **kw: tok.encode_batch([t, t], **kw)[1],
    "encode_to_numpy": lambda tok, t, **kw: tok.encode_to_numpy(t, **kw).tolist(),
    "encode_batch_numpy": _batch_numpy,
    "encode_iterable": _iterable,
    "encode_with_offsets": lambda tok, t, **kw: tok.encode_with_offsets(t, **kw)[0],
    "count": lambda tok, t, **kw: [-1] * tok.count(t, **kw),
    "count_batch": lambda tok, t, **kw: [-1] * tok.count_batch(["", t], **kw)[1],
}
# The paths that encode special-token text as ordinary text, as text -> ids.
ORDINARY: dict[str, Callable[[Tokenizer, str], list[int]]] = {
    "encode_ordinary": lambda tok, t: tok.encode_ordinary(t),
    "encode_ordinary max_tokens": lambda tok, t: tok.encode_ordinary(t, max_tokens=10**6),
    "encode_ordinary_batch": lambda tok, t: tok.encode_ordinary_batch([t])[0],
    "encode disallowed=()": lambda tok, t: tok.encode(t, disallowed_special=()),
    "encode_to_numpy disallowed=()": lambda tok, t: tok.encode_to_numpy(t, disallowed_special=()).tolist(),
}


def check_every_path(tok: Tokenizer, text: str) -> None:
    typed = [s for s in tok.special_tokens if s in text]
    for allowed in (frozenset(), frozenset(SPECIALS)):
        want = expected(tok, text, allowed)
        for name, path in PATHS.items():
            kw: dict[str, Any] = {"allowed_special": allowed}
            if typed and not allowed:
                with pytest.raises(DisallowedSpecialTokenError):
                    path(tok, text, **kw)
                kw["disallowed_special"] = ()
            got = path(tok, text, **kw)
            if name.startswith("count"):
                assert len(got) == len(want), (name, text, allowed)
            else:
                assert got == want, (name, text, allowed)
    want = expected(tok, text, frozenset())
    for name, ordinary in ORDINARY.items():
        assert ordinary(tok, text) == want, (name, text)


@pytest.mark.parametrize("normalization", NORMALIZATIONS)
def test_no_encode_path_turns_normalized_text_into_a_special_token(normalization: str) -> None:
    tok = normalizing(normalization)
    for forged in FORGED:
        check_every_path(tok, forged)
        check_every_path(tok, "a" + forged + "b\n" + forged)
        # With the real ones around it: they are special tokens, the forged one is not.
        check_every_path(tok, "<|endoftext|>" + forged + "<|IM_END|>ＳＥＰ")
        check_every_path(tok, "x<|im_start|>" + forged + forged + "<|endoftext|>")


def test_forged_special_tokens_in_the_default_call_are_ordinary_text() -> None:
    # The form of the issue: encode_to_numpy raised DisallowedSpecialTokenError for text the
    # user never typed as a special token, and gave its id with allowed_special="all".
    for normalization, forged in [("nfkc", "＜｜endoftext｜＞"), ("lowercase", "<|IM_START|>")]:
        tok = normalizing(normalization)
        want = tok.encode(forged)
        assert tok.special_tokens["<|endoftext|>"] not in want and tok.special_tokens["<|im_start|>"] not in want
        assert tok.encode_to_numpy(forged).tolist() == want
        assert tok.encode_to_numpy(forged, allowed_special="all").tolist() == want
        assert tok.encode_batch_numpy([forged], allowed_special="all")[0].tolist() == want


piece = st.sampled_from(SPECIALS + FORGED + ["a", "b", " ", "\n", "é", "e\u0301", "Σ", "ﬁ", "Ａ", "<", "|"])


@given(st.lists(piece, max_size=10).map("".join), st.sampled_from(NORMALIZATIONS))
@settings(max_examples=60, deadline=None)
def test_every_path_splits_at_special_tokens_before_normalizing(text: str, normalization: str) -> None:
    check_every_path(normalizing(normalization), text)


@pytest.mark.parametrize("normalization", ["lowercase", "nfkc"])
def test_files_and_corpus_keep_special_token_text_as_typed(tmp_path: Path, normalization: str) -> None:
    # encode_files and encode_corpus encode documents as encode_ordinary does: the same ids,
    # special-token text as typed (it normalized the whole text, special tokens included).
    tok = normalizing(normalization)
    docs = ["x<|IM_END|>ＳＥＰ" + "".join(FORGED), "<|endoftext|>Ａ<|im_start|>"]
    paths = []
    for k, doc in enumerate(docs):
        paths.append(tmp_path / f"{k}.txt")
        paths[-1].write_text(doc, encoding="utf-8")
    want = [expected(tok, d, frozenset()) for d in docs]
    assert want == [tok.encode_ordinary(d) for d in docs]
    ids, offsets = tok.encode_files(paths)
    assert [ids[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == want
    bytepair.encode_corpus(tok, paths, tmp_path / "out", format="npy")
    eot = tok.special_tokens["<|endoftext|>"]
    assert bytepair.open_shards(tmp_path / "out")[:].tolist() == [eot, *want[0], eot, *want[1]]


# ------------------------------------------------------------------ ids and options beyond the core's ints


@pytest.mark.parametrize("bad", [2**32, 2**32 + 7, 2**64, 2**70, -1])
def test_id_arguments_beyond_u32_are_unknown_tokens(bad: int) -> None:
    tok = Tokenizer(BYTES, [], special_tokens={"<|x|>": 2**32 - 1})
    for call in (tok.token_bytes, tok.decode_single_token_bytes, lambda i: tok.decode([97, i]),
                 lambda i: tok.decode_bytes([i]), lambda i: tok.decode_tokens_bytes([i]),
                 lambda i: tok.decoder().feed(i), lambda i: tok.decode_batch([[i]])):
        with pytest.raises(UnknownTokenError, match=str(bad)):
            call(bad)
    assert tok.id_to_token(bad) is None
    assert tok.token_bytes(2**32 - 1) == b"<|x|>" and tok.id_to_token(2**32 - 1) == "<|x|>"
    if 0 <= bad < 2**64:
        with pytest.raises(UnknownTokenError, match=str(bad)):
            tok.token_bytes(np.uint64(bad))


def test_no_id_left_past_2_32_is_a_vocab_error() -> None:
    top = Tokenizer(BYTES, [], special_tokens={"<|x|>": 2**32 - 1})
    with pytest.raises(VocabError, match=r"no id is left for the special token '<\|y\|>'"):
        top.with_special_tokens(["<|y|>"])
    with pytest.raises(VocabError, match=r"no id is left for the special token '<\|y\|>'"):
        Tokenizer(BYTES | {2**32 - 1: b"zz"}, [], special_tokens=["<|y|>"])
    assert top.with_special_tokens({"<|y|>": 300}).special_tokens["<|y|>"] == 300


@pytest.mark.parametrize("special", ["\ud800", "a\udfffb", "<|\udc80|>"])
def test_special_tokens_with_lone_surrogates_are_vocab_errors(special: str) -> None:
    where = re.escape(repr(special)[1:-1])  # the text as the message shows it
    for make in (
        lambda: Tokenizer(BYTES, [], special_tokens=[special]),
        lambda: Tokenizer(BYTES, [], special_tokens={special: 300}),
        lambda: Tokenizer(BYTES, [], special_tokens={"<s>": 300}).with_special_tokens([special]),
        lambda: Tokenizer(BYTES, [], special_tokens={"<s>": 300}).with_special_tokens({special: 301}),
        lambda: Tokenizer._from_ranks({bytes([i]): i for i in range(256)}, special_tokens={special: 300}, pattern="gpt2"),
        lambda: WordPieceTokenizer(["[UNK]", "a", special], special_tokens=[special]),
        lambda: WordPieceTokenizer(["[UNK]", "a", "##" + special]),
        lambda: WordPieceTokenizer([special, "a"], unk_token=special),
        lambda: WordPieceTokenizer(["[UNK]", "a"], continuing_subword_prefix=special),
        lambda: bytepair.train_wordpiece_from_iterator(["a b"], vocab_size=50, special_tokens=["[UNK]", special]),
    ):
        with pytest.raises(VocabError, match=f"{where}.*lone surrogate"):
            make()


@pytest.mark.parametrize("bad", [0, 2**64, 10**30])
def test_wordpiece_max_input_chars_per_word_beyond_u64_is_an_error(bad: int) -> None:
    with pytest.raises(BytepairError, match=f"max_input_chars_per_word.*got {bad}"):
        WordPieceTokenizer(["[UNK]", "a"], max_input_chars_per_word=bad)
    with pytest.raises(BytepairError, match=f"max_input_chars_per_word.*got {bad}"):
        bytepair.train_wordpiece_from_iterator(["a b"], vocab_size=50, max_input_chars_per_word=bad)
    assert WordPieceTokenizer(["[UNK]", "a"], max_input_chars_per_word=2**64 - 1).encode("a a") == [1, 1]


@pytest.mark.parametrize(("option", "bad"), [("vocab_size", 2**32 + 1), ("vocab_size", 2**70), ("min_frequency", 2**64)])
def test_wordpiece_training_options_beyond_the_core_are_errors(option: str, bad: int) -> None:
    options: dict[str, Any] = {"vocab_size": 50, option: bad}
    with pytest.raises(BytepairError, match=f"{option}.*got {bad}"):
        bytepair.train_wordpiece_from_iterator(["a b"], **options)


def test_huge_thread_counts_are_capped_everywhere(tmp_path: Path) -> None:
    # num_threads is capped at the cores on every call (more threads are never faster); the
    # corpus encoder and WordPiece's array output passed 2**70 on to the extension.
    tok = Tokenizer(BYTES, [], special_tokens={"<|endoftext|>": 300})
    path = tmp_path / "a.txt"
    path.write_text("hello world")
    bytepair.encode_corpus(tok, [path], tmp_path / "out", num_threads=2**70)
    assert bytepair.open_shards(tmp_path / "out")[:].tolist() == [300, *tok.encode("hello world")]
    wp = WordPieceTokenizer(["[UNK]", "a", "b"])
    ids, _ = wp.encode_batch_numpy(["a b"], num_threads=2**70)
    assert ids.tolist() == [1, 2]
    with pytest.raises(UnknownTokenError, match=str(2**32)):
        bytepair.encode_corpus(tok, [path], tmp_path / "out2", eot=2**32)


# ------------------------------------------------------------------ pickling WordPiece


def wordpiece() -> WordPieceTokenizer:
    return WordPieceTokenizer(
        ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able", ",", "a", "##b", "é"],
        lowercase=False,
        strip_accents=False,
        max_input_chars_per_word=7,
        training={"note": "kept"},
    )


TEXTS = ["Unaffable, un [MASK] ab", "é unaffableunaffable", "", "[CLS]a,b"]


def _wordpiece_in_worker(tok: WordPieceTokenizer, texts: list[str]) -> tuple[WordPieceTokenizer, list[list[int]]]:
    return tok, tok.encode_batch(texts, add_special_tokens=True)


def test_wordpiece_pickles_to_an_equal_tokenizer() -> None:
    from bytepair._wordpiece_file import to_dict

    tok = wordpiece()
    for again in (pickle.loads(pickle.dumps(tok)), pickle.loads(pickle.dumps(tok, protocol=2)), copy.deepcopy(tok)):
        assert to_dict(again) == to_dict(tok)
        for text in TEXTS:
            assert again.encode_with_offsets(text) == tok.encode_with_offsets(text)
            assert again.encode(text, add_special_tokens=True) == tok.encode(text, add_special_tokens=True)
        assert again.max_input_chars_per_word == 7 and again.training == {"note": "kept"}


def test_wordpiece_goes_to_spawned_workers() -> None:
    tok = wordpiece()
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        results = pool.starmap_async(_wordpiece_in_worker, [(tok, TEXTS), (tok, TEXTS[::-1])]).get(timeout=120)
    want = tok.encode_batch(TEXTS, add_special_tokens=True)
    (back, ids), (_, reversed_ids) = results
    assert ids == want and reversed_ids == want[::-1]
    assert back.encode(TEXTS[0]) == tok.encode(TEXTS[0])


# ------------------------------------------------------------------ Ctrl-C during the array outputs

# As in test_interrupt: the child counts its input once uninterrupted, then again with a SIGINT
# a tenth of that call's CPU time in (in wall time: a fixed 0.3 s came after more than half of
# a two-thread call's CPU on a fast machine), and reports the CPU time spent when the handler ran; a call that sees the signal
# only once it has returned has spent the whole time again. A child that hangs is killed by
# run_child's timeout, which fails the test.

ARRAY_CALLS = {
    "encode_to_numpy": "t.encode_to_numpy(text)",
    "encode_to_numpy threads": "t.encode_to_numpy(text, num_threads=2)",
    "encode_batch_numpy": "t.encode_batch_numpy([text[: len(text) // 2], text[len(text) // 2 :]])",
    "encode_batch_numpy many": "t.encode_batch_numpy([text[i : i + (1 << 20)] for i in range(0, len(text), 1 << 20)])",
    "encode_to_numpy normalized": "Tokenizer(t.vocab, t.merges, normalization='nfc').encode_to_numpy(text)",
    "encode_files one file": "t.encode_files(files)",
    "encode_files many files": "t.encode_files(files)",
    "encode_iterable": "collections.deque(t.encode_iterable([text[: 60 << 20]]), maxlen=0)",
}


@pytest.mark.parametrize("call", list(ARRAY_CALLS))
def test_ctrl_c_stops_long_array_encodes(call: str, tmp_path: Path) -> None:
    proc = run_child(PRELUDE + f"""
    import collections, shutil
    from bytepair import Tokenizer
    text = text * 2  # about 200 MB
    files = []
    if "{call}".startswith("encode_files"):  # the text in one file, or in files of 10 MB
        step = len(text) if "one file" in "{call}" else 10 << 20
        for i in range(0, len(text), step):
            files.append({str(tmp_path)!r} + f"/{{i}}.txt")
            with open(files[-1], "w") as f:
                f.write(text[i : i + step])
    try:
        c0 = resource.getrusage(resource.RUSAGE_SELF).ru_utime
        {ARRAY_CALLS[call]}
        full = resource.getrusage(resource.RUSAGE_SELF).ru_utime - c0
        c1 = resource.getrusage(resource.RUSAGE_SELF).ru_utime
        threading.Thread(target=fire, args=(full / 10,)).start()
        try:
            {ARRAY_CALLS[call]}
            print("RETURNED")
        except KeyboardInterrupt:
            print("SHARE", (seen["cpu"] - c1) / full)
    finally:
        shutil.rmtree({str(tmp_path)!r}, ignore_errors=True)  # 200 MB not kept among pytest's last runs
    """)
    assert "RETURNED" not in proc.stdout and "SHARE" in proc.stdout, proc.stderr[-3000:]
    share = float(proc.stdout.split("SHARE")[1])
    assert share < 0.5, f"the interrupt came after {share:.0%} of a whole call's CPU time"


def test_array_rounds_give_the_ids_of_the_whole(tmp_path: Path) -> None:
    from tests.test_interrupt import tok

    t = tok()
    line = "ab cd ab\n\nxy é中 ab" * 3 + "\n"
    text = line * ((17 << 20) // len(line.encode()))  # over a round of 8 MiB per thread, both ways
    one = t.encode(line)
    want = one * (len(text) // len(line))
    for threads in (1, 2):
        assert t.encode_to_numpy(text, num_threads=threads).tolist() == want
        ids, offsets = t.encode_batch_numpy([line, text, "", text[:5000]], num_threads=threads)
        assert offsets.tolist() == np.cumsum([0, len(one), len(want), 0, len(t.encode(text[:5000]))]).tolist()
        assert ids.tolist() == one + want + t.encode(text[:5000])
    paths = [tmp_path / "big.txt", tmp_path / "line.txt", tmp_path / "big2.txt"]
    for p, content in zip(paths, [text, line, text + "tail é"]):
        p.write_text(content, encoding="utf-8")
    want2 = t.encode(text + "tail é")
    ids, offsets = t.encode_files(paths, num_threads=2)
    assert offsets.tolist() == np.cumsum([0, len(want), len(one), len(want2)]).tolist()
    assert ids.tolist() == want + one + want2
    # The separator goes only at the edges of each text, however it is cut into rounds.
    sep = t._core.encode_flat([text, line], [], width=4, separator=(300, True), num_threads=1)
    flat = np.frombuffer(sep[0], dtype="<u4").tolist()
    assert flat == [300, *want, 300, *one]
    bad = tmp_path / "bad.txt"
    bad.write_bytes(text.encode() + b"\xff")
    with pytest.raises(bytepair.CorpusError, match=rf"bad\.txt: not valid UTF-8 at byte offset {len(text.encode())}"):
        t.encode_files([bad])


# ------------------------------------------------------------------ a special id of 2**32 - 1


def test_special_id_2_32_minus_1_costs_memory_of_the_file_not_of_the_id(tmp_path: Path) -> None:
    # A table sized by the largest id (one pointer per id) would be 32 GiB here; the memory
    # must follow the number of tokens. ru_maxrss growth is measured in a child.
    path = tmp_path / "tok.json"
    Tokenizer(BYTES | {256: b"ab"}, [(b"a", b"b")], special_tokens={"<|x|>": 2**32 - 1}).save(path)
    code = f"""
        import resource
        import bytepair
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        tok = bytepair.load({str(path)!r})
        text = "ab <|x|> cd " * 1000
        ids = tok.encode(text, allowed_special="all")
        assert ids.count(2**32 - 1) == 1000, ids[:20]
        assert tok.encode_batch([text] * 4, allowed_special="all") == [ids] * 4
        assert tok.encode_to_numpy(text, allowed_special="all").tolist() == ids
        assert tok.count(text, allowed_special="all") == len(ids)
        assert tok.decode(ids) == text and tok.token_bytes(2**32 - 1) == b"<|x|>"
        print("GROWTH", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
    """
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)
    assert "GROWTH" in proc.stdout, proc.stderr[-3000:]
    growth_kib = int(proc.stdout.split("GROWTH")[1])
    assert growth_kib < 200 << 10, f"{growth_kib} KiB more at peak"


def test_limit_errors_still_count_with_forged_text() -> None:
    tok = normalizing("nfkc")
    text = "＜｜endoftext｜＞" * 3
    n = len(expected(tok, text, frozenset()))
    assert tok.encode_ordinary(text, max_tokens=n) == expected(tok, text, frozenset())
    with pytest.raises(LimitError):
        tok.encode_ordinary(text, max_tokens=n - 1)
    with pytest.raises(LimitError):
        tok.encode(text, allowed_special="all", max_tokens=n - 1)


def test_token_stats_with_special_id_2_32_minus_1_follow_the_text(tmp_path: Path) -> None:
    # `stats` and `report` count tokens in tables that grow to the largest id the text gives;
    # sized by the largest id the tokenizer names they asked for 32 GiB (MemoryError).
    path = tmp_path / "tok.json"
    Tokenizer(BYTES | {256: b"ab"}, [(b"a", b"b")], special_tokens={"<|x|>": 2**32 - 1}).save(path)
    code = f"""
        import resource
        from collections import Counter
        import bytepair
        from bytepair.analysis.stats import token_stats
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        tok = bytepair.load({str(path)!r})
        docs = ["ab <|x|> cd", "abab", "zz"] * 50
        st = token_stats(tok, docs)
        want = Counter(i for d in docs for i in tok.encode_ordinary(d))
        assert {{i: int(c) for i, c in enumerate(st.counts) if c}} == dict(want)
        assert st.documents == len(docs)
        print("GROWTH", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
    """
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)
    assert "GROWTH" in proc.stdout, proc.stderr[-3000:]
    growth_kib = int(proc.stdout.split("GROWTH")[1])
    assert growth_kib < 200 << 10, f"{growth_kib} KiB more at peak"
