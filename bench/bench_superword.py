#!/usr/bin/env python3
"""Superword training (SuperBPE's second stage) against ordinary BPE: time, peak RSS, pieces.

On a prefix of the corpus (default 32 MiB of bench/corpus/mixed.txt, cut after a newline),
each run in its own fresh process. Peak RSS is the child's ``VmHWM`` (interpreter, extension
and base tokenizer included), not its ``ru_maxrss``: Linux carries ``ru_maxrss`` over fork and
exec, so a child would report its parent's peak when that is higher. CPU seconds are the
child's user + system time (``wait4``), wall seconds the train call's:

1. stage 1: ordinary BPE (gpt4 pattern) to ``--transition`` tokens;
2. stage 1 continued to ``--vocab`` with the same pattern (the baseline SuperBPE compares with:
   the same vocabulary size, no superwords);
3. stage 2: from stage 1 to ``--vocab`` with ``pattern="superword"``, ``max_words_per_token``
   words per piece, no bound on the table;
4. stage 2 with ``max_pieces`` (the bounded-memory count).

Then bytes per token of each tokenizer on held-out text (the ``--held-out`` MiB after the
prefix). ``--only`` picks runs (stage 1 always runs: it is the base). These are benchmarks,
not tests. Example:
  python bench/bench_superword.py --mb 32 --transition 16384 --vocab 32768 --max-pieces 1000000
  python bench/bench_superword.py --mb 1024 --only s1,s2c --max-pieces 250000
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO

HERE = Path(__file__).resolve().parent


def child(spec: dict[str, object]) -> None:
    import bytepair

    t0 = time.perf_counter()
    base = bytepair.Tokenizer.from_file(str(spec["base"])) if spec.get("base") else None
    options: dict[str, object] = {}
    if spec.get("superword"):
        options.update(pattern="superword", max_words_per_token=int(spec["words"]))  # type: ignore[call-overload]
    if spec.get("max_pieces"):
        options["max_pieces"] = int(spec["max_pieces"])  # type: ignore[call-overload]
    tok = bytepair.train(str(spec["path"]), vocab_size=int(spec["vocab"]), base=base, **options)  # type: ignore[call-overload, arg-type]
    seconds = time.perf_counter() - t0
    tok.save(str(spec["out"]))
    info = tok.training
    print(json.dumps({"seconds": seconds, "peak_mb": peak_kb() / 1024, "distinct": info["distinct_pieces"],
                      "pruned": info.get("pruned"), "timing": info["seconds"]}))


def peak_kb() -> int:
    """This process's own peak RSS in KiB: VmHWM where /proc has it, else ru_maxrss."""
    try:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmHWM"))
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def run(spec: dict[str, object]) -> dict[str, object]:
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen([sys.executable, __file__, "--child", json.dumps(spec)], stdout=out)
        _, status, ru = os.wait4(proc.pid, 0)  # the child's own rusage
        if status:
            raise SystemExit(f"child failed (status {status}): {spec}")
        out.seek(0)
        result: dict[str, object] = json.loads(out.read().strip().splitlines()[-1])
    result["cpu"] = ru.ru_utime + ru.ru_stime
    return result


def copy_until_newline(src: IO[bytes], dst: IO[bytes], n: int) -> int:
    """Copies about n bytes (then on to the end of the line), in 1 MiB reads so that this
    process stays small (a child's ru_maxrss would include it; see the module docstring)."""
    done = 0
    while done < n:
        chunk = src.read(min(1 << 20, n - done))
        if not chunk:
            return done
        dst.write(chunk)
        done += len(chunk)
    rest = src.readline()
    dst.write(rest)
    return done + len(rest)


def prefix(src: Path, n: int, held: int, tmp: str) -> tuple[str, str]:
    """The first ~n bytes of src (cut after a newline) and the next ~held bytes, as files."""
    train, test = os.path.join(tmp, "train.txt"), os.path.join(tmp, "held_out.txt")
    with open(src, "rb") as f, open(train, "wb") as a, open(test, "wb") as b:
        copy_until_newline(f, a, n)
        copy_until_newline(f, b, held)
    return train, test


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default=str(HERE / "corpus" / "mixed.txt"))
    ap.add_argument("--mb", type=float, default=32)
    ap.add_argument("--held-out", type=float, default=2)
    ap.add_argument("--transition", type=int, default=16384)
    ap.add_argument("--vocab", type=int, default=32768)
    ap.add_argument("--words", type=int, default=4)
    ap.add_argument("--max-pieces", type=int, default=1_000_000)
    ap.add_argument("--only", default="s1,s1b,s2,s2c",
                    help="runs: s1 stage 1, s1b stage 1 continued, s2 stage 2, s2c stage 2 capped")
    ap.add_argument("--json", help="also write the rows to this file")
    ap.add_argument("--child")
    args = ap.parse_args()
    if args.child:
        child(json.loads(args.child))
        return
    import bytepair

    with tempfile.TemporaryDirectory() as tmp:
        path, held_out = prefix(Path(args.corpus), int(args.mb * (1 << 20)), int(args.held_out * (1 << 20)), tmp)
        size = os.path.getsize(path)
        print(f"corpus: {size:,} bytes of {args.corpus}; held out: {os.path.getsize(held_out):,} bytes; "
              f"{os.cpu_count()} CPUs; bytepair {bytepair.__version__}")
        t = os.path.join(tmp, "{}.json")
        runs = [
            ("stage 1 (gpt4)", {"vocab": args.transition, "out": t.format("s1")}),
            ("stage 1 continued (gpt4)", {"vocab": args.vocab, "base": t.format("s1"), "out": t.format("s1b")}),
            (f"stage 2 (superword, {args.words} words)",
             {"vocab": args.vocab, "base": t.format("s1"), "superword": True, "words": args.words, "out": t.format("s2")}),
            (f"stage 2, max_pieces={args.max_pieces:,}",
             {"vocab": args.vocab, "base": t.format("s1"), "superword": True, "words": args.words,
              "max_pieces": args.max_pieces, "out": t.format("s2c")}),
        ]
        only = set(args.only.split(",")) | {"s1"}
        runs = [r for r in runs if Path(str(r[1]["out"])).stem in only]
        text = Path(held_out).read_text()
        rows = [["run", "vocab", "seconds", "CPU s", "count s", "merge s", "peak RSS MB", "distinct pieces", "pruned", "bytes/token"]]
        for name, spec in runs:
            r = run({"path": path, **spec})
            tok = bytepair.Tokenizer.from_file(str(spec["out"]))
            bpt = len(text.encode()) / len(tok.encode(text))
            timing = r["timing"]
            assert isinstance(timing, dict)
            pruned = r["pruned"]
            rows.append([name, f"{spec['vocab']:,}", f"{r['seconds']:.1f}", f"{r['cpu']:.1f}", f"{timing['counting']:.1f}",
                         f"{timing['merging']:.1f}", f"{r['peak_mb']:.0f}", f"{r['distinct']:,}",
                         f"{pruned['pieces']:,} in {pruned['prunes']}" if isinstance(pruned, dict) else "-",
                         f"{bpt:.3f}"])
            print(" | ".join(rows[-1]), flush=True)
        if args.json:
            Path(args.json).write_text(json.dumps({"corpus": args.corpus, "bytes": size, "rows": rows}, indent=1))
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        print()
        for i, row in enumerate(rows):
            print("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |")
            if i == 0:
                print("|" + "|".join("-" * (w + 2) for w in widths) + "|")


if __name__ == "__main__":
    main()
