"""encode_corpus / encode-corpus with SentencePiece models: each document's ids are those of
sentencepiece's own ``SentencePieceProcessor.encode``, with the separator where asked; seeded
subword sampling gives the same shards on any number of threads, for any batching, and after
runs killed and resumed; bad options are one-line errors."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import bytepair
from bytepair import BytepairError, CorpusError, SentencePieceTokenizer
from bytepair.cli import main
from bytepair.corpus import encode_corpus, open_shards
from bytepair.corpus import spm as corpus_spm

spm = pytest.importorskip("sentencepiece")

MODELS: dict[str, dict[str, Any]] = {
    "unigram": dict(model_type="unigram", vocab_size=600),
    "bpe_bytes": dict(model_type="bpe", vocab_size=600, byte_fallback=True, character_coverage=0.995),
    "unigram_no_eos": dict(model_type="unigram", vocab_size=500, eos_id=-1),
}


def _sample() -> str:
    from importlib.resources import files

    return (files("bytepair") / "data" / "tinyshakespeare.txt").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("models")
    corpus = root / "train.txt"
    corpus.write_text(_sample()[:150_000], encoding="utf-8")
    out = {}
    for name, opts in MODELS.items():
        prefix = str(root / name)
        spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=prefix, minloglevel=2, num_threads=1, **opts)
        out[name] = prefix + ".model"
    return out


# Documents that a tokenizer cutting them anywhere would get wrong: runs of spaces and newlines
# that the normalizer joins, characters the model never saw (unknown, or byte pieces), a document
# of spaces only (no ids, but a separator).
ODD = ["  many   spaces\n\n\n and  lines  ", "日本語 😀 naïve café", "   ", "x", "tab\there\r\nand\u3000wide"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], list[str]]:
    """A text file (one document), JSON lines (gzip too): the inputs and their non-empty
    documents in the order encode_corpus reads them."""
    text = _sample()[150_000:210_000]
    paras = [p for p in text.split("\n\n") if p]
    d = tmp_path_factory.mktemp("in")
    whole = paras[0] + "\n\n  " + paras[1] + "\n"
    (d / "a.txt").write_text(whole, encoding="utf-8")
    docs_b = paras[2:60] + [""] + ODD + paras[60:120]  # the empty one is skipped
    with gzip.open(d / "b.jsonl.gz", "wt", encoding="utf-8") as f:
        f.writelines(json.dumps({"text": p}) + "\n" for p in docs_b)
    (d / "c.jsonl").write_text("".join(json.dumps({"text": p}) + "\n" for p in paras[120:]), encoding="utf-8")
    docs = [whole] + [p for p in docs_b if p] + paras[120:]
    return [str(d / "a.txt"), str(d / "b.jsonl.gz"), str(d / "c.jsonl")], docs


def _ids(out: Path) -> np.ndarray[Any, Any]:
    return np.asarray(open_shards(out)[:]).astype(np.int64)


def _expected(sp: Any, docs: list[str], eot: int | None, prepend: bool) -> list[int]:
    out: list[int] = []
    for doc in docs:
        ids = sp.encode(doc)
        sep = [] if eot is None else [eot]
        out += sep + ids if prepend else ids + sep
    return out


def _split(ids: list[int], eot: int) -> list[list[int]]:
    """The documents' ids, cut at the separators put before each (no piece of these texts is
    the separator)."""
    docs: list[list[int]] = []
    for i in ids:
        if i == eot:
            docs.append([])
        else:
            docs[-1].append(i)
    return docs


def _files(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


@pytest.mark.parametrize("name", ["unigram", "bpe_bytes"])
def test_ids_are_sentencepieces_per_document(
    models: dict[str, str], corpus: tuple[list[str], list[str]], tmp_path: Path, name: str
) -> None:
    paths, docs = corpus
    sp = spm.SentencePieceProcessor(model_file=models[name])
    eos = sp.eos_id()
    doc = encode_corpus(models[name], paths, tmp_path / "a", shard_tokens=700, progress=False)
    assert _ids(tmp_path / "a").tolist() == _expected(sp, docs, eos, prepend=True)
    assert doc["documents"] == len(docs) and doc["options"]["eot"] == eos and doc["options"]["dtype"] == "uint16"
    assert "sampling" not in doc["options"]
    with open(models[name], "rb") as f:
        import hashlib

        assert doc["tokenizer"]["sha256"] == hashlib.sha256(f.read()).hexdigest()
    assert doc["tokenizer"]["model_type"] == ("unigram" if name == "unigram" else "bpe")
    # the same through the CLI, the model loaded from its file; Megatron appends the separator
    code = main(["encode-corpus", "-t", models[name], *paths, "-o", str(tmp_path / "m"), "--format", "megatron",
                 "--shard-tokens", "900", "--threads", "2", "-q"])
    assert code == 0
    assert _ids(tmp_path / "m").tolist() == _expected(sp, docs, eos, prepend=False)
    if name == "bpe_bytes":  # the odd documents did need byte pieces
        assert any(p.startswith("<0x") for d in ODD for p in sp.encode(d, out_type=str))


def test_eot_choices_and_dtype(models: dict[str, str], corpus: tuple[list[str], list[str]], tmp_path: Path) -> None:
    paths, docs = corpus
    sp = spm.SentencePieceProcessor(model_file=models["unigram"])
    tok = bytepair.load(models["unigram"])
    assert isinstance(tok, SentencePieceTokenizer)
    bos = sp.bos_id()
    encode_corpus(tok, paths, tmp_path / "bos", eot="<s>", eot_position="append", format="npy", progress=False)
    assert _ids(tmp_path / "bos").tolist() == _expected(sp, docs, bos, prepend=False)
    encode_corpus(tok, paths, tmp_path / "none", eot=None, dtype="uint32", progress=False)
    assert _ids(tmp_path / "none").tolist() == _expected(sp, docs, None, prepend=True)
    assert open_shards(tmp_path / "none").dtype == np.uint32
    encode_corpus(tok, paths, tmp_path / "id", eot=7, progress=False)
    assert _ids(tmp_path / "id").tolist() == _expected(sp, docs, 7, prepend=True)


def test_a_model_without_eos_needs_eot(
    models: dict[str, str], corpus: tuple[list[str], list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths, docs = corpus
    model = models["unigram_no_eos"]
    sp = spm.SentencePieceProcessor(model_file=model)
    assert sp.eos_id() == -1
    with pytest.raises(BytepairError, match="no EOS piece.*--eot"):
        encode_corpus(model, paths, tmp_path / "a", progress=False)
    assert not (tmp_path / "a").exists()
    code = main(["encode-corpus", "-t", model, *paths, "-o", str(tmp_path / "b"), "-q"])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "no EOS piece" in err
    assert main(["encode-corpus", "-t", model, *paths, "-o", str(tmp_path / "c"), "--eot", "none", "-q"]) == 0
    assert _ids(tmp_path / "c").tolist() == _expected(sp, docs, None, prepend=True)
    assert main(["encode-corpus", "-t", model, *paths, "-o", str(tmp_path / "d"), "--eot", "<s>", "-q"]) == 0
    assert _ids(tmp_path / "d").tolist() == _expected(sp, docs, sp.bos_id(), prepend=True)


def _sampled(model: str, paths: list[str], out: Path, **kw: Any) -> list[int]:
    encode_corpus(model, paths, out, shard_tokens=500, progress=False, enable_sampling=True, **kw)
    return list(_ids(out).tolist())


@pytest.mark.parametrize("name", ["unigram", "bpe_bytes"])
def test_sampling_is_reproducible_and_decodes_back(
    models: dict[str, str], corpus: tuple[list[str], list[str]], tmp_path: Path, name: str, monkeypatch: Any
) -> None:
    paths, docs = corpus
    model = models[name]
    sp = spm.SentencePieceProcessor(model_file=model)
    eos = sp.eos_id()
    alpha = 0.1 if name == "unigram" else 0.2
    base = _sampled(model, paths, tmp_path / "t2", alpha=alpha, seed=5, num_threads=2)
    # one thread; each document a batch of its own (every batch but the first starts inside a
    # seed group); then seed groups of 7 documents, cut by the batches anywhere
    assert _sampled(model, paths, tmp_path / "t1", alpha=alpha, seed=5, num_threads=1) == base
    assert _sampled(model, paths, tmp_path / "b1", alpha=alpha, seed=5, num_threads=2, batch_bytes=1) == base
    assert _files(tmp_path / "t2") == _files(tmp_path / "b1")
    monkeypatch.setattr(corpus_spm, "SEED_GROUP", 7)
    small = _sampled(model, paths, tmp_path / "g7", alpha=alpha, seed=5, num_threads=2)
    assert _sampled(model, paths, tmp_path / "g7b", alpha=alpha, seed=5, num_threads=1, batch_bytes=900) == small

    best = _expected(sp, docs, eos, prepend=True)
    for ids in (base, small):
        assert ids != best  # it did sample
        got = _split(ids, eos)
        assert len(got) == len(docs)
        for d, (doc, sampled) in enumerate(zip(docs, got)):
            assert sp.decode(sampled) == sp.decode(sp.encode(doc)), d
    # a document's draw is the one its seed group draws, whatever batch it was encoded in
    tok = bytepair.load(model)
    assert isinstance(tok, SentencePieceTokenizer)
    got = _split(small, eos)
    for g in range(0, len(docs), 7):
        want = tok.encode_batch(docs[g : g + 7], enable_sampling=True, alpha=alpha, seed=corpus_spm.group_seed(5, g // 7))
        assert got[g : g + 7] == want, g


def test_other_seeds_and_options_differ(
    models: dict[str, str], corpus: tuple[list[str], list[str]], tmp_path: Path
) -> None:
    paths, _ = corpus
    model = models["unigram"]
    a = _sampled(model, paths, tmp_path / "a", seed=0)
    b = _sampled(model, paths, tmp_path / "b", seed=1)
    c = _sampled(model, paths, tmp_path / "c", seed=0, nbest_size=4)
    assert a != b and a != c and b != c
    doc = json.loads((tmp_path / "c" / "manifest.json").read_text())
    assert doc["options"]["sampling"] == {"alpha": 0.1, "nbest_size": 4, "seed": 0, "seed_group": corpus_spm.SEED_GROUP}
    # a resume with other sampling options, or another model, is refused as other changes are
    with pytest.raises(CorpusError, match="other options .*sampling"):
        encode_corpus(model, paths, tmp_path / "c", shard_tokens=500, progress=False, enable_sampling=True, seed=1)
    with pytest.raises(CorpusError, match="other options .*sampling"):
        encode_corpus(model, paths, tmp_path / "c", shard_tokens=500, progress=False)
    with pytest.raises(CorpusError, match="another tokenizer"):
        encode_corpus(models["bpe_bytes"], paths, tmp_path / "c", shard_tokens=500, progress=False,
                      enable_sampling=True, nbest_size=4)
    with pytest.raises(CorpusError, match="another tokenizer"):
        encode_corpus("gpt2", paths, tmp_path / "c", shard_tokens=500, progress=False)
    # the same options again: complete, nothing rewritten
    before = _files(tmp_path / "c")
    assert _sampled(model, paths, tmp_path / "c", seed=0, nbest_size=4) == c
    assert _files(tmp_path / "c") == before


# As tests/test_corpus_reliability.py: `bytepair ARGS...` run once per kill point, each in a
# process forked from one that has imported everything, killing itself with SIGKILL the Nth time
# it reaches the point (write: ids written mid-shard; manifest: a shard recorded; rename-*:
# before a rename). Batches start at BATCH bytes (many batches) and seed groups hold GROUP
# documents, so that resumed runs start inside batches, groups and documents.
KILLER = """
import json, os, signal, sys
from bytepair.cli import main
from bytepair.corpus import direct, encode, formats, manifest, spm
import bytepair.sentencepiece, bytepair.formats.hf_spm
encode.FIRST_BATCH_BYTES, spm.SEED_GROUP = json.loads(sys.argv[1])
direct.ENABLED = False
target = ["never", 0]

def hit(name):
    if name == target[0]:
        target[1] -= 1
        if target[1] == 0:
            os.kill(os.getpid(), signal.SIGKILL)

real_write, real_manifest, real_replace = formats.ShardWriter.write, manifest.write, os.replace

def write(self, ids):
    real_write(self, ids)
    hit("write")

def manifest_write(out, doc):
    real_manifest(out, doc)
    hit("manifest")

def replace(src, dst):
    hit("rename-" + os.fspath(dst).rsplit(".", 1)[-1])
    real_replace(src, dst)

formats.ShardWriter.write, manifest.write, os.replace = write, manifest_write, replace
codes = []
for point in json.loads(sys.argv[2]):
    pid = os.fork()
    if pid == 0:
        name, nth = point.rsplit(":", 1)
        target[:] = [name, int(nth)]
        rc = 1
        try:
            rc = main(sys.argv[3:])
        finally:
            sys.stdout.flush()
            os._exit(rc)
    codes.append(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
print(json.dumps(codes))
"""


def _killed_at(limits: tuple[int, int], points: list[str], args: list[str]) -> list[int]:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")  # numpy starts no thread: safe to fork
    proc = subprocess.run([sys.executable, "-c", KILLER, json.dumps(limits), json.dumps(points), *args], env=env,
                          stdout=subprocess.PIPE, text=True, timeout=600, check=True)
    codes: list[int] = json.loads(proc.stdout.splitlines()[-1])
    return codes


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL and fork")
@pytest.mark.parametrize("fmt", ["llmc", "megatron"])
def test_sampling_killed_and_resumed_gives_identical_bytes(
    models: dict[str, str], corpus: tuple[list[str], list[str]], tmp_path: Path, fmt: str, monkeypatch: Any
) -> None:
    paths, _ = corpus
    group = 5

    def args(out: Path, threads: str) -> list[str]:
        return ["encode-corpus", "-t", models["unigram"], *paths, "-o", str(out), "--format", fmt,
                "--shard-tokens", "600", "--threads", threads, "--sample-alpha", "0.1", "--nbest-size", "-1",
                "--seed", "42", "-q"]

    # uninterrupted: one big batch, two threads
    monkeypatch.setattr(corpus_spm, "SEED_GROUP", group)
    assert main(args(tmp_path / "whole", "2")) == 0
    whole = _files(tmp_path / "whole")
    shards = len(json.loads(whole["manifest.json"])["shards"])
    assert shards >= 10
    last = "idx" if fmt == "megatron" else "bin"
    chains = {
        "again": ["manifest:2"] + ["manifest:1"] * (shards + 2),
        "mixed": ["write:3", "manifest:3", "write:1", f"rename-{last}:2", "rename-json:1", "write:5", "manifest:2",
                  "write:2"],
    }
    for chain, points in chains.items():
        out = tmp_path / chain
        # killed and resumed: batches from 300 bytes up, one thread
        codes = _killed_at((300, group), [*points, "never:1"], args(out, "1"))
        assert set(codes) <= {0, -signal.SIGKILL} and codes[-1] == 0, codes
        assert codes.count(-signal.SIGKILL) >= (shards if chain == "again" else 6), codes
        assert _files(out) == whole, chain


def test_bad_options_are_one_line_errors(
    models: dict[str, str], corpus: tuple[list[str], list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths, _ = corpus
    model, bpe_model = models["unigram"], models["bpe_bytes"]
    cases = [
        (["-t", "gpt2", "--sample-alpha", "0.1"], "SentencePiece models only"),
        (["-t", model, "--seed", "3"], "give --sample-alpha"),
        (["-t", model, "--nbest-size", "3"], "give --sample-alpha"),
        (["-t", model, "--sample-alpha", "0.1", "--seed", "-1"], "--seed must be"),
        (["-t", model, "--sample-alpha", "-0.5"], "alpha must be >= 0"),
        (["-t", bpe_model, "--sample-alpha", "1.5"], "must be in [0, 1]"),
        (["-t", model, "--sample-alpha", "0.1", "--nbest-size", str(2**40)], "nbest_size must be at most"),
        (["-t", model, "--eot", "<|endoftext|>"], "not a special piece"),
    ]
    for extra, message in cases:
        out = tmp_path / "out"
        code = main(["encode-corpus", *paths, "-o", str(out), "-q", *extra])
        captured = capsys.readouterr()
        assert code == 1 and captured.out == "", extra
        assert captured.err.count("\n") == 1 and captured.err.startswith("bytepair: error: "), captured.err
        assert message in captured.err, (extra, captured.err)
        assert not out.exists() or os.listdir(out) == [], extra
    code = main(["encode-corpus", *paths, "-o", str(tmp_path / "x"), "--sample-alpha", "nan", "-t", model])
    assert code == 2 and "expected a finite number" in capsys.readouterr().err
    # the Python API
    with pytest.raises(BytepairError, match="SentencePiece model"):
        encode_corpus("gpt2", paths, tmp_path / "p", enable_sampling=True)
    with pytest.raises(TypeError, match="enable_sampling"):
        encode_corpus(model, paths, tmp_path / "p", enable_sampling=1)  # type: ignore[arg-type]
    with pytest.raises(BytepairError, match="seed"):
        encode_corpus(model, paths, tmp_path / "p", enable_sampling=True, seed=2**64)
    with pytest.raises(BytepairError, match="not an id of this model"):
        encode_corpus(model, paths, tmp_path / "p", eot=99_999)
    with pytest.raises(BytepairError, match="dask"):
        encode_corpus(model, paths, tmp_path / "p", backend="dask")
    assert not (tmp_path / "p").exists()


def test_wordpiece_is_refused(tmp_path: Path, corpus: tuple[list[str], list[str]], capsys: pytest.CaptureFixture[str]) -> None:
    paths, _ = corpus
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nthe\n##s\n", encoding="utf-8")
    code = main(["encode-corpus", "-t", str(vocab), *paths, "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "WordPiece" in err and "SentencePiece models" in err
    with pytest.raises(BytepairError, match="WordPiece"):
        encode_corpus(str(vocab), paths, tmp_path / "out2")


def test_a_sentencepiece_family_tokenizer_json(
    corpus: tuple[list[str], list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    paths, docs = corpus
    hf = tokenizers.SentencePieceUnigramTokenizer()
    hf.train_from_iterator(_sample()[:60_000].split("\n\n"), vocab_size=300,
                           special_tokens=["<unk>", "<s>", "</s>"], unk_token="<unk>")
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    eos = hf.token_to_id("</s>")
    code = main(["encode-corpus", "-t", str(path), *paths, "-o", str(tmp_path / "out"), "-q"])  # </s> by default
    assert code == 0, capsys.readouterr().err
    want: list[int] = []
    for doc in docs:
        want += [eos] + hf.encode(doc).ids
    assert _ids(tmp_path / "out").tolist() == want
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["tokenizer"]["kind"] == "sentencepiece-json"
    code = main(["encode-corpus", "-t", str(path), *paths, "-o", str(tmp_path / "s"), "--sample-alpha", "0.1"])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "tokenizer.json" in err
    # without a </s>, a separator must be named
    bare = tokenizers.SentencePieceUnigramTokenizer()
    bare.train_from_iterator(_sample()[:20_000].split("\n\n"), vocab_size=200, special_tokens=["<unk>"], unk_token="<unk>")
    bare.save(str(tmp_path / "bare.json"))
    code = main(["encode-corpus", "-t", str(tmp_path / "bare.json"), *paths, "-o", str(tmp_path / "b")])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "no EOS piece" in err and "--eot" in err
