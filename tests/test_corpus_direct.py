"""Shard files written with O_DIRECT (``corpus/direct.py``): whatever the sizes of the writes,
the patches and the fallbacks, the file holds exactly the bytes written, as an ordinary file
does; encode_corpus writes the same shards either way."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.corpus import direct


def _write(path: Path, chunks: list[bytes], header: bytes | None) -> None:
    f = direct.ShardFile(str(path))
    try:
        for c in chunks:
            f.write(c)
        if header is not None:
            f.patch(0, header)
        f.sync()
    finally:
        f.close()


chunks = st.lists(
    st.one_of(st.binary(max_size=300), st.integers(0, 20_000).map(lambda n: bytes([n % 251]) * n)), max_size=8
)


@settings(max_examples=40, deadline=None)
@given(chunks=chunks, header=st.one_of(st.none(), st.binary(min_size=1, max_size=64)), enabled=st.booleans())
def test_the_file_holds_the_bytes_written(tmp_path_factory: Any, chunks: list[bytes], header: bytes | None, enabled: bool) -> None:
    path = tmp_path_factory.mktemp("d") / "shard.bin"
    old = direct.STAGING_BYTES, direct.ENABLED
    direct.STAGING_BYTES, direct.ENABLED = 8192, enabled  # many staging flushes
    try:
        _write(path, chunks, header)
    finally:
        direct.STAGING_BYTES, direct.ENABLED = old
    want = bytearray(b"".join(chunks))
    if header is not None:
        head = header[: len(want)] if len(want) < len(header) else header
        want[: len(head)] = head
        want += header[len(head) :]
    assert path.read_bytes() == bytes(want)


def test_direct_writes_refused_midway_fall_back(tmp_path: Path, monkeypatch: Any) -> None:
    if not getattr(os, "O_DIRECT", 0):
        pytest.skip("no O_DIRECT on this system: the ordinary path is the only one")
    monkeypatch.setattr(direct, "STAGING_BYTES", 8192)
    real = os.write
    calls = [0]

    def refuse_second(fd: int, data: Any) -> int:
        calls[0] += 1
        if calls[0] == 2:
            raise OSError(errno.EINVAL, "Invalid argument")
        return real(fd, data)

    monkeypatch.setattr(direct.os, "write", refuse_second)
    data = bytes(range(256)) * 200  # 51,200 bytes: several staging buffers
    path = tmp_path / "f.bin"
    _write(path, [data[:100], data[100:30_000], data[30_000:]], b"HEAD")
    assert path.read_bytes() == b"HEAD" + data[4:]
    assert calls[0] >= 2


def test_a_short_write_is_a_full_disk(tmp_path: Path, monkeypatch: Any) -> None:
    if not getattr(os, "O_DIRECT", 0):
        pytest.skip("no O_DIRECT on this system: the ordinary path is the only one")
    monkeypatch.setattr(direct, "STAGING_BYTES", 8192)
    monkeypatch.setattr(direct.os, "write", lambda fd, data: len(data) // 2)  # as on a full disk
    f = direct.ShardFile(str(tmp_path / "f.bin"))
    try:
        with pytest.raises(OSError) as e:
            f.write(b"x" * 20_000)
        assert e.value.errno == errno.ENOSPC
    finally:
        f.close()


@pytest.mark.parametrize("fmt", ["llmc", "npy", "megatron"])
def test_encode_corpus_writes_the_same_shards_either_way(tmp_path: Path, monkeypatch: Any, fmt: str) -> None:
    from importlib.resources import files

    text = (files("bytepair") / "data" / "tinyshakespeare.txt").read_text(encoding="utf-8")[:80_000]
    inputs = []
    for i in range(5):  # five documents: Megatron shards end at a document's end
        inp = tmp_path / f"in{i}.txt"
        inp.write_text(text[i * 16_000 : (i + 1) * 16_000], encoding="utf-8")
        inputs.append(str(inp))
    tok = bytepair.get_encoding("gpt2")
    outs = []
    for enabled in (True, False):
        monkeypatch.setattr(direct, "ENABLED", enabled)
        monkeypatch.setattr(direct, "STAGING_BYTES", 8192)
        out = tmp_path / f"out_{enabled}"
        bytepair.encode_corpus(tok, inputs, out, format=fmt, shard_tokens=7_001, progress=False)
        outs.append({p.name: p.read_bytes() for p in sorted(out.iterdir())})
    assert outs[0] == outs[1]
    assert len([n for n in outs[0] if n.startswith("shard_")]) >= 3


@pytest.mark.parametrize(("enabled", "pread"), [(True, True), (False, True), (False, False)])
def test_file_hash_is_hashlibs_and_zlibs_at_every_size_around_the_reads(
    tmp_path: Path, monkeypatch: Any, enabled: bool, pread: bool
) -> None:
    # Read ahead in buffers of READ_BYTES (made small here): files of whole buffers, one byte
    # either side, empty, written with O_DIRECT or not, read with `preadv` or (systems without
    # it) seek and read, all hash as hashlib and zlib do.
    import hashlib
    import zlib

    monkeypatch.setattr(direct, "READ_BYTES", 8192)
    monkeypatch.setattr(direct, "STAGING_BYTES", 8192)
    monkeypatch.setattr(direct, "ENABLED", enabled)
    if not pread:
        monkeypatch.delattr(direct.os, "preadv")
    for n in [0, 1, 4095, 8191, 8192, 8193, 3 * 8192, 3 * 8192 + 17]:
        data = bytes((i * 7 + n) % 256 for i in range(n))
        path = tmp_path / f"f{n}.bin"
        _write(path, [data], None)
        assert direct.file_hash(str(path), "sha256").hexdigest() == hashlib.sha256(data).hexdigest(), n
        assert direct.file_hash(str(path)).hexdigest() == f"{zlib.crc32(data):08x}", n


def test_file_hash_falls_back_when_direct_reads_are_refused(tmp_path: Path, monkeypatch: Any) -> None:
    import hashlib

    monkeypatch.setattr(direct, "READ_BYTES", 8192)
    real = os.preadv
    calls = [0]

    def refuse_second(fd: int, bufs: Any, offset: int) -> int:
        calls[0] += 1
        if calls[0] == 2:
            raise OSError(errno.EINVAL, "Invalid argument")
        return real(fd, bufs, offset)

    data = bytes(range(256)) * 100  # 25,600 bytes: four reads
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    try:
        os.close(os.open(path, os.O_RDONLY | getattr(os, "O_DIRECT", 0)))
    except OSError:
        pytest.skip("no direct reads here (tmpfs, or no O_DIRECT): the ordinary path is the only one")
    if not getattr(os, "O_DIRECT", 0):
        pytest.skip("no O_DIRECT on this system: the ordinary path is the only one")
    monkeypatch.setattr(direct.os, "preadv", refuse_second)
    assert direct.file_hash(str(path), "sha256").hexdigest() == hashlib.sha256(data).hexdigest()
    assert calls[0] >= 5  # the refused direct read, then the plain ones from the start
