//! The piece cache: piece -> ids for pieces that are not one token, shared by all the threads
//! of an `Encoder`, its memory fixed whatever the text.
//!
//! Pieces of up to 16 bytes with up to 3 ids (almost all of them) are in the `Short` table, and
//! pieces of 17 to 32 bytes with up to 7 ids in the `Medium` one (`inline.rs`): key and ids
//! inline, reads without a lock. The other pieces of up to 127 bytes (longer ones are not
//! cached) are in `STRIPES` tables chosen by the piece's hash, each behind its own lock
//! (uncontended, a lock is two atomic operations, small against the lookup and a merge's worth
//! of work it saves; a stripe held by another thread is skipped, never waited for), each in two
//! generations: pieces go into the young one; when it is full, the old one is emptied and
//! becomes the young one, and a piece found in the old one is copied into the young one, so
//! pieces in use survive. A table is one u64 slot per entry into an arena of keys and ids.
//!
//! Why shared and of fixed size, and the sizes tried: `bpe/NOTES.md` (fourth round).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};

use super::inline::{Medium, Short};
use super::{words16, words32_at, Rank};

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

/// Slots of one generation of one stripe at most (a power of two), and the entries it holds at
/// most (half of them), and the arena words (a few times the usual entry, 6 to 20 words).
const LONG_BITS: u32 = 14;
/// Slots of a generation's first table (one page), doubled as entries come: 64 stripes of
/// 2^14 slots from the first insert were 8 MiB, 2,048 page faults of a first pass that put a few
/// hundred pieces in each.
const FIRST_BITS: u32 = 9;
const LONG_ENTRIES: usize = 1 << (LONG_BITS - 1);
const LONG_ARENA: usize = 24 * LONG_ENTRIES;
/// Stripes of the long pieces' tables, each behind its own lock.
const STRIPES: usize = 64;

/// The home slot of a slot whose tag (its hash's top 16 bits) is `tag`, in a table of `len`
/// slots (a power of two up to 2^16): the hash's top bits.
#[inline(always)]
fn home(tag: u64, len: usize) -> usize {
    (tag << 48 >> (64 - len.trailing_zeros())) as usize
}

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
        let mask = self.slots.len() - 1;
        let tag = h >> 48;
        let mut i = home(tag, self.slots.len());
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
        if self.slots.len() < 2 * (self.entries + 1) {
            self.grow();
        }
        let off = self.arena.len() as u64;
        self.place(off | (piece.len() as u64) << 32 | (ids.len() as u64) << 40 | (h >> 48) << 48);
        self.entries += 1;
        self.arena
            .extend((0..piece.len().div_ceil(4)).map(|j| word(piece, j)));
        self.arena.extend_from_slice(ids);
    }

    /// Puts `slot` in the first empty slot from its home (the table has one).
    fn place(&mut self, slot: u64) {
        let mask = self.slots.len() - 1;
        let mut i = home(slot >> 48, self.slots.len());
        while self.slots[i] != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i] = slot;
    }

    /// The first table, or one twice the size with the entries moved (each slot's tag is the
    /// top of its hash, which gives its home at any size up to 2^16).
    fn grow(&mut self) {
        let bits = match self.slots.len() {
            0 => FIRST_BITS,
            n => n.trailing_zeros() + 1,
        };
        debug_assert!(bits <= LONG_BITS);
        let old = std::mem::replace(&mut self.slots, vec![0; 1 << bits]);
        // Written before any lookup reads them, so that each page is mapped once, not the
        // zero page first and then a copy with a TLB flush on every core (see
        // `InlineTable::populate`).
        for i in (0..self.slots.len()).step_by(512) {
            // SAFETY: an element of the vector, which this thread owns (under the lock).
            unsafe { std::ptr::write_volatile(&mut self.slots[i], 0) };
        }
        for slot in old.into_iter().filter(|&s| s != 0) {
            self.place(slot);
        }
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
    short: Short,
    medium: Medium,
    stripes: Box<[Mutex<Stripe>]>,
    /// One bit per `LONG_FILTER_BITS`-bit hash, set when a piece goes into the stripes and
    /// never cleared: a clear bit says a piece is not there without taking a lock. Most
    /// lookups there are of new pieces, just before they are merged (a twentieth of an
    /// unseen pass over prose, its lock and its cold slot, went to finding nothing).
    in_stripes: Box<[AtomicU64]>,
}

/// The stripes' filter: 2^18 bits, 32 KiB.
const LONG_FILTER_BITS: u32 = 18;

impl Default for PieceCache {
    fn default() -> Self {
        PieceCache {
            short: Short::default(),
            medium: Medium::default(),
            stripes: (0..STRIPES).map(|_| Mutex::default()).collect(),
            in_stripes: (0..1 << (LONG_FILTER_BITS - 6))
                .map(|_| AtomicU64::new(0))
                .collect(),
        }
    }
}

impl PieceCache {
    /// Appends the ids of `piece` (whose head word is `head` and hash `h`) to `out` if it is
    /// cached.
    #[inline]
    pub(super) fn get_into(&self, piece: &[u8], head: u64, h: u64, out: &mut Vec<Rank>) -> bool {
        let n = piece.len();
        if n <= Short::MAX_LEN {
            let (lo, hi) = words16(piece);
            debug_assert_eq!(lo, head);
            if self.get_short(lo, hi, n, h, out) {
                return true;
            }
        } else if n <= Medium::MAX_LEN && self.get_medium(&words32_at(piece, 0, n), n, h, out) {
            return true;
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
        self.short.get(&[lo, hi], len, h, out)
    }

    /// `get_into` for a piece of 17 to 32 bytes given as its words, in the medium table only.
    #[inline(always)]
    pub(super) fn get_medium(
        &self,
        words: &[u64; 4],
        len: usize,
        h: u64,
        out: &mut Vec<Rank>,
    ) -> bool {
        self.medium.get(words, len, h, out)
    }

    /// Readies the cache for a long run: the inline tables' pages are mapped now (see
    /// `InlineTable::populate`). Costs their 48 MiB at once.
    pub fn populate(&self) {
        self.short.populate();
        self.medium.populate();
    }

    /// Asks for the bucket a short piece hashed to `h` is looked up in.
    #[inline(always)]
    pub(super) fn prefetch_short(&self, h: u64) {
        self.short.prefetch(h)
    }

    /// Asks for the bucket a medium piece hashed to `h` is looked up in.
    #[inline(always)]
    pub(super) fn prefetch_medium(&self, h: u64) {
        self.medium.prefetch(h)
    }

    /// The word and bit of `in_stripes` for hash `h` (its top bits: the stripe is chosen by
    /// bits 16 and up of the low half).
    #[inline(always)]
    fn filter_bit(&self, h: u64) -> (&AtomicU64, u64) {
        let i = (h >> (64 - LONG_FILTER_BITS)) as usize;
        (&self.in_stripes[i >> 6], 1 << (i & 63))
    }

    /// `get_into` in the long pieces' tables only.
    pub(super) fn get_long(&self, piece: &[u8], head: u64, h: u64, out: &mut Vec<Rank>) -> bool {
        let (word, bit) = self.filter_bit(h);
        if word.load(Ordering::Relaxed) & bit == 0 {
            return false;
        }
        match self.stripe(h) {
            Some(mut stripe) => stripe.get_into(piece, head, h, out),
            None => false,
        }
    }

    /// Adds `piece`, whose hash is `h` and ids `out[start..]`.
    pub(super) fn insert(&self, piece: &[u8], h: u64, start: usize, out: &[Rank]) {
        let (ids, n) = (&out[start..], piece.len());
        // Which way of a full bucket it replaces: anything that varies from call to call.
        let victim = (h as usize) ^ start;
        if n <= Short::MAX_LEN && (1..=Short::MAX_IDS).contains(&ids.len()) {
            let (lo, hi) = words16(piece);
            self.short.insert(&[lo, hi], n, h, ids, victim);
            return;
        }
        if (Short::MAX_LEN + 1..=Medium::MAX_LEN).contains(&n)
            && (1..=Medium::MAX_IDS).contains(&ids.len())
        {
            self.medium
                .insert(&words32_at(piece, 0, n), n, h, ids, victim);
            return;
        }
        if let Some(mut stripe) = self.stripe(h) {
            // Set before the piece is there: a lookup that sees the bit and not the piece
            // merges it, as without the filter.
            let (word, bit) = self.filter_bit(h);
            word.fetch_or(bit, Ordering::Relaxed);
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
        self.medium.clear();
        let mut all = true;
        for i in 0..STRIPES {
            match self.lock_stripe(i) {
                Some(mut stripe) => *stripe = Stripe::default(),
                None => all = false,
            }
        }
        // A stripe held elsewhere keeps its pieces, and then the filter its bits.
        if all {
            for w in self.in_stripes.iter() {
                w.store(0, Ordering::Relaxed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpe::encode::{hash_bytes, head};

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
        let piece = b"a piece longer than 32 bytes, for a stripe";
        let h = hash(piece);
        cache.insert(piece, h, 0, &[1, 2]);
        let held = cache.stripe(h).unwrap();
        // Another thread holds the stripe: a lookup misses and an insert does nothing, at once.
        std::thread::scope(|s| {
            s.spawn(|| {
                assert!(!cache.get_into(piece, head(piece), h, &mut Vec::new()));
                cache.insert(b"another piece longer than 32 bytes", h, 0, &[3]);
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
        // Up to 16 bytes and 3 ids: the short table; 17 to 32 bytes and up to 7 ids: the
        // medium one; others: a stripe. Each is found by `get_into`, only in its own table, and
        // `clear` empties them all.
        let cache = PieceCache::default();
        let cases: [(&[u8], &[Rank]); 7] = [
            (b"abc", &[1, 2]),
            (b"sixteen bytes!!!", &[3, 4, 5]),
            (b"four ids", &[6, 7, 8, 9]),
            (b"seventeen bytes!!", &[10]),
            (
                b"thirty-two bytes, seven ids: ok",
                &[11, 12, 13, 14, 15, 16, 17],
            ),
            (b"twenty-four bytes, 8 ids", &[1, 2, 3, 4, 5, 6, 7, 8]),
            (b"thirty-three bytes is not medium!", &[18, 19]),
        ];
        for (piece, ids) in cases {
            let mut out = vec![0];
            out.extend_from_slice(ids);
            cache.insert(piece, hash(piece), 1, &out);
        }
        for (piece, ids) in cases {
            let (n, h) = (piece.len(), hash(piece));
            let mut out = Vec::new();
            assert!(cache.get_into(piece, head(piece), h, &mut out));
            assert_eq!(out, ids);
            let short = n <= 16 && ids.len() <= 3;
            let medium = (17..=32).contains(&n) && ids.len() <= 7;
            let mut out = Vec::new();
            let (lo, hi) = words16(&piece[..n.min(16)]);
            let in_short = cache.get_short(lo, hi, n.min(16), h, &mut out);
            assert_eq!(in_short, short, "{piece:?}");
            let mut padded = piece.to_vec();
            padded.resize(32.max(n), b'x');
            let in_medium =
                cache.get_medium(&words32_at(&padded, 0, n.clamp(17, 32)), n, h, &mut out);
            assert_eq!(in_medium, medium, "{piece:?}");
            assert_eq!(out, if short || medium { ids } else { &[] });
            assert_eq!(
                cache.get_long(piece, head(piece), h, &mut Vec::new()),
                !short && !medium,
                "{piece:?}"
            );
        }
        cache.clear();
        for (piece, _) in cases {
            assert!(!cache.get_into(piece, head(piece), hash(piece), &mut Vec::new()));
        }
    }
}
