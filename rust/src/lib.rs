//! bytepair-core: the hot loops of the bytepair tokenizer toolkit.
//!
//! Modules: `pretok` (splitting text into pieces), `count` (parallel, streaming piece counting),
//! `train` (the incremental merge loop), `encode` (BPE encoding of pieces and texts), `threads`
//! (thread pools per call), `ranks` (fast reader of tiktoken rank files), `error` (the one
//! error type), `py` (the PyO3 bindings, behind the `python` feature; the only file that
//! knows about Python), and `packed` (piece counts as one byte string, to move them between
//! processes). WordPiece (issue 10): `wordpiece` (BERT normalization and pre-tokenization with
//! the character tables of `bert_tables`, and the trie encoder) and `wordpiece_train` (word
//! counting and the score / HF merge loops).
//!
//! Performance notes
//! - Training works on distinct pieces, never on the corpus: counting dedups as it goes, with one
//!   hash-map shard per rayon worker (no locks contended), merged once at the end.
//! - The merge loop keeps pair -> pieces lists and a lazy max-heap, so a merge costs what the
//!   pieces containing the pair cost. Heap comparisons look at token bytes only on count ties.
//! - Pair counts are `i64` unless the total pair mass of the pieces could overflow it (counts
//!   given by the caller, up to 2^64 each); then the same loop runs on `i128`, so counts stay
//!   exact without costing memory in the usual case.
//! - Continued training encodes each distinct piece once with the base tokenizer, on all cores,
//!   straight into the trainer's arena. Mixed sources are counted apart and merged once, with
//!   integer weights (no floating point in the counts).
//! - Encoding (details in `encode`): whole-piece lookup in a table whose slots hold the first 8
//!   bytes of each token (no pointer chase for most pieces); a bounded per-thread cache of
//!   piece -> ids; merges on stack arrays with a flat table for byte pairs and a Bloom filter in
//!   front of the big pair table; minima per group of 8 positions for pieces over 16 bytes; a
//!   four-ary heap for long pieces.
//! - The Python boundary cost as much as encoding: `py.rs` returns lists that share one int
//!   object per id instead of allocating an int per token.
//! - Threads: pools are cached per size (`threads`), never the global one, and rebuilt in a
//!   forked child. One large text is cut at independent cuts only (`pretok::is_independent_cut`),
//!   so ids never depend on the number of threads.
//! - Loading: `ranks` reads tiktoken rank files without making Python objects per token, and the
//!   pair table of a rank file is built by splitting every token in parallel.
//! - Every call from Python releases the GIL.

pub mod blocks;
pub mod count;
pub mod encode;
pub mod error;
pub mod packed;
pub mod pretok;
pub mod ranks;
pub mod threads;
pub mod train;
// WordPiece (issue 10): BERT normalization tables and the WordPiece model.
pub mod bert_tables;
pub mod wordpiece;
pub mod wordpiece_train;

#[cfg(feature = "python")]
mod py;

pub type Rank = u32;

// Array outputs and corpus encoding (issue 11): flat uint16/uint32 ids + document offsets.
pub mod arrays;

// Interop (issue 9): the vocab and merges of a Hugging Face tokenizer.json, read in one pass.
pub mod hfjson;

// The text field of JSON lines, read in Rust for corpus encoding (issue 11).
pub mod jsonl;
