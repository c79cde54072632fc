//! The tokens of 9 to 16 bytes, in a table of their own whose slots hold both words of the token: a
//! piece of that length is found with one probe and no access to the vocabulary's arena. In
//! `TokenTable` the second word was read through the token's span and then the arena, two more
//! dependent loads that `perf` showed as 25 % of the slow path on the bench mix. o200k has 47.7 k
//! such tokens (a 3 MiB table, `token_table_bits`); the main table keeps the rest.

use super::{filled, token_table_bits, Rank};

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    lo: u64,
    hi: u64,
    /// 0: empty.
    len: u32,
    id: Rank,
}

/// Open addressing, linear probing, keyed by the token's two zero-padded little-endian words
/// and its length.
#[derive(Debug)]
pub(super) struct Tokens16 {
    slots: Box<[Slot]>,
    shift: u32,
    mask: usize,
}

impl Tokens16 {
    pub(super) fn new(entries: usize) -> Self {
        let bits = token_table_bits(entries);
        Tokens16 {
            slots: filled(1 << bits, Slot::default()),
            shift: 64 - bits,
            mask: (1 << bits) - 1,
        }
    }

    /// The id of the token of `len` bytes (9 to 16) with words `lo`, `hi`, whose
    /// `hash_bytes` is `h`.
    #[inline(always)]
    pub(super) fn find(&self, lo: u64, hi: u64, len: usize, h: u64) -> Option<Rank> {
        let mut i = (h >> self.shift) as usize;
        loop {
            let s = &self.slots[i];
            if s.len as usize == len && s.lo == lo && s.hi == hi {
                return Some(s.id);
            }
            if s.len == 0 {
                return None;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Asks for the slot a token hashed to `h` is looked up in first.
    #[inline(always)]
    pub(super) fn prefetch(&self, h: u64) {
        super::prefetch_at(self.slots.as_ptr().wrapping_add((h >> self.shift) as usize));
    }

    /// Inserts a token not yet in the table.
    pub(super) fn insert(&mut self, lo: u64, hi: u64, len: usize, h: u64, id: Rank) {
        let mut i = (h >> self.shift) as usize;
        while self.slots[i].len != 0 {
            i = (i + 1) & self.mask;
        }
        self.slots[i] = Slot {
            lo,
            hi,
            len: len as u32,
            id,
        };
    }
}
