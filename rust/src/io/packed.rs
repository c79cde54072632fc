//! Piece counts as one compact byte string, to move them between processes: the Dask backend
//! counts on many workers and merges the counts there, and one `bytes` object travels (and
//! pickles) far more cheaply than a list of millions of `(bytes, int)` tuples.
//!
//! Layout: the magic `BPC1`, then unsigned LEB128 varints: bytes counted, documents, replaced
//! bytes, words, the number of pieces, then for each piece its length, its bytes, its count. Pieces
//! come in no particular order.

use crate::count::CountStats;
use crate::error::{Error, Result};

const MAGIC: &[u8; 4] = b"BPC1";

fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Serialises counts and their statistics.
pub fn pack<'a>(
    counts: impl ExactSizeIterator<Item = (&'a [u8], u64)>,
    stats: CountStats,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(32 + counts.len() * 10);
    out.extend_from_slice(MAGIC);
    for v in [
        stats.bytes,
        stats.documents,
        stats.replaced,
        stats.words,
        counts.len() as u64,
    ] {
        put(&mut out, v);
    }
    for (piece, count) in counts {
        put(&mut out, piece.len() as u64);
        out.extend_from_slice(piece);
        put(&mut out, count);
    }
    out
}

struct Reader<'a> {
    blob: &'a [u8],
    at: usize,
}

fn malformed(what: &str) -> Error {
    Error::Invalid(format!("malformed packed counts: {what}"))
}

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Result<u64> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let byte = *self
                .blob
                .get(self.at)
                .ok_or_else(|| malformed("truncated"))?;
            self.at += 1;
            if shift == 63 && byte > 1 {
                return Err(malformed("number too large"));
            }
            v |= u64::from(byte & 0x7F) << shift;
            if byte < 0x80 {
                return Ok(v);
            }
        }
        Err(malformed("number too large"))
    }

    fn bytes(&mut self, n: u64) -> Result<&'a [u8]> {
        let n = usize::try_from(n).map_err(|_| malformed("piece too long"))?;
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.blob.len())
            .ok_or_else(|| malformed("truncated"))?;
        let piece = &self.blob[self.at..end];
        self.at = end;
        Ok(piece)
    }
}

/// The statistics and the (piece, count) pairs of a packed blob, borrowing from it.
pub type Unpacked<'a> = (CountStats, Vec<(&'a [u8], u64)>);

/// Reads what `pack` wrote.
pub fn unpack(blob: &[u8]) -> Result<Unpacked<'_>> {
    if !blob.starts_with(MAGIC) {
        return Err(malformed("no BPC1 header"));
    }
    let mut r = Reader {
        blob,
        at: MAGIC.len(),
    };
    let stats = CountStats {
        bytes: r.varint()?,
        documents: r.varint()?,
        replaced: r.varint()?,
        words: r.varint()?,
    };
    let n = r.varint()?;
    // Each piece takes at least two bytes: never trust `n` for more than the blob can hold.
    let mut counts = Vec::with_capacity((n as usize).min(blob.len() / 2));
    for _ in 0..n {
        let len = r.varint()?;
        let piece = r.bytes(len)?;
        counts.push((piece, r.varint()?));
    }
    if r.at != blob.len() {
        return Err(malformed("trailing bytes"));
    }
    Ok((stats, counts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip() {
        let counts: Vec<(&[u8], u64)> = vec![
            (b"hello", 3),
            (b"", 0),
            (b" w\xff", u64::MAX),
            (&[0u8; 300], 1 << 40),
        ];
        let stats = CountStats {
            bytes: 1 << 35,
            documents: 7,
            replaced: 128,
            words: 99,
        };
        let blob = pack(counts.iter().copied(), stats);
        let (s, c) = unpack(&blob).unwrap();
        assert_eq!(
            (s.bytes, s.documents, s.replaced, s.words),
            (1 << 35, 7, 128, 99)
        );
        assert_eq!(c, counts);
    }

    #[test]
    fn malformed_blobs_are_errors_not_panics() {
        let blob = pack(
            [(b"abc".as_slice(), 5u64)].into_iter(),
            CountStats::default(),
        );
        for cut in 0..blob.len() {
            assert!(
                matches!(unpack(&blob[..cut]), Err(Error::Invalid(_))),
                "cut at {cut}"
            );
        }
        let mut longer = blob.clone();
        longer.push(0);
        assert!(unpack(&longer).is_err());
        assert!(unpack(b"BPC1\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01").is_err());
        assert!(unpack(b"BPC1\x00\x00\x00\xff\xff\xff\xff\x0f").is_err());
    }
}
