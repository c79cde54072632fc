//! `compare`'s numbers for one block of text (`python/bytepair/analysis/compare.py`): the words
//! of the block, and for each byte-level BPE encoder its tokens, the words its token boundaries
//! cut and the bytes its tokens cover.
//!
//! A word is `bytepair.analysis.words`' word: a run of word characters, except that a character
//! of a script written without spaces is a word of its own. The class of each code point comes
//! from Python (`words._CLASS`, the first 65,536 code points: 0 word, 1 whitespace, 2 a word of
//! its own; above them only U+20000..U+3FFFF, Han, is of class 2), so the two sides cannot
//! disagree about what a word is.
//!
//! Why here and not in numpy (measured in bench/README.md, "compare against encode_files"):
//! numpy needed the ids as an array, then a gather of token lengths, a cumulative sum, gathers
//! of per-byte word flags at the token ends and a count, per tokenizer, plus several passes
//! over the block's bytes to find its words; here the words are one pass over the bytes per
//! block, and each encoder's numbers one pass over its ids, with no array handed to Python.

use crate::bpe::encode::Encoder;
use crate::error::{Error, Result};
use crate::Rank;

/// Code points with a class in the table Python gives (`words._CLASS`).
pub const TABLE_SIZE: usize = 0x10000;

/// The words of one text, kept as what a token boundary needs: `inside[p]` is 1 + the index of
/// the word that bytes `p - 1` and `p` both belong to (a token boundary at byte `p` cuts that
/// word), else 0; one entry per byte boundary, `0..=len`.
pub struct BlockWords {
    inside: Vec<u32>,
    /// number of words
    pub count: u64,
}

impl BlockWords {
    /// The words of `text`, with `table` the class of each code point below `TABLE_SIZE`.
    pub fn new(text: &str, table: &[u8]) -> Result<Self> {
        Self::new_in(text, table, Vec::new())
    }

    /// `new` in the buffer `inside` (its contents are dropped): a block's 4 bytes a byte of
    /// text, allocated afresh for each block, were page faults on every block.
    pub fn new_in(text: &str, table: &[u8], mut inside: Vec<u32>) -> Result<Self> {
        if table.len() != TABLE_SIZE {
            return Err(Error::Invalid(format!(
                "the word class table must have {TABLE_SIZE} entries, got {}",
                table.len()
            )));
        }
        let bytes = text.as_bytes();
        let n = bytes.len();
        if n >= u32::MAX as usize {
            // word numbers are u32 (4 bytes a byte of text already); compare's blocks are far smaller
            return Err(Error::Invalid(
                "a text of 4 GiB or more cannot be measured in one block".into(),
            ));
        }
        inside.clear();
        inside.resize(n + 1, 0);
        let mut word = 0u32;
        let mut prev_word = false; // the character before is a word character (class 0)
        let mut i = 0;
        while i < n {
            let b = bytes[i];
            let (class, len) = if b < 0x80 {
                (table[b as usize], 1)
            } else {
                // `i` is the first byte of a character (it moves by whole characters) of valid
                // UTF-8: decoded here from its bytes, without `str`'s boundary checks.
                let (cp, len) = decode(bytes, i);
                let class = if (cp as usize) < TABLE_SIZE {
                    table[cp as usize]
                } else if (0x20000..=0x3FFFF).contains(&cp) {
                    2
                } else {
                    0
                };
                (class, len)
            };
            match class {
                0 => {
                    if prev_word {
                        inside[i] = word;
                    } else {
                        word += 1;
                    }
                    inside[i + 1..i + len].fill(word);
                    prev_word = true;
                }
                2 => {
                    // a word of its own: cut only inside the character
                    word += 1;
                    inside[i + 1..i + len].fill(word);
                    prev_word = false;
                }
                _ => prev_word = false,
            }
            i += len;
        }
        Ok(BlockWords {
            inside,
            count: word as u64,
        })
    }

    /// The buffer, for the next block.
    pub fn into_buffer(self) -> Vec<u32> {
        self.inside
    }

    /// The words cut by token boundaries at the byte offsets `ends`, ascending: the distinct
    /// words of the ends inside words (an end past the text is in no word). Ends inside one word
    /// come one after the other (every boundary between two of them is inside it too), so a
    /// word is counted when its number differs from that of the last end inside a word.
    pub fn cut(&self, ends: impl Iterator<Item = usize>) -> u64 {
        let mut cut = 0u64;
        let mut last = 0u32;
        for e in ends {
            let w = self.inside.get(e).copied().unwrap_or(0);
            if w != 0 && w != last {
                cut += 1;
                last = w;
            }
        }
        cut
    }
}

/// The code point and length of the UTF-8 character starting at `bytes[i]` (>= 0x80) of
/// valid UTF-8.
#[inline(always)]
fn decode(bytes: &[u8], i: usize) -> (u32, usize) {
    let b = bytes[i] as u32;
    let c = |k: usize| (bytes[i + k] & 0x3F) as u32;
    if b < 0xE0 {
        ((b & 0x1F) << 6 | c(1), 2)
    } else if b < 0xF0 {
        ((b & 0x0F) << 12 | c(1) << 6 | c(2), 3)
    } else {
        ((b & 0x07) << 18 | c(1) << 12 | c(2) << 6 | c(3), 4)
    }
}

/// One encoder's numbers on one text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Measured {
    pub tokens: u64,
    /// words cut by a token boundary
    pub cut: u64,
    /// bytes the tokens cover
    pub bytes: u64,
}

/// Encodes `text` with `enc` (special-token text as ordinary text, as compare does) into
/// `ids` (a buffer reused across calls) and measures it against `words`.
pub fn measure_bpe(
    enc: &Encoder,
    text: &str,
    words: &BlockWords,
    ids: &mut Vec<Rank>,
) -> Result<Measured> {
    ids.clear();
    enc.encode_ordinary_into(text, ids)?;
    let mut end = 0usize;
    let mut lengths = Ok(());
    let cut = words.cut(ids.iter().map(|&id| {
        match enc.bpe.token_len(id) {
            Ok(n) => end += n,
            Err(e) => lengths = Err(e),
        }
        end
    }));
    lengths?;
    Ok(Measured {
        tokens: ids.len() as u64,
        cut,
        bytes: end as u64,
    })
}

/// The words of `text` and each encoder's numbers on it (`measure_bpe`), with the buffers of
/// the calling thread kept for its next block.
pub fn measure_block(
    text: &str,
    table: &[u8],
    encoders: &[&Encoder],
) -> Result<(u64, Vec<Measured>)> {
    thread_local! {
        static BUFFERS: std::cell::RefCell<(Vec<u32>, Vec<Rank>)> = Default::default();
    }
    BUFFERS.with(|cell| {
        let mut bufs = cell.borrow_mut();
        let (inside, ids) = &mut *bufs;
        let words = BlockWords::new_in(text, table, std::mem::take(inside))?;
        let rows = encoders
            .iter()
            .map(|enc| measure_bpe(enc, text, &words, ids))
            .collect::<Result<Vec<_>>>();
        let count = words.count;
        *inside = words.into_buffer();
        Ok((count, rows?))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Vec<u8> {
        let mut t = vec![0u8; TABLE_SIZE];
        for c in [' ', '\n', '\t', '\u{a0}', '\u{3000}'] {
            t[c as usize] = 1;
        }
        t[0x4E00..=0x9FFF].fill(2);
        t
    }

    /// The words of `text` the slow way: (start, end) byte spans.
    fn spans(text: &str, t: &[u8]) -> Vec<(usize, usize)> {
        let class = |c: char| {
            let cp = c as usize;
            if cp < TABLE_SIZE {
                t[cp]
            } else if (0x20000..=0x3FFFF).contains(&cp) {
                2
            } else {
                0
            }
        };
        let mut out: Vec<(usize, usize)> = Vec::new();
        let mut open = false;
        for (i, c) in text.char_indices() {
            match class(c) {
                0 if open => out.last_mut().unwrap().1 = i + c.len_utf8(),
                0 => {
                    out.push((i, i + c.len_utf8()));
                    open = true;
                }
                2 => {
                    out.push((i, i + c.len_utf8()));
                    open = false;
                }
                _ => open = false,
            }
        }
        out
    }

    #[test]
    fn words_and_cuts_match_the_spans() {
        let t = table();
        let text = "Hello, wörld!\u{a0}東京に行く GPT-4は 𠀋x  end\u{3000}z";
        let words = BlockWords::new(text, &t).unwrap();
        let want = spans(text, &t);
        assert_eq!(words.count, want.len() as u64);
        // every single boundary, and every pair of boundaries
        let n = text.len();
        for a in 0..=n {
            let inside = want.iter().filter(|&&(s, e)| s < a && a < e).count() as u64;
            assert_eq!(words.cut([a].into_iter()), inside, "boundary {a}");
            for b in a..=n + 1 {
                let cut = want
                    .iter()
                    .filter(|&&(s, e)| (s < a && a < e) || (s < b && b < e))
                    .count() as u64;
                assert_eq!(words.cut([a, b].into_iter()), cut, "boundaries {a} {b}");
            }
        }
        assert!(BlockWords::new("x", &t[..10]).is_err());
    }
}
