//! A fast reader for tiktoken rank files (`base64(token) SPACE rank` per line).
//!
//! The Python reader (`bytepair.formats.tiktoken`) owns the format: it accepts what tiktoken
//! accepts and names the first bad line of a malformed file. This reader accepts only a strict
//! subset, the form every published file has (one `\n`-terminated line per token, one space,
//! canonical padded base64, decimal rank, no duplicates, no huge rank gaps), and returns `None`
//! for anything else; the caller then falls back to the Python reader, which either accepts
//! the file (giving the same tokens) or explains what is wrong with it. Loading o200k_base this
//! way skips 200,000 Python bytes objects, a dict and a sort.

use rustc_hash::FxHashSet;

use crate::Rank;

/// Ranks at most this (u32::MAX is reserved), and at most this far beyond the token count.
const MAX_RANK: u64 = (1 << 32) - 2;
const MAX_GAP: u64 = 1 << 20;

fn sextet(c: u8) -> Option<u32> {
    Some(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    } as u32)
}

/// Canonical padded base64 (the unused bits of the last group must be zero).
fn decode_base64(s: &[u8], out: &mut Vec<u8>) -> Option<()> {
    if s.is_empty() || s.len() % 4 != 0 {
        return None;
    }
    let groups = s.len() / 4;
    for (g, chunk) in s.chunks_exact(4).enumerate() {
        let last = g + 1 == groups;
        let pad = if last {
            chunk.iter().rev().take_while(|&&c| c == b'=').count()
        } else {
            0
        };
        if pad > 2 {
            return None;
        }
        let mut v = 0u32;
        for &c in &chunk[..4 - pad] {
            v = v << 6 | sextet(c)?;
        }
        v <<= 6 * pad as u32;
        let bytes = [(v >> 16) as u8, (v >> 8) as u8, v as u8];
        if pad > 0 && v & ((1 << (8 * pad)) - 1) != 0 {
            return None;
        }
        out.extend_from_slice(&bytes[..3 - pad]);
    }
    Some(())
}

/// The (rank, token) pairs of a well-formed rank file, or `None` (see the module doc).
pub fn parse(data: &[u8]) -> Option<Vec<(Rank, Vec<u8>)>> {
    let body = data.strip_suffix(b"\n")?;
    let lines = memchr::memchr_iter(b'\n', data).count();
    let mut out = Vec::with_capacity(lines);
    // Ranks seen, as bits: no rank above `limit` is taken, so the bitmap follows the file's
    // size (a hash set of the ranks was a tenth of loading o200k).
    let limit = MAX_RANK.min(2 * lines as u64 + MAX_GAP);
    let mut seen = vec![0u64; (limit / 64 + 1) as usize];
    let mut token = Vec::new();
    for line in body.split(|&b| b == b'\n') {
        let space = memchr::memchr(b' ', line)?;
        let (b64, digits) = (&line[..space], &line[space + 1..]);
        if digits.is_empty() || digits.len() > 10 || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let rank = digits.iter().fold(0u64, |r, &d| r * 10 + (d - b'0') as u64);
        token.clear();
        decode_base64(b64, &mut token)?;
        if rank > limit || seen[(rank / 64) as usize] & (1 << (rank % 64)) != 0 {
            return None;
        }
        seen[(rank / 64) as usize] |= 1 << (rank % 64);
        out.push((rank as Rank, token.clone()));
    }
    let limit = MAX_RANK.min(2 * out.len() as u64 + MAX_GAP);
    if out.iter().any(|&(r, _)| r as u64 > limit) {
        return None;
    }
    let tokens: FxHashSet<&[u8]> = out.iter().map(|(_, t)| t.as_slice()).collect();
    (tokens.len() == out.len()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_common_form() {
        assert_eq!(
            parse(b"IQ== 0\naGk= 1\nIGhp 2\n"),
            Some(vec![
                (0, b"!".to_vec()),
                (1, b"hi".to_vec()),
                (2, b" hi".to_vec())
            ])
        );
        assert_eq!(parse(b"AAECAw== 7\n"), Some(vec![(7, vec![0, 1, 2, 3])]));
    }

    #[test]
    fn leaves_anything_else_to_the_python_reader() {
        for bad in [
            &b"IQ== 0"[..],        // no final newline
            b"IQ== 0\n\naGk= 1\n", // blank line
            b"IQ== 0\r\n",         // CRLF
            b"IQ==  0\n",          // two spaces
            b"IQ== +0\n",          // sign
            b"IQ 0\n",             // missing padding
            b"IR== 0\n",           // non-zero unused bits
            b"I=Q= 0\n",           // padding inside
            b"IQ== 0\nIQ== 1\n",   // duplicate token
            b"IQ== 0\naGk= 0\n",   // duplicate rank
            b"IQ== 5000000\n",     // far beyond the token count
            b"IQ== 99999999999\n", // too large
            b" 0\n",               // empty token
            b"\n",
        ] {
            assert_eq!(parse(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
