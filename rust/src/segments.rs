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

use std::alloc::Layout;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use rustc_hash::FxHashMap;

use crate::bpe::encode::{advise_huge_any, HUGE_PAGE};
use crate::Rank;

/// Texts shorter than this are not kept.
pub(crate) const MIN_BYTES: usize = 64;
/// Texts longer than this are not kept (a chunk of a large text is 128 KiB or more).
pub(crate) const MAX_BYTES: usize = 64 << 10;
/// Bytes an entry counts for besides its text and ids (its map slot, at the map's lowest fill).
const ENTRY_OVERHEAD: usize = 64;
const STRIPES: usize = 16;
/// The default budget, in bytes; `BYTEPAIR_SEGMENT_CACHE_MB` sets another (0: off).
pub(crate) const DEFAULT_BUDGET: usize = 64 << 20;
/// A generation's first block, in words: a cache that keeps a few texts holds a few pages.
const FIRST_WORDS: usize = 32 << 10;

/// Where an entry lies in its generation's block: its text (padded to whole words; empty for
/// `insert_spelled`), then its ids.
#[derive(Debug, Clone, Copy)]
struct Slot {
    start: usize,
    text: usize,
    ids: usize,
}

impl Slot {
    fn words(&self) -> usize {
        self.text.div_ceil(4) + self.ids
    }
}

/// What an entry of `text` bytes and `ids` ids counts for: its words and `ENTRY_OVERHEAD`.
fn cost(text: usize, ids: usize) -> usize {
    4 * (text.div_ceil(4) + ids) + ENTRY_OVERHEAD
}

/// A generation's entries, one after another in one block of words. Entries are never freed one
/// by one: a retired generation's block is emptied and filled again, so a cache that has filled
/// its budget writes into memory it already has. A block of `HUGE_PAGE` bytes or more is
/// allocated aligned to it and asked for in transparent huge pages: while the cache grows, what
/// keeping a text cost was mostly the kernel's work of mapping fresh 4 KiB pages (a tenth of an
/// unseen pass, measured in `bench/README.md`), and one huge page maps 512 of them.
#[derive(Debug)]
struct Block {
    words: NonNull<Rank>,
    cap: usize,
    len: usize,
}

// SAFETY: a `Block` owns its allocation, as a `Box<[Rank]>` would.
unsafe impl Send for Block {}

impl Default for Block {
    fn default() -> Self {
        Block {
            words: NonNull::dangling(),
            cap: 0,
            len: 0,
        }
    }
}

impl Block {
    fn layout(cap: usize) -> Layout {
        let bytes = cap * std::mem::size_of::<Rank>();
        let align = if bytes >= HUGE_PAGE { HUGE_PAGE } else { 64 };
        Layout::from_size_align(bytes, align).expect("a block's size fits its budget")
    }

    /// An empty block of `cap` words (`cap` > 0), holding `keep`'s words first.
    fn with_capacity(cap: usize, keep: &Block) -> Block {
        let layout = Block::layout(cap);
        // SAFETY: `layout` has a nonzero size.
        let memory = unsafe { std::alloc::alloc(layout) };
        let Some(words) = NonNull::new(memory as *mut Rank) else {
            std::alloc::handle_alloc_error(layout)
        };
        if layout.align() == HUGE_PAGE {
            advise_huge_any(memory, layout.size());
        }
        // SAFETY: `keep.len` initialized words into a new allocation of `cap` >= `keep.len`.
        unsafe { std::ptr::copy_nonoverlapping(keep.words.as_ptr(), words.as_ptr(), keep.len) };
        Block {
            words,
            cap,
            len: keep.len,
        }
    }

    fn words(&self, from: usize, n: usize) -> &[Rank] {
        assert!(from + n <= self.len);
        // SAFETY: the first `len` words are initialized.
        unsafe { std::slice::from_raw_parts(self.words.as_ptr().add(from), n) }
    }

    fn text(&self, slot: Slot) -> &[u8] {
        let words = self.words(slot.start, slot.text.div_ceil(4));
        // SAFETY: the bytes of initialized words; `text` bytes of them are the text.
        unsafe { std::slice::from_raw_parts(words.as_ptr() as *const u8, slot.text) }
    }

    fn ids(&self, slot: Slot) -> &[Rank] {
        self.words(slot.start + slot.text.div_ceil(4), slot.ids)
    }

    /// Appends `text` and `ids`, growing the block to `most` words when they would not fit (the
    /// caller keeps a generation within `most`).
    fn push(&mut self, text: &[u8], ids: &[Rank], most: usize) -> Slot {
        let slot = Slot {
            start: self.len,
            text: text.len(),
            ids: ids.len(),
        };
        let need = self.len + slot.words();
        if need > self.cap {
            // A first block of a few pages, then the whole generation's share at once.
            let cap = if self.cap == 0 {
                FIRST_WORDS.min(most)
            } else {
                most
            }
            .max(need);
            *self = Block::with_capacity(cap, self);
        }
        // SAFETY: `need` <= `cap` words; the text's last word is padded with zeros.
        unsafe {
            let at = self.words.as_ptr().add(self.len);
            let padded = slot.text.div_ceil(4);
            if padded > 0 {
                at.add(padded - 1).write(0);
            }
            std::ptr::copy_nonoverlapping(text.as_ptr(), at as *mut u8, text.len());
            std::ptr::copy_nonoverlapping(ids.as_ptr(), at.add(padded), ids.len());
        }
        self.len = need;
        slot
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        if self.cap > 0 {
            // SAFETY: allocated by `with_capacity` with this layout.
            unsafe { std::alloc::dealloc(self.words.as_ptr() as *mut u8, Block::layout(self.cap)) }
        }
    }
}

#[derive(Debug, Default)]
struct Generation {
    map: FxHashMap<u64, Slot>,
    block: Block,
    /// What the generation holds, in `cost` bytes.
    bytes: usize,
}

impl Generation {
    fn clear(&mut self) {
        self.map.clear();
        self.block.len = 0;
        self.bytes = 0;
    }
}

#[derive(Debug, Default)]
struct Stripe {
    current: Generation,
    older: Generation,
}

impl Stripe {
    /// Puts `text` and `ids` into the current generation, first retiring it (its block kept
    /// for the next) when they would take it over `half` bytes.
    fn admit(&mut self, h: u64, text: &[u8], ids: &[Rank], half: usize) {
        let cost = cost(text.len(), ids.len());
        if self.current.bytes + cost > half {
            std::mem::swap(&mut self.current, &mut self.older);
            self.current.clear();
        }
        let slot = self.current.block.push(text, ids, half / 4);
        self.current.bytes += cost;
        self.current.map.insert(h, slot);
    }
}

#[derive(Debug)]
pub(crate) struct SegmentCache {
    budget: AtomicUsize,
    /// Xor-ed into every text's hash before it picks a stripe and a slot: text a server encodes
    /// may be chosen by whoever sends it, and `hash_text` is not keyed, so the maps' keys are,
    /// with a key drawn for each cache (crafted texts cannot aim at one stripe or one run of
    /// slots; two texts with one hash only share an entry, which the compare tells apart).
    seed: u64,
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
            seed: std::hash::BuildHasher::hash_one(
                &std::collections::hash_map::RandomState::new(),
                0x5EED_u64,
            ),
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
        self.get_checked(h, out, text, |b, slot| b.text(slot) == text)
    }

    /// `get_into` for a cache filled by `insert_spelled`: an entry is `text`'s when `spells`
    /// says its ids spell `text` (see `insert_spelled`).
    pub(crate) fn get_spelled(
        &self,
        h: u64,
        out: &mut Vec<Rank>,
        spells: impl FnOnce(&[Rank]) -> bool,
    ) -> bool {
        self.get_checked(h, out, &[], |b, slot| spells(b.ids(slot)))
    }

    /// A hit in the older generation is kept again in the current one, with `text` (what the
    /// entry held: the query's text, or nothing for `get_spelled`).
    fn get_checked(
        &self,
        h: u64,
        out: &mut Vec<Rank>,
        text: &[u8],
        is_it: impl FnOnce(&Block, Slot) -> bool,
    ) -> bool {
        let h = h ^ self.seed;
        let Ok(mut s) = self.stripe(h).try_lock() else {
            return false;
        };
        if let Some(&slot) = s.current.map.get(&h) {
            if is_it(&s.current.block, slot) {
                out.extend_from_slice(s.current.block.ids(slot));
                return true;
            }
            return false;
        }
        let Some(slot) = s.older.map.remove(&h) else {
            return false;
        };
        if !is_it(&s.older.block, slot) {
            return false;
        }
        let start = out.len();
        out.extend_from_slice(s.older.block.ids(slot));
        let half = self.budget.load(Ordering::Relaxed) / STRIPES / 2;
        s.admit(h, text, &out[start..], half);
        true
    }

    /// Keeps `text` (hashed to `h`) with its `ids`, unless its hash is taken or it is larger
    /// than a generation.
    pub(crate) fn insert(&self, text: &[u8], h: u64, ids: &[Rank]) {
        self.admit(h, text, ids)
    }

    /// Keeps the `ids` of a text hashed to `h` without the text: for a model whose ids spell
    /// their text (byte-level BPE: the tokens' bytes, in order, are the text), so that the
    /// ids themselves tell whether an entry is a text's. Half the bytes of `insert` on prose:
    /// on text never seen again, what keeping it costs is mostly fresh memory written.
    pub(crate) fn insert_spelled(&self, h: u64, ids: &[Rank]) {
        self.admit(h, &[], ids)
    }

    fn admit(&self, h: u64, text: &[u8], ids: &[Rank]) {
        let half = self.budget.load(Ordering::Relaxed) / STRIPES / 2;
        if cost(text.len(), ids.len()) > half {
            return;
        }
        let h = h ^ self.seed;
        let Ok(mut s) = self.stripe(h).try_lock() else {
            return;
        };
        if s.current.map.contains_key(&h) || s.older.map.contains_key(&h) {
            return;
        }
        s.admit(h, text, ids, half);
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

    /// Bytes held (`cost` of the entries that can still be found), for tests.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.stripes
            .iter()
            .map(|s| {
                let s = s.lock().unwrap();
                s.current
                    .map
                    .values()
                    .chain(s.older.map.values())
                    .map(|slot| cost(slot.text, slot.ids))
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

    /// Texts of every length mod 4 (their last word padded) and ids come back whole after
    /// generations retire and blocks grow and are reused; a hit in the older generation moves
    /// to the current one and survives the next retirement; the blocks' memory stays within
    /// the budget.
    #[test]
    fn blocks_keep_texts_and_ids_through_retirements() {
        let c = SegmentCache::default();
        let budget = 1 << 20;
        c.set_budget(budget);
        let ids_of =
            |i: usize| -> Vec<Rank> { (0..i % 300).map(|k| (k * 7 + i) as Rank).collect() };
        let keep = text(0, 1001);
        let keep_h = hash_text(&keep);
        c.insert(&keep, keep_h, &ids_of(1001));
        for i in 1..20_000 {
            let t = text(i, 64 + i % 97);
            c.insert(&t, hash_text(&t), &ids_of(i));
            if i % 500 == 0 {
                // Found (in whichever generation), whole: moved forward, so never dropped.
                let mut out = Vec::new();
                assert!(
                    c.get_into(&keep, keep_h, &mut out),
                    "kept text lost after {i}"
                );
                assert_eq!(out, ids_of(1001));
            }
            let blocks: usize = c
                .stripes
                .iter()
                .map(|s| {
                    let s = s.lock().unwrap();
                    4 * (s.current.block.cap + s.older.block.cap)
                })
                .sum();
            assert!(blocks <= budget, "{blocks} > {budget} after {i}");
        }
        for i in 19_900..20_000 {
            let t = text(i, 64 + i % 97);
            let mut out = vec![1];
            assert!(c.get_into(&t, hash_text(&t), &mut out), "{i}");
            assert_eq!(out[1..], ids_of(i));
            // A text one byte shorter (a padded last word) is another text.
            assert!(!c.get_into(&t[..t.len() - 1], hash_text(&t), &mut out));
        }
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
