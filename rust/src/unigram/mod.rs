//! Unigram (Kudo 2018, the default model of SentencePiece): the encoder (`model`: a trie of the
//! pieces and the Viterbi search sentencepiece does) and subword regularization (`sample`:
//! segmentations drawn from the lattice or from the n best). What was measured: `NOTES.md`
//! here.

pub mod model;
pub mod sample;
pub mod seeds;
pub mod train;
