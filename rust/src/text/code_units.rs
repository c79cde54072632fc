//! UTF-8 from the code units CPython keeps a `str` in (Latin-1, UCS-2 or UCS-4), and searches
//! over them: what `py::utf8` reads Python text arguments with, here apart from the interpreter so
//! that `cargo test` covers it.

mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for u16 {}
    impl Sealed for u32 {}
}

/// A code unit: a Latin-1 byte, a UCS-2 or a UCS-4 unit, as CPython stores them. Sealed: `holds`
/// reads units as bytes, which only these three types allow.
pub trait Unit: sealed::Sealed + Copy + Into<u32> {
    /// The unit of code point `c`, if it has one of this width.
    fn of(c: u32) -> Option<Self>;

    /// Copies the ASCII units at the start of `src` to `dst` as bytes, sixteen at a time, and
    /// returns how many (a multiple of 16; 0 where the width has no such loop).
    ///
    /// # Safety
    /// `dst` has room for `src.len()` bytes.
    #[inline(always)]
    unsafe fn ascii_run(src: &[Self], dst: *mut u8) -> usize {
        let _ = (src, dst);
        0
    }
}

impl Unit for u8 {
    fn of(c: u32) -> Option<u8> {
        u8::try_from(c).ok()
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn ascii_run(src: &[u8], dst: *mut u8) -> usize {
        use std::arch::x86_64::*;
        let mut i = 0;
        // SAFETY: SSE2 is part of x86_64; loads read `src[i..i + 16]`, stores write as many
        // bytes at `dst + i`, within the room the caller gives.
        unsafe {
            while i + 16 <= src.len() {
                let v = _mm_loadu_si128(src.as_ptr().add(i) as *const __m128i);
                if _mm_movemask_epi8(v) != 0 {
                    break;
                }
                _mm_storeu_si128(dst.add(i) as *mut __m128i, v);
                i += 16;
            }
        }
        i
    }
}

impl Unit for u16 {
    fn of(c: u32) -> Option<u16> {
        u16::try_from(c).ok()
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn ascii_run(src: &[u16], dst: *mut u8) -> usize {
        use std::arch::x86_64::*;
        let mut i = 0;
        // SAFETY: SSE2 is part of x86_64; loads read `src[i..i + 16]`, the store writes 16
        // bytes at `dst + i`, within the room the caller gives.
        unsafe {
            let high = _mm_set1_epi16(0xFF80u16 as i16);
            while i + 16 <= src.len() {
                let a = _mm_loadu_si128(src.as_ptr().add(i) as *const __m128i);
                let b = _mm_loadu_si128(src.as_ptr().add(i + 8) as *const __m128i);
                let above = _mm_and_si128(_mm_or_si128(a, b), high);
                if _mm_movemask_epi8(_mm_cmpeq_epi8(above, _mm_setzero_si128())) != 0xFFFF {
                    break;
                }
                // Every unit is below 0x80: packing to bytes keeps each as it is.
                _mm_storeu_si128(dst.add(i) as *mut __m128i, _mm_packus_epi16(a, b));
                i += 16;
            }
        }
        i
    }
}

impl Unit for u32 {
    fn of(c: u32) -> Option<u32> {
        Some(c)
    }
}

/// Whether `units` holds the code point `a` followed by `b` (or `a` alone when `b` is None).
/// Searched as bytes (`memchr::memmem`, vector compares), a match counted only where it starts
/// at a unit's first byte.
pub fn holds<T: Unit>(units: &[T], a: u32, b: Option<u32>) -> bool {
    let (pattern, n) = match (T::of(a), b.map(T::of)) {
        (Some(a), None) => ([a, a], 1),
        (Some(a), Some(Some(b))) => ([a, b], 2),
        // A code point wider than the units is not there.
        _ => return false,
    };
    let w = std::mem::size_of::<T>();
    // SAFETY: `u8`, `u16` and `u32` have no padding, and every byte of them is initialized.
    let bytes = |u: &[T]| unsafe {
        std::slice::from_raw_parts(u.as_ptr() as *const u8, std::mem::size_of_val(u))
    };
    let (hay, needle) = (bytes(units), bytes(&pattern[..n]));
    let finder = memchr::memmem::Finder::new(needle);
    let mut from = 0;
    while let Some(at) = finder.find(&hay[from..]) {
        let at = from + at;
        if at % w == 0 {
            return true;
        }
        from = at + 1;
    }
    false
}

// Each conversion appends the UTF-8 of its code units to `out`, ASCII 16 or 8 units at a time;
// false, with `out` as it was, at a code unit that has none (a surrogate, in UCS-2 and UCS-4).

/// Eight code units, as bytes if all are ASCII.
#[inline(always)]
fn ascii8<T: Unit>(units: &[T]) -> Option<[u8; 8]> {
    let c: [T; 8] = units.try_into().ok()?;
    let any = c.iter().fold(0u32, |a, &x| a | x.into());
    (any < 0x80).then(|| c.map(|x| x.into() as u8))
}

/// Writes the UTF-8 of code point `c` (not a surrogate, at most U+10FFFF) at `dst`; returns how
/// many bytes.
///
/// # Safety
/// `dst` has room for 4 bytes.
#[inline(always)]
unsafe fn put_char(dst: *mut u8, c: u32) -> usize {
    // SAFETY: the caller gives room for 4 bytes; each arm writes at most that.
    unsafe {
        match c {
            0..=0x7F => {
                *dst = c as u8;
                1
            }
            0x80..=0x7FF => {
                *dst = 0xC0 | (c >> 6) as u8;
                *dst.add(1) = 0x80 | (c & 0x3F) as u8;
                2
            }
            0x800..=0xFFFF => {
                *dst = 0xE0 | (c >> 12) as u8;
                *dst.add(1) = 0x80 | ((c >> 6) & 0x3F) as u8;
                *dst.add(2) = 0x80 | (c & 0x3F) as u8;
                3
            }
            _ => {
                *dst = 0xF0 | (c >> 18) as u8;
                *dst.add(1) = 0x80 | ((c >> 12) & 0x3F) as u8;
                *dst.add(2) = 0x80 | ((c >> 6) & 0x3F) as u8;
                *dst.add(3) = 0x80 | (c & 0x3F) as u8;
                4
            }
        }
    }
}

/// The conversion loop: at most `width` bytes of UTF-8 per code unit, `ok` refusing the code
/// units that have none. Writes into `out`'s spare capacity (grown first by the most the input
/// can need, never zeroed), and sets its length only past what it wrote.
#[inline(always)]
fn convert<T: Unit>(src: &[T], out: &mut Vec<u8>, width: usize, ok: impl Fn(u32) -> bool) -> bool {
    out.reserve(src.len() * width + 4);
    let start = out.len();
    // SAFETY: the writes below stay within the `src.len() * width + 4` bytes reserved past
    // `start`: each code unit writes at most `width` bytes (8 ASCII units write 8).
    let dst = unsafe { out.as_mut_ptr().add(start) };
    let (mut i, mut o) = (0, 0);
    while i < src.len() {
        if src[i].into() < 0x80 {
            // Sixteen or eight at once where ASCII starts.
            // SAFETY: as above (a unit writes one byte there).
            let k = unsafe { T::ascii_run(&src[i..], dst.add(o)) };
            if k > 0 {
                i += k;
                o += k;
                continue;
            }
            if let Some(b) = src.get(i..i + 8).and_then(ascii8) {
                // SAFETY: as above.
                unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), dst.add(o), 8) };
                i += 8;
                o += 8;
                continue;
            }
        }
        // Other scripts (or ASCII among them): the next eight units one at a time, without
        // looking for a run of ASCII inside them.
        let end = (i + 8).min(src.len());
        while i < end {
            let c: u32 = src[i].into();
            if c >= 0x80 && !ok(c) {
                return false;
            }
            // SAFETY: as above (4 bytes of slack cover the last unit).
            o += unsafe { put_char(dst.add(o), c) };
            i += 1;
        }
    }
    // SAFETY: the `o` bytes past `start` were written just above.
    unsafe { out.set_len(start + o) };
    true
}

pub fn from_latin1(src: &[u8], out: &mut Vec<u8>) -> bool {
    convert(src, out, 2, |_| true)
}

pub fn from_ucs2(src: &[u16], out: &mut Vec<u8>) -> bool {
    convert(src, out, 3, |c| !(0xD800..0xE000).contains(&c))
}

pub fn from_ucs4(src: &[u32], out: &mut Vec<u8>) -> bool {
    convert(src, out, 4, |c| {
        !(0xD800..0xE000).contains(&c) && c <= 0x10FFFF
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn via<T: Copy + Into<u32>>(units: &[T], f: fn(&[T], &mut Vec<u8>) -> bool) -> Option<Vec<u8>> {
        let mut out = b"kept".to_vec();
        f(units, &mut out).then(|| out[4..].to_vec())
    }

    /// Every code point class at every offset from the eight-unit ASCII steps, against std.
    #[test]
    fn conversions_match_std() {
        let samples = [
            "",
            "a",
            "plain ascii text, long enough for two steps",
            "é",
            "ÿ and ß",
            "€",
            "日本語のテキスト",
            "emoji 😀 and 𝔘 outside the plane",
            "\u{7F}\u{80}\u{7FF}\u{800}\u{FFFF}\u{10000}\u{10FFFF}",
        ];
        for s in samples {
            for pad in 0..9 {
                let t = format!("{}{s}{}", "x".repeat(pad), "y".repeat(pad));
                let cps: Vec<u32> = t.chars().map(|c| c as u32).collect();
                let ucs4 = via(&cps, from_ucs4);
                assert_eq!(ucs4.as_deref(), Some(t.as_bytes()), "{t:?} from UCS-4");
                if cps.iter().all(|&c| c <= 0xFFFF) {
                    let u: Vec<u16> = cps.iter().map(|&c| c as u16).collect();
                    assert_eq!(
                        via(&u, from_ucs2).as_deref(),
                        Some(t.as_bytes()),
                        "{t:?} from UCS-2"
                    );
                }
                if cps.iter().all(|&c| c <= 0xFF) {
                    let b: Vec<u8> = cps.iter().map(|&c| c as u8).collect();
                    assert_eq!(
                        via(&b, from_latin1).as_deref(),
                        Some(t.as_bytes()),
                        "{t:?} from Latin-1"
                    );
                }
            }
        }
    }

    /// Random texts of ASCII runs of every length among other characters, from each width,
    /// against std (the 16- and 8-unit steps, and the unit-at-a-time stretches between them).
    #[test]
    fn random_mixes_match_std() {
        let alphabet = ['a', ' ', '<', 'é', 'ÿ', 'Ж', '日', '\u{FFFF}', '😀'];
        let mut seed = 3u64;
        let mut next = |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % n
        };
        for _ in 0..2000 {
            let mut t = String::new();
            for _ in 0..next(12) {
                let run = next(40);
                t.extend(std::iter::repeat_n('x', run));
                let c = alphabet[next(alphabet.len())];
                t.extend(std::iter::repeat_n(c, next(4)));
            }
            let cps: Vec<u32> = t.chars().map(|c| c as u32).collect();
            assert_eq!(via(&cps, from_ucs4).as_deref(), Some(t.as_bytes()), "{t:?}");
            if cps.iter().all(|&c| c <= 0xFFFF) {
                let u: Vec<u16> = cps.iter().map(|&c| c as u16).collect();
                assert_eq!(via(&u, from_ucs2).as_deref(), Some(t.as_bytes()), "{t:?}");
            }
            if cps.iter().all(|&c| c <= 0xFF) {
                let b: Vec<u8> = cps.iter().map(|&c| c as u8).collect();
                assert_eq!(via(&b, from_latin1).as_deref(), Some(t.as_bytes()), "{t:?}");
            }
        }
    }

    #[test]
    fn surrogates_have_no_utf8() {
        for s in [0xD800u32, 0xDBFF, 0xDC00, 0xDFFF] {
            for pad in [0usize, 3, 8, 11] {
                let mut u = vec![b'a' as u32; pad];
                u.push(s);
                u.extend([b'b' as u32; 9]);
                assert_eq!(via(&u, from_ucs4), None);
                let u16s: Vec<u16> = u.iter().map(|&c| c as u16).collect();
                assert_eq!(via(&u16s, from_ucs2), None);
            }
        }
        assert_eq!(via(&[0x110000u32], from_ucs4), None);
    }

    /// `holds` against a naive search of every pair, on units of each width that repeat often
    /// (so that first units without their second come first), with patterns whose bytes also
    /// match across a unit boundary (`0x7C3C` is `<|` as bytes).
    #[test]
    fn holds_matches_a_naive_search() {
        fn naive<T: Unit>(units: &[T], a: u32, b: Option<u32>) -> bool {
            match b {
                None => units.iter().any(|&u| u.into() == a),
                Some(b) => units
                    .windows(2)
                    .any(|w| w[0].into() == a && w[1].into() == b),
            }
        }
        let mut seed = 7u64;
        for len in [0usize, 1, 2, 31, 32, 33, 64, 65, 200] {
            for _ in 0..50 {
                let units: Vec<u32> = (0..len)
                    .map(|_| {
                        seed = seed
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        [0x3C, 0x7C, 0x61, 0x65E5, 0x3C00, 0x7C3C, 0x1F600]
                            [(seed >> 60) as usize % 7]
                    })
                    .collect();
                let ucs2: Vec<u16> = units.iter().map(|&u| u as u16).collect();
                let latin1: Vec<u8> = units.iter().map(|&u| u as u8).collect();
                for (a, b) in [
                    (0x3C, Some(0x7C)),
                    (0x3C, None),
                    (0x65E5, Some(0x3C)),
                    (0x7C3C, None),
                    (0x3C00, Some(0x7C)),
                    (0x1F600, None),
                    (0x3C, Some(0x1F600)),
                ] {
                    let what = format!("{units:?} {a} {b:?}");
                    assert_eq!(holds(&units, a, b), naive(&units, a, b), "UCS-4 {what}");
                    assert_eq!(holds(&ucs2, a, b), naive(&ucs2, a, b), "UCS-2 {what}");
                    assert_eq!(holds(&latin1, a, b), naive(&latin1, a, b), "Latin-1 {what}");
                }
            }
        }
    }
}
