"""Writing files atomically: a temporary file beside the target, then a rename, so that a
reader never sees a half-written file and a failed write leaves the old file as it was."""

from __future__ import annotations

import os
import uuid


def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    directory, name = os.path.split(os.path.abspath(os.fspath(path)))
    tmp = os.path.join(directory, f".{name}.{uuid.uuid4().hex}.tmp")
    # Mode 0o666 lets the umask decide the permissions, as a plain open() would.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
