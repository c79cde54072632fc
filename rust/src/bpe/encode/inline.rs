//! The piece cache's tables with key and ids inline, so that a hit reads one slot and nothing
//! else:
//! - `Short`: pieces of 1 to 16 bytes that encode to 1 to 3 ids, in 32-byte slots. About 98 %
//!   of the pieces that are not one token are such pieces (prose, code and multilingual text).
//! - `Medium`: pieces of 17 to 32 bytes that encode to 1 to 7 ids, in 64-byte slots (one cache
//!   line). Multilingual text has many (a Cyrillic or Greek word is two bytes a letter), which
//!   went to the locked stripes of `cache.rs` before (see `bpe/NOTES.md`, eighth round).
//!
//! One table of each serves every thread of an `Encoder`. A table is set-associative: a piece
//! may only live in the 4 slots of the bucket its hash names (two cache lines of short slots,
//! four of medium ones), and a piece that finds its bucket full replaces one of them.
//! So its memory is fixed (`Short`: 2^20 slots, 32 MiB; `Medium`: 2^18 slots, 16 MiB;
//! allocated zeroed on first insert and touched as it fills), nothing is ever rebuilt or
//! emptied at once, and what it holds follows the text: pieces in use are put back as soon as
//! they are evicted. Reads take no lock and write nothing, so threads do not take cache lines
//! from one another; a slot is written under a per-slot sequence word (a "seqlock"):
//! - the slot's last word, `tail`, holds the last id, the key's length, the number of ids and a
//!   version, bumped by every write of the slot. A writer claims the slot by swapping `tail` to
//!   a busy mark (length `BUSY`, version kept) with a compare-and-swap, writes the other words,
//!   then stores the new `tail` with release ordering.
//! - A reader loads `tail`, the key words and the ids, then `tail` again: the ids are used only
//!   if `tail` is unchanged and not busy, so a reader never mixes two writes (the version rules
//!   out a slot rewritten to the same `tail` in between). A writer that finds the slot busy or
//!   loses the swap gives up: the cache changes speed, never ids.
//!
//! Why shared, and why this shape (figures in `bpe/NOTES.md`, fourth round): with a table per
//! thread, every thread paid for the cold misses of every piece (at 16 threads each saw 1/16 of a
//! corpus, and a third of its distinct pieces), and held its own copy of the hot ones; the earlier
//! per-thread tables also kept two generations (one emptied when the other filled), which on a
//! corpus with more distinct pieces than a generation (262 MB of the bench mix: 478 k short pieces
//! that are not one token) behaved like LRU on a cyclic scan and lost a third of them on every
//! pass.

use std::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU64, Ordering};

use super::Rank;

/// The table of pieces of up to 16 bytes (two key words) and 3 ids: 2^20 slots of 4 words, 4
/// to a bucket.
pub(super) type Short = InlineTable<2, 4, 4, 20>;
/// The table of pieces of 17 to 32 bytes (four key words) and 7 ids: 2^18 slots of 8 words, 4
/// to a bucket (with 2, a warm pass over 30 MB of multilingual text merged 3.6 k evicted pieces
/// again, against 0.7 k).
pub(super) type Medium = InlineTable<4, 8, 4, 18>;

/// A slot's last word: `last id | len << LEN_SHIFT | ids << IDS_SHIFT | version <<
/// VERSION_SHIFT`; length 0 is an empty slot, `BUSY` one being written.
const LEN_SHIFT: u32 = 32;
const LEN_BITS: u32 = 6;
const BUSY: u64 = (1 << LEN_BITS) - 1;
const IDS_SHIFT: u32 = LEN_SHIFT + LEN_BITS;
const VERSION_SHIFT: u32 = IDS_SHIFT + 4;

/// The alignment of the table: two cache lines.
const ALIGN: usize = 128;

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

fn len_of(tail: u64) -> u64 {
    (tail >> LEN_SHIFT) & BUSY
}

/// A table of `2^BITS` slots of `W` words (4 or 8) in buckets of `WAYS`, each slot a key of `K`
/// words (the piece's zero-padded little-endian words), its ids two to a word, and `tail`.
#[derive(Debug)]
pub(super) struct InlineTable<const K: usize, const W: usize, const WAYS: usize, const BITS: u32> {
    /// The slots (aligned to `ALIGN`), or null.
    slots: AtomicPtr<AtomicU64>,
    /// The allocation they are in, for `Drop`.
    memory: AtomicPtr<u8>,
    /// Whether `populate` has run.
    populated: AtomicBool,
}

impl<const K: usize, const W: usize, const WAYS: usize, const BITS: u32> Default
    for InlineTable<K, W, WAYS, BITS>
{
    fn default() -> Self {
        InlineTable {
            slots: AtomicPtr::new(std::ptr::null_mut()),
            memory: AtomicPtr::new(std::ptr::null_mut()),
            populated: AtomicBool::new(false),
        }
    }
}

impl<const K: usize, const W: usize, const WAYS: usize, const BITS: u32> Drop
    for InlineTable<K, W, WAYS, BITS>
{
    fn drop(&mut self) {
        let p = *self.memory.get_mut();
        if !p.is_null() {
            // SAFETY: `p` came from `alloc_zeroed` with this layout, and nothing else frees it.
            unsafe { std::alloc::dealloc(p, Self::layout()) }
        }
    }
}

impl<const K: usize, const W: usize, const WAYS: usize, const BITS: u32>
    InlineTable<K, W, WAYS, BITS>
{
    /// Longest key, in bytes.
    pub(super) const MAX_LEN: usize = 8 * K;
    /// Most ids a slot holds.
    pub(super) const MAX_IDS: usize = 2 * (W - K - 1) + 1;
    const BUCKET_BITS: u32 = BITS - WAYS.trailing_zeros();
    /// Words of the table.
    const WORDS: usize = W << BITS;

    /// The memory of the slots, and room to align them: asked for with the alignment of
    /// `malloc` so that it comes from `calloc` (a large one is fresh zero pages from the
    /// kernel, touched only as slots are written). With the buckets' own alignment, Rust's
    /// allocator would have filled all of it with zeros at once (a 20x slower fuzz body, 32
    /// MiB of RSS for any encoder that caches one piece).
    fn layout() -> std::alloc::Layout {
        const {
            assert!(
                (W == 4 || W == 8)
                    && K < W
                    && 8 * K < BUSY as usize
                    && 2 * (W - K - 1) + 1 < 16
                    && WAYS >= 2
            )
        };
        let size = Self::WORDS * 8 + ALIGN;
        std::alloc::Layout::from_size_align(size, 16).expect("a fixed, small size")
    }

    /// The slots, if allocated.
    #[inline(always)]
    fn words(&self) -> Option<&[AtomicU64]> {
        let p = self.slots.load(Ordering::Acquire);
        // SAFETY: a non-null pointer is an allocation of `WORDS` zeroed (valid) atomics,
        // freed only when the table is dropped.
        (!p.is_null()).then(|| unsafe { std::slice::from_raw_parts(p, Self::WORDS) })
    }

    /// The words of the bucket of hash `h`.
    #[inline(always)]
    fn bucket(words: &[AtomicU64], h: u64) -> &[AtomicU64] {
        let b = (h >> (64 - Self::BUCKET_BITS)) as usize;
        &words[b * WAYS * W..(b + 1) * WAYS * W]
    }

    /// The slots, allocated now if they were not; with `populate`, a new allocation has all
    /// its pages mapped (see `populate`).
    fn words_or_alloc(&self, populate: bool) -> &[AtomicU64] {
        if let Some(w) = self.words() {
            return w;
        }
        let layout = Self::layout();
        // SAFETY: the layout has a nonzero size.
        let memory = unsafe { std::alloc::alloc_zeroed(layout) };
        if memory.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        super::advise_huge(memory, layout.size());
        if populate && !populate_pages(memory, layout.size()) {
            for i in (0..layout.size()).step_by(PAGE) {
                // SAFETY: inside the allocation, which no other thread sees yet; writing the
                // zero it holds changes nothing but makes the kernel map the page.
                unsafe { memory.add(i).write_volatile(0) };
            }
        }
        let skip = memory.align_offset(ALIGN);
        // SAFETY: `skip` is less than the alignment, which the layout has room for after the
        // slots; all-zero bytes are valid atomics.
        let p = unsafe { memory.add(skip) }.cast::<AtomicU64>();
        let null = std::ptr::null_mut();
        match self
            .slots
            .compare_exchange(null, p, Ordering::AcqRel, Ordering::Acquire)
        {
            // Only the thread that installed the slots writes `memory` (read by `Drop`).
            Ok(_) => self.memory.store(memory, Ordering::Release),
            // Another thread allocated them first: use its slots.
            // SAFETY: `memory` is ours, from `alloc_zeroed` with this layout, never shared.
            Err(_) => unsafe { std::alloc::dealloc(memory, layout) },
        }
        self.words().expect("just installed")
    }

    /// Maps all of the table's pages now, for a long run (`PieceCache::populate`).
    ///
    /// Why: left to itself, a page is first read by a lookup that misses (the kernel maps its
    /// shared zero page), then written by an insert, and that write replaces the mapping, which
    /// makes the kernel flush the page from every core's TLB running the process (an
    /// interrupt to each: `do_wp_page`, `flush_tlb_mm_range`, `x2apic_send_IPI`). At two
    /// threads that was 3-4 % of `encode-corpus` on the 262 MB bench mix (`perf`). Written
    /// first, a page is mapped once with nothing to flush. A run that populates would have
    /// touched all 8,192 pages of the short table within its first few MB anyway.
    pub(super) fn populate(&self) {
        if self.populated.swap(true, Ordering::Relaxed) {
            return;
        }
        if self.words().is_none() {
            self.words_or_alloc(true);
            return;
        }
        // Allocated before (by a small job): ask the kernel to map what is still unmapped;
        // where it cannot (not Linux, or older than 5.14), the pages stay as they are.
        let memory = self.memory.load(Ordering::Acquire);
        if !memory.is_null() {
            populate_pages(memory, Self::layout().size());
        }
    }

    /// Asks for the bucket of `h`, if the table is allocated.
    #[inline(always)]
    pub(super) fn prefetch(&self, h: u64) {
        let p = self.slots.load(Ordering::Relaxed);
        if !p.is_null() {
            let b = (h >> (64 - Self::BUCKET_BITS)) as usize;
            super::prefetch_at(p.wrapping_add(b * WAYS * W));
        }
    }

    /// Appends to `out` the ids of the piece whose words are `key` and length `len`, whose
    /// `hash_bytes` is `h`: whether it was found.
    #[inline(always)]
    pub(super) fn get(&self, key: &[u64; K], len: usize, h: u64, out: &mut Vec<Rank>) -> bool {
        let Some(words) = self.words() else {
            return false;
        };
        for s in Self::bucket(words, h).chunks_exact(W) {
            let tail = s[W - 1].load(Ordering::Acquire);
            if len_of(tail) != len as u64 || (0..K).any(|i| s[i].load(Ordering::Relaxed) != key[i])
            {
                continue;
            }
            let ids: [u64; W] = std::array::from_fn(|i| {
                if (K..W - 1).contains(&i) {
                    s[i].load(Ordering::Relaxed)
                } else {
                    0
                }
            });
            // The loads above happen before this one: if any of them saw a newer write, this
            // sees that write's busy mark or a later `tail`.
            fence(Ordering::Acquire);
            if s[W - 1].load(Ordering::Relaxed) != tail {
                continue;
            }
            let n = ((tail >> IDS_SHIFT) & 15) as usize;
            let id = |i: usize| {
                if i == Self::MAX_IDS - 1 {
                    tail as Rank
                } else {
                    (ids[K + i / 2] >> (32 * (i % 2))) as Rank
                }
            };
            out.extend((0..n).map(id));
            return true;
        }
        false
    }

    /// Adds a piece that `get` did not find (1 to `MAX_IDS` ids), in an empty slot of its
    /// bucket or in place of one of the others (which one: `victim`, any number).
    pub(super) fn insert(&self, key: &[u64; K], len: usize, h: u64, ids: &[Rank], victim: usize) {
        debug_assert!((1..=Self::MAX_LEN).contains(&len));
        debug_assert!((1..=Self::MAX_IDS).contains(&ids.len()));
        let bucket = Self::bucket(self.words_or_alloc(false), h);
        let tail_of = |way: usize| bucket[way * W + W - 1].load(Ordering::Relaxed);
        let way = (0..WAYS)
            .find(|&w| len_of(tail_of(w)) == 0)
            .unwrap_or(victim % WAYS);
        let (s, tail) = (&bucket[way * W..(way + 1) * W], tail_of(way));
        if len_of(tail) == BUSY {
            return;
        }
        let busy = tail | BUSY << LEN_SHIFT;
        if s[W - 1]
            .compare_exchange(tail, busy, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return;
        }
        // The busy mark is visible before any of the words below (see `get`).
        fence(Ordering::Release);
        let id = |i: usize| ids.get(i).copied().unwrap_or(0) as u64;
        for (i, k) in key.iter().enumerate() {
            s[i].store(*k, Ordering::Relaxed);
        }
        for j in 0..W - K - 1 {
            s[K + j].store(id(2 * j) | id(2 * j + 1) << 32, Ordering::Relaxed);
        }
        let version = ((tail >> VERSION_SHIFT) + 1) << VERSION_SHIFT;
        let new = id(Self::MAX_IDS - 1)
            | (len as u64) << LEN_SHIFT
            | (ids.len() as u64) << IDS_SHIFT
            | version;
        s[W - 1].store(new, Ordering::Release);
    }

    /// Empties the table (slots being written are left to their writers). Versions are kept,
    /// so a reader that started before never takes a later write for the one it read.
    pub(super) fn clear(&self) {
        let Some(words) = self.words() else {
            return;
        };
        let keep = !(u64::MAX >> (64 - VERSION_SHIFT));
        for s in words.chunks_exact(W) {
            let t = &s[W - 1];
            let mut tail = t.load(Ordering::Relaxed);
            while len_of(tail) != 0 && len_of(tail) != BUSY {
                match t.compare_exchange_weak(
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

    /// Key, length, hash and ids of test piece `k` for table `T`; `buckets` of them share each
    /// bucket. Lengths run over 1 to `MAX_LEN`, numbers of ids over 1 to `MAX_IDS`.
    fn piece<const K: usize, const W: usize, const V: usize, const B: u32>(
        _: &InlineTable<K, W, V, B>,
        k: u64,
        buckets: u64,
    ) -> ([u64; K], usize, u64, Vec<Rank>) {
        let len = 1 + (k % (8 * K as u64)) as usize;
        let key = std::array::from_fn(|i| {
            let bytes = len.saturating_sub(8 * i).min(8);
            let w = (k + i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            if bytes == 0 {
                0
            } else {
                w & (u64::MAX >> (64 - 8 * bytes))
            }
        });
        let bucket_bits = InlineTable::<K, W, V, B>::BUCKET_BITS;
        let h = (k % buckets) << (64 - bucket_bits) | k >> 32;
        let n = 1 + k % InlineTable::<K, W, V, B>::MAX_IDS as u64;
        let ids = (0..n).map(|i| (k * 7 + i) as Rank).collect();
        (key, len, h, ids)
    }

    fn get<const K: usize, const W: usize, const V: usize, const B: u32>(
        t: &InlineTable<K, W, V, B>,
        key: &[u64; K],
        len: usize,
        h: u64,
    ) -> Option<Vec<Rank>> {
        let mut out = vec![99];
        t.get(key, len, h, &mut out).then(|| out.split_off(1))
    }

    fn finds_what_it_holds_and_evicts_within_a_bucket<
        const K: usize,
        const W: usize,
        const V: usize,
        const B: u32,
    >() {
        let t = InlineTable::<K, W, V, B>::default();
        assert_eq!(get(&t, &[1; K], 1, 0), None);
        // 40 pieces into 2 buckets: each insert is found at once, both buckets stay full, and
        // a hit is always that piece's ids.
        for k in 0..40 {
            let (key, len, h, ids) = piece(&t, k, 2);
            assert_eq!(get(&t, &key, len, h), None, "{k}");
            t.insert(&key, len, h, &ids, k as usize);
            assert_eq!(get(&t, &key, len, h), Some(ids));
        }
        let mut found = 0;
        for k in 0..40 {
            let (key, len, h, ids) = piece(&t, k, 2);
            if let Some(got) = get(&t, &key, len, h) {
                assert_eq!(got, ids, "{k}");
                found += 1;
            }
        }
        assert_eq!(found, 2 * V);
        // The same words with another length, or another word, are other pieces.
        let (mut key, len, h, _) = piece(&t, 39, 2);
        assert_eq!(get(&t, &key, len % (8 * K) + 1, h), None);
        key[K - 1] ^= 1;
        assert_eq!(get(&t, &key, len, h), None);
        key[K - 1] ^= 1;
        assert!(get(&t, &key, len, h).is_some());
        t.clear();
        assert_eq!(get(&t, &key, len, h), None);
    }

    #[test]
    fn finds_what_it_holds_and_evicts_within_a_bucket_short_and_medium() {
        finds_what_it_holds_and_evicts_within_a_bucket::<2, 4, 4, 20>();
        finds_what_it_holds_and_evicts_within_a_bucket::<4, 8, 4, 18>();
        assert_eq!((Short::MAX_LEN, Short::MAX_IDS), (16, 3));
        assert_eq!((Medium::MAX_LEN, Medium::MAX_IDS), (32, 7));
    }

    fn populate_keeps_what_the_table_holds<
        const K: usize,
        const W: usize,
        const V: usize,
        const B: u32,
    >() {
        // On a table not yet allocated it allocates it; on one in use (the kernel asked to map
        // its pages) every piece stays found, with its ids; a second call does nothing.
        let fresh = InlineTable::<K, W, V, B>::default();
        fresh.populate();
        assert!(fresh.words().is_some());
        let (key, len, h, ids) = piece(&fresh, 7, 1 << 16);
        fresh.insert(&key, len, h, &ids, 0);
        assert_eq!(get(&fresh, &key, len, h), Some(ids));
        let used = InlineTable::<K, W, V, B>::default();
        let n = 3000;
        let all = 1 << InlineTable::<K, W, V, B>::BUCKET_BITS;
        for k in 0..n {
            let (key, len, h, ids) = piece(&used, k, all);
            used.insert(&key, len, h, &ids, 0);
        }
        used.populate();
        used.populate();
        for k in 0..n {
            let (key, len, h, ids) = piece(&used, k, all);
            assert_eq!(get(&used, &key, len, h), Some(ids), "{k}");
        }
    }

    #[test]
    fn populate_keeps_what_the_tables_hold() {
        populate_keeps_what_the_table_holds::<2, 4, 4, 20>();
        populate_keeps_what_the_table_holds::<4, 8, 4, 18>();
    }

    fn threads_never_read_a_mix_of_two_writes<
        const K: usize,
        const W: usize,
        const V: usize,
        const B: u32,
    >() {
        // Eight buckets written and read by four threads at once: every hit must be exactly the
        // ids some thread wrote for that key (a torn read would mix two pieces' words or ids).
        let t = InlineTable::<K, W, V, B>::default();
        std::thread::scope(|s| {
            for th in 0..4u64 {
                let t = &t;
                s.spawn(move || {
                    let mut x = 0x2545_F491_4F6C_DD1D ^ th;
                    let (mut hits, mut misses) = (0u64, 0u64);
                    for i in 0..300_000u64 {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        let k = x % 64;
                        let (key, len, h, ids) = piece(t, k, 8);
                        match get(t, &key, len, h) {
                            Some(got) => {
                                assert_eq!(got, ids, "{k}");
                                hits += 1;
                            }
                            None => {
                                t.insert(&key, len, h, &ids, (x >> 20) as usize);
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

    #[test]
    fn threads_never_read_a_mix_of_two_writes_short_and_medium() {
        threads_never_read_a_mix_of_two_writes::<2, 4, 4, 20>();
        threads_never_read_a_mix_of_two_writes::<4, 8, 4, 18>();
    }
}
