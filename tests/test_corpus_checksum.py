"""The shards' checksums (corpus/checksum.py): every file's CRC-32 in the manifest is zlib's
over its bytes as they lie on disk, the last shard's patched header included; the CRC of
joined bytes follows from the parts'; and manifests of earlier versions (sha256) still resume."""

from __future__ import annotations

import hashlib
import json
import os
import random
import zlib
from pathlib import Path
from typing import Any

import pytest

import bytepair
from bytepair import CorpusError, Tokenizer
from bytepair.corpus import checksum, manifest


@pytest.fixture(scope="module")
def gpt2() -> Tokenizer:
    return bytepair.get_encoding("gpt2")


@pytest.fixture()
def inputs(tmp_path: Path) -> list[str]:
    from importlib.resources import files

    text = (files("bytepair") / "data" / "tinyshakespeare.txt").read_text(encoding="utf-8")[:80_000]
    d = tmp_path / "in"
    d.mkdir()
    paras = [p for p in text.split("\n\n") if p]
    (d / "a.jsonl").write_text("".join(json.dumps({"text": p}) + "\n" for p in paras), encoding="utf-8")
    return [str(d / "a.jsonl")]


def test_combine_is_the_crc_of_the_joined_bytes() -> None:
    rng = random.Random(7)
    lengths = [0, 1, 2, 3, 63, 64, 65, 1023, 1024, 4096, 65_537, 1 << 20, (1 << 20) + 1]
    lengths += [rng.randrange(0, 300_000) for _ in range(30)]
    for n in lengths:
        a = rng.randbytes(rng.choice([0, 1, 128, 1024, rng.randrange(0, 5000)]))
        b = rng.randbytes(n)
        assert checksum.combine(zlib.crc32(a), zlib.crc32(b), len(b)) == zlib.crc32(a + b), (len(a), n)
    # Three parts, combined left to right and right to left.
    a, b, c = rng.randbytes(100), rng.randbytes(5000), rng.randbytes(77)
    ab = checksum.combine(zlib.crc32(a), zlib.crc32(b), len(b))
    bc = checksum.combine(zlib.crc32(b), zlib.crc32(c), len(c))
    assert checksum.combine(ab, zlib.crc32(c), len(c)) == zlib.crc32(a + b + c)
    assert checksum.combine(zlib.crc32(a), bc, len(b) + len(c)) == zlib.crc32(a + b + c)
    with pytest.raises(ValueError, match="len_b"):
        checksum.combine(0, 0, -1)


def test_running_crc_is_zlibs() -> None:
    data = bytes(range(256)) * 50
    h = checksum.Crc32()
    for k in range(0, len(data), 999):
        h.update(memoryview(data)[k : k + 999])
    assert h.hexdigest() == f"{zlib.crc32(data):08x}"
    assert checksum.hexdigest(5) == "00000005"


@pytest.mark.parametrize(("fmt", "dtype"), [("llmc", "uint16"), ("llmc", "uint32"), ("megatron", "uint16"), ("npy", "uint32")])
def test_every_file_carries_the_crc32_of_its_bytes(
    tmp_path: Path, gpt2: Tokenizer, inputs: list[str], fmt: str, dtype: str
) -> None:
    out = tmp_path / "o"
    bytepair.encode_corpus(gpt2, inputs, out, format=fmt, dtype=dtype, shard_tokens=3_001, progress=False)
    doc = json.loads((out / "manifest.json").read_text())
    assert len(doc["shards"]) >= 3
    assert doc["shards"][-1]["tokens"] < 3_001 or fmt == "megatron"  # the last one's header patched
    seen = 0
    for shard in doc["shards"]:
        for f in shard["files"]:
            data = (out / f["name"]).read_bytes()
            assert "sha256" not in f
            assert f["bytes"] == len(data)
            assert f["crc32"] == f"{zlib.crc32(data):08x}", f["name"]
            seen += 1
    assert seen == len([p for p in os.listdir(out) if p.startswith("shard_")])


def _as_older_manifest(out: Path, keep: int) -> None:
    """The output of a run stopped after ``keep`` shards, its manifest written as versions before
    CRC-32 wrote it (each file's sha256)."""
    doc = manifest.read(str(out))
    assert doc is not None
    for shard in doc["shards"][keep:]:
        for f in shard["files"]:
            os.unlink(out / f["name"])
    doc["shards"] = doc["shards"][:keep]
    doc["tokens"] = sum(s["tokens"] for s in doc["shards"])
    doc["documents"] = sum(s["documents"] for s in doc["shards"])
    doc["complete"] = False
    for shard in doc["shards"]:
        for f in shard["files"]:
            del f["crc32"]
            f["sha256"] = hashlib.sha256((out / f["name"]).read_bytes()).hexdigest()
    manifest.write(str(out), doc)


@pytest.mark.parametrize("fmt", ["llmc", "megatron"])
def test_an_older_manifests_sha256_is_checked_and_the_run_resumes(
    tmp_path: Path, gpt2: Tokenizer, inputs: list[str], fmt: str
) -> None:
    whole = tmp_path / "whole"
    bytepair.encode_corpus(gpt2, inputs, whole, format=fmt, shard_tokens=3_001, progress=False)
    shards = sorted(p.name for p in whole.iterdir() if p.name.startswith("shard_"))

    out = tmp_path / "resumed"
    bytepair.encode_corpus(gpt2, inputs, out, format=fmt, shard_tokens=3_001, progress=False)
    _as_older_manifest(out, keep=2)
    bytepair.encode_corpus(gpt2, inputs, out, format=fmt, shard_tokens=3_001, progress=False)
    assert {n: (out / n).read_bytes() for n in shards} == {n: (whole / n).read_bytes() for n in shards}
    doc = json.loads((out / "manifest.json").read_text())
    assert doc["complete"]
    assert [("sha256" in f, "crc32" in f) for s in doc["shards"] for f in s["files"]] == [
        (k < 2, k >= 2) for k, s in enumerate(doc["shards"]) for _ in s["files"]
    ]
    assert doc["tokens"] == json.loads((whole / "manifest.json").read_text())["tokens"]

    # A byte changed in a shard the older manifest lists is found by its sha256.
    again = tmp_path / "changed"
    bytepair.encode_corpus(gpt2, inputs, again, format=fmt, shard_tokens=3_001, progress=False)
    _as_older_manifest(again, keep=2)
    first = again / shards[0]
    raw = bytearray(first.read_bytes())
    raw[len(raw) // 2] ^= 0x10
    first.write_bytes(bytes(raw))
    with pytest.raises(CorpusError, match=rf"{shards[0]} was modified since it was written"):
        bytepair.encode_corpus(gpt2, inputs, again, format=fmt, shard_tokens=3_001, progress=False)


def test_a_changed_byte_of_the_last_shard_is_found(tmp_path: Path, gpt2: Tokenizer, inputs: list[str], monkeypatch: Any) -> None:
    # The last shard's checksum is the only one made by combine (its header was patched); a
    # changed header byte or body byte of it, at the same size, is found on the next run.
    out = tmp_path / "o"
    bytepair.encode_corpus(gpt2, inputs, out, shard_tokens=3_001, progress=False)
    doc = json.loads((out / "manifest.json").read_text())
    last = out / doc["shards"][-1]["files"][0]["name"]
    original = last.read_bytes()
    for at in (8, 1024, len(original) - 1):  # the header's token count, the first id, the last
        raw = bytearray(original)
        raw[at] ^= 1
        last.write_bytes(bytes(raw))
        with pytest.raises(CorpusError, match="was modified since it was written"):
            bytepair.encode_corpus(gpt2, inputs, out, shard_tokens=3_001, progress=False)
    last.write_bytes(original)
    bytepair.encode_corpus(gpt2, inputs, out, shard_tokens=3_001, progress=False)  # checks, nothing to do
