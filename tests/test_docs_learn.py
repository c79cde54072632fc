"""docs/learn.md stays true: every ``$ bytepair ...`` command in its console blocks is run, in
order, in a directory holding the bundled sample, and must print exactly the lines shown."""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

import pytest

import bytepair
from bytepair.cli import main

DOC = Path(__file__).resolve().parent.parent / "docs" / "learn.md"


def commands(text: str) -> list[tuple[list[str], list[str]]]:
    """(argv after "bytepair", expected stdout lines) for each command of the console blocks."""
    out: list[tuple[list[str], list[str]]] = []
    block = False
    for line in text.splitlines():
        if line.startswith("```"):
            block = line.strip() == "```console"
            continue
        if not block:
            continue
        if line.startswith("$ "):
            argv = shlex.split(line[2:])
            assert argv[0] == "bytepair", line
            out.append((argv[1:], []))
        else:
            out[-1][1].append(line)
    return out


def test_the_walkthrough_prints_what_it_shows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    steps = commands(DOC.read_text(encoding="utf-8"))
    assert len(steps) >= 6
    shutil.copy(Path(bytepair.__file__).parent / "data" / "tinyshakespeare.txt", tmp_path)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        for argv, expected in steps:
            capsys.readouterr()
            assert main(argv) == 0, argv
            assert capsys.readouterr().out.splitlines() == expected, " ".join(argv)
    finally:
        os.chdir(cwd)
