//! BPE encoding of pieces.
//!
//! A `Bpe` knows, for every mergeable pair of token ids, the merge's priority and the id it
//! produces. Trained and Hugging Face tokenizers list their merges (priority = position in the
//! list); tiktoken rank files list tokens (a pair is mergeable when its concatenated bytes are a
//! token, priority = that token's rank), which `from_ranks` turns into the same pair table.
//!
//! Encoding a piece: a piece that is itself a token is emitted at once (most pieces of real text
//! are); otherwise the lowest-priority pair is merged, leftmost on ties, until none is left.
//! Short pieces use a plain scan over a small array (fast, quadratic); long ones a min-heap over
//! a linked list, O(n log n), so a megabyte of one repeated character stays linear-ish.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use std::sync::{Arc, Mutex};

use aho_corasick::{AhoCorasick, MatchKind};
use rustc_hash::FxHashMap;

use crate::error::{Error, Result};
use crate::count::{cut_before, SpecialSplitter};
use crate::pretok::Pretokenizer;

pub use crate::Rank;

/// Pieces of at least this many bytes take the heap path.
const LONG_PIECE: usize = 128;

#[inline]
fn key(a: Rank, b: Rank) -> u64 {
    ((a as u64) << 32) | b as u64
}

#[derive(Debug, Clone, Copy)]
struct Merge {
    priority: u32,
    result: Rank,
}

#[derive(Debug)]
pub struct Bpe {
    /// bytes -> id, for whole-piece lookups.
    encoder: FxHashMap<Box<[u8]>, Rank>,
    /// id -> (offset, len) into `arena`; `len == u32::MAX` marks an unused id.
    spans: Vec<(u32, u32)>,
    arena: Vec<u8>,
    byte_ids: [Rank; 256],
    merges: FxHashMap<u64, Merge>,
    /// Ids a piece may be encoded to by whole-piece lookup: every token for rank models; for
    /// merge lists, only tokens whose bytes the merges themselves turn into that one token
    /// (always all of them for a trained tokenizer, not always for a hand-made merge list).
    direct: Vec<bool>,
}

impl Bpe {
    fn with_vocab(vocab: Vec<(Rank, Vec<u8>)>) -> Result<Self> {
        let mut encoder: FxHashMap<Box<[u8]>, Rank> = FxHashMap::default();
        encoder.reserve(vocab.len());
        let max_id = vocab.iter().map(|(id, _)| *id).max().unwrap_or(0);
        // Ids index flat tables: refuse vocabularies so sparse that those would be huge.
        if max_id as usize > 2 * vocab.len() + (1 << 20) {
            return Err(Error::Vocab(format!(
                "token ids are too sparse: the largest is {max_id} for {} tokens",
                vocab.len()
            )));
        }
        let mut spans = vec![(0u32, u32::MAX); max_id as usize + 1];
        let mut arena = Vec::with_capacity(vocab.iter().map(|(_, b)| b.len()).sum());
        let mut byte_ids = [Rank::MAX; 256];
        for (id, bytes) in vocab {
            if bytes.is_empty() {
                return Err(Error::Vocab(format!("token {id} has no bytes")));
            }
            if spans[id as usize].1 != u32::MAX {
                return Err(Error::Vocab(format!("token id {id} appears twice in the vocabulary")));
            }
            spans[id as usize] = (arena.len() as u32, bytes.len() as u32);
            arena.extend_from_slice(&bytes);
            if bytes.len() == 1 {
                byte_ids[bytes[0] as usize] = id;
            }
            if let Some(other) = encoder.insert(bytes.clone().into_boxed_slice(), id) {
                return Err(Error::Vocab(format!(
                    "tokens {other} and {id} have the same bytes {:?}",
                    String::from_utf8_lossy(&bytes)
                )));
            }
        }
        if let Some(b) = byte_ids.iter().position(|&id| id == Rank::MAX) {
            return Err(Error::Vocab(format!(
                "the vocabulary has no token for the single byte 0x{b:02x}; a byte-level BPE needs all 256"
            )));
        }
        let direct = vec![true; spans.len()];
        Ok(Bpe { encoder, spans, arena, byte_ids, merges: FxHashMap::default(), direct })
    }

    /// A vocabulary (id, bytes) and merges as (left id, right id) in priority order. Each merge
    /// produces the token whose bytes are the concatenation.
    pub fn from_merges(vocab: Vec<(Rank, Vec<u8>)>, merges: &[(Rank, Rank)]) -> Result<Self> {
        let mut bpe = Self::with_vocab(vocab)?;
        bpe.merges.reserve(merges.len());
        let mut joined = Vec::new();
        for (i, &(a, b)) in merges.iter().enumerate() {
            joined.clear();
            for id in [a, b] {
                let bytes = bpe.token_bytes(id).map_err(|_| {
                    Error::Vocab(format!("merge {i} names token id {id}, which is not in the vocabulary"))
                })?;
                joined.extend_from_slice(bytes);
            }
            let Some(&result) = bpe.encoder.get(joined.as_slice()) else {
                return Err(Error::Vocab(format!(
                    "merge {i} ({a}, {b}) makes {:?}, which is not in the vocabulary",
                    String::from_utf8_lossy(&joined)
                )));
            };
            bpe.merges.entry(key(a, b)).or_insert(Merge { priority: i as u32, result });
        }
        // A token is emitted by whole-piece lookup only if the merges would produce it anyway.
        let mut direct = vec![false; bpe.spans.len()];
        let mut out = Vec::new();
        for (bytes, &id) in &bpe.encoder {
            out.clear();
            bpe.encode_by_merges(bytes, &mut out);
            direct[id as usize] = out.len() == 1 && out[0] == id;
        }
        bpe.direct = direct;
        Ok(bpe)
    }

    /// tiktoken's model: the ranks are the ids and a pair merges into the token its bytes make.
    pub fn from_ranks(ranks: Vec<(Rank, Vec<u8>)>) -> Result<Self> {
        let mut bpe = Self::with_vocab(ranks)?;
        let mut merges = FxHashMap::default();
        for (bytes, &id) in &bpe.encoder {
            for split in 1..bytes.len() {
                if let (Some(&l), Some(&r)) =
                    (bpe.encoder.get(&bytes[..split]), bpe.encoder.get(&bytes[split..]))
                {
                    merges.insert(key(l, r), Merge { priority: id, result: id });
                }
            }
        }
        bpe.merges = merges;
        Ok(bpe)
    }

    pub fn token_bytes(&self, id: Rank) -> Result<&[u8]> {
        match self.spans.get(id as usize) {
            Some(&(off, len)) if len != u32::MAX => {
                Ok(&self.arena[off as usize..off as usize + len as usize])
            }
            _ => Err(Error::UnknownId(id as u64)),
        }
    }

    pub fn lookup(&self, bytes: &[u8]) -> Option<Rank> {
        self.encoder.get(bytes).copied()
    }

    pub fn len(&self) -> usize {
        self.encoder.len()
    }

    pub fn is_empty(&self) -> bool {
        self.encoder.is_empty()
    }

    /// One past the largest id.
    pub fn id_bound(&self) -> usize {
        self.spans.len()
    }

    #[inline]
    fn merge_of(&self, a: Rank, b: Rank) -> Option<Merge> {
        self.merges.get(&key(a, b)).copied()
    }

    /// Appends the ids of one piece to `out`.
    pub fn encode_piece(&self, piece: &[u8], out: &mut Vec<Rank>) {
        if let Some(&id) = self.encoder.get(piece) {
            if self.direct[id as usize] {
                out.push(id);
                return;
            }
        }
        self.encode_by_merges(piece, out)
    }

    /// Encodes by merges alone, without the whole-piece lookup.
    fn encode_by_merges(&self, piece: &[u8], out: &mut Vec<Rank>) {
        if piece.len() < 2 {
            out.extend(piece.iter().map(|&b| self.byte_ids[b as usize]));
        } else if piece.len() < LONG_PIECE {
            self.encode_short(piece, out)
        } else {
            self.encode_long(piece, out)
        }
    }

    fn encode_short(&self, piece: &[u8], out: &mut Vec<Rank>) {
        let start = out.len();
        out.extend(piece.iter().map(|&b| self.byte_ids[b as usize]));
        let ids = out;
        // prio[i]: priority of merging ids[start+i] with ids[start+i+1].
        let mut prio: Vec<u32> = (start..ids.len() - 1)
            .map(|i| self.merge_of(ids[i], ids[i + 1]).map_or(u32::MAX, |m| m.priority))
            .collect();
        while let Some((i, &p)) = prio.iter().enumerate().min_by_key(|&(i, &p)| (p, i)) {
            if p == u32::MAX {
                break;
            }
            let at = start + i;
            let m = self.merge_of(ids[at], ids[at + 1]).expect("priority came from this pair");
            ids[at] = m.result;
            ids.remove(at + 1);
            prio.remove(i);
            if i < prio.len() {
                prio[i] = self.merge_of(ids[at], ids[at + 1]).map_or(u32::MAX, |m| m.priority);
            }
            if i > 0 {
                prio[i - 1] = self.merge_of(ids[at - 1], ids[at]).map_or(u32::MAX, |m| m.priority);
            }
        }
    }

    fn encode_long(&self, piece: &[u8], out: &mut Vec<Rank>) {
        let n = piece.len();
        let mut tok: Vec<Rank> = piece.iter().map(|&b| self.byte_ids[b as usize]).collect();
        let mut next: Vec<usize> = (1..=n).collect(); // n = none
        let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect(); // usize::MAX = none
        let mut alive = vec![true; n];
        let mut heap: BinaryHeap<Reverse<(u32, usize)>> = BinaryHeap::new();
        for i in 0..n - 1 {
            if let Some(m) = self.merge_of(tok[i], tok[i + 1]) {
                heap.push(Reverse((m.priority, i)));
            }
        }
        while let Some(Reverse((p, i))) = heap.pop() {
            if !alive[i] || next[i] >= n {
                continue;
            }
            let j = next[i];
            let Some(m) = self.merge_of(tok[i], tok[j]) else { continue };
            if m.priority != p {
                continue;
            }
            tok[i] = m.result;
            alive[j] = false;
            next[i] = next[j];
            if next[j] < n {
                prev[next[j]] = i;
            }
            if next[i] < n {
                if let Some(m) = self.merge_of(tok[i], tok[next[i]]) {
                    heap.push(Reverse((m.priority, i)));
                }
            }
            let pi = prev[i];
            if pi != usize::MAX {
                if let Some(m) = self.merge_of(tok[pi], tok[i]) {
                    heap.push(Reverse((m.priority, pi)));
                }
            }
        }
        let mut i = 0;
        while i < n {
            out.push(tok[i]);
            i = next[i];
        }
    }

    /// Appends the bytes of `ids` to `out`.
    pub fn decode_into(&self, ids: &[Rank], out: &mut Vec<u8>) -> Result<()> {
        for &id in ids {
            out.extend_from_slice(self.token_bytes(id)?);
        }
        Ok(())
    }
}

/// Text-level encoding: special tokens, pre-tokenization, then BPE per piece.
pub struct Encoder {
    pub bpe: Bpe,
    pretok: Pretokenizer,
    /// Special tokens as (text, id), in the order given.
    specials: Vec<(String, Rank)>,
    special_by_id: FxHashMap<Rank, usize>,
    all_specials: SpecialSplitter,
    /// Leftmost-longest matchers for subsets of the special tokens, keyed by sorted ids.
    matchers: Mutex<FxHashMap<Vec<Rank>, Arc<AhoCorasick>>>,
}

impl Encoder {
    pub fn new(bpe: Bpe, pretok: Pretokenizer, specials: Vec<(String, Rank)>) -> Result<Self> {
        let mut special_by_id = FxHashMap::default();
        let mut seen_text = FxHashMap::default();
        for (i, (text, id)) in specials.iter().enumerate() {
            if text.is_empty() {
                return Err(Error::Vocab("a special token is the empty string".into()));
            }
            if let Some(prev) = seen_text.insert(text.as_str(), *id) {
                return Err(Error::Vocab(format!(
                    "special token {text:?} is given twice (ids {prev} and {id})"
                )));
            }
            if let Some(j) = special_by_id.insert(*id, i) {
                return Err(Error::Vocab(format!(
                    "special tokens {:?} and {text:?} share the id {id}",
                    specials[j].0
                )));
            }
            if let Ok(bytes) = bpe.token_bytes(*id) {
                if bytes != text.as_bytes() {
                    return Err(Error::Vocab(format!(
                        "special token {text:?} has id {id}, which the vocabulary already uses for {:?}",
                        String::from_utf8_lossy(bytes)
                    )));
                }
            }
        }
        let texts: Vec<String> = specials.iter().map(|(t, _)| t.clone()).collect();
        let all_specials = SpecialSplitter::new(&texts)?;
        Ok(Encoder { bpe, pretok, specials, special_by_id, all_specials, matchers: Mutex::default() })
    }

    pub fn pretokenizer(&self) -> &Pretokenizer {
        &self.pretok
    }

    /// Bytes of a token, special tokens included.
    pub fn token_bytes(&self, id: Rank) -> Result<&[u8]> {
        match self.bpe.token_bytes(id) {
            Ok(b) => Ok(b),
            Err(e) => match self.special_by_id.get(&id) {
                Some(&i) => Ok(self.specials[i].0.as_bytes()),
                None => Err(e),
            },
        }
    }

    fn matcher(&self, ids: &[Rank]) -> Result<Option<Arc<AhoCorasick>>> {
        if ids.is_empty() {
            return Ok(None);
        }
        let mut sorted = ids.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let mut cache = self.matchers.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = cache.get(&sorted) {
            return Ok(Some(m.clone()));
        }
        let mut texts = Vec::with_capacity(sorted.len());
        for id in &sorted {
            match self.special_by_id.get(id) {
                Some(&i) => texts.push(self.specials[i].0.as_str()),
                None => return Err(Error::Invalid(format!("{id} is not a special token id"))),
            }
        }
        let m = Arc::new(
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(&texts)
                .map_err(|e| Error::Invalid(format!("special tokens: {e}")))?,
        );
        if cache.len() > 64 {
            cache.clear();
        }
        cache.insert(sorted, m.clone());
        Ok(Some(m))
    }

    /// The first occurrence (leftmost, then longest) of one of the special tokens `among`:
    /// (byte offset, id).
    pub fn find_special(&self, text: &str, among: &[Rank]) -> Result<Option<(usize, Rank)>> {
        let Some(m) = self.matcher(among)? else { return Ok(None) };
        Ok(m.find(text).map(|hit| {
            let t = &text[hit.start()..hit.end()];
            let id = self.specials.iter().find(|(s, _)| s == t).map(|(_, id)| *id).unwrap_or(0);
            (hit.start(), id)
        }))
    }

    /// The length of the longest prefix of `text` that can be encoded on its own and give the
    /// same ids as it does as part of `text` followed by anything (0 if none is known).
    pub fn safe_prefix(&self, text: &str) -> usize {
        let margin = self.all_specials.max_len();
        let limit = text.len().saturating_sub(margin + 1);
        cut_before(&self.pretok, &self.all_specials, text.as_bytes(), 0, limit).unwrap_or(0)
    }

    /// Encodes text with no special tokens.
    pub fn encode_ordinary_into(&self, text: &str, out: &mut Vec<Rank>) -> Result<()> {
        self.pretok.for_each_piece(text, |piece| self.bpe.encode_piece(piece.as_bytes(), out))
    }

    /// Encodes text in which the special tokens `allowed` become their ids.
    pub fn encode_into(&self, text: &str, allowed: &[Rank], out: &mut Vec<Rank>) -> Result<()> {
        let Some(m) = self.matcher(allowed)? else {
            return self.encode_ordinary_into(text, out);
        };
        let mut start = 0;
        for hit in m.find_iter(text) {
            self.encode_ordinary_into(&text[start..hit.start()], out)?;
            let t = &text[hit.start()..hit.end()];
            let id = self.specials.iter().find(|(s, _)| s == t).map(|(_, id)| *id);
            out.push(id.expect("matcher built from these specials"));
            start = hit.end();
        }
        self.encode_ordinary_into(&text[start..], out)
    }

    pub fn decode_into(&self, ids: &[Rank], out: &mut Vec<u8>) -> Result<()> {
        for &id in ids {
            out.extend_from_slice(self.token_bytes(id)?);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn byte_vocab() -> Vec<(Rank, Vec<u8>)> {
        (0..=255u8).map(|b| (b as Rank, vec![b])).collect()
    }

    /// Merges (a, b) -> "ab" 256, (a, a) -> "aa" 257, (aa, b) -> "aab" 258.
    fn small() -> Bpe {
        let mut v = byte_vocab();
        v.push((256, b"ab".to_vec()));
        v.push((257, b"aa".to_vec()));
        v.push((258, b"aab".to_vec()));
        Bpe::from_merges(v, &[(97, 98), (97, 97), (257, 98)]).unwrap()
    }

    fn enc(bpe: &Bpe, s: &[u8]) -> Vec<Rank> {
        let mut out = Vec::new();
        bpe.encode_piece(s, &mut out);
        out
    }

    #[test]
    fn priority_then_leftmost() {
        let bpe = small();
        // "aab": (a,b) has priority 0 and wins over (a,a): a + ab. "aab" (258) is a token, but
        // these merges never make it, so it is not emitted by whole-piece lookup either.
        assert_eq!(enc(&bpe, b"aab"), vec![97, 256]);
        assert_eq!(enc(&bpe, b"aaab"), vec![257, 256]);
        assert_eq!(enc(&bpe, b"aaaa"), vec![257, 257]);
        assert_eq!(enc(&bpe, b"xaaa"), vec![120, 257, 97]);
    }

    #[test]
    fn long_path_matches_short_path() {
        let bpe = small();
        let mut seed: u64 = 12345;
        for _ in 0..200 {
            let n = 1 + (seed % 300) as usize;
            let piece: Vec<u8> = (0..n)
                .map(|_| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    [b'a', b'b', b'x'][(seed >> 33) as usize % 3]
                })
                .collect();
            let mut short = Vec::new();
            bpe.encode_short(&piece, &mut short);
            let mut long = Vec::new();
            bpe.encode_long(&piece, &mut long);
            assert_eq!(short, long);
        }
    }

    #[test]
    fn tokens_the_merges_cannot_make_are_not_emitted_whole() {
        // "abc" is in the vocabulary via (ab, c), but (b, c) comes first, so "abc" never forms.
        let mut v = byte_vocab();
        v.push((256, b"bc".to_vec()));
        v.push((257, b"ab".to_vec()));
        v.push((258, b"abc".to_vec()));
        let bpe = Bpe::from_merges(v, &[(98, 99), (97, 98), (257, 99)]).unwrap();
        assert_eq!(enc(&bpe, b"abc"), vec![97, 256]);
        assert_eq!(enc(&bpe, b"ab"), vec![257]);
    }

    #[test]
    fn bad_vocabularies_are_errors() {
        let mut v = byte_vocab();
        v.pop();
        assert!(Bpe::from_merges(v, &[]).is_err());
        assert!(Bpe::from_merges(byte_vocab(), &[(97, 98)]).is_err());
        assert!(Bpe::from_merges(byte_vocab(), &[(97, 999)]).is_err());
    }

    #[test]
    fn ranks_merge_by_result_rank() {
        let mut v = byte_vocab();
        v.push((300, b"ab".to_vec()));
        v.push((301, b"bc".to_vec()));
        v.push((302, b"abc".to_vec()));
        let bpe = Bpe::from_ranks(v).unwrap();
        assert_eq!(enc(&bpe, b"abcab"), vec![302, 300]);
        assert_eq!(enc(&bpe, b"bcab"), vec![301, 300]);
    }
}
