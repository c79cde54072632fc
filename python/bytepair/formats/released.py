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

``encoding="llama4"`` reads Llama 4's ``tokenizer.model`` (200,000 ranks) the way Meta's
``llama4/tokenizer.py`` does:

- the split pattern is o200k_base's, character for character (so it runs on the ``o200k`` preset);
- 2,048 special tokens after the ranks: ``<|begin_of_text|>``, ``<|end_of_text|>``,
  ``<|fim_prefix|>``, ``<|fim_middle|>``, ``<|fim_suffix|>``; the 75 text post-training tokens
  (``<|header_start|>``, ``<|header_end|>``, ``<|eom|>``, ``<|eot|>``, ``<|step|>``, reserved 0..5,
  ``<|python_start|>``, ``<|python_end|>``, ``<|finetune_right_pad|>``, reserved 8..68); the 1,054
  vision tokens (``<|image_start|>`` .. ``<|patch|>``, ``<|vision_reserved_special_token_7|>`` ..
  ``_1047|>``); the 10 reasoning tokens; then ``<|reserved_special_token_0|>`` .. ``_903|>``;
- roles ``bos`` = ``<|begin_of_text|>``, ``eos`` = ``<|end_of_text|>``, ``pad`` =
  ``<|finetune_right_pad|>`` (the reference's ``bos_id``, ``eos_id``, ``pad_id``), and the BOS
  template (the reference's ``encode(..., bos=True)``).

``encode`` gives the ids of tiktoken built the same way (the tests compare). Meta's reference
also cuts texts into 400,000-character slices and runs of over 25,000 spaces or non-spaces before
tiktoken sees them (a guard against an old tiktoken crash); bytepair does not, so the ids differ
from the reference only inside such runs. Llama 3.1 and later renamed some reserved slots
(``<|finetune_right_pad_id|>``, ``<|eom_id|>``, ``<|python_tag|>``); the ids of the tokens above
that they keep are the same.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from bytepair.errors import BytepairError, FormatError
from bytepair.tokenizer import Tokenizer

__all__ = [
    "LLAMA3_PATTERN",
    "LLAMA4_PATTERN",
    "RELEASED",
    "llama3_special_tokens",
    "llama4_special_tokens",
    "load_released",
]

#: Meta's Llama 3 split pattern (``pat_str`` in its reference tokenizer).
LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)

#: Meta's Llama 4 split pattern: o200k_base's (the reference names it ``O200K_PATTERN``).
LLAMA4_PATTERN = "o200k"


def llama3_special_tokens(n_ranks: int) -> dict[str, int]:
    """Llama 3's 256 special tokens, ``{text: id}``, after ``n_ranks`` ordinary tokens."""
    named = ["<|begin_of_text|>", "<|end_of_text|>"]
    named += [f"<|reserved_special_token_{k}|>" for k in range(4)]
    named += ["<|start_header_id|>", "<|end_header_id|>", "<|reserved_special_token_4|>", "<|eot_id|>"]
    named += [f"<|reserved_special_token_{k}|>" for k in range(5, 256 - 5)]
    assert len(named) == 256
    return {t: n_ranks + k for k, t in enumerate(named)}


def _reserved(group: str, first: int, count: int) -> list[str]:
    return [f"<|{group}_reserved_special_token_{k}|>" for k in range(first, first + count)]


# Llama 4 reserves 2,048 ids for special tokens; the named groups come first, in this order,
# and the slots left over are plain ``<|reserved_special_token_k|>``.
_LLAMA4_SPECIALS = 2048
_LLAMA4_NAMED = (
    ["<|begin_of_text|>", "<|end_of_text|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"]
    + ["<|header_start|>", "<|header_end|>", "<|eom|>", "<|eot|>", "<|step|>"]
    + _reserved("text_post_train", 0, 6)
    + ["<|python_start|>", "<|python_end|>", "<|finetune_right_pad|>"]
    + _reserved("text_post_train", 8, 61)
    + ["<|image_start|>", "<|image_end|>", *_reserved("vision", 0, 2), "<|tile_x_separator|>", "<|tile_y_separator|>"]
    + _reserved("vision", 2, 4)
    + ["<|image|>", *_reserved("vision", 6, 1), "<|patch|>"]
    + _reserved("vision", 7, 1041)
    + _reserved("reasoning", 0, 8)
    + ["<|reasoning_thinking_start|>", "<|reasoning_thinking_end|>"]
)


def llama4_special_tokens(n_ranks: int) -> dict[str, int]:
    """Llama 4's 2,048 special tokens, ``{text: id}``, after ``n_ranks`` ordinary tokens."""
    named = _LLAMA4_NAMED + [f"<|reserved_special_token_{k}|>" for k in range(_LLAMA4_SPECIALS - len(_LLAMA4_NAMED))]
    assert len(named) == len(set(named)) == _LLAMA4_SPECIALS
    return {t: n_ranks + k for k, t in enumerate(named)}


@dataclass(frozen=True)
class _Recipe:
    title: str  # in error messages: "not a {title} tokenizer.model (...)"
    n_ranks: str  # the rank count of the released file, as written in error messages
    pattern: str
    specials: Callable[[int], dict[str, int]]
    roles: dict[str, str]


_RECIPES = {
    "llama3": _Recipe(
        "Llama 3", "128,000", LLAMA3_PATTERN, llama3_special_tokens, {"bos": "<|begin_of_text|>", "eos": "<|end_of_text|>"}
    ),
    "llama4": _Recipe(
        "Llama 4",
        "200,000",
        LLAMA4_PATTERN,
        llama4_special_tokens,
        {"bos": "<|begin_of_text|>", "eos": "<|end_of_text|>", "pad": "<|finetune_right_pad|>"},
    ),
}

#: The names ``bytepair.load(path, encoding=...)`` knows.
RELEASED = tuple(_RECIPES)


def load_released(path: str | os.PathLike[str], encoding: str) -> Tokenizer:
    """A released tokenizer file read with its recipe (see the module doc)."""
    from bytepair.formats.tiktoken import load_tiktoken
    from bytepair.pipeline.templates import TemplateProcessing

    recipe = _RECIPES.get(encoding)
    if recipe is None:
        raise FormatError(f"unknown encoding {encoding!r} for bytepair.load(path, encoding=...): known are {', '.join(RELEASED)}")
    where = os.fspath(path)
    try:
        bare = load_tiktoken(where, pattern=recipe.pattern)
    except FormatError:
        raise
    except BytepairError as e:
        raise FormatError(
            f"{where}: not a {recipe.title} tokenizer.model (a tiktoken rank file of {recipe.n_ranks} ranks): {e}"
        ) from None
    # The special tokens' ids follow the ranks, so the file is read once to count them.
    specials = recipe.specials(bare._core.size)
    tok = load_tiktoken(where, pattern=recipe.pattern, special_tokens=specials)
    bos = recipe.roles["bos"]
    tok._roles = dict(recipe.roles)
    tok._check_roles(tok._roles)
    tok._post_processor = TemplateProcessing.of(f"{bos} $A", f"{bos} $A {bos}:1 $B:1", {bos: specials[bos]})
    tok._name = None
    return tok
