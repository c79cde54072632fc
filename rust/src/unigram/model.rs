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

use crate::text::normalize::{char_len, SPACE_FINDER};
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
    /// the children of nodes with many edges, 256 a node, by byte (`NONE`: no child): such a
    /// node's `first` is where its 256 start here and its `count` is `DENSE`. The node after
    /// `▁` has an edge for nearly every byte a word starts with, and scanning them was a third
    /// of the search's time.
    dense: Vec<u32>,
}

/// Nodes with more edges than this get a table of 256 children (`Trie::dense`).
const DENSE_EDGES: u32 = 12;
const DENSE: u32 = u32::MAX;

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
        for n in &mut t.nodes {
            if n.count > DENSE_EDGES {
                let table = t.dense.len();
                t.dense.resize(table + 256, NONE);
                for &e in &t.edges[n.first as usize..(n.first + n.count) as usize] {
                    t.dense[table + (e as u8) as usize] = (e >> 8) as u32;
                }
                (n.first, n.count) = (table as u32, DENSE);
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
            node = if n.count == DENSE {
                self.dense[n.first as usize + b as usize]
            } else {
                let edges = &self.edges[n.first as usize..(n.first + n.count) as usize];
                match edges.iter().find(|&&e| e as u8 == b) {
                    Some(&e) => (e >> 8) as u32,
                    None => NONE,
                }
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
    /// no piece has a `▁` after its first byte: every path breaks before each `▁`, and words
    /// are searched alone and cached (`encode`)
    by_words: bool,
    /// the largest |score| of an edge, for the bound on 32-bit rounding
    max_abs: f64,
    /// tells this model's entries in a thread's word cache from another model's
    id: u64,
}

/// A thread's cache of words' best paths, found in exact arithmetic: for each word, the
/// pieces of its path as (end in the word, id, score), and the least gap, over the positions
/// the path ends a piece at, between the best way to reach the position and the second best
/// (infinite where there is one way).
///
/// Laid out for the hit, which is most words of most text: an open-addressed table of 8-byte
/// slots (a 32-bit tag of the word's hash, where its entry starts) and one arena of `u32`s
/// holding each entry whole (margin, sizes, the word's bytes, the ids, the scores, the ends),
/// so a hit touches a slot and one stretch of the arena. A hash map of boxed words to boxed
/// paths took three scattered loads a word and a `memcmp` call (a fifth of encoding's time).
#[derive(Default)]
struct WordCache {
    model: u64,
    slots: Vec<(u32, u32)>,
    arena: Vec<u32>,
    len: usize,
}

/// Where an entry's parts are in the arena.
#[derive(Clone, Copy)]
struct Entry {
    at: usize,
    key_words: usize,
    n: usize,
}

impl Entry {
    fn ids(self) -> std::ops::Range<usize> {
        let i = self.at + 3 + self.key_words;
        i..i + self.n
    }
    fn scores(self) -> std::ops::Range<usize> {
        let i = self.at + 3 + self.key_words + self.n;
        i..i + self.n
    }
    fn ends(self) -> std::ops::Range<usize> {
        let i = self.at + 3 + self.key_words + 2 * self.n;
        i..i + self.n
    }
}

/// Entries a thread's word cache holds before it is emptied, and arena words; longer words
/// are not cached.
const CACHE_WORDS: usize = 1 << 16;
const CACHE_ARENA: usize = 1 << 22;
const CACHE_WORD_BYTES: usize = 256;

static NEXT_MODEL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

thread_local! {
    static WORDS: std::cell::RefCell<WordCache> = std::cell::RefCell::new(WordCache::default());
}

/// The word's bytes as little-endian `u32`s, the last one padded with zeros.
fn key_word(word: &[u8], i: usize) -> u32 {
    let chunk = &word[4 * i..word.len().min(4 * i + 4)];
    let mut b = [0u8; 4];
    b[..chunk.len()].copy_from_slice(chunk);
    u32::from_le_bytes(b)
}

impl WordCache {
    fn reset(&mut self, model: u64) {
        self.model = model;
        self.slots.clear();
        self.slots.resize(2 * CACHE_WORDS, (0, 0));
        self.arena.clear();
        self.len = 0;
    }

    fn hash(word: &[u8]) -> u64 {
        use std::hash::Hasher;
        let mut h = rustc_hash::FxHasher::default();
        h.write(word);
        h.write_usize(word.len());
        h.finish()
    }

    fn entry(&self, at: usize) -> Entry {
        let sizes = self.arena[at + 2];
        let key_len = (sizes & 0xffff) as usize;
        Entry {
            at,
            key_words: key_len.div_ceil(4),
            n: (sizes >> 16) as usize,
        }
    }

    fn margin(&self, e: Entry) -> f64 {
        f64::from_bits(u64::from(self.arena[e.at]) | u64::from(self.arena[e.at + 1]) << 32)
    }

    fn find(&self, word: &[u8], hash: u64) -> Option<Entry> {
        let mask = self.slots.len() - 1;
        let tag = (hash >> 32) as u32 | 1;
        let mut i = hash as usize & mask;
        loop {
            let (t, at) = self.slots[i];
            if t == 0 {
                return None;
            }
            if t == tag {
                let at = at as usize;
                let e = self.entry(at);
                if self.arena[at + 2] & 0xffff == word.len() as u32
                    && (0..e.key_words).all(|k| self.arena[at + 3 + k] == key_word(word, k))
                {
                    return Some(e);
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// Keeps `word`'s path (the cache is emptied first when full).
    fn insert(&mut self, word: &[u8], hash: u64, margin: f64, path: &[(u32, Rank, f32)]) -> Entry {
        if self.len >= CACHE_WORDS || self.arena.len() >= CACHE_ARENA {
            let model = self.model;
            self.reset(model);
        }
        let at = self.arena.len();
        let bits = margin.to_bits();
        self.arena.push(bits as u32);
        self.arena.push((bits >> 32) as u32);
        self.arena
            .push(word.len() as u32 | (path.len() as u32) << 16);
        self.arena
            .extend((0..word.len().div_ceil(4)).map(|k| key_word(word, k)));
        self.arena.extend(path.iter().map(|p| p.1));
        self.arena.extend(path.iter().map(|p| p.2.to_bits()));
        self.arena.extend(path.iter().map(|p| p.0));
        let mask = self.slots.len() - 1;
        let mut i = hash as usize & mask;
        while self.slots[i].0 != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i] = ((hash >> 32) as u32 | 1, at as u32);
        self.len += 1;
        self.entry(at)
    }
}

const SPACE: &[u8] = "\u{2581}".as_bytes();

/// A word's pieces as `each_word` hands them over.
enum Pieces<'a> {
    /// from the cache: the entry's ids and ends
    Cached(&'a WordCache, Entry),
    /// from the 32-bit search: (end in the word, id)
    Searched(&'a [(usize, Rank)]),
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
        let keys: Vec<(&[u8], Rank, f32)> = pieces
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
        let unk_score = min_score - 10.0;
        let by_words = keys.iter().all(|k| {
            k.0.get(1..)
                .is_none_or(|rest| !rest.windows(3).any(|w| w == SPACE))
        });
        let max_abs = keys
            .iter()
            .map(|k| f64::from(k.2).abs())
            .fold(f64::from(unk_score).abs(), f64::max);
        Unigram {
            trie: Trie::new(keys),
            unk,
            unk_score,
            by_words: by_words && max_abs.is_finite(),
            max_abs,
            id: NEXT_MODEL.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// Appends the pieces of `s` (normalized text) to `out` as (end byte, id), in order.
    ///
    /// The result is the 32-bit search's (`encode_from`) on the whole text. With `by_words`,
    /// every path breaks before each `▁`, so the search is the same word by word, each word
    /// starting from the score the text before it reached, `s0`. A word's best path found in
    /// exact arithmetic (cached per thread) is the 32-bit search's when, at each position the
    /// path passes, the best way beats the second by more than the rounding of both can move
    /// them: each of at most `n` additions (`n`: the word's bytes) moves a sum by at most
    /// 2^-24 of its size, at most `|s0| + n * max|score|`. Otherwise the word is searched in 32
    /// bits from `s0`. Either way the score at the word's end is the 32-bit sum along its path.
    pub fn encode(&self, s: &[u8], out: &mut Vec<(usize, Rank)>) {
        if !self.by_words {
            self.encode_from(s, 0.0, out);
            return;
        }
        self.each_word(s, |start, pieces| match pieces {
            Pieces::Cached(cache, e) => {
                let ends = &cache.arena[e.ends()];
                let ids = &cache.arena[e.ids()];
                out.extend(
                    ends.iter()
                        .zip(ids)
                        .map(|(&end, &id)| (start + end as usize, id)),
                );
            }
            Pieces::Searched(ps) => out.extend(ps.iter().map(|&(end, id)| (start + end, id))),
        });
    }

    /// `encode`'s pieces as the ids sentencepiece's processor writes: each unknown piece as
    /// the ids of its bytes (`bytes`: byte fallback), else each run of unknown pieces as one
    /// unknown id. Without `by_words` it does nothing and returns false (`encode` then).
    pub fn encode_ids(&self, s: &[u8], ids: &mut Vec<Rank>, bytes: Option<&[Rank; 256]>) -> bool {
        if !self.by_words {
            return false;
        }
        let unk = self.unk;
        let mut last_unk = false;
        // one piece, `s[start..end]`, as the processor writes it
        let emit =
            |ids: &mut Vec<Rank>, last_unk: &mut bool, start: usize, end: usize, id: Rank| {
                if id != unk {
                    ids.push(id);
                    *last_unk = false;
                    return;
                }
                match bytes {
                    Some(b) => ids.extend(s[start..end].iter().map(|&x| b[x as usize])),
                    None if !*last_unk => ids.push(unk),
                    None => {}
                }
                *last_unk = true;
            };
        self.each_word(s, |start, pieces| match pieces {
            Pieces::Cached(cache, e) => {
                let word_ids = &cache.arena[e.ids()];
                if !word_ids.contains(&unk) {
                    ids.extend_from_slice(word_ids);
                    last_unk &= word_ids.is_empty();
                    return;
                }
                let mut at = start;
                for (&end, &id) in cache.arena[e.ends()].iter().zip(word_ids) {
                    emit(ids, &mut last_unk, at, start + end as usize, id);
                    at = start + end as usize;
                }
            }
            Pieces::Searched(ps) => {
                let mut at = start;
                for &(end, id) in ps {
                    emit(ids, &mut last_unk, at, start + end, id);
                    at = start + end;
                }
            }
        });
        true
    }

    /// Calls `f(start, pieces)` for each word of `s` (`by_words`: cut before each `▁`) in
    /// order, with its pieces (ends relative to `start`) from the cache or from the search.
    fn each_word(&self, s: &[u8], mut f: impl FnMut(usize, Pieces<'_>)) {
        WORDS.with(|cache| {
            let mut cache = cache.borrow_mut();
            if cache.model != self.id || cache.slots.is_empty() {
                cache.reset(self.id);
            }
            let mut total = 0f32;
            let mut start = 0;
            let mut searched = Vec::new();
            let spaces = SPACE_FINDER.find_iter(s).filter(|&p| p > 0);
            for end in spaces.chain(std::iter::once(s.len())) {
                let word = &s[start..end];
                let n = word.len() as f64;
                let bound =
                    2.0 * n * f64::from(f32::EPSILON) * (f64::from(total).abs() + n * self.max_abs)
                        + 1e-9;
                let entry = if word.len() <= CACHE_WORD_BYTES {
                    let hash = WordCache::hash(word);
                    Some(cache.find(word, hash).unwrap_or_else(|| {
                        let (path, margin) = self.exact(word);
                        cache.insert(word, hash, margin, &path)
                    }))
                } else {
                    None
                };
                match entry.filter(|&e| cache.margin(e) > bound) {
                    Some(e) => {
                        for &score in &cache.arena[e.scores()] {
                            total += f32::from_bits(score);
                        }
                        f(start, Pieces::Cached(&cache, e));
                    }
                    None => {
                        searched.clear();
                        total = self.encode_from(word, total, &mut searched);
                        f(start, Pieces::Searched(&searched));
                    }
                }
                start = end;
            }
        })
    }

    /// A word's best path in exact (64-bit) arithmetic, as (end, id, score) of each piece,
    /// with its margin (`WordCache`).
    fn exact(&self, s: &[u8]) -> (Vec<(u32, Rank, f32)>, f64) {
        let size = s.len();
        // (best, second best, start of best, id, score of the edge)
        let mut at: Vec<(f64, f64, u32, Rank, f32)> =
            vec![(f64::NEG_INFINITY, f64::NEG_INFINITY, u32::MAX, 0, 0.0); size + 1];
        at[0].0 = 0.0;
        self.for_each_edge(s, |start, end, id, score| {
            let cand = at[start].0 + f64::from(score);
            let t = &mut at[end];
            if t.2 == u32::MAX || cand > t.0 {
                t.1 = t.0;
                *t = (cand, t.1, start as u32, id, score);
            } else if cand > t.1 {
                t.1 = cand;
            }
        });
        let mut path = Vec::new();
        let mut margin = f64::INFINITY;
        let mut end = size;
        while end > 0 {
            let (best, second, start, id, score) = at[end];
            margin = margin.min(best - second);
            path.push((end as u32, id, score));
            end = start as usize;
        }
        path.reverse();
        (path, margin)
    }

    /// The 32-bit search of `s` with the path before it at score `s0`: appends the pieces and
    /// returns the score at the end.
    pub(super) fn encode_from(&self, s: &[u8], s0: f32, out: &mut Vec<(usize, Rank)>) -> f32 {
        let size = s.len();
        if size == 0 {
            return s0;
        }
        let mut best: Vec<Best> = vec![
            Best {
                score: 0.0,
                start: NONE,
                id: 0
            };
            size + 1
        ];
        best[0].score = s0;
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
        best[size].score
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

    /// The word cache never changes a result: `encode` (words, cached, exact paths where the
    /// margin allows) against the 32-bit search of the whole text, on models whose scores tie
    /// and nearly tie, and texts long enough that the running score is large.
    #[test]
    fn words_give_the_whole_texts_search() {
        let mut rng = crate::unigram::sample::Rng::new(11);
        let alphabet = ["a", "b", "c", "\u{2581}", "é", "x"];
        for round in 0..60 {
            let mut texts: Vec<String> = Vec::new();
            let mut seen = std::collections::HashSet::new();
            let mut pieces: Vec<(String, f32, Kind)> = vec![("<unk>".into(), 0.0, Kind::Reserved)];
            for _ in 0..40 {
                let len = 1 + (rng.next_u64() % 4) as usize;
                let mut p = String::new();
                if rng.next_u64() % 3 == 0 {
                    p.push('\u{2581}');
                }
                while p.chars().count() < len {
                    let c = alphabet[(rng.next_u64() % 6) as usize];
                    if c != "\u{2581}" {
                        p.push_str(c);
                    }
                }
                if seen.insert(p.clone()) {
                    // coarse scores tie often; fine ones nearly tie
                    let score = if round % 2 == 0 {
                        -((rng.next_u64() % 8) as f32) * 0.5
                    } else {
                        -(rng.next_f64() * 8.0) as f32
                    };
                    pieces.push((p, score, Kind::Normal));
                }
            }
            let list: Vec<(&str, f32, Kind)> =
                pieces.iter().map(|p| (p.0.as_str(), p.1, p.2)).collect();
            let m = Unigram::new(&list, 0);
            assert!(m.by_words);
            for _ in 0..5 {
                let words = 1 + (rng.next_u64() % 3000) as usize;
                let mut t = String::new();
                for _ in 0..words {
                    t.push('\u{2581}');
                    for _ in 0..(rng.next_u64() % 6) {
                        t.push_str(alphabet[(rng.next_u64() % 6) as usize]);
                    }
                }
                texts.push(t);
            }
            for t in &texts {
                // twice: the second time from the cache
                for _ in 0..2 {
                    let (mut got, mut want) = (Vec::new(), Vec::new());
                    m.encode(t.as_bytes(), &mut got);
                    m.encode_from(t.as_bytes(), 0.0, &mut want);
                    assert_eq!(got, want, "round {round}");
                }
            }
        }
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
