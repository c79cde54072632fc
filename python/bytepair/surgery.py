"""Exact vocabulary surgery on byte-level BPE tokenizers: residues, prune, extend, graft.

Every operation takes a :class:`~bytepair.Tokenizer` (trained, or read from a tiktoken file,
a Hugging Face ``tokenizer.json``, GPT-2 files or a minbpe model) and returns a
:class:`Surgery`: the new tokenizer, an id map ``{old id: new id or None}`` for resizing
embedding tables, the tokens that went and came, and, given a corpus, what changed on it.

Residues, exactly
-----------------
A token is *emitted* when some text's encoding contains it. The analysis rests on one fact of
BPE (merge lists and tiktoken's ranks alike): wherever a token ``t`` ends up in the encoding of a
piece, or even just forms there on the way, the merges that built it were exactly the merges
of ``t``'s own bytes encoded alone, in the same order. (Inside the span, each merge taken was the
lowest-priority pair of the whole piece, so also of the span; merges outside the span do not
touch it; no merge crossed its edges, or ``t`` would not be there.) So a token that the merges
do not make from its own bytes (*unmade*) never forms in any byte string, and a token whose
bytes occur in no UTF-8 text (*not-utf8*: a byte such as ``0xC0``, or ``b"\\xff\\xfe"``) never
occurs in any piece, since pieces are UTF-8 text. :func:`residues` reports those two kinds as
proven residues; for a rank file (tiktoken), whose encoder also takes a piece that is a token
as that token, an unmade token can still come out whole, so there only *not-utf8* is proven. Removing them (and the merges that make or use them) changes the encoding
of no text at all: the merges removed never fire on any text.

The other direction is shown by a witness: a text whose encoding contains the token (its own
text first, then its bytes completed to whole characters and put between a few contexts).
What is neither proven nor witnessed is *undecided* and reported as such, never guessed:
a token that forms but is always merged further in every context, a token of a rank file
(tiktoken) that the merges do not make but that might be a whole piece in some context, a token
that normalization keeps out of every text (``"A"`` under ``lowercase``). Single-byte tokens
are never removed (a byte-level BPE needs all 256).

Pruning and ids
---------------
Removing a token removes the merges that make it and every token that can then no longer be
made (its merges need a removed token). The ids left are renumbered compactly in their old
order (special tokens and reserved slots included, which keep their texts and roles), so a
tokenizer trained by bytepair keeps the layout bytes, merges, specials. ``keep=N`` keeps the
first ``N`` merges (for a rank file: the ``N`` lowest ranks above the single bytes): a prefix of
a merge list is the tokenizer that training would have stopped at, so that is exact.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bytepair.errors import BytepairError
from bytepair.tokenizer import Tokenizer

__all__ = [
    "CorpusChange",
    "Residues",
    "Surgery",
    "extend",
    "graft",
    "prune",
    "residues",
]

PathLike = str | os.PathLike[str]

# Second bytes that represent every range UTF-8 allows after a lead byte (E0: A0-BF, ED: 80-9F,
# F0: 90-BF, F4: 80-8F, others 80-BF): a byte string is a substring of UTF-8 text if and only if
# it is one with fillers drawn from these.
_FILL = (0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF)
# Texts put before and after a token's own text to find a witness.
_AFFIXES = ("", " ", "a", "A", "0", "\n", ".", "é", "中", "'", "\r\n", *(chr(c) for c in range(0x21, 0x7F) if chr(c) not in "aA0.'"))
_MAX_TRIES = 4096  # candidate texts per token when its bytes are not whole characters


def _seq_len(lead: int) -> int:
    return 2 if 0xC2 <= lead <= 0xDF else 3 if 0xE0 <= lead <= 0xEF else 4 if 0xF0 <= lead <= 0xF4 else 0


def _decodes(data: bytes) -> bool:
    """Whether ``data`` is UTF-8 text, possibly cut inside its last character."""
    if _strict(data):
        return True
    need = _tail_need(data)
    # Python's incremental decoder takes b"\xed\xa0" as a cut character; completing it shows
    # that no character starts so (a surrogate). Fillers from _FILL reach every allowed range.
    return need > 0 and any(_strict(data + bytes([fill]) + b"\x80" * (need - 1)) for fill in _FILL)


def _strict(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _heads(k: int) -> list[bytes]:
    """Byte strings that can start a character whose next bytes are ``k`` continuation bytes
    (all leads, with fillers from ``_FILL``)."""
    out = []
    for lead in range(0xC2, 0xF5):
        n = _seq_len(lead)
        for m in range(0, n - 1):
            if m + k > n - 1 and m > 0:
                continue
            for fill in itertools.product(_FILL, repeat=m):
                out.append(bytes([lead, *fill]))
    return out


def _leading_continuations(data: bytes) -> int:
    k = 0
    while k < len(data) and 0x80 <= data[k] <= 0xBF:
        k += 1
    return k


def _utf8_substring(data: bytes) -> bool:
    """Whether ``data`` occurs in the UTF-8 encoding of some text: up to 3 continuation bytes
    (the end of a character: every lead byte's range allows any of them there, choosing the
    lead), then UTF-8, possibly cut inside its last character."""
    k = _leading_continuations(data)
    return k <= 3 and (k == len(data) or _decodes(data[k:]))


def _tail_need(data: bytes) -> int:
    """How many bytes complete the last character of ``data`` (which decodes, cut or not)."""
    for back in range(1, min(4, len(data)) + 1):
        b = data[-back]
        if not 0x80 <= b <= 0xBF:
            n = _seq_len(b)
            return max(0, n - back) if n else 0
    return 0


# ---------------------------------------------------------------------------- the merge model


@dataclass
class _Model:
    """A tokenizer's ordinary tokens and merges as ids: ``merges`` are (left, right, result)
    in priority order (for a rank model, the merges recovered from the ranks, which encode as
    the ranks do)."""

    vocab: dict[int, bytes]
    by_bytes: dict[bytes, int]
    merges: list[tuple[int, int, int]]
    pairs: dict[tuple[int, int], tuple[int, int]]  # (left, right) -> (priority, result); first wins
    byte_ids: list[int]
    ranked: bool

    @classmethod
    def of(cls, tok: Tokenizer) -> _Model:
        vocab = tok._vocab
        by_bytes = {b: i for i, b in vocab.items()}
        merges = [(by_bytes[a], by_bytes[b], by_bytes[a + b]) for a, b in tok._merge_list()]
        pairs: dict[tuple[int, int], tuple[int, int]] = {}
        for n, (a, b, c) in enumerate(merges):
            pairs.setdefault((a, b), (n, c))
        byte_ids = [by_bytes[bytes([x])] for x in range(256)]
        return cls(vocab, by_bytes, merges, pairs, byte_ids, tok._merges is None)

    def derive(self, data: bytes) -> tuple[list[int], list[int]]:
        """Encodes ``data`` by merges alone (lowest priority first, leftmost on ties); returns
        the final ids and the indexes of the merges taken, in order."""
        parts = [self.byte_ids[x] for x in data]
        fired: list[int] = []
        pairs = self.pairs
        while len(parts) > 1:
            best = None
            at = 0
            for i in range(len(parts) - 1):
                m = pairs.get((parts[i], parts[i + 1]))
                if m is not None and (best is None or m[0] < best[0]):
                    best, at = m, i
            if best is None:
                break
            parts[at : at + 2] = [best[1]]
            fired.append(best[0])
        return parts, fired


# ---------------------------------------------------------------------------- residues


@dataclass(frozen=True)
class Residues:
    """What :func:`residues` found about each ordinary token.

    ``proven``: ``{id: reason}`` of the tokens no text's encoding contains: ``"not-utf8"`` (its
    bytes occur in no UTF-8 text) or ``"unmade"`` (the merges never make it, and, for a rank
    model, its bytes are never a whole piece). ``witness``: ``{id: text}`` whose encoding
    contains the token. ``undecided``: the ids neither proven nor witnessed (see the module
    doc); they are not residues as far as anything here knows."""

    proven: dict[int, str]
    witness: dict[int, str]
    undecided: list[int]

    @property
    def ids(self) -> list[int]:
        """The proven residues, by id."""
        return sorted(self.proven)


def residues(tok: Tokenizer, *, witnesses: bool = True) -> Residues:
    """The tokens of ``tok`` that no text encodes to, proven from the merge graph (see the
    module doc). ``witnesses=False`` skips the search for witnesses (everything not proven is
    then undecided): the proof alone is one pass over the vocabulary."""
    if not isinstance(tok, Tokenizer):
        raise TypeError(f"residues() takes a bytepair.Tokenizer (byte-level BPE), got {type(tok).__name__}")
    model = _Model.of(tok)
    special_ids = set(tok._special_tokens.values())
    proven: dict[int, str] = {}
    open_: dict[int, bool] = {}  # id -> made by the merges from its own bytes
    for i, data in model.vocab.items():
        if i in special_ids:
            continue
        if not _utf8_substring(data):
            proven[i] = "not-utf8"
            continue
        made = len(data) == 1 or model.derive(data)[0] == [i]
        if not made and not model.ranked:
            proven[i] = "unmade"
            continue
        open_[i] = made
    witness: dict[int, str] = {}
    if witnesses:
        _find_witnesses(tok, model, open_, witness)
    undecided = sorted(i for i in open_ if i not in witness)
    return Residues(proven, witness, undecided)


def _find_witnesses(tok: Tokenizer, model: _Model, open_: dict[int, bool], witness: dict[int, str]) -> None:
    # Round 1: each token's own text. A rank model's unmade tokens can be emitted only this way,
    # as a whole piece; the contexts below are tried for them too.
    own = []
    for i in open_:
        try:
            own.append((i, model.vocab[i].decode("utf-8")))
        except UnicodeDecodeError:
            pass
    _try(tok, own, witness)
    # Round 2: the bytes completed to whole characters, between a few contexts; candidates are
    # tried in rounds (the k-th of every open token in round k), so a token found early costs
    # no more tries.
    heads_cache: dict[int, list[bytes]] = {}
    per_token: list[list[tuple[int, str]]] = []
    affixes = [(a.encode(), z.encode()) for a in _AFFIXES for z in _AFFIXES]
    for i in open_:
        if i in witness:
            continue
        data = model.vocab[i]
        k = _leading_continuations(data)
        if k:
            if k not in heads_cache:
                heads_cache[k] = _heads(k)
            heads = [h for h in heads_cache[k] if _decodes(h + data)]
        else:
            heads = [b""]
        need = _tail_need(data)
        tails = [b""]
        if need:
            tails = [bytes([first, *rest]) for first in range(0x80, 0xC0) for rest in itertools.product(_FILL, repeat=need - 1)]
        mine: list[tuple[int, str]] = []
        for (a, z), head, tail in itertools.product(affixes, heads, tails):
            if len(mine) >= _MAX_TRIES:
                break
            try:
                mine.append((i, (a + head + data + tail + z).decode("utf-8")))
            except UnicodeDecodeError:
                continue
        per_token.append(mine)
    start, width = 0, 1
    while per_token:
        batch = [c for mine in per_token for c in mine[start : start + width] if c[0] not in witness]
        _try(tok, batch, witness)
        start += width
        width *= 4
        per_token = [mine for mine in per_token if len(mine) > start and mine[0][0] not in witness]


def _try(tok: Tokenizer, candidates: list[tuple[int, str]], witness: dict[int, str]) -> None:
    step = 8192
    for start in range(0, len(candidates), step):
        chunk = [(i, t) for i, t in candidates[start : start + step] if i not in witness]
        if not chunk:
            continue
        encoded = tok.encode_ordinary_batch([t for _, t in chunk])
        for (i, text), ids in zip(chunk, encoded):
            if i not in witness and i in ids:
                witness[i] = text


# ---------------------------------------------------------------------------- results


@dataclass(frozen=True)
class CorpusChange:
    """What an operation changes on a corpus: ``documents`` read, ``changed`` (those whose ids,
    old ones mapped through the id map, differ from the new tokenizer's), the token totals,
    and the first changed document: its index, its name (file, or file:line for JSON lines,
    or ``None``), the token position of the first difference, and the tokens there (old and
    new, as bytes, up to 8 each)."""

    documents: int
    changed: int
    tokens_before: int
    tokens_after: int
    first_index: int | None = None
    first_name: str | None = None
    first_position: int | None = None
    first_old: list[bytes] = field(default_factory=list)
    first_new: list[bytes] = field(default_factory=list)

    @property
    def share(self) -> float:
        """The share of documents whose ids change (0 for an empty corpus)."""
        return self.changed / self.documents if self.documents else 0.0


@dataclass(frozen=True)
class Surgery:
    """The result of an operation: the new ``tokenizer``; ``id_map``, ``{old id: new id or
    None}`` for every id of the input (ordinary and special); ``removed`` and ``added``,
    ``{id: bytes}`` (old ids for removed tokens, new ids for added ones; special tokens as their
    UTF-8 text); ``notes``, what else to know; ``corpus``, the change measured on a corpus when
    one was given. For :func:`graft`, ``other_id_map`` maps B's ids and ``dropped`` lists B's
    tokens that did not come, with the reason."""

    operation: str
    tokenizer: Tokenizer
    id_map: dict[int, int | None]
    removed: dict[int, bytes]
    added: dict[int, bytes]
    notes: list[str] = field(default_factory=list)
    corpus: CorpusChange | None = None
    other_id_map: dict[int, int | None] | None = None
    dropped: dict[int, str] = field(default_factory=dict)

    def id_map_json(self) -> dict[str, Any]:
        """The id maps as JSON data (keys are strings; ``null`` for a removed id), with the ids
        removed (old) and added (new), and for :func:`graft` B's map and B's ids not taken."""
        out: dict[str, Any] = {"operation": self.operation, "id_map": {str(k): v for k, v in sorted(self.id_map.items())}}
        out["removed"] = sorted(self.removed)
        out["added"] = sorted(self.added)
        if self.other_id_map is not None:
            out["other_id_map"] = {str(k): v for k, v in sorted(self.other_id_map.items())}
            out["dropped"] = {str(k): v for k, v in sorted(self.dropped.items())}
        return out

    def summary(self, *, limit: int = 10) -> str:
        """What changed, as lines of text (the CLI prints this)."""
        from bytepair._display import token_repr

        old_n = len(self.id_map)
        kept = sum(1 for v in self.id_map.values() if v is not None)
        same = sum(1 for k, v in self.id_map.items() if k == v)
        lines = [
            f"{self.operation}: {old_n:,} ids -> {self.tokenizer.vocab_size:,} "
            f"({kept:,} kept, {same:,} of them at the same id; {len(self.removed):,} removed, {len(self.added):,} added)"
        ]
        for what, tokens in (("removed", self.removed), ("added", self.added)):
            if tokens:
                shown = ", ".join(f"{token_repr(b, 24)} ({i})" for i, b in list(sorted(tokens.items()))[:limit])
                more = f" and {len(tokens) - limit:,} more" if len(tokens) > limit else ""
                lines.append(f"{what}: {shown}{more}")
        if self.dropped:
            reasons = Counter(self.dropped.values())
            lines.append("not taken: " + "; ".join(f"{n:,} {r}" for r, n in reasons.most_common()))
        lines.extend(self.notes)
        c = self.corpus
        if c is not None:
            lines.append(
                f"corpus: {c.documents:,} document{'' if c.documents == 1 else 's'}, ids change in {c.changed:,} ({100 * c.share:.1f}%); "
                f"tokens {c.tokens_before:,} -> {c.tokens_after:,}"
            )
            if c.first_index is not None:
                where = c.first_name or f"document {c.first_index}"
                old = " ".join(token_repr(b, 16) for b in c.first_old)
                new = " ".join(token_repr(b, 16) for b in c.first_new)
                lines.append(f"first change: {where}, token {c.first_position}: {old} -> {new}")
        return "\n".join(lines)


# ---------------------------------------------------------------------------- corpus


def _documents(corpus: Any) -> list[tuple[str | None, str]]:
    """(name, text) of each document of ``corpus``, which is what :func:`bytepair.train` takes:
    a path (a ``str`` is always a path), a glob, a directory, a list of those, or
    :class:`~bytepair.Source` values (``Source(texts=[...])`` for documents in memory)."""
    from bytepair.sources import Source, documents, resolve

    items: list[Any] = [corpus] if isinstance(corpus, (str, os.PathLike, Source)) else list(corpus)
    srcs: list[Source]
    paths = [x for x in items if isinstance(x, (str, os.PathLike))]
    sources = [x for x in items if isinstance(x, Source)]
    if len(paths) == len(items):
        srcs = [Source(paths)] if paths else []
    elif len(sources) == len(items):
        srcs = sources
    else:
        raise TypeError("corpus must be paths (str or os.PathLike) or bytepair.Source values; for documents in memory pass Source(texts=[...])")
    out: list[tuple[str | None, str]] = []
    for src in srcs:
        if src.texts is not None:
            for text in src.texts:
                if not isinstance(text, str):
                    raise TypeError(f"corpus documents must be str, got {type(text).__name__}")
                out.append((None, text))
            continue
        for f in resolve(src, strict=True):
            for n, text in enumerate(documents(f, text_field=src.text_field), 1):
                out.append((f"{f.path}:{n}" if f.jsonl or f.parquet else f.path, text))
    return out


def _encode_all(tok: Tokenizer, texts: list[str]) -> list[list[int]]:
    return tok.encode_batch(texts, allowed_special="all") if texts else []


def _measure(
    old: Tokenizer, new: Tokenizer, id_map: Mapping[int, int | None], docs: list[tuple[str | None, str]],
    old_ids: list[list[int]] | None = None,
) -> CorpusChange:
    texts = [t for _, t in docs]
    before = old_ids if old_ids is not None else _encode_all(old, texts)
    after = _encode_all(new, texts)
    changed = 0
    first: dict[str, Any] = {}
    for n, (a, b) in enumerate(zip(before, after)):
        mapped = [id_map.get(i) for i in a]
        if mapped == b:
            continue
        changed += 1
        if not first:
            pos = next((k for k, (x, y) in enumerate(zip(mapped, b)) if x != y), min(len(mapped), len(b)))
            first = {
                "first_index": n,
                "first_name": docs[n][0],
                "first_position": pos,
                "first_old": [old.decode_single_token_bytes(i) for i in a[pos : pos + 8]],
                "first_new": [new.decode_single_token_bytes(i) for i in b[pos : pos + 8]],
            }
    return CorpusChange(len(docs), changed, sum(map(len, before)), sum(map(len, after)), **first)


# ---------------------------------------------------------------------------- building


def _token_bytes(tok: Tokenizer, i: int) -> bytes:
    by_id = {v: t for t, v in tok._special_tokens.items()}
    if i in tok._vocab:
        return tok._vocab[i]
    return by_id[i].encode("utf-8")


def _all_ids(tok: Tokenizer) -> list[int]:
    return sorted(set(tok._vocab) | set(tok._special_tokens.values()))


def _rebuild(
    tok: Tokenizer, model: _Model, drop: set[int], operation: str, *, merges_allowed: int | None = None, cascade: bool = True
) -> Surgery:
    """``tok`` without the tokens ``drop`` and without the tokens that can then not be made.

    Merge list: a multi-byte token stays when it is not in ``drop`` and some staying merge
    makes it from staying tokens (only the first ``merges_allowed`` merges may stay, when
    given); a merge stays when its parts and its token stay. Rank model (it stays one): a token
    stays unless dropped, or (``cascade``) unless a token its own merges pass through is gone."""
    special_ids = set(tok._special_tokens.values())
    single = set(model.byte_ids)
    allowed = len(model.merges) if merges_allowed is None else merges_allowed
    if model.ranked:
        alive = {i for i in model.vocab if i not in drop or i in single or i in special_ids}
        changed = cascade
        while changed:
            changed = False
            for i in sorted(alive):
                if len(model.vocab[i]) == 1 or i in special_ids:
                    continue
                parts, fired = model.derive(model.vocab[i])
                if parts == [i] and any(model.merges[n][2] not in alive for n in fired):
                    alive.discard(i)
                    changed = True
    else:
        alive = set(single) | (special_ids & set(model.vocab))
        changed = True
        while changed:
            changed = False
            for a, b, c in model.merges[:allowed]:
                if c not in alive and c not in drop and a in alive and b in alive:
                    alive.add(c)
                    changed = True
    kept_ids = sorted((alive & set(model.vocab)) | special_ids)
    id_map: dict[int, int | None] = {i: None for i in _all_ids(tok)}
    for new, old in enumerate(kept_ids):
        id_map[old] = new
    new_id = {old: new for new, old in enumerate(kept_ids)}
    vocab = {new_id[i]: b for i, b in model.vocab.items() if i in alive}
    specials = {t: new_id[i] for t, i in tok._special_tokens.items()}
    reserved = [new_id[i] for i in tok._reserved]
    removed = {i: _token_bytes(tok, i) for i, v in id_map.items() if v is None}
    training = dict(tok.training)
    history = training.get("surgery")
    training["surgery"] = [*(history if isinstance(history, list) else []), operation]
    out: Tokenizer
    if model.ranked:
        out = Tokenizer._from_ranks(
            {b: i for i, b in vocab.items()}, special_tokens=specials, pattern=tok._pattern, training=training,
            normalization=tok.normalization, reserved=reserved, roles=tok.special_tokens_map,
        )
    else:
        merge_ids = [(new_id[a], new_id[b]) for a, b, c in model.merges[:allowed] if a in alive and b in alive and c in alive]
        merges = [(vocab[a], vocab[b]) for a, b in merge_ids]
        out = Tokenizer._from_merges(
            vocab, merges, merge_ids, specials, tok._pattern, training,
            normalization=tok.normalization, reserved=reserved, roles=tok.special_tokens_map,
        )
    notes = _finish(tok, out, specials)
    return Surgery(operation, out, id_map, removed, {}, notes)


def _finish(tok: Tokenizer, out: Tokenizer, specials: Mapping[str, int]) -> list[str]:
    """Carries the pattern's preset name and the model-input settings over; says what could not be."""
    out._pattern_name = tok._pattern_name
    notes = []
    if all(tok._special_tokens.get(t) == i for t, i in specials.items()):
        out._carry_inputs(tok)
    else:
        if tok._added_flags:
            out._set_added({t: dataclasses.replace(f, id=specials[t]) for t, f in tok._added_flags.items() if t in specials})
        if tok._post_processor is not None:
            notes.append(
                "note: the post-processor (template) was not carried over: special-token ids moved; "
                "set it again with with_model_inputs(post_processor=...)"
            )
    return notes


def _with_corpus(result: Surgery, old: Tokenizer, docs: list[tuple[str | None, str]] | None, old_ids: list[list[int]] | None = None) -> Surgery:
    if docs is None:
        return result
    change = _measure(old, result.tokenizer, result.id_map, docs, old_ids)
    return dataclasses.replace(result, corpus=change)


def _check_tok(tok: Any, what: str = "tok") -> Tokenizer:
    if not isinstance(tok, Tokenizer):
        raise TypeError(f"{what} must be a bytepair.Tokenizer (byte-level BPE), got {type(tok).__name__}")
    return tok


# ---------------------------------------------------------------------------- operations


def prune(
    tok: Tokenizer,
    *,
    keep: int | None = None,
    min_count: int | None = None,
    drop_residues: bool = False,
    corpus: Any = None,
) -> Surgery:
    """A smaller tokenizer; exactly one of:

    - ``keep=N``: the first ``N`` merges (the tokenizer training would have stopped at; for a
      rank model, the ``N`` lowest-ranked tokens above the single bytes);
    - ``min_count=K`` with ``corpus``: without the tokens that occur fewer than ``K`` times in
      the corpus encoded with ``tok``, except those needed to make a token that stays;
    - ``drop_residues=True``: without the proven residues (:func:`residues`): no text encodes
      differently.

    ``corpus`` (paths as :func:`bytepair.train` takes them, or a list of ``str`` documents) is
    also where the change is measured. Special tokens always stay, with remapped ids.
    """
    tok = _check_tok(tok)
    chosen = [keep is not None, min_count is not None, bool(drop_residues)]
    if sum(chosen) != 1:
        raise BytepairError("prune() takes exactly one of keep=N, min_count=K (with corpus=...) or drop_residues=True")
    model = _Model.of(tok)
    docs = None if corpus is None else _documents(corpus)
    old_ids = None
    if keep is not None:
        if not isinstance(keep, int) or isinstance(keep, bool) or keep < 0:
            raise BytepairError(f"keep must be an int >= 0 (a number of merges), got {keep!r}")
        if model.ranked:
            order = sorted(i for i, b in model.vocab.items() if len(b) > 1)
            drop = set(order[keep:])
            result = _rebuild(tok, model, drop, f"prune keep={keep}", cascade=False)
        else:
            if keep > len(model.merges):
                raise BytepairError(f"keep={keep} is more than the tokenizer's {len(model.merges)} merges")
            result = _rebuild(tok, model, set(), f"prune keep={keep}", merges_allowed=keep)
    elif min_count is not None:
        if not isinstance(min_count, int) or isinstance(min_count, bool) or min_count < 1:
            raise BytepairError(f"min_count must be an int >= 1, got {min_count!r}")
        if docs is None:
            raise BytepairError("prune(min_count=K) needs corpus=... to count the tokens on")
        old_ids = _encode_all(tok, [t for _, t in docs])
        counts = Counter(i for ids in old_ids for i in ids)
        need = {i for i in model.vocab if counts[i] >= min_count}
        # Every token the merges pass through to make a token that stays, stays.
        stack = list(need)
        while stack:
            i = stack.pop()
            if len(model.vocab[i]) == 1:
                continue
            parts, fired = model.derive(model.vocab[i])
            for n in fired:
                c = model.merges[n][2]
                if c not in need:
                    need.add(c)
                    stack.append(c)
        drop = {i for i, b in model.vocab.items() if len(b) > 1 and i not in need}
        result = _rebuild(tok, model, drop, f"prune min_count={min_count}")
    else:
        found = residues(tok, witnesses=False)
        drop = {i for i in found.proven if len(model.vocab[i]) > 1}
        result = _rebuild(tok, model, drop, "prune drop_residues", cascade=False)
        kept_bytes = [i for i in found.proven if len(model.vocab[i]) == 1]
        if kept_bytes:
            result.notes.append(
                f"note: {len(kept_bytes)} single-byte tokens are residues too (bytes no UTF-8 text has) "
                "but stay: a byte-level BPE needs all 256"
            )
    return _with_corpus(result, tok, docs, old_ids)


def extend(tok: Tokenizer, corpus: Any, *, add: int, **train_options: Any) -> Surgery:
    """``tok`` with ``add`` more tokens learned on ``corpus`` by continued training
    (``train(corpus, vocab_size=tok.vocab_size + add, base=tok)``, ``train_options`` passed on):
    every old id keeps its token, new ids come after the largest. The change is measured on
    the same corpus, which is read into memory for that (an analysis-sized corpus; for many GB,
    call :func:`bytepair.train` with ``base=`` directly: the id map is the identity)."""
    tok = _check_tok(tok)
    if not isinstance(add, int) or isinstance(add, bool) or add < 1:
        raise BytepairError(f"add must be an int >= 1 (tokens to learn), got {add!r}")
    docs = _documents(corpus)
    texts = [t for _, t in docs]
    new = _train_more(texts, tok, add, train_options)
    id_map: dict[int, int | None] = {i: i for i in _all_ids(tok)}
    for i in id_map:
        if _token_bytes(tok, i) != _token_bytes(new, i):  # pragma: no cover - train() guarantees it
            raise BytepairError(f"continued training moved id {i}")
    added = {i: _token_bytes(new, i) for i in _all_ids(new) if i not in id_map}
    notes = []
    if tok._merges is None:
        notes.append("note: the base is a rank model (tiktoken); the result is a merge list made from its ranks")
    if len(added) < add:
        notes.append(f"note: {add - len(added):,} fewer tokens than asked: no pair of the corpus reached the min frequency")
    result = Surgery(f"extend add={add}", new, id_map, {}, added, notes)
    return _with_corpus(result, tok, docs)


def _train_more(texts: list[str], base: Tokenizer, add: int, options: Mapping[str, Any]) -> Tokenizer:
    from bytepair.training import train_from_iterator

    return train_from_iterator(texts, vocab_size=base.vocab_size + add, base=base, **options)


def graft(a: Tokenizer, b: Tokenizer, *, corpus: Any = None) -> Surgery:
    """A's tokenizer with B's other tokens: every id of A stays; B's merges follow A's, in B's
    order, each one whose two parts are tokens by then and whose token A lacks, with new ids
    after A's largest; then B's special tokens that A lacks. B's tokens that do not come are in
    ``dropped`` (B's ids, with the reason): a token whose merges need a part that did not come,
    a token B's merges do not make. B's merges of a token that is already here, made by other
    merges, are not taken (counted in ``notes``): adding them would change how A encodes. A
    and B must split and normalize text alike. With a ``corpus``, the change is measured against
    A."""
    a = _check_tok(a, "a")
    b = _check_tok(b, "b")
    if a.pattern != b.pattern:
        raise BytepairError(
            f"A splits text with {a.pattern_name or a.pattern!r} and B with {b.pattern_name or b.pattern!r}: "
            "B's merges were learned on other pieces; graft tokenizers with the same pattern"
        )
    if a.normalization != b.normalization:
        raise BytepairError(f"A normalizes with {a.normalization!r} and B with {b.normalization!r}; graft tokenizers that normalize alike")
    ma, mb = _Model.of(a), _Model.of(b)
    vocab = dict(ma.vocab)
    by_bytes = dict(ma.by_bytes)
    merges = [(vocab[x], vocab[y]) for x, y, _ in ma.merges]
    pairs = {(x, y) for x, y, _ in ma.merges}
    next_id = a.max_token_value + 1
    added: dict[int, bytes] = {}
    skipped = 0  # merges of B whose token is here already, made by other merges
    for x, y, _ in mb.merges:
        left, right = mb.vocab[x], mb.vocab[y]
        token = left + right
        if token in by_bytes:
            skipped += (by_bytes.get(left), by_bytes.get(right)) not in pairs
            continue
        if left not in by_bytes or right not in by_bytes:
            continue
        vocab[next_id] = token
        by_bytes[token] = next_id
        pairs.add((by_bytes[left], by_bytes[right]))
        merges.append((left, right))
        added[next_id] = token
        next_id += 1
    b_made = {c for _, _, c in mb.merges}
    dropped = {
        i: "tokens of B whose merges need a part that did not come" if i in b_made else "tokens of B that B's merges do not make"
        for i, data in mb.vocab.items()
        if data not in by_bytes
    }
    specials = dict(a._special_tokens)
    for text, i in sorted(b._special_tokens.items(), key=lambda kv: kv[1]):
        if text not in specials:
            specials[text] = next_id
            added[next_id] = text.encode("utf-8")
            next_id += 1
    training = dict(a.training)
    history = training.get("surgery")
    training["surgery"] = [*(history if isinstance(history, list) else []), "graft"]
    merge_ids = [(by_bytes[x], by_bytes[y]) for x, y in merges]
    out = Tokenizer._from_merges(
        vocab, merges, merge_ids, specials, a._pattern, training,
        normalization=a.normalization, reserved=sorted(a._reserved), roles=a.special_tokens_map,
    )
    notes = _finish(a, out, specials)
    if skipped:
        notes.append(f"{skipped:,} merges of B not taken: their tokens are here, made by other merges (A's or B's earlier ones)")
    if ma.ranked:
        notes.append("note: A is a rank model (tiktoken); the result is a merge list made from its ranks")
    id_map: dict[int, int | None] = {i: i for i in _all_ids(a)}
    other: dict[int, int | None] = {}
    new_by_bytes = by_bytes
    for i in _all_ids(b):
        if i in mb.vocab:
            other[i] = new_by_bytes.get(mb.vocab[i])
        else:
            text = next(t for t, v in b._special_tokens.items() if v == i)
            other[i] = specials.get(text)
    result = Surgery("graft", out, id_map, {}, added, notes, None, other, dropped)
    docs = None if corpus is None else _documents(corpus)
    return _with_corpus(result, a, docs)


