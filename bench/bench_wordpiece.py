#!/usr/bin/env python3
"""WordPiece side by side: encoding (one thread, first pass and warm), one long word, training.

    python bench/bench_wordpiece.py                 # bench/corpus/mixed.txt if built, 50 MB
    python bench/bench_wordpiece.py --mb 4          # a quick look
    python bench/bench_wordpiece.py --corpus FILE --mb 50 --skip-train
    python bench/bench_wordpiece.py --corpus FILE --mb 60 --train-only

Peers, each measured in this run on the same documents: Hugging Face `tokenizers`
(`encode_batch` on one thread: RAYON_NUM_THREADS=1 is set before it is imported) and
`nanotoken` (`encode_batch_list(..., parallel=False)`) when installed. The tokenizer is a
WordPiece vocabulary of 30,522 trained by HF's WordPieceTrainer on the first part of the corpus,
loaded by all three from the same tokenizer.json. "first" is the first pass over the documents
with a fresh tokenizer; "warm" the best of the next two passes. Ids are checked equal. Before
the first pass the process makes and drops lists shaped like the output (no tokenizer involved),
so that whoever runs first does not pay alone for growing the Python heap. Two threads: bytepair
(num_threads=2) and nanotoken (parallel=True) in this process, HF `tokenizers` in a child
process with RAYON_NUM_THREADS=2 (its pool size is fixed when it is imported).

Long word: one word of n characters with max_input_chars_per_word raised above n, best of 5
runs; the time for 160,000 characters against 20,000 (linear: about 8x). HF's encoder is cubic
on such a word (hundreds of ms at 2,500 characters), so it runs only 2,500 and 5,000 (one run
each): 2x the length costs it about 8x.

Training: `algorithm="hf"` and `algorithm="score"` against HF WordPieceTrainer at vocab 30,522,
each in its own process, wall time and peak RSS (VmHWM of the child: ru_maxrss would
include the parent's, inherited through fork), and the child's RSS right before training (after
its imports), so that what the trainer itself costs can be read off.
Not a test: it prints figures and ratios, nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("RAYON_NUM_THREADS", "1")

HERE = os.path.dirname(os.path.abspath(__file__))
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def read_docs(path: str, mb: float) -> list[str]:
    limit = int(mb * 1_000_000)
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read(limit)
    if len(text.encode()) < limit:  # a small file: repeat it up to the size asked for
        text = (text * (limit // max(len(text.encode()), 1) + 1))[:limit]
    docs = [d for d in text.split("\n\n") if d.strip()]
    return docs


def hf_tokenizer(train_text: list[str], vocab_size: int = 30522) -> str:
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer()
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.train_from_iterator(train_text, trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=SPECIALS, show_progress=False))
    vocab = tok.get_vocab()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    path = os.path.join(tempfile.mkdtemp(), "tokenizer.json")
    tok.save(path)
    return path


def timed(f, docs):  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    out = f(docs)
    return time.perf_counter() - t, out


def bench_encode(path: str, docs: list[str]) -> None:
    from tokenizers import Tokenizer

    from bytepair.formats.hf_wordpiece import wordpiece_from_hf

    mb = sum(len(d.encode()) for d in docs) / 1e6
    print(f"\nencode, one thread: {len(docs):,} documents, {mb:.1f} MB")
    runners = {}
    ours = lambda: wordpiece_from_hf(json.load(open(path, encoding="utf-8")), path=path)  # noqa: E731
    runners["bytepair"] = (ours, lambda t, d: t.encode_batch(d, num_threads=1))
    hf = lambda: Tokenizer.from_file(path)  # noqa: E731
    runners["tokenizers"] = (hf, lambda t, d: [e.ids for e in t.encode_batch(d, add_special_tokens=False)])
    try:
        import nanotoken

        runners["nanotoken"] = (
            lambda: nanotoken.Tokenizer(path),
            lambda t, d: t.encode_batch_list(d, add_special_tokens=False, parallel=False),
        )
    except ImportError:
        print("  (nanotoken is not installed: pip install nanotoken)")
    # Grow the Python heap once, for everyone: lists of ints shaped like the output.
    shaped = [list(range(len(d) // 4 + 1)) for d in docs]
    del shaped
    results = {}
    reference = None
    for name, (make, run) in runners.items():
        tok = make()
        first, ids = timed(lambda d: run(tok, d), docs)
        warm = min(timed(lambda d: run(tok, d), docs)[0] for _ in range(2))
        if reference is None:
            reference = ids
        same = "same ids" if ids == reference else "IDS DIFFER"
        results[name] = (first, warm)
        print(f"  {name:<11} first {mb / first:8.1f} MB/s   warm {mb / warm:8.1f} MB/s   ({same})")
    b = results["bytepair"]
    for name, (first, warm) in results.items():
        if name != "bytepair":
            print(f"  bytepair / {name}: first {first / b[0]:.2f}x, warm {warm / b[1]:.2f}x")
    # Two threads: bytepair with num_threads=2, nanotoken with parallel=True (its own pool:
    # the same when the machine has 2 cores; see os.cpu_count() below). HF's thread count is
    # fixed when it is imported (1 here), so it is left out of this row.
    print(f"\nencode, two threads (os.cpu_count() = {os.cpu_count()})")
    two = {"bytepair": (ours, lambda t, d: t.encode_batch(d, num_threads=2))}
    if "nanotoken" in runners:
        two["nanotoken"] = (runners["nanotoken"][0], lambda t, d: t.encode_batch_list(d, add_special_tokens=False, parallel=True))
    res2 = {}
    for name, (make, run) in two.items():
        tok = make()
        first, _ = timed(lambda d: run(tok, d), docs)
        warm = min(timed(lambda d: run(tok, d), docs)[0] for _ in range(2))
        res2[name] = (first, warm)
        print(f"  {name:<11} first {mb / first:8.1f} MB/s   warm {mb / warm:8.1f} MB/s")
    hf2 = hf_two_threads(path, docs)
    if hf2 is not None:
        res2["tokenizers"] = hf2
        print(f"  {'tokenizers':<11} first {mb / hf2[0]:8.1f} MB/s   warm {mb / hf2[1]:8.1f} MB/s   (child process)")
    b = res2["bytepair"]
    for name, (first, warm) in res2.items():
        if name != "bytepair":
            print(f"  bytepair / {name}: first {first / b[0]:.2f}x, warm {warm / b[1]:.2f}x")


HF_CHILD = r"""
import json, sys, time
from tokenizers import Tokenizer
path, docs_path = sys.argv[1], sys.argv[2]
docs = json.load(open(docs_path, encoding="utf-8"))
tok = Tokenizer.from_file(path)
t = time.perf_counter(); tok.encode_batch(docs, add_special_tokens=False); first = time.perf_counter() - t
warm = []
for _ in range(2):
    t = time.perf_counter(); tok.encode_batch(docs, add_special_tokens=False); warm.append(time.perf_counter() - t)
print(json.dumps([first, min(warm)]))
"""


def hf_two_threads(path: str, docs: list[str]) -> tuple[float, float] | None:
    """HF tokenizers' encode_batch on two threads, in a child process (first, warm seconds)."""
    docs_path = os.path.join(tempfile.mkdtemp(), "docs.json")
    with open(docs_path, "w", encoding="utf-8") as f:
        json.dump(docs, f)
    env = dict(os.environ, RAYON_NUM_THREADS="2", TOKENIZERS_PARALLELISM="true")
    try:
        out = subprocess.run([sys.executable, "-c", HF_CHILD, path, docs_path], capture_output=True, text=True, env=env, timeout=600)
    except subprocess.TimeoutExpired:
        print("  tokenizers: over 600 s on two threads, left out")
        return None
    if out.returncode:
        print(f"  tokenizers: failed: {out.stderr.strip()[-300:]}")
        return None
    first, warm = json.loads(out.stdout.strip().splitlines()[-1])
    return first, warm


def bench_long_word(path: str) -> None:
    from tokenizers import Tokenizer

    from bytepair.formats.hf_wordpiece import wordpiece_from_hf

    print("\none long word (max_input_chars_per_word raised)")
    data = json.load(open(path, encoding="utf-8"))
    data["model"]["max_input_chars_per_word"] = 10**9
    ours = wordpiece_from_hf(data, path=path)
    hf = Tokenizer.from_str(json.dumps(data))
    base = "antidisestablishmentarianism"
    times = {}
    for n in (2_500, 5_000, 20_000, 160_000):
        text = base * (n // len(base) + 2)
        word = text[:n]
        runs = []
        for r in range(5):
            # a different word each run (the same one shifted): a word seen before is a hit in
            # the segment cache, which would time a lookup, not the encoder
            w = text[r : r + n]
            t = time.perf_counter()
            ours.encode(w)
            runs.append(time.perf_counter() - t)
        times[n] = min(runs)
        line = f"  {n:>7,} chars: bytepair {times[n] * 1e3:9.3f} ms"
        if n <= 5_000:
            t = time.perf_counter()
            hf.encode(word, add_special_tokens=False)
            line += f"   tokenizers {(time.perf_counter() - t) * 1e3:10.1f} ms"
        print(line)
    print(f"  bytepair: time(160,000) / time(20,000) = {times[160_000] / times[20_000]:.2f} (8x the length; linear: about 8)")


TRAIN_CHILD = r"""
import json, resource, sys, time
algo, path, vocab_size = sys.argv[1], sys.argv[2], int(sys.argv[3])
def rss(key):
    return [int(l.split()[1]) for l in open("/proc/self/status") if l.startswith(key + ":")][0]
if algo == "tokenizers":
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers
else:
    import bytepair
base = rss("VmRSS")
t = time.perf_counter()
if algo == "tokenizers":
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer()
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train([path], trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=["[PAD]","[UNK]","[CLS]","[SEP]","[MASK]"], show_progress=False))
    n = tok.get_vocab_size()
else:
    n = bytepair.train_wordpiece(path, vocab_size=vocab_size, algorithm=algo, progress=False).vocab_size
secs = time.perf_counter() - t
print(json.dumps([secs, rss("VmHWM"), n, base]))
"""


def bench_train(docs: list[str], vocab_size: int) -> None:
    path = os.path.join(tempfile.mkdtemp(), "train.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n\n".join(docs))
    mb = os.path.getsize(path) / 1e6
    print(f"\ntraining to {vocab_size:,} on {mb:.1f} MB (all cores; each in its own process)")
    res = {}
    for algo in ("tokenizers", "hf", "score"):
        env = dict(os.environ)
        env.pop("RAYON_NUM_THREADS", None)
        out = subprocess.run([sys.executable, "-c", TRAIN_CHILD, algo, path, str(vocab_size)], capture_output=True, text=True, env=env)
        if out.returncode:
            print(f"  {algo}: failed: {out.stderr.strip()[-300:]}")
            continue
        secs, rss_kb, n, base_kb = json.loads(out.stdout.strip().splitlines()[-1])
        res[algo] = (secs, rss_kb)
        label = "HF WordPieceTrainer" if algo == "tokenizers" else f'bytepair algorithm="{algo}"'
        print(
            f"  {label:<28} {secs:7.2f} s   peak RSS {rss_kb / 1024:7.0f} MiB"
            f" (after imports {base_kb / 1024:4.0f} MiB, training +{(rss_kb - base_kb) / 1024:4.0f} MiB)   vocab {n:,}"
        )
    if "tokenizers" in res and "hf" in res:
        t, r = res["tokenizers"]
        print(f'  algorithm="hf" / HF: time {res["hf"][0] / t:.2f}x, peak RSS {res["hf"][1] / r:.2f}x')


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default = os.path.join(HERE, "corpus", "mixed.txt")
    if not os.path.exists(default):
        default = os.path.join(HERE, "..", "python", "bytepair", "data", "tinyshakespeare.txt")
    ap.add_argument("--corpus", default=default)
    ap.add_argument("--mb", type=float, default=50.0)
    ap.add_argument("--vocab-size", type=int, default=30522)
    ap.add_argument("--skip-train", action="store_true")
    ap.add_argument("--train-only", action="store_true", help="only the training rows")
    args = ap.parse_args()
    docs = read_docs(args.corpus, args.mb)
    print(f"corpus {args.corpus}, {args.mb} MB asked for")
    if args.train_only:
        bench_train(docs, args.vocab_size)
        return
    path = hf_tokenizer(docs[: max(1, len(docs) // 5)], args.vocab_size)
    bench_encode(path, docs)
    bench_long_word(path)
    if not args.skip_train:
        bench_train(docs, args.vocab_size)
    print(f"\n(peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB)")


if __name__ == "__main__":
    main()
