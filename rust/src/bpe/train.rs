//! The incremental BPE merge loop over distinct pieces.
//!
//! State: every distinct piece (as token ids, in one flat arena) with its count; for every
//! adjacent pair, its total count (weighted by piece counts) and the list of pieces it occurs in;
//! a max-heap of (count, pair) with lazy invalidation. A merge visits only the pieces listed for
//! its pair and updates only the counts of the pairs around each replaced occurrence, so its cost
//! follows the pieces it touches, never the corpus.
//!
//! Why lazy invalidation is exact: a merge of (a, b) -> x only lowers the counts of pairs made of
//! older tokens, and every pair it raises contains x, so it is new and pushed once, with its final
//! count, when the merge ends. Hence a heap entry's count is never below the pair's true count,
//! and a popped entry whose count is current is the true maximum. Pairs below `min_frequency`
//! can never rise again, so they are never pushed.
//!
//! Ties go to the lexicographically greatest (bytes(left), bytes(right)), as the textbook
//! algorithm with Python's `max` over (count, (bytes, bytes)) does; the heap compares token bytes
//! only when counts are equal.

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::error::Result;

pub use crate::Rank;

/// A pair count: `i64` while the corpus's total pair mass fits (always, for counted text), else
/// `i128`, so counts up to 2^64 per piece stay exact whatever their sum.
trait Count:
    Copy + Ord + Default + Send + std::ops::AddAssign + std::ops::SubAssign + std::fmt::Debug
{
    fn of(c: u64) -> Self;
}

impl Count for i64 {
    #[inline]
    fn of(c: u64) -> Self {
        c as i64
    }
}

impl Count for i128 {
    #[inline]
    fn of(c: u64) -> Self {
        c as i128
    }
}

#[inline]
fn key(a: Rank, b: Rank) -> u64 {
    ((a as u64) << 32) | b as u64
}

#[inline]
fn unkey(k: u64) -> (Rank, Rank) {
    ((k >> 32) as Rank, k as Rank)
}

#[derive(Clone, Copy)]
struct Entry<C> {
    count: C,
    pair: u64,
}

/// How training chooses among pairs of equal count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TieBreak {
    /// The pair with the greater bytes (the left token's, then the right's): bytepair's rule,
    /// independent of the order of the text.
    #[default]
    Lexicographic,
    /// The pair that occurs first, pieces taken in the order given (the order of their first
    /// occurrence in the text) and each piece left to right: what `max(stats, key=stats.get)`
    /// over a dict filled in text order takes (minbpe, the notebooks).
    First,
    /// Hugging Face's `BpeTrainer`: the pair with the smaller ids in its numbering, where the
    /// 256 bytes are numbered by the code point of their GPT-2 character and each merge comes
    /// after them, in order. Meaningful when training starts from bytes.
    Hf,
    /// SentencePiece's BPE trainer: the pair whose token has fewer characters, then the
    /// smaller token bytes (then `Lexicographic`, for two pairs making the same token).
    Shortest,
}

impl TieBreak {
    pub fn parse(name: &str) -> Option<TieBreak> {
        match name {
            "lexicographic" => Some(TieBreak::Lexicographic),
            "first" => Some(TieBreak::First),
            "hf" => Some(TieBreak::Hf),
            _ => None,
        }
    }
}

/// Hugging Face's number of each byte: its byte-level characters sorted by code point. The
/// printable bytes are their own characters and come first, in byte order; the others map to
/// U+0100 on, in byte order, so they follow.
fn hf_byte_order() -> [u32; 256] {
    let printable = |b: u8| matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
    let mut order = [0u32; 256];
    let mut n = 0;
    for pass in [true, false] {
        for b in 0..=255u8 {
            if printable(b) == pass {
                order[b as usize] = n;
                n += 1;
            }
        }
    }
    order
}

/// A binary max-heap ordered by count, then by the tie rule: for `Lexicographic`, the bytes of
/// the left token, then of the right; for `Hf`, the smaller pair of Hugging Face's ids; for
/// `First`, nothing (the loop compares the first occurrences of the pairs tied at the top).
struct PairHeap<C> {
    data: Vec<Entry<C>>,
    tie: TieBreak,
    hf: [u32; 256],
}

impl<C: Count> PairHeap<C> {
    fn new(data: Vec<Entry<C>>, tie: TieBreak) -> Self {
        PairHeap {
            data,
            tie,
            hf: hf_byte_order(),
        }
    }

    #[inline]
    fn above(&self, a: &Entry<C>, b: &Entry<C>, vocab: &[Vec<u8>]) -> bool {
        if a.count != b.count {
            return a.count > b.count;
        }
        let (al, ar) = unkey(a.pair);
        let (bl, br) = unkey(b.pair);
        match self.tie {
            TieBreak::Lexicographic => {
                (&vocab[al as usize], &vocab[ar as usize])
                    > (&vocab[bl as usize], &vocab[br as usize])
            }
            TieBreak::Hf => {
                let id = |t: Rank| self.hf.get(t as usize).copied().unwrap_or(t);
                (id(al), id(ar)) < (id(bl), id(br))
            }
            TieBreak::Shortest => {
                let chars = |t: &[u8]| t.iter().filter(|&&b| b & 0xc0 != 0x80).count();
                let (al, ar, bl, br) = (
                    &vocab[al as usize],
                    &vocab[ar as usize],
                    &vocab[bl as usize],
                    &vocab[br as usize],
                );
                let (na, nb) = (chars(al) + chars(ar), chars(bl) + chars(br));
                if na != nb {
                    return na < nb;
                }
                match al.iter().chain(ar.iter()).cmp(bl.iter().chain(br.iter())) {
                    std::cmp::Ordering::Equal => (al, ar) > (bl, br),
                    o => o == std::cmp::Ordering::Less,
                }
            }
            TieBreak::First => false,
        }
    }

    fn peek(&self) -> Option<&Entry<C>> {
        self.data.first()
    }

    /// Whether the popped `e` still has its pair's count. A stale entry (the count fell since it
    /// was pushed) goes back with the count the pair has now, unless that is below
    /// `min_frequency`.
    fn current(
        &mut self,
        e: Entry<C>,
        pair_count: &FxHashMap<u64, C>,
        vocab: &[Vec<u8>],
        min_frequency: C,
    ) -> bool {
        let current = pair_count.get(&e.pair).copied().unwrap_or_default();
        if current == e.count {
            return true;
        }
        if current >= min_frequency {
            self.push(
                Entry {
                    count: current,
                    pair: e.pair,
                },
                vocab,
            );
        }
        false
    }

    fn push(&mut self, e: Entry<C>, vocab: &[Vec<u8>]) {
        self.data.push(e);
        let mut i = self.data.len() - 1;
        while i > 0 {
            let parent = (i - 1) / 2;
            if !self.above(&self.data[i], &self.data[parent], vocab) {
                break;
            }
            self.data.swap(i, parent);
            i = parent;
        }
    }

    fn sift_down(&mut self, mut i: usize, vocab: &[Vec<u8>]) {
        let n = self.data.len();
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && self.above(&self.data[r], &self.data[l], vocab) {
                r
            } else {
                l
            };
            if !self.above(&self.data[c], &self.data[i], vocab) {
                break;
            }
            self.data.swap(i, c);
            i = c;
        }
    }

    fn pop(&mut self, vocab: &[Vec<u8>]) -> Option<Entry<C>> {
        let last = self.data.pop()?;
        if self.data.is_empty() {
            return Some(last);
        }
        let top = std::mem::replace(&mut self.data[0], last);
        self.sift_down(0, vocab);
        Some(top)
    }

    fn heapify(&mut self, vocab: &[Vec<u8>]) {
        for start in (0..self.data.len() / 2).rev() {
            self.sift_down(start, vocab);
        }
    }
}

/// Distinct pieces as token ids in one arena; a piece shrinks in place as merges apply.
#[derive(Default)]
struct Pieces {
    ids: Vec<Rank>,
    start: Vec<usize>,
    len: Vec<u32>,
    count: Vec<u64>,
    /// For each input piece, in input order: its index here, or `u32::MAX` when it was left out
    /// (fewer than two tokens, or a zero count).
    index: Vec<u32>,
    /// Token counts of the pieces left out (they never change).
    fixed_len: Vec<u32>,
    /// The one token of each left-out piece that is a single token, with the piece's count.
    fixed_one: Vec<(Rank, u64)>,
    /// Sum over pieces of count * (tokens - 1): the most any pair count can reach.
    mass: u128,
}

impl Pieces {
    #[inline]
    fn get(&self, p: usize) -> &[Rank] {
        &self.ids[self.start[p]..self.start[p] + self.len[p] as usize]
    }

    fn push(&mut self, ids: &[Rank], count: u64) {
        if ids.len() < 2 || count == 0 {
            self.index.push(u32::MAX);
            self.fixed_len.push(ids.len() as u32);
            if let (&[id], true) = (ids, count > 0) {
                self.fixed_one.push((id, count));
            }
            return;
        }
        self.index.push(self.count.len() as u32);
        self.start.push(self.ids.len());
        self.len.push(ids.len() as u32);
        self.count.push(count);
        self.ids.extend_from_slice(ids);
        self.mass += count as u128 * (ids.len() as u128 - 1);
    }

    /// Tokens of each input piece (in input order) after the merges learned so far.
    fn lengths(&self) -> Vec<u32> {
        let mut fixed = self.fixed_len.iter();
        self.index
            .iter()
            .map(|&i| {
                if i == u32::MAX {
                    *fixed.next().unwrap_or(&0)
                } else {
                    self.len[i as usize]
                }
            })
            .collect()
    }

    /// How often each of the `n` ids occurs over all pieces, weighted by their counts, after
    /// the merges learned so far (what encoding the counted text would give, token by token).
    fn token_counts(&self, n: usize) -> Vec<u64> {
        let mut out = vec![0u64; n];
        for p in 0..self.count.len() {
            for &id in self.get(p) {
                out[id as usize] = out[id as usize].saturating_add(self.count[p]);
            }
        }
        for &(id, c) in &self.fixed_one {
            out[id as usize] = out[id as usize].saturating_add(c);
        }
        out
    }
}

pub struct TrainOptions {
    /// How many merges to learn at most.
    pub merges: usize,
    /// Stop when the best pair occurs fewer times than this.
    pub min_frequency: u64,
    /// Never learn a token longer than this many bytes: a pair whose merged bytes would be
    /// longer is skipped, as if it did not occur.
    pub max_token_length: Option<usize>,
    /// Which of the pairs of equal count is merged.
    pub tie_break: TieBreak,
    /// `max_token_length` counts characters (UTF-8 sequences) rather than bytes
    /// (SentencePiece's `max_sentencepiece_length`).
    pub count_chars: bool,
}

/// Where training starts when it continues an existing tokenizer.
pub struct Base<'a> {
    /// Token bytes by id, empty for an id that is not an ordinary token (a special token, an
    /// unused id). New tokens get the ids `vocab.len()`, `vocab.len() + 1`, ...
    pub vocab: Vec<Vec<u8>>,
    /// Encodes a piece's bytes with the existing tokenizer, appending the ids.
    pub encode: &'a (dyn Fn(&[u8], &mut Vec<Rank>) + Sync),
}

/// What training learned.
pub struct Trained {
    /// New merges as (left id, right id), in the order learned; merge `i` creates the id
    /// `first_id + i` (256 + i when training starts from single bytes).
    pub merges: Vec<(Rank, Rank)>,
    /// Tokens of each input piece, in input order, once encoded with every merge.
    pub lengths: Vec<u32>,
    /// Occurrences of each id (indexed by id, up to the last merge's) over the counted pieces,
    /// weighted by their counts: the token counts of the training text at the final size.
    pub token_counts: Vec<u64>,
}

/// Learns merges from distinct pieces (as bytes) and their counts. Returns the merges as pairs
/// of token ids: ids 0..=255 are the single bytes, merge `i` creates id `256 + i`.
/// `progress(merges_done)` is called after every merge and may stop the loop with an error.
pub fn train<'a>(
    pieces: impl IntoIterator<Item = (&'a [u8], u64)>,
    opts: &TrainOptions,
    progress: &mut dyn FnMut(usize) -> Result<()>,
) -> Result<Vec<(Rank, Rank)>> {
    train_from(None, pieces, opts, progress).map(|t| t.merges)
}

/// Learns merges starting from single bytes (`base` None) or from an existing tokenizer: pieces
/// are first encoded with it, its ids stay, and new merges get ids after its largest.
pub fn train_from<'a>(
    base: Option<&Base<'_>>,
    pieces: impl IntoIterator<Item = (&'a [u8], u64)>,
    opts: &TrainOptions,
    progress: &mut dyn FnMut(usize) -> Result<()>,
) -> Result<Trained> {
    let mut ps = Pieces::default();
    let vocab = match base {
        None => {
            let mut one = Vec::new();
            for (bytes, count) in pieces {
                one.clear();
                one.extend(bytes.iter().map(|&b| b as Rank));
                ps.push(&one, count);
            }
            (0..=255u8).map(|b| vec![b]).collect()
        }
        Some(base) => {
            // Encoding with the base tokenizer is the costly part: do it on all cores, in
            // chunks that each fill their own buffer, then append in input order.
            let items: Vec<(&[u8], u64)> = pieces.into_iter().collect();
            let chunks: Vec<(Vec<Rank>, Vec<u32>)> = items
                .par_chunks(4096)
                .map(|chunk| {
                    let mut ids = Vec::new();
                    let mut lens = Vec::with_capacity(chunk.len());
                    for (bytes, _) in chunk {
                        let before = ids.len();
                        (base.encode)(bytes, &mut ids);
                        lens.push((ids.len() - before) as u32);
                    }
                    (ids, lens)
                })
                .collect();
            let mut it = items.iter();
            for (ids, lens) in &chunks {
                let mut at = 0;
                for &n in lens {
                    let (_, count) = it.next().expect("one length per piece");
                    ps.push(&ids[at..at + n as usize], *count);
                    at += n as usize;
                }
            }
            base.vocab.clone()
        }
    };
    if ps.mass <= i64::MAX as u128 {
        run::<i64>(ps, vocab, opts, progress)
    } else {
        run::<i128>(ps, vocab, opts, progress)
    }
}

fn run<C: Count>(
    mut ps: Pieces,
    mut vocab: Vec<Vec<u8>>,
    opts: &TrainOptions,
    progress: &mut dyn FnMut(usize) -> Result<()>,
) -> Result<Trained> {
    let min_frequency = C::of(opts.min_frequency.max(1));
    let max_len = opts.max_token_length.unwrap_or(usize::MAX);
    // A pair whose token would be too long is never pushed: its bytes never change, so it can
    // never become allowed later.
    let chars = |t: &[u8]| t.iter().filter(|&&b| b & 0xc0 != 0x80).count();
    let allowed = |k: u64, vocab: &[Vec<u8>]| {
        let (a, b) = unkey(k);
        let (a, b) = (&vocab[a as usize], &vocab[b as usize]);
        if opts.count_chars {
            chars(a) + chars(b) <= max_len
        } else {
            a.len() + b.len() <= max_len
        }
    };

    let mut pair_count: FxHashMap<u64, C> = FxHashMap::default();
    let mut where_: FxHashMap<u64, Vec<u32>> = FxHashMap::default();
    for p in 0..ps.count.len() {
        let c = C::of(ps.count[p]);
        for w in ps.get(p).windows(2) {
            let k = key(w[0], w[1]);
            *pair_count.entry(k).or_default() += c;
            let list = where_.entry(k).or_default();
            if list.last() != Some(&(p as u32)) {
                list.push(p as u32);
            }
        }
    }

    let mut heap = PairHeap::new(
        pair_count
            .iter()
            .filter(|(&k, &c)| c >= min_frequency && allowed(k, &vocab))
            .map(|(&pair, &c)| Entry { count: c, pair })
            .collect(),
        opts.tie_break,
    );
    heap.heapify(&vocab);

    let mut merges: Vec<(Rank, Rank)> = Vec::with_capacity(opts.merges.min(1 << 20));
    let mut visited: Vec<u32> = vec![u32::MAX; ps.count.len()];
    let mut step = MergeStep::<C>::default();

    while merges.len() < opts.merges {
        let Some(mut top) = heap.pop(&vocab) else {
            break;
        };
        if !heap.current(top, &pair_count, &vocab, min_frequency) {
            continue;
        }
        if opts.tie_break == TieBreak::First {
            top = first_of_ties(
                &mut heap,
                top,
                &pair_count,
                &where_,
                &ps,
                &vocab,
                min_frequency,
            );
        }
        let (a, b) = unkey(top.pair);
        let x = vocab.len() as Rank;
        let mut merged = vocab[a as usize].clone();
        merged.extend_from_slice(&vocab[b as usize]);
        vocab.push(merged);
        merges.push((a, b));
        let stamp = merges.len() as u32;

        let occurrences = where_.remove(&top.pair).unwrap_or_default();
        step.clear();
        for &p in &occurrences {
            if visited[p as usize] == stamp {
                continue;
            }
            visited[p as usize] = stamp;
            step.merge_piece(&mut ps, p, a, b, x);
        }
        // Apply the step's changes: one lookup per distinct pair in the big tables.
        for (&k, d) in &step.deltas {
            if d.up != d.down {
                let e = pair_count.entry(k).or_default();
                *e += d.up;
                *e -= d.down;
            }
        }
        pair_count.remove(&top.pair);
        step.created.sort_unstable();
        step.created.dedup();
        let mut i = 0;
        while i < step.created.len() {
            let k = step.created[i].0;
            let list = where_.entry(k).or_default();
            while i < step.created.len() && step.created[i].0 == k {
                list.push(step.created[i].1);
                i += 1;
            }
            let c = pair_count.get(&k).copied().unwrap_or_default();
            if c > C::default() && c >= min_frequency && allowed(k, &vocab) {
                heap.push(Entry { count: c, pair: k }, &vocab);
            }
        }
        progress(merges.len())?;
    }
    Ok(Trained {
        lengths: ps.lengths(),
        token_counts: ps.token_counts(vocab.len()),
        merges,
    })
}

/// `TieBreak::First`: of `top` and every other pair of its count at the top of the heap, the
/// one that occurs first (lowest piece, then leftmost in it); the others go back. Costs a look at
/// each tied pair's pieces: cheap where ties are few, and meant for the small texts that rule
/// is used on.
fn first_of_ties<C: Count>(
    heap: &mut PairHeap<C>,
    top: Entry<C>,
    pair_count: &FxHashMap<u64, C>,
    where_: &FxHashMap<u64, Vec<u32>>,
    ps: &Pieces,
    vocab: &[Vec<u8>],
    min_frequency: C,
) -> Entry<C> {
    let mut tied = vec![top];
    while heap.peek().is_some_and(|e| e.count == top.count) {
        let e = heap.pop(vocab).expect("peeked");
        if heap.current(e, pair_count, vocab, min_frequency)
            && tied.iter().all(|t| t.pair != e.pair)
        {
            tied.push(e);
        }
    }
    let first = |pair: u64| -> (u32, usize) {
        let (a, b) = unkey(pair);
        where_
            .get(&pair)
            .into_iter()
            .flatten()
            .filter(|&&p| ps.count[p as usize] > 0)
            .filter_map(|&p| {
                ps.get(p as usize)
                    .windows(2)
                    .position(|w| w[0] == a && w[1] == b)
                    .map(|i| (p, i))
            })
            .min()
            .unwrap_or((u32::MAX, usize::MAX))
    };
    let best = (0..tied.len())
        .min_by_key(|&i| first(tied[i].pair))
        .expect("at least top");
    let chosen = tied.swap_remove(best);
    for e in tied {
        heap.push(e, vocab);
    }
    chosen
}

/// How much one merge raises and lowers one pair's count (kept apart: `Count` is unsigned in
/// spirit, a pair's count never goes below zero).
#[derive(Clone, Copy, Default)]
struct Delta<C> {
    up: C,
    down: C,
}

/// What one merge changes, gathered before it touches the big tables: the count changes per
/// pair (a small map that stays in cache while a merge visits many pieces, measured ~15%
/// faster than updating the big pair table in place), and the (new pair, piece) occurrences
/// that the pair -> pieces lists must learn.
struct MergeStep<C> {
    deltas: FxHashMap<u64, Delta<C>>,
    created: Vec<(u64, u32)>,
}

impl<C: Count> Default for MergeStep<C> {
    fn default() -> Self {
        MergeStep {
            deltas: FxHashMap::default(),
            created: Vec::new(),
        }
    }
}

impl<C: Count> MergeStep<C> {
    fn clear(&mut self) {
        self.deltas.clear();
        self.created.clear();
    }

    /// Replaces every (a, b) in piece `p`, left to right and non-overlapping, by `x`, and
    /// records the count changes of the pairs around each replaced occurrence.
    fn merge_piece(&mut self, ps: &mut Pieces, p: u32, a: Rank, b: Rank, x: Rank) {
        let c = C::of(ps.count[p as usize]);
        let start = ps.start[p as usize];
        let n = ps.len[p as usize] as usize;
        let ids = &mut ps.ids[start..start + n];
        let deltas = &mut self.deltas;
        let mut change = |k: u64, up: bool| {
            let d = deltas.entry(k).or_default();
            if up {
                d.up += c
            } else {
                d.down += c
            }
        };
        let mut w = 0; // write position
        let mut r = 0; // read position
        while r < n {
            if r + 1 < n && ids[r] == a && ids[r + 1] == b {
                if w > 0 {
                    let prev = ids[w - 1];
                    change(key(prev, a), false);
                    change(key(prev, x), true);
                    self.created.push((key(prev, x), p));
                }
                if r + 2 < n {
                    let next = ids[r + 2];
                    change(key(b, next), false);
                    change(key(x, next), true);
                    self.created.push((key(x, next), p));
                }
                ids[w] = x;
                w += 1;
                r += 2;
            } else {
                ids[w] = ids[r];
                w += 1;
                r += 1;
            }
        }
        ps.len[p as usize] = w as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The textbook algorithm over the same pieces.
    fn naive(pieces: &[(&[u8], u64)], merges: usize, min_frequency: u64) -> Vec<(Rank, Rank)> {
        let mut vocab: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let mut words: Vec<(Vec<Rank>, u64)> = pieces
            .iter()
            .map(|(b, c)| (b.iter().map(|&x| x as Rank).collect(), *c))
            .collect();
        let mut out = Vec::new();
        while out.len() < merges {
            let mut counts: FxHashMap<(Rank, Rank), u64> = FxHashMap::default();
            for (w, c) in &words {
                for p in w.windows(2) {
                    *counts.entry((p[0], p[1])).or_insert(0) += c;
                }
            }
            let Some((&(a, b), &c)) = counts.iter().max_by(|(p, c), (q, d)| {
                c.cmp(d).then_with(|| {
                    (&vocab[p.0 as usize], &vocab[p.1 as usize])
                        .cmp(&(&vocab[q.0 as usize], &vocab[q.1 as usize]))
                })
            }) else {
                break;
            };
            if c < min_frequency {
                break;
            }
            let x = vocab.len() as Rank;
            let mut m = vocab[a as usize].clone();
            m.extend_from_slice(&vocab[b as usize]);
            vocab.push(m);
            out.push((a, b));
            for (w, _) in &mut words {
                let mut o = Vec::with_capacity(w.len());
                let mut i = 0;
                while i < w.len() {
                    if i + 1 < w.len() && w[i] == a && w[i + 1] == b {
                        o.push(x);
                        i += 2;
                    } else {
                        o.push(w[i]);
                        i += 1;
                    }
                }
                *w = o;
            }
        }
        out
    }

    fn fast(pieces: &[(&[u8], u64)], merges: usize, min_frequency: u64) -> Vec<(Rank, Rank)> {
        let opts = TrainOptions {
            merges,
            min_frequency,
            max_token_length: None,
            tie_break: TieBreak::Lexicographic,
            count_chars: false,
        };
        train(pieces.iter().copied(), &opts, &mut |_| Ok(())).unwrap()
    }

    fn bytes_of(merges: &[(Rank, Rank)]) -> Vec<Vec<u8>> {
        let mut vocab: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        for &(a, b) in merges {
            let mut m = vocab[a as usize].clone();
            m.extend_from_slice(&vocab[b as usize]);
            vocab.push(m);
        }
        vocab
    }

    /// Applies merges in order, each everywhere, left to right: the textbook training state.
    fn apply(piece: &[u8], merges: &[(Rank, Rank)]) -> Vec<Rank> {
        let mut w: Vec<Rank> = piece.iter().map(|&b| b as Rank).collect();
        for (i, &(a, b)) in merges.iter().enumerate() {
            let x = 256 + i as Rank;
            let mut o = Vec::with_capacity(w.len());
            let mut j = 0;
            while j < w.len() {
                if j + 1 < w.len() && w[j] == a && w[j + 1] == b {
                    o.push(x);
                    j += 2;
                } else {
                    o.push(w[j]);
                    j += 1;
                }
            }
            w = o;
        }
        w
    }

    #[test]
    fn token_counts_are_those_of_the_pieces_encoded_with_every_merge() {
        let pieces: Vec<(&[u8], u64)> = vec![
            (b"abracadabra", 3),
            (b"cadabra", 2),
            (b"abab", 5),
            (b"aaaa", 4),
            (b"bra", 7),
            (b"z", 9),
            (b"q", 0),
            (b"", 4),
            (b"xyzzy", 1),
        ];
        for merges in [0, 1, 4, 30] {
            let opts = TrainOptions {
                merges,
                min_frequency: 1,
                max_token_length: None,
                tie_break: TieBreak::Lexicographic,
                count_chars: false,
            };
            let t = train_from(None, pieces.iter().copied(), &opts, &mut |_| Ok(())).unwrap();
            let mut want = vec![0u64; 256 + t.merges.len()];
            for (bytes, c) in &pieces {
                for id in apply(bytes, &t.merges) {
                    want[id as usize] += c;
                }
            }
            assert_eq!(t.token_counts, want, "merges = {merges}");
        }
    }

    #[test]
    fn continuing_from_a_prefix_of_the_merges_gives_the_rest() {
        let pieces: Vec<(&[u8], u64)> = vec![
            (b"abracadabra", 3),
            (b"cadabra", 2),
            (b"abab", 5),
            (b"aaaa", 4),
            (b"bra", 7),
        ];
        let all = fast(&pieces, 30, 1);
        for k in [0, 1, 3, 7] {
            let head = &all[..k.min(all.len())];
            let encode = |p: &[u8], out: &mut Vec<Rank>| out.extend(apply(p, head));
            // Holes (empty entries) for ids that are not ordinary tokens must be ignored.
            let mut vocab = bytes_of(head);
            vocab.push(Vec::new());
            let base = Base {
                vocab,
                encode: &encode,
            };
            let opts = TrainOptions {
                merges: 30,
                min_frequency: 1,
                max_token_length: None,
                tie_break: TieBreak::Lexicographic,
                count_chars: false,
            };
            let t =
                train_from(Some(&base), pieces.iter().copied(), &opts, &mut |_| Ok(())).unwrap();
            // Same merges, with every new id shifted by the one hole.
            let shift = |id: Rank| {
                if id as usize >= 256 + head.len() {
                    id - 1
                } else {
                    id
                }
            };
            let got: Vec<(Rank, Rank)> = t
                .merges
                .iter()
                .map(|&(a, b)| (shift(a), shift(b)))
                .collect();
            assert_eq!(got, all[head.len()..].to_vec(), "k = {k}");
            let full = bytes_of(&all);
            for ((bytes, _), n) in pieces.iter().zip(&t.lengths) {
                assert_eq!(*n as usize, apply(bytes, &all).len(), "{:?}", full.len());
            }
        }
    }

    #[test]
    fn max_token_length_skips_long_tokens() {
        let pieces: Vec<(&[u8], u64)> = vec![(b"aaaaaaaa", 10), (b"abcabc", 3)];
        for n in 1..9 {
            let opts = TrainOptions {
                merges: 50,
                min_frequency: 1,
                max_token_length: Some(n),
                tie_break: TieBreak::Lexicographic,
                count_chars: false,
            };
            let m = train(pieces.iter().copied(), &opts, &mut |_| Ok(())).unwrap();
            let vocab = bytes_of(&m);
            assert!(vocab.iter().all(|t| t.len() <= n.max(1)));
            if n >= 2 {
                assert_eq!(vocab[256], b"aa");
            } else {
                assert!(m.is_empty());
            }
        }
    }

    #[test]
    fn huge_counts_stay_exact() {
        let big = u64::MAX / 2;
        let pieces: Vec<(&[u8], u64)> = vec![(b"abab", big), (b"cdcd", big - 1), (b"ef", u64::MAX)];
        assert_eq!(
            fast(&pieces, 3, 2),
            vec![
                (b'e' as Rank, b'f' as Rank),
                (b'a' as Rank, b'b' as Rank),
                (b'c' as Rank, b'd' as Rank)
            ]
        );
    }

    #[test]
    fn matches_naive_on_overlapping_runs() {
        let pieces: Vec<(&[u8], u64)> = vec![
            (b"aaaa", 3),
            (b"abab", 2),
            (b"aaabaaab", 1),
            (b"ba", 5),
            (b"b", 9),
        ];
        assert_eq!(fast(&pieces, 20, 1), naive(&pieces, 20, 1));
        assert_eq!(fast(&pieces, 20, 2), naive(&pieces, 20, 2));
    }

    #[test]
    fn matches_naive_on_pseudo_random_pieces() {
        let mut seed: u64 = 0x9E3779B97F4A7C15;
        let mut rnd = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..30 {
            let owned: Vec<(Vec<u8>, u64)> = (0..40)
                .map(|_| {
                    let len = 1 + (rnd() % 12) as usize;
                    let alphabet = 2 + round % 5;
                    let w: Vec<u8> = (0..len).map(|_| b'a' + (rnd() % alphabet) as u8).collect();
                    (w, 1 + rnd() % 4)
                })
                .collect();
            let mut uniq: FxHashMap<Vec<u8>, u64> = FxHashMap::default();
            for (w, c) in owned {
                *uniq.entry(w).or_insert(0) += c;
            }
            let pieces: Vec<(&[u8], u64)> = uniq.iter().map(|(w, c)| (w.as_slice(), *c)).collect();
            for min_f in [1, 2, 3] {
                assert_eq!(
                    fast(&pieces, 60, min_f),
                    naive(&pieces, 60, min_f),
                    "round {round}"
                );
            }
        }
    }

    #[test]
    fn ties_go_to_the_greatest_bytes() {
        let pieces: Vec<(&[u8], u64)> = vec![(b"ab", 1), (b"cd", 1), (b"ca", 1)];
        assert_eq!(fast(&pieces, 1, 1), vec![(b'c' as Rank, b'd' as Rank)]);
    }

    #[test]
    fn ties_by_first_occurrence_and_by_hugging_faces_ids() {
        let opts = |tie_break| TrainOptions {
            merges: 1,
            min_frequency: 1,
            max_token_length: None,
            tie_break,
            count_chars: false,
        };
        // "cd" and "ab" tie; "ab" is in the earlier piece, "cd" has the greater bytes.
        let pieces: Vec<(&[u8], u64)> = vec![(b"xab", 1), (b"cd", 1)];
        let run = |t| train(pieces.iter().copied(), &opts(t), &mut |_| Ok(())).unwrap();
        assert_eq!(
            run(TieBreak::Lexicographic),
            vec![(b'x' as Rank, b'a' as Rank)]
        );
        assert_eq!(run(TieBreak::First), vec![(b'x' as Rank, b'a' as Rank)]);
        let pieces: Vec<(&[u8], u64)> = vec![(b"cd", 1), (b"ab", 1)];
        let run = |t| train(pieces.iter().copied(), &opts(t), &mut |_| Ok(())).unwrap();
        assert_eq!(run(TieBreak::First), vec![(b'c' as Rank, b'd' as Rank)]);
        assert_eq!(run(TieBreak::Hf), vec![(b'a' as Rank, b'b' as Rank)]);
        // A space is not printable in GPT-2's byte map: Hugging Face numbers it after "~".
        let pieces: Vec<(&[u8], u64)> = vec![(b" a", 1), (b"~a", 1)];
        let run = |t| train(pieces.iter().copied(), &opts(t), &mut |_| Ok(())).unwrap();
        assert_eq!(run(TieBreak::Hf), vec![(b'~' as Rank, b'a' as Rank)]);
        let order = hf_byte_order();
        let mut seen = order.to_vec();
        seen.sort_unstable();
        assert_eq!(seen, (0..256).collect::<Vec<u32>>());
    }

    #[test]
    fn stops_below_min_frequency() {
        let pieces: Vec<(&[u8], u64)> = vec![(b"ab", 1)];
        assert!(fast(&pieces, 5, 2).is_empty());
    }
}
