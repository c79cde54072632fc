"""Real text for the interop tests: prose, code, many scripts (all kept in the repository)."""

from __future__ import annotations

import functools
import typing
import pathlib

if typing.TYPE_CHECKING:
    import tiktoken

ROOT = pathlib.Path(__file__).parent.parent
DATA = pathlib.Path(__file__).parent / "data"


@functools.lru_cache(maxsize=1)
def texts() -> list[str]:
    """Lines and paragraphs of Shakespeare, multilingual text and Python source, and all of it joined."""
    shakespeare = (ROOT / "python/bytepair/data/tinyshakespeare.txt").read_text(encoding="utf-8")[-60_000:]
    multilingual = (DATA / "multilingual.txt").read_text(encoding="utf-8")
    # A fixed copy of an earlier tokenizer.py, not the live one: the texts must not change
    # whenever the package's source does (a SentencePiece near-tie, rust/src/unigram/NOTES.md,
    # moved into and out of these texts with unrelated edits).
    code = (DATA / "spm_code.txt").read_text(encoding="utf-8")[:30_000]
    parts = multilingual.splitlines(keepends=True) + shakespeare.split("\n\n") + code.split("\n\n")
    odd = ["", " ", "  leading", "trailing  ", "\n\n\n", "1234567890 12 1", "a\u00a0b\u2003c\u3000d", "x\u0085y", "ſK"]
    return parts + odd + [multilingual + shakespeare + code]


@functools.lru_cache(maxsize=1)
def training_text() -> list[str]:
    multilingual = (DATA / "multilingual.txt").read_text(encoding="utf-8")
    shakespeare = (ROOT / "python/bytepair/data/tinyshakespeare.txt").read_text(encoding="utf-8")[:200_000]
    return shakespeare.split("\n\n") + [multilingual] * 10


@functools.lru_cache(maxsize=None)
def reference(name: str) -> "tiktoken.Encoding":
    """tiktoken's own Encoding of a shipped encoding, built offline by tiktoken from the shipped
    rank file, with tiktoken's pattern and special tokens (tests/test_encodings.py's REFERENCE)."""
    import gzip
    import os
    import tempfile

    import tiktoken
    import tiktoken.load

    from tests.test_encodings import REFERENCE

    ref = REFERENCE[name]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ranks.tiktoken")
        with open(path, "wb") as f:
            f.write(gzip.decompress((ROOT / "python/bytepair/data" / ref["file"]).read_bytes()))
        old = os.environ.get("TIKTOKEN_CACHE_DIR")
        os.environ["TIKTOKEN_CACHE_DIR"] = ""
        try:
            ranks = tiktoken.load.load_tiktoken_bpe(path, expected_hash=ref["sha256"])
        finally:
            if old is None:
                del os.environ["TIKTOKEN_CACHE_DIR"]
            else:
                os.environ["TIKTOKEN_CACHE_DIR"] = old
    return tiktoken.Encoding(name, pat_str=ref["pat_str"], mergeable_ranks=ranks, special_tokens=ref["special_tokens"])
