#!/usr/bin/env python3
"""Model inputs side by side: ``tok(batch, padding=True, truncation=True, max_length=512)``.

A batch: 1,000 chat-sized texts (200 to 2,000 characters, lengths drawn with a fixed seed),
taken in turn from bench/corpus/{prose,code,multilingual}.txt and cut at a space or newline;
each batch number starts further into the corpora, so batches share no text.
Two model directories, built once into --dir (kept between runs):

  llama3  Meta's Llama 3 recipe (``bytepair.load(path, encoding="llama3")``: its split pattern,
          256 special tokens after the ranks, the BOS template) on cl100k_base's 100,256 ranks,
          pad token ``<|end_of_text|>``, written by bytepair's ``save_pretrained``. Single texts.
  bert    WordPiece, 30,522 tokens trained by Hugging Face's WordPieceTrainer on 4 MB of the
          corpora (past what the batches use), BERT's normalizer and ``[CLS] $A [SEP] $B:1 [SEP]:1`` template, written by
          ``tokenizers``. Pairs: text k with text k+1 (truncation ``longest_first``).

Tools, each in its own process pinned with taskset to cores 0..threads-1, RAYON_NUM_THREADS set:

  bytepair      ``bytepair.load(dir)(...)``
  transformers  ``PreTrainedTokenizerFast.from_pretrained(dir)(...)`` (Hugging Face tokenizers)
  fastokens     the same after ``fastokens.patch_transformers()`` (transformers' padding and
                batching around fastokens' encoder)

Calls: ``return_tensors=None`` (lists) and ``return_tensors="np"``. Time per batch (one thread:
the process's CPU time, so that waiting for a core on a shared machine does not count; two
threads: wall time), after warm-up calls: "unseen" is the best of --repeat calls, each on a batch the process has
not seen (the np calls on other batches than the lists calls); "repeated" the best of 3 more calls on the last batch
(what caches of whole segments give: chat traffic repeats its system prompts and history).
fastokens cannot load the bert directory (it has no BertNormalizer). Outputs: sha256 of ``input_ids`` and
``attention_mask`` (and ``token_type_ids`` for bert) as int64 arrays, checked equal to
transformers'. Floors (issue #25): bytepair >= 2x transformers and >= 1x fastokens on every row,
printed PASS/FAIL. A benchmark, not a test.

  python bench/bench_model_inputs.py                       # both models, 1 and 2 threads
  python bench/bench_model_inputs.py --models llama3 --threads 1 --repeat 5
  python bench/bench_model_inputs.py --rounds 3   # each figure the best of 3 processes per tool
  python bench/bench_model_inputs.py --small      # calls of 1, 2 and 16 texts, us per call
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TOOLS = ["bytepair", "transformers", "fastokens"]
MODELS = ["llama3", "bert"]
CALLS = ["lists", "np"]
WHEN = ["unseen", "repeated"]
CORPORA = ["prose", "code", "multilingual"]
N_TEXTS = 1000
MAX_LENGTH = 512


def texts(batch: int = 0, n: int = N_TEXTS) -> list[str]:
    """Batch number ``batch``: ``n`` texts of 200 to 2,000 characters, in turn from each corpus,
    cut at whitespace; batch ``k`` starts 400,000 characters into each corpus after batch
    ``k - 1`` (no text seen before)."""
    rng = random.Random(batch)
    sources = [_corpus(name) for name in CORPORA]
    pos = [batch * 400_000] * len(sources)
    out = []
    for k in range(n):
        s, src = k % len(sources), sources[k % len(sources)]
        want = rng.randint(200, 2000)
        start = pos[s]
        stop = start + want
        cut = max(src.rfind(" ", start, stop), src.rfind("\n", start, stop))
        if cut > start + 200:
            stop = cut
        if stop > len(src):
            sys.exit(f"bench/corpus/{CORPORA[s]}.txt is too small for batch {batch}: run bench/make_corpus.py")
        out.append(src[start:stop])
        pos[s] = stop
    return out


_CORPORA: dict[str, str] = {}


def _corpus(name: str) -> str:
    if name not in _CORPORA:
        with open(HERE / "corpus" / f"{name}.txt", encoding="utf-8", errors="replace") as f:
            _CORPORA[name] = f.read(12_000_000)
    return _CORPORA[name]


# ---- the model directories ----------------------------------------------------------------


def build_llama3(directory: Path) -> None:
    import gzip

    import bytepair

    directory.mkdir(parents=True, exist_ok=True)
    ranks = directory / "tokenizer.model"  # cl100k_base's ranks where Llama 3 has its own 128,000
    ranks.write_bytes(gzip.decompress((ROOT / "python" / "bytepair" / "data" / "cl100k_base.tiktoken.gz").read_bytes()))
    tok: Any = bytepair.load(ranks, encoding="llama3")
    tok = tok.with_special_tokens(roles={"pad": "<|end_of_text|>"})
    tok.save_pretrained(directory, model_max_length=131072)
    ranks.unlink()


def build_bert(directory: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    train = []
    for name in CORPORA:
        with open(HERE / "corpus" / f"{name}.txt", encoding="utf-8", errors="replace") as f:
            f.seek(12_500_000)  # past what the batches use
            train += f.read(1_400_000).split("\n")
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.train_from_iterator(train, trainers.WordPieceTrainer(vocab_size=30522, special_tokens=specials, show_progress=False))
    vocab = tok.get_vocab()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    directory.mkdir(parents=True, exist_ok=True)
    tok.save(str(directory / "tokenizer.json"))
    config = {
        "tokenizer_class": "BertTokenizerFast",
        "unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]", "cls_token": "[CLS]",
        "mask_token": "[MASK]", "do_lower_case": True, "model_max_length": 512,
        "model_input_names": ["input_ids", "token_type_ids", "attention_mask"],
        "clean_up_tokenization_spaces": False,
    }
    (directory / "tokenizer_config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")


BUILDERS = {"llama3": build_llama3, "bert": build_bert}


def model_dir(base: Path, model: str) -> Path:
    d = base / model
    if not (d / "tokenizer.json").exists():
        print(f"building {d} ...", file=sys.stderr)
        BUILDERS[model](d)
    return d


# ---- the worker: one tool, one model, in its own process -----------------------------------


def load(tool: str, directory: Path) -> Any:
    if tool == "bytepair":
        import bytepair

        return bytepair.load(directory)
    if tool == "fastokens":
        import fastokens  # type: ignore[import-untyped]

        fastokens.patch_transformers()
    import transformers

    transformers.logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    return transformers.PreTrainedTokenizerFast.from_pretrained(str(directory))


def digest(out: Any, keys: list[str]) -> str:
    import numpy as np

    h = hashlib.sha256()
    for key in keys:
        h.update(key.encode())
        h.update(np.asarray(out[key], dtype=np.int64).tobytes())
    return h.hexdigest()[:16]


def worker(args: argparse.Namespace) -> None:
    tok = load(args.tool, Path(args.dir))
    # One thread: the process's CPU time (waiting for a core on a shared machine left out, as
    # bench_peers.py does); more threads: wall time.
    clock = time.process_time if os.environ.get("RAYON_NUM_THREADS") == "1" else time.perf_counter
    keys = ["input_ids", "attention_mask"] + (["token_type_ids"] if args.model == "bert" else [])
    res: dict[str, Any] = {}
    for c, call in enumerate(CALLS):
        tensors = "np" if call == "np" else None
        first = c * (args.repeat + 1)  # each call its own batches: none seen by the other
        batches = [texts(first + k) for k in range(args.repeat + 1)]

        def run(batch: list[str]) -> Any:
            pairs = batch[1:] + batch[:1] if args.model == "bert" else None
            return tok(batch, pairs, padding=True, truncation=True, max_length=MAX_LENGTH, return_tensors=tensors)

        out = run(texts(0))  # warm-up (and the output checked: batch 0 for both calls)
        run(batches[0])
        unseen = float("inf")
        for batch in batches[1:]:  # each timed call on texts the process has not seen
            t = clock()
            run(batch)
            unseen = min(unseen, clock() - t)
        repeated = float("inf")
        for _ in range(3):  # the last batch again
            t = clock()
            run(batches[-1])
            repeated = min(repeated, clock() - t)
        res[call] = {"unseen": unseen * 1e3, "repeated": repeated * 1e3, "hash": digest(out, keys),
                     "shape": list(getattr(out["input_ids"], "shape", (len(out["input_ids"]),)))}
    print(json.dumps(res))


SMALL = [("tok(text)", 1, False), ("tok(text, pad)", 1, True), ("tok(2 texts, pad)", 2, True),
         ("tok(16 texts, pad)", 16, True)]


def small_worker(args: argparse.Namespace) -> None:
    """Microseconds of CPU time per call of a few texts (the same texts every call: what a
    server answering short requests with a warm tokenizer pays), best of 7 runs of 200 calls."""
    tok = load(args.tool, Path(args.dir))
    batch = texts(3)
    res = {}
    for name, n, pad in SMALL:
        arg: Any = batch[0] if n == 1 and not pad else batch[:n]
        kw: dict[str, Any] = {"padding": True, "truncation": True, "max_length": MAX_LENGTH} if pad else {}
        if args.model == "bert":
            kw["text_pair"] = batch[n: 2 * n] if isinstance(arg, list) else batch[1]
        for _ in range(50):
            tok(arg, **kw)
        best = float("inf")
        for _ in range(7):
            t = time.process_time()
            for _ in range(200):
                tok(arg, **kw)
            best = min(best, (time.process_time() - t) / 200)
        res[name] = best * 1e6
    print(json.dumps(res))


def spawn(tool: str, model: str, threads: int, directory: Path, repeat: int, small: bool = False) -> dict[str, Any] | None:
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads), TOKENIZERS_PARALLELISM="true",
               OMP_NUM_THREADS="1", TRANSFORMERS_VERBOSITY="error")
    cores = ",".join(str(c) for c in range(threads))
    cmd = ["taskset", "-c", cores, sys.executable, __file__, "--worker", "--tool", tool, "--model", model,
           "--dir", str(directory), "--repeat", str(repeat)] + (["--small"] if small else [])
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        print(f"  {tool} {model} x{threads}: failed: {p.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    result: dict[str, Any] = json.loads(p.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeat", type=int, default=8, help="unseen batches timed per call (at most 12)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="processes per tool, taken in turn (each figure: the best of the rounds)")
    ap.add_argument("--dir", default=str(Path(os.environ.get("TMPDIR", "/tmp")) / "bytepair-bench-model-inputs"))
    ap.add_argument("--json", help="write the figures here too")
    ap.add_argument("--small", action="store_true",
                    help="calls of 1, 2 and 16 texts instead (us per call, one thread, the same texts each call)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--tool", help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        small_worker(args) if args.small else worker(args)
        return
    base = Path(args.dir)
    tools = args.tools.split(",")
    if args.small:
        for model in args.models.split(","):
            d = model_dir(base, model)
            got: dict[str, Any] = {}
            for _ in range(args.rounds):
                for tool in tools:
                    r = spawn(tool, model, 1, d, args.repeat, small=True)
                    if r is not None:
                        got[tool] = {k: min(v, got.get(tool, {}).get(k, v)) for k, v in r.items()}
            for name, _, _ in SMALL:
                us = {t: g[name] for t, g in got.items()}
                line = f"{model:6} x1 {name:19} " + "  ".join(f"{t} {v:7.1f}" for t, v in us.items())
                for peer in ("transformers", "fastokens"):
                    if peer in us and "bytepair" in us:
                        line += f"  | vs {peer} {us[peer] / us['bytepair']:5.2f}x"
                print(line)
        return
    batch = texts()
    chars = sum(map(len, batch))
    print(f"batch: {len(batch)} texts, {chars:,} characters (mean {chars / len(batch):.0f}); "
          f"padding=True, truncation=True, max_length={MAX_LENGTH}; ms per batch: unseen = best of "
          f"{args.repeat} batches not seen before, repeated = best of 3 calls on the last one again"
          f"{f' (best of {args.rounds} processes per tool, taken in turn)' if args.rounds > 1 else ''}; "
          f"floors: >= 2x transformers, >= 1x fastokens")
    rows: list[dict[str, Any]] = []
    failed = 0
    for model in args.models.split(","):
        d = model_dir(base, model)
        for threads in [int(t) for t in args.threads.split(",")]:
            got = {tool: spawn(tool, model, threads, d, args.repeat) for tool in tools}
            for _ in range(args.rounds - 1):
                for tool in tools:
                    again = spawn(tool, model, threads, d, args.repeat)
                    if again is None or got[tool] is None:
                        got[tool] = None
                        continue
                    for call in CALLS:
                        for when in WHEN:
                            got[tool][call][when] = min(got[tool][call][when], again[call][when])  # type: ignore[index]
            for call in CALLS:
                ref = got.get("transformers")
                checks = []
                for t, g in got.items():
                    if g is not None and ref is not None and t != "transformers":
                        same = g[call]["hash"] == ref[call]["hash"]
                        checks.append(f"{t} {'==' if same else '!='} transformers")
                        failed += not same
                for when in WHEN:
                    ms = {t: g[call][when] for t, g in got.items() if g is not None}
                    row: dict[str, Any] = {"model": model, "threads": threads, "call": call, "texts": when, "ms": ms}
                    line = f"{model:6} x{threads} {call:5} {when:8} " + "  ".join(f"{t} {v:7.1f}" for t, v in ms.items())
                    if "bytepair" in ms:
                        for peer, floor in (("transformers", 2.0), ("fastokens", 1.0)):
                            if peer in ms:
                                ratio = ms[peer] / ms["bytepair"]
                                ok = ratio >= floor
                                failed += not ok
                                row[f"vs_{peer}"] = ratio
                                line += f"  | vs {peer} {ratio:5.2f}x {'PASS' if ok else 'FAIL'}"
                    print(line)
                    rows.append(row)
                if checks:
                    print(f"{'':16}outputs: " + ", ".join(checks))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    print("all floors PASS, outputs identical" if not failed else f"{failed} FAIL or mismatch")


if __name__ == "__main__":
    main()
