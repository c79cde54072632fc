"""encode-corpus under hostile conditions: killed (SIGKILL) at chosen points any number of
times and resumed, to the bytes of a run never stopped; damaged, truncated or special shard
files refused by open_shards with the file named; two runs into one OUTDIR locked out."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import bytepair
from bytepair import CorpusError
from bytepair.cli import main

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL, FIFOs and flock")

# Small units (pieces of a large text file, runs of JSON lines) of several shards each, so that
# runs are killed and resumed inside units, where the resume point counts skipped tokens.
LIMITS = {"STREAM_BYTES": 2000, "BLOCK_CHARS": 3000, "BLOCK_UNIT_BYTES": 1500}
SHARD_TOKENS = {"llmc": "350", "npy": "350", "megatron": "200"}

# Runs `bytepair ARGS...` once per kill point given (JSON), each run in a process of its own
# that kills itself with SIGKILL the Nth time it reaches POINT ("POINT:N"): write (ids written
# into the temporary shard: mid-shard), manifest (a shard closed and recorded), rename-json /
# rename-bin / rename-idx / rename-npy (before that rename: during the manifest's write, or
# between the renames of a Megatron shard's files); "never:1" runs to the end. Prints the
# exit codes. The runs are forked from this process once it has loaded the tokenizer (no
# thread started yet), so that a run costs its work and not 0.5 s of imports; they write
# through the page cache (the same bytes, tests/test_corpus_direct.py), so that the shards
# each resumed run hashes again are read from memory (3x faster here; the timed test below
# writes with O_DIRECT).
KILLER = f"""
import json, os, signal, sys
from bytepair.cli import main
from bytepair.cli._common import load_tokenizer
from bytepair.corpus import direct, encode, formats, manifest
for k, v in {LIMITS!r}.items():
    setattr(encode, k, v)
direct.ENABLED = False
load_tokenizer("gpt2")
assert not os.path.isdir("/proc/self/task") or len(os.listdir("/proc/self/task")) == 1, "a thread before fork"
target = ["never", 0]

def hit(name):
    if name == target[0]:
        target[1] -= 1
        if target[1] == 0:
            os.kill(os.getpid(), signal.SIGKILL)

real_write, real_manifest, real_replace = formats.ShardWriter.write, manifest.write, os.replace

def write(self, ids):
    real_write(self, ids)
    hit("write")

def manifest_write(out, doc):
    real_manifest(out, doc)
    hit("manifest")

def replace(src, dst):
    hit("rename-" + os.fspath(dst).rsplit(".", 1)[-1])
    real_replace(src, dst)

formats.ShardWriter.write, manifest.write, os.replace = write, manifest_write, replace
codes = []
for point in json.loads(sys.argv[1]):
    pid = os.fork()
    if pid == 0:
        name, nth = point.rsplit(":", 1)
        target[:] = [name, int(nth)]
        rc = 1
        try:
            rc = main(sys.argv[2:])
        finally:
            sys.stdout.flush()
            os._exit(rc)
    codes.append(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
print(json.dumps(codes))
"""


# The start of a script run by a test: units cut as in LIMITS.
_SETUP = f"import sys\nfrom bytepair.corpus import encode\nfor k, v in {LIMITS!r}.items(): setattr(encode, k, v)\n"


def _sample() -> str:
    from importlib.resources import files

    return (files("bytepair") / "data" / "tinyshakespeare.txt").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: Any) -> list[str]:
    """A large text file (read in byte ranges), a large gzip one (read in pieces), JSON lines
    (runs of documents) and a small text file (one document): every kind of unit."""
    text = _sample()
    d = tmp_path_factory.mktemp("in")
    (d / "big.txt").write_text(text[:6_000], encoding="utf-8")
    with gzip.open(d / "more.txt.gz", "wt", encoding="utf-8") as f:
        f.write(text[6_000:12_000])
    paras = [p for p in text[12_000:20_000].split("\n\n") if p]
    (d / "docs.jsonl").write_text("".join(json.dumps({"text": p}) + "\n" for p in paras), encoding="utf-8")
    (d / "small.txt").write_text(text[20_000:20_500], encoding="utf-8")
    return [str(d / n) for n in ("big.txt", "more.txt.gz", "docs.jsonl", "small.txt")]


def _args(inputs: list[str], out: Path, fmt: str) -> list[str]:
    return ["encode-corpus", "-t", "gpt2", *inputs, "-o", str(out), "--format", fmt,
            "--shard-tokens", SHARD_TOKENS[fmt], "--threads", "2", "-q"]


def _files(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


def _whole(inputs: list[str], out: Path, fmt: str, monkeypatch: Any) -> dict[str, bytes]:
    from bytepair.corpus import encode

    for k, v in LIMITS.items():
        monkeypatch.setattr(encode, k, v)
    assert main(_args(inputs, out, fmt)) == 0
    return _files(out)


def _killed_at(points: list[str], args: list[str]) -> list[int]:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")  # numpy starts no thread: safe to fork
    proc = subprocess.run([sys.executable, "-c", KILLER, json.dumps(points), *args], env=env,
                          stdout=subprocess.PIPE, text=True, timeout=300, check=True)
    codes: list[int] = json.loads(proc.stdout.splitlines()[-1])
    return codes


# Each run resumes the one before and is killed at its point (counted from the start of that
# run); then one run finishes the output. "again": killed right after every shard closed, the
# first shards a resumed run closes lying inside the unit it resumed in. "mixed": mid-shard,
# during the manifest's write, between a shard's renames, after a few shards.
def _chains(fmt: str) -> dict[str, list[str]]:
    first = "npy" if fmt == "npy" else "bin"
    last = "idx" if fmt == "megatron" else first  # Megatron: killed with the .bin renamed, not the .idx
    return {
        "again": ["manifest:2"] + ["manifest:1"] * 24,
        "mixed": ["manifest:3", "write:1", "manifest:1", "write:3", "rename-json:2", "manifest:1", f"rename-{last}:1",
                  "rename-json:1", f"rename-{last}:2", "write:4", "manifest:1", f"rename-{first}:1", "write:2"],
    }


@pytest.mark.parametrize("fmt", ["llmc", "npy", "megatron"])
def test_killed_again_and_again_resumes_to_identical_bytes(
    tmp_path: Path, inputs: list[str], fmt: str, monkeypatch: Any
) -> None:
    whole = _whole(inputs, tmp_path / "whole", fmt, monkeypatch)
    shards = len(json.loads(whole["manifest.json"])["shards"])
    assert shards >= 10
    for chain, points in _chains(fmt).items():
        out = tmp_path / chain
        codes = _killed_at([*points, "never:1"], _args(inputs, out, fmt))
        assert set(codes) <= {0, -signal.SIGKILL} and codes[-1] == 0, codes
        kills = codes.count(-signal.SIGKILL)
        # "again": once per shard, and once more when the manifest is marked complete after
        # the last shard closed (Megatron, whose last shard can end full)
        assert shards <= kills <= shards + 1 if chain == "again" else kills >= 8, codes
        assert _files(out) == whole, chain


def test_killed_at_timed_points_resumes_to_identical_bytes(tmp_path: Path, inputs: list[str], monkeypatch: Any) -> None:
    whole = _whole(inputs, tmp_path / "whole", "llmc", monkeypatch)
    out = tmp_path / "out"
    cmd = [sys.executable, "-c", _SETUP + "from bytepair.cli import main\nsys.exit(main(sys.argv[1:]))",
           *_args(inputs, out, "llmc")]
    kills = 0
    for target, delay in ((2, 0.0), (3, 0.002), (1, 0.01), (2, 0.005)):
        # SIGKILL from outside once the run has closed `target` more shards, `delay` s later.
        before = _shards(out)
        proc = subprocess.Popen(cmd)
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            if _shards(out) >= before + target:
                time.sleep(delay)
                proc.send_signal(signal.SIGKILL)
                kills += 1
                break
            time.sleep(0.001)
        proc.wait()
    assert kills >= 2
    assert subprocess.run(cmd, timeout=120).returncode == 0
    assert _files(out) == whole


def _shards(out: Path) -> int:
    try:
        return len(json.loads((out / "manifest.json").read_text())["shards"])
    except (OSError, ValueError):
        return 0


# -- open_shards: damaged, truncated and special shard files ------------------------------


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: Any, inputs: list[str]) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("outputs")
    for fmt in ("llmc", "npy", "megatron"):
        bytepair.encode_corpus("gpt2", inputs[2:], base / fmt, format=fmt, shard_tokens=300, progress=False)
    return {fmt: base / fmt for fmt in ("llmc", "npy", "megatron")}


def _copy(src: Path, dst: Path) -> Path:
    dst.mkdir()
    for p in src.iterdir():
        (dst / p.name).write_bytes(p.read_bytes())
    return dst


def _patch(path: Path, offset: int, data: bytes) -> None:
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def _idx_arrays(path: Path) -> tuple[int, np.ndarray[Any, Any]]:
    raw = path.read_bytes()
    n = int.from_bytes(raw[18:26], "little")
    return n, np.frombuffer(raw, "<i4", n, 34).copy()


@pytest.mark.parametrize("fmt", ["llmc", "npy", "megatron"])
def test_undamaged_shards_open_and_read_back(outputs: dict[str, Path], fmt: str) -> None:
    shards = bytepair.open_shards(outputs[fmt])
    docs = [d.tolist() for d in shards.documents()]
    assert sum(map(len, docs)) == len(shards) and len(docs) == shards.manifest["documents"]


def test_a_damaged_megatron_length_is_refused(tmp_path: Path, outputs: dict[str, Path]) -> None:
    # Lengths that still add up to the shard's tokens: the documents came back cut elsewhere.
    out = _copy(outputs["megatron"], tmp_path / "o")
    idx = out / "shard_000001.idx"
    n, lengths = _idx_arrays(idx)
    assert n >= 2
    _patch(idx, 34, np.array([lengths[0] + 1, lengths[1] - 1], "<i4").tobytes())
    with pytest.raises(CorpusError, match="shard_000001.idx.*offsets"):
        bytepair.open_shards(out)
    _patch(idx, 34, np.array([lengths[0] + 5], "<i4").tobytes())  # no longer adds up
    with pytest.raises(CorpusError, match="shard_000001.idx.*add up"):
        bytepair.open_shards(out)
    _patch(idx, 34, lengths[:2].tobytes())
    _patch(idx, 18, (n + 3).to_bytes(8, "little"))  # the count of sequences
    with pytest.raises(CorpusError, match="shard_000001.idx.*bytes"):
        bytepair.open_shards(out)
    _patch(idx, 18, n.to_bytes(8, "little"))
    assert [d.tolist() for d in bytepair.open_shards(out).documents()] == [
        d.tolist() for d in bytepair.open_shards(outputs["megatron"]).documents()
    ]


@pytest.mark.parametrize("fmt", ["llmc", "npy", "megatron"])
@pytest.mark.parametrize("keep", [0, 7, 100, -2])
def test_truncated_shards_are_corpus_errors_naming_the_file(
    tmp_path: Path, outputs: dict[str, Path], fmt: str, keep: int
) -> None:
    out = _copy(outputs[fmt], tmp_path / "o")
    for name in _names(fmt):
        path = out / name
        data = path.read_bytes()
        path.write_bytes(data[:keep])
        with pytest.raises(CorpusError, match=name):
            list(bytepair.open_shards(out).documents())
        path.write_bytes(data)


def _names(fmt: str) -> list[str]:
    """The files of the second shard."""
    from bytepair.corpus import formats

    return formats.shard_names(fmt, 1)


@pytest.mark.parametrize("fmt", ["llmc", "npy"])
def test_a_damaged_header_is_refused(tmp_path: Path, outputs: dict[str, Path], fmt: str) -> None:
    out = _copy(outputs[fmt], tmp_path / "o")
    # llmc: the magic number (int32 at byte 0); npy: a digit of the shape in the header's text.
    offset = 0 if fmt == "llmc" else (out / "shard_000001.npy").read_bytes().index(b"(300,)") + 1
    _patch(out / _names(fmt)[0], offset, b"\x01" if fmt == "llmc" else b"2")
    with pytest.raises(CorpusError, match=_names(fmt)[0]):
        bytepair.open_shards(out)


_OPEN = """
import sys, bytepair
try:
    bytepair.open_shards(sys.argv[1])
except (OSError, bytepair.CorpusError) as e:
    print(type(e).__name__, e)
"""


@pytest.mark.parametrize("name", ["shard_000001.bin", "manifest.json", "shard_000000.idx"])
def test_a_fifo_or_device_in_place_of_a_file_is_refused_not_waited_on(
    tmp_path: Path, outputs: dict[str, Path], name: str
) -> None:
    out = _copy(outputs["megatron"], tmp_path / "o")
    (out / name).unlink()
    os.mkfifo(out / name)  # opened for reading, it would wait for a writer forever
    # In a process of its own: a reader stuck in open() cannot be stopped from a thread.
    proc = subprocess.run([sys.executable, "-c", _OPEN, str(out)], capture_output=True, text=True, timeout=20)
    assert proc.stdout.strip() == f"CorpusError {out / name} is not a regular file", proc.stderr
    (out / name).unlink()
    (out / name).symlink_to("/dev/zero")
    with pytest.raises(CorpusError, match="is not a regular file"):
        bytepair.open_shards(out)


# -- one run at a time in an OUTDIR -------------------------------------------------------

# Runs `bytepair ARGS...`, stopping in its first shard (temporary file open) until GO exists.
_PAUSED = _SETUP + """
import os, sys, time
from bytepair.cli import main
from bytepair.corpus import formats

ready, go = sys.argv[1], sys.argv[2]
real = formats.ShardWriter.write

def write(self, ids):
    real(self, ids)
    if not os.path.exists(ready):
        open(ready, "w").close()
        deadline = time.monotonic() + 60
        while not os.path.exists(go) and time.monotonic() < deadline:
            time.sleep(0.01)

formats.ShardWriter.write = write
sys.exit(main(sys.argv[3:]))
"""


def test_a_second_run_into_the_same_outdir_is_refused(tmp_path: Path, inputs: list[str], monkeypatch: Any) -> None:
    whole = _whole(inputs, tmp_path / "whole", "llmc", monkeypatch)
    out = tmp_path / "out"
    ready, go = tmp_path / "ready", tmp_path / "go"
    args = _args(inputs, out, "llmc")
    first = subprocess.Popen([sys.executable, "-c", _PAUSED, str(ready), str(go), *args])
    try:
        deadline = time.monotonic() + 60
        while not ready.exists() and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert ready.exists()
        temp = [p.name for p in out.iterdir() if p.name.endswith(".tmp")]
        second = subprocess.run([sys.executable, "-m", "bytepair", *args], capture_output=True, text=True, timeout=60)
        assert second.returncode == 1
        assert second.stderr == (
            f"bytepair: error: {out} is in use by another encode-corpus run (process {first.pid}); "
            "wait for it to finish, or write to another directory\n"
        )
        assert [p.name for p in out.iterdir() if p.name.endswith(".tmp")] == temp != []  # left alone
    finally:
        go.touch()
        first.wait(timeout=60)
    assert first.returncode == 0
    assert _files(out) == whole
    assert main(args) == 0  # the lock went with the run
