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
//!
//! A word of up to 16 bytes (most words) is hashed, kept and compared as two zero-padded
//! `u64`s loaded from the text it is in (`short_key`, `short_hash`, `find_at`), with no branch
//! on its length: compared a `u32` at a time, with a `memcpy` call for the last one, `find`
//! was 130 instructions a hit (cachegrind), and the branches on a word's length went either
//! way word after word (`unigram/NOTES.md`, session 29).

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
    /// zero the first time in fresh memory (`Zeroed`: a first call zeroed 2 MiB of 4 KiB
    /// pages), zeroed in place when the cache is emptied again
    slots: crate::huge::Zeroed<(u32, u32)>,
    arena: Vec<u32>,
    len: usize,
}

/// A word's pieces as the encoders hand them to `SentencePiece`: from the cache (ids and where
/// each piece ends in the word), or from the search (end in the word, id).
pub enum WordPieces<'a> {
    /// `four`: the cache's four words from the first id on (`WordCache::four`), for a copy
    /// of up to four ids in one store.
    Cached {
        ids: &'a [u32],
        ends: &'a [u32],
        four: [u32; 4],
    },
    Searched(&'a [(usize, Rank)]),
}

/// How many words ahead the encoders ask for a word's slot (`WordCache::prefetch`). On a first
/// pass most lookups miss, and the slot's load was a third of the time outside the search
/// (`perf`); asked for one word ahead, and not at all for the first word of a text, it still
/// was most of `find`'s time (a fifth of a first pass over lines of about 60 bytes).
const PREFETCH_WORDS: usize = 4;

/// Masks that keep the first `n` bytes (0 to 16) of two little-endian words: a short word's
/// key without a branch on its length (one that went either way word after word).
const MASKS: [[u64; 2]; SHORT + 1] = {
    let mut m = [[0u64; 2]; SHORT + 1];
    let mut n = 1;
    while n <= SHORT {
        m[n][0] = if n >= 8 {
            u64::MAX
        } else {
            u64::MAX >> (64 - 8 * n)
        };
        m[n][1] = if n <= 8 {
            0
        } else {
            u64::MAX >> (64 - 8 * (n - 8))
        };
        n += 1;
    }
    m
};

/// The two zero-padded little-endian words of `s[start..start + n]` (`n` in 1..=16): 16 bytes
/// loaded at once where `s` has them (all but a text's last words), masked to the word.
#[inline(always)]
pub(crate) fn short_key(s: &[u8], start: usize, n: usize) -> (u64, u64) {
    let [ml, mh] = MASKS[n];
    match s.get(start..start + 16) {
        Some(w) => (
            u64::from_le_bytes(w[..8].try_into().unwrap()) & ml,
            u64::from_le_bytes(w[8..].try_into().unwrap()) & mh,
        ),
        None => crate::bpe::encode::words16(&s[start..start + n]),
    }
}

/// A short word's hash from its key, both words mixed whatever its length (no branch).
#[inline(always)]
fn short_hash(lo: u64, hi: u64, n: usize) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let h = (lo ^ (n as u64).rotate_right(8)).wrapping_mul(K);
    let h = (h.rotate_left(27) ^ hi).wrapping_mul(K);
    h ^ (h >> 29)
}

/// Zero words after the last entry, so that four words can be read from any place in a
/// payload (`four`).
const PAD: usize = 4;

/// Words of up to this many bytes are kept and compared as two `u64`s (`find_at`).
const SHORT: usize = 16;
const SHORT_WORDS: usize = SHORT / 4;

/// The `u32`s an entry keeps a word of `len` bytes in: a short word always in `SHORT_WORDS`.
#[inline]
fn key_words(len: usize) -> usize {
    if (1..=SHORT).contains(&len) {
        SHORT_WORDS
    } else {
        len.div_ceil(4)
    }
}

/// The word's bytes as little-endian `u32`s, the last one padded with zeros (and zeros past
/// the word's end).
#[inline]
fn key_word(word: &[u8], i: usize) -> u32 {
    match word.get(4 * i..4 * i + 4) {
        Some(w) => u32::from_le_bytes([w[0], w[1], w[2], w[3]]),
        None => {
            // 0 to 3 bytes: the first, middle and last cover them (no `memcpy` call)
            let b = word.get(4 * i..).unwrap_or_default();
            match b.len() {
                0 => 0,
                n => {
                    u32::from(b[0])
                        | u32::from(b[n / 2]) << (8 * (n / 2))
                        | u32::from(b[n - 1]) << (8 * (n - 1))
                }
            }
        }
    }
}

/// Copies `from` to `to`. From 4 to 16 words (16 to 64 bytes), without a branch on the
/// length: four 16-byte moves whose places overlap as the length needs (the first, the last,
/// and two between, each inside `from`).
///
/// # Safety
/// `to` is valid for writes of `from.len()` words and does not overlap `from`.
#[inline(always)]
unsafe fn copy_words(from: &[u32], to: *mut u32) {
    let n = from.len();
    if !(4..=16).contains(&n) {
        std::ptr::copy_nonoverlapping(from.as_ptr(), to, n);
        return;
    }
    // four windows of four words at 0, b, c, n - 4 (b = min(4, n - 4), c = max(n - 8, b)):
    // together they cover 0..n for every n in 4..=16, and none leaves it
    let last = n - 4;
    let b = last.min(4);
    let c = n.saturating_sub(8).max(b);
    for o in [0, b, c, last] {
        let w = std::ptr::read_unaligned(from.as_ptr().add(o).cast::<[u32; 4]>());
        std::ptr::write_unaligned(to.add(o).cast::<[u32; 4]>(), w);
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
        if self.slots.len() == 2 * CACHE_WORDS {
            self.slots.fill((0, 0));
        } else {
            // SAFETY: zeroes are a `(u32, u32)`, the empty slot.
            self.slots = unsafe { crate::huge::Zeroed::in_huge_pages(2 * CACHE_WORDS) };
        }
        self.arena.clear();
        self.arena.extend_from_slice(&[0; PAD]);
        // All of it asked for at once, in huge pages where the system gives them on request
        // (pages come as they are written): grown by doubling, its copies and page faults were
        // a few per cent of a first pass, and lookups spread over it miss the TLB less.
        self.arena.reserve_exact(CACHE_ARENA + 2 * CACHE_WORD_BYTES);
        crate::bpe::encode::advise_huge_pages(&self.arena);
        self.len = 0;
    }

    /// The hash of `word` (`hash_words` hashes a text's words in place, as this does): a word
    /// of 1 to 16 bytes from its two zero-padded little-endian words (`short_key`,
    /// `short_hash`); a longer one (or the empty one) through `FxHasher`.
    #[cfg(test)]
    pub fn hash(word: &[u8]) -> u64 {
        Self::hash_at(word, 0, word.len())
    }

    fn hash_long(word: &[u8]) -> u64 {
        use std::hash::Hasher;
        let mut h = rustc_hash::FxHasher::default();
        h.write(word);
        h.finish()
    }

    /// `hash` of `s[start..end]`, a short word's words loaded from `s` as they are (16 bytes
    /// at once where `s` has them).
    #[inline(always)]
    pub fn hash_at(s: &[u8], start: usize, end: usize) -> u64 {
        let n = end - start;
        if (1..=SHORT).contains(&n) {
            let (lo, hi) = short_key(s, start, n);
            short_hash(lo, hi, n)
        } else {
            Self::hash_long(&s[start..end])
        }
    }

    /// The words of normalized text `s` (cut before each `▁`: `marks`, where each starts, in
    /// order; the first word starts at 0 whether or not it has one) as (start, end, `hash`),
    /// in `out` (emptied first), and the slots of the first `PREFETCH_WORDS` asked for; the
    /// encoders ask for each next one with `prefetch_after`.
    pub fn hash_words(
        &self,
        s: &[u8],
        marks: impl Iterator<Item = usize>,
        out: &mut Vec<(usize, usize, u64)>,
    ) {
        out.clear();
        let mut start = 0;
        for p in marks {
            if p > 0 {
                out.push((start, p, Self::hash_at(s, start, p)));
                start = p;
            }
        }
        out.push((start, s.len(), Self::hash_at(s, start, s.len())));
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

    /// Where `word`'s payload is in the arena (`payload`), if it is kept (tests: the encoders
    /// look up words in their text, `find_at`).
    #[cfg(test)]
    pub fn find(&self, word: &[u8], hash: u64) -> Option<std::ops::Range<usize>> {
        self.find_at(word, 0, word.len(), hash)
    }

    /// `find` of `s[start..end]`; a short word is compared as its two words, loaded from `s`
    /// as `hash_at` loads them, against the four its entry keeps.
    #[inline]
    pub fn find_at(
        &self,
        s: &[u8],
        start: usize,
        end: usize,
        hash: u64,
    ) -> Option<std::ops::Range<usize>> {
        let n = end - start;
        if !(1..=SHORT).contains(&n) {
            return self.find_long(&s[start..end], hash);
        }
        let (lo, hi) = short_key(s, start, n);
        let at = self.probe(hash, |at| {
            let e = &self.arena[at..at + 2 + SHORT_WORDS];
            let k = |j: usize| u64::from(e[2 + j]) | u64::from(e[3 + j]) << 32;
            e[0] == n as u32 && k(0) == lo && k(2) == hi
        })?;
        let start = at + 2 + SHORT_WORDS;
        Some(start..start + self.arena[at + 1] as usize)
    }

    fn find_long(&self, word: &[u8], hash: u64) -> Option<std::ops::Range<usize>> {
        let words = key_words(word.len());
        let at = self.probe(hash, |at| {
            self.arena[at] == word.len() as u32
                && (0..words).all(|k| self.arena[at + 2 + k] == key_word(word, k))
        })?;
        let start = at + 2 + words;
        Some(start..start + self.arena[at + 1] as usize)
    }

    /// Where the entry the slots hold under `hash` for which `is` holds starts, if any: the
    /// slots from the hash's home on, up to the first empty one, each of the hash's tag.
    #[inline(always)]
    fn probe(&self, hash: u64, is: impl Fn(usize) -> bool) -> Option<usize> {
        let mask = self.slots.len() - 1;
        let tag = (hash >> 32) as u32 | 1;
        let mut i = hash as usize & mask;
        loop {
            let (t, at) = self.slots[i];
            if t == 0 {
                return None;
            }
            if t == tag && is(at as usize) {
                return Some(at as usize);
            }
            i = (i + 1) & mask;
        }
    }

    /// Keeps `word` with `payload` (the cache is emptied first when full); returns where the
    /// payload is.
    #[cfg(test)]
    pub fn insert(&mut self, word: &[u8], hash: u64, payload: &[u32]) -> std::ops::Range<usize> {
        self.insert_at(word, 0, word.len(), hash, payload)
    }

    /// `insert` of `s[start..end]`, a short word's key loaded from `s` as `find_at` loads it.
    ///
    /// Written in place, with no branch on the word's or the payload's length for a short word
    /// and a payload of 4 to 16 words (most entries). Pushed and extended a piece at a time
    /// (the key's loop, its last word, the payload's `memcpy` by size), the inserts of a
    /// Unigram first pass mispredicted 171 k branches, 2.6 an insert (`unigram/NOTES.md`).
    pub fn insert_at(
        &mut self,
        s: &[u8],
        start: usize,
        end: usize,
        hash: u64,
        payload: &[u32],
    ) -> std::ops::Range<usize> {
        if self.len >= CACHE_WORDS || self.arena.len() >= CACHE_ARENA {
            let model = self.model;
            self.reset(model);
        }
        let n = end - start;
        let words = key_words(n);
        // the entry in place of the padding, the padding after it again
        let at = self.arena.len() - PAD;
        let begin = at + 2 + words;
        let finish = begin + payload.len();
        self.arena.reserve(finish + PAD - self.arena.len());
        // SAFETY: the buffer has room for `finish + PAD` words (reserved above); every word
        // from `at` to there is written below before the length is set.
        unsafe {
            let base = self.arena.as_mut_ptr();
            let put = |i: usize, w: u32| base.add(i).write(w);
            put(at, n as u32);
            put(at + 1, payload.len() as u32);
            if (1..=SHORT).contains(&n) {
                let (lo, hi) = short_key(s, start, n);
                put(at + 2, lo as u32);
                put(at + 3, (lo >> 32) as u32);
                put(at + 4, hi as u32);
                put(at + 5, (hi >> 32) as u32);
            } else {
                let word = &s[start..end];
                for k in 0..words {
                    put(at + 2 + k, key_word(word, k));
                }
            }
            copy_words(payload, base.add(begin));
            for i in 0..PAD {
                put(finish + i, 0);
            }
            self.arena.set_len(finish + PAD);
        }
        let mask = self.slots.len() - 1;
        let mut i = hash as usize & mask;
        while self.slots[i].0 != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i] = ((hash >> 32) as u32 | 1, at as u32);
        self.len += 1;
        begin..finish
    }

    pub fn payload(&self, at: std::ops::Range<usize>) -> &[u32] {
        &self.arena[at]
    }

    /// The four words of the arena from `i`, a place in a payload: there are always four, the
    /// arena ending in `PAD` words of padding.
    #[inline]
    pub fn four(&self, i: usize) -> [u32; 4] {
        self.arena[i..i + 4].try_into().expect("four words")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every length from 0 to 40 words, copied into a buffer of guard words: the words of
    /// `from` arrive, and nothing is written past them.
    #[test]
    fn copy_words_copies_every_length() {
        for n in 0..=40usize {
            let from: Vec<u32> = (0..n as u32).map(|i| 0x1000 + i).collect();
            let mut to = vec![u32::MAX; n + 8];
            // SAFETY: `to` has room for n words and is another buffer
            unsafe { copy_words(&from, to.as_mut_ptr()) };
            assert_eq!(&to[..n], &from[..], "length {n}");
            assert!(to[n..].iter().all(|&w| w == u32::MAX), "length {n}");
        }
    }

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

    /// Short words (compared as two words, loaded from the text they are in) and long ones,
    /// words that differ in a zero byte or in their length alone, found the same from a
    /// slice of their own and from inside a longer text.
    #[test]
    fn short_and_long_words_from_inside_a_text() {
        let mut c = WordCache::default();
        c.ready(1);
        let mut words: Vec<Vec<u8>> = Vec::new();
        for n in 1..=40usize {
            let letters: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
            let mut last = letters.clone();
            last[n - 1] = b'Z';
            words.push(letters);
            words.push(last);
            words.push(vec![0; n]);
            let mut w: Vec<u8> = (0..n).map(|i| (i * 7 + n) as u8).collect();
            w[n - 1] = 0;
            words.push(w);
        }
        words.sort();
        words.dedup();
        let (kept, unkept): (Vec<_>, Vec<_>) =
            words.iter().enumerate().partition(|(i, _)| i % 3 != 0);
        // payloads of 1 to 20 words; half the words kept from a slice of their own, half from
        // inside a text (their key loaded from it, with other bytes around)
        let payload =
            |i: usize| -> Vec<u32> { (0..1 + i % 20).map(|j| (i * 100 + j) as u32).collect() };
        for &(i, w) in &kept {
            let at = if i % 2 == 0 {
                c.insert(w, WordCache::hash(w), &payload(i))
            } else {
                let mut text = vec![0xAB; 5];
                text.extend_from_slice(w);
                text.extend(std::iter::repeat_n(0xCD, 20));
                c.insert_at(&text, 5, 5 + w.len(), WordCache::hash(w), &payload(i))
            };
            assert_eq!(c.payload(at), &payload(i)[..], "{w:?}");
        }
        for (i, w) in words.iter().enumerate() {
            let want = kept
                .iter()
                .any(|&(k, _)| k == i)
                .then_some((i * 100) as u32);
            let found = c.find(w, WordCache::hash(w));
            assert_eq!(found.clone().map(|at| c.payload(at)[0]), want, "{w:?}");
            if let Some(at) = found {
                assert_eq!(c.payload(at), &payload(i)[..], "{w:?}");
            }
            for (before, after) in [(0, 0), (3, 0), (0, 5), (17, 40)] {
                let mut text = vec![0xAB; before];
                text.extend_from_slice(w);
                text.extend(std::iter::repeat_n(0xCD, after));
                let (s, e) = (before, before + w.len());
                let h = WordCache::hash_at(&text, s, e);
                assert_eq!(h, WordCache::hash(w));
                assert_eq!(
                    c.find_at(&text, s, e, h).map(|at| c.payload(at)[0]),
                    want,
                    "{w:?}"
                );
            }
        }
        assert!(!unkept.is_empty());
        // every word under one hash: only the compare of the words tells them apart
        let mut c = WordCache::default();
        c.ready(1);
        let h = 0x0123_4567_89AB_CDEF;
        for &(i, w) in &kept {
            c.insert(w, h, &[i as u32, 1, 2, 3, 4]);
        }
        for (i, w) in words.iter().enumerate() {
            let want = kept.iter().any(|&(k, _)| k == i).then_some(i as u32);
            let mut text = w.clone();
            text.extend_from_slice(&[0; 16]);
            assert_eq!(
                c.find_at(&text, 0, w.len(), h).map(|at| c.payload(at)[0]),
                want,
                "{w:?}"
            );
            assert_eq!(c.find(w, h).map(|at| c.payload(at)[0]), want, "{w:?}");
        }
    }

    /// Four words can be read from anywhere in any payload, the last one's too (the padding),
    /// and they start with the payload's own.
    #[test]
    fn four_words_from_any_payload() {
        let mut c = WordCache::default();
        c.ready(1);
        for n in 1..=6u32 {
            let w = format!("w{n}").into_bytes();
            let payload: Vec<u32> = (0..n).map(|i| 100 * n + i).collect();
            let at = c.insert(&w, WordCache::hash(&w), &payload);
            for i in at.clone() {
                let four = c.four(i);
                let own = (at.end - i).min(4);
                assert_eq!(&four[..own], &c.payload(i..at.end)[..own]);
            }
        }
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
