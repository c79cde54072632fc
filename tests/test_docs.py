"""The examples in docstrings are run, so they stay true."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import bytepair

MODULES = sorted(
    m.name for m in pkgutil.walk_packages(bytepair.__path__, "bytepair.") if not m.name.endswith(("_core", "__main__"))
)


@pytest.mark.parametrize("name", ["bytepair", *MODULES])
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
