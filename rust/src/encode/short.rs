//! The piece cache's table for short pieces (issue 11's warm path): pieces of 1 to 16 bytes
//! that encode to 1 to 3 ids, with the key and the ids inline in one 32-byte slot (two per
//! cache line), so that a hit is one probe and no second access to an arena. About 98 % of
//! the pieces that are not one token are such pieces (prose, code and multilingual text).
//!
//! The key is the piece's bytes as two little-endian words, zero-padded, and its length (which
//! tells a piece from the same piece with trailing zero bytes). The table starts small and
//! doubles (at 3/4 full) up to `MAX_BITS`; with 3/4 of those slots used it is full and the
//! caller (`PieceCache`) starts a new generation. Its memory is bounded: at most
//! 2^MAX_BITS * 32 bytes (16 MiB, 393 Ki pieces) per generation. Sized on 100 MB of
//! `bench/make_corpus.py`'s mix (21.4 M pieces, 315 k distinct pieces of up to 16 bytes that
//! are not one token): at 2^18 slots filled to half, a second pass re-merged a good part of
//! them (`encode_by_merges` 21 % of a profile of 4 passes); at 2^19 filled to 3/4 the
//! warm pass ran ~1.6x as fast, and at 2^20 (with a larger arena table too) no faster than
//! that (more of the table missed the last-level cache).

use super::Rank;

/// One slot: `meta` is `len | ids << 8` (0: empty, no key is empty).
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(32))]
struct Slot {
    lo: u64,
    hi: u64,
    ids: [Rank; 3],
    meta: u32,
}

/// Most ids a slot holds.
pub(super) const MAX_IDS: usize = 3;
/// Longest key.
pub(super) const MAX_LEN: usize = 16;

const MIN_BITS: u32 = 12;
pub(super) const MAX_BITS: u32 = 19;
/// Entries a full table holds (3/4 of its slots).
pub(super) const ENTRIES: usize = 3 << (MAX_BITS - 2);

#[derive(Debug, Default)]
pub(super) struct ShortTable {
    /// Allocated on first insert.
    slots: Vec<Slot>,
    bits: u32,
    entries: usize,
}

impl ShortTable {
    /// The ids of the piece whose words are `lo`, `hi` and length `len` (1 to 16), whose
    /// `hash_bytes` is `h`.
    #[inline(always)]
    pub(super) fn get(&self, lo: u64, hi: u64, len: usize, h: u64) -> Option<&[Rank]> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = (1usize << self.bits) - 1;
        let mut i = (h >> (64 - self.bits)) as usize;
        loop {
            let s = &self.slots[i];
            if s.meta & 0xFF == len as u32 && s.lo == lo && s.hi == hi {
                return Some(&s.ids[..(s.meta >> 8) as usize]);
            }
            if s.meta == 0 {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    pub(super) fn is_full(&self) -> bool {
        self.entries >= ENTRIES
    }

    /// Adds a piece that `get` did not find (the table is not full; 1 to 3 ids).
    pub(super) fn insert(&mut self, lo: u64, hi: u64, len: usize, h: u64, ids: &[Rank]) {
        debug_assert!((1..=MAX_LEN).contains(&len) && (1..=MAX_IDS).contains(&ids.len()));
        if self.slots.is_empty() {
            self.bits = MIN_BITS;
            self.slots = vec![Slot::default(); 1 << MIN_BITS];
        } else if 4 * (self.entries + 1) > 3 * self.slots.len() && self.bits < MAX_BITS {
            self.grow();
        }
        let mut slot = Slot {
            lo,
            hi,
            ids: [0; 3],
            meta: len as u32 | (ids.len() as u32) << 8,
        };
        slot.ids[..ids.len()].copy_from_slice(ids);
        self.put(slot, h);
        self.entries += 1;
    }

    fn put(&mut self, slot: Slot, h: u64) {
        let mask = (1usize << self.bits) - 1;
        let mut i = (h >> (64 - self.bits)) as usize;
        while self.slots[i].meta != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i] = slot;
    }

    #[cold]
    fn grow(&mut self) {
        let old = std::mem::take(&mut self.slots);
        self.bits += 1;
        self.slots = vec![Slot::default(); 1 << self.bits];
        for s in old.into_iter().filter(|s| s.meta != 0) {
            self.put(s, super::hash_words(s.lo, s.hi, (s.meta & 0xFF) as usize));
        }
    }

    /// Empties the table, keeping its memory for the next generation.
    pub(super) fn reset(&mut self) {
        self.slots.fill(Slot::default());
        self.entries = 0;
    }
}
