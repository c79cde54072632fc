//! Pre-tokenization: splitting text into pieces that BPE never merges across.
//!
//! A `Pretokenizer` is built from the pattern's regex string (Python `regex` syntax, as stored in
//! tokenizer files). When that string is one of the presets (GPT-2, cl100k/GPT-4, o200k), the
//! preset's scanner is used; any other string is compiled with `fancy-regex`. `None` means "the
//! whole text is one piece".
//!
//! # The preset scanners
//!
//! The three presets are not run through a regex engine: each has a hand-written scanner
//! (`next_gpt2`, `next_gpt4`, `next_o200k`) that returns the end of the piece starting at a given
//! byte offset, walking the UTF-8 bytes of the `&str` directly. Each scanner is a transcription
//! of its pattern under backtracking, leftmost-first semantics (what fancy-regex does, and
//! therefore what tiktoken does); the comments beside them derive, alternative by alternative,
//! which match the backtracking engine settles on. The tests compare them with fancy-regex on
//! hand-picked strings, on every short string over a set of representative characters, and on
//! many pseudo-random strings.
//!
//! Characters are classified by one table lookup giving a byte of class bits (`L`, `N`, `WS`,
//! ...). ASCII, almost all of the bytes of most text, is one load from a 128-entry table;
//! other code points are decoded and looked up in a two-level table (`INDEX[cp >> SHIFT]` picks a
//! deduplicated block of `BLOCKS`), which costs two loads and no search.
//!
//! The tables (`unicode_tables.rs`) are generated source, committed, produced from
//! `regex-syntax`'s own Unicode data by parsing the very sub-expressions the patterns contain
//! (`\p{L}`, `\s`, `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`, ...). That is the data the regex crate behind
//! fancy-regex, and so tiktoken, matches with (Unicode 16.0 in regex-syntax 0.8.12). Static
//! tables cost nothing at startup and need no `regex-syntax` at run time; a test checks every
//! code point against `regex-syntax` so that a dependency update that changes the Unicode
//! version fails loudly instead of silently drifting. To regenerate:
//! `BYTEPAIR_REGEN_TABLES=1 cargo test regenerate_unicode_tables -- --ignored`.
//!
//! What the classes mean (as in the regex crate): `\s` is Unicode `White_Space` (`\t`..`\r`,
//! space, U+0085, U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000);
//! `\p{L}` and `\p{N}` are the general categories Letter and Number (Nd, Nl, No). Case-insensitive
//! contractions use simple case folding, so `'\u{17F}` (LATIN SMALL LETTER LONG S) is a
//! contraction like `'s` in cl100k and o200k.
//!
//! Differences from Python, which we do not follow (the reference is tiktoken): the Python `regex`
//! module (checked with 2026.5.9) has exactly the same `\s`, but Python's `re` module and
//! `str.isspace` also count U+001C..U+001F as whitespace. And that `regex` module has Unicode 17
//! data, so it sees 4,644 more letters (e.g. U+088F, U+A7CE) and 13 more numbers (U+11DE0..)
//! than regex-syntax's Unicode 16; text with those characters splits differently there.

use std::ops::ControlFlow;

use crate::error::{Error, Result};

use super::ascii_ws;
use super::unicode_tables as tables;

// Piece boundaries of the three presets 64 bytes at a time.
mod masks;

/// GPT-2 / r50k_base.
pub const GPT2: &str =
    r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";
/// GPT-4 / cl100k_base.
pub const GPT4: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";
/// Meta's Llama 3 (`pat_str` of its reference tokenizer; Hugging Face's Llama 3 files hold the
/// same): cl100k's alternatives, but no `\s++$`, and `\s*[\r\n]+|\s+(?!\S)|\s+` for whitespace
/// as in o200k (the possessive and non-possessive forms split alike here: nothing after them can
/// take back what they took). Run by the cl100k scanner with o200k's whitespace at the end.
pub const LLAMA3: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// GPT-4o / o200k_base.
pub const O200K: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"|\s*[\r\n]+",
    r"|\s+(?!\S)",
    r"|\s+",
);

/// The presets, by the names the Python API uses.
pub const PRESETS: [(&str, &str); 3] = [("gpt2", GPT2), ("gpt4", GPT4), ("o200k", O200K)];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    Gpt2,
    Gpt4,
    O200k,
    /// `LLAMA3`: a pattern of its own, not one of the named `PRESETS`.
    Llama3,
}

#[derive(Debug)]
enum Kind {
    Whole,
    Preset(Preset),
    Custom(fancy_regex::Regex),
}

#[derive(Debug)]
pub struct Pretokenizer {
    kind: Kind,
    source: Option<String>,
}

fn compile(pattern: &str) -> Result<fancy_regex::Regex> {
    fancy_regex::RegexBuilder::new(pattern)
        .backtrack_limit(10_000_000)
        .build()
        .map_err(|e| Error::Pattern(format!("cannot compile {pattern:?}: {e}")))
}

impl Pretokenizer {
    /// `None`: the whole text is one piece. Otherwise a regex in Python `regex` syntax.
    pub fn new(pattern: Option<&str>) -> Result<Self> {
        let kind = match pattern {
            None => Kind::Whole,
            Some("") => {
                return Err(Error::Pattern(
                    "the pattern is empty (use None for no splitting)".into(),
                ))
            }
            Some(GPT2) => Kind::Preset(Preset::Gpt2),
            Some(GPT4) => Kind::Preset(Preset::Gpt4),
            Some(O200K) => Kind::Preset(Preset::O200k),
            Some(LLAMA3) => Kind::Preset(Preset::Llama3),
            Some(p) => Kind::Custom(compile(p)?),
        };
        Ok(Pretokenizer {
            kind,
            source: pattern.map(str::to_owned),
        })
    }

    pub fn pattern(&self) -> Option<&str> {
        self.source.as_deref()
    }

    pub fn preset(&self) -> Option<Preset> {
        match &self.kind {
            Kind::Preset(p) => Some(*p),
            _ => None,
        }
    }

    /// Calls `f` with each piece of `text`, in order. The pieces always cover the whole text:
    /// text between two matches of a custom pattern (or before the first, after the last) is a
    /// piece of its own, and empty matches make no piece, so no text is ever dropped. Presets
    /// cannot fail; a custom regex can (backtracking limit).
    pub fn for_each_piece<'t>(&self, text: &'t str, mut f: impl FnMut(&'t str)) -> Result<()> {
        self.try_for_each_piece(text, |piece| {
            f(piece);
            ControlFlow::<()>::Continue(())
        })
        .map(drop)
    }

    /// Like `for_each_piece`, but `f` may stop the walk by returning `ControlFlow::Break`.
    pub fn try_for_each_piece<'t, B>(
        &self,
        text: &'t str,
        mut f: impl FnMut(&'t str) -> ControlFlow<B>,
    ) -> Result<ControlFlow<B>> {
        match &self.kind {
            Kind::Whole => Ok(if text.is_empty() {
                ControlFlow::Continue(())
            } else {
                f(text)
            }),
            Kind::Preset(Preset::Gpt2) => Ok(scan(text, f, next_gpt2)),
            Kind::Preset(Preset::Gpt4) => Ok(scan(text, f, next_gpt4)),
            Kind::Preset(Preset::O200k) => Ok(scan(text, f, next_o200k_fast)),
            Kind::Preset(Preset::Llama3) => Ok(scan(text, f, next_llama3)),
            Kind::Custom(re) => {
                let mut end = 0; // end of the text handed out so far
                for m in re.find_iter(text) {
                    let m = m.map_err(|e| Error::Pattern(format!("matching failed: {e}")))?;
                    for piece in [&text[end..m.start()], m.as_str()] {
                        if !piece.is_empty() {
                            if let ControlFlow::Break(b) = f(piece) {
                                return Ok(ControlFlow::Break(b));
                            }
                        }
                    }
                    end = m.end();
                }
                if end < text.len() {
                    return Ok(f(&text[end..]));
                }
                Ok(ControlFlow::Continue(()))
            }
        }
    }

    /// `try_for_each_piece` handing out the pieces as bytes. The presets skip the two
    /// character-boundary checks of slicing a `str` per piece (the encoder's warm path: their
    /// scanners end pieces on boundaries only, which `scan` asserts in debug builds).
    #[inline]
    pub fn try_for_each_piece_bytes<'t, B>(
        &self,
        text: &'t str,
        mut f: impl FnMut(&'t [u8]) -> ControlFlow<B>,
    ) -> Result<ControlFlow<B>> {
        let b = text.as_bytes();
        match &self.kind {
            Kind::Preset(Preset::Gpt2) => Ok(masks::scan_gpt2(b, f, next_gpt2)),
            Kind::Preset(Preset::Gpt4) => Ok(masks::scan::<true, B>(b, f, next_gpt4)),
            Kind::Preset(Preset::O200k) => Ok(masks::scan::<false, B>(b, f, next_o200k_fast)),
            Kind::Preset(Preset::Llama3) => Ok(masks::scan_llama3::<B>(b, f, next_llama3)),
            _ => self.try_for_each_piece(text, |p| f(p.as_bytes())),
        }
    }

    /// True when `cut` (a byte offset of `text`) is a place where every preset pattern ends a
    /// piece and where the pieces on each side do not depend on the other side, so that the two
    /// halves can be split independently. See `is_independent_cut`.
    pub fn can_cut(&self) -> bool {
        matches!(self.kind, Kind::Preset(..))
    }
}

/// A cut between `text[..cut]` and `text[cut..]` is independent for the preset patterns when the
/// pieces of the two halves, split apart, are the pieces of the whole. X is the character
/// before the run of ASCII whitespace that ends at the cut (GPT-2: starts at the cut), Y the
/// character after the cut; classes are Unicode's, so this holds for every script:
///
/// - cl100k and o200k: the cut follows a `\n` that ends a whitespace run (`\n`, `\r\n`,
///   `\n\n`, `  \r\n`...) after a non-space X, and Y is not whitespace. The run is one piece
///   (`\s*[\r\n]`, `\s*[\r\n]+`) or ends X's punctuation piece (`.\n`), and a text that
///   ends there gives the same piece (`\s++$`); every preset starts a fresh piece at Y.
/// - GPT-2: the cut is where a whitespace run starts after a non-space X. No GPT-2 alternative
///   takes whitespace after a non-space character, and none looks behind, so the pieces from
///   the cut on are those of the text from the cut. (Cutting after the run instead would not
///   do: GPT-2 splits `\n\n` before a letter into `\n`, `\n`, but a text ending in `\n\n`
///   into one piece.)
///
/// Runs are looked at up to `MAX_RUN` bytes back; a character that cannot be decoded at the
/// edge of `text` (a block cut mid-character) makes no cut.
pub fn is_independent_cut(preset: Preset, text: &[u8], cut: usize) -> bool {
    if cut == 0 || cut >= text.len() {
        return false;
    }
    let solid_before = |end: usize| char_class_before(text, end).is_some_and(|k| k & WS == 0);
    if preset == Preset::Gpt2 {
        return text[cut].is_ascii_whitespace() && solid_before(cut);
    }
    // o200k's punctuation piece `O+[\r\n/]*` goes on through a `/` after its newlines
    // (`:\n/` is one piece, one token): no cut before a `/` there. Y is looked at before the
    // walk back over the run: inside a run of newlines Y is whitespace, and that walk for each
    // of them made a long run cost `MAX_RUN` steps a byte.
    text[cut - 1] == b'\n'
        && !text[cut].is_ascii_whitespace()
        && !(preset == Preset::O200k && text[cut] == b'/')
        && char_class_at(text, cut).is_some_and(|k| k & WS == 0)
        && solid_before(whitespace_run_start(text, cut))
}

/// Whitespace runs longer than this make no cut (bounds the work per newline).
pub const MAX_RUN: usize = 64;

/// The start of the run of ASCII whitespace that ends at byte `end` (at most `MAX_RUN` back).
pub fn whitespace_run_start(text: &[u8], end: usize) -> usize {
    let mut start = end;
    while start > 0 && end - start < MAX_RUN && text[start - 1].is_ascii_whitespace() {
        start -= 1;
    }
    start
}

/// The class bits of the character that ends at byte `end`, if it decodes.
fn char_class_before(text: &[u8], end: usize) -> Option<u8> {
    let mut start = end.checked_sub(1)?;
    while start > 0 && end - start < 4 && text[start] & 0xC0 == 0x80 {
        start -= 1;
    }
    let c = std::str::from_utf8(&text[start..end])
        .ok()?
        .chars()
        .next()?;
    (c.len_utf8() == end - start).then(|| class_of_char(c))
}

/// The class bits of the character that starts at byte `at`, if it decodes.
fn char_class_at(text: &[u8], at: usize) -> Option<u8> {
    let n = match *text.get(at)? {
        x if x < 0x80 => 1,
        x if x >= 0xF0 => 4,
        x if x >= 0xE0 => 3,
        _ => 2,
    };
    let c = std::str::from_utf8(text.get(at..at + n)?)
        .ok()?
        .chars()
        .next()?;
    Some(class_of_char(c))
}

fn class_of_char(c: char) -> u8 {
    let cp = c as u32;
    if cp < 0x80 {
        tables::ASCII[cp as usize]
    } else {
        class_of(cp)
    }
}

// ---------------------------------------------------------------------------------------------
// Character classes. One byte of bits per code point; the bits are the character classes the
// preset patterns use, each exactly the regex sub-expression named beside it.

/// `\p{L}`
const L: u8 = 1;
/// `\p{N}`
const N: u8 = 2;
/// `\s`
const WS: u8 = 4;
/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]` (o200k's "upper" class)
const UP: u8 = 8;
/// `[\p{Ll}\p{Lm}\p{Lo}\p{M}]` (o200k's "lower" class)
const LOW: u8 = 16;
/// `[^\s\p{L}\p{N}]` ("other": punctuation, symbols, marks, controls that are not whitespace)
const OTHER: u8 = 32;
/// `[^\r\n\p{L}\p{N}]` (the optional one-character prefix of cl100k/o200k words)
const PRE: u8 = 64;
/// `[\r\n]`
const NL: u8 = 128;

/// The class bits and UTF-8 length of the character starting at byte `i` of `b` (valid UTF-8,
/// `i` on a character boundary, `i < b.len()`).
#[inline(always)]
fn class_at(b: &[u8], i: usize) -> (u8, usize) {
    let x = b[i];
    if x < 0x80 {
        (tables::ASCII[x as usize], 1)
    } else {
        class_non_ascii(b, i, x)
    }
}

#[inline]
fn class_non_ascii(b: &[u8], i: usize, x: u8) -> (u8, usize) {
    let cont = |k: usize| (b[i + k] & 0x3F) as u32;
    let (cp, n) = if x < 0xE0 {
        (((x & 0x1F) as u32) << 6 | cont(1), 2)
    } else if x < 0xF0 {
        (((x & 0x0F) as u32) << 12 | cont(1) << 6 | cont(2), 3)
    } else {
        (
            ((x & 0x07) as u32) << 18 | cont(1) << 12 | cont(2) << 6 | cont(3),
            4,
        )
    };
    (class_of(cp), n)
}

/// The class bits of a code point (any `u32` up to U+10FFFF).
#[inline]
fn class_of(cp: u32) -> u8 {
    const MASK: usize = (1 << tables::SHIFT) - 1;
    let block = tables::INDEX[(cp >> tables::SHIFT) as usize] as usize;
    tables::BLOCKS[(block << tables::SHIFT) | (cp as usize & MASK)]
}

/// The end of the run of characters in `class` starting at `i` (possessive `class*`).
#[inline]
fn run(b: &[u8], mut i: usize, class: u8) -> usize {
    while i < b.len() {
        let (k, n) = class_at(b, i);
        if k & class == 0 {
            break;
        }
        i += n;
    }
    i
}

/// `\p{N}{1,3}` at `i`, given that the character at `i` is a number `n` bytes long.
#[inline]
fn digits3(b: &[u8], i: usize, n: usize) -> usize {
    let mut end = i + n;
    for _ in 0..2 {
        if end >= b.len() {
            break;
        }
        let (k, n) = class_at(b, end);
        if k & N == 0 {
            break;
        }
        end += n;
    }
    end
}

/// A maximal run of whitespace starting at a whitespace character.
struct WsRun {
    /// End of the run.
    end: usize,
    /// Start of its last character (equal to the run's start when the run is one character).
    last: usize,
    /// End of its last `\r` or `\n`, if it has one.
    nl_end: Option<usize>,
}

#[inline]
fn ws_run(b: &[u8], i: usize) -> WsRun {
    let (mut p, mut last, mut nl_end) = (i, i, None);
    while p < b.len() {
        if p - i >= 16 {
            // A long run (32 MB of newlines is one): ASCII whitespace 64 bytes at a time, then
            // 16; a block with anything else leaves that to the steps below. Runs in prose are
            // short and never get here.
            while let Some(block) = b.get(p..p + 64) {
                let m = ascii_ws::masks64(block.try_into().unwrap());
                if m.space != u64::MAX {
                    break;
                }
                if m.newline != 0 {
                    nl_end = Some(p + 64 - m.newline.leading_zeros() as usize);
                }
                last = p + 63;
                p += 64;
            }
            while let Some(block) = b.get(p..p + 16) {
                let m = ascii_ws::masks(block.try_into().unwrap());
                let k = m.space.trailing_ones() as usize;
                if k > 0 {
                    let nl = u32::from(m.newline) & ((1u32 << k) - 1);
                    if nl != 0 {
                        nl_end = Some(p + 32 - nl.leading_zeros() as usize);
                    }
                    last = p + k - 1;
                    p += k;
                }
                if k < 16 {
                    break;
                }
            }
            if p == b.len() {
                break;
            }
        }
        let (k, n) = class_at(b, p);
        if k & WS == 0 {
            break;
        }
        if k & NL != 0 {
            nl_end = Some(p + 1);
        }
        last = p;
        p += n;
    }
    WsRun {
        end: p,
        last,
        nl_end,
    }
}

/// The contractions of GPT-2, case-sensitive, after the apostrophe at `j - 1`:
/// `'(?:[sdmt]|ll|ve|re)`.
#[inline]
fn contraction_gpt2(b: &[u8], j: usize) -> Option<usize> {
    match (b.get(j), b.get(j + 1)) {
        (Some(b's' | b'd' | b'm' | b't'), _) => Some(j + 1),
        (Some(b'l'), Some(b'l')) | (Some(b'v' | b'r'), Some(b'e')) => Some(j + 2),
        _ => None,
    }
}

/// The case-insensitive contractions after the apostrophe at `j - 1`:
/// `(?i:[sdmt]|ll|ve|re)` (cl100k) and `(?i:s|t|re|ve|m|ll|d)` (o200k) match the same strings.
/// Under simple case folding the only non-ASCII character equal to one of these letters is
/// U+017F LATIN SMALL LETTER LONG S (bytes C5 BF), equal to `s`; a test checks this against
/// regex-syntax. For an ASCII letter `c`, `x | 0x20 == c` holds for exactly `x` in {c, C}.
#[inline]
fn contraction_ci(b: &[u8], j: usize) -> Option<usize> {
    let x = *b.get(j)?;
    let second_is = |c: u8| b.get(j + 1).is_some_and(|&y| y | 0x20 == c);
    match x | 0x20 {
        b's' | b'd' | b'm' | b't' => Some(j + 1),
        b'l' if second_is(b'l') => Some(j + 2),
        b'v' | b'r' if second_is(b'e') => Some(j + 2),
        _ if x == 0xC5 && b.get(j + 1) == Some(&0xBF) => Some(j + 2),
        _ => None,
    }
}

/// Calls `f` with the pieces of `text`, where `next(b, i)` is the end of the piece at `i`. The
/// presets always match at least one character at any position, so the pieces cover the text.
#[inline]
fn scan<'t, B>(
    text: &'t str,
    mut f: impl FnMut(&'t str) -> ControlFlow<B>,
    next: impl Fn(&[u8], usize) -> usize,
) -> ControlFlow<B> {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let end = next(b, i);
        debug_assert!(end > i && text.is_char_boundary(end));
        f(&text[i..end])?;
        i = end;
    }
    ControlFlow::Continue(())
}

/// `scan_bytes` for o200k, calling its scanner directly: passed as a function value, its ASCII
/// fast path was not inlined into the loop (a call per piece through `Fn::call`). The warm
/// path now finds boundaries with `masks::scan`; this is the scalar walk it is tested against.
#[cfg(test)]
#[inline(always)]
fn scan_o200k_bytes<'t, B>(
    b: &'t [u8],
    mut f: impl FnMut(&'t [u8]) -> ControlFlow<B>,
) -> ControlFlow<B> {
    let mut i = 0;
    while i < b.len() {
        let end = next_o200k_fast(b, i);
        debug_assert!(end > i && (end == b.len() || b[end] & 0xC0 != 0x80));
        f(&b[i..end])?;
        i = end;
    }
    ControlFlow::Continue(())
}

/// `scan` over bytes: the scalar walk that `masks::scan` and `masks::scan_gpt2` (what
/// `Pretokenizer::try_for_each_piece_bytes` takes) are tested against.
#[cfg(test)]
#[inline]
fn scan_bytes<'t, B>(
    b: &'t [u8],
    mut f: impl FnMut(&'t [u8]) -> ControlFlow<B>,
    next: impl Fn(&[u8], usize) -> usize,
) -> ControlFlow<B> {
    let mut i = 0;
    while i < b.len() {
        let end = next(b, i);
        debug_assert!(end > i && (end == b.len() || b[end] & 0xC0 != 0x80));
        f(&b[i..end])?;
        i = end;
    }
    ControlFlow::Continue(())
}

// ---------------------------------------------------------------------------------------------
// GPT-2: '(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s
//
// Every character is a letter, a number, whitespace or "other", so some alternative matches at
// every position. The whitespace alternatives, for the maximal whitespace run [i, end):
//  - `\s++$` takes the whole run when it ends the text;
//  - otherwise a non-space follows the run, so `\s+(?!\S)` backtracks one character and takes
//    all but the last character of the run, if the run has two or more;
//  - otherwise `\s` takes the one character.

fn next_gpt2(b: &[u8], i: usize) -> usize {
    let x = b[i];
    if x == b'\'' {
        if let Some(end) = contraction_gpt2(b, i + 1) {
            return end;
        }
    }
    if x == b' ' && i + 1 < b.len() {
        // ` ?` is only ever the ASCII space.
        let (k, n) = class_at(b, i + 1);
        for class in [L, N, OTHER] {
            if k & class != 0 {
                return run(b, i + 1 + n, class);
            }
        }
    }
    let (k, n) = class_at(b, i);
    for class in [L, N, OTHER] {
        if k & class != 0 {
            return run(b, i + n, class);
        }
    }
    let ws = ws_run(b, i);
    if ws.end == b.len() || ws.last == i {
        ws.end
    } else {
        ws.last
    }
}

// ---------------------------------------------------------------------------------------------
// cl100k (GPT-4):
// '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+
// |\s++$|\s*[\r\n]|\s+(?!\S)|\s
//
//  - A letter starts `\p{L}++`; a prefix character (not \r, \n, letter or number) followed by a
//    letter starts prefix + letters. (The possessive `?+` never gives the prefix back, but
//    without it the match would have to start with a letter anyway.)
//  - Numbers go three at a time.
//  - "Other" characters, optionally after one space, run possessively, then take any \r\n.
//  - Whitespace, for the maximal run [i, end): the whole run if it ends the text; else up to and
//    including the run's last \r or \n (`\s*` backtracks to it); else all but the last
//    character (`\s+(?!\S)`), or the one character.

fn next_gpt4(b: &[u8], i: usize) -> usize {
    next_cl100k::<true>(b, i)
}

/// Llama 3's: cl100k's, with o200k's whitespace (no `\s++$`: a run that ends the text is cut
/// as any other).
fn next_llama3(b: &[u8], i: usize) -> usize {
    next_cl100k::<false>(b, i)
}

/// cl100k's piece at `i`; `TRAIL`: with its `\s++$`.
#[inline(always)]
fn next_cl100k<const TRAIL: bool>(b: &[u8], i: usize) -> usize {
    let x = b[i];
    if x == b'\'' {
        if let Some(end) = contraction_ci(b, i + 1) {
            return end;
        }
    }
    let (k, n) = class_at(b, i);
    if k & L != 0 {
        return run(b, i + n, L);
    }
    if k & PRE != 0 && i + n < b.len() {
        let (k2, n2) = class_at(b, i + n);
        if k2 & L != 0 {
            return run(b, i + n + n2, L);
        }
    }
    if k & N != 0 {
        return digits3(b, i, n);
    }
    if x == b' ' && i + 1 < b.len() {
        let (k2, n2) = class_at(b, i + 1);
        if k2 & OTHER != 0 {
            return run(b, run(b, i + 1 + n2, OTHER), NL);
        }
    }
    if k & OTHER != 0 {
        return run(b, run(b, i + n, OTHER), NL);
    }
    let ws = ws_run(b, i);
    if TRAIL && ws.end == b.len() {
        ws.end
    } else if let Some(nl_end) = ws.nl_end {
        nl_end
    } else if ws.last == i || ws.end == b.len() {
        ws.end
    } else {
        ws.last
    }
}

// ---------------------------------------------------------------------------------------------
// o200k (GPT-4o):
//   P?U*W+C? | P?U+W*C? | \p{N}{1,3} | ' '?O+[\r\n/]* | \s*[\r\n]+ | \s+(?!\S) | \s+
// where P = [^\r\n\p{L}\p{N}], U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}], W = [\p{Ll}\p{Lm}\p{Lo}\p{M}],
// O = [^\s\p{L}\p{N}] and C = (?i:'s|'t|'re|'ve|'m|'ll|'d). Nothing is possessive, so the first
// two alternatives are tried with the prefix taken, then without it (marks are both P and U/W,
// so this matters: a lone mark before an uppercase word is a piece by itself).

/// The first two alternatives without their prefix and suffix, `U*W+` and `U+W*`, at `s`.
///
/// `U*` first takes the maximal run [s, u) of U. If the character at u is in W (so it is Ll, the
/// only W outside U) then `W+` takes the W run from u. Otherwise `U*` gives characters back until
/// one in W follows; `W+` then takes that one character (the characters after it up to u are
/// Lu/Lt, not in W), so `U*W+` ends after the last character of [s, u) that is in W: `Ok(end)`.
/// If [s, u) has no character in W, `U*W+` fails and `U+W*` matches [s, u) when it is not empty
/// (`W*` matches nothing at u): `Err(u)`, the end of that match or `s`.
#[inline]
fn o200k_letters(b: &[u8], s: usize) -> std::result::Result<usize, usize> {
    let (mut p, mut last_w_end) = (s, None);
    while p < b.len() {
        let (k, n) = class_at(b, p);
        if k & UP == 0 {
            if k & LOW != 0 {
                return Ok(run(b, p + n, LOW));
            }
            break;
        }
        p += n;
        if k & LOW != 0 {
            last_w_end = Some(p);
        }
    }
    last_w_end.ok_or(p)
}

/// `C?` at `end`.
#[inline]
fn o200k_suffix(b: &[u8], end: usize) -> usize {
    if b.get(end) == Some(&b'\'') {
        if let Some(e) = contraction_ci(b, end + 1) {
            return e;
        }
    }
    end
}

/// `next_o200k` for the common ASCII pieces: a word with or without its one-byte
/// prefix (` the`, `Hello`, `.x`), up to 3 digits, a newline before a non-space, and runs of
/// punctuation. The bytes are classified with plain compares and the `ASCII` table, without
/// decoding; a run that stops at a non-ASCII byte (which may continue it: a letter, a mark, a
/// digit) returns `None`, and the general scanner decides. With ASCII only, the two letter
/// alternatives reduce to "the uppercase run, then the lowercase run" (an ASCII letter is
/// either Lu or Ll, and no ASCII character is a mark), and the prefix is taken whenever a
/// letter follows it (see `next_o200k`).
#[inline(always)]
fn o200k_ascii(b: &[u8], i: usize) -> Option<usize> {
    let is_upper = |c: u8| c.wrapping_sub(b'A') < 26;
    let is_letter = |c: u8| (c | 0x20).wrapping_sub(b'a') < 26;
    // `None` where the run stopped on a non-ASCII byte.
    let ascii_end = |p: usize| match b.get(p) {
        Some(&c) if c >= 0x80 => None,
        _ => Some(p),
    };
    let x = b[i];
    let k = tables::ASCII[(x & 0x7F) as usize];
    if x >= 0x80 {
        return None;
    }
    let next = b.get(i + 1).copied();
    let s = if is_letter(x) {
        i
    } else if k & PRE != 0 && next.is_some_and(is_letter) {
        i + 1
    } else if x.wrapping_sub(b'0') < 10 {
        let mut e = i + 1;
        while e < i + 3 && e < b.len() && b[e].wrapping_sub(b'0') < 10 {
            e += 1;
        }
        return if e == i + 3 { Some(e) } else { ascii_end(e) };
    } else if x == b'\n' {
        return match next {
            None => Some(i + 1),
            Some(c) if c < 0x80 && tables::ASCII[c as usize] & WS == 0 => Some(i + 1),
            _ => None,
        };
    } else {
        // ` ?O+[\r\n/]*`: `x` is O, or a space before an O; the next byte is not a letter.
        let start = if k & OTHER != 0 {
            i + 1
        } else if x == b' '
            && next.is_some_and(|c| c < 0x80 && tables::ASCII[c as usize] & OTHER != 0)
        {
            i + 2
        } else {
            return None;
        };
        let mut e = start;
        while e < b.len() && b[e] < 0x80 && tables::ASCII[b[e] as usize] & OTHER != 0 {
            e += 1;
        }
        ascii_end(e)?;
        while matches!(b.get(e), Some(b'\r' | b'\n' | b'/')) {
            e += 1;
        }
        return Some(e);
    };
    let mut p = s;
    while p < b.len() && is_upper(b[p]) {
        p += 1;
    }
    p = lower_run(b, p);
    Some(o200k_suffix(b, ascii_end(p)?))
}

/// The end of the run of ASCII lowercase letters at `p`, eight bytes at a time: a byte is in
/// `a..=z` when adding 0x1F to its low 7 bits sets bit 7 (>= 0x61), adding 0x05 does not
/// (< 0x7B), and its own bit 7 is clear (no sum carries into the next byte).
#[inline(always)]
fn lower_run(b: &[u8], mut p: usize) -> usize {
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    while let Some(chunk) = b.get(p..p + 8) {
        let w = u64::from_le_bytes(chunk.try_into().unwrap());
        let w7 = w & LOW7;
        let lower = (w7 + 0x1F1F_1F1F_1F1F_1F1F) & !(w7 + 0x0505_0505_0505_0505) & !w & HIGH;
        let stop = !lower & HIGH;
        if stop != 0 {
            return p + (stop.trailing_zeros() / 8) as usize;
        }
        p += 8;
    }
    while p < b.len() && b[p].wrapping_sub(b'a') < 26 {
        p += 1;
    }
    p
}

/// `next_o200k` with its ASCII fast path inlined into the caller's loop; the general scanner
/// stays out of line (inlined, its registers were saved and restored for every piece).
#[inline(always)]
fn next_o200k_fast(b: &[u8], i: usize) -> usize {
    match o200k_ascii(b, i) {
        Some(end) => end,
        None => next_o200k(b, i),
    }
}

#[inline(never)]
fn next_o200k(b: &[u8], i: usize) -> usize {
    let x = b[i];
    let (k, n) = class_at(b, i);
    // `U*W+` with the prefix, then without; then `U+W*` with the prefix, then without.
    let with_prefix = if k & PRE != 0 && i + n < b.len() {
        o200k_letters(b, i + n)
    } else {
        Err(0)
    };
    if let Ok(end) = with_prefix {
        return o200k_suffix(b, end);
    }
    let without = if k & (UP | LOW) != 0 {
        o200k_letters(b, i)
    } else {
        Err(0)
    };
    if let Ok(end) = without {
        return o200k_suffix(b, end);
    }
    if let Err(end) = with_prefix {
        if end > i + n {
            return o200k_suffix(b, end);
        }
    }
    if let Err(end) = without {
        if end > i {
            return o200k_suffix(b, end);
        }
    }
    if k & N != 0 {
        return digits3(b, i, n);
    }
    let other_tail = |mut end: usize| {
        while matches!(b.get(end), Some(b'\r' | b'\n' | b'/')) {
            end += 1;
        }
        end
    };
    if x == b' ' && i + 1 < b.len() {
        let (k2, n2) = class_at(b, i + 1);
        if k2 & OTHER != 0 {
            return other_tail(run(b, i + 1 + n2, OTHER));
        }
    }
    if k & OTHER != 0 {
        return other_tail(run(b, i + n, OTHER));
    }
    // Whitespace, for the maximal run [i, end): `\s*[\r\n]+` takes up to and including the run's
    // last \r or \n (then `[\r\n]+` cannot go further: the next character, if any, is not \r\n);
    // else `\s+(?!\S)` takes the whole run at the end of the text, or all but its last
    // character; else `\s+` takes the one character.
    let ws = ws_run(b, i);
    if let Some(nl_end) = ws.nl_end {
        nl_end
    } else if ws.end == b.len() || ws.last == i {
        ws.end
    } else {
        ws.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces<'t>(p: &Pretokenizer, text: &'t str) -> Vec<&'t str> {
        let mut out = Vec::new();
        p.for_each_piece(text, |s| out.push(s)).unwrap();
        out
    }

    #[test]
    fn presets_split_like_tiktoken() {
        let gpt4 = Pretokenizer::new(Some(GPT4)).unwrap();
        assert_eq!(gpt4.preset(), Some(Preset::Gpt4));
        assert_eq!(
            pieces(&gpt4, "Hello world's 12345  \n\nfoo"),
            ["Hello", " world", "'s", " ", "123", "45", "  \n\n", "foo"]
        );
        let gpt2 = Pretokenizer::new(Some(GPT2)).unwrap();
        assert_eq!(
            pieces(&gpt2, "Hello world   x"),
            ["Hello", " world", "  ", " x"]
        );
    }

    #[test]
    fn whole_text_is_one_piece() {
        let p = Pretokenizer::new(None).unwrap();
        assert_eq!(pieces(&p, "a b  c"), ["a b  c"]);
        assert!(pieces(&p, "").is_empty());
    }

    #[test]
    fn bad_pattern_is_an_error() {
        assert!(matches!(
            Pretokenizer::new(Some("(")),
            Err(Error::Pattern(_))
        ));
        assert!(matches!(
            Pretokenizer::new(Some("")),
            Err(Error::Pattern(_))
        ));
    }

    #[test]
    fn custom_patterns_use_the_regex() {
        let p = Pretokenizer::new(Some(r"\d+|[a-z]+")).unwrap();
        assert_eq!(p.preset(), None);
        assert!(!p.can_cut());
        assert_eq!(pieces(&p, "ab12 .cd"), ["ab", "12", " .", "cd"]);
        // Text between matches is a piece of its own; empty matches make none.
        let q = Pretokenizer::new(Some(r"(?=a)|b")).unwrap();
        assert_eq!(pieces(&q, "xab a"), ["x", "a", "b", " ", "a"]);
    }

    #[test]
    fn independent_cuts_do_not_change_pieces() {
        let text = "Hi.\nThere  is\na cut\n\nnot here.\nX1 '\nb\nend";
        let mut found = 0;
        for (_, pat) in PRESETS.iter().chain(&[("llama3", LLAMA3)]) {
            let p = Pretokenizer::new(Some(pat)).unwrap();
            let whole = pieces(&p, text);
            for cut in 0..text.len() {
                if is_independent_cut(p.preset().unwrap(), text.as_bytes(), cut) {
                    found += 1;
                    let mut split = pieces(&p, &text[..cut]);
                    split.extend(pieces(&p, &text[cut..]));
                    assert_eq!(whole, split, "cut at {cut} in {pat}");
                }
            }
        }
        assert!(found >= 12);
    }

    /// Every cut the rule allows, in every string of up to 5 characters over a set that holds
    /// each class the rule looks at (letters and digits of several scripts, CR, LF, other
    /// whitespace, punctuation, a combining mark), and in longer pseudo-random strings.
    #[test]
    fn independent_cuts_hold_for_every_script_and_line_ending() {
        let alphabet = [
            "a", "Я", "1", "٣", "世", ".", "'", " ", "\n", "\r", "\t", "\u{a0}", "\u{2028}",
            "\u{301}",
        ];
        let check = |p: &Pretokenizer, text: &str| -> usize {
            let whole = pieces(p, text);
            let mut n = 0;
            for cut in 1..text.len() {
                if text.is_char_boundary(cut)
                    && is_independent_cut(p.preset().unwrap(), text.as_bytes(), cut)
                {
                    n += 1;
                    let mut split = pieces(p, &text[..cut]);
                    split.extend(pieces(p, &text[cut..]));
                    assert_eq!(whole, split, "cut at {cut} of {text:?} in {:?}", p.preset());
                }
            }
            n
        };
        for (_, pat) in PRESETS.iter().chain(&[("llama3", LLAMA3)]) {
            let p = Pretokenizer::new(Some(pat)).unwrap();
            let mut cuts = 0;
            let k = alphabet.len();
            for len in 1..=5u32 {
                for mut code in 0..k.pow(len) {
                    let mut text = String::new();
                    for _ in 0..len {
                        text.push_str(alphabet[code % k]);
                        code /= k;
                    }
                    cuts += check(&p, &text);
                }
            }
            assert!(cuts > 1000, "{cuts} cuts for {pat}");
            let mut seed = 0x9E37_79B9_7F4A_7C15u64;
            for _ in 0..3000 {
                let mut text = String::new();
                for _ in 0..24 {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    text.push_str(alphabet[(seed % k as u64) as usize]);
                }
                check(&p, &text);
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // Differential tests: the scanners against fancy-regex running the preset patterns.

    struct Pair {
        name: &'static str,
        scanner: Pretokenizer,
        regex: fancy_regex::Regex,
    }

    /// The presets, and Llama 3's pattern (run by a scanner of its own).
    fn pairs() -> Vec<Pair> {
        PRESETS
            .iter()
            .chain(&[("llama3", LLAMA3)])
            .map(|&(name, pat)| Pair {
                name,
                scanner: Pretokenizer::new(Some(pat)).unwrap(),
                regex: compile(pat).unwrap(),
            })
            .collect()
    }

    fn regex_pieces<'t>(re: &fancy_regex::Regex, text: &'t str) -> Vec<&'t str> {
        re.find_iter(text).map(|m| m.unwrap().as_str()).collect()
    }

    fn check(pair: &Pair, text: &str) {
        let want = regex_pieces(&pair.regex, text);
        let got = pieces(&pair.scanner, text);
        assert_eq!(
            got, want,
            "{} differs from the regex on {text:?}",
            pair.name
        );
    }

    const TRICKY: &[&str] = &[
        "",
        "'",
        "''",
        "a'",
        " '",
        "'s 'S 'd 'D 'm 'M 't 'T 'll 'LL 'lL 'Ll 've 'VE 'vE 're 'RE 'Re",
        "it's I'M we'LL you'Ve they'RE she'D don'T",
        "'sup 'llama 'velvet 'really 'dog 'x ''s '''ll",
        "\u{17F} '\u{17F} don'\u{17F} D'\u{17F}ALL '\u{212A} 'K",
        "HELLO'S Hello's hello'S HELLO'll CamelCase's camelCase's",
        "1 12 123 1234 12345 123456 1234567 12345678 123456789 1234567890",
        " 1 12 123 1234 a1234b 3.14159 1,000,000 v2.0",
        "\u{661}\u{662}\u{663}\u{664} \u{B2}\u{B3} \u{2160}\u{216B} \u{FF11}\u{FF12}\u{FF13}\u{FF14} \u{1D7CF}\u{1D7D0}",
        "a  b   c    d",
        "a \n b \n\n c  \n  d\n",
        "end with spaces   ",
        "end with newline\n",
        "end with newlines\n\n\n",
        "ends \n \n ",
        "  leading",
        "\n\nleading newlines",
        "\r\n\r\nwindows\r\nlines\r\n",
        "mixed \r\n \n\r \r  \n\t\n x",
        "\tTab\t\tindent\t \tx\t",
        "no\u{A0}break\u{A0}\u{A0}space \u{A0}x \u{3000}\u{3000}ideographic\u{3000}",
        "\u{2028}line\u{2029}para\u{85}nel\u{B}vt\u{C}ff",
        "\u{1C}\u{1D}\u{1E}\u{1F} file separators \u{1C}x",
        "\u{200B}zero\u{200B}width \u{FEFF}bom \u{AD}soft\u{AD}hyphen",
        "Hello, world! How's it going? (Fine.) \"Quotes\" and 'single' quotes...",
        "punct.\n\npunct!\r\n?\n/path/to/file.txt\n//comment\n./run.sh\n",
        "a/b a//b ./ ../ .\n/ !\n\n// x\r\n/\n",
        "--- *** ### @@@ $$$ %%% ^^^ &&& ___ +++ === ~~~ ``` |||",
        " ... !!! ???\n  .\n",
        "\u{4F60}\u{597D}\u{4E16}\u{754C} \u{4F60}\u{597D}\u{FF0C}\u{4E16}\u{754C}\u{3002}",
        "\u{3053}\u{3093}\u{306B}\u{3061}\u{306F} \u{30AB}\u{30BF}\u{30AB}\u{30CA} \u{D55C}\u{AD6D}\u{C5B4}",
        "\u{645}\u{631}\u{62D}\u{628}\u{627} \u{628}\u{650}\u{633}\u{652}\u{645}\u{650} \u{627}\u{644}\u{644}\u{651}\u{647}\u{650}",
        "\u{928}\u{92E}\u{938}\u{94D}\u{924}\u{947} \u{939}\u{93F}\u{902}\u{926}\u{940} \u{915}\u{94D}\u{937}",
        "\u{E2A}\u{E27}\u{E31}\u{E2A}\u{E14}\u{E35} \u{5E9}\u{5B8}\u{5C1}\u{5DC}\u{5D5}\u{5B9}\u{5DD}",
        "e\u{301}te\u{301} E\u{301}TE\u{301} \u{301}A \u{301}a \u{301} \u{301}\u{301}x .\u{301}A x\u{301}Y",
        "\u{1F44D} \u{1F44D}\u{1F3FD} \u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467} \u{2764}\u{FE0F} a\u{1F600}b",
        "\u{1C5}ungla \u{1C4}UNGLA \u{1C6}ungla \u{2B0}\u{2B1}x A\u{2B0}B a\u{2B0}B \u{2B0}A",
        "\u{3A3}\u{3C3}\u{3C2} \u{39F}\u{394}\u{3A5}\u{3A3}\u{3A3}\u{395}\u{399}\u{391} \u{41F}\u{440}\u{438}\u{432}\u{435}\u{442}",
        "\u{1D400}\u{1D401}\u{1D41A} stra\u{DF}e STRASSE \u{130}stanbul",
        "\u{E000}\u{F8FF} \u{10FFFF} \u{FFFD} \u{1}\u{7F}\u{0}",
        "x'\nx\n'\n'\r\n' '",
        "HTTPServer's XMLHttpRequest getHTTPResponseCode IPv6 iOS macOS",
        "fn main() {\n    println!(\"{}\", x);\n}\n",
        "def f(x):\n\treturn x  # comment\n\n\n",
    ];

    #[test]
    fn scanners_equal_regex_on_tricky_strings() {
        let pairs = pairs();
        for pair in &pairs {
            for text in TRICKY {
                check(pair, text);
                // The same text after a letter, a space and a digit, and with a tail.
                for (before, after) in [("a", ""), (" ", ""), ("1", ""), ("", " x"), ("", "\n")] {
                    check(pair, &format!("{before}{text}{after}"));
                }
            }
            // Whitespace runs of every length, before letters, digits, punctuation and the end.
            for unit in [" ", "\n", "\t", "\r\n", "\u{A0}", " \n", "\n "] {
                for len in 1..6 {
                    let run = unit.repeat(len);
                    for tail in ["", "x", "X", "1", ".", "'s", "\u{4E2D}", "\u{301}"] {
                        check(pair, &format!("{run}{tail}"));
                        check(pair, &format!("a{run}{tail}"));
                    }
                }
            }
            // Long runs of one character, alone and after a space.
            for c in [
                " ", "\n", "\r\n", "a", "A", "1", ".", "'", "\u{4E2D}", "\u{301}", "\u{A0}",
            ] {
                let run = c.repeat(1000);
                check(pair, &run);
                check(pair, &format!(" {run}x"));
            }
            // Digit runs of length 1..10, in several scripts.
            for digit in ["7", "\u{663}", "\u{B2}", "\u{1D7D0}"] {
                for len in 1..=10 {
                    check(pair, &digit.repeat(len));
                    check(pair, &format!(" {}a", digit.repeat(len)));
                }
            }
        }
    }

    /// Long whitespace runs, which `ws_run` walks 64 and 16 bytes at a time past their first
    /// 16: lengths around the blocks' edges, one newline at every place of a run of spaces, and
    /// runs that mix in the other whitespace (ASCII and not), before every kind of tail.
    #[test]
    fn long_whitespace_runs_equal_regex() {
        let pairs = pairs();
        let mut rng = crate::unigram::sample::Rng::new(0x5eed_0019);
        let units = [
            " ", "\n", "\t", "\r", "\u{B}", "\u{C}", "\u{A0}", "\u{3000}", "\u{85}", "\r\n",
        ];
        let lengths = (14..=52).chain([79, 80, 81, 95, 143, 144, 145, 208]);
        for pair in &pairs {
            for len in lengths.clone() {
                // A newline just past the run's end, inside the block that ends it.
                for tail in ["", "x", ".", "1", "\u{4E2D}", "\u{301}", "x\n", ".\r "] {
                    for unit in [" ", "\n", "\t", "\u{B}"] {
                        check(pair, &format!("a{}{tail}", unit.repeat(len)));
                    }
                    let mut run = String::new();
                    while run.len() < len {
                        let r = rng.next_u64();
                        run.push_str(match r % 4 {
                            0 => units[(r >> 8) as usize % units.len()],
                            _ => " ",
                        });
                    }
                    check(pair, &format!("{run}{tail}"));
                    check(pair, &format!("a{run}{tail}"));
                }
                for at in 0..len {
                    let mut run = vec![b' '; len];
                    run[at] = b'\n';
                    let run = String::from_utf8(run).unwrap();
                    check(pair, &format!("{run}x"));
                    check(pair, &format!("x{run}"));
                }
            }
        }
    }

    /// Characters standing for the classes the patterns distinguish.
    const REPRESENTATIVES: &[char] = &[
        ' ',
        '\n',
        '\r',
        '\t',
        '\'',
        '/',
        '.',
        's',
        'l',
        'e',
        'A',
        'S',
        '1',
        '\u{A0}',
        '\u{17F}',
        '\u{301}',
        '\u{1C5}',
        '\u{2B0}',
        '\u{4E2D}',
        '\u{B2}',
        '\u{1F600}',
    ];

    #[test]
    fn scanners_equal_regex_on_all_short_strings() {
        let pairs = pairs();
        let reps = REPRESENTATIVES;
        let mut text = String::new();
        for pair in &pairs {
            for &a in reps {
                for &b in reps {
                    for &c in reps {
                        text.clear();
                        text.extend([a, b, c]);
                        check(pair, &text);
                    }
                    text.clear();
                    text.extend([a, b]);
                    check(pair, &text);
                }
            }
        }
    }

    /// xorshift64*: deterministic pseudo-random numbers for the tests.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// Fragments of text mixing every class the patterns care about.
    const ATOMS: &[&str] = &[
        "a",
        "e",
        "s",
        "t",
        "l",
        "hello",
        "Word",
        "WORD",
        "x",
        "S",
        "T",
        "L",
        "E",
        "R",
        "V",
        "D",
        "M",
        "\u{17F}",
        "\u{E9}",
        "\u{C9}",
        "\u{DF}",
        "\u{3C3}",
        "\u{3A3}",
        "\u{1C5}",
        "\u{2B0}",
        "\u{4F60}",
        "\u{597D}",
        "\u{3053}",
        "\u{D55C}",
        "\u{645}",
        "\u{650}",
        "\u{928}",
        "\u{94D}",
        "\u{93F}",
        "\u{301}",
        "\u{FE0F}",
        "\u{200D}",
        "\u{1F44D}",
        "\u{1F3FD}",
        "\u{1F468}",
        "\u{1D400}",
        "0",
        "1",
        "42",
        "\u{663}",
        "\u{B2}",
        "\u{2160}",
        "\u{1D7D0}",
        " ",
        " ",
        " ",
        "  ",
        "\n",
        "\n",
        "\r",
        "\r\n",
        "\t",
        "\u{A0}",
        "\u{3000}",
        "\u{2028}",
        "\u{85}",
        "\u{B}",
        "\u{C}",
        "\u{1C}",
        "\u{200B}",
        "'",
        "'",
        "'s",
        "'S",
        "'ll",
        "'LL",
        "'re",
        "'Ve",
        "'d",
        "'M",
        "'t",
        ".",
        ",",
        "!",
        "?",
        "/",
        "//",
        "-",
        "_",
        "\"",
        "(",
        ")",
        "#",
        "*",
        "\u{2019}",
        "\u{FF0C}",
        "\u{3002}",
        "\u{AD}",
        "\u{0}",
        "\u{7F}",
        "\u{E000}",
    ];

    fn random_text(rng: &mut Rng, atoms: &[&str], max_atoms: usize) -> String {
        let len = 1 + rng.below(max_atoms);
        (0..len).map(|_| atoms[rng.below(atoms.len())]).collect()
    }

    #[test]
    fn scanners_equal_regex_on_random_strings() {
        let pairs = pairs();
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        // A narrower alphabet makes long whitespace, newline and apostrophe runs likely.
        let narrow: &[&str] = &[
            " ", " ", "\n", "\r", "\t", "'", "s", "A", "b", "1", ".", "/", "\u{301}",
        ];
        for _ in 0..2000 {
            let wide = random_text(&mut rng, ATOMS, 30);
            let dense = random_text(&mut rng, narrow, 16);
            for pair in &pairs {
                check(pair, &wide);
                check(pair, &dense);
            }
        }
    }

    /// o200k's `O+[\r\n/]*` takes a `/` after the newline (found by the Python property test
    /// of chunking: `:\n/` is one piece); cl100k ends the piece at the newline.
    #[test]
    fn no_o200k_cut_before_a_slash_after_a_newline() {
        assert!(!is_independent_cut(Preset::O200k, b":\n/", 2));
        assert!(is_independent_cut(Preset::O200k, b":\nx", 2));
        assert!(is_independent_cut(Preset::Gpt4, b":\n/", 2));
        for pair in pairs() {
            let preset = pair.scanner.preset().unwrap();
            for text in [":\n/", "a.\n/b", "x:\r\n/x", "x\n/"] {
                let whole = pieces(&pair.scanner, text);
                for cut in 1..text.len() {
                    if is_independent_cut(preset, text.as_bytes(), cut) {
                        let mut split = pieces(&pair.scanner, &text[..cut]);
                        split.extend(pieces(&pair.scanner, &text[cut..]));
                        assert_eq!(split, whole, "{} {text:?} at {cut}", pair.name);
                    }
                }
            }
        }
    }

    /// The ASCII fast paths: lowercase runs of every length around the 8-byte
    /// steps of `lower_run`, next to non-ASCII letters, marks and digits that continue or end
    /// them, contractions, digits and punctuation; and the byte-level walk the encoder uses
    /// gives the same pieces as the `str` one.
    #[test]
    fn ascii_fast_paths_equal_regex() {
        let pairs = pairs();
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        let atoms: &[&str] = &[
            " ",
            " ",
            "\n",
            "\r\n",
            "\t",
            "'",
            "'s",
            "'LL",
            "\u{17F}",
            ".",
            ",",
            "/",
            "(",
            "1",
            "23",
            "456",
            "A",
            "Q",
            "\u{C9}",
            "\u{E9}",
            "\u{301}",
            "\u{416}",
            "\u{436}",
            "\u{663}",
            "\u{4F60}",
            "\u{1F600}",
            "\u{A0}",
            "\u{2028}",
        ];
        let letters = |rng: &mut Rng, n: usize| -> String {
            (0..n)
                .map(|_| (b'a' + rng.below(26) as u8) as char)
                .collect()
        };
        for _ in 0..3000 {
            let mut text = String::new();
            for _ in 0..1 + rng.below(12) {
                if rng.below(2) == 0 {
                    let n = 1 + rng.below(20);
                    text.push_str(&letters(&mut rng, n));
                } else {
                    text.push_str(atoms[rng.below(atoms.len())]);
                }
            }
            for pair in &pairs {
                check(pair, &text);
                let mut bytes = Vec::new();
                let _ = pair.scanner.try_for_each_piece_bytes(&text, |p| {
                    bytes.push(p);
                    ControlFlow::<()>::Continue(())
                });
                let strs: Vec<&[u8]> = pieces(&pair.scanner, &text)
                    .iter()
                    .map(|p| p.as_bytes())
                    .collect();
                assert_eq!(bytes, strs, "{} on {text:?}", pair.name);
            }
        }
        for n in 0..=40 {
            let word = "x".repeat(n);
            for edge in ["", ".", "\u{E9}", "\u{301}", "A", "'s", "1", "\n"] {
                for text in [
                    format!("{word}{edge}"),
                    format!(" {word}{edge}"),
                    format!("Q{word}{edge}"),
                ] {
                    for pair in &pairs {
                        check(pair, &text);
                    }
                }
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // The Unicode tables: generated from, and checked against, regex-syntax.

    /// The class bits of every code point (surrogates: 0), from regex-syntax parsing the same
    /// sub-expressions the patterns contain.
    fn reference_classes() -> Vec<u8> {
        use regex_syntax::hir::{Class, HirKind};
        let mut classes = vec![0u8; 0x11_0000];
        let sets = [
            (L, r"\p{L}"),
            (N, r"\p{N}"),
            (WS, r"\s"),
            (UP, r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"),
            (LOW, r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"),
            (OTHER, r"[^\s\p{L}\p{N}]"),
            (PRE, r"[^\r\n\p{L}\p{N}]"),
            (NL, r"[\r\n]"),
        ];
        for (bit, expr) in sets {
            let hir = regex_syntax::Parser::new().parse(expr).unwrap();
            let HirKind::Class(Class::Unicode(class)) = hir.kind() else {
                panic!("{expr} is not a Unicode class")
            };
            for r in class.ranges() {
                for cp in r.start() as u32..=r.end() as u32 {
                    classes[cp as usize] |= bit;
                }
            }
        }
        classes
    }

    #[test]
    fn unicode_tables_match_regex_syntax() {
        let want = reference_classes();
        for cp in 0..0x11_0000u32 {
            let Some(c) = char::from_u32(cp) else {
                continue;
            };
            let mut buf = [0u8; 4];
            let (got, len) = class_at(c.encode_utf8(&mut buf).as_bytes(), 0);
            assert_eq!(len, c.len_utf8());
            assert_eq!(
                got, want[cp as usize],
                "U+{cp:04X}: unicode_tables.rs is stale; regenerate it (see the top of pretok.rs)"
            );
        }
    }

    #[test]
    fn contraction_letters_fold_as_in_regex_syntax() {
        use regex_syntax::hir::{Class, HirKind};
        for letter in "sdmtlver".chars() {
            let hir = regex_syntax::Parser::new()
                .parse(&format!("(?i){letter}"))
                .unwrap();
            let HirKind::Class(Class::Unicode(class)) = hir.kind() else {
                panic!()
            };
            let folded: Vec<char> = class
                .ranges()
                .iter()
                .flat_map(|r| r.start()..=r.end())
                .collect();
            let mut want = vec![letter.to_ascii_uppercase(), letter];
            if letter == 's' {
                want.push('\u{17F}');
            }
            assert_eq!(folded, want, "case folding of {letter:?}");
        }
    }

    /// Renders `unicode_tables.rs`: an ASCII table plus a two-level table, with the block size
    /// that makes the two levels smallest while block numbers still fit in a byte.
    fn render_tables() -> String {
        use std::fmt::Write;
        let classes = reference_classes();
        let mut best: Option<(usize, u32, Vec<u8>, Vec<u8>)> = None;
        for shift in 4..=10u32 {
            let mut blocks: Vec<u8> = Vec::new();
            let mut seen = std::collections::HashMap::new();
            let mut index = Vec::new();
            for chunk in classes.chunks(1 << shift) {
                let next = seen.len();
                let id = *seen.entry(chunk).or_insert_with(|| {
                    blocks.extend_from_slice(chunk);
                    next
                });
                index.push(id);
            }
            if seen.len() > 256 {
                continue;
            }
            let total = index.len() + blocks.len();
            if best.as_ref().is_none_or(|b| total < b.0) {
                let index = index.into_iter().map(|i| i as u8).collect();
                best = Some((total, shift, index, blocks));
            }
        }
        let (_, shift, index, blocks) = best.unwrap();
        let array = |out: &mut String, name: &str, data: &[u8]| {
            writeln!(out, "pub static {name}: [u8; {}] = [", data.len()).unwrap();
            for line in data.chunks(24) {
                let items: Vec<String> = line.iter().map(u8::to_string).collect();
                writeln!(out, "    {},", items.join(", ")).unwrap();
            }
            writeln!(out, "];").unwrap();
        };
        let mut out = String::new();
        out.push_str(concat!(
            "// @generated by `BYTEPAIR_REGEN_TABLES=1 cargo test regenerate_unicode_tables -- ",
            "--ignored`\n",
            "// from regex-syntax's Unicode data; do not edit. See the top of pretok.rs.\n",
            "//\n",
            r"// One byte of class bits per code point: L=1 \p{L}, N=2 \p{N}, WS=4 \s,",
            "\n",
            r"// UP=8 [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}], LOW=16 [\p{Ll}\p{Lm}\p{Lo}\p{M}],",
            "\n",
            r"// OTHER=32 [^\s\p{L}\p{N}], PRE=64 [^\r\n\p{L}\p{N}], NL=128 [\r\n].",
            "\n",
            "// class(cp) = BLOCKS[INDEX[cp >> SHIFT] << SHIFT | cp & ((1 << SHIFT) - 1)];\n",
            "// ASCII repeats the first 128 entries, for the fast path.\n\n",
        ));
        writeln!(out, "pub const SHIFT: u32 = {shift};\n").unwrap();
        array(&mut out, "ASCII", &classes[..128]);
        out.push('\n');
        array(&mut out, "INDEX", &index);
        out.push('\n');
        array(&mut out, "BLOCKS", &blocks);
        out
    }

    #[test]
    #[ignore = "writes src/text/unicode_tables.rs when BYTEPAIR_REGEN_TABLES=1"]
    fn regenerate_unicode_tables() {
        if std::env::var_os("BYTEPAIR_REGEN_TABLES").is_none() {
            return;
        }
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/text/unicode_tables.rs");
        std::fs::write(path, render_tables()).unwrap();
    }

    #[test]
    fn unicode_tables_are_rendered_as_committed() {
        // Catches hand edits and renderer changes; the per-code-point test says what differs.
        let committed = include_str!("unicode_tables.rs");
        assert!(
            committed == render_tables(),
            "unicode_tables.rs is stale; regenerate it"
        );
    }

    // -----------------------------------------------------------------------------------------
    // Manual runs, in release mode:
    //   cargo test --release --lib pretok::tests::stress -- --ignored --nocapture
    //   cargo test --release --lib pretok::tests::bench -- --ignored --nocapture
    // BYTEPAIR_PRETOK_CASES sets the number of stress cases; BYTEPAIR_BENCH_FILE names a UTF-8
    // text file to benchmark on (for example a copy of tinyshakespeare.txt) instead of the
    // generated text.

    #[test]
    #[ignore = "long; run manually in release mode"]
    fn stress_scanners_against_regex() {
        let cases: usize =
            std::env::var("BYTEPAIR_PRETOK_CASES").map_or(200_000, |v| v.parse().unwrap());
        let pairs = pairs();
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        for _ in 0..cases {
            let text = random_text(&mut rng, ATOMS, 200);
            for pair in &pairs {
                check(pair, &text);
            }
        }
    }

    /// About `bytes` of English-like text: words, capitals, contractions, numbers, punctuation,
    /// line breaks and indentation, with a little non-ASCII.
    fn english_like(bytes: usize) -> String {
        const WORDS: &[&str] = &[
            "the",
            "of",
            "and",
            "to",
            "in",
            "a",
            "is",
            "that",
            "for",
            "it",
            "as",
            "was",
            "with",
            "be",
            "by",
            "on",
            "not",
            "he",
            "I",
            "this",
            "are",
            "or",
            "his",
            "from",
            "at",
            "which",
            "but",
            "have",
            "an",
            "had",
            "they",
            "you",
            "were",
            "their",
            "one",
            "all",
            "we",
            "can",
            "her",
            "has",
            "there",
            "been",
            "if",
            "more",
            "when",
            "will",
            "would",
            "who",
            "so",
            "tokenizer",
            "language",
            "model",
            "training",
            "encoding",
            "merges",
            "vocabulary",
            "Shakespeare",
            "London",
            "don't",
            "it's",
            "we'll",
            "they're",
            "I've",
            "café",
            "naïve",
            "2024",
            "3.14",
            "100",
            "1,000,000",
        ];
        let mut rng = Rng(0x1234_5678_9ABC_DEF1);
        let mut text = String::with_capacity(bytes + 64);
        let mut sentence_start = true;
        while text.len() < bytes {
            let word = WORDS[rng.below(WORDS.len())];
            if sentence_start {
                let mut chars = word.chars();
                let first = chars.next().unwrap();
                text.extend(first.to_uppercase());
                text.push_str(chars.as_str());
            } else {
                text.push_str(word);
            }
            sentence_start = false;
            match rng.below(40) {
                0..=2 => text.push_str(", "),
                3 | 4 => {
                    text.push_str(". ");
                    sentence_start = true;
                }
                5 => {
                    text.push_str(".\n");
                    sentence_start = true;
                }
                6 => {
                    text.push_str("!\n\n");
                    sentence_start = true;
                }
                7 => text.push_str(" (see \"notes\") "),
                8 => text.push_str(":\n    "),
                _ => text.push(' '),
            }
        }
        text
    }

    #[test]
    #[ignore = "a benchmark; run manually in release mode"]
    fn bench_scanners_against_regex() {
        use std::time::Instant;
        let (label, text) = match std::env::var("BYTEPAIR_BENCH_FILE") {
            Ok(path) => (path.clone(), std::fs::read_to_string(path).unwrap()),
            Err(_) => (
                "generated English-like text".to_string(),
                english_like(4 << 20),
            ),
        };
        let mb = text.len() as f64 / 1e6;
        println!("{label}: {mb:.2} MB");
        for pair in pairs() {
            let best_of = |f: &dyn Fn() -> usize| {
                // The best of at least 5 runs and half a second: the machine may be shared.
                let (mut best, mut count, mut runs) = (f64::INFINITY, 0, 0);
                let begin = Instant::now();
                while runs < 5 || begin.elapsed().as_secs_f64() < 0.5 {
                    let start = Instant::now();
                    count = f();
                    best = best.min(start.elapsed().as_secs_f64());
                    runs += 1;
                }
                (mb / best, count)
            };
            let (scan_rate, scan_count) = best_of(&|| {
                let mut n = 0;
                pair.scanner.for_each_piece(&text, |_| n += 1).unwrap();
                n
            });
            let (regex_rate, regex_count) =
                best_of(&|| pair.regex.find_iter(&text).filter(|m| m.is_ok()).count());
            assert_eq!(scan_count, regex_count);
            assert_eq!(
                pieces(&pair.scanner, &text),
                regex_pieces(&pair.regex, &text)
            );
            println!(
                "{:>6}: scanner {scan_rate:8.1} MB/s, fancy-regex {regex_rate:6.1} MB/s, {:5.1}x \
                 ({scan_count} pieces)",
                pair.name,
                scan_rate / regex_rate
            );
        }
    }
}
