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
use crate::text::word_cache::{WordCache, WordPieces, CACHE_WORD_BYTES};
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

/// A trie of byte strings, each with a value and a score, as a double array: the child of the
/// node at `p` by byte `b` is the unit at `units[p].base + b` when that unit's `check` is `p`
/// (once built, links are kept as byte offsets: `base + 16 b`, `check` the parent's offset). A
/// unit holds its node's value and score too (minus infinity for a node that is no key), so
/// each step of a walk reads one 16-byte unit.
/// The linked trie before it (a node, then its run of edges) read two places a step, and both
/// missed the caches: 75 % of the search's samples sat on those two loads (`NOTES.md`).
#[derive(Clone, Debug, Default)]
pub struct Trie {
    units: Vec<Unit>,
}

#[derive(Clone, Copy, Debug)]
struct Unit {
    /// the parent's index; `NONE`: a free unit (the root's is `NONE` too, and no child is
    /// ever placed at 0)
    check: u32,
    /// where the children start; 0 for a leaf (no unit names a leaf as its parent)
    base: u32,
    value: Rank,
    score: f32,
}

const FREE: Unit = Unit {
    check: NONE,
    base: 0,
    value: NONE,
    score: 0.0,
};

const NONE: u32 = u32::MAX;

/// A unit's size: the trie's links are byte offsets (`Trie::new`), a child's `base + byte * 16`.
const UNIT: u32 = std::mem::size_of::<Unit>() as u32;
const _: () = assert!(UNIT == 16);

/// The free units of a double array being built: `find(i)` is the first free index at or after
/// `i` (the array grows as needed), by union-find over "the next free one" links, so a search
/// for a place skips runs of used units in near-constant time.
struct FreeUnits {
    next: Vec<u32>,
}

impl FreeUnits {
    fn find(&mut self, i: usize) -> usize {
        let mut r = i;
        loop {
            if r >= self.next.len() {
                let n = self.next.len();
                self.next.extend((n..=r.max(2 * n)).map(|k| k as u32));
            }
            let n = self.next[r] as usize;
            if n == r {
                break;
            }
            r = n;
        }
        // path compression
        let mut k = i;
        while k != r {
            let n = self.next[k] as usize;
            self.next[k] = r as u32;
            k = n;
        }
        r
    }

    fn is_free(&mut self, i: usize) -> bool {
        self.find(i) == i
    }

    fn take(&mut self, i: usize) {
        self.find(i + 1);
        self.next[i] = (i + 1) as u32;
    }
}

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
        let mut units = vec![FREE];
        let mut free = FreeUnits { next: vec![1] };
        free.take(0);
        // Where a node's first child is tried: the free units, less those that failed as such
        // `TRIES` times (they stay free for other children). Without this a node with many
        // children tried every hole left behind, and a 256k-piece model took seconds to build.
        const TRIES: u8 = 4;
        let mut starts = FreeUnits { next: vec![1] };
        starts.take(0);
        let mut failed: Vec<u8> = Vec::new();
        let mut labels: Vec<(u8, usize, usize)> = Vec::with_capacity(256);
        // Queue of (unit, lo, hi, depth): keys[lo..hi] share their first `depth` bytes and none
        // of them ends at `depth` (the one that does is the unit's value, set already). First
        // in, first out: a node's children are placed before its grandchildren, near them.
        let mut queue = std::collections::VecDeque::from([(0usize, 0usize, keys.len(), 0usize)]);
        while let Some((node, lo, hi, depth)) = queue.pop_front() {
            labels.clear();
            let mut i = lo;
            while i < hi {
                let b = keys[i].0[depth];
                let mut j = i;
                while j < hi && keys[j].0[depth] == b {
                    j += 1;
                }
                labels.push((b, i, j));
                i = j;
            }
            if labels.is_empty() {
                continue; // no keys at all
            }
            // the first base >= 1 at which every child's unit is free
            let (c0, last) = (labels[0].0 as usize, labels[labels.len() - 1].0 as usize);
            let mut t = starts.find(c0 + 1);
            let base = loop {
                let base = t - c0;
                // `starts` holds free units only, so `t` itself is free
                if labels[1..]
                    .iter()
                    .all(|&(c, ..)| free.is_free(base + c as usize))
                {
                    break base;
                }
                if failed.len() <= t {
                    failed.resize(t + 1, 0);
                }
                failed[t] += 1;
                if failed[t] >= TRIES {
                    starts.take(t);
                }
                t = starts.find(t + 1);
            };
            if units.len() <= base + last {
                units.resize(base + last + 1, FREE);
            }
            units[node].base = base as u32;
            for &(c, i, j) in &labels {
                let at = base + c as usize;
                free.take(at);
                if starts.is_free(at) {
                    starts.take(at);
                }
                let mut rest = i;
                let mut unit = Unit {
                    check: node as u32,
                    ..FREE
                };
                if keys[i].0.len() == depth + 1 {
                    rest += 1;
                    unit.value = keys[i].1;
                    unit.score = keys[i].2;
                }
                units[at] = unit;
                if rest < j {
                    queue.push_back((at, rest, j, depth + 1));
                }
            }
        }
        // every `base + byte` of a walk stays inside the array
        let bound = units.iter().map(|u| u.base as usize).max().unwrap_or(0) + 256;
        if units.len() < bound {
            units.resize(bound, FREE);
        }
        units.shrink_to_fit();
        // links as byte offsets: a walk's step adds and loads, with no scaling on its chain
        for u in &mut units {
            if u.value == NONE {
                u.score = f32::NEG_INFINITY;
            }
            if u.check != NONE {
                u.check *= UNIT;
            }
            u.base *= UNIT;
        }
        Trie { units }
    }

    /// Calls `f(length, value, score)` for every key that starts `s`, shortest first.
    #[inline]
    pub fn prefixes(&self, s: &[u8], mut f: impl FnMut(usize, Rank, f32)) {
        let units = self.units.as_ptr().cast::<u8>();
        // SAFETY: `base` is a unit's offset in bytes and `b * UNIT` is below 256 units; `new`
        // made the array reach every base plus 256 units
        let (mut node, mut base) = (0u32, unsafe { (*units.cast::<Unit>()).base });
        for (i, &b) in s.iter().enumerate() {
            let t = base + (u32::from(b) << 4);
            let u = unsafe { *units.add(t as usize).cast::<Unit>() };
            if u.check != node {
                return;
            }
            if u.value != NONE {
                f(i + 1, u.value, u.score);
            }
            (node, base) = (t, u.base);
        }
    }

    /// Calls `f(length, unit, is a key, score)` at every step of the walk along `s`, which
    /// must hold, after the part to walk, a byte no key has (0xFF): no test of its end at each
    /// step. `unit` names the node (`key_at`); a node that is no key scores minus infinity.
    #[inline]
    fn walk_all(&self, s: &[u8], mut f: impl FnMut(usize, u32, bool, f32)) {
        debug_assert!(s.contains(&0xFF));
        let units = self.units.as_ptr().cast::<u8>();
        let text = s.as_ptr();
        // SAFETY: units as in `prefixes`; the text is read up to its first 0xFF, where every
        // walk stops (no node has a child by it)
        let (mut node, mut base) = (0u32, unsafe { (*units.cast::<Unit>()).base });
        let mut i = 0;
        loop {
            let b = unsafe { *text.add(i) };
            let t = base + (u32::from(b) << 4);
            let u = unsafe { *units.add(t as usize).cast::<Unit>() };
            if u.check != node {
                return;
            }
            i += 1;
            f(i, t, u.value != NONE, u.score);
            (node, base) = (t, u.base);
        }
    }

    /// The value and score of the key at `unit` (from `walk_all`).
    fn key_at(&self, unit: u32) -> (Rank, f32) {
        let u = self.units[(unit / UNIT) as usize];
        (u.value, u.score)
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

static NEXT_MODEL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

thread_local! {
    /// Each word's best path found in exact arithmetic, as the payload
    /// `[limit (f64 in two u32s), ids.., scores (f32 bits).., ends..]`: the `limit` its margin
    /// allows, the margin being the least gap, over the positions the path ends a piece at,
    /// between the best way to reach the position and the second best (infinite where there
    /// is one way).
    static WORDS: std::cell::RefCell<WordCache> = std::cell::RefCell::new(WordCache::default());
    /// `each_word`'s buffers (kept: texts are often a line each, and most of a line's words hit)
    static BUFFERS: std::cell::RefCell<Buffers> = std::cell::RefCell::new(Buffers::default());
}

#[derive(Default)]
struct Buffers {
    /// The words of the text being encoded: (start, end, hash).
    spans: Vec<(usize, usize, u64)>,
    searched: Vec<(usize, Rank)>,
    lattice: Vec<Lattice>,
    padded: Vec<u8>,
    payload: Vec<u32>,
}

const SPACE: &[u8] = "\u{2581}".as_bytes();

/// A position of `exact`'s lattice: the best and second best ways to reach it, and where the
/// best one's last piece starts and its unit in the trie (`UNKNOWN`: the unknown piece).
#[derive(Clone, Copy)]
struct Lattice {
    best: f64,
    second: f64,
    /// the start in the low half, the unit in the high one: one select for both
    link: u64,
}

const UNKNOWN: u32 = u32::MAX;

impl Lattice {
    fn link(start: u32, unit: u32) -> u64 {
        u64::from(start) | u64::from(unit) << 32
    }

    fn start(&self) -> usize {
        self.link as u32 as usize
    }

    fn unit(&self) -> u32 {
        (self.link >> 32) as u32
    }

    /// This position after a candidate way to reach it: the best if strictly better (so among
    /// equals the first offered stays), else perhaps the second best. Without branches: which
    /// way the test goes follows the text, and the compiler made branches of plain selects.
    #[inline(always)]
    fn offer(self, cand: f64, start: u32, unit: u32) -> Lattice {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::*;
            // SAFETY: SSE2 is part of x86-64. `best` and `second` as one pair, and the plain
            // instructions for min and max (`f64::max` adds a test for NaN, and scores are
            // never NaN): best = max(best, cand), second = max(second, min(best, cand)), the
            // loser of the two if above the second best.
            unsafe {
                let c = _mm_set_sd(cand);
                let b = _mm_set_sd(self.best);
                let m = _mm_cvtsi128_si64(_mm_castpd_si128(_mm_cmpgt_sd(c, b))) as u64;
                let pair = _mm_max_pd(
                    _mm_set_pd(self.second, self.best),
                    _mm_unpacklo_pd(c, _mm_min_sd(b, c)),
                );
                Lattice {
                    best: _mm_cvtsd_f64(pair),
                    second: _mm_cvtsd_f64(_mm_unpackhi_pd(pair, pair)),
                    link: (Lattice::link(start, unit) & m) | (self.link & !m),
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            if cand > self.best {
                Lattice {
                    best: cand,
                    second: self.best,
                    link: Lattice::link(start, unit),
                }
            } else {
                Lattice {
                    second: self.second.max(cand),
                    ..self
                }
            }
        }
    }
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
        self.each_word(s, SPACE_FINDER.find_iter(s), |start, pieces| match pieces {
            WordPieces::Cached { ids, ends, .. } => out.extend(
                ends.iter()
                    .zip(ids)
                    .map(|(&end, &id)| (start + end as usize, id)),
            ),
            WordPieces::Searched(ps) => out.extend(ps.iter().map(|&(end, id)| (start + end, id))),
        });
    }

    /// Calls `f(start, pieces)` for each word of `s` (cut before each `▁`: `marks`, where each
    /// `▁` starts, in order) with
    /// its pieces (ends relative to `start`) from the cache or from the search; without
    /// `by_words` it does nothing and returns false.
    pub fn each_word(
        &self,
        s: &[u8],
        marks: impl Iterator<Item = usize>,
        mut f: impl FnMut(usize, WordPieces<'_>),
    ) -> bool {
        if !self.by_words {
            return false;
        }
        WORDS.with_borrow_mut(|cache| {
            BUFFERS.with_borrow_mut(|buffers| {
                cache.ready(self.id);
                let mut total = 0f32;
                let Buffers {
                    spans,
                    searched,
                    lattice,
                    padded,
                    payload,
                } = buffers;
                cache.hash_words(s, marks, spans);
                for (i, &(start, end, hash)) in spans.iter().enumerate() {
                    cache.prefetch_after(spans, i);
                    let word = &s[start..end];
                    let entry = (word.len() <= CACHE_WORD_BYTES).then(|| {
                        cache.find_at(s, start, end, hash).unwrap_or_else(|| {
                            self.exact(word, lattice, padded, payload);
                            cache.insert(word, hash, payload)
                        })
                    });
                    let cached = entry.filter(|at| {
                        // the payload's first two words, its limit
                        let p = cache.four(at.start);
                        f64::from(total.abs())
                            < f64::from_bits(u64::from(p[0]) | u64::from(p[1]) << 32)
                    });
                    match cached {
                        Some(at) => {
                            let p = cache.payload(at.clone());
                            let k = (p.len() - 2) / 3;
                            if k <= 4 {
                                // A word of up to four pieces (most): its scores added without
                                // a loop, whose end went either way word after word; the lanes
                                // past the word add +0.0, which leaves the sum as it was (but
                                // for the sign of a zero, which no comparison sees).
                                let scores = cache.four(at.start + 2 + k);
                                for (j, &x) in scores.iter().enumerate() {
                                    // all of a piece's bits, none (+0.0) past the word's: no
                                    // branch (a select came back as one)
                                    let keep = u32::from(j < k).wrapping_neg();
                                    total += f32::from_bits(x & keep);
                                }
                            } else {
                                for &score in &p[2 + k..2 + 2 * k] {
                                    total += f32::from_bits(score);
                                }
                            }
                            f(
                                start,
                                WordPieces::Cached {
                                    ids: &p[2..2 + k],
                                    ends: &p[2 + 2 * k..],
                                    four: cache.four(at.start + 2),
                                },
                            );
                        }
                        None => {
                            searched.clear();
                            total = self.encode_from(word, total, searched);
                            f(start, WordPieces::Searched(searched));
                        }
                    }
                }
            })
        });
        true
    }

    /// The largest |score| before a word of `n` bytes whose path has `margin` under which the
    /// path is the 32-bit search's (`encode`): the margin must beat the rounding of `n`
    /// additions of sums up to `|s0| + n * max|score|`, `2 n eps (|s0| + n max|score|)`, with
    /// 1e-9 to spare. Solved for `|s0|` once per word, so a cached word's test is one compare.
    fn limit(&self, margin: f64, n: usize) -> f64 {
        let n = n as f64;
        let eps = 2.0 * n * f64::from(f32::EPSILON);
        (margin - 1e-9 - eps * n * self.max_abs) / eps
    }

    /// A word's best path in exact (64-bit) arithmetic with its margin (as the `limit` it
    /// allows), as the cache's payload (`WORDS`) in `payload`.
    ///
    /// The walks read a copy of the word followed by `0xFF`, a byte no piece has (pieces are
    /// UTF-8), so each walk stops at the word's end without a test of its own at every step.
    fn exact(&self, s: &[u8], at: &mut Vec<Lattice>, padded: &mut Vec<u8>, payload: &mut Vec<u32>) {
        let size = s.len();
        padded.clear();
        padded.extend_from_slice(s);
        padded.push(0xFF);
        at.clear();
        at.resize(
            size + 1,
            Lattice {
                best: f64::NEG_INFINITY,
                second: f64::NEG_INFINITY,
                link: Lattice::link(u32::MAX, UNKNOWN),
            },
        );
        at[0].best = 0.0;
        let mut start = 0usize;
        while start < size {
            let mblen = char_len(s[start]).min(size - start);
            // every position is reached (by a piece or the unknown one) before walks from it
            let from = at[start].best;
            let mut single = false;
            self.trie
                .walk_all(&padded[start..], |len, unit, key, score| {
                    // every step of the walk: a node that is no key scores minus infinity and
                    // changes nothing, without a branch on whether it is one
                    single |= (len == mblen) & key;
                    let cand = from + f64::from(score);
                    // SAFETY: a walk stops at the 0xFF after the word, so `start + len <= size`
                    let t = unsafe { at.get_unchecked_mut(start + len) };
                    *t = t.offer(cand, start as u32, unit);
                });
            if !single {
                let t = &mut at[start + mblen];
                *t = t.offer(from + f64::from(self.unk_score), start as u32, UNKNOWN);
            }
            start += mblen;
        }
        // the path from the end: [margin, ids.., scores.., ends..] filled back to front
        let mut n = 0;
        let mut end = size;
        while end > 0 {
            n += 1;
            end = at[end].start();
        }
        payload.clear();
        payload.resize(2 + 3 * n, 0);
        let mut margin = f64::INFINITY;
        let (mut k, mut end) = (n, size);
        while end > 0 {
            let l = at[end];
            margin = margin.min(l.best - l.second);
            k -= 1;
            let (id, score) = match l.unit() {
                UNKNOWN => (self.unk, self.unk_score),
                unit => self.trie.key_at(unit),
            };
            payload[2 + k] = id;
            payload[2 + n + k] = score.to_bits();
            payload[2 + 2 * n + k] = end as u32;
            end = l.start();
        }
        let bits = self.limit(margin, size).to_bits();
        payload[..2].copy_from_slice(&[bits as u32, (bits >> 32) as u32]);
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

    /// The double array against a naive search, on random key sets: small alphabets (deep,
    /// narrow tries), all 256 bytes (wide nodes, bytes 0 and 255), and many keys sharing a
    /// prefix (a node with every child), probing keys, their prefixes and extensions.
    #[test]
    fn trie_matches_naive() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..60 {
            // probes of every byte, keys of every byte but 0xFF (keys are UTF-8 in use, and
            // `walk_all` stops at 0xFF)
            let alphabet = [2u64, 3, 16, 256][round % 4];
            let key_alphabet = alphabet.min(255);
            let count = 1 + (next() % 600) as usize;
            let mut keys: Vec<Vec<u8>> = (0..count)
                .map(|_| {
                    let len = 1 + (next() % 9) as usize;
                    let mut k: Vec<u8> = (0..len).map(|_| (next() % key_alphabet) as u8).collect();
                    if round % 5 == 0 {
                        k.insert(0, 7); // many keys under one child
                    }
                    k
                })
                .collect();
            keys.sort();
            keys.dedup();
            let triples: Vec<(&[u8], Rank, f32)> = keys
                .iter()
                .enumerate()
                .map(|(i, k)| (k.as_slice(), i as Rank * 3, i as f32 * -0.5))
                .collect();
            let t = Trie::new(triples.clone());
            for probe in 0..400 {
                let text: Vec<u8> = if probe % 2 == 0 {
                    let mut k = keys[(next() % keys.len() as u64) as usize].clone();
                    k.extend((0..next() % 4).map(|_| (next() % alphabet) as u8));
                    k
                } else {
                    (0..1 + next() % 10)
                        .map(|_| (next() % alphabet) as u8)
                        .collect()
                };
                let mut got = Vec::new();
                t.prefixes(&text, |l, v, sc| got.push((l, v, sc)));
                let mut want: Vec<(usize, Rank, f32)> = triples
                    .iter()
                    .filter(|(k, ..)| text.starts_with(k))
                    .map(|&(k, v, sc)| (k.len(), v, sc))
                    .collect();
                want.sort_by_key(|w| w.0);
                assert_eq!(got, want, "round {round}, text {text:?}");
                // the same keys from the walk over the text cut at its first 0xFF, each step
                // reported, keys named by their units
                let mut ended: Vec<u8> = text.iter().copied().take_while(|&b| b != 0xFF).collect();
                ended.push(0xFF);
                let mut walked = Vec::new();
                t.walk_all(&ended, |l, unit, key, sc| {
                    assert_eq!(key, sc != f32::NEG_INFINITY);
                    if key {
                        walked.push((l, t.key_at(unit).0, t.key_at(unit).1));
                    }
                });
                let cut = ended.len() - 1;
                want.retain(|w| w.0 <= cut);
                assert_eq!(walked, want, "round {round}, walk of {ended:?}");
            }
        }
        let empty = Trie::new(Vec::new());
        empty.prefixes(b"abc", |_, _, _| panic!("no keys"));
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
