#!/usr/bin/env python3
"""Interop benchmark: an o200k-sized Hugging Face tokenizer.json, loaded and written.

Sections (each timing is the best of --repeat runs, wall clock, in this one process):

  load    bytepair.load(tokenizer.json) beside tokenizers.Tokenizer.from_file(tokenizer.json),
          on the same file: o200k_base exported by bytepair (200,000 tokens, 199,744 merges,
          ignore_merges, a Split pattern). The ratio is bytepair / tokenizers (lower is better
          for bytepair; the issue's goal is <= 1). Also timed: the full Python reader alone
          (the fast Rust reader switched off: what every load took before it), and the same
          file as a merge list (ignore_merges false: a GPT-2 / Llama-style file).
  export  bytepair.save_hf(o200k_base) (merges recovered from the ranks, JSON written
          atomically); the goal is under 1 s. The file is first checked to encode like
          bytepair with tokenizers, on a few lines.

  --added-tokens  bytepair.load of a small tokenizer.json with 20,000 / 40,000 / 80,000
          added tokens: the time should double with their number (each added token's id
          checked through all the ids before it made it quadratic: 20,000 took 4.2 s).

Run: python bench/bench_interop.py [--repeat 3] [--added-tokens]. Benchmarks, not tests.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
import warnings

import tokenizers

import bytepair
from bytepair.formats.gpt2 import read_json
from bytepair.formats.hf import from_hf_dict, save_hf


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
    ap.add_argument("--added-tokens", action="store_true", help="only the added-tokens section")
    args = ap.parse_args()
    warnings.simplefilter("ignore", bytepair.BytepairWarning)
    if args.added_tokens:
        return added_tokens(args.repeat)
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
        full = best(lambda: from_hf_dict(read_json(path), where=path), args.repeat)
        loaded = bytepair.load(path)
        assert loaded.encode(sample) == tok.encode(sample)
        assert loaded == from_hf_dict(read_json(path), where=path)
        # The same vocabulary and merges as a merge list (the tokens the merges do not make of
        # their own bytes are warned about: that is the point of ignore_merges).
        doc = json.loads(open(path, encoding="utf-8").read())
        doc["model"]["ignore_merges"] = False
        merge_path = os.path.join(tmp, "merges.json")
        with open(merge_path, "w", encoding="utf-8") as f:
            json.dump(doc, f, ensure_ascii=False)
        ours_m = best(lambda: bytepair.load(merge_path), args.repeat)
        theirs_m = best(lambda: tokenizers.Tokenizer.from_file(merge_path), args.repeat)
        full_m = best(lambda: from_hf_dict(read_json(merge_path), where=merge_path), args.repeat)
    print(f"o200k_base tokenizer.json: {size / 1e6:.1f} MB, best of {args.repeat}")
    print(f"load    bytepair.load {ours:.3f} s   tokenizers.Tokenizer.from_file {theirs:.3f} s   ratio {ours / theirs:.2f}")
    print(f"        full Python reader {full:.3f} s   ratio {full / theirs:.2f}")
    print(
        f"load, as a merge list: bytepair.load {ours_m:.3f} s   from_file {theirs_m:.3f} s   ratio {ours_m / theirs_m:.2f}"
        f"   (full Python reader {full_m:.3f} s, ratio {full_m / theirs_m:.2f})"
    )
    print(f"export  bytepair.save_hf {export:.3f} s   {'PASS' if export < 1 else 'FAIL'} (goal < 1 s)")


def added_tokens(repeat: int) -> None:
    from bytepair.formats.hf import to_hf_dict

    base = to_hf_dict(bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, []))
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (20_000, 40_000, 80_000):
            doc = dict(base)
            doc["added_tokens"] = [
                {"id": 256 + k, "content": f"<|t{k}|>", "single_word": False, "lstrip": False,
                 "rstrip": False, "normalized": False, "special": True}
                for k in range(n)
            ]
            path = os.path.join(tmp, f"added{n}.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            times.append(best(lambda: bytepair.load(path), repeat))
            print(f"added tokens {n:>6,}: bytepair.load {times[-1]:.3f} s")
    print(f"80,000 / 20,000: {times[2] / times[0]:.1f}x (linear: 4x)")


if __name__ == "__main__":
    main()
