//! Unigram (Kudo 2018, the default model of SentencePiece): the encoder (`model`: a trie of the
//! pieces and the Viterbi search sentencepiece does). What was measured: `NOTES.md` here.

pub mod model;
