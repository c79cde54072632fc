#!/usr/bin/env python3
"""Unigram training: bytepair.train_unigram side by side with sentencepiece, on one corpus file.

Both tools train on the same file: the first --mb MB of the corpus (default: all but the
held-out part), cut after a newline and written to a temporary file. The held-out text is the
last --held-mb MB (default 2), starting after a newline; the two never overlap.

Each training run is a fresh child process (`python bench/bench_unigram_train.py --child
spm|bytepair ...`), pinned with `taskset -c --cores` when given, that trains, saves the
.model and exits. The parent takes from `os.wait4` of that child alone its wall time
(interpreter start-up and imports included), user+sys CPU seconds and peak RSS; the child also
reports the wall time of its train call (saving the .model included). The order of the two
tools alternates over --rounds rounds (spm first in odd rounds); each round is printed, then
the best: the fastest round's wall and CPU time, and the largest peak RSS seen.

    sentencepiece  SentencePieceTrainer.train(input=FILE, model_type=--model-type, vocab_size=V,
                   num_threads=T, input_sentence_size=0 (all lines), max_sentence_length=L,
                   normalization_rule_name=N, minloglevel=2); its other options left at their
                   defaults
    bytepair       bytepair.train_sentencepiece([FILE], vocab_size=V, model_type=..., normalization=N,
                   num_threads=T), then .save(path); other options left at their defaults
                   (the same as sentencepiece's)

Held-out compression: bytes per token, the UTF-8 bytes of the held-out lines (newlines not
counted) over the number of ids, both models encoded by sentencepiece
(`SentencePieceProcessor.encode(lines)`). bytepair's own `encode_batch` on its model is checked
to give the same ids as sentencepiece's (and on sentencepiece's model too); a difference is
reported, not fatal.

Normalization: "identity" by default, so that both tools see the same text. With "nmt_nfkc"
(or "nfkc"), bytepair's table is built from Python's unicodedata; it is close to, but not
identical to, the one compiled into sentencepiece, so the two models see slightly different
text.

sentencepiece skips training lines longer than max_sentence_length bytes (its default is 4192);
the default here, 1 << 20, keeps them; the number of lines over the limit is printed.

Floors (from the issue), at vocab 32000 on the 100 MiB corpus, same threads and cores:
  bytepair wall <= 0.5 x spm,  peak RSS <= 0.5 x spm,  held-out bytes/token >= 0.99 x spm.
They are printed as PASS/FAIL on every run; on a smaller slice they are only indicative.

Examples:
  python bench/bench_unigram_train.py --mb 5 --vocab 8000                 # quick check
  python bench/bench_unigram_train.py --mb 30 --threads 2 --cores 0,1
  python bench/bench_unigram_train.py --threads 2 --cores 0,1 --rounds 2 --json bench/out/unigram.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unicodedata
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOOLS = ["spm", "bytepair"]
NORMALIZATIONS = ["identity", "nmt_nfkc", "nfkc"]
EXIT_IMPORT = 3
MB = 1_000_000


# --------------------------------------------------------------------------------------------
# Child side: one training run; one JSON line on stdout
# --------------------------------------------------------------------------------------------


def child(args: argparse.Namespace) -> int:
    try:
        if args.child == "spm":
            import sentencepiece as lib
        elif args.child == "bytepair":
            import bytepair as lib
        else:
            raise ValueError(args.child)
    except Exception as e:  # ImportError, or a broken build
        print(f"import failed: {type(e).__name__}: {e}", file=sys.stderr)
        return EXIT_IMPORT
    version = getattr(lib, "__version__", "?")
    model = args.model
    t0 = time.perf_counter()
    if args.child == "spm":
        prefix = model[: -len(".model")]
        lib.SentencePieceTrainer.train(
            input=str(args.corpus),
            model_prefix=prefix,
            vocab_size=args.vocab,
            model_type=args.model_type,
            num_threads=args.threads,
            input_sentence_size=0,
            max_sentence_length=args.max_sentence_length,
            normalization_rule_name=args.normalization,
            minloglevel=2,
        )
        seconds = time.perf_counter() - t0
        pieces = lib.SentencePieceProcessor(model_file=model).get_piece_size()
        extra: dict = {}
    else:
        tok = lib.train_sentencepiece(
            [str(args.corpus)], vocab_size=args.vocab, model_type=args.model_type,
            normalization=args.normalization, num_threads=args.threads,
        )
        tok.save(model)
        seconds = time.perf_counter() - t0
        pieces = tok.vocab_size
        tr = tok.training or {}
        extra = {"phases": tr.get("seconds"), "seed_pieces": tr.get("seed_pieces"),
                 "distinct_words": tr.get("distinct_words"), "em_rounds": len(tr.get("rounds") or [])}
    print(json.dumps({"train_seconds": seconds, "pieces": pieces, "version": version,
                      "self_peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, **extra}))
    return 0


# --------------------------------------------------------------------------------------------
# Parent side
# --------------------------------------------------------------------------------------------


def cut_slices(corpus: Path, mb: float | None, held_mb: float, train_path: str) -> tuple[int, bytes]:
    """Writes the training slice (cut after a newline) to train_path; returns its size and the
    held-out bytes (the corpus's last held_mb MB, from the first line start)."""
    size = corpus.stat().st_size
    held_n = int(held_mb * MB)
    if held_n >= size:
        raise SystemExit(f"--held-mb {held_mb} is not smaller than the corpus ({size / MB:.1f} MB)")
    with open(corpus, "rb") as f:
        f.seek(size - held_n)
        held = f.read()
        nl = held.find(b"\n")
        held = held[nl + 1 :] if nl >= 0 else b""
        held_start = size - len(held)
        limit = held_start if mb is None else int(mb * MB)
        if limit > held_start:
            raise SystemExit(f"--mb {mb} overlaps the held-out text: at most {held_start / MB:.1f} MB "
                             f"of this corpus with --held-mb {held_mb}")
        f.seek(0)
        train = f.read(limit)
    cut = train.rfind(b"\n")
    train = train[: cut + 1] if cut >= 0 else train
    with open(train_path, "wb") as out:
        out.write(train)
    return len(train), held


def long_lines(path: str, limit: int) -> tuple[int, int]:
    """Lines of the file longer than limit bytes (newline excluded): how many, and their bytes."""
    n = nbytes = 0
    with open(path, "rb") as f:
        for line in f:
            k = len(line.rstrip(b"\n"))
            if k > limit:
                n += 1
                nbytes += k
    return n, nbytes


def run_child(tool: str, args: argparse.Namespace, train_path: str, model: str) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", tool, "--corpus", train_path,
           "--vocab", str(args.vocab), "--threads", str(args.threads), "--normalization", args.normalization,
           "--max-sentence-length", str(args.max_sentence_length), "--model", model,
           "--model-type", args.model_type]
    if args.cores:
        cmd = ["taskset", "-c", args.cores] + cmd  # taskset execs: same process, same rusage
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        timer = threading.Timer(args.timeout, p.kill)
        timer.start()
        try:
            _, status, ru = os.wait4(p.pid, 0)  # this child's rusage alone
        finally:
            timer.cancel()
        wall = time.perf_counter() - t0
        code = os.waitstatus_to_exitcode(status)
        p.returncode = code
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if code == -9 and wall >= args.timeout:
        return {"error": f"timed out after {args.timeout:.0f} s"}
    if code == EXIT_IMPORT:
        return {"error": "import failed: " + (stderr.strip().splitlines() or ["?"])[-1]}
    if code != 0:
        tail = "\n    ".join(stderr.strip().splitlines()[-5:])
        return {"error": f"exit code {code}:\n    {tail}"}
    report = json.loads(stdout.strip().splitlines()[-1])
    report.update(wall=wall, cpu=ru.ru_utime + ru.ru_stime, user=ru.ru_utime, sys=ru.ru_stime,
                  peak_kb=max(ru.ru_maxrss, report.pop("self_peak_kb", 0)))
    return report


def held_out(models: dict[str, str], held: bytes, threads: int) -> dict[str, dict]:
    import sentencepiece as spm

    try:
        import bytepair
    except Exception as e:  # noqa: BLE001
        bytepair = None
        print(f"  (bytepair does not import: {e}; its encode_batch is not checked)")
    lines = [line for line in held.decode("utf-8").split("\n") if line]
    nbytes = sum(len(line.encode("utf-8")) for line in lines)
    out: dict[str, dict] = {}
    for tool, path in models.items():
        sp = spm.SentencePieceProcessor(model_file=path)
        ids = sp.encode(lines, num_threads=threads)
        ntok = sum(len(x) for x in ids)
        r = {"lines": len(lines), "bytes": nbytes, "tokens": ntok, "bytes_per_token": nbytes / ntok,
             "unk": sum(x.count(sp.unk_id()) for x in ids)}
        if bytepair is not None:
            tok = bytepair.load(path)
            mine = tok.encode_batch(lines, num_threads=threads)
            mine = [list(x) for x in mine]
            diff = [i for i, (a, b) in enumerate(zip(ids, mine)) if list(a) != b]
            r["bytepair_same_ids"] = not diff and len(mine) == len(ids)
            r["bytepair_differing_lines"] = len(diff)
            if diff:
                i = diff[0]
                r["first_difference"] = {"line": lines[i][:200], "spm": list(ids[i])[:40], "bytepair": mine[i][:40]}
        out[tool] = r
    return out


def verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("PASS" if ok else "FAIL")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=HERE / "corpus" / "mixed.txt",
                    help="corpus file (default bench/corpus/mixed.txt; build it with bench/make_corpus.py)")
    ap.add_argument("--mb", type=float, default=None,
                    help="train on the first MB (10^6 bytes) of the corpus (default: all but the held-out part)")
    ap.add_argument("--held-mb", type=float, default=2.0, help="held-out text: the corpus's last MB (default 2)")
    ap.add_argument("--vocab", type=int, default=32000, help="vocab_size (default 32000)")
    ap.add_argument("--model-type", choices=("unigram", "bpe"), default="unigram",
                    help="unigram (default; the issue's floors) or bpe (SentencePiece BPE: no floor set)")
    ap.add_argument("--threads", type=int, default=2, help="num_threads for both tools (default 2)")
    ap.add_argument("--cores", default=None, help='pin each child with taskset -c CORES, e.g. "0,1"')
    ap.add_argument("--normalization", choices=NORMALIZATIONS, default="identity",
                    help="normalization rule for both (default identity; nmt_nfkc/nfkc tables differ slightly)")
    ap.add_argument("--max-sentence-length", type=int, default=1 << 20,
                    help="sentencepiece's max_sentence_length in bytes (default 1<<20, so it keeps long lines)")
    ap.add_argument("--rounds", type=int, default=1, help="rounds, order of the tools alternating (default 1)")
    ap.add_argument("--timeout", type=float, default=3600.0, help="per child, in seconds (default 3600)")
    ap.add_argument("--keep", type=Path, default=None, help="copy the two .model files into this folder")
    ap.add_argument("--json", type=Path, default=None, help="also write the results to this JSON file")
    ap.add_argument("--child", choices=TOOLS, help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.child:
        return child(args)
    if not args.corpus.is_file():
        ap.error(f"corpus {args.corpus} not found: build it with `python bench/make_corpus.py` (see its --help)")
    if args.cores and shutil.which("taskset") is None:
        ap.error("--cores needs taskset (util-linux)")

    with tempfile.TemporaryDirectory(prefix="bench_unigram_") as tmp:
        train_path = os.path.join(tmp, "train.txt")
        train_bytes, held = cut_slices(args.corpus, args.mb, args.held_mb, train_path)
        n_long, long_bytes = long_lines(train_path, args.max_sentence_length)
        print(f"corpus {args.corpus} ({args.corpus.stat().st_size / MB:.1f} MB): training on the first "
              f"{train_bytes / MB:.1f} MB, held out the last {len(held) / MB:.1f} MB")
        print(f"vocab_size {args.vocab}, normalization {args.normalization}, num_threads {args.threads}, "
              f"cores {args.cores or 'not pinned'}, {args.rounds} round(s)")
        print(f"{os.cpu_count()} CPUs, Python {platform.python_version()}, {platform.machine()}")
        print(f"sentencepiece max_sentence_length {args.max_sentence_length} bytes: {n_long} training lines "
              f"({long_bytes / MB:.2f} MB) are longer and are dropped by sentencepiece only")
        if args.normalization != "identity":
            print(f"note: bytepair's {args.normalization} table is built from Python's unicodedata "
                  f"(Unicode {unicodedata.unidata_version}); sentencepiece's is compiled in: "
                  "close, not identical, so the tools see slightly different text")
        print(flush=True)

        models = {tool: os.path.join(tmp, f"{tool}.model") for tool in TOOLS}
        rounds: list[dict[str, dict]] = []
        for i in range(args.rounds):
            order = TOOLS if i % 2 == 0 else TOOLS[::-1]
            res: dict[str, dict] = {}
            for tool in order:
                r = res[tool] = run_child(tool, args, train_path, models[tool])
                if "error" in r:
                    print(f"  round {i + 1} {tool:9} {r['error']}", flush=True)
                else:
                    print(f"  round {i + 1} {tool:9} wall {r['wall']:8.2f} s (train call {r['train_seconds']:.2f} s)"
                          f"  CPU {r['cpu']:8.2f} s  peak RSS {r['peak_kb'] / 1024:8.0f} MB  {r['pieces']} pieces",
                          flush=True)
            rounds.append(res)
            if any("error" in r for r in res.values()):
                break

        best: dict[str, dict] = {}
        for tool in TOOLS:
            ok = [r[tool] for r in rounds if tool in r and "error" not in r[tool]]
            if not ok:
                best[tool] = next(r[tool] for r in rounds if tool in r)
                continue
            b = dict(min(ok, key=lambda r: r["wall"]))
            b["peak_kb"] = max(r["peak_kb"] for r in ok)
            best[tool] = b
        ready = all("error" not in best[t] for t in TOOLS)

        comp: dict[str, dict] = {}
        if ready:
            print("\nheld-out compression (encoded by sentencepiece)...", flush=True)
            comp = held_out(models, held, args.threads)
            for tool in TOOLS:
                best[tool]["held_out"] = comp[tool]
            if args.keep:
                args.keep.mkdir(parents=True, exist_ok=True)
                for tool, path in models.items():
                    shutil.copy(path, args.keep / f"{tool}.model")

    # table
    print()
    header = (f"{'tool':9} {'version':>8} {'wall s':>8} {'train s':>8} {'CPU s':>8} {'peak RSS MB':>12}"
              f" {'pieces':>7} {'held-out B/tok':>15}")
    print(f"best of {len(rounds)} round(s): fastest wall, largest peak RSS")
    print(header)
    print("-" * len(header))
    for tool in TOOLS:
        r = best[tool]
        if "error" in r:
            print(f"{tool:9} {r['error'].splitlines()[0]}")
            continue
        bpt = f"{r['held_out']['bytes_per_token']:.4f}" if "held_out" in r else ""
        print(f"{tool:9} {str(r['version']):>8} {r['wall']:8.2f} {r['train_seconds']:8.2f} {r['cpu']:8.2f}"
              f" {r['peak_kb'] / 1024:12.0f} {r['pieces']:7d} {bpt:>15}")

    floors: list[tuple[str, bool | None]] = []
    ratios: dict[str, float] = {}
    if ready:
        bp, sp = best["bytepair"], best["spm"]
        ratios = {
            "wall": bp["wall"] / sp["wall"],
            "train_call": bp["train_seconds"] / sp["train_seconds"],
            "cpu": bp["cpu"] / sp["cpu"],
            "peak_rss": bp["peak_kb"] / sp["peak_kb"],
            "bytes_per_token": bp["held_out"]["bytes_per_token"] / sp["held_out"]["bytes_per_token"],
        }
        print(f"\nbytepair / spm: wall {ratios['wall']:.3f} (train call {ratios['train_call']:.3f}), "
              f"CPU {ratios['cpu']:.3f}, peak RSS {ratios['peak_rss']:.3f}, "
              f"held-out bytes/token {ratios['bytes_per_token']:.4f}")
        for tool in TOOLS:
            h = comp[tool]
            same = h.get("bytepair_same_ids")
            if same is None:
                continue
            msg = "same ids" if same else f"DIFFERENT ids on {h['bytepair_differing_lines']} of {h['lines']} lines"
            print(f"bytepair encode_batch vs sentencepiece on {tool}'s model: {msg}")
            if not same:
                print(f"  first: {json.dumps(h['first_difference'], ensure_ascii=False)[:600]}")
        if best["bytepair"].get("phases"):
            print(f"bytepair phases (fastest round): {best['bytepair']['phases']}, "
                  f"{best['bytepair'].get('seed_pieces')} seed pieces, {best['bytepair'].get('em_rounds')} rounds")
        floors = [
            ("bytepair wall <= 0.5 x spm", ratios["wall"] <= 0.5),
            ("bytepair peak RSS <= 0.5 x spm", ratios["peak_rss"] <= 0.5),
            ("bytepair held-out bytes/token >= 0.99 x spm", ratios["bytes_per_token"] >= 0.99),
        ]
    if args.model_type != "unigram":
        floors = []  # the issue sets floors for Unigram training only
    else:
        print("\nfloors (set for the 100 MiB corpus at vocab 32000):")
        for label, ok in floors or [("(no ratios: a tool failed)", None)]:
            print(f"  {verdict(ok):4}  {label}")

    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({
            "corpus": str(args.corpus), "train_bytes": train_bytes, "held_out_bytes": len(held),
            "vocab": args.vocab, "model_type": args.model_type, "threads": args.threads, "cores": args.cores, "normalization": args.normalization,
            "max_sentence_length": args.max_sentence_length, "long_lines": n_long, "cpus": os.cpu_count(),
            "rounds": rounds, "best": best, "ratios": ratios, "floors": {label: ok for label, ok in floors},
        }, indent=2) + "\n")
    if not ready:
        return 2
    return 1 if any(ok is False for _, ok in floors) else 0


if __name__ == "__main__":
    sys.exit(main())
