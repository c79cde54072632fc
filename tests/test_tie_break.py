"""tie_break= on BPE training: "first" is the notebooks' and minbpe's rule (the first pair of
the current sequence among the most frequent: ``max(stats, key=stats.get)``), checked against
that algorithm written out here; "hf" is Hugging Face's BpeTrainer, checked against
``tokenizers`` itself; "lexicographic" stays the default."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.cli import main
from bytepair.patterns import PATTERNS

SAMPLE = Path(bytepair.__file__).parent / "data" / "tinyshakespeare.txt"
SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# Few letters, so that many pairs tie.
SMALL = st.text(st.sampled_from("aab b c\n'sé東!"), max_size=80)


def notebook_merges(chunks: list[str], n: int) -> list[tuple[bytes, bytes]]:
    """The training loop of the notebooks: count pairs into a dict in text order, take
    ``max(stats, key=stats.get)``, merge it everywhere, again."""
    ids = [list(c.encode("utf-8")) for c in chunks]
    vocab = {i: bytes([i]) for i in range(256)}
    merges = []
    for i in range(n):
        stats: dict[tuple[int, int], int] = {}
        for chunk in ids:
            for pair in zip(chunk, chunk[1:]):
                stats[pair] = stats.get(pair, 0) + 1
        if not stats:
            break
        pair = max(stats, key=stats.__getitem__)
        new = 256 + i
        vocab[new] = vocab[pair[0]] + vocab[pair[1]]
        merges.append((vocab[pair[0]], vocab[pair[1]]))
        merged = []
        for chunk in ids:
            out, j = [], 0
            while j < len(chunk):
                if j + 1 < len(chunk) and (chunk[j], chunk[j + 1]) == pair:
                    out.append(new)
                    j += 2
                else:
                    out.append(chunk[j])
                    j += 1
            merged.append(out)
        ids = merged
    return merges


def quiet_train(texts: list[str], **kw: object) -> bytepair.Tokenizer:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bytepair.BytepairWarning)  # stopped early, empty corpus
        return bytepair.train_from_iterator(texts, progress=False, **kw)  # type: ignore[arg-type]


@SETTINGS
@given(text=SMALL, n=st.integers(1, 25))
def test_first_is_the_notebook_rule_with_a_pattern(text: str, n: int) -> None:
    tok = quiet_train([text], vocab_size=256 + n, pattern="gpt4", min_frequency=1, tie_break="first")
    assert tok.merges == notebook_merges(regex.findall(PATTERNS["gpt4"], text), n)


@SETTINGS
@given(text=SMALL, n=st.integers(1, 25))
def test_first_is_the_notebook_rule_on_the_whole_text(text: str, n: int) -> None:
    tok = quiet_train([text], vocab_size=256 + n, pattern=None, min_frequency=1, tie_break="first")
    assert tok.merges == notebook_merges([text] if text else [], n)


def test_first_on_real_text_where_the_default_rule_parts() -> None:
    text = SAMPLE.read_text(encoding="utf-8")[:20_000]
    want = notebook_merges(regex.findall(PATTERNS["gpt4"], text), 120)
    assert quiet_train([text], vocab_size=376, pattern="gpt4", min_frequency=1, tie_break="first").merges == want
    # the default rule takes another pair at some tie: the rule is what made them equal
    assert quiet_train([text], vocab_size=376, pattern="gpt4", min_frequency=1).merges != want


def test_first_from_a_file_and_from_counts_in_order(tmp_path: Path) -> None:
    text = SAMPLE.read_text(encoding="utf-8")[:20_000]
    path = tmp_path / "t.txt"
    path.write_text(text, encoding="utf-8")
    want = quiet_train([text], vocab_size=356, min_frequency=1, tie_break="first").merges
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bytepair.BytepairWarning)
        assert bytepair.train(path, vocab_size=356, min_frequency=1, tie_break="first", progress=False).merges == want
    counts: dict[str, int] = {}
    for piece in regex.findall(PATTERNS["gpt4"], text):
        counts[piece] = counts.get(piece, 0) + 1
    got = bytepair.train_from_counts(counts, vocab_size=356, min_frequency=1, tie_break="first")
    assert got.merges == want
    assert got.training["tie_break"] == "first"


def hf_merges(texts: list[str], n: int, min_frequency: int) -> list[tuple[bytes, bytes]]:
    tokenizers = pytest.importorskip("tokenizers")
    from bytepair.formats.gpt2 import unicode_to_bytes

    hf = tokenizers.Tokenizer(tokenizers.models.BPE())
    hf.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=256 + n,
        min_frequency=min_frequency,
        show_progress=False,
        initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=[],
    )
    hf.train_from_iterator(texts, trainer)
    merges = json.loads(hf.to_str())["model"]["merges"]
    out = []
    for m in merges:
        left, right = m.split(" ") if isinstance(m, str) else m
        a, b = unicode_to_bytes(left), unicode_to_bytes(right)
        assert a is not None and b is not None
        out.append((a, b))
    return out


@SETTINGS
@given(texts=st.lists(SMALL, min_size=1, max_size=6), n=st.integers(1, 30), min_frequency=st.integers(1, 3))
def test_hf_is_hugging_faces_bpe_trainer(texts: list[str], n: int, min_frequency: int) -> None:
    tok = quiet_train(texts, vocab_size=256 + n, pattern="gpt2", min_frequency=min_frequency, tie_break="hf")
    assert tok.merges == hf_merges(texts, n, min_frequency)


def test_hf_on_real_text_where_the_default_rule_parts() -> None:
    docs = SAMPLE.read_text(encoding="utf-8")[:300_000].split("\n\n")
    want = hf_merges(docs, 400, 2)
    assert quiet_train(docs, vocab_size=656, pattern="gpt2", min_frequency=2, tie_break="hf").merges == want
    assert quiet_train(docs, vocab_size=656, pattern="gpt2", min_frequency=2).merges != want


def test_bad_tie_breaks_are_named() -> None:
    with pytest.raises(bytepair.BytepairError, match="tie_break must be one of.*'greatest'"):
        bytepair.train_from_iterator(["abc"], vocab_size=260, tie_break="greatest")
    base = quiet_train(["ab ab ab"], vocab_size=258)
    with pytest.raises(bytepair.BytepairError, match="trains from bytes"):
        bytepair.train_from_iterator(["ab ab"], vocab_size=262, base=base, tie_break="hf")
    with pytest.raises(bytepair.BytepairError, match="one source"):
        bytepair.train(
            [bytepair.Source(texts=["a b"], name="x"), bytepair.Source(texts=["c"], name="y")],
            vocab_size=260,
            tie_break="first",
        )


def test_cli_tie_break(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = SAMPLE.read_text(encoding="utf-8")[:20_000]
    path = tmp_path / "t.txt"
    path.write_text(text, encoding="utf-8")
    out = tmp_path / "tok.json"
    assert main(["train", str(path), "--vocab-size", "356", "--min-frequency", "1", "--tie-break", "first", "-o", str(out)]) == 0
    assert bytepair.load(out).merges == quiet_train([text], vocab_size=356, min_frequency=1, tie_break="first").merges
    assert main(["train", str(path), "--vocab-size", "356", "--model", "wordpiece", "--tie-break", "hf", "-o", str(out)]) == 2
    assert "--tie-break" in capsys.readouterr().err
