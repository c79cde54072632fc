#!/usr/bin/env python3
"""Superword training (SuperBPE's second stage) against ordinary BPE: time, peak RSS, pieces.

On a prefix of the corpus (default 32 MiB of bench/corpus/mixed.txt, cut after a newline),
each run in its own fresh process (peak RSS is the child's ``ru_maxrss``, the interpreter
and the extension included):

1. stage 1: ordinary BPE (gpt4 pattern) to ``--transition`` tokens;
2. stage 1 continued to ``--vocab`` with the same pattern (the baseline SuperBPE compares with:
   the same vocabulary size, no superwords);
3. stage 2: from stage 1 to ``--vocab`` with ``pattern="superword"``, ``max_words_per_token``
   words per piece, no bound on the table;
4. stage 2 with ``max_pieces`` (the bounded-memory count).

Then bytes per token of each tokenizer on held-out text (the ``--held-out`` MiB after the
prefix). These are benchmarks, not tests. Example:
  python bench/bench_superword.py --mb 32 --transition 16384 --vocab 32768 --max-pieces 1000000
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
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    info = tok.training
    print(json.dumps({"seconds": seconds, "peak_mb": peak_kb / 1024, "distinct": info["distinct_pieces"],
                      "pruned": info.get("pruned"), "timing": info["seconds"]}))


def run(spec: dict[str, object]) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", json.dumps(spec)], check=True, capture_output=True, text=True
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def prefix(src: Path, n: int, held: int, tmp: str) -> tuple[str, str]:
    """The first ~n bytes of src (cut after a newline) and the next ~held bytes, as files."""
    with open(src, "rb") as f:
        data = f.read(n + held + (1 << 16))
    cut = data.rfind(b"\n", 0, n) + 1 or n
    end = data.rfind(b"\n", cut, cut + held) + 1 or cut + held
    train, test = os.path.join(tmp, "train.txt"), os.path.join(tmp, "held_out.txt")
    Path(train).write_bytes(data[:cut])
    Path(test).write_bytes(data[cut:end])
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
        text = Path(held_out).read_text()
        rows = [["run", "vocab", "seconds", "count s", "merge s", "peak RSS MB", "distinct pieces", "pruned", "bytes/token"]]
        for name, spec in runs:
            r = run({"path": path, **spec})
            tok = bytepair.Tokenizer.from_file(str(spec["out"]))
            bpt = len(text.encode()) / len(tok.encode(text))
            timing = r["timing"]
            assert isinstance(timing, dict)
            pruned = r["pruned"]
            rows.append([name, f"{spec['vocab']:,}", f"{r['seconds']:.1f}", f"{timing['counting']:.1f}",
                         f"{timing['merging']:.1f}", f"{r['peak_mb']:.0f}", f"{r['distinct']:,}",
                         f"{pruned['pieces']:,} in {pruned['prunes']}" if isinstance(pruned, dict) else "-",
                         f"{bpt:.3f}"])
            print(" | ".join(rows[-1]), flush=True)
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        print()
        for i, r in enumerate(rows):
            print("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |")
            if i == 0:
                print("|" + "|".join("-" * (w + 2) for w in widths) + "|")


if __name__ == "__main__":
    main()
