"""The Dask backend: counting on a cluster gives exactly what local training gives.

The cluster is a ``distributed.LocalCluster`` of 2 worker processes (so the Rust extension is
really imported and used in other processes, and counts and errors really cross a process
boundary), started once for the module.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bytepair
from bytepair.training import Source
from bytepair import _core
from bytepair.errors import BytepairError, BytepairWarning, CorpusError
from bytepair.patterns import resolve

from .strategies import CUSTOM_PATTERN, PATTERNS, corpus_with_specials

distributed = pytest.importorskip("distributed")
bd = pytest.importorskip("bytepair.distributed")


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as c:
        yield c


@pytest.fixture
def small_tasks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tasks of 20 kB, so that the test files are cut into parts and spread over many tasks."""
    monkeypatch.setattr(bd, "TASK_BYTES", 20_000)


def sample() -> str:
    return (files("bytepair") / "data" / "tinyshakespeare.txt").read_text(encoding="utf-8")


def write(path: Path, content: str | bytes) -> str:
    data = content.encode("utf-8") if isinstance(content, str) else content
    path.write_bytes(data)
    return str(path)


def corpus(tmp_path: Path, specials: list[str]) -> list[str]:
    """Files of different sizes (one empty, one cut into several parts) with special tokens."""
    text = sample()[:150_000]
    lines = text.split("\n")
    for i, s in enumerate(specials):  # special tokens here and there, some at line starts
        lines[i * 7 + 3 :: 40] = [s + line for line in lines[i * 7 + 3 :: 40]]
        lines[i * 5 + 1 :: 55] = [line + s for line in lines[i * 5 + 1 :: 55]]
    text = "\n".join(lines)
    cut = len(text) * 2 // 3
    return [
        write(tmp_path / "big.txt", text[:cut]),
        write(tmp_path / "empty.txt", ""),
        write(tmp_path / "small.txt", "First Citizen:\nBefore we proceed\n"),
        write(tmp_path / "rest.txt", text[cut:]),
    ]


def same_training(a: bytepair.Tokenizer, b: bytepair.Tokenizer) -> None:
    assert a.merges == b.merges
    assert a.special_tokens == b.special_tokens
    assert a.vocab_size == b.vocab_size
    ta, tb = dict(a.training), dict(b.training)
    del ta["seconds"], tb["seconds"]
    assert ta == tb


CASES = [
    ("gpt4", ["<|endoftext|>"]),
    ("gpt2", []),
    ("o200k", ["<s>", "</s>", "\nSecond"]),  # "\nSecond" forbids the cuts inside it
    (None, ["<|endoftext|>"]),
    (CUSTOM_PATTERN, ["<s>"]),
]


@pytest.mark.parametrize(("pattern", "specials"), CASES)
def test_merges_equal_local_training(
    client: Any, small_tasks: None, tmp_path: Path, pattern: str | None, specials: list[str]
) -> None:
    paths = corpus(tmp_path, specials)
    vocab_size = 256 + 300 + len(specials)
    local = bytepair.train(paths, vocab_size=vocab_size, pattern=pattern, special_tokens=specials)
    dask = bytepair.train(
        paths, vocab_size=vocab_size, pattern=pattern, special_tokens=specials, backend="dask", client=client
    )
    same_training(local, dask)
    assert dask.training["input"]["documents"] == 4


def test_big_files_are_cut_into_parts(tmp_path: Path) -> None:
    paths = corpus(tmp_path, ["<|endoftext|>"])
    regex = resolve("gpt4")[1]
    version, parts, sizes = bd._plan(paths, regex, ["<|endoftext|>"], 20_000)
    assert version == bytepair.__version__
    assert len([p for p in parts if p[0] == paths[0]]) >= 4
    assert sum(sizes) == sum(os.path.getsize(p) for p in paths)
    # Custom patterns and pattern=None are never cut.
    for rx in (resolve(CUSTOM_PATTERN)[1], None):
        _, parts, _ = bd._plan(paths, rx, [], 20_000)
        assert parts == [(p, 0, None) for p in paths]


def test_tasks_group_consecutive_parts() -> None:
    parts = [("a", 0, None), ("b", 0, 10), ("b", 10, 30), ("c", 0, None)]
    tasks = bd._tasks(parts, [5, 10, 20, 1], 15)
    assert tasks == [([parts[0], parts[1]], 15), ([parts[2]], 20), ([parts[3]], 1)]


@given(
    corpus=corpus_with_specials(),
    sep=st.sampled_from(["\n", "!\nThe ", "a\n1"]),  # the last two make places to cut
    pattern=st.sampled_from(PATTERNS),
    every=st.integers(1, 50),
)
def test_parts_count_what_the_whole_file_counts(
    tmp_path_factory: pytest.TempPathFactory,
    corpus: tuple[list[str], list[str]],
    sep: str,
    pattern: str | None,
    every: int,
) -> None:
    docs, specials = corpus
    path = write(tmp_path_factory.mktemp("d") / "c.txt", sep.join(docs))
    regex = resolve(pattern)[1]
    _, parts, _ = bd._plan([path], regex, specials, every)
    merged = _core.PieceCounter(regex, specials)
    merged.add_packed(bd._merge(*(bd._count([p], regex, specials, False) for p in parts)))
    whole = _core.PieceCounter(regex, specials)
    whole.add_file(path)
    assert (merged.bytes_counted, merged.documents) == (whole.bytes_counted, whole.documents)
    assert dict(merged.take_counts()) == dict(whole.take_counts())


def test_replaced_bytes_match(client: Any, small_tasks: None, tmp_path: Path) -> None:
    text = sample()[:60_000].encode("utf-8")
    bad = text[:30_000] + b"\xff\xfe caf\xc3 " + text[30_000:]
    paths = [write(tmp_path / "bad.txt", bad), write(tmp_path / "good.txt", text[:5_000])]
    local = bytepair.train(paths, vocab_size=400, errors="replace")
    dask = bytepair.train(paths, vocab_size=400, errors="replace", backend="dask")  # the default client
    same_training(local, dask)
    assert dask.training["input"]["replaced_bytes"] == 3  # \xff, \xfe, \xc3


def raised(paths: list[str], **kwargs: Any) -> BaseException:
    with pytest.raises(Exception) as info:
        bytepair.train(paths, vocab_size=300, **kwargs)
    return info.value


@pytest.mark.parametrize("case", ["missing", "directory", "utf8", "utf8-twice"])
def test_worker_errors_reach_the_caller_as_local_errors(
    client: Any, small_tasks: None, tmp_path: Path, case: str
) -> None:
    good = corpus(tmp_path, [])
    text = sample()[:50_000].encode("utf-8")
    bad = write(tmp_path / "bad.txt", text[:45_000] + b"\x80" + text[45_000:])  # in a later part
    if case == "missing":
        paths = [*good, bad, str(tmp_path / "nope.txt")]
    elif case == "directory":
        paths = [*good, str(tmp_path)]
    elif case == "utf8":
        paths = [*good, bad]
    else:  # local training stops at the first bad file: so must the cluster
        first = write(tmp_path / "bad0.txt", text[:40_000] + b"\xc3(" + text[40_000:])
        paths = [*good, first, bad]
    local = raised(paths)
    remote = raised(paths, backend="dask", client=client)
    assert type(remote) is type(local)
    assert str(remote) == str(local)
    if case == "utf8":
        assert isinstance(remote, CorpusError)
        assert str(remote).startswith(f"{bad}: not valid UTF-8 at byte offset 45000")


def test_empty_input_warns_like_local(client: Any, tmp_path: Path) -> None:
    empty = write(tmp_path / "empty.txt", "")
    with pytest.warns(BytepairWarning, match="empty"):
        local = bytepair.train(empty, vocab_size=300)
    with pytest.warns(BytepairWarning, match="empty"):
        dask = bytepair.train(empty, vocab_size=300, backend="dask", client=client)
    same_training(local, dask)
    with pytest.raises(BytepairError, match="at least one source"):
        bytepair.train([], vocab_size=300, backend="dask", client=client)


def test_progress_bar(client: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = corpus(tmp_path, [])
    bytepair.train(paths, vocab_size=300, backend="dask", client=client, progress=True)
    assert "counting" in capsys.readouterr().err


def test_argument_errors(client: Any, tmp_path: Path) -> None:
    path = write(tmp_path / "a.txt", "hello hello")
    with pytest.raises(BytepairError, match="backend must be 'local' or 'dask'"):
        bytepair.train(path, vocab_size=300, backend="spark")
    with pytest.raises(BytepairError, match="only used with backend='dask'"):
        bytepair.train(path, vocab_size=300, client=client)
    with pytest.raises(TypeError, match="distributed.Client"):
        bytepair.train(path, vocab_size=300, backend="dask", client="tcp://localhost:8786")
    with pytest.raises(BytepairError, match="too small"):  # options are checked before any work
        bytepair.train(path, vocab_size=10, backend="dask", client=client)
    with pytest.raises(TypeError, match="takes paths or Source objects"):
        bytepair.train([1], vocab_size=300, backend="dask", client=client)
    with pytest.raises(BytepairError, match="one source of files"):
        bytepair.train([Source(path, name="a"), Source(path, name="b")], vocab_size=300, backend="dask", client=client)
    with pytest.raises(BytepairError, match="does not normalize"):
        bytepair.train(path, vocab_size=300, normalization="nfc", backend="dask", client=client)


def test_no_client_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def no_client() -> None:
        raise ValueError("No clients found")

    monkeypatch.setattr(distributed, "default_client", no_client)
    with pytest.raises(BytepairError, match="needs a Dask client"):
        bytepair.train(write(tmp_path / "a.txt", "hi"), vocab_size=300, backend="dask")


def test_without_dask_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ImportError, match=r"pip install 'dask\[distributed\]"):
        bytepair.train(write(tmp_path / "a.txt", "hi"), vocab_size=300, backend="dask")


def test_workers_must_run_the_same_version(client: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(bytepair, "__version__", "0.0.0+other")
    with pytest.raises(BytepairError, match="same version"):
        bytepair.train(write(tmp_path / "a.txt", "hi"), vocab_size=300, backend="dask", client=client)


def test_import_bytepair_does_not_import_dask() -> None:
    code = "import sys, bytepair; sys.exit(any(m.split('.')[0] in ('dask', 'distributed') for m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_compressed_files_are_refused_on_dask(client: Any, tmp_path: Path) -> None:
    import gzip

    path = tmp_path / "a.txt.gz"
    path.write_bytes(gzip.compress(b"hello hello"))
    with pytest.raises(BytepairError, match="plain text files only"):
        bytepair.train(str(path), vocab_size=300, backend="dask", client=client)
