//! Seed pieces for Unigram training: the substrings of the distinct words that occur in more
//! than one place, scored by occurrences times length, the best `keep` of them.
//!
//! The words are one array of symbol ids, each word ended by 0 (rare characters are 0 too, so
//! no substring crosses one). Occurrences are counted in the corpus (each word weighted by its
//! count), as sentencepiece counts them in its sentences before it splits them into words. Suffixes are sorted up to `max_len` symbols: bucketed by their
//! first symbol, each bucket sorted by the next symbols packed into one `u64` (as many as fit),
//! then, among equal keys, by the symbols after. Adjacent suffixes' common prefixes (capped at
//! `max_len`) give the intervals of the suffix tree bottom up (a stack): each interval is a
//! substring shared by `right - left` suffixes, i.e. its number of occurrences among the
//! corpus. Only branching substrings are intervals, as in sentencepiece's enhanced
//! suffix array; unlike it, a substring that always ends its word is one too (the terminator
//! ends the comparison instead of joining it). Memory: the ids, the suffix array (4 bytes per
//! symbol) and one bucket's keys at a time per thread; the candidates are kept in a heap of
//! `keep`.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use rayon::prelude::*;

/// Common prefix length of the suffixes at `a` and `b`, up to `limit` symbols (a 0 ends both).
#[inline]
fn common(text: &[u32], a: usize, b: usize, limit: usize) -> usize {
    let mut n = 0;
    while n < limit {
        let (x, y) = (text[a + n], text[b + n]);
        if x != y || x == 0 {
            break;
        }
        n += 1;
    }
    n
}

/// Compares the suffixes at `a` and `b` from symbol `from` on, up to `limit` symbols.
fn compare_from(text: &[u32], a: usize, b: usize, from: usize, limit: usize) -> Ordering {
    for n in from..limit {
        let (x, y) = (text[a + n], text[b + n]);
        if x != y {
            return x.cmp(&y);
        }
        if x == 0 {
            return Ordering::Equal;
        }
    }
    Ordering::Equal
}

/// The suffix array of `text` (positions of at least two symbols before a 0), ordered by their
/// first `max_len` symbols, ties by position, and the weight of each suffix's word (`words`:
/// each word's end in `text`, its separator's position, and its weight).
fn suffix_array(
    text: &[u32],
    words: &[(usize, u64)],
    symbols: u32,
    max_len: usize,
    threads: usize,
) -> (Vec<u32>, Vec<u64>) {
    let starts = |i: usize| text[i] != 0 && text[i + 1] != 0;
    let mut counts = vec![0usize; symbols as usize + 1];
    for i in 0..text.len() - 1 {
        if starts(i) {
            counts[text[i] as usize] += 1;
        }
    }
    let mut begin = vec![0usize; counts.len() + 1];
    for s in 0..counts.len() {
        begin[s + 1] = begin[s] + counts[s];
    }
    let mut sa = vec![0u32; begin[counts.len()]];
    let mut fill = begin.clone();
    let mut i = 0;
    for &(end, _) in words {
        while i < end {
            if starts(i) {
                let s = text[i] as usize;
                sa[fill[s]] = i as u32;
                fill[s] += 1;
            }
            i += 1;
        }
        i = end + 1;
    }
    let bits = 32 - symbols.leading_zeros();
    let per_key = ((64 / bits) as usize).min(max_len.saturating_sub(1)).max(1);
    let key = |i: usize| -> u64 {
        let mut k = 0u64;
        let mut ended = false;
        for n in 1..=per_key {
            let c = if ended { 0 } else { text[i + n] };
            ended |= c == 0;
            k = (k << bits) | u64::from(c);
        }
        k
    };
    let mut buckets: Vec<&mut [u32]> = Vec::with_capacity(counts.len());
    let mut rest: &mut [u32] = &mut sa;
    for &c in &counts {
        let (head, tail) = rest.split_at_mut(c);
        buckets.push(head);
        rest = tail;
    }
    let sort = |bucket: &mut &mut [u32]| {
        let mut keyed: Vec<(u64, u32)> = bucket.iter().map(|&i| (key(i as usize), i)).collect();
        keyed.sort_unstable();
        let mut x = 0;
        while x < keyed.len() {
            let mut y = x + 1;
            while y < keyed.len() && keyed[y].0 == keyed[x].0 {
                y += 1;
            }
            // a key whose last symbol is 0 holds whole suffixes: equal, nothing more to compare
            let full = keyed[x].0 & ((1u64 << bits) - 1) != 0;
            if y - x > 1 && full && 1 + per_key < max_len {
                keyed[x..y].sort_unstable_by(|p, q| {
                    compare_from(text, p.1 as usize, q.1 as usize, 1 + per_key, max_len)
                        .then(p.1.cmp(&q.1))
                });
            }
            x = y;
        }
        for (slot, (_, i)) in bucket.iter_mut().zip(keyed) {
            *slot = i;
        }
    };
    if threads > 1 {
        buckets.par_iter_mut().for_each(sort);
    } else {
        buckets.iter_mut().for_each(sort);
    }
    // word weight by position: one pass over the words, then looked up in suffix order
    let mut weight_at = vec![0u64; text.len()];
    let mut from = 0;
    for &(end, w) in words {
        weight_at[from..end].fill(w);
        from = end + 1;
    }
    let weights = sa.iter().map(|&i| weight_at[i as usize]).collect();
    (sa, weights)
}

/// The best `keep` substrings of 2 to `max_len` symbols for which `valid` holds, as
/// (occurrences × length, occurrences, symbols), best first (ties: lexicographically first).
/// `words`: the end of each word in `text` (the position of its 0) and its count; a substring's
/// occurrences are counted in every word, weighted by the word's count.
pub fn seeds(
    text: &[u32],
    words: &[(usize, u64)],
    symbols: u32,
    max_len: usize,
    keep: usize,
    valid: impl Fn(&[u32]) -> bool,
    threads: usize,
) -> Vec<(u64, u64, Vec<u32>)> {
    debug_assert!(text.last() == Some(&0));
    if text.len() < 2 || keep == 0 || max_len < 2 {
        return Vec::new();
    }
    let (sa, weights) = suffix_array(text, words, symbols, max_len, threads);
    let n = sa.len();
    // cumulative weight before each suffix: an interval's occurrences are a difference
    let mut cum = Vec::with_capacity(n + 1);
    cum.push(0u64);
    let mut total = 0u64;
    for &w in &weights {
        total += w;
        cum.push(total);
    }
    drop(weights);
    let lcp = |x: usize| common(text, sa[x - 1] as usize, sa[x] as usize, max_len);
    let lcps: Vec<u8> = if threads > 1 {
        (1..n).into_par_iter().map(|x| lcp(x) as u8).collect()
    } else {
        (1..n).map(|x| lcp(x) as u8).collect()
    };
    // min-heap of (score, Reverse(left)): the worst kept candidate on top
    let mut heap: BinaryHeap<Reverse<(u64, Reverse<u32>, u32)>> = BinaryHeap::new();
    let mut offer = |depth: usize, left: usize, right: usize| {
        let freq = cum[right] - cum[left];
        let score = freq * depth as u64;
        let entry = Reverse((score, Reverse(left as u32), depth as u32));
        if heap.len() == keep {
            match heap.peek() {
                Some(top) if entry < *top => {}
                _ => return,
            }
        }
        let at = sa[left] as usize;
        if !valid(&text[at..at + depth]) {
            return;
        }
        if heap.len() == keep {
            heap.pop();
        }
        heap.push(entry);
    };
    let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
    for x in 1..=n {
        let l = if x < n { lcps[x - 1] as usize } else { 0 };
        let mut left = x - 1;
        while let Some(&(d, lb)) = stack.last() {
            if d <= l {
                break;
            }
            stack.pop();
            if d >= 2 {
                offer(d, lb, x);
            }
            left = lb;
        }
        if stack.last().is_none_or(|t| t.0 < l) {
            stack.push((l, left));
        }
    }
    let mut out: Vec<(u64, u64, Vec<u32>)> = heap
        .into_iter()
        .map(|Reverse((score, Reverse(left), depth))| {
            let at = sa[left as usize] as usize;
            let d = depth as usize;
            (score, score / depth as u64, text[at..at + d].to_vec())
        })
        .collect();
    out.sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| a.2.cmp(&b.2)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Every substring of 2..=max_len symbols with its occurrences, by brute force.
    /// Every substring of 2..=max_len symbols with its occurrences (word i weighs i % 3 + 1),
    /// and how many places it occurs in, by brute force.
    fn naive(words: &[Vec<u32>], max_len: usize) -> HashMap<Vec<u32>, (u64, u64)> {
        let mut m = HashMap::new();
        for (k, w) in words.iter().enumerate() {
            for i in 0..w.len() {
                for j in i + 2..=(i + max_len).min(w.len()) {
                    let e = m.entry(w[i..j].to_vec()).or_insert((0, 0));
                    e.0 += k as u64 % 3 + 1;
                    e.1 += 1;
                }
            }
        }
        m
    }

    fn flat(words: &[Vec<u32>]) -> (Vec<u32>, Vec<(usize, u64)>) {
        let mut t = Vec::new();
        let mut ends = Vec::new();
        for (k, w) in words.iter().enumerate() {
            t.extend(w);
            ends.push((t.len(), k as u64 % 3 + 1));
            t.push(0);
        }
        (t, ends)
    }

    #[test]
    fn intervals_count_occurrences() {
        let mut rng = crate::unigram::sample::Rng::new(7);
        for round in 0..40 {
            let symbols = 2 + (round % 5) * 40;
            let words: Vec<Vec<u32>> = (0..60)
                .map(|_| {
                    let len = 1 + (rng.next_u64() % 9) as usize;
                    (0..len)
                        .map(|_| 1 + (rng.next_u64() % u64::from(symbols.min(4 + round))) as u32)
                        .collect()
                })
                .collect();
            let max_len = 2 + round as usize % 7;
            let (text, ends) = flat(&words);
            let want = naive(&words, max_len);
            let got = seeds(
                &text,
                &ends,
                symbols,
                max_len,
                usize::MAX,
                |_| true,
                1 + round as usize % 2,
            );
            // every reported substring has its true count; every substring occurring twice or
            // more that some longer substring does not extend everywhere is reported
            for (score, freq, s) in &got {
                assert_eq!(Some(*freq), want.get(s).map(|w| w.0), "{s:?}");
                assert_eq!(*score, freq * s.len() as u64);
            }
            let reported: std::collections::HashSet<&Vec<u32>> = got.iter().map(|g| &g.2).collect();
            for (s, &(_, c)) in &want {
                if c < 2 {
                    continue;
                }
                let extended = (1..=symbols).any(|x| {
                    let mut t = s.clone();
                    t.push(x);
                    want.get(&t).map(|w| w.1) == Some(c)
                });
                let branching = !extended || s.len() == max_len;
                assert_eq!(reported.contains(s), branching, "{s:?} count {c}");
            }
        }
    }

    #[test]
    fn keeps_the_best_and_checks_validity() {
        let words = vec![vec![1, 2, 3], vec![1, 2, 3], vec![1, 2], vec![2, 3, 1, 2]];
        let (text, ends) = flat(&words);
        let all = seeds(&text, &ends, 3, 8, usize::MAX, |_| true, 1);
        let best = seeds(&text, &ends, 3, 8, 2, |_| true, 1);
        assert_eq!(best, all[..2].to_vec());
        let no12 = seeds(&text, &ends, 3, 8, usize::MAX, |s| s != [1, 2], 1);
        assert!(no12.iter().all(|x| x.2 != vec![1, 2]));
        assert_eq!(no12.len() + 1, all.len());
    }
}
