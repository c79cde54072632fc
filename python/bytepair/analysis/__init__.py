"""Looking at what a tokenizer does: the pieces and merge steps of encoding a text, corpus and
token statistics, Zipf, vocabulary-size sweeps and cross-language comparisons. The numbers live here (numpy); :mod:`bytepair.analysis.plots`
draws them (matplotlib, the optional extra ``plot``)."""

from __future__ import annotations

from bytepair.analysis.compare import CompareRow, Comparison, compare, gini
from bytepair.analysis.corpus import Corpus
from bytepair.analysis.merges import merge_tree, nested_merges
from bytepair.analysis.nested import counts_at, decompose, tokens_at_every_size
from bytepair.analysis.stats import ByteStats, TokenStats, byte_stats, token_stats, zipf_fit
from bytepair.analysis.sweep import AlphaRow, SweepResult, alpha_table, default_words, sweep
from bytepair.analysis.trace import (
    MergeStep,
    PieceTrace,
    TrainingRound,
    WordPieceStep,
    pre_tokenize,
    trace,
    training_trace,
)
from bytepair.analysis.words import WORD_DEFINITION, word_spans

__all__ = [
    "WORD_DEFINITION",
    "AlphaRow",
    "ByteStats",
    "CompareRow",
    "Comparison",
    "Corpus",
    "MergeStep",
    "PieceTrace",
    "SweepResult",
    "TokenStats",
    "TrainingRound",
    "WordPieceStep",
    "alpha_table",
    "byte_stats",
    "compare",
    "counts_at",
    "decompose",
    "default_words",
    "gini",
    "merge_tree",
    "nested_merges",
    "pre_tokenize",
    "sweep",
    "token_stats",
    "tokens_at_every_size",
    "trace",
    "training_trace",
    "word_spans",
    "zipf_fit",
]
