//! Reading byte ranges of files as checked UTF-8 text, on all threads: what `encode_files` and
//! corpus encoding read before they encode.
//!
//! Why ranges are split: a batch of `encode_files` was one range of 8 MiB per thread, read and
//! checked by one thread while the others waited, a serial step that grows with the number of
//! threads. Now every range is cut into pieces of at least `MIN_PIECE`, each read by its own thread
//! (its own file handle, a seek, reads until the piece is full) into its place in the range's
//! buffer; then each piece is checked on its own, from the first character that starts in it to the
//! first that starts in the next.
//!
//! Exactness: cut points move forward (at most 3 bytes) to a byte that is not a UTF-8
//! continuation byte, so in valid text every span starts and ends on a character boundary and
//! valid spans make valid text; text with a bad byte anywhere is checked again whole, as before,
//! so the offset an error names and what `replace` does never depend on the cuts. A range whose
//! file got shorter while it was read is read again whole.
//!
//! What was measured: NOTES.md beside this file.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

use rayon::prelude::*;

use crate::error::{Error, Result};

/// Pieces of a range read by one thread are at least this large (a thread's read of 1 MiB is
/// 0.3-0.5 ms; the open and seek, a few microseconds).
const MIN_PIECE: usize = 1 << 20;

/// The text of `bytes` read from `source`: checked UTF-8, or (with `replace`) bad bytes replaced
/// by U+FFFD as Python's `errors="replace"` does. Returns the text and the replacements made.
pub fn utf8_text(bytes: Vec<u8>, source: &str, replace: bool) -> Result<(String, u64)> {
    utf8_at(bytes, source, 0, replace)
}

/// `utf8_text` of bytes that start at `start` in `source` (where an error's offset counts from).
fn utf8_at(bytes: Vec<u8>, source: &str, start: u64, replace: bool) -> Result<(String, u64)> {
    match String::from_utf8(bytes) {
        Ok(s) => Ok((s, 0)),
        Err(e) if !replace => Err(Error::Utf8 {
            source: source.to_string(),
            offset: e.utf8_error().valid_up_to() as u64 + start,
        }),
        Err(e) => {
            let bytes = e.into_bytes();
            let mut out = String::with_capacity(bytes.len());
            let mut n = 0u64;
            for chunk in bytes.utf8_chunks() {
                out.push_str(chunk.valid());
                if !chunk.invalid().is_empty() {
                    out.push('\u{FFFD}');
                    n += 1;
                }
            }
            Ok((out, n))
        }
    }
}

/// Reads byte ranges `[start, end)` of files (`end` past the file's end reads to its end) as
/// text, as `utf8_text` does, naming the file and its offset in errors. Corpus encoding cuts a
/// large file into ranges at independent cuts (`count::file_cuts`), always just after a
/// newline, so no character and no invalid sequence spans two ranges.
pub fn read_ranges(
    ranges: &[(String, u64, u64)],
    replace: bool,
    threads: usize,
) -> Result<(Vec<String>, u64)> {
    let mut texts = Vec::new();
    let replaced = read_ranges_into(ranges, replace, threads, &mut texts)?;
    texts.truncate(ranges.len());
    Ok((texts, replaced))
}

/// `read_ranges` into `texts[..ranges.len()]` (added when missing), reusing their buffers:
/// a buffer keeps its capacity, so a long run reads each batch into the memory of the last.
/// The ranges are read and checked in pieces on `threads` threads (see the module's notes).
pub fn read_ranges_into(
    ranges: &[(String, u64, u64)],
    replace: bool,
    threads: usize,
    texts: &mut Vec<String>,
) -> Result<u64> {
    if texts.len() < ranges.len() {
        texts.resize_with(ranges.len(), String::new);
    }
    // Each range's buffer, sized from its file now (never grown by doubling, which left
    // buffers of many sizes behind in the heap). Bytes the last batch left in a buffer are
    // kept as they are (they will be read over), so a reused buffer is not zeroed.
    let mut bufs = Vec::with_capacity(ranges.len());
    for ((p, start, end), slot) in ranges.iter().zip(texts.iter_mut()) {
        let len = std::fs::metadata(p).map_err(Error::io(p))?.len();
        let want = usize::try_from((*end).min(len).saturating_sub(*start))
            .map_err(|_| Error::Invalid(format!("{p}: a range too large to read")))?;
        let mut bytes = std::mem::take(slot).into_bytes();
        if bytes.len() < want {
            bytes.reserve_exact(want - bytes.len());
            bytes.resize(want, 0);
        } else {
            bytes.truncate(want);
        }
        bufs.push(bytes);
    }
    let total: usize = bufs.iter().map(|b| b.len()).sum();
    let size = if threads <= 1 {
        usize::MAX
    } else {
        total.div_ceil(2 * threads).max(MIN_PIECE)
    };
    // (range, offset in it, bytes); whole ranges on one thread.
    let mut pieces: Vec<(usize, usize, &mut [u8])> = Vec::new();
    for (r, b) in bufs.iter_mut().enumerate() {
        let mut at = 0;
        for chunk in b.chunks_mut(size) {
            let n = chunk.len();
            pieces.push((r, at, chunk));
            at += n;
        }
    }
    let read = |(r, at, dst): &mut (usize, usize, &mut [u8])| -> Result<bool> {
        let (p, start, _) = &ranges[*r];
        read_piece(p, start + *at as u64, dst).map_err(Error::io(p))
    };
    let full: Vec<bool> = crate::threads::run(threads, || {
        if threads == 1 {
            pieces.iter_mut().map(read).collect::<Result<_>>()
        } else {
            pieces.par_iter_mut().map(read).collect::<Result<_>>()
        }
    })??;
    let spans: Vec<(usize, usize, usize)> = pieces
        .iter()
        .map(|(r, at, dst)| (*r, *at, *at + dst.len()))
        .collect();
    drop(pieces);
    let check = |&(r, a, b): &(usize, usize, usize)| {
        let bytes = &bufs[r];
        std::str::from_utf8(&bytes[boundary(bytes, a)..boundary(bytes, b)]).is_ok()
    };
    let valid: Vec<bool> = crate::threads::run(threads, || {
        if threads == 1 {
            spans.iter().map(check).collect()
        } else {
            spans.par_iter().map(check).collect()
        }
    })?;
    let mut replaced = 0;
    for (r, (bytes, slot)) in bufs.into_iter().zip(texts.iter_mut()).enumerate() {
        let (p, start, end) = &ranges[r];
        let of_range = |k: &usize| spans[*k].0 == r;
        let pieces_of = || (0..spans.len()).filter(of_range);
        if pieces_of().any(|k| !full[k]) {
            // The file got shorter since its size was taken: read what it has now.
            let (text, n) = read_whole(p, *start, *end, bytes, replace)?;
            *slot = text;
            replaced += n;
        } else if pieces_of().all(|k| valid[k]) {
            // SAFETY: the spans checked above tile `bytes` (`boundary` is the same function of
            // each cut for both spans that meet there, and moves it by at most 3 bytes, within
            // a piece of at least 4 unless it is the last), each is valid UTF-8, and so is
            // their concatenation.
            *slot = unsafe { String::from_utf8_unchecked(bytes) };
        } else {
            let (text, n) = utf8_at(bytes, p, *start, replace)?;
            *slot = text;
            replaced += n;
        }
    }
    Ok(replaced)
}

/// Where the span that starts at cut `i` of `bytes` starts: `i`, or the first of the next 3
/// bytes, if `i` is a UTF-8 continuation byte, that is not (in valid text, the start of the
/// character after the one `i` is inside of), or the end if it comes first; `i` again if
/// there is none (the text is not valid, and is checked again whole).
fn boundary(bytes: &[u8], i: usize) -> usize {
    if i == 0 || i >= bytes.len() {
        return i.min(bytes.len());
    }
    let reach = bytes.len().min(i + 4);
    match (i..reach).find(|&j| bytes[j] & 0xC0 != 0x80) {
        Some(j) => j,
        None if reach == bytes.len() => reach, // the character runs to the end
        None => i,
    }
}

/// Reads `dst.len()` bytes of `path` from `offset`; false if the file ended first.
fn read_piece(path: &str, offset: u64, dst: &mut [u8]) -> std::io::Result<bool> {
    let mut file = File::open(path)?;
    file.seek(SeekFrom::Start(offset))?;
    let mut got = 0;
    while got < dst.len() {
        match file.read(&mut dst[got..]) {
            Ok(0) => return Ok(false),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Range `[start, end)` of `path` read to its end on this thread, into `bytes`' memory.
fn read_whole(
    path: &str,
    start: u64,
    end: u64,
    mut bytes: Vec<u8>,
    replace: bool,
) -> Result<(String, u64)> {
    let mut file = File::open(path).map_err(Error::io(path))?;
    file.seek(SeekFrom::Start(start)).map_err(Error::io(path))?;
    bytes.clear();
    file.take(end.saturating_sub(start))
        .read_to_end(&mut bytes)
        .map_err(Error::io(path))?;
    utf8_at(bytes, path, start, replace)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str, bytes: &[u8]) -> (std::path::PathBuf, String) {
        let dir = std::env::temp_dir().join(format!("bytepair-read-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.txt");
        std::fs::write(&path, bytes).unwrap();
        let p = path.to_string_lossy().to_string();
        (dir, p)
    }

    /// Text of `n` bytes mixing 1- to 4-byte characters, so that cuts land inside them.
    fn mixed(n: usize) -> Vec<u8> {
        let chars = ["a", "é", "ж", "中", "😀", " ", "\n", "z"];
        let mut s = String::new();
        let mut x = 12345u64;
        while s.len() < n {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            s.push_str(chars[(x >> 60) as usize % chars.len()]);
        }
        s.into_bytes()
    }

    #[test]
    fn pieces_give_the_bytes_and_errors_of_one_read() {
        // 3.5 MiB of mixed characters: on 2 and 3 threads the ranges are cut into 1 MiB pieces
        // whose cuts fall inside characters. The texts, and for a bad byte put in each piece in
        // turn the error's offset (strict) and the replaced text and count, are those of reading
        // and checking each range whole.
        let good = mixed(7 << 19 | 12345);
        let n = good.len() as u64;
        let cases: Vec<Vec<(u64, u64)>> = vec![
            vec![(0, u64::MAX)],
            vec![(0, n / 3), (n / 3, u64::MAX)],
            vec![(7, n - 5)],
        ];
        let cut = 1usize << 20; // where the first piece ends on 2 and 3 threads
        for bad_at in [
            None,
            Some(5usize),
            Some(cut),
            Some(cut + 1),
            Some(3 << 20),
            Some(0),
        ] {
            let mut bytes = good.clone();
            match bad_at {
                // A stray continuation byte just at a cut, between whole characters.
                Some(0) => {
                    let starts = |i: &usize| good[*i] & 0xC0 != 0x80;
                    let p = (0..cut - 4).rev().find(starts).unwrap();
                    let q = (cut + 1..good.len()).find(starts).unwrap();
                    bytes[p..q].fill(b'a');
                    bytes[cut] = 0x80;
                }
                Some(i) => bytes[i] = 0xFF,
                None => {}
            }
            let (dir, p) = temp("pieces", &bytes);
            for spans in &cases {
                let ranges: Vec<(String, u64, u64)> =
                    spans.iter().map(|&(a, b)| (p.clone(), a, b)).collect();
                let whole = |replace: bool| -> Result<(Vec<String>, u64)> {
                    let mut texts = Vec::new();
                    let mut n = 0;
                    for &(a, b) in spans {
                        let end = (b.min(bytes.len() as u64)) as usize;
                        let (t, k) = utf8_at(bytes[a as usize..end].to_vec(), &p, a, replace)?;
                        texts.push(t);
                        n += k;
                    }
                    Ok((texts, n))
                };
                for threads in [1, 2, 3] {
                    for replace in [false, true] {
                        let got = read_ranges(&ranges, replace, threads);
                        let want = whole(replace);
                        match (got, want) {
                            (Ok(g), Ok(w)) => assert_eq!(g, w, "{bad_at:?} {spans:?} {threads}"),
                            (
                                Err(Error::Utf8 { offset: g, .. }),
                                Err(Error::Utf8 { offset: w, .. }),
                            ) => {
                                assert_eq!(g, w, "{bad_at:?} {spans:?} {threads}")
                            }
                            (g, w) => panic!("{bad_at:?} {spans:?} {threads}: {g:?} against {w:?}"),
                        }
                    }
                }
            }
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }

    #[test]
    fn boundaries_move_to_a_character_start() {
        let b = "aé中😀".as_bytes(); // a | c3 a9 | e4 b8 ad | f0 9f 98 80
        let starts: Vec<usize> = (0..=b.len()).map(|i| boundary(b, i)).collect();
        assert_eq!(starts, vec![0, 1, 3, 3, 6, 6, 6, 10, 10, 10, 10]);
        // Four continuation bytes in a row: no start within reach, the cut stays.
        assert_eq!(boundary(&[b'a', 0x80, 0x80, 0x80, 0x80, b'b'], 1), 1);
    }
}
