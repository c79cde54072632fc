//! Unigram training (Kudo 2018, as sentencepiece's trainer runs it): words counted after the
//! model's normalization; seed pieces (every character kept by `character_coverage`, and the
//! most frequent substrings of the distinct words, `seeds`); then rounds of EM (expected piece
//! counts from the forward-backward marginals of each word's lattice, scores set to
//! `digamma(count) - digamma(total)`, pieces expected fewer than 0.5 times dropped) and pruning
//! (each piece's loss: how much the corpus likelihood falls when its Viterbi uses go to its
//! best alternative split), keeping `shrinking_factor` of the pieces each round, until at most
//! 1.1 × the wanted size remain; then the characters and the best-scored pieces up to the size.
//!
//! The result does not depend on the thread count: expected counts are summed as fixed-point
//! integers (2^-24 of a count), whose sum does not depend on the order of the terms, and every
//! sort breaks ties by the pieces' text or their position.

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::model::{Kind, Unigram};
use super::seeds::seeds;
use crate::error::Result;
use crate::text::normalize::{Normalizer, SPACE_SYMBOL};
use crate::words::{WordSplit, Words};
use crate::Rank;

/// What each sentence (line) of the corpus becomes before counting: the model's normalizer,
/// then words cut before each `▁` (after it with `treat_whitespace_as_suffix`), user-defined
/// symbols cut out and not counted (they are always pieces of their own).
pub struct SpmSplit {
    pub normalizer: Normalizer,
}

impl WordSplit for SpmSplit {
    // a sentence is a line
    const CUT_AFTER: &'static [u8] = b"\n";
    type Scratch = Vec<u8>;

    fn for_each_word(&self, stretch: &str, buf: &mut Vec<u8>, f: &mut dyn FnMut(&str)) {
        let suffix = self.normalizer.spec.treat_whitespace_as_suffix;
        let user = &self.normalizer.user;
        let space = SPACE_SYMBOL.as_bytes();
        for line in stretch.split('\n') {
            let line = line.strip_suffix('\r').unwrap_or(line);
            if line.is_empty() {
                continue;
            }
            self.normalizer.normalize(line, buf, None);
            let s: &[u8] = buf;
            let mut emit = |w: &[u8]| {
                if !w.is_empty() {
                    // the normalizer writes whole characters
                    f(std::str::from_utf8(w).unwrap_or_default());
                }
            };
            let mut start = 0;
            let mut i = 0;
            while i < s.len() {
                if !user.is_empty() {
                    if let Some(n) = user.longest(&s[i..]) {
                        emit(&s[start..i]);
                        i += n;
                        start = i;
                        continue;
                    }
                }
                if s[i..].starts_with(space) {
                    if suffix {
                        emit(&s[start..i + space.len()]);
                        start = i + space.len();
                    } else {
                        emit(&s[start..i]);
                        start = i;
                    }
                    i += space.len();
                    continue;
                }
                i += crate::text::normalize::char_len(s[i]);
            }
            emit(&s[start..]);
        }
    }
}

/// Training options (sentencepiece's names where they exist).
#[derive(Clone, Debug)]
pub struct Options {
    /// normal pieces wanted (the model's size less its reserved pieces)
    pub pieces: usize,
    pub character_coverage: f64,
    /// in characters
    pub max_piece_length: usize,
    pub seed_size: usize,
    pub shrinking_factor: f64,
    pub sub_iterations: usize,
    pub treat_whitespace_as_suffix: bool,
    /// no piece holds two characters of different classes (both non-zero): scripts, numbers
    pub classes: FxHashMap<char, u32>,
    /// characters that are pieces only alone (`split_digits`)
    pub alone: Vec<char>,
    pub threads: usize,
}

/// A round of training, for the record.
#[derive(Clone, Debug)]
pub struct Round {
    pub pieces: usize,
    /// log-likelihood per word (the EM objective), after the round's EM
    pub objective: f64,
}

#[derive(Clone, Debug, Default)]
pub struct Trained {
    /// normal pieces, best score first (ties by text)
    pub pieces: Vec<(String, f32)>,
    pub required_chars: usize,
    pub seeds: usize,
    pub rounds: Vec<Round>,
}

/// Counts of each character over the words (weighted by word count), most frequent first
/// (ties by code point).
pub fn char_counts(words: &Words) -> Vec<(char, u64)> {
    let mut m: FxHashMap<char, u64> = FxHashMap::default();
    for (w, c) in words.iter() {
        for ch in w.chars() {
            *m.entry(ch).or_insert(0) += c;
        }
    }
    let mut v: Vec<(char, u64)> = m.into_iter().collect();
    v.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v
}

/// The most frequent characters (of `char_counts`) until they cover `coverage` of the text:
/// every piece is made of them.
pub fn required_chars(chars: &[(char, u64)], coverage: f64) -> Vec<(char, u64)> {
    let total: u64 = chars.iter().map(|c| c.1).sum();
    let mut covered = 0u64;
    let mut required = Vec::new();
    for &(ch, c) in chars {
        if total == 0 || covered as f64 / total as f64 >= coverage {
            break;
        }
        covered += c;
        required.push((ch, c));
    }
    required
}

const SCALE: f64 = (1u64 << 24) as f64;
/// Words per unit of parallel work.
const CHUNK: usize = 512;
/// Pieces expected fewer times than this are dropped (sentencepiece's threshold).
const MIN_EXPECTED: f64 = 0.5;

#[derive(Clone, Debug)]
struct Piece {
    text: String,
    score: f64,
}

fn model(pieces: &[Piece]) -> Unigram {
    let mut list: Vec<(&str, f32, Kind)> = pieces
        .iter()
        .map(|p| (p.text.as_str(), p.score as f32, Kind::Normal))
        .collect();
    list.push(("", 0.0, Kind::Reserved));
    Unigram::new(&list, pieces.len() as Rank)
}

fn log_add(a: f64, b: f64) -> f64 {
    if a == f64::NEG_INFINITY {
        return b;
    }
    if b == f64::NEG_INFINITY {
        return a;
    }
    let (hi, lo) = if a > b { (a, b) } else { (b, a) };
    hi + (lo - hi).exp().ln_1p()
}

/// Digamma, by recurrence up to 7 then the asymptotic series.
fn digamma(mut x: f64) -> f64 {
    let mut r = 0.0;
    while x < 7.0 {
        r -= 1.0 / x;
        x += 1.0;
    }
    x -= 0.5;
    let xx = 1.0 / x;
    let xx2 = xx * xx;
    let xx4 = xx2 * xx2;
    r + x.ln() + (1.0 / 24.0) * xx2 - (7.0 / 960.0) * xx4 + (31.0 / 8064.0) * xx4 * xx2
        - (127.0 / 30720.0) * xx4 * xx4
}

/// Sums `f(word, count, acc)` over the words on `threads` threads into per-thread vectors of
/// `n` integers, then adds them (integers: the result does not depend on the split).
fn sum_over_words(
    words: &Words,
    n: usize,
    threads: usize,
    f: impl Fn(&str, u64, &mut [u64], &mut Scratch) -> i128 + Sync,
) -> Result<(Vec<u64>, i128)> {
    let chunks = words.len().div_ceil(CHUNK);
    let run_chunk = |k: usize, acc: &mut (Vec<u64>, i128, Scratch)| {
        for i in k * CHUNK..((k + 1) * CHUNK).min(words.len()) {
            let (w, c) = words.get(i);
            acc.1 += f(w, c, &mut acc.0, &mut acc.2);
        }
    };
    let init = || (vec![0u64; n], 0i128, Scratch::default());
    crate::threads::run(threads, || {
        if threads <= 1 {
            let mut acc = init();
            (0..chunks).for_each(|k| run_chunk(k, &mut acc));
            (acc.0, acc.1)
        } else {
            let per = chunks.div_ceil(threads * 4).max(1);
            (0..chunks)
                .into_par_iter()
                .with_min_len(per)
                .fold(init, |mut acc, k| {
                    run_chunk(k, &mut acc);
                    acc
                })
                .map(|a| (a.0, a.1))
                .reduce(
                    || (vec![0u64; n], 0),
                    |mut a, b| {
                        for (x, y) in a.0.iter_mut().zip(&b.0) {
                            *x += y;
                        }
                        (a.0, a.1 + b.1)
                    },
                )
        }
    })
}

#[derive(Default)]
struct Scratch {
    edges: Vec<(u32, u32, Rank, f32)>,
    alpha: Vec<f64>,
    beta: Vec<f64>,
    path: Vec<(usize, Rank)>,
}

/// E step: expected counts of each piece (fixed point) and the objective (sum of word counts ×
/// log marginal likelihood, fixed point).
fn expect(words: &Words, m: &Unigram, n: usize, threads: usize) -> Result<(Vec<u64>, i128)> {
    sum_over_words(words, n + 1, threads, |w, count, acc, s| {
        let b = w.as_bytes();
        s.edges.clear();
        m.for_each_edge(b, |st, en, id, score| {
            s.edges.push((st as u32, en as u32, id, score))
        });
        let len = b.len();
        s.alpha.clear();
        s.alpha.resize(len + 1, f64::NEG_INFINITY);
        s.beta.clear();
        s.beta.resize(len + 1, f64::NEG_INFINITY);
        s.alpha[0] = 0.0;
        for &(st, en, _, sc) in &s.edges {
            let v = s.alpha[st as usize] + f64::from(sc);
            s.alpha[en as usize] = log_add(s.alpha[en as usize], v);
        }
        s.beta[len] = 0.0;
        for &(st, en, _, sc) in s.edges.iter().rev() {
            let v = s.beta[en as usize] + f64::from(sc);
            s.beta[st as usize] = log_add(s.beta[st as usize], v);
        }
        let z = s.alpha[len];
        let c = count as f64;
        for &(st, en, id, sc) in &s.edges {
            let p = (s.alpha[st as usize] + f64::from(sc) + s.beta[en as usize] - z).exp();
            acc[id as usize] += (p * c * SCALE).round() as u64;
        }
        (z * c * 65536.0).round() as i128
    })
}

/// M step: pieces expected at least 0.5 times, scored `digamma(count) - digamma(total)`.
fn maximize(pieces: &[Piece], expected: &[u64]) -> Vec<Piece> {
    let kept: Vec<(usize, f64)> = (0..pieces.len())
        .map(|i| (i, expected[i] as f64 / SCALE))
        .filter(|&(_, e)| e >= MIN_EXPECTED)
        .collect();
    let total: f64 = kept.iter().map(|k| k.1).sum();
    let log_total = digamma(total);
    kept.into_iter()
        .map(|(i, e)| Piece {
            text: pieces[i].text.clone(),
            score: digamma(e) - log_total,
        })
        .collect()
}

/// The best split of `s` not using piece `own` whole: (score, ids), or None when there is none.
fn alternative(
    m: &Unigram,
    s: &[u8],
    own: Rank,
    scratch: &mut Scratch,
) -> Option<(f64, Vec<Rank>)> {
    let len = s.len();
    let best = &mut scratch.alpha;
    best.clear();
    best.resize(len + 1, f64::NEG_INFINITY);
    best[0] = 0.0;
    let back = &mut scratch.path;
    back.clear();
    back.resize(len + 1, (usize::MAX, 0));
    m.for_each_edge(s, |st, en, id, score| {
        if id == own && st == 0 && en == len {
            return;
        }
        let v = best[st] + f64::from(score);
        if best[st] > f64::NEG_INFINITY && v > best[en] {
            best[en] = v;
            back[en] = (st, id);
        }
    });
    if best[len] == f64::NEG_INFINITY {
        return None;
    }
    let mut ids = Vec::new();
    let mut at = len;
    while at > 0 {
        let (st, id) = back[at];
        ids.push(id);
        at = st;
    }
    ids.reverse();
    Some((best[len], ids))
}

/// One pruning step: the pieces left after dropping those whose removal costs least.
fn prune(words: &Words, pieces: Vec<Piece>, keep: usize, threads: usize) -> Result<Vec<Piece>> {
    let n = pieces.len();
    let m = model(&pieces);
    // Viterbi uses of each piece, weighted by word count (the unknown piece at n)
    let (freq, _) = sum_over_words(words, n + 1, threads, |w, count, acc, s| {
        s.path.clear();
        // a word alone: the search from 0, not `encode`, whose word cache would only fill
        m.encode_from(w.as_bytes(), 0.0, &mut s.path);
        for &(_, id) in &s.path {
            acc[id as usize] += count;
        }
        0
    })?;
    // all Viterbi uses (tokens)
    let sum: f64 = freq.iter().map(|&f| f as f64).sum();
    // For each piece: None (drop: its own text splits better without it), Some(empty) (keep:
    // no other split), or the ids of its best other split.
    let alt = |i: usize, s: &mut Scratch| -> Option<Vec<Rank>> {
        let p = &pieces[i];
        match alternative(&m, p.text.as_bytes(), i as Rank, s) {
            None => Some(Vec::new()),
            Some((score, _)) if score > f64::from(p.score as f32) => None,
            Some((_, ids)) => Some(ids),
        }
    };
    let alts: Vec<Option<Vec<Rank>>> = crate::threads::run(threads, || {
        if threads <= 1 {
            let mut s = Scratch::default();
            (0..n).map(|i| alt(i, &mut s)).collect()
        } else {
            (0..n)
                .into_par_iter()
                .map_init(Scratch::default, |s, i| alt(i, s))
                .collect()
        }
    })?;
    let mut out = Vec::with_capacity(keep);
    let mut candidates: Vec<(f64, usize)> = Vec::new();
    for i in 0..n {
        let f = freq[i] as f64;
        match &alts[i] {
            _ if freq[i] == 0 => {}
            None => {}
            Some(a) if a.is_empty() => out.push(pieces[i].clone()),
            Some(a) => {
                // the piece's log probability, and its alternatives' once its uses are theirs
                let logprob_sp = f.ln() - sum.ln();
                let logsum_alt = (sum + f * (a.len() as f64 - 1.0)).ln();
                let logprob_alt: f64 = a
                    .iter()
                    .map(|&j| (freq[j as usize] as f64 + f).ln() - logsum_alt)
                    .sum();
                // weighted by how often it is used
                let loss = f * (logprob_sp - logprob_alt);
                candidates.push((loss, i));
            }
        }
    }
    candidates.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    for (_, i) in candidates {
        if out.len() >= keep {
            break;
        }
        out.push(pieces[i].clone());
    }
    Ok(out)
}

/// Trains on counted words. `progress(stage, pieces)` is told of each step.
pub fn train(
    words: &Words,
    opts: &Options,
    progress: &mut dyn FnMut(&str, usize) -> Result<()>,
) -> Result<Trained> {
    let threads = opts.threads.max(1);
    // characters: those covering `character_coverage` of the text are required (always
    // pieces); the rest are rare, in no seed
    let required = required_chars(&char_counts(words), opts.character_coverage);
    let ids: FxHashMap<char, u32> = required
        .iter()
        .enumerate()
        .map(|(i, &(ch, _))| (ch, i as u32 + 1))
        .collect();
    let sym_char: Vec<char> = std::iter::once('\0')
        .chain(required.iter().map(|r| r.0))
        .collect();
    // the words as symbol ids, each ended by 0; a rare character is 0 too
    let mut text: Vec<u32> = Vec::new();
    let mut ends: Vec<(usize, u64)> = Vec::with_capacity(words.len());
    for (w, c) in words.iter() {
        text.extend(w.chars().map(|ch| ids.get(&ch).copied().unwrap_or(0)));
        ends.push((text.len(), c));
        text.push(0);
    }
    progress("seeds", 0)?;
    let space = ids.get(&'\u{2581}').copied();
    let class: Vec<u32> = sym_char
        .iter()
        .map(|ch| opts.classes.get(ch).copied().unwrap_or(0))
        .collect();
    let alone: Vec<bool> = sym_char.iter().map(|ch| opts.alone.contains(ch)).collect();
    let suffix = opts.treat_whitespace_as_suffix;
    let valid = |s: &[u32]| {
        let last = s.len() - 1;
        let mut prev = 0u32;
        for (i, &c) in s.iter().enumerate() {
            if Some(c) == space {
                if (!suffix && i != 0) || (suffix && i != last) {
                    return false;
                }
                continue;
            }
            if alone[c as usize] {
                return false; // s has two or more characters
            }
            let k = class[c as usize];
            if k != 0 {
                if prev != 0 && prev != k {
                    return false;
                }
                prev = k;
            }
        }
        true
    };
    let keep = opts.seed_size.saturating_sub(required.len());
    let found = seeds(
        &text,
        &ends,
        sym_char.len() as u32 - 1,
        opts.max_piece_length,
        keep,
        valid,
        threads,
    );
    drop(text);
    drop(ends);
    let mut pieces: Vec<Piece> = Vec::with_capacity(required.len() + found.len());
    let mut sum = 0f64;
    for &(ch, c) in &required {
        pieces.push(Piece {
            text: ch.to_string(),
            score: c as f64,
        });
        sum += c as f64;
    }
    for (score, _, syms) in &found {
        pieces.push(Piece {
            text: syms.iter().map(|&s| sym_char[s as usize]).collect(),
            score: *score as f64,
        });
        sum += *score as f64;
    }
    drop(found);
    let log_sum = sum.ln();
    for p in &mut pieces {
        p.score = p.score.ln() - log_sum;
    }
    let mut out = Trained {
        required_chars: required.len(),
        seeds: pieces.len(),
        ..Default::default()
    };
    let desired = (opts.pieces as f64 * 1.1) as usize;
    let total_words: f64 = words.iter().map(|(_, c)| c as f64).sum::<f64>().max(1.0);
    loop {
        let mut objective = 0.0;
        for _ in 0..opts.sub_iterations.max(1) {
            progress("em", pieces.len())?;
            let m = model(&pieces);
            let (expected, obj) = expect(words, &m, pieces.len(), threads)?;
            objective = obj as f64 / 65536.0 / total_words;
            pieces = maximize(&pieces, &expected);
        }
        out.rounds.push(Round {
            pieces: pieces.len(),
            objective,
        });
        if pieces.len() <= desired {
            break;
        }
        progress("prune", pieces.len())?;
        let keep = desired.max((opts.shrinking_factor * pieces.len() as f64) as usize);
        let before = pieces.len();
        pieces = prune(words, pieces, keep, threads)?;
        if pieces.len() >= before {
            break; // nothing left to prune
        }
    }
    // Final: the required characters (a missing one just below the lowest score), then the
    // best-scored pieces up to the size.
    let min_score = pieces.iter().map(|p| p.score).fold(f64::INFINITY, f64::min);
    let min_score = if min_score.is_finite() {
        min_score
    } else {
        0.0
    };
    let by_text: FxHashMap<&str, f64> = pieces.iter().map(|p| (p.text.as_str(), p.score)).collect();
    let mut chosen: FxHashMap<String, f64> = FxHashMap::default();
    let mut penalty = 0.0;
    for &(ch, _) in &required {
        let t = ch.to_string();
        let score = match by_text.get(t.as_str()) {
            Some(&s) => s,
            None => {
                penalty += 1e-4;
                min_score - penalty
            }
        };
        chosen.insert(t, score);
    }
    let mut sorted: Vec<&Piece> = pieces.iter().collect();
    sorted.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.text.cmp(&b.text))
    });
    for p in sorted {
        if chosen.len() >= opts.pieces {
            break;
        }
        chosen.entry(p.text.clone()).or_insert(p.score);
    }
    let mut fin: Vec<(String, f32)> = chosen.into_iter().map(|(t, s)| (t, s as f32)).collect();
    fin.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out.pieces = fin;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digamma_matches_known_values() {
        // psi(1) = -gamma, psi(0.5) = -gamma - 2 ln 2, psi(x + 1) = psi(x) + 1 / x
        let gamma = 0.577_215_664_901_532_9;
        assert!((digamma(1.0) + gamma).abs() < 1e-10);
        assert!((digamma(0.5) + gamma + 2.0 * 2f64.ln()).abs() < 1e-10);
        for x in [0.3, 2.5, 10.0, 1234.5] {
            assert!((digamma(x + 1.0) - digamma(x) - 1.0 / x).abs() < 1e-10);
        }
    }

    #[test]
    fn log_add_is_log_of_sum() {
        for (a, b) in [(0.0, 0.0), (-1.0, -30.0), (-700.0, -2.0)] {
            let want = (f64::exp(a) + f64::exp(b)).ln();
            assert!((log_add(a, b) - want).abs() < 1e-12);
        }
        assert_eq!(log_add(f64::NEG_INFINITY, -3.0), -3.0);
    }
}
