//! The Unigram model's encoder: the most probable segmentation (Viterbi) of normalized text
//! into vocabulary pieces, scored by the sum of the pieces' log-probabilities.
//!
//! Exactly sentencepiece's encoder (learned by running it): the best path ending at each
//! byte is kept with its score as a 32-bit float, and a candidate (the piece's score plus the
//! best path before it, added in 32 bits: adding in 64 and comparing before rounding picks
//! other paths among near-equal ones) replaces it only when strictly better, so among equal
//! scores the path found first wins (earlier start, then shorter piece). A character that
//! starts no piece of its own length is one unknown piece scored `min(normal scores) - 10`.
//! User-defined pieces score `length * max(normal scores, f32::MIN_POSITIVE) - 0.1` (in bytes),
//! so they nearly always win; unused pieces are never chosen.

use crate::text::normalize::char_len;
use crate::Rank;

/// What the encoder needs to know of each piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Normal,
    UserDefined,
    Unused,
    /// unknown, control and byte pieces: never matched in text
    Reserved,
}

/// A trie of byte strings, each with a value and a score: a dense table at the root, then
/// nodes numbered breadth first (a node and its siblings are near each other), each one 16
/// bytes holding its value, score and edge run, the edges packed as `target << 8 | label`.
#[derive(Clone, Debug, Default)]
pub struct Trie {
    root: Vec<u32>,
    nodes: Vec<Node>,
    edges: Vec<u64>,
}

#[derive(Clone, Copy, Debug)]
struct Node {
    value: Rank,
    score: f32,
    first: u32,
    count: u32,
}

const NONE: u32 = u32::MAX;

impl Trie {
    /// Builds from (key, value, score) triples; keys must be distinct and non-empty.
    pub fn new(keys: Vec<(&[u8], Rank, f32)>) -> Trie {
        // sorted by the first 8 bytes as one integer, then by the rest: far fewer calls to
        // memcmp than comparing the slices (a fifth of a 256k-piece load went to the sort)
        let head = |k: &[u8]| {
            let mut b = [0u8; 8];
            let n = k.len().min(8);
            b[..n].copy_from_slice(&k[..n]);
            u64::from_be_bytes(b)
        };
        let mut order: Vec<(u64, u32)> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| (head(k.0), i as u32))
            .collect();
        order.sort_unstable_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| keys[a.1 as usize].0.cmp(keys[b.1 as usize].0))
        });
        let keys: Vec<(&[u8], Rank, f32)> = order.iter().map(|&(_, i)| keys[i as usize]).collect();
        let mut t = Trie {
            root: vec![NONE; 256],
            ..Default::default()
        };
        let blank = Node {
            value: NONE,
            score: 0.0,
            first: 0,
            count: 0,
        };
        // node 0 is the root (its edges live in `root`)
        t.nodes.push(blank);
        // Queue of (node, lo, hi, depth): keys[lo..hi] share their first `depth` bytes and none
        // of them ends at `depth` (the one that does is the node's value, set already). First
        // in, first out: children are numbered level by level.
        let mut queue = std::collections::VecDeque::from([(0u32, 0usize, keys.len(), 0usize)]);
        while let Some((node, lo, hi, depth)) = queue.pop_front() {
            let first = t.edges.len();
            let mut i = lo;
            while i < hi {
                let b = keys[i].0[depth];
                let mut j = i;
                while j < hi && keys[j].0[depth] == b {
                    j += 1;
                }
                let child = t.nodes.len() as u32;
                let mut rest = i;
                let mut n = blank;
                if keys[i].0.len() == depth + 1 {
                    rest += 1;
                    n.value = keys[i].1;
                    n.score = keys[i].2;
                }
                t.nodes.push(n);
                if node == 0 {
                    t.root[b as usize] = child;
                } else {
                    t.edges.push((u64::from(child) << 8) | u64::from(b));
                }
                if rest < j {
                    queue.push_back((child, rest, j, depth + 1));
                }
                i = j;
            }
            if node != 0 {
                t.nodes[node as usize].first = first as u32;
                t.nodes[node as usize].count = (t.edges.len() - first) as u32;
            }
        }
        t
    }

    /// Calls `f(length, value, score)` for every key that starts `s`, shortest first.
    #[inline]
    pub fn prefixes(&self, s: &[u8], mut f: impl FnMut(usize, Rank, f32)) {
        let Some(&b0) = s.first() else { return };
        let mut node = self.root[b0 as usize];
        let mut len = 1;
        while node != NONE {
            let n = self.nodes[node as usize];
            if n.value != NONE {
                f(len, n.value, n.score);
            }
            let Some(&b) = s.get(len) else { return };
            let edges = &self.edges[n.first as usize..(n.first + n.count) as usize];
            node = match edges.iter().find(|&&e| e as u8 == b) {
                Some(&e) => (e >> 8) as u32,
                None => NONE,
            };
            len += 1;
        }
    }

    /// The value of `s` itself.
    pub fn get(&self, s: &[u8]) -> Option<Rank> {
        let mut found = None;
        self.prefixes(s, |len, v, _| {
            if len == s.len() {
                found = Some(v)
            }
        });
        found
    }
}

/// A Unigram model ready to encode.
#[derive(Clone, Debug)]
pub struct Unigram {
    /// normal and user-defined pieces with the score the search gives them (unused pieces,
    /// never chosen, are left out: they are not a piece of one character either)
    trie: Trie,
    unk: Rank,
    unk_score: f32,
}

#[derive(Clone, Copy)]
struct Best {
    score: f32,
    start: u32,
    id: Rank,
}

impl Unigram {
    /// `pieces`: (text, score, kind) by id; `unk`: the id of the unknown piece.
    pub fn new(pieces: &[(&str, f32, Kind)], unk: Rank) -> Unigram {
        let mut min_score = f32::MAX;
        let mut max_score = f32::MIN_POSITIVE;
        for &(_, s, k) in pieces {
            if k == Kind::Normal {
                min_score = min_score.min(s);
                max_score = max_score.max(s);
            }
        }
        let keys = pieces
            .iter()
            .enumerate()
            .filter(|(_, p)| matches!(p.2, Kind::Normal | Kind::UserDefined))
            .map(|(i, p)| {
                let score = if p.2 == Kind::UserDefined {
                    (f64::from(p.0.len() as f32 * max_score) - 0.1) as f32
                } else {
                    p.1
                };
                (p.0.as_bytes(), i as Rank, score)
            })
            .collect();
        Unigram {
            trie: Trie::new(keys),
            unk,
            unk_score: min_score - 10.0,
        }
    }

    /// Appends the pieces of `s` (normalized text) to `out` as (end byte, id), in order.
    pub fn encode(&self, s: &[u8], out: &mut Vec<(usize, Rank)>) {
        let size = s.len();
        if size == 0 {
            return;
        }
        let mut best: Vec<Best> = vec![
            Best {
                score: 0.0,
                start: NONE,
                id: 0
            };
            size + 1
        ];
        self.for_each_edge(s, |start, end, id, score| {
            let cand = score + best[start].score;
            let t = &mut best[end];
            if t.start == NONE || cand > t.score {
                *t = Best {
                    score: cand,
                    start: start as u32,
                    id,
                };
            }
        });
        let at = out.len();
        let mut end = size;
        while end > 0 {
            let b = best[end];
            out.push((end, b.id));
            end = b.start as usize;
        }
        out[at..].reverse();
    }

    pub fn unk(&self) -> Rank {
        self.unk
    }

    /// Calls `f(start, end, id, score)` for every edge of the lattice of `s` that `encode`
    /// searches: each piece found at each character boundary, and the unknown piece over one
    /// character where no piece of that one character is.
    pub(super) fn for_each_edge(&self, s: &[u8], mut f: impl FnMut(usize, usize, Rank, f32)) {
        let size = s.len();
        let mut start = 0usize;
        while start < size {
            let mblen = char_len(s[start]).min(size - start);
            let mut single = false;
            self.trie.prefixes(&s[start..], |len, id, score| {
                f(start, start + len, id, score);
                single |= len == mblen;
            });
            if !single {
                f(start, start + mblen, self.unk, self.unk_score);
            }
            start += mblen;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trie_prefixes() {
        let keys: Vec<(&[u8], Rank, f32)> = [("a", 1), ("ab", 2), ("abc", 3), ("b", 4), ("abd", 5)]
            .iter()
            .map(|&(k, v)| (k.as_bytes(), v, 0.0))
            .collect();
        let t = Trie::new(keys);
        let mut got = Vec::new();
        t.prefixes(b"abcd", |l, v, _| got.push((l, v)));
        assert_eq!(got, vec![(1, 1), (2, 2), (3, 3)]);
        assert_eq!(t.get(b"abd"), Some(5));
        assert_eq!(t.get(b"c"), None);
    }

    #[test]
    fn viterbi_prefers_the_best_sum_and_marks_unknowns() {
        let pieces = [
            ("<unk>", 0.0, Kind::Reserved),
            ("a", -1.0, Kind::Normal),
            ("b", -1.0, Kind::Normal),
            ("ab", -1.5, Kind::Normal),
            ("abb", -5.0, Kind::Normal),
        ];
        let m = Unigram::new(&pieces, 0);
        let mut out = Vec::new();
        m.encode(b"abbx", &mut out);
        assert_eq!(out, vec![(2, 3), (3, 2), (4, 0)]);
    }
}
