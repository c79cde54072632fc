//! WordPiece training: word counting under BERT normalization, then a merge loop with one of
//! two selection rules.
//!
//! Initial vocabulary (both algorithms): the special tokens, then every character of the words
//! in code-point order, then `##c` for every character `c` that occurs after the first position
//! of a word, in code-point order. Each word starts as its first character and `##`
//! continuation characters.
//!
//! `Algorithm::Hf` reproduces Hugging Face's `WordPieceTrainer` (its BPE trainer with a `##`
//! prefix): take the pair with the highest count, ties to the smallest (left id, right id); stop
//! when the vocabulary is full or the best count is below `min_frequency`; the new token is
//! left + right without right's prefix, and a new token already in the vocabulary takes no new
//! id (the merge still happens). Word merges are left to right, non-overlapping, with HF's
//! bookkeeping of pair counts. One thing HF leaves to chance: it gives the `##c` tokens ids in
//! the iteration order of a hash map, which changes from run to run (and with it the ties that
//! involve them); here they are in code-point order, and `continuation_order` lets a caller
//! give HF's order to reproduce one of its runs id for id (the tests do).
//!
//! `Algorithm::Score` is WordPiece's own rule: the pair with the highest
//! count(ab) / (count(a) * count(b)), counts weighted by word frequency, compared exactly as
//! integers (u128 cross products); ties to the higher count(ab), then the smallest
//! (left id, right id). Pairs that occur fewer than `min_frequency` times are never merged.
//!
//! Cost: pairs are kept with the words they occur in, and a lazy max-heap holds candidates; a
//! popped entry that no longer matches its pair's current value is pushed back with it. For the
//! HF rule a pair's count only falls until it is merged (pairs that rise contain the new token
//! and are pushed once), as in BPE. For the score rule a merge of (a, b) lowers count(a) and
//! count(b), which raises the score of every other pair holding a or b: those pairs are pushed
//! again with their new score (symbol -> pairs index), so the popped maximum is exact.
//!
//! Memory and time (what each choice bought: NOTES.md beside this file):
//! - The heap is rebuilt from the live values (`pushed`) when stale entries outnumber the live
//!   ones, so it never holds every value every pair ever had; the order is total, so pops are
//!   the same. The re-pushes themselves remain: they keep the popped maximum exact.
//! - `WordCounter` reads plain files itself in 4 MiB blocks cut after whitespace and counts
//!   into per-thread shards; `finish` merges them into `Words`, one sorted text buffer plus ends
//!   and counts, and the map is gone before the merge loop. Words are symbol ids in one buffer
//!   (`sym`, `start`, `len`), the HF rule's heap entries are 24 bytes (`HfCand`), its word lists
//!   move into the queue entries rather than being cloned, and the training summary is made in
//!   Rust (`Words::encode_stats`).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::error::Result;
use crate::wordpiece::model::{for_each_word, BertOptions, Word, WordPiece};
use crate::words::WordSplit;
pub use crate::words::{CountStats, Words, BLOCK_BYTES, UNIT_BYTES};
use crate::Rank;

/// Counts normalized BERT words (`BertOptions`'s normalization and splitting).
pub type WordCounter = crate::words::WordCounter<BertOptions>;

impl WordSplit for BertOptions {
    // a space or newline always ends a BERT word
    const CUT_AFTER: &'static [u8] = b" \n";
    type Scratch = Word;

    fn for_each_word(&self, stretch: &str, word: &mut Word, f: &mut dyn FnMut(&str)) {
        for_each_word(self, stretch, 0, word, |w| f(w.text.as_str()));
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    Score,
    Hf,
}

impl Words {
    /// What `wp` makes of the words, each weighted by its count: (tokens, unknown tokens).
    pub fn encode_stats(&self, wp: &WordPiece, threads: usize) -> Result<(u64, u64)> {
        let unk = wp.unk();
        let chunk = |range: std::ops::Range<usize>| {
            let mut out = Vec::new();
            let (mut tokens, mut unks) = (0u64, 0u64);
            for i in range {
                let (w, c) = self.get(i);
                out.clear();
                wp.encode_word(w, &mut out);
                tokens += c * out.len() as u64;
                unks += c * out.iter().filter(|p| p.0 == unk).count() as u64;
            }
            (tokens, unks)
        };
        let n = self.len();
        let per = n.div_ceil(threads.max(1) * 8).max(1024);
        crate::threads::run(threads, || {
            (0..n.div_ceil(per))
                .into_par_iter()
                .map(|k| chunk(k * per..((k + 1) * per).min(n)))
                .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
        })
    }
}

/// Counts the normalized BERT words of `texts` on `threads` threads (text matching one of
/// `specials` separates words and is not counted).
pub fn count_words(
    opts: &BertOptions,
    texts: &[&str],
    specials: &[String],
    threads: usize,
) -> Result<Words> {
    let mut counter = WordCounter::new(*opts, specials)?;
    counter.add_texts(texts, threads)?;
    Ok(counter.finish())
}

pub struct TrainOptions<'a> {
    pub vocab_size: usize,
    pub min_frequency: u64,
    pub special_tokens: &'a [String],
    pub prefix: &'a str,
    pub algorithm: Algorithm,
    /// HF's order of the continuation tokens (`##c` texts), overriding code-point order.
    pub continuation_order: Option<&'a [String]>,
}

#[inline]
fn key(a: Rank, b: Rank) -> u64 {
    ((a as u64) << 32) | b as u64
}

struct Cand {
    count: u64,
    /// count(a) * count(b) for the score rule, 1 for the HF rule
    den: u128,
    pair: u64,
    /// HF rule: the words this entry merges in (an index into `positions`), as HF's queue
    /// entries carry their own word set; the score rule merges in every word of the pair.
    pos: u32,
}

impl PartialEq for Cand {
    fn eq(&self, o: &Self) -> bool {
        self.count == o.count && self.den == o.den && self.pair == o.pair
    }
}

impl Eq for Cand {}

impl Ord for Cand {
    fn cmp(&self, o: &Self) -> Ordering {
        // count/den vs o.count/o.den, exactly
        let l = self.count as u128 * o.den;
        let r = o.count as u128 * self.den;
        l.cmp(&r)
            .then(self.count.cmp(&o.count))
            .then(o.pair.cmp(&self.pair))
    }
}

impl PartialOrd for Cand {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// A heap entry of the HF rule (whose denominator is always 1): 24 bytes where a `Cand` takes
/// 48, for the hundreds of thousands of entries of a large vocabulary. Ordered as `Cand`.
struct HfCand {
    count: u64,
    pair: u64,
    pos: u32,
}

impl PartialEq for HfCand {
    fn eq(&self, o: &Self) -> bool {
        self.count == o.count && self.pair == o.pair
    }
}

impl Eq for HfCand {}

impl Ord for HfCand {
    fn cmp(&self, o: &Self) -> Ordering {
        self.count.cmp(&o.count).then(o.pair.cmp(&self.pair))
    }
}

impl PartialOrd for HfCand {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

enum Heap {
    Score(BinaryHeap<Cand>),
    Hf(BinaryHeap<HfCand>),
}

impl Heap {
    fn push(&mut self, c: Cand) {
        match self {
            Heap::Score(h) => h.push(c),
            Heap::Hf(h) => h.push(HfCand {
                count: c.count,
                pair: c.pair,
                pos: c.pos,
            }),
        }
    }

    fn pop(&mut self) -> Option<Cand> {
        match self {
            Heap::Score(h) => h.pop(),
            Heap::Hf(h) => h.pop().map(|c| Cand {
                count: c.count,
                den: 1,
                pair: c.pair,
                pos: c.pos,
            }),
        }
    }

    fn len(&self) -> usize {
        match self {
            Heap::Score(h) => h.len(),
            Heap::Hf(h) => h.len(),
        }
    }
}

/// One merge of training, with the counts it was chosen by, as they were just before it:
/// count(ab) of the pair (words weighted by their counts) and count(a), count(b) of its tokens
/// (their score is count(ab) / (count(a) * count(b))).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MergeCounts {
    pub left: Rank,
    pub right: Rank,
    pub pair: u64,
    pub left_count: u64,
    pub right_count: u64,
}

/// Trains on word counts: the vocabulary, tokens in id order, and every merge in order with
/// its counts (the training record's scores). `progress(n)` is told the vocabulary size now
/// and then; an error from it stops training.
pub fn train(
    words: &Words,
    opts: &TrainOptions,
    progress: &mut dyn FnMut(usize) -> Result<()>,
) -> Result<(Vec<String>, Vec<MergeCounts>)> {
    let mut vocab: Vec<String> = Vec::new();
    let mut ids: FxHashMap<String, Rank> = FxHashMap::default();
    let add = |t: String, vocab: &mut Vec<String>, ids: &mut FxHashMap<String, Rank>| -> Rank {
        if let Some(&i) = ids.get(&t) {
            return i;
        }
        let i = vocab.len() as Rank;
        ids.insert(t.clone(), i);
        vocab.push(t);
        i
    };
    for s in opts.special_tokens {
        add(s.clone(), &mut vocab, &mut ids);
    }
    // Words in a fixed order (sorted), so that everything below is deterministic.
    let list = words;
    let mut alphabet: Vec<char> = Vec::new();
    let mut continuing: Vec<char> = Vec::new();
    {
        let mut seen = FxHashSet::default();
        let mut seen_cont = FxHashSet::default();
        for (w, _) in list.iter() {
            for (n, c) in w.chars().enumerate() {
                if seen.insert(c) {
                    alphabet.push(c);
                }
                if n > 0 && seen_cont.insert(c) {
                    continuing.push(c);
                }
            }
        }
    }
    alphabet.sort_unstable();
    continuing.sort_unstable();
    for c in &alphabet {
        add(c.to_string(), &mut vocab, &mut ids);
    }
    if let Some(order) = opts.continuation_order {
        for t in order {
            add(t.clone(), &mut vocab, &mut ids);
        }
    }
    for c in &continuing {
        add(format!("{}{c}", opts.prefix), &mut vocab, &mut ids);
    }
    // Words as symbol ids, all in one buffer: word i is `sym[start[i]..start[i] + len[i]]`
    // (merges shorten it in place).
    let (first_id, cont_id) = {
        let mut first: FxHashMap<char, Rank> = FxHashMap::default();
        let mut cont: FxHashMap<char, Rank> = FxHashMap::default();
        for &c in &alphabet {
            first.insert(c, ids[&c.to_string()]);
        }
        for &c in &continuing {
            cont.insert(c, ids[&format!("{}{c}", opts.prefix)]);
        }
        (first, cont)
    };
    let mut sym: Vec<Rank> = Vec::new();
    let mut start: Vec<usize> = Vec::with_capacity(list.len());
    let mut len: Vec<u32> = Vec::with_capacity(list.len());
    for (w, _) in list.iter() {
        start.push(sym.len());
        for (n, c) in w.chars().enumerate() {
            sym.push(if n == 0 { first_id[&c] } else { cont_id[&c] });
        }
        len.push((sym.len() - start[start.len() - 1]) as u32);
    }
    let counts: Vec<u64> = list.iter().map(|(_, c)| c).collect();
    let score = opts.algorithm == Algorithm::Score;

    let mut pair_count: FxHashMap<u64, i64> = FxHashMap::default();
    // pair -> words it occurs in (all of them, ever; a word listed may no longer have it)
    let mut wher: FxHashMap<u64, Vec<u32>> = FxHashMap::default();
    let mut unit: Vec<i64> = vec![0; vocab.len()];
    for i in 0..list.len() {
        let w = &sym[start[i]..start[i] + len[i] as usize];
        for &s in w {
            unit[s as usize] += counts[i] as i64;
        }
        for p in w.windows(2) {
            let k = key(p[0], p[1]);
            *pair_count.entry(k).or_insert(0) += counts[i] as i64;
            let list = wher.entry(k).or_default();
            if list.last() != Some(&(i as u32)) {
                list.push(i as u32);
            }
        }
    }
    // HF rule: word lists of the queue entries.
    // (boxed slices: 16 bytes a list and no spare capacity, for hundreds of thousands of lists)
    let mut positions: Vec<Box<[u32]>> = Vec::new();
    // symbol -> pairs it is in (score rule only)
    let mut by_symbol: FxHashMap<Rank, FxHashSet<u64>> = FxHashMap::default();
    if score {
        for (&k, &c) in &pair_count {
            if c < opts.min_frequency.max(1) as i64 {
                continue; // never a candidate (see the pruning below)
            }
            by_symbol.entry((k >> 32) as Rank).or_default().insert(k);
            by_symbol.entry(k as Rank).or_default().insert(k);
        }
    }
    let cand = |k: u64, pos: u32, pair_count: &FxHashMap<u64, i64>, unit: &[i64]| -> Option<Cand> {
        let c = *pair_count.get(&k)?;
        if c <= 0 || (score && (c as u64) < opts.min_frequency) {
            return None;
        }
        let den = if score {
            let a = unit[(k >> 32) as usize].max(1) as u128;
            let b = unit[(k as Rank) as usize].max(1) as u128;
            a.saturating_mul(b)
        } else {
            1
        };
        Some(Cand {
            count: c as u64,
            den,
            pair: k,
            pos,
        })
    };
    let mut heap = if score {
        Heap::Score(BinaryHeap::with_capacity(wher.len()))
    } else {
        Heap::Hf(BinaryHeap::with_capacity(wher.len()))
    };
    // score rule: the value of each pair's live heap entry (older entries are skipped)
    let mut pushed: FxHashMap<u64, (u64, u128)> = FxHashMap::default();
    if score {
        for &k in wher.keys() {
            if let Some(c) = cand(k, u32::MAX, &pair_count, &unit) {
                pushed.insert(k, (c.count, c.den));
                heap.push(c);
            }
        }
    } else {
        // The word lists move to the queue entries (`wher` is not used again).
        positions.reserve(wher.len());
        for (k, list) in std::mem::take(&mut wher) {
            positions.push(list.into_boxed_slice());
            if let Some(c) = cand(k, (positions.len() - 1) as u32, &pair_count, &unit) {
                heap.push(c);
            }
        }
    }

    let mut merges: Vec<MergeCounts> = Vec::new();
    let mut last_report = 0;
    while vocab.len() < opts.vocab_size {
        let Some(top) = heap.pop() else { break };
        if score && pushed.get(&top.pair) != Some(&(top.count, top.den)) {
            continue; // an older entry of a pair pushed again since
        }
        let Some(now) = cand(top.pair, top.pos, &pair_count, &unit) else {
            pushed.remove(&top.pair);
            continue;
        };
        if now != top {
            if score {
                pushed.insert(top.pair, (now.count, now.den));
            }
            heap.push(now);
            continue;
        }
        pushed.remove(&top.pair);
        if top.count < opts.min_frequency {
            break;
        }
        let (a, b) = ((top.pair >> 32) as Rank, top.pair as Rank);
        // (counts never go below zero: each is a sum of word counts still in the words)
        merges.push(MergeCounts {
            left: a,
            right: b,
            pair: top.count,
            left_count: unit[a as usize].max(0) as u64,
            right_count: unit[b as usize].max(0) as u64,
        });
        let right = vocab[b as usize]
            .strip_prefix(opts.prefix)
            .unwrap_or(&vocab[b as usize]);
        let new_text = format!("{}{}", vocab[a as usize], right);
        let new = add(new_text, &mut vocab, &mut ids);
        if unit.len() < vocab.len() {
            unit.resize(vocab.len(), 0);
        }
        let touched: Vec<u32> = if score {
            wher.remove(&top.pair).unwrap_or_default()
        } else {
            std::mem::take(&mut positions[top.pos as usize]).into_vec()
        };
        // Merge in each word, left to right, non-overlapping, with HF's Word::merge bookkeeping.
        // new pair -> words it appeared in during this merge (HF's `where_to_update`)
        let mut new_pairs: FxHashMap<u64, Vec<u32>> = FxHashMap::default();
        let note = |k: u64, wi: u32, new_pairs: &mut FxHashMap<u64, Vec<u32>>| {
            let list = new_pairs.entry(k).or_default();
            if list.last() != Some(&wi) {
                list.push(wi);
            }
        };
        for &wi in &touched {
            let at = start[wi as usize];
            let n = &mut len[wi as usize];
            let w = &mut sym[at..at + *n as usize];
            let mut wlen = w.len();
            let c = counts[wi as usize] as i64;
            let mut i = 0;
            while i + 1 < wlen {
                if w[i] == a && w[i + 1] == b {
                    if i > 0 {
                        let p = w[i - 1];
                        *pair_count.entry(key(p, a)).or_insert(0) -= c;
                        let k = key(p, new);
                        *pair_count.entry(k).or_insert(0) += c;
                        note(k, wi, &mut new_pairs);
                    }
                    w[i] = new;
                    w.copy_within(i + 2..wlen, i + 1);
                    wlen -= 1;
                    if i + 1 < wlen {
                        let n = w[i + 1];
                        *pair_count.entry(key(b, n)).or_insert(0) -= c;
                        let k = key(new, n);
                        *pair_count.entry(k).or_insert(0) += c;
                        note(k, wi, &mut new_pairs);
                    }
                    unit[a as usize] -= c;
                    unit[b as usize] -= c;
                    unit[new as usize] += c;
                }
                i += 1;
            }
            *n = wlen as u32;
        }
        if score {
            // Every occurrence is merged: the pair is gone.
            pair_count.insert(top.pair, 0);
            let mut again: FxHashSet<u64> = FxHashSet::default();
            for s in [a, b] {
                if let Some(set) = by_symbol.get(&s) {
                    again.extend(set.iter().copied());
                }
            }
            for (&k, list) in &new_pairs {
                by_symbol.entry((k >> 32) as Rank).or_default().insert(k);
                by_symbol.entry(k as Rank).or_default().insert(k);
                // (a word listed twice is merged once: the second pass finds nothing)
                wher.entry(k).or_default().extend_from_slice(list);
                again.insert(k);
            }
            let mut dead: Vec<u64> = Vec::new();
            for k in again {
                match cand(k, u32::MAX, &pair_count, &unit) {
                    Some(c) => {
                        // Push only a value above the pair's entry in the heap: a lower one is
                        // found stale when that entry is popped.
                        let above = match pushed.get(&k) {
                            Some(&(count, den)) => {
                                c > Cand {
                                    count,
                                    den,
                                    pair: k,
                                    pos: u32::MAX,
                                }
                            }
                            None => true,
                        };
                        if above {
                            pushed.insert(k, (c.count, c.den));
                            heap.push(c);
                        }
                    }
                    None => dead.push(k),
                }
            }
            // Stale entries (values a pair had before it was pushed again) are most of the heap:
            // when they outnumber the live ones (plus a little), rebuild it from the live values
            // (O(live) after at least live + 64 pushes: amortized O(1) a push).
            // The order is total (pair ids break ties), so the pops are the same; this bounds
            // the heap's memory by the number of live pairs.
            if heap.len() > 2 * pushed.len() + 64 {
                heap = Heap::Score(
                    pushed
                        .iter()
                        .map(|(&pair, &(count, den))| Cand {
                            count,
                            den,
                            pair,
                            pos: u32::MAX,
                        })
                        .collect(),
                );
            }
            // Pairs that can no longer be merged (gone, or below min_frequency: counts only
            // fall) leave the symbol index; a count rises again only when a merge makes a token
            // already in the vocabulary, and then the pair comes back through `new_pairs`.
            for k in dead {
                for s in [(k >> 32) as Rank, k as Rank] {
                    if let Some(set) = by_symbol.get_mut(&s) {
                        set.remove(&k);
                    }
                }
            }
        } else {
            // As HF: one new queue entry per new pair, carrying the words of this merge. (HF
            // leaves the merged pair's count as it is; it is never pushed again.)
            let mut fresh: Vec<(u64, Vec<u32>)> = new_pairs.into_iter().collect();
            fresh.sort_unstable_by_key(|&(k, _)| k);
            for (k, list) in fresh {
                positions.push(list.into_boxed_slice());
                if let Some(c) = cand(k, (positions.len() - 1) as u32, &pair_count, &unit) {
                    heap.push(c);
                }
            }
        }
        if vocab.len() >= last_report + 256 {
            last_report = vocab.len();
            progress(vocab.len())?;
        }
    }
    // The alphabet alone can exceed vocab_size: HF keeps it whole, and so does this.
    Ok((vocab, merges))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn run(texts: &[&str], algorithm: Algorithm, size: usize) -> Vec<String> {
        let words = count_words(&BertOptions::default(), texts, &[], 1).unwrap();
        let specials = vec!["[UNK]".to_string()];
        let opts = TrainOptions {
            vocab_size: size,
            min_frequency: 2,
            special_tokens: &specials,
            prefix: "##",
            algorithm,
            continuation_order: None,
        };
        train(&words, &opts, &mut |_| Ok(())).unwrap().0
    }

    fn counts(c: &mut WordCounter) -> Vec<(String, u64)> {
        c.finish().iter().map(|(w, n)| (w.to_string(), n)).collect()
    }

    #[test]
    fn cuts_give_the_counts_of_the_whole() {
        let text = "Hello, World! héllo wörld\n[SEP] über 東京 [S EP]x  a\nb ".repeat(40);
        let specials = vec!["[SEP]".to_string(), "[S EP]".to_string()];
        let opts = BertOptions::default();
        let mut whole = WordCounter::with_sizes(opts, &specials, usize::MAX, 1 << 20).unwrap();
        whole.units(&text).iter().for_each(|u| whole.count_unit(u));
        let expected = counts(&mut whole);
        for unit in [1, 3, 7, 64] {
            let mut c = WordCounter::with_sizes(opts, &specials, unit, 1 << 20).unwrap();
            assert!(c.units(&text).len() > 1);
            c.add_texts(&[&text], 2).unwrap();
            assert_eq!(counts(&mut c), expected, "unit {unit}");
        }
        let path =
            std::env::temp_dir().join(format!("bytepair-wp-count-{}.txt", std::process::id()));
        std::fs::write(&path, &text).unwrap();
        for block in [1, 5, 17, 1000] {
            let mut c = WordCounter::with_sizes(opts, &specials, 13, block).unwrap();
            c.add_file(path.to_str().unwrap(), false, 2, &mut |_| Ok(()))
                .unwrap();
            assert_eq!(c.stats.bytes, text.len() as u64);
            assert_eq!(c.stats.chars, text.chars().count() as u64);
            assert_eq!(counts(&mut c), expected, "block {block}");
        }
        let mut bad = text.as_bytes().to_vec();
        let at = 100 + text[100..].find("World").unwrap();
        bad[at] = 0xff;
        std::fs::write(&path, &bad).unwrap();
        let mut c = WordCounter::with_sizes(opts, &specials, 13, 16).unwrap();
        let err = c
            .add_file(path.to_str().unwrap(), false, 1, &mut |_| Ok(()))
            .unwrap_err();
        assert!(
            matches!(err, Error::Utf8 { offset, .. } if offset == at as u64),
            "{err}"
        );
        let mut c = WordCounter::with_sizes(opts, &specials, 13, 16).unwrap();
        c.add_file(path.to_str().unwrap(), true, 1, &mut |_| Ok(()))
            .unwrap();
        assert_eq!(c.stats.replaced, 1);
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn initial_vocabulary_and_merges() {
        let v = run(&["abab abab ab"], Algorithm::Hf, 100);
        assert_eq!(&v[..5], ["[UNK]", "a", "b", "##a", "##b"]);
        assert_eq!(v[5], "ab");
        let v = run(&["abab abab ab"], Algorithm::Score, 100);
        assert!(v.len() > 5);
    }

    #[test]
    fn merges_come_with_their_counts() {
        // "abab" twice and "ab": a and ##a are different tokens; (a, ##b) occurs 3 times,
        // (##a, ##b) twice, (##b, ##a) twice; a 3, ##a 2, ##b 5.
        let words = count_words(&BertOptions::default(), &["abab abab ab"], &[], 1).unwrap();
        let specials = vec!["[UNK]".to_string()];
        let opts = TrainOptions {
            vocab_size: 6,
            min_frequency: 2,
            special_tokens: &specials,
            prefix: "##",
            algorithm: Algorithm::Hf,
            continuation_order: None,
        };
        let (vocab, merges) = train(&words, &opts, &mut |_| Ok(())).unwrap();
        assert_eq!(vocab[5], "ab");
        assert_eq!(
            merges,
            [MergeCounts {
                left: 1,
                right: 4,
                pair: 3,
                left_count: 3,
                right_count: 5
            }]
        );
    }
}
