//! The segment cache: whole texts (a call's text, a document of a batch) and their ids, so
//! that text a model has encoded before costs a hash, a compare and a copy. Shared by the
//! model kinds: a text's ids depend only on the model and the text.
//!
//! BPE's piece cache makes a seen piece cheap, but a text of seen pieces still pays the
//! scanner and one lookup per piece (about 40 ns a piece, 100-170 MB/s); WordPiece's word
//! cache likewise pays normalization and one lookup per word. The same text coming
//! again is common where encoders serve: a system prompt or few-shot preamble in every request,
//! a chat history re-sent with each turn, duplicated documents in web text, a dataset encoded
//! twice. A hit here skips all of that.
//!
//! Bounded: `budget` bytes (text, ids and a fixed overhead per entry), split over `STRIPES`
//! stripes, each holding two generations of at most half its share. A stripe whose current
//! generation is full drops the older one and starts a new current; a hit in the older
//! generation moves the entry into the current one. Exact: an entry is found by a 64-bit hash
//! and then its whole text is compared: with the kept text (`insert`, WordPiece), or, for
//! byte-level BPE, whose ids spell their text, with the kept ids themselves (`insert_spelled`:
//! no copy of the text, half the memory written for a text never seen again). Texts outside
//! `MIN_BYTES..=MAX_BYTES` are never kept: shorter ones encode about as fast as they hash,
//! longer ones are cut into chunks first.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use rustc_hash::FxHashMap;

use crate::Rank;

/// Texts shorter than this are not kept.
pub(crate) const MIN_BYTES: usize = 64;
/// Texts longer than this are not kept (a chunk of a large text is 128 KiB or more).
pub(crate) const MAX_BYTES: usize = 64 << 10;
/// Bytes an entry counts for besides its text and ids (its boxes and its map slot).
const ENTRY_OVERHEAD: usize = 64;
const STRIPES: usize = 16;
/// The default budget, in bytes; `BYTEPAIR_SEGMENT_CACHE_MB` sets another (0: off).
pub(crate) const DEFAULT_BUDGET: usize = 64 << 20;

#[derive(Debug)]
struct Entry {
    text: Box<[u8]>,
    ids: Box<[Rank]>,
}

impl Entry {
    fn cost(&self) -> usize {
        self.text.len() + 4 * self.ids.len() + ENTRY_OVERHEAD
    }
}

#[derive(Debug, Default)]
struct Stripe {
    current: FxHashMap<u64, Entry>,
    older: FxHashMap<u64, Entry>,
    /// What `current` holds, in `Entry::cost` bytes.
    bytes: usize,
}

impl Stripe {
    /// Puts `entry` into the current generation, first retiring it when `entry` would take it
    /// over `half` bytes.
    fn admit(&mut self, h: u64, entry: Entry, half: usize) {
        let cost = entry.cost();
        if self.bytes + cost > half {
            self.older = std::mem::take(&mut self.current);
            self.bytes = 0;
        }
        self.bytes += cost;
        self.current.insert(h, entry);
    }
}

#[derive(Debug)]
pub(crate) struct SegmentCache {
    budget: AtomicUsize,
    stripes: Box<[Mutex<Stripe>]>,
}

impl Default for SegmentCache {
    fn default() -> Self {
        let budget = std::env::var("BYTEPAIR_SEGMENT_CACHE_MB")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .map_or(DEFAULT_BUDGET, |mb| mb.saturating_mul(1 << 20));
        SegmentCache {
            budget: AtomicUsize::new(budget),
            stripes: (0..STRIPES).map(|_| Mutex::default()).collect(),
        }
    }
}

/// A 64-bit hash of a whole text, four words at a time in four independent lanes (a text of
/// 8 KiB hashes in well under a microsecond; the one-lane hash of pieces took twice as long).
pub(crate) fn hash_text(text: &[u8]) -> u64 {
    const K: [u64; 4] = [
        0x9E37_79B9_7F4A_7C15,
        0xC2B2_AE3D_27D4_EB4F,
        0x1656_67B1_9E37_79F9,
        0x85EB_CA77_C2B2_AE63,
    ];
    let mut lanes = [K[0], K[1], K[2], K[3] ^ text.len() as u64];
    let mut blocks = text.chunks_exact(32);
    for block in &mut blocks {
        for (i, lane) in lanes.iter_mut().enumerate() {
            let w = u64::from_le_bytes(block[8 * i..8 * i + 8].try_into().unwrap());
            *lane = (lane.rotate_left(29) ^ w).wrapping_mul(K[i]);
        }
    }
    let rest = blocks.remainder();
    let mut tail = [0u8; 32];
    tail[..rest.len()].copy_from_slice(rest);
    let mut h = 0u64;
    for (i, lane) in lanes.iter().enumerate() {
        let w = u64::from_le_bytes(tail[8 * i..8 * i + 8].try_into().unwrap());
        h = (h.rotate_left(23) ^ (lane.rotate_left(29) ^ w).wrapping_mul(K[i])).wrapping_mul(K[0]);
    }
    h ^ (h >> 31)
}

impl SegmentCache {
    /// Whether a text of `len` bytes would be looked up and kept.
    #[inline]
    pub(crate) fn takes(&self, len: usize) -> bool {
        (MIN_BYTES..=MAX_BYTES).contains(&len) && self.budget.load(Ordering::Relaxed) > 0
    }

    fn stripe(&self, h: u64) -> &Mutex<Stripe> {
        &self.stripes[(h >> 60) as usize % STRIPES]
    }

    /// Appends the ids of `text` (hashed to `h`) to `out` if it is kept. A stripe another
    /// thread holds counts as a miss: waiting would cost more than encoding.
    pub(crate) fn get_into(&self, text: &[u8], h: u64, out: &mut Vec<Rank>) -> bool {
        self.get_checked(h, out, |e| *e.text == *text)
    }

    /// `get_into` for a cache filled by `insert_spelled`: an entry is `text`'s when `spells`
    /// says its ids spell `text` (see `insert_spelled`).
    pub(crate) fn get_spelled(
        &self,
        h: u64,
        out: &mut Vec<Rank>,
        spells: impl FnOnce(&[Rank]) -> bool,
    ) -> bool {
        self.get_checked(h, out, |e| spells(&e.ids))
    }

    fn get_checked(&self, h: u64, out: &mut Vec<Rank>, is_it: impl FnOnce(&Entry) -> bool) -> bool {
        let Ok(mut s) = self.stripe(h).try_lock() else {
            return false;
        };
        if let Some(e) = s.current.get(&h) {
            if is_it(e) {
                out.extend_from_slice(&e.ids);
                return true;
            }
            return false;
        }
        let Some(e) = s.older.remove(&h) else {
            return false;
        };
        if !is_it(&e) {
            return false;
        }
        out.extend_from_slice(&e.ids);
        let half = self.budget.load(Ordering::Relaxed) / STRIPES / 2;
        s.admit(h, e, half);
        true
    }

    /// Keeps `text` (hashed to `h`) with its `ids`, unless its hash is taken or it is larger
    /// than a generation.
    pub(crate) fn insert(&self, text: &[u8], h: u64, ids: &[Rank]) {
        self.admit(h, text.into(), ids)
    }

    /// Keeps the `ids` of a text hashed to `h` without the text: for a model whose ids spell
    /// their text (byte-level BPE: the tokens' bytes, in order, are the text), so that the
    /// ids themselves tell whether an entry is a text's. Half the bytes of `insert` on prose:
    /// on text never seen again, what keeping it costs is mostly fresh memory written.
    pub(crate) fn insert_spelled(&self, h: u64, ids: &[Rank]) {
        self.admit(h, Box::default(), ids)
    }

    fn admit(&self, h: u64, text: Box<[u8]>, ids: &[Rank]) {
        let half = self.budget.load(Ordering::Relaxed) / STRIPES / 2;
        let entry = Entry {
            text,
            ids: ids.into(),
        };
        if entry.cost() > half {
            return;
        }
        let Ok(mut s) = self.stripe(h).try_lock() else {
            return;
        };
        if s.current.contains_key(&h) || s.older.contains_key(&h) {
            return;
        }
        s.admit(h, entry, half);
    }

    /// Sets the budget in bytes (0 turns the cache off) and empties the cache.
    pub(crate) fn set_budget(&self, bytes: usize) {
        self.budget.store(bytes, Ordering::Relaxed);
        self.clear();
    }

    pub(crate) fn budget(&self) -> usize {
        self.budget.load(Ordering::Relaxed)
    }

    pub(crate) fn clear(&self) {
        for s in self.stripes.iter() {
            let mut s = s.lock().unwrap_or_else(|e| e.into_inner());
            *s = Stripe::default();
        }
    }

    /// Bytes held (`Entry::cost`), for tests.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.stripes
            .iter()
            .map(|s| {
                let s = s.lock().unwrap();
                s.current
                    .values()
                    .chain(s.older.values())
                    .map(Entry::cost)
                    .sum::<usize>()
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(i: usize, len: usize) -> Vec<u8> {
        let mut t = format!("text {i} ").into_bytes();
        t.resize(len, b'x');
        t
    }

    #[test]
    fn finds_what_it_kept_and_compares_the_whole_text() {
        let c = SegmentCache::default();
        c.set_budget(1 << 20);
        let t = text(1, 100);
        let h = hash_text(&t);
        let mut out = vec![7];
        assert!(!c.get_into(&t, h, &mut out));
        c.insert(&t, h, &[1, 2, 3]);
        assert!(c.get_into(&t, h, &mut out));
        assert_eq!(out, [7, 1, 2, 3]);
        // Another text under the same hash is a miss, never the kept ids.
        let other = text(2, 100);
        assert!(!c.get_into(&other, h, &mut out));
        assert_eq!(out, [7, 1, 2, 3]);
    }

    /// Entries kept without their text are the query's only when the check says so: another
    /// text under the same hash is a miss, and the cache keeps the first text's ids.
    #[test]
    fn spelled_entries_are_hits_only_when_checked() {
        let c = SegmentCache::default();
        c.set_budget(1 << 20);
        let h = 42;
        let mut out = vec![7];
        assert!(!c.get_spelled(h, &mut out, |_| true));
        c.insert_spelled(h, &[1, 2, 3]);
        assert!(!c.get_spelled(h, &mut out, |ids| ids == [9]));
        assert_eq!(out, [7]);
        assert!(c.get_spelled(h, &mut out, |ids| ids == [1, 2, 3]));
        assert_eq!(out, [7, 1, 2, 3]);
        // A second insert under a taken hash keeps the first ids.
        c.insert_spelled(h, &[4]);
        let mut again = Vec::new();
        assert!(c.get_spelled(h, &mut again, |_| true));
        assert_eq!(again, [1, 2, 3]);
        assert_eq!(c.held(), 3 * 4 + ENTRY_OVERHEAD);
    }

    #[test]
    fn stays_within_its_budget_and_keeps_recent_texts() {
        let c = SegmentCache::default();
        let budget = 256 << 10;
        c.set_budget(budget);
        for i in 0..10_000 {
            let t = text(i, 200);
            c.insert(&t, hash_text(&t), &[i as Rank; 50]);
            assert!(c.held() <= budget, "{} > {budget} after {i}", c.held());
        }
        let last = text(9_999, 200);
        let mut out = Vec::new();
        assert!(c.get_into(&last, hash_text(&last), &mut out));
        assert_eq!(out, [9_999; 50]);
    }

    #[test]
    fn off_takes_nothing() {
        let c = SegmentCache::default();
        c.set_budget(0);
        assert!(!c.takes(1000));
        c.set_budget(1 << 20);
        assert!(c.takes(1000));
        assert!(!c.takes(MIN_BYTES - 1));
        assert!(!c.takes(MAX_BYTES + 1));
    }

    #[test]
    fn hash_sees_every_byte_and_the_length() {
        let base = text(3, 300);
        let h = hash_text(&base);
        for i in 0..base.len() {
            let mut t = base.clone();
            t[i] ^= 1;
            assert_ne!(hash_text(&t), h, "byte {i}");
        }
        assert_ne!(hash_text(&base[..299]), h);
        let mut longer = base.clone();
        longer.push(0);
        assert_ne!(hash_text(&longer), h);
    }
}
