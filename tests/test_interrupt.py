"""Ctrl-C during long encode / count calls: large inputs go in rounds with
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


def run_child(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=240
    )


# Without rounds the interrupt still comes, but only once the call has returned; so each test
# below tells "interrupted inside the call" from "after it" by something the call leaves behind,
# not by how long it took.

PRELUDE = """
    import os, signal, sys, threading, time, tracemalloc, resource
    from tests.test_interrupt import tok
    t = tok()
    text = ("ab cd ab\\n\\nxy " * 20 + "\\n") * 400_000   # about 100 MB, about 7 ids per 13 bytes
    seen = {}
    def handler(signum, frame):
        seen["traced"] = tracemalloc.get_traced_memory()[0]
        seen["cpu"] = resource.getrusage(resource.RUSAGE_SELF).ru_utime
        raise KeyboardInterrupt
    signal.signal(signal.SIGINT, handler)
    def fire(delay=0.3):
        time.sleep(delay)
        os.kill(os.getpid(), signal.SIGINT)
"""


@pytest.mark.parametrize("call", ["encode", "encode_batch"])
def test_ctrl_c_stops_encoding_before_the_ids_are_built(call: str) -> None:
    # The handler records the Python memory traced since the call began: after a completed
    # call it would include the list of ~50 million ids (400 MB of pointers); interrupted
    # between rounds, no list has been made.
    # The signal comes a tenth of a count of the first text in (what its encoding costs without
    # the list): a fixed 0.3 s came after the first text's list was made on a fast machine.
    proc = run_child(PRELUDE + f"""
    arg = [text, text] if "{call}" == "encode_batch" else text
    c0 = resource.getrusage(resource.RUSAGE_SELF).ru_utime
    t.count(text)
    full = resource.getrusage(resource.RUSAGE_SELF).ru_utime - c0
    tracemalloc.start()
    threading.Thread(target=fire, args=(full / 10,)).start()
    try:
        t.{call}(arg)
        print("RETURNED")
    except KeyboardInterrupt:
        print("TRACED", seen["traced"])
    """)
    assert "RETURNED" not in proc.stdout, proc.stderr
    traced = int(proc.stdout.split("TRACED")[1])
    assert traced < 16 << 20, f"{traced} bytes traced at the interrupt: the ids were built"


def test_ctrl_c_stops_count_before_the_work_is_done() -> None:
    # count returns one int, so the child first counts the text once uninterrupted and then
    # compares the CPU time spent when the interrupt is handled: an interrupt handled only
    # after the call would have spent the whole count's time again.
    proc = run_child(PRELUDE + """
    text = text * 2
    c0 = resource.getrusage(resource.RUSAGE_SELF).ru_utime
    t.count(text)
    full = resource.getrusage(resource.RUSAGE_SELF).ru_utime - c0
    c1 = resource.getrusage(resource.RUSAGE_SELF).ru_utime
    # A tenth of the whole count in: a fixed delay came after half of it on a fast machine.
    threading.Thread(target=fire, args=(full / 10,)).start()
    try:
        t.count(text)
        print("RETURNED")
    except KeyboardInterrupt:
        print("SHARE", (seen["cpu"] - c1) / full)
    """)
    assert "RETURNED" not in proc.stdout, proc.stderr
    share = float(proc.stdout.split("SHARE")[1])
    assert share < 0.5, f"the interrupt came after {share:.0%} of a whole count's CPU time"


def test_ctrl_c_interrupts_a_long_count_batch() -> None:
    # One 8 MB string, shared, 40,000 times (320 GB): far longer than the child's timeout
    # unless the call stops at the signal (a child that has to be killed fails the test).
    proc = run_child(PRELUDE + """
    threading.Thread(target=fire).start()
    try:
        t.count_batch([text[: 8 << 20]] * 40_000)
        print("RETURNED")
    except KeyboardInterrupt:
        print("INTERRUPTED")
    """)
    assert "INTERRUPTED" in proc.stdout, proc.stderr


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
