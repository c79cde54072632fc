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
use crate::text::word_cache::{short_key, WordCache, WordPieces, CACHE_WORD_BYTES};
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
    /// bit `a << 8 | b`: some piece holds byte `a` then byte `b` with a character boundary
    /// between them. Where a word's bytes `a`, `b` are not such a pair, no piece spans the
    /// boundary between them, so every path breaks there (`search`).
    joins: Box<[u64]>,
    /// the piece of each ASCII byte alone, or the unknown piece, with its score
    ascii: Box<[(Rank, f32); 128]>,
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
    parts: Parts,
}

/// 1 for the bytes `Unigram::search` looks at the places around: ASCII, but no letter or digit
/// (`other_bits` tells them apart 16 at a time on x86-64).
#[cfg_attr(all(target_arch = "x86_64", not(test)), allow(dead_code))]
const OTHER: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 128 {
        t[b] = !(b as u8).is_ascii_alphanumeric() as u8;
        b += 1;
    }
    t
};

/// Bit i: byte i of the `k` (at most 16) bytes held in `lo`, `hi` (little-endian, as
/// `short_key` loads them) is ASCII but no letter or digit (`OTHER`).
#[inline(always)]
fn other_bits(lo: u64, hi: u64, k: usize) -> u64 {
    let keep = (1u64 << k) - 1;
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY (here and below): SSE2 is part of x86-64. Bytes compared as signed: ASCII is 0
        // or more; a letter of either case, with bit 5 set, is in 'a'..='z'.
        let set = |b: u8| unsafe { _mm_set1_epi8(b as i8) };
        let bits = unsafe {
            let v = _mm_set_epi64x(hi as i64, lo as i64);
            let ascii = _mm_cmpgt_epi8(v, set(0xFF));
            let lower = _mm_or_si128(v, set(0x20));
            let letter = _mm_and_si128(
                _mm_cmpgt_epi8(lower, set(b'a' - 1)),
                _mm_cmpgt_epi8(set(b'z' + 1), lower),
            );
            let digit = _mm_and_si128(
                _mm_cmpgt_epi8(v, set(b'0' - 1)),
                _mm_cmpgt_epi8(set(b'9' + 1), v),
            );
            _mm_movemask_epi8(_mm_andnot_si128(_mm_or_si128(letter, digit), ascii)) as u32
        };
        u64::from(bits) & keep
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut bits = 0u64;
        for (i, b) in lo
            .to_le_bytes()
            .into_iter()
            .chain(hi.to_le_bytes())
            .enumerate()
        {
            bits |= u64::from(OTHER[usize::from(b)]) << i;
        }
        bits & keep
    }
}

/// A word's pieces made from its parts' (`Unigram::search`): the first `n` of each array, which
/// have room for a word's every byte and four more.
struct Parts {
    n: usize,
    ids: Box<[u32; CACHE_WORD_BYTES + 4]>,
    scores: Box<[u32; CACHE_WORD_BYTES + 4]>,
    ends: Box<[u32; CACHE_WORD_BYTES + 4]>,
}

impl Default for Parts {
    fn default() -> Self {
        Parts {
            n: 0,
            ids: Box::new([0; CACHE_WORD_BYTES + 4]),
            scores: Box::new([0; CACHE_WORD_BYTES + 4]),
            ends: Box::new([0; CACHE_WORD_BYTES + 4]),
        }
    }
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

/// `total` plus the first `k` (at most 4) of `scores` (f32 bits), added one after the other in
/// 32 bits. The lanes past the `k`th add +0.0, which leaves the sum as it was (but for the sign
/// of a zero, which no comparison sees). The lanes are masked as a vector, by a mask loaded
/// from a table: masks made lane by lane (`j < k`) came back from the compiler as branches on
/// `k`, which went either way word after word (250,000 mispredictions in a pass over 2 MB).
#[inline(always)]
fn add_scores(total: f32, scores: [u32; 4], k: usize) -> f32 {
    static KEEP: [[u32; 4]; 5] = [
        [0, 0, 0, 0],
        [!0, 0, 0, 0],
        [!0, !0, 0, 0],
        [!0, !0, !0, 0],
        [!0, !0, !0, !0],
    ];
    debug_assert!(k <= 4);
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of x86-64; both arrays are four `u32`s
        unsafe {
            let keep = _mm_loadu_si128(KEEP[k.min(4)].as_ptr().cast());
            let v = _mm_and_si128(_mm_loadu_si128(scores.as_ptr().cast()), keep);
            let v = _mm_castsi128_ps(v);
            let mut t = _mm_add_ss(_mm_set_ss(total), v);
            t = _mm_add_ss(t, _mm_shuffle_ps::<0b01>(v, v));
            t = _mm_add_ss(t, _mm_shuffle_ps::<0b10>(v, v));
            t = _mm_add_ss(t, _mm_shuffle_ps::<0b11>(v, v));
            _mm_cvtss_f32(t)
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut total = total;
        for (&x, &keep) in scores.iter().zip(&KEEP[k]) {
            total += f32::from_bits(x & keep);
        }
        total
    }
}

/// The limit a cached payload begins with (its first two words, an `f64`'s bits).
#[inline(always)]
fn stored_limit(p: &[u32]) -> f64 {
    f64::from_bits(u64::from(p[0]) | u64::from(p[1]) << 32)
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
        let mut joins = vec![0u64; 1 << 10].into_boxed_slice();
        // a boundary inside a character is spanned by any piece that holds the character
        for a in 0..256 {
            for b in 0x80..0xC0 {
                let x = a << 8 | b;
                joins[x / 64] |= 1 << (x % 64);
            }
        }
        for (key, ..) in &keys {
            for (i, &b) in key.iter().enumerate().skip(1) {
                if b & 0xC0 != 0x80 {
                    let x = usize::from(key[i - 1]) << 8 | usize::from(b);
                    joins[x / 64] |= 1 << (x % 64);
                }
            }
        }
        let mut ascii = Box::new([(unk, unk_score); 128]);
        for &(key, id, score) in &keys {
            if let [b] = key {
                if *b < 0x80 {
                    ascii[usize::from(*b)] = (id, score);
                }
            }
        }
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
            joins,
            ascii,
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
                    parts,
                } = buffers;
                cache.hash_words(s, marks, spans);
                for (i, &(start, end, hash)) in spans.iter().enumerate() {
                    cache.prefetch_after(spans, i);
                    let word = &s[start..end];
                    let entry = (word.len() <= CACHE_WORD_BYTES).then(|| {
                        cache.find_at(s, start, end, hash).unwrap_or_else(|| {
                            self.search(s, start..end, cache, lattice, padded, payload, parts);
                            cache.insert_at(s, start, end, hash, payload)
                        })
                    });
                    let cached = entry
                        .filter(|at| f64::from(total.abs()) < stored_limit(&cache.four(at.start)));
                    match cached {
                        Some(at) => {
                            let p = cache.payload(at.clone());
                            let k = (p.len() - 2) / 3;
                            if k <= 4 {
                                // a word of up to four pieces (most), without a loop
                                total = add_scores(total, cache.four(at.start + 2 + k), k);
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

    /// The inverse of `limit`: the margin of a path whose limit is `limit`, for `n` bytes.
    fn margin(&self, limit: f64, n: usize) -> f64 {
        let n = n as f64;
        let eps = 2.0 * n * f64::from(f32::EPSILON);
        limit * eps + 1e-9 + eps * n * self.max_abs
    }

    /// Whether some piece spans the boundary before `word[i]` (`joins`; a boundary inside a
    /// character is spanned by every piece that holds the character).
    #[inline]
    fn spans(&self, word: &[u8], i: usize) -> bool {
        let x = usize::from(word[i - 1]) << 8 | usize::from(word[i]);
        self.joins[x / 64] >> (x % 64) & 1 != 0
    }

    /// `exact`'s payload for the word `s[span]`, in `payload`. Where no piece spans a place
    /// in the word (`joins`), every path of the word passes there, so the best path is the
    /// best paths of the parts between such places, one after the other, and its margin the
    /// least of theirs (each position's best and second best ways differ by what they do in
    /// its part alone). Each part is then looked up in `cache` as a word of its own, searched
    /// and kept there if it is not, and the word's payload made from the parts'. Most words
    /// of a text not seen before are words seen before with other punctuation around them
    /// ("early" then "early,"): their parts are found, not searched (`NOTES.md`).
    #[allow(clippy::too_many_arguments)]
    fn search(
        &self,
        s: &[u8],
        span: std::ops::Range<usize>,
        cache: &mut WordCache,
        lattice: &mut Vec<Lattice>,
        padded: &mut Vec<u8>,
        payload: &mut Vec<u32>,
        parts: &mut Parts,
    ) {
        let word = &s[span.clone()];
        debug_assert!(word.len() <= CACHE_WORD_BYTES);
        if word.len() < 2 {
            return self.exact(word, lattice, padded, payload);
        }
        // Places looked at: where a byte is ASCII but no letter or digit, or follows one (most
        // places no piece spans are there, and a word of letters is one pass over its bytes);
        // bit i: the place before byte i, 64 to a word. The bytes are classed 16 at a time
        // (`other_bits`): a loop over each byte exited at a length nothing predicts.
        let n = word.len();
        let mut other = [0u64; CACHE_WORD_BYTES / 64];
        let mut c = 0;
        while 16 * c < n {
            let k = (n - 16 * c).min(16);
            let (lo, hi) = short_key(s, span.start + 16 * c, k);
            other[c / 4] |= other_bits(lo, hi, k) << (16 * (c % 4));
            c += 1;
        }
        let mut cuts = [0u64; CACHE_WORD_BYTES / 64];
        let (mut any, mut carry) = (0, 0);
        for (cut, &o) in cuts.iter_mut().zip(&other) {
            *cut = o | o << 1 | carry;
            carry = o >> 63;
        }
        // neither the place before the first byte nor the one after the last
        cuts[0] &= !1;
        if n < CACHE_WORD_BYTES {
            cuts[n / 64] &= !(1 << (n % 64));
        }
        for &m in &cuts {
            any |= m;
        }
        if any == 0 {
            return self.exact(word, lattice, padded, payload);
        }
        // of those, the places no piece spans (`joins`)
        for (c, chunk) in cuts.iter_mut().enumerate() {
            let mut m = *chunk;
            while m != 0 {
                let i = 64 * c + m.trailing_zeros() as usize;
                m &= m - 1;
                if self.spans(word, i) {
                    *chunk &= !(1 << (i % 64));
                }
            }
        }
        if cuts.iter().all(|&m| m == 0) {
            return self.exact(word, lattice, padded, payload);
        }
        parts.n = 0;
        let mut margin = f64::INFINITY;
        let mut part = |from: usize, cut: usize| {
            let n = parts.n;
            if cut - from == 1 && word[from] < 0x80 {
                // one ASCII byte: its piece or the unknown one, the only way over it (an
                // infinite margin)
                let (id, score) = self.ascii[usize::from(word[from])];
                parts.ids[n] = id;
                parts.scores[n] = score.to_bits();
                parts.ends[n] = cut as u32;
                parts.n += 1;
                return;
            }
            let (a, b) = (span.start + from, span.start + cut);
            let hash = WordCache::hash_at(s, a, b);
            let at = cache.find_at(s, a, b, hash).unwrap_or_else(|| {
                self.exact(&s[a..b], lattice, padded, payload);
                cache.insert_at(s, a, b, hash, payload)
            });
            let k = (at.len() - 2) / 3;
            margin = margin.min(self.margin(stored_limit(&cache.four(at.start)), cut - from));
            // four words at a time: the few a part has, without a call to `memcpy` for each
            let mut j = 0;
            while j < k {
                let at = at.start + 2 + j;
                parts.ids[n + j..n + j + 4].copy_from_slice(&cache.four(at));
                parts.scores[n + j..n + j + 4].copy_from_slice(&cache.four(at + k));
                let ends = cache.four(at + 2 * k).map(|e| e + from as u32);
                parts.ends[n + j..n + j + 4].copy_from_slice(&ends);
                j += 4;
            }
            parts.n += k;
        };
        let mut from = 0;
        for (c, &m) in cuts.iter().enumerate() {
            let mut m = m;
            while m != 0 {
                let cut = 64 * c + m.trailing_zeros() as usize;
                m &= m - 1;
                part(from, cut);
                from = cut;
            }
        }
        part(from, word.len());
        let k = parts.n;
        let bits = self.limit(margin, word.len()).to_bits();
        // written into the payload's spare room, not zeroed first (a `memset` call by size)
        payload.clear();
        payload.reserve(2 + 3 * k + 4);
        let room = &mut payload.spare_capacity_mut()[..2 + 3 * k + 4];
        room[0].write(bits as u32);
        room[1].write((bits >> 32) as u32);
        // each region's last four may run into the next, which is written after it
        for (r, region) in [&parts.ids, &parts.scores, &parts.ends]
            .into_iter()
            .enumerate()
        {
            let mut j = 0;
            while j < k {
                let at = 2 + r * k + j;
                let four: [u32; 4] = region[j..j + 4].try_into().expect("four words");
                room[at..at + 4].copy_from_slice(&four.map(std::mem::MaybeUninit::new));
                j += 4;
            }
        }
        // SAFETY: words 0 and 1 are written above, and each region's words (2 + r k up to
        // 2 + (r + 1) k) by its copies of four.
        unsafe { payload.set_len(2 + 3 * k) };
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
        // written into the payload's spare room, not zeroed first (a `memset` call by size)
        payload.clear();
        payload.reserve(2 + 3 * n);
        let room = &mut payload.spare_capacity_mut()[..2 + 3 * n];
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
            room[2 + k].write(id);
            room[2 + n + k].write(score.to_bits());
            room[2 + 2 * n + k].write(end as u32);
            end = l.start();
        }
        let bits = self.limit(margin, size).to_bits();
        room[0].write(bits as u32);
        room[1].write((bits >> 32) as u32);
        // SAFETY: the path has `n` pieces, and the loop wrote the three words of each, for
        // `k` from `n - 1` down to 0; words 0 and 1 just above.
        unsafe { payload.set_len(2 + 3 * n) };
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

    /// `other_bits` against the table, for every byte at every place of 1 to 16 bytes, the
    /// bytes past them (spaces, which it would mark) left out.
    #[test]
    fn other_bits_are_the_tables() {
        for b in 0..=255u8 {
            for k in 1..=16usize {
                for at in 0..k {
                    let mut bytes = [b' '; 16];
                    bytes[..k].fill(b'a');
                    bytes[at] = b;
                    let lo = u64::from_le_bytes(bytes[..8].try_into().unwrap());
                    let hi = u64::from_le_bytes(bytes[8..].try_into().unwrap());
                    let want = u64::from(OTHER[usize::from(b)]) << at;
                    assert_eq!(other_bits(lo, hi, k), want, "byte {b:#x} at {at} of {k}");
                }
            }
        }
    }

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

    /// `<unk>` and up to `count` random normal pieces of 1 to `chars` characters of `alphabet`
    /// (a third of them after a `▁`, never one inside), scored coarsely (`coarse`: many ties) or
    /// finely (near ties).
    fn random_pieces(
        rng: &mut crate::unigram::sample::Rng,
        alphabet: &[&str],
        count: usize,
        chars: u64,
        coarse: bool,
    ) -> Vec<(String, f32, Kind)> {
        let mut seen = std::collections::HashSet::new();
        let mut pieces: Vec<(String, f32, Kind)> = vec![("<unk>".into(), 0.0, Kind::Reserved)];
        for _ in 0..count {
            let len = 1 + (rng.next_u64() % chars) as usize;
            let mut p = String::new();
            if rng.next_u64() % 3 == 0 {
                p.push('\u{2581}');
            }
            while p.chars().count() < len {
                let c = alphabet[(rng.next_u64() % alphabet.len() as u64) as usize];
                if c != "\u{2581}" {
                    p.push_str(c);
                }
            }
            if seen.insert(p.clone()) {
                let score = if coarse {
                    -((rng.next_u64() % 8) as f32) * 0.5
                } else {
                    -(rng.next_f64() * 8.0) as f32
                };
                pieces.push((p, score, Kind::Normal));
            }
        }
        pieces
    }

    #[test]
    fn scores_add_in_order_and_only_the_words() {
        let mut rng = crate::unigram::sample::Rng::new(9);
        for _ in 0..2000 {
            let total = (rng.next_f64() * 2e4 - 1e4) as f32;
            // lanes past the word's hold other words' scores, never zero
            let scores: [u32; 4] =
                std::array::from_fn(|_| (-(rng.next_f64() * 20.0) as f32 - 0.5).to_bits());
            for k in 0..=4 {
                let mut want = total;
                for &x in &scores[..k] {
                    want += f32::from_bits(x);
                }
                assert_eq!(
                    add_scores(total, scores, k).to_bits(),
                    want.to_bits(),
                    "{k}"
                );
            }
        }
    }

    /// A word made from its parts (`search`) has the whole word's best path (`exact`) and, but
    /// for rounding, its margin: on random models whose pieces leave places no piece spans.
    #[test]
    fn a_word_from_its_parts_is_the_whole_words_search() {
        let mut rng = crate::unigram::sample::Rng::new(5);
        let alphabet = ["a", "b", ",", "(", "é", "x"];
        let (mut split, mut whole) = (0, 0);
        for round in 0..200 {
            let pieces = random_pieces(&mut rng, &alphabet, 30, 3, round % 2 == 0);
            let list: Vec<(&str, f32, Kind)> =
                pieces.iter().map(|p| (p.0.as_str(), p.1, p.2)).collect();
            let m = Unigram::new(&list, 0);
            let mut cache = WordCache::default();
            cache.ready(m.id);
            let (mut lattice, mut padded, mut parts) = (Vec::new(), Vec::new(), Parts::default());
            let (mut got, mut want) = (Vec::new(), Vec::new());
            for i in 0..43 {
                // and the shortest words, which are not cut
                let mut w = String::from(["", "a", ","].get(i).copied().unwrap_or("\u{2581}"));
                for _ in 0..(rng.next_u64() % 10) * u64::from(i >= 3) {
                    w.push_str(alphabet[(rng.next_u64() % 6) as usize]);
                }
                // inside a longer text, as words are
                let s = format!("ab{w}x");
                let span = 2..2 + w.len();
                let b = w.as_bytes();
                // cut: a place next to punctuation that no piece spans
                let next_to =
                    |i: usize| OTHER[usize::from(b[i - 1])] | OTHER[usize::from(b[i])] == 1;
                if (1..b.len()).any(|i| next_to(i) && !m.spans(b, i)) {
                    split += 1;
                } else {
                    whole += 1;
                }
                m.search(
                    s.as_bytes(),
                    span,
                    &mut cache,
                    &mut lattice,
                    &mut padded,
                    &mut got,
                    &mut parts,
                );
                m.exact(b, &mut lattice, &mut padded, &mut want);
                assert_eq!(got[2..], want[2..], "round {round}: {w:?}");
                let (g, e) = (stored_limit(&got), stored_limit(&want));
                assert!(
                    g == e || (g - e).abs() <= 1e-6 * e.abs().max(1.0),
                    "round {round}: {w:?}: limit {g} against {e}"
                );
            }
        }
        assert!(split > 1000 && whole > 1000, "{split} split, {whole} whole");
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
            let pieces = random_pieces(&mut rng, &alphabet, 40, 4, round % 2 == 0);
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
