"""Reading a whole file that a user names, with one rule for special files everywhere.

The rule (the one training and corpus encoding follow, ``sources.check_file``):

- A path that is not a regular file once symlinks are followed (a FIFO, a device such as
  ``/dev/zero``, a socket) is refused with ``"<path> is not a regular file"`` before it is
  opened: reading a FIFO blocks until a writer comes, and a device may never end. A directory
  gives ``IsADirectoryError``, as ``open`` does.
- The file is opened with ``O_NONBLOCK`` and checked again on the open descriptor, so a path
  swapped for a FIFO between the check and the open cannot block either.
- A regular file is read up to its size as ``fstat`` gives it on the open descriptor: memory
  follows the file. A file that grows while it is read is an error rather than a read that
  follows it forever.
- A regular file whose size is 0 may still have content (``/proc/self/status``; procfs and
  sysfs report 0): it is read in blocks to its end, up to ``UNSIZED_LIMIT`` for the small files
  read here (tokenizer files, manifests). Corpus inputs (``encode_files``, ``count``) are read
  to their end through :func:`open_regular`, as ``train`` and ``encode_corpus`` read them.
"""

from __future__ import annotations

import errno
import io
import os
import stat

from bytepair.errors import BytepairError, FormatError

__all__ = ["UNSIZED_LIMIT", "check_regular", "open_regular", "read_bytes", "read_head"]

# The most read of a regular file that reports size 0 (procfs, sysfs). The largest real
# tokenizer files are a few tens of MB (o200k's tokenizer.json: 7.5 MB); no procfs file is a
# tokenizer, so this only keeps such a read from growing without end.
UNSIZED_LIMIT = 64 << 20
_BLOCK = 1 << 20
# O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer (not on Windows, which
# has no FIFOs of this kind).
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def _refuse(where: str, mode: int, error: type[BytepairError]) -> None:
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), where)
    if not stat.S_ISREG(mode):
        raise error(f"{where} is not a regular file")


def check_regular(path: str | os.PathLike[str], error: type[BytepairError] = FormatError) -> os.stat_result:
    """``os.stat(path)`` of a regular file; ``error`` ("not a regular file") for anything else,
    ``FileNotFoundError`` / ``IsADirectoryError`` as ``open`` gives them."""
    where = os.fspath(path)
    st = os.stat(where)  # follows symlinks: a link to /dev/zero is the device
    _refuse(where, st.st_mode, error)
    return st


def _open(where: str, error: type[BytepairError]) -> tuple[int, int]:
    """An open descriptor of the regular file ``where`` and its size on that descriptor."""
    check_regular(where, error)
    fd = os.open(where, _OPEN_FLAGS)
    try:
        st = os.fstat(fd)
        _refuse(where, st.st_mode, error)  # the path was swapped after the first check
    except BaseException:
        os.close(fd)
        raise
    return fd, st.st_size


def open_regular(path: str | os.PathLike[str], error: type[BytepairError] = FormatError) -> io.BufferedReader:
    """The regular file ``path`` open for reading (buffered), refused as the module doc says;
    for readers that stream a file to its end (corpus inputs)."""
    fd, _ = _open(os.fspath(path), error)
    return open(fd, "rb", closefd=True)


def read_bytes(path: str | os.PathLike[str], error: type[BytepairError] = FormatError, limit: int = UNSIZED_LIMIT) -> bytes:
    """The content of the regular file ``path`` (see the module doc for the rule). ``error``
    is the class raised for a special file or a file that outgrows its size; ``limit`` bounds
    the read of a file whose size is 0."""
    where = os.fspath(path)
    fd, size = _open(where, error)
    with open(fd, "rb", buffering=0, closefd=True) as f:
        if size:
            data = _read_upto(f, size + 1, size + 1)
            if len(data) > size:
                raise error(f"{where} grew while it was read (it had {size:,} bytes); read it again once it is written")
            return data
        data = _read_upto(f, limit + 1, _BLOCK)
        if len(data) > limit:
            raise error(f"{where} reports a size of 0 (a procfs-like file) and holds more than {limit:,} bytes; not read further")
        return data


def read_head(path: str | os.PathLike[str], n: int, error: type[BytepairError] = FormatError) -> bytes:
    """The first ``n`` bytes of the regular file ``path`` (fewer if it is shorter)."""
    fd, _ = _open(os.fspath(path), error)
    with open(fd, "rb", buffering=0, closefd=True) as f:
        return _read_upto(f, n, n)


def _read_upto(f: io.FileIO, n: int, block_size: int) -> bytes:
    """Up to ``n`` bytes, in reads of at most ``block_size``: a file whose size is known is
    read in one (then one more to see its end); one of unknown size in blocks, since
    ``read(n)`` allocates ``n`` bytes up front even for a file that holds a few."""
    parts: list[bytes] = []
    got = 0
    while got < n:
        block = f.read(min(block_size, n - got))
        if not block:
            break
        parts.append(block)
        got += len(block)
    return parts[0] if len(parts) == 1 else b"".join(parts)
