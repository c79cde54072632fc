"""Ctrl-C during long encode / count calls (issue 13, item 8): large inputs go in rounds with
signal checks between them; the ids are those of the whole input."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from bytepair import Tokenizer

BYTES = {i: bytes([i]) for i in range(256)}


def tok() -> Tokenizer:
    vocab = BYTES | {256: b"ab", 257: b" ab", 258: b"\n\n"}
    return Tokenizer(vocab, [(b"a", b"b"), (b" ", b"ab"), (b"\n", b"\n")], pattern="gpt4")


@pytest.mark.parametrize("call", ["encode", "encode_batch", "count", "count_batch"])
def test_ctrl_c_interrupts_a_long_call(call: str) -> None:
    # The child signals itself from a thread once the call has started and must end with
    # KeyboardInterrupt; a child that has to be killed by the timeout fails the test. For
    # count_batch the batch (one 8 MB string, shared, 4000 times) takes far longer than the
    # timeout unless the call stops at the signal; for the others the input is kept to what
    # memory allows, so they check that the interruption is clean.
    code = textwrap.dedent(f"""
        import os, signal, sys, threading, time
        from tests.test_interrupt import tok
        t = tok()
        text = ("ab cd ab\\n\\nxy " * 20 + "\\n") * 50_000
        def fire():
            time.sleep(0.5)
            os.kill(os.getpid(), signal.SIGINT)
        threading.Thread(target=fire).start()
        print("START", flush=True)
        n = 4000 if "{call}" == "count_batch" else 2
        arg = [text] * n if "{call}".endswith("batch") else text
        for _ in range(50):
            getattr(t, "{call}")(arg)
        print("DONE", flush=True)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "START" in proc.stdout
    assert "DONE" not in proc.stdout
    assert proc.returncode != 0
    assert "KeyboardInterrupt" in proc.stderr


@pytest.mark.parametrize("threads", [1, 2])
def test_rounds_give_the_ids_of_the_whole(threads: int) -> None:
    t = tok()
    # Over 8 MiB per thread, so the text goes in rounds; compared with the same text encoded
    # in small pieces cut at newlines (independent cuts) and with decode.
    line = "ab cd ab\n\nxy é中 ab" * 3 + "\n"
    text = line * (threads * (9 << 20) // len(line.encode()))
    ids = t.encode(text, num_threads=threads)
    assert t.decode(ids) == text
    assert ids == t.encode(line) * (len(text) // len(line))
    assert t.count(text, num_threads=threads) == len(ids)
    assert t.count(text, limit=1000, num_threads=threads) == 1001
    batch = [text, line, text]
    assert t.encode_batch(batch, num_threads=threads) == [ids, t.encode(line), ids]
    assert t.count_batch(batch, num_threads=threads) == [len(ids), len(t.encode(line)), len(ids)]
