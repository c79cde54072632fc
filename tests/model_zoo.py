"""Model directories built offline with ``tokenizers`` and ``transformers``, for the model-input tests.

Each builder trains a small tokenizer with Hugging Face ``tokenizers`` on a few lines of text,
sets the pipeline a released model has (Llama 3's BOS template, GPT-2's byte-level processor,
RoBERTa's processor with its ``lstrip`` mask token, BERT's pair template...) and writes the
directory the way transformers does (``tokenizer.json`` + ``tokenizer_config.json``). Nothing
is downloaded; nothing is hard-coded but the pipeline's shape.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable

CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "Hello world! Hello, tokenizers; hello transformers.",
    "Padding and truncation: max_length, stride, overflow.",
    "naïve café déjà vu — 東京 日本語 한국어 Ελληνικά русский",
    "def f(x):\n    return x * 2  # code\n\n\tindented",
    "numbers 12345 67890 3.14159 and emoji 🙂🚀",
    "It's we're they've I'm don't can't won't",
    "   spaces    and\nnewlines\r\n\r\nend",
] * 20

LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)

CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{% if message['role'] not in ['system', 'user', 'assistant'] %}"
    "{{ raise_exception('unknown role ' + message['role']) }}{% endif %}"
    "<|start_header_id|>{{ message['role'] }}<|end_header_id|>\n\n"
    "{{ message['content'] | trim }}<|eot_id|>"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}"
)


def _byte_level_bpe(vocab_size: int, specials: list[str], *, split: str | None) -> object:
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    if split is None:
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    else:
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(split), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(CORPUS, trainer)
    return tok


def _write(directory: str, tok: object, config: dict[str, object]) -> str:
    os.makedirs(directory, exist_ok=True)
    tok.save(os.path.join(directory, "tokenizer.json"))  # type: ignore[attr-defined]
    with open(os.path.join(directory, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, ensure_ascii=False, indent=2)
    return directory


def llama3(directory: str) -> str:
    """Llama-3 style: Split + ByteLevel, ByteLevel then a BOS TemplateProcessing, a chat template."""
    from tokenizers import processors

    specials = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"]
    tok = _byte_level_bpe(400, specials, split=LLAMA3_PATTERN)
    bos = "<|begin_of_text|>"
    tok.post_processor = processors.Sequence(  # type: ignore[attr-defined]
        [
            processors.ByteLevel(trim_offsets=False),
            processors.TemplateProcessing(
                single=f"{bos} $A", pair=f"{bos} $A {bos}:1 $B:1", special_tokens=[(bos, tok.token_to_id(bos))]  # type: ignore[attr-defined]
            ),
        ]
    )
    return _write(
        directory,
        tok,
        {
            "tokenizer_class": "PreTrainedTokenizerFast",
            "bos_token": bos,
            "eos_token": "<|eot_id|>",
            "pad_token": "<|end_of_text|>",
            "model_max_length": 64,
            "model_input_names": ["input_ids", "attention_mask"],
            "clean_up_tokenization_spaces": False,
            "chat_template": CHAT_TEMPLATE,
        },
    )


def gpt2(directory: str) -> str:
    """GPT-2 style: ByteLevel(use_regex) and the ByteLevel post-processor (trim_offsets)."""
    from tokenizers import processors

    tok = _byte_level_bpe(350, ["<|endoftext|>"], split=None)
    tok.post_processor = processors.ByteLevel(trim_offsets=True)  # type: ignore[attr-defined]
    return _write(
        directory,
        tok,
        {
            "tokenizer_class": "GPT2Tokenizer",
            "bos_token": "<|endoftext|>",
            "eos_token": "<|endoftext|>",
            "unk_token": "<|endoftext|>",
            "pad_token": "<|endoftext|>",
            "model_max_length": 1024,
            "add_prefix_space": False,
            "clean_up_tokenization_spaces": False,
        },
    )


def roberta(directory: str) -> str:
    """RoBERTa style: RobertaProcessing (trim_offsets) and a ``<mask>`` token with lstrip."""
    from tokenizers import AddedToken, processors

    tok = _byte_level_bpe(380, ["<s>", "<pad>", "</s>", "<unk>"], split=None)
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True, rstrip=False, normalized=False, special=True)])  # type: ignore[attr-defined]
    tok.post_processor = processors.RobertaProcessing(  # type: ignore[attr-defined]
        ("</s>", tok.token_to_id("</s>")), ("<s>", tok.token_to_id("<s>")), trim_offsets=True, add_prefix_space=False  # type: ignore[attr-defined]
    )
    return _write(
        directory,
        tok,
        {
            "tokenizer_class": "RobertaTokenizer",
            "bos_token": "<s>",
            "eos_token": "</s>",
            "sep_token": "</s>",
            "cls_token": "<s>",
            "unk_token": "<unk>",
            "pad_token": "<pad>",
            "mask_token": "<mask>",
            "model_max_length": 512,
            "add_prefix_space": False,
            "clean_up_tokenization_spaces": False,
        },
    )


def bert(directory: str) -> str:
    """BERT: WordPiece with BertProcessing (pairs get type ids 0 and 1)."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.train_from_iterator(CORPUS, trainers.WordPieceTrainer(vocab_size=300, special_tokens=specials, show_progress=False))
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))],
    )
    return _write(
        directory,
        tok,
        {
            "tokenizer_class": "BertTokenizer",
            "unk_token": "[UNK]",
            "sep_token": "[SEP]",
            "pad_token": "[PAD]",
            "cls_token": "[CLS]",
            "mask_token": "[MASK]",
            "do_lower_case": True,
            "model_max_length": 128,
            "clean_up_tokenization_spaces": False,
        },
    )


def added_tokens(directory: str) -> str:
    """Byte-level BPE with a BOS/EOS template, a non-special added token, and added tokens with
    ``lstrip`` / ``rstrip`` / ``single_word``; padding on the left."""
    from tokenizers import AddedToken, processors

    specials = ["<s>", "</s>", "<pad>"]
    tok = _byte_level_bpe(360, specials, split=LLAMA3_PATTERN)
    tok.add_tokens(  # type: ignore[attr-defined]
        [
            AddedToken("<custom>", special=False, normalized=False),
            AddedToken("[L]", lstrip=True, special=False, normalized=False),
            AddedToken("[R]", rstrip=True, special=False, normalized=False),
            AddedToken("word", single_word=True, special=False, normalized=False),
        ]
    )
    tok.add_special_tokens([AddedToken("<both>", lstrip=True, rstrip=True, special=True, normalized=False)])  # type: ignore[attr-defined]
    tok.post_processor = processors.TemplateProcessing(  # type: ignore[attr-defined]
        single="<s> $A </s>",
        pair="<s> $A </s> </s> $B:1 </s>:1",
        special_tokens=[("<s>", tok.token_to_id("<s>")), ("</s>", tok.token_to_id("</s>"))],  # type: ignore[attr-defined]
    )
    return _write(
        directory,
        tok,
        {
            "tokenizer_class": "PreTrainedTokenizerFast",
            "bos_token": "<s>",
            "eos_token": "</s>",
            "pad_token": "<pad>",
            "padding_side": "left",
            "truncation_side": "left",
            "model_max_length": 32,
            "model_input_names": ["input_ids", "token_type_ids", "attention_mask"],
            "clean_up_tokenization_spaces": False,
        },
    )


ZOO: dict[str, Callable[[str], str]] = {
    "llama3": llama3,
    "gpt2": gpt2,
    "roberta": roberta,
    "bert": bert,
    "added_tokens": added_tokens,
}


# ---------------------------------------------------------------- the SentencePiece family
# Directories as transformers' own Llama (BPE with byte fallback) and T5 (Unigram) classes save
# them, from a sentencepiece model trained here; roles from tokenizer_config.json that are not
# the names those classes default to. Kept apart from ZOO: bytepair gives no offsets for them yet.


def _spm_pieces(directory: str, model_type: str, vocab_size: int) -> list[tuple[str, float]]:
    import sentencepiece as spm

    os.makedirs(directory, exist_ok=True)
    corpus = os.path.join(directory, "corpus.txt")
    with open(corpus, "w", encoding="utf-8") as f:
        f.write("\n".join(CORPUS) + "\n")
    prefix = os.path.join(directory, "spm")
    spm.SentencePieceTrainer.train(
        input=corpus, model_prefix=prefix, model_type=model_type, vocab_size=vocab_size, character_coverage=0.98,
        byte_fallback=model_type == "bpe", normalization_rule_name="identity", minloglevel=2, num_threads=1,
    )
    sp = spm.SentencePieceProcessor(model_file=prefix + ".model")
    pieces = [(sp.id_to_piece(i), sp.get_score(i)) for i in range(sp.get_piece_size())]
    for name in ("corpus.txt", "spm.model", "spm.vocab"):
        os.remove(os.path.join(directory, name))
    return pieces


def _edit_config(directory: str, changes: dict[str, object]) -> str:
    path = os.path.join(directory, "tokenizer_config.json")
    with open(path, encoding="utf-8") as f:
        config = json.load(f)
    for key, value in changes.items():
        if value is _REMOVE:
            config.pop(key, None)
        else:
            config[key] = value
    with open(path, "w", encoding="utf-8") as f:
        json.dump(config, f, ensure_ascii=False, indent=2)
    return directory


_REMOVE = object()


def added_token(content: str) -> dict[str, object]:
    """A role written as transformers writes an AddedToken in tokenizer_config.json."""
    return {"__type": "AddedToken", "content": content, "lstrip": False, "rstrip": False,
            "normalized": False, "single_word": False, "special": True}


def llama2(directory: str) -> str:
    """Llama 2 style: BPE with byte fallback (transformers' LlamaTokenizer), fine-tuned for chat:
    eos is an added ``<|im_end|>`` (an AddedToken dict), pad is ``</s>``, left padding (the
    class's default)."""
    from tokenizers import AddedToken
    from transformers import LlamaTokenizer
    from transformers.tokenization_utils_base import generate_merges

    vocab = {p: i for i, (p, _) in enumerate(_spm_pieces(directory, "bpe", 500))}
    tok = LlamaTokenizer(vocab=vocab, merges=generate_merges(vocab), legacy=False)
    tok.add_special_tokens({"additional_special_tokens": [AddedToken("<|im_end|>", special=True, normalized=False)]})
    tok.save_pretrained(directory)
    return _edit_config(directory, {"eos_token": added_token("<|im_end|>"), "pad_token": "</s>", "model_max_length": 24})


def t5(directory: str) -> str:
    """T5 style: Unigram (transformers' T5Tokenizer, 3 sentinels), pad is ``<unk>``, the eos
    template, right padding."""
    from transformers import T5Tokenizer

    tok = T5Tokenizer(vocab=_spm_pieces(directory, "unigram", 100), extra_ids=3)
    tok.save_pretrained(directory)
    return _edit_config(directory, {"pad_token": added_token("<unk>"), "model_max_length": 16})


SPM_ZOO: dict[str, Callable[[str], str]] = {
    "llama2": llama2,
    "t5": t5,
}
