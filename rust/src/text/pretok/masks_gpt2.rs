//! GPT-2's piece boundaries (r50k_base, gpt2: the encoding nanoGPT and llm.c prepare their data
//! with) found 64 bytes at a time with the bit masks of `masks.rs`, for the encoder's warm path.
//!
//! The pattern is `'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s`.
//! It has no look-behind, so from a piece start the window is split as if the text began there
//! (as for o200k and cl100k). With ASCII only, its pieces are (O: not whitespace, a letter or a
//! digit; `'` is an O):
//! - a letter, a digit or an O starts a piece unless the byte before is of the same class (the
//!   possessive run: letters of either case, digits of any number, O of any kind) or a space (the
//!   ` ?` prefix: a space before a non-space always starts a piece, whatever run it ends);
//! - a whitespace run starts a piece, and so does its last byte when two or more precede a
//!   non-space (`\s+(?!\S)` gives the last one back; `\s++$` takes a run that ends the text);
//! - an apostrophe that starts a piece (after a letter, a digit or whitespace other than a space)
//!   followed by `s|d|m|t|ll|ve|re`, lowercase only, is a piece of its own: its letters start no
//!   piece, and a letter after it does. An apostrophe after a space or an O is part of an O run
//!   and never a contraction; no piece is attached to the word before it.
//!
//! Only non-ASCII bytes stop a window. Each decision needs at most one byte of look-ahead (a
//! whitespace run's last byte, the second letter of `'ll`, `'ve`, `'re`), so the starts before
//! the window's last byte are handed out; a whitespace run touching the window's end needs no
//! more, since none of its bytes but its first and its last can start a piece.

use std::ops::ControlFlow;

use super::{classify, drive, low_bits};

/// The length of GPT-2's contraction after the apostrophe at `p` of `w[..n]`, 0 if none
/// (case-sensitive, unlike cl100k's and o200k's).
#[inline]
fn contraction(w: &[u8; 64], n: usize, p: usize) -> usize {
    let at = |k: usize| if k < n { w[k] } else { 0 };
    match (at(p + 1), at(p + 2)) {
        (b's' | b'd' | b'm' | b't', _) => 1,
        (b'r' | b'v', b'e') | (b'l', b'l') => 2,
        _ => 0,
    }
}

/// The pieces of the window `w[..n]` that starts at a piece start, as `masks::window` gives
/// them for o200k and cl100k.
#[inline(always)]
fn window(w: &[u8; 64], n: usize, ends_text: bool) -> (u64, bool) {
    let c = classify::<false>(w);
    let cut = (c.high.trailing_zeros() as usize).min(n);
    let valid = low_bits(cut);
    let letter = c.letter & valid;
    let digit = c.digit & valid;
    let space = c.space & valid;
    let ws = c.ws & valid;
    let other = valid & !(letter | digit | ws);
    let solid = valid & !ws;

    let mut starts = (letter & !((letter | space) << 1))
        | (digit & !((digit | space) << 1))
        | (other & !((other | space) << 1))
        | (ws & !(ws << 1))
        | (ws & (solid >> 1));

    // Contractions: an apostrophe that starts a piece (an O that starts one).
    let mut q = c.quote & starts;
    while q != 0 {
        let p = q.trailing_zeros() as usize;
        q &= q - 1;
        let k = contraction(w, cut, p);
        if k > 0 {
            starts &= !(low_bits(p + k + 1) & !low_bits(p + 1));
            if p + k + 1 < 64 {
                starts |= letter & (1 << (p + k + 1));
            }
        }
    }

    if ends_text && cut == n {
        return (starts & !1, true);
    }
    (starts & low_bits(cut.saturating_sub(1)) & !1, false)
}

/// Calls `f` with the GPT-2 pieces of `b`; `scalar(b, i)` is the end of the piece at `i`, for
/// the pieces the masks do not decide.
#[inline(always)]
pub(in crate::text::pretok) fn scan<'t, B>(
    b: &'t [u8],
    f: impl FnMut(&'t [u8]) -> ControlFlow<B>,
    scalar: impl Fn(&[u8], usize) -> usize,
) -> ControlFlow<B> {
    drive(b, f, scalar, window)
}
