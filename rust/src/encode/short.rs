//! The piece cache's table for short pieces (issue 11's warm path): pieces of 1 to 16 bytes
//! that encode to 1 to 3 ids, key and ids inline in one 32-byte slot, so that a hit reads one
//! slot and nothing else. About 98 % of the pieces that are not one token are such pieces
//! (prose, code and multilingual text).
//!
//! One table serves every thread of an `Encoder`. It is set-associative: a piece may only live
//! in the 4 slots of the bucket its hash names (128 bytes, two cache lines), and a piece that
//! finds its bucket full replaces one of them. So its memory is fixed (`BITS`: 2^20 slots, 32
//! MiB, allocated zeroed on first insert and touched as it fills), nothing is ever rebuilt or
//! emptied at once, and what it holds follows the text: pieces in use are put back as soon as
//! they are evicted. Reads take no lock and write nothing, so threads do not take cache lines
//! from one another; a slot is written under a per-slot sequence word (a "seqlock"):
//! - `tail` holds the third id, the key's length, the number of ids and a version, bumped by
//!   every write of the slot. A writer claims the slot by swapping `tail` to a busy mark (length
//!   31, version kept) with a compare-and-swap, writes the other words, then stores the new
//!   `tail` with release ordering.
//! - A reader loads `tail`, the key words and the ids, then `tail` again: the ids are used only
//!   if `tail` is unchanged and not busy, so a reader never mixes two writes (the version rules
//!   out a slot rewritten to the same `tail` in between). A writer that finds the slot busy or
//!   loses the swap gives up: the cache changes speed, never ids.
//!
//! Why shared, and why this shape (figures in encode.rs's notes): with a table per thread,
//! every thread paid for the cold misses of every piece (at 16 threads each saw 1/16 of a
//! corpus, and a third of its distinct pieces), and held its own copy of the hot ones; the
//! earlier per-thread tables also kept two generations (one emptied when the other filled),
//! which on a corpus with more distinct pieces than a generation (262 MB of the bench mix: 478
//! k short pieces that are not one token) behaved like LRU on a cyclic scan and lost a third of
//! them on every pass.

use std::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU64, Ordering};

use super::Rank;

/// Most ids a slot holds.
pub(super) const MAX_IDS: usize = 3;
/// Longest key.
pub(super) const MAX_LEN: usize = 16;

/// Slots, as a power of two.
pub(super) const BITS: u32 = 20;
const WAYS: usize = 4;
const BUCKET_BITS: u32 = BITS - WAYS.trailing_zeros();

/// The length field of a slot being written.
const BUSY: u64 = 31;
const LEN_SHIFT: u32 = 32;
const IDS_SHIFT: u32 = 37;
const VERSION_SHIFT: u32 = 39;

/// One slot: the key as two little-endian words (zero-padded), the first two ids, and `tail`:
/// `id2 | len << 32 | ids << 37 | version << 39` (length 0: empty, `BUSY`: being written).
#[derive(Debug, Default)]
#[repr(C, align(32))]
struct Slot {
    lo: AtomicU64,
    hi: AtomicU64,
    ids01: AtomicU64,
    tail: AtomicU64,
}

/// The size of a page (or less: only a bound on the stride that touches every page).
const PAGE: usize = 4096;

/// Asks the kernel to map the pages inside `len` bytes at `memory` as written
/// (`MADV_POPULATE_WRITE`, Linux 5.14), without changing what they hold: whether it did.
fn populate_pages(memory: *mut u8, len: usize) -> bool {
    #[cfg(target_os = "linux")]
    {
        extern "C" {
            fn madvise(addr: *mut u8, len: usize, advice: i32) -> i32;
        }
        const MADV_POPULATE_WRITE: i32 = 23;
        let (addr, end) = (memory as usize, memory as usize + len);
        let start = (addr + PAGE - 1) & !(PAGE - 1);
        let stop = end & !(PAGE - 1);
        if stop <= start {
            return false;
        }
        // SAFETY: the whole pages inside one live allocation of ours; this advice maps them
        // (as a write fault would) and never changes their contents, so it is sound while
        // other threads read and write the slots.
        unsafe { madvise(start as *mut u8, stop - start, MADV_POPULATE_WRITE) == 0 }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (memory, len);
        false
    }
}

#[derive(Debug, Default)]
#[repr(C, align(128))]
struct Bucket([Slot; WAYS]);

fn len_of(tail: u64) -> u64 {
    (tail >> LEN_SHIFT) & 31
}

const BUCKETS: usize = 1 << BUCKET_BITS;

/// The memory of the buckets, and room to align them: asked for with the alignment of
/// `malloc` so that it comes from `calloc` (a large one is fresh zero pages from the kernel,
/// touched only as slots are written). With the buckets' own alignment (128), Rust's
/// allocator would have filled all 32 MiB with zeros at once (a 20x slower fuzz body, 32 MiB
/// of RSS for any encoder that caches one piece).
fn layout() -> std::alloc::Layout {
    let size = BUCKETS * std::mem::size_of::<Bucket>() + std::mem::align_of::<Bucket>();
    std::alloc::Layout::from_size_align(size, 16).expect("a fixed, small size")
}

/// The table's buckets, allocated on first insert (see `layout`), zeroed (empty slots).
/// Installed with a compare-and-swap, not a `OnceLock`: a thread that forks while another is
/// initializing would leave the child's `OnceLock` waiting forever.
#[derive(Debug)]
pub(super) struct ShortTable {
    /// The buckets (aligned), or null.
    buckets: AtomicPtr<Bucket>,
    /// The allocation they are in, for `Drop`.
    memory: AtomicPtr<u8>,
    /// Whether `populate` has run.
    populated: AtomicBool,
}

impl Default for ShortTable {
    fn default() -> Self {
        ShortTable {
            buckets: AtomicPtr::new(std::ptr::null_mut()),
            memory: AtomicPtr::new(std::ptr::null_mut()),
            populated: AtomicBool::new(false),
        }
    }
}

impl Drop for ShortTable {
    fn drop(&mut self) {
        let p = *self.memory.get_mut();
        if !p.is_null() {
            // SAFETY: `p` came from `alloc_zeroed` with this layout, and nothing else frees it.
            unsafe { std::alloc::dealloc(p, layout()) }
        }
    }
}

impl ShortTable {
    /// The buckets, if allocated.
    #[inline(always)]
    fn buckets(&self) -> Option<&[Bucket]> {
        let p = self.buckets.load(Ordering::Acquire);
        // SAFETY: a non-null pointer is an allocation of `BUCKETS` zeroed (valid) buckets,
        // freed only when the table is dropped.
        (!p.is_null()).then(|| unsafe { std::slice::from_raw_parts(p, BUCKETS) })
    }

    /// The buckets, allocated now if they were not; with `populate`, a new allocation has all
    /// its pages mapped (see `populate`).
    fn buckets_or_alloc(&self, populate: bool) -> &[Bucket] {
        if let Some(b) = self.buckets() {
            return b;
        }
        let layout = layout();
        // SAFETY: the layout has a nonzero size.
        let memory = unsafe { std::alloc::alloc_zeroed(layout) };
        if memory.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        if populate && !populate_pages(memory, layout.size()) {
            for i in (0..layout.size()).step_by(PAGE) {
                // SAFETY: inside the allocation, which no other thread sees yet; writing the
                // zero it holds changes nothing but makes the kernel map the page.
                unsafe { memory.add(i).write_volatile(0) };
            }
        }
        let skip = memory.align_offset(std::mem::align_of::<Bucket>());
        // SAFETY: `skip` is less than the alignment, which the layout has room for after the
        // buckets; all-zero bytes are valid buckets (atomics).
        let p = unsafe { memory.add(skip) }.cast::<Bucket>();
        let null = std::ptr::null_mut();
        match self
            .buckets
            .compare_exchange(null, p, Ordering::AcqRel, Ordering::Acquire)
        {
            // Only the thread that installed the buckets writes `memory` (read by `Drop`).
            Ok(_) => self.memory.store(memory, Ordering::Release),
            // Another thread allocated them first: use its buckets.
            // SAFETY: `memory` is ours, from `alloc_zeroed` with this layout, never shared.
            Err(_) => unsafe { std::alloc::dealloc(memory, layout) },
        }
        self.buckets().expect("just installed")
    }

    /// Maps all of the table's pages now, for a long run (`PieceCache::populate`).
    ///
    /// Why: left to itself, a page is first read by a lookup that misses (the kernel maps its
    /// shared zero page), then written by an insert, and that write replaces the mapping, which
    /// makes the kernel flush the page from every core's TLB running the process (an
    /// interrupt to each: `do_wp_page`, `flush_tlb_mm_range`, `x2apic_send_IPI`). At two
    /// threads that was 3-4 % of `encode-corpus` on the 262 MB bench mix (`perf`). Written
    /// first, a page is mapped once with nothing to flush. A run that populates would have
    /// touched all 8,192 pages within its first few MB anyway.
    pub(super) fn populate(&self) {
        if self.populated.swap(true, Ordering::Relaxed) {
            return;
        }
        if self.buckets().is_none() {
            self.buckets_or_alloc(true);
            return;
        }
        // Allocated before (by a small job): ask the kernel to map what is still unmapped;
        // where it cannot (not Linux, or older than 5.14), the pages stay as they are.
        let memory = self.memory.load(Ordering::Acquire);
        if !memory.is_null() {
            populate_pages(memory, layout().size());
        }
    }

    /// Asks for the bucket of `h`, if the table is allocated.
    #[inline(always)]
    pub(super) fn prefetch(&self, h: u64) {
        let p = self.buckets.load(Ordering::Relaxed);
        if !p.is_null() {
            super::prefetch_at(p.wrapping_add((h >> (64 - BUCKET_BITS)) as usize));
        }
    }

    /// The ids of the piece whose words are `lo`, `hi` and length `len` (1 to 16), whose
    /// `hash_bytes` is `h`, and how many there are.
    #[inline(always)]
    pub(super) fn get(&self, lo: u64, hi: u64, len: usize, h: u64) -> Option<([Rank; 3], usize)> {
        let buckets = self.buckets()?;
        let bucket = &buckets[(h >> (64 - BUCKET_BITS)) as usize];
        for s in &bucket.0 {
            let tail = s.tail.load(Ordering::Acquire);
            if len_of(tail) != len as u64
                || s.lo.load(Ordering::Relaxed) != lo
                || s.hi.load(Ordering::Relaxed) != hi
            {
                continue;
            }
            let ids01 = s.ids01.load(Ordering::Relaxed);
            // The loads above happen before this one: if any of them saw a newer write, this
            // sees that write's busy mark or a later `tail`.
            fence(Ordering::Acquire);
            if s.tail.load(Ordering::Relaxed) != tail {
                continue;
            }
            let n = ((tail >> IDS_SHIFT) & 3) as usize;
            return Some(([ids01 as Rank, (ids01 >> 32) as Rank, tail as Rank], n));
        }
        None
    }

    /// Adds a piece that `get` did not find (1 to 3 ids), in an empty slot of its bucket or
    /// in place of one of the others (which one: `victim`, any number).
    pub(super) fn insert(&self, lo: u64, hi: u64, len: usize, h: u64, ids: &[Rank], victim: usize) {
        debug_assert!((1..=MAX_LEN).contains(&len) && (1..=MAX_IDS).contains(&ids.len()));
        let buckets = self.buckets_or_alloc(false);
        let bucket = &buckets[(h >> (64 - BUCKET_BITS)) as usize];
        let tails = bucket.0.each_ref().map(|s| s.tail.load(Ordering::Relaxed));
        let way = tails
            .iter()
            .position(|&t| len_of(t) == 0)
            .unwrap_or(victim % WAYS);
        let (s, tail) = (&bucket.0[way], tails[way]);
        if len_of(tail) == BUSY {
            return;
        }
        let busy = tail | BUSY << LEN_SHIFT;
        if s.tail
            .compare_exchange(tail, busy, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return;
        }
        // The busy mark is visible before any of the words below (see `get`).
        fence(Ordering::Release);
        let id = |i: usize| ids.get(i).copied().unwrap_or(0) as u64;
        s.lo.store(lo, Ordering::Relaxed);
        s.hi.store(hi, Ordering::Relaxed);
        s.ids01.store(id(0) | id(1) << 32, Ordering::Relaxed);
        let version = ((tail >> VERSION_SHIFT) + 1) << VERSION_SHIFT;
        let new = id(2) | (len as u64) << LEN_SHIFT | (ids.len() as u64) << IDS_SHIFT | version;
        s.tail.store(new, Ordering::Release);
    }

    /// Empties the table (slots being written are left to their writers). Versions are kept,
    /// so a reader that started before never takes a later write for the one it read.
    pub(super) fn clear(&self) {
        let Some(buckets) = self.buckets() else {
            return;
        };
        let keep = !(u64::MAX >> (64 - VERSION_SHIFT));
        for s in buckets.iter().flat_map(|b| &b.0) {
            let mut tail = s.tail.load(Ordering::Relaxed);
            while len_of(tail) != 0 && len_of(tail) != BUSY {
                match s.tail.compare_exchange_weak(
                    tail,
                    tail & keep,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => break,
                    Err(t) => tail = t,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Key, hash and ids of test piece `k`; `buckets` of them share each bucket.
    fn piece(k: u64, buckets: u64) -> (u64, u64, usize, u64, Vec<Rank>) {
        let len = 1 + (k % 16) as usize;
        let lo = k.wrapping_mul(0x9E37_79B9_7F4A_7C15) & (u64::MAX >> (64 - 8 * len.min(8)));
        let hi = if len > 8 {
            k & (u64::MAX >> (64 - 8 * (len - 8)))
        } else {
            0
        };
        let h = (k % buckets) << (64 - BUCKET_BITS) | k >> 32;
        let ids = (0..1 + k % 3).map(|i| (k * 7 + i) as Rank).collect();
        (lo, hi, len, h, ids)
    }

    #[test]
    fn finds_what_it_holds_and_evicts_within_a_bucket() {
        let t = ShortTable::default();
        assert_eq!(t.get(1, 0, 1, 0), None);
        // 40 pieces into 2 buckets: each insert is found at once, both buckets stay full (8
        // pieces found), and a hit is always that piece's ids.
        for k in 0..40 {
            let (lo, hi, len, h, ids) = piece(k, 2);
            assert_eq!(t.get(lo, hi, len, h), None, "{k}");
            t.insert(lo, hi, len, h, &ids, k as usize);
            let (got, n) = t.get(lo, hi, len, h).unwrap();
            assert_eq!(&got[..n], &ids[..]);
        }
        let mut found = 0;
        for k in 0..40 {
            let (lo, hi, len, h, ids) = piece(k, 2);
            if let Some((got, n)) = t.get(lo, hi, len, h) {
                assert_eq!(&got[..n], &ids[..], "{k}");
                found += 1;
            }
        }
        assert_eq!(found, 2 * WAYS);
        // The same words with another length, or another word, are other pieces.
        let (lo, hi, len, h, _) = piece(39, 2);
        assert_eq!(t.get(lo, hi, len % 16 + 1, h), None);
        assert_eq!(t.get(lo ^ 1, hi, len, h), None);
        t.clear();
        assert_eq!(t.get(lo, hi, len, h), None);
    }

    #[test]
    fn populate_keeps_what_the_table_holds() {
        // On a table not yet allocated it allocates it; on one in use (the kernel asked to map
        // its pages) every piece stays found, with its ids; a second call does nothing.
        let fresh = ShortTable::default();
        fresh.populate();
        assert!(fresh.buckets().is_some());
        let (lo, hi, len, h, ids) = piece(7, 1 << 16);
        fresh.insert(lo, hi, len, h, &ids, 0);
        let (got, m) = fresh.get(lo, hi, len, h).unwrap();
        assert_eq!(&got[..m], &ids[..]);
        let used = ShortTable::default();
        let n = 3000;
        for k in 0..n {
            let (lo, hi, len, h, ids) = piece(k, 1 << BUCKET_BITS);
            used.insert(lo, hi, len, h, &ids, 0);
        }
        used.populate();
        used.populate();
        for k in 0..n {
            let (lo, hi, len, h, ids) = piece(k, 1 << BUCKET_BITS);
            let (got, m) = used.get(lo, hi, len, h).unwrap();
            assert_eq!(&got[..m], &ids[..], "{k}");
        }
    }

    #[test]
    fn threads_never_read_a_mix_of_two_writes() {
        // Eight buckets written and read by four threads at once: every hit must be exactly the
        // ids some thread wrote for that key (a torn read would mix two pieces' words or ids).
        let t = ShortTable::default();
        std::thread::scope(|s| {
            for th in 0..4u64 {
                let t = &t;
                s.spawn(move || {
                    let mut x = 0x2545_F491_4F6C_DD1D ^ th;
                    let (mut hits, mut misses) = (0u64, 0u64);
                    for i in 0..400_000u64 {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        let k = x % 64;
                        let (lo, hi, len, h, ids) = piece(k, 8);
                        match t.get(lo, hi, len, h) {
                            Some((got, n)) => {
                                assert_eq!(&got[..n], &ids[..], "{k}");
                                hits += 1;
                            }
                            None => {
                                t.insert(lo, hi, len, h, &ids, (x >> 20) as usize);
                                misses += 1;
                            }
                        }
                        if i % 100_000 == 0 && th == 0 {
                            t.clear();
                        }
                    }
                    assert!(hits > 0 && misses > 0);
                });
            }
        });
    }
}
