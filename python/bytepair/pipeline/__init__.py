"""The text pipeline shared by every model kind: added tokens, post-processors (templates),
chat templates. Model kinds (``tokenizer.py``, ``wordpiece.py``, ...) use these through
:mod:`bytepair._api`; ``formats/`` reads and writes them."""

from bytepair.pipeline.added_tokens import AddedToken, AddedVocabulary
from bytepair.pipeline.templates import (
    BertProcessing,
    ByteLevelProcessing,
    PostProcessor,
    RobertaProcessing,
    SequenceProcessing,
    TemplateProcessing,
    post_processor_from_hf,
)

__all__ = [
    "AddedToken",
    "AddedVocabulary",
    "BertProcessing",
    "ByteLevelProcessing",
    "PostProcessor",
    "RobertaProcessing",
    "SequenceProcessing",
    "TemplateProcessing",
    "post_processor_from_hf",
]
