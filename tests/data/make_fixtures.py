"""Makes the Hugging Face fixtures in tests/data with the libraries that own the formats.

Run offline from the repository root: ``python tests/data/make_fixtures.py``. It trains two
small byte-level BPE tokenizers with ``tokenizers`` (on Shakespeare, tests/data/multilingual.txt
and some of bytepair's own source) and writes them as their owners do:

- ``hf_gpt2_style/tokenizer.json``: ``ByteLevel(use_regex=True)`` pre-tokenizer (GPT-2, GPT-NeoX),
  ``<|endoftext|>`` as a special token; ``hf_gpt2_style/vocab.json`` + ``merges.txt`` from
  ``tokenizers``' own ``model.save``.
- ``hf_split_style/tokenizer.json``: NFC, ``Split`` (Llama-3's pattern) + ``ByteLevel(use_regex=False)``,
  ``ignore_merges=True``, special tokens and one non-special added token (Llama-3, Qwen2 style).
- ``hf_transformers_gpt2/``: the GPT-2-style tokenizer saved by ``transformers``' ``save_pretrained``.
"""

from __future__ import annotations

import os
import pathlib

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

HERE = pathlib.Path(__file__).parent
ROOT = HERE.parent.parent
LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def corpus() -> list[str]:
    shakespeare = (ROOT / "python/bytepair/data/tinyshakespeare.txt").read_text(encoding="utf-8")[:300_000]
    multilingual = (HERE / "multilingual.txt").read_text(encoding="utf-8")
    code = (ROOT / "python/bytepair/tokenizer.py").read_text(encoding="utf-8")
    return shakespeare.split("\n\n") + [multilingual] * 20 + code.split("\n\n")


def gpt2_style() -> Tokenizer:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=700,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus(), trainer)
    return tok


def split_style() -> Tokenizer:
    tok = Tokenizer(models.BPE(ignore_merges=True))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(LLAMA3_PATTERN), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=800, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(corpus(), trainer)
    tok.add_special_tokens(["<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>"])
    tok.add_tokens(["<tool>"])
    return tok


def main() -> None:
    a = gpt2_style()
    (HERE / "hf_gpt2_style").mkdir(exist_ok=True)
    a.save(str(HERE / "hf_gpt2_style/tokenizer.json"))
    a.model.save(str(HERE / "hf_gpt2_style"))
    b = split_style()
    (HERE / "hf_split_style").mkdir(exist_ok=True)
    b.save(str(HERE / "hf_split_style/tokenizer.json"))

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import PreTrainedTokenizerFast

    fast = PreTrainedTokenizerFast(tokenizer_object=a, eos_token="<|endoftext|>", bos_token="<|endoftext|>")
    fast.save_pretrained(str(HERE / "hf_transformers_gpt2"))


if __name__ == "__main__":
    main()
