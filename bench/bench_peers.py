#!/usr/bin/env python3
"""Encoding side by side with the exact peers, each in its own pinned process; ratios printed.

Sections (ratios are bytepair / peer: above 1 is bytepair ahead):

  table  For each encoding (cl100k_base, o200k_base), corpus (bench/corpus/{prose,code,
         multilingual}.txt) and thread count (1, 2): text A = the first --mb MiB, text B = the
         next --mb MiB, both cut after a newline into documents of about --doc-kb KiB. A fresh
         process per (tool, call shape), pinned with taskset to cores 0..threads-1 and with
         RAYON_NUM_THREADS set, times three passes; --repeat such processes per tool, the tools
         taking turns, and the median of each figure is printed:
           first     A, in a process that has encoded nothing (caches cold)
           unseen    B, after A (caches warmed on the same kind of text: a long run's steady state)
           repeated  B again (the same documents a second time)
         Call shapes: "call" = one call per document, ids as a list (bytepair encode_ordinary,
         fastokens encode_ordinary(..).ids, tiktoken encode_ordinary, gigatoken's tiktoken view
         encode_ordinary, HF encode(..).ids); "bulk" = the batch as flat arrays where the peer has
         one (bytepair encode_batch_numpy, fastokens encode_batch_flat, gigatoken encode_batch),
         as lists otherwise (tiktoken encode_ordinary_batch, HF encode_batch). MB/s of UTF-8 per
         second of the process's CPU time on one thread (a busy machine's waits left out), of
         wall time on more. Every peer's ids on B are checked against bytepair's (a hash of the uint32
         ids): "exact" column.
  cliff  one repeated character or short unit ("\\n", a digit, "e" + U+0301, a letter, a
         space, "ab"), 4 MB and 32 MB of it (--cliff-mb 4,32,256 adds a size), in a fresh process
         each (CPU time, best of three calls), count (the encoding alone) and encode_ordinary
         (with the list it returns): the time at 32 MB over the time at 4 MB (linear: 8). Beside
         them one plain pass over the same text (str.find): at 4 MB the text stays in the
         last-level cache between calls, at 32 MB it does not, and that pass's ratio is what
         the memory alone does to a call that is a few passes.
  short  encode_ordinary / encode / count / decode of a few words, in ns per call (best of
         --repeat runs of 100,000 calls), one pinned process per tool: bytepair, tiktoken,
         fastokens, gigatoken (count is len(encode(..)) where a peer has none).

Floors (from the encode-speed issue) are printed as PASS/FAIL: every table row bytepair >=
1.0x fastokens and gigatoken on unseen and repeated text; every short call <= tiktoken's;
every cliff row <= 9x.
The corpus command against the array path and gigatoken is `bench/bench_corpus.py`; WordPiece
against nanotoken is `bench/bench_wordpiece.py`. These are benchmarks, not tests.

  python bench/bench_peers.py                                  # everything (about 10 min, 2 cores)
  python bench/bench_peers.py --only table --encodings o200k_base --corpora prose --threads 1
  python bench/bench_peers.py --tools bytepair,fastokens --mb 8 --json bench/out/peers.json
"""

from __future__ import annotations

import argparse
import gc
import gzip
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CORPORA = ["prose", "code", "multilingual"]
ENCODINGS = ["cl100k_base", "o200k_base"]
TOOLS = ["bytepair", "fastokens", "gigatoken", "tiktoken", "hf"]
SHORT = "hello world"
SHORT_CALLS = ("encode_ordinary", "encode", "count", "decode")


def rank_file(enc: str, tmp: Path) -> Path:
    """The plain rank file of a shipped encoding (peers read it; bytepair ships it gzipped)."""
    out = tmp / f"{enc}.tiktoken"
    if not out.exists():
        src = ROOT / "python" / "bytepair" / "data" / f"{enc}.tiktoken.gz"
        out.write_bytes(gzip.decompress(src.read_bytes()))
    return out


def documents(text: str, doc_bytes: int) -> list[str]:
    """`text` cut after the first newline past every `doc_bytes` characters."""
    out, i = [], 0
    while i < len(text):
        j = text.find("\n", i + doc_bytes)
        j = len(text) if j < 0 else j + 1
        out.append(text[i:j])
        i = j
    return out


def halves(corpus: str, mb: float) -> tuple[str, str]:
    """Texts A and B: consecutive `mb` MiB of the corpus file, each cut after a newline."""
    data = (HERE / "corpus" / f"{corpus}.txt").read_bytes()
    n = int(mb * 2**20)
    cut = data.find(b"\n", n) + 1 or len(data)
    end = data.find(b"\n", cut + n) + 1 or len(data)
    if end - cut < n // 2:
        sys.exit(f"bench/corpus/{corpus}.txt is too small for --mb {mb}: run bench/make_corpus.py")
    return data[:cut].decode(), data[cut:end].decode()


# ---- the worker: one tool, one call shape, in its own process ------------------------------


def encoder(tool: str, shape: str, enc: str, threads: int, tmp: Path) -> Any:
    """A function from a list of documents to their ids (in the tool's natural form)."""
    if tool == "bytepair":
        import bytepair

        e = bytepair.get_encoding(enc)
        if shape == "call":
            return lambda ds: [e.encode_ordinary(d) for d in ds]
        return lambda ds: e.encode_batch_numpy(ds, num_threads=threads)
    if tool == "fastokens":
        import fastokens

        f = fastokens.Tokenizer.from_tiktoken(str(rank_file(enc, tmp)), encoding=enc)
        if shape == "call":
            return lambda ds: [f.encode_ordinary(d).ids for d in ds]
        return lambda ds: f.encode_batch_flat(ds)
    if tool == "gigatoken":
        import gigatoken

        g = gigatoken.Tokenizer.from_tiktoken(str(rank_file(enc, tmp)))
        if shape == "call":
            t = g.as_tiktoken()
            return lambda ds: [t.encode_ordinary(d) for d in ds]
        return lambda ds: g.encode_batch(ds)
    if tool == "tiktoken":
        import tiktoken
        import tiktoken.load

        import bytepair

        ranks = tiktoken.load.load_tiktoken_bpe(str(rank_file(enc, tmp)))
        t = tiktoken.Encoding(enc, pat_str=bytepair.get_encoding(enc).pattern, mergeable_ranks=ranks,
                              special_tokens={})
        if shape == "call":
            return lambda ds: [t.encode_ordinary(d) for d in ds]
        return lambda ds: t.encode_ordinary_batch(ds, num_threads=threads)
    if tool == "hf":
        import tokenizers

        sys.path.insert(0, str(HERE))
        # The tokenizer.json export bench_encode.py checks against tiktoken.
        from bench_encode import export_tokenizer_json, load_ranks

        path = tmp / f"{enc}.json"
        if not path.exists():
            export_tokenizer_json(enc, load_ranks(enc, tmp), path)
        h = tokenizers.Tokenizer.from_file(str(path))
        if shape == "call":
            return lambda ds: [h.encode(d, add_special_tokens=False).ids for d in ds]
        return lambda ds: [x.ids for x in h.encode_batch(ds, add_special_tokens=False)]
    raise SystemExit(f"unknown tool {tool}")


def ids_hash(out: Any) -> str:
    """sha256 of all ids as little-endian uint32, whatever shape the tool returned them in."""
    import numpy as np

    h = hashlib.sha256()
    if isinstance(out, tuple) and len(out) == 2 and isinstance(out[0], bytes):  # fastokens flat
        h.update(np.frombuffer(out[0], dtype="<u4").tobytes())
    elif isinstance(out, tuple):  # bytepair (flat, offsets)
        h.update(np.asarray(out[0], dtype="<u4").tobytes())
    elif isinstance(out, list):
        for ids in out:
            h.update(np.asarray(ids, dtype="<u4").tobytes())
    else:  # gigatoken's batch array
        h.update(np.concatenate([np.asarray(x, dtype="<u4") for x in out.to_list()]).tobytes()
                 if hasattr(out, "to_list") else np.asarray(out, dtype="<u4").tobytes())
    return h.hexdigest()


def worker(args: argparse.Namespace) -> None:
    tmp = Path(args.tmp)
    # numpy is imported before anything is timed: a tool's first array call would otherwise
    # count its import (about 0.15 CPU s here, as long as a first pass over 2 MB)
    import numpy  # noqa: F401

    a, b = halves(args.corpus, args.mb)
    docs_a, docs_b = documents(a, args.doc_kb * 1024), documents(b, args.doc_kb * 1024)
    size_a, size_b = len(a.encode()), len(b.encode())
    f = encoder(args.tool, args.shape, args.encoding, args.threads, tmp)
    res: dict[str, Any] = {}
    for name, docs, size in (("first", docs_a, size_a), ("unseen", docs_b, size_b),
                             ("repeated", docs_b, size_b)):
        # the previous pass's ids freed and the collector's counts at zero, for every tool: a
        # full collection otherwise falls in whichever pass the tool's imports put it in
        out = None
        gc.collect()
        t, cpu = time.perf_counter(), time.process_time()
        out = f(docs)
        # One thread: per second of the process's CPU time, so that waiting for a core on a
        # shared machine does not count; more threads: per second of wall time.
        spent = time.process_time() - cpu if args.threads == 1 else time.perf_counter() - t
        res[name] = size / spent / 1e6
    res["hash"] = ids_hash(out)
    print(json.dumps(res))


CLIFF_UNITS = ["\n", "7", "e\u0301", "a", " ", "ab"]


def cliff_worker(args: argparse.Namespace) -> None:
    import bytepair

    e = bytepair.get_encoding(args.encoding)
    unit = CLIFF_UNITS[int(args.corpus)]
    text = unit * (int(args.mb * 2**20) // len(unit.encode()))
    # CPU seconds of the process (user + system: the kernel's zeroing of fresh pages counts), best
    # of three calls: one long piece is never cached, so each call does all the work again, and
    # the best of three leaves out the first call's one-time costs and a busy machine's stalls.
    # "count" is the encoding alone; "list" adds the Python list of ids that encode_ordinary
    # returns (8 bytes a token, past the last-level cache at 32 MB of one digit).
    out = {}
    # "pass": one plain pass over the same text (str.find of a character it does not hold),
    # what the memory hierarchy alone makes of 8x the text on this machine.
    for name, call in (("count", e.count), ("list", e.encode_ordinary), ("pass", lambda t: t.find("\0"))):
        best = float("inf")
        for _ in range(3):
            t = time.process_time()
            call(text)
            best = min(best, time.process_time() - t)
        out[name] = best
    print(json.dumps(out))


def grew(before: float, after: float) -> float:
    """after / before; nan where a time too short to read left nothing to divide by."""
    return after / before if before > 0 else float("nan")


def cliff(args: argparse.Namespace, tmp: Path, out: dict[str, Any]) -> list[str]:
    fails: list[str] = []
    sizes = [int(mb) for mb in args.cliff_mb.split(",")]
    print(f"\ncliff: one repeated unit, CPU seconds (best of 3) at {' / '.join(map(str, sizes))} MB and"
          " the ratio of each to the one before, for count (the encoding alone), encode_ordinary"
          " (with its list) and one plain pass over the text (str.find: the machine's own ratio)")
    nan = {"count": float("nan"), "list": float("nan"), "pass": float("nan")}
    for enc in args.encodings:
        for i, unit in enumerate(CLIFF_UNITS):
            rows = []
            for mb in sizes:
                r = run(["--cliff", "--encoding", enc, "--corpus", str(i), "--mb", str(mb), "--tmp", str(tmp)],
                        1, args.timeout)
                rows.append(r if isinstance(r, dict) else nan)
            out[f"cliff/{enc}/{unit!r}"] = dict(zip(map(str, sizes), rows))
            line = f"  {enc:<12} {unit!r:<10}"
            for name in ("count", "list", "pass"):
                line += f"  {name} " + " ".join(f"{r[name]:6.3f}" for r in rows)
                for k in range(1, len(sizes)):
                    ratio = grew(rows[k - 1][name], rows[k][name])
                    line += f" x{ratio:<5.1f}"
                    if name != "pass" and (sizes[k - 1], sizes[k]) == (4, 32) and not ratio <= 9:
                        fails.append(f"cliff {enc} {unit!r} {name}: {ratio:.1f}x for 8x the text"
                                     f" (a plain pass: {grew(rows[k - 1]['pass'], rows[k]['pass']):.1f}x)")
            print(line)
    return fails


def short_worker(args: argparse.Namespace) -> None:
    tmp = Path(args.tmp)
    enc = args.encoding
    if args.tool == "bytepair":
        import bytepair

        e = bytepair.get_encoding(enc)
        encode, decode, special, count = e.encode_ordinary, e.decode, e.encode, e.count
    elif args.tool == "tiktoken":
        import tiktoken
        import tiktoken.load

        import bytepair

        ranks = tiktoken.load.load_tiktoken_bpe(str(rank_file(enc, tmp)))
        t = tiktoken.Encoding(enc, pat_str=bytepair.get_encoding(enc).pattern, mergeable_ranks=ranks,
                              special_tokens=bytepair.get_encoding(enc).special_tokens)
        encode, decode, special = t.encode_ordinary, t.decode, t.encode
        count = lambda s: len(t.encode(s))  # noqa: E731  (tiktoken has no count)
    elif args.tool == "fastokens":
        import fastokens

        f = fastokens.Tokenizer.from_tiktoken(str(rank_file(enc, tmp)), encoding=enc)
        encode = lambda s: f.encode_ordinary(s).ids  # noqa: E731
        special = lambda s: f.encode(s).ids  # noqa: E731
        count = lambda s: len(f.encode(s).ids)  # noqa: E731
        decode = f.decode
    elif args.tool == "gigatoken":
        import gigatoken

        g = gigatoken.Tokenizer.from_tiktoken(str(rank_file(enc, tmp))).as_tiktoken()
        encode, decode, special = g.encode_ordinary, g.decode, g.encode
        count = lambda s: len(g.encode(s))  # noqa: E731
    else:
        raise SystemExit(f"no short-call row for {args.tool}")
    ids = encode(SHORT)
    n = 100_000
    res: dict[str, Any] = {"ids": ids}
    calls = (("encode_ordinary", encode, SHORT), ("encode", special, SHORT), ("count", count, SHORT),
             ("decode", decode, ids))
    for name, fn, arg in calls:
        best = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter_ns()
            for _ in range(n):
                fn(arg)
            best = min(best, (time.perf_counter_ns() - start) / n)
        res[name] = best
    print(json.dumps(res))


# ---- the driver ----------------------------------------------------------------------------------


def run(argv: list[str], threads: int, timeout: float) -> dict[str, Any] | str:
    """One worker process pinned to cores 0..threads-1; its JSON line, or why there is none."""
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads), PYTHONHASHSEED="0")
    cores = ",".join(str(c) for c in range(threads))
    try:
        p = subprocess.run(["taskset", "-c", cores, sys.executable, __file__, *argv], env=env,
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout"
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["?"])[-1]
        return f"failed: {last[:120]}"
    return dict(json.loads(p.stdout.strip().splitlines()[-1]))


def median_run(rs: list[dict[str, Any] | str]) -> dict[str, Any] | str:
    """The median of each figure of a tool's runs; the first failure if any failed, and a note
    if their ids differed."""
    fails = [r for r in rs if isinstance(r, str)]
    if fails:
        return fails[0]
    done = [r for r in rs if isinstance(r, dict)]
    if len({r["hash"] for r in done}) > 1:
        return "runs gave different ids"
    return {k: (done[0][k] if k == "hash" else statistics.median(r[k] for r in done)) for k in done[0]}


def table(args: argparse.Namespace, tmp: Path, tools: list[str], out: dict[str, Any]) -> list[str]:
    fails: list[str] = []
    peers = [t for t in tools if t != "bytepair"]
    for threads in args.threads:
        for enc in args.encodings:
            for corpus in args.corpora:
                print(f"\n{enc}, {corpus}, {threads} thread(s), {args.mb} MiB per pass, "
                      f"{args.doc_kb} KiB documents; MB/s first / unseen / repeated")
                for shape in args.shapes:
                    # --repeat processes per tool, the tools taking turns, and the median of each
                    # figure: one pass over 8 MiB takes tens of ms, and a shared machine's stalls
                    # (or the kernel compacting memory) can halve a single run.
                    runs: dict[str, list[dict[str, Any] | str]] = {tool: [] for tool in tools}
                    for _ in range(args.repeat):
                        for tool in tools:
                            runs[tool].append(run(["--worker", "--tool", tool, "--shape", shape, "--encoding",
                                                   enc, "--corpus", corpus, "--mb", str(args.mb), "--doc-kb",
                                                   str(args.doc_kb), "--threads", str(threads), "--tmp",
                                                   str(tmp)], threads, args.timeout))
                    rows = {tool: median_run(rs) for tool, rs in runs.items()}
                    out[f"{enc}/{corpus}/{threads}/{shape}"] = rows
                    mine = rows.get("bytepair")
                    for tool in tools:
                        r = rows[tool]
                        if isinstance(r, str):
                            print(f"  {shape:<5} {tool:<10} {r}")
                            continue
                        cells = " / ".join(f"{r[k]:6.1f}" for k in ("first", "unseen", "repeated"))
                        line = f"  {shape:<5} {tool:<10} {cells}"
                        if tool != "bytepair" and isinstance(mine, dict):
                            ratios = [mine[k] / r[k] for k in ("first", "unseen", "repeated")]
                            exact = "exact" if r["hash"] == mine["hash"] else "IDS DIFFER"
                            line += "   x" + " / ".join(f"{x:.2f}" for x in ratios) + f"   {exact}"
                            if tool in ("fastokens", "gigatoken"):
                                for k, x in zip(("unseen", "repeated"), ratios[1:]):
                                    if x < 1.0:
                                        fails.append(f"{enc} {corpus} {threads}t {shape} {k}: "
                                                     f"{x:.2f}x {tool}")
                        print(line)
    return fails


def short(args: argparse.Namespace, tmp: Path, tools: list[str], out: dict[str, Any]) -> list[str]:
    fails: list[str] = []
    print(f"\nshort calls: {SHORT!r}, ns per call (best of {args.repeat} x 100,000), one core; "
          f"{' / '.join(SHORT_CALLS)}")
    for enc in args.encodings:
        rows = {t: run(["--short", "--tool", t, "--encoding", enc, "--repeat", str(args.repeat),
                        "--tmp", str(tmp)], 1, args.timeout)
                for t in tools if t != "hf"}
        out[f"short/{enc}"] = rows
        mine = rows.get("bytepair")
        for tool, r in rows.items():
            if isinstance(r, str):
                print(f"  {enc:<12} {tool:<10} {r}")
                continue
            line = f"  {enc:<12} {tool:<10}" + "".join(f" {r[k]:7.0f}" for k in SHORT_CALLS)
            if tool != "bytepair" and isinstance(mine, dict):
                ratios = [r[k] / mine[k] for k in SHORT_CALLS]
                line += "   x" + " / ".join(f"{x:.2f}" for x in ratios)
                line += "" if r["ids"] == mine["ids"] else "   IDS DIFFER"
                if tool == "tiktoken":
                    fails += [f"short {k} {enc}: {x:.2f}x tiktoken" for k, x in zip(SHORT_CALLS, ratios) if x < 1.0]
            print(line)
    return fails


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--only", choices=["table", "short", "cliff"], help="one section")
    p.add_argument("--cliff-mb", default="4,32", help="cliff sizes in MB, comma-separated (the floor is 4 -> 32)")
    p.add_argument("--tools", default=",".join(TOOLS))
    p.add_argument("--encodings", default=",".join(ENCODINGS))
    p.add_argument("--corpora", default=",".join(CORPORA))
    p.add_argument("--threads", default="1,2")
    p.add_argument("--shapes", default="call,bulk",
                   help="call: one encode per document, lists; bulk: the batch call, arrays")
    p.add_argument("--mb", type=float, default=12.0, help="MiB per pass (A and B each)")
    p.add_argument("--doc-kb", type=int, default=8)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--timeout", type=float, default=600.0)
    p.add_argument("--json", help="also save the results here")
    # worker modes
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--short", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--cliff", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--tool", help=argparse.SUPPRESS)
    p.add_argument("--shape", help=argparse.SUPPRESS)
    p.add_argument("--encoding", help=argparse.SUPPRESS)
    p.add_argument("--corpus", help=argparse.SUPPRESS)
    p.add_argument("--tmp", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        args.threads = int(args.threads)
        return worker(args)
    if args.short:
        return short_worker(args)
    if args.cliff:
        return cliff_worker(args)
    args.encodings = args.encodings.split(",")
    args.corpora = args.corpora.split(",")
    args.shapes = args.shapes.split(",")
    args.threads = [int(t) for t in args.threads.split(",")]
    tools = args.tools.split(",")
    if tools[0] != "bytepair":
        sys.exit("--tools must start with bytepair (the ratios are against it)")
    out: dict[str, Any] = {}
    fails: list[str] = []
    with tempfile.TemporaryDirectory() as d:
        if args.only in (None, "table"):
            fails += table(args, Path(d), tools, out)
        if args.only in (None, "short"):
            fails += short(args, Path(d), tools, out)
        if args.only in (None, "cliff"):
            fails += cliff(args, Path(d), out)
    print("\nfloors:", "PASS" if not fails else "FAIL")
    for f in fails:
        print("  below:", f)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
