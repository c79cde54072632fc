"""Mixing sources in SentencePiece training (``train_sentencepiece(..., alpha=A)``, ``bytepair
train --model unigram|spm-bpe --alpha A``): the weighted word counts against a Python oracle
(byte-level BPE's rule: multiplier round((n_max / n_i) ** (1 - alpha) * 65536), each count
rounded halves up), equal weights pulling the pieces toward a small source, the model at
alpha=1 unchanged, independence from the thread count, and bad values refused."""

from __future__ import annotations

import math
import random
from collections import Counter
from pathlib import Path

import pytest

from bytepair import BytepairError, Source, _core, _feed, train_sentencepiece, train_unigram
from bytepair import sentencepiece_training as spt
from bytepair.cli import main

D = 1 << 16
# small corpora give fewer pieces than some vocab sizes ask for; that warning is not tested here
pytestmark = pytest.mark.filterwarnings("ignore:the corpus gives")


def pieces(tok: object) -> list[str]:
    return [p for p, _, _ in tok.pieces()]  # type: ignore[attr-defined]


def big_and_small(seed: int) -> tuple[list[str], list[str]]:
    """A large source of 30 random words of the letters a-m (118 KB), and a small one (about
    1% of it) whose words are "zyxw" and one more letter of n-u: its letters are in no word of
    the large one, and "▁zyxw" is in 8 distinct words (a seed substring of Unigram)."""
    rng = random.Random(seed)
    vocab = ["".join(rng.choice("abcdefghijklm") for _ in range(5)) for _ in range(30)]
    big = [" ".join(rng.choice(vocab) for _ in range(10)) for _ in range(2000)]
    small = [" ".join("zyxw" + rng.choice("nopqrstu") for _ in range(10)) for _ in range(20)]
    return big, small


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
@pytest.mark.parametrize("seed", [1, 2])
def test_equal_weights_make_the_small_sources_stem_a_piece(model_type: str, seed: int) -> None:
    big, small = big_and_small(seed)
    sources = [Source(texts=big, name="big"), Source(texts=small, name="small")]

    def train(alpha: float) -> list[str]:
        tok = train_sentencepiece(
            sources, vocab_size=60, model_type=model_type, character_coverage=0.98,
            normalization="identity", alpha=alpha,
        )
        return pieces(tok)

    # alpha=1: the small source's letters are under 1% of the text, outside the 98% the kept
    # characters cover, so no piece can hold them.
    raw = train(1.0)
    assert not [p for p in raw if set(p) & set("zyxw")], raw
    # alpha=0: both sources weigh the same, "▁zyxw" starts half the (weighted) words.
    equal = train(0.0)
    assert "▁zyxw" in equal, equal


def oracle_words(texts: list[str]) -> Counter[str]:
    """The words of identity-normalized ASCII lines: each space-separated run, after "▁"."""
    return Counter("▁" + w for t in texts for w in t.split())


def three_sources(seed: int) -> list[list[str]]:
    """Three sources of different sizes sharing some words, so that counts are summed and
    the weights (not multiples of 1/2) make the rounding matter."""
    rng = random.Random(seed)
    shared = ["".join(rng.choice("abcde") for _ in range(rng.randrange(1, 6))) for _ in range(40)]
    out = []
    for n_docs, own in ((300, "fgh"), (40, "ijk"), (7, "lmn")):
        mine = ["".join(rng.choice(own) for _ in range(rng.randrange(1, 5))) for _ in range(30)]
        out.append(
            ["  ".join(rng.choice(shared + mine) for _ in range(rng.randrange(1, 12))) for _ in range(n_docs)]
        )
    return out


def counted(
    texts_per_source: list[list[str]], alpha: float, threads: int | None = None
) -> tuple[_core.WordCounter, list[int]]:
    """The counter train_sentencepiece trains on, and the multipliers it applied."""
    feeds, total, _, _ = _feed.source_feeds([Source(texts=t) for t in texts_per_source], "strict")

    def new() -> _core.WordCounter:
        return spt._word_counter(
            normalization="identity", add_dummy_prefix=True, remove_extra_whitespaces=True,
            treat_whitespace_as_suffix=False, user_defined_symbols=[],
        )

    counter, _, sizes, multipliers, words = spt._count(
        new, feeds, alpha=alpha, num_threads=threads, show=False, total_bytes=total
    )
    assert sizes == [sum(len(t.encode()) for t in ts) for ts in texts_per_source]
    assert words == ([] if alpha == 1 else [sum(oracle_words(ts).values()) for ts in texts_per_source])
    return counter, multipliers


@pytest.mark.parametrize("alpha", [0.0, 0.3, 0.77, 1.0])
def test_weighted_counts_are_the_oracles(alpha: float) -> None:
    sources = three_sources(5)
    sizes = [sum(len(t.encode()) for t in ts) for ts in sources]
    n_max = max(sizes)
    multipliers = [round((n_max / n) ** (1 - alpha) * D) for n in sizes]
    want: Counter[str] = Counter()
    for texts, m in zip(sources, multipliers):
        for word, c in oracle_words(texts).items():
            want[word] += (c * m + D // 2) // D
    counter, applied = counted(sources, alpha)
    assert applied == multipliers
    assert dict(counter.word_counts()) == dict(want)
    # character coverage sees the weighted counts: each character weighted by its words' counts
    chars: Counter[str] = Counter()
    for word, c in want.items():
        for ch in word:
            chars[ch] += c
    assert counter.char_counts() == sorted(chars.items(), key=lambda kv: (-kv[1], kv[0]))
    if alpha < 1:
        assert len(set(multipliers)) == 3 and any(m % (D // 2) for m in multipliers)


def test_each_source_counter_matches_the_oracle_words() -> None:
    """The oracle's split is the counter's: one source counted alone."""
    for texts in three_sources(6):
        c = spt._word_counter(
            normalization="identity", add_dummy_prefix=True, remove_extra_whitespaces=True,
            treat_whitespace_as_suffix=False, user_defined_symbols=[],
        )
        c.add_texts(texts)
        assert dict(c.word_counts()) == dict(oracle_words(texts))


def test_the_record_has_each_sources_weight_and_share() -> None:
    sources = three_sources(7)
    alpha = 0.4
    tok = train_unigram(
        [Source(texts=t, name=f"s{i}") for i, t in enumerate(sources)], vocab_size=40, alpha=alpha,
        normalization="identity",
    )
    record = tok.training
    sizes = [sum(len(t.encode()) for t in ts) for ts in sources]
    powered = [n**alpha for n in sizes]
    assert record["alpha"] == alpha
    for i, (s, n) in enumerate(zip(record["sources"], sizes)):
        assert s["name"] == f"s{i}" and s["text_bytes"] == n
        assert s["weight"] == round((max(sizes) / n) ** (1 - alpha) * D) / D
        assert math.isclose(s["share"], powered[i] / sum(powered), abs_tol=1e-6)
    assert record["words"] == sum(sum(oracle_words(t).values()) for t in sources)
    assert record["weighted_words"] > record["words"]
    assert record["text_bytes"] == sum(sizes)


@pytest.fixture
def two_files(tmp_path: Path) -> tuple[Path, Path]:
    big, small = big_and_small(3)
    a, b = tmp_path / "big.txt", tmp_path / "small.txt"
    a.write_text("\n".join(big) + "\n", encoding="utf-8")
    b.write_text("\n".join(small) + "\n", encoding="utf-8")
    return a, b


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_alpha_1_is_the_model_of_all_sources_counted_together(model_type: str, two_files: tuple[Path, Path]) -> None:
    a, b = (str(p) for p in two_files)
    options = dict(vocab_size=50, model_type=model_type, character_coverage=0.98, normalization="identity")
    together = train_sentencepiece(Source([a, b]), **options).to_bytes()  # type: ignore[arg-type]
    sources = [Source(a, name="big"), Source(b, name="small")]
    assert train_sentencepiece(sources, **options).to_bytes() == together  # type: ignore[arg-type]
    assert train_sentencepiece(sources, alpha=1.0, **options).to_bytes() == together  # type: ignore[arg-type]
    assert train_sentencepiece(sources, alpha=0.0, **options).to_bytes() != together  # type: ignore[arg-type]


def test_sources_counted_apart_at_weight_1_give_the_same_model() -> None:
    """Sources of the same size have weight 1 at any alpha: counted apart and folded in, they
    give the model of the sources counted together."""
    rng = random.Random(8)
    words = ["".join(rng.choice("abcdefg") for _ in range(rng.randrange(2, 6))) for _ in range(50)]
    one = [" ".join(rng.choice(words) for _ in range(8)) for _ in range(300)]
    other = one[::-1]  # same size, different order
    other = [" ".join(reversed(t.split())) for t in other]
    options = dict(vocab_size=60, normalization="identity")
    mixed = train_sentencepiece([Source(texts=one), Source(texts=other)], alpha=0.25, **options)  # type: ignore[arg-type]
    assert [s["weight"] for s in mixed.training["sources"]] == [1.0, 1.0]
    assert mixed.training["weighted_words"] == mixed.training["words"]
    together = train_sentencepiece([Source(texts=one), Source(texts=other)], **options)  # type: ignore[arg-type]
    assert mixed.to_bytes() == together.to_bytes()


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_the_model_does_not_depend_on_threads(model_type: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_feed, "_UNIT_BYTES", 97)  # many units per batch, over both threads
    sources = three_sources(9)

    def train(threads: int) -> bytes:
        tok = train_sentencepiece(
            [Source(texts=t) for t in sources], vocab_size=80, model_type=model_type, alpha=0.3,
            normalization="identity", num_threads=threads,
        )
        return tok.to_bytes()

    assert train(1) == train(2)
    assert counted(sources, 0.3, threads=1)[0].word_counts() == counted(sources, 0.3, threads=2)[0].word_counts()


@pytest.mark.parametrize("alpha", [-0.1, 1.5, float("nan"), "0.5", True, None])
def test_bad_alpha_is_refused(alpha: object) -> None:
    with pytest.raises(BytepairError, match=r"alpha must be a number in \[0, 1\]"):
        train_sentencepiece([Source(texts=["a b"]), Source(texts=["c"])], vocab_size=10, alpha=alpha)  # type: ignore[arg-type]


def test_the_iterator_has_one_source_and_no_alpha() -> None:
    with pytest.raises(TypeError, match="alpha"):
        spt.train_sentencepiece_from_iterator(["a b"], vocab_size=10, alpha=0.5)  # type: ignore[call-arg]


def test_absorb_refuses_itself_another_kind_and_a_trained_counter() -> None:
    def spm_counter() -> _core.WordCounter:
        return spt._word_counter(
            normalization="identity", add_dummy_prefix=True, remove_extra_whitespaces=True,
            treat_whitespace_as_suffix=False, user_defined_symbols=[],
        )

    total = spm_counter()
    with pytest.raises(BytepairError, match="itself"):
        total.absorb(total, D, D)
    bert = _core.WordCounter(
        clean_text=True, handle_chinese_chars=True, strip_accents=False, lowercase=False, split_on=[]
    )
    with pytest.raises(BytepairError, match="own kind"):
        total.absorb(bert, D, D)
    with pytest.raises(BytepairError, match="denominator"):
        total.absorb(spm_counter(), D, 0)
    part = spm_counter()
    part.add_texts(["x y y"])
    total.absorb(part, 3 * D // 2, D)  # 1.5 -> 2 (halves up), 3 -> 3
    assert total.word_counts() == [("▁x", 2), ("▁y", 3)]
    assert total.text_stats() == part.text_stats()
    with pytest.raises(BytepairError, match="already used for training"):
        total.absorb(spm_counter(), D, D)


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().err


@pytest.mark.parametrize("model", ["unigram", "spm-bpe"])
def test_cli_alpha_mixes_the_sources(
    model: str, two_files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = two_files
    out = tmp_path / "mix.model"
    argv = [
        "train", "--model", model, "--source", f"big={a}", "--source", f"small={b}", "--vocab-size", "60",
        "--character-coverage", "0.98", "--normalization", "identity", "-o", str(out),
    ]
    code, err = run_cli(capsys, *argv, "--alpha", "0")
    assert code == 0, err
    assert "mixed with --alpha 0" in err and "share  50.0%" in err
    mixed = Path(out).read_bytes()
    import bytepair

    assert "▁zyxw" in pieces(bytepair.load(str(out)))
    code, err = run_cli(capsys, *argv)
    assert code == 0, err
    assert Path(out).read_bytes() != mixed
    assert "▁zyxw" not in pieces(bytepair.load(str(out)))


def test_cli_bad_alpha_is_a_one_line_error(
    two_files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = two_files
    out = tmp_path / "mix.model"
    code, err = run_cli(
        capsys, "train", "--model", "unigram", "--source", f"big={a}", "--source", f"small={b}",
        "--vocab-size", "60", "--alpha", "1.5", "-o", str(out),
    )
    assert code == 1 and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("bytepair: error: --alpha must be a number in [0, 1], got 1.5"), lines[0]
    assert not out.exists()
