//! Long pieces in linear time, for monotone models.
//!
//! A model is *monotone* when every merge has a higher priority than every merge that makes
//! one of its two parts. Merge lists as trainers write them are (each merge makes a new token,
//! from tokens that earlier merges made), and so are the published rank files (a token's rank is above the ranks of the
//! two tokens of its last merge); `Bpe::monotone` says which, checked once at load, since a
//! hand-made merge list or rank file need not be.
//!
//! Claim: encoding one piece with a monotone model, the priorities merged never decrease, and
//! a merge only creates pairs of strictly higher priority than its own.
//! Proof: let the merge of priority p join (x, y) into t. The pairs it creates are (h, t) and
//! (t, k) with its neighbours; a merge of either has t as a part, and the merge of priority p
//! makes t, so by monotonicity its priority is above p. Every other pair was already there and
//! was not below p, since p was the lowest. So the next lowest priority is at least p.
//!
//! Hence the queue only ever hands out priorities above the last one, and once the lowest
//! priority p is reached, the set of pairs of priority p is fixed: none is added while they are
//! merged. A priority belongs to one pair (x, y) (one merge of a list; one token of a rank
//! model, whose table keeps one pair per token). If x != y, two occurrences of (x, y) never
//! overlap (that would need y = x), and merging one changes only the pairs beside it, into
//! pairs above p, none of them (x, y): the textbook loop merges all of them, and any order
//! gives the same tokens. If x == y, the occurrences are runs of x (no x is made while merging
//! at p: x is made below p), and the textbook pairs each run up from its left end. So a group
//! of priority p is handled in the order it comes, each entry checked against the tokens as
//! they now are (it may have been merged away or changed), and an (x, x) entry merges its whole
//! run from the left end; no sort by position is needed. Since a priority has one pair, the
//! first entry that is still valid gives (x, y), and the others are checked against it without
//! a lookup.
//!
//! Runs: every pair with a merge is queued, except inside a run of one token x, where only the
//! run's first pair needs to be (invariant R: each maximal run of x of length >= 2, with (x, x)
//! a merge, has an entry at its first pair, or at the first pair of a run it is the end of).
//! When (x, x) comes up, that entry merges the whole run. What can break R: only the ends of a
//! run change before (x, x) comes up (an inner x has x on both sides, and (x, x) is merged at
//! its own priority only), and its right end does not matter; when a merge of priority p eats
//! the first x of a run (as the right part y = x of its pair, the next two tokens being x
//! again), that merge queues the pair of those two x (`merge_at`). Merging a run itself queues
//! the pair before it, the first pair of the new run of xx, and the pair after it: R holds for
//! the new run. The initial pairs keep R the same way (a byte pair inside a run of that byte
//! is not queued). So a long run of one letter or of spaces costs one merge per token made
//! and next to no queue traffic.
//!
//! The queue (`BucketQueue`): a bucket of positions per priority present, in blocks of one
//! pool, and a binary heap of the priorities that have a bucket. Each entry is written once
//! and read once (no moves between buckets), a block read is given back and refilled by later
//! pushes while still in cache, and a priority, once handed out, never comes back (pushes are
//! above it), so the heap holds each priority at most once per piece.
//!
//! Cost, for a piece of n bytes: at most n - 1 + 3 (n - 1) entries are pushed (the first pairs,
//! then at most three per merge), each written once and read once, with one expected O(1)
//! hash lookup per push. The heap does O(d log d) work for the d distinct priorities reached,
//! d at most the number of merges of the model, whatever n. Walking a run to its left end
//! passes only tokens that the run's merges then consume. So O(n) plus a term bounded by the
//! model: linear for a fixed vocabulary.
//!
//! Memory and caches: the tokens take 4 bytes per input byte (`Tokens`: the next token is
//! found through the token's length, not stored beside it), and the pool holds only the
//! entries not yet read, so a 10 MB piece of one letter needs about 40 MB. The positions of
//! one priority are spread over the whole piece (one cache line each), so the loop prefetches
//! the word of the entry `AHEAD` places on, and large buffers ask for transparent huge pages
//! (a TLB miss per entry otherwise, and 512 times the page faults).
//!
//! What was measured and tried (the heaps before this one, their figures): `bpe/NOTES.md`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

use super::{priority, result, Bpe, NONE};
use crate::Rank;

/// "No block" / "no position".
const NIL: u32 = u32::MAX;

/// The positions pushed with one priority: a chain of blocks of the queue's pool, the last
/// one filled up to `fill`.
#[derive(Clone, Copy)]
struct Bucket {
    head: u32,
    tail: u32,
    fill: u32,
}

/// A bucket of positions per priority present, and a binary heap of those priorities, handing
/// out all the positions of the lowest priority at once. Pushed priorities must be above the
/// last one handed out (the model is monotone), so a priority is handed out at most once.
/// Positions live in blocks of one pool; a block handed out is reused by later pushes.
struct BucketQueue {
    /// Positions per block.
    block: usize,
    pool: Vec<u32>,
    /// The block after each block in its bucket (`NIL`: none).
    link: Vec<u32>,
    free: Vec<u32>,
    buckets: FxHashMap<u32, Bucket>,
    heap: BinaryHeap<Reverse<u32>>,
    /// The last priority handed out, once one was.
    last: Option<u32>,
}

impl BucketQueue {
    /// A queue for a piece of `n` bytes (blocks sized so that a short piece stays small).
    fn new(n: usize) -> Self {
        // Room for every first pair and one more per merge: most pieces never grow it.
        let pool = Vec::with_capacity(2 * n);
        super::advise_huge_pages(&pool);
        BucketQueue {
            block: (n / 32).clamp(16, 256),
            pool,
            link: Vec::new(),
            free: Vec::new(),
            buckets: FxHashMap::default(),
            heap: BinaryHeap::new(),
            last: None,
        }
    }

    fn new_block(&mut self) -> u32 {
        if let Some(b) = self.free.pop() {
            self.link[b as usize] = NIL;
            return b;
        }
        let b = self.link.len() as u32;
        self.link.push(NIL);
        self.pool.resize(self.pool.len() + self.block, 0);
        b
    }

    #[inline(always)]
    fn push(&mut self, p: u32, position: u32) {
        debug_assert!(self.last.is_none_or(|last| p > last));
        let block = self.block;
        if let Some(bucket) = self.buckets.get_mut(&p) {
            if (bucket.fill as usize) < block {
                self.pool[bucket.tail as usize * block + bucket.fill as usize] = position;
                bucket.fill += 1;
                return;
            }
        }
        self.push_slow(p, position);
    }

    /// `push` when `p` has no bucket yet or its last block is full.
    #[inline(never)]
    fn push_slow(&mut self, p: u32, position: u32) {
        let b = self.new_block();
        let bucket = match self.buckets.get_mut(&p) {
            Some(bucket) => {
                self.link[bucket.tail as usize] = b;
                bucket.tail = b;
                bucket.fill = 0;
                bucket
            }
            None => {
                self.heap.push(Reverse(p));
                self.buckets.entry(p).or_insert(Bucket {
                    head: b,
                    tail: b,
                    fill: 0,
                })
            }
        };
        self.pool[b as usize * self.block] = position;
        bucket.fill = 1;
    }

    /// The lowest priority and its bucket, taken out of the queue; read the bucket with
    /// `positions`, then give each block back with `release`.
    fn pop(&mut self) -> Option<Bucket> {
        let Reverse(p) = self.heap.pop()?;
        self.last = Some(p);
        self.buckets.remove(&p)
    }

    /// The range of `pool` that block `b` of `bucket` fills.
    #[inline(always)]
    fn positions(&self, bucket: &Bucket, b: u32) -> std::ops::Range<usize> {
        let start = b as usize * self.block;
        let len = if b == bucket.tail {
            bucket.fill as usize
        } else {
            self.block
        };
        start..start + len
    }

    /// Gives block `b` back once read; returns the next block of its bucket (`NIL`: none).
    fn release(&mut self, b: u32) -> u32 {
        self.free.push(b);
        self.link[b as usize]
    }
}

impl Bpe {
    /// Whether a merge list is monotone (see the module notes): every merge that is used (the
    /// first of each pair) has a higher priority than every used merge that makes its parts.
    /// Call once `pairs` holds the merges.
    pub(super) fn merges_are_monotone(&self, merges: &[(Rank, Rank)]) -> bool {
        // made[t]: 1 + the highest priority of a used merge that makes t; 0: none does.
        let mut made = vec![0u32; self.spans.len()];
        let used = |i: usize, a: Rank, b: Rank| {
            let v = self.pairs.get(a, b);
            (v != NONE && priority(v) as usize == i).then(|| result(v))
        };
        for (i, &(a, b)) in merges.iter().enumerate() {
            if let Some(t) = used(i, a, b) {
                let m = &mut made[t as usize];
                *m = (*m).max(i as u32 + 1);
            }
        }
        merges.iter().enumerate().all(|(i, &(a, b))| {
            used(i, a, b).is_none()
                || (made[a as usize] <= i as u32 && made[b as usize] <= i as u32)
        })
    }

    /// Whether a rank model's pairs (left, right, token), the token's rank being the priority,
    /// are monotone: each part that some pair makes has a lower rank than the token.
    pub(super) fn ranks_are_monotone(&self, pairs: &[(Rank, Rank, Rank)]) -> bool {
        let mut made = vec![false; self.spans.len()];
        for &(_, _, t) in pairs {
            made[t as usize] = true;
        }
        pairs
            .iter()
            .all(|&(l, r, t)| (!made[l as usize] || l < t) && (!made[r as usize] || r < t))
    }

    /// Any length >= 2, monotone models only: the merges of each priority in one sweep, lowest
    /// priority first (see the module notes).
    /// Not inlined: inlined into `encode_by_merges`, it cost the short path 2 % more
    /// instructions there (cachegrind, a cold o200k pass over multilingual text).
    #[inline(never)]
    pub(super) fn encode_long_monotone(&self, piece: &[u8], out: &mut Vec<Rank>) {
        let Some(node) = self.merge_long_monotone(piece) else {
            return self.encode_long_heap(piece, out);
        };
        let (n, mut i) = (node.n(), 0);
        while i < n {
            out.push(node.tok(i as usize));
            i = node.next(i as usize);
        }
    }

    /// The number of ids `encode_long_monotone` appends, without writing them.
    #[inline(never)]
    pub(super) fn count_long_monotone(&self, piece: &[u8]) -> usize {
        let Some(node) = self.merge_long_monotone(piece) else {
            let mut out = Vec::new();
            self.encode_long_heap(piece, &mut out);
            return out.len();
        };
        let (n, mut i, mut count) = (node.n(), 0, 0);
        while i < n {
            count += 1;
            i = node.next(i as usize);
        }
        count
    }

    /// The tokens of `piece` once merged, as `Tokens`; `None` where positions and ids would not
    /// fit a `Tokens` word (2 GiB of one piece), which the heap then encodes.
    fn merge_long_monotone(&self, piece: &[u8]) -> Option<Tokens<'_>> {
        debug_assert!(self.monotone);
        if piece.len() >= START as usize || self.spans.len() >= START as usize {
            return None;
        }
        let n = piece.len() as u32;
        let mut word = Vec::with_capacity(piece.len());
        super::advise_huge_pages(&word);
        word.extend(piece.iter().map(|&b| START | self.byte_ids[b as usize]));
        let mut node = Tokens {
            word,
            spans: &self.spans,
        };
        let mut queue = BucketQueue::new(piece.len());
        for (i, w) in piece.windows(2).enumerate() {
            // Inside a run of one byte only its first pair is queued (see `merge_at`).
            if w[0] == w[1] && i > 0 && piece[i - 1] == w[0] {
                continue;
            }
            let v = self.byte_pairs[(w[0] as usize) << 8 | w[1] as usize];
            if v != NONE {
                queue.push(priority(v), i as u32);
            }
        }
        while let Some(bucket) = queue.pop() {
            // The pair (x, y) of this priority and its merge, once an entry shows it: the
            // other entries are then checked against it without a lookup.
            let mut known: Option<(Rank, Rank, u64)> = None;
            let mut b = bucket.head;
            while b != NIL {
                let range = queue.positions(&bucket, b);
                for at in range.clone() {
                    if let Some(&ahead) = queue.pool[..range.end].get(at + AHEAD) {
                        prefetch(&node.word[ahead as usize]);
                    }
                    let i = queue.pool[at] as usize;
                    let x = node.tok(i);
                    if x == DEAD {
                        continue;
                    }
                    let j = node.next(i);
                    if j >= n {
                        continue;
                    }
                    let y = node.tok(j as usize);
                    let v = match known {
                        Some((kx, ky, v)) if kx == x && ky == y => v,
                        Some(_) => continue,
                        None => {
                            let v = self.pair(x, y);
                            if v == NONE || Some(priority(v)) != queue.last {
                                continue;
                            }
                            known = Some((x, y, v));
                            v
                        }
                    };
                    if x != y {
                        // Occurrences of (x, y), x != y, never overlap: merge in any order.
                        self.merge_at(i, v, &mut node, &mut queue);
                        continue;
                    }
                    // (x, x): the run of x around i pairs up from its left end.
                    let mut s = i;
                    while let Some(h) = node.prev(s) {
                        if node.tok(h) != x {
                            break;
                        }
                        s = h;
                    }
                    self.merge_run(s, v, &mut node, &mut queue);
                }
                b = queue.release(b);
            }
        }
        Some(node)
    }
}

/// How many positions of a group ahead to prefetch the node of: the positions of one priority
/// are spread over the whole piece, so each is a cache miss of its own once the piece's nodes
/// outgrow the caches, and they do not depend on each other.
const AHEAD: usize = 16;

#[inline(always)]
fn prefetch<T>(x: &T) {
    super::prefetch_at(x as *const T)
}

/// The token of a merged-away node.
const DEAD: Rank = Rank::MAX;

/// The flag of a word of `Tokens` that starts a token.
const START: u32 = 1 << 31;

/// The tokens of a piece in `encode_long_monotone`, one u32 word per byte: at the first byte
/// of a token, `START | token`; at the last byte of a token of two bytes or more, where that
/// token starts; elsewhere anything without `START`. The next token starts after the token's
/// length, and the one before the token at `i` starts at `i - 1` when that word starts a
/// token, else where that word says. Four bytes per input byte: links of their own (next and
/// previous) made nodes of 12 bytes, then of 8 with a link to the next token; at 10 MB each
/// byte less is 10 MB less memory for the kernel to map and zero on every call.
struct Tokens<'a> {
    word: Vec<u32>,
    /// The vocabulary's (offset, length) per id: the lengths.
    spans: &'a [(u32, u32)],
}

impl Tokens<'_> {
    #[inline(always)]
    fn n(&self) -> u32 {
        self.word.len() as u32
    }

    /// The token starting at `i`, or `DEAD`.
    #[inline(always)]
    fn tok(&self, i: usize) -> Rank {
        let w = self.word[i];
        if w & START != 0 {
            w & !START
        } else {
            DEAD
        }
    }

    /// Where the token after the one starting at `i` starts (n: none).
    #[inline(always)]
    fn next(&self, i: usize) -> u32 {
        let t = self.word[i] & !START;
        debug_assert!(self.word[i] & START != 0);
        i as u32 + self.spans[t as usize].1
    }

    /// Where the token before the one starting at `i` starts (`None`: `i` is the first).
    #[inline(always)]
    fn prev(&self, i: usize) -> Option<usize> {
        let before = *self.word.get(i.wrapping_sub(1))?;
        Some(if before & START != 0 {
            i - 1
        } else {
            before as usize
        })
    }

    /// Joins the token at `i` with the next one into `t`; returns where the token after them
    /// starts.
    #[inline(always)]
    fn join(&mut self, i: usize, t: Rank) -> u32 {
        let j = self.next(i) as usize;
        self.word[i] = START | t;
        let k = i as u32 + self.spans[t as usize].1;
        debug_assert_eq!(k, self.next(j));
        // The joined token ends at k - 1 (j itself when the right part was one byte).
        self.word[j] = i as u32;
        self.word[k as usize - 1] = i as u32;
        k
    }
}

impl Bpe {
    /// Queues the pair (x, y) of the token at `h` and the next one when it has a merge.
    #[inline(always)]
    fn queue_pair(&self, h: usize, x: Rank, y: Rank, queue: &mut BucketQueue) {
        let w = self.pair(x, y);
        if w != NONE {
            queue.push(priority(w), h as u32);
        }
    }

    /// Merges the token at `i` with the next one by `v` (their pair) and queues the pairs this
    /// makes with the neighbours. Within a run of one token x, only the run's first pair
    /// needs to be queued (the whole run is merged from its left end when (x, x) comes up);
    /// when this merge eats the first x of a run, the pair of the next two x is queued.
    #[inline(always)]
    fn merge_at(&self, i: usize, v: u64, node: &mut Tokens, queue: &mut BucketQueue) {
        let n = node.n();
        let right = node.tok(node.next(i) as usize);
        let t = result(v);
        let k = node.join(i, t);
        if k < n {
            let z = node.tok(k as usize);
            debug_assert!(self.pair(t, z) == NONE || priority(self.pair(t, z)) > priority(v));
            self.queue_pair(i, t, z, queue);
            let m = node.next(k as usize);
            if z == right && m < n && node.tok(m as usize) == z {
                self.queue_pair(k as usize, z, z, queue);
            }
        }
        if let Some(h) = node.prev(i) {
            let g = node.tok(h);
            debug_assert!(self.pair(g, t) == NONE || priority(self.pair(g, t)) > priority(v));
            self.queue_pair(h, g, t, queue);
        }
    }

    /// Merges the run of x (the pair of `v`) that starts at `s`, pairing it up from the left,
    /// and queues the pairs this makes: with the token before the run, the first two of the
    /// new run of xx (the rest of that run follows from its first pair), and the token after.
    fn merge_run(&self, s: usize, v: u64, node: &mut Tokens, queue: &mut BucketQueue) {
        let n = node.n();
        let t = result(v);
        let x = node.tok(s);
        if let Some(h) = node.prev(s) {
            self.queue_pair(h, node.tok(h), t, queue);
        }
        let mut at = s;
        let mut merged = 0;
        loop {
            let k = node.join(at, t);
            if merged == 1 {
                self.queue_pair(s, t, t, queue);
            }
            merged += 1;
            if k >= n {
                break;
            }
            let z = node.tok(k as usize);
            if z != x || node.next(k as usize) >= n || node.tok(node.next(k as usize) as usize) != x
            {
                self.queue_pair(at, t, z, queue);
                break;
            }
            at = k as usize;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn byte_vocab() -> Vec<(Rank, Vec<u8>)> {
        (0..256).map(|b| (b as Rank, vec![b as u8])).collect()
    }

    use crate::bpe::encode::tests::naive;

    struct Rng(u64);
    impl Rng {
        fn below(&mut self, m: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 33) % m
        }
    }

    /// Every position of a bucket, in the order pushed, giving its blocks back.
    fn drain(q: &mut BucketQueue, bucket: &Bucket) -> Vec<u32> {
        let mut got = Vec::new();
        let mut b = bucket.head;
        while b != NIL {
            got.extend_from_slice(&q.pool[q.positions(bucket, b)]);
            b = q.release(b);
        }
        got
    }

    #[test]
    fn bucket_queue_hands_out_groups_in_order() {
        for (seed, n) in [(7, 3000), (8, 100), (9, 40_000)] {
            let mut rng = Rng(seed);
            let mut q = BucketQueue::new(n);
            let mut all = Vec::new();
            // Few priorities at first (big buckets over many blocks), then many.
            for pos in 0..n as u32 {
                let p = rng.below(if pos % 2 == 0 { 5 } else { 1 << 20 }) as u32;
                q.push(p, pos);
                all.push((p, pos));
            }
            let mut got = Vec::new();
            while let Some(bucket) = q.pop() {
                let p = q.last.unwrap();
                assert!(got.last().is_none_or(|&(last, _)| last < p));
                let positions = drain(&mut q, &bucket);
                assert!(!positions.is_empty());
                got.extend(positions.iter().map(|&pos| (p, pos)));
                // Monotone pushes: above the priority just handed out, some of them while the
                // blocks of this one are given back and reused.
                if got.len() < 3 * n {
                    for _ in 0..1 + rng.below(3) {
                        let spread = if rng.below(2) == 0 { 3 } else { 1000 };
                        let p = p + 1 + rng.below(spread) as u32;
                        let pos = rng.below(n as u64) as u32;
                        q.push(p, pos);
                        all.push((p, pos));
                    }
                }
            }
            // In order of priority, and in the order pushed within one.
            all.sort_by_key(|&(p, _)| p);
            assert_eq!(got, all);
        }
    }

    /// A random merge list over a few letters: each merge joins two tokens made so far (a
    /// trained list, monotone), or, when `shuffle`, the same merges in a random order (most
    /// such lists are not monotone; merges of tokens not made yet still work).
    fn random_merges(rng: &mut Rng, shuffle: bool) -> Bpe {
        let mut vocab = byte_vocab();
        let mut merges = Vec::new();
        let mut made: Vec<Rank> = b"abc ".iter().map(|&b| b as Rank).collect();
        let count = 10 + rng.below(60) as usize;
        while merges.len() < count {
            let a = made[rng.below(made.len() as u64) as usize];
            let b = made[rng.below(made.len() as u64) as usize];
            let bytes = [vocab[a as usize].1.clone(), vocab[b as usize].1.clone()].concat();
            if bytes.len() > 12 {
                continue;
            }
            if !vocab.iter().any(|(_, v)| *v == bytes) {
                let t = vocab.len() as Rank;
                vocab.push((t, bytes));
                made.push(t);
            }
            merges.push((a, b));
        }
        if shuffle {
            for i in (1..merges.len()).rev() {
                merges.swap(i, rng.below(i as u64 + 1) as usize);
            }
        }
        Bpe::from_merges(vocab, &merges).unwrap()
    }

    fn random_piece(rng: &mut Rng, n: usize) -> Vec<u8> {
        // Long runs of one letter, or of a few letters over and over (runs of a token of
        // several bytes), now and then: the hostile cases.
        let mut piece = Vec::with_capacity(n);
        while piece.len() < n {
            let unit: Vec<u8> = (0..1 + rng.below(3) * rng.below(2))
                .map(|_| b"abc "[rng.below(4) as usize])
                .collect();
            let run = if rng.below(4) == 0 {
                1 + rng.below(300)
            } else {
                1
            };
            for _ in 0..run {
                piece.extend_from_slice(&unit);
            }
        }
        piece.truncate(n);
        piece
    }

    #[test]
    fn monotone_path_matches_the_heap_and_the_textbook_loop() {
        let mut rng = Rng(2024);
        let (mut monotone, mut not) = (0, 0);
        for round in 0..80 {
            let bpe = random_merges(&mut rng, round % 2 == 1);
            if bpe.monotone {
                monotone += 1;
            } else {
                not += 1;
            }
            for _ in 0..6 {
                let n = 2 + rng.below(3000) as usize;
                let piece = random_piece(&mut rng, n);
                let mut heap = Vec::new();
                bpe.encode_long_heap(&piece, &mut heap);
                let mut via = Vec::new();
                bpe.encode_long(&piece, &mut via);
                assert_eq!(via, heap);
                if bpe.monotone {
                    let mut fast = Vec::new();
                    bpe.encode_long_monotone(&piece, &mut fast);
                    assert_eq!(fast, heap);
                }
                if n < 400 {
                    assert_eq!(heap, naive(&bpe, &piece));
                }
            }
        }
        // Both kinds were tried (a list in training order is not monotone when a later merge
        // makes a token again, e.g. (a, bc) after (ab, c) and a merge of abc in between).
        assert!(
            monotone >= 25 && not >= 10,
            "{monotone} monotone, {not} not"
        );
    }

    #[test]
    fn monotonicity_is_decided_per_model() {
        let mut v = byte_vocab();
        v.push((256, b"ab".to_vec()));
        v.push((257, b"abc".to_vec()));
        v.push((258, b"bc".to_vec()));
        // (ab, c) before the merge that makes ab: not monotone.
        let bpe = Bpe::from_merges(v.clone(), &[(256, 99), (97, 98), (98, 99)]).unwrap();
        assert!(!bpe.monotone);
        let bpe = Bpe::from_merges(v.clone(), &[(97, 98), (256, 99), (98, 99)]).unwrap();
        assert!(bpe.monotone);
        // A merge repeated later is not used, so it does not count.
        let bpe = Bpe::from_merges(v.clone(), &[(97, 98), (256, 99), (97, 98)]).unwrap();
        assert!(bpe.monotone);
        // Ranks: abc (257) above its parts ab (256) and c: monotone; abc below ab: not.
        let bpe = Bpe::from_ranks(v.clone()).unwrap();
        assert!(bpe.monotone);
        let mut v = byte_vocab();
        v.push((258, b"ab".to_vec()));
        v.push((257, b"abc".to_vec()));
        let bpe = Bpe::from_ranks(v).unwrap();
        assert!(!bpe.monotone);
        let mut out = Vec::new();
        bpe.encode_long(&b"abcabcab".repeat(40), &mut out);
        assert_eq!(out, naive(&bpe, &b"abcabcab".repeat(40)));
    }
}
