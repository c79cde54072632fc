"""Writing a SentencePiece ``.model`` (a protobuf ``ModelProto``) from scratch, for trained
models: the pieces, the trainer's options and the normalizer's. Only fields that differ from
sentencepiece's defaults are written for the options, as sentencepiece itself does (proto2
optional fields); the pieces' types are written unless normal.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import Any

# ModelProto.SentencePiece.Type
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, BYTE, UNUSED = 1, 2, 3, 4, 6, 5

# TrainerSpec: field number, wire kind, sentencepiece's default
TRAINER_FIELDS: dict[str, tuple[int, str, Any]] = {
    "model_type": (3, "int", 1),
    "vocab_size": (4, "int", 8000),
    "character_coverage": (10, "float", 0.9995),
    "seed_sentencepiece_size": (14, "int", 1000000),
    "shrinking_factor": (15, "float", 0.75),
    "num_sub_iterations": (17, "int", 2),
    "max_sentencepiece_length": (20, "int", 16),
    "split_by_unicode_script": (21, "bool", True),
    "split_by_whitespace": (22, "bool", True),
    "split_by_number": (23, "bool", True),
    "treat_whitespace_as_suffix": (24, "bool", False),
    "split_digits": (25, "bool", False),
    "control_symbols": (30, "strings", ()),
    "user_defined_symbols": (31, "strings", ()),
    "byte_fallback": (35, "bool", False),
    "unk_id": (40, "int", 0),
    "bos_id": (41, "int", 1),
    "eos_id": (42, "int", 2),
    "pad_id": (43, "int", -1),
    "unk_piece": (45, "str", "<unk>"),
    "bos_piece": (46, "str", "<s>"),
    "eos_piece": (47, "str", "</s>"),
    "pad_piece": (48, "str", "<pad>"),
}

# NormalizerSpec
NORMALIZER_FIELDS: dict[str, tuple[int, str, Any]] = {
    "name": (1, "str", None),  # always written
    "precompiled_charsmap": (2, "bytes", None),  # always written
    "add_dummy_prefix": (3, "bool", True),
    "remove_extra_whitespaces": (4, "bool", True),
    "escape_whitespaces": (5, "bool", True),
}


def _varint(n: int) -> bytes:
    if n < 0:
        n += 1 << 64  # int32 negatives are written as 64-bit two's complement
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(num: int, kind: str, value: Any) -> bytes:
    if kind in ("int", "bool"):
        return _varint(num << 3) + _varint(int(value))
    if kind == "float":
        return _varint(num << 3 | 5) + struct.pack("<f", value)
    data = value.encode("utf-8") if isinstance(value, str) else bytes(value)
    return _varint(num << 3 | 2) + _varint(len(data)) + data


def _message(fields: dict[str, tuple[int, str, Any]], values: dict[str, Any]) -> bytes:
    out = bytearray()
    for name, (num, kind, default) in fields.items():
        if name not in values:
            continue
        value = values[name]
        if kind == "strings":
            for s in value:
                out += _field(num, "str", s)
        elif default is None or value != default:
            out += _field(num, kind, value)
    return bytes(out)


def model_bytes(
    pieces: Iterable[tuple[str, float, int]], trainer: dict[str, Any], normalizer: dict[str, Any]
) -> bytes:
    """A ``.model`` file's bytes: ``pieces`` as (text, score, type) in id order."""
    out = bytearray()
    for text, score, kind in pieces:
        body = _field(1, "str", text) + _field(2, "float", score)
        if kind != NORMAL:
            body += _field(3, "int", kind)
        out += _field(1, "bytes", body)
    out += _field(2, "bytes", _message(TRAINER_FIELDS, trainer))
    out += _field(3, "bytes", _message(NORMALIZER_FIELDS, normalizer))
    return bytes(out)

