//! ASCII whitespace classified 16 bytes at a time, for the walks over long runs of it: the
//! pre-tokenizers' whitespace runs (`pretok::ws_run`) and the cut search of `count`. Both
//! walked a run of 32 MB of newlines a byte at a time, or 32 bytes at a time through a fold
//! the compiler did not turn into vector compares (`bpe/NOTES.md`, nineteenth round).
//!
//! SSE2 on x86_64, where it is always there; elsewhere the scalar definition, which the tests
//! compare it with at every byte value and position. Walks take blocks of 64 while every byte
//! is whitespace: the next block's address then does not wait on this one's compares (a walk
//! that moved by the count of whitespace bytes in each block of 16 went at 4 GB/s, one
//! block's latency at a time).

/// One bit per byte of a block of 16 or 64 (bit k: byte k).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Masks<T> {
    /// `\s` among ASCII bytes: `\t`, `\n`, `\x0B`, `\x0C`, `\r` and the space.
    pub space: T,
    /// `\r` and `\n`.
    pub newline: T,
    /// `\x0B`, which `\s` counts as whitespace and `u8::is_ascii_whitespace` does not.
    pub vtab: T,
}

impl<T: Copy + std::ops::BitAnd<Output = T> + std::ops::Not<Output = T>> Masks<T> {
    /// The bytes for which `u8::is_ascii_whitespace` holds.
    #[inline(always)]
    pub fn ascii_whitespace(self) -> T {
        self.space & !self.vtab
    }
}

/// The masks of a block of 64, from its four blocks of 16.
#[inline(always)]
pub fn masks64(block: &[u8; 64]) -> Masks<u64> {
    let mut m = Masks {
        space: 0,
        newline: 0,
        vtab: 0,
    };
    for (k, b) in block.chunks_exact(16).enumerate() {
        let q = masks(b.try_into().unwrap());
        m.space |= u64::from(q.space) << (16 * k);
        m.newline |= u64::from(q.newline) << (16 * k);
        m.vtab |= u64::from(q.vtab) << (16 * k);
    }
    m
}

/// The masks of `block`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn masks(block: &[u8; 16]) -> Masks<u16> {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of x86_64; the load reads the 16 bytes of `block`, unaligned.
    unsafe {
        let x = _mm_loadu_si128(block.as_ptr().cast());
        let is = |c: u8| _mm_cmpeq_epi8(x, _mm_set1_epi8(c as i8));
        // \t..=\r: x - 9 <= 4 as unsigned bytes, that is min(x - 9, 4) == x - 9.
        let d = _mm_sub_epi8(x, _mm_set1_epi8(9));
        let low = _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(4)), d);
        let bits = |v| _mm_movemask_epi8(v) as u16;
        Masks {
            space: bits(_mm_or_si128(low, is(b' '))),
            newline: bits(_mm_or_si128(is(b'\n'), is(b'\r'))),
            vtab: bits(is(0x0B)),
        }
    }
}

/// The masks of `block`.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub fn masks(block: &[u8; 16]) -> Masks<u16> {
    masks_scalar(block)
}

/// The definition `masks` is tested against.
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline(always)]
fn masks_scalar(block: &[u8; 16]) -> Masks<u16> {
    let mut m = Masks {
        space: 0,
        newline: 0,
        vtab: 0,
    };
    for (k, &b) in block.iter().enumerate() {
        m.space |= u16::from(matches!(b, b'\t'..=b'\r' | b' ')) << k;
        m.newline |= u16::from(matches!(b, b'\n' | b'\r')) << k;
        m.vtab |= u16::from(b == 0x0B) << k;
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_match_the_scalar_definition() {
        // Every byte value at every position, among bytes of each kind.
        for fill in [b' ', b'\n', b'a', 0x0B, 0x80, 0x08, 0x0E, 0x1F, 0x21, 0xFF] {
            for at in 0..16 {
                for b in 0..=255u8 {
                    let mut block = [fill; 16];
                    block[at] = b;
                    assert_eq!(masks(&block), masks_scalar(&block), "{b:#x} at {at}");
                }
            }
        }
        let m = masks(b"\t\n\x0B\x0C\r \x08\x0E\x1F!a\x85\xA0\x00\x20\x0A");
        assert_eq!(m.space, 0b1100_0000_0011_1111);
        assert_eq!(m.newline, 0b1000_0000_0001_0010);
        assert_eq!(m.vtab, 0b100);
        for b in 0..=255u8 {
            let bit = masks(&[b; 16]).ascii_whitespace() & 1 != 0;
            assert_eq!(bit, b.is_ascii_whitespace(), "{b:#x}");
        }
        // A block of 64 is its four blocks of 16.
        let mut block = [b' '; 64];
        for (k, b) in block.iter_mut().enumerate() {
            *b = [b' ', b'\n', 0x0B, b'a', b'\r', 0xC2][k * 7 % 6];
        }
        let m = masks64(&block);
        for (k, &b) in block.iter().enumerate() {
            let q = masks(&[b; 16]);
            assert_eq!(m.space >> k & 1, u64::from(q.space & 1), "{k}");
            assert_eq!(m.newline >> k & 1, u64::from(q.newline & 1), "{k}");
            assert_eq!(m.vtab >> k & 1, u64::from(q.vtab & 1), "{k}");
        }
    }
}
