#!/usr/bin/env python3
"""SentencePiece side by side with `sentencepiece`: loading a .model and encoding on one thread.

    python bench/bench_sentencepiece.py                       # bench/corpus/mixed.txt if built
    python bench/bench_sentencepiece.py --corpus FILE --mb 8 --vocab 32000

Models: a Unigram and a BPE model trained by sentencepiece on the first `--train-mb` of the
corpus (byte_fallback on, as Llama's), at `--vocab`. Encoding: the corpus's lines (documents),
`SentencePieceProcessor.encode(lines)` (its batch call, num_threads=1) against
`SentencePieceTokenizer.encode_batch(lines, num_threads=1)`, and one line at a time
(`encode(line)` in a loop); best of `--repeat` runs each, same lines, ids checked equal.
Loading: a model of `--load-pieces` pieces (a Unigram model with that many pieces made by
giving every corpus word and piece a score: not trained, only read) loaded 5 times each, best
time. Not a test: it prints figures and ratios, nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
import tempfile
import time

import sentencepiece as spm

import bytepair


def best(fn, repeat: int) -> tuple[float, object]:
    t_best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        t_best = min(t_best, time.perf_counter() - t0)
    return t_best, out


def big_model(base: str, pieces: int, path: str) -> None:
    """A Unigram .model of `pieces` pieces: `base`'s, then made-up ones appended (pieces are a
    repeated field, and fields may come in any order: the appended ones take the next ids)."""
    tok = bytepair.load(base)
    n = len(tok)
    chunks = []
    i = 0
    while n < pieces:
        text = f"\u2581\u00b5{i:x}".encode()
        i += 1
        body = b"\x0a" + bytes([len(text)]) + text + b"\x15" + struct.pack("<f", -12.5 - (i % 1000) * 1e-3)
        chunks.append(b"\x0a" + bytes([len(body)]) + body)
        n += 1
    with open(path, "wb") as f:
        f.write(tok.to_bytes() + b"".join(chunks))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=os.path.join(os.path.dirname(__file__), "corpus", "mixed.txt"))
    ap.add_argument("--mb", type=float, default=8.0)
    ap.add_argument("--train-mb", type=float, default=4.0)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--load-pieces", type=int, default=256000)
    args = ap.parse_args()
    if not os.path.exists(args.corpus):
        sys.exit(f"{args.corpus}: no corpus (python bench/make_corpus.py, or --corpus FILE)")
    with open(args.corpus, encoding="utf-8", errors="replace") as f:
        text = f.read(int(args.mb * 1e6))
    lines = [line for line in text.split("\n") if line]
    nbytes = sum(len(line.encode()) for line in lines)
    with tempfile.TemporaryDirectory() as tmp:
        train = os.path.join(tmp, "train.txt")
        with open(train, "w", encoding="utf-8") as f:
            f.write(text[: int(args.train_mb * 1e6)])
        print(f"{nbytes / 1e6:.1f} MB in {len(lines)} lines; vocab {args.vocab}; one thread")
        print(f"{'model':10} {'call':8} {'spm MB/s':>9} {'bytepair MB/s':>14} {'ratio':>6}")
        models = {}
        for kind in ("unigram", "bpe"):
            prefix = os.path.join(tmp, kind)
            spm.SentencePieceTrainer.train(
                input=train, model_prefix=prefix, model_type=kind, vocab_size=args.vocab,
                byte_fallback=True, minloglevel=2, num_threads=os.cpu_count() or 1,
                train_extremely_large_corpus=False, max_sentence_length=1 << 16,
            )
            models[kind] = path = prefix + ".model"
            sp = spm.SentencePieceProcessor(model_file=path, num_threads=1)
            tok = bytepair.load(path)
            t_sp, ids_sp = best(lambda: sp.encode(lines, num_threads=1), args.repeat)
            t_bp, ids_bp = best(lambda: tok.encode_batch(lines, num_threads=1), args.repeat)
            assert ids_sp == ids_bp, f"{kind}: ids differ"
            print(f"{kind:10} {'batch':8} {nbytes / 1e6 / t_sp:9.1f} {nbytes / 1e6 / t_bp:14.1f} {t_sp / t_bp:6.2f}")
            t_sp, _ = best(lambda: [sp.encode(line) for line in lines], args.repeat)
            t_bp, _ = best(lambda: [tok.encode(line) for line in lines], args.repeat)
            print(f"{kind:10} {'per line':8} {nbytes / 1e6 / t_sp:9.1f} {nbytes / 1e6 / t_bp:14.1f} {t_sp / t_bp:6.2f}")
        big = os.path.join(tmp, "big.model")
        big_model(models["unigram"], args.load_pieces, big)
        t_sp, sp = best(lambda: spm.SentencePieceProcessor(model_file=big), 5)
        t_bp, tok = best(lambda: bytepair.load(big), 5)
        n = sp.get_piece_size()  # type: ignore[attr-defined]
        assert n == len(tok)  # type: ignore[arg-type]
        print(f"load {n} pieces: spm {t_sp * 1e3:.1f} ms, bytepair {t_bp * 1e3:.1f} ms, ratio {t_sp / t_bp:.2f}")


if __name__ == "__main__":
    main()
