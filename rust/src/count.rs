//! Counting distinct pieces over a corpus, in parallel and streaming.
//!
//! Every rayon worker counts into its own shard (indexed by `rayon::current_thread_index`), so
//! workers never contend; the shards are merged once, when counting ends. A piece is copied into
//! a shard only the first time that shard sees it: memory follows the number of distinct pieces,
//! never the corpus size. Large texts are cut into units only at independent cuts (see
//! `pretok::is_independent_cut`) that no special token straddles, so the counts do not depend on
//! where the units were cut nor on the number of threads.

use std::fs::File;
use std::io::Read;
use std::sync::Mutex;

use aho_corasick::{AhoCorasick, MatchKind};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::error::{Error, Result};
use crate::pretok::{is_independent_cut, Pretokenizer};

pub type PieceMap = FxHashMap<Box<[u8]>, u64>;

/// Texts longer than this are cut into units for the workers.
pub const UNIT_BYTES: usize = 1 << 20;
/// Files are read in blocks of this size.
pub const BLOCK_BYTES: usize = 16 << 20;

/// Splits text at special tokens, leftmost-longest, and hands out the stretches between them.
#[derive(Debug, Clone)]
pub struct SpecialSplitter {
    specials: Vec<String>,
    automaton: Option<AhoCorasick>,
}

impl SpecialSplitter {
    pub fn new(specials: &[String]) -> Result<Self> {
        if let Some(bad) = specials.iter().find(|s| s.is_empty()) {
            return Err(Error::Invalid(format!("special token {bad:?} is empty")));
        }
        let automaton = if specials.is_empty() {
            None
        } else {
            Some(
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(specials)
                    .map_err(|e| Error::Invalid(format!("special tokens: {e}")))?,
            )
        };
        Ok(SpecialSplitter { specials: specials.to_vec(), automaton })
    }

    /// Calls `f` on each stretch of `text` between special tokens (skipping empty ones).
    pub fn for_each_stretch<'t, E>(
        &self,
        text: &'t str,
        mut f: impl FnMut(&'t str) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        let Some(ac) = &self.automaton else {
            return if text.is_empty() { Ok(()) } else { f(text) };
        };
        let mut start = 0;
        for m in ac.find_iter(text) {
            if m.start() > start {
                f(&text[start..m.start()])?;
            }
            start = m.end();
        }
        if start < text.len() {
            f(&text[start..])?;
        }
        Ok(())
    }

    /// True when some occurrence of a special token contains both `text[cut-1]` and `text[cut]`.
    pub fn straddles(&self, text: &[u8], cut: usize) -> bool {
        self.specials.iter().any(|s| {
            let n = s.len();
            if n < 2 {
                return false;
            }
            let lo = cut.saturating_sub(n - 1);
            let hi = (cut + n - 1).min(text.len());
            memchr::memmem::find_iter(&text[lo..hi], s.as_bytes())
                .any(|at| lo + at < cut && lo + at + n > cut)
        })
    }

    pub fn max_len(&self) -> usize {
        self.specials.iter().map(String::len).max().unwrap_or(0)
    }
}

/// The last cut in `text[min..near]` that changes no piece and splits no special token; `None`
/// if there is none (always `None` for custom patterns and for no pattern).
pub fn cut_before(
    pretok: &Pretokenizer,
    specials: &SpecialSplitter,
    text: &[u8],
    min: usize,
    near: usize,
) -> Option<usize> {
    if !pretok.can_cut() {
        return None;
    }
    let mut end = near.min(text.len());
    while end > min {
        let nl = memchr::memrchr(b'\n', &text[min..end])? + min;
        let cut = nl + 1;
        if is_independent_cut(text, cut) && !specials.straddles(text, cut) {
            return Some(cut);
        }
        end = nl;
    }
    None
}

/// Statistics of what was counted.
#[derive(Debug, Default, Clone, Copy)]
pub struct CountStats {
    pub bytes: u64,
    pub documents: u64,
    pub replaced: u64,
    /// Words: runs of bytes between ASCII whitespace (and special tokens).
    pub words: u64,
}

/// Number of runs of non-whitespace bytes (ASCII whitespace separates).
fn count_words(text: &[u8]) -> u64 {
    let mut words = 0u64;
    let mut in_word = false;
    for &b in text {
        let ws = matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c');
        words += (!ws && !in_word) as u64;
        in_word = !ws;
    }
    words
}

pub struct PieceCounter {
    pretok: Pretokenizer,
    specials: SpecialSplitter,
    shards: Vec<Mutex<(PieceMap, u64)>>,
    unit_bytes: usize,
    block_bytes: usize,
    pub stats: CountStats,
}

impl PieceCounter {
    pub fn new(pretok: Pretokenizer, specials: SpecialSplitter) -> Self {
        Self::with_sizes(pretok, specials, UNIT_BYTES, BLOCK_BYTES)
    }

    /// Smaller units and blocks than the defaults exercise the cutting logic in tests.
    pub fn with_sizes(
        pretok: Pretokenizer,
        specials: SpecialSplitter,
        unit_bytes: usize,
        block_bytes: usize,
    ) -> Self {
        let shards = (0..rayon::current_num_threads().max(1)).map(|_| Mutex::default()).collect();
        PieceCounter {
            pretok,
            specials,
            shards,
            unit_bytes: unit_bytes.max(1),
            block_bytes: block_bytes.max(1),
            stats: CountStats::default(),
        }
    }

    fn count_unit(&self, unit: &str) -> Result<()> {
        let shard = rayon::current_thread_index().unwrap_or(0) % self.shards.len();
        let mut guard = self.shards[shard].lock().unwrap_or_else(|e| e.into_inner());
        let (map, words) = &mut *guard;
        self.specials.for_each_stretch(unit, |stretch| {
            *words += count_words(stretch.as_bytes());
            self.pretok.for_each_piece(stretch, |piece| {
                let key = piece.as_bytes();
                match map.get_mut(key) {
                    Some(c) => *c += 1,
                    None => {
                        map.insert(key.into(), 1);
                    }
                }
            })
        })
    }

    /// Words counted so far (see `CountStats::words`).
    pub fn words(&self) -> u64 {
        self.shards
            .iter()
            .map(|m| m.lock().unwrap_or_else(|e| e.into_inner()).1)
            .sum()
    }

    fn cut_before(&self, text: &[u8], min: usize, near: usize) -> Option<usize> {
        cut_before(&self.pretok, &self.specials, text, min, near)
    }

    /// Cuts `text` into units of about `UNIT_BYTES` for the workers.
    fn units<'t>(&self, text: &'t str) -> Vec<&'t str> {
        let bytes = text.as_bytes();
        let unit = self.unit_bytes;
        let mut units = Vec::with_capacity(text.len() / unit + 1);
        let mut start = 0;
        while text.len() - start > unit + unit / 2 {
            match self.cut_before(bytes, start, start + unit) {
                Some(cut) => {
                    units.push(&text[start..cut]);
                    start = cut;
                }
                None => break,
            }
        }
        units.push(&text[start..]);
        units
    }

    /// Counts the pieces of each document (documents are independent: no piece spans two).
    pub fn add_texts(&mut self, texts: &[&str]) -> Result<()> {
        let units: Vec<&str> = texts.iter().flat_map(|t| self.units(t)).collect();
        units.par_iter().try_for_each(|u| self.count_unit(u))?;
        self.stats.documents += texts.len() as u64;
        self.stats.bytes += texts.iter().map(|t| t.len() as u64).sum::<u64>();
        Ok(())
    }

    /// Streams a file in blocks, cutting only where `add_texts` would give the same counts.
    /// `progress` gets the number of bytes read so far and may stop the work by returning an error.
    pub fn add_file(
        &mut self,
        path: &str,
        replace_errors: bool,
        progress: &mut dyn FnMut(u64) -> Result<()>,
    ) -> Result<()> {
        let io = |error| Error::Io { source: path.to_owned(), error };
        let mut file = File::open(path).map_err(io)?;
        let mut buf: Vec<u8> = Vec::with_capacity(self.block_bytes);
        let mut consumed: u64 = 0; // file offset of buf[0]
        let mut eof = false;
        while !eof || !buf.is_empty() {
            if !eof {
                let old = buf.len();
                buf.resize(old + self.block_bytes, 0);
                let mut filled = old;
                while filled < buf.len() {
                    let n = file.read(&mut buf[filled..]).map_err(io)?;
                    if n == 0 {
                        eof = true;
                        break;
                    }
                    filled += n;
                }
                buf.truncate(filled);
            }
            let cut = self.add_block(&buf, eof, path, consumed, replace_errors)?;
            consumed += cut as u64;
            buf.drain(..cut);
            if cut > 0 {
                progress(consumed)?;
            }
        }
        self.stats.documents += 1;
        Ok(())
    }

    /// Counts the longest prefix of `buf` that ends where the text may be cut (all of it when
    /// `last`) and returns its length; the caller keeps the rest and appends more to it. `buf` is
    /// UTF-8 text of the stream `source`, starting at byte `offset` of that stream (for errors).
    /// Blocks do not count as documents: the caller counts the stream as one.
    pub fn add_block(
        &mut self,
        buf: &[u8],
        last: bool,
        source: &str,
        offset: u64,
        replace_errors: bool,
    ) -> Result<usize> {
        let cut = if last {
            buf.len()
        } else {
            let limit = buf.len().saturating_sub(self.specials.max_len() + 1);
            match self.cut_before(buf, 0, limit) {
                Some(c) => c,
                None => return Ok(0), // no safe place yet: read more
            }
        };
        if cut > 0 {
            let text = self.decode(&buf[..cut], source, offset, replace_errors)?;
            self.add_texts(&[&text])?;
            self.stats.documents -= 1; // a block is not a document
        }
        Ok(cut)
    }

    fn decode<'b>(
        &mut self,
        bytes: &'b [u8],
        path: &str,
        offset: u64,
        replace_errors: bool,
    ) -> Result<std::borrow::Cow<'b, str>> {
        match std::str::from_utf8(bytes) {
            Ok(s) => Ok(s.into()),
            Err(e) if !replace_errors => {
                Err(Error::Utf8 { source: path.to_owned(), offset: offset + e.valid_up_to() as u64 })
            }
            Err(_) => {
                self.stats.replaced +=
                    bytes.utf8_chunks().filter(|c| !c.invalid().is_empty()).count() as u64;
                Ok(String::from_utf8_lossy(bytes))
            }
        }
    }

    /// Merges the workers' shards into one map of distinct pieces and their counts.
    pub fn finish(self) -> PieceMap {
        let mut shards: Vec<PieceMap> = self
            .shards
            .into_iter()
            .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()).0)
            .collect();
        shards.sort_by_key(|m| std::cmp::Reverse(m.len()));
        let mut it = shards.into_iter();
        let mut total = it.next().unwrap_or_default();
        for shard in it {
            for (k, v) in shard {
                *total.entry(k).or_insert(0) += v;
            }
        }
        total
    }
}

/// Scales each map's counts by `numerator / denominator` (rounded to the nearest integer, halves
/// up: `(count * numerator + denominator / 2) / denominator`) and adds them up. Pieces whose
/// scaled count is 0 are left out. This is how sources are mixed with weights.
pub fn merge_weighted(maps: &[(&PieceMap, u64)], denominator: u64) -> Result<PieceMap> {
    if denominator == 0 {
        return Err(Error::Invalid(
            "the weights' denominator must be at least 1".into(),
        ));
    }
    let scale = |c: u64, num: u64| -> Result<u64> {
        let v = (c as u128 * num as u128 + denominator as u128 / 2) / denominator as u128;
        u64::try_from(v).map_err(|_| Error::Invalid(format!("a weighted count ({v}) exceeds 2^64")))
    };
    let mut total = PieceMap::default();
    total.reserve(maps.iter().map(|(m, _)| m.len()).max().unwrap_or(0));
    for &(map, num) in maps {
        for (k, &c) in map {
            let c = scale(c, num)?;
            if c > 0 {
                let e = total.entry(k.clone()).or_insert(0);
                *e = e
                    .checked_add(c)
                    .ok_or_else(|| Error::Invalid("a weighted count exceeds 2^64".into()))?;
            }
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretok::GPT4;

    fn counter(specials: &[&str]) -> PieceCounter {
        let specials: Vec<String> = specials.iter().map(|s| s.to_string()).collect();
        PieceCounter::new(
            Pretokenizer::new(Some(GPT4)).unwrap(),
            SpecialSplitter::new(&specials).unwrap(),
        )
    }

    #[test]
    fn specials_separate_and_are_not_counted() {
        let mut c = counter(&["<s>", "<s><s>"]);
        c.add_texts(&["a<s><s>a<s>b"]).unwrap();
        let m = c.finish();
        assert_eq!(m.get(b"a".as_slice()), Some(&2));
        assert_eq!(m.get(b"b".as_slice()), Some(&1));
        assert_eq!(m.len(), 2);
    }

    #[test]
    fn unit_cuts_give_the_same_counts() {
        let line = "Some text, with\nnumbers 12345 and  spaces\n\n<|x|>tail\n";
        let text = line.repeat(60_000); // ~3 MB: several units
        let mut a = counter(&["<|x|>"]);
        a.add_texts(&[&text]).unwrap();
        assert!(a.units(&text).len() > 1);
        let mut b = counter(&["<|x|>"]);
        let lines: Vec<&str> = vec![line; 60_000];
        b.add_texts(&lines).unwrap();
        assert_eq!(a.finish(), b.finish());
    }

    #[test]
    fn words_are_runs_between_ascii_whitespace() {
        assert_eq!(count_words(b""), 0);
        assert_eq!(count_words(b"  a bc\n\td  "), 3);
        let mut c = counter(&["<s>"]);
        c.add_texts(&["one two<s>three", " four "]).unwrap();
        assert_eq!(c.words(), 4);
    }

    #[test]
    fn weighted_merge_rounds_half_up() {
        let map = |items: &[(&[u8], u64)]| -> PieceMap {
            items
                .iter()
                .map(|(k, v)| (k.to_vec().into_boxed_slice(), *v))
                .collect()
        };
        let a = map(&[(b"x", 3), (b"y", 1)]);
        let b = map(&[(b"x", 1), (b"z", 5)]);
        // a weighs 1, b weighs 2.5
        let m = merge_weighted(&[(&a, 4), (&b, 10)], 4).unwrap();
        assert_eq!(m, map(&[(b"x", 3 + 3), (b"y", 1), (b"z", 13)]));
        // a weighs 0.25: 3 * 0.25 = 0.75 -> 1, 1 * 0.25 -> 0 (left out)
        let m = merge_weighted(&[(&a, 1), (&b, 4)], 4).unwrap();
        assert_eq!(m, map(&[(b"x", 2), (b"z", 5)]));
    }

    #[test]
    fn straddling_special_blocks_a_cut() {
        let s = SpecialSplitter::new(&["x\nb".to_string()]).unwrap();
        assert!(s.straddles(b"ax\nbc", 3));
        assert!(!s.straddles(b"ax\nbc", 1));
    }
}
