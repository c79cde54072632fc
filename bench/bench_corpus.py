#!/usr/bin/env python3
"""Corpus encoding, side by side (not a test): bytepair's array path (``encode_files``), its
``encode-corpus`` writing llm.c shards, and its ``encode_batch`` to Python lists, against
gigatoken's ``encode_files`` (into memory), at each thread count asked for.

Every measurement runs in a fresh process (so "first pass" means a cold piece cache), on the
same file, and checks that the ids are those of bytepair's ``encode_ordinary``; "warm" is a
second pass in the same process (for encode-corpus, a second run into a fresh directory: the
steady state of a long run, once its piece cache is warm). "unseen" is the fairer steady
state: a fresh process encodes the corpus's first half, then is timed on its second half: text
never seen, with a cache warmed on text of the same kind (gigatoken's "warm" also caches spans
longer than a piece, which pay off only when the same text comes again; bench/README.md,
session 12). Peak RSS of encode-corpus is
measured on the corpus and on a JSON-lines copy of it, at two sizes each (its first 100 MB,
or quarter if smaller, and all of it).

    python bench/make_corpus.py --mb 48          # builds bench/corpus/mixed.txt
    python bench/bench_corpus.py --threads 1 2   # MB/s and ratios
    python bench/bench_corpus.py --threads 1 2 --repeat 3   # best of 3, rows taken in turn

Needs ``pip install gigatoken`` for the peer (skipped, and said so, when it is missing).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = r"""
import json, os, sys, time, shutil
import numpy as np
what, path, enc, threads, rank_file, out, then = sys.argv[1:8]
threads = int(threads)
# With a second file ("unseen"): the first is encoded once to warm the caches, the second is timed.
passes = [("warm-up", path), ("unseen", then)] if then else [("first", path), ("warm", path)]
res = {}
import bytepair
tok = bytepair.get_encoding(enc)
def timed(f):
    t = time.perf_counter(); r = f(); return time.perf_counter() - t, r
if what == "gigatoken":
    os.environ["RAYON_NUM_THREADS"] = str(threads)
    import gigatoken
    g = gigatoken.Tokenizer.from_tiktoken(rank_file, pretokenizer={"o200k_base": "o200k", "cl100k_base": "cl100k"}[enc])
    for k, p in passes:
        s, ids = timed(lambda: g.encode_files([p]))
        res[k] = os.path.getsize(p) / s / 1e6
    flat = np.asarray(ids[0], dtype=np.uint32)
    res["check"] = flat.tolist()[:100000] == tok.encode_files([p])[0][:100000].tolist()
elif what == "arrays":
    for k, p in passes:
        s, (ids, off) = timed(lambda: tok.encode_files([p], num_threads=threads))
        res[k] = os.path.getsize(p) / s / 1e6
    res["tokens"] = len(ids)
elif what == "lists":
    text = open(path, encoding="utf-8").read()
    size = os.path.getsize(path)
    for k in ("first", "warm"):
        s, ids = timed(lambda: tok.encode_batch([text], num_threads=threads, disallowed_special=()))
        res[k] = size / s / 1e6
elif what == "corpus":
    # "warm": a second run in the same process, into a fresh directory, with the piece cache
    # the first run left: what a long run settles into once its cache is warm.
    for k, p in passes:
        shutil.rmtree(out, ignore_errors=True)
        s, doc = timed(lambda: bytepair.encode_corpus(tok, [p], out, num_threads=threads, progress=False,
                                                       shard_tokens=10_000_000))
        res[k] = os.path.getsize(p) / s / 1e6
    res["tokens"] = doc["tokens"]
    shutil.rmtree(out, ignore_errors=True)
# VmHWM, not ru_maxrss: Linux carries ru_maxrss over exec, so a child would report its parent's peak.
res["rss_mb"] = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM")) / 1024
print(json.dumps(res))
"""


def child(
    what: str, path: Path, enc: str, threads: int, rank_file: str, out: str, then: Path | None = None
) -> dict[str, float]:
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads))
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, what, str(path), enc, str(threads), rank_file, out, str(then or "")],
        capture_output=True, text=True, env=env, check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{what} failed:\n{proc.stderr[-2000:]}")
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


WHOLE_ARRAYS = r"""
import sys, bytepair
ids, offsets = bytepair.get_encoding(sys.argv[1]).encode_files([sys.argv[2]], num_threads=int(sys.argv[3]))
print(len(ids))
"""
WHOLE_GIGA = r"""
import sys, gigatoken
g = gigatoken.Tokenizer.from_tiktoken(sys.argv[4], pretokenizer={"o200k_base": "o200k", "cl100k_base": "cl100k"}[sys.argv[1]])
print(sum(len(x) for x in g.encode_files([sys.argv[2]])))
"""


def whole(what: str, path: Path, enc: str, threads: int, rank_file: str, out: Path) -> tuple[float, float, float]:
    """One whole process, pinned to cores 0..threads-1: (wall s, CPU s, peak RSS MB)."""
    import shutil
    import time

    shutil.rmtree(out, ignore_errors=True)
    pin = ["taskset", "-c", f"0-{threads - 1}"]
    if what == "corpus":
        exe = Path(sys.executable).parent / "bytepair"
        cmd = [str(exe), "encode-corpus", "-t", enc, str(path), "-o", str(out), "--threads", str(threads), "--quiet"]
    else:
        cmd = [sys.executable, "-c", WHOLE_GIGA if what == "gigatoken" else WHOLE_ARRAYS, enc, str(path), str(threads), rank_file]
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads))
    t = time.perf_counter()
    proc = subprocess.Popen(pin + cmd, env=env, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    if status != 0:
        raise SystemExit(f"{what} failed ({status}): {cmd}")
    shutil.rmtree(out, ignore_errors=True)
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024


def whole_table(args: argparse.Namespace, rank_file: str, tmp: Path, have_giga: bool) -> None:
    """Whole processes side by side (the issue's protocol): start, load, encode, write, exit."""
    tools = (["gigatoken"] if have_giga else []) + ["arrays", "corpus"]
    labels = {"gigatoken": "gigatoken encode_files", "arrays": "bytepair encode_files (arrays)",
              "corpus": "bytepair encode-corpus (CLI, llmc)"}
    # An installed wheel's modules are compiled at install; a source tree under
    # PYTHONDONTWRITEBYTECODE (set on some machines) compiled all of bytepair's in every process,
    # 80 ms of each whole process here. Compiled once now, as pip would have.
    import compileall

    import bytepair

    compileall.compile_dir(str(Path(bytepair.__file__).parent), quiet=1)
    print(f"whole processes on {args.corpus}; best of {args.repeat}, taken in turn; "
          "ratios are the peer's time over bytepair's (above 1: bytepair faster)")
    print(f"{'threads':>7} {'what':<36} {'wall s':>8} {'CPU s':>8} {'RSS MB':>8}  wall / CPU vs gigatoken, vs arrays")
    for n in args.threads:
        best: dict[str, list[float]] = {}
        for _ in range(max(args.repeat, 1)):
            for what in tools:
                r = whole(what, args.corpus, args.encoding, n, rank_file, tmp / "whole_out")
                b = best.setdefault(what, list(r))
                best[what] = [min(b[0], r[0]), min(b[1], r[1]), max(b[2], r[2])]
        for what in tools:
            w, c, m = best[what]
            note = ""
            if "gigatoken" in best and what != "gigatoken":
                g = best["gigatoken"]
                note += f"  {g[0] / w:.2f}x / {g[1] / c:.2f}x"
            if what == "corpus":
                a = best["arrays"]
                note += f", {a[0] / w:.2f}x / {a[1] / c:.2f}x"
            print(f"{n:>7} {labels[what]:<36} {w:8.2f} {c:8.2f} {m:8.1f}{note}")


def jsonl_copy(src: Path, dst: Path, limit: int) -> None:
    """Documents of about 8 KiB cut at newlines, as JSON lines, up to ``limit`` bytes of text."""
    text = src.read_text(encoding="utf-8")[:limit]
    with open(dst, "w", encoding="utf-8") as f:
        start = 0
        while start < len(text):
            end = text.find("\n", start + 8192)
            end = len(text) if end < 0 else end + 1
            f.write(json.dumps({"text": text[start:end]}) + "\n")
            start = end


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=HERE / "corpus" / "mixed.txt")
    ap.add_argument("--encoding", default="o200k_base", choices=["o200k_base", "cl100k_base"])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--no-rss", action="store_true", help="skip the peak-RSS runs")
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs per row, taken in turn across the rows; the best is shown (for a noisy machine)")
    ap.add_argument("--no-lists", action="store_true", help="leave out encode_batch to lists")
    ap.add_argument("--whole", action="store_true",
                    help="only whole processes side by side: gigatoken, encode_files, the encode-corpus CLI")
    args = ap.parse_args()
    if not args.corpus.exists():
        raise SystemExit(f"{args.corpus} is missing: run bench/make_corpus.py first")
    tmp = Path(tempfile.mkdtemp(prefix="bench_corpus_"))
    import bytepair

    data = (Path(bytepair.__file__).parent / "data" / f"{args.encoding}.tiktoken.gz").read_bytes()
    rank_file = tmp / f"{args.encoding}.tiktoken"
    rank_file.write_bytes(gzip.decompress(data))
    try:
        import gigatoken  # noqa: F401

        have_giga = True
    except ImportError:
        have_giga = False
        print("gigatoken is not installed (pip install gigatoken): peer columns left out")
    if args.whole:
        whole_table(args, str(rank_file), tmp, have_giga)
        return
    size = args.corpus.stat().st_size
    print(f"corpus {args.corpus} ({size / 1e6:.1f} MB), {args.encoding}; MB/s, fresh process per row")
    print(f"{'threads':>7} {'what':<36} {'first':>8} {'warm':>8} {'unseen':>8}  ratio to gigatoken first / warm / unseen")
    jsonl = tmp / "all.jsonl"
    jsonl_copy(args.corpus, jsonl, size)
    # The two halves for "unseen", cut after a newline.
    data = args.corpus.read_bytes()
    half = len(data) // 2
    newline = data.find(b"\n", half)  # no slice: that would copy half the corpus
    cut = newline + 1 if newline >= 0 else half
    halves = (tmp / "first_half.txt", tmp / "second_half.txt")
    halves[0].write_bytes(data[:cut])
    halves[1].write_bytes(data[cut:])
    del data
    unseen_rows = {"gigatoken", "arrays", "corpus"}
    for n in args.threads:
        rows = [
            ("arrays", "bytepair encode_files (arrays)"),
            ("corpus", "bytepair encode-corpus (llmc shards)"),
            ("lists", "bytepair encode_batch (lists)"),
        ]
        rows.append(("corpus-jsonl", "bytepair encode-corpus, JSON lines"))
        if args.no_lists:
            rows = [row for row in rows if row[0] != "lists"]
        best: dict[str, dict[str, float]] = {}
        for _ in range(max(args.repeat, 1)):  # in turn, so that a busy spell hits every row alike
            for what in (["gigatoken"] if have_giga else []) + [w for w, _ in rows]:
                path = jsonl if what == "corpus-jsonl" else args.corpus
                runs = [(path, None)] + ([halves] if what in unseen_rows else [])
                for first, then in runs:
                    r = child(what.removesuffix("-jsonl"), first, args.encoding, n, str(rank_file), str(tmp / "out"), then)
                    for k, v in r.items():
                        if k in ("first", "warm", "unseen"):
                            best.setdefault(what, {})[k] = max(best.get(what, {}).get(k, 0.0), v)
                        elif k != "warm-up":
                            best.setdefault(what, {}).setdefault(k, v)

        def cells(r: dict[str, float]) -> str:
            return " ".join(f"{r[k]:8.1f}" if k in r else f"{'-':>8}" for k in ("first", "warm", "unseen"))

        giga = best.get("gigatoken")
        if giga is not None:
            print(f"{n:>7} {'gigatoken encode_files':<36} {cells(giga)}  ids match: {giga['check']}")
        for what, label in rows:
            r = best[what]
            ratio = ""
            if giga is not None:
                ratio = "  " + " / ".join(f"{r[k] / giga[k]:.2f}x" if k in r else "-" for k in ("first", "warm", "unseen"))
            print(f"{n:>7} {label:<36} {cells(r)}{ratio}")
    if not args.no_rss:
        # The two sizes: 100 MB and the whole corpus (a quarter and all of a smaller one).
        # Each child runs encode-corpus twice (first and warm), so the peak is that of a run
        # whose piece cache has filled as far as this text fills it.
        limits = sorted({min(100_000_000, size // 4), size})
        for kind in ("plain text", "JSON lines (8 KiB documents)"):
            print(f"peak RSS of encode-corpus on {kind}, 1 thread:")
            for k, limit in enumerate(limits):
                if kind == "plain text":
                    part = tmp / f"part{k}.txt"
                    with open(args.corpus, "rb") as src:
                        data = src.read(limit)
                    part.write_bytes(data[: data.rfind(b"\n") + 1] if limit < size else data)
                else:
                    part = tmp / f"part{k}.jsonl"
                    jsonl_copy(args.corpus, part, limit)
                r = child("corpus", part, args.encoding, 1, str(rank_file), str(tmp / "out"))
                print(f"  {part.stat().st_size / 1e6:6.1f} MB input: {r['rss_mb']:7.1f} MB peak RSS, {r['first']:.1f} MB/s")


if __name__ == "__main__":
    main()
