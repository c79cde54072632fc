"""`bytepair viz`, `stats` and `compare` on SentencePiece models: a Unigram model (nmt_nfkc, no
byte fallback: text it cannot spell is the unknown piece) and a BPE model with byte fallback and
identity normalization (a newline is the byte piece <0x0A>), both trained here by sentencepiece
with user-defined pieces that are markup (one piece each wherever they occur in the text), and a
SentencePiece-family tokenizer.json trained by tokenizers.

viz: the text the pieces spell out is what sentencepiece's normalizer makes of the text, ``▁``
read as a space; byte pieces are shown with their hex, the unknown piece after the text it
replaced; the HTML page keeps the markup pieces as data (and, in a real browser, runs none of
them). stats and compare: the ids sentencepiece gives, counted.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import bytepair
from bytepair._display import token_repr
from bytepair.analysis import Corpus
from bytepair.analysis.compare import measure
from bytepair.analysis.stats import token_stats
from bytepair.cli import main
from tests.test_views import _check_block

spm = pytest.importorskip("sentencepiece")

SHAKESPEARE = os.path.join(os.path.dirname(bytepair.__file__), "data", "tinyshakespeare.txt")
SCRIPT = "</script><script>window.PWNED=1</script>"
IMG = "<img/src=x/onerror=window.PWNED=2>"
USER_PIECES = [SCRIPT, IMG, "<!--", "__DATA__"]
TEXT = f"To be,  or not\tto be: a{SCRIPT}b <!-- 東京\nQ__DATA__ café {IMG} zyzzyva\n"
HAN = "東京 大阪\n京都\n"


@pytest.fixture(scope="module")
def lines() -> list[str]:
    with open(SHAKESPEARE, encoding="utf-8") as f:
        return [f.readline().rstrip("\n") for _ in range(400)]


def _train(kind: str, lines: list[str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    options: dict[str, Any] = {}
    if kind == "bpe":
        options = {"byte_fallback": True, "normalization_rule_name": "identity"}
    path = tmp_path_factory.mktemp("spm_analysis") / f"{kind}.model"
    with open(path, "wb") as f:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(lines), model_writer=f, vocab_size=400, model_type=kind,
            user_defined_symbols=USER_PIECES, minloglevel=2, num_threads=1, **options,
        )
    return path


@pytest.fixture(scope="module", params=["unigram", "bpe"])
def model(request: pytest.FixtureRequest, lines: list[str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _train(request.param, lines, tmp_path_factory)


@pytest.fixture(scope="module")
def bpe_model(lines: list[str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _train("bpe", lines, tmp_path_factory)


@pytest.fixture(scope="module")
def bpe_json(lines: list[str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A byte-level BPE tokenizer, to mix with the SentencePiece models in `compare`."""
    path = tmp_path_factory.mktemp("bpe") / "tok.json"
    bytepair.train_from_iterator(lines, vocab_size=400).save(path)
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _sp(path: Path) -> Any:
    return spm.SentencePieceProcessor(model_file=str(path))


def _spoken(sp: Any, text: str) -> str:
    """What the model's pieces spell out: sentencepiece's normalized text, ``▁`` as a space."""
    return str(sp.normalize(text)).replace("▁", " ")


# ---------------------------------------------------------------------------------- viz, terminal

SEGMENT = re.compile(r"(.*?)\[([0-9+]+)\]│(\n?)", re.S)
MARKS = {"·": " ", "→": "\t", "↵": "\n"}


def _segments(out: str) -> list[tuple[str, list[int], bool]]:
    """``viz --ids --color never`` output as ``(shown, ids, line break after)`` per segment."""
    assert out.endswith("\n")
    found = [(m.group(1), [int(i) for i in m.group(2).split("+")], m.group(3) == "\n") for m in SEGMENT.finditer(out)]
    assert "".join(m.group(0) for m in SEGMENT.finditer(out)) in (out, out[:-1])  # nothing else in it
    shown, ids, brk = found[-1]
    if brk and not _text_of(shown).endswith("\n"):  # the view's closing newline
        found[-1] = (shown, ids, False)
    return found


def _text_of(shown: str) -> str:
    """A segment's text: its hex and ‹unk› marks dropped, whitespace marks read back."""
    shown = re.sub(r"‹unk›$", "", shown)
    shown = re.sub(r"‹[0-9a-f |]+›$", "", shown)
    return "".join(MARKS.get(c, c) for c in shown)


def test_viz_shows_each_piece_as_the_text_it_stands_for(model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sp = _sp(model)
    code, out, err = run(capsys, "viz", "-t", str(model), "--text", TEXT, "--ids", "--color", "never")
    assert code == 0, err
    segs = _segments(out)
    ids = sp.encode(TEXT)
    assert [i for _, seg_ids, _ in segs for i in seg_ids] == ids
    assert "▁" not in out and "\ufffd" not in out
    # the pieces spell out what the model sees: normalized, ▁ a space
    assert "".join(_text_of(shown) for shown, _, _ in segs) == _spoken(sp, TEXT)
    # a user-defined piece of markup is one segment, shown as it is
    assert (SCRIPT, [sp.piece_to_id(SCRIPT)], False) in segs
    assert (IMG, [sp.piece_to_id(IMG)], False) in segs
    unk = sp.unk_id()
    for shown, seg_ids, brk in segs:
        assert shown.endswith("‹unk›") == (unk in seg_ids), shown
        assert brk == _text_of(shown).endswith("\n")  # a newline is shown as ↵, then the line breaks
    if sp.encode("東京", out_type=str) == ["▁", "東京"]:  # unigram: the unknown piece after its text
        assert ("東京‹unk›", [unk], False) in segs
        assert ("Q‹unk›", [unk], False) in segs
    else:  # bpe: byte fallback, each byte piece's hex after the character, the newline one too
        assert sp.get_piece_size() > 256 and sp.id_to_piece(sp.encode("\n")[-1]) == "<0x0A>"
        east = [sp.piece_to_id(f"<0x{b:02X}>") for b in "東".encode()]
        assert ("東‹e6|9d|b1›", east, False) in segs
        assert ("↵‹0a›", [sp.piece_to_id("<0x0A>")], True) in segs
        assert ("→‹09›", [sp.piece_to_id("<0x09>")], False) in segs  # a byte piece is hex even when whole


def test_viz_colour_and_count(model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sp = _sp(model)
    code, out, err = run(capsys, "viz", "-t", str(model), "--text", TEXT, "--color", "always", "--count")
    assert code == 0, err
    assert "\x1b[48;2;" in out and "│" not in out and "[" + str(sp.encode(TEXT)[0]) + "]" not in out
    assert err == f"{len(sp.encode(TEXT)):,} tokens, {len(TEXT.encode()):,} bytes\n"


# ---------------------------------------------------------------------------------- viz --html


def _page_bytes(data: dict[str, Any]) -> bytes:
    """The bytes the page's tokens stand for, in order: each id's, or the unknown piece's text."""
    surface = data.get("surface", {})
    return b"".join(bytes.fromhex(surface.get(str(k), data["vocab"][str(i)][0])) for k, i in enumerate(data["ids"]))


def test_viz_html_holds_the_pieces_as_data(model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sp = _sp(model)
    page_path = tmp_path / "viz.html"
    code, out, err = run(capsys, "viz", "-t", str(model), "--text", TEXT, "--html", str(page_path))
    assert code == 0 and out == "", err
    page = page_path.read_text(encoding="utf-8")
    # the markup pieces are nowhere in the page as markup: the JSON block escapes "<" and ">"
    assert SCRIPT not in page and IMG not in page and "PWNED=1</script>" not in page
    assert page.count("<script") == 3  # the data block and the page's two scripts
    data = _check_block(page)
    assert isinstance(data, dict)
    ids = sp.encode(TEXT)
    assert data["ids"] == ids
    assert _page_bytes(data).decode() == _spoken(sp, TEXT)
    assert data["vocab"][str(sp.piece_to_id(SCRIPT))] == [SCRIPT.encode().hex(), token_repr(SCRIPT.encode())]
    assert data["vocab"][str(ids[0])][1] == token_repr(sp.id_to_piece(ids[0]).encode())  # '▁To': the piece
    assert data["n_bytes"] == len(TEXT.encode())
    marks = {int(i): k for i, k in data["marks"].items()}
    assert marks == {i: "byte" if sp.is_byte(i) else "unknown" for i in set(ids) if sp.is_byte(i) or sp.is_unknown(i)}
    assert marks  # the text has pieces of either kind in both models
    assert all(data["notes"][str(i)] for i in set(ids))
    assert "user-defined" in data["notes"][str(sp.piece_to_id(SCRIPT))]


# ---------------------------------------------------------------------------------- stats


def test_stats_counts_sentencepieces_ids(model: Path, lines: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sp = _sp(model)
    docs = [*lines[:120], TEXT, HAN, "", "zyzzyva"]
    corpus = tmp_path / "docs.jsonl"
    corpus.write_text("".join(json.dumps({"text": d}) + "\n" for d in docs), encoding="utf-8")
    code, out, err = run(capsys, "stats", str(corpus), "-t", str(model), "--top", "5")
    assert code == 0, err
    encoded = [sp.encode(d) for d in docs]
    total = sum(len(ids) for ids in encoded)
    size = sum(len(d.encode()) for d in docs)
    assert f"\n{model}: {total:,} tokens, {size / total:.3f} bytes/token\n" in out
    # the most frequent piece first, shown as `show` shows pieces
    counts = Counter(i for ids in encoded for i in ids)
    top_id, top_count = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    table = out.splitlines()
    row = table[next(k for k, line in enumerate(table) if line.split() == ["rank", "id", "token", "count", "share"]) + 1].split()
    assert row[:2] == ["1", str(top_id)] and row[-2] == f"{top_count:,}"
    assert token_repr(sp.id_to_piece(top_id).encode()) in out
    assert "Zipf slope" in out

    tok = bytepair.load(str(model))
    st = token_stats(tok, docs)
    assert st.vocab_size == sp.get_piece_size() and st.documents == len(docs)
    assert st.counts.tolist() == np.bincount([i for ids in encoded for i in ids], minlength=len(st.counts)).tolist()
    df = Counter(i for ids in encoded for i in set(ids))
    assert st.document_counts.tolist() == [df.get(i, 0) for i in range(len(st.document_counts))]


# ---------------------------------------------------------------------------------- compare


def _rows(out: str) -> dict[tuple[str, str], list[str]]:
    lines = out.split("\n\n")[0].splitlines()
    assert lines[0].split() == ["tokenizer", "corpus", "tokens", "words", "tokens/word", "split", "bytes/token"]
    return {(r[0], r[1]): r[2:] for r in (line.split() for line in lines[1:])}


def test_compare_mixes_sentencepiece_and_bpe(
    model: Path, bpe_json: Path, lines: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sp = _sp(model)
    bpe = bytepair.load(str(bpe_json))
    en, han = tmp_path / "en.txt", tmp_path / "han.txt"
    en.write_text("\n".join(lines[:200]) + "\n" + TEXT, encoding="utf-8")
    han.write_text(HAN, encoding="utf-8")
    code, out, err = run(capsys, "compare", str(model), str(bpe_json), "--corpus", f"en={en}", "--corpus", f"han={han}")
    assert code == 0, err
    rows = _rows(out)
    for name, path in (("en", en), ("han", han)):
        blocks = list(Corpus(name, [str(path)]).blocks())
        n_sp = sum(len(sp.encode(b)) for b in blocks)
        n_bpe = sum(len(bpe.encode(b)) for b in blocks)
        size = sum(len(b.encode()) for b in blocks)
        mine, theirs = rows[str(model), name], rows[str(bpe_json), name]
        assert mine[0] == f"{n_sp:,}" and theirs[0] == f"{n_bpe:,}"
        assert mine[1] == theirs[1]  # the same words
        assert mine[4] == f"{size / n_sp:.3f}"
    assert "Gini across corpora" in out and str(model) in out.split("Gini")[1]
    # Han with byte fallback: every character is three byte pieces, so every word (a character)
    # is cut, as a byte-level BPE's bytes cut it; the Unigram model's unknown piece takes whole
    # runs of them and cuts none
    split = rows[str(model), "han"][3]
    assert split == ("100.0%" if sp.is_byte(sp.encode("東")[-1]) else "0.0%")


def test_measure_cuts_words_where_pieces_end(model: Path) -> None:
    sp = _sp(model)
    tok = bytepair.load(str(model))
    # (tokens, words, words cut, bytes)
    assert measure(tok, "")[0] == 0
    if sp.is_byte(sp.encode("東")[-1]):
        assert measure(tok, "東") == (len(sp.encode("東")), 1, 1, 3)
    else:
        assert measure(tok, "東") == (len(sp.encode("東")), 1, 0, 3)
    word = "zyzzyva"
    n = len(sp.encode(word))
    assert n > 2 and measure(tok, word) == (n, 1, 1, len(word))
    assert measure(tok, "the") == (len(sp.encode("the")), 1, int(len(sp.encode("the")) > 1), 3)


# ---------------------------------------------------------------------------------- tokenizer.json


def test_a_sentencepiece_family_tokenizer_json(lines: list[str], bpe_json: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """viz, stats and compare take a SentencePiece-family tokenizer.json too, with tokenizers' ids
    (its unknown token says not what it replaced: the mark alone)."""
    tokenizers = pytest.importorskip("tokenizers")
    hf = tokenizers.SentencePieceUnigramTokenizer()
    hf.train_from_iterator(lines, vocab_size=200, special_tokens=["<unk>", "<s>", "</s>"], unk_token="<unk>")
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    assert type(bytepair.load(str(path))).__name__ == "HFSentencePieceTokenizer"
    text = "To be, or not <s> to be: 東京 zyzzyva"
    ids = hf.encode(text).ids
    unk = hf.token_to_id("<unk>")
    assert unk in ids
    code, out, err = run(capsys, "viz", "-t", str(path), "--text", text, "--ids", "--color", "never")
    assert code == 0, err
    segs = _segments(out)
    assert [i for _, s, _ in segs for i in s] == ids
    assert ("‹unk›", [unk], False) in segs and ("<s>", [hf.token_to_id("<s>")], False) in segs
    page = tmp_path / "viz.html"
    assert main(["viz", "-t", str(path), "--text", text, "--html", str(page)]) == 0
    capsys.readouterr()
    data = _check_block(page.read_text(encoding="utf-8"))
    assert isinstance(data, dict) and data["ids"] == ids and data["marks"] == {str(unk): "unknown"}
    assert str(hf.token_to_id("<s>")) in map(str, data["special"])

    corpus = tmp_path / "c.txt"
    corpus.write_text(text + "\n" + "\n".join(lines[:50]), encoding="utf-8")
    doc = corpus.read_text(encoding="utf-8")
    n = len(hf.encode(doc).ids)
    code, out, err = run(capsys, "stats", str(corpus), "-t", str(path))
    assert code == 0 and f"\n{path}: {n:,} tokens, " in out, err
    code, out, err = run(capsys, "compare", str(path), str(bpe_json), "--corpus", f"c={corpus}")
    assert code == 0, err
    rows = _rows(out)
    assert rows[str(path), "c"][0] == f"{n:,}" and rows[str(path), "c"][1] == rows[str(bpe_json), "c"][1]


def test_a_llama_style_tokenizer_json_with_byte_fallback(bpe_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A Llama-style tokenizer.json made from the BPE model's pieces: its byte tokens are plain
    tokens named <0xNN> there (its ByteFallback decoder reads them as bytes), and are drawn as the
    .model's byte pieces are; compare finds its words cut where the .model's are (from the text
    its tokens spell out, not from offsets)."""
    pytest.importorskip("transformers")
    model = bpe_model
    sp = _sp(model)
    from transformers import LlamaTokenizer
    from transformers.tokenization_utils_base import generate_merges

    vocab = {sp.id_to_piece(i): i for i in range(sp.get_piece_size())}
    LlamaTokenizer(vocab=dict(vocab), merges=generate_merges(vocab), legacy=False).save_pretrained(str(tmp_path / "llama"))
    path = tmp_path / "llama" / "tokenizer.json"
    assert type(bytepair.load(str(path))).__name__ == "HFSentencePieceTokenizer"
    text = "To be, or not to be: zyzzyva café\n東京 大阪\nÜnïcödé words here\n"
    views = []
    for tok in (model, path):
        code, out, err = run(capsys, "viz", "-t", str(tok), "--text", text, "--ids", "--color", "never")
        assert code == 0, err
        views.append(out)
    assert views[0] == views[1] and "東‹e6|9d|b1›" in views[0] and "↵‹0a›" in views[0]
    corpus = tmp_path / "c.txt"
    corpus.write_text(text, encoding="utf-8")
    code, out, err = run(capsys, "compare", str(model), str(path), "--corpus", f"c={corpus}")
    assert code == 0, err
    rows = _rows(out)
    assert rows[str(model), "c"] == rows[str(path), "c"]


# ---------------------------------------------------------------------------------- refusals


def test_viz_refuses_wordpiece_in_one_line(lines: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "wp.txt"
    bytepair.train_wordpiece_from_iterator(lines, vocab_size=300).save(path)
    code, out, err = run(capsys, "viz", "-t", str(path), "--text", "hi")
    assert code == 1 and out == "" and err.count("\n") == 1, err
    assert "WordPiece" in err and "`bytepair viz` works on byte-level BPE tokenizers and SentencePiece models" in err


# ---------------------------------------------------------------------------------- in a browser

from tests.test_browser import _check_clean, _hover, _load, _nothing_injected, _shown_ids, driver  # noqa: E402, F401


def test_viz_page_in_a_browser(driver: Any, model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The page draws every piece, runs none of the markup pieces, marks byte pieces and the
    unknown piece, and the tips say what each is."""
    sp = _sp(model)
    page = tmp_path / "viz.html"
    assert main(["viz", "-t", str(model), "--text", TEXT, "--html", str(page)]) == 0
    capsys.readouterr()
    _load(driver, page)
    _nothing_injected(driver, f"bytepair viz: {model}")
    assert _shown_ids(driver) == sp.encode(TEXT)
    spans = driver.execute_script(
        "return Array.from(document.querySelectorAll('#view .tok'), s => [s.textContent, s.className])"
    )
    assert [SCRIPT, "tok"] in spans and [IMG, "tok"] in spans
    if sp.is_byte(sp.encode("東")[-1]):
        assert ["東‹e6|9d|b1›", "tok multi"] in spans and ["↵‹0a›\n", "tok multi"] in spans
        hover = next(s for s in driver.find_elements("css selector", "#view .tok") if s.text.startswith("東"))
        assert "a byte piece" in _hover(driver, hover)
    else:
        assert ["東京‹unk›", "tok unk"] in spans
        hover = next(s for s in driver.find_elements("css selector", "#view .tok.unk"))
        tip = _hover(driver, hover)
        assert f"id {sp.unk_id()}  '<unk>'" in tip and "the unknown piece" in tip
    _check_clean(driver)
