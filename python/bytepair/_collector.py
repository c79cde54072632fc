"""The cyclic garbage collector paused around code that makes many containers which form no
cycles (lists and tuples of ints or strings): each 700 new containers would set it off, and each
collection goes again through the ones already made and kept."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """The collector off for the block, and back on after it if it was on."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
