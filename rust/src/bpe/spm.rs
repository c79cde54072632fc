//! SentencePiece's BPE encoder: merges over characters (not bytes), by piece score.
//!
//! Behaviour is sentencepiece's `bpe::Model::Encode`, learned by running it: the normalized
//! text is cut into characters (a user-defined symbol is one frozen symbol, never merged);
//! while some adjacent pair joins into a vocabulary piece (normal, user-defined or unused), the
//! pair whose piece has the highest score is merged, leftmost among equal scores. A piece that
//! ends up unused is split back into the two halves it was made of (recursively); a
//! character that is no piece is the unknown piece (byte fallback happens after, on the ids).
//!
//! When no piece that can be merged or matched has a `▁` after its first character (models
//! trained with the default `split_by_whitespace`), no merge crosses a `▁`: each word (a `▁` and
//! what follows, up to the next) is encoded alone and kept in a per-thread cache, with the ids
//! the whole text gives. Figures: `unigram/NOTES.md`.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

use crate::text::normalize::{char_len, PrefixMatcher, SPACE_FINDER};
use crate::text::word_cache::{WordCache, WordPieces, CACHE_WORD_BYTES};
use crate::unigram::sample::Rng;
use crate::Rank;

/// What the encoder needs to know of each piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Normal,
    UserDefined,
    Unused,
    /// unknown, control and byte pieces: found by exact text only after merging
    Reserved,
}

/// A SentencePiece BPE model ready to encode.
#[derive(Clone, Debug)]
pub struct SpmBpe {
    /// normal, user-defined and unused pieces
    pieces: FxHashMap<Box<[u8]>, Rank>,
    /// unknown, control and byte pieces (looked up first, as sentencepiece's PieceToId)
    reserved: FxHashMap<Box<[u8]>, Rank>,
    /// (left id, right id) -> the piece their texts make, for every piece of `pieces` and each
    /// cut of it between characters whose two halves are pieces too: a merge is then looked up
    /// by two ids instead of by hashing and comparing the joined text (see `add_pair`); None
    /// for a vocabulary too large to pack (then the text is looked up)
    pairs: Option<PairTable>,
    /// the piece of each ASCII character (`NO_PIECE` where it is none)
    ascii: Box<[Rank; 128]>,
    /// some text is both a reserved piece and one of `pieces` (the reserved one wins, `id_of`)
    shadowed: bool,
    scores: Vec<f32>,
    kinds: Vec<Kind>,
    unk: Rank,
    user: PrefixMatcher,
    /// words (a `▁` and what follows up to the next) encode alone, and are cached
    by_words: bool,
    /// tells this model's entries in a thread's word cache from another model's
    id: u64,
}

static NEXT_MODEL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

thread_local! {
    /// Each word's pieces as the payload `[ids.., ends..]`.
    static WORDS: std::cell::RefCell<WordCache> = std::cell::RefCell::new(WordCache::default());
    /// The words of the text being encoded (`WordCache::hash_words`), kept for the next call.
    static SPANS: std::cell::Cell<Vec<(usize, usize, u64)>> = const { std::cell::Cell::new(Vec::new()) };
    /// `encode_text`'s symbols and queue, kept for the next word (each word's own were a
    /// tenth of a first pass in malloc and free).
    static SCRATCH: std::cell::Cell<(Vec<Sym>, Vec<Pair>)> = const { std::cell::Cell::new((Vec::new(), Vec::new())) };
}

/// A symbol whose text is not a piece of `pieces` (an unknown character).
const NO_PIECE: Rank = Rank::MAX;

const SPACE: &[u8] = "\u{2581}".as_bytes();

#[derive(Clone, Copy)]
struct Sym {
    start: usize,
    len: usize,
    prev: usize,
    next: usize,
    /// the piece its text is (`NO_PIECE` if none)
    id: Rank,
    freeze: bool,
}

const END: usize = usize::MAX;

/// Texts of at most this many characters are merged by `SpmBpe::merge_scanning`.
const SCAN_SYMBOLS: usize = 32;

#[derive(PartialEq)]
struct Pair {
    score: f32,
    left: usize,
    right: usize,
    size: usize,
    id: Rank,
}

impl Eq for Pair {}

impl Ord for Pair {
    fn cmp(&self, other: &Self) -> Ordering {
        // highest score first, then leftmost (scores are never NaN: the reader refuses them)
        self.score
            .partial_cmp(&other.score)
            .unwrap_or(Ordering::Equal)
            .then(other.left.cmp(&self.left))
    }
}

impl PartialOrd for Pair {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// `SpmBpe::pairs`: each entry one word, `left << 42 | right << 21 | piece`, in open addressing
/// with linear probing at most 4/5 full. For 32 k pieces (54 k entries) that is 512 KiB, which
/// a core's L2 cache holds, where a hash map of (u64, u32) took twice that plus its control
/// bytes, two cache lines a probe: the probe was a quarter of a first pass.
#[derive(Clone, Debug)]
struct PairTable {
    slots: Box<[u64]>,
    shift: u32,
}

const ID_BITS: u32 = 21;
const ID_MASK: u64 = (1 << ID_BITS) - 1;
const EMPTY: u64 = u64::MAX;

impl PairTable {
    /// None when an id does not fit `ID_BITS` (all ones is kept for `EMPTY`).
    fn new(entries: &[(Rank, Rank, Rank)]) -> Option<PairTable> {
        if entries
            .iter()
            .any(|&(a, b, p)| u64::from(a.max(b).max(p)) >= ID_MASK)
        {
            return None;
        }
        let bits = (entries.len() * 5 / 4 + 1)
            .next_power_of_two()
            .trailing_zeros()
            .max(4);
        let mut table = PairTable {
            slots: vec![EMPTY; 1 << bits].into_boxed_slice(),
            shift: 64 - bits,
        };
        let mask = table.slots.len() - 1;
        for &(a, b, p) in entries {
            let key = Self::key(a, b);
            let mut i = table.slot(key);
            while table.slots[i] != EMPTY && table.slots[i] >> ID_BITS != key {
                i = (i + 1) & mask;
            }
            table.slots[i] = key << ID_BITS | u64::from(p);
        }
        Some(table)
    }

    fn key(a: Rank, b: Rank) -> u64 {
        u64::from(a) << ID_BITS | u64::from(b)
    }

    fn slot(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    #[inline]
    fn get(&self, a: Rank, b: Rank) -> Option<Rank> {
        let key = Self::key(a, b);
        let mask = self.slots.len() - 1;
        let mut i = self.slot(key);
        loop {
            let e = self.slots[i];
            if e == EMPTY {
                return None;
            }
            if e >> ID_BITS == key {
                return Some((e & ID_MASK) as Rank);
            }
            i = (i + 1) & mask;
        }
    }
}

impl SpmBpe {
    /// `pieces`: (text, score, kind) by id; `unk`: the id of the unknown piece.
    pub fn new(pieces: &[(&str, f32, Kind)], unk: Rank) -> SpmBpe {
        let mut map: FxHashMap<Box<[u8]>, Rank> =
            FxHashMap::with_capacity_and_hasher(pieces.len(), Default::default());
        let mut reserved = FxHashMap::default();
        for (i, &(p, _, k)) in pieces.iter().enumerate() {
            let m = if k == Kind::Reserved {
                &mut reserved
            } else {
                &mut map
            };
            m.entry(p.as_bytes().into()).or_insert(i as Rank);
        }
        let user = PrefixMatcher::new(
            pieces
                .iter()
                .filter(|p| p.2 == Kind::UserDefined)
                .map(|p| p.0),
        );
        // Merges never cross a `▁` when no piece that can be merged or matched has one after its
        // first character: then each word is encoded alone, with the ids the whole text gives.
        // Unused pieces are split back by what the whole text recorded last: no words then.
        let by_words = pieces.iter().all(|&(p, _, k)| match k {
            Kind::Reserved => true,
            Kind::Unused => false,
            _ => p
                .as_bytes()
                .get(1..)
                .is_none_or(|rest| !rest.windows(3).any(|w| w == SPACE)),
        });
        let mut pairs = Vec::new();
        for (text, &id) in &map {
            let cuts = (1..text.len()).filter(|&k| (text[k] & 0xC0) != 0x80);
            for k in cuts {
                if let (Some(&a), Some(&b)) = (map.get(&text[..k]), map.get(&text[k..])) {
                    pairs.push((a, b, id));
                }
            }
        }
        let pairs = PairTable::new(&pairs);
        let mut ascii = Box::new([NO_PIECE; 128]);
        for (c, slot) in ascii.iter_mut().enumerate() {
            if let Some(&id) = map.get(&[c as u8][..]) {
                *slot = id;
            }
        }
        let shadowed = reserved.keys().any(|k| map.contains_key(k));
        SpmBpe {
            by_words,
            id: NEXT_MODEL.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            pairs,
            ascii,
            shadowed,
            pieces: map,
            reserved,
            scores: pieces.iter().map(|p| p.1).collect(),
            kinds: pieces.iter().map(|p| p.2).collect(),
            unk,
            user,
        }
    }

    fn id_of(&self, s: &[u8]) -> Rank {
        if let Some(&id) = self.reserved.get(s) {
            return id;
        }
        self.pieces.get(s).copied().unwrap_or(self.unk)
    }

    /// Appends the pieces of `s` (normalized text) to `out` as (end byte, id), in order.
    pub fn encode(&self, s: &[u8], out: &mut Vec<(usize, Rank)>) {
        let by_words = self.each_word(s, SPACE_FINDER.find_iter(s), |start, pieces| match pieces {
            WordPieces::Cached { ids, ends, .. } => out.extend(
                ends.iter()
                    .zip(ids)
                    .map(|(&end, &id)| (start + end as usize, id)),
            ),
            WordPieces::Searched(ps) => out.extend(ps.iter().map(|&(end, id)| (start + end, id))),
        });
        if !by_words {
            self.encode_text(s, out, None);
        }
    }

    /// Calls `f(start, pieces)` for each word of `s` (a `▁` and what follows, up to the next;
    /// `marks`: where each `▁` starts, in order) in order, with its pieces (ends relative to `start`) from the cache or encoded alone;
    /// without `by_words` it does nothing and returns false.
    pub fn each_word(
        &self,
        s: &[u8],
        marks: impl Iterator<Item = usize>,
        mut f: impl FnMut(usize, WordPieces<'_>),
    ) -> bool {
        if !self.by_words {
            return false;
        }
        WORDS.with(|cache| {
            let mut cache = cache.borrow_mut();
            cache.ready(self.id);
            let mut pieces = Vec::new();
            let mut payload = Vec::new();
            let mut spans = SPANS.take();
            cache.hash_words(s, marks, &mut spans);
            for (i, &(start, end, hash)) in spans.iter().enumerate() {
                cache.prefetch_after(&spans, i);
                let word = &s[start..end];
                if let Some(at) = cache.find_at(s, start, end, hash) {
                    let four = cache.four(at.start);
                    let p = cache.payload(at);
                    let (ids, ends) = p.split_at(p.len() / 2);
                    f(start, WordPieces::Cached { ids, ends, four });
                } else {
                    pieces.clear();
                    self.encode_text(word, &mut pieces, None);
                    if word.len() <= CACHE_WORD_BYTES {
                        payload.clear();
                        payload.extend(pieces.iter().map(|p| p.1));
                        payload.extend(pieces.iter().map(|p| p.0 as u32));
                        cache.insert_at(s, start, end, hash, &payload);
                    }
                    f(start, WordPieces::Searched(&pieces));
                }
            }
            SPANS.set(spans);
        });
        true
    }

    /// `encode` with BPE-dropout (Provilkov et al. 2020) as sentencepiece samples it: each merge,
    /// when its turn comes, is skipped with probability `p` (and not tried again).
    pub fn encode_dropout(&self, s: &[u8], p: f64, rng: &mut Rng, out: &mut Vec<(usize, Rank)>) {
        self.encode_text(s, out, Some((p, rng)))
    }

    /// `encode` of a whole text at once; with `dropout`, `encode_dropout`.
    fn encode_text(
        &self,
        s: &[u8],
        out: &mut Vec<(usize, Rank)>,
        mut dropout: Option<(f64, &mut Rng)>,
    ) {
        if s.is_empty() {
            return;
        }
        let (mut syms, mut heap) = SCRATCH.take();
        syms.clear();
        heap.clear();
        let mut at = 0;
        while at < s.len() {
            let (len, freeze) = match self.user.longest(&s[at..]) {
                Some(n) => (n, true),
                None => (char_len(s[at]).min(s.len() - at), false),
            };
            let id = match s[at] {
                c if c < 0x80 && len == 1 => self.ascii[c as usize],
                _ => self
                    .pieces
                    .get(&s[at..at + len])
                    .copied()
                    .unwrap_or(NO_PIECE),
            };
            let i = syms.len();
            syms.push(Sym {
                start: at,
                len,
                prev: if i == 0 { END } else { i - 1 },
                next: if at + len == s.len() { END } else { i + 1 },
                id,
                freeze,
            });
            at += len;
        }
        // unused pieces, and the length of the left half they were last made of
        let mut rev: FxHashMap<&[u8], usize> = FxHashMap::default();
        if dropout.is_none() && syms.len() <= SCAN_SYMBOLS {
            self.merge_scanning(s, &mut rev, &mut syms);
            self.emit(s, &syms, &rev, out);
            SCRATCH.set((syms, heap));
            return;
        }
        // Empty: no work to order it.
        let mut heap = BinaryHeap::from(heap);
        for i in 1..syms.len() {
            self.add_pair(s, &mut heap, &mut rev, &syms, i - 1, i);
        }
        while let Some(top) = heap.pop() {
            let (l, r) = (top.left, top.right);
            if syms[l].len == 0 || syms[r].len == 0 || syms[l].len + syms[r].len != top.size {
                continue;
            }
            if let Some((p, rng)) = dropout.as_mut() {
                if rng.next_f64() < *p {
                    continue;
                }
            }
            syms[l].len += syms[r].len;
            syms[l].id = top.id;
            syms[l].next = syms[r].next;
            if syms[r].next != END {
                let n = syms[r].next;
                syms[n].prev = l;
            }
            syms[r].len = 0;
            self.add_pair(s, &mut heap, &mut rev, &syms, syms[l].prev, l);
            self.add_pair(s, &mut heap, &mut rev, &syms, l, syms[l].next);
        }
        self.emit(s, &syms, &rev, out);
        SCRATCH.set((syms, heap.into_vec()));
    }

    /// The merges of `encode_text` without dropout, for a text of at most `SCAN_SYMBOLS`
    /// characters: the pair each symbol makes with the next is kept in an array, and each merge
    /// is the highest score found by a scan of it (the first, so the leftmost, among equal ones).
    /// It merges what the queue merges: the queue's live entries are the adjacent pairs, each
    /// queued when it became adjacent, as `pair` is asked here, in the same order (so `rev`
    /// records the same halves). For a word the queue's pushes and pops, with their compares
    /// that go either way, were most of a first pass.
    fn merge_scanning<'a>(
        &self,
        s: &'a [u8],
        rev: &mut FxHashMap<&'a [u8], usize>,
        syms: &mut [Sym],
    ) {
        const _: () = assert!(SCAN_SYMBOLS <= u32::BITS as usize);
        let n = syms.len();
        // the score and piece of the pair symbol i makes with the next, where bit i of `live`
        // says there is one (any score, minus infinity too, is a pair's)
        let mut pairs = [(0f32, 0 as Rank); SCAN_SYMBOLS];
        let mut live = 0u32;
        fn set(pairs: &mut [(f32, Rank)], live: &mut u32, i: usize, p: Option<(f32, Rank)>) {
            match p {
                Some(p) => {
                    pairs[i] = p;
                    *live |= 1 << i;
                }
                None => *live &= !(1 << i),
            }
        }
        for i in 1..n {
            set(
                &mut pairs,
                &mut live,
                i - 1,
                self.pair(s, rev, syms, i - 1, i),
            );
        }
        while live != 0 {
            // the first highest score among the live pairs, in order
            let (mut l, mut rest) = (live.trailing_zeros() as usize, live & (live - 1));
            while rest != 0 {
                let i = rest.trailing_zeros() as usize;
                if pairs[i].0 > pairs[l].0 {
                    l = i;
                }
                rest &= rest - 1;
            }
            let r = syms[l].next;
            syms[l].len += syms[r].len;
            syms[l].id = pairs[l].1;
            syms[l].next = syms[r].next;
            if syms[r].next != END {
                let n = syms[r].next;
                syms[n].prev = l;
            }
            syms[r].len = 0;
            live &= !(1 << r);
            let prev = syms[l].prev;
            if prev != END {
                set(
                    &mut pairs,
                    &mut live,
                    prev,
                    self.pair(s, rev, syms, prev, l),
                );
            }
            let next = syms[l].next;
            set(&mut pairs, &mut live, l, self.pair(s, rev, syms, l, next));
        }
    }

    /// The pieces of the merged symbols, in order, into `out`.
    fn emit(
        &self,
        s: &[u8],
        syms: &[Sym],
        rev: &FxHashMap<&[u8], usize>,
        out: &mut Vec<(usize, Rank)>,
    ) {
        let mut i = 0;
        while i != END {
            let sym = syms[i];
            if sym.id != NO_PIECE && !self.shadowed && self.kinds[sym.id as usize] != Kind::Unused {
                // a piece as it is (most symbols): `resegment` would find the same id
                out.push((sym.start + sym.len, sym.id));
            } else {
                self.resegment(s, sym.start, sym.len, rev, out);
            }
            i = sym.next;
        }
    }

    /// The piece symbols `l` and `r` make when merged, if it is one, with its score; an unused
    /// piece's halves are recorded in `rev`.
    #[inline(always)]
    fn pair<'a>(
        &self,
        s: &'a [u8],
        rev: &mut FxHashMap<&'a [u8], usize>,
        syms: &[Sym],
        l: usize,
        r: usize,
    ) -> Option<(f32, Rank)> {
        if l == END || r == END || syms[l].freeze || syms[r].freeze {
            return None;
        }
        let (a, b) = (syms[l], syms[r]);
        let piece = &s[a.start..a.start + a.len + b.len];
        let id = match &self.pairs {
            Some(pairs) if a.id != NO_PIECE && b.id != NO_PIECE => pairs.get(a.id, b.id),
            _ => self.pieces.get(piece).copied(),
        }?;
        if self.kinds[id as usize] == Kind::Unused {
            rev.insert(piece, a.len);
        }
        Some((self.scores[id as usize], id))
    }

    /// Queues the merge of symbols `l` and `r` if it makes a piece.
    fn add_pair<'a>(
        &self,
        s: &'a [u8],
        heap: &mut BinaryHeap<Pair>,
        rev: &mut FxHashMap<&'a [u8], usize>,
        syms: &[Sym],
        l: usize,
        r: usize,
    ) {
        if let Some((score, id)) = self.pair(s, rev, syms, l, r) {
            heap.push(Pair {
                score,
                left: l,
                right: r,
                size: syms[l].len + syms[r].len,
                id,
            });
        }
    }

    fn resegment(
        &self,
        s: &[u8],
        start: usize,
        len: usize,
        rev: &FxHashMap<&[u8], usize>,
        out: &mut Vec<(usize, Rank)>,
    ) {
        // an explicit stack: halves, right pushed first
        let mut stack = vec![(start, len)];
        while let Some((st, n)) = stack.pop() {
            let piece = &s[st..st + n];
            let id = self.id_of(piece);
            if self.kinds[id as usize] == Kind::Unused {
                if let Some(&a) = rev.get(piece) {
                    // the halves as they were last recorded
                    stack.push((st + a, n - a));
                    stack.push((st, a));
                    continue;
                }
            }
            out.push((st + n, id));
        }
    }

    pub fn unk(&self) -> Rank {
        self.unk
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_by_score_leftmost_on_ties() {
        let pieces = [
            ("<unk>", 0.0, Kind::Reserved),
            ("a", -1.0, Kind::Normal),
            ("b", -1.0, Kind::Normal),
            ("ab", -2.0, Kind::Normal),
            ("ba", -2.0, Kind::Normal),
            ("abab", -3.0, Kind::Normal),
        ];
        let m = SpmBpe::new(&pieces, 0);
        let mut out = Vec::new();
        m.encode(b"ababx", &mut out);
        assert_eq!(out, vec![(4, 5), (5, 0)]);
        out.clear();
        m.encode(b"bab", &mut out);
        assert_eq!(out, vec![(2, 4), (3, 2)]);
    }

    #[test]
    fn unused_pieces_are_split_back() {
        let pieces = [
            ("<unk>", 0.0, Kind::Reserved),
            ("a", -1.0, Kind::Normal),
            ("b", -1.0, Kind::Normal),
            ("ab", -2.0, Kind::Unused),
        ];
        let m = SpmBpe::new(&pieces, 0);
        let mut out = Vec::new();
        m.encode(b"ab", &mut out);
        assert_eq!(out, vec![(1, 1), (2, 2)]);
    }

    /// An unused piece scored minus infinity is still merged, last, and what it makes can merge
    /// on (sentencepiece's queue takes any score); then it is split back if it is left.
    #[test]
    fn a_piece_scored_minus_infinity_still_merges() {
        let pieces = [
            ("<unk>", 0.0, Kind::Reserved),
            ("a", -1.0, Kind::Normal),
            ("b", -1.0, Kind::Normal),
            ("c", -1.0, Kind::Normal),
            ("ab", f32::NEG_INFINITY, Kind::Unused),
            ("abc", -2.0, Kind::Normal),
        ];
        let m = SpmBpe::new(&pieces, 0);
        let mut out = Vec::new();
        m.encode(b"abc", &mut out);
        assert_eq!(out, vec![(3, 5)]);
        out.clear();
        m.encode(b"ab", &mut out);
        assert_eq!(out, vec![(1, 1), (2, 2)]);
    }

    #[test]
    fn words_alone_give_the_ids_of_the_whole_text() {
        let pieces = [
            ("<unk>", 0.0, Kind::Reserved),
            ("\u{2581}", -1.0, Kind::Normal),
            ("a", -1.0, Kind::Normal),
            ("b", -1.0, Kind::Normal),
            ("\u{2581}a", -2.0, Kind::Normal),
            ("ab", -1.5, Kind::Normal),
            ("\u{2581}ab", -3.0, Kind::Normal),
        ];
        let m = SpmBpe::new(&pieces, 0);
        assert!(m.by_words);
        for text in [
            "\u{2581}ab\u{2581}ab",
            "ab\u{2581}\u{2581}abx\u{2581}",
            "",
            "\u{2581}",
        ] {
            for _ in 0..2 {
                let (mut whole, mut words) = (Vec::new(), Vec::new());
                m.encode_text(text.as_bytes(), &mut whole, None);
                m.encode(text.as_bytes(), &mut words);
                assert_eq!(whole, words, "{text:?}");
            }
        }
        // a piece with a `▁` inside: the whole text at once
        let mut inner = pieces.to_vec();
        inner.push(("a\u{2581}b", -0.5, Kind::Normal));
        assert!(!SpmBpe::new(&inner, 0).by_words);
    }

    #[test]
    fn pair_table_finds_what_a_map_finds() {
        let mut rng = Rng::new(5);
        for n in [0usize, 1, 7, 100, 3000] {
            let mut entries = Vec::new();
            let mut map = FxHashMap::default();
            while entries.len() < n {
                let (a, b) = (
                    (rng.next_u64() % 5000) as Rank,
                    (rng.next_u64() % 5000) as Rank,
                );
                let p = (rng.next_u64() % (ID_MASK - 1)) as Rank;
                if map.insert((a, b), p).is_none() {
                    entries.push((a, b, p));
                }
            }
            let table = PairTable::new(&entries).expect("ids fit");
            for a in 0..120 {
                for b in 0..120 {
                    assert_eq!(table.get(a, b), map.get(&(a, b)).copied(), "{n} ({a}, {b})");
                }
            }
            for &(a, b, p) in &entries {
                assert_eq!(table.get(a, b), Some(p));
            }
        }
        // an id that does not fit the packing: no table (the text is looked up instead)
        assert!(PairTable::new(&[(1, 2, ID_MASK as Rank)]).is_none());
        assert!(PairTable::new(&[(1, 2, ID_MASK as Rank - 1)]).is_some());
    }

    #[test]
    fn pieces_by_ids_are_the_pieces_by_text() {
        // Characters, their pairs and longer pieces (some unused, one user-defined, a `▁` inside
        // one so that texts encode whole), random scores with many ties; each text encoded with
        // the pair table and with the text lookups it replaces, and by the queue.
        let mut rng = Rng::new(11);
        let alphabet = ["a", "b", "c", "\u{e9}", "\u{2581}", "\u{65e5}"];
        let mut texts: Vec<String> = alphabet.iter().map(|c| c.to_string()).collect();
        for _ in 0..60 {
            let len = 2 + (rng.next_u64() % 4) as usize;
            let t: String = (0..len)
                .map(|_| alphabet[(rng.next_u64() % alphabet.len() as u64) as usize])
                .collect();
            if !texts.contains(&t) {
                texts.push(t);
            }
        }
        let mut pieces = vec![("<unk>", 0.0, Kind::Reserved)];
        for (i, t) in texts.iter().enumerate() {
            let kind = match i % 17 {
                16 => Kind::Unused,
                13 if t.len() > 3 => Kind::UserDefined,
                _ => Kind::Normal,
            };
            pieces.push((t.as_str(), -((rng.next_u64() % 50) as f32) / 7.0, kind));
        }
        let with = SpmBpe::new(&pieces, 0);
        assert!(with.pairs.is_some());
        let mut without = with.clone();
        without.pairs = None;
        let mut never = Rng::new(1);
        for _ in 0..2000 {
            // past `SCAN_SYMBOLS` characters too
            let len = (rng.next_u64() % 40) as usize;
            let text: String = (0..len)
                .map(|_| match rng.next_u64() % 9 {
                    0 => "x", // no piece
                    k => alphabet[(k % alphabet.len() as u64) as usize],
                })
                .collect();
            let (mut a, mut b, mut queued) = (Vec::new(), Vec::new(), Vec::new());
            with.encode_text(text.as_bytes(), &mut a, None);
            without.encode_text(text.as_bytes(), &mut b, None);
            assert_eq!(a, b, "{text:?}");
            // the queue's merges (a dropout that drops nothing takes it) are the scan's
            with.encode_text(text.as_bytes(), &mut queued, Some((0.0, &mut never)));
            assert_eq!(a, queued, "{text:?}");
        }
    }
}
