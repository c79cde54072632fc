//! Characters that start a piece's merges as one token ("atoms").
//!
//! A piece in a script written with multi-byte characters (CJK, Cyrillic, Greek, Arabic, ...)
//! spends most of its merges joining each character's bytes into the one token that is the
//! character: two of the three merges of a CJK character, before any merge between characters.
//! Where that is provably what the merges would do anyway, the character is formed first, from
//! a table, and the merges start from it.
//!
//! A character `c` of 2 or 3 bytes, at a place in a piece, is an atom of a model when:
//! 1. the merges of its bytes alone end in one token `T`;
//! 2. no token can hold a proper part of `c` together with the bytes next to it there: no
//!    token ends with a proper prefix of `c` after the byte that precedes `c` in the piece
//!    (say `' '` + the lead byte), and none starts with a proper suffix of `c` (continuation
//!    bytes) followed by the byte that follows `c`;
//! 3. the model is monotone (`long`): every merge has a higher priority than the merges that
//!    make its parts.
//!
//! Why that is exact: by (2) no pair straddles `c`'s edges while its bytes are not yet one
//! token, since a pair merges only into a token, and a token straddling the edge would hold the
//! neighbouring byte next to part of `c`; so `c`'s bytes merge among themselves exactly as they
//! would alone, and by (1) end in `T`. By (3) the priorities merged in a piece never decrease,
//! every merge inside `c` has a priority below `T`'s own, and every merge with `T` as a part one
//! above it: `T` is whole before any merge that uses it could be next. Forming `T` first
//! therefore only removes `c`'s inner merges from the sequence; the piece's other merges are
//! the same, in the same order.
//!
//! Condition (2), a character's clear edges, is kept for every character of the plane as two
//! sets of bytes: those that precede one of its proper prefixes at the end of some token, and
//! those that follow one of its proper suffixes at the start of some token (deduplicated). A
//! byte after `c` that is a continuation byte (text that is not UTF-8) counts as not clear.
//! Edges alone, with `pairs`, also say where a piece may be cut (`joined`,
//! `Encoder::encode_cut`). The table covers the Basic Multilingual Plane (U+0080 to U+FFFF),
//! 512 KiB a model (and 128 KiB of pairs), built the first time a piece with such a character
//! is merged or cut.

use rustc_hash::FxHashMap;

use super::{Bpe, Rank};

/// A 256-bit set of bytes.
type ByteSet = [u64; 4];

fn add(set: &mut ByteSet, b: u8) {
    set[(b >> 6) as usize] |= 1 << (b & 63);
}

fn has(set: &ByteSet, b: u8) -> bool {
    set[(b >> 6) as usize] >> (b & 63) & 1 != 0
}

#[derive(Debug, Clone, Copy)]
struct Atom {
    id: Rank,
    /// Indexes into `Atoms::sets` (0: the empty set).
    before: u16,
    after: u16,
}

/// The atoms of a model, by code point.
#[derive(Debug)]
pub(super) struct Atoms {
    table: Box<[Atom]>,
    sets: Vec<ByteSet>,
    /// A bit for every two characters of the plane side by side in some token, by a hash of
    /// the two (`pair_bit`; other pairs may share a bit, which only keeps a piece whole).
    pairs: Box<[u64]>,
}

/// Bits of `Atoms::pairs`: 2^20 (128 KiB), for about 25 k pairs in o200k.
const PAIR_BITS: u32 = 20;

fn pair_bit(a: u32, b: u32) -> usize {
    ((a as u64) << 16 | b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) as usize >> (64 - PAIR_BITS)
}

pub(super) const NONE: Rank = Rank::MAX;
/// The sets of a character whose edges are not known (more distinct sets than indexes).
const UNKNOWN: u16 = u16::MAX;
const PLANE: usize = 0x1_0000;

fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// Packs 1 to 3 bytes with their count, as the fragment maps' keys.
fn fragment(bytes: &[u8]) -> u32 {
    bytes
        .iter()
        .fold(bytes.len() as u32, |k, &b| k << 8 | b as u32)
}

impl Atoms {
    /// The atoms of `bpe` (none unless it is monotone), and every character's edges.
    pub(super) fn build(bpe: &Bpe) -> Option<Atoms> {
        // Condition (2)'s fragments: a proper prefix of a character at the end of a token, with
        // the byte before it there; a run of continuation bytes that starts a token, with the
        // byte after it.
        let mut before: FxHashMap<u32, ByteSet> = FxHashMap::default();
        let mut after: FxHashMap<u32, ByteSet> = FxHashMap::default();
        let mut pairs = vec![0u64; 1 << (PAIR_BITS - 6)].into_boxed_slice();
        // the token that is each character of the plane, from this one pass over the tokens
        // (a `lookup` a character went to a random place of the token table: two fifths of
        // the build, which the first piece with such a character waits for)
        let mut single = vec![NONE; PLANE].into_boxed_slice();
        for (id, &(off, len)) in bpe.spans.iter().enumerate() {
            if len == u32::MAX || len < 2 {
                continue;
            }
            let t = &bpe.arena[off as usize..(off + len) as usize];
            // an ASCII token holds no character of the plane and no part of one
            if t.is_ascii() {
                continue;
            }
            let short = (2..=3).contains(&t.len()).then_some(t);
            if let Some(c) = short.and_then(|t| std::str::from_utf8(t).ok()) {
                let mut chars = c.chars();
                if let (Some(c), None) = (chars.next(), chars.next()) {
                    if (0x80..PLANE as u32).contains(&(c as u32)) {
                        single[c as usize] = id as Rank;
                    }
                }
            }
            // Whole characters of the plane side by side in the token.
            let mut last: Option<u32> = None;
            for chunk in t.utf8_chunks() {
                for c in chunk.valid().chars() {
                    let cp = c as u32;
                    let here = (0x80..PLANE as u32).contains(&cp).then_some(cp);
                    if let (Some(a), Some(b)) = (last, here) {
                        let bit = pair_bit(a, b);
                        pairs[bit >> 6] |= 1 << (bit & 63);
                    }
                    last = here;
                }
                if !chunk.invalid().is_empty() {
                    last = None;
                }
            }
            let tail = t
                .iter()
                .rev()
                .take(3)
                .take_while(|&&b| is_continuation(b))
                .count();
            if tail + 1 < t.len() {
                let lead = t.len() - 1 - tail;
                let need = match t[lead] {
                    0xC0..=0xDF => 2,
                    0xE0..=0xEF => 3,
                    0xF0..=0xF7 => 4,
                    _ => 0,
                };
                if tail + 1 < need {
                    add(before.entry(fragment(&t[lead..])).or_default(), t[lead - 1]);
                }
            }
            let head = t
                .iter()
                .take(3)
                .take_while(|&&b| is_continuation(b))
                .count();
            if head > 0 && head < t.len() {
                add(after.entry(fragment(&t[..head])).or_default(), t[head]);
            }
        }
        let empty = Atom {
            id: NONE,
            before: UNKNOWN,
            after: UNKNOWN,
        };
        let mut table = vec![empty; PLANE].into_boxed_slice();
        let mut sets = vec![ByteSet::default()];
        let mut index: FxHashMap<ByteSet, u16> = FxHashMap::default();
        index.insert(ByteSet::default(), 0);
        let mut out = Vec::new();
        let mut buf = [0u8; 4];
        for cp in 0x80..PLANE as u32 {
            let Some(c) = char::from_u32(cp) else {
                continue; // surrogates
            };
            let bytes = c.encode_utf8(&mut buf).as_bytes();
            let k = bytes.len();
            let id = match Some(single[cp as usize]).filter(|&t| t != NONE) {
                Some(token) if bpe.monotone => {
                    out.clear();
                    bpe.encode_long_heap(bytes, &mut out);
                    if out[..] == [token] {
                        token
                    } else {
                        NONE
                    }
                }
                _ => NONE,
            };
            let mut set_of = |parts: &mut dyn Iterator<Item = &[u8]>,
                              map: &FxHashMap<u32, ByteSet>| {
                let mut set = ByteSet::default();
                for p in parts {
                    if let Some(s) = map.get(&fragment(p)) {
                        for (w, x) in set.iter_mut().zip(s) {
                            *w |= x;
                        }
                    }
                }
                let next = sets.len();
                match index.get(&set) {
                    Some(&i) => Some(i),
                    None if next < UNKNOWN as usize => {
                        index.insert(set, next as u16);
                        sets.push(set);
                        Some(next as u16)
                    }
                    None => None,
                }
            };
            let b = set_of(&mut (1..k).map(|p| &bytes[..p]), &before);
            let a = set_of(&mut (1..k).map(|s| &bytes[s..]), &after);
            if let (Some(before), Some(after)) = (b, a) {
                table[cp as usize] = Atom { id, before, after };
            }
        }
        Some(Atoms { table, sets, pairs })
    }

    /// Whether some token may hold the characters `a` and `b` side by side. Where none does,
    /// and both pass `edge_at` where they stand (so no token holds part of one next to the
    /// other), no token straddles the boundary between them: no merge ever joins across it,
    /// and the piece's ids are those of its two sides, each encoded alone. Neither needs to be
    /// an atom, nor the model monotone.
    #[inline(always)]
    pub(super) fn joined(&self, a: u32, b: u32) -> bool {
        let bit = pair_bit(a, b);
        self.pairs[bit >> 6] >> (bit & 63) & 1 != 0
    }

    /// The atom that starts at `piece[i]` (a lead byte) and its length in bytes, when there is
    /// one there.
    #[inline(always)]
    pub(super) fn at(&self, piece: &[u8], i: usize) -> Option<(Rank, usize)> {
        self.edge_at(piece, i)
            .filter(|&(id, _, _)| id != NONE)
            .map(|(id, k, _)| (id, k))
    }

    /// The character of two or three bytes that starts at `piece[i]`, as its token when it is
    /// an atom (else `NONE`), its length and its code point, when no token holds part of it
    /// next to the bytes beside it there (condition 2 of the module's notes).
    #[inline(always)]
    pub(super) fn edge_at(&self, piece: &[u8], i: usize) -> Option<(Rank, usize, u32)> {
        let b = piece[i];
        let (cp, k) = match b {
            0xC2..=0xDF if i + 1 < piece.len() => {
                let c1 = piece[i + 1];
                if !is_continuation(c1) {
                    return None;
                }
                (((b & 0x1F) as u32) << 6 | (c1 & 0x3F) as u32, 2)
            }
            0xE0..=0xEF if i + 2 < piece.len() => {
                let (c1, c2) = (piece[i + 1], piece[i + 2]);
                if !is_continuation(c1) || !is_continuation(c2) {
                    return None;
                }
                let cp = ((b & 0x0F) as u32) << 12 | ((c1 & 0x3F) as u32) << 6 | (c2 & 0x3F) as u32;
                // Overlong forms and surrogates are not characters.
                if cp < 0x800 || (0xD800..0xE000).contains(&cp) {
                    return None;
                }
                (cp, 3)
            }
            _ => return None,
        };
        let a = self.table[cp as usize];
        if a.before == UNKNOWN {
            return None;
        }
        if i > 0 && has(&self.sets[a.before as usize], piece[i - 1]) {
            return None;
        }
        if let Some(&n) = piece.get(i + k) {
            if is_continuation(n) || has(&self.sets[a.after as usize], n) {
                return None;
            }
        }
        Some((a.id, k, cp))
    }

    /// The token each character of the plane is an atom as, where its edges are known (`None`
    /// where they are not: too many distinct edge sets); `NONE` for a character that is none.
    #[cfg(test)]
    pub(super) fn ids(&self) -> Vec<Option<Rank>> {
        self.table
            .iter()
            .map(|a| (a.before != UNKNOWN).then_some(a.id))
            .collect()
    }

    /// How many characters are atoms somewhere, and how many everywhere (for tests and notes).
    #[cfg(test)]
    pub(super) fn count(&self) -> (usize, usize) {
        let atoms = self.table.iter().filter(|a| a.id != NONE);
        let anywhere = atoms.clone().count();
        (
            anywhere,
            atoms.filter(|a| a.before == 0 && a.after == 0).count(),
        )
    }
}
