"""Hugging Face ``tokenizer.json`` (byte-level BPE), both ways, and ``save_pretrained`` directories.

What is read and written (anything else is a :class:`~bytepair.FormatError` naming the
component and its JSON path, e.g. ``normalizer.normalizers[1]: Replace is not supported``):

- ``normalizer``: ``null``, ``NFC``/``NFD``/``NFKC``/``NFKD``/``Lowercase``, or a ``Sequence`` of them.
- ``pre_tokenizer``: ``ByteLevel(use_regex=true)`` (GPT-2's split, = the ``gpt2`` preset), or
  ``Split(pattern, behavior="Isolated")`` then ``ByteLevel(use_regex=false)`` in a ``Sequence``
  (GPT-NeoX, Llama-3, Qwen2 style), or ``ByteLevel(use_regex=false)`` alone (no split).
  ``add_prefix_space`` must be false. Split patterns are rewritten between Oniguruma and
  bytepair's dialect (:mod:`bytepair.formats._regex_dialect`).
- ``model``: ``BPE`` with byte-level vocabulary and merges (either ``"a b"`` strings or
  ``["a", "b"]`` pairs), ``ignore_merges`` either way, no dropout, no byte fallback, no
  subword prefix or suffix.
- ``added_tokens``: matched in the text before the model, with their flags (``special``,
  ``lstrip``, ``rstrip``, ``single_word``, ``normalized``: :mod:`bytepair.pipeline.added_tokens`)
  and written back as read. The special ones follow tiktoken's rules in ``encode``
  (``allowed_special``); the non-special ones are always matched, as Hugging Face matches them.
  Special tokens named ``<|reserved_N|>`` are bytepair's reserved slots.
- ``decoder``: ``ByteLevel`` (or ``null``). ``post_processor``: ``TemplateProcessing``,
  ``BertProcessing``, ``RobertaProcessing``, ``ByteLevel``, a ``Sequence`` of them, or ``null``
  (:mod:`bytepair.pipeline.templates`), kept and written back; ``tok(...)`` applies it
  (``add_special_tokens=True``), ``encode`` does not: it is Hugging Face's
  ``encode(text, add_special_tokens=False)``.

A model directory's ``tokenizer_config.json`` gives the roles (``bos_token``, ...) and the
model-input settings (``model_max_length``, ``padding_side``, ``truncation_side``,
``model_input_names``, ``chat_template``; or ``chat_template.jinja``); ``save_pretrained`` writes
them. A directory whose model is WordPiece is read by :mod:`bytepair.formats.hf_wordpiece`, with
the same post-processor, added tokens and settings.

Written files use ``ignore_merges=true`` for rank models (tiktoken: a piece that is a token is
that token) and ``false`` for merge lists (a token is used only when the merges make it).
"""

from __future__ import annotations

import json
import operator
import os
import re
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from bytepair._atomic import write_atomic
from bytepair._json import read_json
from bytepair import _collector, _core
from bytepair.errors import BytepairError, BytepairWarning, FormatError
from bytepair.formats import gpt2
from bytepair.formats._regex_dialect import from_oniguruma, to_oniguruma
from bytepair.patterns import PATTERNS
from bytepair.pipeline.added_tokens import AddedToken
from bytepair.pipeline.templates import PostProcessor, post_processor_from_hf, token_ids
from bytepair.tokenizer import ROLES, Tokenizer

if TYPE_CHECKING:
    from bytepair._api import ModelInputs
    from bytepair.formats.hf_spm import HFSentencePieceTokenizer
    from bytepair.wordpiece import WordPieceTokenizer

__all__ = ["from_hf_dict", "load_hf", "load_pretrained", "save_hf", "save_pretrained", "to_hf_dict"]

_NORMALIZERS = {"NFC": "nfc", "NFD": "nfd", "NFKC": "nfkc", "NFKD": "nfkd", "Lowercase": "lowercase"}
_NORMALIZER_TYPES = {v: k for k, v in _NORMALIZERS.items()}


# ---------------------------------------------------------------------------------- reading


def _type(node: Any, path: str, where: str) -> str:
    if not isinstance(node, dict) or not isinstance(node.get("type"), str):
        raise FormatError(f"{where}: {path} must be an object with a 'type'")
    t: str = node["type"]
    return t


def _flag(node: dict[str, Any], key: str, path: str, where: str, default: bool) -> bool:
    """A boolean option: true, false, or absent / null for ``default``. Anything else (the
    string "false", 0) is refused rather than read by its truth value."""
    value = node.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise FormatError(f"{where}: {path}.{key} must be true or false, got {value!r:.80}")
    return value


def _unsupported(where: str, path: str, what: str, why: str = "") -> FormatError:
    return FormatError(f"{where}: {path}: {what} is not supported by bytepair" + (f" ({why})" if why else ""))


def _normalization(node: Any, where: str) -> str | None:
    if node is None:
        return None
    steps: list[str] = []
    kind = _type(node, "normalizer", where)
    items = [(node, "normalizer")]
    if kind == "Sequence":
        inner = node.get("normalizers")
        if not isinstance(inner, list):
            raise FormatError(f"{where}: normalizer.normalizers must be a list")
        items = [(n, f"normalizer.normalizers[{k}]") for k, n in enumerate(inner)]
    for n, path in items:
        t = _type(n, path, where)
        if t not in _NORMALIZERS:
            raise _unsupported(where, path, t, f"supported: {', '.join(_NORMALIZERS)}")
        steps.append(_NORMALIZERS[t])
    return "+".join(steps) or None


def _byte_level(node: dict[str, Any], path: str, where: str) -> bool:
    """Checks a ByteLevel pre-tokenizer; returns its use_regex."""
    if _flag(node, "add_prefix_space", path, where, False):
        raise _unsupported(where, f"{path}.add_prefix_space", "add_prefix_space=true")
    return _flag(node, "use_regex", path, where, True)


def _pattern(node: Any, where: str) -> str | None:
    """The split pattern (bytepair dialect) of a pre_tokenizer."""
    if node is None:
        raise FormatError(f"{where}: pre_tokenizer is null; a byte-level BPE needs a ByteLevel pre-tokenizer")
    kind = _type(node, "pre_tokenizer", where)
    items = [(node, "pre_tokenizer")]
    if kind == "Sequence":
        inner = node.get("pretokenizers")
        if not isinstance(inner, list):
            raise FormatError(f"{where}: pre_tokenizer.pretokenizers must be a list")
        items = [(n, f"pre_tokenizer.pretokenizers[{k}]") for k, n in enumerate(inner)]
    pattern: str | None = None
    seen_byte_level = False
    for n, path in items:
        t = _type(n, path, where)
        if t == "Split":
            if seen_byte_level or pattern is not None:
                raise _unsupported(where, path, "a Split after another split or after ByteLevel")
            rx = n.get("pattern")
            if not isinstance(rx, dict) or not isinstance(rx.get("Regex", rx.get("String")), str):
                raise FormatError(f"{where}: {path}.pattern must be {{'Regex': ...}} or {{'String': ...}}")
            if n.get("behavior") != "Isolated":
                raise _unsupported(where, f"{path}.behavior", repr(n.get("behavior")), "only 'Isolated' keeps all text")
            if _flag(n, "invert", path, where, False):
                raise _unsupported(where, f"{path}.invert", "invert=true")
            if "Regex" in rx:
                onig = rx["Regex"]
                pattern = next((name for name, p in PATTERNS.items() if to_oniguruma(p) == onig), None)
                if pattern is None:
                    try:
                        pattern = from_oniguruma(onig)
                    except FormatError as e:
                        raise FormatError(f"{where}: {path}.pattern: {e}") from None
            else:
                import re

                pattern = re.escape(rx["String"])
        elif t == "ByteLevel":
            if seen_byte_level:
                raise _unsupported(where, path, "a second ByteLevel")
            seen_byte_level = True
            if _byte_level(n, path, where):
                if pattern is not None:
                    raise _unsupported(where, path, "ByteLevel(use_regex=true) after a Split")
                pattern = "gpt2"
        else:
            raise _unsupported(where, path, t, "supported: ByteLevel, Split")
    if not seen_byte_level:
        raise FormatError(f"{where}: pre_tokenizer has no ByteLevel step; only byte-level BPE is supported")
    return pattern


def _check_model(model: Any, where: str) -> dict[str, Any]:
    kind = _type(model, "model", where)
    if kind == "WordPiece":
        raise FormatError(
            f"{where}: model is WordPiece, not byte-level BPE; bytepair.load(path) reads it as a WordPieceTokenizer"
        )
    if kind != "BPE":
        raise _unsupported(where, "model", kind, "only BPE (byte-level)")
    for key, ok in (
        ("dropout", (None,)),
        ("byte_fallback", (False, None)),
        ("continuing_subword_prefix", (None, "")),
        ("end_of_word_suffix", (None, "")),
    ):
        if model.get(key) not in ok:
            raise _unsupported(where, f"model.{key}", repr(model.get(key)))
    _flag(model, "ignore_merges", "model", where, False)  # read by its truth value later
    checked: dict[str, Any] = model
    return checked


def _merge_pairs(merges: Any, where: str) -> list[tuple[str, str]]:
    if not isinstance(merges, list):
        raise FormatError(f"{where}: model.merges must be a list")
    out: list[tuple[str, str]] = []
    for n, m in enumerate(merges):
        if type(m) is list and len(m) == 2 and type(m[0]) is str and type(m[1]) is str:
            out.append((m[0], m[1]))
            continue
        if isinstance(m, str):
            parts = m.split(" ")
            if len(parts) == 2 and parts[0] and parts[1]:
                out.append((parts[0], parts[1]))
                continue
            raise FormatError(f"{where}: model.merges[{n}]: expected two tokens separated by one space, got {m!r:.80}")
        raise FormatError(f"{where}: model.merges[{n}] must be 'a b' or ['a', 'b'], got {m!r:.80}")
    return out


def _components(doc: Any, where: str) -> tuple[dict[str, Any], str | None, str | None, dict[str, int]]:
    """Everything but the vocabulary and merges, checked: ``(model, normalization, pattern,
    added tokens {text: id})``."""
    if not isinstance(doc, dict) or "model" not in doc:
        raise FormatError(f"{where}: not a Hugging Face tokenizer.json (no 'model')")
    model = _check_model(doc["model"], where)
    normalization = _normalization(doc.get("normalizer"), where)
    pattern = _pattern(doc.get("pre_tokenizer"), where)
    decoder = doc.get("decoder")
    if decoder is not None and _type(decoder, "decoder", where) != "ByteLevel":
        raise _unsupported(where, "decoder", decoder["type"], "only ByteLevel")
    post_processor_from_hf(doc.get("post_processor"), where)  # checked here; kept by _apply_pipeline
    added = doc.get("added_tokens") or []
    if not isinstance(added, list):
        raise FormatError(f"{where}: added_tokens must be a list")
    specials: dict[str, int] = {}
    by_id: dict[int, str] = {}  # the inverse of specials: looking through specials.values() made this loop quadratic
    for n, entry in enumerate(added):
        path = f"added_tokens[{n}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("content"), str) or not entry["content"]:
            raise FormatError(f"{where}: {path} must be an object with a non-empty 'content'")
        i = entry.get("id")
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < 2**32:
            raise FormatError(f"{where}: {path}.id must be an int in [0, 2**32), got {i!r}")
        for flag in ("lstrip", "rstrip", "single_word", "normalized"):
            _flag(entry, flag, path, where, False)  # honoured: see bytepair.pipeline.added_tokens
        _flag(entry, "special", path, where, True)
        text = entry["content"]
        if text in specials and specials[text] != i:
            raise FormatError(f"{where}: {path}: {text!r} is added twice, with ids {specials[text]} and {i}")
        if i in by_id and by_id[i] != text:
            raise FormatError(f"{where}: {path}: the id {i} is given to both {by_id[i]!r} and {text!r}")
        specials[text] = i
        by_id[i] = text
    return model, normalization, pattern, specials


def from_hf_dict(doc: Any, *, where: str = "tokenizer.json", roles: Mapping[str, str] | None = None) -> Tokenizer:
    """A :class:`~bytepair.Tokenizer` from the parsed content of a ``tokenizer.json``."""
    model, normalization, pattern, specials = _components(doc, where)
    vocab_doc = model.get("vocab")
    if not isinstance(vocab_doc, dict):
        raise FormatError(f"{where}: model.vocab must be an object {{token: id}}")
    # Added tokens may also sit in the model's vocabulary (GPT-2): they are special, not ordinary.
    # The id is looked up only once it is known to be an int; any other value stays in
    # `ordinary`, where gpt2.parse names it.
    special_ids = set(specials.values())
    ordinary = {t: i for t, i in vocab_doc.items() if t not in specials or type(i) is not int or i not in special_ids}
    raw_merges = model.get("merges", [])
    where_vocab = f"{where}: model.vocab"

    def merge_name(n: int) -> str:
        return f"{where}: model.merges[{n}]"

    parsed = None
    # Pairs (["a", "b"], today's layout) go to the parser as they are, for speed; any oddity
    # (a pair of three, a number) is named by the checking pass below.
    if isinstance(raw_merges, list) and raw_merges and {type(m) for m in raw_merges} == {list}:
        try:
            parsed = gpt2.parse(ordinary, raw_merges, where_vocab=where_vocab, merge_name=merge_name)
        except FormatError:
            if all(len(m) == 2 and type(m[0]) is str and type(m[1]) is str for m in raw_merges):
                raise
        except (TypeError, ValueError):
            pass
    if parsed is None:
        parsed = gpt2.parse(ordinary, _merge_pairs(raw_merges, where), where_vocab=where_vocab, merge_name=merge_name)
    vocab, merge_ids, more = parsed
    for text, i in more.items():
        raise FormatError(f"{where}: model.vocab[{text!r}] (id {i}) is not a byte-level token nor an added token")
    for text, i in specials.items():
        if i in vocab and vocab[i] != text.encode():
            raise FormatError(
                f"{where}: the added token {text!r} has the id {i}, which is the ordinary token {gpt2.bytes_to_unicode(vocab[i])!r}"
            )
    gpt2.check_special_ids(specials, len(vocab), f"{where}: added_tokens")
    roles = {r: t for r, t in (roles or {}).items() if t in specials}
    if model.get("ignore_merges") and merge_ids:
        ranked = _as_ranks(vocab, merge_ids, specials, pattern, normalization, roles)
        if ranked is not None:
            return _apply_pipeline(ranked, doc, where)
    tok = _from_merge_list(vocab, merge_ids, specials, pattern, normalization, roles, model.get("ignore_merges"), where)
    return _apply_pipeline(tok, doc, where)


_RESERVED = re.compile(r"<\|reserved_[0-9]+\|>")
_Tok = TypeVar("_Tok", "Tokenizer", "WordPieceTokenizer")
_T = TypeVar("_T", bound="ModelInputs")


def _apply_pipeline(tok: _Tok, doc: dict[str, Any], where: str) -> _Tok:
    """Gives a tokenizer read from ``doc`` (a checked ``tokenizer.json``) its added-token flags,
    its post-processor and its reserved slots (special tokens named ``<|reserved_N|>``, as
    bytepair writes them). The post-processor's tokens must be tokens of the tokenizer."""
    flags = {}
    for n, entry in enumerate(doc.get("added_tokens") or []):
        t = AddedToken.from_hf(entry, f"{where}: added_tokens[{n}]")
        flags[t.content] = t
    tok._set_added(flags)
    pp = post_processor_from_hf(doc.get("post_processor"), where)
    for name, ids in token_ids(pp).items():
        for i in ids:
            if tok.id_to_token(i) is None:
                raise FormatError(f"{where}: post_processor: the token {name!r} has the id {i}, which no token of the vocabulary has")
    tok._post_processor = pp
    if isinstance(tok, Tokenizer):
        reserved = [i for t, i in tok._special_tokens.items() if _RESERVED.fullmatch(t)]
        if reserved:
            tok._reserved = frozenset(reserved)
    return tok


def _from_merge_list(
    vocab: dict[int, bytes],
    merge_ids: list[tuple[int, int]],
    specials: dict[str, int],
    pattern: str | None,
    normalization: str | None,
    roles: Mapping[str, str],
    ignore_merges: Any,
    where: str,
) -> Tokenizer:
    """The tokenizer of checked parts read as a merge list (the last step of both readers)."""
    merges = [(vocab[a], vocab[b]) for a, b in merge_ids]
    try:
        # ignore_merges (Llama-3, Qwen2): a piece that is a token is that token. bytepair uses a
        # token by lookup only when the merges make it anyway; the tests compare with tokenizers.
        tok = Tokenizer._from_merges(vocab, merges, merge_ids, specials, pattern, normalization=normalization, roles=roles)
    except BytepairError as e:
        raise FormatError(f"{where}: {e}") from None
    if ignore_merges:
        _warn_unmade(tok, where)
    return tok


def _warn_unmade(tok: Tokenizer, where: str) -> None:
    """With ``ignore_merges`` Hugging Face takes a piece that is a token as that token; bytepair
    does so only when the merges make that token of its bytes. Tokens where the two differ
    (a whole piece of the pattern that the merges make otherwise) get a warning naming them."""
    texts: list[str] = []
    ids: list[int] = []
    for i, b in tok._vocab.items():
        if len(b) > 1:
            try:
                texts.append(b.decode("utf-8"))  # a piece is text: only valid UTF-8 can be one
            except UnicodeDecodeError:
                continue
            ids.append(i)
    got = tok._core.encode_batch(texts, [], num_threads=None)
    unmade = [
        t for t, i, g in zip(texts, ids, got, strict=True)
        if g != [i] and _core.split_pieces(t, tok.pattern) == [t]
    ]
    if unmade:
        warnings.warn(
            f"{where}: model.ignore_merges: {len(unmade)} token(s) that the merges do not make of their own "
            f"bytes, first {unmade[0]!r}: Hugging Face encodes such a piece as that one token, bytepair by the merges",
            BytepairWarning,
            stacklevel=4,
        )


def _as_ranks(
    vocab: dict[int, bytes],
    merge_ids: list[tuple[int, int]],
    specials: dict[str, int],
    pattern: str | None,
    normalization: str | None,
    roles: Mapping[str, str],
) -> Tokenizer | None:
    """The rank model (tiktoken's) of a file whose merges are exactly what its ids say as
    ranks (files converted from tiktoken, with ``ignore_merges``), else None."""
    if sum(1 for b in vocab.values() if len(b) > 1) != len(merge_ids):
        return None
    try:
        # Tokenizer._from_ranks, without turning the vocabulary into ranks and back.
        tok = Tokenizer.__new__(Tokenizer)
        tok._init(vocab, None, None, dict(specials), pattern, normalization, None, (), roles)
        tok._check_roles(tok._roles)
    except BytepairError:
        return None
    # The ranks' own merges come in id order of what they make; the same pairs in the same
    # order means the file's merges are exactly the ranks'.
    return tok if list(map(operator.itemgetter(0, 1), tok._core.rank_merges())) == merge_ids else None


def load_hf(path: str | os.PathLike[str]) -> Tokenizer:
    """Reads a Hugging Face ``tokenizer.json``, or a model directory (see :func:`load_pretrained`)."""
    path = os.fspath(path)
    if os.path.isdir(path):
        tok = load_pretrained(path)
        if not isinstance(tok, Tokenizer):
            raise FormatError(
                f"{path}: the model is WordPiece, not byte-level BPE; bytepair.load(path) reads it as a WordPieceTokenizer"
            )
        return tok
    return _load_file(path)


def _load_file(path: str, roles: Mapping[str, str] | None = None) -> Tokenizer:
    """Reads a ``tokenizer.json`` file: the fast reader, else the one that names errors."""
    from bytepair.formats import _hf_fast

    tok = _hf_fast.load(path, roles)
    if tok is None:
        tok = from_hf_dict(read_json(path), where=path, roles=roles)
    return tok


def _roles_of(directory: str) -> dict[str, str]:
    """Roles named in special_tokens_map.json / tokenizer_config.json (``bos_token`` -> ``bos``)."""
    return {role: text for role, (text, _) in _role_entries(directory).items() if text is not None}


def _role_entries(directory: str) -> dict[str, tuple[str | None, str]]:
    """Each role the directory's files name, with the file that names it last: ``None`` for a
    role set to ``null`` (transformers then has no such token)."""
    roles: dict[str, tuple[str | None, str]] = {}
    for name in ("tokenizer_config.json", "special_tokens_map.json"):
        p = os.path.join(directory, name)
        if not os.path.exists(p):
            continue
        doc = read_json(p)
        if not isinstance(doc, dict):
            raise FormatError(f"{p}: expected a JSON object")
        for role in ROLES:
            key = f"{role}_token"
            if key not in doc:
                continue
            value = doc[key]
            if isinstance(value, dict):  # an AddedToken written out
                value = value.get("content")
            if value is None:
                roles[role] = (None, p)
            elif isinstance(value, str) and value:
                roles[role] = (value, p)
    return roles


#: Tokenizer classes with no special tokens of their own: only the files' roles count.
_GENERIC_CLASSES = ("PreTrainedTokenizerFast", "PreTrainedTokenizer", "TokenizersBackend")


def _spm_roles(tok: HFSentencePieceTokenizer, directory: str) -> HFSentencePieceTokenizer:
    """``tok`` with the roles of the directory's ``tokenizer_config.json`` (and
    ``special_tokens_map.json``) over the names transformers' Llama and T5 classes default to (no
    defaults for the generic class). A role must name a special token of ``tokenizer.json``:
    transformers would make any other token special (matched whole in text) or add it as a new
    id, and bytepair does neither, so that is a :class:`FormatError` naming the file and field."""
    entries = _role_entries(directory)
    if not entries:
        return tok
    p = os.path.join(directory, "tokenizer_config.json")
    doc: Any = read_json(p) if os.path.exists(p) else {}
    cls = str(doc.get("tokenizer_class") or "") if isinstance(doc, dict) else ""
    roles = {} if cls in _GENERIC_CLASSES else tok.special_tokens_map
    specials = tok.special_tokens
    for role, (text, source) in entries.items():
        if text is None:
            roles.pop(role, None)
            continue
        if text not in specials:
            how = "an ordinary token" if tok.token_to_id(text) is not None else "not in its vocabulary"
            raise FormatError(
                f"{source}: {role}_token {text!r} is not a special token of tokenizer.json ({how}); transformers would "
                "make it one, which changes how text containing it encodes: add it to tokenizer.json's added_tokens "
                'with "special": true'
            )
        roles[role] = text
    tok._config_roles = roles
    eos = roles.get("eos")
    if cls.removesuffix("Fast") == "T5Tokenizer" and eos is not None:
        # transformers' T5 class builds its own template on load: "$A </s>", the </s> standing
        # for the eos token's id, whatever tokenizer.json's template says.
        from bytepair.pipeline.templates import TemplateProcessing

        tok._post_processor = TemplateProcessing.of(f"$A {eos}", f"$A {eos} $B {eos}", {eos: specials[eos]})
    return tok


def load_pretrained(directory: str | os.PathLike[str]) -> Tokenizer | WordPieceTokenizer | HFSentencePieceTokenizer:
    """Reads a model directory: ``tokenizer.json`` if present, else ``vocab.json`` +
    ``merges.txt``; special-token roles from ``tokenizer_config.json`` / ``special_tokens_map.json``;
    the model-input settings (``model_max_length``, ``padding_side``, ``truncation_side``,
    ``model_input_names``, the chat template) from ``tokenizer_config.json`` and
    ``chat_template.jinja``. A ``tokenizer.json`` whose model is WordPiece gives a
    :class:`~bytepair.WordPieceTokenizer`."""
    directory = os.fspath(directory)
    roles = _roles_of(directory)
    tj = os.path.join(directory, "tokenizer.json")
    tok: Tokenizer | WordPieceTokenizer | None
    if os.path.exists(tj):
        tok = _hf_fast_load(tj, roles)
        if tok is None:
            doc = read_json(tj)
            from bytepair.formats.hf_spm import from_hf_spm, is_hf_spm

            if is_hf_spm(doc):  # Unigram, or SentencePiece-style BPE: roles and settings from the config
                return _apply_config(_spm_roles(from_hf_spm(doc, where=tj), directory), directory)
            if isinstance(doc, dict) and isinstance(doc.get("model"), dict) and doc["model"].get("type") == "WordPiece":
                from bytepair.formats.hf_wordpiece import wordpiece_from_hf

                tok = _apply_pipeline(wordpiece_from_hf(doc, path=tj), doc, tj)
            else:
                tok = from_hf_dict(doc, where=tj, roles=roles)
        return _apply_config(tok, directory)
    vj, mt = os.path.join(directory, "vocab.json"), os.path.join(directory, "merges.txt")
    if os.path.exists(vj) and os.path.exists(mt):
        tok = gpt2.load_gpt2(vj, mt)
        extra = _added_tokens_of(directory)
        if extra or roles:
            tok = tok.with_special_tokens({t: i for t, i in extra.items() if t not in tok.special_tokens})
            roles = {r: t for r, t in roles.items() if t in tok.special_tokens}
            if roles:
                tok = tok.with_special_tokens(roles=roles)
        return _apply_config(tok, directory)
    raise FormatError(f"{directory}: no tokenizer.json, nor vocab.json and merges.txt")


def _hf_fast_load(path: str, roles: Mapping[str, str]) -> Tokenizer | None:
    from bytepair.formats import _hf_fast

    return _hf_fast.load(path, roles)


def _load_pretrained_fast(directory: str) -> Tokenizer | None:
    """:func:`load_pretrained` of a directory with a ``tokenizer.json`` by the fast reader, or
    None (then ``load_pretrained`` gives the same tokenizer or names the problem)."""
    try:
        roles = _roles_of(directory)
    except (FormatError, OSError):
        return None
    tok = _hf_fast_load(os.path.join(directory, "tokenizer.json"), roles)
    if tok is None:
        return None
    try:
        return _apply_config(tok, directory)
    except (FormatError, OSError):
        return None


#: Tokenizer classes that pad on the left by default (their ``padding_side`` class attribute).
_LEFT_PADDING_CLASSES = ("LlamaTokenizer", "CodeLlamaTokenizer", "GemmaTokenizer", "CohereTokenizer", "Siglip2Tokenizer",
                         "XLNetTokenizer")

#: Tokenizer classes whose model takes token_type_ids (transformers' model_input_names).
_TYPE_ID_CLASSES = ("BertTokenizer", "ConvBertTokenizer", "MarkupLMTokenizer", "DPRContextEncoderTokenizer",
                    "DPRQuestionEncoderTokenizer")


def read_config(directory: str) -> tuple[Any, str | None]:
    """The model-input settings of a model directory's ``tokenizer_config.json`` (and
    ``chat_template.jinja``) as an :class:`~bytepair._api.InputsConfig`, and the file the chat
    template came from. Values of the wrong type are a :class:`FormatError` naming the file."""
    from bytepair._api import InputsConfig, _LARGE
    from bytepair.pipeline.chat import load_template

    p = os.path.join(directory, "tokenizer_config.json")
    doc: Any = read_json(p) if os.path.exists(p) else {}
    if not isinstance(doc, dict):
        raise FormatError(f"{p}: expected a JSON object")
    mml = doc.get("model_max_length")
    limit: int | None = None
    if mml is not None:
        if isinstance(mml, bool) or not isinstance(mml, (int, float)) or mml < 0:
            raise FormatError(f"{p}: model_max_length must be a non-negative number, got {mml!r:.80}")
        limit = None if mml > _LARGE else int(mml)
    sides = {}
    cls = str(doc.get("tokenizer_class") or "").removesuffix("Fast")
    for key in ("padding_side", "truncation_side"):
        # transformers' Llama-family classes pad on the left unless the file says otherwise
        default = "left" if key == "padding_side" and cls in _LEFT_PADDING_CLASSES else "right"
        value = doc.get(key, default)
        if value not in ("right", "left"):
            raise FormatError(f"{p}: {key} must be 'right' or 'left', got {value!r:.80}")
        sides[key] = value
    names = doc.get("model_input_names")
    if names is None:
        names = ["input_ids", "token_type_ids", "attention_mask"] if cls in _TYPE_ID_CLASSES else ["input_ids", "attention_mask"]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise FormatError(f"{p}: model_input_names must be a list of strings, got {names!r:.80}")
    cleanup = doc.get("clean_up_tokenization_spaces", False)
    if not isinstance(cleanup, bool):
        raise FormatError(f"{p}: clean_up_tokenization_spaces must be true or false, got {cleanup!r:.80}")
    template, source = load_template(directory, doc)
    config = InputsConfig(
        model_max_length=limit,
        padding_side=sides["padding_side"],
        truncation_side=sides["truncation_side"],
        model_input_names=tuple(names),
        clean_up_tokenization_spaces=cleanup,
        chat_template=template,
    )
    return config, source


def _apply_config(tok: _T, directory: str) -> _T:
    config, source = read_config(directory)
    tok._inputs = config
    if source is not None:
        tok._chat_template_source = source
    return tok


def _added_tokens_of(directory: str) -> dict[str, int]:
    p = os.path.join(directory, "tokenizer_config.json")
    if not os.path.exists(p):
        return {}
    doc = read_json(p)
    decoder = doc.get("added_tokens_decoder") if isinstance(doc, dict) else None
    out: dict[str, int] = {}
    if isinstance(decoder, dict):
        for key, entry in decoder.items():
            # ASCII digits of an id's length: str.isdigit takes "²", and int() neither that nor 4,300 digits.
            if isinstance(entry, dict) and isinstance(entry.get("content"), str) and key.isascii() and key.isdigit() and len(key) <= 10:
                out[entry["content"]] = int(key)
    return out


# ---------------------------------------------------------------------------------- writing


def _added(tok: Tokenizer) -> list[dict[str, Any]]:
    """The added tokens with their flags, as read (special, not normalized, nothing stripped
    for the special tokens bytepair made)."""
    return [t.to_hf() for t in tok.added_tokens]


def to_hf_dict(tok: Tokenizer) -> dict[str, Any]:
    """The content of a ``tokenizer.json`` that encodes and decodes as ``tok`` does."""
    if not isinstance(tok, Tokenizer):
        raise TypeError(f"expected a Tokenizer, not {type(tok).__name__}")
    strings = gpt2.check_exportable(tok, "tokenizer.json")
    # Special tokens are in the model's vocabulary too (as GPT-2's files have them): tokenizers
    # renumbers an added token that is not, when ids have a gap (cl100k has no id 100256).
    vocab = gpt2.vocab_json(tok, strings)
    return _hf_doc(tok, vocab, [[strings[a], strings[b]] for a, b in gpt2.merge_ids(tok)])


def _hf_doc(tok: Tokenizer, vocab: dict[str, int], merges: list[list[str]]) -> dict[str, Any]:
    """The document of :func:`to_hf_dict` around a given ``model.vocab`` and ``model.merges``
    (the last two keys of the last key, ``model``: :func:`_hf_text` relies on that)."""
    normalizer: dict[str, Any] | None = None
    if tok.normalization is not None:
        steps = [{"type": _NORMALIZER_TYPES[s]} for s in tok.normalization.split("+")]
        normalizer = steps[0] if len(steps) == 1 else {"type": "Sequence", "normalizers": steps}
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}
    pre: dict[str, Any]
    if tok.pattern is None:
        pre = byte_level
    elif tok.pattern_name == "gpt2":
        pre = {**byte_level, "use_regex": True}
    else:
        split = {"type": "Split", "pattern": {"Regex": to_oniguruma(tok.pattern)}, "behavior": "Isolated", "invert": False}
        pre = {"type": "Sequence", "pretokenizers": [split, byte_level]}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": _added(tok),
        "normalizer": normalizer,
        "pre_tokenizer": pre,
        "post_processor": None if tok.post_processor is None else tok.post_processor.to_hf(),
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": tok._merges is None,
            "vocab": vocab,
            "merges": merges,
        },
    }


def _hf_text(tok: Tokenizer) -> str:
    """``json.dumps(to_hf_dict(tok), ensure_ascii=False, separators=(",", ":"))``, with the
    vocabulary and merges written by the extension (``Encoder.hf_model_json``): for o200k that
    is 600,000 strings Python neither makes nor encodes. The tests compare the two texts."""
    if not isinstance(tok, Tokenizer):
        raise TypeError(f"expected a Tokenizer, not {type(tok).__name__}")
    gpt2.check_specials_exportable(tok, "tokenizer.json")
    head = json.dumps(_hf_doc(tok, {}, []), ensure_ascii=False, separators=(",", ":"))
    tail = '"vocab":{},"merges":[]}}'
    if not head.endswith(tail):  # _hf_doc's layout changed: no fast way
        return json.dumps(to_hf_dict(tok), ensure_ascii=False, separators=(",", ":"))
    merges = None if tok._merges is None else gpt2.merge_ids(tok)
    ordinary, merges_text = tok._core.hf_model_json(merges)
    # The special tokens after the ordinary ones, in id order, as gpt2.vocab_json puts them.
    specials = [
        json.dumps(text, ensure_ascii=False) + ":" + str(i)
        for text, i in sorted(tok._special_tokens.items(), key=lambda kv: kv[1])
        if tok._core.lookup(text.encode()) != i
    ]
    vocab = ",".join([ordinary, *specials])
    return head[: -len(tail)] + '"vocab":{' + vocab + '},"merges":' + merges_text + "}}"


def save_hf(tok: Tokenizer, path: str | os.PathLike[str]) -> None:
    """Writes ``tok`` as a Hugging Face ``tokenizer.json`` (atomically)."""
    # The document of an o200k-sized tokenizer is 200,000 lists and strings: with the collector
    # on, its collections were a quarter of the time `to_hf_dict` took.
    with _collector.paused():
        text = _hf_text(tok) + "\n"
    write_atomic(path, text.encode("utf-8"))


_UNSET: Any = object()


def inputs_config_doc(tok: Any, model_max_length: Any = _UNSET) -> dict[str, Any]:
    """The model-input keys of ``tokenizer_config.json`` for ``tok`` (``model_max_length`` given
    here wins over the tokenizer's own; ``None`` is no limit, written as transformers writes it)."""
    from bytepair._api import VERY_LARGE, InputsConfig

    inputs: InputsConfig = tok._inputs
    limit = inputs.model_max_length if model_max_length is _UNSET else model_max_length
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
        raise BytepairError(f"model_max_length must be a non-negative int or None, got {limit!r}")
    doc: dict[str, Any] = {
        "model_max_length": VERY_LARGE if limit is None else limit,
        "padding_side": inputs.padding_side,
        "truncation_side": inputs.truncation_side,
        "model_input_names": list(inputs.model_input_names),
        "clean_up_tokenization_spaces": inputs.clean_up_tokenization_spaces,
    }
    if inputs.chat_template is not None:
        template = inputs.chat_template
        doc["chat_template"] = (
            template if isinstance(template, str) else [{"name": k, "template": v} for k, v in template.items()]
        )
    return doc


def save_pretrained(tok: Tokenizer, directory: str | os.PathLike[str], *, model_max_length: Any = _UNSET) -> list[str]:
    """Writes the files a model repository holds, each atomically: ``tokenizer.json``,
    ``vocab.json``, ``merges.txt``, ``special_tokens_map.json``, ``tokenizer_config.json``
    (roles become ``bos_token``/``eos_token``/...; ``model_max_length``, padding and truncation
    sides, ``model_input_names`` and the chat template as the tokenizer has them, or
    ``model_max_length`` as given). ``transformers.AutoTokenizer.from_pretrained`` loads the
    directory. Returns the paths written."""
    directory = os.fspath(directory)
    with _collector.paused():
        hf = to_hf_dict(tok)
    inputs = inputs_config_doc(tok, model_max_length)
    os.makedirs(directory, exist_ok=True)
    roles = {f"{r}_token": t for r, t in tok.special_tokens_map.items()}
    config: dict[str, Any] = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        **inputs,
        "added_tokens_decoder": {str(e["id"]): {k: v for k, v in e.items() if k != "id"} for e in hf["added_tokens"]},
        **roles,
    }
    files = {
        "tokenizer.json": json.dumps(hf, ensure_ascii=False, separators=(",", ":")) + "\n",
        "vocab.json": json.dumps(hf["model"]["vocab"], ensure_ascii=False) + "\n",
        "merges.txt": "\n".join(["#version: 0.2", *(a + " " + b for a, b in hf["model"]["merges"])]) + "\n",
        "special_tokens_map.json": json.dumps(roles, ensure_ascii=False, indent=2) + "\n",
        "tokenizer_config.json": json.dumps(config, ensure_ascii=False, indent=2) + "\n",
    }
    written = []
    for name, text in files.items():
        p = os.path.join(directory, name)
        write_atomic(p, text.encode("utf-8"))
        written.append(p)
    return written


def patch_pretrained(tok: Any, directory: str, model_max_length: Any = _UNSET) -> None:
    """Writes the post-processor, the added tokens' flags and the model-input settings of
    ``tok`` into a directory another writer made (WordPiece's ``save_pretrained``)."""
    tj = os.path.join(directory, "tokenizer.json")
    doc = read_json(tj)
    doc["post_processor"] = None if tok.post_processor is None else tok.post_processor.to_hf()
    doc["added_tokens"] = [t.to_hf() for t in tok.added_tokens]
    write_atomic(tj, (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
    p = os.path.join(directory, "tokenizer_config.json")
    config = read_json(p)
    config.update(inputs_config_doc(tok, model_max_length))
    config["added_tokens_decoder"] = {str(e["id"]): {k: v for k, v in e.items() if k != "id"} for e in doc["added_tokens"]}
    write_atomic(p, (json.dumps(config, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
