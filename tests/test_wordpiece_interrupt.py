"""WordPiece's long calls go in rounds, with Ctrl-C looked at between them, and the rounds give
the ids and offsets of the whole. A text made of one unit that ends in whitespace, repeated,
encodes to the unit's ids repeated (BERT's pre-tokenizer ends every word at whitespace), with
the unit's offsets shifted by its length each time: that is the oracle here, at sizes past a
round (8 MiB per thread). Ctrl-C is told apart by the CPU time spent when the handler ran, as
in test_interrupt.py: a call that sees the signal only once it has returned has spent the
whole call's time again."""

from __future__ import annotations

import pytest

from bytepair import WordPieceTokenizer
from tests.test_interrupt import run_child

VOCAB = ["[UNK]", "[CLS]", "[SEP]", "[MASK]", "ab", "cd", "x", "##y", "é", "中", ".", "##b", "a"]
UNIT = "ab cd [MASK] xy é中. aab\n"


def tokenizer() -> WordPieceTokenizer:
    return WordPieceTokenizer(VOCAB)


def test_rounds_give_the_ids_and_offsets_of_the_whole() -> None:
    tok = tokenizer()
    tok._core.segment_cache(0)
    n = (17 << 20) // len(UNIT.encode())
    text = UNIT * n
    ids, offsets = tok.encode_with_offsets(UNIT)
    assert tok.encode(text) == ids * n
    big_ids, big_offsets = tok.encode_with_offsets(text)
    assert big_ids == ids * n
    step = len(UNIT)
    assert big_offsets[-len(offsets) :] == [(a + step * (n - 1), b + step * (n - 1)) for a, b in offsets]
    assert big_offsets[: 2 * len(offsets)] == offsets + [(a + step, b + step) for a, b in offsets]
    for threads in (1, 2):
        batch = [UNIT, text, "", UNIT * 3]
        want = [ids, ids * n, [], ids * 3]
        assert tok.encode_batch(batch, num_threads=threads) == want
        flat, ends = tok.encode_batch_numpy(batch, num_threads=threads)
        assert [flat[ends[i] : ends[i + 1]].tolist() for i in range(len(batch))] == want
        # many texts, more than a round in all
        many = [UNIT * 1000] * ((17 << 20) // (len(UNIT.encode()) * 1000))
        assert tok.encode_batch(many, num_threads=threads) == [ids * 1000] * len(many)


CALLS = {
    "encode": "t.encode(text)",
    "encode_with_offsets": "t.encode_with_offsets(text)",
    "encode_batch": "t.encode_batch([text[: len(text) // 2], text[len(text) // 2 :]])",
    "encode_batch many": "t.encode_batch([text[i : i + (1 << 20)] for i in range(0, len(text), 1 << 20)])",
    "encode_batch_numpy": "t.encode_batch_numpy([text[: len(text) // 2], text[len(text) // 2 :]])",
}


@pytest.mark.parametrize("call", list(CALLS))
def test_ctrl_c_stops_long_wordpiece_calls(call: str) -> None:
    proc = run_child(f"""
    import os, signal, threading, time, resource
    from bytepair import WordPieceTokenizer
    t = WordPieceTokenizer({VOCAB!r})
    t._core.segment_cache(0)
    text = {UNIT!r} * (100_000_000 // {len(UNIT.encode())})
    seen = {{}}
    def handler(signum, frame):
        seen["cpu"] = resource.getrusage(resource.RUSAGE_SELF).ru_utime
        raise KeyboardInterrupt
    signal.signal(signal.SIGINT, handler)
    def fire(delay):
        time.sleep(delay)
        os.kill(os.getpid(), signal.SIGINT)
    c0 = resource.getrusage(resource.RUSAGE_SELF).ru_utime
    {CALLS[call]}
    full = resource.getrusage(resource.RUSAGE_SELF).ru_utime - c0
    c1 = resource.getrusage(resource.RUSAGE_SELF).ru_utime
    # A tenth of the whole call in (a fixed delay is a larger share on a faster machine).
    threading.Thread(target=fire, args=(full / 10,)).start()
    try:
        {CALLS[call]}
        print("RETURNED")
    except KeyboardInterrupt:
        print("SHARE", (seen["cpu"] - c1) / full)
    """)
    assert "RETURNED" not in proc.stdout and "SHARE" in proc.stdout, proc.stderr[-3000:]
    share = float(proc.stdout.split("SHARE")[1])
    assert share < 0.5, f"the interrupt came after {share:.0%} of a whole call's CPU time"
