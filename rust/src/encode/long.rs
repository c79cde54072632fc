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
//! Hence the queue only ever hands out priorities at or above the last one (a radix heap
//! suffices), and once the lowest priority p is reached, the set of pairs of priority p is
//! fixed: none is added while they are merged. A priority belongs to one pair (x, y) (one merge
//! of a list; one token of a rank model, whose table keeps one pair per token). If x != y, two
//! occurrences of (x, y) never overlap (that would need y = x), and merging one changes only the
//! pairs beside it, into pairs above p, none of them (x, y): the textbook loop merges all of
//! them, and any order gives the same tokens. If x == y, the occurrences are runs of x (no x is
//! made while merging at p: x is made below p), and the textbook pairs each run up from its
//! left end. So a group of priority p is handled in the order it comes, each entry checked
//! against the tokens as they now are (it may have been merged away or changed), and an (x, x)
//! entry merges its whole run from the left end; no sort by position is needed.
//!
//! Cost, for a piece of n bytes: at most n - 1 + 2 (n - 1) entries are pushed (the first pairs,
//! then two per merge). An entry moves between the radix heap's buckets at most 24 times (its
//! bucket index, the highest bit where its priority differs from the last one handed out, only
//! decreases), then is checked once. Finding the lowest bucket is 24 checks per priority
//! reached, and priorities reached are at most the entries. Walking a run to its left end
//! passes only tokens that the run's merges then consume. So O(n), with a constant that does
//! not depend on n: linear for a fixed vocabulary. The four-ary heap it replaces for monotone
//! models did O(log n) work per pop over a heap far bigger than the caches (0.13 -> 0.21 s/MB
//! from 100 KB to 10 MB of one letter). A first version sorted each group by position (radix
//! sort of 11-bit digits when large): correct, but a 10 MB piece needs one more pass than a
//! 1 MB one (a log factor again, if a small one), and the argument above shows that no order
//! is needed.

use super::{priority, result, Bpe, NONE, PRIORITY_BOUND};
use crate::Rank;

/// Bits of a priority (`PRIORITY_BOUND` is `1 << PRIORITY_BITS`).
const PRIORITY_BITS: usize = 24;
const _: () = assert!(PRIORITY_BOUND == 1 << PRIORITY_BITS);

/// A radix heap of (priority, position), packed `priority << 32 | position`, handing out all
/// the entries of the lowest priority at once. Pushed priorities must not be below the last
/// priority handed out (the model is monotone).
struct RadixQueue {
    /// The last priority handed out (0 before the first).
    last: u32,
    /// Bucket 0: priority == `last`; bucket b > 0: the highest bit where the priority differs
    /// from `last` is bit b - 1.
    buckets: [Vec<u64>; PRIORITY_BITS + 1],
}

impl RadixQueue {
    fn new() -> Self {
        RadixQueue {
            last: 0,
            buckets: std::array::from_fn(|_| Vec::new()),
        }
    }

    #[inline(always)]
    fn bucket(&self, p: u32) -> usize {
        (32 - (p ^ self.last).leading_zeros()) as usize
    }

    #[inline(always)]
    fn push(&mut self, p: u32, position: u32) {
        debug_assert!(p >= self.last && (p as u64) < PRIORITY_BOUND);
        let b = self.bucket(p);
        self.buckets[b].push((p as u64) << 32 | position as u64);
    }

    /// Moves every entry of the lowest priority into `group` (cleared first), in no particular
    /// order; false when the queue is empty.
    fn pop_group(&mut self, group: &mut Vec<u64>) -> bool {
        group.clear();
        if self.buckets[0].is_empty() {
            let Some(b) = (1..self.buckets.len()).find(|&b| !self.buckets[b].is_empty()) else {
                return false;
            };
            let mut moving = std::mem::take(&mut self.buckets[b]);
            // The entries of bucket b agree with `last` above bit b - 1 and all have that bit
            // set; their lowest priority agrees with all of them down to bit b - 1, so each goes
            // to a lower bucket, and the entries of higher buckets stay where they are.
            self.last = (moving.iter().copied().min().unwrap_or(0) >> 32) as u32;
            for &x in &moving {
                let to = self.bucket((x >> 32) as u32);
                debug_assert!(to < b);
                self.buckets[to].push(x);
            }
            moving.clear();
            self.buckets[b] = moving; // keeps its capacity
        }
        std::mem::swap(group, &mut self.buckets[0]);
        true
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
        debug_assert!(self.monotone);
        const DEAD: Rank = Rank::MAX;
        let n = piece.len() as u32;
        // One node per byte: its token and links together, so that a merge reads and writes
        // one place per token rather than three arrays (once merges have spread the live
        // tokens out, each array access is a cache line of its own).
        let mut node: Vec<Node> = piece
            .iter()
            .enumerate()
            .map(|(i, &b)| Node {
                tok: self.byte_ids[b as usize],
                next: i as u32 + 1,               // n: none
                prev: (i as u32).wrapping_sub(1), // u32::MAX: none
            })
            .collect();
        let mut queue = RadixQueue::new();
        for (i, w) in piece.windows(2).enumerate() {
            let v = self.byte_pairs[(w[0] as usize) << 8 | w[1] as usize];
            if v != NONE {
                queue.push(priority(v), i as u32);
            }
        }
        let mut group = Vec::new();
        while queue.pop_group(&mut group) {
            let p = queue.last;
            for &entry in &group {
                let i = entry as u32 as usize;
                let j = node[i].next;
                if node[i].tok == DEAD || j >= n {
                    continue;
                }
                let x = node[i].tok;
                let y = node[j as usize].tok;
                let v = self.pair(x, y);
                if v == NONE || priority(v) != p {
                    continue;
                }
                if x != y {
                    // Occurrences of (x, y), x != y, never overlap: merge in any order.
                    self.merge_at(i, v, &mut node, &mut queue);
                    continue;
                }
                // (x, x): the run of x around i pairs up from its left end.
                let mut s = i;
                while node[s].prev != u32::MAX && node[node[s].prev as usize].tok == x {
                    s = node[s].prev as usize;
                }
                while node[s].next < n && node[s].tok == x && node[node[s].next as usize].tok == x {
                    self.merge_at(s, v, &mut node, &mut queue);
                    s = node[s].next as usize;
                    if s >= n as usize {
                        break;
                    }
                }
            }
        }
        let mut i = 0;
        while i < n {
            out.push(node[i as usize].tok);
            i = node[i as usize].next;
        }
    }
}

/// A token of the linked list of `encode_long_monotone`, at the position of its first byte.
#[derive(Clone, Copy)]
struct Node {
    /// `Rank::MAX` once merged into the token on its left.
    tok: Rank,
    next: u32,
    prev: u32,
}

impl Bpe {
    /// Merges the tokens at `i` and `next` by `v` (their pair) and queues the pairs this
    /// makes with the neighbours.
    #[inline(always)]
    fn merge_at(&self, i: usize, v: u64, node: &mut [Node], queue: &mut RadixQueue) {
        let n = node.len() as u32;
        let j = node[i].next as usize;
        node[i].tok = result(v);
        node[j].tok = Rank::MAX;
        let k = node[j].next;
        node[i].next = k;
        if k < n {
            node[k as usize].prev = i as u32;
            let w = self.pair(node[i].tok, node[k as usize].tok);
            if w != NONE {
                debug_assert!(priority(w) > priority(v));
                queue.push(priority(w), i as u32);
            }
        }
        let h = node[i].prev;
        if h != u32::MAX {
            let w = self.pair(node[h as usize].tok, node[i].tok);
            if w != NONE {
                debug_assert!(priority(w) > priority(v));
                queue.push(priority(w), h);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn byte_vocab() -> Vec<(Rank, Vec<u8>)> {
        (0..256).map(|b| (b as Rank, vec![b as u8])).collect()
    }

    use crate::encode::tests::naive;

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

    #[test]
    fn radix_queue_hands_out_groups_in_order() {
        let mut rng = Rng(7);
        let mut q = RadixQueue::new();
        let mut all = Vec::new();
        for pos in 0..3000u32 {
            let p = rng.below(1 << 20) as u32;
            q.push(p, pos);
            all.push((p as u64) << 32 | pos as u64);
        }
        let mut got = Vec::new();
        let mut group = Vec::new();
        while q.pop_group(&mut group) {
            group.sort_unstable();
            assert!(group.iter().all(|&x| (x >> 32) as u32 == q.last));
            got.extend_from_slice(&group);
            // Monotone pushes: above the priority just handed out.
            if got.len() < 6000 {
                for _ in 0..2 {
                    let p = q.last + 1 + rng.below(1000) as u32;
                    let pos = 3000 + rng.below(600) as u32;
                    q.push(p, pos);
                    all.push((p as u64) << 32 | pos as u64);
                }
            }
        }
        all.sort_unstable();
        assert_eq!(got, all);
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
        // Long runs of one letter now and then: the hostile case.
        let mut piece = Vec::with_capacity(n);
        while piece.len() < n {
            let c = b"abc "[rng.below(4) as usize];
            let run = if rng.below(4) == 0 {
                1 + rng.below(300)
            } else {
                1
            };
            piece.extend(std::iter::repeat_n(c, run as usize));
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
