"""A manifest.json whose own sha256 matches but whose layout is wrong (made by hand or by another
program) is a CorpusError naming the file and the field, for a resumed encode_corpus as for
open_shards (tests/test_fuzz_readers.py takes open_shards through many such edits)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import bytepair
from bytepair.corpus import manifest
from bytepair.errors import CorpusError

ARGS: dict[str, Any] = {"shard_tokens": 50, "progress": False}


@pytest.fixture(scope="module")
def tok() -> bytepair.Tokenizer:
    return bytepair.train_from_iterator(["hello world, ab ab abc"] * 10, vocab_size=265, special_tokens=["<|endoftext|>"])


def _stopped_run(tmp_path: Path, tok: bytepair.Tokenizer) -> tuple[Path, Path, dict[str, Any], dict[str, bytes]]:
    """An output directory as a run stopped after its first shard leaves it, its input, the
    manifest to write there, and the files of the whole run."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"text": f"hello world {i} " * (i + 3)}) + "\n" for i in range(12)))
    out = tmp_path / "out"
    bytepair.encode_corpus(tok, [corpus], out, **ARGS)
    whole = {p.name: p.read_bytes() for p in out.iterdir()}
    doc = json.loads(whole["manifest.json"])
    assert len(doc["shards"]) >= 3
    for shard in doc["shards"][1:]:
        for f in shard["files"]:
            (out / f["name"]).unlink()
    doc["shards"] = doc["shards"][:1]
    doc["tokens"], doc["documents"], doc["complete"] = doc["shards"][0]["tokens"], doc["shards"][0]["documents"], False
    return out, corpus, doc, whole


def _write(out: Path, doc: dict[str, Any]) -> None:
    manifest.write(str(out), doc)  # its own sha256 recomputed


def test_a_stopped_run_resumes_to_the_same_bytes(tmp_path: Path, tok: bytepair.Tokenizer) -> None:
    out, corpus, doc, whole = _stopped_run(tmp_path, tok)
    _write(out, doc)
    bytepair.encode_corpus(tok, [corpus], out, **ARGS)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == whole


EDITS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "shards null": (lambda doc: doc.update(shards=None), "shards"),
    "shards[0].next 'x'": (lambda doc: doc["shards"][0].update(next="x"), r"shards\[0\].next"),
    "shards[0].next [3]": (lambda doc: doc["shards"][0].update(next=[3]), r"shards\[0\].next"),
    "shards[0].next [-5, 0]": (lambda doc: doc["shards"][0].update(next=[-5, 0]), r"shards\[0\].next"),
    "shards[0].next ['1', 0]": (lambda doc: doc["shards"][0].update(next=["1", 0]), r"shards\[0\].next"),
    "shards[0].files null": (lambda doc: doc["shards"][0].update(files=None), r"shards\[0\].files"),
    "shards[0].files[0] 'x'": (lambda doc: doc["shards"][0].update(files=["x"]), r"shards\[0\].files\[0\]"),
    "shards[0].files[0].name null": (lambda doc: doc["shards"][0]["files"][0].update(name=None), r"shards\[0\].files\[0\].name"),
    "tokens null": (lambda doc: doc.update(tokens=None), "tokens"),
    "documents '3'": (lambda doc: doc.update(documents="3"), "documents"),
    "complete 0": (lambda doc: doc.update(complete=0), "complete"),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_resuming_over_a_rehashed_manifest_of_the_wrong_layout(tmp_path: Path, tok: bytepair.Tokenizer, edit: str) -> None:
    out, corpus, doc, _ = _stopped_run(tmp_path, tok)
    change, field = EDITS[edit]
    change(doc)
    _write(out, doc)
    with pytest.raises(CorpusError, match=rf"^{re.escape(str(out / 'manifest.json'))}: {field} must be "):
        bytepair.encode_corpus(tok, [corpus], out, **ARGS)
