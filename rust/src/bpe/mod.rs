//! Byte-level BPE: training (`train`, the incremental merge loop), encoding (`encode`, with its
//! piece cache and long-piece path), flat id buffers for batches and files (`flat`), and the
//! reader of tiktoken rank files (`ranks`); SentencePiece's BPE, which merges characters by piece
//! score (`spm`), and its training (`spm_train`). What was measured and tried: `NOTES.md` here.

pub mod encode;
pub mod flat;
pub mod ranks;
pub mod spm;
pub mod spm_train;
pub mod train;
