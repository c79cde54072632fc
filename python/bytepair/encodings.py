"""OpenAI's pretrained encodings, shipped with the package and loaded offline.

>>> import bytepair
>>> enc = bytepair.get_encoding("cl100k_base")
>>> enc.encode("hello world")
[15339, 1917]
>>> bytepair.encoding_for_model("gpt-4o-2024-08-06").name
'o200k_base'

The rank files live gzip-compressed in ``bytepair/data``; each is checked against the sha256
that tiktoken checks (of the uncompressed content) when it is first loaded. An encoding is
loaded once per process, on first use, and shared: the returned tokenizer is read-only and
safe to use from many threads.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from importlib import resources

from bytepair.formats.tiktoken import load_tiktoken
from bytepair.tokenizer import Tokenizer

__all__ = ["encoding_for_model", "encoding_name_for_model", "get_encoding", "list_encoding_names"]


@dataclass(frozen=True)
class _Spec:
    file: str
    sha256: str  # of the uncompressed file
    pattern: str  # a preset of bytepair.patterns
    special_tokens: dict[str, int]


_R50K = _Spec(
    file="r50k_base.tiktoken.gz",
    sha256="306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    pattern="gpt2",
    special_tokens={"<|endoftext|>": 50256},
)

_ENCODINGS: dict[str, _Spec] = {
    "gpt2": _R50K,
    "r50k_base": _R50K,
    "cl100k_base": _Spec(
        file="cl100k_base.tiktoken.gz",
        sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        pattern="gpt4",
        special_tokens={
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
    "o200k_base": _Spec(
        file="o200k_base.tiktoken.gz",
        sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        pattern="o200k",
        special_tokens={"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    ),
}

# Model names as OpenAI (and tiktoken) map them. A name is looked up exactly first, then by
# its longest matching prefix, so dated and suffixed names ("gpt-4o-2024-08-06") work.
_MODELS: dict[str, str] = {
    # reasoning
    "o1": "o200k_base",
    "o3": "o200k_base",
    "o4-mini": "o200k_base",
    # chat
    "gpt-5": "o200k_base",
    "gpt-4.5": "o200k_base",
    "gpt-4.1": "o200k_base",
    "gpt-4o": "o200k_base",
    "chatgpt-4o-latest": "o200k_base",
    "gpt-4": "cl100k_base",
    "gpt-3.5-turbo": "cl100k_base",
    "gpt-3.5": "cl100k_base",
    "gpt-35-turbo": "cl100k_base",  # Azure deployment name
    # base
    "davinci-002": "cl100k_base",
    "babbage-002": "cl100k_base",
    # embeddings
    "text-embedding-ada-002": "cl100k_base",
    "text-embedding-3-small": "cl100k_base",
    "text-embedding-3-large": "cl100k_base",
    # GPT-2 and the first GPT-3 models
    "gpt2": "gpt2",
    "gpt-2": "gpt2",
    "davinci": "r50k_base",
    "curie": "r50k_base",
    "babbage": "r50k_base",
    "ada": "r50k_base",
    "text-davinci-001": "r50k_base",
    "text-curie-001": "r50k_base",
    "text-babbage-001": "r50k_base",
    "text-ada-001": "r50k_base",
}

_MODEL_PREFIXES: dict[str, str] = {
    "o1-": "o200k_base",
    "o3-": "o200k_base",
    "o4-mini-": "o200k_base",
    "gpt-5": "o200k_base",  # gpt-5-mini, gpt-5.1, ...
    "gpt-4.5-": "o200k_base",
    "gpt-4.1-": "o200k_base",
    "gpt-4o-": "o200k_base",
    "chatgpt-4o-": "o200k_base",
    "gpt-4-": "cl100k_base",  # gpt-4-0613, gpt-4-32k, gpt-4-turbo, ...
    "gpt-3.5-turbo-": "cl100k_base",
    "gpt-35-turbo-": "cl100k_base",
    "text-embedding-3-": "cl100k_base",
    "ft:gpt-4o": "o200k_base",
    "ft:gpt-4": "cl100k_base",
    "ft:gpt-3.5-turbo": "cl100k_base",
    "ft:davinci-002": "cl100k_base",
    "ft:babbage-002": "cl100k_base",
}

# Models whose encodings bytepair does not ship: named in the error instead of "unknown".
_NOT_SHIPPED: dict[str, str] = {
    "text-davinci-003": "p50k_base",
    "text-davinci-002": "p50k_base",
    "code-davinci-002": "p50k_base",
    "code-davinci-001": "p50k_base",
    "code-cushman-002": "p50k_base",
    "code-cushman-001": "p50k_base",
    "davinci-codex": "p50k_base",
    "cushman-codex": "p50k_base",
    "text-davinci-edit-001": "p50k_edit",
    "code-davinci-edit-001": "p50k_edit",
    "gpt-oss-": "o200k_harmony",
}

_cache: dict[str, Tokenizer] = {}
_locks: dict[str, threading.Lock] = {name: threading.Lock() for name in _ENCODINGS}


def list_encoding_names() -> list[str]:
    """The names :func:`get_encoding` accepts."""
    return list(_ENCODINGS)


def get_encoding(name: str) -> Tokenizer:
    """The pretrained encoding ``name``: ``"gpt2"`` (= ``"r50k_base"``), ``"cl100k_base"``
    (GPT-4, GPT-3.5) or ``"o200k_base"`` (GPT-4o, GPT-4.1, GPT-5, o1, o3).

    Encodes exactly as tiktoken does, with the same ids. Loaded on first use, then cached.
    """
    tok = _cache.get(name) if isinstance(name, str) else None
    if tok is not None:
        return tok
    if not isinstance(name, str):
        raise TypeError(f"encoding name must be a str, not {type(name).__name__}")
    spec = _ENCODINGS.get(name)
    if spec is None:
        raise ValueError(f"unknown encoding {name!r}; known encodings: {', '.join(_ENCODINGS)}")
    with _locks[name]:
        tok = _cache.get(name)
        if tok is None:
            tok = _load(name, spec)
            _cache[name] = tok
    return tok


def _load(name: str, spec: _Spec) -> Tokenizer:
    with resources.as_file(resources.files("bytepair").joinpath("data", spec.file)) as path:
        tok = load_tiktoken(path, pattern=spec.pattern, special_tokens=spec.special_tokens, expected_hash=spec.sha256)
    tok._name = name
    return tok


def encoding_name_for_model(model: str) -> str:
    """The name of the encoding that ``model`` (an OpenAI model name) uses."""
    if not isinstance(model, str):
        raise TypeError(f"model name must be a str, not {type(model).__name__}")
    found = _MODELS.get(model) or _by_prefix(model, _MODEL_PREFIXES)
    if found is not None:
        return found
    missing = _NOT_SHIPPED.get(model) or _by_prefix(model, _NOT_SHIPPED)
    if missing is not None:
        raise ValueError(f"model {model!r} uses the encoding {missing!r}, which bytepair does not ship")
    raise ValueError(
        f"unknown model {model!r}; known models: {', '.join(_MODELS)}; "
        f"and names starting with: {', '.join(_MODEL_PREFIXES)}. "
        f"Use get_encoding() with one of {', '.join(_ENCODINGS)} to choose the encoding yourself."
    )


def _by_prefix(model: str, table: dict[str, str]) -> str | None:
    matches = [prefix for prefix in table if model.startswith(prefix)]
    return table[max(matches, key=len)] if matches else None


def encoding_for_model(model: str) -> Tokenizer:
    """The pretrained encoding an OpenAI model uses, e.g. ``"gpt-4o-2024-08-06"`` ->
    ``o200k_base``, ``"gpt-3.5-turbo"`` -> ``cl100k_base``."""
    return get_encoding(encoding_name_for_model(model))
