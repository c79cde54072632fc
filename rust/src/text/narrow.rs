//! The bytes of a block of 16 that may end a run of plain ASCII in the SentencePiece
//! normalizer (`Normalizer::plain_words`): the controls and the space (`<= 0x20`), DEL and every
//! byte of a non-ASCII character (`>= 0x7F`). For the usual maps (none, and the NFKC ones),
//! every ASCII byte a rule starts is among them, so a block with no such byte is copied whole,
//! and one with some is looked at only there.
//!
//! SSE2 on x86_64, where it is always there; elsewhere the scalar definition, which the tests
//! compare it with at every byte value and position.

/// Whether `b` is one of the bytes `candidates` marks.
#[inline(always)]
pub const fn is_candidate(b: u8) -> bool {
    b <= 0x20 || b >= 0x7F
}

/// One bit per byte of `block` (bit k: byte k) for the bytes `is_candidate` holds for.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn candidates(block: &[u8; 16]) -> u32 {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of x86_64; the load reads the 16 bytes of `block`, unaligned.
    candidates_of(unsafe { _mm_loadu_si128(block.as_ptr().cast()) })
}

/// `candidates` of a block already in a register (`expand`'s blocks).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn candidates_of(x: std::arch::x86_64::__m128i) -> u32 {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of x86_64.
    unsafe {
        // x - 0x21 (wrapping) < 0x5E as unsigned bytes is 0x21..=0x7E: min(d, 0x5D) == d
        let d = _mm_sub_epi8(x, _mm_set1_epi8(0x21));
        let inside = _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(0x5D)), d);
        !(_mm_movemask_epi8(inside) as u32) & 0xFFFF
    }
}

/// One bit per byte of `block` (bit k: byte k) for the bytes `is_candidate` holds for.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub fn candidates(block: &[u8; 16]) -> u32 {
    candidates_scalar(block)
}

#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline(always)]
fn candidates_scalar(block: &[u8; 16]) -> u32 {
    let mut m = 0;
    for (k, &b) in block.iter().enumerate() {
        m |= u32::from(is_candidate(b)) << k;
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_at_every_position() {
        for b in 0..=255u8 {
            for k in 0..16 {
                // the byte among others of either kind
                for fill in [b'a', 0x80, b' '] {
                    let mut block = [fill; 16];
                    block[k] = b;
                    assert_eq!(
                        candidates(&block),
                        candidates_scalar(&block),
                        "{b:#x} at {k}"
                    );
                }
            }
        }
    }
}
