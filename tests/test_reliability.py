"""Hostile input: files, texts and options that once crashed, hung, injected special tokens or
silently lost text. Each test failed before its fix."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
import threading
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import Tokenizer, _core, _fileformat
from bytepair.cli import main
from bytepair.errors import (
    BytepairError,
    BytepairWarning,
    DisallowedSpecialTokenError,
    FormatError,
    PatternError,
)
from tests import oracle
from tests.test_encodings import _reference, rank_dir  # noqa: F401  (a fixture)

BYTES = {i: bytes([i]) for i in range(256)}


def small(**kw: Any) -> Tokenizer:
    vocab = BYTES | {256: b"ab", 257: b"<|"}
    return Tokenizer(vocab, [(b"a", b"b"), (b"<", b"|")], **kw)


def run_limited(code: str, mem_bytes: int = 3 << 30) -> subprocess.CompletedProcess[str]:
    """Runs ``code`` in a child Python whose address space is capped: a table sized by an id
    near 2**32 makes it fail fast instead of waking the OOM killer."""
    prelude = textwrap.dedent(
        f"""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, ({mem_bytes}, {mem_bytes}))
        """
    )
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ | {"RAYON_NUM_THREADS": "2"},
    )


# ------------------------------------------------------------------ 1. ids near 2**32


def test_special_ids_near_2_32_load_in_memory_that_follows_the_tokens(tmp_path: Path) -> None:
    path = tmp_path / "tok.json"
    r = run_limited(
        f"""
        from bytepair import Tokenizer
        vocab = {{i: bytes([i]) for i in range(256)}}
        big = 2**32 - 2
        tok = Tokenizer(vocab, [], special_tokens={{"<|x|>": big}})
        assert tok.encode("a<|x|>", allowed_special="all") == [97, big], tok.encode("a<|x|>", allowed_special="all")
        assert tok.decode([big]) == "<|x|>"
        tok.save({str(path)!r})
        again = Tokenizer.from_file({str(path)!r})
        assert again.encode("<|x|>", allowed_special="all") == [big]
        more = again.with_special_tokens({{"<|y|>": 5 * 10**8}})
        assert more.encode("<|y|><|x|>", allowed_special="all") == [5 * 10**8, big]
        print("ok")
        """
    )
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


@pytest.mark.parametrize("bad", [2**32, 2**64, 2**70])
def test_absurd_special_ids_are_refused(tmp_path: Path, bad: int) -> None:
    doc = _fileformat.to_dict(small(special_tokens={"<|x|>": 300}))
    doc["special_tokens"] = {"<|x|>": bad}
    path = tmp_path / "tok.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(FormatError, match=f"below 2\\*\\*32, got {bad}"):
        Tokenizer.from_file(path)
    with pytest.raises(BytepairError, match=str(bad)):
        small(special_tokens={"<|x|>": bad})
    with pytest.raises(BytepairError, match=str(bad)):
        small().with_special_tokens({"<|x|>": bad})


# ------------------------------------------------------------------ 2. errors outside the family


@pytest.mark.parametrize("field", ["vocab_size", "min_frequency", "max_token_length"])
@pytest.mark.parametrize("value", [2**64, 2**64 + 5, 10**30])
def test_huge_training_options_are_bytepair_errors(field: str, value: int) -> None:
    options: dict[str, Any] = {"vocab_size": 300}
    options[field] = value
    with pytest.raises(BytepairError, match=field) as e:
        bytepair.train_from_iterator(["ab ab ab"], **options)
    assert str(value) in str(e.value)


def test_reserved_special_tokens_limit_is_an_error_not_an_oom() -> None:
    r = run_limited(
        """
        import bytepair
        from bytepair.errors import BytepairError
        try:
            bytepair.train_from_iterator(["ab ab"], vocab_size=10**9 + 1000, reserved_special_tokens=10**9)
        except BytepairError as e:
            print("refused:", e)
        """,
        mem_bytes=2 << 30,
    )
    assert r.returncode == 0 and "refused:" in r.stdout and "reserved_special_tokens" in r.stdout, r.stderr[-2000:]


def test_deeply_nested_json_is_a_format_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(FormatError, match="nest"):
        Tokenizer.from_file(path)


@pytest.mark.parametrize("where", ["vocab", "merges"])
def test_huge_ids_in_files_are_format_errors(tmp_path: Path, where: str) -> None:
    doc = _fileformat.to_dict(small())
    if where == "vocab":
        doc["vocab"].append([2**64, "eHk="])
    else:
        doc["merges"].append([2**64, 97])
    path = tmp_path / "tok.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(FormatError, match=str(2**64)):
        Tokenizer.from_file(path)


def test_cli_prints_one_line_for_deep_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "deep.json"
    path.write_text("{\"a\":" * 100_000 + "1" + "}" * 100_000)
    assert main(["show", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("bytepair: error: ") and err.count("\n") == 1


# ------------------------------------------------------------------ 3. normalization forging specials

FULLWIDTH = "＜｜endoftext｜＞"


def nfkc() -> Tokenizer:
    return small(special_tokens=["<|endoftext|>"], normalization="nfkc")


def test_normalization_never_forges_a_special_token() -> None:
    tok = nfkc()
    eot = tok.special_tokens["<|endoftext|>"]
    ordinary = tok.encode_ordinary(FULLWIDTH)
    assert eot not in ordinary
    text = "a" + FULLWIDTH + "b"
    want = tok.encode_ordinary(text)
    assert tok.encode(text) == want  # no DisallowedSpecialTokenError: the user never typed it
    assert tok.encode(text, allowed_special="all") == want
    assert tok.encode_batch([text, text], allowed_special="all") == [want, want]
    assert list(tok.encode_iterable([text[:3], text[3:]], allowed_special="all")) == want
    assert tok.count(text, allowed_special="all") == len(want)
    assert tok.count_batch([text], allowed_special="all") == [len(want)]
    # A real special token next to a forged one is still one.
    real = "x<|endoftext|>" + FULLWIDTH
    assert tok.encode(real, allowed_special="all") == tok.encode_ordinary("x") + [eot] + ordinary
    with pytest.raises(DisallowedSpecialTokenError):
        tok.encode(real)


def test_cli_normalization_never_forges(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tok = nfkc()
    path = tmp_path / "tok.json"
    tok.save(path)
    assert main(["encode", "-t", str(path), "--allow-special", "--text", FULLWIDTH]) == 0
    out = capsys.readouterr().out.split()
    assert [int(i) for i in out] == tok.encode_ordinary(FULLWIDTH)


parts = st.lists(st.sampled_from(["<|endoftext|>", FULLWIDTH, "＜", "｜", "ﬁ", "a", " ", "\n", "é", "e\u0301"]), max_size=12)


@given(parts)
@settings(max_examples=150, deadline=None)
def test_specials_split_before_normalization(chunks: list[str]) -> None:
    tok = nfkc()
    text = "".join(chunks)
    want: list[int] = []
    for stretch, special in oracle.split_specials(text, ["<|endoftext|>"]):
        want += [tok.special_tokens[stretch]] if special else tok.encode_ordinary(stretch)
    assert tok.encode(text, allowed_special="all") == want
    assert tok.encode_batch([text], allowed_special="all") == [want]
    assert tok.count(text, allowed_special="all") == len(want)
    k = len(chunks) // 2
    assert list(tok.encode_iterable(chunks[:k] + chunks[k:], allowed_special="all")) == want


# ------------------------------------------------------------------ 4. patterns


@pytest.mark.parametrize("name", ["GPT4", "gpt5", "none", "None", "O200K", "cl100k-base", "r50k_Base", "llama3"])
def test_preset_looking_names_are_errors_listing_the_presets(name: str) -> None:
    with pytest.raises(PatternError, match="gpt2.*gpt4.*o200k") as e:
        small(pattern=name)
    assert repr(name) in str(e.value)
    with pytest.raises(PatternError, match="gpt4"):
        bytepair.train_from_iterator(["ab"], vocab_size=300, pattern=name)


@pytest.mark.parametrize("pattern", [r"[a-z]+", r"\d+|[a-z]+", r"(?=a)", r"x*", r"\b"])
def test_custom_patterns_are_lossless(pattern: str) -> None:
    tok = small(pattern=pattern)
    text = "ab12 .cd\nAB éé"
    assert tok.decode(tok.encode(text)) == text
    pieces = _core.split_pieces(text, pattern)
    assert "".join(pieces) == text and all(pieces)
    t = bytepair.train_from_iterator([text] * 3, vocab_size=260, pattern=pattern)
    assert t.decode(t.encode(text)) == text
    assert len(t.merges) > 0


def lossless_pieces(text: str, pattern: str) -> list[str]:
    """Matches, and the text between them as pieces of its own (empty matches dropped)."""
    import regex

    out: list[str] = []
    end = 0
    for m in regex.finditer(pattern, text):
        if m.start() > end:
            out.append(text[end : m.start()])
        if m.end() > m.start():
            out.append(m.group())
        end = max(end, m.end())
    if end < len(text):
        out.append(text[end:])
    return out


@given(
    st.text(alphabet="ab1 .\n\té€😀", max_size=30),
    st.sampled_from([r"[a-z]+", r"\d", r"(?=a)", r"a|(?<=b)", r"\s+(?!\S)", r" ?\w+", r"é+|b*"]),
)
@settings(max_examples=300, deadline=None)
def test_custom_patterns_split_losslessly(text: str, pattern: str) -> None:
    pieces = _core.split_pieces(text, pattern)
    assert pieces == lossless_pieces(text, pattern)
    tok = small(pattern=pattern)
    assert tok.decode(tok.encode(text)) == text


# ------------------------------------------------------------------ 5. threads


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_num_threads_is_capped_at_the_cores() -> None:
    tok = small()
    texts = ["ab " * 5000] * 8
    before = _threads()
    cores = os.cpu_count() or 1
    for n in (64, 2**40):
        assert tok.encode_batch(texts, num_threads=n) == tok.encode_batch(texts, num_threads=1)
        assert tok.count_batch(texts, num_threads=n) == tok.count_batch(texts, num_threads=1)
        assert tok.encode(texts[0] * 20, num_threads=n) == tok.encode(texts[0] * 20)
    assert _threads() <= before + 2 * cores + 2


@pytest.mark.parametrize("n", [2**64, 2**70, 10**30])
def test_absurd_num_threads_is_capped_too(n: int) -> None:
    tok = small()
    assert tok.encode("ab" * 10, num_threads=n) == tok.encode("ab" * 10)
    assert tok.encode_ordinary("ab", num_threads=n) == [256]
    assert tok.encode_batch(["ab", "b"], num_threads=n) == [[256], [98]]
    assert tok.count("ab", num_threads=n) == 1
    assert tok.count_batch(["ab"], num_threads=n) == [1]


@pytest.mark.parametrize("n", [2**64, 2**70])
def test_absurd_num_threads_is_capped_on_the_array_and_wordpiece_paths(n: int) -> None:
    tok = small()
    ids, offsets = tok.encode_batch_numpy(["ab", "b"], num_threads=n)
    assert ids.tolist() == [256, 98] and offsets.tolist() == [0, 1, 2]
    texts = ["the quick brown fox jumps", "over the lazy dog"] * 5
    wp = bytepair.train_wordpiece_from_iterator(texts, vocab_size=60, num_threads=n)
    assert wp.vocab == bytepair.train_wordpiece_from_iterator(texts, vocab_size=60).vocab
    assert wp.encode_batch(texts, num_threads=n) == [wp.encode(t) for t in texts]


# ------------------------------------------------------------------ 6. early stop, validation first


def test_early_stop_warns_with_the_numbers() -> None:
    with pytest.warns(BytepairWarning, match=r"vocab_size=1000") as w:
        tok = bytepair.train_from_iterator(["ab ab ab"], vocab_size=1000, special_tokens=["<s>"])
    message = str(w[0].message)
    assert f"has {tok.vocab_size} tokens" in message and "min_frequency=2" in message
    assert f"start at id {tok.special_tokens['<s>']}" in message
    with pytest.warns(BytepairWarning, match=r"vocab_size=1000"):
        bytepair.train_from_counts({"ab": 5}, vocab_size=1000)


def test_cli_train_checks_the_output_before_counting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world\n" * 10)
    from bytepair import training

    def no_counting(*a: object, **k: object) -> None:
        raise AssertionError("counting started")

    monkeypatch.setattr(training._Counting, "file", no_counting)
    for out in (tmp_path / "missing" / "tok.json", tmp_path):
        assert main(["train", str(corpus), "--vocab-size", "300", "-o", str(out)]) == 1
        err = capsys.readouterr().err
        assert err.startswith("bytepair: error: ") and str(out) in err and err.count("\n") == 1


def test_cli_train_checks_roles_before_counting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world\n" * 10)
    from bytepair import training

    def no_counting(*a: object, **k: object) -> None:
        raise AssertionError("counting started")

    monkeypatch.setattr(training._Counting, "file", no_counting)
    out = str(tmp_path / "tok.json")
    for role in ("boss=<s>", "eos=</s>"):
        argv = ["train", str(corpus), "--vocab-size", "300", "-o", out, "--special", "<s>", "--role", role]
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert err.startswith("bytepair: error: --role") and err.count("\n") == 1


# ------------------------------------------------------------------ 7. safe cuts for every script


class Recorder:
    """Stands in for the extension's encoder and remembers the longest text it was given."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.longest = 0

    def __getattr__(self, name: str) -> Any:
        f = getattr(self.inner, name)
        if not callable(f):
            return f

        def call(*args: Any, **kw: Any) -> Any:
            if args and isinstance(args[0], str):
                self.longest = max(self.longest, len(args[0]))
            return f(*args, **kw)

        return call


LINES = {
    "crlf": "The quick brown fox.\r\nJumps over 12 dogs\r\n",
    "cyrillic": "\nПривет, мир\nЭто тест.",
    "greek": "\nΚαλημέρα κόσμε\n",
    "cjk": "\n你好，世界\n日本語のテキスト。",
    "crlf-cyrillic": "Привет, мир.\r\nЭто тест\r\n",
}


@pytest.mark.parametrize("kind", sorted(LINES))
@pytest.mark.parametrize("preset", ["gpt2", "gpt4", "o200k"])
def test_encode_iterable_memory_is_bounded_for_every_script(kind: str, preset: str) -> None:
    tok = small(pattern=preset)
    chunks = [LINES[kind]] * 20_000  # ~0.5-0.8 MB
    rec = Recorder(tok._core)
    tok._core = rec  # type: ignore[assignment]
    got = list(tok.encode_iterable(chunks))
    tok._core = rec.inner
    assert got == tok.encode("".join(chunks))
    assert rec.longest < 200_000, rec.longest


@pytest.mark.parametrize("kind", sorted(LINES))
@pytest.mark.parametrize("preset", ["gpt2", "gpt4", "o200k"])
def test_counting_cuts_every_script(kind: str, preset: str, tmp_path: Path) -> None:
    from bytepair.patterns import PATTERNS

    data = (LINES[kind] * 4000).encode()
    counter = _core.PieceCounter(PATTERNS[preset], [])
    used = counter.add_bytes(data, last=False, source="s", offset=0)
    assert used > len(data) * 0.9
    path = tmp_path / "c.txt"
    path.write_bytes(data)
    targets = [len(data) // 4, len(data) // 2]
    cuts = _core.file_cuts(str(path), PATTERNS[preset], [], targets)
    assert all(t <= c < t + 200 for t, c in zip(targets, cuts)), cuts


@given(
    st.lists(st.sampled_from(["a", "Я", "1", "٣", ".", " ", "\n", "\r\n", "\r", "'", "é", "\u0301", "\u00a0", "\u2028", "世"]), max_size=40),
    st.sampled_from(["gpt2", "gpt4", "o200k"]),
)
@settings(max_examples=300, deadline=None)
def test_cut_text_encodes_as_the_whole(chunks: list[str], preset: str) -> None:
    tok = small(pattern=preset)
    text = "".join(chunks)
    want = tok.encode(text)
    assert tok._core.encode(text, [], chunk_bytes=1) == want
    assert tok.count(text) == len(want)


# ------------------------------------------------------------------ 8. the smaller ones


def test_save_through_a_symlink_writes_the_target(tmp_path: Path) -> None:
    target = tmp_path / "real.json"
    link = tmp_path / "link.json"
    small().save(target)
    link.symlink_to(target)
    tok = small(special_tokens=["<s>"])
    tok.save(link)
    assert link.is_symlink()
    assert Tokenizer.from_file(target).special_tokens == {"<s>": 258}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_save_refuses_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        small().save(fifo)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    with pytest.raises(OSError, match="not a regular file"):
        small().save("/dev/null")


_SAVER = """
import sys
from bytepair import train_from_iterator
from tests.test_reliability import _write
writer, path = sys.argv[1], sys.argv[2]
words = [f"w{i} x{i % 97} y{i % 89}" for i in range(6000)]
a = train_from_iterator(words, vocab_size=2000)
b = train_from_iterator(words[::-1], vocab_size=2100)
_write(writer, a, path)
print("ready", a.vocab_size, b.vocab_size, flush=True)
while True:
    _write(writer, b, path)
    _write(writer, a, path)
"""


def _write(writer: str, tok: Tokenizer, path: str | Path) -> None:
    if writer == "save":
        tok.save(path)
    elif writer == "save_hf":
        bytepair.save_hf(tok, path)
    elif writer == "dump_tiktoken":
        bytepair.dump_tiktoken(tok, path)
    elif writer == "dump_minbpe":
        bytepair.dump_minbpe(tok, path)
    elif writer == "dump_gpt2":
        bytepair.dump_gpt2(tok, f"{path}/vocab.json", f"{path}/merges.txt")
    else:
        tok.save_pretrained(path)


def _written_vocab_sizes(writer: str, path: Path) -> list[int]:
    """The vocabulary size each file of a writer's output holds, read back in full (a torn
    file fails to parse or to load)."""
    if writer == "dump_tiktoken":
        return [bytepair.load(path, pattern="gpt4").vocab_size]
    if writer == "dump_minbpe":
        return [bytepair.load(f"{path}.model").vocab_size]
    if writer == "dump_gpt2":
        merges = (path / "merges.txt").read_text().splitlines()
        return [len(json.loads((path / "vocab.json").read_text())), 256 + len(merges) - 1]
    if writer == "save_pretrained":
        docs = {f.name: json.loads(f.read_text()) for f in path.iterdir() if f.suffix == ".json"}
        merges = (path / "merges.txt").read_text().splitlines()
        sizes = [len(docs["vocab.json"]), 256 + len(merges) - 1]
        return [*sizes, bytepair.load(path / "tokenizer.json").vocab_size]
    return [bytepair.load(path).vocab_size]


@pytest.mark.skipif(not hasattr(os, "kill") or sys.platform == "win32", reason="kills with SIGKILL")
@pytest.mark.parametrize(
    ("writer", "runs"),
    [("save", 12), ("save_hf", 4), ("dump_tiktoken", 4), ("dump_minbpe", 4), ("dump_gpt2", 4), ("save_pretrained", 4)],
)
def test_kill_9_during_a_write_leaves_complete_files_and_no_temp_files(tmp_path: Path, writer: str, runs: int) -> None:
    import random
    import signal
    import time

    path = tmp_path / "out"
    if writer in ("dump_gpt2", "save_pretrained"):
        path.mkdir()
    rng = random.Random(13)
    for _ in range(runs):
        with subprocess.Popen(
            [sys.executable, "-c", _SAVER, writer, str(path)], stdout=subprocess.PIPE, text=True
        ) as child:
            assert child.stdout is not None
            ready, *want = child.stdout.readline().split()
            assert ready == "ready"
            time.sleep(rng.uniform(0, 0.2))  # land anywhere in the write loop
            os.kill(child.pid, signal.SIGKILL)
            child.wait()
        # every file holds the old complete output or the new complete one, never a torn one
        for size in _written_vocab_sizes(writer, path):
            assert str(size) in want, (writer, size, want)
    folder = path if path.is_dir() else tmp_path
    leftovers = [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]
    _write(writer, small(), path)  # the next write removes what the killed writers left
    assert not [p.name for p in folder.iterdir() if p.name.endswith(".tmp")], leftovers


def test_encode_iterable_keeps_surrogate_pairs_split_across_chunks() -> None:
    tok = small()
    chunks = ["a" * 70_000 + "\ud83d", "\ude00 b", "\ud83d", "\ude00"]
    assert list(tok.encode_iterable(chunks)) == tok.encode("".join(chunks))


def test_cli_writes_no_ids_before_a_late_special(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "tok.json"
    small(special_tokens=["<|endoftext|>"]).save(path)
    corpus = tmp_path / "in.txt"
    corpus.write_text("hello world\n" * 50_000 + "<|endoftext|>")
    assert main(["encode", "-t", str(path), str(corpus)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("bytepair: error: ") and "<|endoftext|>" in err


def test_show_escapes_terminal_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = _fileformat.to_dict(small(special_tokens=["<\x1b[2J>"]))
    doc["training"] = {"input": {"files": ["\x1b]0;owned\x07x.txt"]}, "bytepair_version": "\x1b[31mred"}
    doc["special_tokens_map"] = {"eos": "<\x1b[2J>"}
    path = tmp_path / "tok.json"
    path.write_text(json.dumps(doc))
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b" in out


# ------------------------------------------------------------------ 9. overlapping special tokens


def test_overlapping_specials_longest_wins_for_trained_tokenizers() -> None:
    tok = small(special_tokens=["<a>", "<a><b>"])
    ids = tok.special_tokens
    assert tok.encode("<a><b><a>", allowed_special="all") == [ids["<a><b>"], ids["<a>"]]
    assert tok.count("<a><b><a>", allowed_special="all") == 2
    with pytest.raises(DisallowedSpecialTokenError) as e:
        tok.encode("x<a><b>")
    assert e.value.token == "<a><b>"


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
def test_pretrained_specials_never_overlap(name: str) -> None:
    """Why leftmost-longest gives tiktoken's ids for pretrained encodings: no special token of
    theirs can overlap another (none is a prefix, suffix or inner part of another), so the
    order tiktoken tries them in never matters."""
    specials = list(bytepair.get_encoding(name).special_tokens)
    for a in specials:
        for b in specials:
            if a != b:
                assert b not in a
                assert not any(a.endswith(b[:k]) for k in range(1, len(b)))


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_pretrained_specials_match_tiktoken(name: str, rank_dir: Path) -> None:
    ours = bytepair.get_encoding(name)
    theirs = _reference(name, rank_dir)
    alphabet = list(ours.special_tokens) + ["<|", "|>", "endoftext", "fim", "_", "a ", "\n"]

    @given(st.lists(st.sampled_from(alphabet), max_size=10))
    @settings(max_examples=100, deadline=None)
    def check(chunks: list[str]) -> None:
        text = "".join(chunks)
        assert ours.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")

    check()


# ------------------------------------------------------------------ limits users can set


def test_max_bytes_and_max_tokens_raise_before_encoding() -> None:
    from bytepair.errors import LimitError

    tok = small(special_tokens=["<|endoftext|>"])
    text = "ab é " * 10
    n_bytes, ids = len(text.encode()), tok.encode(text)
    assert tok.encode(text, max_bytes=n_bytes, max_tokens=len(ids)) == ids
    assert tok.encode_ordinary(text, max_bytes=n_bytes, max_tokens=len(ids)) == ids
    assert tok.encode_batch([text, "ab"], max_bytes=n_bytes, max_tokens=len(ids)) == [ids, [256]]
    with pytest.raises(LimitError, match=f"max_bytes={n_bytes - 1}"):
        tok.encode(text, max_bytes=n_bytes - 1)
    with pytest.raises(LimitError, match=f"max_tokens={len(ids) - 1}"):
        tok.encode(text, max_tokens=len(ids) - 1)
    with pytest.raises(LimitError, match="max_tokens"):
        tok.encode_ordinary(text, max_tokens=len(ids) - 1)
    with pytest.raises(LimitError, match=r"texts\[1\]"):
        tok.encode_batch(["ab", text], max_tokens=len(ids) - 1)
    with pytest.raises(LimitError, match="max_bytes"):
        tok.encode_batch(["ab", text], max_bytes=3)
    with pytest.raises(LimitError):
        tok.encode("ab " * 1_000_000, max_tokens=10)  # counted only up to the limit
    with pytest.raises(BytepairError, match="max_tokens must be"):
        tok.encode("ab", max_tokens=-1)


# ------------------------------------------------------------------ dask: one task, bad UTF-8


def test_dask_one_task_non_utf8_is_a_corpus_error(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    from bytepair.errors import CorpusError

    path = tmp_path / "bad.txt"
    path.write_bytes(b"hello world\n\xff\xfe bad\n")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as client:
        with pytest.raises(CorpusError, match="bad.txt"):
            bytepair.train(str(path), vocab_size=300, backend="dask", client=client)
