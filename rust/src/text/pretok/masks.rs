//! o200k and cl100k piece boundaries found 64 bytes at a time with bit masks, for the encoder's
//! warm path. The rules below are o200k's; `scan` says where cl100k's differ; GPT-2's (r50k
//! and gpt2) are in `masks_gpt2.rs`, over the same classes and the same walk (`drive`).
//!
//! From a byte `i` where a piece is known to start, the next 64 bytes are classified (AVX2 or SSE2)
//! into one `u64` mask per class (bit k: byte `i + k`), and the positions where pieces start are
//! computed from the masks for the whole window at once; pieces are handed out with
//! `trailing_zeros` over that mask. The per-piece branches of the scalar scanner (which kind of
//! piece starts here, where its run ends) become one loop exit per window.
//!
//! The pattern has no look-behind, so the pieces of `text[i..]` from a piece start `i` are the
//! pieces of the whole text from there on: the window is split as if the text began at `i`.
//! Only pure ASCII is decided here. With ASCII only, o200k's pieces are (P: not `\r`, `\n`, a
//! letter or a digit; O: not whitespace, a letter or a digit; `spt`: whitespace other than
//! `\r\n`):
//! - a letter starts a piece unless it follows a letter (then only an uppercase one after a
//!   lowercase one starts: `U*L*`), or follows a P that itself starts a piece (the prefix);
//! - a space before a non-space always starts a piece (the `' '?` of an O run, the prefix of a
//!   word, or the last character of a whitespace run that `\s+(?!\S)` leaves over);
//! - an O starts a piece unless it follows an O (the `O+` run) or a space (` ?O+`); the
//!   `[\r\n]` run right after an O run belongs to it;
//! - digits go three at a time from the start of their run;
//! - a whitespace run starts a piece; in it, the first `spt` after its `\r\n` part and the
//!   last `spt` before a non-space (when another `spt` precedes it) start pieces;
//! - `'` + `s|t|m|d|re|ve|ll` (any case) after a letter belongs to the word, and the letter
//!   after it starts a piece.
//!
//! A window stops (the scalar scanner takes over for one piece) at the first byte these rules
//! do not cover: a non-ASCII byte, a `/` after `\r\n` (part of an O run's tail), `\r\n` after
//! `spt` (`\s*[\r\n]+` then needs the run's last newline), and an apostrophe after a letter
//! that follows an apostrophe two or three bytes back (chained contractions). Decisions need
//! at most two bytes of look-ahead, except in whitespace runs, so only the starts before the
//! last two bytes and before a whitespace run touching the window's end are handed out.
//!
//! The tests compare this with the scalar scanner and with the regex on random text over a
//! boundary-rich alphabet, at every offset of the window.
//!
//! What was measured and tried (GPT-2's windows among them): `text/NOTES.md`.

use std::ops::ControlFlow;

// GPT-2's rules over the same windows.
#[path = "masks_gpt2.rs"]
mod gpt2;
pub(super) use gpt2::scan as scan_gpt2;

/// The bytes of a window: classes as masks (bit k: byte k of the window). `classify::<true>`
/// fills all of them but `letter`; `classify::<false>` (GPT-2's, which tells neither case nor
/// newlines apart) only `letter`, `digit`, `space`, `ws`, `quote` and `high`.
#[derive(Default, Clone, Copy)]
struct Classes {
    letter: u64,
    lower: u64,
    upper: u64,
    digit: u64,
    space: u64,
    ws: u64,
    nl: u64,
    quote: u64,
    slash: u64,
    high: u64,
}

/// The classes of a window: AVX2 where the CPU has it (half the instructions of SSE2), else
/// SSE2 (part of every x86_64). `ALL`: every class, else GPT-2's (see `Classes`).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn classify<const ALL: bool>(w: &[u8; 64]) -> Classes {
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        unsafe { classify_avx2::<ALL>(w) }
    } else {
        classify_sse2::<ALL>(w)
    }
}

/// The body of `classify_avx2` and `classify_sse2`: the classes of the 64 bytes at `$w`, from
/// vectors of `$lanes` bytes with that width's intrinsics (`$gt` a signed greater-than).
#[cfg(target_arch = "x86_64")]
macro_rules! classify_lanes {
    ($w:expr, $all:expr, $lanes:literal, $vec:ty, $load:ident, $add:ident, $set1:ident,
     $gt:ident, $eq:ident, $or:ident, $movemask:ident) => {
        // SAFETY: the caller has the instructions (SSE2 is part of every x86_64, AVX2 is
        // checked before `classify_avx2` is called); the loads are unaligned loads of `$lanes`
        // bytes inside the 64 of `$w`.
        unsafe {
            let mut c = Classes::default();
            for k in 0..64 / $lanes {
                let v = $load($w.as_ptr().add($lanes * k) as *const $vec);
                // Unsigned `lo <= x < lo + len`: shift the range to start at -128, compare signed.
                let range = |x: $vec, lo: u8, len: u8| {
                    let x = $add(x, $set1(0x80u8.wrapping_sub(lo) as i8));
                    $gt($set1((0x80u8 + len) as i8), x)
                };
                let eq = |b: u8| $eq(v, $set1(b as i8));
                let bits = |m: $vec| ($movemask(m) as u32 as u64) << ($lanes * k);
                let space = eq(b' ');
                if $all {
                    c.lower |= bits(range(v, b'a', 26));
                    c.upper |= bits(range(v, b'A', 26));
                    c.nl |= bits($or(eq(b'\n'), eq(b'\r')));
                    c.slash |= bits(eq(b'/'));
                } else {
                    // `x | 0x20` is a lowercase letter for exactly the ASCII letters.
                    let folded = $or(v, $set1(0x20));
                    c.letter |= bits(range(folded, b'a', 26));
                }
                c.digit |= bits(range(v, b'0', 10));
                c.space |= bits(space);
                c.ws |= bits($or(space, range(v, 9, 5)));
                c.quote |= bits(eq(b'\''));
                c.high |= bits(v);
            }
            c
        }
    };
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn classify_avx2<const ALL: bool>(w: &[u8; 64]) -> Classes {
    use std::arch::x86_64::*;
    classify_lanes!(
        w,
        ALL,
        32,
        __m256i,
        _mm256_loadu_si256,
        _mm256_add_epi8,
        _mm256_set1_epi8,
        _mm256_cmpgt_epi8,
        _mm256_cmpeq_epi8,
        _mm256_or_si256,
        _mm256_movemask_epi8
    )
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn classify_sse2<const ALL: bool>(w: &[u8; 64]) -> Classes {
    use std::arch::x86_64::*;
    classify_lanes!(
        w,
        ALL,
        16,
        __m128i,
        _mm_loadu_si128,
        _mm_add_epi8,
        _mm_set1_epi8,
        _mm_cmpgt_epi8,
        _mm_cmpeq_epi8,
        _mm_or_si128,
        _mm_movemask_epi8
    )
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn classify<const ALL: bool>(w: &[u8; 64]) -> Classes {
    let mut c = Classes::default();
    for (k, &x) in w.iter().enumerate() {
        let bit = 1u64 << k;
        let set = |m: &mut u64, yes: bool| *m |= if yes { bit } else { 0 };
        if ALL {
            set(&mut c.lower, x.is_ascii_lowercase());
            set(&mut c.upper, x.is_ascii_uppercase());
            set(&mut c.nl, x == b'\n' || x == b'\r');
            set(&mut c.slash, x == b'/');
        } else {
            set(&mut c.letter, x.is_ascii_alphabetic());
        }
        set(&mut c.digit, x.is_ascii_digit());
        set(&mut c.space, x == b' ');
        set(&mut c.ws, x == b' ' || (9..=13).contains(&x));
        set(&mut c.quote, x == b'\'');
        set(&mut c.high, x >= 0x80);
    }
    c
}

/// The length of the contraction (`s|t|m|d|re|ve|ll`, any case) after the apostrophe at `p` of
/// `w[..n]`, 0 if none.
#[inline]
fn contraction(w: &[u8; 64], n: usize, p: usize) -> usize {
    let at = |k: usize| if k < n { w[k] | 0x20 } else { 0 };
    match (at(p + 1), at(p + 2)) {
        (b's' | b't' | b'm' | b'd', _) => 1,
        (b'r' | b'v', b'e') | (b'l', b'l') => 2,
        _ => 0,
    }
}

/// `(1 << n) - 1` for `n` in 0..=64.
#[inline(always)]
fn low_bits(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// The pieces of the window `w[..n]` that starts at a piece start: the mask of the piece
/// starts after its first byte that can be handed out, and whether the last of them is
/// followed by one more piece ending at `n` (the window ends the text and all of it was
/// decided).
/// `CL100K`: cl100k's rules (see `scan`), else o200k's.
#[inline(always)]
fn window<const CL100K: bool, const TRAIL: bool>(
    w: &[u8; 64],
    n: usize,
    ends_text: bool,
) -> (u64, bool) {
    let c = classify::<true>(w);
    let letter = c.lower | c.upper;
    let spt = c.ws & !c.nl;
    let slash_after_nl = if CL100K { 0 } else { c.slash & (c.nl << 1) };
    let hard = c.high
        | slash_after_nl
        | (c.nl & (spt << 1))
        | (c.quote & (letter << 1) & ((c.quote << 2) | (c.quote << 3)));
    let cut = (hard.trailing_zeros() as usize).min(n);
    let valid = low_bits(cut);
    let (lower, upper, digit, space, ws, nl) = (
        c.lower & valid,
        c.upper & valid,
        c.digit & valid,
        c.space & valid,
        c.ws & valid,
        c.nl & valid,
    );
    let letter = letter & valid;
    let spt = spt & valid;
    let other = valid & !(letter | digit | ws);

    // Letters: after a lowercase letter an uppercase one; after a digit, `\r\n` or nothing;
    // after an O that does not start a piece (so it cannot be a prefix).
    let other_inside = other & ((other | space) << 1);
    let case_change = if CL100K { 0 } else { (lower << 1) & upper };
    let s_letter = letter & (case_change | !((letter | spt | other) << 1) | (other_inside << 1));
    // Digits: three at a time from the start of each run.
    let mut s_digit = digit & !(digit << 1);
    let mut t = s_digit;
    while t != 0 {
        t = (t << 3) & digit & (digit << 1) & (digit << 2);
        s_digit |= t;
    }
    let s_other = other & !((other | space) << 1);
    // Whitespace: the `\r\n` run right after an O belongs to its piece.
    let tail = nl & !nl.wrapping_add(nl & (other << 1));
    let runs = ws & !tail;
    let s_ws = (runs & !(runs << 1))
        | (spt & ((nl & !tail) << 1))
        | (spt & (spt << 1) & ((valid & !ws) >> 1));
    let mut starts = s_letter | s_digit | s_other | s_ws;

    // Contractions: o200k's belong to the word before them, cl100k's are pieces of their own
    // where the apostrophe starts a piece.
    let mut q = if CL100K {
        c.quote & s_other
    } else {
        c.quote & (letter << 1) & valid
    };
    while q != 0 {
        let p = q.trailing_zeros() as usize;
        q &= q - 1;
        let k = contraction(w, cut, p);
        if k > 0 {
            let from = if CL100K { p + 1 } else { p };
            starts &= !(low_bits(p + k + 1) & !low_bits(from));
            if p + k + 1 < 64 {
                starts |= letter & (1 << (p + k + 1));
            }
        }
    }

    if ends_text && cut == n {
        // cl100k: `\s++$` takes the whole whitespace run that ends the text.
        if CL100K && TRAIL && runs >> (n - 1) & 1 != 0 {
            let run_start = 64 - (valid & !runs).leading_zeros() as usize;
            starts &= low_bits(run_start + 1);
        }
        return (starts & !1, true);
    }
    // Trusted: the starts before the last two bytes, and before a whitespace run that
    // touches the end (its pieces depend on what follows).
    let mut limit = cut.saturating_sub(2);
    if cut > 0 && ws & (1 << (cut - 1)) != 0 {
        let before = valid & !ws;
        let run_start = 64 - before.leading_zeros() as usize;
        limit = limit.min(run_start);
    }
    (starts & low_bits(limit) & !1, false)
}

/// Calls `f` with the o200k pieces of `b` (with `CL100K`, cl100k's); `scalar(b, i)` is the end
/// of the piece at `i`, for the pieces the masks do not decide.
///
/// cl100k's rules differ from o200k's in four places: a letter run is one piece whatever the
/// case (`\p{L}++`); a contraction is a piece of its own where its apostrophe starts a piece
/// (not after a space or inside a run of O); an O run takes `[\r\n]*` after it, no `/`; and
/// the whitespace run that ends the text is one piece (`\s++$` comes first).
#[inline(always)]
pub(super) fn scan<'t, const CL100K: bool, B>(
    b: &'t [u8],
    f: impl FnMut(&'t [u8]) -> ControlFlow<B>,
    scalar: impl Fn(&[u8], usize) -> usize,
) -> ControlFlow<B> {
    drive(b, f, scalar, window::<CL100K, CL100K>)
}

/// `scan` with Llama 3's rules: cl100k's, without `\s++$` (`pretok::LLAMA3`).
#[inline(always)]
pub(super) fn scan_llama3<'t, B>(
    b: &'t [u8],
    f: impl FnMut(&'t [u8]) -> ControlFlow<B>,
    scalar: impl Fn(&[u8], usize) -> usize,
) -> ControlFlow<B> {
    drive(b, f, scalar, window::<true, false>)
}

/// The walk over the windows of `b`, for the rules of one preset: `window(w, n, ends_text)`
/// as `window` above, `scalar(b, i)` the end of the piece at `i`.
#[inline(always)]
fn drive<'t, B>(
    b: &'t [u8],
    mut f: impl FnMut(&'t [u8]) -> ControlFlow<B>,
    scalar: impl Fn(&[u8], usize) -> usize,
    window: impl Fn(&[u8; 64], usize, bool) -> (u64, bool),
) -> ControlFlow<B> {
    let mut i = 0;
    let mut pad = [0u8; 64];
    while i < b.len() {
        let n = (b.len() - i).min(64);
        let w: &[u8; 64] = match b.get(i..i + 64) {
            Some(s) => s.try_into().unwrap(),
            None => {
                pad[..n].copy_from_slice(&b[i..]);
                pad[n..].fill(0);
                &pad
            }
        };
        let (mut starts, last) = window(w, n, i + n == b.len());
        let mut p = i;
        while starts != 0 {
            let e = i + starts.trailing_zeros() as usize;
            starts &= starts - 1;
            f(&b[p..e])?;
            p = e;
        }
        if last {
            f(&b[p..i + n])?;
            p = i + n;
        } else if p == i {
            // The window decided nothing: scalar pieces while non-ASCII bytes are at hand
            // (in other scripts a window would stop at once, piece after piece).
            loop {
                let e = scalar(b, p);
                f(&b[p..e])?;
                p = e;
                let near = b.get(p..).map_or(&[][..], |r| &r[..r.len().min(3)]);
                if near.iter().all(|&x| x < 0x80) {
                    break;
                }
            }
        }
        i = p;
    }
    ControlFlow::Continue(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::pretok::{
        compile, next_gpt2, next_gpt4, next_llama3, next_o200k_fast, scan_bytes, scan_o200k_bytes,
        Preset, GPT2, GPT4, LLAMA3, O200K,
    };

    const PRESETS: [Preset; 4] = [Preset::O200k, Preset::Gpt4, Preset::Gpt2, Preset::Llama3];

    /// The pieces of the mask path with the rules of `preset`.
    fn masked(text: &str, preset: Preset) -> Vec<&[u8]> {
        let mut out = Vec::new();
        let push = |p| {
            out.push(p);
            ControlFlow::<()>::Continue(())
        };
        let _ = match preset {
            Preset::Gpt4 => scan::<true, ()>(text.as_bytes(), push, next_gpt4),
            Preset::O200k => scan::<false, ()>(text.as_bytes(), push, next_o200k_fast),
            Preset::Gpt2 => scan_gpt2::<()>(text.as_bytes(), push, next_gpt2),
            Preset::Llama3 => scan_llama3::<()>(text.as_bytes(), push, next_llama3),
        };
        out
    }

    /// The pieces of the scalar scanners (tested against the regex in `pretok`).
    fn scalar(text: &str, preset: Preset) -> Vec<&[u8]> {
        let mut out = Vec::new();
        let push = |p| {
            out.push(p);
            ControlFlow::<()>::Continue(())
        };
        let _ = match preset {
            Preset::Gpt4 => scan_bytes(text.as_bytes(), push, next_gpt4),
            Preset::O200k => scan_o200k_bytes(text.as_bytes(), push),
            Preset::Gpt2 => scan_bytes(text.as_bytes(), push, next_gpt2),
            Preset::Llama3 => scan_bytes(text.as_bytes(), push, next_llama3),
        };
        out
    }

    fn same(text: &str) {
        for preset in PRESETS {
            assert_eq!(
                masked(text, preset),
                scalar(text, preset),
                "{preset:?} on {text:?}"
            );
        }
    }

    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// Boundary-rich atoms: every ASCII class the masks tell apart, the contraction letters in
    /// both cases, and a few non-ASCII characters that stop a window (a letter, a mark, a
    /// space, a digit, the long s that is a contraction letter).
    const ATOMS: &[&str] = &[
        "a", "A", "1", " ", " ", "'", "\n", "\r", "\t", ".", ",", "/", "s", "S", "t", "T", "l",
        "L", "e", "r", "v", "d", "m", "x", "Z", "0", "\u{B}", "\u{1}", "\u{7F}", "-", "'ll", "'re",
        "'ve", "  ",
    ];
    const WIDE: &[&str] = &[
        "\u{E9}", "\u{301}", "\u{A0}", "\u{663}", "\u{17F}", "\u{4F60}",
    ];

    fn random(rng: &mut Rng, len: usize, wide: bool) -> String {
        (0..len)
            .map(|_| {
                if wide && rng.below(16) == 0 {
                    WIDE[rng.below(WIDE.len())]
                } else {
                    ATOMS[rng.below(ATOMS.len())]
                }
            })
            .collect()
    }

    fn fields(c: &Classes) -> [u64; 10] {
        [
            c.letter, c.lower, c.upper, c.digit, c.space, c.ws, c.nl, c.quote, c.slash, c.high,
        ]
    }

    /// Both instruction sets agree, GPT-2's classes are the full set's, and the classes are
    /// the pre-tokenizer's table's.
    fn check_classes<const ALL: bool>(w: &[u8; 64], x: u8) {
        #[cfg(target_arch = "x86_64")]
        {
            let sse2 = classify_sse2::<ALL>(w);
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2.
                let avx2 = unsafe { classify_avx2::<ALL>(w) };
                assert_eq!(fields(&avx2), fields(&sse2), "{x}");
            }
        }
        let c = classify::<ALL>(w);
        let all = classify::<true>(w);
        // `letter` is GPT-2's only (the full set has `lower | upper`).
        let letter = if ALL { c.lower | c.upper } else { c.letter };
        for (m, full) in [
            (letter, all.lower | all.upper),
            (c.digit, all.digit),
            (c.space, all.space),
            (c.ws, all.ws),
            (c.quote, all.quote),
            (c.high, all.high),
        ] {
            assert_eq!(m, full, "{x}");
        }
        let has = |m: u64| {
            assert_eq!(m >> 5 & 1, m >> 40 & 1, "{x}");
            m & (1 << 5) != 0
        };
        assert_eq!(has(c.high), x >= 0x80, "{x}");
        assert_eq!(has(c.quote), x == b'\'', "{x}");
        assert_eq!(has(c.space), x == b' ', "{x}");
        if x < 0x80 {
            let k = super::super::tables::ASCII[x as usize];
            assert_eq!(has(letter), k & super::super::L != 0, "{x}");
            assert_eq!(has(c.digit), k & super::super::N != 0, "{x}");
            assert_eq!(has(c.ws), k & super::super::WS != 0, "{x}");
            if ALL {
                assert_eq!(c.letter, 0, "{x}");
                assert_eq!(
                    has(c.upper),
                    k & super::super::L != 0 && k & super::super::UP != 0
                );
                assert_eq!(has(c.nl), k & super::super::NL != 0, "{x}");
                assert_eq!(has(c.slash), x == b'/', "{x}");
            }
        }
        for k in [0usize, 4, 6, 39, 41, 63] {
            assert_eq!(((letter | c.digit | c.ws | c.high) >> k) & 1, 0);
        }
    }

    #[test]
    fn classes_match_the_table() {
        for x in 0..=255u8 {
            // One byte in each half of a 32-byte load.
            let mut w = [0u8; 64];
            w[5] = x;
            w[40] = x;
            check_classes::<true>(&w, x);
            check_classes::<false>(&w, x);
        }
    }

    #[test]
    fn masks_equal_scalar_scanner_on_random_text() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for round in 0..60_000 {
            let len = 1 + rng.below(if round % 2 == 0 { 24 } else { 200 });
            let text = random(&mut rng, len, round % 3 == 0);
            same(&text);
        }
    }

    #[test]
    fn masks_equal_regex() {
        let res = [
            (Preset::O200k, compile(O200K).unwrap()),
            (Preset::Gpt4, compile(GPT4).unwrap()),
            (Preset::Gpt2, compile(GPT2).unwrap()),
            (Preset::Llama3, compile(LLAMA3).unwrap()),
        ];
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        for round in 0..3000 {
            let len = 1 + rng.below(150);
            let text = random(&mut rng, len, round % 2 == 0);
            for (preset, re) in &res {
                let want: Vec<&[u8]> = re
                    .find_iter(&text)
                    .map(|m| m.unwrap().as_str().as_bytes())
                    .collect();
                assert_eq!(masked(&text, *preset), want, "{preset:?} on {text:?}");
            }
        }
    }

    /// What the encoder does with the cuts of `is_independent_cut` (blocks of a large text
    /// walked apart): the mask walks of the two sides are the mask walk of the whole, for every
    /// preset (GPT-2's cut is before a whitespace run, the others' after a newline).
    #[test]
    fn independent_cuts_hold_for_the_mask_walk() {
        let mut rng = Rng(0xD1B5_4A32_D192_ED03);
        let mut found = [0usize; PRESETS.len()];
        for round in 0..4000 {
            let len = 1 + rng.below(160);
            let text = random(&mut rng, len, round % 2 == 0);
            for (k, preset) in PRESETS.into_iter().enumerate() {
                let whole = masked(&text, preset);
                for cut in 1..text.len() {
                    if text.is_char_boundary(cut)
                        && crate::text::pretok::is_independent_cut(preset, text.as_bytes(), cut)
                    {
                        found[k] += 1;
                        let mut split = masked(&text[..cut], preset);
                        split.extend(masked(&text[cut..], preset));
                        assert_eq!(whole, split, "{preset:?} cut at {cut} of {text:?}");
                    }
                }
            }
        }
        assert!(found.iter().all(|&n| n > 1000), "{found:?}");
    }

    /// Pieces across every window edge: a fixed tail after a prefix of every length, so that
    /// each of its boundaries falls on every byte of the window, at the end of the text and
    /// with text after it; and a non-ASCII byte at every offset.
    #[test]
    fn every_window_offset() {
        let tails = [
            "it's  don'T\n\n  x.\n\n/y 12345 abc'LL 'd A'vE\r\n\t\tQ.,;  \n",
            "HTTPServer's camelCase, 1234567; a\t.b  ..c \u{B}x --\n--/ z' ",
            "x'y's a'b'c 'll'll .\n/\n// \r\r\n\n  \t\n  q",
            "we'll 1'r 2're\t'Ve 've.'s  \t\t  x'S 12345678901234 ..  \n\n\n a\n'd's''t\u{B} ",
        ];
        for tail in tails {
            for pre in 0..140 {
                for filler in ["a", " ", ".", "1", "\n", "\u{E9}"] {
                    let text = format!("{}{tail}", filler.repeat(pre));
                    same(&text);
                    let cut = &text[..text.len() - 3];
                    same(cut);
                }
            }
        }
        let base = "The quick brown fox's 12 jumps, over the lazy dog.\n  It's here.";
        let base = base.repeat(3);
        for at in 0..base.len() {
            for wide in ["\u{E9}", "\u{301}", "\u{A0}", "\u{17F}"] {
                let text = format!("{}{wide}{}", &base[..at], &base[at..]);
                same(&text);
            }
        }
    }
}
