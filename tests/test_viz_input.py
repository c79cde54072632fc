"""``bytepair viz`` holds the whole text it shows (and a view of each token) in memory, so it
reads a bounded amount: /dev/zero, an endless pipe or a huge file is an error naming the input,
not memory that grows until the machine gives out."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import bytepair
from bytepair.cli import main, viz


@pytest.fixture(scope="module")
def tok_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("viz") / "tok.json"
    bytepair.train_from_iterator(["hello world, ab ab abc"] * 10, vocab_size=265).save(path)
    return path


def test_a_file_past_the_limit(tok_file: Path, tmp_path: Path, monkeypatch: Any, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(viz, "MAX_BYTES", 1000)
    src = tmp_path / "long.txt"
    src.write_text("hello world\n" * 100)  # 1,200 bytes
    assert main(["viz", "-t", str(tok_file), str(src), "--color", "never"]) == 1
    err = capsys.readouterr().err
    assert f"{src}: more than 1,000 bytes" in err and "head -c" in err


def test_stdin_past_the_limit(tok_file: Path, monkeypatch: Any, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(viz, "MAX_BYTES", 1000)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"x" * 5000)))
    assert main(["viz", "-t", str(tok_file), "--color", "never"]) == 1
    assert "<stdin>: more than 1,000 bytes" in capsys.readouterr().err


def test_a_file_at_the_limit_is_shown(tok_file: Path, tmp_path: Path, monkeypatch: Any, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(viz, "MAX_BYTES", 1200)
    src = tmp_path / "long.txt"
    src.write_text("hello world\n" * 100)
    assert main(["viz", "-t", str(tok_file), str(src), "--color", "never"]) == 0
    assert capsys.readouterr().out.count("world") == 100


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_dev_zero(tok_file: Path) -> None:
    # In a child with its memory capped, so that a regression fails here rather than taking
    # the machine's memory.
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30)); "
    code = limit + f"from bytepair.cli import main; raise SystemExit(main(['viz', '-t', {str(tok_file)!r}, '/dev/zero']))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert f"/dev/zero: more than {viz.MAX_BYTES:,} bytes" in proc.stderr
