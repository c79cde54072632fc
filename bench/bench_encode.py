#!/usr/bin/env python3
"""Encoding benchmark: bytepair side by side with tiktoken and other exact encoders, in one run.

Sections (each prints a table; ratios are bytepair / peer, higher is better for bytepair):

  single   single-thread encode_ordinary throughput, MB/s of UTF-8, on English prose, source
           code and multilingual text (bench/corpus/*.txt), for cl100k_base and o200k_base.
           Each corpus sample (--mb MiB) is cut at newlines into documents of about --doc-kb
           KiB, encoded one call per document; the time is the calling thread's CPU time
           (thread_time), so that other processes on a busy machine count less. "cold": best
           of --repeat first passes, each by an encoder in its cold state (bytepair's piece
           cache emptied, a new object for peers that may cache); "warm": best of --repeat
           passes after one untimed pass. Every peer's ids are compared with tiktoken's on
           every document: "exact" or not.
  threads  wall time of encode_batch over the same documents with 1 and 2 threads, and of one
           large text (all documents joined) with num_threads=1 and 2, cold; tiktoken's
           encode_ordinary_batch beside it; "cores" = process CPU time / wall time.
  adversarial  one repeated letter, digits, spaces, and CJK without spaces, at 156 KB, 1.25 MB
           and 10 MB (8x steps), each library (tiktoken in a child process with a timeout; older
           tiktoken versions were quadratic in the length of a piece), and bytepair also at 80 MB;
           "8x" is the time at 10 MB over the time at 1.25 MB (linear: about 8), best of --repeat
           calls each, and "10->80 MB" the same step past the last-level cache.
  load     time to load o200k_base and resident memory added by it, each library in a fresh
           process (bytepair: get_encoding from the shipped gzip file, sha256 checked; tiktoken:
           load_tiktoken_bpe from the decompressed file with expected_hash, then Encoding()).

Peers, built offline from the rank files bytepair ships (no download):
  tiktoken    tiktoken.Encoding(pat_str, mergeable_ranks, special_tokens): the reference
  riptoken    riptoken.CoreBPE(ranks, special_tokens, pattern).encode_ordinary
  bpe-openai  bpe_openai._bindings.tokenizer_for_encoding(name).encode (its own embedded data)
  quicktok    quicktok.Tokenizer(name, "").encode_ordinary (its own bundled data)
  kitoken     kitoken.Kitoken.from_tiktoken_file(<rank file>).encode
  tokie       tokie.Tokenizer.from_json(<tokenizer.json exported here>).encode_bytes
  hf          tokenizers.Tokenizer.from_file(<same tokenizer.json>).encode(..).ids
A peer that does not import is reported as skipped. The tokenizer.json export writes the
byte-level vocabulary and one merge per token (the last merge BPE makes on the token's own
bytes), ordered by the token's rank, with the split pattern in its original, non-possessive
form and ignore_merges (whole-piece lookup first, as tiktoken does).

Floors (from the issue), printed as PASS/FAIL: single-thread >= 3x tiktoken and >= 1.2x every
other exact peer on each corpus and encoding; 2 threads >= 1.7x bytepair's single thread on
the batch. These are benchmarks, not tests.

  python bench/bench_encode.py                      # everything, 4 MiB per corpus
  python bench/bench_encode.py --only single --mb 2 --repeat 5
  python bench/bench_encode.py --peers tiktoken,riptoken --json bench/out/encode.json
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CORPORA = ["prose", "code", "multilingual"]
ENCODINGS = ["cl100k_base", "o200k_base"]
PEERS = ["tiktoken", "riptoken", "bpe-openai", "quicktok", "kitoken", "tokie", "hf"]

# tiktoken's definitions, written out (the same as tests/test_encodings.py).
PATTERNS = {
    "cl100k_base": r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
    "o200k_base": "|".join(
        [
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]
    ),
}
# The same patterns without possessive quantifiers, for engines that read "++" differently.
PLAIN_PATTERNS = {
    "cl100k_base": r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
    "o200k_base": PATTERNS["o200k_base"],
}
SPECIALS = {
    "cl100k_base": {
        "<|endoftext|>": 100257,
        "<|fim_prefix|>": 100258,
        "<|fim_middle|>": 100259,
        "<|fim_suffix|>": 100260,
        "<|endofprompt|>": 100276,
    },
    "o200k_base": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
}
HASHES = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}


def data_dir() -> Path:
    import bytepair

    return Path(bytepair.__file__).parent / "data"


def rank_file(name: str, workdir: Path) -> Path:
    """The shipped rank file, decompressed (tiktoken reads plain files)."""
    out = workdir / f"{name}.tiktoken"
    if not out.exists():
        out.write_bytes(gzip.decompress((data_dir() / f"{name}.tiktoken.gz").read_bytes()))
    return out


def load_ranks(name: str, workdir: Path) -> dict[bytes, int]:
    import tiktoken.load

    os.environ["TIKTOKEN_CACHE_DIR"] = ""
    return tiktoken.load.load_tiktoken_bpe(str(rank_file(name, workdir)), expected_hash=HASHES[name])


# ------------------------------------------------------------------------------ tokenizer.json


def _byte_to_unicode() -> dict[int, str]:
    """GPT-2's printable stand-ins for the 256 bytes (the byte-level alphabet of tokenizer.json)."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    table: dict[int, str] = {}
    extra = 0
    for b in range(256):
        if b in printable:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


def export_tokenizer_json(name: str, ranks: dict[bytes, int], path: Path) -> Path:
    if path.exists():
        return path
    b2u = _byte_to_unicode()

    def s(b: bytes) -> str:
        return "".join(b2u[x] for x in b)

    # One merge per token: the last merge BPE makes when it encodes the token's own bytes with
    # the lower ranks only (the usual conversion of a rank file into a merge list).
    merges: list[tuple[int, str, str]] = []
    for token, rank in ranks.items():
        if len(token) < 2:
            continue
        parts = [token[i : i + 1] for i in range(len(token))]
        while len(parts) > 2:
            best = None
            for i in range(len(parts) - 1):
                r = ranks.get(parts[i] + parts[i + 1])
                if r is not None and r < rank and (best is None or r < best[0]):
                    best = (r, i)
            if best is None:
                break
            i = best[1]
            parts[i : i + 2] = [parts[i] + parts[i + 1]]
        if len(parts) == 2:
            merges.append((rank, s(parts[0]), s(parts[1])))
    merges.sort()
    doc = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": True}
            for t, i in SPECIALS[name].items()
        ],
        "normalizer": None,
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": PLAIN_PATTERNS[name]}, "behavior": "Isolated", "invert": False},
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
            ],
        },
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": True,
            "vocab": {s(t): r for t, r in ranks.items()},
            "merges": [f"{a} {b}" for *_, a, b in merges],
        },
    }
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return path


# ------------------------------------------------------------------------------ encoders

Encode = Callable[[str], list[int]]
Factory = Callable[[], Encode]


def build_encoders(name: str, peers: list[str], workdir: Path) -> tuple[dict[str, Factory], dict[str, str], dict[str, Any]]:
    """({encoder: factory of a fresh encode_ordinary}, {peer: why skipped}, {name: objects}).

    A factory returns an encoder in its cold state: bytepair's piece cache emptied; a new
    object for the peers that may cache (riptoken, quicktok, kitoken, tokie, hf); the same object for those that
    have no cache (tiktoken, bpe-openai's global tokenizer). Factories run outside the timing."""
    import bytepair

    tok = bytepair.get_encoding(name)

    def fresh_bytepair() -> Encode:
        tok._core.clear_cache()
        return tok.encode_ordinary

    factories: dict[str, Factory] = {"bytepair": fresh_bytepair}
    objects: dict[str, Any] = {"bytepair": tok}
    skipped: dict[str, str] = {}
    ranks = load_ranks(name, workdir)
    for peer in peers:
        try:
            if peer == "tiktoken":
                import tiktoken

                enc = tiktoken.Encoding(name, pat_str=PATTERNS[name], mergeable_ranks=ranks, special_tokens=SPECIALS[name])
                factories[peer], objects[peer] = (lambda enc=enc: enc.encode_ordinary), enc
            elif peer == "riptoken":
                import riptoken

                def fresh_rip() -> Encode:
                    return riptoken.CoreBPE(ranks, SPECIALS[name], PATTERNS[name]).encode_ordinary

                factories[peer] = fresh_rip
            elif peer == "bpe-openai":
                from bpe_openai import _bindings

                bo = _bindings.tokenizer_for_encoding(name)
                factories[peer] = lambda bo=bo: bo.encode
            elif peer == "quicktok":
                import quicktok

                def fresh_quicktok() -> Encode:
                    return quicktok.Tokenizer(name, "").encode_ordinary  # its bundled copy

                factories[peer] = fresh_quicktok
            elif peer == "kitoken":
                import kitoken

                def fresh_kitoken(path: Path = rank_file(name, workdir)) -> Encode:
                    return kitoken.Kitoken.from_tiktoken_file(str(path)).encode

                factories[peer] = fresh_kitoken
            elif peer == "tokie":
                import tokie

                path = export_tokenizer_json(name, ranks, workdir / f"{name}.tokenizer.json")

                def fresh_tokie(path: Path = path) -> Encode:
                    tk = tokie.Tokenizer.from_json(str(path))
                    return lambda t: tk.encode_bytes(t.encode("utf-8"))

                factories[peer] = fresh_tokie
            elif peer == "hf":
                import tokenizers

                path = export_tokenizer_json(name, ranks, workdir / f"{name}.tokenizer.json")

                def fresh_hf(path: Path = path) -> Encode:
                    hf = tokenizers.Tokenizer.from_file(str(path))
                    return lambda t: hf.encode(t, add_special_tokens=False).ids

                factories[peer] = fresh_hf
            if peer in factories:
                factories[peer]()("warm up the import")
        except ImportError as e:
            skipped[peer] = f"not installed ({e.name})"
        except Exception as e:  # a peer that cannot build this encoding
            skipped[peer] = f"{type(e).__name__}: {e}"[:120]
            factories.pop(peer, None)
    return factories, skipped, objects


# ------------------------------------------------------------------------------ corpora


def sample(corpus: str, mib: float, corpus_dir: Path) -> str:
    path = corpus_dir / f"{corpus}.txt"
    if not path.exists():
        sys.exit(f"{path} is missing: run `python bench/make_corpus.py` first (see bench/README.md)")
    data = path.read_bytes()[: int(mib * 2**20)]
    cut = data.rfind(b"\n") + 1 or len(data)
    return data[:cut].decode("utf-8", "ignore")


def documents(text: str, kib: float) -> list[str]:
    size = int(kib * 1024)
    docs, start = [], 0
    while start < len(text):
        end = text.find("\n", start + size)
        end = len(text) if end < 0 else end + 1
        docs.append(text[start:end])
        start = end
    return docs


def utf8_mb(docs: list[str]) -> float:
    return sum(len(d.encode("utf-8")) for d in docs) / 1e6


# ------------------------------------------------------------------------------ sections


def best_cpu(fn: Callable[[], Any], repeat: int, before: Callable[[], Any] | None = None) -> float:
    best = float("inf")
    for _ in range(repeat):
        if before:
            before()
        t = time.thread_time()
        fn()
        best = min(best, time.thread_time() - t)
    return best


def best_wall(fn: Callable[[], Any], repeat: int, before: Callable[[], Any] | None = None) -> float:
    best = float("inf")
    for _ in range(repeat):
        if before:
            before()
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def section_single(args: argparse.Namespace, workdir: Path, results: dict[str, Any]) -> None:
    print(f"\n## Single thread: encode_ordinary, MB/s of UTF-8 (CPU time), {args.mb} MiB per corpus "
          f"in ~{args.doc_kb} KiB documents")
    print(f"   cold: best of {args.repeat} first passes, each by an encoder in its cold state (bytepair's "
          f"piece cache emptied, a new object for peers that may cache); warm: best of {args.repeat} "
          f"passes after one untimed pass")
    rows = []
    for name in ENCODINGS:
        factories, skipped, objects = build_encoders(name, args.peers, workdir)
        for peer, why in skipped.items():
            print(f"  {name}: {peer} skipped: {why}")
        for corpus in CORPORA:
            docs = documents(sample(corpus, args.mb, args.corpus_dir), args.doc_kb)
            mb = utf8_mb(docs)
            expected = [objects["tiktoken"].encode_ordinary(d) for d in docs] if "tiktoken" in objects else None
            row: dict[str, Any] = {"encoding": name, "corpus": corpus, "mb": mb, "cold": {}, "warm": {}, "exact": {}}
            for enc_name, factory in factories.items():
                cold = float("inf")
                for rep in range(args.repeat):
                    enc = factory()
                    t = time.thread_time()
                    got = [enc(d) for d in docs]
                    cold = min(cold, time.thread_time() - t)
                    if rep == 0 and expected is not None:
                        bad = sum(1 for g, e in zip(got, expected) if list(g) != e)
                        row["exact"][enc_name] = "exact" if bad == 0 else f"differs on {bad}/{len(docs)} docs"
                    del got
                enc = factory()
                [enc(d) for d in docs]
                warm = best_cpu(lambda enc=enc: [enc(d) for d in docs], args.repeat)
                row["cold"][enc_name], row["warm"][enc_name] = mb / cold, mb / warm
            rows.append(row)
            speeds = "  ".join(f"{k} {row['cold'][k]:5.1f}/{row['warm'][k]:5.1f}" for k in row["cold"])
            print(f"  {name:12} {corpus:13} cold/warm: {speeds}")
    results["single"] = rows
    for mode in ("cold", "warm"):
        print(f"\n  {mode}: encoding / corpus / bytepair MB/s / ratio to each peer [floors: 3x tiktoken, 1.2x exact peers]")
        verdicts = []
        for row in rows:
            ours = row[mode]["bytepair"]
            cells = []
            for peer, v in row[mode].items():
                if peer == "bytepair":
                    continue
                ratio = ours / v
                exact = row["exact"].get(peer, "?")
                floor = 3.0 if peer == "tiktoken" else 1.2
                ok = ratio >= floor if exact == "exact" or peer == "tiktoken" else None
                if ok is not None:
                    verdicts.append(ok)
                mark = "" if ok is None else (" ok" if ok else " LOW")
                cells.append(f"{peer} {ratio:4.2f}x{mark}" + ("" if exact == "exact" else f" ({exact})"))
            print(f"  {row['encoding']:12} {row['corpus']:13} {ours:6.1f}  " + ", ".join(cells))
            if row["exact"].get("bytepair", "exact") != "exact":
                print(f"    !! bytepair differs from tiktoken: {row['exact']['bytepair']}")
        print(f"  {mode} single-thread floors: {'PASS' if all(verdicts) else 'FAIL'} (inexact peers are shown, not floors)")


def wall_and_cores(fn: Callable[[], Any], repeat: int, before: Callable[[], Any] | None = None) -> tuple[float, float]:
    """Best wall time of `repeat` runs, and the cores that run used (process CPU time / wall)."""
    best, cores = float("inf"), 0.0
    for _ in range(repeat):
        if before:
            before()
        c, t = time.process_time(), time.perf_counter()
        fn()
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        if wall < best:
            best, cores = wall, cpu / wall
    return best, cores


def section_threads(args: argparse.Namespace, workdir: Path, results: dict[str, Any]) -> None:
    print(f"\n## Threads: wall time, best of {args.repeat}, cold cache (the machine has {os.cpu_count()} cores; "
          f"'cores' = process CPU time / wall time of that run: below ~1.9 with 2 threads, other processes "
          f"held the second core)")
    import bytepair

    out = []
    for name in ENCODINGS:
        tok = bytepair.get_encoding(name)
        docs = [d for c in CORPORA for d in documents(sample(c, args.mb, args.corpus_dir), args.doc_kb)]
        big = "".join(docs)
        mb = utf8_mb(docs)
        clear = tok._core.clear_cache
        row: dict[str, Any] = {"encoding": name, "mb": mb}
        for label, fn in [
            ("batch", lambda n: tok.encode_batch(docs, num_threads=n, disallowed_special=())),
            ("large", lambda n: tok.encode_ordinary(big, num_threads=n)),
        ]:
            t1, c1 = wall_and_cores(lambda: fn(1), args.repeat, clear)
            t2, c2 = wall_and_cores(lambda: fn(2), args.repeat, clear)
            row[label] = {"1": mb / t1, "2": mb / t2, "speedup": t1 / t2, "cores_2": c2}
        b, g = row["batch"], row["large"]
        verdict = "PASS" if b["speedup"] >= 1.7 else "FAIL"
        print(f"  {name:12} batch of {len(docs)} docs ({mb:.1f} MB): 1 thread {b['1']:5.1f} MB/s, 2 threads "
              f"{b['2']:5.1f} MB/s = {b['speedup']:.2f}x {verdict} (floor 1.7x; cores {b['cores_2']:.2f}); "
              f"one {mb:.1f} MB text: {g['1']:5.1f} -> {g['2']:5.1f} MB/s = {g['speedup']:.2f}x (cores {g['cores_2']:.2f})")
        if "tiktoken" in args.peers:
            try:
                import tiktoken

                enc = tiktoken.Encoding(name, pat_str=PATTERNS[name], mergeable_ranks=load_ranks(name, workdir),
                                        special_tokens=SPECIALS[name])
                k1, _ = wall_and_cores(lambda: enc.encode_ordinary_batch(docs, num_threads=1), args.repeat)
                k2, kc = wall_and_cores(lambda: enc.encode_ordinary_batch(docs, num_threads=2), args.repeat)
                row["tiktoken"] = {"1": mb / k1, "2": mb / k2, "speedup": k1 / k2, "cores_2": kc}
                print(f"  {'':12} tiktoken encode_ordinary_batch: {mb / k1:5.1f} -> {mb / k2:5.1f} MB/s = "
                      f"{k1 / k2:.2f}x (cores {kc:.2f})")
            except ImportError:
                pass
        out.append(row)
    results["threads"] = out


ADVERSARIAL = ["letter", "digits", "spaces", "cjk"]


def adversarial_text(kind: str, nbytes: int) -> str:
    if kind == "letter":
        return "a" * nbytes
    if kind == "digits":
        return "1" * nbytes
    if kind == "spaces":
        return " " * nbytes
    # CJK without spaces: Han characters in a fixed pseudo-random order, 3 bytes each.
    return "".join(chr(0x4E00 + (i * 7919) % 20_902) for i in range(nbytes // 3))


_CHILD = r"""
import sys, time
sys.path.insert(0, {here!r})
import bench_encode as b
from pathlib import Path
lib, name, kind, n, workdir = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), Path(sys.argv[5])
text = b.adversarial_text(kind, n)
if lib == "tiktoken":
    import tiktoken
    enc = tiktoken.Encoding(name, pat_str=b.PATTERNS[name], mergeable_ranks=b.load_ranks(name, workdir), special_tokens={{}})
    f = enc.encode_ordinary
else:
    import bytepair
    f = bytepair.get_encoding(name).encode_ordinary
t = time.thread_time(); f(text); print(time.thread_time() - t)
"""


def timed_child(lib: str, name: str, kind: str, n: int, workdir: Path, timeout: float) -> float | str | None:
    """CPU seconds, None on timeout, or the last line of the error if the child failed."""
    code = _CHILD.format(here=str(HERE))
    try:
        out = subprocess.run([sys.executable, "-c", code, lib, name, kind, str(n), str(workdir)],
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    if out.returncode != 0:
        lines = out.stderr.strip().splitlines() or ["no message"]
        return f"failed: {lines[-1][:90]}"
    return float(out.stdout.strip().splitlines()[-1])


def section_adversarial(args: argparse.Namespace, workdir: Path, results: dict[str, Any]) -> None:
    print(f"\n## Adversarial inputs: seconds of CPU (tiktoken in a child process, timeout {args.timeout:.0f} s)")
    import bytepair

    # 80 MB (bytepair only): 10 -> 80 MB compares two sizes whose working sets are both past the
    # last-level cache, where 1.25 MB's is not (see bench/README.md).
    sizes = [156_250, 1_250_000, 10_000_000, 80_000_000]
    out = []
    for name in ENCODINGS:
        tok = bytepair.get_encoding(name)
        for kind in ADVERSARIAL:
            ours = []
            for n in sizes:
                text = adversarial_text(kind, n)
                ours.append(best_cpu(lambda: tok.encode_ordinary(text), args.repeat, tok._core.clear_cache))
                del text
            theirs: list[float | str | None] = []
            skipped = ""
            if "tiktoken" in args.peers:
                for n in sizes[:3]:
                    prev = theirs[-1] if theirs else 0.0
                    if isinstance(prev, str):
                        break
                    step = n / sizes[len(theirs) - 1] if theirs else 1.0
                    if prev is not None and prev * step ** 2 > args.timeout:
                        # Quadratic growth would take past the timeout: say so instead of waiting.
                        skipped = f" ({n // 1000} KB not run: ~{prev * step ** 2:.0f} s if quadratic)"
                        break
                    theirs.append(None if prev is None else timed_child("tiktoken", name, kind, n, workdir, args.timeout))
            per_mb = [t / (n / 1e6) for t, n in zip(ours, sizes)]
            cells = "  ".join(f"{n // 1000:>6} KB {t:7.3f}" for n, t in zip(sizes, ours))
            tk = "  ".join(f"{n // 1000} KB " + (f"{t:.3f}" if isinstance(t, float) else t if t else f">{args.timeout:.0f}")
                           for n, t in zip(sizes, theirs)) + skipped
            grow = (f"8x {ours[2] / ours[1]:.2f}" if ours[1] > 0 else "8x -") + (
                f", 10->80 MB {ours[3] / ours[2]:.2f}" if ours[2] > 0 else "")
            tk_grow = (f" 8x {theirs[2] / theirs[1]:.2f}" if len(theirs) == 3 and isinstance(theirs[1], float)
                       and isinstance(theirs[2], float) and theirs[1] > 0 else "")
            print(f"  {name:12} {kind:7} bytepair {cells}   (s/MB {min(per_mb):.3f}..{max(per_mb):.3f}, {grow})"
                  + (f"   tiktoken {tk}{tk_grow}" if theirs else ""))
            out.append({"encoding": name, "kind": kind, "sizes": sizes, "bytepair": ours, "tiktoken": theirs})
    results["adversarial"] = out


_LOAD_CHILD = r"""
import sys, time, os
def rss():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS:")) / 1024
sys.path.insert(0, {here!r})
lib, workdir = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
if lib == "bytepair":
    import bytepair
elif lib == "tiktoken":
    import tiktoken, tiktoken.load
    import bench_encode as b
    from pathlib import Path
    path = b.rank_file("o200k_base", Path(workdir))
os.environ["TIKTOKEN_CACHE_DIR"] = ""
t1 = time.perf_counter(); r1 = rss()
if lib == "bytepair":
    enc = bytepair.get_encoding("o200k_base")
else:
    ranks = tiktoken.load.load_tiktoken_bpe(str(path), expected_hash=b.HASHES["o200k_base"])
    enc = tiktoken.Encoding("o200k_base", pat_str=b.PATTERNS["o200k_base"], mergeable_ranks=ranks,
                            special_tokens=b.SPECIALS["o200k_base"])
enc.encode_ordinary("warm up: hello world")
t2 = time.perf_counter(); r2 = rss()
print(t1 - t0, t2 - t1, r1, r2)
"""


def section_load(args: argparse.Namespace, workdir: Path, results: dict[str, Any]) -> None:
    print(f"\n## Load o200k_base in a fresh process (best of {args.repeat}; RSS from /proc/self/status)")
    libs = ["bytepair"] + (["tiktoken"] if "tiktoken" in args.peers else [])
    rank_file("o200k_base", workdir)
    out = {}
    for lib in libs:
        runs = []
        for _ in range(args.repeat):
            res = subprocess.run([sys.executable, "-c", _LOAD_CHILD.format(here=str(HERE)), lib, str(workdir)],
                                 capture_output=True, text=True, check=True)
            runs.append([float(x) for x in res.stdout.split()])
        imp, load, r1, r2 = min(runs, key=lambda r: r[1])
        out[lib] = {"import_s": imp, "load_s": load, "rss_after_import_mb": r1, "rss_after_load_mb": r2}
        print(f"  {lib:9} import {imp:5.2f} s   load {load:5.2f} s   RSS after import {r1:6.1f} MB, "
              f"after load {r2:6.1f} MB (+{r2 - r1:.1f} MB)")
    if len(out) == 2:
        b, t = out["bytepair"], out["tiktoken"]
        print(f"  bytepair / tiktoken: load time {b['load_s'] / t['load_s']:.2f}x, added RSS "
              f"{(b['rss_after_load_mb'] - b['rss_after_import_mb']) / (t['rss_after_load_mb'] - t['rss_after_import_mb']):.2f}x")
    results["load"] = out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", default="single,threads,adversarial,load", help="sections to run (comma-separated)")
    p.add_argument("--peers", default=",".join(PEERS), help=f"peers to run (default: {','.join(PEERS)})")
    p.add_argument("--mb", type=float, default=4.0, help="MiB of each corpus (default 4)")
    p.add_argument("--doc-kb", type=float, default=16.0, help="document size in KiB (default 16)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--timeout", type=float, default=120.0, help="seconds for one tiktoken adversarial run")
    p.add_argument("--corpus-dir", type=Path, default=HERE / "corpus")
    p.add_argument("--json", type=Path, help="also write the results here")
    args = p.parse_args()
    args.peers = [x for x in args.peers.split(",") if x]
    sections = args.only.split(",")
    import bytepair

    print(f"bytepair {bytepair.__version__}, Python {sys.version.split()[0]}, {os.cpu_count()} cores")
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        for name, fn in [("single", section_single), ("threads", section_threads),
                         ("adversarial", section_adversarial), ("load", section_load)]:
            if name in sections:
                fn(args, workdir, results)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
