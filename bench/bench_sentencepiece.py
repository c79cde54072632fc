#!/usr/bin/env python3
"""SentencePiece models side by side with the exact peers, each in its own pinned process.

    python bench/bench_sentencepiece.py                        # bench/corpus/mixed.txt if built
    python bench/bench_sentencepiece.py --mb 2 --rounds 3 --tools bytepair,spm,tokie,kitoken,hf
    python bench/bench_sentencepiece.py --only load

Models: a Unigram and a BPE model trained by sentencepiece on the first `--train-mb` MB of the
corpus (byte_fallback on, as Llama's), at `--vocab`. Tools: `sentencepiece` (the owner),
bytepair (the `.model`), kitoken (the `.model`), tokie and Hugging Face `tokenizers` (the
tokenizer.json bytepair writes for the model, which those libraries read as transformers'
conversion would). Text: two slices of `--mb` MB from the end of the corpus (not trained on),
A then B, each cut into its lines (documents). One fresh process per (tool, shape, model),
pinned with taskset to one core, RAYON_NUM_THREADS / OMP_NUM_THREADS 1, times three passes in
CPU seconds of the process (time.process_time: waits on a busy machine left out):

  first     A, in a process that has encoded nothing (caches cold)
  unseen    B, after A (caches warmed on the same kind of text)
  repeated  B again

The previous pass's ids are freed and `gc.collect()` runs before each pass, so that every tool
starts each pass with the collector's counts at zero.

Shapes: "call" = one call per line, ids as a list; "batch" = one batch call, a list of lists
(spm encode(lines, num_threads=1), bytepair encode_batch, kitoken encode_all, tokie and HF
encode_batch(..).ids); "bulk" = the batch as flat arrays where the tool has such a call
(bytepair encode_batch_numpy, tokie encode_batch_flat), the batch's lists otherwise.
Each figure is the best of `--rounds` rounds (tools alternate within a round). Every tool's ids
on B are checked against sentencepiece's (a hash): the "exact" column. Ratio = bytepair's
speed / the tool's (above 1: bytepair faster), per pass, same shape.

`--only load`: loading a Unigram `.model` of `--load-pieces` pieces (the trained model with
made-up pieces appended), best of 5 in one process per tool, spm against bytepair.
Not a test: it prints figures and ratios, nothing is asserted.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = ["bytepair", "spm", "kitoken", "tokie", "hf"]
SHAPES = ["call", "batch", "bulk"]
MODELS = ["unigram", "bpe"]


def ids_hash(lists: Any) -> str:
    """A hash of every line's ids, whatever shape they came in: a list of lists, or
    ("offsets" | "lengths", flat ids, offsets or lengths)."""
    import numpy as np

    h = hashlib.sha256()
    if isinstance(lists, tuple):
        how, ids, cuts = lists
        ids = np.asarray(ids, dtype=np.uint32)
        cuts = np.asarray(cuts, dtype=np.int64)
        ends = cuts[1:] if how == "offsets" else np.cumsum(cuts)
        start = 0
        for end in ends.tolist():
            h.update(ids[start:end].tobytes() + b"|")
            start = end
    else:
        for ids in lists:
            h.update(np.asarray(ids, dtype=np.uint32).tobytes() + b"|")
    return h.hexdigest()[:16]


def encoder(tool: str, shape: str, model: str, hf_json: str) -> Any:
    """A function lines -> ids for `tool` in `shape`."""
    if tool == "spm":
        import sentencepiece as spm

        sp = spm.SentencePieceProcessor(model_file=model, num_threads=1)
        if shape == "call":
            return lambda lines: [sp.encode(line) for line in lines]
        return lambda lines: sp.encode(lines, num_threads=1)
    if tool == "bytepair":
        import bytepair

        tok = bytepair.load(model)
        if shape == "call":
            return lambda lines: [tok.encode(line) for line in lines]
        if shape == "bulk":
            return lambda lines: ("offsets", *tok.encode_batch_numpy(lines, num_threads=1))
        return lambda lines: tok.encode_batch(lines, num_threads=1)
    if tool == "kitoken":
        import kitoken

        k = kitoken.Kitoken.from_sentencepiece_file(model)
        if shape == "call":
            return lambda lines: [k.encode(line) for line in lines]
        return lambda lines: k.encode_all(lines)
    if tool == "tokie":
        import tokie

        t = tokie.Tokenizer.from_json(hf_json)
        if shape == "call":
            return lambda lines: [t.encode(line, add_special_tokens=False).ids for line in lines]
        if shape == "bulk":
            return lambda lines: ("lengths", *t.encode_batch_flat(lines, add_special_tokens=False))
        return lambda lines: [e.ids for e in t.encode_batch(lines, add_special_tokens=False)]
    if tool == "hf":
        from tokenizers import Tokenizer

        t = Tokenizer.from_file(hf_json)
        if shape == "call":
            return lambda lines: [t.encode(line, add_special_tokens=False).ids for line in lines]
        return lambda lines: [e.ids for e in t.encode_batch(lines, add_special_tokens=False)]
    raise SystemExit(f"unknown tool {tool}")


def lines_of(path: str) -> list[str]:
    with open(path, encoding="utf-8") as f:
        return [line for line in f.read().split("\n") if line]


def worker(args: argparse.Namespace) -> None:
    a, b = lines_of(args.a), lines_of(args.b)
    # numpy is imported before anything is timed: a tool's first array call would otherwise
    # count its import (about 0.15 CPU s here, as long as a first pass over 2 MB)
    import numpy  # noqa: F401

    t0 = time.process_time()
    fn = encoder(args.tool, args.shape, args.model, args.hf_json)
    load = time.process_time() - t0
    times = []
    out = None
    for text in (a, b, b):
        out = None  # the previous pass's ids are freed before the next is timed
        # Each pass starts with the collector's counts at zero, for every tool. Otherwise a full
        # collection (one in every 70,000 new containers, about 15-20 ms here) falls in
        # whichever pass the tool's imports and earlier passes put it in: bytepair's unseen pass
        # and sentencepiece's repeated pass in the call shape.
        gc.collect()
        t0 = time.process_time()
        out = fn(text)
        times.append(time.process_time() - t0)
    print(json.dumps({"load": load, "times": times, "hash": ids_hash(out)}))


def load_worker(args: argparse.Namespace) -> None:
    best = float("inf")
    for _ in range(5):
        t0 = time.process_time()
        if args.tool == "spm":
            import sentencepiece as spm

            m = spm.SentencePieceProcessor(model_file=args.model)
            n = m.get_piece_size()
        else:
            import bytepair

            n = len(bytepair.load(args.model))
        best = min(best, time.process_time() - t0)
    print(json.dumps({"load": best, "pieces": n}))


def run(argv: list[str], timeout: float) -> dict[str, Any] | str:
    env = dict(os.environ, RAYON_NUM_THREADS="1", OMP_NUM_THREADS="1")
    cmd = ["taskset", "-c", "0", sys.executable, __file__, *argv]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout"
    if p.returncode != 0:
        return (p.stderr.strip().splitlines() or ["failed"])[-1][:80]
    return json.loads(p.stdout.strip().splitlines()[-1])


def big_model(base: str, pieces: int, path: str) -> None:
    """A Unigram .model of `pieces` pieces: `base`'s, then made-up ones appended (pieces are a
    repeated field, and fields may come in any order: the appended ones take the next ids)."""
    with open(base, "rb") as f:
        data = f.read()
    import bytepair

    n = len(bytepair.load(base))
    chunks = []
    i = 0
    while n < pieces:
        text = f"\u2581\u00b5{i:x}".encode()
        i += 1
        body = b"\x0a" + bytes([len(text)]) + text + b"\x15" + struct.pack("<f", -12.5 - (i % 1000) * 1e-3)
        chunks.append(b"\x0a" + bytes([len(body)]) + body)
        n += 1
    with open(path, "wb") as f:
        f.write(data + b"".join(chunks))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=os.path.join(HERE, "corpus", "mixed.txt"))
    ap.add_argument("--mb", type=float, default=2.0, help="size of each of A and B")
    ap.add_argument("--train-mb", type=float, default=10.0)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--only", choices=["encode", "load"])
    ap.add_argument("--load-pieces", type=int, default=256000)
    ap.add_argument("--keep", metavar="DIR", help="train models and write texts into DIR (reused when present)")
    ap.add_argument("--json", metavar="OUT")
    # worker mode
    ap.add_argument("--worker", choices=["encode", "load"])
    ap.add_argument("--tool")
    ap.add_argument("--shape")
    ap.add_argument("--model")
    ap.add_argument("--hf-json")
    ap.add_argument("--a")
    ap.add_argument("--b")
    args = ap.parse_args()
    if args.worker == "encode":
        return worker(args)
    if args.worker == "load":
        return load_worker(args)
    if not os.path.exists(args.corpus):
        sys.exit(f"{args.corpus}: no corpus (python bench/make_corpus.py, or --corpus FILE)")
    tmp_ctx = tempfile.TemporaryDirectory()
    tmp = args.keep or tmp_ctx.name
    os.makedirs(tmp, exist_ok=True)
    prepare(args, tmp)
    out: dict[str, Any] = {}
    if args.only in (None, "encode"):
        out["encode"] = encode_table(args, tmp)
    if args.only in (None, "load"):
        out["load"] = load_table(args, tmp)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    tmp_ctx.cleanup()


def prepare(args: argparse.Namespace, tmp: str) -> None:
    import sentencepiece as spm

    import bytepair
    from bytepair.formats.hf_spm_write import save_hf_json

    size = os.path.getsize(args.corpus)
    part = int(args.mb * 1e6)
    with open(args.corpus, "rb") as f:
        if not os.path.exists(os.path.join(tmp, "train.txt")):
            with open(os.path.join(tmp, "train.txt"), "wb") as g:
                g.write(f.read(int(args.train_mb * 1e6)))
        f.seek(max(0, size - 2 * part - 4096))
        raw = f.read()
    raw = raw[raw.index(b"\n") + 1 :].decode("utf-8", "replace")
    cut = raw.index("\n", len(raw) // 2) + 1
    for name, text in (("a.txt", raw[:cut]), ("b.txt", raw[cut:])):
        with open(os.path.join(tmp, name), "w", encoding="utf-8") as g:
            g.write(text)
    for kind in MODELS:
        prefix = os.path.join(tmp, kind)
        if not os.path.exists(prefix + ".model"):
            spm.SentencePieceTrainer.train(
                input=os.path.join(tmp, "train.txt"), model_prefix=prefix, model_type=kind,
                vocab_size=args.vocab, byte_fallback=True, minloglevel=2,
                num_threads=os.cpu_count() or 1, max_sentence_length=1 << 16,
            )
        if not os.path.exists(prefix + ".json"):
            save_hf_json(bytepair.load(prefix + ".model"), prefix + ".json")


def encode_table(args: argparse.Namespace, tmp: str) -> dict[str, Any]:
    tools = args.tools.split(",")
    shapes = args.shapes.split(",")
    a, b = os.path.join(tmp, "a.txt"), os.path.join(tmp, "b.txt")
    nbytes = [len(open(p, encoding="utf-8").read().replace("\n", "").encode()) for p in (a, b, b)]
    lines = len(lines_of(b))
    print(f"A {nbytes[0] / 1e6:.2f} MB, B {nbytes[1] / 1e6:.2f} MB ({lines:,} lines); vocab {args.vocab}; "
          f"one core, CPU time, best of {args.rounds} rounds")
    best: dict[tuple[str, str, str], dict[str, Any]] = {}
    for r in range(args.rounds):
        for kind in args.models.split(","):
            for shape in shapes:
                order = tools if r % 2 == 0 else tools[::-1]
                for tool in order:
                    res = run(["--worker", "encode", "--tool", tool, "--shape", shape,
                               "--model", os.path.join(tmp, kind + ".model"),
                               "--hf-json", os.path.join(tmp, kind + ".json"), "--a", a, "--b", b], 1800)
                    key = (kind, shape, tool)
                    if isinstance(res, str):
                        best.setdefault(key, {"error": res})
                        continue
                    old = best.get(key)
                    if old is None or "error" in old:
                        best[key] = res
                    else:
                        old["times"] = [min(x, y) for x, y in zip(old["times"], res["times"])]
                        old["load"] = min(old["load"], res["load"])
    rows = {}
    for kind in args.models.split(","):
        print(f"\n{kind}: MB/s of first / unseen / repeated (ratio = bytepair / tool)")
        print(f"{'shape':6} {'tool':9} {'first':>7} {'unseen':>7} {'repeat':>7}  exact  {'ratios':>20}")
        for shape in shapes:
            ref = best.get((kind, shape, "spm"), {}).get("hash")
            mine = best.get((kind, shape, "bytepair"))
            for tool in tools:
                res = best.get((kind, shape, tool))
                if res is None or "error" in res:
                    print(f"{shape:6} {tool:9} {'(' + (res or {}).get('error', 'not run') + ')'}")
                    continue
                speeds = [n / 1e6 / t for n, t in zip(nbytes, res["times"])]
                ratios = ""
                if mine and "error" not in mine and tool != "bytepair":
                    ratios = " ".join(f"{t / m:5.2f}" for m, t in zip(mine["times"], res["times"]))
                exact = "yes" if res["hash"] == ref else ("?" if ref is None else "NO")
                print(f"{shape:6} {tool:9} " + " ".join(f"{s:7.1f}" for s in speeds) + f"  {exact:5}  {ratios:>20}")
                rows[f"{kind}/{shape}/{tool}"] = {"mb_s": speeds, "exact": exact, **res}
    return rows


def load_table(args: argparse.Namespace, tmp: str) -> dict[str, Any]:
    big = os.path.join(tmp, "big.model")
    big_model(os.path.join(tmp, "unigram.model"), args.load_pieces, big)
    res = {}
    for r in range(args.rounds):
        for tool in (["spm", "bytepair"] if r % 2 == 0 else ["bytepair", "spm"]):
            got = run(["--worker", "load", "--tool", tool, "--model", big], 600)
            if isinstance(got, dict) and (tool not in res or got["load"] < res[tool]["load"]):
                res[tool] = got
    if "spm" in res and "bytepair" in res:
        s, b = res["spm"]["load"], res["bytepair"]["load"]
        print(f"\nload {res['spm']['pieces']:,} pieces (CPU, best): spm {s * 1e3:.1f} ms, "
              f"bytepair {b * 1e3:.1f} ms, ratio {s / b:.2f}")
    return res


if __name__ == "__main__":
    main()
