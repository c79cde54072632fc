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
}

const SPACE: &[u8] = "\u{2581}".as_bytes();

#[derive(Clone, Copy)]
struct Sym {
    start: usize,
    len: usize,
    prev: usize,
    next: usize,
    freeze: bool,
}

const END: usize = usize::MAX;

#[derive(PartialEq)]
struct Pair {
    score: f32,
    left: usize,
    right: usize,
    size: usize,
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

impl SpmBpe {
    /// `pieces`: (text, score, kind) by id; `unk`: the id of the unknown piece.
    pub fn new(pieces: &[(&str, f32, Kind)], unk: Rank) -> SpmBpe {
        let mut map = FxHashMap::with_capacity_and_hasher(pieces.len(), Default::default());
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
        SpmBpe {
            by_words,
            id: NEXT_MODEL.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
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
            WordPieces::Cached { ids, ends } => out.extend(
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
                if let Some(at) = cache.find(word, hash) {
                    let p = cache.payload(at);
                    let (ids, ends) = p.split_at(p.len() / 2);
                    f(start, WordPieces::Cached { ids, ends });
                } else {
                    pieces.clear();
                    self.encode_text(word, &mut pieces, None);
                    if word.len() <= CACHE_WORD_BYTES {
                        payload.clear();
                        payload.extend(pieces.iter().map(|p| p.1));
                        payload.extend(pieces.iter().map(|p| p.0 as u32));
                        cache.insert(word, hash, &payload);
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
        let mut syms: Vec<Sym> = Vec::new();
        let mut at = 0;
        while at < s.len() {
            let (len, freeze) = match self.user.longest(&s[at..]) {
                Some(n) => (n, true),
                None => (char_len(s[at]).min(s.len() - at), false),
            };
            let i = syms.len();
            syms.push(Sym {
                start: at,
                len,
                prev: if i == 0 { END } else { i - 1 },
                next: if at + len == s.len() { END } else { i + 1 },
                freeze,
            });
            at += len;
        }
        let mut heap = BinaryHeap::new();
        // unused pieces, and the length of the left half they were last made of
        let mut rev: FxHashMap<&[u8], usize> = FxHashMap::default();
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
            syms[l].next = syms[r].next;
            if syms[r].next != END {
                let n = syms[r].next;
                syms[n].prev = l;
            }
            syms[r].len = 0;
            self.add_pair(s, &mut heap, &mut rev, &syms, syms[l].prev, l);
            self.add_pair(s, &mut heap, &mut rev, &syms, l, syms[l].next);
        }
        let mut i = 0;
        while i != END {
            let sym = syms[i];
            self.resegment(s, sym.start, sym.len, &rev, out);
            i = sym.next;
        }
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
        if l == END || r == END || syms[l].freeze || syms[r].freeze {
            return;
        }
        let (a, b) = (syms[l], syms[r]);
        let piece = &s[a.start..a.start + a.len + b.len];
        let Some(&id) = self.pieces.get(piece) else {
            return;
        };
        heap.push(Pair {
            score: self.scores[id as usize],
            left: l,
            right: r,
            size: piece.len(),
        });
        if self.kinds[id as usize] == Kind::Unused {
            rev.insert(piece, a.len);
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
}
