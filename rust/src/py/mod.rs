//! The PyO3 bindings: the only module that knows about Python.
//!
//! Python owns the policy (argument checks, special-token rules, file formats); these classes
//! are the mechanism. Every call that does real work releases the GIL. Errors become the
//! exception classes of `bytepair.errors` (all `ValueError` subclasses) or `OSError`s.
//!
//! One file per group of Python classes (`bpe`, `training`, `wordpiece`, `sentencepiece`,
//! `arrays`, `io`; `compare` and `rows` are one function each), each
//! registering its own with an `add` called from `_core` below. Class files never import each
//! other: what several of them need is here (errors, progress callbacks, thread counts, the
//! `TextBlock`s of JSON lines) or is named from here (the `Encoder` class).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyPermissionError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::bpe::encode::Parallel;
use crate::error::Error;

mod arrays;
mod bpe;
mod compare;
mod io;
mod rows;
mod sentencepiece;
mod spares;
mod training;
mod utf8;
mod wordpiece;
mod words;

// The `Encoder` class, defined with its methods in `bpe.rs`. The other class files that take or
// make one (the `base` of continued training, `HfVocab.rank_encoder`, `BatchEncoder`) name it
// from here.
use bpe::PyEncoder;
// The `WordPiece` class (`wordpiece.rs`), whose encoder `WordCounter.encode_stats` (`words.rs`) runs.
use wordpiece::PyWordPiece;

// The module says it needs the GIL: on a free-threaded CPython (3.13t and later) the
// interpreter then keeps the GIL on while it is imported. Nothing here has been run without a
// GIL yet (the shared int objects of `bpe.rs`, the thread-local caches and the `Mutex`ed
// scratch buffers were written for it), so the claim PyO3 makes by default is not made.
#[pymodule(gil_used = true)]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    bpe::add(m)?; // Encoder, and splitting text into pieces
    training::add(m)?; // PieceCounter and the training functions
    wordpiece::add(m)?; // WordPiece encoding
    words::add(m)?; // word counts, WordPiece and Unigram training
    sentencepiece::add(m)?; // SentencePiece .model files (Unigram, BPE)
    io::add(m)?; // the fast tokenizer.json reader, JSON lines for corpus encoding
    m.add_class::<TextBlock>()?; // documents of JSON lines, read by io, encoded by arrays
    arrays::add(m)?; // corpus encoding with reused buffers
    compare::add(m)?; // compare's numbers of a block, for byte-level BPE encoders
    rows::add(m)?; // the padded rows of a model-inputs call as lists
    Ok(())
}

/// Texts shorter than this are encoded without releasing the GIL (`bpe.rs`, `sentencepiece.rs`,
/// `wordpiece.rs`): on "hello world", releasing and taking it back (`take_gil`, `drop_gil`,
/// their mutexes) were about a tenth of the call in `perf`, and a few words take well under a
/// microsecond to encode.
const HOLD_GIL_BYTES: usize = 1024;

/// Runs `f` on this thread's buffer `key`, or on a fresh one while that buffer is in use. Making
/// a list of ids can run Python code on the same thread (a garbage collection calling a
/// `__del__` that encodes), which calls back in: borrowing the buffer again would panic.
fn with_buffer<T: Default + 'static, R>(
    key: &'static std::thread::LocalKey<std::cell::RefCell<T>>,
    f: impl FnOnce(&mut T) -> R,
) -> R {
    key.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buffer) => f(&mut buffer),
        Err(_) => f(&mut T::default()),
    })
}

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
        Error::Format(_) => bytepair_error("FormatError", msg),
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
        segments: true,
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
    texts: &[impl std::ops::Deref<Target = str>],
) -> PyResult<Parallel> {
    let par = parallel(num_threads, chunk_bytes)?;
    let small = || texts.iter().map(|t| t.len()).sum::<usize>() < SMALL_BATCH_BYTES;
    Ok(if par.threads > 1 && chunk_bytes.is_none() && small() {
        Parallel::SERIAL
    } else {
        par
    })
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

// Rounds: a call with more input than `round_bytes` is done in rounds, each with the GIL
// released, and pending signals (Ctrl-C) are looked at between them.

/// Bytes of input per round between two looks at pending signals: a round takes well under a
/// second on one thread, and costs one GIL round trip.
pub(super) fn round_bytes(par: Parallel) -> usize {
    (8usize << 20).saturating_mul(par.threads.max(1))
}

/// The texts of a batch grouped into rounds: (first, end) ranges of texts whose total is at most
/// `size` bytes, or a single text (which may be larger; it is then cut into rounds itself).
pub(super) fn batch_rounds(
    texts: &[impl std::ops::Deref<Target = str>],
    size: usize,
) -> Vec<(usize, usize)> {
    grouped(texts.iter().map(|t| t.len() as u64), size as u64)
}

/// Items of the given sizes grouped into (first, end) runs of at most `size` in all, or single
/// items (which may be larger).
pub(super) fn grouped(sizes: impl Iterator<Item = u64>, size: u64) -> Vec<(usize, usize)> {
    let mut rounds = Vec::new();
    let (mut first, mut total, mut n) = (0, 0u64, 0);
    for (i, len) in sizes.enumerate() {
        if i > first && total.saturating_add(len) > size {
            rounds.push((first, i));
            (first, total) = (i, 0);
        }
        total = total.saturating_add(len);
        n = i + 1;
    }
    if first < n {
        rounds.push((first, n));
    }
    rounds
}

/// A bytearray of `n` bytes (new, or one kept for reuse: `spares`), every one of them written
/// by `init` (which gets them as uninitialized): `PyByteArray::new_with` zeroes them first, a
/// whole pass over fresh memory (the array outputs' page faults and a memset were a tenth of a
/// bulk call over unseen text). If `init` fails, the bytearray is dropped unseen.
pub(crate) fn bytearray_with<'py>(
    py: Python<'py>,
    n: usize,
    init: impl FnOnce(&mut [std::mem::MaybeUninit<u8>]) -> PyResult<()>,
) -> PyResult<Bound<'py, pyo3::types::PyByteArray>> {
    let (array, room) = spares::bytearray(py, n)?;
    // Not asked for in transparent huge pages (as `new_list` is): where free huge pages are
    // short, the kernel compacts memory on the first write of each 2 MiB, and a bulk call over
    // 8 MiB of text seen before ran at half speed in 3 runs of 7 (bench/README.md, session 24).
    let buf = if n == 0 {
        &mut []
    } else {
        // SAFETY: the bytearray is new or kept, and no other code holds it; its buffer is `n` bytes
        // that live as long as it does, and `init` only writes them.
        unsafe {
            std::slice::from_raw_parts_mut(
                pyo3::ffi::PyByteArray_AsString(array.as_ptr()) as *mut std::mem::MaybeUninit<u8>,
                n,
            )
        }
    };
    init(buf)?;
    spares::keep(&array, room);
    Ok(array)
}

/// A list of the first `len` items of `items`, each a new reference (`items` has at least
/// `len`).
///
/// A list of millions of ids is a fresh mapping of 8 bytes an item, and a 4 KiB page fault per
/// 512 items cost more than filling them (a 32 MB text of one digit: 10.7 M ids, 0.08 s of list
/// against 0.065 s of encoding; the same text cut to 4 MB: 0.001 s, its list in memory the
/// allocator had kept). Lists of 4 MiB and more ask for transparent huge pages before the first
/// write, as the encoder's own large buffers do.
pub(crate) fn new_list<'py>(
    py: Python<'py>,
    len: usize,
    items: impl Iterator<Item = *mut pyo3::ffi::PyObject>,
) -> PyResult<Bound<'py, pyo3::types::PyList>> {
    let n = pyo3::ffi::Py_ssize_t::try_from(len)
        .map_err(|_| PyValueError::new_err("too many items for a list"))?;
    // SAFETY: PyList_New gives a new list of `len` null slots (or null with an error set); each
    // slot is set once below, to a new reference, before the list is seen by anyone (a slot
    // `items` did not fill would be a null the list's owner reads: asserted against).
    unsafe {
        let list = pyo3::ffi::PyList_New(n);
        if list.is_null() {
            return Err(PyErr::fetch(py));
        }
        // The slots written through a pointer read once: `PyList_SET_ITEM` reads the list's
        // item pointer again for every item, since the reference each item takes is a write
        // the compiler cannot tell apart from it.
        #[cfg(not(feature = "abi3"))]
        let slots = {
            let slots = (*list.cast::<pyo3::ffi::PyListObject>()).ob_item;
            crate::bpe::encode::advise_huge(slots as *const u8, len * std::mem::size_of::<usize>());
            slots
        };
        let list = Bound::from_owned_ptr(py, list);
        let mut filled = 0;
        for p in items.take(len) {
            #[cfg(not(feature = "abi3"))]
            {
                *slots.add(filled) = p;
            }
            #[cfg(feature = "abi3")]
            pyo3::ffi::PyList_SetItem(list.as_ptr(), filled as pyo3::ffi::Py_ssize_t, p);
            filled += 1;
        }
        assert_eq!(filled, len, "new_list: fewer items than its length");
        Ok(list.cast_into_unchecked())
    }
}

/// A new list of the shared ints of `ids` (`ints[id]` for each; every id below `ints.len()`).
pub(crate) fn int_list<'py>(
    py: Python<'py>,
    ints: &[Py<PyAny>],
    ids: &[crate::Rank],
) -> PyResult<Bound<'py, pyo3::types::PyList>> {
    new_list(
        py,
        ids.len(),
        ids.iter()
            .map(|&id| ints[id as usize].clone_ref(py).into_ptr()),
    )
}

/// The lists of a batch call, each out of the cyclic collector's sight (untracked) until the
/// batch is made, then given back to it all at once (`finish`, or on drop).
///
/// Made one after another with the GIL held, every 700 new lists started a collection, and the
/// lists already made (kept alive by this batch, so promoted to the older generations) were
/// traversed again and again: 19 % of a SentencePiece `encode_batch` of 34 k short lines went
/// to the collector (`visit_decref`, `list_traverse`). A list of ints can be in no cycle while
/// only this batch holds it, so nothing is missed; the collector sees each list once, after.
pub(crate) struct BatchLists<'py> {
    py: Python<'py>,
    lists: Vec<Bound<'py, pyo3::types::PyList>>,
    /// Dropped (the collector back on) once a due collection has run (`finish`); otherwise
    /// after the lists are tracked again (fields drop after `drop` runs).
    collector: Option<CollectorOff<'py>>,
}

impl<'py> BatchLists<'py> {
    pub(crate) fn with_capacity(py: Python<'py>, n: usize) -> Self {
        BatchLists {
            py,
            lists: Vec::with_capacity(n),
            collector: None,
        }
    }

    /// `with_capacity` for a caller that makes every list with the GIL held, from here to
    /// `finish` (no Python code runs in between): the collector is also switched off until
    /// then (`CollectorOff`).
    pub(crate) fn gil_held(py: Python<'py>, n: usize) -> Self {
        BatchLists {
            py,
            lists: Vec::with_capacity(n),
            collector: Some(CollectorOff::new(py)),
        }
    }

    /// Adds a list that nothing else holds, in order (for `finish`).
    pub(crate) fn push(&mut self, list: Bound<'py, pyo3::types::PyList>) {
        // SAFETY: `list` is a live, tracked list (PyList_New tracks it); untracking is undone
        // for every list in `track_all`.
        unsafe { pyo3::ffi::PyObject_GC_UnTrack(list.as_ptr().cast()) };
        self.lists.push(list);
    }

    /// `list`, untracked until this is dropped, for a caller that places it itself.
    pub(crate) fn hide(
        &mut self,
        list: Bound<'py, pyo3::types::PyList>,
    ) -> Bound<'py, pyo3::types::PyList> {
        self.push(list.clone());
        list
    }

    fn track_all(&mut self) {
        for list in &self.lists {
            // SAFETY: each list was untracked by `push` and not tracked since.
            unsafe { pyo3::ffi::PyObject_GC_Track(list.as_ptr().cast()) };
        }
    }

    /// The list of the lists, each tracked again.
    pub(crate) fn finish(mut self) -> PyResult<Bound<'py, pyo3::types::PyList>> {
        // A collection that came due while the lists were made runs now, while they are still
        // out of its sight (`collect_due`), and with the collector still off: on, the calls
        // into `gc` would ask for one more, which Python 3.12 runs after the call, through
        // every list. Then the collector back on, each list tracked again and moved into the
        // list of lists, its reference handed over (a new one and the old one's release were
        // two more writes to each list, most of them no longer in the caches).
        let was_on = self.collector.as_ref().is_some_and(|off| off.was_on);
        if was_on && self.lists.len() >= COLLECT_DUE_LISTS {
            collect_due(self.py)?;
        }
        self.collector = None;
        let n = self.lists.len();
        let lists = std::mem::take(&mut self.lists);
        new_list(
            self.py,
            n,
            lists.into_iter().map(|list| {
                // SAFETY: each list was untracked by `push` and not tracked since.
                unsafe { pyo3::ffi::PyObject_GC_Track(list.as_ptr().cast()) };
                list.into_ptr()
            }),
        )
    }
}

/// Batches of fewer lists leave a due collection to the collector (`collect_due`).
const COLLECT_DUE_LISTS: usize = 256;

/// Runs a collection of the youngest generation if one is due (more new containers than its
/// threshold), for a batch that kept the collector off while it made its lists
/// (`BatchLists::gil_held`) and found it on. Where the collector stays on, Python 3.12 has
/// already asked for a collection to run after the call, and 3.11 has run the due ones inside.
///
/// Python 3.12 and later only ask for a due collection inside an allocation and run it once the
/// call has returned, when the batch's lists are tracked again: that young collection then went
/// through every list just made (`list_traverse` and the visits of its items: a repeated
/// SentencePiece `encode_batch` of 34 k lines under 3.12 counted 266 M instructions with it and
/// 245 M without, in cachegrind). Run here, before they are tracked, it finds only what else is
/// young. The lists join the youngest generation afterwards and are traversed once by the next
/// collection that finds them alive, as any new container is, or never if they are freed first.
fn collect_due(py: Python<'_>) -> PyResult<()> {
    let gc = py.import("gc")?;
    let count: Vec<isize> = gc.call_method0("get_count")?.extract()?;
    let threshold: Vec<isize> = gc.call_method0("get_threshold")?.extract()?;
    let (Some(&count), Some(&threshold)) = (count.first(), threshold.first()) else {
        return Ok(());
    };
    if threshold > 0 && count > threshold {
        gc.call_method1("collect", (0,))?;
    }
    Ok(())
}

/// The cyclic collector switched off while a batch's lists are made, and back on (if it was on)
/// when this is dropped.
///
/// Python 3.11 starts a collection inside the allocation of every 700th new container. A
/// SentencePiece `encode_batch` of 34 k lines (`bench_sentencepiece.py`'s B) makes 34 k lists:
/// 58 to 63 young and 5 or 6 older collections ran inside each call, and in one of three calls
/// a full one, 4.6 to 5.1 ms of a 45 ms call; with the previous batch's lists still held, the
/// older collections went through them too (unseen 27-31 MB/s against 35-41 with them freed).
/// Python 3.12 and later only ask for a collection there and run it once the call has
/// returned. Either way the collection that came due runs once, in `BatchLists::finish`,
/// before the lists are tracked again (`collect_due`). Only for code that holds the GIL from
/// `new` to the drop, so that no other thread sees the collector off (or turns it off or on
/// itself in between).
pub(crate) struct CollectorOff<'py> {
    _py: Python<'py>,
    was_on: bool,
}

impl<'py> CollectorOff<'py> {
    pub(crate) fn new(py: Python<'py>) -> Self {
        // SAFETY: the GIL is held (`py`).
        let was_on = unsafe { pyo3::ffi::PyGC_Disable() } == 1;
        CollectorOff { _py: py, was_on }
    }
}

impl Drop for CollectorOff<'_> {
    fn drop(&mut self) {
        if self.was_on {
            // SAFETY: the GIL is held (the `Python` token this was made with).
            unsafe { pyo3::ffi::PyGC_Enable() };
        }
    }
}

impl Drop for BatchLists<'_> {
    fn drop(&mut self) {
        self.track_all();
    }
}
