"""Reading the JSON files a tokenizer comes in (bytepair's own, Hugging Face's, GPT-2's
``vocab.json``), with one set of errors: every failure is a :class:`FormatError` naming the file
(bad UTF-8 with its byte offset, bad JSON with its line and column, nesting too deep for
Python's parser, and a key repeated in one object, which would otherwise let the last of two ids
for one token win silently)."""

from __future__ import annotations

import json
import os
from typing import Any

from bytepair._files import read_bytes
from bytepair.errors import FormatError


def read_text(path: str | os.PathLike[str]) -> str:
    """The file as UTF-8 text (``OSError`` if it cannot be read, ``FormatError`` if it is not a
    regular file)."""
    data = read_bytes(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise FormatError(f"{os.fspath(path)}: not UTF-8 text (byte offset {e.start})") from None


class DuplicateKey(Exception):
    """Raised by :func:`no_duplicate_keys` (caught and turned into a ``FormatError``)."""


def no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """json's object hook: a repeated key (two ids for one token) is an error, not the last one
    silently winning. One call per JSON object; the vocabulary is one call."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return out


def read_json(path: str | os.PathLike[str]) -> Any:
    """The parsed document of a JSON file, or a ``FormatError`` naming the file."""
    where = os.fspath(path)
    text = read_text(where)
    try:
        return json.loads(text, object_pairs_hook=no_duplicate_keys)
    except DuplicateKey as e:
        raise FormatError(f"{where}: the key {e.args[0]!r} appears twice in one object") from None
    except json.JSONDecodeError as e:
        raise FormatError(f"{where}: not valid JSON: {e.msg} at line {e.lineno}, column {e.colno} (truncated?)") from None
    except RecursionError:
        raise FormatError(f"{where}: JSON nested too deeply to be a tokenizer file") from None
    except ValueError:
        # Not a JSONDecodeError: an int longer than Python converts (sys.get_int_max_str_digits,
        # 4,300 digits by default). No id or size in a tokenizer file is that long.
        raise FormatError(f"{where}: a number in the JSON has too many digits to be read as an int") from None
