//! Encoding batches of texts, and whole files, into one flat buffer of uint16 or uint32 ids plus
//! document offsets: what `encode_batch_numpy`, `encode_files` and corpus encoding return,
//! without a Python object per token.
//!
//! How the work is shared (performance notes):
//! - Texts are cut into pieces of work by `Encoder::work` (large texts at independent cuts only,
//!   so the ids never depend on the number of threads). Each piece of work is encoded on its own
//!   thread into its own `Vec<Rank>`; nothing waits for the piece before it.
//! - Only then are the sizes known: a prefix sum gives each piece its place in the output, and
//!   the pieces are copied (narrowed to u16 when asked) into disjoint slices of the output in
//!   parallel. There is no ordering step that runs on one thread, and the output is written
//!   once, straight into the buffer Python will own (`py.rs` fills a `bytes` object in place).
//! - The piece cache is the encoder's (`Encoder::cache`): a fixed set of shards that outlive the
//!   call, each taken by whichever thread is free. A long run over a corpus therefore keeps its
//!   cache warm across batches and across threads, which is the steady state of Zipfian text.
//!   A shard holds up to ~786 k pieces of up to 16 bytes (two generations of 16 MiB) and
//!   ~256 k longer ones (two generations of 2 MiB of slots plus their arena), allocated as it
//!   fills (`encode::short`, `encode::CACHE_BITS`): 100 MB of the bench mix has 425 k distinct
//!   pieces that are not one token, which the earlier 2 x 64 Ki entries did not hold.
//! - Files are read whole with one `read` each (in parallel, one file per thread), checked as
//!   UTF-8 (the first bad byte is named with its offset), or repaired with U+FFFD as Python's
//!   `errors="replace"` does (the same maximal-subpart rule), counting the replacements.

use rayon::prelude::*;

use crate::encode::{Encoder, Parallel};
use crate::error::{Error, Result};
use crate::Rank;

/// Width of one id in the output, in bytes: 2 (uint16) or 4 (uint32).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Width {
    U16,
    U32,
}

impl Width {
    pub fn bytes(self) -> usize {
        match self {
            Width::U16 => 2,
            Width::U32 => 4,
        }
    }

    pub fn from_bytes(n: usize) -> Result<Width> {
        match n {
            2 => Ok(Width::U16),
            4 => Ok(Width::U32),
            _ => Err(Error::Invalid(format!(
                "id width must be 2 or 4 bytes, not {n}"
            ))),
        }
    }
}

/// A token put between documents: before each document, or after each.
#[derive(Debug, Clone, Copy)]
pub struct Separator {
    pub id: Rank,
    pub prepend: bool,
}

/// Encoded texts, not yet flattened: the parts (pieces of work, in order) and, for each text,
/// where its tokens start in the flat output (`offsets`, one more than the texts).
#[derive(Debug)]
pub struct Parts {
    parts: Vec<Vec<Rank>>,
    pub offsets: Vec<u64>,
    separator: Option<Separator>,
    /// The text each part belongs to, and whether it is the first / last part of that text
    /// (and that text starts / ends a document: where a separator goes).
    owners: Vec<(usize, bool, bool)>,
}

impl Parts {
    /// Number of tokens in the flat output.
    pub fn total(&self) -> usize {
        *self.offsets.last().unwrap_or(&0) as usize
    }

    /// Writes the flat output into `out` (exactly `total() * width` bytes), little-endian, on
    /// `threads` threads. Fails, naming the id, if one does not fit the width.
    pub fn write(&self, width: Width, out: &mut [u8], threads: usize) -> Result<()> {
        let w = width.bytes();
        if out.len() != self.total() * w {
            return Err(Error::Invalid("output buffer has the wrong size".into()));
        }
        // Cut `out` into one disjoint slice per part (separators included), in order.
        let mut slices = Vec::with_capacity(self.parts.len());
        let mut rest = out;
        for (k, part) in self.parts.iter().enumerate() {
            let (_, first, last) = self.owners[k];
            let sep = self.separator.map_or(0, |s| {
                usize::from((s.prepend && first) || (!s.prepend && last))
            });
            let (mine, tail) = std::mem::take(&mut rest).split_at_mut((part.len() + sep) * w);
            slices.push(mine);
            rest = tail;
        }
        let one = |(k, dst): (usize, &mut [u8])| -> Result<()> {
            let (_, first, last) = self.owners[k];
            let sep = self.separator;
            let mut dst = dst;
            if let Some(s) = sep.filter(|s| s.prepend && first) {
                dst = put(width, &[s.id], dst)?;
            }
            dst = put(width, &self.parts[k], dst)?;
            if let Some(s) = sep.filter(|s| !s.prepend && last) {
                put(width, &[s.id], dst)?;
            }
            Ok(())
        };
        crate::threads::run(threads, || {
            if threads == 1 {
                slices.into_iter().enumerate().try_for_each(one)
            } else {
                slices.into_par_iter().enumerate().try_for_each(one)
            }
        })?
    }

    /// The flat ids as u32 (for tests and Rust callers).
    pub fn to_vec(&self) -> Vec<Rank> {
        let mut buf = vec![0u8; self.total() * 4];
        self.write(Width::U32, &mut buf, 1)
            .expect("u32 holds every id");
        buf.chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }
}

/// Writes `ids` at the start of `dst` and returns the rest of `dst`.
#[inline]
fn put<'a>(width: Width, ids: &[Rank], dst: &'a mut [u8]) -> Result<&'a mut [u8]> {
    match width {
        Width::U32 => {
            let (head, tail) = dst.split_at_mut(ids.len() * 4);
            for (d, &id) in head.chunks_exact_mut(4).zip(ids) {
                d.copy_from_slice(&id.to_le_bytes());
            }
            Ok(tail)
        }
        Width::U16 => {
            let (head, tail) = dst.split_at_mut(ids.len() * 2);
            let mut big = 0;
            for (d, &id) in head.chunks_exact_mut(2).zip(ids) {
                big |= id >> 16;
                d.copy_from_slice(&(id as u16).to_le_bytes());
            }
            if big != 0 {
                let id = ids.iter().find(|&&id| id > 0xFFFF).copied().unwrap_or(0);
                return Err(Error::Invalid(format!(
                    "token id {id} does not fit in uint16; use uint32"
                )));
            }
            Ok(tail)
        }
    }
}

impl Encoder {
    /// Encodes `texts` (the special tokens `allowed` become their ids), each text a document,
    /// with `separator` before or after each one; `write` then flattens the result.
    pub fn encode_parts(
        &self,
        texts: &[&str],
        allowed: &[Rank],
        separator: Option<Separator>,
        par: Parallel,
    ) -> Result<Parts> {
        self.encode_parts_edges(texts, allowed, separator, None, par)
    }

    /// `encode_parts` where each text may be a piece of a document: `edges[i]` says whether
    /// text `i` starts a document and whether it ends one, and the separator goes only before
    /// a start (prepend) or after an end (append). Corpus encoding cuts a large file into
    /// pieces; putting the separator here spares a copy of the ids (`np.insert`) in Python.
    pub fn encode_parts_edges(
        &self,
        texts: &[&str],
        allowed: &[Rank],
        separator: Option<Separator>,
        edges: Option<&[(bool, bool)]>,
        par: Parallel,
    ) -> Result<Parts> {
        if edges.is_some_and(|e| e.len() != texts.len()) {
            return Err(Error::Invalid("edges must have one entry per text".into()));
        }
        let edge = |i: usize| edges.map_or((true, true), |e| e[i]);
        let matcher = self.matcher(allowed)?;
        let m = matcher.as_deref();
        let work = self.work(texts, par);
        let one = |&(_, c): &(usize, &str)| {
            let mut out = Vec::with_capacity(c.len() / 3);
            self.encode_chunk(c, m, &mut out).map(|_| out)
        };
        let parts: Vec<Vec<Rank>> = crate::threads::run(par.threads, || {
            if par.threads == 1 {
                work.iter().map(one).collect::<Result<_>>()
            } else {
                work.par_iter().map(one).collect::<Result<_>>()
            }
        })??;
        let sep = usize::from(separator.is_some());
        let mut owners = Vec::with_capacity(work.len());
        let mut offsets = vec![0u64; texts.len() + 1];
        let mut pos = 0usize;
        let mut k = 0;
        for i in 0..texts.len() {
            let (starts, ends) = edge(i);
            pos += sep * usize::from(starts && separator.is_some_and(|s| s.prepend));
            let first_k = k;
            while k < work.len() && work[k].0 == i {
                k += 1;
            }
            // `work` holds at least one piece per text (an empty text is one empty piece).
            for (j, part) in parts.iter().enumerate().take(k).skip(first_k) {
                pos += part.len();
                owners.push((i, starts && j == first_k, ends && j + 1 == k));
            }
            pos += sep * usize::from(ends && separator.is_some_and(|s| !s.prepend));
            offsets[i + 1] = pos as u64;
        }
        debug_assert_eq!(k, work.len());
        Ok(Parts {
            parts,
            offsets,
            separator,
            owners,
        })
    }
}

/// The text of `bytes` read from `source`: checked UTF-8, or (with `replace`) bad bytes replaced
/// by U+FFFD as Python's `errors="replace"` does. Returns the text and the replacements made.
pub fn utf8_text(bytes: Vec<u8>, source: &str, replace: bool) -> Result<(String, u64)> {
    match String::from_utf8(bytes) {
        Ok(s) => Ok((s, 0)),
        Err(e) if !replace => Err(Error::Utf8 {
            source: source.to_string(),
            offset: e.utf8_error().valid_up_to() as u64,
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

/// Reads byte ranges `[start, end)` of files (one range per thread; `end` past the file's end
/// reads to its end) as text, as `utf8_text` does, naming the file and its offset in errors.
/// Corpus encoding cuts a large file into ranges at independent cuts (`count::file_cuts`),
/// always just after a newline, so no character and no invalid sequence spans two ranges.
pub fn read_ranges(
    ranges: &[(String, u64, u64)],
    replace: bool,
    threads: usize,
) -> Result<(Vec<String>, u64)> {
    use std::io::{Read, Seek, SeekFrom};
    let one = |(p, start, end): &(String, u64, u64)| -> Result<(String, u64)> {
        let io = |error| Error::Io {
            source: p.clone(),
            error,
        };
        let mut file = std::fs::File::open(p).map_err(io)?;
        // Sized once from the file (never from the range alone): growing by doubling left
        // buffers of many sizes behind in the heap.
        let len = file.metadata().map_err(io)?.len();
        let want = end.min(&len).saturating_sub(*start);
        file.seek(SeekFrom::Start(*start)).map_err(io)?;
        let mut bytes = Vec::with_capacity(want as usize);
        file.take(end.saturating_sub(*start))
            .read_to_end(&mut bytes)
            .map_err(io)?;
        match utf8_text(bytes, p, replace) {
            Err(Error::Utf8 { source, offset }) => Err(Error::Utf8 {
                source,
                offset: offset + start,
            }),
            other => other,
        }
    };
    let read: Vec<(String, u64)> = crate::threads::run(threads, || {
        if threads == 1 {
            ranges.iter().map(one).collect::<Result<_>>()
        } else {
            ranges.par_iter().map(one).collect::<Result<_>>()
        }
    })??;
    let replaced = read.iter().map(|r| r.1).sum();
    Ok((read.into_iter().map(|r| r.0).collect(), replaced))
}

/// Reads the files (one per thread) as text, as `utf8_text` does; returns the texts and the
/// total number of replacements.
pub fn read_texts(paths: &[String], replace: bool, threads: usize) -> Result<(Vec<String>, u64)> {
    let one = |p: &String| -> Result<(String, u64)> {
        let bytes = std::fs::read(p).map_err(|error| Error::Io {
            source: p.clone(),
            error,
        })?;
        utf8_text(bytes, p, replace)
    };
    let read: Vec<(String, u64)> = crate::threads::run(threads, || {
        if threads == 1 {
            paths.iter().map(one).collect::<Result<_>>()
        } else {
            paths.par_iter().map(one).collect::<Result<_>>()
        }
    })??;
    let replaced = read.iter().map(|r| r.1).sum();
    Ok((read.into_iter().map(|r| r.0).collect(), replaced))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::Bpe;
    use crate::pretok::Pretokenizer;

    fn encoder() -> Encoder {
        let mut v: Vec<(Rank, Vec<u8>)> = (0..=255u8).map(|b| (b as Rank, vec![b])).collect();
        v.push((256, b"ab".to_vec()));
        v.push((257, b"aa".to_vec()));
        let bpe = Bpe::from_merges(v, &[(97, 98), (97, 97)]).unwrap();
        let pretok = Pretokenizer::new(Some("gpt2")).unwrap();
        Encoder::new(bpe, pretok, vec![("<|eot|>".into(), 70000)]).unwrap()
    }

    fn each(enc: &Encoder, texts: &[&str]) -> Vec<Vec<Rank>> {
        texts
            .iter()
            .map(|t| {
                let mut out = Vec::new();
                enc.encode_into(t, &[70000], &mut out).unwrap();
                out
            })
            .collect()
    }

    #[test]
    fn flat_matches_each_text_whatever_the_chunking() {
        let enc = encoder();
        let long = "aab abab aaaa b\n".repeat(500);
        let texts = ["aab ab", "", &long, "x<|eot|>aa", "ab"];
        let want = each(&enc, &texts);
        for (threads, chunk) in [(1, None), (2, Some(64)), (3, Some(1000)), (1, Some(7))] {
            let par = Parallel {
                threads,
                chunk_bytes: chunk,
            };
            for sep in [None, Some(true), Some(false)] {
                let separator = sep.map(|prepend| Separator { id: 9, prepend });
                let parts = enc.encode_parts(&texts, &[70000], separator, par).unwrap();
                let flat = parts.to_vec();
                let mut expect = Vec::new();
                let mut offsets = vec![0u64];
                for ids in &want {
                    if sep == Some(true) {
                        expect.push(9);
                    }
                    expect.extend_from_slice(ids);
                    if sep == Some(false) {
                        expect.push(9);
                    }
                    offsets.push(expect.len() as u64);
                }
                assert_eq!(
                    flat, expect,
                    "threads {threads} chunk {chunk:?} sep {sep:?}"
                );
                assert_eq!(parts.offsets, offsets);
            }
        }
    }

    #[test]
    fn edges_put_separators_only_at_document_ends() {
        let enc = encoder();
        let texts = ["aab ab", "abab aa", "b", "aa"];
        let each_ids = each(&enc, &texts);
        let edges = [(true, false), (false, true), (true, true), (false, false)];
        for (threads, prepend) in [(1, true), (2, false), (3, true)] {
            let par = Parallel {
                threads,
                chunk_bytes: Some(3),
            };
            let sep = Some(Separator { id: 9, prepend });
            let parts = enc
                .encode_parts_edges(&texts, &[], sep, Some(&edges), par)
                .unwrap();
            let mut expect = Vec::new();
            let mut offsets = vec![0u64];
            for (ids, &(s, e)) in each_ids.iter().zip(&edges) {
                if prepend && s {
                    expect.push(9);
                }
                expect.extend_from_slice(ids);
                if !prepend && e {
                    expect.push(9);
                }
                offsets.push(expect.len() as u64);
            }
            assert_eq!(parts.to_vec(), expect);
            assert_eq!(parts.offsets, offsets);
        }
        assert!(enc
            .encode_parts_edges(&texts, &[], None, Some(&edges[..2]), Parallel::SERIAL)
            .is_err());
    }

    #[test]
    fn u16_refuses_a_large_id() {
        let enc = encoder();
        let parts = enc
            .encode_parts(&["a<|eot|>"], &[70000], None, Parallel::SERIAL)
            .unwrap();
        let mut buf = vec![0u8; parts.total() * 2];
        let err = parts.write(Width::U16, &mut buf, 1).unwrap_err();
        assert!(err.to_string().contains("70000"), "{err}");
        let parts = enc
            .encode_parts(&["ab aa"], &[], None, Parallel::SERIAL)
            .unwrap();
        let mut buf = vec![0u8; parts.total() * 2];
        parts.write(Width::U16, &mut buf, 2).unwrap();
        let ids: Vec<u16> = buf
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        assert_eq!(
            ids,
            parts.to_vec().iter().map(|&i| i as u16).collect::<Vec<_>>()
        );
    }

    #[test]
    fn utf8_errors_name_the_offset_or_are_replaced() {
        let bad = b"ok \xff\xfe then \xe2\x82".to_vec();
        match utf8_text(bad.clone(), "f.txt", false) {
            Err(Error::Utf8 { source, offset }) => {
                assert_eq!((source.as_str(), offset), ("f.txt", 3))
            }
            other => panic!("{other:?}"),
        }
        let (text, n) = utf8_text(bad.clone(), "f.txt", true).unwrap();
        assert_eq!(text, String::from_utf8_lossy(&bad));
        assert_eq!(n, 3);
    }

    #[test]
    fn ranges_read_their_bytes_and_name_the_file_offset() {
        let dir = std::env::temp_dir().join(format!("bytepair-arrays-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.txt");
        std::fs::write(&path, b"line one\nline \xff two\n").unwrap();
        let p = path.to_string_lossy().to_string();
        let (texts, _) =
            read_ranges(&[(p.clone(), 0, 9), (p.clone(), 17, u64::MAX)], false, 2).unwrap();
        assert_eq!(texts, vec!["line one\n".to_string(), "wo\n".to_string()]);
        match read_ranges(&[(p.clone(), 9, 30)], false, 1) {
            Err(Error::Utf8 { offset, .. }) => assert_eq!(offset, 14),
            other => panic!("{other:?}"),
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
