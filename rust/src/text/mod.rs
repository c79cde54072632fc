//! The text pipeline before a model sees it: pre-tokenization (`pretok`: the pattern presets
//! as hand-written scanners, a regex fallback for custom patterns) and the Unicode class
//! tables the scanners read (`unicode_tables`, generated), and SentencePiece's normalization
//! (`normalize`: the precompiled charsmap, user-defined symbols, whitespace and `▁`). What was measured and tried:
//! `NOTES.md` here.

pub mod normalize;
pub mod pretok;
#[rustfmt::skip]
mod unicode_tables;
