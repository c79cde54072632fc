"""Exceptions and warnings raised by bytepair.

Every error bytepair raises for bad input is a :class:`BytepairError`, which is a
:class:`ValueError`, or an :class:`OSError` for files that cannot be read.
"""

from __future__ import annotations

import shlex

__all__ = [
    "BytepairError",
    "BytepairWarning",
    "CorpusError",
    "DisallowedSpecialTokenError",
    "FormatError",
    "LimitError",
    "MissingExtraError",
    "PatternError",
    "UnknownTokenError",
    "VocabError",
]


class BytepairError(ValueError):
    """Base class of bytepair's errors."""


class PatternError(BytepairError):
    """A split pattern that does not compile or fails while matching."""


class CorpusError(BytepairError):
    """Training input that cannot be used, e.g. a file that is not valid UTF-8."""


class UnknownTokenError(BytepairError):
    """A token id that the tokenizer does not have."""


class VocabError(BytepairError):
    """An inconsistent vocabulary, merge list or special-token table."""


class FormatError(BytepairError):
    """A tokenizer file that is malformed or of an unknown version."""


class DisallowedSpecialTokenError(BytepairError):
    """Special-token text found in input where it is not allowed; ``token`` is that text."""

    def __init__(self, message: str, token: str = "") -> None:
        super().__init__(message)
        self.token = token


class BytepairWarning(UserWarning):
    """Something worked but probably not as intended (e.g. training on an empty corpus)."""


class LimitError(BytepairError):
    """A text longer than the ``max_bytes`` or ``max_tokens`` an encode call was given."""


# What each extra of pyproject.toml's [project.optional-dependencies] installs, its version floor
# left to pyproject (tests/test_packaging.py checks that they agree). bytepair is not on PyPI, so an extra asked
# for by name (``bytepair[zstd]``) resolves nowhere: the hints name the package itself, which
# installs the same beside a clone or a wheel.
EXTRAS: dict[str, str] = {
    "zstd": "zstandard",
    "parquet": "pyarrow",
    "plot": "matplotlib",
    "dask": "dask[distributed]",
    "chat": "jinja2",
    "transformers": "transformers",
}


def install_hint(extra: str) -> str:
    """The shell command that installs what ``extra`` installs: ``pip install zstandard``."""
    return f"pip install {shlex.quote(EXTRAS[extra])}"


class MissingExtraError(BytepairError, ImportError):
    """An optional dependency is not installed; the message says how to install it.

    ``MissingExtraError("reading x.zst needs zstandard", "zstd")``: the message is that text, a
    colon and :func:`install_hint` of the extra; ``extra`` is kept.
    """

    def __init__(self, needs: str, extra: str) -> None:
        super().__init__(f"{needs}: {install_hint(extra)}")
        self.extra = extra
