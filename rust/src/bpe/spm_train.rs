//! SentencePiece's BPE training: character-level BPE over the counted words (`words.rs`, the
//! model's normalization, words cut at `▁`), with sentencepiece's rules for pieces.
//!
//! The rules are kept by cutting each word before training, since no piece may cross these
//! places: at a rare character (not among those covering `character_coverage`: it is no
//! piece and no part of one), between two characters of different classes (scripts, numbers;
//! class 0 joins either side), around a character that is a piece only alone (`split_digits`).
//! `▁` only starts a word (ends it with `treat_whitespace_as_suffix`), so no cut is needed for
//! it. The runs left are counted and the byte-level merge loop (`bpe::train`) runs over them
//! from a base vocabulary of the kept characters, its length limit counting characters, ties
//! going to the shorter token, then the smaller (`TieBreak::Shortest`), as sentencepiece's do.
//!
//! Pieces: the merged pieces in the order learned (score `-i` for the `i`-th), then the
//! characters, most frequent first (scores continuing downward): sentencepiece's BPE models
//! are laid out and scored this way, and its encoder merges the best-scored pair first.

use rustc_hash::FxHashMap;

use super::train::{train_from, Base, TieBreak, TrainOptions};
use crate::error::Result;
use crate::unigram::train::{char_counts, required_chars, Options, Trained};
use crate::words::Words;
use crate::Rank;

/// Trains on counted words; `opts.pieces` is the number of pieces wanted (characters and
/// merges). Unigram's own options (seeds, shrinking, EM) are not used.
pub fn train(
    words: &Words,
    opts: &Options,
    progress: &mut dyn FnMut(&str, usize) -> Result<()>,
) -> Result<Trained> {
    let chars = char_counts(words);
    let required = required_chars(&chars, opts.character_coverage);
    // each kept character: its id, its class, and whether it is a piece only alone
    let kept: FxHashMap<char, (Rank, u32, bool)> = required
        .iter()
        .enumerate()
        .map(|(i, &(ch, _))| {
            let class = opts.classes.get(&ch).copied().unwrap_or(0);
            (ch, (i as Rank, class, opts.alone.contains(&ch)))
        })
        .collect();
    let space = '\u{2581}';
    // the runs no piece crosses, counted
    let mut runs: FxHashMap<String, u64> = FxHashMap::default();
    let mut run = String::new();
    let mut flush = |run: &mut String, count: u64| {
        if !run.is_empty() {
            *runs.entry(std::mem::take(run)).or_insert(0) += count;
        }
    };
    for (w, count) in words.iter() {
        let mut prev = 0u32;
        for ch in w.chars() {
            let Some(&(_, k, alone)) = kept.get(&ch) else {
                flush(&mut run, count);
                prev = 0;
                continue;
            };
            if ch == space {
                if !opts.treat_whitespace_as_suffix {
                    flush(&mut run, count);
                }
                run.push(ch);
                if opts.treat_whitespace_as_suffix {
                    flush(&mut run, count);
                }
                prev = 0;
                continue;
            }
            if alone {
                flush(&mut run, count);
                run.push(ch);
                flush(&mut run, count);
                prev = 0;
                continue;
            }
            if k != 0 {
                // `▁` starts a run but has no class: a word's first character then sets it
                if prev != 0 && prev != k {
                    flush(&mut run, count);
                }
                prev = k;
            }
            run.push(ch);
        }
        flush(&mut run, count);
    }
    let mut list: Vec<(String, u64)> = runs.into_iter().collect();
    // a fixed order: the merge loop's results do not depend on it, but its work does
    list.sort_unstable();
    progress("merges", required.len())?;
    let vocab: Vec<Vec<u8>> = required
        .iter()
        .map(|&(ch, _)| ch.to_string().into_bytes())
        .collect();
    let encode = |bytes: &[u8], out: &mut Vec<Rank>| {
        // runs hold kept characters only
        let s = std::str::from_utf8(bytes).unwrap_or_default();
        out.extend(s.chars().map(|ch| kept[&ch].0));
    };
    let base = Base {
        vocab: vocab.clone(),
        encode: &encode,
    };
    let train_opts = TrainOptions {
        merges: opts.pieces.saturating_sub(required.len()),
        min_frequency: 1,
        max_token_length: Some(opts.max_piece_length),
        tie_break: TieBreak::Shortest,
        count_chars: true,
    };
    let trained = train_from(
        Some(&base),
        list.iter().map(|(s, c)| (s.as_bytes(), *c)),
        &train_opts,
        &mut |n| progress("merges", required.len() + n),
    )?;
    let mut texts = vocab;
    let mut pieces = Vec::with_capacity(trained.merges.len() + required.len());
    for (i, &(a, b)) in trained.merges.iter().enumerate() {
        let mut t = texts[a as usize].clone();
        t.extend_from_slice(&texts[b as usize]);
        pieces.push((
            String::from_utf8(t.clone()).unwrap_or_default(),
            -(i as f32),
        ));
        texts.push(t);
    }
    let n = pieces.len();
    for (j, &(ch, _)) in required.iter().enumerate() {
        pieces.push((ch.to_string(), -((n + j) as f32)));
    }
    Ok(Trained {
        pieces,
        required_chars: required.len(),
        seeds: 0,
        rounds: Vec::new(),
    })
}
