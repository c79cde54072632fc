"""compare reads corpora in blocks: what the blocks measure adds up to the whole text (every
shipped encoding and WordPiece, any cut), word spans are the definition's, and memory does not
follow the corpus."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.analysis import Corpus, compare
from bytepair.analysis.compare import measure
from bytepair.analysis.words import _WORD, byte_offsets, count_words, word_spans

SAMPLE = Path(bytepair.__file__).parent / "data" / "tinyshakespeare.txt"
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
LINES = st.lists(
    st.text(st.sampled_from("ab Zé東京は\t'!1 ") | st.characters(blacklist_categories=("Cs", "Cn")), max_size=12), max_size=30
).map(lambda lines: "\n".join(lines))


@pytest.fixture(scope="module")
def wordpiece() -> bytepair.WordPieceTokenizer:
    return bytepair.train_wordpiece_from_iterator([SAMPLE.read_text(encoding="utf-8")[:100_000]], vocab_size=300, progress=False)


@SETTINGS
@given(text=LINES, block=st.integers(4, 64))
def test_blocks_add_up_to_the_whole_text(text: str, block: int, tmp_path: Path, wordpiece: bytepair.WordPieceTokenizer) -> None:
    path = tmp_path / "c.txt"
    path.write_text(text, encoding="utf-8", newline="")
    blocks = list(Corpus("c", [str(path)]).blocks(block_bytes=block))
    assert "".join(blocks) == text
    for tok in [*(bytepair.get_encoding(n) for n in bytepair.list_encoding_names()), wordpiece]:
        parts = np.asarray([measure(tok, b) for b in blocks], dtype=np.int64).reshape(-1, 4).sum(axis=0)
        assert tuple(int(x) for x in parts) == measure(tok, text)


@settings(max_examples=300, deadline=None)
@given(text=st.text(st.sampled_from("ab \n\t東京は\u3000x\U00020001é\x1c\u2028-") | st.characters(), max_size=40))
def test_word_spans_are_the_definition(text: str) -> None:
    offsets = byte_offsets(text)
    want = [(int(offsets[m.start()]), int(offsets[m.end()])) for m in _WORD.finditer(text)]
    assert [tuple(int(x) for x in s) for s in word_spans(text)] == want
    assert count_words(text) == len(want)


def naive_measure(tok: bytepair.Tokenizer | bytepair.WordPieceTokenizer, text: str) -> tuple[int, int, int, int]:
    """measure() the slow way: token ends one token at a time, words by the definition's regex,
    a word cut when some token end falls strictly inside it."""
    offsets = byte_offsets(text)
    if isinstance(tok, bytepair.WordPieceTokenizer):
        ids, spans = tok.encode_with_offsets(text)
        ends = [int(offsets[e]) for _, e in spans]
        n_bytes = len(text.encode("utf-8", "surrogatepass"))
    else:
        ids = tok.encode(text, disallowed_special=())
        ends, at = [], 0
        for i in ids:
            at += len(tok.decode_bytes([i]))
            ends.append(at)
        n_bytes = at
    words = [(int(offsets[m.start()]), int(offsets[m.end()])) for m in _WORD.finditer(text)]
    cut = sum(1 for s, e in words if any(s < x < e for x in ends))
    return len(ids), len(words), cut, n_bytes


@SETTINGS
@given(text=LINES)
def test_measure_is_the_naive_count(text: str, wordpiece: bytepair.WordPieceTokenizer) -> None:
    for tok in [*(bytepair.get_encoding(n) for n in bytepair.list_encoding_names()), wordpiece]:
        assert measure(tok, text) == naive_measure(tok, text)


def test_measure_is_the_naive_count_on_the_sample(wordpiece: bytepair.WordPieceTokenizer) -> None:
    text = SAMPLE.read_text(encoding="utf-8")[:20_000] + "\n東京に行く GPT-4は\u3000caf\u00e9 \U00020001x\n"
    for tok in [bytepair.get_encoding("gpt2"), bytepair.get_encoding("o200k_base"), wordpiece]:
        assert measure(tok, text) == naive_measure(tok, text)
        assert measure(tok, text.upper()[:5000]) == naive_measure(tok, text.upper()[:5000])


def test_ascii_space_is_str_isspace() -> None:
    from bytepair.analysis.compare import _ascii_space

    got = _ascii_space(np.arange(256, dtype=np.uint8))
    assert [i for i in range(256) if got[i]] == [i for i in range(128) if chr(i).isspace()]


def test_compare_of_a_file_equals_measuring_it_whole(tmp_path: Path) -> None:
    text = SAMPLE.read_text(encoding="utf-8")
    path = tmp_path / "s.txt"
    path.write_text(text * 4, encoding="utf-8")  # about 4.5 MB: more than one block
    tok = bytepair.get_encoding("cl100k_base")
    assert len(list(Corpus("s", [str(path)]).blocks())) > 1
    row = compare([("cl100k", tok)], [Corpus("s", [str(path)])]).rows[0]
    assert (row.tokens, row.words, row.split_words, row.text_bytes) == measure(tok, text * 4)


def test_compare_memory_does_not_follow_the_corpus(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    block = SAMPLE.read_text(encoding="utf-8")
    with open(path, "w", encoding="utf-8") as f:
        for _ in range(24):  # 27 MB
            f.write(block)
    code = textwrap.dedent(
        f"""
        import bytepair
        from bytepair.analysis import Corpus, compare
        toks = [(n, bytepair.get_encoding(n)) for n in ("gpt2", "cl100k_base", "o200k_base")]
        compare(toks, [Corpus("big", [{str(path)!r}])])
        print(next(l for l in open("/proc/self/status") if l.startswith("VmHWM")).split()[1])
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=dict(os.environ, RAYON_NUM_THREADS="1"))
    peak_mb = int(out.stdout.strip()) / 1024
    # Three encodings loaded, and a block of 4 MiB at a time; reading the 27 MB whole and
    # encoding it to Python lists took over 1 GB.
    assert peak_mb < 400, peak_mb


def test_compare_progress_names_the_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.txt"
    path.write_text(SAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    compare([("gpt2", bytepair.get_encoding("gpt2"))], [Corpus("s", [str(path)])], progress=True)
    assert re.search(r"comparing", capsys.readouterr().err)


def test_measure_of_normalizing_bpe_and_lone_surrogates() -> None:
    """A BPE tokenizer that normalizes is measured on the text it encodes (the normalized one);
    a lone surrogate is encoded as U+FFFD, as encode does, and is a word character either way."""
    text = SAMPLE.read_text(encoding="utf-8")[:3000]
    tok = bytepair.train_from_iterator([text], vocab_size=300, normalization="nfkc+lowercase")
    odd = "Ｔｈｅ ＫＩＮＧ ﬁne 東京 " + text[:500]
    norm = tok._norm(odd)
    assert norm != odd
    assert measure(tok, odd) == naive_measure(tok, norm)
    gpt2 = bytepair.get_encoding("gpt2")
    broken = "a\ud800b c \udfffd\n" + text[:200]
    assert measure(gpt2, broken) == naive_measure(gpt2, broken.replace("\ud800", "\ufffd").replace("\udfff", "\ufffd"))
    assert measure(gpt2, broken)[1] == count_words(broken)
