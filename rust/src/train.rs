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
    start: Vec<usize>,
    len: Vec<u32>,
    count: Vec<u64>,
}

impl Pieces {
    #[inline]
    fn get(&self, p: usize) -> &[Rank] {
        &self.ids[self.start[p]..self.start[p] + self.len[p] as usize]
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
    let mut ps = Pieces { ids: Vec::new(), start: Vec::new(), len: Vec::new(), count: Vec::new() };
    for (bytes, count) in pieces {
        if bytes.len() < 2 || count == 0 {
            continue;
        }
        ps.start.push(ps.ids.len());
        ps.len.push(bytes.len() as u32);
        ps.count.push(count);
        ps.ids.extend(bytes.iter().map(|&b| b as Rank));
    }

    let mut pair_count: FxHashMap<u64, i64> = FxHashMap::default();
    let mut where_: FxHashMap<u64, Vec<u32>> = FxHashMap::default();
    for p in 0..ps.count.len() {
        let c = ps.count[p] as i64;
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
    let mut visited: Vec<u32> = vec![u32::MAX; ps.count.len()];
    let mut new_pairs: Vec<u64> = Vec::new();

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
        new_pairs.clear();
        for &p in &occurrences {
            let p = p as usize;
            if visited[p] == stamp {
                continue;
            }
            visited[p] = stamp;
            merge_piece(&mut ps, p, a, b, x, &mut pair_count, &mut where_, &mut new_pairs);
        }
        pair_count.remove(&top.pair);
        new_pairs.sort_unstable();
        new_pairs.dedup();
        for &k in &new_pairs {
            let c = pair_count.get(&k).copied().unwrap_or(0);
            if c > 0 && c as u64 >= min_frequency {
                heap.push(Entry { count: c as u64, pair: k }, &vocab);
            }
        }
        progress(merges.len())?;
    }
    Ok(merges)
}

/// Replaces every (a, b) in piece `p`, left to right and non-overlapping, by `x`, and updates
/// the counts of the pairs around each replaced occurrence.
#[allow(clippy::too_many_arguments)]
fn merge_piece(
    ps: &mut Pieces,
    p: usize,
    a: Rank,
    b: Rank,
    x: Rank,
    pair_count: &mut FxHashMap<u64, i64>,
    where_: &mut FxHashMap<u64, Vec<u32>>,
    new_pairs: &mut Vec<u64>,
) {
    let c = ps.count[p] as i64;
    let start = ps.start[p];
    let n = ps.len[p] as usize;
    let ids = &mut ps.ids[start..start + n];
    let add = |k: u64, d: i64, pair_count: &mut FxHashMap<u64, i64>| {
        *pair_count.entry(k).or_insert(0) += d;
    };
    let mut note_new = |k: u64, where_: &mut FxHashMap<u64, Vec<u32>>| {
        new_pairs.push(k);
        let list = where_.entry(k).or_default();
        if list.last() != Some(&(p as u32)) {
            list.push(p as u32);
        }
    };
    let mut w = 0; // write position
    let mut r = 0; // read position
    while r < n {
        if r + 1 < n && ids[r] == a && ids[r + 1] == b {
            if w > 0 {
                let prev = ids[w - 1];
                add(key(prev, a), -c, pair_count);
                add(key(prev, x), c, pair_count);
                note_new(key(prev, x), where_);
            }
            if r + 2 < n {
                let next = ids[r + 2];
                add(key(b, next), -c, pair_count);
                add(key(x, next), c, pair_count);
                note_new(key(x, next), where_);
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
    ps.len[p] = w as u32;
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
