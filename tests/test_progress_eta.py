"""Progress bars: the time left is measured at the pace since the first work was done, so a slow
start (the merge loop building its heap before the first merge) does not give an absurd ETA."""

from __future__ import annotations

import io

import pytest

from bytepair import _progress


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_eta_after_a_slow_start(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock()
    monkeypatch.setattr(_progress.time, "perf_counter", clock)
    out = io.StringIO()
    bar = _progress.Progress("merging ", total=1000, unit="merges", stream=out)
    clock.now = 60.0  # a minute before the first merge
    bar.update(1)
    assert out.getvalue().rstrip().endswith("<?")  # nothing to measure a pace on yet
    clock.now = 61.0  # then 100 merges a second
    bar.update(101)
    # at 100 merges/s, 899 merges are 9 s away (not 899 * 61 / 101 s, from the start)
    assert out.getvalue().rstrip().endswith("1:01<0:09")
    clock.now = 62.0
    bar.update(1000)
    bar.close()
    assert out.getvalue().rstrip().endswith("1:02<0:00")


def test_eta_is_zero_when_done(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock()
    monkeypatch.setattr(_progress.time, "perf_counter", clock)
    out = io.StringIO()
    bar = _progress.Progress("counting", total=10, unit="bytes", stream=out)
    clock.now = 1.0
    bar.update(10)
    bar.close()
    assert out.getvalue().rstrip().endswith("<0:00")


def test_encode_shows_progress_on_a_file(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    from pathlib import Path

    import bytepair
    from bytepair.cli import main

    path = Path(str(tmp_path)) / "t.txt"
    text = (Path(bytepair.__file__).parent / "data" / "tinyshakespeare.txt").read_text(encoding="utf-8")
    path.write_text(text, encoding="utf-8")
    assert main(["encode", "-t", "gpt2", str(path), "--count", "--progress"]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip() == str(len(bytepair.get_encoding("gpt2").encode_ordinary(text)))
    last = captured.err.strip().splitlines()[-1]
    assert last.startswith("encoding [") and "100.0%" in last
    assert main(["encode", "-t", "gpt2", str(path), "--count", "--no-progress"]) == 0
    assert capsys.readouterr().err == ""
