//! BPE encoding of pieces, and of whole texts (special tokens, chunks, threads, counting).
//!
//! A `Bpe` knows, for every mergeable pair of token ids, the merge's priority and the id it
//! produces. Trained and Hugging Face tokenizers list their merges (priority = position in the
//! list); tiktoken rank files list tokens (a pair is mergeable when its concatenated bytes are a
//! token, priority = that token's rank), which `from_ranks` turns into the same pair table.
//!
//! Encoding a piece: a piece that is itself a token is emitted at once (most pieces of real text
//! are); otherwise the lowest-priority pair is merged, leftmost on ties, until none is left.
//! Short pieces work on small arrays on the stack, scanned for the lowest pair (quadratic, but
//! tiny); long ones take a linear path for monotone models (`long`: every trained merge list
//! and every published rank file), and a min-heap over a linked list, O(n log n), otherwise.
//!
//! The design, in the order a piece meets it. Every table is sized with the last-level cache
//! in mind: past it, each lookup waits on memory, so size is speed here.
//! - Whole-piece lookup is most of the work on prose and code (about 90 % of pieces are one
//!   token). `TokenTable`'s slots hold a token's first 8 bytes, its length and its id, so a
//!   piece of up to 8 bytes is found with one hash of one word and one slot compare, without
//!   following a pointer to the key; tokens of 9 to 16 bytes have a table of their own whose
//!   slots hold both words (`tokens16`). A piece's words are loaded from the text where it
//!   lies, masked to its length.
//! - A piece that is not one token is looked up in the piece cache (`PieceCache`: `cache`,
//!   `inline`), keyed by the hash already computed: one table of fixed size shared by all
//!   threads, so memory stays bounded whatever the text and a piece is merged about once.
//! - Merges: the first round is over single bytes, so all byte pairs sit in a flat 64 Ki table
//!   (`byte_pairs`); later pairs use `PairTable`, open addressing behind a 2-bit Bloom filter
//!   (most lookups find no merge). A `Merge` is priority and result in one u64 with the low
//!   byte free for a position, so "lowest priority, leftmost" is one compare and the merge
//!   needs no second lookup. A rank model's table holds one pair per token, the last merge of
//!   its own bytes (`Bpe::last_merge` explains why no other pair is ever merged).
//! - Short pieces (under `LONG_PIECE` bytes) keep their tokens in place on stack arrays linked
//!   to their neighbours, so a merge moves nothing; the scan for the lowest pair keeps four
//!   running minima, and pieces of 17 bytes or more also keep the minimum of each group of 8
//!   positions, so a merge rescans one or two groups rather than every position.
//! - Long pieces of monotone models (checked once at load) hand out all pairs of the lowest
//!   priority at once and merge them in one pass, O(n) (`long`, which proves it); other models
//!   use nodes of u32 links and a four-ary heap of packed (priority, position), O(n log n).
//! - The walk over a text (`walk_pieces`): the pre-tokenizer finds piece boundaries 64 bytes
//!   at a time with bit masks (`text/pretok/masks.rs`) and hands each piece out as a place in
//!   the text; a block of pieces is cut, then looked up in the thread's table of pieces seen
//!   (`pieces.rs`). A piece not there goes through the token table, the piece cache and merges
//!   (`piece_slow`), and into the thread's table.
//! - Texts of 4 GiB or more walk through the queue (`walk_encoding`): each piece is queued
//!   (`Queue`, `Bpe::ahead`) with its token slot and cache bucket prefetched, and looked up
//!   `AHEAD` pieces later, so that lookups do not wait on memory one after the other. The
//!   common case (1 to 8 bytes, one token) is inlined into that loop (`encode_ahead`),
//!   everything else is out of line (`encode_ahead_slow`); `piece_slow` uses both.
//! - A call on several threads with `POPULATE_BYTES` of text or more maps the piece cache's
//!   short table first:
//!   left alone, a page first read by a lookup that misses is the kernel's shared zero page,
//!   and the insert that replaces it makes the kernel flush it from every core's TLB.
//! - Large texts are cut into chunks only at independent cuts (`pretok::is_independent_cut`,
//!   where every preset pattern ends a piece on its own, and where no special token straddles),
//!   so the ids do not depend on the chunking nor on the number of threads.
//!
//! What was measured and tried: NOTES.md beside this file (the rounds of profiles, their
//! figures, and what was dropped); throughput against peers in bench/README.md.

use std::cell::Cell;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use aho_corasick::{AhoCorasick, MatchKind};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::count::{chunks, cut_before, SpecialSplitter};
use crate::error::{Error, Result};
use crate::segments;
use crate::text::pretok::Pretokenizer;

pub use crate::Rank;
pub use cache::PieceCache;

// Long pieces of monotone models in linear time.
mod atoms;
mod long;
mod pieces;
// Long pieces of one repeated byte, as runs of tokens.
mod uniform;
// The piece cache, shared by threads.
mod cache;
// The piece cache's inline tables for pieces of up to 32 bytes.
mod inline;
// The tokens of 9 to 16 bytes, found by two words.
mod tokens16;

/// Pieces of at least this many bytes take the heap path (and are not cached).
const LONG_PIECE: usize = 128;

/// A merge packed in a u64 as `priority << 40 | result << 8`: merges compare by priority
/// first (a priority has one result, so the result never decides), and the low byte is left
/// free for the short path to put a position in (`merge | position`), so that "lowest
/// priority, leftmost" is the minimum of one array, and the merge's result comes with it.
type Merge = u64;

/// Priorities (merge indices, or ranks) must be below this to fit a `Merge`.
const PRIORITY_BOUND: u64 = 1 << 24;

/// "No merge": sorts after every merge, and stays itself when a position is or-ed in.
const NONE: Merge = u64::MAX;

#[inline(always)]
fn pack(priority: u32, result: Rank) -> Merge {
    debug_assert!((priority as u64) < PRIORITY_BOUND);
    (priority as u64) << 40 | (result as u64) << 8
}

#[inline(always)]
fn priority(m: Merge) -> u32 {
    (m >> 40) as u32
}

#[inline(always)]
fn result(m: Merge) -> Rank {
    (m >> 8) as Rank
}

// ---------------------------------------------------------------------------------------------
// Hashing byte strings

const K: u64 = 0x9E37_79B9_7F4A_7C15;

/// The first `min(8, len)` bytes of `b`, little-endian, zero-padded (`b` not empty).
#[inline(always)]
fn head(b: &[u8]) -> u64 {
    let n = b.len();
    if n >= 8 {
        u64::from_le_bytes(b[..8].try_into().unwrap())
    } else if n >= 4 {
        let lo = u32::from_le_bytes(b[..4].try_into().unwrap()) as u64;
        let hi = u32::from_le_bytes(b[n - 4..n].try_into().unwrap()) as u64;
        lo | (hi << ((n - 4) * 8))
    } else {
        // n in 1..=3: bytes 0, n/2 and n-1 cover all of them.
        (b[0] as u64) | ((b[n / 2] as u64) << (8 * (n / 2))) | ((b[n - 1] as u64) << (8 * (n - 1)))
    }
}

/// A 64-bit hash of `b` (whose `head` is given); tables index it by its top bits.
#[inline(always)]
fn hash_bytes(b: &[u8], head: u64) -> u64 {
    let mut h = hash_first(head, b.len());
    if b.len() > 8 {
        let mut rest = &b[8..];
        while rest.len() >= 8 {
            h = hash_next(h, u64::from_le_bytes(rest[..8].try_into().unwrap()));
            rest = &rest[8..];
        }
        if !rest.is_empty() {
            h = hash_next(h, self::head(rest));
        }
    }
    hash_finish(h)
}

// The steps of `hash_bytes`, shared by `hash_short`, `hash_words` and `hash_words32`, which
// compute the same hash from words already at hand: the token table and the piece cache are
// probed through all four, so they must agree (`hashes_agree`).
#[inline(always)]
fn hash_first(head: u64, len: usize) -> u64 {
    (head ^ (len as u64).rotate_right(8)).wrapping_mul(K)
}

#[inline(always)]
fn hash_next(h: u64, word: u64) -> u64 {
    (h.rotate_left(27) ^ word).wrapping_mul(K)
}

#[inline(always)]
fn hash_finish(h: u64) -> u64 {
    h ^ (h >> 29)
}

/// `hash_bytes` of a piece of `len` bytes, 1 to 8, whose `head` is given (one multiply).
#[inline(always)]
fn hash_short(head: u64, len: usize) -> u64 {
    debug_assert!((1..=8).contains(&len));
    hash_finish(hash_first(head, len))
}

/// The low `n` bytes of a word (`n` in 1..=8).
#[inline(always)]
fn low_bytes(n: usize) -> u64 {
    debug_assert!((1..=8).contains(&n));
    u64::MAX >> (64 - 8 * n)
}

/// `hash_bytes` of a piece of `len` bytes, 1 to 16, given as its two zero-padded little-endian
/// words (`hi` is 0 up to 8 bytes).
#[inline(always)]
fn hash_words(lo: u64, hi: u64, len: usize) -> u64 {
    debug_assert!((1..=16).contains(&len));
    let mut h = hash_first(lo, len);
    if len > 8 {
        h = hash_next(h, hi);
    }
    hash_finish(h)
}

/// The two zero-padded little-endian words of a piece of 1 to 16 bytes.
#[inline(always)]
pub(crate) fn words16(b: &[u8]) -> (u64, u64) {
    debug_assert!((1..=16).contains(&b.len()));
    if b.len() > 8 {
        (head(b), head(&b[8..]))
    } else {
        (head(b), 0)
    }
}

/// The four zero-padded little-endian words of `text[at..at + len]` (`len` in 17..=32): loaded
/// straight from the text when 32 bytes are there to load, and masked to the piece.
#[inline(always)]
fn words32_at(text: &[u8], at: usize, len: usize) -> [u64; 4] {
    debug_assert!((17..=32).contains(&len));
    let mut b = [0u8; 32];
    match text.get(at..at + 32) {
        Some(w) => b.copy_from_slice(w),
        None => b[..len].copy_from_slice(&text[at..at + len]),
    }
    std::array::from_fn(|i| {
        let w = u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().unwrap());
        match len.saturating_sub(8 * i) {
            0 => 0,
            k if k >= 8 => w,
            k => w & low_bytes(k),
        }
    })
}

/// `hash_bytes` of a piece of `len` bytes, 17 to 32, given as its four words (`words32_at`).
#[inline(always)]
fn hash_words32(w: &[u64; 4], len: usize) -> u64 {
    debug_assert!((17..=32).contains(&len));
    let mut h = hash_next(hash_next(hash_first(w[0], len), w[1]), w[2]);
    if len > 24 {
        h = hash_next(h, w[3]);
    }
    hash_finish(h)
}

/// The words of `text[at..at + len]` (`len` in 1..=16), loaded straight from the text when
/// 16 bytes are there to load, and masked to the piece (no per-length branches).
#[inline(always)]
fn words_at(text: &[u8], at: usize, len: usize) -> (u64, u64) {
    match text.get(at..at + 16) {
        Some(w) => {
            let lo = u64::from_le_bytes(w[..8].try_into().unwrap());
            let hi = u64::from_le_bytes(w[8..].try_into().unwrap());
            if len > 8 {
                (lo, hi & low_bytes(len - 8))
            } else {
                (lo & low_bytes(len), 0)
            }
        }
        None => words16(&text[at..at + len]),
    }
}

/// Asks the CPU to bring the cache line at `p` into its caches: a hint, which reads nothing
/// the program sees and cannot fault, whatever `p` is.
#[inline(always)]
pub(crate) fn prefetch_at<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it reads nothing the program sees and cannot fault.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// How many pieces `encode_chunk` looks ahead.
const AHEAD: usize = 16;

/// A piece waiting in `encode_chunk`'s queue: where it is in the text and, for 1 to 16 bytes,
/// its words and hash.
#[derive(Clone, Copy, Default)]
pub(crate) struct Ahead {
    at: usize,
    n: usize,
    lo: u64,
    hi: u64,
    h: u64,
}

/// The pieces `encode_chunk` has found and not yet encoded. Each is queued by `Bpe::ahead`,
/// which asks for the table slots it will be looked up in, and encoded `AHEAD` pieces later,
/// when they have had time to arrive: the lookups of a warm pass otherwise wait on memory one
/// after the other (see `bpe/NOTES.md`, sixth round).
struct Queue {
    /// The queued pieces' fields, one array each: pushed as one 40-byte `Ahead`, an entry was
    /// built on the stack by five 8-byte stores and copied into the queue by 16-byte loads,
    /// which cannot be forwarded from two stores and so waited for both to reach the cache
    /// (a quarter of the loop's samples in `perf`, on the instruction after that load).
    at: [usize; AHEAD],
    n: [usize; AHEAD],
    lo: [u64; AHEAD],
    hi: [u64; AHEAD],
    h: [u64; AHEAD],
    pushed: usize,
    done: usize,
}

impl Default for Queue {
    fn default() -> Self {
        Queue {
            at: [0; AHEAD],
            n: [0; AHEAD],
            lo: [0; AHEAD],
            hi: [0; AHEAD],
            h: [0; AHEAD],
            pushed: 0,
            done: 0,
        }
    }
}

impl Queue {
    #[inline(always)]
    fn get(&self, i: usize) -> Ahead {
        Ahead {
            at: self.at[i],
            n: self.n[i],
            lo: self.lo[i],
            hi: self.hi[i],
            h: self.h[i],
        }
    }

    /// Queues `a`, first encoding the oldest piece if the queue is full.
    #[inline(always)]
    fn push(
        &mut self,
        bpe: &Bpe,
        text: &[u8],
        a: Ahead,
        cache: Option<&PieceCache>,
        out: &mut Vec<Rank>,
    ) {
        if self.pushed - self.done == AHEAD {
            bpe.encode_ahead(text, self.get(self.done % AHEAD), cache, out);
            self.done += 1;
        }
        let i = self.pushed % AHEAD;
        self.at[i] = a.at;
        self.n[i] = a.n;
        self.lo[i] = a.lo;
        self.hi[i] = a.hi;
        self.h[i] = a.h;
        self.pushed += 1;
    }

    /// Encodes every queued piece, in order.
    fn drain(&mut self, bpe: &Bpe, text: &[u8], cache: Option<&PieceCache>, out: &mut Vec<Rank>) {
        while self.done < self.pushed {
            bpe.encode_ahead(text, self.get(self.done % AHEAD), cache, out);
            self.done += 1;
        }
    }
}

/// A boxed slice of `n` copies of `value`; a large one in transparent huge pages where the
/// system has them (`advise_huge_pages`): the token and pair tables are probed at random, and
/// with 4 KiB pages nearly every probe of a table of several MiB also missed the TLB.
fn filled<T: Copy>(n: usize, value: T) -> Box<[T]> {
    let mut v = Vec::with_capacity(n);
    advise_huge_pages(&v);
    v.resize(n, value);
    v.into_boxed_slice()
}

/// Asks Linux to back the (unused) capacity of a large buffer with transparent huge pages,
/// where the system leaves that to programs (`madvise` mode): a first touch then maps 2 MiB,
/// not 4 KiB, and accesses spread over the whole buffer miss the TLB less (the tables here,
/// the nodes of a long piece in `long`). Buffers under 4 MiB are left alone.
pub(crate) fn advise_huge_pages<T>(v: &Vec<T>) {
    let len = v.capacity() * std::mem::size_of::<T>();
    advise_huge(v.as_ptr() as *const u8, len)
}

/// `advise_huge_pages` for `len` bytes at `memory`.
pub(crate) fn advise_huge(memory: *const u8, len: usize) {
    if len < 2 * HUGE_PAGE {
        return;
    }
    advise_huge_any(memory, len)
}

/// The size of a transparent huge page (x86-64 and most arm64 kernels).
pub(crate) const HUGE_PAGE: usize = 2 << 20;

/// `advise_huge` whatever the size: for a buffer allocated aligned to `HUGE_PAGE` (the segment
/// cache's blocks), whose whole huge pages are all it holds.
pub(crate) fn advise_huge_any(memory: *const u8, len: usize) {
    let addr = memory as usize;
    #[cfg(target_os = "linux")]
    {
        extern "C" {
            fn madvise(addr: *mut u8, len: usize, advice: i32) -> i32;
        }
        const MADV_HUGEPAGE: i32 = 14;
        const PAGE: usize = 4096;
        let start = (addr + PAGE - 1) & !(PAGE - 1);
        let end = (addr + len) & !(PAGE - 1);
        if end <= start {
            return;
        }
        // SAFETY: the pages lie inside the allocation at `memory`, and MADV_HUGEPAGE changes how
        // the kernel backs them, never what they hold; an error (no THP) is ignored.
        unsafe {
            madvise(start as *mut u8, end - start, MADV_HUGEPAGE);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = addr;
}

/// The token and pair tables: powers of two with at least 1.25 slots per entry (filled 40
/// to 80 %). Measured on cold o200k multilingual text, the smaller tables (4 MiB of tokens and
/// 2 MiB of pairs rather than 8 and 4) gained about 5 % each: more of them stays in the
/// last-level cache, which pays for the longer probes. That was before the tables were in huge
/// pages; the token tables are now twice this (`token_table_bits`).
fn table_bits(entries: usize) -> u32 {
    (entries.max(8) * 5 / 4)
        .next_power_of_two()
        .trailing_zeros()
}

/// The token tables (`TokenTable`, `Tokens16`): twice `table_bits`, filled 20 to 40 %. Every
/// piece is looked up there, and at up to 80 % a lookup that missed its first slot (a token
/// further on, or a piece that is no token) mispredicted its probe loop: o200k's 4 MiB table,
/// 0.62 M mispredicted branches in a repeated pass of 3 MB of prose, 0.51 M at 8 MiB (and 3 %
/// fewer instructions). The hot tokens' slots take as many cache lines either way, one each,
/// and the tables are in huge pages (`filled`), so the larger table costs memory, not misses
/// (`bpe/NOTES.md`, thirteenth round).
pub(super) fn token_table_bits(entries: usize) -> u32 {
    table_bits(entries) + 1
}

// ---------------------------------------------------------------------------------------------
// bytes -> id

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    head: u64,
    /// 0: empty (no token is empty).
    len: u32,
    id: Rank,
}

/// Open addressing, linear probing; the keys' bytes live in `Bpe::arena`.
#[derive(Debug)]
struct TokenTable {
    slots: Box<[Slot]>,
    shift: u32,
    mask: usize,
}

impl TokenTable {
    fn new(entries: usize) -> Self {
        let bits = token_table_bits(entries);
        TokenTable {
            slots: filled(1 << bits, Slot::default()),
            shift: 64 - bits,
            mask: (1 << bits) - 1,
        }
    }

    /// The id of the token `b`, given `head(b)` and `hash_bytes(b, ..)`. `tail(id)` gives the
    /// bytes of the token after the first 8.
    #[inline(always)]
    fn find<'a>(
        &self,
        b: &[u8],
        head: u64,
        h: u64,
        tail: impl Fn(Rank) -> &'a [u8],
    ) -> Option<Rank> {
        let mut i = (h >> self.shift) as usize;
        loop {
            let s = self.slots[i];
            if s.len == 0 {
                return None;
            }
            if s.len as usize == b.len()
                && s.head == head
                && (b.len() <= 8 || tail(s.id) == &b[8..])
            {
                return Some(s.id);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Asks for the slot a key hashed to `h` is looked up in first.
    #[inline(always)]
    fn prefetch(&self, h: u64) {
        prefetch_at(self.slots.as_ptr().wrapping_add((h >> self.shift) as usize));
    }

    /// `find` for a key of `len` bytes, 1 to 8 (its head is the whole key).
    #[inline(always)]
    fn find_short(&self, head: u64, len: usize, h: u64) -> Option<Rank> {
        let mut i = (h >> self.shift) as usize;
        loop {
            let s = self.slots[i];
            if s.len as usize == len && s.head == head {
                return Some(s.id);
            }
            if s.len == 0 {
                return None;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Inserts `b` (not yet in the table).
    fn insert(&mut self, b: &[u8], id: Rank) {
        let head = head(b);
        let mut i = (hash_bytes(b, head) >> self.shift) as usize;
        while self.slots[i].len != 0 {
            i = (i + 1) & self.mask;
        }
        self.slots[i] = Slot {
            head,
            len: b.len() as u32,
            id,
        };
    }
}

// ---------------------------------------------------------------------------------------------
// (left id, right id) -> Merge

/// Most lookups during a merge loop find no merge (60 % on multilingual text), and the table
/// is large: a small Bloom filter (one 64-bit word per lookup, two bits, about 16 bits per
/// pair, 512 KiB for o200k) answers most of those without touching the table.
///
/// Rank models (priority = result) with ids below 2^21 - 1 (every published encoding) keep a
/// pair and its result in one u64 (`compact`): half the bytes of (key, value), so that more of
/// it stays in the last-level cache. Merge lists keep (key, packed value) pairs (`wide`).
#[derive(Debug)]
struct PairTable {
    /// `a << 21 | b | result << 42`, or `NONE` for an empty slot.
    compact: Box<[u64]>,
    /// (key, value); key `NONE` marks an empty slot (ids are below u32::MAX).
    wide: Box<[(u64, u64)]>,
    shift: u32,
    mask: usize,
    filter: Box<[u64]>,
    filter_mask: usize,
}

const COMPACT_BITS: u32 = 21;
const COMPACT_KEY: u64 = (1 << (2 * COMPACT_BITS)) - 1;

/// Mixes a packed pair into 64 bits with one multiply. The table takes the top bits, the filter
/// its word from bits 32 and up and its two bits from bits 20-31; the lowest bits of a product
/// depend on too few bits of the key to use.
#[inline(always)]
fn mix(key: u64) -> u64 {
    (key ^ (key >> 32)).wrapping_mul(K)
}

impl PairTable {
    /// A table for `entries` pairs of any merge list.
    fn new(entries: usize) -> Self {
        Self::with_layout(entries, false)
    }

    /// A table for `entries` pairs of a rank model: every value inserted is `pack(id, id)`
    /// with ids below `id_bound`. Compact when those ids fit.
    fn for_ranks(entries: usize, id_bound: usize) -> Self {
        Self::with_layout(entries, id_bound < (1 << COMPACT_BITS) - 1)
    }

    fn with_layout(entries: usize, compact: bool) -> Self {
        let bits = table_bits(entries);
        let words = (entries * 16 / 64).next_power_of_two().max(64);
        let (compact, wide) = if compact {
            (filled(1 << bits, NONE), Box::default())
        } else {
            (Box::default(), filled(1 << bits, (NONE, NONE)))
        };
        PairTable {
            compact,
            wide,
            shift: 64 - bits,
            mask: (1 << bits) - 1,
            filter: filled(words, 0),
            filter_mask: words - 1,
        }
    }

    #[inline(always)]
    fn filter_bits(x: u64) -> u64 {
        (1u64 << ((x >> 20) & 63)) | (1u64 << ((x >> 26) & 63))
    }

    #[inline(always)]
    fn get(&self, a: Rank, b: Rank) -> u64 {
        let key = ((a as u64) << 32) | b as u64;
        let x = mix(key);
        let bits = Self::filter_bits(x);
        if self.filter[(x >> 32) as usize & self.filter_mask] & bits != bits {
            return NONE;
        }
        let mut i = (x >> self.shift) as usize;
        if !self.compact.is_empty() {
            // Every id the encoder holds is below the model's id bound, so it fits.
            debug_assert!(((a | b) as u64) < (1 << COMPACT_BITS));
            let short = (a as u64) << COMPACT_BITS | b as u64;
            loop {
                let slot = self.compact[i];
                if slot == NONE {
                    return NONE;
                }
                if slot & COMPACT_KEY == short {
                    let id = (slot >> (2 * COMPACT_BITS)) as Rank;
                    return pack(id, id);
                }
                i = (i + 1) & self.mask;
            }
        }
        loop {
            let (k, v) = self.wide[i];
            if k == key {
                return v;
            }
            if k == NONE {
                return NONE;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Inserts unless the pair is there already (the first merge of a pair wins).
    fn insert(&mut self, a: Rank, b: Rank, value: u64) {
        let key = ((a as u64) << 32) | b as u64;
        let x = mix(key);
        self.filter[(x >> 32) as usize & self.filter_mask] |= Self::filter_bits(x);
        let mut i = (x >> self.shift) as usize;
        if !self.compact.is_empty() {
            debug_assert!(priority(value) == result(value));
            let short = (a as u64) << COMPACT_BITS | b as u64;
            loop {
                let slot = self.compact[i];
                if slot == NONE {
                    self.compact[i] = short | (result(value) as u64) << (2 * COMPACT_BITS);
                    return;
                }
                if slot & COMPACT_KEY == short {
                    return;
                }
                i = (i + 1) & self.mask;
            }
        }
        loop {
            let (k, _) = self.wide[i];
            if k == key {
                return;
            }
            if k == NONE {
                self.wide[i] = (key, value);
                return;
            }
            i = (i + 1) & self.mask;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The short path's tokens

/// A short piece's tokens on arrays of `N` (>= its length) on the stack: tokens stay where
/// their first byte was, linked to their neighbours, so a merge moves nothing.
struct Short<const N: usize> {
    n: usize,
    /// Tokens: `n`, less the bytes of atoms after their first.
    live: usize,
    tok: [Rank; N],
    /// key[i]: the merge of the token at i with the next one, or-ed with i (see `Merge`).
    key: [Merge; N],
    next: [u8; N], // n: none
    prev: [u8; N], // only read for tokens that have one
}

impl<const N: usize> Short<N> {
    /// The piece's bytes as tokens, with the merges of neighbouring bytes (2 <= len <= N).
    #[inline(always)]
    fn new(bpe: &Bpe, piece: &[u8]) -> Self {
        let n = piece.len();
        debug_assert!((2..=N).contains(&n) && N <= 256 && N % 4 == 0);
        let mut s = Short {
            n,
            live: n,
            tok: [0; N],
            key: [NONE; N],
            next: [0; N],
            prev: [0; N],
        };
        for (i, &b) in piece.iter().enumerate() {
            s.tok[i] = bpe.byte_ids[b as usize];
            s.next[i] = (i + 1) as u8;
            s.prev[i] = i.wrapping_sub(1) as u8;
        }
        for i in 0..n - 1 {
            s.key[i] = bpe.byte_pairs[(piece[i] as usize) << 8 | piece[i + 1] as usize] | i as u64;
        }
        s
    }

    /// `new` with the piece's atoms (`atoms`) already formed: an atom is one token at its
    /// first byte, linked past its other bytes, whose keys stay `NONE`.
    #[inline(always)]
    fn with_atoms(bpe: &Bpe, atoms: &atoms::Atoms, piece: &[u8]) -> Self {
        let n = piece.len();
        debug_assert!((2..=N).contains(&n) && N <= 256 && N % 4 == 0);
        let mut s = Short {
            n,
            live: 0,
            tok: [0; N],
            key: [NONE; N],
            next: [0; N],
            prev: [0; N],
        };
        // The previous token's position, and whether it is a single byte.
        let (mut last, mut last_byte) = (usize::MAX, false);
        let mut i = 0;
        while i < n {
            let (t, k) = match piece[i] {
                0xC2..=0xEF => atoms.at(piece, i),
                _ => None,
            }
            .unwrap_or((bpe.byte_ids[piece[i] as usize], 1));
            s.tok[i] = t;
            s.next[i] = (i + k) as u8;
            s.prev[i] = last as u8;
            if last != usize::MAX {
                s.key[last] = if last_byte && k == 1 {
                    bpe.byte_pairs[(piece[last] as usize) << 8 | piece[i] as usize]
                } else {
                    bpe.pair(s.tok[last], t)
                } | last as u64;
            }
            (last, last_byte) = (i, k == 1);
            s.live += 1;
            i += k;
        }
        s
    }

    /// Applies `best` (a key) and looks up the two merges it makes possible. Returns the
    /// positions whose keys changed: the left neighbour (`at` when there is none), the merged
    /// token, and the token merged away.
    #[inline(always)]
    fn merge(&mut self, bpe: &Bpe, best: Merge) -> (usize, usize, usize) {
        let at = (best & 0xff) as usize;
        let j = self.next[at] as usize;
        self.tok[at] = result(best);
        self.key[j] = NONE;
        let k = self.next[j] as usize;
        self.next[at] = k as u8;
        self.key[at] = if k < self.n {
            self.prev[k] = at as u8;
            bpe.pair(self.tok[at], self.tok[k]) | at as u64
        } else {
            NONE
        };
        let mut h = at;
        if at > 0 {
            h = self.prev[at] as usize;
            self.key[h] = bpe.pair(self.tok[h], self.tok[at]) | h as u64;
        }
        (h, at, j)
    }

    /// The lowest key of positions `8 * g .. 8 * g + 8`.
    #[inline(always)]
    fn group_min(&self, g: usize) -> Merge {
        let k = &self.key[g * 8..g * 8 + 8];
        let a = k[0].min(k[1]).min(k[2].min(k[3]));
        let b = k[4].min(k[5]).min(k[6].min(k[7]));
        a.min(b)
    }

    #[inline(always)]
    fn emit(&self, out: &mut Vec<Rank>) {
        let mut i = 0;
        while i < self.n {
            out.push(self.tok[i]);
            i = self.next[i] as usize;
        }
    }
}

/// The minimum of `keys` (a multiple of 4 long), in four independent running minima.
#[inline(always)]
fn min4(keys: &[Merge]) -> Merge {
    let mut m = [NONE; 4];
    for c in keys.chunks_exact(4) {
        for j in 0..4 {
            m[j] = m[j].min(c[j]);
        }
    }
    m[0].min(m[1]).min(m[2].min(m[3]))
}

// ---------------------------------------------------------------------------------------------
// A min-heap of u64 with four children per node

/// The long-piece path keeps one entry per candidate merge: millions for a long piece, far more
/// than the CPU caches hold. With four children per node (one cache line of u64) the heap is
/// half as deep as a binary one, so a pop touches about half as many lines.
struct QuadHeap {
    v: Vec<u64>,
}

impl QuadHeap {
    fn from_vec(v: Vec<u64>) -> Self {
        let mut heap = QuadHeap { v };
        for i in (0..heap.v.len().div_ceil(4)).rev() {
            heap.sift_down(i);
        }
        heap
    }

    fn push(&mut self, x: u64) {
        let mut i = self.v.len();
        self.v.push(x);
        while i > 0 {
            let parent = (i - 1) / 4;
            if self.v[parent] <= x {
                break;
            }
            self.v[i] = self.v[parent];
            i = parent;
        }
        self.v[i] = x;
    }

    fn pop(&mut self) -> Option<u64> {
        let last = self.v.pop()?;
        if self.v.is_empty() {
            return Some(last);
        }
        let top = std::mem::replace(&mut self.v[0], last);
        self.sift_down(0);
        Some(top)
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.v.len();
        let x = self.v[i];
        loop {
            let first = 4 * i + 1;
            if first >= n {
                break;
            }
            let end = (first + 4).min(n);
            let mut child = first;
            for c in first + 1..end {
                if self.v[c] < self.v[child] {
                    child = c;
                }
            }
            if self.v[child] >= x {
                break;
            }
            self.v[i] = self.v[child];
            i = child;
        }
        self.v[i] = x;
    }
}

// ---------------------------------------------------------------------------------------------
// The BPE model

/// A rank model's merges: (left, right, token) per token, in id order (`Bpe::rank_merges`).
pub type RankMerges = Vec<(Rank, Rank, Rank)>;

/// `Bpe::lens` of a token of 255 bytes or more, or of an unused id (`spans` tells which).
const LONG_OR_UNUSED: u8 = u8::MAX;

#[derive(Debug)]
pub struct Bpe {
    /// Tokens of 1 to 8 bytes, and of more than 16.
    table: TokenTable,
    /// Tokens of 9 to 16 bytes.
    table16: tokens16::Tokens16,
    /// Number of tokens.
    len: usize,
    /// id -> (offset, len) into `arena`; `len == u32::MAX` marks an unused id.
    spans: Vec<(u32, u32)>,
    /// id -> length in bytes, `LONG_OR_UNUSED` for 255 bytes or more and for unused ids: a
    /// tenth of `spans`' size, so that walking the lengths of a text's ids (`token_len`, for
    /// compare) stays in the L2 cache (`spans` of o200k, 1.6 MB, did not: 13 ns a token).
    lens: Box<[u8]>,
    /// id -> the token's first 8 bytes (fewer: zero-padded), little-endian (`spells`).
    heads: Box<[u64]>,
    arena: Vec<u8>,
    byte_ids: [Rank; 256],
    /// The `Merge` of the single bytes (x, y), at `x << 8 | y`.
    byte_pairs: Box<[u64]>,
    pairs: PairTable,
    /// Ids a piece may be encoded to by whole-piece lookup, when not all of them: for merge
    /// lists, only tokens whose bytes the merges themselves turn into that one token (always all
    /// of them for a trained tokenizer, not always for a hand-made merge list). `None`: all ids
    /// (rank models, and merge lists where every token qualifies).
    direct: Option<Vec<bool>>,
    /// Every merge has a higher priority than the merges that make its parts (`long`): long
    /// pieces then take the linear path instead of the heap.
    monotone: bool,
    /// The length of the longest token: a longer piece is no token, and is not hashed to look.
    longest: usize,
    /// Characters whose merges start from their one token (`atoms`), built when first used.
    atoms: std::sync::OnceLock<Option<atoms::Atoms>>,
}

impl Bpe {
    fn with_vocab(vocab: Vec<(Rank, Vec<u8>)>) -> Result<Self> {
        let max_id = vocab.iter().map(|(id, _)| *id).max().unwrap_or(0);
        // Ids index flat tables: refuse vocabularies so sparse that those would be huge.
        if max_id as usize > 2 * vocab.len() + (1 << 20) {
            return Err(Error::Vocab(format!(
                "token ids are too sparse: the largest is {max_id} for {} tokens",
                vocab.len()
            )));
        }
        let mut spans = vec![(0u32, u32::MAX); max_id as usize + 1];
        let mut arena = Vec::with_capacity(vocab.iter().map(|(_, b)| b.len()).sum());
        let mut byte_ids = [Rank::MAX; 256];
        let is_two_words = |b: &[u8]| (9..=16).contains(&b.len());
        let two = vocab.iter().filter(|(_, b)| is_two_words(b)).count();
        let mut table = TokenTable::new(vocab.len() - two);
        let mut table16 = tokens16::Tokens16::new(two);
        for (id, bytes) in &vocab {
            let id = *id;
            if bytes.is_empty() {
                return Err(Error::Vocab(format!("token {id} has no bytes")));
            }
            if spans[id as usize].1 != u32::MAX {
                return Err(Error::Vocab(format!(
                    "token id {id} appears twice in the vocabulary"
                )));
            }
            let head = head(bytes);
            let h = hash_bytes(bytes, head);
            let found = if is_two_words(bytes) {
                let (lo, hi) = words16(bytes);
                table16.find(lo, hi, bytes.len(), h)
            } else {
                table.find(bytes, head, h, |other| {
                    let (off, len) = spans[other as usize];
                    &arena[off as usize + 8..(off + len) as usize]
                })
            };
            if let Some(other) = found {
                return Err(Error::Vocab(format!(
                    "tokens {other} and {id} have the same bytes {:?}",
                    String::from_utf8_lossy(bytes)
                )));
            }
            spans[id as usize] = (arena.len() as u32, bytes.len() as u32);
            arena.extend_from_slice(bytes);
            if is_two_words(bytes) {
                let (lo, hi) = words16(bytes);
                table16.insert(lo, hi, bytes.len(), h, id);
            } else {
                table.insert(bytes, id);
            }
            if bytes.len() == 1 {
                byte_ids[bytes[0] as usize] = id;
            }
        }
        if let Some(b) = byte_ids.iter().position(|&id| id == Rank::MAX) {
            return Err(Error::Vocab(format!(
                "the vocabulary has no token for the single byte 0x{b:02x}; a byte-level BPE needs all 256"
            )));
        }
        let lens = spans
            .iter()
            .map(|&(_, len)| len.min(LONG_OR_UNUSED as u32) as u8)
            .collect();
        let heads = spans
            .iter()
            .map(|&(off, len)| match len {
                u32::MAX => 0,
                _ => head(&arena[off as usize..(off + len) as usize]),
            })
            .collect();
        let longest = vocab.iter().map(|(_, b)| b.len()).max().unwrap_or(0);
        Ok(Bpe {
            table,
            table16,
            len: vocab.len(),
            spans,
            lens,
            heads,
            arena,
            byte_ids,
            byte_pairs: vec![NONE; 1 << 16].into_boxed_slice(),
            pairs: PairTable::new(0),
            direct: None,
            monotone: false,
            longest,
            atoms: std::sync::OnceLock::new(),
        })
    }

    /// Fills `byte_pairs` from `pairs`.
    fn index_byte_pairs(&mut self) {
        for x in 0..256 {
            for y in 0..256 {
                self.byte_pairs[x << 8 | y] = self.pairs.get(self.byte_ids[x], self.byte_ids[y]);
            }
        }
    }

    /// A vocabulary (id, bytes) and merges as (left id, right id) in priority order. Each merge
    /// produces the token whose bytes are the concatenation.
    pub fn from_merges(vocab: Vec<(Rank, Vec<u8>)>, merges: &[(Rank, Rank)]) -> Result<Self> {
        if merges.len() as u64 >= PRIORITY_BOUND {
            return Err(Error::Vocab(format!(
                "{} merges; at most {} are supported",
                merges.len(),
                PRIORITY_BOUND - 1
            )));
        }
        let mut bpe = Self::with_vocab(vocab)?;
        bpe.pairs = PairTable::new(merges.len());
        let mut joined = Vec::new();
        for (i, &(a, b)) in merges.iter().enumerate() {
            joined.clear();
            for id in [a, b] {
                let bytes = bpe.token_bytes(id).map_err(|_| {
                    Error::Vocab(format!(
                        "merge {i} names token id {id}, which is not in the vocabulary"
                    ))
                })?;
                joined.extend_from_slice(bytes);
            }
            let Some(result) = bpe.lookup(&joined) else {
                return Err(Error::Vocab(format!(
                    "merge {i} ({a}, {b}) makes {:?}, which is not in the vocabulary",
                    String::from_utf8_lossy(&joined)
                )));
            };
            bpe.pairs.insert(a, b, pack(i as u32, result));
        }
        bpe.index_byte_pairs();
        bpe.monotone = bpe.merges_are_monotone(merges);
        // A token is emitted by whole-piece lookup only if the merges would produce it anyway.
        let mut direct = vec![false; bpe.spans.len()];
        let mut out = Vec::new();
        for (id, &(off, len)) in bpe.spans.iter().enumerate() {
            if len == u32::MAX {
                continue;
            }
            out.clear();
            bpe.encode_by_merges(&bpe.arena[off as usize..(off + len) as usize], &mut out);
            direct[id] = out.len() == 1 && out[0] == id as Rank;
        }
        let all = bpe
            .spans
            .iter()
            .zip(&direct)
            .all(|(&(_, len), &d)| d || len == u32::MAX);
        bpe.direct = if all { None } else { Some(direct) };
        Ok(bpe)
    }

    /// tiktoken's model: the ranks are the ids and a pair merges into the token its bytes make.
    pub fn from_ranks(ranks: Vec<(Rank, Vec<u8>)>) -> Result<Self> {
        Self::from_ranks_with_merges(ranks).map(|(bpe, _)| bpe)
    }

    /// `from_ranks`, and the merges it found on the way: what `rank_merges` would return
    /// (interop: a Hugging Face file's merges are checked against them for free).
    pub fn from_ranks_with_merges(ranks: Vec<(Rank, Vec<u8>)>) -> Result<(Self, RankMerges)> {
        if let Some(&(rank, _)) = ranks.iter().find(|(r, _)| *r as u64 >= PRIORITY_BOUND) {
            return Err(Error::Vocab(format!(
                "rank {rank} is too large; ranks up to {} are supported",
                PRIORITY_BOUND - 1
            )));
        }
        let mut bpe = Self::with_vocab(ranks)?;
        // A pair merges into the token its bytes make, at that token's rank; of all the ways to
        // split a token in two, only its last merge is ever used (see `last_merge`), so the
        // table holds that one: 200 k pairs for o200k rather than 446 k.
        let (pairs, used) = bpe.rank_pairs();
        bpe.pairs = pairs;
        bpe.monotone = bpe.ranks_are_monotone(&used);
        bpe.index_byte_pairs();
        Ok((bpe, used))
    }

    /// The pair table of a rank model, holding the last merge of every token (see
    /// `last_merge`), and those merges as (left, right, token), in id order.
    ///
    /// Tokens are taken in rank order and each one's bytes are merged with the pairs of the
    /// tokens before it, found so far: that is how the finished table would encode them up to
    /// the last merge, since every merge before it makes a token of lower rank (only last
    /// merges are ever made, `last_merge`'s argument). Two tokens left are the last merge. When
    /// more are left (a token whose merges would pass through a token of higher rank, or one
    /// that merges cannot make at all), `last_merge` decides from the bytes. One pair lookup
    /// per step, not a hash of the bytes of every candidate: loading o200k took 0.35 s of CPU
    /// with `last_merge` for every token (on all cores), mostly in `lookup`.
    fn rank_pairs(&self) -> (PairTable, Vec<(Rank, Rank, Rank)>) {
        let ids: Vec<Rank> = (0..self.spans.len() as Rank)
            .filter(|&id| self.spans[id as usize].1 > 1 && self.spans[id as usize].1 != u32::MAX)
            .collect();
        let mut pairs = PairTable::for_ranks(ids.len(), self.spans.len());
        let mut used = Vec::with_capacity(ids.len());
        let mut parts: Vec<Rank> = Vec::new();
        let mut merges: Vec<Merge> = Vec::new();
        for &id in &ids {
            let bytes = self.token_bytes(id).expect("a token of the vocabulary");
            parts.clear();
            parts.extend(bytes.iter().map(|&b| self.byte_ids[b as usize]));
            if !parts.contains(&Rank::MAX) {
                // merges[i]: the merge of parts[i] and parts[i + 1]; a merge looks up only the
                // two pairs it changes (a table lookup per pair per step was most of a load).
                merges.clear();
                merges.extend(parts.windows(2).map(|w| pairs.get(w[0], w[1])));
                loop {
                    let (mut best, mut at) = (NONE, 0);
                    for (i, &m) in merges.iter().enumerate() {
                        if m < best {
                            (best, at) = (m, i);
                        }
                    }
                    if best == NONE {
                        break;
                    }
                    parts[at] = result(best);
                    parts.remove(at + 1);
                    merges.remove(at);
                    if at > 0 {
                        merges[at - 1] = pairs.get(parts[at - 1], parts[at]);
                    }
                    if at < merges.len() {
                        merges[at] = pairs.get(parts[at], parts[at + 1]);
                    }
                }
            }
            let last = match parts[..] {
                [l, r] if l != Rank::MAX && r != Rank::MAX => Some((l, r)),
                _ => self.last_merge(bytes),
            };
            if let Some((l, r)) = last {
                pairs.insert(l, r, pack(id, id));
                used.push((l, r, id));
            }
        }
        (pairs, used)
    }

    /// The pair of the last merge of encoding `piece` by merges, in tiktoken's model (a pair
    /// merges into the token its bytes make, lowest rank first, leftmost on ties), if that
    /// ends in one token. Pairs are looked up by their bytes, so no pair table is needed yet.
    ///
    /// Only that pair of a token `t` can ever be merged into `t`, in any piece: the merges
    /// that build `t` over a span of a longer piece never cross the span's edges, so they are
    /// the merges of the span alone, in the same order (the lowest rank within the span is
    /// the lowest overall whenever the next merge is inside it; ties go leftmost in both).
    fn last_merge(&self, piece: &[u8]) -> Option<(Rank, Rank)> {
        // parts[i]: (start, id) of each token; its end is the next start.
        let mut parts: Vec<(usize, Rank)> = piece
            .iter()
            .enumerate()
            .map(|(i, &b)| (i, self.byte_ids[b as usize]))
            .collect();
        let end = |parts: &[(usize, Rank)], i: usize| parts.get(i + 1).map_or(piece.len(), |p| p.0);
        let rank = |parts: &[(usize, Rank)], i: usize| {
            self.lookup(&piece[parts[i].0..end(parts, i + 1)])
                .unwrap_or(Rank::MAX)
        };
        // rk[i]: the rank of merging parts[i] and parts[i + 1].
        let mut rk: Vec<Rank> = (0..parts.len() - 1).map(|i| rank(&parts, i)).collect();
        let mut last = None;
        while !rk.is_empty() {
            let (at, r) = rk
                .iter()
                .copied()
                .enumerate()
                .min_by_key(|&(i, r)| (r, i))?;
            if r == Rank::MAX {
                return None;
            }
            last = Some((parts[at].1, parts[at + 1].1));
            parts[at].1 = r;
            parts.remove(at + 1);
            rk.remove(at);
            if at < rk.len() {
                rk[at] = rank(&parts, at);
            }
            if at > 0 {
                rk[at - 1] = rank(&parts, at - 1);
            }
        }
        last
    }

    /// A rank model read as a merge list (interop): for each token of two or more
    /// bytes, the last merge of its own bytes (see `last_merge`), as (left, right, token), in id
    /// order. Tokens that merges cannot make from their bytes are left out. Merges in this
    /// order encode every text as the ranks do, since the ranks only ever use these pairs.
    pub fn rank_merges(&self) -> Vec<(Rank, Rank, Rank)> {
        self.rank_pairs().1
    }

    pub fn token_bytes(&self, id: Rank) -> Result<&[u8]> {
        match self.spans.get(id as usize) {
            Some(&(off, len)) if len != u32::MAX => {
                Ok(&self.arena[off as usize..off as usize + len as usize])
            }
            _ => Err(Error::UnknownId(id as u64)),
        }
    }

    /// The tail (bytes after the first 8) of a token known to exist.
    #[inline(always)]
    fn tail(&self, id: Rank) -> &[u8] {
        let (off, len) = self.spans[id as usize];
        &self.arena[off as usize + 8..(off + len) as usize]
    }

    #[inline(always)]
    fn find(&self, b: &[u8], head: u64, h: u64) -> Option<Rank> {
        if (9..=16).contains(&b.len()) {
            let (lo, hi) = words16(b);
            return self.table16.find(lo, hi, b.len(), h);
        }
        self.table.find(b, head, h, |id| self.tail(id))
    }

    pub fn lookup(&self, bytes: &[u8]) -> Option<Rank> {
        if bytes.is_empty() {
            return None;
        }
        let head = head(bytes);
        self.find(bytes, head, hash_bytes(bytes, head))
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// One past the largest id.
    pub fn id_bound(&self) -> usize {
        self.spans.len()
    }

    /// The length in bytes of token `id` (`token_bytes(id)?.len()`, from a table one byte a
    /// token for all but the longest tokens).
    #[inline(always)]
    pub fn token_len(&self, id: Rank) -> Result<usize> {
        match self.lens.get(id as usize) {
            Some(&n) if n != LONG_OR_UNUSED => Ok(n as usize),
            _ => self.token_bytes(id).map(<[u8]>::len),
        }
    }

    #[inline(always)]
    fn is_direct(&self, id: Rank) -> bool {
        match &self.direct {
            None => true,
            Some(d) => d[id as usize],
        }
    }

    /// Appends the ids of one piece to `out`.
    pub fn encode_piece(&self, piece: &[u8], out: &mut Vec<Rank>) {
        self.encode_piece_cached(piece, None, out)
    }

    /// Appends the ids of one piece to `out`, looking up and filling `cache` for pieces that are
    /// not one token.
    ///
    /// The warm path: a piece of 1 to 8 bytes that is one token (most pieces) is
    /// hashed from its one head word, probed and pushed here, inlined into the caller's loop;
    /// everything else goes to `encode_piece_slow`, out of line, so that the common case keeps
    /// its registers (an out-of-line call for every piece saved and restored six of them).
    #[inline(always)]
    pub fn encode_piece_cached(
        &self,
        piece: &[u8],
        cache: Option<&PieceCache>,
        out: &mut Vec<Rank>,
    ) {
        let n = piece.len();
        if n.wrapping_sub(1) < 8 {
            let head = head(piece);
            let h = hash_short(head, n);
            if let Some(id) = self.table.find_short(head, n, h) {
                if self.is_direct(id) {
                    out.push(id);
                    return;
                }
            }
        }
        self.encode_piece_slow(piece, cache, out)
    }

    /// Asks for the token slot and the piece cache's bucket of a piece of 1 to 16 bytes hashed to
    /// `h` (as `ahead` does).
    #[inline(always)]
    pub(crate) fn prefetch_short(&self, n: usize, h: u64, cache: Option<&PieceCache>) {
        if n <= 8 {
            self.table.prefetch(h);
        } else {
            self.table16.prefetch(h);
        }
        if let Some(cache) = cache {
            cache.prefetch_short(h);
        }
    }

    /// The queue entry of the piece `text[at..at + n]`: its words and hash are computed, and
    /// the table slots it will be looked up in are asked for ahead of the lookup (`prefetch`).
    #[inline(always)]
    pub(crate) fn ahead(
        &self,
        text: &[u8],
        at: usize,
        n: usize,
        cache: Option<&PieceCache>,
    ) -> Ahead {
        if n.wrapping_sub(1) < inline::Short::MAX_LEN {
            let (lo, hi) = words_at(text, at, n);
            let h = hash_words(lo, hi, n);
            self.prefetch_short(n, h, cache);
            Ahead { at, n, lo, hi, h }
        } else {
            self.ahead_long(text, at, n, cache)
        }
    }

    /// `ahead` for pieces that are empty or longer than 16 bytes (a few in a hundred), out of
    /// line. Pieces of 17 to 32 bytes are hashed and their slots asked for; the others are
    /// left to `encode_piece_slow`.
    #[inline(never)]
    fn ahead_long(&self, text: &[u8], at: usize, n: usize, cache: Option<&PieceCache>) -> Ahead {
        if !(inline::Short::MAX_LEN + 1..=inline::Medium::MAX_LEN).contains(&n) {
            return Ahead {
                at,
                n,
                lo: 0,
                hi: 0,
                h: 0,
            };
        }
        let w = words32_at(text, at, n);
        let h = hash_words32(&w, n);
        self.table.prefetch(h);
        if let Some(c) = cache {
            c.prefetch_medium(h);
        }
        let (lo, hi) = (w[0], w[1]);
        Ahead { at, n, lo, hi, h }
    }

    /// Appends the ids of a piece queued by `ahead`. A piece of 1 to 16 bytes that is one token
    /// (most pieces) is pushed here, inlined into the caller's loop; the rest goes to
    /// `encode_ahead_slow`, out of line.
    #[inline(always)]
    pub(crate) fn encode_ahead(
        &self,
        text: &[u8],
        a: Ahead,
        cache: Option<&PieceCache>,
        out: &mut Vec<Rank>,
    ) {
        // Pieces of 9 to 16 bytes (a tenth of prose's, seven in ten of them one token) too:
        // the call out of line was most of what they cost once their slot had arrived.
        let token = if a.n.wrapping_sub(1) < 8 {
            self.table.find_short(a.lo, a.n, a.h)
        } else if a.n.wrapping_sub(9) < 8 {
            self.table16.find(a.lo, a.hi, a.n, a.h)
        } else {
            None
        };
        if let Some(id) = token {
            if self.is_direct(id) {
                out.push(id);
                return;
            }
        }
        self.encode_ahead_slow(text, a, cache, out)
    }

    /// `encode_ahead` for pieces that are not one token of up to 16 bytes: pieces of up to 32
    /// bytes are found by their words, in the token tables and then in the piece cache's
    /// inline tables (their slots were asked for by `ahead`); longer ones go to
    /// `encode_piece_slow`.
    #[inline(never)]
    fn encode_ahead_slow(
        &self,
        text: &[u8],
        a: Ahead,
        cache: Option<&PieceCache>,
        out: &mut Vec<Rank>,
    ) {
        let Ahead { at, n, lo, hi, h } = a;
        let piece = &text[at..at + n];
        if n.wrapping_sub(1) >= inline::Medium::MAX_LEN {
            return self.encode_piece_slow(piece, cache, out);
        }
        let short = n <= inline::Short::MAX_LEN;
        let token = match n {
            ..=16 => None, // `encode_ahead` looked
            _ => self.table.find(piece, lo, h, |id| self.tail(id)),
        };
        if let Some(id) = token {
            if self.is_direct(id) {
                out.push(id);
                return;
            }
        }
        match cache {
            Some(cache) => {
                let hit = if short {
                    cache.get_short(lo, hi, n, h, out)
                } else {
                    // Loaded again from the text rather than kept in `Ahead`, which would grow
                    // every queue entry for a few pieces in a hundred.
                    cache.get_medium(&words32_at(text, at, n), n, h, out)
                };
                if hit {
                    return;
                }
                if !cache.get_long(piece, lo, h, out) {
                    let start = out.len();
                    self.encode_by_merges(piece, out);
                    cache.insert(piece, h, start, out);
                }
            }
            None => self.encode_by_merges(piece, out),
        }
    }

    /// `encode_piece_cached` for pieces that are empty, longer than 8 bytes, or not one token.
    #[inline(never)]
    fn encode_piece_slow(&self, piece: &[u8], cache: Option<&PieceCache>, out: &mut Vec<Rank>) {
        if piece.is_empty() {
            return;
        }
        if self.merges_only(piece.len()) {
            // No token, and not cached: no hash (a pass over a piece of many MB).
            return self.encode_by_merges(piece, out);
        }
        let head = head(piece);
        let h = hash_bytes(piece, head);
        if piece.len() > 8 {
            if let Some(id) = self.find(piece, head, h) {
                if self.is_direct(id) {
                    out.push(id);
                    return;
                }
            }
        }
        match cache {
            Some(cache) if piece.len() < LONG_PIECE => {
                if cache.get_into(piece, head, h, out) {
                    return;
                }
                let start = out.len();
                self.encode_by_merges(piece, out);
                cache.insert(piece, h, start, out);
            }
            _ => self.encode_by_merges(piece, out),
        }
    }

    /// Whether a piece of `n` bytes goes to `encode_by_merges` whole: longer than every token,
    /// and too long for the piece cache.
    #[inline(always)]
    fn merges_only(&self, n: usize) -> bool {
        n >= LONG_PIECE && n > self.longest
    }

    /// The number of ids `encode_long` gives a piece that `merges_only` sends to the merges,
    /// without writing them (a count of 32 MB of one letter wrote 16 MB of ids into fresh pages
    /// every call); `None` for models that are not monotone (the heap writes them).
    fn count_long(&self, piece: &[u8]) -> Option<usize> {
        debug_assert!(self.merges_only(piece.len()));
        if !self.monotone {
            return None;
        }
        if uniform::is_uniform(piece) {
            if let Some(k) = self.count_uniform(piece) {
                return Some(k);
            }
        }
        Some(self.count_long_monotone(piece))
    }

    /// Encodes by merges alone, without the whole-piece lookup.
    fn encode_by_merges(&self, piece: &[u8], out: &mut Vec<Rank>) {
        if piece.len() < 2 {
            out.extend(piece.iter().map(|&b| self.byte_ids[b as usize]));
        } else if piece.len() < LONG_PIECE {
            self.encode_short(piece, out)
        } else {
            self.encode_long(piece, out)
        }
    }

    #[inline(always)]
    fn pair(&self, a: Rank, b: Rank) -> u64 {
        self.pairs.get(a, b)
    }

    /// 2 <= piece.len() < LONG_PIECE.
    fn encode_short(&self, piece: &[u8], out: &mut Vec<Rank>) {
        match piece.len() {
            0..=16 => self.encode_short_n::<16>(piece, out),
            17..=32 => self.encode_grouped_n::<32, 4>(piece, out),
            33..=64 => self.encode_grouped_n::<64, 8>(piece, out),
            _ => self.encode_grouped_n::<LONG_PIECE, 16>(piece, out),
        }
    }

    /// A short piece's tokens to merge: its bytes, or, where it has characters of more than
    /// one byte, its atoms already formed.
    #[inline(always)]
    fn short<const N: usize>(&self, piece: &[u8]) -> Short<N> {
        if !piece.is_ascii() {
            if let Some(atoms) = self.atoms() {
                return Short::with_atoms(self, atoms, piece);
            }
        }
        Short::new(self, piece)
    }

    /// The model's atoms, built on first use (`atoms`).
    fn atoms(&self) -> Option<&atoms::Atoms> {
        self.atoms
            .get_or_init(|| atoms::Atoms::build(self))
            .as_ref()
    }

    /// The short path on arrays of `N` (>= piece.len()) on the stack (see `Short`): each round
    /// finds the leftmost lowest priority as the minimum of `merge | position` (merged-away
    /// positions hold `NONE`), in four independent running minima rather than one serial chain
    /// of compares (the scan is on the critical path of every merge).
    #[inline(always)]
    fn encode_short_n<const N: usize>(&self, piece: &[u8], out: &mut Vec<Rank>) {
        let mut s = self.short::<N>(piece);
        // Positions from n - 1 on stay NONE.
        let scan = (s.n - 1).div_ceil(4) * 4;
        let mut left = s.live;
        while left > 1 {
            let best = min4(&s.key[..scan]);
            if best == NONE {
                break;
            }
            s.merge(self, best);
            left -= 1;
        }
        s.emit(out);
    }

    /// The short path for longer pieces: as `encode_short_n`, with the minimum of each group of
    /// 8 keys kept in `low` (`G` = N / 8 groups), so that a merge rescans the (one or two)
    /// groups it changed and the `G` group minima, not all `N` keys.
    #[inline(always)]
    fn encode_grouped_n<const N: usize, const G: usize>(&self, piece: &[u8], out: &mut Vec<Rank>) {
        debug_assert!(G * 8 == N);
        let mut s = self.short::<N>(piece);
        let mut low = [NONE; G];
        let groups = (s.n - 1).div_ceil(8);
        for (g, l) in low.iter_mut().enumerate().take(groups) {
            *l = s.group_min(g);
        }
        let scan = groups.div_ceil(4) * 4;
        let mut left = s.live;
        while left > 1 {
            let best = min4(&low[..scan]);
            if best == NONE {
                break;
            }
            let (h, at, j) = s.merge(self, best);
            left -= 1;
            if h / 8 != at / 8 {
                low[h / 8] = s.group_min(h / 8);
            }
            low[at / 8] = s.group_min(at / 8);
            if j / 8 != at / 8 {
                low[j / 8] = s.group_min(j / 8);
            }
        }
        s.emit(out);
    }

    /// Any length >= 2: linear for monotone models (`long`), else the heap.
    fn encode_long(&self, piece: &[u8], out: &mut Vec<Rank>) {
        if self.monotone {
            if uniform::is_uniform(piece) && self.encode_uniform(piece, out) {
                return;
            }
            self.encode_long_monotone(piece, out)
        } else {
            self.encode_long_heap(piece, out)
        }
    }

    /// Any length >= 2: a heap of packed (priority, position) over a linked list of tokens.
    fn encode_long_heap(&self, piece: &[u8], out: &mut Vec<Rank>) {
        const DEAD: Rank = Rank::MAX;
        let n = piece.len() as u32;
        let mut tok: Vec<Rank> = piece.iter().map(|&b| self.byte_ids[b as usize]).collect();
        let mut next: Vec<u32> = (1..=n).collect(); // n: none
        let mut prev: Vec<u32> = (0..n).map(|i| i.wrapping_sub(1)).collect(); // u32::MAX: none
        let mut heap = QuadHeap::from_vec(
            piece
                .windows(2)
                .enumerate()
                .filter_map(|(i, w)| {
                    let v = self.byte_pairs[(w[0] as usize) << 8 | w[1] as usize];
                    (v != NONE).then_some((priority(v) as u64) << 32 | i as u64)
                })
                .collect(),
        );
        while let Some(entry) = heap.pop() {
            let (p, i) = ((entry >> 32) as u32, entry as u32 as usize);
            let j = next[i];
            if tok[i] == DEAD || j >= n {
                continue;
            }
            let v = self.pair(tok[i], tok[j as usize]);
            if v == NONE || priority(v) != p {
                continue;
            }
            tok[i] = result(v);
            tok[j as usize] = DEAD;
            let k = next[j as usize];
            next[i] = k;
            if k < n {
                prev[k as usize] = i as u32;
                let v = self.pair(tok[i], tok[k as usize]);
                if v != NONE {
                    heap.push((priority(v) as u64) << 32 | i as u64);
                }
            }
            let h = prev[i];
            if h != u32::MAX {
                let v = self.pair(tok[h as usize], tok[i]);
                if v != NONE {
                    heap.push((priority(v) as u64) << 32 | h as u64);
                }
            }
        }
        let mut i = 0;
        while i < n {
            out.push(tok[i as usize]);
            i = next[i as usize];
        }
    }

    /// Whether the tokens `ids`, one after another, are `text` exactly (the segment cache's
    /// check of a hit, once per id of the text: one load from `heads` and one from `lens` per
    /// token of up to 8 bytes, not the two dependent loads of `spans` and `arena`).
    pub(crate) fn spells(&self, ids: &[Rank], text: &[u8]) -> bool {
        let mut at = 0usize;
        for &id in ids {
            let id = id as usize;
            let (Some(&len), Some(&head)) = (self.lens.get(id), self.heads.get(id)) else {
                return false;
            };
            let len = len as usize;
            if len <= 8 && at + 8 <= text.len() {
                // SAFETY: `at + 8 <= text.len()` was just checked.
                let t = unsafe { text.as_ptr().add(at).cast::<u64>().read_unaligned() };
                // Tokens are never empty: `len` is 1 to 8 here.
                if (u64::from_le(t) ^ head) & (u64::MAX >> (64 - 8 * len as u32)) != 0 {
                    return false;
                }
                at += len;
            } else {
                match self.token_bytes(id as Rank) {
                    Ok(b) if text.get(at..at + b.len()) == Some(b) => at += b.len(),
                    _ => return false,
                }
            }
        }
        at == text.len()
    }

    /// Appends the bytes of `ids` to `out`.
    pub fn decode_into(&self, ids: &[Rank], out: &mut Vec<u8>) -> Result<()> {
        for &id in ids {
            out.extend_from_slice(self.token_bytes(id)?);
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Texts

/// What the pre-tokenizer and the special-token matcher hand to encoding and counting.
enum Item<'t> {
    Piece(&'t [u8]),
    Special(Rank),
}

/// How to spread work over threads. `chunk_bytes`: cut texts into chunks of about this size
/// (at independent cuts only) even with one thread; `None` cuts only texts large enough to be
/// worth sharing between threads.
#[derive(Debug, Clone, Copy)]
pub struct Parallel {
    pub threads: usize,
    pub chunk_bytes: Option<usize>,
    /// Whether texts are looked up in, and kept in, the segment cache (`segments`): calls
    /// from users yes; corpus encoding no, since a corpus is read once and its documents
    /// would only take the memory.
    pub segments: bool,
}

impl Parallel {
    pub const SERIAL: Parallel = Parallel {
        threads: 1,
        chunk_bytes: None,
        segments: true,
    };
}

/// A buffer for the ids of `len` bytes of text. Past a few MB the ids go into memory the process
/// has not touched (a fresh mapping each call), asked for in huge pages, with room for one id
/// per 2 bytes: digits make one per 3, and a buffer grown past its first size moves the ids
/// into pages not asked for. 32 MB of one digit, `encode_ordinary` with its list: 95 -> 71 ms
/// (`bpe/NOTES.md`, nineteenth round).
fn ids_buffer(len: usize) -> Vec<Rank> {
    if len < 2 * HUGE_PAGE {
        return Vec::with_capacity(len / 4);
    }
    let out = Vec::with_capacity(len / 2);
    advise_huge_pages(&out);
    out
}

/// Chunks for threads are at least this large, unless asked otherwise.
const MIN_CHUNK: usize = 128 << 10;
/// A call with this much text maps all of the piece cache's short table first
/// (`PieceCache::populate`): 1 MiB of the bench mix already puts pieces in two thirds of its
/// pages (8.7 k short pieces that are not one token, into 8,192 pages).
const POPULATE_BYTES: usize = 1 << 20;
/// Counting with a limit shares its count between chunks every this many tokens.
const COUNT_FLUSH: usize = 1024;

/// A leftmost-longest matcher for a set of special tokens and their ids, by pattern index.
pub(crate) struct Matcher {
    automaton: AhoCorasick,
    ids: Vec<Rank>,
}

/// Text-level encoding: special tokens, pre-tokenization, then BPE per piece.
pub struct Encoder {
    pub bpe: Bpe,
    pretok: Pretokenizer,
    /// Special tokens as (text, id), in the order given.
    specials: Vec<(String, Rank)>,
    special_by_id: FxHashMap<Rank, usize>,
    all_specials: SpecialSplitter,
    /// Leftmost-longest matchers for subsets of the special tokens, keyed by sorted ids.
    matchers: Mutex<FxHashMap<Vec<Rank>, Arc<Matcher>>>,
    /// The piece cache, shared by all threads.
    cache: PieceCache,
    /// Whole texts seen before and their ids, shared by all threads.
    segments: segments::SegmentCache,
    /// Which of a thread's piece tables (`pieces`) is this encoder's: unique to it, and
    /// changed when its caches are emptied.
    id: AtomicU64,
}

/// The next `Encoder::id`.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

impl Encoder {
    pub fn new(bpe: Bpe, pretok: Pretokenizer, specials: Vec<(String, Rank)>) -> Result<Self> {
        let mut special_by_id = FxHashMap::default();
        let mut seen_text = FxHashMap::default();
        for (i, (text, id)) in specials.iter().enumerate() {
            if text.is_empty() {
                return Err(Error::Vocab("a special token is the empty string".into()));
            }
            if let Some(prev) = seen_text.insert(text.as_str(), *id) {
                return Err(Error::Vocab(format!(
                    "special token {text:?} is given twice (ids {prev} and {id})"
                )));
            }
            if let Some(j) = special_by_id.insert(*id, i) {
                return Err(Error::Vocab(format!(
                    "special tokens {:?} and {text:?} share the id {id}",
                    specials[j].0
                )));
            }
            if let Ok(bytes) = bpe.token_bytes(*id) {
                if bytes != text.as_bytes() {
                    return Err(Error::Vocab(format!(
                        "special token {text:?} has id {id}, which the vocabulary already uses for {:?}",
                        String::from_utf8_lossy(bytes)
                    )));
                }
            }
        }
        let texts: Vec<String> = specials.iter().map(|(t, _)| t.clone()).collect();
        let all_specials = SpecialSplitter::new(&texts)?;
        Ok(Encoder {
            bpe,
            pretok,
            specials,
            special_by_id,
            all_specials,
            matchers: Mutex::default(),
            cache: PieceCache::default(),
            segments: segments::SegmentCache::default(),
            id: AtomicU64::new(next_id()),
        })
    }

    pub fn pretokenizer(&self) -> &Pretokenizer {
        &self.pretok
    }

    /// Bytes of a token, special tokens included.
    pub fn token_bytes(&self, id: Rank) -> Result<&[u8]> {
        match self.bpe.token_bytes(id) {
            Ok(b) => Ok(b),
            Err(e) => match self.special_by_id.get(&id) {
                Some(&i) => Ok(self.specials[i].0.as_bytes()),
                None => Err(e),
            },
        }
    }

    /// Empties the piece cache (benchmarks use it to measure encoding from a cold start).
    pub fn clear_cache(&self) {
        self.cache.clear();
        self.segments.clear();
        // The threads' piece tables of the old id are no longer found (and are dropped as
        // other encoders' tables come in).
        self.id.store(next_id(), Ordering::Relaxed);
    }

    /// Sets the segment cache's budget in bytes (0 turns it off) and empties it.
    pub fn set_segment_cache(&self, bytes: usize) {
        self.segments.set_budget(bytes);
    }

    /// The segment cache's budget in bytes (0: off).
    pub fn segment_cache(&self) -> usize {
        self.segments.budget()
    }

    pub(crate) fn matcher(&self, ids: &[Rank]) -> Result<Option<Arc<Matcher>>> {
        if ids.is_empty() {
            return Ok(None);
        }
        let mut sorted = ids.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let mut cache = self.matchers.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = cache.get(&sorted) {
            return Ok(Some(m.clone()));
        }
        let mut texts = Vec::with_capacity(sorted.len());
        for id in &sorted {
            match self.special_by_id.get(id) {
                Some(&i) => texts.push(self.specials[i].0.as_str()),
                None => return Err(Error::Invalid(format!("{id} is not a special token id"))),
            }
        }
        let automaton = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(&texts)
            .map_err(|e| Error::Invalid(format!("special tokens: {e}")))?;
        let m = Arc::new(Matcher {
            automaton,
            ids: sorted.clone(),
        });
        if cache.len() > 64 {
            cache.clear();
        }
        cache.insert(sorted, m.clone());
        Ok(Some(m))
    }

    /// The first occurrence (leftmost, then longest) of one of the special tokens `among`:
    /// (byte offset, id).
    /// True when `text` holds one of the encoder's special tokens.
    pub fn has_special(&self, text: &str) -> bool {
        self.all_specials.occurs_in(text)
    }

    pub fn find_special(&self, text: &str, among: &[Rank]) -> Result<Option<(usize, Rank)>> {
        let Some(m) = self.matcher(among)? else {
            return Ok(None);
        };
        Ok(m.automaton
            .find(text)
            .map(|hit| (hit.start(), m.ids[hit.pattern().as_usize()])))
    }

    /// The pattern and special tokens, which say where a text can be cut without changing
    /// its ids (`count::file_cuts`).
    pub(crate) fn cut_rules(&self) -> (&Pretokenizer, &SpecialSplitter) {
        (&self.pretok, &self.all_specials)
    }

    /// The length of the longest prefix of `text` that can be encoded on its own and give the
    /// same ids as it does as part of `text` followed by anything (0 if none is known).
    pub fn safe_prefix(&self, text: &str) -> usize {
        let margin = self.all_specials.max_len();
        let limit = text.len().saturating_sub(margin + 1);
        cut_before(&self.pretok, &self.all_specials, text.as_bytes(), 0, limit).unwrap_or(0)
    }

    /// Calls `f` with each piece and each special token (of `matcher`) of `text`, in order.
    fn walk<'t, B>(
        &self,
        text: &'t str,
        matcher: Option<&Matcher>,
        mut f: impl FnMut(Item<'t>) -> ControlFlow<B>,
    ) -> Result<ControlFlow<B>> {
        let Some(m) = matcher else {
            return self.pretok.try_for_each_piece_bytes(
                text,
                #[inline(always)]
                |p| f(Item::Piece(p)),
            );
        };
        let mut start = 0;
        for hit in m.automaton.find_iter(text) {
            let flow = self.pretok.try_for_each_piece_bytes(
                &text[start..hit.start()],
                #[inline(always)]
                |p| f(Item::Piece(p)),
            )?;
            if flow.is_break() {
                return Ok(flow);
            }
            if let ControlFlow::Break(b) = f(Item::Special(m.ids[hit.pattern().as_usize()])) {
                return Ok(ControlFlow::Break(b));
            }
            start = hit.end();
        }
        self.pretok.try_for_each_piece_bytes(
            &text[start..],
            #[inline(always)]
            |p| f(Item::Piece(p)),
        )
    }

    /// `encode_chunk` through the segment cache when `segments` is set: a text without
    /// special tokens to match, of a size the cache takes, is looked up whole first, and kept
    /// with its ids when it was not there.
    pub(crate) fn encode_text(
        &self,
        text: &str,
        matcher: Option<&Matcher>,
        out: &mut Vec<Rank>,
        segments: bool,
    ) -> Result<()> {
        if !segments || matcher.is_some() || !self.segments.takes(text.len()) {
            return self.encode_chunk(text, matcher, out);
        }
        let h = segments::hash_text(text.as_bytes());
        // Kept without the text: the ids of ordinary text spell it, byte for byte.
        if self
            .segments
            .get_spelled(h, out, |ids| self.bpe.spells(ids, text.as_bytes()))
        {
            return Ok(());
        }
        let start = out.len();
        self.encode_chunk(text, None, out)?;
        self.segments.insert_spelled(h, &out[start..]);
        Ok(())
    }

    pub(crate) fn encode_chunk(
        &self,
        text: &str,
        matcher: Option<&Matcher>,
        out: &mut Vec<Rank>,
    ) -> Result<()> {
        let go_on = |_: &mut Vec<Rank>| ControlFlow::<()>::Continue(());
        if let Some(r) = self.walk_pieces(text, matcher, out, None, go_on) {
            return r.map(drop);
        }
        self.walk_encoding(
            text,
            matcher,
            out,
            #[inline(always)]
            |_| ControlFlow::<()>::Continue(()),
        )
        .map(drop)
    }

    /// Encodes `text` (under 4 GiB) into `out` a block of pieces at a time, through this
    /// thread's piece table (`pieces`), calling `after` with `out` after each block and each
    /// special token `matcher` finds; a break stops the walk. `None` where this thread's table
    /// is in use further up its stack (then `walk_encoding` does it). With `counted`, the ids
    /// of pieces that go to the merges whole (`Bpe::count_long`) are added to it, not written.
    fn walk_pieces<B>(
        &self,
        text: &str,
        matcher: Option<&Matcher>,
        out: &mut Vec<Rank>,
        counted: Option<&Cell<usize>>,
        mut after: impl FnMut(&mut Vec<Rank>) -> ControlFlow<B>,
    ) -> Option<Result<ControlFlow<B>>> {
        if text.len() > u32::MAX as usize {
            return None;
        }
        pieces::with_local(|local| {
            let pieces::Local { tables, cuts } = local;
            let table = pieces::table(tables, self.id.load(Ordering::Relaxed));
            let bytes = text.as_bytes();
            let mut n = 0usize;
            let flow = self.walk(
                text,
                matcher,
                #[inline(always)]
                |item| match item {
                    Item::Piece(p) => {
                        // Where the piece is in `text` (`walk` hands out slices of it).
                        let at = p.as_ptr() as usize - bytes.as_ptr() as usize;
                        let len = p.len();
                        let cut = if len.wrapping_sub(1) < pieces::MAX_LEN {
                            let (lo, hi) = words_at(bytes, at, len);
                            let hash = hash_words(lo, hi, len);
                            table.prefetch(hash);
                            pieces::Cut {
                                key: pieces::key(lo, hi, len),
                                hash,
                                at: at as u32,
                                n: len as u32,
                            }
                        } else if (pieces::MAX_LEN + 1..=pieces::MAX_RUN).contains(&len)
                            && bytes[at] == bytes[at + len - 1]
                            && uniform::is_uniform(p)
                        {
                            let (key, hash) = pieces::uniform(bytes[at], len);
                            table.prefetch(hash);
                            pieces::Cut {
                                key,
                                hash,
                                at: at as u32,
                                n: len as u32,
                            }
                        } else {
                            pieces::Cut {
                                key: pieces::NO_KEY,
                                hash: 0,
                                at: at as u32,
                                n: len as u32,
                            }
                        };
                        // SAFETY: `n < BLOCK`, and `cuts` holds more.
                        unsafe { *cuts.get_unchecked_mut(n) = cut };
                        n += 1;
                        if n < pieces::BLOCK {
                            return ControlFlow::Continue(());
                        }
                        self.lookup_block(table, cuts, n, bytes, out, counted);
                        n = 0;
                        after(out)
                    }
                    Item::Special(id) => {
                        self.lookup_block(table, cuts, n, bytes, out, counted);
                        n = 0;
                        out.push(id);
                        after(out)
                    }
                },
            )?;
            if flow.is_break() {
                return Ok(flow);
            }
            self.lookup_block(table, cuts, n, bytes, out, counted);
            Ok(after(out))
        })
    }

    #[inline(always)]
    fn lookup_block(
        &self,
        table: &mut pieces::Table,
        cuts: &[pieces::Cut],
        n: usize,
        text: &[u8],
        out: &mut Vec<Rank>,
        counted: Option<&Cell<usize>>,
    ) {
        // The shared piece cache serves a piece one thread merged to the others: on a thread
        // of a pool (a call on several threads). A call on one thread has every short piece it
        // merged in its own table already, and a lookup and an insert there cost a new piece
        // two more cold lines (a first pass over prose: 195 against 260 MB/s). Longer pieces
        // have no entries in the threads' tables: the shared cache keeps them.
        let shared = rayon::current_thread_index().map(|_| &self.cache);
        pieces::lookup_block(
            table,
            cuts,
            n,
            out,
            |c| self.piece_peek(c, text, shared),
            |t, c, out| self.piece_slow(t, c, text, shared, out, counted),
        );
    }

    /// Asks for the lines the token table and the piece cache will be read at for a piece
    /// that is not in its home slot of the piece table (see `Bpe::ahead`).
    #[inline(always)]
    fn piece_peek(&self, c: &pieces::Cut, text: &[u8], shared: Option<&PieceCache>) {
        if c.n as usize <= pieces::MAX_LEN {
            self.bpe.prefetch_short(c.n as usize, c.hash, shared);
        } else {
            let _ = self
                .bpe
                .ahead(text, c.at as usize, c.n as usize, Some(&self.cache));
        }
    }

    /// Encodes `piece` (not in the thread's table) as its parts between the atoms that no token
    /// joins (`Atoms::joined`), each part of up to `pieces::MAX_LEN` bytes looked up in (and put
    /// in) the thread's table: a run of CJK text is a piece of its own, seldom seen twice, but
    /// its words come again and again. False, with nothing written, when there is no such cut.
    fn encode_cut(
        &self,
        table: &mut pieces::Table,
        atoms: &atoms::Atoms,
        piece: &[u8],
        out: &mut Vec<Rank>,
    ) -> bool {
        let mut start = 0;
        // The last character's code point and token (`atoms::NONE` if it is not an atom), when
        // its edges are clear here, and whether the part so far is that one character.
        let mut last: Option<(u32, Rank)> = None;
        let mut single = false;
        let mut i = 0;
        while i < piece.len() {
            let here = match piece[i] {
                0xC2..=0xEF => atoms.edge_at(piece, i),
                _ => None,
            };
            match here {
                Some((id, k, cp)) => {
                    if let Some((l, lid)) = last {
                        if !atoms.joined(l, cp) {
                            match single && lid != atoms::NONE {
                                true => out.push(lid),
                                false => self.encode_part(table, &piece[start..i], out),
                            }
                            start = i;
                        }
                    }
                    single = start == i;
                    last = Some((cp, id));
                    i += k;
                }
                None => {
                    last = None;
                    single = false;
                    i += 1;
                }
            }
        }
        if start == 0 {
            return false;
        }
        match (single, last) {
            (true, Some((_, id))) if id != atoms::NONE => out.push(id),
            _ => self.encode_part(table, &piece[start..], out),
        }
        true
    }

    /// A piece that is one character of 2 or 3 bytes three times or more (`"é" * n`), where
    /// `encode_cut` would cut it at every character: its ids are one character's, `n` times,
    /// made once and copied (or, with `counted`, counted without being written: a count of
    /// 32 MB of `"é"` wrote 64 MB of ids it then threw away). False, with nothing written,
    /// for any other piece.
    fn encode_char_run(
        &self,
        table: &mut pieces::Table,
        atoms: &atoms::Atoms,
        piece: &[u8],
        out: &mut Vec<Rank>,
        counted: Option<&Cell<usize>>,
    ) -> bool {
        let k = match piece[0] {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            _ => return false,
        };
        let copies = piece.len() / k;
        // one character repeated: the piece equals itself shifted by one character
        if copies < 3 || piece.len() % k != 0 || piece[k..] != piece[..piece.len() - k] {
            return false;
        }
        // The second copy, between two others: its edges clear there (so at every copy, the
        // first and last having one neighbour of the same kind), and no token holds two
        // copies side by side: `encode_cut` cuts before each copy and encodes it alone.
        let Some((id, _, cp)) = atoms.edge_at(piece, k) else {
            return false;
        };
        if atoms.joined(cp, cp) {
            return false;
        }
        let start = out.len();
        if id != atoms::NONE {
            out.push(id);
        } else {
            self.encode_part(table, &piece[..k], out);
        }
        let one = out.len() - start;
        if let Some(counted) = counted {
            counted.set(counted.get() + one * copies);
            out.truncate(start);
            return true;
        }
        if one == 1 {
            out.resize(start + copies, out[start]);
        } else {
            out.reserve(one * (copies - 1));
            for _ in 1..copies {
                out.extend_from_within(start..start + one);
            }
        }
        true
    }

    /// One part of `encode_cut`: by merges alone (a part that is a token the merges cannot
    /// make is not that token, as a whole piece would be), kept in the thread's table under a
    /// key of its own (`pieces::PART`).
    fn encode_part(&self, table: &mut pieces::Table, part: &[u8], out: &mut Vec<Rank>) {
        let n = part.len();
        if n > pieces::MAX_LEN {
            return self.bpe.encode_by_merges(part, out);
        }
        let (lo, hi) = words16(part);
        let (key, h) = (pieces::key(lo, hi, n) | pieces::PART, hash_words(lo, hi, n));
        if let Err(free) = table.find(key, h, out) {
            let start = out.len();
            self.bpe.encode_by_merges(part, out);
            table.insert(key, h, free, &out[start..]);
        }
    }

    /// A piece `pieces::lookup_block` did not find in its home slot: found elsewhere in the
    /// table, or encoded and put there (pieces of 16 bytes or more are not kept there); with
    /// `counted`, a piece the merges take whole is counted there instead (`walk_pieces`).
    #[inline(never)]
    fn piece_slow(
        &self,
        table: &mut pieces::Table,
        c: &pieces::Cut,
        text: &[u8],
        shared: Option<&PieceCache>,
        out: &mut Vec<Rank>,
        counted: Option<&Cell<usize>>,
    ) {
        let (at, n) = (c.at as usize, c.n as usize);
        if c.key != pieces::NO_KEY && n > pieces::MAX_LEN {
            // A run of one byte (`pieces::uniform`), under its own key: encoded as any long piece.
            if let Err(free) = table.find(c.key, c.hash, out) {
                let start = out.len();
                let cache = Some(&self.cache);
                let a = self.bpe.ahead(text, at, n, cache);
                self.bpe.encode_ahead(text, a, cache, out);
                table.insert(c.key, c.hash, free, &out[start..]);
            }
            return;
        }
        if c.key == pieces::NO_KEY {
            let piece = &text[at..at + n];
            if !piece.is_ascii() {
                if let Some(atoms) = self.bpe.atoms() {
                    if self.encode_char_run(table, atoms, piece, out, counted) {
                        return;
                    }
                    // Before any count: a long run of CJK text merged whole took 3 times
                    // what its parts took through the table.
                    if self.encode_cut(table, atoms, piece, out) {
                        return;
                    }
                }
            }
            // Counted after the cut: a piece of one repeated byte, which `count_long` counts
            // from its runs, is ASCII and never cut.
            if let Some(counted) = counted.filter(|_| self.bpe.merges_only(n)) {
                if let Some(k) = self.bpe.count_long(piece) {
                    counted.set(counted.get() + k);
                    return;
                }
            }
            // Not kept in the thread's table: the shared piece cache keeps it.
            let cache = Some(&self.cache);
            let a = self.bpe.ahead(text, at, n, cache);
            return self.bpe.encode_ahead(text, a, cache, out);
        }
        if let Err(free) = table.find(c.key, c.hash, out) {
            let start = out.len();
            let piece = &text[at..at + n];
            if n > 5 && !piece.is_ascii() {
                if let Some(atoms) = self.bpe.atoms() {
                    if self.encode_cut(table, atoms, piece, out) {
                        // The parts' entries may have moved the free slot.
                        if let Err(free) = table.find(c.key, c.hash, &mut Vec::new()) {
                            table.insert(c.key, c.hash, free, &out[start..]);
                        }
                        return;
                    }
                }
            }
            let (lo, hi) = c.words();
            let h = c.hash;
            self.bpe
                .encode_ahead(text, Ahead { at, n, lo, hi, h }, shared, out);
            table.insert(c.key, c.hash, free, &out[start..]);
        }
    }

    /// Encodes `text` into `out` through the queue (`Queue`: each piece's table slots are
    /// prefetched `AHEAD` pieces before it is looked up), calling `after` with `out` after each
    /// piece or special token is queued; a break stops the walk (queued pieces are then left
    /// out of `out`).
    fn walk_encoding<B>(
        &self,
        text: &str,
        matcher: Option<&Matcher>,
        out: &mut Vec<Rank>,
        mut after: impl FnMut(&mut Vec<Rank>) -> ControlFlow<B>,
    ) -> Result<ControlFlow<B>> {
        let cache = Some(&self.cache);
        let bytes = text.as_bytes();
        let mut queue = Queue::default();
        let flow = self.walk(
            text,
            matcher,
            #[inline(always)]
            |item| {
                match item {
                    Item::Piece(p) => {
                        // Where the piece is in `text` (`walk` hands out slices of it).
                        let at = p.as_ptr() as usize - bytes.as_ptr() as usize;
                        let a = self.bpe.ahead(bytes, at, p.len(), cache);
                        queue.push(&self.bpe, bytes, a, cache, out);
                    }
                    Item::Special(id) => {
                        queue.drain(&self.bpe, bytes, cache, out);
                        out.push(id)
                    }
                }
                after(out)
            },
        )?;
        if flow.is_continue() {
            queue.drain(&self.bpe, bytes, cache, out);
        }
        Ok(flow)
    }

    /// Counts the tokens of `text` into `total`; with a limit, stops once `total` exceeds it.
    fn count_chunk(
        &self,
        text: &str,
        matcher: Option<&Matcher>,
        total: &AtomicUsize,
        limit: Option<usize>,
    ) -> Result<()> {
        // The ids are made into `ids`, which is emptied as they are counted; those of pieces
        // the merges take whole are counted into `long` without being made.
        let mut ids: Vec<Rank> = Vec::with_capacity(2 * COUNT_FLUSH);
        let long = Cell::new(0usize);
        let mut local = 0usize;
        let mut seen = 0usize; // what `total` was at the last look
        let mut step = |ids: &mut Vec<Rank>| {
            if ids.len() >= COUNT_FLUSH {
                local += ids.len();
                ids.clear();
            }
            local += long.take();
            if let Some(limit) = limit {
                let now = local + ids.len();
                if now >= COUNT_FLUSH || seen + now > limit {
                    seen = total.fetch_add(now, Ordering::Relaxed) + now;
                    local = 0;
                    ids.clear();
                    if seen > limit {
                        // What is counted is in `total`; the queued pieces need not be.
                        return ControlFlow::Break(());
                    }
                }
            }
            ControlFlow::Continue(())
        };
        match self.walk_pieces(text, matcher, &mut ids, Some(&long), &mut step) {
            Some(r) => r.map(drop)?,
            None => self
                .walk_encoding(text, matcher, &mut ids, &mut step)
                .map(drop)?,
        }
        total.fetch_add(local + long.get() + ids.len(), Ordering::Relaxed);
        Ok(())
    }

    /// Encodes text with no special tokens.
    pub fn encode_ordinary_into(&self, text: &str, out: &mut Vec<Rank>) -> Result<()> {
        self.encode_text(text, None, out, true)
    }

    /// Encodes text in which the special tokens `allowed` become their ids.
    pub fn encode_into(&self, text: &str, allowed: &[Rank], out: &mut Vec<Rank>) -> Result<()> {
        let m = self.matcher(allowed)?;
        self.encode_text(text, m.as_deref(), out, true)
    }

    /// `text` cut into chunks of about `size` bytes where encoding them one by one gives the
    /// ids of the whole (see `count::chunks`).
    pub fn chunks<'t>(&self, text: &'t str, size: usize) -> Vec<&'t str> {
        chunks(&self.pretok, &self.all_specials, text, size)
    }

    /// The chunks of every text, as (text index, chunk), for `par`. A call of `POPULATE_BYTES`
    /// or more readies the piece cache first (`PieceCache::populate`): every call that
    /// encodes or counts many texts starts here.
    pub(crate) fn work<'t>(&self, texts: &[&'t str], par: Parallel) -> Vec<(usize, &'t str)> {
        let total: usize = texts.iter().map(|t| t.len()).sum();
        if total >= POPULATE_BYTES && par.threads > 1 {
            self.cache.populate();
        }
        let size = match par.chunk_bytes {
            Some(size) => Some(size),
            None if par.threads > 1 && total >= 2 * MIN_CHUNK => {
                Some((total / (4 * par.threads)).max(MIN_CHUNK))
            }
            None => None,
        };
        let mut work = Vec::with_capacity(texts.len());
        for (i, t) in texts.iter().enumerate() {
            match size {
                Some(size) if t.len() > size => {
                    work.extend(self.chunks(t, size).into_iter().map(|c| (i, c)))
                }
                _ => work.push((i, *t)),
            }
        }
        work
    }

    /// Encodes each text; the special tokens `allowed` become their ids.
    pub fn encode_texts(
        &self,
        texts: &[&str],
        allowed: &[Rank],
        par: Parallel,
    ) -> Result<Vec<Vec<Rank>>> {
        let matcher = self.matcher(allowed)?;
        let m = matcher.as_deref();
        let work = self.work(texts, par);
        if work.len() == texts.len() {
            // One piece of work per text: each text's ids are its own.
            let one = |t: &&str| {
                let mut out = ids_buffer(t.len());
                self.encode_text(t, m, &mut out, par.segments).map(|_| out)
            };
            return crate::threads::run(par.threads, || {
                if par.threads == 1 {
                    texts.iter().map(one).collect()
                } else {
                    texts.par_iter().map(one).collect()
                }
            })?;
        }
        let one = |&(_, c): &(usize, &str)| {
            let mut out = ids_buffer(c.len());
            self.encode_text(c, m, &mut out, par.segments).map(|_| out)
        };
        let parts: Vec<Vec<Rank>> = crate::threads::run(par.threads, || {
            if par.threads == 1 {
                work.iter().map(one).collect::<Result<_>>()
            } else {
                work.par_iter().map(one).collect::<Result<_>>()
            }
        })??;
        let mut out: Vec<Vec<Rank>> = vec![Vec::new(); texts.len()];
        for ((i, _), ids) in work.iter().zip(parts) {
            if out[*i].is_empty() {
                out[*i] = ids;
            } else {
                out[*i].extend_from_slice(&ids);
            }
        }
        Ok(out)
    }

    /// The number of tokens of each text, as `encode_texts` would give them; with a limit,
    /// `min(count, limit + 1)`, and counting a text stops as soon as it exceeds the limit.
    pub fn count_texts(
        &self,
        texts: &[&str],
        allowed: &[Rank],
        limit: Option<usize>,
        par: Parallel,
    ) -> Result<Vec<usize>> {
        let matcher = self.matcher(allowed)?;
        let m = matcher.as_deref();
        let work = self.work(texts, par);
        let totals: Vec<AtomicUsize> = texts.iter().map(|_| AtomicUsize::new(0)).collect();
        let one = |&(i, c): &(usize, &str)| {
            if let Some(limit) = limit {
                if totals[i].load(Ordering::Relaxed) > limit {
                    return Ok(()); // another chunk of this text already went past the limit
                }
            }
            self.count_chunk(c, m, &totals[i], limit)
        };
        crate::threads::run(par.threads, || {
            if par.threads == 1 {
                work.iter().try_for_each(one)
            } else {
                work.par_iter().try_for_each(one)
            }
        })??;
        Ok(totals
            .into_iter()
            .map(|t| {
                let n = t.into_inner();
                limit.map_or(n, |limit| n.min(limit.saturating_add(1)))
            })
            .collect())
    }

    pub fn decode_into(&self, ids: &[Rank], out: &mut Vec<u8>) -> Result<()> {
        for &id in ids {
            out.extend_from_slice(self.token_bytes(id)?);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `encode_chunk`'s path for one piece: `text[at..at + n]` queued, then encoded.
    fn encode_at(
        bpe: &Bpe,
        text: &[u8],
        at: usize,
        n: usize,
        cache: Option<&PieceCache>,
        out: &mut Vec<Rank>,
    ) {
        bpe.encode_ahead(text, bpe.ahead(text, at, n, cache), cache, out)
    }

    /// A seeded linear congruential generator: `rand(m)` is in `0..m`.
    fn lcg(mut seed: u64) -> impl FnMut(u64) -> u64 {
        move |m| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % m
        }
    }

    fn byte_vocab() -> Vec<(Rank, Vec<u8>)> {
        (0..=255u8).map(|b| (b as Rank, vec![b])).collect()
    }

    /// Merges (a, b) -> "ab" 256, (a, a) -> "aa" 257, (aa, b) -> "aab" 258.
    fn small() -> Bpe {
        let mut v = byte_vocab();
        v.push((256, b"ab".to_vec()));
        v.push((257, b"aa".to_vec()));
        v.push((258, b"aab".to_vec()));
        Bpe::from_merges(v, &[(97, 98), (97, 97), (257, 98)]).unwrap()
    }

    fn enc(bpe: &Bpe, s: &[u8]) -> Vec<Rank> {
        let mut out = Vec::new();
        bpe.encode_piece(s, &mut out);
        out
    }

    #[test]
    fn priority_then_leftmost() {
        let bpe = small();
        // "aab": (a,b) has priority 0 and wins over (a,a): a + ab. "aab" (258) is a token, but
        // these merges never make it, so it is not emitted by whole-piece lookup either.
        assert_eq!(enc(&bpe, b"aab"), vec![97, 256]);
        assert_eq!(enc(&bpe, b"aaab"), vec![257, 256]);
        assert_eq!(enc(&bpe, b"aaaa"), vec![257, 257]);
        assert_eq!(enc(&bpe, b"xaaa"), vec![120, 257, 97]);
    }

    /// The textbook loop: merge the leftmost lowest pair until none is left (also the oracle
    /// of `long`'s tests).
    pub(super) fn naive(bpe: &Bpe, piece: &[u8]) -> Vec<Rank> {
        let mut ids: Vec<Rank> = piece.iter().map(|&b| bpe.byte_ids[b as usize]).collect();
        loop {
            let best = (0..ids.len().saturating_sub(1))
                .map(|i| (bpe.pair(ids[i], ids[i + 1]), i))
                .min()
                .filter(|&(v, _)| v != NONE);
            let Some((v, i)) = best else { return ids };
            ids[i] = result(v);
            ids.remove(i + 1);
        }
    }

    #[test]
    fn short_and_long_paths_match_the_textbook_loop() {
        let bpe = small();
        let mut seed: u64 = 12345;
        for _ in 0..400 {
            let n = 2 + (seed % 300) as usize;
            let piece: Vec<u8> = (0..n)
                .map(|_| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    [b'a', b'b', b'x'][(seed >> 33) as usize % 3]
                })
                .collect();
            let expected = naive(&bpe, &piece);
            let mut long = Vec::new();
            bpe.encode_long(&piece, &mut long);
            assert_eq!(long, expected);
            if n < LONG_PIECE {
                let mut short = Vec::new();
                bpe.encode_short(&piece, &mut short);
                assert_eq!(short, expected);
            }
            assert_eq!(enc(&bpe, &piece), expected);
        }
    }

    #[test]
    fn tokens_the_merges_cannot_make_are_not_emitted_whole() {
        // "abc" is in the vocabulary via (ab, c), but (b, c) comes first, so "abc" never forms.
        let mut v = byte_vocab();
        v.push((256, b"bc".to_vec()));
        v.push((257, b"ab".to_vec()));
        v.push((258, b"abc".to_vec()));
        let bpe = Bpe::from_merges(v, &[(98, 99), (97, 98), (257, 99)]).unwrap();
        assert_eq!(enc(&bpe, b"abc"), vec![97, 256]);
        assert_eq!(enc(&bpe, b"ab"), vec![257]);
    }

    #[test]
    fn bad_vocabularies_are_errors() {
        let mut v = byte_vocab();
        v.pop();
        assert!(Bpe::from_merges(v, &[]).is_err());
        assert!(Bpe::from_merges(byte_vocab(), &[(97, 98)]).is_err());
        assert!(Bpe::from_merges(byte_vocab(), &[(97, 999)]).is_err());
        // Priorities must fit a `Merge`: a rank that does not is refused, by name.
        let mut v = byte_vocab();
        v.push((PRIORITY_BOUND as Rank, b"ab".to_vec()));
        let err = Bpe::from_ranks(v).unwrap_err().to_string();
        assert!(err.contains(&PRIORITY_BOUND.to_string()), "{err}");
        let mut v = byte_vocab();
        v.push((PRIORITY_BOUND as Rank - 1, b"ab".to_vec()));
        assert!(!matches!(Bpe::from_ranks(v), Err(e) if e.to_string().contains("too large")));
    }

    #[test]
    fn ranks_merge_by_result_rank() {
        let mut v = byte_vocab();
        v.push((300, b"ab".to_vec()));
        v.push((301, b"bc".to_vec()));
        v.push((302, b"abc".to_vec()));
        let bpe = Bpe::from_ranks(v).unwrap();
        assert_eq!(enc(&bpe, b"abcab"), vec![302, 300]);
        assert_eq!(enc(&bpe, b"bcab"), vec![301, 300]);
    }

    /// tiktoken's definition: a piece that is a token is that token; otherwise merge the
    /// leftmost pair whose concatenation has the lowest rank, looked up by bytes.
    fn naive_ranks(ranks: &FxHashMap<Vec<u8>, Rank>, piece: &[u8]) -> Vec<Rank> {
        if let Some(&r) = ranks.get(piece) {
            return vec![r];
        }
        let mut parts: Vec<Vec<u8>> = piece.iter().map(|&b| vec![b]).collect();
        loop {
            let best = (0..parts.len().saturating_sub(1))
                .filter_map(|i| {
                    ranks
                        .get(&[&parts[i][..], &parts[i + 1][..]].concat())
                        .map(|&r| (r, i))
                })
                .min();
            let Some((_, i)) = best else { break };
            let right = parts.remove(i + 1);
            parts[i].extend_from_slice(&right);
        }
        parts.iter().map(|p| ranks[p]).collect()
    }

    /// Random rank vocabularies over a small alphabet, where many tokens have several splits
    /// into two tokens and some tokens are never made by merges: the pair table keeps only the
    /// last merge of each token (`last_merge`), and must still give tiktoken's ids.
    #[test]
    fn rank_models_match_tiktokens_definition() {
        let mut rand = lcg(99);
        for _ in 0..60 {
            let mut ranks: FxHashMap<Vec<u8>, Rank> = FxHashMap::default();
            let mut order: Vec<Rank> = (0..256).collect();
            // Byte tokens get random ranks too, interleaved with the longer ones.
            let extra = 20 + rand(60) as usize;
            let mut words = Vec::new();
            while words.len() < extra {
                let len = 2 + rand(5) as usize;
                let w: Vec<u8> = (0..len).map(|_| b"abc"[rand(3) as usize]).collect();
                if !words.contains(&w) {
                    words.push(w);
                }
            }
            order.extend(256..256 + extra as Rank);
            for i in (1..order.len()).rev() {
                order.swap(i, rand(i as u64 + 1) as usize);
            }
            let mut vocab = Vec::new();
            for (b, &rank) in order[..256].iter().enumerate() {
                vocab.push((rank, vec![b as u8]));
            }
            for (i, w) in words.iter().enumerate() {
                vocab.push((order[256 + i], w.clone()));
            }
            for (r, b) in &vocab {
                ranks.insert(b.clone(), *r);
            }
            let (bpe, found) = Bpe::from_ranks_with_merges(vocab).unwrap();
            // The pairs found in rank order are each token's last merge from its bytes.
            let by_bytes: Vec<(Rank, Rank, Rank)> = (0..256 + extra as Rank)
                .filter_map(|id| {
                    let bytes = bpe.token_bytes(id).ok().filter(|b| b.len() > 1)?;
                    let (l, r) = bpe.last_merge(bytes)?;
                    Some((l, r, id))
                })
                .collect();
            assert_eq!(found, by_bytes);
            for _ in 0..60 {
                let long = rand(4) == 0;
                let n = 1 + rand(if long { 200 } else { 12 }) as usize;
                let piece: Vec<u8> = (0..n).map(|_| b"abcx"[rand(4) as usize]).collect();
                assert_eq!(enc(&bpe, &piece), naive_ranks(&ranks, &piece), "{piece:?}");
            }
        }
    }

    /// A monotone rank model over `letters`, with its ranks by bytes: the 256 bytes, then
    /// `extra` runs of 2 to `longest` bytes of random text of those letters (so some start or end
    /// inside a character, as byte-level BPE's tokens do), ranked shorter first, ties at random.
    fn straddling_model(
        rand: &mut impl FnMut(u64) -> u64,
        letters: &[&str],
        extra: usize,
        longest: u64,
    ) -> (Bpe, FxHashMap<Vec<u8>, Rank>) {
        let mut words: Vec<Vec<u8>> = Vec::new();
        while words.len() < extra {
            let text: String = (0..4)
                .map(|_| letters[rand(letters.len() as u64) as usize])
                .collect();
            let b = text.as_bytes();
            let from = rand(b.len() as u64) as usize;
            let to = (from + 2 + rand(longest - 1) as usize).min(b.len());
            let w = b[from..to].to_vec();
            if w.len() >= 2 && !words.contains(&w) {
                words.push(w);
            }
        }
        for i in (1..words.len()).rev() {
            words.swap(i, rand(i as u64 + 1) as usize);
        }
        words.sort_by_key(|w| w.len());
        let mut vocab: Vec<(Rank, Vec<u8>)> = (0..=255u8).map(|b| (b as Rank, vec![b])).collect();
        for (i, w) in words.iter().enumerate() {
            vocab.push((256 + i as Rank, w.clone()));
        }
        let ranks = vocab.iter().map(|(r, b)| (b.clone(), *r)).collect();
        let bpe = Bpe::from_ranks(vocab).unwrap();
        assert!(bpe.monotone);
        (bpe, ranks)
    }

    /// Models whose tokens hold parts of characters next to other bytes (as byte-level BPE's
    /// do): pieces of such characters encode as tiktoken's loop does, with atoms formed first
    /// where they may be and not where a token could straddle a character's edge.
    #[test]
    fn atoms_keep_the_ids_of_the_merges() {
        let mut rand = lcg(7);
        let chars = ["a", " ", "é", "я", "中", "文", "字", "ん", "\n"];
        let (mut somewhere, mut everywhere) = (0, 0);
        for _ in 0..80 {
            let extra = 30 + rand(80) as usize;
            let (bpe, ranks) = straddling_model(&mut rand, &chars, extra, 7);
            if let Some(a) = bpe.atoms() {
                let (some, all) = a.count();
                somewhere += some;
                everywhere += all;
            }
            for _ in 0..100 {
                let n = 1 + rand(40) as usize;
                let text: String = (0..n)
                    .map(|_| chars[rand(chars.len() as u64) as usize])
                    .collect();
                let piece = text.as_bytes();
                assert_eq!(enc(&bpe, piece), naive_ranks(&ranks, piece), "{text:?}");
            }
        }
        // Both kinds were tried: characters that are atoms only away from some neighbours, and
        // characters that are atoms everywhere.
        assert!(
            somewhere > everywhere && everywhere > 0,
            "{somewhere} {everywhere}"
        );
    }

    /// An atom's token is the character's own token (`lookup`), where its bytes merged alone
    /// end in it: on models with tokens of two- and three-byte characters, every character of
    /// the plane.
    #[test]
    fn atoms_are_the_characters_tokens() {
        let mut rand = lcg(3);
        let chars = ["a", " ", "é", "я", "中", "文", "ん", "\u{FFFD}"];
        let mut atoms = 0;
        for _ in 0..20 {
            let extra = 40 + rand(60) as usize;
            let (bpe, _) = straddling_model(&mut rand, &chars, extra, 7);
            let Some(a) = bpe.atoms() else { continue };
            for (cp, id) in a.ids().into_iter().enumerate() {
                let (Some(id), Some(c)) = (id, char::from_u32(cp as u32)) else {
                    continue;
                };
                let mut buf = [0u8; 4];
                let bytes = c.encode_utf8(&mut buf).as_bytes();
                // condition (1): the merges of its bytes alone (the whole piece's own token,
                // which `naive_ranks` gives first, may be one no merge makes)
                let mut merged = Vec::new();
                bpe.encode_long_heap(bytes, &mut merged);
                let want = match bpe.lookup(bytes) {
                    Some(t) if cp >= 0x80 && merged == [t] => t,
                    _ => atoms::NONE,
                };
                assert_eq!(id, want, "{c:?}");
                atoms += usize::from(id != atoms::NONE);
            }
        }
        assert!(atoms > 0);
    }

    /// Long pieces of multi-byte letters (runs of CJK, words of Cyrillic) encoded by the
    /// encoder, which cuts them between atoms that no token joins and looks the parts up in
    /// the thread's table: tiktoken's loop over the whole piece gives the same ids, on models
    /// whose tokens join some of those letters and straddle others' edges.
    #[test]
    fn cut_pieces_keep_the_ids_of_the_merges() {
        let mut rand = lcg(11);
        let letters = ["中", "文", "字", "ん", "я", "é", "a"];
        let mut cut = 0;
        for _ in 0..40 {
            let extra = 20 + rand(60) as usize;
            let (bpe, ranks) = straddling_model(&mut rand, &letters, extra, 8);
            let enc = Encoder::new(
                bpe,
                Pretokenizer::new(Some(crate::text::pretok::GPT4)).unwrap(),
                vec![],
            )
            .unwrap();
            for _ in 0..30 {
                let text: String = (0..1 + rand(60))
                    .map(|_| {
                        if rand(8) == 0 {
                            " "
                        } else {
                            letters[rand(7) as usize]
                        }
                    })
                    .collect();
                let mut expected = Vec::new();
                let _ = enc
                    .pretokenizer()
                    .try_for_each_piece_bytes::<()>(&text, |p| {
                        expected.extend(naive_ranks(&ranks, p));
                        ControlFlow::Continue(())
                    });
                // Twice: the second time the parts are in the table.
                for _ in 0..2 {
                    let mut got = Vec::new();
                    enc.encode_ordinary_into(&text, &mut got).unwrap();
                    assert_eq!(got, expected, "{text:?}");
                }
                let _ = enc
                    .pretokenizer()
                    .try_for_each_piece_bytes::<()>(&text, |p| {
                        if p.len() > pieces::MAX_LEN {
                            if let Some(atoms) = enc.bpe.atoms() {
                                let mut out = Vec::new();
                                pieces::with_local(|l| {
                                    let t = pieces::table(
                                        &mut l.tables,
                                        enc.id.load(Ordering::Relaxed),
                                    );
                                    cut += enc.encode_cut(t, atoms, p, &mut out) as usize;
                                });
                            }
                        }
                        ControlFlow::Continue(())
                    });
            }
        }
        assert!(cut > 100, "{cut} pieces cut");
    }

    fn encoder(specials: &[&str]) -> Encoder {
        let mut v = byte_vocab();
        v.push((256, b"ab".to_vec()));
        v.push((257, b"\nb".to_vec()));
        let bpe = Bpe::from_merges(v, &[(97, 98), (10, 98)]).unwrap();
        let specials = specials
            .iter()
            .enumerate()
            .map(|(i, s)| (s.to_string(), 300 + i as Rank))
            .collect();
        Encoder::new(
            bpe,
            Pretokenizer::new(Some(crate::text::pretok::GPT4)).unwrap(),
            specials,
        )
        .unwrap()
    }

    #[test]
    fn chunks_cut_only_where_the_ids_do_not_change() {
        let enc = encoder(&["<s>", "x\nab"]);
        let text = "one line.\nab two\nx\nab<s>\n\nabc  \n7 eight\n".repeat(40);
        let whole = enc
            .encode_texts(&[&text], &[300, 301], Parallel::SERIAL)
            .unwrap()
            .remove(0);
        for size in [1, 2, 5, 17, 64, 1000] {
            let chunks = enc.chunks(&text, size);
            assert_eq!(chunks.concat(), text);
            assert!(
                chunks.len() > text.len() / (size.max(40) * 2),
                "size {size}: {} chunks",
                chunks.len()
            );
            let mut ids = Vec::new();
            for c in &chunks {
                // No cut splits the special token "x\nab" nor leaves "\n" apart from a letter.
                assert!(!c.starts_with("ab<s>") && c.as_bytes()[0].is_ascii_alphanumeric());
                enc.encode_into(c, &[300, 301], &mut ids).unwrap();
            }
            assert_eq!(ids, whole, "size {size}");
            for threads in 1..=4 {
                let par = Parallel {
                    threads,
                    chunk_bytes: Some(size),
                    segments: false,
                };
                assert_eq!(
                    enc.encode_texts(&[&text], &[300, 301], par).unwrap()[0],
                    whole
                );
                assert_eq!(
                    enc.count_texts(&[&text], &[300, 301], None, par).unwrap()[0],
                    whole.len()
                );
                let limited = enc
                    .count_texts(&[&text], &[300, 301], Some(10), par)
                    .unwrap()[0];
                assert_eq!(limited, 11);
            }
        }
    }

    /// The per-thread piece tables give the ids of the queued path, whatever they hold: tables
    /// that grow and are emptied (small in tests), pieces of many ids (spilled), pieces too long
    /// for a key, runs of one byte on either side of `pieces::MAX_LEN` and `pieces::MAX_RUN`,
    /// three encoders taking turns on one thread (two tables kept), emptied caches.
    #[test]
    fn piece_tables_give_the_ids_of_the_queue() {
        let mut rng = crate::unigram::sample::Rng::new(7);
        let mut below = move |n: u64| rng.next_u64() % n;
        let mut encoders = Vec::new();
        for _ in 0..3 {
            let mut v = byte_vocab();
            let mut seen = std::collections::HashSet::new();
            while v.len() < 256 + 60 {
                let len = 2 + below(6) as usize;
                let w: Vec<u8> = (0..len).map(|_| b"abc"[below(3) as usize]).collect();
                if seen.insert(w.clone()) {
                    v.push((v.len() as Rank, w));
                }
            }
            let bpe = Bpe::from_ranks(v).unwrap();
            let pretok = Pretokenizer::new(Some(crate::text::pretok::GPT4)).unwrap();
            let specials = vec![("<s>".to_string(), 400), ("x.c".to_string(), 401)];
            encoders.push(Encoder::new(bpe, pretok, specials).unwrap());
        }
        for round in 0..40 {
            let mut text = String::new();
            for _ in 0..below(400) {
                let long = below(8) == 0;
                let len = 1 + below(if long { 40 } else { 9 }) as usize;
                text.extend((0..len).map(|_| ['a', 'b', 'c', 'x'][below(4) as usize]));
                text.push([' ', '.', '\n', ' '][below(4) as usize]);
                if below(30) == 0 {
                    text.push_str("<s>");
                }
                if below(10) == 0 {
                    let x = [' ', 'a', '.', '\t'][below(4) as usize];
                    text.extend(std::iter::repeat_n(x, 1 + below(140) as usize));
                }
            }
            for (k, enc) in encoders.iter().enumerate() {
                if (round + k) % 13 == 0 {
                    enc.clear_cache();
                }
                let mut queued = Vec::new();
                let _ = enc
                    .walk_encoding(
                        &text,
                        None,
                        &mut queued,
                        |_| ControlFlow::<()>::Continue(()),
                    )
                    .unwrap();
                for _ in 0..2 {
                    let mut ids = Vec::new();
                    enc.encode_chunk(&text, None, &mut ids).unwrap();
                    assert_eq!(ids, queued, "round {round}, encoder {k}");
                }
                // With special tokens to match, and counted (with and without a limit).
                let m = enc.matcher(&[400, 401]).unwrap();
                let mut queued = Vec::new();
                let go_on = |_: &mut Vec<Rank>| ControlFlow::<()>::Continue(());
                let _ = enc
                    .walk_encoding(&text, m.as_deref(), &mut queued, go_on)
                    .unwrap();
                let mut ids = Vec::new();
                enc.encode_chunk(&text, m.as_deref(), &mut ids).unwrap();
                assert_eq!(ids, queued, "round {round}, encoder {k}, specials");
                let count = |limit| {
                    let total = AtomicUsize::new(0);
                    enc.count_chunk(&text, m.as_deref(), &total, limit).unwrap();
                    total.into_inner()
                };
                assert_eq!(count(None), queued.len());
                let limit = below(queued.len() as u64 + 2) as usize;
                let limited = count(Some(limit));
                assert!(
                    limited.min(limit + 1) == queued.len().min(limit + 1),
                    "limit {limit}: counted {limited} of {}",
                    queued.len()
                );
            }
        }
    }

    #[test]
    fn custom_patterns_are_never_cut() {
        let bpe = Bpe::from_merges(byte_vocab(), &[]).unwrap();
        let enc =
            Encoder::new(bpe, Pretokenizer::new(Some(r"\w+|\s+|.")).unwrap(), vec![]).unwrap();
        let text = "a.\nb".repeat(100);
        assert_eq!(enc.chunks(&text, 3), vec![text.as_str()]);
    }

    #[test]
    fn piece_cache_gives_the_same_ids() {
        let bpe = small();
        let cache = PieceCache::default();
        for piece in [&b"aaab"[..], b"xaaa", b"aaab", b"aab", b"xaaa", b"ab"] {
            let mut plain = Vec::new();
            bpe.encode_piece(piece, &mut plain);
            for _ in 0..2 {
                let mut cached = Vec::new();
                bpe.encode_piece_cached(piece, Some(&cache), &mut cached);
                assert_eq!(cached, plain);
            }
        }
    }

    /// `spells` (the segment cache's check of a hit) says yes to exactly the text its ids make:
    /// tokens of 1 to 12 bytes, texts of every length up to 40 bytes (the word-at-a-time
    /// compare and the slice compare near the end), and every way of getting it wrong.
    #[test]
    fn spells_only_the_text_its_ids_make() {
        let mut v = byte_vocab();
        v.push((256, b"ab".to_vec()));
        v.push((257, b"aab".to_vec()));
        v.push((258, b"abcdefgh".to_vec()));
        // 259 is unused.
        v.push((260, b"abcdefghi".to_vec()));
        v.push((261, b"0123456789ab".to_vec()));
        let bpe = Bpe::with_vocab(v).unwrap();
        let ids_of = [97, 98, 0, 255, 256, 257, 258, 260, 261];
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for round in 0..3000 {
            let ids: Vec<Rank> = (0..round % 9).map(|_| ids_of[next(ids_of.len())]).collect();
            let mut text = Vec::new();
            bpe.decode_into(&ids, &mut text).unwrap();
            assert!(bpe.spells(&ids, &text), "{ids:?}");
            if !text.is_empty() {
                let mut t = text.clone();
                let i = next(t.len());
                t[i] ^= 1 << next(8);
                assert!(!bpe.spells(&ids, &t), "{ids:?} byte {i} changed");
                assert!(
                    !bpe.spells(&ids, &text[..text.len() - 1]),
                    "{ids:?} text cut"
                );
                assert!(
                    !bpe.spells(&ids[..ids.len() - 1], &text),
                    "{ids:?} last id left out"
                );
            }
            let mut longer = text.clone();
            longer.push(b'z');
            assert!(!bpe.spells(&ids, &longer), "{ids:?} text longer");
            for bad in [259, 262, Rank::MAX] {
                let mut with_bad = ids.clone();
                with_bad.insert(next(ids.len() + 1), bad);
                assert!(!bpe.spells(&with_bad, &text), "{with_bad:?}");
            }
        }
        // Tokens whose first 8 bytes agree with the text but whose tail does not.
        assert!(bpe.spells(&[260, 98], b"abcdefghib"));
        assert!(!bpe.spells(&[260, 98], b"abcdefghxb"));
        assert!(!bpe.spells(&[258], b"abcdefgi"));
    }

    #[test]
    fn token_table_finds_every_length() {
        let mut v = byte_vocab();
        let words: Vec<Vec<u8>> = (1..40)
            .map(|n| (0..n).map(|i| b'a' + (i % 26) as u8).collect())
            .collect();
        for (i, w) in words.iter().enumerate().skip(1) {
            v.push((256 + i as Rank, w.clone()));
        }
        let bpe = Bpe::from_ranks(v).unwrap();
        for (i, w) in words.iter().enumerate().skip(1) {
            assert_eq!(bpe.lookup(w), Some(256 + i as Rank));
            let mut other = w.clone();
            *other.last_mut().unwrap() ^= 0x20;
            assert_eq!(bpe.lookup(&other), None);
            other.push(b'!');
            assert_eq!(bpe.lookup(&other[..other.len() - 1]), None);
        }
        assert_eq!(bpe.lookup(b""), None);
        assert_eq!(bpe.lookup(b"\0"), Some(0));
        assert_eq!(bpe.lookup(b"a\0"), None);
    }

    #[test]
    fn piece_cache_compares_every_byte_of_the_key() {
        // Same hash, same length, one byte different anywhere: never a hit (the key
        // compare takes the first 8 bytes from the head word, the rest 4 at a time).
        for len in 1..=40usize {
            let piece: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            let h = hash_bytes(&piece, head(&piece));
            let cache = PieceCache::default();
            cache.insert(&piece, h, 0, &[len as Rank, 1]);
            let mut out = Vec::new();
            assert!(cache.get_into(&piece, head(&piece), h, &mut out), "{len}");
            assert_eq!(out, vec![len as Rank, 1]);
            for at in 0..len {
                for x in [0u8, b'A', 0x80, 0xFF] {
                    let mut other = piece.clone();
                    other[at] = x;
                    let mut out = Vec::new();
                    assert!(
                        !cache.get_into(&other, head(&other), h, &mut out),
                        "{len} {at}"
                    );
                    assert!(out.is_empty());
                }
            }
        }
    }

    #[test]
    fn pieces_read_from_the_text_encode_as_alone() {
        // `ahead` loads words from the text around the piece: pieces of every length
        // up to 40, at the end of the text (fewer than 16 bytes after them) or not, next to
        // non-ASCII bytes, one token or several, cold then from the cache.
        let mut v = byte_vocab();
        for (i, w) in [
            "ab",
            "abc",
            "abcdefgh",
            "abcdefghi",
            "abcdefghijklmnop",
            "é",
            "éa",
            "\0a",
        ]
        .iter()
        .enumerate()
        {
            v.push((256 + i as Rank, w.as_bytes().to_vec()));
        }
        let bpe = Bpe::from_ranks(v).unwrap();
        let pieces: Vec<Vec<u8>> = (1..=40)
            .flat_map(|n| {
                let plain: Vec<u8> = (0..n).map(|i| b"abcdefghijklmnopq"[i % 17]).collect();
                let mut odd = plain.clone();
                odd[0] = 0;
                odd[n - 1] = 0xC3;
                [plain, odd]
            })
            .collect();
        for surround in [&b""[..], b"\xC3\xA9", b"xyzxyzxyzxyzxyzxyzxyz"] {
            let cache = PieceCache::default();
            for round in 0..2 {
                for piece in &pieces {
                    let mut want = Vec::new();
                    bpe.encode_piece(piece, &mut want);
                    for (before, after) in [(surround, &b""[..]), (&b""[..], surround)] {
                        let text = [before, piece.as_slice(), after].concat();
                        let mut got = Vec::new();
                        encode_at(&bpe, &text, before.len(), piece.len(), None, &mut got);
                        assert_eq!(got, want, "{piece:?} {round}");
                        got.clear();
                        let c = Some(&cache);
                        encode_at(&bpe, &text, before.len(), piece.len(), c, &mut got);
                        assert_eq!(got, want, "{piece:?} {round} cached");
                    }
                }
            }
        }
    }

    #[test]
    fn hashes_agree() {
        // `hash_short`, `hash_words` and `hash_words32` are `hash_bytes` from words at hand: a
        // piece found through one must be found through the others.
        let text = b"abcdefghijklmnop\xC3\xA9\x00z";
        for start in 0..4 {
            for len in 1..=16 {
                let b = &text[start..start + len];
                let h = hash_bytes(b, head(b));
                let (lo, hi) = words16(b);
                assert_eq!(hash_words(lo, hi, len), h, "{b:?}");
                assert_eq!(words_at(text, start, len), (lo, hi), "{b:?}");
                if len <= 8 {
                    assert_eq!(hash_short(head(b), len), h, "{b:?}");
                }
            }
        }
        // And `hash_words32` from `words32_at`, with 32 bytes after the piece's start or not.
        let text = b"abcdefghijklmnopqrstuvwxyz\xC3\xA9\x00z0123456789";
        for start in [0, 1, 7, text.len() - 32, text.len() - 17] {
            for len in 17..=32.min(text.len() - start) {
                let b = &text[start..start + len];
                let w = words32_at(text, start, len);
                let alone = words32_at(b, 0, len);
                assert_eq!(w, alone, "{b:?}");
                let mut padded = [0u8; 32];
                padded[..len].copy_from_slice(b);
                for (i, word) in w.iter().enumerate() {
                    assert_eq!(*word, head(&padded[8 * i..8 * i + 8]), "{b:?} {i}");
                }
                assert_eq!(hash_words32(&w, len), hash_bytes(b, head(b)), "{b:?}");
            }
        }
    }

    #[test]
    fn quad_heap_pops_in_order() {
        let mut seed = 99u64;
        let mut rnd = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % 1000
        };
        let start: Vec<u64> = (0..517).map(|_| rnd()).collect();
        let mut heap = QuadHeap::from_vec(start.clone());
        let mut all = start;
        for _ in 0..300 {
            let x = rnd();
            heap.push(x);
            all.push(x);
        }
        all.sort_unstable();
        let popped: Vec<u64> = std::iter::from_fn(|| heap.pop()).collect();
        assert_eq!(popped, all);
    }
}
