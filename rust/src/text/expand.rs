//! Blocks of 16 bytes of plain ASCII words and single spaces, written by the SentencePiece
//! normalizer with each space as `▁` (`Normalizer::plain_words`), without a branch per word.
//!
//! The scalar block loop of `plain_words` copies each word's run and then writes a space:
//! a branch on each candidate byte and one on the run's length, which go either way word after
//! word. Here a block whose only candidates (`narrow::candidates`) are spaces, none of which
//! joins the one before it, is written as two halves of 8 bytes: a table gives, for a half's
//! mask of spaces, the `pshufb` pattern that spreads its bytes and puts `E2 96 81` in each
//! space's place, the length written, and where each `▁` starts (the encoders' marks). Any
//! other block is left to the scalar loop.
//!
//! SSSE3 (`pshufb`), asked for at run time; without it (or off x86_64) nothing is written here.

#[cfg(any(target_arch = "x86_64", test))]
use super::normalize::SYMBOL as SPACE;

/// For each mask of spaces of 8 bytes (bit j: byte j is a space), what its half writes.
#[cfg(target_arch = "x86_64")]
#[repr(C, align(64))]
struct Halves {
    /// where each output byte comes from: byte j of the half (0..8), or 8, 9, 10 for `▁`
    /// (0x80, a zero, past the end)
    shuffle: [[u8; 32]; 256],
    /// where each space's `▁` starts in the half's output, in order (the rest 0)
    marks: [[u8; 8]; 256],
    /// bytes written: 8 and two more a space
    len: [u8; 256],
}

#[cfg(target_arch = "x86_64")]
const fn halves() -> Halves {
    let mut t = Halves {
        shuffle: [[0x80; 32]; 256],
        marks: [[0; 8]; 256],
        len: [0; 256],
    };
    let mut s = 0;
    while s < 256 {
        let (mut o, mut n, mut j) = (0, 0, 0);
        while j < 8 {
            if s >> j & 1 == 1 {
                t.shuffle[s][o] = 8;
                t.shuffle[s][o + 1] = 9;
                t.shuffle[s][o + 2] = 10;
                t.marks[s][n] = o as u8;
                n += 1;
                o += 3;
            } else {
                t.shuffle[s][o] = j as u8;
                o += 1;
            }
            j += 1;
        }
        t.len[s] = o as u8;
        s += 1;
    }
    t
}

#[cfg(target_arch = "x86_64")]
static HALVES: Halves = halves();

/// `pshufb` patterns that move a vector's last `n` bytes to its start (16 bytes from `16 - n`).
#[cfg(target_arch = "x86_64")]
static SLIDE: [u8; 32] = {
    let mut t = [0x80; 32];
    let mut i = 0;
    while i < 16 {
        t[i] = i as u8;
        i += 1;
    }
    t
};

/// Blocks taken between two reservations of `out` and `marks`.
#[cfg(target_arch = "x86_64")]
const CHUNK: usize = 64;

/// Writes the plain ASCII words and spaces at the start of `input`, a block of 16 bytes at a
/// time, each space as `▁` with its mark (its start in `out`), as the scalar loop would;
/// returns the bytes taken, stopping at the first byte that is neither plain (a
/// `narrow::candidates` byte other than the space) nor a space kept: with `remove`
/// (`remove_extra_whitespaces`), a space right after a space, or first when `prev_space`, is
/// not. `prev_space` is updated as the scalar loop does.
#[inline]
pub fn words(
    input: &[u8],
    out: &mut Vec<u8>,
    marks: &mut Vec<u32>,
    remove: bool,
    prev_space: &mut bool,
) -> usize {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("ssse3") {
        // SAFETY: SSSE3 is there.
        return unsafe { words_ssse3(input, out, marks, remove, prev_space) };
    }
    let _ = (input, out, marks, remove, prev_space);
    0
}

/// The block `x`'s mask of candidates and of spaces, as `narrow::candidates` and a compare.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3")]
#[inline]
unsafe fn masks(x: std::arch::x86_64::__m128i) -> (u32, u32) {
    use std::arch::x86_64::*;
    let s = _mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8(b' ' as i8))) as u32;
    (super::narrow::candidates_of(x), s)
}

/// Writes the block `x` with its spaces `s` as `▁` at `out + o`, their marks at `marks + m`;
/// returns `o` and `m` past the whole block.
///
/// # Safety
/// `out` has room for 64 bytes from `o` (48 written, and each half stores 32 from where it
/// starts), `marks` for 16 from `m`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3")]
#[inline]
unsafe fn put(
    x: std::arch::x86_64::__m128i,
    s: u32,
    out: *mut u8,
    mut o: usize,
    marks: *mut u32,
    mut m: usize,
) -> (usize, usize) {
    use std::arch::x86_64::*;
    // `▁`'s bytes at 8..11 of each half's source (`unpacklo` / `unpackhi` with the block)
    let [a, b, c] = SPACE.map(|x| x as i8);
    let sym = _mm_setr_epi8(a, b, c, 0, 0, 0, 0, 0, a, b, c, 0, 0, 0, 0, 0);
    // a half's 8 mark offsets (bytes) as two vectors of 4 `u32`s
    let z = -128;
    let widen_lo = _mm_setr_epi8(0, z, z, z, 1, z, z, z, 2, z, z, z, 3, z, z, z);
    let widen_hi = _mm_setr_epi8(4, z, z, z, 5, z, z, z, 6, z, z, z, 7, z, z, z);
    for (half, src) in [
        (s & 0xFF, _mm_unpacklo_epi64(x, sym)),
        (s >> 8, _mm_unpackhi_epi64(x, sym)),
    ] {
        let h = half as usize & 0xFF;
        let t = HALVES.shuffle[h].as_ptr();
        // SAFETY: the tables' rows are 32 and 8 bytes; the room is the caller's.
        unsafe {
            let lo = _mm_shuffle_epi8(src, _mm_loadu_si128(t.cast()));
            let hi = _mm_shuffle_epi8(src, _mm_loadu_si128(t.add(16).cast()));
            _mm_storeu_si128(out.add(o).cast(), lo);
            _mm_storeu_si128(out.add(o + 16).cast(), hi);
            let k = _mm_loadl_epi64(HALVES.marks[h].as_ptr().cast());
            let base = _mm_set1_epi32(o as i32);
            let k0 = _mm_add_epi32(_mm_shuffle_epi8(k, widen_lo), base);
            let k1 = _mm_add_epi32(_mm_shuffle_epi8(k, widen_hi), base);
            _mm_storeu_si128(marks.add(m).cast(), k0);
            _mm_storeu_si128(marks.add(m + 4).cast(), k1);
        }
        o += usize::from(HALVES.len[h]);
        m += half.count_ones() as usize;
    }
    (o, m)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3")]
unsafe fn words_ssse3(
    input: &[u8],
    out: &mut Vec<u8>,
    marks: &mut Vec<u32>,
    remove: bool,
    prev_space: &mut bool,
) -> usize {
    use std::arch::x86_64::*;
    let keep_joined = if remove { u32::MAX } else { 0 };
    let mut prev = u32::from(*prev_space) & keep_joined;
    let mut at = 0;
    // whole blocks, a chunk of them between reservations; then the last bytes, as a block
    // whose lanes past them stop it
    while at < input.len() {
        let left = input.len() - at;
        let blocks = left.min(16 * CHUNK).div_ceil(16);
        out.reserve(blocks * 48 + 16);
        marks.reserve(blocks * 16);
        let (mut o, mut m) = (out.len(), marks.len());
        let (ob, mb) = (out.as_mut_ptr(), marks.as_mut_ptr());
        let mut took = 0;
        for _ in 0..blocks {
            let n = (input.len() - at).min(16);
            let x = if n == 16 {
                // SAFETY: 16 bytes from `at` are in `input`.
                unsafe { _mm_loadu_si128(input.as_ptr().add(at).cast()) }
            } else if input.len() >= 16 {
                // the last 16 bytes of `input`, moved down to the last `n` (the lanes past
                // them zero: candidates, which stop the block there)
                // SAFETY: 16 bytes end at the end of `input`; `SLIDE` has 16 from `16 - n`.
                unsafe {
                    let last = _mm_loadu_si128(input.as_ptr().add(input.len() - 16).cast());
                    let slide = _mm_loadu_si128(SLIDE.as_ptr().add(16 - n).cast());
                    _mm_shuffle_epi8(last, slide)
                }
            } else {
                let mut pad = [0u8; 16];
                pad[..n].copy_from_slice(&input[at..]);
                // SAFETY: `pad` is 16 bytes.
                unsafe { _mm_loadu_si128(pad.as_ptr().cast()) }
            };
            // SAFETY: SSSE3 is there, as for this function.
            let (cand, s) = unsafe { masks(x) };
            // the block's bytes up to the first that is neither plain nor a space kept (the
            // zeros past the last `n` stop it, and are no spaces)
            let stop = (cand & !s) | s & (s << 1 | prev) & keep_joined;
            let k = (stop | 1 << 16).trailing_zeros() as usize;
            if k == 0 {
                break;
            }
            let s = s & ((1 << k) - 1);
            prev = s >> (k - 1) & 1 & keep_joined;
            // SAFETY: reserved above for the chunk's blocks.
            let (o2, m2) = unsafe { put(x, s, ob, o, mb, m) };
            // the output of the bytes taken (a block taken whole: all of it)
            o = if k == 16 {
                o2
            } else {
                o + k + 2 * s.count_ones() as usize
            };
            m = m2;
            at += k;
            if k < 16 {
                break;
            }
            took += 1;
        }
        // SAFETY: `o` bytes of `out` and `m` marks are written.
        unsafe {
            out.set_len(o);
            marks.set_len(m);
        }
        if took < blocks {
            break;
        }
    }
    if at > 0 {
        *prev_space = prev != 0;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the scalar loop writes for such blocks.
    fn naive(input: &[u8], remove: bool, prev: bool) -> (Vec<u8>, Vec<u32>, bool) {
        let (mut out, mut marks, mut prev) = (vec![b'#'], vec![7], prev);
        for &b in input {
            if b == b' ' {
                if !prev {
                    marks.push(out.len() as u32);
                    out.extend_from_slice(&SPACE);
                }
                prev = remove;
            } else {
                out.push(b);
                prev = false;
            }
        }
        (out, marks, prev)
    }

    fn simd() -> bool {
        #[cfg(target_arch = "x86_64")]
        return std::arch::is_x86_feature_detected!("ssse3");
        #[cfg(not(target_arch = "x86_64"))]
        false
    }

    /// How many bytes at the start of `input` `words` takes (all of them as one block each).
    fn takes(input: &[u8], remove: bool, prev: bool) -> usize {
        let mut p = prev;
        input
            .iter()
            .take_while(|&&b| {
                let ok = if b == b' ' {
                    !(remove && p)
                } else {
                    !crate::text::narrow::is_candidate(b)
                };
                p = b == b' ';
                ok
            })
            .count()
    }

    #[test]
    fn blocks_as_the_scalar_loop_writes_them() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let alphabet = b"ab  Z9~!\x7f\xc3\x09 ";
        for round in 0..20_000 {
            let len = (next() % 80) as usize;
            // mostly words and single spaces; now and then a stop
            let text: Vec<u8> = (0..len)
                .map(|_| match next() % 16 {
                    0..=9 => b'a' + (next() % 26) as u8,
                    10..=13 => b' ',
                    _ => alphabet[(next() % alphabet.len() as u64) as usize],
                })
                .collect();
            let remove = round % 3 != 0;
            // without `remove` no space joins another, and `prev_space` stays false
            let prev0 = remove && round % 5 == 0;
            let (mut out, mut marks, mut prev) = (vec![b'#'], vec![7], prev0);
            let took = words(&text, &mut out, &mut marks, remove, &mut prev);
            let want = if simd() {
                takes(&text, remove, prev0)
            } else {
                0
            };
            assert_eq!(took, want, "{text:?}");
            let (want_out, want_marks, want_prev) = naive(&text[..took], remove, prev0);
            assert_eq!(out, want_out, "{text:?}");
            assert_eq!(marks, want_marks, "{text:?}");
            assert_eq!(prev, want_prev, "{text:?}");
        }
    }

    #[test]
    fn every_mask_of_a_half() {
        for s in 0..=0xFFFFu32 {
            let block: Vec<u8> = (0..16)
                .map(|k| {
                    if s >> k & 1 == 1 {
                        b' '
                    } else {
                        b'a' + k as u8
                    }
                })
                .collect();
            for remove in [false, true] {
                let (mut out, mut marks, mut prev) = (Vec::new(), Vec::new(), false);
                let took = words(&block, &mut out, &mut marks, remove, &mut prev);
                if !simd() {
                    assert_eq!((took, out.len(), marks.len()), (0, 0, 0));
                    continue;
                }
                assert_eq!(took, takes(&block, remove, false), "{s:#x}");
                let (mut want_out, mut want_marks, want_prev) =
                    naive(&block[..took], remove, false);
                want_out.remove(0);
                want_marks.remove(0);
                let want_marks: Vec<u32> = want_marks.iter().map(|m| m - 1).collect();
                assert_eq!(
                    (out, marks, prev),
                    (want_out, want_marks, want_prev),
                    "{s:#x}"
                );
            }
        }
    }
}
