#!/usr/bin/env python3
"""Analysis benchmark (not a test): `sweep` and `report` side by side with one training run at
the largest vocabulary size, in the same process and on the same corpus.

- train:  bytepair.train([corpus], vocab_size=max(sizes))
- sweep:  bytepair.analysis.sweep(...) at every size (it trains once at the largest size, encodes
          the corpus once and derives the smaller sizes from the token counts)
- report: bytepair.views.report.write_report(...) with the tokenizer from "train" (encodes the
          corpus once; the page holds the curve at every size)

The issue's targets are for 100 MB and 8 sizes up to 65,536: sweep <= 1.5 x train, report <= 2 x
train. Default here is small (the bundled Shakespeare sample written --copies times, 8 sizes up
to 8,192) because the development machine is shared; pass --corpus bench/corpus/mixed.txt
--max-size 65536 for the real thing. Each step is timed --repeat times; the best is kept.

  python bench/bench_analysis.py
  python bench/bench_analysis.py --corpus bench/corpus/mixed.txt --max-size 65536
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from typing import Any

import bytepair
from bytepair.analysis import Corpus, sweep
from bytepair.views.report import write_report


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times = []
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", help="a text file (default: the bundled sample, --copies times)")
    ap.add_argument("--copies", type=int, default=4)
    ap.add_argument("--max-size", type=int, default=8192)
    ap.add_argument("--points", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.corpus
        if path is None:
            sample = os.path.join(os.path.dirname(bytepair.__file__), "data", "tinyshakespeare.txt")
            path = os.path.join(tmp, "corpus.txt")
            with open(sample, encoding="utf-8") as f:
                text = f.read()
            with open(path, "w", encoding="utf-8") as f:
                for i in range(args.copies):
                    f.write(text if i % 2 == 0 else text.upper())  # not only one text repeated
        mb = os.path.getsize(path) / 1e6
        top = args.max_size
        sizes = sorted({max(256, top >> k) for k in range(args.points)})
        corpus = [Corpus("corpus", [path])]
        t_train, tok = best(lambda: bytepair.train(path, vocab_size=top), args.repeat)
        t_sweep, result = best(lambda: sweep(corpus, sizes), args.repeat)
        page = os.path.join(tmp, "report.html")
        t_report, _ = best(lambda: write_report(page, tok, corpus), args.repeat)
        print(f"corpus {path}: {mb:.1f} MB; sizes {', '.join(map(str, sizes))}; best of {args.repeat}")
        print(f"  train at {top:>6}   {t_train:7.2f} s   1.00x")
        print(f"  sweep ({len(sizes)} sizes)   {t_sweep:7.2f} s   {t_sweep / t_train:.2f}x train   (target <= 1.5x)")
        print(f"  report           {t_report:7.2f} s   {t_report / t_train:.2f}x train   (target <= 2x)   page {os.path.getsize(page) / 1e6:.1f} MB")
        assert result.tokenizer.merges == tok.merges


if __name__ == "__main__":
    main()
