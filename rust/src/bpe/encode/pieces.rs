//! The pieces one thread has encoded with one `Encoder`, and their ids: the first place a piece
//! of 1 to 15 bytes is looked up, one token or not.
//!
//! A piece is its bytes and its length packed into a u128 (`key`), and an entry is that key
//! with up to 3 ids inline (32 bytes; more ids go to `spill`). The text is cut into pieces a
//! block at a time (`Local::cuts`: the keys and hashes of up to `BLOCK` pieces, each entry's line
//! asked for when the piece is cut), then the block is looked up in a loop of its own whose only
//! branch for a piece found in its home slot is the loop's: the three inline ids are stored
//! whatever they are, and the output grows by their count; a piece in the slot after its home
//! is handled in the loop too, and moved home. Anything else (a piece further along its run,
//! one with more ids, one not in the table, one of 16 bytes or more that is not a run of one
//! byte, `uniform`) goes to `Encoder::piece_slow`, out of line, which finds it through the
//! token table, the shared piece cache or merges, and puts it in the table.
//!
//! Why per thread, and this shape: the token table (every token, 8 MiB for o200k) and the
//! shared piece cache (48 MiB) are spread over much more memory than the pieces a text uses,
//! and every piece asked for a line of each. This table holds only pieces seen, most used near
//! their home slot, one line a piece, and is written without locks. Figures in `bpe/NOTES.md`
//! (sixteenth round).
//!
//! Memory: a table starts at 2^16 entries (2 MiB) and doubles while three quarters full, up to
//! 2^19 (16 MiB, 393 k pieces); full at that size, or with more than `SPILL_MAX` spilled ids
//! (4 MiB), it is emptied. A thread keeps the tables of its last `KEPT` (4) encoders; a table
//! is as large as the pieces its encoder met on the thread need (2 MiB for up to 49 k pieces).

use std::cell::RefCell;

use super::{hash_words, prefetch_at, Rank};

/// The longest piece with an entry (its length goes in the key's last byte).
pub(crate) const MAX_LEN: usize = 15;
/// Pieces cut before a block is looked up.
pub(crate) const BLOCK: usize = 256;
/// How many pieces ahead of the lookup an entry's line is asked for into the first-level cache.
const AHEAD: usize = 16;
/// How many pieces ahead of the lookup a piece whose entry is not in its home slot (by then
/// arrived) is handed to `peek`, to ask for the lines its slow lookup reads.
const PEEK: usize = 8;
/// Ids inline in an entry.
const INLINE: usize = 3;
#[cfg(not(test))]
const MIN_BITS: u32 = 16;
#[cfg(not(test))]
const MAX_BITS: u32 = 19;
/// Spilled ids at which a table is emptied (4 MiB).
#[cfg(not(test))]
const SPILL_MAX: usize = 1 << 20;
// Small enough in tests that every encoding test grows and empties tables.
#[cfg(test)]
const MIN_BITS: u32 = 3;
#[cfg(test)]
const MAX_BITS: u32 = 6;
#[cfg(test)]
const SPILL_MAX: usize = 40;
/// Encoders whose tables a thread keeps: a program that encodes with a few models in turn
/// (a chat server's tokenizers) keeps each one's pieces.
#[cfg(not(test))]
const KEPT: usize = 4;
#[cfg(test)]
const KEPT: usize = 2;

/// The key of no entry: an empty slot's key is 0, a piece's last byte is its length (1 to 15).
pub(crate) const NO_KEY: u128 = u128::MAX;
/// Or-ed into the key of a part of a piece (`Encoder::encode_cut`), whose ids are its merges'.
/// A piece's are not always: a piece that is a token is that token (tiktoken's rule), even
/// where the merges of its bytes cannot make it.
pub(crate) const PART: u128 = 1 << 124;

#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Entry {
    key: u128,
    /// How many ids; more than `INLINE`: `ids[0]` is where they start in `spill`.
    len: u32,
    ids: [Rank; INLINE],
}

const EMPTY: Entry = Entry {
    key: 0,
    len: 0,
    ids: [0; INLINE],
};

/// The longest run of one byte with an entry of its own (`uniform`).
pub(crate) const MAX_RUN: usize = 127;

/// The key and hash of a run of `n` bytes `x` (`MAX_LEN` < n <= `MAX_RUN`): the indentation of
/// source code. Three in four of its pieces of 16 bytes or more are runs of spaces, of a few
/// dozen lengths, and each went out of line to the shared piece cache. The key's top byte,
/// `0x20 | 9`, is no piece's (a length of 1 to 15, `PART` or not), and says to hash its two words
/// (the run's length and its byte) as a piece of 9 bytes, as `Table::grow_or_empty` does.
#[inline(always)]
pub(crate) fn uniform(x: u8, n: usize) -> (u128, u64) {
    debug_assert!((MAX_LEN + 1..=MAX_RUN).contains(&n));
    let (lo, hi) = (n as u64, x as u64);
    (
        lo as u128 | ((hi | 0x29 << 56) as u128) << 64,
        hash_words(lo, hi, 9),
    )
}

/// The key of a piece of `n` bytes (1 to `MAX_LEN`) whose zero-padded little-endian words are
/// `lo` and `hi`.
#[inline(always)]
pub(crate) fn key(lo: u64, hi: u64, n: usize) -> u128 {
    debug_assert!((1..=MAX_LEN).contains(&n));
    lo as u128 | ((hi | (n as u64) << 56) as u128) << 64
}

/// A piece cut and waiting for its lookup: `text[at..at + n]`, its key (`uniform`'s for a run
/// of one byte of 16 to `MAX_RUN` bytes, `NO_KEY` for another piece of 16 bytes or more) and the
/// hash of its bytes, which the token table and the piece cache use too (of a run: its key's).
#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
pub(crate) struct Cut {
    pub key: u128,
    pub hash: u64,
    pub at: u32,
    pub n: u32,
}

impl Cut {
    /// The piece's two words (the key without its length).
    #[inline(always)]
    pub(crate) fn words(&self) -> (u64, u64) {
        (self.key as u64, (self.key >> 64) as u64 & (u64::MAX >> 8))
    }
}

pub(crate) struct Table {
    owner: u64,
    slots: crate::huge::Zeroed<Entry>,
    shift: u32,
    mask: usize,
    len: usize,
    spill: Vec<Rank>,
}

impl Table {
    fn new(owner: u64, bits: u32) -> Table {
        let n = 1usize << bits;
        // Zeroed memory is an empty table: the system's fresh pages, touched as they fill,
        // rather than 2 MiB written out before a thread's first (perhaps short) call. A table
        // grown to 4 MiB or more (by a thread that has met tens of thousands of pieces) is in
        // huge pages: one fault a 2 MiB, and fewer misses of the TLB.
        // SAFETY: an all-zero `Entry` is `EMPTY`.
        let slots = unsafe {
            if n * std::mem::size_of::<Entry>() >= 2 * crate::bpe::encode::HUGE_PAGE {
                crate::huge::Zeroed::<Entry>::in_huge_pages(n)
            } else {
                crate::huge::Zeroed::<Entry>::new(n)
            }
        };
        Table {
            owner,
            slots,
            shift: 64 - bits,
            mask: n - 1,
            len: 0,
            spill: Vec::new(),
        }
    }

    #[inline(always)]
    fn home(&self, hash: u64) -> usize {
        (hash >> self.shift) as usize
    }

    #[inline(always)]
    pub(crate) fn prefetch(&self, hash: u64) {
        prefetch_at(self.slots.as_ptr().wrapping_add(self.home(hash)));
    }

    /// Appends the ids of `key` if it has an entry, moving the entry to its home slot (pieces
    /// found are then found at once); else `Err` with the free slot that ends its run.
    pub(crate) fn find(&mut self, key: u128, hash: u64, out: &mut Vec<Rank>) -> Result<(), usize> {
        let home = self.home(hash);
        let mut i = home;
        loop {
            let e = self.slots[i];
            if e.key == key {
                let n = e.len as usize;
                if n <= INLINE {
                    out.extend_from_slice(&e.ids[..n]);
                } else {
                    let at = e.ids[0] as usize;
                    out.extend_from_slice(&self.spill[at..at + n]);
                }
                // Linear probing keeps every key findable: the home slot's entry moves further
                // along a run that already covered its own home.
                self.slots.swap(i, home);
                return Ok(());
            }
            if e.key == 0 {
                return Err(i);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Puts `key` (not in the table; `free` is where its run ends) with its `ids`.
    pub(crate) fn insert(&mut self, key: u128, hash: u64, free: usize, ids: &[Rank]) {
        if (self.len + 1) * 4 > self.slots.len() * 3 || self.spill.len() > SPILL_MAX {
            self.grow_or_empty();
            return self.put(key, hash, ids);
        }
        self.len += 1;
        self.slots[free] = self.entry(key, ids);
    }

    fn entry(&mut self, key: u128, ids: &[Rank]) -> Entry {
        let mut e = Entry {
            key,
            len: ids.len() as u32,
            ids: [0; INLINE],
        };
        if ids.len() <= INLINE {
            e.ids[..ids.len()].copy_from_slice(ids);
        } else {
            e.ids[0] = self.spill.len() as Rank;
            self.spill.extend_from_slice(ids);
        }
        e
    }

    fn put(&mut self, key: u128, hash: u64, ids: &[Rank]) {
        let e = self.entry(key, ids);
        self.place(e, hash);
        self.len += 1;
    }

    fn place(&mut self, e: Entry, hash: u64) {
        let mut i = self.home(hash);
        while self.slots[i].key != 0 {
            i = (i + 1) & self.mask;
        }
        self.slots[i] = e;
    }

    fn grow_or_empty(&mut self) {
        let bits = 64 - self.shift;
        if bits >= MAX_BITS || self.spill.len() > SPILL_MAX {
            self.slots.fill(EMPTY);
            self.spill.clear();
            self.len = 0;
            return;
        }
        let old = std::mem::replace(self, Table::new(self.owner, bits + 1));
        self.spill = old.spill;
        self.len = old.len;
        for e in old.slots.iter().filter(|e| e.key != 0) {
            let (lo, hi) = (e.key as u64, (e.key >> 64) as u64);
            self.place(
                *e,
                hash_words(lo, hi & (u64::MAX >> 8), (hi >> 56) as usize & 0xF),
            );
        }
    }

    /// The slots' memory and the shift that turns a hash into a slot, for the lookup loop.
    #[inline(always)]
    fn raw(&mut self) -> (*mut Entry, u32) {
        (self.slots.as_mut_ptr(), self.shift)
    }
}

/// Looks up the first `n` cuts of `cuts` in `table`, appending the ids of each piece in order: a
/// piece found in its home slot or the next with up to 3 ids is handled here, every other one
/// by `slow`, `PEEK` pieces after `peek` was told of it.
#[inline(always)]
pub(crate) fn lookup_block(
    table: &mut Table,
    cuts: &[Cut],
    n: usize,
    out: &mut Vec<Rank>,
    mut peek: impl FnMut(&Cut),
    mut slow: impl FnMut(&mut Table, &Cut, &mut Vec<Rank>),
) {
    assert!(n + AHEAD <= cuts.len());
    // Room for every piece's inline ids: each is stored before it is known to be a hit.
    out.reserve(INLINE * n);
    let (mut slots, mut shift) = table.raw();
    let mut mask = table.mask;
    let (mut optr, mut olen) = (out.as_mut_ptr(), out.len());
    for c in &cuts[..AHEAD] {
        prefetch_at(slots.wrapping_add((c.hash >> shift) as usize));
    }
    for i in 0..n {
        // SAFETY: `cuts` holds `AHEAD` entries past the block (stale ones only ask for a line).
        let q = unsafe { cuts.get_unchecked(i + AHEAD) };
        prefetch_at(slots.wrapping_add((q.hash >> shift) as usize));
        if i + PEEK < n {
            // SAFETY: `i + PEEK < n`; `hash >> shift` is below the table's size.
            let r = unsafe { cuts.get_unchecked(i + PEEK) };
            let home = (r.hash >> shift) as usize;
            if unsafe { (*slots.add(home)).key } != r.key {
                // The line after the home slot's too: where a piece one slot on is looked for
                // below, and where the probe for a new piece goes on.
                prefetch_at(slots.wrapping_add((home + 2) & mask));
                peek(r);
            }
        }
        // SAFETY: `i < n`.
        let c = unsafe { cuts.get_unchecked(i) };
        // SAFETY: `hash >> shift` is below the table's size, whatever the hash.
        let e = unsafe { &*slots.add((c.hash >> shift) as usize) };
        let len = e.len as usize;
        // SAFETY: `INLINE` ids fit past `olen` (reserved above, again after each slow piece).
        unsafe { std::ptr::copy_nonoverlapping(e.ids.as_ptr(), optr.add(olen), INLINE) };
        if e.key == c.key && len <= INLINE {
            olen += len;
            continue;
        }
        // A piece one slot past its home (most of those not at home) is handled here too,
        // and moved home as `Table::find` would (the entries stay within their runs).
        let home = (c.hash >> shift) as usize;
        let next = (home + 1) & mask;
        // SAFETY: `next` is masked to the table's size.
        let f = unsafe { &*slots.add(next) };
        if f.key == c.key && f.len as usize <= INLINE {
            // SAFETY: as above; `INLINE` ids fit past `olen`.
            unsafe {
                std::ptr::copy_nonoverlapping(f.ids.as_ptr(), optr.add(olen), INLINE);
                olen += f.len as usize;
                std::ptr::swap(slots.add(home), slots.add(next));
            }
            continue;
        }
        // SAFETY: the ids below `olen` are written.
        unsafe { out.set_len(olen) };
        slow(table, c, out);
        out.reserve(INLINE * (n - i));
        (slots, shift) = table.raw();
        mask = table.mask;
        (optr, olen) = (out.as_mut_ptr(), out.len());
    }
    // SAFETY: as above.
    unsafe { out.set_len(olen) };
}

/// One thread's tables (most recently used first) and its block of cuts.
pub(crate) struct Local {
    pub tables: Vec<Table>,
    pub cuts: Box<[Cut]>,
}

thread_local! {
    static LOCAL: RefCell<Local> = RefCell::new(Local {
        tables: Vec::new(),
        cuts: vec![Cut::default(); BLOCK + AHEAD].into_boxed_slice(),
    });
}

/// The table of encoder `owner` in `tables`, made first (and the least recently used one
/// dropped).
pub(crate) fn table(tables: &mut Vec<Table>, owner: u64) -> &mut Table {
    match tables.iter().position(|t| t.owner == owner) {
        Some(0) => {}
        Some(i) => {
            let t = tables.remove(i);
            tables.insert(0, t);
        }
        None => {
            if tables.len() == KEPT {
                tables.pop();
            }
            tables.insert(0, Table::new(owner, MIN_BITS));
        }
    }
    &mut tables[0]
}

/// Runs `f` with this thread's tables and cuts; `None` where they are in use further up this
/// thread's stack (never in practice: nothing calls back into an encoder while it encodes).
pub(crate) fn with_local<R>(f: impl FnOnce(&mut Local) -> R) -> Option<R> {
    LOCAL
        .try_with(|l| l.try_borrow_mut().ok().map(|mut l| f(&mut l)))
        .ok()
        .flatten()
}
