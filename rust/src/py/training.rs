//! Training BPE: the `PieceCounter` class (pieces counted over texts, streams and files) and the
//! functions that learn merges from counts (`train_counters`, `train_from_counts`) or cut files
//! for counting in parallel (`file_cuts`).
//!
//! Continued training takes an `Encoder` as its `base`: its pieces are encoded with it first.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use super::utf8::{Text, Texts};
use super::{finish, to_py, Progress, PyEncoder};
use crate::bpe::encode::Encoder;
use crate::bpe::train::{train_from, Base, TieBreak, TrainOptions, Trained};
use crate::count::{merge_weighted, PieceCounter, PieceMap, SpecialSplitter};
use crate::error::Error;
use crate::text::pretok::Pretokenizer;
use crate::Rank;

pub(super) fn add(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPieceCounter>()?;
    m.add_function(wrap_pyfunction!(train_from_counts, m)?)?;
    m.add_function(wrap_pyfunction!(file_cuts, m)?)?;
    m.add_function(wrap_pyfunction!(train_counters, m)?)?;
    Ok(())
}

/// Counts distinct pieces over documents and files, then learns merges from the counts.
#[pyclass(module = "bytepair._core", name = "PieceCounter")]
struct PyPieceCounter {
    inner: Option<PieceCounter>,
}

impl PyPieceCounter {
    fn get(&mut self) -> PyResult<&mut PieceCounter> {
        self.inner.as_mut().ok_or_else(|| {
            to_py(Error::Invalid(
                "this counter was already used for training".into(),
            ))
        })
    }
}

#[pymethods]
impl PyPieceCounter {
    /// `unit_bytes` and `block_bytes` (how texts are cut for the workers and how files are
    /// read) change no result; tests make them small to exercise the cutting.
    #[new]
    /// `max_pieces` bounds the table (`PieceCounter::set_max_pieces`: the pieces counted least
    /// often are dropped when it is exceeded). `newline_cuts`: the caller vouches that the custom
    /// `pattern` can be cut after a newline followed by an ASCII letter or digit
    /// (`PieceCounter::set_newline_cuts`).
    #[pyo3(signature = (pattern, special_tokens, *, unit_bytes=None, block_bytes=None, max_pieces=None, newline_cuts=false))]
    fn new(
        pattern: Option<&str>,
        special_tokens: Vec<String>,
        unit_bytes: Option<usize>,
        block_bytes: Option<usize>,
        max_pieces: Option<usize>,
        newline_cuts: bool,
    ) -> PyResult<Self> {
        let pretok = Pretokenizer::new(pattern).map_err(to_py)?;
        let specials = SpecialSplitter::new(&special_tokens).map_err(to_py)?;
        let mut counter = PieceCounter::with_sizes(
            pretok,
            specials,
            unit_bytes.unwrap_or(crate::count::UNIT_BYTES),
            block_bytes.unwrap_or(crate::count::BLOCK_BYTES),
        );
        counter.set_max_pieces(max_pieces);
        counter.set_newline_cuts(newline_cuts);
        Ok(PyPieceCounter {
            inner: Some(counter),
        })
    }

    /// Counts the pieces of each document in `texts` (a list of str).
    fn add_texts(&mut self, py: Python<'_>, texts: Texts<'_>) -> PyResult<()> {
        let texts: &[Text] = &texts;
        let counter = self.get()?;
        py.detach(|| {
            let refs: Vec<&str> = texts.iter().map(|t| &**t).collect();
            counter.add_texts(&refs)
        })
        .map_err(to_py)
    }

    /// Streams a UTF-8 file; `progress(bytes_read)` is called now and then.
    #[pyo3(signature = (path, *, replace_errors=false, progress=None))]
    fn add_file(
        &mut self,
        py: Python<'_>,
        path: &str,
        replace_errors: bool,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<()> {
        let counter = self.get()?;
        let raised = Mutex::new(None);
        let result = py.detach(|| {
            let mut p = Progress {
                callback: progress.as_ref(),
                last: Instant::now(),
                every: Duration::from_millis(100),
                raised: &raised,
            };
            counter.add_file(path, replace_errors, &mut |n| p.tick(n, false))
        });
        finish(result, raised)
    }

    /// Counts the longest prefix of `data` that ends where the text may be cut (all of it when
    /// `last`); returns its length in bytes. The caller keeps the rest and appends more. For
    /// streams read in Python (compressed files): `source` and `offset` (of `data[0]` in the
    /// stream) name the place of bad UTF-8. A stream counts as one document: call
    /// `end_document()` after its last block.
    #[pyo3(signature = (data, *, last, source, offset, replace_errors=false))]
    fn add_bytes(
        &mut self,
        py: Python<'_>,
        data: &[u8],
        last: bool,
        source: &str,
        offset: u64,
        replace_errors: bool,
    ) -> PyResult<usize> {
        let counter = self.get()?;
        py.detach(|| counter.add_block(data, last, source, offset, replace_errors))
            .map_err(to_py)
    }

    /// Counts one more document (a stream fed with `add_bytes`).
    fn end_document(&mut self) -> PyResult<()> {
        self.get()?.stats.documents += 1;
        Ok(())
    }

    /// Words counted: runs of bytes between ASCII whitespace (and special tokens).
    #[getter]
    fn words(&mut self) -> PyResult<u64> {
        Ok(self.get()?.words())
    }

    #[getter]
    fn bytes_counted(&mut self) -> PyResult<u64> {
        Ok(self.get()?.stats.bytes)
    }

    #[getter]
    fn documents(&mut self) -> PyResult<u64> {
        Ok(self.get()?.stats.documents)
    }

    #[getter]
    fn replaced_bytes(&mut self) -> PyResult<u64> {
        Ok(self.get()?.stats.replaced)
    }

    /// What the cap on distinct pieces dropped: (prunes, table entries dropped, their
    /// occurrences, largest threshold); all 0 without `max_pieces` or under it.
    #[getter]
    fn pruned(&mut self) -> PyResult<(u64, u64, u64, u64)> {
        let p = self.get()?.pruned;
        Ok((p.prunes, p.pieces, p.occurrences, p.max_threshold))
    }

    /// The most table entries held at once (all workers' shards, before each prune): what the
    /// memory of counting follows. With `max_pieces` it stays at most `max_pieces` plus the
    /// piece occurrences of one call or file block, whatever the input's size.
    #[getter]
    fn peak_entries(&mut self) -> PyResult<usize> {
        Ok(self.get()?.peak_entries())
    }

    /// The distinct pieces and their counts, as a list of (bytes, count). Consumes the counter.
    fn take_counts<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let counter = self
            .inner
            .take()
            .ok_or_else(|| to_py(Error::Invalid("counter already used".into())))?;
        let map = py.detach(|| counter.finish());
        let items: Vec<(Bound<'py, PyBytes>, u64)> =
            map.iter().map(|(k, &v)| (PyBytes::new(py, k), v)).collect();
        PyList::new(py, items)
    }

    /// Counts the bytes `start..end` of a file, cut where `file_cuts` says it can be.
    #[pyo3(signature = (path, start, end, *, replace_errors=false))]
    fn add_file_range(
        &mut self,
        py: Python<'_>,
        path: &str,
        start: u64,
        end: u64,
        replace_errors: bool,
    ) -> PyResult<()> {
        let counter = self.get()?;
        py.detach(|| counter.add_file_range(path, start, end, replace_errors))
            .map_err(to_py)
    }

    /// The counts and statistics as one compact bytes object (for `add_packed` in another
    /// process). Consumes the counter.
    fn take_packed<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let counter = self
            .inner
            .take()
            .ok_or_else(|| to_py(Error::Invalid("counter already used".into())))?;
        let mut stats = counter.stats;
        stats.words = counter.words();
        let blob = py.detach(|| {
            let map = counter.finish();
            crate::io::packed::pack(map.iter().map(|(k, &v)| (&**k, v)), stats)
        });
        Ok(PyBytes::new(py, &blob))
    }

    /// Adds the counts and statistics of a `take_packed` bytes object to this counter's.
    fn add_packed(&mut self, py: Python<'_>, packed: &[u8]) -> PyResult<()> {
        let counter = self.get()?;
        py.detach(|| {
            let (stats, counts) = crate::io::packed::unpack(packed)?;
            counter.add_counts(counts, stats);
            Ok(())
        })
        .map_err(to_py)
    }

    /// Learns at most `merges` merges from the counts; consumes the counter. Returns
    /// (merges as (left id, right id), number of distinct pieces). See `train_counters` for
    /// `max_token_length` and `base`.
    #[pyo3(signature = (*, merges, min_frequency, progress=None, max_token_length=None, base=None, tie_break="lexicographic"))]
    #[allow(clippy::too_many_arguments)]
    fn train(
        &mut self,
        py: Python<'_>,
        merges: usize,
        min_frequency: u64,
        progress: Option<Py<PyAny>>,
        max_token_length: Option<usize>,
        base: Option<(Py<PyEncoder>, Rank)>,
        tie_break: &str,
    ) -> PyResult<(Vec<(Rank, Rank)>, usize)> {
        let tie = self::tie_break(tie_break)?;
        let counter = self
            .inner
            .take()
            .ok_or_else(|| to_py(Error::Invalid("counter already used".into())))?;
        let opts = TrainOptions {
            merges,
            min_frequency,
            max_token_length,
            tie_break: tie,
            count_chars: false,
        };
        let (learned, distinct, _, _) = train_maps(
            py,
            vec![(counter.finish(), 1)],
            1,
            &opts,
            base.as_ref(),
            progress.as_ref(),
        )?;
        Ok((learned, distinct))
    }
}

/// The tie rule named `name` (`bpe::train::TieBreak`).
fn tie_break(name: &str) -> PyResult<TieBreak> {
    TieBreak::parse(name).ok_or_else(|| {
        to_py(Error::Invalid(format!(
            "tie_break must be 'lexicographic', 'first' or 'hf', not {name:?}"
        )))
    })
}

/// The starting point of continued training: the encoder's ordinary tokens by id (holes for
/// the rest) up to `first_id`, where new ids start.
fn base_of(encoder: &Encoder, first_id: Rank) -> PyResult<Vec<Vec<u8>>> {
    if (first_id as usize) < encoder.bpe.id_bound() {
        return Err(to_py(Error::Invalid(format!(
            "new ids must start after the base tokenizer's largest id, not at {first_id}"
        ))));
    }
    Ok((0..first_id)
        .map(|id| {
            encoder
                .bpe
                .token_bytes(id)
                .map(<[u8]>::to_vec)
                .unwrap_or_default()
        })
        .collect())
}

/// Mixes the maps (each scaled by its numerator / `denominator`), trains, and returns
/// (merges, distinct pieces, per map: (bytes of its pieces, tokens of its pieces once encoded
/// with the result), both weighted by its own unscaled counts).
#[allow(clippy::type_complexity)]
fn train_maps(
    py: Python<'_>,
    maps: Vec<(PieceMap, u64)>,
    denominator: u64,
    opts: &TrainOptions,
    base: Option<&(Py<PyEncoder>, Rank)>,
    progress: Option<&Py<PyAny>>,
) -> PyResult<(Vec<(Rank, Rank)>, usize, Vec<(u64, u64)>, Vec<u64>)> {
    let base_vocab = match base {
        Some((enc, first_id)) => Some(base_of(&enc.get().inner, *first_id)?),
        None => None,
    };
    let raised = Mutex::new(None);
    let result = py.detach(|| {
        let single = maps.len() == 1 && maps[0].1 == denominator;
        let mixed;
        let total: &PieceMap = if single {
            &maps[0].0
        } else {
            let refs: Vec<(&PieceMap, u64)> = maps.iter().map(|(m, n)| (m, *n)).collect();
            mixed = merge_weighted(&refs, denominator)?;
            &mixed
        };
        let distinct = total.len();
        let mut p = Progress {
            callback: progress,
            last: Instant::now(),
            every: Duration::from_millis(100),
            raised: &raised,
        };
        let trained: Trained = match (&base_vocab, base) {
            (Some(vocab), Some((enc, _))) => {
                let enc: &Encoder = &enc.get().inner;
                let encode = |piece: &[u8], out: &mut Vec<Rank>| enc.bpe.encode_piece(piece, out);
                let start = Base {
                    vocab: vocab.clone(),
                    encode: &encode,
                };
                train_from(
                    Some(&start),
                    total.iter().map(|(k, &v)| (&**k, v)),
                    opts,
                    &mut |n| p.tick(n as u64, false),
                )?
            }
            _ => train_from(
                None,
                total.iter().map(|(k, &v)| (&**k, v)),
                opts,
                &mut |n| p.tick(n as u64, false),
            )?,
        };
        p.tick(trained.merges.len() as u64, true)?;
        // Per source: bytes and tokens of its ordinary text, from the final pieces.
        let sums = |map: &PieceMap, tokens: &dyn Fn(&[u8]) -> u64| -> (u64, u64) {
            map.iter().fold((0u64, 0u64), |(b, t), (k, &c)| {
                (
                    b.saturating_add(c.saturating_mul(k.len() as u64)),
                    t.saturating_add(c.saturating_mul(tokens(k))),
                )
            })
        };
        let per_source = if single {
            let mut lengths = trained.lengths.iter();
            let (b, t) = total.iter().fold((0u64, 0u64), |(b, t), (k, &c)| {
                let n = *lengths.next().unwrap_or(&0) as u64;
                (
                    b.saturating_add(c.saturating_mul(k.len() as u64)),
                    t.saturating_add(c.saturating_mul(n)),
                )
            });
            vec![(b, t)]
        } else {
            let lookup: rustc_hash::FxHashMap<&[u8], u32> = total
                .keys()
                .map(|k| &**k)
                .zip(trained.lengths.iter().copied())
                .collect();
            // A piece whose scaled count rounded to 0 is not in `total`: encode it on its own.
            let fallback = |k: &[u8]| -> u64 { k.len() as u64 };
            maps.iter()
                .map(|(m, _)| {
                    sums(m, &|k| {
                        lookup
                            .get(k)
                            .map(|&n| n as u64)
                            .unwrap_or_else(|| fallback(k))
                    })
                })
                .collect()
        };
        // Token counts of the training text, when no source is weighted (a mix's counts are
        // scaled, not the text's).
        let unweighted = maps.iter().all(|&(_, w)| w == denominator);
        let token_counts = if unweighted {
            trained.token_counts
        } else {
            Vec::new()
        };
        Ok((trained.merges, distinct, per_source, token_counts))
    });
    finish(result, raised)
}

/// Counts of several sources, each in its own counter, mixed with weights: source i's counts are
/// multiplied by `weights[i] / denominator` (rounded to the nearest integer, halves up) and
/// added up; then merges are learned from the sum. Consumes the counters. `max_token_length`:
/// pairs whose merged bytes would be longer are never merged. `base`: (encoder, first new id):
/// continue that tokenizer (pieces are first encoded with it; new merges get ids from
/// first_id on). Returns (merges, distinct pieces, per source (bytes, tokens) of its ordinary
/// text encoded with the result, by its own counts, and when no source is weighted the count of
/// each id in the text encoded with the result (empty otherwise)).
#[pyfunction]
#[pyo3(signature = (counters, weights, *, denominator, merges, min_frequency, max_token_length=None, base=None, progress=None, tie_break="lexicographic"))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn train_counters(
    py: Python<'_>,
    counters: Vec<Bound<'_, PyPieceCounter>>,
    weights: Vec<u64>,
    denominator: u64,
    merges: usize,
    min_frequency: u64,
    max_token_length: Option<usize>,
    base: Option<(Py<PyEncoder>, Rank)>,
    progress: Option<Py<PyAny>>,
    tie_break: &str,
) -> PyResult<(Vec<(Rank, Rank)>, usize, Vec<(u64, u64)>, Vec<u64>)> {
    let tie = self::tie_break(tie_break)?;
    if counters.len() != weights.len() || counters.is_empty() {
        return Err(to_py(Error::Invalid(
            "give one weight per counter, and at least one counter".into(),
        )));
    }
    let mut maps = Vec::with_capacity(counters.len());
    for (c, w) in counters.iter().zip(&weights) {
        let counter = c
            .borrow_mut()
            .inner
            .take()
            .ok_or_else(|| to_py(Error::Invalid("counter already used".into())))?;
        maps.push((counter, *w));
    }
    let maps = py.detach(|| {
        maps.into_iter()
            .map(|(c, w)| (c.finish(), w))
            .collect::<Vec<_>>()
    });
    let opts = TrainOptions {
        merges,
        min_frequency,
        max_token_length,
        tie_break: tie,
        count_chars: false,
    };
    train_maps(
        py,
        maps,
        denominator,
        &opts,
        base.as_ref(),
        progress.as_ref(),
    )
}

/// Learns merges from (piece bytes, count) pairs (see `train_counters` for the options).
#[pyfunction]
/// With `tie_break="first"`, the order of `counts` is the order of the pieces' first
/// occurrence in the text, and training starts from bytes.
#[pyo3(signature = (counts, *, merges, min_frequency, max_token_length=None, base=None, tie_break="lexicographic"))]
fn train_from_counts(
    py: Python<'_>,
    counts: Vec<(Vec<u8>, u64)>,
    merges: usize,
    min_frequency: u64,
    max_token_length: Option<usize>,
    base: Option<(Py<PyEncoder>, Rank)>,
    tie_break: &str,
) -> PyResult<Vec<(Rank, Rank)>> {
    let tie = self::tie_break(tie_break)?;
    if tie == TieBreak::First {
        if base.is_some() {
            return Err(to_py(Error::Invalid(
                "tie_break 'first' trains from bytes, not from a base tokenizer".into(),
            )));
        }
        // Keep the order given: a piece given again adds to its first place.
        let mut place: rustc_hash::FxHashMap<Vec<u8>, usize> = Default::default();
        let mut ordered: Vec<(Vec<u8>, u64)> = Vec::with_capacity(counts.len());
        for (k, v) in counts {
            match place.get(&k) {
                Some(&i) => {
                    ordered[i].1 = ordered[i].1.checked_add(v).ok_or_else(|| {
                        to_py(Error::Invalid("a piece's count exceeds 2^64".into()))
                    })?
                }
                None => {
                    place.insert(k.clone(), ordered.len());
                    ordered.push((k, v));
                }
            }
        }
        let opts = TrainOptions {
            merges,
            min_frequency,
            max_token_length,
            tie_break: tie,
            count_chars: false,
        };
        return py
            .detach(|| {
                train_from(
                    None,
                    ordered.iter().map(|(k, v)| (k.as_slice(), *v)),
                    &opts,
                    &mut |_| Ok(()),
                )
            })
            .map(|t| t.merges)
            .map_err(to_py);
    }
    let mut map = PieceMap::default();
    for (k, v) in counts {
        let e = map.entry(k.into_boxed_slice()).or_insert(0);
        *e = e
            .checked_add(v)
            .ok_or_else(|| to_py(Error::Invalid("a piece's count exceeds 2^64".into())))?;
    }
    let opts = TrainOptions {
        merges,
        min_frequency,
        max_token_length,
        tie_break: tie,
        count_chars: false,
    };
    train_maps(py, vec![(map, 1)], 1, &opts, base.as_ref(), None).map(|(m, _, _, _)| m)
}

/// For each target offset, the first offset at or after it where the file can be cut without
/// changing the counts (the file's size if there is none): see `count::file_cuts`.
#[pyfunction]
#[pyo3(signature = (path, pattern, special_tokens, targets))]
fn file_cuts(
    py: Python<'_>,
    path: &str,
    pattern: Option<&str>,
    special_tokens: Vec<String>,
    targets: Vec<u64>,
) -> PyResult<Vec<u64>> {
    let pretok = Pretokenizer::new(pattern).map_err(to_py)?;
    let specials = SpecialSplitter::new(&special_tokens).map_err(to_py)?;
    py.detach(|| crate::count::file_cuts(&pretok, &specials, path, &targets))
        .map_err(to_py)
}
