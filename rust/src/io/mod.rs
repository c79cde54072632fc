//! Readers that feed the models: Hugging Face `tokenizer.json` (`hfjson`), the text field of
//! JSON lines (`jsonl`), piece counts packed into one byte string (`packed`), files read in
//! blocks (`blocks`), byte ranges of files read and checked as UTF-8 (`ranges`) and
//! SentencePiece `.model` files, read and written (`spm_model`). What was
//! measured: `NOTES.md` here.

pub mod blocks;
pub mod hfjson;
pub mod jsonl;
pub mod packed;
pub mod ranges;
pub mod spm_model;
