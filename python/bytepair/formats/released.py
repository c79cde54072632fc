"""Released tokenizer files that hold only part of the tokenizer: the rest is a recipe.

``bytepair.load(path, encoding="llama3")`` reads Meta's Llama 3 ``tokenizer.model``: a tiktoken
rank file (128,000 ranks) that holds neither the split pattern nor the special tokens. Meta's
reference tokenizer (``llama3/tokenizer.py``) adds them in code; so does this recipe:

- the split pattern Meta publishes (cl100k's, but ``\\s*[\\r\\n]+`` and ``\\s+`` at the end);
- 256 special tokens after the ranks, ids ``n .. n + 255`` (``n`` = the number of ranks):
  ``<|begin_of_text|>``, ``<|end_of_text|>``, ``<|reserved_special_token_0|>`` .. ``_3|>``,
  ``<|start_header_id|>``, ``<|end_header_id|>``, ``<|reserved_special_token_4|>``, ``<|eot_id|>``,
  then ``<|reserved_special_token_5|>`` .. ``_250|>``;
- roles ``bos`` = ``<|begin_of_text|>``, ``eos`` = ``<|end_of_text|>``; and for model inputs
  (``tok(...)``) the BOS template Hugging Face's conversion of Llama 3 has.

``encode`` gives the ids of tiktoken built the same way (the tests compare). Llama 3.1 and later
renamed some reserved slots (``<|finetune_right_pad_id|>``, ``<|eom_id|>``, ``<|python_tag|>``); the
ids of the tokens above that they keep are the same.
"""

from __future__ import annotations

import os

from bytepair.errors import BytepairError, FormatError
from bytepair.tokenizer import Tokenizer

__all__ = ["LLAMA3_PATTERN", "RELEASED", "llama3_special_tokens", "load_released"]

#: Meta's Llama 3 split pattern (``pat_str`` in its reference tokenizer).
LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)

#: The names ``bytepair.load(path, encoding=...)`` knows.
RELEASED = ("llama3",)


def llama3_special_tokens(n_ranks: int) -> dict[str, int]:
    """Llama 3's 256 special tokens, ``{text: id}``, after ``n_ranks`` ordinary tokens."""
    named = ["<|begin_of_text|>", "<|end_of_text|>"]
    named += [f"<|reserved_special_token_{k}|>" for k in range(4)]
    named += ["<|start_header_id|>", "<|end_header_id|>", "<|reserved_special_token_4|>", "<|eot_id|>"]
    named += [f"<|reserved_special_token_{k}|>" for k in range(5, 256 - 5)]
    assert len(named) == 256
    return {t: n_ranks + k for k, t in enumerate(named)}


def load_released(path: str | os.PathLike[str], encoding: str) -> Tokenizer:
    """A released tokenizer file read with its recipe (see the module doc)."""
    from bytepair.formats.tiktoken import load_tiktoken
    from bytepair.pipeline.templates import TemplateProcessing

    if encoding not in RELEASED:
        raise FormatError(f"unknown encoding {encoding!r} for bytepair.load(path, encoding=...): known are {', '.join(RELEASED)}")
    where = os.fspath(path)
    try:
        bare = load_tiktoken(where, pattern=LLAMA3_PATTERN)
    except FormatError:
        raise
    except BytepairError as e:
        raise FormatError(f"{where}: not a Llama 3 tokenizer.model (a tiktoken rank file of 128,000 ranks): {e}") from None
    n = bare._core.size
    specials = llama3_special_tokens(n)
    tok = load_tiktoken(where, pattern=LLAMA3_PATTERN, special_tokens=specials)
    bos = "<|begin_of_text|>"
    tok._roles = {"bos": bos, "eos": "<|end_of_text|>"}
    tok._check_roles(tok._roles)
    tok._post_processor = TemplateProcessing.of(f"{bos} $A", f"{bos} $A {bos}:1 $B:1", {bos: specials[bos]})
    tok._name = None
    return tok
