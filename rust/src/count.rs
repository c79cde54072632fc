//! Counting distinct pieces over a corpus, in parallel and streaming.
//!
//! Every rayon worker counts into its own shard (indexed by `rayon::current_thread_index`), so
//! workers never contend; the shards are merged once, when counting ends. A piece is copied into
//! a shard only the first time that shard sees it: memory follows the number of distinct pieces,
//! never the corpus size. Large texts are cut into units only at independent cuts (see
//! `pretok::is_independent_cut`) that no special token straddles, so the counts do not depend on
//! where the units were cut nor on the number of threads.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::sync::Mutex;

use aho_corasick::{AhoCorasick, MatchKind};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::error::{Error, Result};
use crate::text::ascii_ws;
use crate::text::pretok::{
    is_independent_cut, whitespace_run_start, Preset, Pretokenizer, MAX_RUN,
};

pub type PieceMap = FxHashMap<Box<[u8]>, u64>;

/// Texts longer than this are cut into units for the workers.
pub const UNIT_BYTES: usize = 1 << 20;
/// Files are read in blocks of this size.
pub const BLOCK_BYTES: usize = 16 << 20;

/// Splits text at special tokens, leftmost-longest, and hands out the stretches between them.
#[derive(Debug, Clone)]
pub struct SpecialSplitter {
    specials: Vec<String>,
    automaton: Option<AhoCorasick>,
}

impl SpecialSplitter {
    pub fn new(specials: &[String]) -> Result<Self> {
        if let Some(bad) = specials.iter().find(|s| s.is_empty()) {
            return Err(Error::Invalid(format!("special token {bad:?} is empty")));
        }
        let automaton = if specials.is_empty() {
            None
        } else {
            Some(
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(specials)
                    .map_err(|e| Error::Invalid(format!("special tokens: {e}")))?,
            )
        };
        Ok(SpecialSplitter {
            specials: specials.to_vec(),
            automaton,
        })
    }

    /// Calls `f` on each stretch of `text` between special tokens (skipping empty ones).
    pub fn for_each_stretch<'t, E>(
        &self,
        text: &'t str,
        mut f: impl FnMut(&'t str) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        let Some(ac) = &self.automaton else {
            return if text.is_empty() { Ok(()) } else { f(text) };
        };
        let mut start = 0;
        for m in ac.find_iter(text) {
            if m.start() > start {
                f(&text[start..m.start()])?;
            }
            start = m.end();
        }
        if start < text.len() {
            f(&text[start..])?;
        }
        Ok(())
    }

    /// True when some occurrence of a special token contains both `text[cut-1]` and `text[cut]`.
    pub fn straddles(&self, text: &[u8], cut: usize) -> bool {
        self.specials.iter().any(|s| {
            let n = s.len();
            if n < 2 {
                return false;
            }
            let lo = cut.saturating_sub(n - 1);
            let hi = (cut + n - 1).min(text.len());
            memchr::memmem::find_iter(&text[lo..hi], s.as_bytes())
                .any(|at| lo + at < cut && lo + at + n > cut)
        })
    }

    /// True when `text` holds one of the special tokens.
    pub fn occurs_in(&self, text: &str) -> bool {
        self.automaton.as_ref().is_some_and(|ac| ac.is_match(text))
    }

    pub fn max_len(&self) -> usize {
        self.specials.iter().map(String::len).max().unwrap_or(0)
    }
}

/// The cut that goes with the newline at `nl` (just after it; for GPT-2 before the whitespace
/// run it ends), if it changes no piece and splits no special token.
fn cut_at_newline(
    pretok: &Pretokenizer,
    specials: &SpecialSplitter,
    text: &[u8],
    nl: usize,
) -> Option<usize> {
    let preset = pretok.preset()?;
    let cut = match preset {
        Preset::Gpt2 => whitespace_run_start(text, nl + 1),
        _ => nl + 1,
    };
    (is_independent_cut(preset, text, cut) && !specials.straddles(text, cut)).then_some(cut)
}

/// The end of the whitespace run in `text[start..until]` that begins at `start`. Blocks of 64
/// and 16 bytes at a time (`ascii_ws`): 32 MB of newlines has no cut, and the search walks all of it.
fn whitespace_end(text: &[u8], mut start: usize, until: usize) -> usize {
    while start + 64 <= until {
        let block = text[start..start + 64].try_into().unwrap();
        if ascii_ws::masks64(block).ascii_whitespace() != u64::MAX {
            break;
        }
        start += 64;
    }
    while start + 16 <= until {
        let block = text[start..start + 16].try_into().unwrap();
        let k = ascii_ws::masks(block).ascii_whitespace().trailing_ones() as usize;
        start += k;
        if k < 16 {
            return start;
        }
    }
    while start < until && text[start].is_ascii_whitespace() {
        start += 1;
    }
    start
}

/// The start of the whitespace run in `text[min..end]` that ends at `end`.
fn whitespace_start(text: &[u8], min: usize, mut end: usize) -> usize {
    while end >= min + 64 {
        let block = text[end - 64..end].try_into().unwrap();
        if ascii_ws::masks64(block).ascii_whitespace() != u64::MAX {
            break;
        }
        end -= 64;
    }
    while end >= min + 16 {
        let block = text[end - 16..end].try_into().unwrap();
        let k = ascii_ws::masks(block).ascii_whitespace().leading_ones() as usize;
        end -= k;
        if k < 16 {
            return end;
        }
    }
    while end > min && text[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    end
}

/// The last cut in `text[min..near]` that changes no piece and splits no special token; `None`
/// if there is none (always `None` for custom patterns and for no pattern).
pub fn cut_before(
    pretok: &Pretokenizer,
    specials: &SpecialSplitter,
    text: &[u8],
    min: usize,
    near: usize,
) -> Option<usize> {
    if !pretok.can_cut() {
        return None;
    }
    let mut end = near.min(text.len());
    let gpt2 = pretok.preset() == Some(Preset::Gpt2);
    while end > min {
        let nl = memchr::memrchr(b'\n', &text[min..end])? + min;
        if let Some(cut) = cut_at_newline(pretok, specials, text, nl) {
            if cut > min && cut <= end {
                return Some(cut);
            }
        }
        end = if gpt2 {
            gpt2_skip_back(text, nl, min)
        } else {
            // cl100k and o200k cut after a newline that the run of whitespace ends with: the
            // newlines of the run before `nl` are followed by whitespace, and make no cut.
            whitespace_start(text, min, nl)
        };
    }
    None
}

/// Where `cut_before` goes on after GPT-2's cut for the newline at `nl` failed. Every newline
/// `p` of the whitespace run holding `nl` (true start `t`) offers the cut `max(p + 1 - MAX_RUN,
/// t)`: `t` for the first `MAX_RUN` bytes of the run, and after those a cut with whitespace
/// before it, which fails. So a run needs one look, not one per newline (each a walk of up to
/// `MAX_RUN` bytes: 16 MB of newlines took seconds).
fn gpt2_skip_back(text: &[u8], nl: usize, min: usize) -> usize {
    let mut t = nl;
    while t > min && text[t - 1].is_ascii_whitespace() {
        t -= 1;
    }
    if t == min && min > 0 && text[min - 1].is_ascii_whitespace() {
        // The run starts before `min`: its cuts are at or before `min`, or fail.
        return min;
    }
    if nl - t < MAX_RUN {
        t // `nl` offered `t`, which failed; so would every newline of the run
    } else {
        t + MAX_RUN // the newlines from here to `nl` offer cuts that fail; those before, `t`
    }
}

/// The first cut in `text[from..=until]` that changes no piece and splits no special token (the
/// forward twin of `cut_before`); `None` if there is none.
pub fn cut_after(
    pretok: &Pretokenizer,
    specials: &SpecialSplitter,
    text: &[u8],
    from: usize,
    until: usize,
) -> Option<usize> {
    if !pretok.can_cut() {
        return None;
    }
    let until = until.min(text.len());
    let gpt2 = pretok.preset() == Some(Preset::Gpt2);
    let mut start = from.saturating_sub(1); // a newline at from - 1 makes a cut at `from`
    while start < until {
        let nl = memchr::memchr(b'\n', &text[start..until])? + start;
        if let Some(cut) = cut_at_newline(pretok, specials, text, nl) {
            if cut >= from && cut <= until {
                return Some(cut);
            }
        }
        start = nl + 1;
        // GPT-2: the later newlines of this whitespace run offer the cut that just failed, or
        // one with whitespace before it (see `gpt2_skip_back`): go on after the run.
        // cl100k and o200k: only the run's last byte, if a newline, can make a cut.
        start = whitespace_end(text, start, until);
        if !gpt2 && start > nl + 1 {
            start -= 1;
        }
    }
    None
}

/// `text` cut into chunks of about `size` bytes, only at cuts that change no piece and split no
/// special token (the last such cut before each `size` bytes, else the first one after):
/// handling the chunks one by one gives the result of handling the whole. Texts that custom
/// patterns or no pattern split are never cut.
pub fn chunks<'t>(
    pretok: &Pretokenizer,
    specials: &SpecialSplitter,
    text: &'t str,
    size: usize,
) -> Vec<&'t str> {
    let size = size.max(1);
    if !pretok.can_cut() || text.len() <= size {
        return vec![text];
    }
    let b = text.as_bytes();
    cut_text(text, size, |start, near| {
        cut_before(pretok, specials, b, start, near)
            .or_else(|| cut_after(pretok, specials, b, near, b.len()))
    })
}

/// `text` cut into chunks of about `size` bytes (`size` > 0): `cut(start, near)` gives the cut
/// that ends the chunk starting at `start`, near `start + size`; none (or one that would not move
/// on) leaves the rest as the last chunk.
pub(crate) fn cut_text(
    text: &str,
    size: usize,
    cut: impl Fn(usize, usize) -> Option<usize>,
) -> Vec<&str> {
    let mut out = Vec::with_capacity(text.len() / size + 1);
    let mut start = 0;
    while text.len() - start > size {
        match cut(start, start + size) {
            Some(c) if c > start && c < text.len() => {
                out.push(&text[start..c]);
                start = c;
            }
            _ => break,
        }
    }
    out.push(&text[start..]);
    out
}

/// Cuts for a pattern its caller vouches for (`PieceCounter::set_newline_cuts`): after a
/// newline followed by an ASCII letter or digit, where no special token straddles. The last in
/// `text[min..near]` (`None` if there is none).
fn newline_cut_before(
    specials: &SpecialSplitter,
    text: &[u8],
    min: usize,
    near: usize,
) -> Option<usize> {
    let mut end = near.min(text.len());
    while end > min {
        let nl = memchr::memrchr(b'\n', &text[min..end])? + min;
        let cut = nl + 1;
        if cut > min && cut <= end && newline_cut_ok(specials, text, cut) {
            return Some(cut);
        }
        end = nl;
    }
    None
}

/// The forward twin of `newline_cut_before`: the first such cut in `text[from..=until]`.
fn newline_cut_after(
    specials: &SpecialSplitter,
    text: &[u8],
    from: usize,
    until: usize,
) -> Option<usize> {
    let until = until.min(text.len());
    let mut start = from.saturating_sub(1);
    while start < until {
        let nl = memchr::memchr(b'\n', &text[start..until])? + start;
        let cut = nl + 1;
        if cut >= from && cut <= until && newline_cut_ok(specials, text, cut) {
            return Some(cut);
        }
        start = nl + 1;
    }
    None
}

fn newline_cut_ok(specials: &SpecialSplitter, text: &[u8], cut: usize) -> bool {
    cut < text.len() && text[cut].is_ascii_alphanumeric() && !specials.straddles(text, cut)
}

/// `chunks` with the cuts of `newline_cut_before` / `newline_cut_after`.
fn newline_chunks<'t>(specials: &SpecialSplitter, text: &'t str, size: usize) -> Vec<&'t str> {
    let size = size.max(1);
    let b = text.as_bytes();
    cut_text(text, size, |start, near| {
        newline_cut_before(specials, b, start, near)
            .or_else(|| newline_cut_after(specials, b, near, b.len()))
    })
}

/// Bytes read at a time by `file_cuts`.
const SCAN_BYTES: usize = 64 << 10;

/// For each offset in `targets`, the first offset at or after it where the file can be cut
/// without changing the counts (see `cut_after`); the file's size when there is none after it
/// (always, for patterns that cannot be cut); 0 for 0. The parts between such cuts can be
/// counted apart (`PieceCounter::add_file_range`). Reads only near the targets, unless no cut
/// is near.
pub fn file_cuts(
    pretok: &Pretokenizer,
    specials: &SpecialSplitter,
    path: &str,
    targets: &[u64],
) -> Result<Vec<u64>> {
    let io = Error::io(path);
    let mut file = File::open(path).map_err(io)?;
    let size = file.metadata().map_err(io)?.len();
    // Context a cut needs on each side: a character and CRLF before, CRLF and a character
    // after (`is_independent_cut`), and a special token's length less one (`straddles`).
    let before = specials.max_len().max(crate::text::pretok::MAX_RUN + 8);
    let after = specials.max_len().max(crate::text::pretok::MAX_RUN + 8);
    let mut cuts = Vec::with_capacity(targets.len());
    let mut buf = Vec::new();
    for &target in targets {
        if target == 0 || target >= size || !pretok.can_cut() {
            cuts.push(if target == 0 { 0 } else { size });
            continue;
        }
        let mut base = target.saturating_sub(before as u64); // file offset of buf[0]
        file.seek(SeekFrom::Start(base)).map_err(io)?;
        buf.clear();
        let mut from = (target - base) as usize;
        let cut = loop {
            let old = buf.len();
            buf.resize(old + SCAN_BYTES, 0);
            let n = read_full(&mut file, &mut buf[old..]).map_err(io)?;
            buf.truncate(old + n);
            let eof = n < SCAN_BYTES;
            let until = if eof { buf.len() } else { buf.len() - after };
            if let Some(c) = cut_after(pretok, specials, &buf, from, until) {
                break base + c as u64;
            }
            if eof {
                break size;
            }
            // Keep the context of the cuts not checked yet.
            let drop = until.saturating_sub(before);
            buf.drain(..drop);
            base += drop as u64;
            from = until - drop;
        };
        cuts.push(cut);
    }
    Ok(cuts)
}

/// Reads until `buf` is full or the file ends; returns the number of bytes read.
fn read_full(file: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Statistics of what was counted.
#[derive(Debug, Default, Clone, Copy)]
pub struct CountStats {
    pub bytes: u64,
    pub documents: u64,
    pub replaced: u64,
    /// Words: runs of bytes between ASCII whitespace (and special tokens).
    pub words: u64,
}

/// What the cap on distinct pieces (`PieceCounter::set_max_pieces`) dropped.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct PruneStats {
    /// Times the table was pruned.
    pub prunes: u64,
    /// Table entries dropped (a piece dropped twice counts twice).
    pub pieces: u64,
    /// Occurrences those entries held (the text they stood for is no longer counted).
    pub occurrences: u64,
    /// The largest threshold used: every piece counted this often or less was dropped.
    pub max_threshold: u64,
}

/// Number of runs of non-whitespace bytes (ASCII whitespace separates).
fn count_words(text: &[u8]) -> u64 {
    let mut words = 0u64;
    let mut in_word = false;
    for &b in text {
        let ws = matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c');
        words += (!ws && !in_word) as u64;
        in_word = !ws;
    }
    words
}

pub struct PieceCounter {
    pretok: Pretokenizer,
    specials: SpecialSplitter,
    shards: Vec<Mutex<(PieceMap, u64)>>,
    unit_bytes: usize,
    block_bytes: usize,
    pub stats: CountStats,
    max_pieces: Option<usize>,
    pub pruned: PruneStats,
    /// The most table entries held at once (see `peak_entries`).
    peak_entries: usize,
    newline_cuts: bool,
}

impl PieceCounter {
    pub fn new(pretok: Pretokenizer, specials: SpecialSplitter) -> Self {
        Self::with_sizes(pretok, specials, UNIT_BYTES, BLOCK_BYTES)
    }

    /// Smaller units and blocks than the defaults exercise the cutting logic in tests.
    pub fn with_sizes(
        pretok: Pretokenizer,
        specials: SpecialSplitter,
        unit_bytes: usize,
        block_bytes: usize,
    ) -> Self {
        let shards = (0..rayon::current_num_threads().max(1))
            .map(|_| Mutex::default())
            .collect();
        PieceCounter {
            pretok,
            specials,
            shards,
            unit_bytes: unit_bytes.max(1),
            block_bytes: block_bytes.max(1),
            stats: CountStats::default(),
            max_pieces: None,
            pruned: PruneStats::default(),
            peak_entries: 0,
            newline_cuts: false,
        }
    }

    /// For a custom pattern that ends a piece after a newline followed by an ASCII letter or
    /// digit, and matches from there as at the start of a text (no look-behind, no anchors):
    /// files and long texts are then cut there (read in blocks, counted by all threads) instead
    /// of being held and counted whole. The caller vouches for the pattern (Python sets it for
    /// the superword patterns, whose pieces hold a newline only at their end). No effect on the
    /// presets, which have cuts of their own.
    pub fn set_newline_cuts(&mut self, on: bool) {
        self.newline_cuts = on && !self.pretok.can_cut() && self.pretok.pattern().is_some();
    }

    /// Bounds the table: after each call that adds counts (`add_texts`, each block of
    /// `add_file` / `add_block` / `add_file_range`, `add_counts`), when more than `max` distinct
    /// pieces are held, every piece whose count is at most k is dropped, k the smallest count
    /// that leaves at most `max` (the (max+1)-th largest count). A dropped piece that occurs
    /// again is counted from zero. The result depends only on the counts at those points, which
    /// the text and its cutting into blocks decide: never on threads or hash order.
    pub fn set_max_pieces(&mut self, max: Option<usize>) {
        self.max_pieces = max;
        self.prune_if_over();
    }

    /// The most table entries (all shards together) held at once, taken after each call that
    /// adds counts, before any prune: when the table is largest. What the memory of counting
    /// follows: with `set_max_pieces(Some(max))` it is at most `max` plus the piece occurrences
    /// of one call (of one block, for files and streams), whatever the input's size; a piece
    /// seen by several workers in one call is held once per worker until the next merge.
    pub fn peak_entries(&self) -> usize {
        self.peak_entries
    }

    /// Applies the cap of `set_max_pieces` now (the shards are merged into one first).
    fn prune_if_over(&mut self) {
        // The shards' sizes add up to at least the distinct pieces: nothing to do under the cap.
        let held: usize = self
            .shards
            .iter_mut()
            .map(|m| m.get_mut().unwrap_or_else(|e| e.into_inner()).0.len())
            .sum();
        self.peak_entries = self.peak_entries.max(held);
        let Some(max) = self.max_pieces else { return };
        if held <= max {
            return;
        }
        let mut total = PieceMap::default();
        let mut words = 0u64;
        for shard in &mut self.shards {
            let (map, w) = std::mem::take(shard.get_mut().unwrap_or_else(|e| e.into_inner()));
            words += w;
            if total.len() < map.len() {
                let small = std::mem::replace(&mut total, map);
                for (k, v) in small {
                    *total.entry(k).or_insert(0) += v;
                }
            } else {
                for (k, v) in map {
                    *total.entry(k).or_insert(0) += v;
                }
            }
        }
        if total.len() > max {
            let mut counts: Vec<u64> = total.values().copied().collect();
            let (_, &mut k, _) = counts.select_nth_unstable_by(max, |a, b| b.cmp(a));
            let before = total.len();
            let mut occurrences = 0u64;
            total.retain(|_, &mut c| {
                let keep = c > k;
                if !keep {
                    occurrences = occurrences.saturating_add(c);
                }
                keep
            });
            self.pruned.prunes += 1;
            self.pruned.pieces += (before - total.len()) as u64;
            self.pruned.occurrences = self.pruned.occurrences.saturating_add(occurrences);
            self.pruned.max_threshold = self.pruned.max_threshold.max(k);
        }
        *self.shards[0].get_mut().unwrap_or_else(|e| e.into_inner()) = (total, words);
    }

    fn count_unit(&self, unit: &str) -> Result<()> {
        let shard = rayon::current_thread_index().unwrap_or(0) % self.shards.len();
        let mut guard = self.shards[shard].lock().unwrap_or_else(|e| e.into_inner());
        let (map, words) = &mut *guard;
        self.specials.for_each_stretch(unit, |stretch| {
            *words += count_words(stretch.as_bytes());
            self.pretok.for_each_piece(stretch, |piece| {
                let key = piece.as_bytes();
                match map.get_mut(key) {
                    Some(c) => *c += 1,
                    None => {
                        map.insert(key.into(), 1);
                    }
                }
            })
        })
    }

    /// Words counted so far (see `CountStats::words`).
    pub fn words(&self) -> u64 {
        self.shards
            .iter()
            .map(|m| m.lock().unwrap_or_else(|e| e.into_inner()).1)
            .sum()
    }

    fn cut_before(&self, text: &[u8], min: usize, near: usize) -> Option<usize> {
        if self.newline_cuts {
            return newline_cut_before(&self.specials, text, min, near);
        }
        cut_before(&self.pretok, &self.specials, text, min, near)
    }

    /// Cuts `text` into units of about `unit_bytes` for the workers.
    fn units<'t>(&self, text: &'t str) -> Vec<&'t str> {
        if self.newline_cuts {
            return newline_chunks(&self.specials, text, self.unit_bytes);
        }
        chunks(&self.pretok, &self.specials, text, self.unit_bytes)
    }

    /// Counts the pieces of each document (documents are independent: no piece spans two).
    pub fn add_texts(&mut self, texts: &[&str]) -> Result<()> {
        let units: Vec<&str> = texts.iter().flat_map(|t| self.units(t)).collect();
        units.par_iter().try_for_each(|u| self.count_unit(u))?;
        self.stats.documents += texts.len() as u64;
        self.stats.bytes += texts.iter().map(|t| t.len() as u64).sum::<u64>();
        self.prune_if_over();
        Ok(())
    }

    /// Streams a file in blocks, cutting only where `add_texts` would give the same counts.
    /// `progress` gets the number of bytes read so far and may stop the work by returning an error.
    pub fn add_file(
        &mut self,
        path: &str,
        replace_errors: bool,
        progress: &mut dyn FnMut(u64) -> Result<()>,
    ) -> Result<()> {
        let file = File::open(path).map_err(Error::io(path))?;
        self.add_reader(file, path, 0, replace_errors, progress)?;
        self.stats.documents += 1;
        Ok(())
    }

    /// Counts the bytes `start..end` of a file, which must begin and end at cuts of
    /// `file_cuts` (or at the file's ends); error offsets are the file's. The part that starts
    /// at 0 counts the file as one document, so that the parts of a file count what it does.
    pub fn add_file_range(
        &mut self,
        path: &str,
        start: u64,
        end: u64,
        replace_errors: bool,
    ) -> Result<()> {
        let io = Error::io(path);
        if end < start {
            return Err(Error::Invalid(format!(
                "{path}: invalid byte range {start}..{end}"
            )));
        }
        let mut file = File::open(path).map_err(io)?;
        file.seek(SeekFrom::Start(start)).map_err(io)?;
        self.add_reader(
            file.take(end - start),
            path,
            start,
            replace_errors,
            &mut |_| Ok(()),
        )?;
        self.stats.documents += u64::from(start == 0);
        Ok(())
    }

    /// Streams `file` (the bytes of the file `path` from `offset` on) in blocks.
    fn add_reader(
        &mut self,
        file: impl Read,
        path: &str,
        offset: u64,
        replace_errors: bool,
        progress: &mut dyn FnMut(u64) -> Result<()>,
    ) -> Result<()> {
        let block = self.block_bytes;
        crate::io::blocks::stream_blocks(
            file,
            path,
            offset,
            block,
            &mut |buf, last, at| self.add_block(buf, last, path, at, replace_errors),
            progress,
        )
    }

    /// Counts the longest prefix of `buf` that ends where the text may be cut (all of it when
    /// `last`) and returns its length; the caller keeps the rest and appends more to it. `buf` is
    /// UTF-8 text of the stream `source`, starting at byte `offset` of that stream (for errors).
    /// Blocks do not count as documents: the caller counts the stream as one.
    pub fn add_block(
        &mut self,
        buf: &[u8],
        last: bool,
        source: &str,
        offset: u64,
        replace_errors: bool,
    ) -> Result<usize> {
        let cut = if last {
            buf.len()
        } else {
            let limit = buf.len().saturating_sub(self.specials.max_len() + 1);
            match self.cut_before(buf, 0, limit) {
                Some(c) => c,
                None => return Ok(0), // no safe place yet: read more
            }
        };
        if cut > 0 {
            let text = self.decode(&buf[..cut], source, offset, replace_errors)?;
            self.add_texts(&[&text])?;
            self.stats.documents -= 1; // a block is not a document
        }
        Ok(cut)
    }

    fn decode<'b>(
        &mut self,
        bytes: &'b [u8],
        path: &str,
        offset: u64,
        replace_errors: bool,
    ) -> Result<std::borrow::Cow<'b, str>> {
        match std::str::from_utf8(bytes) {
            Ok(s) => Ok(s.into()),
            Err(e) if !replace_errors => Err(Error::Utf8 {
                source: path.to_owned(),
                offset: offset + e.valid_up_to() as u64,
            }),
            Err(_) => {
                self.stats.replaced += bytes
                    .utf8_chunks()
                    .filter(|c| !c.invalid().is_empty())
                    .count() as u64;
                Ok(String::from_utf8_lossy(bytes))
            }
        }
    }

    /// Adds pieces counted elsewhere (e.g. by another process, see `packed`) and their statistics.
    pub fn add_counts<'a>(
        &mut self,
        counts: impl IntoIterator<Item = (&'a [u8], u64)>,
        stats: CountStats,
    ) {
        let (map, words) = self.shards[0].get_mut().unwrap_or_else(|e| e.into_inner());
        *words += stats.words;
        for (piece, n) in counts {
            match map.get_mut(piece) {
                Some(c) => *c += n,
                None => {
                    map.insert(piece.into(), n);
                }
            }
        }
        self.stats.bytes += stats.bytes;
        self.stats.documents += stats.documents;
        self.stats.replaced += stats.replaced;
        self.prune_if_over();
    }

    /// Merges the workers' shards into one map of distinct pieces and their counts.
    pub fn finish(self) -> PieceMap {
        let mut shards: Vec<PieceMap> = self
            .shards
            .into_iter()
            .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()).0)
            .collect();
        shards.sort_by_key(|m| std::cmp::Reverse(m.len()));
        let mut it = shards.into_iter();
        let mut total = it.next().unwrap_or_default();
        for shard in it {
            for (k, v) in shard {
                *total.entry(k).or_insert(0) += v;
            }
        }
        total
    }
}

/// Scales each map's counts by `numerator / denominator` (rounded to the nearest integer, halves
/// up: `(count * numerator + denominator / 2) / denominator`) and adds them up. Pieces whose
/// scaled count is 0 are left out. This is how sources are mixed with weights.
pub fn merge_weighted(maps: &[(&PieceMap, u64)], denominator: u64) -> Result<PieceMap> {
    if denominator == 0 {
        return Err(Error::Invalid(
            "the weights' denominator must be at least 1".into(),
        ));
    }
    let scale = |c: u64, num: u64| -> Result<u64> {
        let v = (c as u128 * num as u128 + denominator as u128 / 2) / denominator as u128;
        u64::try_from(v).map_err(|_| Error::Invalid(format!("a weighted count ({v}) exceeds 2^64")))
    };
    let mut total = PieceMap::default();
    total.reserve(maps.iter().map(|(m, _)| m.len()).max().unwrap_or(0));
    for &(map, num) in maps {
        for (k, &c) in map {
            let c = scale(c, num)?;
            if c > 0 {
                let e = total.entry(k.clone()).or_insert(0);
                *e = e
                    .checked_add(c)
                    .ok_or_else(|| Error::Invalid("a weighted count exceeds 2^64".into()))?;
            }
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::pretok::{GPT2, GPT4, O200K};

    #[test]
    fn whitespace_runs_walked_in_blocks_end_where_bytes_say() {
        // Long and short runs of every ASCII whitespace byte, with \x0b (not whitespace here)
        // and letters between, walked both ways between random bounds.
        let mut rng = crate::unigram::sample::Rng::new(0x9e37_79b9_7f4a_7c15);
        let mut next = move || rng.next_u64();
        let units = [b' ', b'\n', b'\t', b'\r', 0x0c, 0x0b, b'a'];
        for _ in 0..200 {
            let mut text = Vec::new();
            while text.len() < 300 {
                let b = units[(next() % units.len() as u64) as usize];
                let run =
                    [1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 200][(next() % 13) as usize];
                text.extend(std::iter::repeat_n(b, run));
            }
            for _ in 0..40 {
                let a = (next() % text.len() as u64) as usize;
                let b = a + (next() % (text.len() - a + 1) as u64) as usize;
                let mut end = a;
                while end < b && text[end].is_ascii_whitespace() {
                    end += 1;
                }
                assert_eq!(whitespace_end(&text, a, b), end);
                let mut start = b;
                while start > a && text[start - 1].is_ascii_whitespace() {
                    start -= 1;
                }
                assert_eq!(whitespace_start(&text, a, b), start);
            }
        }
    }

    /// Newline cuts (for the superword patterns): only after a newline followed by an ASCII
    /// letter or digit, never inside a special token; the counts are those of the whole text.
    #[test]
    fn newline_cuts_only_before_letters_and_digits() {
        let specials = SpecialSplitter::new(&["\nx".to_string()]).unwrap();
        let text = "ab.\n\ncd\n ef\nxg\n7h";
        let cuts: Vec<usize> = (0..=text.len())
            .filter(|&i| newline_cut_before(&specials, text.as_bytes(), 0, i) == Some(i))
            .collect();
        assert_eq!(cuts, vec![5, 15]); // before "cd" and "7h"; not " ef", not inside "\nx"
        let chunks = newline_chunks(&specials, text, 1);
        assert_eq!(chunks, vec!["ab.\n\n", "cd\n ef\nxg\n", "7h"]);
        let count = |newline_cuts: bool, unit: usize| {
            let mut c = PieceCounter::with_sizes(
                Pretokenizer::new(Some(r"\p{L}+|\p{N}+|\s+|[^\s\p{L}\p{N}]+")).unwrap(),
                SpecialSplitter::new(&[]).unwrap(),
                unit,
                64,
            );
            c.set_newline_cuts(newline_cuts);
            c.add_texts(&[text]).unwrap();
            let mut v: Vec<(Box<[u8]>, u64)> = c.finish().into_iter().collect();
            v.sort();
            v
        };
        assert_eq!(count(true, 1), count(false, 1 << 20));
    }

    /// The cap keeps the pieces counted more often than the (max+1)-th largest count, whatever
    /// the number of threads and shards.
    #[test]
    fn max_pieces_drops_the_lowest_counts() {
        let mut c = PieceCounter::with_sizes(
            Pretokenizer::new(Some(GPT2)).unwrap(),
            SpecialSplitter::new(&[]).unwrap(),
            8,
            64,
        );
        c.set_max_pieces(Some(2));
        c.add_texts(&["a a a b b c"]).unwrap();
        // counts: " a" 2, "a" 1, " b" 2, " c" 1: the third largest is 1, so the 1s go.
        assert_eq!(c.pruned.prunes, 1);
        assert_eq!(c.pruned.pieces, 2);
        assert_eq!(c.pruned.occurrences, 2);
        assert_eq!(c.pruned.max_threshold, 1);
        c.add_texts(&["d"]).unwrap(); // 3 pieces, counts 2 2 1: "d" goes
                                      // Largest just before the first prune: 4 distinct pieces, possibly some in two shards
                                      // (at most the 6 occurrences of that call).
        assert!((4..=6).contains(&c.peak_entries()), "{}", c.peak_entries());
        let map = c.finish();
        let mut got: Vec<(Vec<u8>, u64)> = map.into_iter().map(|(k, v)| (k.to_vec(), v)).collect();
        got.sort();
        assert_eq!(got, vec![(b" a".to_vec(), 2), (b" b".to_vec(), 2)]);
    }

    /// `cut_before` and `cut_after` as they were, looking at every newline: the skips over
    /// whitespace runs must find the same cuts.
    fn naive_cuts(
        pretok: &Pretokenizer,
        specials: &SpecialSplitter,
        text: &[u8],
        a: usize,
        b: usize,
    ) -> (Option<usize>, Option<usize>) {
        let nls: Vec<usize> = (0..text.len()).filter(|&i| text[i] == b'\n').collect();
        let before = nls
            .iter()
            .rev()
            .filter(|&&nl| nl >= a && nl < b.min(text.len()))
            .find_map(|&nl| {
                cut_at_newline(pretok, specials, text, nl).filter(|&c| c > a && c <= b.min(nl + 1))
            });
        let from = a;
        let until = b.min(text.len());
        let after = nls
            .iter()
            .filter(|&&nl| nl + 1 >= from && nl < until)
            .find_map(|&nl| {
                cut_at_newline(pretok, specials, text, nl).filter(|&c| c >= from && c <= until)
            });
        (before, after)
    }

    #[test]
    fn cuts_skip_whitespace_runs_without_missing_a_cut() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let parts = [
            "\n", "\n", " ", "\t", "\r\n", "a", "b.", "\u{e9}", "/", "x ",
        ];
        let specials = SpecialSplitter::new(&["<|s|>".to_string()]).unwrap();
        for pattern in [GPT2, GPT4, O200K] {
            let pretok = Pretokenizer::new(Some(pattern)).unwrap();
            for _ in 0..5000 {
                let mut text = String::new();
                for _ in 0..next(40) {
                    let run = if next(4) == 0 { 1 + next(150) } else { 1 };
                    let part = parts[next(parts.len() as u64) as usize];
                    for _ in 0..run {
                        text.push_str(part);
                    }
                }
                let b = text.as_bytes();
                let (a, z) = (
                    next(b.len() as u64 + 1) as usize,
                    next(b.len() as u64 + 2) as usize,
                );
                let (lo, hi) = (a.min(z), a.max(z));
                let (want_before, want_after) = naive_cuts(&pretok, &specials, b, lo, hi);
                assert_eq!(
                    cut_before(&pretok, &specials, b, lo, hi),
                    want_before,
                    "{text:?} {lo} {hi}"
                );
                assert_eq!(
                    cut_after(&pretok, &specials, b, lo, hi),
                    want_after,
                    "{text:?} {lo} {hi}"
                );
            }
        }
    }

    fn counter(specials: &[&str]) -> PieceCounter {
        let specials: Vec<String> = specials.iter().map(|s| s.to_string()).collect();
        PieceCounter::new(
            Pretokenizer::new(Some(GPT4)).unwrap(),
            SpecialSplitter::new(&specials).unwrap(),
        )
    }

    #[test]
    fn specials_separate_and_are_not_counted() {
        let mut c = counter(&["<s>", "<s><s>"]);
        c.add_texts(&["a<s><s>a<s>b"]).unwrap();
        let m = c.finish();
        assert_eq!(m.get(b"a".as_slice()), Some(&2));
        assert_eq!(m.get(b"b".as_slice()), Some(&1));
        assert_eq!(m.len(), 2);
    }

    #[test]
    fn unit_cuts_give_the_same_counts() {
        let line = "Some text, with\nnumbers 12345 and  spaces\n\n<|x|>tail\n";
        let text = line.repeat(60_000); // ~3 MB: several units
        let mut a = counter(&["<|x|>"]);
        a.add_texts(&[&text]).unwrap();
        assert!(a.units(&text).len() > 1);
        let mut b = counter(&["<|x|>"]);
        let lines: Vec<&str> = vec![line; 60_000];
        b.add_texts(&lines).unwrap();
        assert_eq!(a.finish(), b.finish());
    }

    fn temp_file(name: &str, content: &[u8]) -> String {
        let dir = std::env::temp_dir().join(format!("bytepair-count-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, content).unwrap();
        path.to_string_lossy().into_owned()
    }

    #[test]
    fn file_parts_between_cuts_count_what_the_file_does() {
        let line = "Some text, with\nnumbers 12345 and  spaces\n\n<|x|>tail.\nend\n";
        let text = line.repeat(5_000); // ~300 KB: several SCAN_BYTES
        let path = temp_file("parts.txt", text.as_bytes());
        let mut whole = counter(&["<|x|>"]);
        whole.add_file(&path, false, &mut |_| Ok(())).unwrap();
        let (pretok, specials) = (&whole.pretok, &whole.specials);
        let targets: Vec<u64> = (0..40)
            .map(|i| i * 7_919)
            .chain([text.len() as u64 + 5])
            .collect();
        let cuts = file_cuts(pretok, specials, &path, &targets).unwrap();
        for (&t, &c) in targets.iter().zip(&cuts) {
            assert!(c >= t.min(text.len() as u64));
            if c > 0 && (c as usize) < text.len() {
                assert!(is_independent_cut(
                    pretok.preset().unwrap(),
                    text.as_bytes(),
                    c as usize
                ));
                assert!(!specials.straddles(text.as_bytes(), c as usize));
            }
        }
        assert_eq!(cuts[0], 0);
        assert_eq!(*cuts.last().unwrap(), text.len() as u64);
        let mut parts = counter(&["<|x|>"]);
        for w in cuts.windows(2) {
            parts.add_file_range(&path, w[0], w[1], false).unwrap();
        }
        assert_eq!(parts.stats.bytes, whole.stats.bytes);
        assert_eq!(parts.stats.documents, 1);
        assert_eq!(parts.finish(), whole.finish());
    }

    #[test]
    fn no_cut_far_away_means_the_file_end() {
        let text = format!("Start.\n{}", "x".repeat(200_000));
        let path = temp_file("nocut.txt", text.as_bytes());
        let c = counter(&[]);
        let cuts = file_cuts(&c.pretok, &c.specials, &path, &[0, 3, 100, 150_000]).unwrap();
        assert_eq!(cuts, [0, 7, text.len() as u64, text.len() as u64]);
        let custom = PieceCounter::new(
            Pretokenizer::new(Some(r"\w+")).unwrap(),
            SpecialSplitter::new(&[]).unwrap(),
        );
        let cuts = file_cuts(&custom.pretok, &custom.specials, &path, &[0, 3]).unwrap();
        assert_eq!(cuts, [0, text.len() as u64]);
    }

    #[test]
    fn range_errors_give_file_offsets() {
        let mut bytes = b"Good line.\nAnd more.\n".to_vec();
        bytes.extend_from_slice(b"bad \xff here\n");
        let path = temp_file("bad.txt", &bytes);
        let mut c = counter(&[]);
        match c.add_file_range(&path, 11, bytes.len() as u64, false) {
            Err(Error::Utf8 { offset, .. }) => assert_eq!(offset, 25),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn words_are_runs_between_ascii_whitespace() {
        assert_eq!(count_words(b""), 0);
        assert_eq!(count_words(b"  a bc\n\td  "), 3);
        let mut c = counter(&["<s>"]);
        c.add_texts(&["one two<s>three", " four "]).unwrap();
        assert_eq!(c.words(), 4);
    }

    #[test]
    fn weighted_merge_rounds_half_up() {
        let map = |items: &[(&[u8], u64)]| -> PieceMap {
            items
                .iter()
                .map(|(k, v)| (k.to_vec().into_boxed_slice(), *v))
                .collect()
        };
        let a = map(&[(b"x", 3), (b"y", 1)]);
        let b = map(&[(b"x", 1), (b"z", 5)]);
        // a weighs 1, b weighs 2.5
        let m = merge_weighted(&[(&a, 4), (&b, 10)], 4).unwrap();
        assert_eq!(m, map(&[(b"x", 3 + 3), (b"y", 1), (b"z", 13)]));
        // a weighs 0.25: 3 * 0.25 = 0.75 -> 1, 1 * 0.25 -> 0 (left out)
        let m = merge_weighted(&[(&a, 1), (&b, 4)], 4).unwrap();
        assert_eq!(m, map(&[(b"x", 2), (b"z", 5)]));
    }

    #[test]
    fn straddling_special_blocks_a_cut() {
        let s = SpecialSplitter::new(&["x\nb".to_string()]).unwrap();
        assert!(s.straddles(b"ax\nbc", 3));
        assert!(!s.straddles(b"ax\nbc", 1));
    }
}
