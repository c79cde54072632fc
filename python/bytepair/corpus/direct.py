"""Shard files written around the page cache (``O_DIRECT``), where the system allows it.

Why (measured on the 2-core machine, o200k, 262 MB of text, 266 MB of uint32 ids):
encode-corpus's own thread spent 0.51 s of CPU in ``write`` and 0.15 s in sha256, against
about 4 s of CPU for the encoding; at two threads on two cores every second of it is taken
from the encoder, and encode-corpus ran at 0.85x of ``encode_files``. Writes into the page
cache are cheap while the kernel has free pages (0.06 s per 256 MB when the last file's pages
had just been freed) but cost 2 ms per MB once it must reclaim pages for every new one, which
is the steady state of a run that writes more than memory holds (0.53-0.69 s per 256 MB).
``O_DIRECT`` moves the bytes from our buffer to the disk without the page cache: 0.011 s of
CPU per 256 MB, the wait spent off the CPU while the encoder runs; and a corpus run no longer
fills memory with shard pages it will not read again.

``O_DIRECT`` wants the buffer address, the file offset and the length to be multiples of the
device's block size: the bytes are copied into a page-aligned staging buffer (``mmap``) and
written in whole blocks; the last, partial block is padded and the file cut to its size. A
header rewritten at the end (the last shard's token count) goes through an ordinary
descriptor. Where ``O_DIRECT`` is missing or refused (macOS, tmpfs, some network file systems)
the file is written the ordinary way; the bytes are the same.

Reading a shard back (``file_hash``: every shard is checked on resume) has the same problem
the other way: a shard written around the page cache is not in it, so the whole shard comes
from the disk. Read and hashed in turn on one thread, a shard of 266 MB of ids took 0.6-1.1 s
to check (sha256, which the manifests then held). Here a second thread reads the next 8 MiB
(``O_DIRECT`` where allowed, 0.35 s for those 266 MB against 0.54 s through the page cache)
while this one hashes the last.
"""

from __future__ import annotations

import errno
import hashlib
import mmap
import os
from concurrent.futures import Future, ThreadPoolExecutor
from typing import IO, Any

from bytepair.corpus.checksum import Crc32

BLOCK = 4096  # a multiple of every usual logical block size (512, 4096)
STAGING_BYTES = 4 << 20
READ_BYTES = 8 << 20  # a multiple of BLOCK
ENABLED = True  # tests turn it off to compare both ways of writing


# Staging buffers of closed files, for the next: a fresh 4 MiB mapping per shard cost 1,024
# page faults each (27 k over 1 GB of text in shards of 10 M tokens).
_FREE: list[mmap.mmap] = []


def _staging() -> mmap.mmap:
    while _FREE:
        m = _FREE.pop()
        if len(m) == STAGING_BYTES:
            return m
        m.close()
    return mmap.mmap(-1, STAGING_BYTES)


class ShardFile:
    """A new file written sequentially (``write``), with bytes patched at the end (``patch``),
    then made durable (``sync``) and closed; ``O_DIRECT`` when possible."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.size = 0  # bytes written so far
        self.plain: IO[bytes] | None = None
        self.fd = -1
        self.patch_fd = -1
        self.fill = 0
        self.finished = False
        direct = getattr(os, "O_DIRECT", 0)
        if ENABLED and direct:
            try:
                self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | direct, 0o666)
            except OSError as e:
                if e.errno not in (errno.EINVAL, errno.EOPNOTSUPP):
                    raise
        if self.fd < 0:
            self.plain = open(path, "wb")  # noqa: SIM115 - closed in close()
            return
        self.staging = _staging()
        self.view = memoryview(self.staging)

    def write(self, data: Any) -> None:
        src = memoryview(data).cast("B")
        self.size += len(src)
        if self.plain is not None:
            self.plain.write(src)
            return
        pos = 0
        while pos < len(src):
            k = min(len(src) - pos, STAGING_BYTES - self.fill)
            self.view[self.fill : self.fill + k] = src[pos : pos + k]
            self.fill += k
            pos += k
            if self.fill == STAGING_BYTES:
                self._put(STAGING_BYTES)
                if self.plain is not None:  # direct writes refused: the rest the ordinary way
                    self.plain.write(src[pos:])
                    return

    def _put(self, length: int) -> None:
        """Writes the first ``length`` bytes of the staging buffer (whole blocks)."""
        try:
            n = os.write(self.fd, self.view[:length])
        except OSError as e:
            if e.errno != errno.EINVAL:
                raise
            n = -1  # fall back once the exception (and the slice it may hold) is gone
        if n < 0:
            self._to_plain()
            return
        if n != length:
            raise OSError(errno.ENOSPC, "No space left on device (short write)", self.path)
        self.fill = 0

    def _to_plain(self) -> None:
        """The file system took the descriptor but refuses direct writes: write it the
        ordinary way from here (what is staged has not reached the file yet)."""
        written = os.lseek(self.fd, 0, os.SEEK_CUR)
        os.close(self.fd)
        self.fd = -1
        self.plain = open(self.path, "r+b")  # noqa: SIM115 - closed in close()
        self.plain.seek(written)
        self.plain.write(self.view[: self.fill])
        self.fill = 0
        self._release()

    def _finish(self) -> None:
        """Writes what is staged, padded to a whole block, and cuts the file to its size."""
        if self.plain is not None or self.fd < 0 or self.finished:
            return
        self.finished = True  # then only patches: the file is not cut again
        if self.fill:
            padded = -(-self.fill // BLOCK) * BLOCK
            self.view[self.fill : padded] = bytes(padded - self.fill)
            self._put(padded)
            if self.plain is not None:  # fell back to plain writes (without the padding)
                return
        os.ftruncate(self.fd, self.size)

    def patch(self, offset: int, data: bytes) -> None:
        """Overwrites bytes already written (the header of the last shard)."""
        self._finish()
        if self.plain is not None:
            self.plain.flush()
            os.pwrite(self.plain.fileno(), data, offset)
            return
        if self.patch_fd < 0:
            self.patch_fd = os.open(self.path, os.O_WRONLY)
        os.pwrite(self.patch_fd, data, offset)

    def sync(self) -> None:
        """Everything written, on disk (fsync)."""
        self._finish()
        if self.plain is not None:
            self.plain.flush()
            os.fsync(self.plain.fileno())
        else:
            os.fsync(self.fd)
        if self.patch_fd >= 0:
            os.fsync(self.patch_fd)

    def _release(self) -> None:
        if hasattr(self, "view"):
            try:
                self.view.release()
            except BufferError:  # a slice still held (by a traceback): leave the buffer to the GC
                del self.view, self.staging
                return
            if len(_FREE) < 2:
                _FREE.append(self.staging)
            else:
                self.staging.close()
            del self.view, self.staging

    def close(self) -> None:
        try:
            if self.plain is not None:
                self.plain.close()
            for fd in (self.fd, self.patch_fd):
                if fd >= 0:
                    os.close(fd)
        finally:
            self.fd = self.patch_fd = -1
            self._release()


def file_hash(path: str, kind: str = "crc32") -> Any:
    """The ``kind`` hash object (``crc32`` or ``sha256``) of a file's bytes, read on a second
    thread while this one hashes (see the module's notes), with ``O_DIRECT`` where the file
    system allows it."""
    direct = getattr(os, "O_DIRECT", 0) if ENABLED else 0
    if direct:
        try:
            fd = os.open(path, os.O_RDONLY | direct)
        except OSError as e:
            if e.errno not in (errno.EINVAL, errno.EOPNOTSUPP):
                raise
        else:
            try:
                h = _hash_fd(fd, kind, direct=True)
            finally:
                os.close(fd)
            if h is not None:
                return h
    fd = os.open(path, os.O_RDONLY)
    try:
        h = _hash_fd(fd, kind, direct=False)
    finally:
        os.close(fd)
    if h is None:  # the file changed size while being read
        raise OSError(errno.EIO, "file changed while being read", path)
    return h


def _read_at(fd: int, buf: mmap.mmap, offset: int) -> int:
    """Reads into ``buf`` from ``offset``: how many bytes (``pread`` where the system has it)."""
    if hasattr(os, "preadv"):
        return os.preadv(fd, [buf], offset)
    os.lseek(fd, offset, os.SEEK_SET)  # one reader thread at a time: the offset is its own
    data = os.read(fd, len(buf))
    buf[: len(data)] = data
    return len(data)


def _hash_fd(fd: int, kind: str, *, direct: bool) -> Any:
    """The hash of what ``fd`` holds, reading ``READ_BYTES`` ahead into two aligned buffers;
    None if direct reads are refused, or if the bytes read do not add up to the file's size."""
    h = Crc32() if kind == "crc32" else hashlib.sha256()
    bufs = [mmap.mmap(-1, READ_BYTES), mmap.mmap(-1, READ_BYTES)]
    offset = 0
    try:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="bytepair-hash") as pool:
            turn = 0
            pending: Future[int] | None = pool.submit(_read_at, fd, bufs[turn], offset)
            while pending is not None:
                try:
                    n = pending.result()
                except OSError as e:
                    if direct and e.errno == errno.EINVAL:
                        return None
                    raise
                offset += n
                # Only a whole buffer is followed by another read (direct reads need aligned
                # offsets); a short one is the end of the file, checked below.
                pending = pool.submit(_read_at, fd, bufs[1 - turn], offset) if n == READ_BYTES else None
                with memoryview(bufs[turn]) as view:
                    h.update(view[:n])
                turn = 1 - turn
    finally:
        for b in bufs:
            b.close()
    return h if offset == os.fstat(fd).st_size else None
