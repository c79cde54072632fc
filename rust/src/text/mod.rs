//! The text pipeline before a model sees it: pre-tokenization (`pretok`: the pattern presets
//! as hand-written scanners, a regex fallback for custom patterns) and the Unicode class
//! tables the scanners read (`unicode_tables`, generated), and SentencePiece's normalization
//! (`normalize`: the precompiled charsmap, user-defined symbols, whitespace and `▁`), and the
//! per-thread cache of words its models share (`word_cache`). What was measured and tried:
//! `NOTES.md` here.

pub mod ascii_ws;
pub mod code_units;
pub mod expand;
pub mod narrow;
pub mod normalize;
pub mod pretok;
pub mod word_cache;
#[rustfmt::skip]
mod unicode_tables;
