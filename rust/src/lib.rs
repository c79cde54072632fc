//! bytepair-core: the hot loops of the bytepair tokenizer toolkit.
//!
//! Modules: `pretok` (splitting text into pieces), `count` (parallel, streaming piece counting),
//! `train` (the incremental merge loop), `encode` (BPE encoding of pieces), `error` (the one
//! error type), and `py` (the PyO3 bindings, behind the `python` feature; the only file that
//! knows about Python).
//!
//! Performance notes
//! - Training works on distinct pieces, never on the corpus: counting dedups as it goes, with one
//!   hash-map shard per rayon worker (no locks contended), merged once at the end.
//! - The merge loop keeps pair -> pieces lists and a lazy max-heap, so a merge costs what the
//!   pieces containing the pair cost. Heap comparisons look at token bytes only on count ties.
//! - Encoding first looks the whole piece up in the vocabulary: most pieces of real text are one
//!   token. Other pieces merge by priority, with a heap for long pieces (O(n log n)).
//! - Every call from Python releases the GIL; batch calls fan out with rayon.

pub mod count;
pub mod encode;
pub mod error;
pub mod pretok;
pub mod ranks;
pub mod threads;
pub mod train;

#[cfg(feature = "python")]
mod py;

pub type Rank = u32;
