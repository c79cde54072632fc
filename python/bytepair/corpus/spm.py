"""``encode_corpus`` with a SentencePiece model (a ``.model`` file, or a SentencePiece-family
``tokenizer.json``), and seeded subword sampling.

SentencePiece normalizes a document as a whole (``remove_extra_whitespaces`` joins runs of
spaces and newlines; the dummy prefix goes before the text's start), so a document is never cut:
each is one text of ``SentencePieceTokenizer.encode_batch_numpy``, which spreads a batch's documents
over the threads. A plain-text file is one document, read whole.

Sampling (``enable_sampling``): ``encode_batch_numpy`` gives text ``i`` of a call a seed made from the
call's ``seed`` and ``i``, the same on any number of threads. A document's draw must not depend
on the batch it fell in (batches are cut by bytes, and a resumed run starts its first batch where
the last run's manifest says), so documents are numbered over the whole corpus and gathered in
fixed groups of ``SEED_GROUP``: document ``d`` is text ``d % SEED_GROUP`` of a call seeded with
:func:`group_seed` ``(seed, d // SEED_GROUP)``. A batch that starts inside a group puts empty
texts before its first document to keep the positions; a call never spans two groups.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from bytepair.errors import BytepairError

if TYPE_CHECKING:
    from numpy.typing import DTypeLike, NDArray

    from bytepair.corpus.encode import Unit
    from bytepair.sentencepiece import SentencePieceTokenizer
    from bytepair.sources import SourceFile

# Documents per seed group (see the module doc). Changing it changes every sampled shard: it is
# recorded in the manifest, so that a resume by a version with another is refused.
SEED_GROUP = 1024


def kind(tok: SentencePieceTokenizer) -> str:
    """What the manifest calls the model: ``"sentencepiece"`` (a ``.model``) or
    ``"sentencepiece-json"`` (a SentencePiece-family ``tokenizer.json``)."""
    from bytepair.formats.hf_spm import HFSentencePieceTokenizer

    return "sentencepiece-json" if isinstance(tok, HFSentencePieceTokenizer) else "sentencepiece"


def model_entry(tok: SentencePieceTokenizer) -> dict[str, Any]:
    """The manifest's ``tokenizer``: kind, model type and the sha256 of the model's file bytes
    (what decides the ids: a resume with any other model is refused)."""
    return {
        "kind": kind(tok),
        "model_type": tok.model_type,
        "vocab_size": tok.vocab_size,
        "sha256": hashlib.sha256(tok.to_bytes()).hexdigest(),
    }


def eot_id(tok: SentencePieceTokenizer, eot: str | int | None) -> int | None:
    """The separator: ``"auto"`` is the model's EOS piece (``</s>``), a string one of its
    special pieces, an int any id it has."""
    if eot is None:
        return None
    specials = tok.special_tokens
    if eot == "auto":
        # a tokenizer.json declares no EOS: its role is the special token ``</s>`` there
        eos = tok.eos_id
        if eos is None and "eos" in tok.special_tokens_map:
            eos = tok.token_to_id(tok.special_tokens_map["eos"])
        if eos is None:
            raise BytepairError(
                "this SentencePiece model has no EOS piece to put between documents: choose one of its "
                f"special pieces ({', '.join(sorted(specials)) or 'it has none'}) with eot=TOKEN (--eot TOKEN), "
                "or no separator with eot=None (--eot none)"
            )
        return eos
    if isinstance(eot, bool) or not isinstance(eot, (str, int)):
        raise TypeError(f"eot must be a special token's text, an id, None or 'auto', got {eot!r}")
    if isinstance(eot, str):
        if eot not in specials:
            raise BytepairError(
                f"eot={eot!r} is not a special piece of this model ({', '.join(sorted(specials)) or 'it has none'})"
            )
        return specials[eot]
    if not 0 <= eot < tok.vocab_size:
        raise BytepairError(f"eot={eot} is not an id of this model (0 to {tok.vocab_size - 1})")
    return eot


def id_dtype(tok: SentencePieceTokenizer, dtype: DTypeLike | None) -> np.dtype[Any]:
    """As ``bytepair.arrays.id_dtype``: ``dtype`` checked, else the smallest that holds every id."""
    from bytepair.arrays import dtype_for

    return dtype_for(tok.vocab_size - 1, dtype)


def sampling(
    tok: SentencePieceTokenizer, enable_sampling: bool, alpha: float, nbest_size: int, seed: int
) -> dict[str, Any] | None:
    """The sampling options checked (by the tokenizer's own checks), as the manifest records
    them; ``None`` when not sampling."""
    if not enable_sampling:
        return None
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int, not {type(seed).__name__}")
    if not 0 <= seed < 2**64:
        raise BytepairError(f"seed must be in [0, 2**64), got {seed}")
    # the model refuses what it cannot sample with (alpha out of range, nbest_size too large,
    # a tokenizer.json model) with its own message
    tok.encode("", enable_sampling=True, alpha=alpha, nbest_size=nbest_size, seed=seed)
    return {"alpha": float(alpha), "nbest_size": max(nbest_size, -1), "seed": seed, "seed_group": SEED_GROUP}


def group_seed(seed: int, group: int) -> int:
    """The ``encode_batch`` seed of documents ``group * SEED_GROUP`` onwards."""
    digest = hashlib.blake2b(seed.to_bytes(8, "little") + group.to_bytes(8, "little"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def units(files: list[SourceFile], text_field: str, errors: str) -> Iterator[tuple[Unit, int]]:
    """The non-empty documents of ``files`` in order, each whole, with its file's index."""
    from bytepair.corpus import jsonl
    from bytepair.corpus.encode import Unit
    from bytepair.sources import documents

    for k, f in enumerate(files):
        read = jsonl.documents if f.jsonl and not f.parquet else documents
        for doc in read(f, text_field=text_field, errors=errors):
            if doc:
                yield Unit(doc), k


class SpmBatches:
    """Encodes batches of whole documents (``Unit`` texts) into an id array with separators,
    laid out as ``encode.Batches`` lays its output: document ``i``'s ids, its separator
    included, at ``ids[offsets[i]:offsets[i+1]]``."""

    def __init__(self, tok: SentencePieceTokenizer, dt: np.dtype[Any], separator: tuple[int, bool] | None,
                 num_threads: int | None, sample: dict[str, Any] | None) -> None:
        self.tok, self.dt, self.separator, self.num_threads, self.sample = tok, dt, separator, num_threads, sample

    def flat(self, texts: list[str], first: int) -> tuple[NDArray[Any], NDArray[np.int64]]:
        """The ids of ``texts`` (documents ``first`` onwards of the corpus) as one array and
        the offsets of each text's ids (``encode_batch_numpy``: no list per document)."""
        tok, threads, sample = self.tok, self.num_threads, self.sample
        if sample is None:
            return tok.encode_batch_numpy(texts, num_threads=threads, dtype=self.dt)
        parts: list[NDArray[Any]] = []
        lengths: list[NDArray[np.int64]] = []
        i = 0
        while i < len(texts):
            group, pad = divmod(first + i, SEED_GROUP)
            n = min(len(texts) - i, SEED_GROUP - pad)
            # the empty texts put first give the group's documents their places in it
            ids, offsets = tok.encode_batch_numpy(
                [""] * pad + texts[i : i + n], num_threads=threads, dtype=self.dt, enable_sampling=True,
                alpha=sample["alpha"], nbest_size=sample["nbest_size"], seed=group_seed(sample["seed"], group),
            )
            parts.append(ids)
            lengths.append(np.diff(offsets[pad:]))
            i += n
        offsets = np.zeros(len(texts) + 1, dtype=np.int64)
        if lengths:
            np.cumsum(np.concatenate(lengths), out=offsets[1:])
        return (np.concatenate(parts) if parts else np.zeros(0, dtype=self.dt)), offsets

    def encode(self, units: list[Unit], first: int) -> tuple[NDArray[Any], NDArray[np.int64]]:
        ids, offsets = self.flat([u.text for u in units], first)
        if self.separator is None:
            return ids, offsets
        eot, prepend = self.separator
        n = len(units)
        # document i's separator goes before its ids (prepend) or after them, i separators
        # of the documents before it already in place
        at = (offsets[:-1] if prepend else offsets[1:]) + np.arange(n, dtype=np.int64)
        out = np.empty(len(ids) + n, dtype=self.dt)
        keep = np.ones(len(out), dtype=bool)
        keep[at] = False
        out[at] = eot
        out[keep] = ids
        return out, offsets + np.arange(n + 1, dtype=np.int64)
