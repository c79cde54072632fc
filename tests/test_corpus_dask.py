"""encode_corpus(..., backend="dask") writes the same bytes as a local run, on a LocalCluster of
2 worker processes (the extension really runs in other processes), and resumes a local run."""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import bytepair
from bytepair import BytepairError

from .test_corpus import _files, _sample, corpus  # noqa: F401 - the corpus fixture

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as c:
        yield c


@pytest.mark.parametrize("fmt", ["llmc", "megatron"])
def test_dask_output_is_byte_identical(tmp_path: Path, corpus: Any, client: Any, monkeypatch: Any, fmt: str) -> None:  # noqa: F811
    from bytepair.corpus import encode as e

    monkeypatch.setattr(e, "STREAM_BYTES", 5000)  # big.txt is then read in ranges by the workers
    monkeypatch.setattr(e, "BLOCK_CHARS", 3000)
    inputs, _ = corpus
    (tmp_path / "big.txt").write_text(_sample()[:40_000], encoding="utf-8")
    inputs = [inputs[0], str(tmp_path / "big.txt"), *inputs[1:]]
    options: dict[str, Any] = {"format": fmt, "shard_tokens": 2500, "batch_bytes": 6000}
    bytepair.encode_corpus("gpt2", inputs, tmp_path / "local", **options)
    bytepair.encode_corpus("gpt2", inputs, tmp_path / "dask", backend="dask", client=client, **options)
    assert _files(tmp_path / "dask") == _files(tmp_path / "local")
    assert not [n for n in os.listdir(tmp_path / "dask") if n.endswith(".tmp")]


def test_dask_resumes_a_stopped_local_run(tmp_path: Path, corpus: Any, client: Any, monkeypatch: Any) -> None:  # noqa: F811
    from bytepair.corpus import formats

    inputs, _ = corpus
    options: dict[str, Any] = {"shard_tokens": 1700, "batch_bytes": 5000}
    bytepair.encode_corpus("gpt2", inputs, tmp_path / "whole", **options)
    real = formats.ShardWriter.write
    calls = {"n": 0}

    def full(self: Any, ids: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 6:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(self, ids)

    monkeypatch.setattr(formats.ShardWriter, "write", full)
    with pytest.raises(OSError):
        bytepair.encode_corpus("gpt2", inputs, tmp_path / "out", **options)
    monkeypatch.setattr(formats.ShardWriter, "write", real)
    done = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert 0 < len(done["shards"]) and not done["complete"]
    bytepair.encode_corpus("gpt2", inputs, tmp_path / "out", backend="dask", client=client, **options)
    assert _files(tmp_path / "out") == _files(tmp_path / "whole")


def test_dask_options_checked(tmp_path: Path, corpus: Any) -> None:  # noqa: F811
    inputs, _ = corpus
    with pytest.raises(BytepairError, match='errors="strict" only'):
        bytepair.encode_corpus("gpt2", inputs, tmp_path / "o", backend="dask", errors="replace")
    with pytest.raises(BytepairError, match="backend must be"):
        bytepair.encode_corpus("gpt2", inputs, tmp_path / "o", backend="spark")
