//! The piece cache: piece -> ids for pieces that are not one token (issue 11), shared by all
//! the threads of an `Encoder`, its memory fixed whatever the text.
//!
//! Pieces of up to 16 bytes with up to 3 ids (almost all of them) are in `short`'s table: key
//! and ids inline, reads without a lock. The others (pieces of 17 to 127 bytes, or of more than
//! 3 ids: 12 % of the lookups on the bench mix, 800 k in 262 MB) are in `STRIPES` tables chosen
//! by the piece's hash, each behind its own lock (uncontended, a lock is two atomic operations,
//! small against the lookup and a merge's worth of work it saves; a stripe held by another
//! thread is skipped, never waited for), each in two generations:
//! pieces go into the young one; when it is full, the old one is emptied and becomes the young
//! one, and a piece found in the old one is copied into the young one, so pieces in use
//! survive. A table is one u64 slot per entry into an arena of keys and ids.

use std::sync::{Mutex, MutexGuard, TryLockError};

use super::{short, words16, Rank};

/// One generation of the piece cache. A slot is one u64 that says where the entry is and
/// how long, with 16 bits of the hash to skip most slots of other pieces unread; the entry is
/// the piece's bytes (packed little-endian into u32 words) followed by its ids, in one arena.
/// A hit reads the slot and one place in the arena (an earlier layout with separate entry,
/// key and id arrays read four, and showed as 11 % of a cold pass over multilingual text).
#[derive(Debug, Default)]
struct CacheTable {
    /// `offset | key_len << 32 | ids_len << 40 | tag << 48`; 0 is empty (no key is empty).
    /// Allocated on first insert.
    slots: Vec<u64>,
    entries: usize,
    arena: Vec<u32>,
}

/// Slots of one generation of one stripe (a power of two), and the entries it holds at most
/// (half of them), and the arena words (a few times the usual entry, 6 to 20 words).
const LONG_BITS: u32 = 14;
const LONG_ENTRIES: usize = 1 << (LONG_BITS - 1);
const LONG_ARENA: usize = 24 * LONG_ENTRIES;
/// Stripes of the long pieces' tables, each behind its own lock.
const STRIPES: usize = 64;

/// The `i`th little-endian u32 word of `b`, zero-padded.
#[inline(always)]
fn word(b: &[u8], i: usize) -> u32 {
    let c = &b[4 * i..b.len().min(4 * i + 4)];
    let mut w = [0u8; 4];
    w[..c.len()].copy_from_slice(c);
    u32::from_le_bytes(w)
}

/// Whether the cached key words `key` (`word`s of a piece of `piece.len()` bytes) are those of
/// `piece`, whose `head` is given: the first two words are the head's halves, the others are
/// compared four bytes at a time (`word` for each, a copy into a zeroed array, was most of a
/// warm cache hit).
#[inline(always)]
fn key_matches(key: &[u32], piece: &[u8], head: u64) -> bool {
    debug_assert_eq!(key.len(), piece.len().div_ceil(4));
    if key[0] != head as u32 {
        return false;
    }
    if key.len() == 1 {
        return true;
    }
    if key[1] != (head >> 32) as u32 {
        return false;
    }
    if piece.len() <= 8 {
        return true;
    }
    let rest = &piece[8..];
    let mut chunks = rest.chunks_exact(4);
    let full = key[2..]
        .iter()
        .zip(chunks.by_ref())
        .all(|(&w, c)| w == u32::from_le_bytes(c.try_into().unwrap()));
    full && (chunks.remainder().is_empty() || key[key.len() - 1] == word(rest, rest.len() / 4))
}

impl CacheTable {
    #[inline]
    fn get(&self, piece: &[u8], head: u64, h: u64) -> Option<&[Rank]> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = (1 << LONG_BITS) - 1;
        let tag = h & 0xFFFF;
        let mut i = (h >> (64 - LONG_BITS)) as usize;
        loop {
            let slot = self.slots[i];
            if slot == 0 {
                return None;
            }
            if slot >> 48 == tag && (slot >> 32) as u8 as usize == piece.len() {
                let off = slot as u32 as usize;
                let words = piece.len().div_ceil(4);
                let key = &self.arena[off..off + words];
                if key_matches(key, piece, head) {
                    let n = (slot >> 40) as u8 as usize;
                    return Some(&self.arena[off + words..off + words + n]);
                }
            }
            i = (i + 1) & mask;
        }
    }

    fn is_full(&self) -> bool {
        self.entries >= LONG_ENTRIES || self.arena.len() >= LONG_ARENA
    }

    /// Adds a piece that `get` did not find (the table is not full; `piece` and `ids` are
    /// shorter than 256).
    fn insert(&mut self, piece: &[u8], h: u64, ids: &[Rank]) {
        debug_assert!(!piece.is_empty() && piece.len() < 256 && ids.len() < 256);
        if self.slots.is_empty() {
            self.slots = vec![0; 1 << LONG_BITS];
            // Written before any lookup reads them, so that each page is mapped once, not the
            // zero page first and then a copy with a TLB flush on every core (see
            // `ShortTable::populate`).
            for i in (0..self.slots.len()).step_by(512) {
                // SAFETY: an element of the vector, which this thread owns (under the lock).
                unsafe { std::ptr::write_volatile(&mut self.slots[i], 0) };
            }
        }
        let mask = (1 << LONG_BITS) - 1;
        let mut i = (h >> (64 - LONG_BITS)) as usize;
        while self.slots[i] != 0 {
            i = (i + 1) & mask;
        }
        let off = self.arena.len() as u64;
        self.slots[i] =
            off | (piece.len() as u64) << 32 | (ids.len() as u64) << 40 | (h & 0xFFFF) << 48;
        self.entries += 1;
        self.arena
            .extend((0..piece.len().div_ceil(4)).map(|j| word(piece, j)));
        self.arena.extend_from_slice(ids);
    }

    /// Empties the table, keeping its memory for the next generation.
    fn reset(&mut self) {
        self.slots.fill(0);
        self.entries = 0;
        self.arena.clear();
    }
}

/// One stripe of the long pieces' tables.
#[derive(Debug, Default)]
struct Stripe {
    young: CacheTable,
    old: CacheTable,
}

impl Stripe {
    fn get_into(&mut self, piece: &[u8], head: u64, h: u64, out: &mut Vec<Rank>) -> bool {
        if let Some(ids) = self.young.get(piece, head, h) {
            out.extend_from_slice(ids);
            return true;
        }
        let Some(ids) = self.old.get(piece, head, h) else {
            return false;
        };
        let start = out.len();
        out.extend_from_slice(ids);
        self.insert(piece, h, &out[start..]);
        true
    }

    fn insert(&mut self, piece: &[u8], h: u64, ids: &[Rank]) {
        if self.young.is_full() {
            std::mem::swap(&mut self.young, &mut self.old);
            self.young.reset();
        }
        self.young.insert(piece, h, ids);
    }
}

/// The piece cache of an `Encoder` (see the module's notes).
#[derive(Debug)]
pub struct PieceCache {
    short: short::ShortTable,
    stripes: Box<[Mutex<Stripe>]>,
}

impl Default for PieceCache {
    fn default() -> Self {
        PieceCache {
            short: short::ShortTable::default(),
            stripes: (0..STRIPES).map(|_| Mutex::default()).collect(),
        }
    }
}

impl PieceCache {
    /// Appends the ids of `piece` (whose head word is `head` and hash `h`) to `out` if it is
    /// cached.
    #[inline]
    pub(super) fn get_into(&self, piece: &[u8], head: u64, h: u64, out: &mut Vec<Rank>) -> bool {
        if piece.len() <= short::MAX_LEN {
            let (lo, hi) = words16(piece);
            debug_assert_eq!(lo, head);
            if self.get_short(lo, hi, piece.len(), h, out) {
                return true;
            }
        }
        self.get_long(piece, head, h, out)
    }

    /// `get_into` for a piece of 1 to 16 bytes given as its words, in the short table only.
    #[inline(always)]
    pub(super) fn get_short(
        &self,
        lo: u64,
        hi: u64,
        len: usize,
        h: u64,
        out: &mut Vec<Rank>,
    ) -> bool {
        match self.short.get(lo, hi, len, h) {
            Some((ids, n)) => {
                out.extend_from_slice(&ids[..n]);
                true
            }
            None => false,
        }
    }

    /// Readies the cache for a long run: the short table's pages are mapped now (see
    /// `ShortTable::populate`). Costs its 32 MiB at once.
    pub fn populate(&self) {
        self.short.populate()
    }

    /// Asks for the bucket a short piece hashed to `h` is looked up in.
    #[inline(always)]
    pub(super) fn prefetch_short(&self, h: u64) {
        self.short.prefetch(h)
    }

    /// `get_into` in the long pieces' tables only.
    pub(super) fn get_long(&self, piece: &[u8], head: u64, h: u64, out: &mut Vec<Rank>) -> bool {
        match self.stripe(h) {
            Some(mut stripe) => stripe.get_into(piece, head, h, out),
            None => false,
        }
    }

    /// Adds `piece`, whose hash is `h` and ids `out[start..]`.
    pub(super) fn insert(&self, piece: &[u8], h: u64, start: usize, out: &[Rank]) {
        let ids = &out[start..];
        if piece.len() <= short::MAX_LEN && (1..=short::MAX_IDS).contains(&ids.len()) {
            let (lo, hi) = words16(piece);
            // Which way of a full bucket it replaces: anything that varies from call to call.
            let victim = (h as usize) ^ start;
            self.short.insert(lo, hi, piece.len(), h, ids, victim);
            return;
        }
        if let Some(mut stripe) = self.stripe(h) {
            stripe.insert(piece, h, ids);
        }
    }

    /// The stripe of hash `h`, or `None` while another thread holds it: then the piece is
    /// merged, or not added (a stripe is held for one lookup or insert; never waiting for one
    /// also means no wait forever in a child forked while a thread of its parent held one).
    fn stripe(&self, h: u64) -> Option<MutexGuard<'_, Stripe>> {
        self.lock_stripe((h >> 16) as usize % STRIPES)
    }

    fn lock_stripe(&self, i: usize) -> Option<MutexGuard<'_, Stripe>> {
        let m = &self.stripes[i];
        match m.try_lock() {
            Ok(guard) => Some(guard),
            Err(TryLockError::Poisoned(p)) => {
                // A panic while the stripe was held: start it afresh (speed, never ids).
                m.clear_poison();
                let mut guard = p.into_inner();
                *guard = Stripe::default();
                Some(guard)
            }
            Err(TryLockError::WouldBlock) => None,
        }
    }

    /// Empties the cache (a stripe in use by another thread at that moment is left as it is).
    pub(super) fn clear(&self) {
        self.short.clear();
        for i in 0..STRIPES {
            if let Some(mut stripe) = self.lock_stripe(i) {
                *stripe = Stripe::default();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::{hash_bytes, head};

    fn hash(k: &[u8]) -> u64 {
        hash_bytes(k, head(k))
    }

    #[test]
    fn a_stripe_keeps_recent_pieces_across_generations() {
        let mut stripe = Stripe::default();
        let n = 2 * LONG_ENTRIES + 100;
        let key = |i: usize| format!("a piece longer than 16 bytes {i}").into_bytes();
        for i in 0..n {
            let k = key(i);
            let mut out = vec![7];
            assert!(!stripe.get_into(&k, head(&k), hash(&k), &mut out));
            stripe.insert(&k, hash(&k), &[i as Rank, 1, 2, 3]);
        }
        for i in (0..n).rev().take(LONG_ENTRIES) {
            let k = key(i);
            let mut out = Vec::new();
            assert!(stripe.get_into(&k, head(&k), hash(&k), &mut out), "{i}");
            assert_eq!(out, vec![i as Rank, 1, 2, 3]);
        }
        let k = key(0);
        assert!(!stripe.get_into(&k, head(&k), hash(&k), &mut Vec::new()));
    }

    #[test]
    fn a_stripe_in_use_is_skipped_not_waited_for() {
        let cache = PieceCache::default();
        let piece = b"a piece longer than 16 bytes";
        let h = hash(piece);
        cache.insert(piece, h, 0, &[1, 2]);
        let held = cache.stripe(h).unwrap();
        // Another thread holds the stripe: a lookup misses and an insert does nothing, at once.
        std::thread::scope(|s| {
            s.spawn(|| {
                assert!(!cache.get_into(piece, head(piece), h, &mut Vec::new()));
                cache.insert(b"another piece longer than 16", h, 0, &[3]);
                cache.clear();
            });
        });
        drop(held);
        let mut out = Vec::new();
        assert!(cache.get_into(piece, head(piece), h, &mut out));
        assert_eq!(out, [1, 2]);
    }

    #[test]
    fn pieces_go_to_the_table_of_their_shape() {
        // Up to 16 bytes and 3 ids: the short table; longer, or more ids: a stripe. Each is
        // found by `get_into`, and `clear` empties both.
        let cache = PieceCache::default();
        let cases: [(&[u8], &[Rank]); 4] = [
            (b"abc", &[1, 2]),
            (b"sixteen bytes!!!", &[3, 4, 5]),
            (b"four ids", &[6, 7, 8, 9]),
            (b"seventeen bytes!!", &[10]),
        ];
        for (piece, ids) in cases {
            let mut out = vec![0];
            out.extend_from_slice(ids);
            cache.insert(piece, hash(piece), 1, &out);
        }
        for (piece, ids) in cases {
            let mut out = Vec::new();
            assert!(cache.get_into(piece, head(piece), hash(piece), &mut out));
            assert_eq!(out, ids);
            let short = piece.len() <= 16 && ids.len() <= 3;
            let (lo, hi) = words16(&piece[..piece.len().min(16)]);
            let in_short = cache.get_short(lo, hi, piece.len().min(16), hash(piece), &mut out);
            assert_eq!(in_short, short, "{piece:?}");
            assert_eq!(
                cache.get_long(piece, head(piece), hash(piece), &mut out),
                !short
            );
        }
        cache.clear();
        for (piece, _) in cases {
            assert!(!cache.get_into(piece, head(piece), hash(piece), &mut Vec::new()));
        }
    }
}
