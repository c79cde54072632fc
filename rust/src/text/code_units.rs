//! UTF-8 from the code units CPython keeps a `str` in (Latin-1, UCS-2 or UCS-4), and searches
//! over them: what `py::utf8` reads Python text arguments with, here apart from the interpreter so
//! that `cargo test` covers it.

/// Whether `units` holds `a` followed by `b` (or `a` alone when `b` is None).
pub fn holds<T: Copy + Into<u32>>(units: &[T], a: T, b: Option<u32>) -> bool {
    let a = a.into();
    let mut from = 0;
    while let Some(at) = position(&units[from..], a) {
        let at = from + at;
        match (b, units.get(at + 1)) {
            (None, _) => return true,
            (Some(b), Some(&next)) if next.into() == b => return true,
            _ => from = at + 1,
        }
    }
    false
}

/// The first place `units` holds `c`: 32 units compared at a time (vector compares, as the
/// compiler writes them), then the one found.
fn position<T: Copy + Into<u32>>(units: &[T], c: u32) -> Option<usize> {
    let mut base = 0;
    for ch in units.chunks(32) {
        if ch.iter().fold(false, |f, &x| f | (x.into() == c)) {
            return ch.iter().position(|&x| x.into() == c).map(|p| base + p);
        }
        base += ch.len();
    }
    None
}

// Each conversion appends the UTF-8 of its code units to `out`, ASCII eight units at a time;
// false, with `out` as it was, at a code unit that has none (a surrogate, in UCS-2 and UCS-4).

/// Eight code units, as bytes if all are ASCII.
#[inline(always)]
fn ascii8<T: Copy + Into<u32>>(units: &[T]) -> Option<[u8; 8]> {
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
fn convert<T: Copy + Into<u32>>(
    src: &[T],
    out: &mut Vec<u8>,
    width: usize,
    ok: impl Fn(u32) -> bool,
) -> bool {
    out.reserve(src.len() * width + 4);
    let start = out.len();
    // SAFETY: the writes below stay within the `src.len() * width + 4` bytes reserved past
    // `start`: each code unit writes at most `width` bytes (8 ASCII units write 8).
    let dst = unsafe { out.as_mut_ptr().add(start) };
    let (mut i, mut o) = (0, 0);
    while i < src.len() {
        let c: u32 = src[i].into();
        if c < 0x80 {
            // Eight at once where ASCII starts; a unit at a time in other scripts.
            if let Some(b) = src.get(i..i + 8).and_then(ascii8) {
                // SAFETY: as above.
                unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), dst.add(o), 8) };
                i += 8;
                o += 8;
                continue;
            }
        } else if !ok(c) {
            return false;
        }
        // SAFETY: as above (4 bytes of slack cover the last unit).
        o += unsafe { put_char(dst.add(o), c) };
        i += 1;
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

    /// `holds` against a naive search of every pair, on units that repeat often (so that
    /// first units without their second come before the pair, in and across the 32-unit steps).
    #[test]
    fn holds_matches_a_naive_search() {
        let mut seed = 7u64;
        for len in [0usize, 1, 2, 31, 32, 33, 64, 65, 200] {
            for _ in 0..50 {
                let units: Vec<u16> = (0..len)
                    .map(|_| {
                        seed = seed
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        [b'<' as u16, b'|' as u16, b'a' as u16, 0x65E5][(seed >> 60) as usize % 4]
                    })
                    .collect();
                for (a, b) in [
                    (b'<' as u16, Some(b'|' as u32)),
                    (b'<' as u16, None),
                    (0x65E5, Some(b'<' as u32)),
                ] {
                    let naive = match b {
                        None => units.contains(&a),
                        Some(b) => units.windows(2).any(|w| w[0] == a && w[1] as u32 == b),
                    };
                    assert_eq!(holds(&units, a, b), naive, "{units:?} {a} {b:?}");
                }
            }
        }
    }
}
