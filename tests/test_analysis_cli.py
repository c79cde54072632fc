"""The analysis commands from the shell: viz, stats, sweep, compare, report, train --verbose."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import pytest

import bytepair
from bytepair.cli import main
from tests.test_encodings import _reference, rank_dir  # noqa: F401  (rank_dir: a fixture)

SAMPLE = Path(bytepair.__file__).parent / "data" / "tinyshakespeare.txt"
PARALLEL = Path(__file__).parent / "data" / "parallel"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("c") / "shakespeare.txt"
    p.write_text(SAMPLE.read_text(encoding="utf-8")[:60_000], encoding="utf-8")
    return p


@pytest.fixture(scope="module")
def tok_file(corpus: Path) -> Path:
    out = corpus.parent / "tok.json"
    bytepair.train(str(corpus), vocab_size=500).save(out)
    return out


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = struct.unpack(">II", data[16:24])
    return w, h


def _decodes(path: Path) -> tuple[int, ...]:
    """Decodes the whole image (not only its header) and returns its shape."""
    pytest.importorskip("matplotlib")
    import matplotlib.image

    return tuple(matplotlib.image.imread(str(path)).shape)


def test_viz_terminal(tok_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["viz", "-t", str(tok_file), "--color", "never", "--ids", "--text", "the king 東"]) == 0
    out = capsys.readouterr().out
    tok = bytepair.Tokenizer.from_file(tok_file)
    ids = tok.encode("the king ")
    words = "".join(tok.token_bytes(i).decode().replace(" ", "·") + f"[{i}]│" for i in ids)
    assert out == words + "東‹e6|9d|b1›[230+157+177]│\n"


def test_viz_reads_a_file_and_writes_html(tok_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "in.txt"
    src.write_text("To be, or not to be", encoding="utf-8")
    page = tmp_path / "v.html"
    assert main(["viz", "-t", str(tok_file), str(src), "--html", str(page)]) == 0
    assert "<!DOCTYPE html>" in page.read_text(encoding="utf-8")
    assert main(["viz", "-t", "no-such-encoding", "x"]) == 1
    assert "no-such-encoding" in capsys.readouterr().err


def test_stats_tables_and_zipf_plot(corpus: Path, tok_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plot = tmp_path / "zipf.png"
    assert main(["stats", str(corpus), "-t", str(tok_file), "--top", "3", "--plot", str(plot)]) == 0
    out = capsys.readouterr().out
    text = corpus.read_text(encoding="utf-8")
    spaces = text.count(" ")
    assert f"1  ' '   {spaces:,}  {100 * spaces / len(text.encode()):.2f}%" in " ".join(out.split("\n"))
    assert "top 100 tokens' share" in out and "Zipf slope" in out
    w, h = _png_size(plot)
    assert 300 < w < 2000 and 200 < h < 2000
    assert _decodes(plot)[:2] == (h, w)


def test_stats_plot_without_matplotlib_names_the_extra(corpus: Path, tok_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert main(["stats", str(corpus), "-t", str(tok_file), "--plot", str(tmp_path / "z.png")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("bytepair: error:") and "pip install matplotlib" in err and err.count("\n") == 1


def test_stats_of_an_empty_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    assert main(["stats", str(empty)]) == 1
    assert "no documents" in capsys.readouterr().err
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    assert main(["sweep", str(tmp_path / "empty.txt"), "--vocab-sizes", "300"]) == 1
    assert capsys.readouterr().err == "bytepair: error: the corpus is empty\n"
    assert main(["stats", str(tmp_path / "empty.txt")]) == 1
    assert capsys.readouterr().err == "bytepair: error: the corpus is empty (1 empty document)\n"


def test_sweep_table_and_plot(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plot = tmp_path / "sweep.svg"
    assert main(["sweep", str(corpus), "--vocab-sizes", "300,400", "--d-model", "64", "--plot", str(plot)]) == 0
    out = capsys.readouterr().out
    assert "one training run at 400" in out and f"{400 * 64:,}" in out
    assert plot.read_text(encoding="utf-8").lstrip().startswith("<?xml")


@pytest.mark.parametrize(
    ("sizes", "message"),
    [("100,300", "below 256"), ("a,b", "whole numbers")],
)
def test_sweep_bad_sizes(corpus: Path, sizes: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", str(corpus), "--vocab-sizes", sizes]) in (1, 2)
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_sweep_past_what_the_corpus_reaches(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", str(corpus), "--vocab-sizes", "300,100000"]) == 0
    captured = capsys.readouterr()
    assert "100,000 reported at" in captured.err and captured.err.startswith("bytepair: warning:")
    assert "100,000" not in captured.out.split("\n", 1)[1]


def test_sweep_alpha_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", f"en={PARALLEL / 'en.txt'}", f"fr={PARALLEL / 'fr.txt'}", "--vocab-sizes", "280", "--alpha", "1,0.3"]) == 0
    out = capsys.readouterr().out
    en, fr = (PARALLEL / "en.txt").stat().st_size, (PARALLEL / "fr.txt").stat().st_size
    assert f"{100 * en / (en + fr):.1f}%" in out
    assert f"{100 * en**0.3 / (en**0.3 + fr**0.3):.1f}%" in out
    assert main(["sweep", f"en={PARALLEL / 'en.txt'}", "--vocab-sizes", "280", "--alpha", "1"]) == 2


def test_compare_parallel_with_pretrained_and_trained(
    tok_file: Path, tmp_path: Path, rank_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plot = tmp_path / "parity.png"
    args = ["compare", "gpt2", str(tok_file), "--parallel", "--reference", "en", "--metric", "parity", "--plot", str(plot)]
    for lang in ("en", "sw", "zh"):
        args += ["--corpus", f"{lang}={PARALLEL / (lang + '.txt')}"]
    assert main(args) == 0
    out = capsys.readouterr().out
    gpt2 = _reference("gpt2", rank_dir)  # tiktoken, built from the shipped rank file
    n = {lang: len(gpt2.encode((PARALLEL / f"{lang}.txt").read_text(encoding="utf-8"))) for lang in ("en", "sw", "zh")}
    row = next(line for line in out.splitlines() if line.startswith("gpt2") and " sw " in line)
    assert row.split()[2] == f"{n['sw']:,}" and row.split()[-1] == f"{n['sw'] / n['en']:.3f}"
    assert "Gini" in out and "each character is a word" in out
    assert _png_size(plot)[0] > 300


def test_compare_empty_language_sample(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "xx.txt").write_text("\n", encoding="utf-8")
    assert main(["compare", "gpt2", "--corpus", f"xx={tmp_path / 'xx.txt'}"]) == 1
    assert capsys.readouterr().err == "bytepair: error: corpus xx has no text\n"


def test_report_writes_a_page(corpus: Path, tok_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "r.html"
    assert main(["report", "-t", str(tok_file), str(corpus), "-o", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    assert "bytepair report" in html and "<script" in html
    assert main(["report", "-t", "gpt2", str(corpus), "-o", str(tmp_path)]) == 1
    assert "is a directory" in capsys.readouterr().err


def test_train_verbose_prints_merges_with_counts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "t.txt"
    src.write_text("the then the there\nthe other", encoding="utf-8")
    assert main(["train", str(src), "--vocab-size", "259", "-o", str(tmp_path / "t.json"), "--verbose"]) == 0
    out = capsys.readouterr().out
    # counted by hand: 'th' and 'the' occur in the, then, the, there, the, other; ' the' in ' then', ' the', ' there'
    assert out.splitlines() == ["1  't' + 'h' -> 'th'  (6)", "2  'th' + 'e' -> 'the'  (6)", "3  ' ' + 'the' -> ' the'  (3)"]


def test_train_verbose_with_bad_utf8_replaced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "bad.txt"
    src.write_bytes(b"abab abab \xff abab")
    args = ["train", str(src), "--vocab-size", "258", "--errors", "replace", "-o", str(tmp_path / "t.json"), "--verbose"]
    assert main(args) == 0
    out = capsys.readouterr().out
    # 'ab' 6 times, then 'abab' 3 times (in each 'abab')
    assert out.splitlines() == ["1  'a' + 'b' -> 'ab'  (6)", "2  'ab' + 'ab' -> 'abab'  (3)"]
