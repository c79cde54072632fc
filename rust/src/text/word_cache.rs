//! A thread's cache of words (the text between two `▁`) and what a SentencePiece model made
//! of them, shared by the Unigram and BPE encoders: each keeps one per thread, for one model at
//! a time, and stores in an entry what it needs again (ids, where the pieces end, and for
//! Unigram the scores and the margin its proof needs).
//!
//! Laid out for the hit, which is most words of most text: an open-addressed table of 8-byte
//! slots (a 32-bit tag of the word's hash, where its entry starts) and one arena of `u32`s
//! holding each entry whole (sizes, the word's bytes, the payload), so a hit reads a slot and
//! one stretch of the arena. A hash map of boxed words to boxed paths took three scattered
//! loads a word and a `memcmp` call: a fifth of encoding's time (`unigram/NOTES.md`).

use crate::Rank;

/// Entries a cache holds, and arena words, before it is emptied; longer words are not kept.
/// At most 2 MiB of slots and 16 MiB of arena a thread. 2^17 words: 4 MB of mixed text has
/// about 83,000 distinct words, and at 2^16 the cache emptied itself within such a text
/// (`unigram/NOTES.md`).
const CACHE_WORDS: usize = 1 << 17;
const CACHE_ARENA: usize = 1 << 22;
pub const CACHE_WORD_BYTES: usize = 256;

#[derive(Default)]
pub struct WordCache {
    model: u64,
    slots: Vec<(u32, u32)>,
    arena: Vec<u32>,
    len: usize,
}

/// A word's pieces as the encoders hand them to `SentencePiece`: from the cache (ids and where
/// each piece ends in the word), or from the search (end in the word, id).
pub enum WordPieces<'a> {
    Cached { ids: &'a [u32], ends: &'a [u32] },
    Searched(&'a [(usize, Rank)]),
}

/// The words of normalized text `s` as (start, word): cut before each `▁` (`marks`, where each
/// starts, in order), the first word starting at 0 whether or not it has one.
pub fn words(s: &[u8], marks: impl Iterator<Item = usize>) -> impl Iterator<Item = (usize, &[u8])> {
    let mut start = 0;
    marks
        .filter(|&p| p > 0)
        .chain(std::iter::once(s.len()))
        .map(move |end| {
            let word = (start, &s[start..end]);
            start = end;
            word
        })
}

/// How many words ahead the encoders ask for a word's slot (`WordCache::prefetch`). On a first
/// pass most lookups miss, and the slot's load was a third of the time outside the search
/// (`perf`); asked for one word ahead, and not at all for the first word of a text, it still
/// was most of `find`'s time (a fifth of a first pass over lines of about 60 bytes).
const PREFETCH_WORDS: usize = 4;

/// The word's bytes as little-endian `u32`s, the last one padded with zeros.
#[inline]
fn key_word(word: &[u8], i: usize) -> u32 {
    match word.get(4 * i..4 * i + 4) {
        Some(w) => u32::from_le_bytes([w[0], w[1], w[2], w[3]]),
        None => {
            let mut b = [0u8; 4];
            let chunk = &word[4 * i..];
            b[..chunk.len()].copy_from_slice(chunk);
            u32::from_le_bytes(b)
        }
    }
}

impl WordCache {
    /// Makes the cache `model`'s (emptied if it held another model's words).
    pub fn ready(&mut self, model: u64) {
        if self.model != model || self.slots.is_empty() {
            self.reset(model);
        }
    }

    fn reset(&mut self, model: u64) {
        self.model = model;
        self.slots.clear();
        self.slots.resize(2 * CACHE_WORDS, (0, 0));
        self.arena.clear();
        // All of it asked for at once, in huge pages where the system gives them on request
        // (pages come as they are written): grown by doubling, its copies and page faults were
        // a few per cent of a first pass, and lookups spread over it miss the TLB less.
        self.arena.reserve_exact(CACHE_ARENA + 2 * CACHE_WORD_BYTES);
        crate::bpe::encode::advise_huge_pages(&self.arena);
        self.len = 0;
    }

    pub fn hash(word: &[u8]) -> u64 {
        use std::hash::Hasher;
        let mut h = rustc_hash::FxHasher::default();
        h.write(word);
        h.finish()
    }

    /// The words of normalized text `s` (see `words`) as (start, end, `hash`), in `out`
    /// (emptied first), and the slots of the first `PREFETCH_WORDS` asked for; the encoders ask
    /// for each next one with `prefetch_after`.
    pub fn hash_words(
        &self,
        s: &[u8],
        marks: impl Iterator<Item = usize>,
        out: &mut Vec<(usize, usize, u64)>,
    ) {
        out.clear();
        out.extend(words(s, marks).map(|(start, w)| (start, start + w.len(), Self::hash(w))));
        for &(.., h) in out.iter().take(PREFETCH_WORDS) {
            self.prefetch(h);
        }
    }

    /// Asks for the slot of the word `PREFETCH_WORDS` after word `i` of `spans`, if any.
    #[inline]
    pub fn prefetch_after(&self, spans: &[(usize, usize, u64)], i: usize) {
        if let Some(&(.., h)) = spans.get(i + PREFETCH_WORDS) {
            self.prefetch(h);
        }
    }

    /// Asks for the slot a word hashed to `hash` is looked up in first.
    #[inline]
    pub fn prefetch(&self, hash: u64) {
        if !self.slots.is_empty() {
            let i = hash as usize & (self.slots.len() - 1);
            crate::bpe::encode::prefetch_at(self.slots.as_ptr().wrapping_add(i));
        }
    }

    /// Where `word`'s payload is in the arena (`payload`), if it is kept.
    #[inline]
    pub fn find(&self, word: &[u8], hash: u64) -> Option<std::ops::Range<usize>> {
        let mask = self.slots.len() - 1;
        let tag = (hash >> 32) as u32 | 1;
        let mut i = hash as usize & mask;
        loop {
            let (t, at) = self.slots[i];
            if t == 0 {
                return None;
            }
            let at = at as usize;
            if t == tag && self.arena[at] == word.len() as u32 {
                let words = word.len().div_ceil(4);
                if (0..words).all(|k| self.arena[at + 2 + k] == key_word(word, k)) {
                    let start = at + 2 + words;
                    return Some(start..start + self.arena[at + 1] as usize);
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// Keeps `word` with `payload` (the cache is emptied first when full); returns where the
    /// payload is.
    pub fn insert(&mut self, word: &[u8], hash: u64, payload: &[u32]) -> std::ops::Range<usize> {
        if self.len >= CACHE_WORDS || self.arena.len() >= CACHE_ARENA {
            let model = self.model;
            self.reset(model);
        }
        let at = self.arena.len();
        self.arena.push(word.len() as u32);
        self.arena.push(payload.len() as u32);
        self.arena
            .extend((0..word.len().div_ceil(4)).map(|k| key_word(word, k)));
        let start = self.arena.len();
        self.arena.extend_from_slice(payload);
        let mask = self.slots.len() - 1;
        let mut i = hash as usize & mask;
        while self.slots[i].0 != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i] = ((hash >> 32) as u32 | 1, at as u32);
        self.len += 1;
        start..self.arena.len()
    }

    pub fn payload(&self, at: std::ops::Range<usize>) -> &[u32] {
        &self.arena[at]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_it_keeps_and_only_that() {
        let mut c = WordCache::default();
        c.ready(1);
        let words: Vec<Vec<u8>> = (0..3000u32)
            .map(|i| format!("\u{2581}w{i}{}", "x".repeat((i % 9) as usize)).into_bytes())
            .collect();
        for (i, w) in words.iter().enumerate() {
            let at = c.insert(w, WordCache::hash(w), &[i as u32, 7]);
            assert_eq!(c.payload(at), &[i as u32, 7]);
        }
        for (i, w) in words.iter().enumerate() {
            let at = c.find(w, WordCache::hash(w)).expect("kept");
            assert_eq!(c.payload(at), &[i as u32, 7]);
            // a word that differs in its last byte, or is one byte shorter, is not found
            // (unless it is another kept word)
            let mut v = w.clone();
            *v.last_mut().unwrap() ^= 1;
            for other in [&v[..], &w[..w.len() - 1]] {
                let found = c
                    .find(other, WordCache::hash(other))
                    .map(|at| c.payload(at)[0]);
                let kept = words.iter().position(|k| k == other).map(|k| k as u32);
                assert_eq!(found, kept);
            }
        }
        // another model's words are gone
        c.ready(2);
        assert!(c.find(&words[0], WordCache::hash(&words[0])).is_none());
    }

    #[test]
    fn empties_itself_when_full() {
        let mut c = WordCache::default();
        c.ready(1);
        for i in 0..(CACHE_WORDS + 10) as u32 {
            let w = i.to_le_bytes();
            c.insert(&w, WordCache::hash(&w), &[i]);
        }
        assert!(c.len <= CACHE_WORDS);
        let w = 0u32.to_le_bytes();
        assert!(c.find(&w, WordCache::hash(&w)).is_none());
        let w = ((CACHE_WORDS + 9) as u32).to_le_bytes();
        assert_eq!(
            c.payload(c.find(&w, WordCache::hash(&w)).unwrap()),
            &[(CACHE_WORDS + 9) as u32]
        );
    }
}
