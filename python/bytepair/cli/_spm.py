"""The SentencePiece side of ``bytepair encode`` / ``decode`` / ``count`` / ``show``.

Each of these commands loads its tokenizer with ``load_model`` (any format) and, when it is a
:class:`SentencePieceTokenizer` (a ``.model`` file, or a SentencePiece-family ``tokenizer.json``
read as :class:`HFSentencePieceTokenizer`), hands over to the function here. Ids are the
model's own: ``encode`` gives what ``SentencePieceProcessor.encode(text)`` gives for the whole
input (no BOS / EOS), ``decode`` what its ``decode`` gives.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from bytepair._display import token_repr
from bytepair.cli._common import CommandError, open_input, plural, read_text, sentencepiece_kind, stdout_bytes, table
from bytepair.errors import UnknownTokenError
from bytepair.sentencepiece import SentencePieceTokenizer

if TYPE_CHECKING:
    from bytepair.sources import SourceFile

_PIECE_COLUMNS = 64  # widest piece `show` prints before it is cut with "…"
_TYPES = ("NORMAL", "UNKNOWN", "CONTROL", "USER_DEFINED", "BYTE", "UNUSED")  # the order show counts them in


def _is_hf(tok: SentencePieceTokenizer) -> bool:
    from bytepair.formats.hf_spm import HFSentencePieceTokenizer

    return isinstance(tok, HFSentencePieceTokenizer)


def _piece(piece: str) -> str:
    return token_repr(piece.encode("utf-8", "surrogatepass"))


# ---------------------------------------------------------------------------- encode


def run_encode(args: argparse.Namespace, tok: SentencePieceTokenizer) -> int:
    name = args.tokenizer
    if _is_hf(tok):
        if args.ordinary:  # its added tokens are matched in the text, special or not, as tokenizers does
            raise CommandError(
                f"--ordinary: {name} is {sentencepiece_kind(tok)}, which matches its added tokens in the "
                "text as tokenizers does; it cannot encode them as ordinary text"
            )
    elif args.allow_special:  # control pieces written in the text are text, as in sentencepiece
        raise CommandError(
            f"--allow-special: {name} is {sentencepiece_kind(tok)}, which encodes control pieces "
            "(<s>, </s>) written in the text as ordinary text, as sentencepiece does"
        )
    with contextlib.ExitStack() as stack:
        if args.text is not None:
            text = args.text
        else:
            from bytepair._progress import Progress, wanted
            from bytepair.cli.encode import _metered, _size

            stream, where = stack.enter_context(open_input(args.file))
            blocks: Iterable[str] = read_text(stream, where)
            if wanted(args.progress):
                bar = Progress("reading", total=_size(args.file), unit="bytes")
                stack.callback(bar.close)
                blocks = _metered(blocks, bar)
            # one text, as sentencepiece's encode(text) sees it: cutting it (at newlines, say)
            # could change the pieces where a normalization joins or drops whitespace
            text = "".join(blocks)
    out = sys.stdout
    if args.tokens:  # as encode(text, out_type=str): an unknown piece shows the text it stands for
        out.write(" ".join(_piece(p) for p in tok.tokenize(text)) + "\n")
        return 0
    ids = tok.encode(text)
    out.write(f"{len(ids)}\n" if args.count else " ".join(map(str, ids)) + "\n")
    return 0


# ---------------------------------------------------------------------------- decode


def run_decode(args: argparse.Namespace, tok: SentencePieceTokenizer) -> int:
    from bytepair.cli.decode import _parse_ids

    with open_input(args.file) as (stream, name):
        ids = [i for batch in _parse_ids(stream, name) for i in batch]
    try:
        text = tok.decode(ids)  # all at once: the first piece's "▁" is dropped, not each batch's
    except UnknownTokenError as e:
        raise CommandError(f"{name}: {e} (were the ids made with another tokenizer?)") from None
    out = stdout_bytes()
    out.write(text.encode("utf-8", "surrogatepass"))
    out.flush()
    return 0


# ---------------------------------------------------------------------------- count


def count_files(args: argparse.Namespace, tok: SentencePieceTokenizer, files: list[SourceFile]) -> list[tuple[int, int, str]]:
    """``(tokens, bytes, path)`` of each file: its documents (a text file is one) encoded in
    batches on ``args.threads`` threads."""
    from bytepair.cli.count import _text_bytes
    from bytepair.sources import documents

    def tokens(batch: list[str]) -> int:
        return sum(len(ids) for ids in tok.encode_batch(batch, num_threads=args.threads)) if batch else 0

    counts = []
    for f in files:
        n = 0
        size = f.size
        batch: list[str] = []
        for doc in documents(f, text_field=args.text_field, errors=args.errors):
            batch.append(doc)
            if not f.size:
                size += _text_bytes(doc)
            if len(batch) >= 4096:
                n += tokens(batch)
                batch = []
        n += tokens(batch)
        counts.append((n, size, f.path))
    return counts


# ---------------------------------------------------------------------------- show


def _pipeline(node: Any) -> str:
    """A tokenizer.json normalizer or pre-tokenizer, by its type (``Sequence[Prepend, Replace]``)."""
    if not isinstance(node, dict):
        return "none"
    kind = str(node.get("type", "?"))
    steps = node.get("normalizers", node.get("pretokenizers"))
    if kind == "Sequence" and isinstance(steps, list):
        return f"Sequence[{', '.join(_pipeline(s) for s in steps)}]"
    return kind


def _normalization(spec: dict[str, Any]) -> str:
    parts = [str(spec.get("normalizer") or "identity")]
    if spec.get("add_dummy_prefix"):
        parts.append("dummy prefix ▁")
    if spec.get("remove_extra_whitespaces"):
        parts.append("extra whitespace removed")
    if spec.get("escape_whitespaces"):
        parts.append("whitespace as ▁" + (" (a suffix)" if spec.get("treat_whitespace_as_suffix") else ""))
    if spec.get("split_digits"):
        parts.append("digits split")
    parts.append("byte fallback" if spec.get("byte_fallback") else "no byte fallback")
    return ", ".join(parts)


def run_show(args: argparse.Namespace, tok: SentencePieceTokenizer) -> int:
    kind = sentencepiece_kind(tok)
    if args.residues:
        raise CommandError(
            f"--residues: {args.tokenizer} is {kind}; residues are proven from a byte-level BPE's merges"
        )
    hf = _is_hf(tok)
    pieces = tok.pieces()
    by_type: dict[str, int] = {}
    for _, _, t in pieces:
        by_type[t] = by_type.get(t, 0) + 1
    order = [t for t in _TYPES if t in by_type] + sorted(t for t in by_type if t not in _TYPES)
    model = "Unigram" if tok.model_type == "unigram" else "BPE"
    lines = [
        args.tokenizer,
        f"model           SentencePiece {model}"
        + (" (tokenizer.json, encoded as tokenizers does)" if hf else " (.model, encoded as sentencepiece does)"),
        f"vocab size      {len(tok):,} = " + " + ".join(f"{by_type[t]:,} {t.lower().replace('_', '-')}" for t in order),
    ]
    if hf:
        doc: dict[str, Any] = getattr(tok, "_doc", {})
        lines.append(f"normalizer      {_pipeline(doc.get('normalizer'))}")
        lines.append(f"pre-tokenizer   {_pipeline(doc.get('pre_tokenizer'))}")
    else:
        lines.append(f"normalization   {_normalization(tok.spec)}")
    specials = sorted(tok.special_tokens.items(), key=lambda kv: kv[1])
    shown = ", ".join(f"{_piece(p)} = {i}" for p, i in specials)
    lines.append(f"special pieces  {shown or 'none'}")
    if tok.special_tokens_map:
        lines.append("roles           " + ", ".join(f"{r} = {_piece(p)}" for r, p in tok.special_tokens_map.items()))
    user = [(i, p) for i, (p, _, t) in enumerate(pieces) if t == "USER_DEFINED"]
    if user:
        some = ", ".join(f"{_piece(p)} = {i}" for i, p in user[:10])
        lines.append(f"user-defined    {some}" + (f" and {len(user) - 10:,} more" if len(user) > 10 else ""))
    lines.append("")
    limit = 0 if args.all else args.limit
    total = len(pieces)
    shown_n = total if limit == 0 else min(limit, total)
    lines.append(f"pieces {'(all)' if shown_n == total else f'{shown_n:,} of {total:,}'}, by id:")
    rows = [["id", "piece", "score", "type"]]
    for i, (p, score, t) in enumerate(pieces[:shown_n]):
        rows.append([str(i), token_repr(p.encode("utf-8", "surrogatepass"), _PIECE_COLUMNS), f"{score + 0.0:.4f}", t.lower()])
    lines.extend(table(rows, [True, False, True, False], ["  ", "  ", "  "]))
    if shown_n < total:
        lines.append(f"... {plural(total - shown_n, 'more piece')}; see them with --limit N or --all")
    from bytepair.cli.show import _printable  # pieces from a file: no terminal control codes

    sys.stdout.write("\n".join(_printable(line) for line in lines) + "\n")
    return 0
