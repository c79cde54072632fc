"""Counting pieces on a Dask cluster: ``train(paths, ..., backend="dask", client=...)``.

Imported only when that backend is used (``import bytepair`` never imports Dask). Needs
``dask.distributed`` (``pip install 'dask[distributed]'``) where ``train`` is called and on every
worker, with the same bytepair version everywhere (checked).

The workers read the files themselves: the paths are opened on the workers, as given (use
absolute paths on a filesystem that every worker mounts at the same place). Only counts travel.

1. Plan. One task per batch of files checks each file as local training does (same exceptions,
   same messages), measures it and, for a file longer than :data:`TASK_BYTES`, finds every
   :data:`TASK_BYTES` the next place where it can be cut without changing the counts
   (``_core.file_cuts``: a newline between a printable ASCII character and a letter or digit,
   not inside a special token). Files are cut only for the preset patterns; with a custom
   pattern or ``pattern=None`` every file goes whole to one task.
2. Count. The parts, in order, are packed into tasks of about :data:`TASK_BYTES`; each task
   counts its parts with a ``_core.PieceCounter`` and returns the counts and statistics as one
   packed ``bytes`` object (``take_packed``): compact, and pickled without a Python object per
   piece.
3. Merge. Packed counts are merged on the workers, :data:`FAN_IN` at a time, in a tree: the
   caller receives one table, loads it into a ``PieceCounter`` and runs the merge loop there.

Errors raised on the workers reach the caller as the exceptions local training raises; when
several parts fail, the first one in input order is raised, as local training would.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from bytepair import _core
from bytepair._progress import Progress
from bytepair.errors import BytepairError, MissingExtraError

if TYPE_CHECKING:
    from distributed import Client, Future

__all__ = ["FAN_IN", "PLAN_FILES", "TASK_BYTES", "count"]

#: Bytes of text per counting task (files longer than this are cut into parts).
TASK_BYTES = 64 << 20
#: Files per planning task.
PLAN_FILES = 256
#: Packed count tables merged by one reduction task.
FAN_IN = 4

# (path, start, end): bytes start..end of a file; end=None for the whole file.
Part = tuple[str, int, int | None]


def _distributed() -> Any:
    """The ``distributed`` module (typed ``Any``: parts of its API are untyped)."""
    try:
        return importlib.import_module("distributed")
    except ImportError as e:
        raise MissingExtraError("backend='dask' needs dask.distributed (on the workers too)", "dask") from e


def _get_client(client: Client | None) -> Any:
    dist = _distributed()
    if client is None:
        try:
            return dist.default_client()
        except ValueError:
            raise BytepairError(
                "backend='dask' needs a Dask client: pass client=distributed.Client(...) "
                "or create one before calling train()"
            ) from None
    if not isinstance(client, dist.Client):
        raise TypeError(f"client must be a distributed.Client, got {type(client).__name__}")
    return client


def check_paths(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[str]:
    """The paths as str, checking only their types: the files are checked where they are read."""
    items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    for p in items:
        if not isinstance(p, (str, os.PathLike)):
            raise TypeError(f"paths must be str or os.PathLike, got {type(p).__name__}")
    return [os.fspath(p) for p in items]


# --- tasks (run on the workers) ---------------------------------------------------------------


def _plan(
    paths: list[str], regex: str | None, special_tokens: list[str], every: int
) -> tuple[str, list[Part], list[int]]:
    """Checks and measures files; returns the bytepair version, the parts and their sizes."""
    from bytepair import __version__
    from bytepair.training import _paths

    parts: list[Part] = []
    sizes: list[int] = []
    for path in _paths(paths):  # local training's checks and messages
        size = os.path.getsize(path)
        targets = list(range(every, size, every))
        cuts = _core.file_cuts(path, regex, special_tokens, targets) if targets else []
        bounds = sorted({0, size, *cuts})
        if len(bounds) <= 2:
            parts.append((path, 0, None))
            sizes.append(size)
        else:
            for start, end in zip(bounds, bounds[1:]):
                parts.append((path, start, end))
                sizes.append(end - start)
    return __version__, parts, sizes


def _count(
    parts: list[Part], regex: str | None, special_tokens: list[str], replace_errors: bool, max_pieces: int | None = None
) -> bytes:
    from bytepair.patterns import is_superword

    counter = _core.PieceCounter(regex, special_tokens, max_pieces=max_pieces, newline_cuts=is_superword(regex))
    for path, start, end in parts:
        if end is None:
            counter.add_file(path, replace_errors=replace_errors)
        else:
            counter.add_file_range(path, start, end, replace_errors=replace_errors)
    return counter.take_packed()


def _merge(*packed: bytes, max_pieces: int | None = None) -> bytes:
    counter = _core.PieceCounter(None, [], max_pieces=max_pieces)
    for p in packed:
        counter.add_packed(p)
    return counter.take_packed()


# --- the caller's side ------------------------------------------------------------------------


def _first_error(futures: Sequence[Future[Any]]) -> None:
    """Raises the error of the first future (in order) that failed, with its remote traceback."""
    for f in futures:
        if f.status == "error":
            f.result()


def _tasks(parts: list[Part], sizes: list[int], task_bytes: int) -> list[tuple[list[Part], int]]:
    """Consecutive parts grouped into tasks of about ``task_bytes``, with each task's size."""
    tasks: list[tuple[list[Part], int]] = []
    group: list[Part] = []
    total = 0
    for part, size in zip(parts, sizes):
        if group and total + size > task_bytes:
            tasks.append((group, total))
            group, total = [], 0
        group.append(part)
        total += size
    if group:
        tasks.append((group, total))
    return tasks


def count(
    paths: list[str],
    *,
    regex: str | None,
    special_tokens: Sequence[str],
    replace_errors: bool,
    client: Client | None = None,
    progress: bool = False,
    max_pieces: int | None = None,
) -> _core.PieceCounter:
    """Counts the pieces of files on a Dask cluster; returns a counter holding the merged counts.

    ``max_pieces`` bounds every table (each task's, each merge's and the caller's) as
    ``train(max_pieces=...)`` does locally: the prunes happen at the same places for the same
    files whatever the cluster (the tasks and the merge tree depend only on the files), so the
    result is deterministic, though not the same as local counting once anything is pruned."""
    dist = _distributed()
    dask_client = _get_client(client)
    specials = list(special_tokens)
    counter = _core.PieceCounter(regex, specials, max_pieces=max_pieces)
    if not paths:
        return counter
    task_bytes = TASK_BYTES

    batches = [paths[i : i + PLAN_FILES] for i in range(0, len(paths), PLAN_FILES)]
    planned = [dask_client.submit(_plan, b, regex, specials, task_bytes, pure=False) for b in batches]
    dist.wait(planned)
    _first_error(planned)
    parts: list[Part] = []
    sizes: list[int] = []
    for version, p, s in dask_client.gather(planned):
        _check_version(version)
        parts += p
        sizes += s
    del planned

    tasks = _tasks(parts, sizes, task_bytes)
    counted = [
        dask_client.submit(_count, group, regex, specials, replace_errors, max_pieces, pure=False) for group, _ in tasks
    ]
    level = counted
    while len(level) > 1:
        level = [
            dask_client.submit(_merge, *level[i : i + FAN_IN], max_pieces=max_pieces, pure=False)
            for i in range(0, len(level), FAN_IN)
        ]
    final = level[0]

    bar = Progress("counting", total=sum(sizes), unit="bytes") if progress else None
    task_size = {f.key: size for f, (_, size) in zip(counted, tasks)}
    order = {f.key: i for i, f in enumerate(counted)}
    failed: dict[int, Future[bytes]] = {}
    done = 0
    pending = dist.as_completed(counted)
    del counted, level  # keep no finished table alive from here: the merge tasks hold them
    for f in pending:
        if f.status == "error":
            failed[order[f.key]] = f
        else:
            done += task_size[f.key]
            if bar:
                bar.update(done)
    if bar:
        bar.close()
    if failed:
        # With one task, `final` is that failed task itself: cancelling it would replace its
        # error with FutureCancelledError.
        if final.key not in {f.key for f in failed.values()}:
            dask_client.cancel([final])
        _first_error([failed[i] for i in sorted(failed)])
    counter.add_packed(final.result())
    return counter


def _check_version(worker_version: str) -> None:
    from bytepair import __version__

    if worker_version != __version__:
        raise BytepairError(
            f"a Dask worker runs bytepair {worker_version} and this process bytepair {__version__}: "
            "install the same version everywhere"
        )
