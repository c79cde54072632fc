//! The Unigram model's encoder: the most probable segmentation (Viterbi) of normalized text
//! into vocabulary pieces, scored by the sum of the pieces' log-probabilities.
//!
//! Exactly sentencepiece's encoder (learned by running it): the best path ending at each
//! byte is kept with its score as a 32-bit float, and a candidate (the piece's score plus the
//! best path before it, added in 32 bits: adding in 64 and comparing before rounding picks
//! other paths among near-equal ones) replaces it only when strictly better, so among equal
//! scores the path found first wins (earlier start, then shorter piece). A character that starts no piece of its own length is one
//! unknown piece scored `min(normal scores) - 10`. User-defined pieces score
//! `length * max(normal scores, f32::MIN_POSITIVE) - 0.1`, so they nearly always win; unused
//! pieces are never chosen.

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

/// A trie of byte strings, each with a value: a dense table at the root, sorted edges below.
#[derive(Clone, Debug, Default)]
pub struct Trie {
    root: Vec<u32>,
    /// per node: first edge index; edges of node i are `first[i]..first[i + 1]`
    first: Vec<u32>,
    labels: Vec<u8>,
    targets: Vec<u32>,
    values: Vec<Rank>,
}

const NONE: u32 = u32::MAX;

impl Trie {
    /// Builds from (key, value) pairs; keys must be distinct and non-empty.
    pub fn new(mut keys: Vec<(&[u8], Rank)>) -> Trie {
        keys.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let mut t = Trie {
            root: vec![NONE; 256],
            ..Default::default()
        };
        // node 0 is the root; its edges live in `root`
        t.values.push(NONE);
        t.first.push(0);
        // Work list of (node, lo, hi, depth): keys[lo..hi] share their first `depth` bytes and
        // none of them ends at `depth` (the one that does is the node's value, set already).
        let mut work = vec![(0u32, 0usize, keys.len(), 0usize)];
        let mut pending: Vec<(u32, usize, usize, usize)> = Vec::new();
        let mut edges_of: Vec<(u32, Vec<(u8, u32)>)> = Vec::new();
        while let Some((node, lo, hi, depth)) = work.pop() {
            let mut edges = Vec::new();
            let mut i = lo;
            while i < hi {
                let b = keys[i].0[depth];
                let mut j = i;
                while j < hi && keys[j].0[depth] == b {
                    j += 1;
                }
                let child = t.values.len() as u32;
                let mut lo2 = i;
                let value = if keys[i].0.len() == depth + 1 {
                    lo2 += 1;
                    keys[i].1
                } else {
                    NONE
                };
                t.values.push(value);
                edges.push((b, child));
                if lo2 < j {
                    pending.push((child, lo2, j, depth + 1));
                }
                i = j;
            }
            edges_of.push((node, edges));
            work.append(&mut pending);
        }
        // lay the edges out node by node
        let n = t.values.len();
        let mut per: Vec<Vec<(u8, u32)>> = vec![Vec::new(); n];
        for (node, edges) in edges_of {
            per[node as usize] = edges;
        }
        t.first = Vec::with_capacity(n + 1);
        for (node, edges) in per.iter().enumerate() {
            t.first.push(t.labels.len() as u32);
            if node == 0 {
                for &(b, c) in edges {
                    t.root[b as usize] = c;
                }
                continue;
            }
            for &(b, c) in edges {
                t.labels.push(b);
                t.targets.push(c);
            }
        }
        t.first.push(t.labels.len() as u32);
        t
    }

    /// Calls `f(length, value)` for every key that starts `s`, shortest first.
    #[inline]
    pub fn prefixes(&self, s: &[u8], mut f: impl FnMut(usize, Rank)) {
        let Some(&b0) = s.first() else { return };
        let mut node = self.root[b0 as usize];
        let mut len = 1;
        while node != NONE {
            let v = self.values[node as usize];
            if v != NONE {
                f(len, v);
            }
            let Some(&b) = s.get(len) else { return };
            let (lo, hi) = (
                self.first[node as usize] as usize,
                self.first[node as usize + 1] as usize,
            );
            let labels = &self.labels[lo..hi];
            let k = if labels.len() <= 8 {
                labels.iter().position(|&l| l == b)
            } else {
                labels.binary_search(&b).ok()
            };
            node = match k {
                Some(k) => self.targets[lo + k],
                None => NONE,
            };
            len += 1;
        }
    }

    /// The value of `s` itself.
    pub fn get(&self, s: &[u8]) -> Option<Rank> {
        let mut found = None;
        self.prefixes(s, |len, v| {
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
    trie: Trie,
    scores: Vec<f32>,
    kinds: Vec<Kind>,
    unk: Rank,
    unk_score: f32,
    max_score: f32,
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
            .filter(|(_, p)| p.2 != Kind::Reserved)
            .map(|(i, p)| (p.0.as_bytes(), i as Rank))
            .collect();
        Unigram {
            trie: Trie::new(keys),
            scores: pieces.iter().map(|p| p.1).collect(),
            kinds: pieces.iter().map(|p| p.2).collect(),
            unk,
            unk_score: min_score - 10.0,
            max_score,
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
        let mut start = 0usize;
        while start < size {
            let here = best[start].score;
            let mblen = char_len(s[start]).min(size - start);
            let mut single = false;
            self.trie.prefixes(&s[start..], |len, id| {
                let kind = self.kinds[id as usize];
                if kind == Kind::Unused {
                    return;
                }
                let score = if kind == Kind::UserDefined {
                    (f64::from(len as f32 * self.max_score) - 0.1) as f32
                } else {
                    self.scores[id as usize]
                };
                let cand = score + here;
                let t = &mut best[start + len];
                if t.start == NONE || cand > t.score {
                    *t = Best {
                        score: cand,
                        start: start as u32,
                        id,
                    };
                }
                single |= len == mblen;
            });
            if !single {
                let cand = self.unk_score + here;
                let t = &mut best[start + mblen];
                if t.start == NONE || cand > t.score {
                    *t = Best {
                        score: cand,
                        start: start as u32,
                        id: self.unk,
                    };
                }
            }
            start += mblen;
        }
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trie_prefixes() {
        let keys: Vec<(&[u8], Rank)> =
            vec![(b"a", 1), (b"ab", 2), (b"abc", 3), (b"b", 4), (b"abd", 5)];
        let t = Trie::new(keys);
        let mut got = Vec::new();
        t.prefixes(b"abcd", |l, v| got.push((l, v)));
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
