"""A small progress line on stderr (no dependency): what is done, the rate, and the time left."""

from __future__ import annotations

import sys
import time
from typing import TextIO


def size_text(n: float) -> str:
    """A byte count for people: ``"812 B"``, ``"1.1 MB"``, ``"2,048.0 GB"``."""
    for unit in ("B", "KB", "MB"):
        if abs(n) < 1000:
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000
    return f"{n:,.1f} GB"


def _duration(s: float) -> str:
    s = int(s + 0.5)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class Progress:
    """``Progress("counting", total=n, unit="bytes")``; call ``update(done)``, then ``close()``."""

    def __init__(self, label: str, *, total: int | None, unit: str, stream: TextIO | None = None) -> None:
        self.label = label
        self.total = total
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        self.start = time.perf_counter()
        self.done = 0
        self._last_draw = 0.0
        # (time, done) of the first update that did some work: the ETA is measured from there,
        # so a slow start (the merge loop building its heap) does not make it absurd.
        self._first: tuple[float, int] | None = None

    def _fmt(self, n: float) -> str:
        return size_text(n) if self.unit == "bytes" else f"{int(n):,}"

    def update(self, done: int) -> None:
        self.done = done
        now = time.perf_counter()
        if self._first is None and done > 0:
            self._first = (now, done)
        if now - self._last_draw >= 0.1:
            self._last_draw = now
            self._draw(now)

    def _draw(self, now: float, end: str = "\r") -> None:
        elapsed = max(now - self.start, 1e-9)
        rate = self.done / elapsed
        rate_s = (size_text(rate) + "/s") if self.unit == "bytes" else f"{rate:,.0f} {self.unit}/s"
        if self.total:
            frac = min(self.done / self.total, 1.0)
            width = 24
            bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
            text = (
                f"{self.label} [{bar}] {frac:5.1%} {self._fmt(self.done)}/{self._fmt(self.total)} "
                f"{rate_s} {_duration(elapsed)}<{self._eta(now)}"
            )
        else:
            text = f"{self.label} {self._fmt(self.done)} {rate_s} {_duration(elapsed)}"
        self.stream.write("\x1b[2K" + text + end if end == "\r" else text + end)
        self.stream.flush()

    def _eta(self, now: float) -> str:
        """Time left at the pace since the first work was done ("?" until half a second of it)."""
        if self.total is not None and self.done >= self.total:
            return _duration(0.0)
        if self._first is None or now - self._first[0] < 0.5 or self.done <= self._first[1] or not self.total:
            return "?"
        pace = (self.done - self._first[1]) / (now - self._first[0])
        return _duration((self.total - self.done) / pace)

    def close(self) -> None:
        self._draw(time.perf_counter(), end="\n")


def wanted(progress: bool | None, stream: TextIO | None = None) -> bool:
    """``None`` means: only when the stream is a terminal."""
    if progress is None:
        s = stream if stream is not None else sys.stderr
        return bool(getattr(s, "isatty", lambda: False)())
    return bool(progress)
