"""Corpus encoding: a whole corpus to token shards (``encode_corpus``) and back as one
memory-mapped sequence (``open_shards``). Formats are described in ``formats.py``; the
manifest in ``manifest.py``; the pipeline and its resume rule in ``encode.py``."""

from __future__ import annotations

from bytepair.corpus.encode import encode_corpus
from bytepair.corpus.shards import Shards, open_shards

__all__ = ["Shards", "encode_corpus", "open_shards"]
