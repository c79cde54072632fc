"""Foreign tokenizer file formats, one module per format, each a ``load_*``/``dump_*`` pair.

- :mod:`bytepair.formats.tiktoken`: tiktoken's rank files (``*.tiktoken``, plain or gzip).
"""

from __future__ import annotations

from bytepair.formats.tiktoken import dump_tiktoken, load_tiktoken

__all__ = ["dump_tiktoken", "load_tiktoken"]
