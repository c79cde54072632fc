//! Subword regularization (Kudo 2018) for Unigram models: a segmentation drawn from the lattice
//! of every segmentation with probability proportional to `exp(theta * score)` (sentencepiece's
//! `nbest_size < 0`), or drawn among the `n` best segmentations likewise (`nbest_size > 1`).
//!
//! The lattice is the one Viterbi searches (`Unigram::encode`): an edge per piece the trie finds
//! at each character boundary, and the unknown piece over one character where no piece of that
//! character exists. Sampling runs the forward algorithm in log space (f64) and then draws the
//! edges back from the end, each among the edges that end where the path stands, with the
//! probability its share of the forward sum gives. The n best come from an A* search backwards
//! from the end whose estimate is the exact best score of the prefix (the Viterbi forward
//! scores), so paths complete in order of score.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::model::Unigram;
use crate::Rank;

/// A small seeded generator (SplitMix64): a sampled segmentation depends on the seed alone.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// An edge of the lattice: the piece `id` over `start..end` of the text.
#[derive(Clone, Copy, Debug)]
struct Edge {
    start: u32,
    id: Rank,
    score: f32,
}

/// The lattice of a text, its edges grouped by where they end.
struct Lattice {
    edges: Vec<Edge>,
    /// edges ending at byte `e`: `edges[first[e]..first[e + 1]]`
    first: Vec<usize>,
}

impl Lattice {
    fn ending_at(&self, e: usize) -> &[Edge] {
        &self.edges[self.first[e]..self.first[e + 1]]
    }
}

/// The most n-best paths looked for, and the most partial paths an n-best search keeps, so that
/// its time and memory stay bounded whatever the text.
pub const MAX_NBEST: usize = 10_000;
const MAX_PARTIAL: usize = 4_000_000;

impl Unigram {
    fn lattice(&self, s: &[u8]) -> Lattice {
        let mut by_start: Vec<(u32, Edge)> = Vec::new();
        self.for_each_edge(s, |start, end, id, score| {
            by_start.push((
                end as u32,
                Edge {
                    start: start as u32,
                    id,
                    score,
                },
            ))
        });
        let mut first = vec![0usize; s.len() + 2];
        for &(end, _) in &by_start {
            first[end as usize + 1] += 1;
        }
        for i in 1..first.len() {
            first[i] += first[i - 1];
        }
        let mut fill = first.clone();
        let mut edges = vec![
            Edge {
                start: 0,
                id: 0,
                score: 0.0
            };
            by_start.len()
        ];
        for (end, e) in by_start {
            edges[fill[end as usize]] = e;
            fill[end as usize] += 1;
        }
        Lattice { edges, first }
    }

    /// Appends one segmentation of `s` drawn with probability proportional to
    /// `exp(theta * score)`, as (end byte, id) like `encode`.
    pub fn sample(&self, s: &[u8], theta: f64, rng: &mut Rng, out: &mut Vec<(usize, Rank)>) {
        if s.is_empty() {
            return;
        }
        let lat = self.lattice(s);
        // alpha[e]: the log of the summed weights of every path from 0 to byte e
        let mut alpha = vec![f64::NEG_INFINITY; s.len() + 1];
        alpha[0] = 0.0;
        for end in 1..=s.len() {
            let edges = lat.ending_at(end);
            if edges.is_empty() {
                continue;
            }
            alpha[end] = log_sum_exp(
                edges
                    .iter()
                    .map(|e| alpha[e.start as usize] + theta * f64::from(e.score)),
            );
        }
        let at = out.len();
        let mut end = s.len();
        while end > 0 {
            let edges = lat.ending_at(end);
            let total = alpha[end];
            let mut u = rng.next_f64();
            let mut pick = edges[edges.len() - 1];
            for e in edges {
                let p = (alpha[e.start as usize] + theta * f64::from(e.score) - total).exp();
                if u < p {
                    pick = *e;
                    break;
                }
                u -= p;
            }
            out.push((end, pick.id));
            end = pick.start as usize;
        }
        out[at..].reverse();
    }

    /// The `n` best segmentations of `s` (best first), each as (end byte, id) pieces with its
    /// score; fewer when the text has fewer.
    pub fn nbest(&self, s: &[u8], n: usize) -> Vec<(Vec<(usize, Rank)>, f64)> {
        self.nbest_within(s, n, MAX_PARTIAL)
    }

    /// `nbest` keeping at most `cap` partial paths; when the cap stops the search before any
    /// path is complete (a very long text), the best path alone.
    fn nbest_within(&self, s: &[u8], n: usize, cap: usize) -> Vec<(Vec<(usize, Rank)>, f64)> {
        let n = n.min(MAX_NBEST);
        if s.is_empty() || n == 0 {
            return vec![(Vec::new(), 0.0)];
        }
        let lat = self.lattice(s);
        // the best score of a path from 0 to each byte
        let mut best = vec![f64::NEG_INFINITY; s.len() + 1];
        best[0] = 0.0;
        for end in 1..=s.len() {
            for e in lat.ending_at(end) {
                best[end] = best[end].max(best[e.start as usize] + f64::from(e.score));
            }
        }
        // partial paths from the end back to `node`; `parent` is the path it extends
        struct Partial {
            node: usize,
            suffix: f64,
            edge: Option<(usize, Rank)>,
            parent: usize,
        }
        let mut partials = vec![Partial {
            node: s.len(),
            suffix: 0.0,
            edge: None,
            parent: usize::MAX,
        }];
        let mut heap = BinaryHeap::new();
        heap.push(Key(best[s.len()], 0));
        let mut found = Vec::new();
        while let Some(Key(_, i)) = heap.pop() {
            if partials[i].node == 0 {
                let mut pieces = Vec::new();
                let mut j = i;
                while let Some(p) = partials[j].edge {
                    pieces.push(p);
                    j = partials[j].parent;
                }
                found.push((pieces, partials[i].suffix));
                if found.len() == n {
                    break;
                }
                continue;
            }
            let (node, suffix) = (partials[i].node, partials[i].suffix);
            for e in lat.ending_at(node) {
                if partials.len() >= cap {
                    break;
                }
                let start = e.start as usize;
                let g = suffix + f64::from(e.score);
                partials.push(Partial {
                    node: start,
                    suffix: g,
                    edge: Some((node, e.id)),
                    parent: i,
                });
                heap.push(Key(best[start] + g, partials.len() - 1));
            }
        }
        if found.is_empty() {
            let mut path = Vec::new();
            self.encode(s, &mut path);
            found.push((path, best[s.len()]));
        }
        found
    }

    /// Appends one of the `n` best segmentations of `s`, drawn with probability proportional to
    /// `exp(theta * score)` among them.
    pub fn sample_nbest(
        &self,
        s: &[u8],
        n: usize,
        theta: f64,
        rng: &mut Rng,
        out: &mut Vec<(usize, Rank)>,
    ) {
        let paths = self.nbest(s, n);
        let z = log_sum_exp(paths.iter().map(|p| theta * p.1));
        let mut u = rng.next_f64();
        let mut pick = paths.len() - 1;
        for (i, p) in paths.iter().enumerate() {
            let w = (theta * p.1 - z).exp();
            if u < w {
                pick = i;
                break;
            }
            u -= w;
        }
        out.extend_from_slice(&paths[pick].0);
    }
}

/// A heap key: the estimate of a partial path's total score, then its index (larger first,
/// ties by the later index, so the search is deterministic).
struct Key(f64, usize);

impl PartialEq for Key {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Key {
    fn cmp(&self, o: &Self) -> Ordering {
        self.0.total_cmp(&o.0).then(self.1.cmp(&o.1))
    }
}

fn log_sum_exp(xs: impl Iterator<Item = f64> + Clone) -> f64 {
    let m = xs.clone().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + xs.map(|x| (x - m).exp()).sum::<f64>().ln()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unigram::model::Kind;

    fn model() -> Unigram {
        Unigram::new(
            &[
                ("<unk>", 0.0, Kind::Reserved),
                ("a", -1.0, Kind::Normal),
                ("b", -1.5, Kind::Normal),
                ("ab", -2.0, Kind::Normal),
                ("abab", -3.0, Kind::Normal),
                ("ba", -2.2, Kind::Normal),
            ],
            0,
        )
    }

    #[test]
    fn nbest_comes_best_first_and_starts_with_viterbi() {
        let m = model();
        let s = b"ababx";
        let mut best = Vec::new();
        m.encode(s, &mut best);
        let paths = m.nbest(s, 50);
        assert_eq!(paths[0].0, best);
        assert!(paths.windows(2).all(|w| w[0].1 >= w[1].1));
        // every segmentation of "abab" (a.b.a.b, ab.a.b, a.b.ab, ab.ab, abab, a.ba.b), then "x"
        assert_eq!(paths.len(), 6);
        let mut distinct: Vec<_> = paths.iter().map(|p| p.0.clone()).collect();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 6);
    }

    #[test]
    fn a_search_cut_short_gives_the_best_path() {
        let m = model();
        let s = b"abababab";
        let mut best = Vec::new();
        m.encode(s, &mut best);
        let paths = m.nbest_within(s, 10, 3);
        assert_eq!(paths.len(), 1);
        assert_eq!(paths[0].0, best);
        let mut out = Vec::new();
        m.sample_nbest(s, 10, 1.0, &mut Rng::new(1), &mut out);
        assert!(!out.is_empty());
    }

    #[test]
    fn a_cold_lattice_draws_the_best_and_a_seed_repeats() {
        let m = model();
        let s = b"abab";
        let mut best = Vec::new();
        m.encode(s, &mut best);
        let draw = |theta: f64, seed: u64| {
            let mut out = Vec::new();
            m.sample(s, theta, &mut Rng::new(seed), &mut out);
            out
        };
        for seed in 0..20 {
            assert_eq!(draw(200.0, seed), best);
            assert_eq!(draw(0.5, seed), draw(0.5, seed));
        }
        assert!((0..50).map(|k| draw(0.0, k)).any(|p| p != best));
    }
}
