"""bytepair's tokenizer file for WordPiece models (``"model": "wordpiece"``).

Same envelope as the BPE file (``_fileformat``: format name, version, special tokens, training,
bytepair version); the model part:

    {
      "format": "bytepair-tokenizer", "version": 1, "model": "wordpiece",
      "vocab": ["[PAD]", "[UNK]", ...],              # the token of each id, in id order
      "wordpiece": {"unk_token": "[UNK]", "continuing_subword_prefix": "##",
                    "max_input_chars_per_word": 100,
                    "split_unknown_characters": true},  # only when true (default false)
      "bert": {"clean_text": true, "handle_chinese_chars": true,
               "strip_accents": null, "lowercase": true},  # BertNormalizer's options
      "special_tokens": {"[PAD]": 0, ...},           # recognized in raw text
      "template": ["[CLS]", "$A", "[SEP]"],           # what add_special_tokens adds (or null)
      "pair_template": ["[CLS]", "$A", "[SEP]", "$B", "[SEP]"],
      "training": {...}, "bytepair_version": "..."
    }
"""

from __future__ import annotations

import json
import os
from typing import Any

from bytepair._atomic import write_atomic
from bytepair._json import read_json
from bytepair.errors import BytepairError, FormatError
from bytepair.wordpiece import WordPieceTokenizer

FORMAT = "bytepair-tokenizer"
VERSION = 1


def to_dict(tok: WordPieceTokenizer) -> dict[str, Any]:
    from bytepair import __version__

    wordpiece: dict[str, Any] = {
        "unk_token": tok.unk_token,
        "continuing_subword_prefix": tok.continuing_subword_prefix,
        "max_input_chars_per_word": tok.max_input_chars_per_word,
    }
    if tok.split_unknown_characters:
        # written only when on, so that files of the default stay as they were
        wordpiece["split_unknown_characters"] = True
    return {
        "format": FORMAT,
        "version": VERSION,
        "model": "wordpiece",
        "vocab": list(tok._tokens),
        "wordpiece": wordpiece,
        "bert": {
            "clean_text": tok._bert["clean_text"],
            "handle_chinese_chars": tok._bert["handle_chinese_chars"],
            "strip_accents": tok._strip_accents_option,
            "lowercase": tok._bert["lowercase"],
        },
        "special_tokens": tok.special_tokens,
        "template": tok.template,
        "pair_template": tok.pair_template,
        "training": tok.training,
        "bytepair_version": __version__,
    }


def save(tok: WordPieceTokenizer, path: str | os.PathLike[str]) -> None:
    text = json.dumps(to_dict(tok), ensure_ascii=False, separators=(",", ":")) + "\n"
    write_atomic(path, text.encode("utf-8"))


def _get(doc: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in doc:
        raise FormatError(f"{where}: missing the key {key!r}")
    value = doc[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise FormatError(f"{where}: {key!r} has the wrong type ({type(value).__name__})")
    return value


def from_dict(doc: Any, where: str = "tokenizer") -> WordPieceTokenizer:
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise FormatError(f"{where}: not a bytepair tokenizer file")
    version = _get(doc, "version", int, where)
    if not 1 <= version <= VERSION:
        raise FormatError(f"{where}: format version {version} is not supported (this bytepair reads version {VERSION})")
    if doc.get("model") != "wordpiece":
        raise FormatError(f"{where}: model is {doc.get('model')!r}, not 'wordpiece'")
    vocab = _get(doc, "vocab", list, where)
    for n, t in enumerate(vocab):
        if not isinstance(t, str):
            raise FormatError(f"{where}: vocab[{n}] must be a string, got {t!r:.80}")
    wp = _get(doc, "wordpiece", dict, where)
    bert = _get(doc, "bert", dict, where)
    specials = _get(doc, "special_tokens", dict, where)
    training = doc.get("training") or {}
    if not isinstance(training, dict):
        raise FormatError(f"{where}: 'training' must be an object")
    for text, i in specials.items():
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < len(vocab) or vocab[i] != text:
            raise FormatError(f"{where}: special_tokens[{text!r}] = {i!r} is not the id of that token in the vocab")
    # The constructor takes these by truth value (the string "false" would be true) and names
    # no file: checked here, by their path in the file.
    for key in ("unk_token", "continuing_subword_prefix"):
        if key in wp and not isinstance(wp[key], str):
            raise FormatError(f"{where}: wordpiece.{key} must be a string, got {wp[key]!r:.80}")
    if "split_unknown_characters" in wp and not isinstance(wp["split_unknown_characters"], bool):
        raise FormatError(f"{where}: wordpiece.split_unknown_characters must be true or false, got {wp['split_unknown_characters']!r:.80}")
    for key in ("clean_text", "handle_chinese_chars", "lowercase", "strip_accents"):
        if key in bert and not isinstance(bert[key], bool) and not (key == "strip_accents" and bert[key] is None):
            raise FormatError(f"{where}: bert.{key} must be true or false, got {bert[key]!r:.80}")
    for key in ("template", "pair_template"):
        if doc.get(key) is not None and not isinstance(doc[key], list):
            raise FormatError(f"{where}: {key} must be a list of strings or null, got {doc[key]!r:.80}")
    try:
        return WordPieceTokenizer(
            vocab,
            unk_token=wp.get("unk_token", "[UNK]"),
            continuing_subword_prefix=wp.get("continuing_subword_prefix", "##"),
            max_input_chars_per_word=wp.get("max_input_chars_per_word", 100),
            split_unknown_characters=wp.get("split_unknown_characters", False),
            clean_text=bert.get("clean_text", True),
            handle_chinese_chars=bert.get("handle_chinese_chars", True),
            strip_accents=bert.get("strip_accents"),
            lowercase=bert.get("lowercase", True),
            special_tokens=list(specials),
            template=doc.get("template"),
            pair_template=doc.get("pair_template"),
            training=training,
        )
    except (BytepairError, TypeError, OverflowError) as e:
        # TypeError / OverflowError: a value of the wrong type or one too large for the extension
        # (max_input_chars_per_word = 10**30) is the file's fault, not the caller's.
        raise FormatError(f"{where}: {e}") from None


def load(path: str | os.PathLike[str]) -> WordPieceTokenizer:
    return from_dict(read_json(path), where=os.fspath(path))
