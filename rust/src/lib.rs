//! bytepair-core: the hot loops of the bytepair tokenizer toolkit, driven from Python.
//!
//! The crate is in wings, one per concern; a model kind never reaches into another's wing.
//! - `text`: the text pipeline shared by every model (pre-tokenizers, Unicode tables).
//! - `bpe`: byte-level BPE (training, encoding, flat id buffers, tiktoken rank files), and
//!   SentencePiece's BPE over characters (`bpe::spm`).
//! - `wordpiece`: BERT's WordPiece (normalization, trie encoder, training).
//! - `unigram`: the Unigram model of SentencePiece (Viterbi encoder).
//! - `sentencepiece`: a SentencePiece `.model` run as sentencepiece runs it: its normalizer
//!   (`text::normalize`), its model (`unigram`, or `bpe::spm`), unknown runs and byte fallback.
//! - `io`: readers of foreign files and inputs (tokenizer.json, SentencePiece `.model`, JSON
//!   lines, packed counts, blocks and byte ranges of files).
//! - `count` (parallel, streaming piece counting), `segments` (whole texts seen before and their
//!   ids, for every model kind), `threads` (pools per call), `error` (the one error type),
//!   `compare` (the analysis `compare`'s words and cut words of a block, for BPE encoders).
//! - `py`: the PyO3 bindings, behind the `python` feature; the only code that knows Python.
//!
//! Why the hot paths look as they do: `NOTES.md` beside this file, and one in each wing.

pub mod bpe;
pub mod compare;
pub mod count;
pub mod error;
pub mod huge;
pub mod io;
pub(crate) mod segments;
pub mod sentencepiece;
pub mod text;
pub mod threads;
pub mod unigram;
pub mod wordpiece;
pub mod words;

#[cfg(feature = "python")]
mod py;

/// A token id.
pub type Rank = u32;
