#!/usr/bin/env python3
"""Compare benchmark (not a test): `compare` of several tokenizers against encoding the same
corpus with `encode_files` once per tokenizer, each in a fresh process pinned to one core.

- compare:      bytepair.analysis.compare([(name, tok) ...], [Corpus(file)]) (the corpus read once
                in blocks, each block measured by every tokenizer)
- encode_files: tok.encode_files([file], num_threads=1) for each tokenizer, summed

Each child loads its tokenizers before the clock starts and reports the CPU seconds of the work
itself (time.process_time) and the whole process's peak RSS (VmHWM); the parent also takes the
whole process's CPU from wait4. The issue's floor: compare <= 1.5 x the summed encode_files, peak
RSS <= 500 MB. Best of --repeat, the two taken in turn.

  python bench/bench_compare.py --mb 27
  python bench/bench_compare.py --sample 24                # the bundled Shakespeare sample 24 times
  python bench/bench_compare.py --corpus bench/corpus/mixed.txt
  python bench/bench_compare.py --mb 27 --profile      # cProfile of compare, top 25 by own time
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, time
import bytepair
from bytepair.analysis import Corpus, compare
what, path, names = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
toks = [(n, bytepair.get_encoding(n)) for n in names]
for _, t in toks:
    t.encode_ordinary("warm up")
res = {}
t0 = time.process_time()
if what == "compare":
    cmp = compare(toks, [Corpus("corpus", [path])])
    res["tokens"] = [r.tokens for r in cmp.rows]
    res["words"] = cmp.rows[0].words
elif what == "profile":
    import cProfile, pstats
    pr = cProfile.Profile()
    pr.enable()
    compare(toks, [Corpus("corpus", [path])])
    pr.disable()
    pstats.Stats(pr, stream=sys.stderr).sort_stats("tottime").print_stats(25)
else:
    res["tokens"] = [len(t.encode_files([path], num_threads=1)[0]) for _, t in toks]
res["cpu"] = time.process_time() - t0
res["rss_mb"] = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM")) / 1024
print(json.dumps(res))
"""


def run(what: str, path: Path, names: list[str], core: int) -> tuple[dict[str, float], float]:
    env = dict(os.environ, RAYON_NUM_THREADS="1")
    cmd = ["taskset", "-c", str(core), sys.executable, "-c", CHILD, what, str(path), ",".join(names)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, ru = os.wait4(proc.pid, 0)
    proc.returncode = status  # reaped here: Popen must not wait for it again
    if status != 0:
        raise SystemExit(f"{what} failed ({status})")
    res: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return res, ru.ru_utime + ru.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="bench/corpus/mixed.txt")
    ap.add_argument("--mb", type=float, help="only the first MB of --corpus (cut at a newline)")
    ap.add_argument("--sample", type=int, metavar="N",
                    help="instead of --corpus: the bundled Shakespeare sample N times, every other copy upper-cased")
    ap.add_argument("--tokenizers", default="gpt2,cl100k_base,o200k_base")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--core", type=int, default=0, help="the core each child is pinned to")
    ap.add_argument("--profile", action="store_true", help="cProfile of compare instead of the table")
    args = ap.parse_args()
    names = args.tokenizers.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.corpus)
        if args.sample:
            import bytepair

            text = (Path(bytepair.__file__).parent / "data" / "tinyshakespeare.txt").read_text(encoding="utf-8")
            path = Path(tmp) / "sample.txt"
            path.write_text("".join(text if i % 2 == 0 else text.upper() for i in range(args.sample)), encoding="utf-8")
        elif args.mb:
            data = path.read_bytes()[: int(args.mb * 1e6)]
            data = data[: data.rfind(b"\n") + 1]
            path = Path(tmp) / "corpus.txt"
            path.write_bytes(data)
        mb = path.stat().st_size / 1e6
        if args.profile:
            run("profile", path, names, args.core)
            return
        best: dict[str, dict[str, float]] = {}
        for _ in range(max(args.repeat, 1)):
            for what in ("encode_files", "compare"):
                r, whole = run(what, path, names, args.core)
                r["whole"] = whole
                b = best.setdefault(what, r)
                for k in ("cpu", "whole"):
                    b[k] = min(b[k], r[k])
                b["rss_mb"] = max(b["rss_mb"], r["rss_mb"])
        e, c = best["encode_files"], best["compare"]
        assert e["tokens"] == c["tokens"], (e["tokens"], c["tokens"])
        what_corpus = f"the sample {args.sample} times" if args.sample else args.corpus + (f" (first {args.mb} MB)" if args.mb else "")
        print(f"corpus {what_corpus}: {mb:.1f} MB; "
              f"tokenizers {', '.join(names)}; one pinned core; best of {args.repeat}")
        print(f"  {'what':<28} {'work CPU s':>10} {'process CPU s':>14} {'peak RSS MB':>12}")
        for what, r in (("encode_files (summed)", e), ("compare", c)):
            print(f"  {what:<28} {r['cpu']:10.2f} {r['whole']:14.2f} {r['rss_mb']:12.1f}")
        print(f"  ratio compare / encode_files: work {c['cpu'] / e['cpu']:.2f}x, "
              f"process {c['whole'] / e['whole']:.2f}x   (floor <= 1.5x, RSS <= 500 MB)")


if __name__ == "__main__":
    main()
