#!/usr/bin/env python3
"""Training at scale: bytepair side by side with its peers on >= 200 MB, and a scaling curve.

Three parts, each trainer in its own fresh process (see bench_train.py for how each peer is
driven and how time and peak RSS are measured):

1. side by side on the whole corpus (default bench/corpus/mixed.txt, 200 MiB: build it with
   `python bench/make_corpus.py --mb 200`) at vocab 32768 and 65536, with the issue's floors:
   bytepair time <= 0.5 x HF tokenizers, <= 0.7 x rustbpe, <= 0.7 x sentencepiece (BPE);
   bytepair peak RSS <= 0.7 x HF's and <= rustbpe's.
2. the scaling curve: bytepair alone on prefixes of the corpus (50, 100, 200 MiB by default,
   cut after a newline), vocab 32768: time, time per MB, peak RSS and distinct pieces. Time
   per MB should stay flat; peak RSS should follow distinct pieces, not bytes.
3. mixing: bytepair on prose.txt, code.txt and multilingual.txt as three sources with
   alpha=0.3, and its per-source report.

These are benchmarks, not tests. Examples:
  python bench/bench_scale.py                         # all three parts
  python bench/bench_scale.py --parts curve --sizes 25,50,100
  python bench/bench_scale.py --parts side --vocab-sizes 32768 --only bytepair,hf
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_train  # noqa: E402  (same directory)

FLOORS_TIME = {"hf": 0.5, "rustbpe": 0.7, "sentencepiece": 0.7}
FLOORS_RSS = {"hf": 0.7, "rustbpe": 1.0}


def child_bytepair(spec: dict[str, object]) -> int:
    """Trains with bytepair as `spec` says; prints one JSON line."""
    import bytepair

    base_kb = bench_train._rss_now_kb()
    t0 = time.perf_counter()
    if spec.get("sources"):
        sources = [bytepair.Source(p, name=n) for n, p in spec["sources"]]  # type: ignore[union-attr]
        tok = bytepair.train(sources, vocab_size=int(spec["vocab"]), alpha=float(spec["alpha"]))  # type: ignore[arg-type]
    else:
        tok = bytepair.train([str(spec["path"])], vocab_size=int(spec["vocab"]))  # type: ignore[call-overload]
    seconds = time.perf_counter() - t0
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": seconds, "peak_kb": peak_kb, "base_kb": base_kb, "vocab": tok.vocab_size,
                      "distinct": tok.training["distinct_pieces"], "table": bytepair.sources_table(tok),
                      "timing": tok.training["seconds"]}))
    return 0


def run_bytepair(spec: dict[str, object], timeout: float) -> dict:
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen([sys.executable, __file__, "--child", json.dumps(spec)], stdout=out, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
        code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if code != 0:
            return {"error": f"exit code {code}: {err.read().strip().splitlines()[-1:]}"}
        report: dict = json.loads(out.read().strip().splitlines()[-1])
    report["peak_kb"] = max(report["peak_kb"], ru.ru_maxrss)
    return report


def prefix(corpus: Path, mib: float, workdir: Path) -> Path:
    """The first `mib` MiB of the corpus, cut after a newline (cached in workdir)."""
    size = int(mib * 2**20)
    if size >= corpus.stat().st_size:
        return corpus
    dest = workdir / f"{corpus.stem}_{mib:g}MiB.txt"
    if dest.exists():
        return dest
    with corpus.open("rb") as f:
        data = f.read(size)
    dest.write_bytes(data[: data.rfind(b"\n") + 1])
    return dest


def side_by_side(args: argparse.Namespace, results: dict) -> list[tuple[str, bool | None]]:
    floors: list[tuple[str, bool | None]] = []
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    size = args.corpus.stat().st_size
    for vocab in [int(v) for v in args.vocab_sizes.split(",")]:
        print(f"\n== side by side: {args.corpus.name} ({size / 1e6:.1f} MB), vocab {vocab}", flush=True)
        ns = argparse.Namespace(corpus=args.corpus, vocab_size=vocab, min_frequency=2, small=False,
                                repeat=1, timeout=args.timeout)
        rows = {name: bench_train.run(name, ns) for name in names}
        results[f"side_{vocab}"] = rows
        bp = rows.get("bytepair", {})
        print(f"\n{'trainer':14} {'version':>9} {'time s':>8} {'peak RSS MB':>12} {'vocab':>7}"
              f"   {'bytepair/peer time':>18} {'RSS':>6}")
        for name, r in rows.items():
            if "error" in r:
                print(f"{name:14} {r['error'].splitlines()[0]}")
                continue
            rt = rm = ""
            if name != "bytepair" and "error" not in bp:
                rt, rm = f"{bp['seconds'] / r['seconds']:.3f}", f"{bp['peak_kb'] / r['peak_kb']:.3f}"
            print(f"{name:14} {str(r['version']):>9} {r['seconds']:8.2f} {r['peak_kb'] / 1024:12.0f}"
                  f" {str(r['vocab']):>7}   {rt:>18} {rm:>6}")
        for peer, factor in FLOORS_TIME.items():
            r = rows.get(peer)
            ok = None if r is None or "error" in r or "error" in bp else bp["seconds"] <= factor * r["seconds"]
            floors.append((f"vocab {vocab}: bytepair time <= {factor} x {peer}", ok))
        for peer, factor in FLOORS_RSS.items():
            r = rows.get(peer)
            ok = None if r is None or "error" in r or "error" in bp else bp["peak_kb"] <= factor * r["peak_kb"]
            floors.append((f"vocab {vocab}: bytepair peak RSS <= {factor} x {peer}", ok))
    return floors


def curve(args: argparse.Namespace, results: dict) -> None:
    sizes = [float(s) for s in args.sizes.split(",")]
    print(f"\n== scaling curve: bytepair, prefixes of {args.corpus.name}, vocab 32768", flush=True)
    args.workdir.mkdir(parents=True, exist_ok=True)
    rows = []
    for mib in sizes:
        path = prefix(args.corpus, mib, args.workdir)
        r = run_bytepair({"path": str(path), "vocab": 32768}, args.timeout)
        r["mb"] = path.stat().st_size / 1e6
        rows.append(r)
        print(f"  {r['mb']:.0f} MB: {r.get('seconds', float('nan')):.2f} s", flush=True)
    results["curve"] = rows
    print(f"\n{'MB':>6} {'time s':>8} {'s/MB':>7} {'count s':>8} {'merge s':>8} {'peak RSS MB':>12}"
          f" {'distinct pieces':>16} {'RSS bytes/piece':>16}")
    for r in rows:
        if "error" in r:
            print(f"{r['mb']:6.0f} {r['error']}")
            continue
        t = r["timing"]
        print(f"{r['mb']:6.0f} {r['seconds']:8.2f} {r['seconds'] / r['mb']:7.4f} {t['counting']:8.2f}"
              f" {t['merging']:8.2f} {r['peak_kb'] / 1024:12.0f} {r['distinct']:16,}"
              f" {r['peak_kb'] * 1024 / r['distinct']:16.0f}")


def mixing(args: argparse.Namespace, results: dict) -> None:
    parts = [("prose", "prose.txt"), ("code", "code.txt"), ("multilingual", "multilingual.txt")]
    paths = [(n, str(args.corpus.parent / f)) for n, f in parts]
    if not all(Path(p).is_file() for _, p in paths):
        print("\n== mixing: skipped (prose.txt, code.txt, multilingual.txt not found beside the corpus)")
        return
    print(f"\n== mixing: {', '.join(n for n, _ in parts)} as three sources, alpha 0.3, vocab 32768", flush=True)
    r = run_bytepair({"sources": paths, "vocab": 32768, "alpha": 0.3}, args.timeout)
    results["mixing"] = r
    if "error" in r:
        print("  " + r["error"])
        return
    print(f"  {r['seconds']:.2f} s, peak RSS {r['peak_kb'] / 1024:.0f} MB, {r['distinct']:,} distinct pieces\n")
    print(r["table"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=HERE / "corpus" / "mixed.txt")
    ap.add_argument("--parts", default="side,curve,mixing", help="comma-separated: side, curve, mixing")
    ap.add_argument("--vocab-sizes", default="32768,65536")
    ap.add_argument("--sizes", default="50,100,200", help="scaling curve, MiB (default 50,100,200)")
    ap.add_argument("--only", default=",".join(bench_train.TRAINERS))
    ap.add_argument("--timeout", type=float, default=3600.0)
    ap.add_argument("--workdir", type=Path, default=HERE / "out" / "prefixes")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child_bytepair(json.loads(args.child))
    if not args.corpus.is_file():
        ap.error(f"corpus {args.corpus} not found: build it with `python bench/make_corpus.py --mb 200`")
    print(f"{os.cpu_count()} CPUs, Python {platform.python_version()}, {platform.machine()}; "
          f"corpus {args.corpus} ({args.corpus.stat().st_size:,} bytes)")
    parts = {p.strip() for p in args.parts.split(",")}
    results: dict = {}
    floors: list[tuple[str, bool | None]] = []
    if "side" in parts:
        floors = side_by_side(args, results)
    if "curve" in parts:
        curve(args, results)
    if "mixing" in parts:
        mixing(args, results)
    if floors:
        print("\nfloors:")
        for label, ok in floors:
            print(f"  {bench_train.verdict(ok):4}  {label}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"results": results, "floors": dict(floors)}, indent=2) + "\n")
    return 1 if any(ok is False for _, ok in floors) else 0


if __name__ == "__main__":
    sys.exit(main())
