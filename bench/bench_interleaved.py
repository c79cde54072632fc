"""Side by side in one process, interleaved: bytepair against one peer, for decisions on a
noisy machine (not the floors' measure, which `bench_peers.py` and `bench_sentencepiece.py`
take with each tool in its own process).

On a shared host the same pass of one build moves by a third or more between runs, and two
processes run minutes apart do not see the same machine. Here each round makes fresh
tokenizers of both tools (so that the first pass is a first pass and B is unseen), times A, B
and B again with each, in alternating order, and keeps the ratio of the two tools' CPU times
for that round; the medians of those ratios hold to a few per cent where best-of-N figures
from separate processes do not. Both tools share the process's caches and allocator; a tool
that suffers more from the other's leftovers is measured as a little slower.

    python bench/bench_interleaved.py --peer fastokens --encoding cl100k_base --corpus code
    python bench/bench_interleaved.py --peer spm --model DIR/unigram.model --a DIR/a.txt --b DIR/b.txt

(`DIR` as `bench_sentencepiece.py --keep DIR` leaves it.) Prints, for each pass, the median
of peer time / bytepair time (above 1: bytepair is faster) and its quartiles.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_peers import documents, halves, ids_hash, rank_file  # noqa: E402
from bench_sentencepiece import lines_of  # noqa: E402

Fn = Callable[[list[str]], Any]


def bpe_tools(args: argparse.Namespace, tmp: Path) -> dict[str, Callable[[], Fn]]:
    """Makers of fresh encoders (documents -> ids) of a tiktoken encoding, bytepair and fastokens."""
    import bytepair
    import fastokens

    path = rank_file(args.encoding, tmp)

    def ours() -> Fn:
        t = bytepair.load_tiktoken(path, pattern=bytepair.get_encoding(args.encoding).pattern)
        if args.shape == "call":
            return lambda ds: [t.encode_ordinary(d) for d in ds]
        return lambda ds: t.encode_batch_numpy(ds, num_threads=1)

    def peer() -> Fn:
        f = fastokens.Tokenizer.from_tiktoken(str(path), encoding=args.encoding)
        if args.shape == "call":
            return lambda ds: [f.encode_ordinary(d).ids for d in ds]
        return lambda ds: f.encode_batch_flat(ds)

    return {"bytepair": ours, "fastokens": peer}


def spm_tools(args: argparse.Namespace) -> dict[str, Callable[[], Fn]]:
    """Makers of fresh encoders (lines -> ids) of a SentencePiece model, bytepair and spm."""
    import bytepair
    import sentencepiece as spm

    def ours() -> Fn:
        t = bytepair.load(args.model)
        if args.shape == "call":
            return lambda ls: [t.encode(line) for line in ls]
        if args.shape == "bulk":
            return lambda ls: t.encode_batch_numpy(ls, num_threads=1)
        return lambda ls: t.encode_batch(ls, num_threads=1)

    def peer() -> Fn:
        sp = spm.SentencePieceProcessor(model_file=args.model, num_threads=1)
        if args.shape == "call":
            return lambda ls: [sp.encode(line) for line in ls]
        return lambda ls: sp.encode(ls, num_threads=1)

    return {"bytepair": ours, "spm": peer}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--peer", choices=["fastokens", "spm"], required=True)
    ap.add_argument("--shape", choices=["call", "batch", "bulk"], default="bulk",
                    help="one call a document, a batch to lists (spm only), a batch to arrays")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--encoding", default="cl100k_base", help="fastokens: the tiktoken encoding")
    ap.add_argument("--corpus", default="code", help="fastokens: bench/corpus/NAME.txt")
    ap.add_argument("--mb", type=float, default=8, help="fastokens: MiB of A and of B")
    ap.add_argument("--model", help="spm: the .model file")
    ap.add_argument("--a", help="spm: text A, one line a document")
    ap.add_argument("--b", help="spm: text B")
    args = ap.parse_args()
    import numpy  # noqa: F401  (imported before anything is timed)

    peer_module = "fastokens" if args.peer == "fastokens" else "sentencepiece"
    try:
        __import__(peer_module)
    except ImportError:
        sys.exit(f"{peer_module} is not installed: pip install {peer_module}")
    with tempfile.TemporaryDirectory(prefix="bytepair-interleaved-") as tmp:
        run(args, Path(tmp))


def run(args: argparse.Namespace, tmp: Path) -> None:
    """The rounds and the table (`tmp`: where the peer's plain rank file is written)."""
    if args.peer == "fastokens":
        if args.shape == "batch":
            sys.exit("--shape batch is for --peer spm")
        a, b = halves(args.corpus, args.mb)
        docs_a, docs_b = documents(a, 8192), documents(b, 8192)
        tools = bpe_tools(args, tmp)
        what = f"{args.encoding}, {args.corpus}, {args.mb:g} MiB + {args.mb:g} MiB in 8 KiB documents"
    else:
        if not (args.model and args.a and args.b):
            sys.exit("--peer spm needs --model, --a and --b")
        docs_a, docs_b = lines_of(args.a), lines_of(args.b)
        tools = spm_tools(args)
        what = f"{Path(args.model).name}, {len(docs_a):,} + {len(docs_b):,} lines"
    passes = (("first", docs_a), ("unseen", docs_b), ("repeated", docs_b))
    names = list(tools)
    ratios: dict[str, list[float]] = {p: [] for p, _ in passes}
    print(f"{what}; shape {args.shape}; {args.rounds} rounds; peer / bytepair CPU time", flush=True)
    for r in range(args.rounds):
        spent: dict[tuple[str, str], float] = {}
        digests: dict[str, str] = {}
        for name in names if r % 2 == 0 else names[::-1]:
            fn = tools[name]()
            out = None
            for p, docs in passes:
                out = None
                gc.collect()
                t = time.process_time()
                out = fn(docs)
                spent[name, p] = time.process_time() - t
            if r == 0:
                digests[name] = ids_hash(out)
            del fn, out
        if r == 0 and len(set(digests.values())) != 1:
            sys.exit(f"the tools' ids differ: {digests}")
        for p, _ in passes:
            ratios[p].append(spent[names[1], p] / spent["bytepair", p])
    for p, v in ratios.items():
        q = statistics.quantiles(v, n=4) if len(v) > 1 else [v[0]] * 3
        print(f"  {p:8} {statistics.median(v):.3f}  (quartiles {q[0]:.3f}-{q[2]:.3f})")


if __name__ == "__main__":
    main()
