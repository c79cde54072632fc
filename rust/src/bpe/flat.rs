//! Encoding batches of texts, and whole files, into one flat buffer of uint16 or uint32 ids plus
//! document offsets: what `encode_batch_numpy`, `encode_files` and corpus encoding return,
//! without a Python object per token.
//!
//! How the work is shared:
//! - Texts are cut into pieces of work by `Encoder::work` (large texts at independent cuts only,
//!   so the ids never depend on the number of threads), and consecutive pieces gathered into
//!   groups of about a chunk's size (one group on one thread). Each group is encoded on its own
//!   thread into its own `Vec<Rank>`; nothing waits for the group before it. A caller that
//!   encodes batch after batch (corpus encoding) passes the buffers of the last batch back in
//!   (`Scratch`, `encode_parts_reusing`, `read_ranges_into`): fresh buffers for every batch
//!   left glibc's heap with holes, and peak RSS grew with the corpus.
//! - Only then are the sizes known: a prefix sum gives each piece its place in the output, and
//!   the groups are copied (narrowed to u16 when asked) into disjoint slices of the output in
//!   parallel. There is no ordering step that runs on one thread, and the output is written
//!   once, straight into the buffer Python will own (`py/` fills a `bytes` object in place).
//! - The piece cache is the encoder's (`PieceCache`, `encode/cache.rs`): one cache shared by
//!   all threads, of fixed size, that outlives the call. A long run over a corpus therefore
//!   keeps it warm across batches and across threads, which is the steady state of Zipfian
//!   text.
//! - Files are read in batches of byte ranges cut where the ids do not change (8 MiB per
//!   thread, `Encoder::encode_files`), into buffers reused from batch to batch, on all threads
//!   (`io/ranges.rs`), checked as UTF-8 (the first bad byte is named with its offset in the
//!   file), or repaired with U+FFFD as Python's `errors="replace"` does (the same
//!   maximal-subpart rule), counting the replacements.
//!
//! What was measured: NOTES.md beside this file.

use std::mem::MaybeUninit;

use rayon::prelude::*;

use crate::bpe::encode::{Encoder, Parallel};

use crate::error::{Error, Result};
use crate::io::ranges::read_ranges_into;
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

/// Encoded texts, not yet flattened: the ids of the pieces of work, gathered in groups (one
/// buffer per group of consecutive pieces, a thread's task), and, for each text, where its
/// tokens start in the flat output (`offsets`, one more than the texts).
#[derive(Debug)]
pub struct Parts {
    groups: Vec<Vec<Rank>>,
    /// Index of the first piece of each group, and one more: the pieces of group `g` are
    /// `pieces[firsts[g]..firsts[g + 1]]`.
    firsts: Vec<usize>,
    pieces: Vec<Piece>,
    pub offsets: Vec<u64>,
    separator: Option<Separator>,
}

/// A piece of work in its group: where its ids end in the group's buffer (they start where
/// the piece before it in the group ends), and whether the separator goes before / after it.
#[derive(Debug, Clone, Copy)]
struct Piece {
    end: usize,
    before: bool,
    after: bool,
}

impl Parts {
    /// Number of tokens in the flat output.
    pub fn total(&self) -> usize {
        *self.offsets.last().unwrap_or(&0) as usize
    }

    /// The id buffers, for the next call to reuse (`Scratch`).
    pub fn into_buffers(self) -> Vec<Vec<Rank>> {
        self.groups
    }

    /// Writes the flat output into `out` (exactly `total() * width` bytes), little-endian, on
    /// `threads` threads. Fails, naming the id, if one does not fit the width.
    pub fn write(&self, width: Width, out: &mut [u8], threads: usize) -> Result<()> {
        // SAFETY: `write_uninit` stores only initialized bytes, so `out` stays initialized.
        let out = unsafe { &mut *(out as *mut [u8] as *mut [MaybeUninit<u8>]) };
        self.write_uninit(width, out, threads)
    }

    /// Appends the flat output to `out` as `write` makes it, written straight into its spare
    /// capacity: `encode_files` zeroed each batch's room first (`resize`), on one thread while
    /// the others waited, page faults included (3 % of a 2-thread run's samples in `perf`);
    /// now the threads that write the ids also fault the pages in.
    pub fn append_to(&self, width: Width, out: &mut Vec<u8>, threads: usize) -> Result<()> {
        let n = self.total() * width.bytes();
        out.reserve(n);
        self.write_uninit(width, &mut out.spare_capacity_mut()[..n], threads)?;
        // SAFETY: `write_uninit` succeeded, so it wrote every one of those `n` bytes.
        unsafe { out.set_len(out.len() + n) };
        Ok(())
    }

    /// `write` into memory that may be uninitialized; on success every byte of `out` is written.
    pub fn write_uninit(
        &self,
        width: Width,
        out: &mut [MaybeUninit<u8>],
        threads: usize,
    ) -> Result<()> {
        let w = width.bytes();
        if out.len() != self.total() * w {
            return Err(Error::Invalid("output buffer has the wrong size".into()));
        }
        // Cut `out` into one disjoint slice per group (separators included), in order.
        let mut slices = Vec::with_capacity(self.groups.len());
        let mut rest = out;
        for (g, ids) in self.groups.iter().enumerate() {
            let seps: usize = self.pieces[self.firsts[g]..self.firsts[g + 1]]
                .iter()
                .map(|p| usize::from(p.before) + usize::from(p.after))
                .sum();
            let (mine, tail) = std::mem::take(&mut rest).split_at_mut((ids.len() + seps) * w);
            slices.push(mine);
            rest = tail;
        }
        if !rest.is_empty() {
            return Err(Error::Invalid("the groups do not fill the output".into()));
        }
        let one = |(g, dst): (usize, &mut [MaybeUninit<u8>])| -> Result<()> {
            let ids = &self.groups[g];
            let mut dst = dst;
            let mut start = 0;
            for p in &self.pieces[self.firsts[g]..self.firsts[g + 1]] {
                let sep = self.separator.map(|s| s.id).unwrap_or(0);
                if p.before {
                    dst = put(width, &[sep], dst)?;
                }
                dst = put(width, &ids[start..p.end], dst)?;
                if p.after {
                    dst = put(width, &[sep], dst)?;
                }
                start = p.end;
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

/// Buffers that a long run of batches (corpus encoding) reuses from one batch to the next:
/// the texts of file ranges read in Rust and the id buffers of the groups of work. Allocating
/// them anew for each batch left glibc's heap with holes of every size, so that peak RSS grew
/// with the corpus; reused, each keeps the capacity of the largest batch so far.
#[derive(Debug, Default)]
pub struct Scratch {
    pub texts: Vec<String>,
    pub ids: Vec<Vec<Rank>>,
}

/// Writes `ids` at the start of `dst` (every byte of `ids.len()` ids) and returns the rest of
/// `dst`.
#[inline]
pub(crate) fn put<'a>(
    width: Width,
    ids: &[Rank],
    dst: &'a mut [MaybeUninit<u8>],
) -> Result<&'a mut [MaybeUninit<u8>]> {
    fn store(d: &mut [MaybeUninit<u8>], bytes: &[u8]) {
        for (x, &b) in d.iter_mut().zip(bytes) {
            x.write(b);
        }
    }
    match width {
        Width::U32 => {
            let (head, tail) = dst.split_at_mut(ids.len() * 4);
            for (d, &id) in head.chunks_exact_mut(4).zip(ids) {
                store(d, &id.to_le_bytes());
            }
            Ok(tail)
        }
        Width::U16 => {
            let (head, tail) = dst.split_at_mut(ids.len() * 2);
            let mut big = 0;
            for (d, &id) in head.chunks_exact_mut(2).zip(ids) {
                big |= id >> 16;
                store(d, &(id as u16).to_le_bytes());
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
        self.encode_parts_reusing(texts, allowed, separator, edges, par, &mut Vec::new())
    }

    /// `encode_parts_edges` that takes its id buffers from `pool` (and allocates only those
    /// missing); `Parts::into_buffers` gives them back. The pieces of work (`Encoder::work`)
    /// are gathered into groups of consecutive pieces of at least `group_bytes(par, total)`
    /// bytes, each group encoded by one thread into one buffer: one thread, one buffer.
    pub fn encode_parts_reusing(
        &self,
        texts: &[&str],
        allowed: &[Rank],
        separator: Option<Separator>,
        edges: Option<&[(bool, bool)]>,
        par: Parallel,
        pool: &mut Vec<Vec<Rank>>,
    ) -> Result<Parts> {
        if edges.is_some_and(|e| e.len() != texts.len()) {
            return Err(Error::Invalid("edges must have one entry per text".into()));
        }
        let edge = |i: usize| edges.map_or((true, true), |e| e[i]);
        let matcher = self.matcher(allowed)?;
        let m = matcher.as_deref();
        let work = self.work(texts, par);
        let total: usize = texts.iter().map(|t| t.len()).sum();
        let target = group_bytes(par, total);
        let mut firsts = vec![0usize];
        let mut bytes = 0usize;
        for (k, (_, c)) in work.iter().enumerate() {
            // A piece joins the group unless that takes it over the target (a group holds at
            // least one piece): chunks of a large text stay one per group.
            if k > 0 && bytes + c.len() > target {
                firsts.push(k);
                bytes = 0;
            }
            bytes += c.len();
        }
        firsts.push(work.len());
        let groups = firsts.len() - 1;
        let mut bufs: Vec<Vec<Rank>> = (0..groups)
            .map(|_| pool.pop().unwrap_or_default())
            .collect();
        let one = |(g, buf): (usize, &mut Vec<Rank>)| -> Result<Vec<usize>> {
            let mine = &work[firsts[g]..firsts[g + 1]];
            buf.clear();
            buf.reserve(mine.iter().map(|(_, c)| c.len()).sum::<usize>() / 3);
            let mut ends = Vec::with_capacity(mine.len());
            for &(_, c) in mine {
                self.encode_text(c, m, buf, par.segments)?;
                ends.push(buf.len());
            }
            Ok(ends)
        };
        let ends: Vec<Vec<usize>> = crate::threads::run(par.threads, || {
            if par.threads == 1 {
                bufs.iter_mut().enumerate().map(one).collect::<Result<_>>()
            } else {
                bufs.par_iter_mut()
                    .enumerate()
                    .map(one)
                    .collect::<Result<_>>()
            }
        })??;
        let ends: Vec<usize> = ends.into_iter().flatten().collect();
        let mut group_start = vec![0usize; work.len()]; // where each piece's ids start
        for g in 0..groups {
            let (a, b) = (firsts[g], firsts[g + 1]);
            if b > a + 1 {
                group_start[a + 1..b].copy_from_slice(&ends[a..b - 1]);
            }
        }
        let prepend = separator.is_some_and(|s| s.prepend);
        let append = separator.is_some_and(|s| !s.prepend);
        let mut pieces = Vec::with_capacity(work.len());
        let mut offsets = vec![0u64; texts.len() + 1];
        let mut pos = 0usize;
        let mut k = 0;
        for i in 0..texts.len() {
            let (starts, ends_doc) = edge(i);
            let first_k = k;
            while k < work.len() && work[k].0 == i {
                k += 1;
            }
            // `work` holds at least one piece per text (an empty text is one empty piece).
            for j in first_k..k {
                let before = prepend && starts && j == first_k;
                let after = append && ends_doc && j + 1 == k;
                pos += ends[j] - group_start[j] + usize::from(before) + usize::from(after);
                pieces.push(Piece {
                    end: ends[j],
                    before,
                    after,
                });
            }
            offsets[i + 1] = pos as u64;
        }
        debug_assert_eq!(k, work.len());
        Ok(Parts {
            groups: bufs,
            firsts,
            pieces,
            offsets,
            separator,
        })
    }
}

/// Text per batch of `Encoder::encode_files`, per thread.
const FILE_BATCH: u64 = 8 << 20;

/// Where the file at `path` is cut into ranges of about `batch` bytes that encode to the ids
/// of the whole (`count::file_cuts`): 0, the cuts, then `u64::MAX` (the last range reads to the
/// end); and the file's size.
pub(crate) fn file_bounds(enc: &Encoder, path: &str, batch: u64) -> Result<(Vec<u64>, u64)> {
    let size = std::fs::metadata(path).map_err(Error::io(path))?.len();
    let targets: Vec<u64> = (1..).map(|k| k * batch).take_while(|&t| t < size).collect();
    let mut bounds = vec![0];
    if !targets.is_empty() {
        let (pretok, specials) = enc.cut_rules();
        let cuts = crate::count::file_cuts(pretok, specials, path, &targets)?;
        // A cut at the file's size means there was none after its target.
        bounds.extend(cuts.into_iter().filter(|&c| c > 0 && c < size));
        bounds.dedup();
    }
    bounds.push(u64::MAX);
    Ok((bounds, size))
}

/// Byte ranges of `paths` of about `batch` bytes, cut where the ids do not change
/// (`count::file_cuts`): (path, start, end), with whether each range starts and ends its
/// file. The last range of a file ends at `u64::MAX` (read to the end); an empty file is one
/// empty range.
#[allow(clippy::type_complexity)]
fn file_ranges(
    enc: &Encoder,
    paths: &[String],
    batch: u64,
) -> Result<(Vec<(String, u64, u64)>, Vec<(bool, bool)>, u64)> {
    let (mut ranges, mut edges, mut total) = (Vec::new(), Vec::new(), 0u64);
    for p in paths {
        let (bounds, size) = file_bounds(enc, p, batch)?;
        total += size;
        let last = bounds.len() - 2;
        for (k, w) in bounds.windows(2).enumerate() {
            ranges.push((p.clone(), w[0], w[1]));
            edges.push((k == 0, k == last));
        }
    }
    Ok((ranges, edges, total))
}

impl Encoder {
    /// Reads files and encodes each as one document, as `encode_parts` does, into one flat
    /// buffer of `width` ids; returns it, the documents' offsets and the number of bad UTF-8
    /// sequences replaced. The files are read in batches of ranges cut where the ids do not
    /// change (`file_ranges`), into buffers reused from batch to batch: memory follows the
    /// output, not the input (a whole file read at once, then its ids, then the flat copy were
    /// three buffers of the corpus's size, and their page faults a fifth of `encode_files`'
    /// time in `perf`). `batch`: bytes of ranges per batch (None: `FILE_BATCH` per thread;
    /// tests use small ones).
    #[allow(clippy::too_many_arguments)]
    pub fn encode_files(
        &self,
        paths: &[String],
        allowed: &[Rank],
        separator: Option<Separator>,
        replace: bool,
        par: Parallel,
        width: Width,
        batch: Option<u64>,
    ) -> Result<(Vec<u8>, Vec<u64>, u64)> {
        let batch = batch.unwrap_or(FILE_BATCH * par.threads.max(1) as u64);
        let (ranges, edges, total) = file_ranges(self, paths, batch)?;
        let mut out: Vec<u8> =
            Vec::with_capacity((total as usize / 3).saturating_mul(width.bytes()));
        let mut offsets = Vec::with_capacity(paths.len() + 1);
        offsets.push(0u64);
        let (mut texts, mut pool, mut replaced) = (Vec::new(), Vec::new(), 0u64);
        let mut a = 0;
        while a < ranges.len() {
            // The ranges of this batch: at least one, then as many as fit in `batch` bytes.
            let mut b = a + 1;
            let mut bytes = ranges[a].2.saturating_sub(ranges[a].1);
            while b < ranges.len() {
                let more = ranges[b].2.saturating_sub(ranges[b].1);
                if bytes.saturating_add(more) > batch {
                    break;
                }
                bytes += more;
                b += 1;
            }
            replaced += read_ranges_into(&ranges[a..b], replace, par.threads, &mut texts)?;
            let refs: Vec<&str> = texts[..b - a].iter().map(|t| t.as_str()).collect();
            let read: usize = refs.iter().map(|t| t.len()).sum();
            let parts = self.encode_parts_reusing(
                &refs,
                allowed,
                separator,
                Some(&edges[a..b]),
                batch_parallel(par, read),
                &mut pool,
            )?;
            let start = out.len();
            parts.append_to(width, &mut out, par.threads)?;
            for (j, e) in edges[a..b].iter().enumerate() {
                if e.1 {
                    offsets.push((start / width.bytes()) as u64 + parts.offsets[j + 1]);
                }
            }
            pool = parts.into_buffers();
            a = b;
        }
        Ok((out, offsets, replaced))
    }
}

/// Bytes of text per group of work: everything in one group on one thread; on more, at most
/// the chunk size `Encoder::work` cuts at (a quarter of a thread's share, so that work
/// stealing evens out the threads), whole small texts gathered up to it.
fn group_bytes(par: Parallel, total: usize) -> usize {
    if par.threads <= 1 {
        return usize::MAX;
    }
    par.chunk_bytes.unwrap_or(total / (4 * par.threads)).max(1)
}

/// The threads and chunking for one batch of a long run (corpus encoding, `total` bytes): when
/// not asked otherwise, chunks of a sixteenth of a thread's share, not a quarter. Each batch
/// ends in a barrier where a thread that took the last large chunk keeps the others waiting;
/// between batches of 16 MiB on two threads that was one chunk of 2 MiB in every batch.
pub fn batch_parallel(par: Parallel, total: usize) -> Parallel {
    if par.chunk_bytes.is_some() || par.threads <= 1 {
        return par;
    }
    Parallel {
        chunk_bytes: Some((total / (16 * par.threads)).max(64 << 10)),
        ..par
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpe::encode::Bpe;
    use crate::io::ranges::{read_ranges, utf8_text};
    use crate::text::pretok::Pretokenizer;

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
                segments: false,
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
                segments: false,
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
    fn reused_buffers_give_the_ids_of_fresh_ones() {
        // One pool through batches of different sizes, threads and chunkings: each batch's
        // ids and offsets are those of a call with no pool.
        let enc = encoder();
        let long = "aab abab aaaa b\n".repeat(300);
        let short = "ab aa\n".repeat(40);
        let batches: [&[&str]; 4] = [
            &[&long, "x<|eot|>aa", "ab"],
            &["", "b"],
            &[&short, &long, &short, "aab ab", &long],
            &["aa"],
        ];
        let mut pool = Vec::new();
        for round in 0..2 {
            for (b, texts) in batches.iter().enumerate() {
                let threads = 1 + (b + round) % 3;
                let par = Parallel {
                    threads,
                    chunk_bytes: [None, Some(50), Some(1000)][(b + round) % 3],
                    segments: (b + round) % 2 == 0,
                };
                let sep = Some(Separator {
                    id: 9,
                    prepend: b % 2 == 0,
                });
                let fresh = enc.encode_parts(texts, &[70000], sep, par).unwrap();
                let reused = enc
                    .encode_parts_reusing(texts, &[70000], sep, None, par, &mut pool)
                    .unwrap();
                assert_eq!(reused.to_vec(), fresh.to_vec(), "batch {b} round {round}");
                assert_eq!(reused.offsets, fresh.offsets);
                pool.extend(reused.into_buffers());
            }
        }
        assert!(!pool.is_empty());
    }

    #[test]
    fn ranges_read_into_reused_texts() {
        let dir = std::env::temp_dir().join(format!("bytepair-arrays-into-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.txt");
        std::fs::write(&path, b"line one\nline two\nthree\n").unwrap();
        let p = path.to_string_lossy().to_string();
        let mut texts = Vec::new();
        read_ranges_into(
            &[(p.clone(), 0, 18), (p.clone(), 18, 99)],
            false,
            2,
            &mut texts,
        )
        .unwrap();
        assert_eq!(
            texts,
            vec!["line one\nline two\n".to_string(), "three\n".to_string()]
        );
        // Fewer, shorter ranges into the same buffers: only the first slots are rewritten.
        read_ranges_into(&[(p.clone(), 5, 9)], false, 1, &mut texts).unwrap();
        assert_eq!(texts[0], "one\n");
        std::fs::remove_dir_all(&dir).unwrap();
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

    #[test]
    fn files_in_batches_give_the_ids_of_whole_files() {
        for (name, pattern) in crate::text::pretok::PRESETS {
            let mut v: Vec<(Rank, Vec<u8>)> = (0..=255u8).map(|b| (b as Rank, vec![b])).collect();
            v.push((256, b"ab".to_vec()));
            v.push((257, b"aa".to_vec()));
            let bpe = Bpe::from_merges(v, &[(97, 98), (97, 97)]).unwrap();
            let pretok = Pretokenizer::new(Some(pattern)).unwrap();
            let enc = Encoder::new(bpe, pretok, vec![("<|eot|>".into(), 70000)]).unwrap();
            files_in_batches(&enc, name);
        }
    }

    fn files_in_batches(enc: &Encoder, name: &str) {
        let dir =
            std::env::temp_dir().join(format!("bytepair-files-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut long = String::new();
        let bits = [
            "ab aab ",
            "\u{e9} \u{fc}\r\n",
            "   x\n\n",
            "<|eot|>",
            "word123 ",
            "\n",
        ];
        for i in 0..4000 {
            long.push_str(bits[i * 7 % bits.len()]);
            if i % 11 == 0 {
                long.push_str("aaaa\n");
            }
        }
        let texts = [long.as_str(), "", "ab\n", long.as_str()];
        let paths: Vec<String> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let p = dir.join(format!("{i}.txt"));
                std::fs::write(&p, t).unwrap();
                p.to_string_lossy().into_owned()
            })
            .collect();
        let seps = [
            None,
            Some(Separator {
                id: 1,
                prepend: true,
            }),
            Some(Separator {
                id: 2,
                prepend: false,
            }),
        ];
        let mut cuts_seen = false;
        for allowed in [&[][..], &[70000][..]] {
            for separator in seps {
                for threads in [1, 2] {
                    let par = Parallel {
                        threads,
                        chunk_bytes: None,
                        segments: true,
                    };
                    let whole = enc.encode_parts(&texts, allowed, separator, par).unwrap();
                    let mut want = vec![0u8; whole.total() * 4];
                    whole.write(Width::U32, &mut want, 1).unwrap();
                    for batch in [64u64, 1000, 5000, 1 << 30] {
                        let (ranges, _, _) = file_ranges(enc, &paths, batch).unwrap();
                        cuts_seen |= ranges.len() > 2 * paths.len();
                        let (ids, offsets, replaced) = enc
                            .encode_files(
                                &paths,
                                allowed,
                                separator,
                                false,
                                par,
                                Width::U32,
                                Some(batch),
                            )
                            .unwrap();
                        assert!(ids == want, "{batch} {threads} {separator:?}");
                        assert_eq!(offsets, whole.offsets, "{batch} {threads}");
                        assert_eq!(replaced, 0);
                    }
                }
            }
        }
        assert!(
            cuts_seen,
            "{name}: the small batches should cut the long files"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
