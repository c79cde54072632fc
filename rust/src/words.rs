//! Counting the distinct words of a corpus for training (WordPiece, Unigram): texts, blocks of
//! streams and files cut where no word spans, counted on several threads into per-thread maps,
//! then merged into `Words`, one sorted buffer. What a word is belongs to the model: `WordSplit`.

use std::sync::Mutex;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::count::SpecialSplitter;
use crate::error::{Error, Result};

/// How a model cuts text into the words it trains on.
pub trait WordSplit: Sync {
    /// Bytes (one or two) after which text may always be cut without changing its words.
    const CUT_AFTER: &'static [u8];
    /// Per-call working memory.
    type Scratch: Default;
    /// Calls `f` on each word of `stretch` (text between special tokens).
    fn for_each_word(&self, stretch: &str, scratch: &mut Self::Scratch, f: &mut dyn FnMut(&str));
}

/// Texts longer than this are cut into units for the workers.
pub const UNIT_BYTES: usize = 1 << 20;
/// Files are read in blocks of this size.
pub const BLOCK_BYTES: usize = 4 << 20;

type WordMap = FxHashMap<Box<str>, u64>;

/// Statistics of what was counted (of the text after UTF-8 decoding).
#[derive(Debug, Default, Clone, Copy)]
pub struct CountStats {
    pub bytes: u64,
    pub chars: u64,
    /// bad UTF-8 sequences replaced by U+FFFD
    pub replaced: u64,
}

impl CountStats {
    /// Adds `other`'s figures (of another text) to these.
    pub fn add(&mut self, other: &CountStats) {
        self.bytes += other.bytes;
        self.chars += other.chars;
        self.replaced += other.replaced;
    }
}

/// Counts words (as `S` splits them) over texts, blocks and files, on several threads, streaming.
///
/// Memory: each worker counts into its own shard (by `rayon::current_thread_index`), a word is
/// copied into a shard only the first time that shard sees it, and files are read in blocks of
/// `BLOCK_BYTES` cut after the bytes `S` names (which always end a word): memory follows the number
/// of distinct words, never the corpus size, and no text crosses into Python.
pub struct WordCounter<S: WordSplit> {
    split: S,
    splitter: SpecialSplitter,
    shards: Vec<Mutex<WordMap>>,
    unit_bytes: usize,
    block_bytes: usize,
    pub stats: CountStats,
}

impl<S: WordSplit> WordCounter<S> {
    /// Text matching one of `specials` separates words and is not counted.
    pub fn new(split: S, specials: &[String]) -> Result<Self> {
        Self::with_sizes(split, specials, UNIT_BYTES, BLOCK_BYTES)
    }

    /// Smaller units and blocks than the defaults exercise the cutting in tests.
    pub fn with_sizes(
        split: S,
        specials: &[String],
        unit_bytes: usize,
        block_bytes: usize,
    ) -> Result<Self> {
        let shards = (0..crate::threads::default_threads().max(1))
            .map(|_| Mutex::default())
            .collect();
        Ok(WordCounter {
            split,
            splitter: SpecialSplitter::new(specials)?,
            shards,
            unit_bytes: unit_bytes.max(1),
            block_bytes: block_bytes.max(1),
            stats: CountStats::default(),
        })
    }

    fn memchr(&self, s: &[u8]) -> Option<usize> {
        match S::CUT_AFTER {
            [a] => memchr::memchr(*a, s),
            [a, b] => memchr::memchr2(*a, *b, s),
            _ => None,
        }
    }

    fn memrchr(&self, s: &[u8]) -> Option<usize> {
        match S::CUT_AFTER {
            [a] => memchr::memrchr(*a, s),
            [a, b] => memchr::memrchr2(*a, *b, s),
            _ => None,
        }
    }

    pub(crate) fn count_unit(&self, unit: &str) {
        let shard = rayon::current_thread_index().unwrap_or(0) % self.shards.len();
        let mut map = self.shards[shard].lock().unwrap_or_else(|e| e.into_inner());
        let mut scratch = S::Scratch::default();
        let _ = self
            .splitter
            .for_each_stretch(unit, |stretch| -> std::result::Result<(), ()> {
                self.split.for_each_word(stretch, &mut scratch, &mut |w| {
                    if let Some(c) = map.get_mut(w) {
                        *c += 1;
                    } else {
                        map.insert(w.into(), 1);
                    }
                });
                Ok(())
            });
    }

    /// The last place in `text[min..near]` just after one of `S::CUT_AFTER` that splits no
    /// special token: words never span such a place, so the two sides count apart.
    fn cut_before(&self, text: &[u8], min: usize, near: usize) -> Option<usize> {
        let mut end = near.min(text.len());
        while end > min {
            let at = self.memrchr(&text[min..end])? + min;
            let cut = at + 1;
            if !self.splitter.straddles(text, cut) {
                return Some(cut);
            }
            end = at;
        }
        None
    }

    /// The first such place in `text[from..]` (the forward twin of `cut_before`).
    fn cut_after(&self, text: &[u8], from: usize) -> Option<usize> {
        let mut at = from;
        while at < text.len() {
            let ws = self.memchr(&text[at..])? + at;
            let cut = ws + 1;
            if !self.splitter.straddles(text, cut) {
                return Some(cut);
            }
            at = cut;
        }
        None
    }

    /// `text` cut into units of about `unit_bytes` (never inside a word).
    pub(crate) fn units<'t>(&self, text: &'t str) -> Vec<&'t str> {
        let b = text.as_bytes();
        crate::count::cut_text(text, self.unit_bytes, |start, near| {
            self.cut_before(b, start, near)
                .or_else(|| self.cut_after(b, near))
        })
    }

    /// Counts the words of each text on `threads` threads.
    pub fn add_texts(&mut self, texts: &[&str], threads: usize) -> Result<()> {
        let units: Vec<&str> = texts.iter().flat_map(|t| self.units(t)).collect();
        let this = &*self;
        crate::threads::run(threads, || {
            if threads == 1 {
                units.iter().for_each(|u| this.count_unit(u));
            } else {
                units.par_iter().for_each(|u| this.count_unit(u));
            }
        })?;
        for t in texts {
            self.stats.bytes += t.len() as u64;
            self.stats.chars += t.bytes().filter(|&b| (b as i8) >= -0x40).count() as u64;
        }
        Ok(())
    }

    /// Counts the longest prefix of `buf` that ends where words may be cut (all of it when
    /// `last`) and returns its length; the caller keeps the rest and appends more. `buf` is
    /// UTF-8 text of the stream `source` from its byte `offset` on (for errors).
    pub fn add_block(
        &mut self,
        buf: &[u8],
        last: bool,
        source: &str,
        offset: u64,
        replace_errors: bool,
        threads: usize,
    ) -> Result<usize> {
        let cut = if last {
            buf.len()
        } else {
            let limit = buf.len().saturating_sub(self.splitter.max_len() + 1);
            match self.cut_before(buf, 0, limit) {
                Some(c) => c,
                None => return Ok(0), // no place to cut yet: read more
            }
        };
        if cut > 0 {
            let bytes = &buf[..cut];
            let text = match std::str::from_utf8(bytes) {
                Ok(s) => std::borrow::Cow::Borrowed(s),
                Err(e) if !replace_errors => {
                    return Err(Error::Utf8 {
                        source: source.to_owned(),
                        offset: offset + e.valid_up_to() as u64,
                    })
                }
                Err(_) => {
                    self.stats.replaced += bytes
                        .utf8_chunks()
                        .filter(|c| !c.invalid().is_empty())
                        .count() as u64;
                    String::from_utf8_lossy(bytes)
                }
            };
            self.add_texts(&[&text], threads)?;
        }
        Ok(cut)
    }

    /// Streams a UTF-8 file in blocks. `progress` gets the bytes read so far and may stop the
    /// work by returning an error.
    pub fn add_file(
        &mut self,
        path: &str,
        replace_errors: bool,
        threads: usize,
        progress: &mut dyn FnMut(u64) -> Result<()>,
    ) -> Result<()> {
        let io = Error::io(path);
        let file = std::fs::File::open(path).map_err(io)?;
        let block = self.block_bytes;
        crate::io::blocks::stream_blocks(
            file,
            path,
            0,
            block,
            &mut |buf, last, at| self.add_block(buf, last, path, at, replace_errors, threads),
            progress,
        )
    }

    /// Distinct words and words counted so far.
    pub fn sizes(&self) -> (usize, u64) {
        let mut distinct = 0;
        let mut total = 0;
        for m in &self.shards {
            let m = m.lock().unwrap_or_else(|e| e.into_inner());
            distinct += m.len();
            total += m.values().sum::<u64>();
        }
        (distinct, total) // `distinct` overcounts words seen by two shards: see `finish`
    }

    /// Adds each count of `words` multiplied by `multiplier / denominator` (rounded to the nearest
    /// integer, halves up: `(count * multiplier + denominator / 2) / denominator`, as BPE
    /// training mixes sources); words whose scaled count is 0 are left out. This is how sources
    /// are mixed: each counted apart, then folded into one total with its weight. A count past
    /// 2^64 is an error, and leaves this counter partly merged.
    pub fn add_words(&mut self, words: &Words, multiplier: u64, denominator: u64) -> Result<()> {
        if denominator == 0 {
            return Err(Error::Invalid(
                "the weights' denominator must be at least 1".into(),
            ));
        }
        let overflow = || Error::Invalid("a weighted word count exceeds 2^64".into());
        // Shard 0 holds the total: `finish` adds the shards up, so which one does not matter.
        let mut map = self.shards[0].lock().unwrap_or_else(|e| e.into_inner());
        map.reserve(words.len());
        for (w, c) in words.iter() {
            let scaled =
                (c as u128 * multiplier as u128 + denominator as u128 / 2) / denominator as u128;
            let scaled = u64::try_from(scaled).map_err(|_| overflow())?;
            if scaled == 0 {
                continue;
            }
            if let Some(v) = map.get_mut(w) {
                *v = v.checked_add(scaled).ok_or_else(overflow)?;
            } else {
                map.insert(w.into(), scaled);
            }
        }
        Ok(())
    }

    /// Folds `other` (counted apart, with the same split) into this counter: its word counts
    /// scaled as `add_words` does, and its text statistics unscaled. `other` is left empty.
    pub fn absorb(
        &mut self,
        other: &mut WordCounter<S>,
        multiplier: u64,
        denominator: u64,
    ) -> Result<()> {
        let words = other.finish();
        self.add_words(&words, multiplier, denominator)?;
        self.stats.add(&other.stats);
        other.stats = CountStats::default();
        Ok(())
    }

    /// The counts, merged and sorted into compact storage; the counter is left empty.
    pub fn finish(&mut self) -> Words {
        let mut shards: Vec<WordMap> = self
            .shards
            .iter()
            .map(|m| std::mem::take(&mut *m.lock().unwrap_or_else(|e| e.into_inner())))
            .collect();
        shards.sort_by_key(|m| std::cmp::Reverse(m.len()));
        let mut it = shards.into_iter();
        let mut total = it.next().unwrap_or_default();
        for shard in it {
            for (k, v) in shard {
                *total.entry(k).or_insert(0) += v;
            }
        }
        let mut list: Vec<(Box<str>, u64)> = total.into_iter().collect();
        list.sort_unstable();
        Words::from_sorted(list)
    }
}

/// Distinct words and their counts, sorted by word: the texts in one buffer (`ends` marks where
/// each stops), 16 bytes a word besides its text.
#[derive(Default)]
pub struct Words {
    text: String,
    ends: Vec<usize>,
    counts: Vec<u64>,
}

impl Words {
    fn from_sorted(list: Vec<(Box<str>, u64)>) -> Self {
        let bytes: usize = list.iter().map(|(w, _)| w.len()).sum();
        let mut words = Words {
            text: String::with_capacity(bytes),
            ends: Vec::with_capacity(list.len()),
            counts: Vec::with_capacity(list.len()),
        };
        for (w, c) in list {
            words.push(&w, c);
        }
        words
    }

    /// Adds a word after the others (the caller keeps them sorted and distinct).
    fn push(&mut self, w: &str, count: u64) {
        self.text.push_str(w);
        self.ends.push(self.text.len());
        self.counts.push(count);
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub fn get(&self, i: usize) -> (&str, u64) {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        (&self.text[start..self.ends[i]], self.counts[i])
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Words are the runs of characters between spaces.
    struct Spaces;

    impl WordSplit for Spaces {
        const CUT_AFTER: &'static [u8] = b" ";
        type Scratch = ();
        fn for_each_word(&self, stretch: &str, _: &mut (), f: &mut dyn FnMut(&str)) {
            stretch.split(' ').filter(|w| !w.is_empty()).for_each(f);
        }
    }

    fn counted(text: &str) -> WordCounter<Spaces> {
        let mut c = WordCounter::new(Spaces, &[]).unwrap();
        c.add_texts(&[text], 2).unwrap();
        c
    }

    fn listed(c: &mut WordCounter<Spaces>) -> Vec<(String, u64)> {
        c.finish().iter().map(|(w, n)| (w.to_owned(), n)).collect()
    }

    #[test]
    fn absorb_scales_each_count_and_adds_them_up() {
        const D: u64 = 1 << 16;
        let mut total = WordCounter::new(Spaces, &[]).unwrap();
        let mut big = counted("a a a b b c");
        let mut small = counted("b d d");
        total.absorb(&mut big, D, D).unwrap();
        // weight 2.5: b 1 -> 2.5 -> 3 (halves up), d 2 -> 5
        total.absorb(&mut small, 5 * D / 2, D).unwrap();
        let words: Vec<(&str, u64)> = vec![("a", 3), ("b", 5), ("c", 1), ("d", 5)];
        let want: Vec<(String, u64)> = words.iter().map(|&(w, n)| (w.into(), n)).collect();
        assert_eq!(total.stats.bytes, 11 + 5);
        assert_eq!(big.stats.bytes, 0, "the absorbed counter is left empty");
        assert!(listed(&mut big).is_empty());
        assert_eq!(listed(&mut total), want);
    }

    #[test]
    fn absorb_rounds_halves_up_and_drops_zeros() {
        let mut total = WordCounter::new(Spaces, &[]).unwrap();
        total.absorb(&mut counted("x y y"), 1, 4).unwrap(); // 0.25 -> 0, 0.5 -> 1
        assert_eq!(listed(&mut total), vec![("y".to_owned(), 1)]);
    }

    #[test]
    fn absorb_is_the_plain_sum_at_weight_one() {
        let mut together = counted("p q r q s p p");
        let mut total = WordCounter::new(Spaces, &[]).unwrap();
        total.absorb(&mut counted("p q r"), 7, 7).unwrap();
        total.absorb(&mut counted("q s p p"), 7, 7).unwrap();
        assert_eq!(listed(&mut total), listed(&mut together));
    }

    #[test]
    fn absorb_refuses_a_zero_denominator_and_overflow() {
        let mut total = WordCounter::new(Spaces, &[]).unwrap();
        assert!(total.absorb(&mut counted("a"), 1, 0).is_err());
        assert!(total.absorb(&mut counted("a a"), u64::MAX, 1).is_err());
        let mut total = WordCounter::new(Spaces, &[]).unwrap();
        total.absorb(&mut counted("a"), u64::MAX, 1).unwrap();
        assert!(total.absorb(&mut counted("a"), 1, 1).is_err());
    }
}
