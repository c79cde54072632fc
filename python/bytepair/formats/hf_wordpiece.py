"""Hugging Face ``tokenizer.json`` for BERT-style WordPiece tokenizers, and ``save_pretrained``.

Supported pipeline (what ``BertTokenizerFast`` writes): normalizer ``BertNormalizer`` (or none),
pre-tokenizer ``BertPreTokenizer``, model ``WordPiece``, decoder ``WordPiece`` (or none), post
processor ``TemplateProcessing`` or ``BertProcessing`` (or none); ``added_tokens`` become the
special tokens recognized in text. Anything else raises :class:`FormatError` naming it.

These functions take and give parsed JSON (``dict``); format detection and file reading are
``bytepair.load``'s and ``formats/hf.py``'s.
"""

from __future__ import annotations

import json
import os
from typing import Any

from bytepair._atomic import write_atomic
from bytepair.errors import BytepairError, FormatError
from bytepair.wordpiece import WordPieceTokenizer

__all__ = ["save_pretrained", "wordpiece_from_hf", "wordpiece_to_hf"]


def _obj(value: Any, what: str, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise FormatError(f"{path}: {what} must be an object, got {type(value).__name__}")
    return value


def _str(value: Any, what: str, path: str) -> str:
    if not isinstance(value, str):
        raise FormatError(f"{path}: {what} must be a string, got {value!r:.80}")
    return value


def _template(items: Any, what: str, path: str) -> list[str] | None:
    if items is None:
        return None
    if not isinstance(items, list):
        raise FormatError(f"{path}: post_processor.{what} must be a list")
    out = []
    for n, item in enumerate(items):
        if isinstance(item, dict) and len(item) == 1 and "SpecialToken" in item:
            token = _obj(item["SpecialToken"], f"post_processor.{what} item", path).get("id")
            out.append(_str(token, f"post_processor.{what}[{n}].SpecialToken.id", path))
        elif isinstance(item, dict) and len(item) == 1 and "Sequence" in item:
            seq = _obj(item["Sequence"], f"post_processor.{what} item", path).get("id")
            if seq not in ("A", "B"):
                raise FormatError(f"{path}: post_processor.{what} names the sequence {seq!r} (expected A or B)")
            out.append("$" + seq)
        else:
            raise FormatError(f"{path}: post_processor.{what} has an item this reader does not know: {item!r:.80}")
    return out


def wordpiece_from_hf(data: dict[str, Any], *, path: str) -> WordPieceTokenizer:
    """A WordPieceTokenizer from a parsed HF ``tokenizer.json`` (``path`` names it in errors)."""
    data = _obj(data, "the tokenizer", path)
    model = _obj(data.get("model"), "model", path)
    if model.get("type") != "WordPiece":
        raise FormatError(f"{path}: model type is {model.get('type')!r}, not 'WordPiece'")
    vocab = _obj(model.get("vocab"), "model.vocab", path)
    if not vocab:
        raise FormatError(f"{path}: model.vocab is empty")
    n = len(vocab)
    for token, i in vocab.items():
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < n:
            raise FormatError(f"{path}: model.vocab gives {token!r} the id {i!r}, out of range 0..{n - 1}")
    options: dict[str, Any] = {
        "unk_token": _str(model.get("unk_token", "[UNK]"), "model.unk_token", path),
        "continuing_subword_prefix": _str(model.get("continuing_subword_prefix", "##"), "model.continuing_subword_prefix", path),
        "max_input_chars_per_word": model.get("max_input_chars_per_word", 100),
    }
    norm = data.get("normalizer")
    if norm is None:
        options.update(clean_text=False, handle_chinese_chars=False, strip_accents=False, lowercase=False)
    else:
        norm = _obj(norm, "normalizer", path)
        if norm.get("type") != "BertNormalizer":
            raise FormatError(f"{path}: normalizer {norm.get('type')!r} is not supported (only BertNormalizer)")
        # Booleans, not truth values: the string "false" would turn an option on.
        for key in ("clean_text", "handle_chinese_chars", "lowercase", "strip_accents"):
            if key not in norm:
                continue
            value = norm[key]
            if not isinstance(value, bool) and not (key == "strip_accents" and value is None):
                raise FormatError(f"{path}: normalizer.{key} must be true or false, got {value!r:.80}")
            options[key] = value
    pre = data.get("pre_tokenizer")
    if not isinstance(pre, dict) or pre.get("type") != "BertPreTokenizer":
        kind = pre.get("type") if isinstance(pre, dict) else pre
        raise FormatError(f"{path}: pre_tokenizer {kind!r} is not supported (only BertPreTokenizer)")
    dec = data.get("decoder")
    if dec is not None and _obj(dec, "decoder", path).get("type") != "WordPiece":
        raise FormatError(f"{path}: decoder {dec.get('type')!r} is not supported (only WordPiece)")
    added = data.get("added_tokens") or []
    if not isinstance(added, list):
        raise FormatError(f"{path}: added_tokens must be a list")
    specials = []
    for a in added:
        a = _obj(a, "an added token", path)
        content, i = a.get("content"), a.get("id")
        if not isinstance(content, str) or vocab.get(content) != i:
            raise FormatError(f"{path}: the added token {content!r} (id {i!r}) is not that token of model.vocab")
        specials.append(content)
    options["special_tokens"] = specials
    post = data.get("post_processor")
    if post is None:
        options["template"] = options["pair_template"] = None
        options["_no_template"] = True
    else:
        post = _obj(post, "post_processor", path)
        if post.get("type") == "TemplateProcessing":
            options["template"] = _template(post.get("single"), "single", path)
            options["pair_template"] = _template(post.get("pair"), "pair", path)
        elif post.get("type") == "BertProcessing":
            cls, sep = post.get("cls"), post.get("sep")
            if not (isinstance(cls, list) and isinstance(sep, list) and cls and sep):
                raise FormatError(f"{path}: post_processor BertProcessing needs cls and sep")
            options["template"] = [cls[0], "$A", sep[0]]
            options["pair_template"] = [cls[0], "$A", sep[0], "$B", sep[0]]
        else:
            raise FormatError(f"{path}: post_processor {post.get('type')!r} is not supported")
    no_template = options.pop("_no_template", False)
    try:
        tok = WordPieceTokenizer(vocab, **options)
    except (BytepairError, TypeError, OverflowError) as e:
        # TypeError / OverflowError: an option of the wrong type or too large for the extension
        # (max_input_chars_per_word = 10**30) is the file's fault, not the caller's.
        raise FormatError(f"{path}: {e}") from None
    if no_template:
        tok._template = tok._pair_template = None
    return tok


def _hf_template(items: list[str], tok: WordPieceTokenizer) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    type_id = 0
    seen_a = False
    for item in items:
        if item in ("$A", "$B"):
            if item == "$B":
                type_id = 1
            seen_a = seen_a or item == "$A"
            out.append({"Sequence": {"id": item[1:], "type_id": type_id}})
        else:
            out.append({"SpecialToken": {"id": item, "type_id": type_id}})
    return out


def wordpiece_to_hf(tok: WordPieceTokenizer) -> dict[str, Any]:
    """The HF ``tokenizer.json`` content of ``tok`` (BertTokenizerFast's pipeline). A tokenizer
    with ``split_unknown_characters=True`` is refused: HF's WordPiece model has no such option
    and would make the whole word ``[UNK]``."""
    if tok.split_unknown_characters:
        raise FormatError(
            "split_unknown_characters=True cannot be written to a Hugging Face tokenizer.json (its WordPiece "
            "turns the whole word into the unknown token); save it with tok.save(path), or make the tokenizer "
            "with split_unknown_characters=False"
        )
    post: dict[str, Any] | None = None
    if tok.template is not None or tok.pair_template is not None:
        single = tok.template or ["$A"]
        pair = tok.pair_template or ["$A", "$B"]
        used = [t for t in dict.fromkeys(single + pair) if not t.startswith("$")]
        post = {
            "type": "TemplateProcessing",
            "single": _hf_template(single, tok),
            "pair": _hf_template(pair, tok),
            "special_tokens": {t: {"id": t, "ids": [tok.vocab[t]], "tokens": [t]} for t in used},
        }
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": True}
            for t, i in sorted(tok.special_tokens.items(), key=lambda kv: kv[1])
        ],
        "normalizer": {
            "type": "BertNormalizer",
            "clean_text": tok._bert["clean_text"],
            "handle_chinese_chars": tok._bert["handle_chinese_chars"],
            "strip_accents": tok._strip_accents_option,
            "lowercase": tok._bert["lowercase"],
        },
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": post,
        "decoder": {"type": "WordPiece", "prefix": tok.continuing_subword_prefix, "cleanup": True},
        "model": {
            "type": "WordPiece",
            "unk_token": tok.unk_token,
            "continuing_subword_prefix": tok.continuing_subword_prefix,
            "max_input_chars_per_word": tok.max_input_chars_per_word,
            "vocab": {tok._tokens[i]: i for i in range(tok.vocab_size)},
        },
    }


def save_pretrained(tok: WordPieceTokenizer, directory: str | os.PathLike[str]) -> list[str]:
    """Writes ``tokenizer.json``, ``vocab.txt``, ``tokenizer_config.json`` and
    ``special_tokens_map.json`` into ``directory`` (created if needed), for
    ``transformers.AutoTokenizer.from_pretrained`` (BertTokenizerFast)."""
    from bytepair.formats.bert import dump_bert_vocab

    hf = wordpiece_to_hf(tok)  # first: what it refuses leaves no directory behind
    directory = os.fspath(directory)
    os.makedirs(directory, exist_ok=True)
    roles = {
        "unk_token": tok.unk_token,
        **{f"{r}_token": t for r, t in (("sep", "[SEP]"), ("pad", "[PAD]"), ("cls", "[CLS]"), ("mask", "[MASK]")) if t in tok.vocab},
    }
    config = {
        "tokenizer_class": "BertTokenizer",
        "do_lower_case": tok._bert["lowercase"],
        "tokenize_chinese_chars": tok._bert["handle_chinese_chars"],
        "strip_accents": tok._strip_accents_option,
        "clean_up_tokenization_spaces": False,
        "model_max_length": 1_000_000_000_000_000_019_884_624_838_656,
        **roles,
    }
    paths = []
    for name, doc in (
        ("tokenizer.json", hf),
        ("tokenizer_config.json", config),
        ("special_tokens_map.json", roles),
    ):
        p = os.path.join(directory, name)
        write_atomic(p, (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
        paths.append(p)
    p = os.path.join(directory, "vocab.txt")
    dump_bert_vocab(tok, p)
    paths.append(p)
    return paths
