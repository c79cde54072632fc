"""`import bytepair` stays light: numpy (most of its old import time and memory) loads only
when a corpus-encoding or array feature is used."""

from __future__ import annotations

import subprocess
import sys


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_import_does_not_load_numpy() -> None:
    assert _run("import sys, bytepair; print('numpy' in sys.modules)") == "False"


def test_encoding_text_does_not_load_numpy() -> None:
    code = (
        "import sys, bytepair\n"
        "tok = bytepair.train_from_iterator(['hello world'] * 5, vocab_size=260)\n"
        "assert tok.decode(tok.encode('hello world')) == 'hello world'\n"
        "print('numpy' in sys.modules)"
    )
    assert _run(code) == "False"


def test_corpus_names_load_on_first_use() -> None:
    code = (
        "import sys, bytepair\n"
        "from bytepair import Shards, encode_corpus, open_shards\n"
        "import bytepair.corpus as c\n"
        "assert (Shards, encode_corpus, open_shards) == (c.Shards, c.encode_corpus, c.open_shards)\n"
        "assert all(hasattr(bytepair, n) for n in bytepair.__all__)\n"
        "print('numpy' in sys.modules)"
    )
    assert _run(code) == "True"


def test_unknown_attribute_is_an_attribute_error() -> None:
    code = (
        "import bytepair\n"
        "try:\n"
        "    bytepair.no_such_name\n"
        "except AttributeError as e:\n"
        "    print(e)\n"
    )
    assert "no_such_name" in _run(code)
