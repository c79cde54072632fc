#!/usr/bin/env python3
"""Interop benchmark: an o200k-sized Hugging Face tokenizer.json, loaded and written.

Sections (each timing is the best of --repeat runs, wall clock, in this one process):

  load    bytepair.load(tokenizer.json) beside tokenizers.Tokenizer.from_file(tokenizer.json),
          on the same file: o200k_base exported by bytepair (200,000 tokens, 199,744 merges,
          ignore_merges, a Split pattern). The ratio is bytepair / tokenizers (lower is better
          for bytepair; the issue's goal is <= 1).
  export  bytepair.save_hf(o200k_base) (merges recovered from the ranks, JSON written
          atomically); the goal is under 1 s. The file is first checked to encode like
          bytepair with tokenizers, on a few lines.

Run: python bench/bench_interop.py [--repeat 3]. Benchmarks, not tests.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import tokenizers

import bytepair
from bytepair.formats.hf import save_hf


def best(fn: object, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    tok = bytepair.get_encoding("o200k_base")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "tokenizer.json")
        export = best(lambda: save_hf(tok, path), args.repeat)
        size = os.path.getsize(path)
        hf = tokenizers.Tokenizer.from_file(path)
        sample = "Hello, world! 12345 ünïcödé 漢字かな العربية\n  def f(x): return x**2"
        assert hf.encode(sample).ids == tok.encode(sample), "the exported file does not encode like bytepair"
        ours = best(lambda: bytepair.load(path), args.repeat)
        theirs = best(lambda: tokenizers.Tokenizer.from_file(path), args.repeat)
        loaded = bytepair.load(path)
        assert loaded.encode(sample) == tok.encode(sample)
    print(f"o200k_base tokenizer.json: {size / 1e6:.1f} MB, best of {args.repeat}")
    print(f"load    bytepair.load {ours:.3f} s   tokenizers.Tokenizer.from_file {theirs:.3f} s   ratio {ours / theirs:.2f}")
    print(f"export  bytepair.save_hf {export:.3f} s   {'PASS' if export < 1 else 'FAIL'} (goal < 1 s)")


if __name__ == "__main__":
    main()
