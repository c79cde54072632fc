"""Foreign tokenizer file formats, one module per format, each a ``load_*``/``dump_*`` pair.

- :mod:`bytepair.formats.tiktoken`: tiktoken's rank files (``*.tiktoken``, plain or gzip).
- :mod:`bytepair.formats.hf`: Hugging Face ``tokenizer.json`` (byte-level BPE) and
  ``save_pretrained`` directories.
- :mod:`bytepair.formats.gpt2`: GPT-2's ``vocab.json`` + ``merges.txt``.
- :mod:`bytepair.formats.minbpe`: minbpe's ``.model`` / ``.vocab`` files.
- :mod:`bytepair.formats.spm`: SentencePiece's ``.model`` files (Unigram, BPE).
- :mod:`bytepair.formats.hf_spm`: Hugging Face ``tokenizer.json`` of the SentencePiece family
  (read); :mod:`bytepair.formats.hf_spm_write`: a SentencePiece model written as one
  (``to_hf_json``, ``save_hf_json``), with the ids sentencepiece gives.
- :mod:`bytepair.formats.tekken`: Mistral's Tekken JSON (``tekken_*.json``), with
  ``mistral_common``'s ids.
- :mod:`bytepair.formats.released`: Llama 3 / Llama 4 ``tokenizer.model`` (rank files whose
  pattern and special tokens are a recipe: ``bytepair.load(path, encoding="llama4")``).

``bytepair.load`` (``bytepair._detect``) finds the format of a file by its content.
"""

from __future__ import annotations

from bytepair.formats.tiktoken import dump_tiktoken, load_tiktoken

__all__ = ["dump_tiktoken", "load_tiktoken"]
