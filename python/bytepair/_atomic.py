"""Writing files atomically: a temporary file beside the target, then a rename, so that a
reader never sees a half-written file and a failed write leaves the old file as it was.

- Crash safety: the data is fsynced before the rename and the directory after it, so a kill
  (even ``kill -9``) or a power cut at any moment leaves the old complete file or the new one.
- A symlink is followed: its target gets the new content and the link stays a link.
- Only regular files are replaced: a FIFO, a device or a directory at the path is refused
  (``OSError``) instead of being swapped for a file.
- The temporary file is named ``.<name>.<pid>.<random>.tmp``. A process killed while writing
  cannot remove its own; the next write to the same file removes those of processes that no
  longer exist.
"""

from __future__ import annotations

import errno
import os
import stat
import uuid


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # someone else's process, or we cannot tell: leave its file alone
    return True


def _remove_stale(directory: str, name: str) -> None:
    """Removes the temporary files that killed writers of ``name`` left in ``directory``."""
    prefix = f".{name}."
    try:
        entries = os.listdir(directory)
    except OSError:
        return
    for entry in entries:
        if not (entry.startswith(prefix) and entry.endswith(".tmp")):
            continue
        fields = entry[len(prefix) : -len(".tmp")].split(".")
        if len(fields) != 2 or not fields[0].isdigit():
            continue
        pid = int(fields[0])
        if pid != os.getpid() and not _alive(pid):
            try:
                os.unlink(os.path.join(directory, entry))
            except OSError:
                pass


def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    shown = os.fspath(path)
    target = os.path.realpath(shown)  # through symlinks: the link stays, its target is rewritten
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        raise OSError(errno.EINVAL, "not a regular file (a FIFO, device or directory); not replaced", shown)
    directory, name = os.path.split(target)
    _remove_stale(directory, name)
    tmp = os.path.join(directory, f".{name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
    # Mode 0o666 lets the umask decide the permissions, as a plain open() would.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _fsync_directory(directory)


def _fsync_directory(directory: str) -> None:
    """Makes the rename itself durable (POSIX; a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
