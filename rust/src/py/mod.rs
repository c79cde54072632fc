//! The PyO3 bindings: the only file that knows about Python.
//!
//! Python owns the policy (argument checks, special-token rules, file formats); these classes
//! are the mechanism. Every call that does real work releases the GIL. Errors become the
//! exception classes of `bytepair.errors` (all `ValueError` subclasses) or `OSError`s.

use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyPermissionError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyByteArray, PyBytes, PyList, PyMemoryView};
use rayon::prelude::*;

use crate::bpe::encode::{Bpe, Encoder, Parallel};
use crate::bpe::flat::{Parts, Separator, Width};
use crate::bpe::train::{train_from, Base, TrainOptions, Trained};
use crate::count::{merge_weighted, PieceCounter, PieceMap, SpecialSplitter};
use crate::error::Error;
use crate::io::ranges::read_ranges;
use crate::text::pretok::{Pretokenizer, PRESETS};
use crate::Rank;

/// Raises `bytepair.errors.<name>(msg)`, or ValueError if that module cannot be imported.
fn bytepair_error(name: &str, msg: String) -> PyErr {
    Python::attach(|py| {
        let class = py.import("bytepair.errors").and_then(|m| m.getattr(name));
        match class {
            Ok(cls) => match cls.call1((msg.clone(),)) {
                Ok(exc) => PyErr::from_value(exc),
                Err(e) => e,
            },
            Err(_) => PyValueError::new_err(msg),
        }
    })
}

fn to_py(err: Error) -> PyErr {
    let msg = err.to_string();
    match err {
        Error::Pattern(_) => bytepair_error("PatternError", msg),
        Error::Utf8 { .. } => bytepair_error("CorpusError", msg),
        Error::Io { error, .. } => match error.kind() {
            std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(msg),
            std::io::ErrorKind::PermissionDenied => PyPermissionError::new_err(msg),
            _ => PyOSError::new_err(msg),
        },
        Error::UnknownId(_) => bytepair_error("UnknownTokenError", msg),
        Error::Vocab(_) => bytepair_error("VocabError", msg),
        Error::Invalid(_) | Error::Interrupted => bytepair_error("BytepairError", msg),
    }
}

/// Calls a Python progress callback at most every `every`, from a thread without the GIL.
/// An exception raised by the callback (or a pending Ctrl-C) stops the work and is kept to be
/// re-raised once the GIL is back.
struct Progress<'a> {
    callback: Option<&'a Py<PyAny>>,
    last: Instant,
    every: Duration,
    raised: &'a Mutex<Option<PyErr>>,
}

impl Progress<'_> {
    fn tick(&mut self, value: u64, force: bool) -> crate::error::Result<()> {
        if !force && self.last.elapsed() < self.every {
            return Ok(());
        }
        self.last = Instant::now();
        Python::attach(|py| {
            let result = match self.callback {
                Some(cb) => cb.call1(py, (value,)).map(drop),
                None => py.check_signals(),
            };
            result.map_err(|e| {
                *self.raised.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                Error::Interrupted
            })
        })
    }
}

fn finish<T>(result: crate::error::Result<T>, raised: Mutex<Option<PyErr>>) -> PyResult<T> {
    match result {
        Ok(v) => Ok(v),
        Err(Error::Interrupted) => match raised.into_inner().unwrap_or_else(|p| p.into_inner()) {
            Some(e) => Err(e),
            None => Err(to_py(Error::Interrupted)),
        },
        Err(e) => Err(to_py(e)),
    }
}

/// The preset patterns as {name: regex}.
#[pyfunction]
fn preset_patterns() -> Vec<(&'static str, &'static str)> {
    PRESETS.to_vec()
}

/// Splits text into pieces with a pattern (for inspection and tests).
#[pyfunction]
#[pyo3(signature = (text, pattern))]
fn split_pieces(py: Python<'_>, text: PyBackedStr, pattern: Option<&str>) -> PyResult<Vec<String>> {
    let pretok = Pretokenizer::new(pattern).map_err(to_py)?;
    py.detach(|| {
        let mut out = Vec::new();
        pretok
            .for_each_piece(&text, |p| out.push(p.to_owned()))
            .map(|_| out)
    })
    .map_err(to_py)
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
    #[pyo3(signature = (pattern, special_tokens, *, unit_bytes=None, block_bytes=None))]
    fn new(
        pattern: Option<&str>,
        special_tokens: Vec<String>,
        unit_bytes: Option<usize>,
        block_bytes: Option<usize>,
    ) -> PyResult<Self> {
        let pretok = Pretokenizer::new(pattern).map_err(to_py)?;
        let specials = SpecialSplitter::new(&special_tokens).map_err(to_py)?;
        let counter = PieceCounter::with_sizes(
            pretok,
            specials,
            unit_bytes.unwrap_or(crate::count::UNIT_BYTES),
            block_bytes.unwrap_or(crate::count::BLOCK_BYTES),
        );
        Ok(PyPieceCounter {
            inner: Some(counter),
        })
    }

    /// Counts the pieces of each document in `texts` (a list of str).
    fn add_texts(&mut self, py: Python<'_>, texts: Vec<PyBackedStr>) -> PyResult<()> {
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
    #[pyo3(signature = (*, merges, min_frequency, progress=None, max_token_length=None, base=None))]
    fn train(
        &mut self,
        py: Python<'_>,
        merges: usize,
        min_frequency: u64,
        progress: Option<Py<PyAny>>,
        max_token_length: Option<usize>,
        base: Option<(Py<PyEncoder>, Rank)>,
    ) -> PyResult<(Vec<(Rank, Rank)>, usize)> {
        let counter = self
            .inner
            .take()
            .ok_or_else(|| to_py(Error::Invalid("counter already used".into())))?;
        let opts = TrainOptions {
            merges,
            min_frequency,
            max_token_length,
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
#[pyo3(signature = (counters, weights, *, denominator, merges, min_frequency, max_token_length=None, base=None, progress=None))]
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
) -> PyResult<(Vec<(Rank, Rank)>, usize, Vec<(u64, u64)>, Vec<u64>)> {
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
#[pyo3(signature = (counts, *, merges, min_frequency, max_token_length=None, base=None))]
fn train_from_counts(
    py: Python<'_>,
    counts: Vec<(Vec<u8>, u64)>,
    merges: usize,
    min_frequency: u64,
    max_token_length: Option<usize>,
    base: Option<(Py<PyEncoder>, Rank)>,
) -> PyResult<Vec<(Rank, Rank)>> {
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

/// A tokenizer's encoding machinery: vocabulary, merges, pattern and special tokens.
#[pyclass(module = "bytepair._core", frozen, name = "Encoder")]
struct PyEncoder {
    inner: Encoder,
    /// One Python int per id, each made the first time the id is returned (null until then;
    /// each holds one reference, released on drop): a returned list holds references to these
    /// instead of a new int object per token. Building the list is then an increment per id,
    /// where allocating the ints cost as much as encoding English prose. Made on first use
    /// rather than all at once, the ints of the ids a text uses sit close together in memory
    /// instead of spread over all 200 k of them (o200k): the increments then miss the CPU
    /// caches less (cold o200k multilingual about 12 % faster).
    ints: Box<[AtomicPtr<pyo3::ffi::PyObject>]>,
}

impl Drop for PyEncoder {
    fn drop(&mut self) {
        Python::attach(|_py| {
            for p in self.ints.iter() {
                let p = p.swap(std::ptr::null_mut(), Ordering::Relaxed);
                if !p.is_null() {
                    // SAFETY: `p` is the reference this encoder took when it made the int.
                    unsafe { pyo3::ffi::Py_DecRef(p) };
                }
            }
        });
    }
}

impl PyEncoder {
    fn build(
        bpe: Bpe,
        pretok: Pretokenizer,
        special_tokens: Vec<(String, Rank)>,
    ) -> PyResult<Self> {
        // The cached ints cover the ordinary ids and the special ids just after them; a
        // special id far away (up to 2^32 - 1 in a file) gets a new int each time instead of
        // a table sized by it: memory follows the number of tokens, not the largest id.
        let dense = bpe.id_bound() + special_tokens.len() + 4096;
        let id_bound = special_tokens
            .iter()
            .map(|(_, id)| *id as usize + 1)
            .filter(|&end| end <= dense)
            .fold(bpe.id_bound(), usize::max);
        let inner = Encoder::new(bpe, pretok, special_tokens).map_err(to_py)?;
        Ok(PyEncoder {
            inner,
            ints: (0..id_bound).map(|_| AtomicPtr::default()).collect(),
        })
    }

    /// The int of `id`, made and kept on first use (`id` has a slot in `ints`).
    #[cold]
    fn make_int(&self, py: Python<'_>, id: Rank) -> *mut pyo3::ffi::PyObject {
        let Ok(int) = id.into_pyobject(py);
        let p = int.into_any().unbind().into_ptr();
        match self.ints[id as usize].compare_exchange(
            std::ptr::null_mut(),
            p,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => p,
            Err(theirs) => {
                // SAFETY: `p` is the reference made above, not stored anywhere.
                unsafe { pyo3::ffi::Py_DecRef(p) };
                theirs
            }
        }
    }

    fn id_list<'py>(&self, py: Python<'py>, ids: &[Rank]) -> PyResult<Bound<'py, PyList>> {
        PyList::new(
            py,
            ids.iter().map(|&id| match self.ints.get(id as usize) {
                Some(slot) => {
                    let mut p = slot.load(Ordering::Acquire);
                    if p.is_null() {
                        p = self.make_int(py, id);
                    }
                    // SAFETY: `p` is a live int this encoder holds a reference to.
                    unsafe { Bound::from_borrowed_ptr(py, p) }
                }
                None => {
                    let Ok(int) = id.into_pyobject(py);
                    int.into_any()
                }
            }),
        )
    }

    /// `encode_batch` on several threads. Making the Python lists needs the interpreter, so
    /// it cannot be shared between threads; done after the encoding it was the serial part that
    /// kept two threads from doubling the speed. Here the pool encodes while this thread turns
    /// each finished text into its list (waiting with the GIL released).
    fn encode_batch_pipelined<'py>(
        &self,
        py: Python<'py>,
        texts: &[PyBackedStr],
        allowed: &[Rank],
        par: Parallel,
    ) -> PyResult<Bound<'py, PyList>> {
        let refs: Vec<&str> = texts.iter().map(|t| &**t).collect();
        let matcher = self.inner.matcher(allowed).map_err(to_py)?;
        let m = matcher.as_deref();
        let work = self.inner.work(&refs, par);
        let pool = crate::threads::pool(par.threads).map_err(to_py)?;
        let mut left = vec![0usize; texts.len()]; // unfinished pieces of work per text
        for &(i, _) in &work {
            left[i] += 1;
        }
        let mut parts: Vec<Option<Vec<Rank>>> = vec![None; work.len()];
        let out = PyList::new(py, (0..texts.len()).map(|_| py.None()))?;
        let (tx, rx) = std::sync::mpsc::channel::<(usize, crate::error::Result<Vec<Rank>>)>();
        let rx = Mutex::new(rx);
        let mut failed: Option<PyErr> = None;
        std::thread::scope(|scope| -> PyResult<()> {
            let (work, inner) = (&work, &self.inner);
            scope.spawn(move || {
                pool.install(|| {
                    work.par_iter()
                        .enumerate()
                        .for_each_with(tx, |tx, (w, &(_, chunk))| {
                            let mut ids = Vec::with_capacity(chunk.len() / 4);
                            let result = inner.encode_chunk(chunk, m, &mut ids).map(|_| ids);
                            let _ = tx.send((w, result));
                        })
                })
            });
            while let Ok((w, result)) =
                py.detach(|| rx.lock().unwrap_or_else(|p| p.into_inner()).recv())
            {
                match result {
                    Err(e) => failed = failed.take().or(Some(to_py(e))),
                    Ok(ids) => parts[w] = Some(ids),
                }
                let i = work[w].0;
                left[i] -= 1;
                if left[i] > 0 || failed.is_some() {
                    continue;
                }
                // All of text i is encoded: its pieces of work are consecutive in `work`.
                let first = w + 1
                    - work[..=w]
                        .iter()
                        .rev()
                        .take_while(|&&(j, _)| j == i)
                        .count();
                let last = work[w..].iter().take_while(|&&(j, _)| j == i).count() + w;
                let mut ids = parts[first].take().unwrap_or_default();
                for part in &mut parts[first + 1..last] {
                    ids.extend_from_slice(&part.take().unwrap_or_default());
                }
                out.set_item(i, self.id_list(py, &ids)?)?;
            }
            Ok(())
        })?;
        match failed {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    fn id_lists<'py>(&self, py: Python<'py>, lists: &[Vec<Rank>]) -> PyResult<Bound<'py, PyList>> {
        let lists = lists
            .iter()
            .map(|ids| self.id_list(py, ids))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, lists)
    }
}

/// Threads and chunking for one call: `None` threads means all cores.
fn parallel(num_threads: Option<usize>, chunk_bytes: Option<usize>) -> PyResult<Parallel> {
    let threads = match num_threads {
        None => crate::threads::default_threads(),
        Some(0) => {
            return Err(to_py(Error::Invalid(
                "num_threads must be at least 1".into(),
            )))
        }
        // More threads than cores are never faster and the ids do not depend on the number:
        // cap, so that no argument starts thousands of OS threads.
        Some(n) => n.min(crate::threads::default_threads()),
    };
    if chunk_bytes == Some(0) {
        return Err(to_py(Error::Invalid(
            "chunk_bytes must be at least 1".into(),
        )));
    }
    Ok(Parallel {
        threads,
        chunk_bytes,
    })
}

/// A batch of less text than this is encoded on the calling thread whatever `num_threads`
/// says (unless `chunk_bytes` asks for chunks): waking the pool, and for lists a second thread,
/// cost more than the threads saved. `encode_batch` of o200k on lines of the bench's
/// multilingual text, 2-core machine, one thread / two, in us: 1 KiB
/// 31 / 115, 4 KiB 82 / 210, 16 KiB 478 / 589, 64 KiB 2,446 / 2,480, 256 KiB 12,092 / 10,944.
const SMALL_BATCH_BYTES: usize = 64 << 10;

/// `parallel`, for a batch of `texts`.
fn parallel_batch(
    num_threads: Option<usize>,
    chunk_bytes: Option<usize>,
    texts: &[PyBackedStr],
) -> PyResult<Parallel> {
    let par = parallel(num_threads, chunk_bytes)?;
    let small = || texts.iter().map(|t| t.len()).sum::<usize>() < SMALL_BATCH_BYTES;
    Ok(if par.threads > 1 && chunk_bytes.is_none() && small() {
        Parallel::SERIAL
    } else {
        par
    })
}

#[pymethods]
impl PyEncoder {
    /// `vocab`: (id, bytes) pairs. `merges`: (left id, right id) in priority order, or None for
    /// tiktoken's rank semantics. `special_tokens`: (text, id) pairs.
    #[new]
    #[pyo3(signature = (vocab, merges, pattern, special_tokens))]
    fn new(
        py: Python<'_>,
        vocab: Vec<(Rank, Vec<u8>)>,
        merges: Option<Vec<(Rank, Rank)>>,
        pattern: Option<&str>,
        special_tokens: Vec<(String, Rank)>,
    ) -> PyResult<Self> {
        let pretok = Pretokenizer::new(pattern).map_err(to_py)?;
        let bpe = py
            .detach(|| match &merges {
                Some(m) => Bpe::from_merges(vocab, m),
                None => Bpe::from_ranks(vocab),
            })
            .map_err(to_py)?;
        Self::build(bpe, pretok, special_tokens)
    }

    /// The encoder of a tiktoken rank file's content (tiktoken's rank semantics), or None when
    /// the content is not in the strict common form (`ranks::parse`): then the Python reader
    /// parses it, and names what is wrong if anything is.
    #[staticmethod]
    fn from_tiktoken(
        py: Python<'_>,
        data: &[u8],
        pattern: Option<&str>,
        special_tokens: Vec<(String, Rank)>,
    ) -> PyResult<Option<Self>> {
        let pretok = Pretokenizer::new(pattern).map_err(to_py)?;
        let bpe = py
            .detach(|| {
                crate::bpe::ranks::parse(data)
                    .map(Bpe::from_ranks)
                    .transpose()
            })
            .map_err(to_py)?;
        bpe.map(|bpe| Self::build(bpe, pretok, special_tokens))
            .transpose()
    }

    /// The ordinary tokens as (id, bytes), by id.
    fn vocab<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let bpe = &self.inner.bpe;
        let items = (0..bpe.id_bound() as Rank)
            .filter_map(|id| bpe.token_bytes(id).ok().map(|b| (id, PyBytes::new(py, b))))
            .collect::<Vec<_>>();
        PyList::new(py, items)
    }

    /// `chunk_bytes` (private, for tests) cuts the text into chunks of about that size even
    /// with one thread; it changes no result.
    #[pyo3(signature = (text, *, num_threads=Some(1), chunk_bytes=None),
           text_signature = "(self, /, text, *, num_threads=1, chunk_bytes=None)")]
    fn encode_ordinary<'py>(
        &self,
        py: Python<'py>,
        text: PyBackedStr,
        num_threads: Option<usize>,
        chunk_bytes: Option<usize>,
    ) -> PyResult<Bound<'py, PyList>> {
        self.encode(py, text, Vec::new(), num_threads, chunk_bytes)
    }

    /// Encodes with the special tokens whose ids are in `allowed` recognised.
    #[pyo3(signature = (text, allowed, *, num_threads=Some(1), chunk_bytes=None),
           text_signature = "(self, /, text, allowed, *, num_threads=1, chunk_bytes=None)")]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: PyBackedStr,
        allowed: Vec<Rank>,
        num_threads: Option<usize>,
        chunk_bytes: Option<usize>,
    ) -> PyResult<Bound<'py, PyList>> {
        let par = parallel(num_threads, chunk_bytes)?;
        if text.len() > round_bytes(par) {
            // Issue 13: large texts go in rounds, with Ctrl-C looked at between them.
            let ids = self.encode_rounds(py, &text, &allowed, par)?;
            return self.id_list(py, &ids);
        }
        let ids = py
            .detach(|| {
                if par.threads == 1 && par.chunk_bytes.is_none() {
                    let mut out = Vec::with_capacity(text.len() / 4);
                    self.inner
                        .encode_into(&text, &allowed, &mut out)
                        .map(|_| out)
                } else {
                    self.inner
                        .encode_texts(&[&*text], &allowed, par)
                        .map(|mut v| v.pop().unwrap_or_default())
                }
            })
            .map_err(to_py)?;
        self.id_list(py, &ids)
    }

    #[pyo3(signature = (texts, allowed, *, num_threads=None, chunk_bytes=None))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<PyBackedStr>,
        allowed: Vec<Rank>,
        num_threads: Option<usize>,
        chunk_bytes: Option<usize>,
    ) -> PyResult<Bound<'py, PyList>> {
        let par = parallel_batch(num_threads, chunk_bytes, &texts)?;
        if texts.iter().map(|t| t.len()).sum::<usize>() > round_bytes(par) {
            // Issue 13: large batches go in rounds, with Ctrl-C looked at between them.
            return self.encode_batch_rounds(py, &texts, &allowed, par);
        }
        if par.threads > 1 && texts.len() > 1 {
            return self.encode_batch_pipelined(py, &texts, &allowed, par);
        }
        let lists = py
            .detach(|| {
                let refs: Vec<&str> = texts.iter().map(|t| &**t).collect();
                self.inner.encode_texts(&refs, &allowed, par)
            })
            .map_err(to_py)?;
        self.id_lists(py, &lists)
    }

    /// The number of tokens `encode` would give; with `limit`, `min(count, limit + 1)`,
    /// stopping as soon as the count exceeds `limit`.
    #[pyo3(signature = (text, allowed, *, limit=None, num_threads=Some(1), chunk_bytes=None),
           text_signature = "(self, /, text, allowed, *, limit=None, num_threads=1, chunk_bytes=None)")]
    fn count(
        &self,
        py: Python<'_>,
        text: PyBackedStr,
        allowed: Vec<Rank>,
        limit: Option<usize>,
        num_threads: Option<usize>,
        chunk_bytes: Option<usize>,
    ) -> PyResult<usize> {
        let par = parallel(num_threads, chunk_bytes)?;
        if text.len() > round_bytes(par) {
            // Issue 13: large texts go in rounds, with Ctrl-C looked at between them.
            return self.count_rounds(py, &text, &allowed, limit, par);
        }
        py.detach(|| {
            self.inner
                .count_texts(&[&*text], &allowed, limit, par)
                .map(|v| v[0])
        })
        .map_err(to_py)
    }

    /// `count` of each text.
    #[pyo3(signature = (texts, allowed, *, limit=None, num_threads=None, chunk_bytes=None))]
    fn count_batch(
        &self,
        py: Python<'_>,
        texts: Vec<PyBackedStr>,
        allowed: Vec<Rank>,
        limit: Option<usize>,
        num_threads: Option<usize>,
        chunk_bytes: Option<usize>,
    ) -> PyResult<Vec<usize>> {
        let par = parallel_batch(num_threads, chunk_bytes, &texts)?;
        if texts.iter().map(|t| t.len()).sum::<usize>() > round_bytes(par) {
            // Issue 13: large batches go in rounds, with Ctrl-C looked at between them.
            return self.count_batch_rounds(py, &texts, &allowed, limit, par);
        }
        py.detach(|| {
            let refs: Vec<&str> = texts.iter().map(|t| &**t).collect();
            self.inner.count_texts(&refs, &allowed, limit, par)
        })
        .map_err(to_py)
    }

    /// Empties the piece caches (for benchmarks that measure a cold start).
    fn clear_cache(&self) {
        self.inner.clear_cache()
    }

    /// (byte offset, id) of the first special token among `among` found in `text`, or None.
    fn find_special(
        &self,
        py: Python<'_>,
        text: PyBackedStr,
        among: Vec<Rank>,
    ) -> PyResult<Option<(usize, Rank)>> {
        py.detach(|| self.inner.find_special(&text, &among))
            .map_err(to_py)
    }

    fn decode_bytes<'py>(&self, py: Python<'py>, ids: Vec<Rank>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = py
            .detach(|| {
                let mut out = Vec::with_capacity(ids.len() * 4);
                self.inner.decode_into(&ids, &mut out).map(|_| out)
            })
            .map_err(to_py)?;
        Ok(PyBytes::new(py, &bytes))
    }

    fn token_bytes<'py>(&self, py: Python<'py>, id: Rank) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.inner.token_bytes(id).map_err(to_py)?;
        Ok(PyBytes::new(py, bytes))
    }

    /// Number of characters at the start of `text` that can be encoded apart from the rest.
    fn safe_prefix(&self, py: Python<'_>, text: PyBackedStr) -> usize {
        py.detach(|| {
            let cut = self.inner.safe_prefix(&text);
            text[..cut].chars().count()
        })
    }

    /// The id of the token with exactly these bytes, or None.
    fn lookup(&self, bytes: &[u8]) -> Option<Rank> {
        self.inner.bpe.lookup(bytes)
    }

    /// Number of ordinary (non-special) tokens.
    #[getter]
    fn size(&self) -> usize {
        self.inner.bpe.len()
    }

    #[getter]
    fn pattern(&self) -> Option<&str> {
        self.inner.pretokenizer().pattern()
    }

    // -- interop (issue 9) --

    /// A rank model's merge list: (left, right, token) per token, in id order (`Bpe::rank_merges`).
    fn rank_merges(&self, py: Python<'_>) -> Vec<(Rank, Rank, Rank)> {
        py.detach(|| self.inner.bpe.rank_merges())
    }

    /// `save_hf`'s model.vocab members (`"string":id,...`, ordinary tokens by id) and model.merges
    /// array as JSON text (`hfjson::write_model`). `merges`: (left id, right id), or None for a
    /// rank model's own (`rank_merges`).
    fn hf_model_json(
        &self,
        py: Python<'_>,
        merges: Option<Vec<(Rank, Rank)>>,
    ) -> PyResult<(String, String)> {
        let bpe = &self.inner.bpe;
        py.detach(|| {
            let merges = match merges {
                Some(m) => m,
                None => bpe
                    .rank_merges()
                    .into_iter()
                    .map(|(l, r, _)| (l, r))
                    .collect(),
            };
            let pairs = merges
                .iter()
                .map(|&(l, r)| Ok((bpe.token_bytes(l)?, bpe.token_bytes(r)?)))
                .collect::<crate::error::Result<Vec<_>>>()?;
            let vocab = (0..bpe.id_bound() as Rank)
                .filter_map(|id| bpe.token_bytes(id).ok().map(|b| (id, b)));
            Ok(crate::io::hfjson::write_model(vocab, pairs.into_iter()))
        })
        .map_err(to_py)
    }
    // -- Array outputs (issue 11, `arrays.rs`): flat ids in one bytearray, no int per id --

    /// Encodes each text as one document into a flat buffer of `width`-byte (2 or 4)
    /// little-endian ids, with `separator` = (id, prepend) before or after each document.
    /// Returns (ids as a writable memoryview, document offsets as little-endian u64 in a bytearray, one more than texts).
    #[pyo3(signature = (texts, allowed, *, width, separator=None, num_threads=None, chunk_bytes=None, edges=None))]
    #[allow(clippy::too_many_arguments)]
    fn encode_flat<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<PyBackedStr>,
        allowed: Vec<Rank>,
        width: usize,
        separator: Option<(Rank, bool)>,
        num_threads: Option<usize>,
        chunk_bytes: Option<usize>,
        edges: Option<Vec<(bool, bool)>>,
    ) -> PyResult<(Bound<'py, PyMemoryView>, Bound<'py, PyByteArray>)> {
        let par = parallel_batch(num_threads, chunk_bytes, &texts)?;
        let width = Width::from_bytes(width).map_err(to_py)?;
        let separator = separator.map(|(id, prepend)| Separator { id, prepend });
        let parts = py
            .detach(|| {
                let refs: Vec<&str> = texts.iter().map(|t| &**t).collect();
                self.inner
                    .encode_parts_edges(&refs, &allowed, separator, edges.as_deref(), par)
            })
            .map_err(to_py)?;
        flat_bytes(py, &parts, width, par.threads)
    }

    /// Reads the files in Rust and encodes each as one document, as `encode_flat` does.
    /// Returns (ids, offsets, number of bad UTF-8 sequences replaced).
    #[pyo3(signature = (paths, allowed, *, width, separator=None, replace_errors=false, num_threads=None))]
    #[allow(clippy::too_many_arguments)]
    fn encode_files<'py>(
        &self,
        py: Python<'py>,
        paths: Vec<String>,
        allowed: Vec<Rank>,
        width: usize,
        separator: Option<(Rank, bool)>,
        replace_errors: bool,
        num_threads: Option<usize>,
    ) -> PyResult<(Bound<'py, PyMemoryView>, Bound<'py, PyByteArray>, u64)> {
        let par = parallel(num_threads, None)?;
        let width = Width::from_bytes(width).map_err(to_py)?;
        let separator = separator.map(|(id, prepend)| Separator { id, prepend });
        let (ids, offsets, replaced) = py
            .detach(|| {
                self.inner.encode_files(
                    &paths,
                    &allowed,
                    separator,
                    replace_errors,
                    par,
                    width,
                    None,
                )
            })
            .map_err(to_py)?;
        let (ids, offsets) = flat_result(py, ids, &offsets)?;
        Ok((ids, offsets, replaced))
    }

    /// `encode_files` over byte ranges (path, start, end) of files, each range one text
    /// (corpus encoding cuts large files into ranges at independent cuts).
    /// `edges`: for each range, whether it starts / ends a document (where `separator` goes);
    /// by default each range is a whole document.
    #[pyo3(signature = (ranges, allowed, *, width, separator=None, replace_errors=false, num_threads=None, edges=None))]
    #[allow(clippy::too_many_arguments)]
    fn encode_file_ranges<'py>(
        &self,
        py: Python<'py>,
        ranges: Vec<(String, u64, u64)>,
        allowed: Vec<Rank>,
        width: usize,
        separator: Option<(Rank, bool)>,
        replace_errors: bool,
        num_threads: Option<usize>,
        edges: Option<Vec<(bool, bool)>>,
    ) -> PyResult<(Bound<'py, PyMemoryView>, Bound<'py, PyByteArray>, u64)> {
        let par = parallel(num_threads, None)?;
        let width = Width::from_bytes(width).map_err(to_py)?;
        let separator = separator.map(|(id, prepend)| Separator { id, prepend });
        let (parts, replaced) = py
            .detach(|| {
                let (texts, replaced) = read_ranges(&ranges, replace_errors, par.threads)?;
                let refs: Vec<&str> = texts.iter().map(|t| t.as_str()).collect();
                let parts = self.inner.encode_parts_edges(
                    &refs,
                    &allowed,
                    separator,
                    edges.as_deref(),
                    par,
                )?;
                Ok((parts, replaced))
            })
            .map_err(to_py)?;
        let (ids, offsets) = flat_bytes(py, &parts, width, par.threads)?;
        Ok((ids, offsets, replaced))
    }

    /// Corpus encoding (issue 11): the ordinary tokens in one buffer, by id, each as its id
    /// and its length (u32 little-endian) then its bytes (what the corpus manifest hashes),
    /// and the largest ordinary id (None when there is none). Made here, not from `vocab()`:
    /// building 200,000 bytes objects and joining them took 0.3 s of every run on o200k.
    fn vocab_table<'py>(&self, py: Python<'py>) -> (Bound<'py, PyBytes>, Option<Rank>) {
        let bpe = &self.inner.bpe;
        let (buf, top) = py.detach(|| {
            let mut buf = Vec::new();
            let mut top = None;
            for id in 0..bpe.id_bound() as Rank {
                if let Ok(b) = bpe.token_bytes(id) {
                    buf.extend_from_slice(&id.to_le_bytes());
                    buf.extend_from_slice(&(b.len() as u32).to_le_bytes());
                    buf.extend_from_slice(b);
                    top = Some(id);
                }
            }
            (buf, top)
        });
        (PyBytes::new(py, &buf), top)
    }
}

/// The flat ids of `parts`, written by `threads` threads straight into a new bytearray, and
/// the document offsets as little-endian u64 bytes (array outputs, issue 11).
/// Bytes made in Rust, lent to Python as a writable buffer without a copy (`owned_view`):
/// the memory of a `Vec<u8>`, freed when the last view of it is released. Copying the ids of
/// `encode_files` into a `bytearray` was a second buffer of the output's size, zeroed and then
/// written (page faults and a copy, about 5 % of its time in `perf`).
#[pyclass(module = "bytepair._core", frozen)]
struct OwnedBytes {
    ptr: *mut u8,
    len: usize,
    cap: usize,
}

// SAFETY: the memory is owned by this object alone; Rust never reads or writes it after
// `owned_view` made it, and Python's buffer users synchronize as they would for a bytearray.
unsafe impl Send for OwnedBytes {}
// SAFETY: as for Send: no Rust code touches the memory through a shared reference.
unsafe impl Sync for OwnedBytes {}

impl Drop for OwnedBytes {
    fn drop(&mut self) {
        // SAFETY: the parts of a `Vec<u8>` taken apart in `owned_view`, put back once.
        drop(unsafe { Vec::from_raw_parts(self.ptr, self.len, self.cap) });
    }
}

#[pymethods]
impl OwnedBytes {
    /// The buffer protocol: the bytes, writable, one dimension.
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut pyo3::ffi::Py_buffer,
        flags: std::os::raw::c_int,
    ) -> PyResult<()> {
        let this = slf.get();
        // SAFETY: `view` is the caller's to fill; the memory lives as long as `slf`, which the
        // view keeps a reference to (`FillInfo` sets `view.obj`).
        let filled = unsafe {
            pyo3::ffi::PyBuffer_FillInfo(
                view,
                slf.as_ptr(),
                this.ptr.cast(),
                this.len as pyo3::ffi::Py_ssize_t,
                0,
                flags,
            )
        };
        if filled == -1 {
            return Err(PyErr::fetch(slf.py()));
        }
        Ok(())
    }

    unsafe fn __releasebuffer__(&self, _view: *mut pyo3::ffi::Py_buffer) {}
}

/// A writable `memoryview` of `bytes`, which Python then owns (see `OwnedBytes`).
fn owned_view(py: Python<'_>, bytes: Vec<u8>) -> PyResult<Bound<'_, PyMemoryView>> {
    let mut bytes = std::mem::ManuallyDrop::new(bytes);
    let owner = Bound::new(
        py,
        OwnedBytes {
            ptr: bytes.as_mut_ptr(),
            len: bytes.len(),
            cap: bytes.capacity(),
        },
    )?;
    PyMemoryView::from(owner.as_any())
}

fn flat_bytes<'py>(
    py: Python<'py>,
    parts: &Parts,
    width: Width,
    threads: usize,
) -> PyResult<(Bound<'py, PyMemoryView>, Bound<'py, PyByteArray>)> {
    // Written by the threads straight into new memory (`Parts::append_to`): a bytearray is
    // zeroed first, on this thread.
    let mut ids = Vec::new();
    py.detach(|| parts.append_to(width, &mut ids, threads))
        .map_err(to_py)?;
    flat_result(py, ids, &parts.offsets)
}

/// The ids lent to Python as a memoryview (`owned_view`) and the document offsets as
/// little-endian u64 in a bytearray: what the array outputs return.
fn flat_result<'py>(
    py: Python<'py>,
    ids: Vec<u8>,
    offsets: &[u64],
) -> PyResult<(Bound<'py, PyMemoryView>, Bound<'py, PyByteArray>)> {
    let offsets: Vec<u8> = offsets.iter().flat_map(|o| o.to_le_bytes()).collect();
    Ok((owned_view(py, ids)?, PyByteArray::new(py, &offsets)))
}

// ---- WordPiece (issue 10) ----------------------------------------------------------------

use crate::wordpiece::model::{BertOptions, WordPiece};

/// A WordPiece model with BERT normalization and pre-tokenization (`wordpiece`).
#[pyclass(module = "bytepair._core", frozen, name = "WordPiece")]
struct PyWordPiece {
    inner: WordPiece,
    /// one Python int per id, shared by every list returned (no int made per token)
    ints: Vec<Py<PyAny>>,
}

#[pymethods]
impl PyWordPiece {
    /// `vocab`: (id, token) pairs; `special_tokens`: (text, id) pairs matched in the raw text.
    #[new]
    #[pyo3(signature = (vocab, unk_token, continuing_subword_prefix, max_input_chars_per_word, clean_text, handle_chinese_chars, strip_accents, lowercase, special_tokens))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        vocab: Vec<(Rank, String)>,
        unk_token: &str,
        continuing_subword_prefix: &str,
        max_input_chars_per_word: usize,
        clean_text: bool,
        handle_chinese_chars: bool,
        strip_accents: bool,
        lowercase: bool,
        special_tokens: Vec<(String, Rank)>,
    ) -> PyResult<Self> {
        let opts = BertOptions {
            clean_text,
            handle_chinese_chars,
            strip_accents,
            lowercase,
        };
        let inner = py
            .detach(|| {
                WordPiece::new(
                    &vocab,
                    unk_token,
                    continuing_subword_prefix,
                    max_input_chars_per_word,
                    opts,
                    &special_tokens,
                )
            })
            .map_err(to_py)?;
        let top = vocab.iter().map(|&(i, _)| i).max().unwrap_or(0);
        if top as usize >= vocab.len() {
            return Err(to_py(Error::Vocab(format!(
                "token ids must be 0..{} (one per token), got the id {top}",
                vocab.len().saturating_sub(1)
            ))));
        }
        let ints: Vec<Py<PyAny>> = (0..=top)
            .map(|i| match i.into_pyobject(py) {
                Ok(o) => o.into_any().unbind(),
                Err(never) => match never {},
            })
            .collect();
        Ok(PyWordPiece { inner, ints })
    }

    fn encode(&self, py: Python<'_>, text: PyBackedStr) -> Vec<Rank> {
        py.detach(|| {
            let mut ids = Vec::new();
            self.inner.encode(&text, &mut ids, None);
            ids
        })
    }

    fn encode_with_offsets(
        &self,
        py: Python<'_>,
        text: PyBackedStr,
    ) -> (Vec<Rank>, Vec<(u32, u32)>) {
        py.detach(|| {
            let mut ids = Vec::new();
            let mut offsets = Vec::new();
            self.inner.encode(&text, &mut ids, Some(&mut offsets));
            (ids, offsets)
        })
    }

    #[pyo3(signature = (texts, *, with_offsets = false, num_threads = None))]
    fn encode_batch(
        &self,
        py: Python<'_>,
        texts: Vec<PyBackedStr>,
        with_offsets: bool,
        num_threads: Option<usize>,
    ) -> PyResult<Vec<crate::wordpiece::model::Encoded>> {
        let threads = parallel_batch(num_threads, None, &texts)?.threads;
        py.detach(|| {
            let refs: Vec<&str> = texts.iter().map(|t| &**t).collect();
            self.inner.encode_batch(&refs, with_offsets, threads)
        })
        .map_err(to_py)
    }

    /// The ids of each text (no offsets), on `num_threads` threads.
    #[pyo3(signature = (texts, *, num_threads = None))]
    fn encode_batch_ids<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<PyBackedStr>,
        num_threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyList>> {
        let threads = parallel_batch(num_threads, None, &texts)?.threads;
        let refs: Vec<&str> = texts.iter().map(|t| &**t).collect();
        if threads > 1 {
            return self.encode_batch_ids_pipelined(py, &refs, threads);
        }
        let (ids, ends) = py
            .detach(|| self.inner.encode_batch_flat(&refs, threads))
            .map_err(to_py)?;
        let mut start = 0;
        let lists = ends
            .iter()
            .map(|&end| {
                let one = &ids[start..end];
                start = end;
                PyList::new(py, one.iter().map(|&i| self.ints[i as usize].bind(py)))
            })
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, lists)
    }

    /// The ids of each text in one flat buffer of `width`-byte (2 or 4) little-endian ids, and
    /// the document offsets as little-endian u64, one more than texts (as `encode_flat`).
    #[pyo3(signature = (texts, *, width, num_threads = None))]
    fn encode_batch_flat<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<PyBackedStr>,
        width: usize,
        num_threads: Option<usize>,
    ) -> PyResult<(Bound<'py, PyByteArray>, Bound<'py, PyByteArray>)> {
        if width != 2 && width != 4 {
            return Err(PyValueError::new_err(format!(
                "width must be 2 or 4, got {width}"
            )));
        }
        if width == 2 && self.ints.len() > 1 << 16 {
            return Err(PyValueError::new_err(format!(
                "the vocabulary has {} ids, which do not fit in 2 bytes",
                self.ints.len()
            )));
        }
        let threads = parallel_batch(num_threads, None, &texts)?.threads;
        let (ids, offsets) = py
            .detach(|| -> crate::error::Result<(Vec<u8>, Vec<u8>)> {
                let refs: Vec<&str> = texts.iter().map(|t| &**t).collect();
                let (flat, ends) = self.inner.encode_batch_flat(&refs, threads)?;
                let ids: Vec<u8> = if width == 2 {
                    flat.iter()
                        .flat_map(|&i| (i as u16).to_le_bytes())
                        .collect()
                } else {
                    flat.iter().flat_map(|&i| i.to_le_bytes()).collect()
                };
                let mut offsets = Vec::with_capacity(8 * (ends.len() + 1));
                offsets.extend_from_slice(&0u64.to_le_bytes());
                for &end in &ends {
                    offsets.extend_from_slice(&(end as u64).to_le_bytes());
                }
                Ok((ids, offsets))
            })
            .map_err(to_py)?;
        Ok((PyByteArray::new(py, &ids), PyByteArray::new(py, &offsets)))
    }
}

impl PyWordPiece {
    /// `encode_batch_ids` on several threads: chunks of the batch are encoded on the pool while
    /// this thread, holding the GIL, makes the lists of the chunks already done (the lists are
    /// made under the GIL, one thread at a time: made after the encoding they were the larger
    /// part of a two-thread call).
    fn encode_batch_ids_pipelined<'py>(
        &self,
        py: Python<'py>,
        refs: &[&str],
        threads: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let chunks = crate::wordpiece::model::batch_chunks(refs);
        let pool = crate::threads::pool(threads).map_err(to_py)?;
        let out = PyList::new(py, (0..refs.len()).map(|_| py.None()))?;
        let (tx, rx) = std::sync::mpsc::channel::<(usize, Vec<Rank>, Vec<usize>)>();
        let rx = Mutex::new(rx);
        std::thread::scope(|scope| -> PyResult<()> {
            let (chunks, inner) = (&chunks, &self.inner);
            scope.spawn(move || {
                pool.install(|| {
                    chunks
                        .par_iter()
                        .enumerate()
                        .for_each_with(tx, |tx, (c, range)| {
                            let (mut ids, mut ends) = (Vec::new(), Vec::with_capacity(range.len()));
                            inner.encode_into(&refs[range.clone()], &mut ids, &mut ends);
                            let _ = tx.send((c, ids, ends));
                        })
                })
            });
            while let Ok((c, ids, ends)) =
                py.detach(|| rx.lock().unwrap_or_else(|p| p.into_inner()).recv())
            {
                let mut start = 0;
                for (k, &end) in ends.iter().enumerate() {
                    let one = &ids[start..end];
                    start = end;
                    let list =
                        PyList::new(py, one.iter().map(|&i| self.ints[i as usize].bind(py)))?;
                    out.set_item(chunks[c].start + k, list)?;
                }
            }
            Ok(())
        })?;
        Ok(out)
    }
}

/// BERT normalization + pre-tokenization of `text`: (word, (start, end)) in characters.
#[pyfunction]
#[pyo3(signature = (text, *, clean_text = true, handle_chinese_chars = true, strip_accents = true, lowercase = true))]
fn bert_pre_tokenize(
    py: Python<'_>,
    text: PyBackedStr,
    clean_text: bool,
    handle_chinese_chars: bool,
    strip_accents: bool,
    lowercase: bool,
) -> Vec<(String, (u32, u32))> {
    let opts = BertOptions {
        clean_text,
        handle_chinese_chars,
        strip_accents,
        lowercase,
    };
    py.detach(|| crate::wordpiece::model::pre_tokenize(&opts, &text))
}

/// Word counts for WordPiece training, filled batch by batch (`wordpiece_train`).
#[pyclass(module = "bytepair._core", name = "WordCounter")]
struct PyWordCounter {
    counter: crate::wordpiece::train::WordCounter,
    /// the counts, merged and compacted by the first `train` (counting then ends)
    words: Option<crate::wordpiece::train::Words>,
}

impl PyWordCounter {
    fn counting(&mut self) -> PyResult<&mut crate::wordpiece::train::WordCounter> {
        if self.words.is_some() {
            return Err(to_py(Error::Invalid(
                "this counter was already used for training".into(),
            )));
        }
        Ok(&mut self.counter)
    }

    fn words(&mut self) -> &crate::wordpiece::train::Words {
        let counter = &mut self.counter;
        self.words.get_or_insert_with(|| counter.finish())
    }
}

#[pymethods]
impl PyWordCounter {
    /// Text matching `split_on` separates words and is not counted. `unit_bytes` and
    /// `block_bytes` (how texts are cut for the workers and files read) change no count; tests
    /// make them small.
    #[new]
    #[pyo3(signature = (*, clean_text, handle_chinese_chars, strip_accents, lowercase, split_on, unit_bytes = None, block_bytes = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        clean_text: bool,
        handle_chinese_chars: bool,
        strip_accents: bool,
        lowercase: bool,
        split_on: Vec<String>,
        unit_bytes: Option<usize>,
        block_bytes: Option<usize>,
    ) -> PyResult<Self> {
        let opts = BertOptions {
            clean_text,
            handle_chinese_chars,
            strip_accents,
            lowercase,
        };
        let counter = crate::wordpiece::train::WordCounter::with_sizes(
            opts,
            &split_on,
            unit_bytes.unwrap_or(crate::wordpiece::train::UNIT_BYTES),
            block_bytes.unwrap_or(crate::wordpiece::train::BLOCK_BYTES),
        )
        .map_err(to_py)?;
        Ok(PyWordCounter {
            counter,
            words: None,
        })
    }

    #[pyo3(signature = (texts, *, num_threads = None))]
    fn add_texts(
        &mut self,
        py: Python<'_>,
        texts: Vec<PyBackedStr>,
        num_threads: Option<usize>,
    ) -> PyResult<()> {
        let threads = parallel(num_threads, None)?.threads;
        let counter = self.counting()?;
        py.detach(|| {
            let refs: Vec<&str> = texts.iter().map(|t| &**t).collect();
            counter.add_texts(&refs, threads)
        })
        .map_err(to_py)
    }

    /// Streams a UTF-8 file; `progress(bytes_read)` is called now and then.
    #[pyo3(signature = (path, *, replace_errors = false, num_threads = None, progress = None))]
    fn add_file(
        &mut self,
        py: Python<'_>,
        path: &str,
        replace_errors: bool,
        num_threads: Option<usize>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<()> {
        let threads = parallel(num_threads, None)?.threads;
        let counter = self.counting()?;
        let raised = Mutex::new(None);
        let result = py.detach(|| {
            let mut p = Progress {
                callback: progress.as_ref(),
                last: Instant::now(),
                every: Duration::from_millis(100),
                raised: &raised,
            };
            counter.add_file(path, replace_errors, threads, &mut |n| p.tick(n, false))
        });
        finish(result, raised)
    }

    /// Counts the longest prefix of `data` that ends after whitespace (all of it when `last`);
    /// returns its length in bytes, and the caller keeps the rest. For streams read in Python
    /// (compressed files): `source` and `offset` (of `data[0]` in the stream) name bad UTF-8.
    #[pyo3(signature = (data, *, last, source, offset, replace_errors = false, num_threads = None))]
    #[allow(clippy::too_many_arguments)]
    fn add_bytes(
        &mut self,
        py: Python<'_>,
        data: &[u8],
        last: bool,
        source: &str,
        offset: u64,
        replace_errors: bool,
        num_threads: Option<usize>,
    ) -> PyResult<usize> {
        let threads = parallel(num_threads, None)?.threads;
        let counter = self.counting()?;
        py.detach(|| counter.add_block(data, last, source, offset, replace_errors, threads))
            .map_err(to_py)
    }

    /// (bytes, characters, bad UTF-8 sequences replaced) of the text counted.
    fn text_stats(&self) -> (u64, u64, u64) {
        let s = self.counter.stats;
        (s.bytes, s.chars, s.replaced)
    }

    /// Number of distinct words and total words (merging the counts: counting ends).
    fn sizes(&mut self) -> (usize, u64) {
        let words = self.words();
        (words.len(), words.total())
    }

    /// What `encoder` makes of the counted words, each weighted by its count: (tokens, unknown
    /// tokens). Counting ends.
    #[pyo3(signature = (encoder, *, num_threads = None))]
    fn encode_stats(
        &mut self,
        py: Python<'_>,
        encoder: PyRef<'_, PyWordPiece>,
        num_threads: Option<usize>,
    ) -> PyResult<(u64, u64)> {
        let threads = parallel(num_threads, None)?.threads;
        let words = self.words();
        let wp = &encoder.inner;
        py.detach(|| words.encode_stats(wp, threads)).map_err(to_py)
    }

    /// Trains on the counted words: the vocabulary, tokens in id order.
    #[pyo3(signature = (*, vocab_size, min_frequency, special_tokens, continuing_subword_prefix, algorithm, continuation_order = None, progress = None))]
    #[allow(clippy::too_many_arguments)]
    fn train(
        &mut self,
        py: Python<'_>,
        vocab_size: usize,
        min_frequency: u64,
        special_tokens: Vec<String>,
        continuing_subword_prefix: String,
        algorithm: &str,
        continuation_order: Option<Vec<String>>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Vec<String>> {
        let algorithm = match algorithm {
            "score" => crate::wordpiece::train::Algorithm::Score,
            "hf" => crate::wordpiece::train::Algorithm::Hf,
            other => {
                return Err(to_py(Error::Invalid(format!(
                    "algorithm must be \"score\" or \"hf\", got {other:?}"
                ))))
            }
        };
        let opts = crate::wordpiece::train::TrainOptions {
            vocab_size,
            min_frequency,
            special_tokens: &special_tokens,
            prefix: &continuing_subword_prefix,
            algorithm,
            continuation_order: continuation_order.as_deref(),
        };
        let words = self.words();
        let raised = Mutex::new(None);
        let result = py.detach(|| {
            let mut p = Progress {
                callback: progress.as_ref(),
                last: Instant::now(),
                every: Duration::from_millis(200),
                raised: &raised,
            };
            crate::wordpiece::train::train(words, &opts, &mut |n| p.tick(n as u64, false))
        });
        finish(result, raised)
    }
}

fn add_wordpiece(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyWordPiece>()?;
    m.add_class::<PyWordCounter>()?;
    m.add_function(wrap_pyfunction!(bert_pre_tokenize, m)?)?;
    Ok(())
}
// ---- end WordPiece ----------------------------------------------------------------------

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPieceCounter>()?;
    m.add_class::<PyEncoder>()?;
    m.add_function(wrap_pyfunction!(preset_patterns, m)?)?;
    m.add_function(wrap_pyfunction!(split_pieces, m)?)?;
    m.add_function(wrap_pyfunction!(train_from_counts, m)?)?;
    m.add_function(wrap_pyfunction!(file_cuts, m)?)?;
    m.add_function(wrap_pyfunction!(train_counters, m)?)?;
    add_wordpiece(m)?; // WordPiece (issue 10)
    add_hf_json(m)?; // Hugging Face tokenizer.json, the fast reader (issue 9)
    add_jsonl(m)?; // JSON lines for corpus encoding (issue 11)
    add_batch_encoder(m)?; // corpus encoding with reused buffers (issue 11)
    Ok(())
}

// --- Ctrl-C during long encode / count calls (issue 13) ---
//
// `encode`, `encode_batch`, `count` and `count_batch` release the GIL for the whole kernel, so a
// Ctrl-C used to wait until the end (16.8 s on 836 MB). Inputs larger than `round_bytes` now go
// in rounds of about that many bytes: each round runs with the GIL released, on all the threads
// asked for, and between rounds the GIL is taken back briefly to run `check_signals`, which
// raises KeyboardInterrupt (or whatever a signal handler raises). A large text is cut into
// rounds at the encoder's independent cuts (`Encoder::chunks`, the cuts the threads already
// use), so the ids are those of the whole text; whole texts of a batch are grouped into rounds.

/// Bytes of input per round between two looks at pending signals: a round takes well under a
/// second on one thread, and costs one GIL round trip.
fn round_bytes(par: Parallel) -> usize {
    (8usize << 20).saturating_mul(par.threads.max(1))
}

/// The texts of a batch grouped into rounds: (first, end) ranges of texts whose total is at most
/// `size` bytes, or a single text (which may be larger; it is then cut into rounds itself).
fn batch_rounds(texts: &[PyBackedStr], size: usize) -> Vec<(usize, usize)> {
    let mut rounds = Vec::new();
    let (mut first, mut bytes) = (0, 0usize);
    for (i, t) in texts.iter().enumerate() {
        if i > first && bytes + t.len() > size {
            rounds.push((first, i));
            (first, bytes) = (i, 0);
        }
        bytes += t.len();
    }
    if first < texts.len() {
        rounds.push((first, texts.len()));
    }
    rounds
}

impl PyEncoder {
    /// `encode` of one large text, in rounds cut at independent cuts.
    fn encode_rounds(
        &self,
        py: Python<'_>,
        text: &str,
        allowed: &[Rank],
        par: Parallel,
    ) -> PyResult<Vec<Rank>> {
        let rounds = py.detach(|| self.inner.chunks(text, round_bytes(par)));
        let mut ids = Vec::with_capacity(text.len() / 4);
        for round in rounds {
            let part = py
                .detach(|| self.inner.encode_texts(&[round], allowed, par))
                .map_err(to_py)?;
            for p in part {
                ids.extend_from_slice(&p);
            }
            py.check_signals()?;
        }
        Ok(ids)
    }

    /// `encode_batch` of a large batch, in rounds.
    fn encode_batch_rounds<'py>(
        &self,
        py: Python<'py>,
        texts: &[PyBackedStr],
        allowed: &[Rank],
        par: Parallel,
    ) -> PyResult<Bound<'py, PyList>> {
        let mut lists = Vec::with_capacity(texts.len());
        for (first, end) in batch_rounds(texts, round_bytes(par)) {
            if end - first == 1 && texts[first].len() > round_bytes(par) {
                let ids = self.encode_rounds(py, &texts[first], allowed, par)?;
                lists.push(self.id_list(py, &ids)?.into_any());
                continue;
            }
            let round = &texts[first..end];
            let part = if par.threads > 1 && round.len() > 1 {
                self.encode_batch_pipelined(py, round, allowed, par)?
            } else {
                let part = py
                    .detach(|| {
                        let refs: Vec<&str> = round.iter().map(|t| &**t).collect();
                        self.inner.encode_texts(&refs, allowed, par)
                    })
                    .map_err(to_py)?;
                self.id_lists(py, &part)?
            };
            lists.extend(part.iter());
            py.check_signals()?;
        }
        PyList::new(py, lists)
    }

    /// `count` of one large text, in rounds cut at independent cuts; with a limit, stops once
    /// the count exceeds it and gives `min(count, limit + 1)` as `count_texts` does.
    fn count_rounds(
        &self,
        py: Python<'_>,
        text: &str,
        allowed: &[Rank],
        limit: Option<usize>,
        par: Parallel,
    ) -> PyResult<usize> {
        let rounds = py.detach(|| self.inner.chunks(text, round_bytes(par)));
        let mut total = 0usize;
        for round in rounds {
            let left = limit.map(|l| l - total); // total <= l here
            let n = py
                .detach(|| self.inner.count_texts(&[round], allowed, left, par))
                .map_err(to_py)?[0];
            total += n;
            if limit.is_some_and(|l| total > l) {
                break;
            }
            py.check_signals()?;
        }
        Ok(total)
    }

    /// `count_batch` of a large batch, in rounds.
    fn count_batch_rounds(
        &self,
        py: Python<'_>,
        texts: &[PyBackedStr],
        allowed: &[Rank],
        limit: Option<usize>,
        par: Parallel,
    ) -> PyResult<Vec<usize>> {
        let mut counts = Vec::with_capacity(texts.len());
        for (first, end) in batch_rounds(texts, round_bytes(par)) {
            if end - first == 1 && texts[first].len() > round_bytes(par) {
                counts.push(self.count_rounds(py, &texts[first], allowed, limit, par)?);
                continue;
            }
            let part = py
                .detach(|| {
                    let refs: Vec<&str> = texts[first..end].iter().map(|t| &**t).collect();
                    self.inner.count_texts(&refs, allowed, limit, par)
                })
                .map_err(to_py)?;
            counts.extend(part);
            py.check_signals()?;
        }
        Ok(counts)
    }
}
// --- end Ctrl-C during long encode / count calls ---

// ---- Hugging Face tokenizer.json, the fast reader (issue 9) --------------------------------
//
// `hfjson` reads the vocab and merges of a tokenizer.json; `bytepair.formats._hf_fast` parses
// the small rest of the document with Python's json, then asks for the ordinary tokens given
// the added tokens (`HfModel.resolve`), and for a rank model builds the encoder here, where
// building it also gives the merges to compare with the file's.

/// The vocab and merges of a tokenizer.json (`hfjson::Model`).
#[pyclass(module = "bytepair._core", frozen, name = "HfModel")]
struct PyHfModel {
    inner: crate::io::hfjson::Model,
}

#[pymethods]
impl PyHfModel {
    /// The document's model.vocab and model.merges, or None when the Python reader should read
    /// the document (anything but the common, well-formed case).
    #[staticmethod]
    fn parse(py: Python<'_>, data: &[u8]) -> Option<Self> {
        py.detach(|| crate::io::hfjson::parse(data))
            .map(|inner| PyHfModel { inner })
    }

    /// Byte offsets (start, end) of the model.vocab object in the document.
    #[getter]
    fn vocab_span(&self) -> (usize, usize) {
        self.inner.vocab_span
    }

    /// Byte offsets (start, end) of the model.merges array in the document.
    #[getter]
    fn merges_span(&self) -> (usize, usize) {
        self.inner.merges_span
    }

    /// The ordinary tokens and merges given the added tokens (text, id), or None when the
    /// Python reader would refuse the file or read it otherwise.
    fn resolve(&self, py: Python<'_>, added: Vec<(String, Rank)>) -> Option<PyHfVocab> {
        py.detach(|| self.inner.resolve(&added))
            .map(|inner| PyHfVocab { inner })
    }
}

/// Ordinary tokens and merges of a tokenizer.json (`hfjson::Resolved`).
#[pyclass(module = "bytepair._core", frozen, name = "HfVocab")]
struct PyHfVocab {
    inner: crate::io::hfjson::Resolved,
}

#[pymethods]
impl PyHfVocab {
    /// Number of ordinary tokens.
    #[getter]
    fn size(&self) -> usize {
        self.inner.vocab.len()
    }

    /// Number of ordinary tokens of two or more bytes.
    #[getter]
    fn multi_byte(&self) -> usize {
        self.inner.multi_byte()
    }

    /// Number of merges.
    #[getter]
    fn merge_count(&self) -> usize {
        self.inner.merges.len()
    }

    /// The ordinary tokens as (id, bytes), in file order.
    fn items<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(
            py,
            self.inner
                .vocab
                .iter()
                .map(|(id, b)| (*id, PyBytes::new(py, b))),
        )
    }

    /// The merges as (left id, right id), in file order.
    fn merge_ids(&self) -> Vec<(Rank, Rank)> {
        self.inner.merges.clone()
    }

    /// The encoder of the ordinary tokens read as ranks (tiktoken's model), if the merges are
    /// exactly those of the ranks (`Bpe::rank_merges`, in the same order); else None.
    fn rank_encoder(
        &self,
        py: Python<'_>,
        pattern: Option<&str>,
        special_tokens: Vec<(String, Rank)>,
    ) -> PyResult<Option<PyEncoder>> {
        let pretok = Pretokenizer::new(pattern).map_err(to_py)?;
        let merges = &self.inner.merges;
        let bpe = py
            .detach(|| {
                let mut vocab = self.inner.vocab.clone();
                vocab.sort_unstable_by_key(|&(id, _)| id);
                let (bpe, used) = Bpe::from_ranks_with_merges(vocab)?;
                let same = used.len() == merges.len()
                    && used
                        .iter()
                        .zip(merges)
                        .all(|(&(l, r, _), &(a, b))| (l, r) == (a, b));
                Ok(same.then_some(bpe))
            })
            .map_err(to_py)?;
        bpe.map(|bpe| PyEncoder::build(bpe, pretok, special_tokens))
            .transpose()
    }
}

fn add_hf_json(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyHfModel>()?;
    m.add_class::<PyHfVocab>()?;
    Ok(())
}
// ---- end Hugging Face tokenizer.json --------------------------------------------------------

// ---- JSON lines for corpus encoding (issue 11) -----------------------------------------------

/// The string `field` of each JSON line of `data[start:]`, up to the first line left to
/// Python's `json` (see `jsonl::texts`): (texts, bytes read, lines read).
#[pyfunction]
fn jsonl_texts<'py>(
    py: Python<'py>,
    data: pyo3::pybacked::PyBackedBytes,
    start: usize,
    field: &str,
) -> PyResult<(Bound<'py, PyList>, usize, usize)> {
    let taken = py.detach(|| crate::io::jsonl::texts(&data, start, field));
    Ok((PyList::new(py, taken.texts)?, taken.used, taken.lines))
}

/// Documents of JSON lines read in Rust, their texts one after another in one buffer: corpus
/// encoding hands them back to the encoder (`BatchEncoder.encode_blocks`) without a Python
/// `str` each. Making each `str` (UTF-8 decoded to 1-4 bytes per character), then its UTF-8
/// again for the encoder, and the allocations, were most of the reading thread's time on 296 MB
/// of JSON lines (`perf`: `unicode_decode_utf8`, `ucs2lib_utf8_encoder`, `_int_malloc`, page
/// faults), and at two threads on two cores that time was the encoder's.
#[pyclass(module = "bytepair._core", frozen)]
struct TextBlock {
    text: String,
    /// Where each document ends in `text` (each starts where the one before ends).
    ends: Vec<usize>,
}

impl TextBlock {
    fn doc(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..self.ends[i]]
    }
}

#[pymethods]
impl TextBlock {
    fn __len__(&self) -> usize {
        self.ends.len()
    }

    /// Where each document ends, in bytes of UTF-8, as little-endian u64s.
    fn ends<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let bytes: Vec<u8> = self
            .ends
            .iter()
            .flat_map(|&e| (e as u64).to_le_bytes())
            .collect();
        PyBytes::new(py, &bytes)
    }

    /// The text of document `i`.
    fn text(&self, i: usize) -> PyResult<&str> {
        if i >= self.ends.len() {
            return Err(pyo3::exceptions::PyIndexError::new_err(format!(
                "document {i} of a block of {}",
                self.ends.len()
            )));
        }
        Ok(self.doc(i))
    }
}

/// `jsonl_texts` as one `TextBlock`: (block, bytes read, lines read).
#[pyfunction]
fn jsonl_block(
    py: Python<'_>,
    data: pyo3::pybacked::PyBackedBytes,
    start: usize,
    field: &str,
) -> (TextBlock, usize, usize) {
    let b = py.detach(|| crate::io::jsonl::block(&data, start, field));
    let block = TextBlock {
        text: b.text,
        ends: b.ends,
    };
    (block, b.used, b.lines)
}

fn add_jsonl(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(jsonl_texts, m)?)?;
    m.add_function(wrap_pyfunction!(jsonl_block, m)?)?;
    m.add_class::<TextBlock>()?;
    Ok(())
}
// ---- end JSON lines ----------------------------------------------------------------------------

// ---- Corpus encoding with reused buffers (issue 11, `arrays::Scratch`) -------------------------
//
// `encode_corpus` encodes batch after batch for the whole run. Allocating each batch's texts,
// id buffers and output anew let glibc's heap keep holes of every size, and peak RSS grew with
// the corpus (179 / 211 / 266 MB at 100 MB / 262 MB / 1 GB). A `BatchEncoder` keeps the texts
// read in Rust and the id buffers from one batch to the next, and writes the flat ids into a
// `bytearray` the caller owns and passes again (two, taken in turn, in `encode_corpus`), as
// `readinto` does: it only grows, and stays the size of the largest batch.

/// An encoder's batches into buffers reused from call to call (one call at a time).
#[pyclass(module = "bytepair._core", frozen, name = "BatchEncoder")]
struct PyBatchEncoder {
    encoder: Py<PyEncoder>,
    scratch: Mutex<crate::bpe::flat::Scratch>,
}

impl PyBatchEncoder {
    /// What `encode_texts`, `encode_blocks` and `encode_file_ranges` do once they have their
    /// texts: `refs` encoded into `out`, one document each (or pieces of documents, with
    /// `edges`), into id buffers taken from and given back to `ids` (the scratch's).
    #[allow(clippy::too_many_arguments)]
    fn encode_refs<'py>(
        &self,
        py: Python<'py>,
        refs: &[&str],
        allowed: &[Rank],
        out: &Bound<'py, PyByteArray>,
        width: usize,
        separator: Option<(Rank, bool)>,
        par: Parallel,
        edges: Option<&[(bool, bool)]>,
        ids: &mut Vec<Vec<Rank>>,
    ) -> PyResult<(usize, Bound<'py, PyByteArray>)> {
        let width = Width::from_bytes(width).map_err(to_py)?;
        let separator = separator.map(|(id, prepend)| Separator { id, prepend });
        let encoder = &self.encoder.get().inner;
        let parts = py
            .detach(|| {
                let par = crate::bpe::flat::batch_parallel(par, refs.iter().map(|t| t.len()).sum());
                encoder.encode_parts_reusing(refs, allowed, separator, edges, par, ids)
            })
            .map_err(to_py)?;
        let written = write_into(py, &parts, width, par.threads, out);
        ids.extend(parts.into_buffers());
        written
    }

    fn scratch(&self) -> PyResult<std::sync::MutexGuard<'_, crate::bpe::flat::Scratch>> {
        self.scratch.try_lock().map_err(|_| {
            pyo3::exceptions::PyRuntimeError::new_err(
                "this BatchEncoder is already encoding a batch in another thread",
            )
        })
    }
}

#[pymethods]
impl PyBatchEncoder {
    #[new]
    fn new(encoder: Py<PyEncoder>) -> Self {
        PyBatchEncoder {
            encoder,
            scratch: Mutex::new(Default::default()),
        }
    }

    /// `Encoder.encode_flat` into `out`, which grows when the ids do not fit (never shrinks;
    /// it must not be exported, e.g. viewed by numpy, then). Returns (number of ids, offsets).
    #[pyo3(signature = (texts, allowed, *, out, width, separator=None, num_threads=None, chunk_bytes=None, edges=None))]
    #[allow(clippy::too_many_arguments)]
    fn encode_texts<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<PyBackedStr>,
        allowed: Vec<Rank>,
        out: &Bound<'py, PyByteArray>,
        width: usize,
        separator: Option<(Rank, bool)>,
        num_threads: Option<usize>,
        chunk_bytes: Option<usize>,
        edges: Option<Vec<(bool, bool)>>,
    ) -> PyResult<(usize, Bound<'py, PyByteArray>)> {
        let refs: Vec<&str> = texts.iter().map(|t| &**t).collect();
        let par = parallel(num_threads, chunk_bytes)?;
        let mut scratch = self.scratch()?;
        self.encode_refs(
            py,
            &refs,
            &allowed,
            out,
            width,
            separator,
            par,
            edges.as_deref(),
            &mut scratch.ids,
        )
    }

    /// `encode_texts` of documents `lo..hi` of each `TextBlock` given, in order, each a whole
    /// document.
    #[pyo3(signature = (blocks, allowed, *, out, width, separator=None, num_threads=None, chunk_bytes=None))]
    #[allow(clippy::too_many_arguments)]
    fn encode_blocks<'py>(
        &self,
        py: Python<'py>,
        blocks: Vec<(Bound<'py, TextBlock>, usize, usize)>,
        allowed: Vec<Rank>,
        out: &Bound<'py, PyByteArray>,
        width: usize,
        separator: Option<(Rank, bool)>,
        num_threads: Option<usize>,
        chunk_bytes: Option<usize>,
    ) -> PyResult<(usize, Bound<'py, PyByteArray>)> {
        let par = parallel(num_threads, chunk_bytes)?;
        let mut refs: Vec<&str> = Vec::new();
        for (block, lo, hi) in &blocks {
            let block = block.get();
            if lo > hi || *hi > block.ends.len() {
                return Err(pyo3::exceptions::PyIndexError::new_err(format!(
                    "documents {lo}..{hi} of a block of {}",
                    block.ends.len()
                )));
            }
            refs.extend((*lo..*hi).map(|i| block.doc(i)));
        }
        let mut scratch = self.scratch()?;
        self.encode_refs(
            py,
            &refs,
            &allowed,
            out,
            width,
            separator,
            par,
            None,
            &mut scratch.ids,
        )
    }

    /// `Encoder.encode_file_ranges` into `out`, as `encode_texts` does. Returns (number of
    /// ids, offsets, number of bad UTF-8 sequences replaced).
    #[pyo3(signature = (ranges, allowed, *, out, width, separator=None, replace_errors=false, num_threads=None, chunk_bytes=None, edges=None))]
    #[allow(clippy::too_many_arguments)]
    fn encode_file_ranges<'py>(
        &self,
        py: Python<'py>,
        ranges: Vec<(String, u64, u64)>,
        allowed: Vec<Rank>,
        out: &Bound<'py, PyByteArray>,
        width: usize,
        separator: Option<(Rank, bool)>,
        replace_errors: bool,
        num_threads: Option<usize>,
        chunk_bytes: Option<usize>,
        edges: Option<Vec<(bool, bool)>>,
    ) -> PyResult<(usize, Bound<'py, PyByteArray>, u64)> {
        let par = parallel(num_threads, chunk_bytes)?;
        let mut scratch = self.scratch()?;
        let scratch = &mut *scratch;
        let replaced = py
            .detach(|| {
                crate::io::ranges::read_ranges_into(
                    &ranges,
                    replace_errors,
                    par.threads,
                    &mut scratch.texts,
                )
            })
            .map_err(to_py)?;
        let refs: Vec<&str> = scratch.texts[..ranges.len()]
            .iter()
            .map(|t| t.as_str())
            .collect();
        let (n, offsets) = self.encode_refs(
            py,
            &refs,
            &allowed,
            out,
            width,
            separator,
            par,
            edges.as_deref(),
            &mut scratch.ids,
        )?;
        Ok((n, offsets, replaced))
    }
}

/// Writes the flat ids of `parts` into the bytearray `out` (grown first when they do not fit)
/// on `threads` threads with the GIL released; returns the number of ids and the offsets.
fn write_into<'py>(
    py: Python<'py>,
    parts: &Parts,
    width: Width,
    threads: usize,
    out: &Bound<'py, PyByteArray>,
) -> PyResult<(usize, Bound<'py, PyByteArray>)> {
    let n = parts.total() * width.bytes();
    if out.len() < n {
        // An eighth more, so that slightly larger batches do not each grow it again.
        out.resize(n + n / 8)?;
    }
    // The export keeps `out` from being resized or freed until it is dropped (after writing).
    let buf = pyo3::buffer::PyBuffer::<u8>::get(out.as_any())?;
    if buf.readonly() || !buf.is_c_contiguous() || buf.len_bytes() < n {
        return Err(PyValueError::new_err(
            "out must be a writable, contiguous bytearray",
        ));
    }
    let addr = buf.buf_ptr() as usize;
    py.detach(|| {
        // SAFETY: `buf` exports `out`'s memory, at least `n` bytes, writable and contiguous;
        // while it is held the bytearray cannot be resized or freed. No Rust reference to
        // that memory exists elsewhere; Python code reading the bytearray meanwhile sees
        // bytes being written, as with `readinto`.
        let dst = unsafe { std::slice::from_raw_parts_mut(addr as *mut u8, n) };
        parts.write(width, dst, threads)
    })
    .map_err(to_py)?;
    drop(buf);
    let offsets: Vec<u8> = parts.offsets.iter().flat_map(|o| o.to_le_bytes()).collect();
    Ok((parts.total(), PyByteArray::new(py, &offsets)))
}

fn add_batch_encoder(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyBatchEncoder>()
}
// ---- end corpus encoding with reused buffers -------------------------------------------------
