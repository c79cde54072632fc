//! WordPiece (BERT): the model (`model`: BERT normalization and pre-tokenization, the trie
//! encoder), training (`train`: word counting, the score and Hugging Face merge loops), and
//! the character classes of BERT's normalizer (`bert_tables`, generated). What was measured
//! and tried: `NOTES.md` here.

pub mod bert_tables;
pub mod model;
pub mod train;
