//! The incremental BPE merge loop over distinct pieces.
//!
//! State: every distinct piece (as token ids, in one flat arena) with its count; for every
//! adjacent pair, its total count (weighted by piece counts) and the list of pieces it occurs in;
//! a max-heap of (count, pair) with lazy invalidation. A merge visits only the pieces listed for
//! its pair and updates only the counts of the pairs around each replaced occurrence, so its cost
//! follows the pieces it touches, never the corpus.
//!
//! Why lazy invalidation is exact: a merge of (a, b) -> x only lowers the counts of pairs made of
//! older tokens, and every pair it raises contains x, so it is new and pushed once, with its final
//! count, when the merge ends. Hence a heap entry's count is never below the pair's true count,
//! and a popped entry whose count is current is the true maximum. Pairs below `min_frequency`
//! can never rise again, so they are never pushed.
//!
//! Ties go to the lexicographically greatest (bytes(left), bytes(right)), as the textbook
//! algorithm with Python's `max` over (count, (bytes, bytes)) does; the heap compares token bytes
//! only when counts are equal.

use rustc_hash::FxHashMap;

use crate::error::Result;

pub use crate::Rank;

#[inline]
fn key(a: Rank, b: Rank) -> u64 {
    ((a as u64) << 32) | b as u64
}

#[inline]
fn unkey(k: u64) -> (Rank, Rank) {
    ((k >> 32) as Rank, k as Rank)
}

#[derive(Clone, Copy)]
struct Entry {
    count: u64,
    pair: u64,
}

/// A binary max-heap ordered by (count, bytes of left token, bytes of right token).
struct PairHeap {
    data: Vec<Entry>,
}

impl PairHeap {
    #[inline]
    fn above(a: &Entry, b: &Entry, vocab: &[Vec<u8>]) -> bool {
        if a.count != b.count {
            return a.count > b.count;
        }
        let (al, ar) = unkey(a.pair);
        let (bl, br) = unkey(b.pair);
        (&vocab[al as usize], &vocab[ar as usize]) > (&vocab[bl as usize], &vocab[br as usize])
    }

    fn push(&mut self, e: Entry, vocab: &[Vec<u8>]) {
        self.data.push(e);
        let mut i = self.data.len() - 1;
        while i > 0 {
            let parent = (i - 1) / 2;
            if !Self::above(&self.data[i], &self.data[parent], vocab) {
                break;
            }
            self.data.swap(i, parent);
            i = parent;
        }
    }

    fn pop(&mut self, vocab: &[Vec<u8>]) -> Option<Entry> {
        let last = self.data.pop()?;
        if self.data.is_empty() {
            return Some(last);
        }
        let top = std::mem::replace(&mut self.data[0], last);
        let n = self.data.len();
        let mut i = 0;
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && Self::above(&self.data[r], &self.data[l], vocab) { r } else { l };
            if !Self::above(&self.data[c], &self.data[i], vocab) {
                break;
            }
            self.data.swap(i, c);
            i = c;
        }
        Some(top)
    }

    fn heapify(&mut self, vocab: &[Vec<u8>]) {
        let n = self.data.len();
        for start in (0..n / 2).rev() {
            let mut i = start;
            loop {
                let l = 2 * i + 1;
                if l >= n {
                    break;
                }
                let r = l + 1;
                let c =
                    if r < n && Self::above(&self.data[r], &self.data[l], vocab) { r } else { l };
                if !Self::above(&self.data[c], &self.data[i], vocab) {
                    break;
                }
                self.data.swap(i, c);
                i = c;
            }
        }
    }
}

/// Distinct pieces as token ids in one arena; a piece shrinks in place as merges apply.
struct Pieces {
    ids: Vec<Rank>,
    meta: Vec<PieceMeta>,
}

/// Everything a merge reads about a piece besides its ids, in one place: visiting a piece then
/// costs one cache miss here and one in `ids`, which is what bounds the merge loop.
#[derive(Clone, Copy)]
struct PieceMeta {
    start: usize,
    count: u64,
    len: u32,
    /// The merge that last visited this piece (a piece is listed once per occurrence of a pair).
    visited: u32,
}

impl Pieces {
    #[inline]
    fn get(&self, p: usize) -> &[Rank] {
        let m = &self.meta[p];
        &self.ids[m.start..m.start + m.len as usize]
    }
}

pub struct TrainOptions {
    /// How many merges to learn at most.
    pub merges: usize,
    /// Stop when the best pair occurs fewer times than this.
    pub min_frequency: u64,
}

/// Learns merges from distinct pieces (as bytes) and their counts. Returns the merges as pairs
/// of token ids: ids 0..=255 are the single bytes, merge `i` creates id `256 + i`.
/// `progress(merges_done)` is called after every merge and may stop the loop with an error.
pub fn train<'a>(
    pieces: impl IntoIterator<Item = (&'a [u8], u64)>,
    opts: &TrainOptions,
    progress: &mut dyn FnMut(usize) -> Result<()>,
) -> Result<Vec<(Rank, Rank)>> {
    let mut vocab: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    let min_frequency = opts.min_frequency.max(1);

    // Pieces of one byte have no pair and never matter.
    let mut ps = Pieces { ids: Vec::new(), meta: Vec::new() };
    for (bytes, count) in pieces {
        if bytes.len() < 2 || count == 0 {
            continue;
        }
        ps.meta.push(PieceMeta { start: ps.ids.len(), count, len: bytes.len() as u32, visited: 0 });
        ps.ids.extend(bytes.iter().map(|&b| b as Rank));
    }

    let mut pair_count: FxHashMap<u64, i64> = FxHashMap::default();
    let mut where_: FxHashMap<u64, Vec<u32>> = FxHashMap::default();
    for p in 0..ps.meta.len() {
        let c = ps.meta[p].count as i64;
        for w in ps.get(p).windows(2) {
            let k = key(w[0], w[1]);
            *pair_count.entry(k).or_insert(0) += c;
            let list = where_.entry(k).or_default();
            if list.last() != Some(&(p as u32)) {
                list.push(p as u32);
            }
        }
    }

    let mut heap = PairHeap {
        data: pair_count
            .iter()
            .filter(|(_, &c)| c as u64 >= min_frequency)
            .map(|(&pair, &c)| Entry { count: c as u64, pair })
            .collect(),
    };
    heap.heapify(&vocab);

    let mut merges: Vec<(Rank, Rank)> = Vec::with_capacity(opts.merges);
    let mut step = MergeStep::default();

    while merges.len() < opts.merges {
        let Some(top) = heap.pop(&vocab) else { break };
        let current = pair_count.get(&top.pair).copied().unwrap_or(0).max(0) as u64;
        if current != top.count {
            if current >= min_frequency {
                heap.push(Entry { count: current, pair: top.pair }, &vocab);
            }
            continue;
        }
        let (a, b) = unkey(top.pair);
        let x = vocab.len() as Rank;
        let mut merged = vocab[a as usize].clone();
        merged.extend_from_slice(&vocab[b as usize]);
        vocab.push(merged);
        merges.push((a, b));
        let stamp = merges.len() as u32;

        let occurrences = where_.remove(&top.pair).unwrap_or_default();
        step.clear();
        for &p in &occurrences {
            step.merge_piece(&mut ps, p, a, b, x, stamp);
        }
        // Apply the step's changes: one lookup per distinct pair in the big tables.
        for (&k, &d) in &step.deltas {
            if d != 0 {
                *pair_count.entry(k).or_insert(0) += d;
            }
        }
        pair_count.remove(&top.pair);
        step.created.sort_unstable();
        step.created.dedup();
        let mut i = 0;
        while i < step.created.len() {
            let k = step.created[i].0;
            let list = where_.entry(k).or_default();
            while i < step.created.len() && step.created[i].0 == k {
                list.push(step.created[i].1);
                i += 1;
            }
            let c = pair_count.get(&k).copied().unwrap_or(0);
            if c > 0 && c as u64 >= min_frequency {
                heap.push(Entry { count: c as u64, pair: k }, &vocab);
            }
        }
        progress(merges.len())?;
    }
    Ok(merges)
}

/// What one merge changes, gathered before it touches the big tables: the count deltas per
/// pair (a small map that stays in cache while a merge visits many pieces), and the
/// (new pair, piece) occurrences that the pair -> pieces lists must learn.
#[derive(Default)]
struct MergeStep {
    deltas: FxHashMap<u64, i64>,
    created: Vec<(u64, u32)>,
}

impl MergeStep {
    fn clear(&mut self) {
        self.deltas.clear();
        self.created.clear();
    }

    #[inline]
    fn add(&mut self, k: u64, d: i64) {
        *self.deltas.entry(k).or_insert(0) += d;
    }

    /// Replaces every (a, b) in piece `p`, left to right and non-overlapping, by `x`, and
    /// records the count changes of the pairs around each replaced occurrence. A piece already
    /// visited by this merge (`stamp`) is skipped.
    fn merge_piece(&mut self, ps: &mut Pieces, p: u32, a: Rank, b: Rank, x: Rank, stamp: u32) {
        let meta = &mut ps.meta[p as usize];
        if meta.visited == stamp {
            return;
        }
        meta.visited = stamp;
        let c = meta.count as i64;
        let start = meta.start;
        let n = meta.len as usize;
        let ids = &mut ps.ids[start..start + n];
        let mut w = 0; // write position
        let mut r = 0; // read position
        while r < n {
            if r + 1 < n && ids[r] == a && ids[r + 1] == b {
                if w > 0 {
                    let prev = ids[w - 1];
                    self.add(key(prev, a), -c);
                    self.add(key(prev, x), c);
                    self.created.push((key(prev, x), p));
                }
                if r + 2 < n {
                    let next = ids[r + 2];
                    self.add(key(b, next), -c);
                    self.add(key(x, next), c);
                    self.created.push((key(x, next), p));
                }
                ids[w] = x;
                w += 1;
                r += 2;
            } else {
                ids[w] = ids[r];
                w += 1;
                r += 1;
            }
        }
        ps.meta[p as usize].len = w as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The textbook algorithm over the same pieces.
    fn naive(pieces: &[(&[u8], u64)], merges: usize, min_frequency: u64) -> Vec<(Rank, Rank)> {
        let mut vocab: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let mut words: Vec<(Vec<Rank>, u64)> =
            pieces.iter().map(|(b, c)| (b.iter().map(|&x| x as Rank).collect(), *c)).collect();
        let mut out = Vec::new();
        while out.len() < merges {
            let mut counts: FxHashMap<(Rank, Rank), u64> = FxHashMap::default();
            for (w, c) in &words {
                for p in w.windows(2) {
                    *counts.entry((p[0], p[1])).or_insert(0) += c;
                }
            }
            let Some((&(a, b), &c)) = counts.iter().max_by(|(p, c), (q, d)| {
                c.cmp(d).then_with(|| {
                    (&vocab[p.0 as usize], &vocab[p.1 as usize])
                        .cmp(&(&vocab[q.0 as usize], &vocab[q.1 as usize]))
                })
            }) else {
                break;
            };
            if c < min_frequency {
                break;
            }
            let x = vocab.len() as Rank;
            let mut m = vocab[a as usize].clone();
            m.extend_from_slice(&vocab[b as usize]);
            vocab.push(m);
            out.push((a, b));
            for (w, _) in &mut words {
                let mut o = Vec::with_capacity(w.len());
                let mut i = 0;
                while i < w.len() {
                    if i + 1 < w.len() && w[i] == a && w[i + 1] == b {
                        o.push(x);
                        i += 2;
                    } else {
                        o.push(w[i]);
                        i += 1;
                    }
                }
                *w = o;
            }
        }
        out
    }

    fn fast(pieces: &[(&[u8], u64)], merges: usize, min_frequency: u64) -> Vec<(Rank, Rank)> {
        train(pieces.iter().copied(), &TrainOptions { merges, min_frequency }, &mut |_| Ok(()))
            .unwrap()
    }

    #[test]
    fn matches_naive_on_overlapping_runs() {
        let pieces: Vec<(&[u8], u64)> =
            vec![(b"aaaa", 3), (b"abab", 2), (b"aaabaaab", 1), (b"ba", 5), (b"b", 9)];
        assert_eq!(fast(&pieces, 20, 1), naive(&pieces, 20, 1));
        assert_eq!(fast(&pieces, 20, 2), naive(&pieces, 20, 2));
    }

    #[test]
    fn matches_naive_on_pseudo_random_pieces() {
        let mut seed: u64 = 0x9E3779B97F4A7C15;
        let mut rnd = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..30 {
            let owned: Vec<(Vec<u8>, u64)> = (0..40)
                .map(|_| {
                    let len = 1 + (rnd() % 12) as usize;
                    let alphabet = 2 + round % 5;
                    let w: Vec<u8> = (0..len).map(|_| b'a' + (rnd() % alphabet) as u8).collect();
                    (w, 1 + rnd() % 4)
                })
                .collect();
            let mut uniq: FxHashMap<Vec<u8>, u64> = FxHashMap::default();
            for (w, c) in owned {
                *uniq.entry(w).or_insert(0) += c;
            }
            let pieces: Vec<(&[u8], u64)> = uniq.iter().map(|(w, c)| (w.as_slice(), *c)).collect();
            for min_f in [1, 2, 3] {
                assert_eq!(fast(&pieces, 60, min_f), naive(&pieces, 60, min_f), "round {round}");
            }
        }
    }

    #[test]
    fn ties_go_to_the_greatest_bytes() {
        let pieces: Vec<(&[u8], u64)> = vec![(b"ab", 1), (b"cd", 1), (b"ca", 1)];
        assert_eq!(fast(&pieces, 1, 1), vec![(b'c' as Rank, b'd' as Rank)]);
    }

    #[test]
    fn stops_below_min_frequency() {
        let pieces: Vec<(&[u8], u64)> = vec![(b"ab", 1)];
        assert!(fast(&pieces, 5, 2).is_empty());
    }
}
