"""A text written to a temporary file, for tests that encode files (`encode_files`)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def text_file(text: str) -> Iterator[str]:
    """The path of a temporary file holding ``text`` as UTF-8 (removed afterwards)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.txt")
        with open(path, "wb") as f:
            f.write(text.encode())
        yield path
