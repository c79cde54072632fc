//! Long pieces of one repeated byte (a run of spaces, of newlines, a line of `=`), encoded as
//! runs of equal tokens: `(token, count)`, never one word per byte.
//!
//! In a monotone model the merges of one priority are all made before any later one, leftmost
//! first (`long`'s notes), and a priority has one pair. On runs that is: a pair (t, t) turns a
//! run of c copies of t into c / 2 copies of tt and, if c is odd, one t after them; a pair (a, b)
//! with a != b joins the last a of a run of a to the first b of the run after it. The runs of a
//! piece of one byte stay few (a handful of tokens are made of that byte alone), so a piece of
//! n bytes costs one pass to see it is uniform and a few steps per merge, and its ids are
//! written at the end: 32 MB of newlines went through `long`'s 4 bytes a byte of fresh memory,
//! and counting them took 9.6 times what 4 MB took (`bench_peers.py --only cliff`).

use super::{Bpe, Merge, Rank, NONE};

/// Runs at which a piece goes back to `long` (a vocabulary whose tokens of the byte do not
/// nest would keep splitting runs).
const MAX_RUNS: usize = 256;

/// Whether every byte of `piece` (not empty) is its first. Blocks of 64 bytes are compared
/// whole, with no exit inside one: an exit per word of 8 made the pass over 32 MB of one byte
/// a chain of branches.
pub(super) fn is_uniform(piece: &[u8]) -> bool {
    let x = u64::from_ne_bytes([piece[0]; 8]);
    let word = |w: &[u8]| u64::from_ne_bytes(w.try_into().unwrap()) ^ x;
    let mut blocks = piece.chunks_exact(64);
    let whole = blocks.all(|b| b.chunks_exact(8).fold(0, |d, w| d | word(w)) == 0);
    let mut words = blocks.remainder().chunks_exact(8);
    whole && words.all(|w| word(w) == 0) && words.remainder().iter().all(|&b| b == piece[0])
}

impl Bpe {
    /// Appends the ids of `piece`, one byte repeated (`is_uniform`), of a monotone model;
    /// false (and nothing appended) if its runs grow past `MAX_RUNS`.
    pub(super) fn encode_uniform(&self, piece: &[u8], out: &mut Vec<Rank>) -> bool {
        let Some(runs) = self.uniform_runs(piece) else {
            return false;
        };
        let n: usize = runs.iter().map(|&(_, c)| c).sum();
        out.reserve(n);
        // Millions of ids go into memory the process has not touched yet (whatever buffer the
        // caller gave, it grows here): in huge pages, `encode_ordinary` of 32 MB of newlines
        // took 9.5 ms rather than 12.4 (`bpe/NOTES.md`, nineteenth round).
        let spare = out.spare_capacity_mut();
        super::advise_huge(spare.as_ptr().cast(), std::mem::size_of_val(spare));
        for &(t, c) in &runs {
            out.extend(std::iter::repeat_n(t, c));
        }
        true
    }

    /// The number of ids `encode_uniform` appends, without writing them (a count of 32 MB of
    /// one letter wrote 16 MB of ids into fresh pages); `None` where it returns false.
    pub(super) fn count_uniform(&self, piece: &[u8]) -> Option<usize> {
        Some(self.uniform_runs(piece)?.iter().map(|&(_, c)| c).sum())
    }

    /// The ids of `piece` (as for `encode_uniform`) as runs of equal tokens, in order.
    fn uniform_runs(&self, piece: &[u8]) -> Option<Vec<(Rank, usize)>> {
        debug_assert!(self.monotone && is_uniform(piece));
        let mut runs: Vec<(Rank, usize)> = vec![(self.byte_ids[piece[0] as usize], piece.len())];
        let mut next = Vec::with_capacity(MAX_RUNS + 2);
        loop {
            // The lowest priority among the pairs inside runs and across their edges.
            let mut best: (Merge, Rank, Rank) = (NONE, 0, 0);
            for (i, &(t, c)) in runs.iter().enumerate() {
                if c >= 2 {
                    let m = self.pair(t, t);
                    if m < best.0 {
                        best = (m, t, t);
                    }
                }
                if let Some(&(u, _)) = runs.get(i + 1) {
                    let m = self.pair(t, u);
                    if m < best.0 {
                        best = (m, t, u);
                    }
                }
            }
            let (m, a, b) = best;
            if m == NONE {
                break;
            }
            let joined = super::result(m);
            next.clear();
            if a == b {
                for &(t, c) in &runs {
                    if t == a && c >= 2 {
                        push(&mut next, joined, c / 2);
                        push(&mut next, t, c % 2);
                    } else {
                        push(&mut next, t, c);
                    }
                }
            } else {
                // A run of `b` gives its first token to the run of `a` before it (a != b, so
                // no run is on both sides of a join).
                let mut taken = 0;
                for (i, &(t, c)) in runs.iter().enumerate() {
                    let c = c - taken;
                    taken = 0;
                    if t == a && runs.get(i + 1).is_some_and(|&(u, _)| u == b) {
                        push(&mut next, t, c - 1);
                        push(&mut next, joined, 1);
                        taken = 1;
                    } else {
                        push(&mut next, t, c);
                    }
                }
            }
            if next.len() > MAX_RUNS {
                return None;
            }
            std::mem::swap(&mut runs, &mut next);
        }
        Some(runs)
    }
}

/// Appends `c` copies of `t` to `runs`, joining the last run if it is of `t`.
fn push(runs: &mut Vec<(Rank, usize)>, t: Rank, c: usize) {
    if c == 0 {
        return;
    }
    match runs.last_mut() {
        Some((last, n)) if *last == t => *n += c,
        _ => runs.push((t, c)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every run length up to 600 of one byte whose tokens nest (a, aa, aaaa, aaa = aa + a, ...),
    /// so that runs split and join across their edges, on a rank model and a merge list: the
    /// ids of `long`'s general path.
    #[test]
    fn runs_give_the_ids_of_the_long_path() {
        let mut v: Vec<(Rank, Vec<u8>)> = (0..256).map(|b| (b, vec![b as u8])).collect();
        for w in [
            &b"aa"[..],
            b"aaaa",
            b"aaa",
            b"aaaaaaaa",
            b"aaaaaaaaaaaaaaaa",
            b"aaaaaa",
        ] {
            v.push((v.len() as Rank, w.to_vec()));
        }
        let bpe = Bpe::from_ranks(v.clone()).unwrap();
        let mut merges: Vec<(Rank, Rank)> = vec![(97, 97), (256, 256), (256, 97)];
        v.truncate(256);
        v.push((256, b"aa".to_vec()));
        v.push((257, b"aaaa".to_vec()));
        v.push((258, b"aaa".to_vec()));
        merges.push((257, 256));
        v.push((259, b"aaaaaa".to_vec()));
        let listed = Bpe::from_merges(v, &merges).unwrap();
        for model in [&bpe, &listed] {
            assert!(model.monotone);
            for n in 1..600 {
                let piece = vec![b'a'; n];
                let mut runs = Vec::new();
                assert!(model.encode_uniform(&piece, &mut runs));
                let mut long = Vec::new();
                model.encode_long_monotone(&piece, &mut long);
                assert_eq!(runs, long, "{n} bytes");
                assert_eq!(model.count_uniform(&piece), Some(long.len()), "{n} bytes");
                assert_eq!(model.count_long_monotone(&piece), long.len(), "{n} bytes");
            }
        }
        assert!(is_uniform(b"aaaaaaaaaaaaaaaaaaa") && !is_uniform(b"aaaaaaaaaaaaaaaaaab"));
        assert!(!is_uniform(b"baaaaaaaaa") && is_uniform(b"z"));
        // Every length across the blocks of 64 and words of 8, one other byte at every place.
        for n in 1..200 {
            let mut piece = vec![b'\n'; n];
            assert!(is_uniform(&piece), "{n}");
            for at in 0..n {
                piece[at] = b'\r';
                assert_eq!(is_uniform(&piece), n == 1, "{n} {at}");
                piece[at] = b'\n';
            }
        }
    }
}
