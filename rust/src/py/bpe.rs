//! The `Encoder` class (BPE encoding and decoding) and the pattern functions `preset_patterns`
//! and `split_pieces`.
//!
//! An `Encoder` returns ids as lists that share one int object per id (`ints`), or, for the
//! array outputs, as flat bytes in a bytearray (`flat_bytes`). Long encode and
//! count calls go in rounds so that Ctrl-C is seen between them (the second `impl PyEncoder`).
//!
//! `PyEncoder`, its `inner` encoder and `build` are visible to the other class files (which
//! name the class through `super`): training continues an `Encoder`, `HfVocab` makes one, a
//! `BatchEncoder` holds one.

use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyByteArray, PyBytes, PyList, PyMemoryView, PyString};
use rayon::prelude::*;

use super::utf8::{self, Text, Texts, Utf8};
use super::{
    batch_rounds, grouped, parallel, parallel_batch, round_bytes, to_py, with_buffer,
    HOLD_GIL_BYTES,
};
use crate::bpe::encode::{Bpe, Encoder, Parallel};
use crate::bpe::flat::{batch_parallel, Parts, Separator, Width};
use crate::error::Error;
use crate::io::ranges::{read_ranges, read_ranges_into};
use crate::text::pretok::{Pretokenizer, PRESETS};
use crate::Rank;

pub(super) fn add(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyEncoder>()?;
    m.add_function(wrap_pyfunction!(preset_patterns, m)?)?;
    m.add_function(wrap_pyfunction!(split_pieces, m)?)?;
    Ok(())
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

/// A tokenizer's encoding machinery: vocabulary, merges, pattern and special tokens.
#[pyclass(module = "bytepair._core", frozen, name = "Encoder")]
pub(super) struct PyEncoder {
    pub(super) inner: Encoder,
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
    pub(super) fn build(
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

    /// A short text encoded on the calling thread, the GIL held, into a buffer kept for the
    /// next short call.
    fn encode_short<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed: &[Rank],
    ) -> PyResult<Bound<'py, PyList>> {
        with_buffer(&SHORT_IDS, |out| {
            out.clear();
            self.inner.encode_into(text, allowed, out).map_err(to_py)?;
            self.id_list(py, out)
        })
    }

    /// The ids as a list of the shared ints. Under the limited API (abi3) taking a reference
    /// and storing it are calls into the interpreter (`_Py_IncRef`, `PyList_SetItem`), which
    /// the version-specific build inlined: about 2 ns an id on the 2-core machine (the first
    /// 2,000 characters of the Shakespeare sample, 493 ids, o200k: 2.29 -> 3.29 us a call).
    /// For a few words it is within the shared machine's noise (bench_peers' short worker,
    /// "hello world", cl100k encode_ordinary, best of 24 alternating runs: 375 -> 400 ns).
    fn id_list<'py>(&self, py: Python<'py>, ids: &[Rank]) -> PyResult<Bound<'py, PyList>> {
        self.id_list_of(py, ids.len(), ids.iter().copied())
    }

    /// `id_list` of `len` ids given in turn (the parts of a text encoded in rounds).
    fn id_list_of<'py>(
        &self,
        py: Python<'py>,
        len: usize,
        ids: impl Iterator<Item = Rank>,
    ) -> PyResult<Bound<'py, PyList>> {
        // The table's pointer and length read once, not again after each reference taken.
        let ints: &[AtomicPtr<pyo3::ffi::PyObject>] = &self.ints;
        super::new_list(
            py,
            len,
            ids.map(|id| {
                match ints.get(id as usize) {
                    Some(slot) => {
                        let mut p = slot.load(Ordering::Acquire);
                        if p.is_null() {
                            p = self.make_int(py, id);
                        }
                        // SAFETY: `p` is a live int this encoder holds a reference to; the list
                        // takes a new one (inlined, but for the limited API's call).
                        unsafe { pyo3::ffi::Py_INCREF(p) };
                        p
                    }
                    None => {
                        let Ok(int) = id.into_pyobject(py);
                        int.into_any().into_ptr()
                    }
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
        texts: &[Text],
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
        let mut hidden = super::BatchLists::with_capacity(py, texts.len());
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
                            let result = inner
                                .encode_text(chunk, m, &mut ids, par.segments)
                                .map(|_| ids);
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
                out.set_item(i, hidden.hide(self.id_list(py, &ids)?))?;
            }
            Ok(())
        })?;
        drop(hidden); // the lists tracked again
        match failed {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    fn id_lists<'py>(&self, py: Python<'py>, lists: &[Vec<Rank>]) -> PyResult<Bound<'py, PyList>> {
        let mut out = super::BatchLists::gil_held(py, lists.len());
        for ids in lists {
            out.push(self.id_list(py, ids)?);
        }
        out.finish()
    }
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
        text: Utf8<'_>,
        num_threads: Option<usize>,
        chunk_bytes: Option<usize>,
    ) -> PyResult<Bound<'py, PyList>> {
        self.encode_str(py, &text, Vec::new(), num_threads, chunk_bytes)
    }

    /// Encodes with the special tokens whose ids are in `allowed` recognised.
    #[pyo3(signature = (text, allowed, *, num_threads=Some(1), chunk_bytes=None),
           text_signature = "(self, /, text, allowed, *, num_threads=1, chunk_bytes=None)")]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: Utf8<'_>,
        allowed: Vec<Rank>,
        num_threads: Option<usize>,
        chunk_bytes: Option<usize>,
    ) -> PyResult<Bound<'py, PyList>> {
        self.encode_str(py, &text, allowed, num_threads, chunk_bytes)
    }

    /// `encode` with every special token disallowed: the ids of `text`, or None when it holds
    /// a special token (the caller then says which). One call where `find_special` and
    /// `encode_ordinary` were two: what a short call costs is mostly the calls.
    fn encode_plain<'py>(
        &self,
        py: Python<'py>,
        text: Utf8<'_>,
    ) -> PyResult<Option<Bound<'py, PyList>>> {
        let text: &str = &text;
        if self.inner.has_special(text) {
            return Ok(None);
        }
        self.encode_str(py, text, Vec::new(), Some(1), None)
            .map(Some)
    }

    /// `count` with every special token disallowed and no limit: None when `text` holds a
    /// special token (see `encode_plain`).
    fn count_plain(&self, py: Python<'_>, text: Utf8<'_>) -> PyResult<Option<usize>> {
        let text: &str = &text;
        if self.inner.has_special(text) {
            return Ok(None);
        }
        if text.len() < HOLD_GIL_BYTES {
            return with_buffer(&SHORT_IDS, |out| {
                out.clear();
                self.inner.encode_ordinary_into(text, out).map_err(to_py)?;
                Ok(Some(out.len()))
            });
        }
        self.count_str(py, text, Vec::new(), None, Some(1), None)
            .map(Some)
    }

    #[pyo3(signature = (texts, allowed, *, num_threads=None, chunk_bytes=None))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Texts<'_>,
        allowed: Vec<Rank>,
        num_threads: Option<usize>,
        chunk_bytes: Option<usize>,
    ) -> PyResult<Bound<'py, PyList>> {
        let texts: &[Text] = &texts;
        let par = parallel_batch(num_threads, chunk_bytes, texts)?;
        if texts.iter().map(|t| t.len()).sum::<usize>() > round_bytes(par) {
            // Large batches go in rounds, with Ctrl-C looked at between them.
            return self.encode_batch_rounds(py, texts, &allowed, par);
        }
        if par.threads > 1 && texts.len() > 1 {
            return self.encode_batch_pipelined(py, texts, &allowed, par);
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
        text: Utf8<'_>,
        allowed: Vec<Rank>,
        limit: Option<usize>,
        num_threads: Option<usize>,
        chunk_bytes: Option<usize>,
    ) -> PyResult<usize> {
        self.count_str(py, &text, allowed, limit, num_threads, chunk_bytes)
    }

    /// `count` of each text.
    #[pyo3(signature = (texts, allowed, *, limit=None, num_threads=None, chunk_bytes=None))]
    fn count_batch(
        &self,
        py: Python<'_>,
        texts: Texts<'_>,
        allowed: Vec<Rank>,
        limit: Option<usize>,
        num_threads: Option<usize>,
        chunk_bytes: Option<usize>,
    ) -> PyResult<Vec<usize>> {
        let texts: &[Text] = &texts;
        let par = parallel_batch(num_threads, chunk_bytes, texts)?;
        if texts.iter().map(|t| t.len()).sum::<usize>() > round_bytes(par) {
            // Large batches go in rounds, with Ctrl-C looked at between them.
            return self.count_batch_rounds(py, texts, &allowed, limit, par);
        }
        py.detach(|| {
            let refs: Vec<&str> = texts.iter().map(|t| &**t).collect();
            self.inner.count_texts(&refs, &allowed, limit, par)
        })
        .map_err(to_py)
    }

    /// Empties the piece and segment caches (for benchmarks that measure a cold start).
    fn clear_cache(&self) {
        self.inner.clear_cache()
    }

    /// The segment cache's budget in bytes (0: off); with `max_bytes`, sets it first (and
    /// empties the cache).
    #[pyo3(signature = (max_bytes=None))]
    fn segment_cache(&self, max_bytes: Option<usize>) -> usize {
        if let Some(b) = max_bytes {
            self.inner.set_segment_cache(b);
        }
        self.inner.segment_cache()
    }

    /// (byte offset, id) of the first special token among `among` found in `text`, or None.
    fn find_special(
        &self,
        py: Python<'_>,
        text: Utf8<'_>,
        among: Vec<Rank>,
    ) -> PyResult<Option<(usize, Rank)>> {
        let text: &str = &text;
        py.detach(|| self.inner.find_special(text, &among))
            .map_err(to_py)
    }

    /// `find_special` over a batch in one call: the first text holding one of `among`, as
    /// (its index, the byte offset, the id). A call per text was a tenth of a bulk call over
    /// 8 KiB documents whose pieces were known (the GIL released and taken back each time).
    /// Only the texts that hold the first two characters of one of them are read as UTF-8:
    /// the encode call that follows reads them all again (`utf8`: nothing is kept on the
    /// strings).
    fn find_special_batch(
        &self,
        py: Python<'_>,
        texts: Vec<Bound<'_, PyString>>,
        among: Vec<Rank>,
    ) -> PyResult<Option<(usize, usize, Rank)>> {
        let mut heads: Option<Vec<utf8::Head>> = among
            .iter()
            .map(|&id| {
                let b = self.inner.token_bytes(id).ok()?;
                let mut c = std::str::from_utf8(b).ok()?.chars();
                Some((c.next()?, c.next()))
            })
            .collect();
        // One search per distinct start (Llama 3's 256 special tokens all start with "<|").
        if let Some(h) = heads.as_mut() {
            h.sort_unstable();
            h.dedup();
        }
        let mut which = Vec::new();
        let mut held = Vec::new();
        for (i, s) in texts.into_iter().enumerate() {
            if utf8::may_hold(&s, heads.as_deref())? {
                which.push(i);
                held.push(s);
            }
        }
        let held = Texts::new(held)?;
        let held: &[Text] = &held;
        py.detach(|| {
            for (&i, t) in which.iter().zip(held) {
                if let Some((at, id)) = self.inner.find_special(t, &among)? {
                    return Ok(Some((i, at, id)));
                }
            }
            Ok(None)
        })
        .map_err(to_py)
    }

    fn decode_bytes<'py>(&self, py: Python<'py>, ids: Vec<Rank>) -> PyResult<Bound<'py, PyBytes>> {
        if ids.len() < HOLD_GIL_BYTES / 4 {
            // A few tokens: the GIL is kept (see `HOLD_GIL_BYTES`).
            let mut out = Vec::with_capacity(ids.len() * 4);
            self.inner.decode_into(&ids, &mut out).map_err(to_py)?;
            return Ok(PyBytes::new(py, &out));
        }
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
    fn safe_prefix(&self, py: Python<'_>, text: Utf8<'_>) -> usize {
        let text: &str = &text;
        py.detach(|| {
            let cut = self.inner.safe_prefix(text);
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

    // -- Interop with other tokenizer formats (GPT-2, tiktoken, tokenizer.json) --

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

    // -- Array outputs (`crate::bpe::flat`): flat ids in one buffer, no int per id --

    /// Encodes each text as one document into a flat buffer of `width`-byte (2 or 4)
    /// little-endian ids, with `separator` = (id, prepend) before or after each document.
    /// Returns (ids as a writable memoryview, document offsets as little-endian u64 in a bytearray, one more than texts).
    #[pyo3(signature = (texts, allowed, *, width, separator=None, num_threads=None, chunk_bytes=None, edges=None))]
    #[allow(clippy::too_many_arguments)]
    fn encode_flat<'py>(
        &self,
        py: Python<'py>,
        texts: Texts<'_>,
        allowed: Vec<Rank>,
        width: usize,
        separator: Option<(Rank, bool)>,
        num_threads: Option<usize>,
        chunk_bytes: Option<usize>,
        edges: Option<Vec<(bool, bool)>>,
    ) -> PyResult<(Bound<'py, PyMemoryView>, Bound<'py, PyByteArray>)> {
        let texts: &[Text] = &texts;
        let par = parallel_batch(num_threads, chunk_bytes, texts)?;
        let width = Width::from_bytes(width).map_err(to_py)?;
        let separator = separator.map(|(id, prepend)| Separator { id, prepend });
        if texts.iter().map(|t| t.len()).sum::<usize>() > round_bytes(par) {
            // Large inputs go in rounds, with Ctrl-C looked at between them.
            let (rounds, offsets) =
                self.encode_flat_rounds(py, texts, &allowed, separator, edges.as_deref(), par)?;
            return rounds_bytes(py, &rounds, &offsets, width, par.threads);
        }
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
        // Sizes only to plan rounds: a file that cannot be looked at is reported by the read.
        let sizes: Vec<u64> = paths
            .iter()
            .map(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
            .collect();
        if sizes.iter().sum::<u64>() > round_bytes(par) as u64 {
            // Large inputs go in rounds, with Ctrl-C looked at between them.
            let opts = FileOptions {
                allowed: &allowed,
                separator,
                replace: replace_errors,
                width,
                par,
            };
            let (flat, replaced) = self.encode_files_rounds(py, &paths, &sizes, &opts)?;
            let (ids, offsets) = flat_result(py, flat.ids, &flat.offsets)?;
            return Ok((ids, offsets, replaced));
        }
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

    /// For corpus encoding: the ordinary tokens in one buffer, by id, each as its id
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

/// The flat ids of `parts`, written by `threads` threads with the GIL released into a new
/// bytearray, and the document offsets: what the array outputs return (`flat_result`).
///
/// The ids were lent to Python from a `Vec<u8>` through the buffer protocol, without a copy;
/// the limited API (abi3, one wheel for every CPython >= 3.10) cannot define a buffer before
/// 3.11. Here the threads write into the bytearray itself (zeroed first, on this thread); the
/// ids that the rounds and `encode_files` gather in a `Vec` are copied once (`flat_result`).
fn flat_bytes<'py>(
    py: Python<'py>,
    parts: &Parts,
    width: Width,
    threads: usize,
) -> PyResult<(Bound<'py, PyMemoryView>, Bound<'py, PyByteArray>)> {
    rounds_bytes(
        py,
        std::slice::from_ref(parts),
        &parts.offsets,
        width,
        threads,
    )
}

/// `flat_bytes` of the rounds of one call (or of one batch): each round written straight into
/// its part of the bytearray; `offsets` are the document offsets of the whole output.
fn rounds_bytes<'py>(
    py: Python<'py>,
    rounds: &[Parts],
    offsets: &[u64],
    width: Width,
    threads: usize,
) -> PyResult<(Bound<'py, PyMemoryView>, Bound<'py, PyByteArray>)> {
    let w = width.bytes();
    let n = rounds.iter().map(|p| p.total() * w).sum();
    let ids = super::bytearray_with(py, n, |dst| {
        py.detach(|| {
            let mut rest = dst;
            for parts in rounds {
                let (mine, tail) = std::mem::take(&mut rest).split_at_mut(parts.total() * w);
                parts.write_uninit(width, mine, threads)?;
                rest = tail;
            }
            Ok::<_, Error>(())
        })
        .map_err(to_py)
    })?;
    Ok((PyMemoryView::from(ids.as_any())?, offset_bytes(py, offsets)))
}

/// The ids as a writable memoryview of a bytearray (copied from `ids`) and the document offsets
/// as little-endian u64 in a bytearray: what the array outputs return.
fn flat_result<'py>(
    py: Python<'py>,
    ids: Vec<u8>,
    offsets: &[u64],
) -> PyResult<(Bound<'py, PyMemoryView>, Bound<'py, PyByteArray>)> {
    let ids = PyByteArray::new(py, &ids);
    Ok((PyMemoryView::from(ids.as_any())?, offset_bytes(py, offsets)))
}

fn offset_bytes<'py>(py: Python<'py>, offsets: &[u64]) -> Bound<'py, PyByteArray> {
    let offsets: Vec<u8> = offsets.iter().flat_map(|o| o.to_le_bytes()).collect();
    PyByteArray::new(py, &offsets)
}

// --- Ctrl-C during long encode / count calls ---
//
// `encode`, `encode_batch`, `count`, `count_batch` and the array outputs (`encode_flat`,
// `encode_files`) release the GIL for the whole kernel, so a Ctrl-C used to wait until the end
// (16.8 s on 836 MB). Inputs larger than `round_bytes` now go in rounds of about that many
// bytes: each round runs with the GIL released, on all the threads asked for, and between
// rounds the GIL is taken back briefly to run `check_signals`, which raises KeyboardInterrupt
// (or whatever a signal handler raises). A large text is cut into rounds at the encoder's
// independent cuts (`Encoder::chunks`, the cuts the threads already use), a large file at the
// cuts `Encoder::encode_files` reads it by (`count::file_cuts`), so the ids are those of the
// whole; whole texts of a batch, and whole files, are grouped into rounds.

thread_local! {
    /// The ids of short calls, reused: no allocation per call.
    static SHORT_IDS: std::cell::RefCell<Vec<Rank>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The flat output of the array calls made in rounds: the ids as `width`-byte little-endian
/// bytes, and where each document's ids end (`offsets`, starting with 0).
struct Flat {
    ids: Vec<u8>,
    offsets: Vec<u64>,
    width: Width,
}

impl Flat {
    /// Room for the ids of `bytes` of input reserved at once (about one id per 3 bytes, as
    /// `Encoder::encode_files` reserves): growing by doubling would copy the ids again and again.
    fn new(docs: usize, bytes: impl Iterator<Item = u64>, width: Width) -> Self {
        let total = usize::try_from(bytes.fold(0u64, u64::saturating_add)).unwrap_or(usize::MAX);
        let mut offsets = Vec::with_capacity(docs + 1);
        offsets.push(0);
        Flat {
            ids: Vec::with_capacity((total / 3).saturating_mul(width.bytes())),
            offsets,
            width,
        }
    }

    /// Ids so far.
    fn len(&self) -> u64 {
        (self.ids.len() / self.width.bytes()) as u64
    }
}

/// What `encode_files` was asked, for its rounds.
struct FileOptions<'a> {
    allowed: &'a [Rank],
    separator: Option<Separator>,
    replace: bool,
    width: Width,
    par: Parallel,
}

impl PyEncoder {
    /// `encode` of `text`'s UTF-8.
    fn encode_str<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed: Vec<Rank>,
        num_threads: Option<usize>,
        chunk_bytes: Option<usize>,
    ) -> PyResult<Bound<'py, PyList>> {
        let par = parallel(num_threads, chunk_bytes)?;
        if text.len() < HOLD_GIL_BYTES && par.threads == 1 && par.chunk_bytes.is_none() {
            return self.encode_short(py, text, &allowed);
        }
        if text.len() > round_bytes(par) {
            // Large texts go in rounds, with Ctrl-C looked at between them.
            let parts = self.encode_rounds(py, text, &allowed, par)?;
            return self.parts_list(py, &parts);
        }
        let ids = py
            .detach(|| {
                if par.threads == 1 && par.chunk_bytes.is_none() {
                    let mut out = Vec::with_capacity(text.len() / 4);
                    self.inner
                        .encode_into(text, &allowed, &mut out)
                        .map(|_| out)
                } else {
                    self.inner
                        .encode_texts(&[text], &allowed, par)
                        .map(|mut v| v.pop().unwrap_or_default())
                }
            })
            .map_err(to_py)?;
        self.id_list(py, &ids)
    }

    /// `count` of `text`'s UTF-8.
    fn count_str(
        &self,
        py: Python<'_>,
        text: &str,
        allowed: Vec<Rank>,
        limit: Option<usize>,
        num_threads: Option<usize>,
        chunk_bytes: Option<usize>,
    ) -> PyResult<usize> {
        let par = parallel(num_threads, chunk_bytes)?;
        if text.len() > round_bytes(par) {
            // Large texts go in rounds, with Ctrl-C looked at between them.
            return self.count_rounds(py, text, &allowed, limit, par);
        }
        py.detach(|| {
            self.inner
                .count_texts(&[text], &allowed, limit, par)
                .map(|v| v[0])
        })
        .map_err(to_py)
    }

    /// `encode` of one large text, in rounds cut at independent cuts: the ids of each round
    /// (the list is made from them, with no copy of all the ids in one buffer between).
    fn encode_rounds(
        &self,
        py: Python<'_>,
        text: &str,
        allowed: &[Rank],
        par: Parallel,
    ) -> PyResult<Vec<Vec<Rank>>> {
        let rounds = py.detach(|| self.inner.chunks(text, round_bytes(par)));
        let mut parts = Vec::new();
        for round in rounds {
            let part = py
                .detach(|| self.inner.encode_texts(&[round], allowed, par))
                .map_err(to_py)?;
            parts.extend(part);
            py.check_signals()?;
        }
        Ok(parts)
    }

    /// The list of the ids of `encode_rounds`.
    fn parts_list<'py>(
        &self,
        py: Python<'py>,
        parts: &[Vec<Rank>],
    ) -> PyResult<Bound<'py, PyList>> {
        let len = parts.iter().map(Vec::len).sum();
        self.id_list_of(py, len, parts.iter().flatten().copied())
    }

    /// `encode_batch` of a large batch, in rounds.
    fn encode_batch_rounds<'py>(
        &self,
        py: Python<'py>,
        texts: &[Text],
        allowed: &[Rank],
        par: Parallel,
    ) -> PyResult<Bound<'py, PyList>> {
        let mut lists = Vec::with_capacity(texts.len());
        for (first, end) in batch_rounds(texts, round_bytes(par)) {
            if end - first == 1 && texts[first].len() > round_bytes(par) {
                let parts = self.encode_rounds(py, &texts[first], allowed, par)?;
                lists.push(self.parts_list(py, &parts)?.into_any());
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

    /// `encode_flat` of large input, in rounds: whole texts grouped, and a text larger than a
    /// round cut at independent cuts (the separator goes only at the text's own edges, as
    /// `edges` says for each text). Returns each round's ids, still in its group buffers, and
    /// where each text's ids end in the whole output (`rounds_bytes` writes the output once:
    /// appending each round to a growing buffer and then copying that into the bytearray wrote
    /// every id twice more, into fresh memory each time).
    #[allow(clippy::too_many_arguments)]
    fn encode_flat_rounds(
        &self,
        py: Python<'_>,
        texts: &[Text],
        allowed: &[Rank],
        separator: Option<Separator>,
        edges: Option<&[(bool, bool)]>,
        par: Parallel,
    ) -> PyResult<(Vec<Parts>, Vec<u64>)> {
        if edges.is_some_and(|e| e.len() != texts.len()) {
            return Err(to_py(Error::Invalid(
                "edges must have one entry per text".into(),
            )));
        }
        let edge = |i: usize| edges.map_or((true, true), |e| e[i]);
        let size = round_bytes(par);
        let mut rounds: Vec<Parts> = Vec::new();
        let mut offsets = Vec::with_capacity(texts.len() + 1);
        offsets.push(0u64);
        let mut base = 0u64;
        // One round: its ids kept in `rounds`; the end of each of its texts' ids.
        let mut round = |texts: &[&str], edges: &[(bool, bool)]| -> PyResult<Vec<u64>> {
            let parts = py
                .detach(|| {
                    self.inner
                        .encode_parts_edges(texts, allowed, separator, Some(edges), par)
                })
                .map_err(to_py)?;
            let ends = parts.offsets[1..].iter().map(|o| base + o).collect();
            base += parts.total() as u64;
            rounds.push(parts);
            py.check_signals()?;
            Ok(ends)
        };
        for (first, end) in batch_rounds(texts, size) {
            if end - first == 1 && texts[first].len() > size {
                let (starts, ends) = edge(first);
                let chunks = py.detach(|| self.inner.chunks(&texts[first], size));
                let last = chunks.len().saturating_sub(1);
                let mut text_end = *offsets.last().unwrap();
                for (k, chunk) in chunks.iter().enumerate() {
                    let e = round(&[chunk], &[(starts && k == 0, ends && k == last)])?;
                    text_end = *e.last().unwrap_or(&text_end);
                }
                offsets.push(text_end);
                continue;
            }
            let refs: Vec<&str> = texts[first..end].iter().map(|t| &**t).collect();
            let round_edges: Vec<(bool, bool)> = (first..end).map(edge).collect();
            offsets.extend(round(&refs, &round_edges)?);
        }
        Ok((rounds, offsets))
    }

    /// `encode_files` of large input, in rounds: whole files grouped (`Encoder::encode_files`
    /// on each group), and a file larger than a round read and encoded a byte range at a time.
    /// Returns the output and the number of bad UTF-8 sequences replaced.
    fn encode_files_rounds(
        &self,
        py: Python<'_>,
        paths: &[String],
        sizes: &[u64],
        opts: &FileOptions<'_>,
    ) -> PyResult<(Flat, u64)> {
        let size = round_bytes(opts.par) as u64;
        let mut flat = Flat::new(paths.len(), sizes.iter().copied(), opts.width);
        let mut replaced = 0u64;
        // Whole files grouped up to a round; a larger one on its own, cut into rounds itself.
        for (first, end) in grouped(sizes.iter().copied(), size) {
            if end - first == 1 && sizes[first] > size {
                replaced += self.encode_file_rounds(py, &paths[first], opts, &mut flat)?;
                continue;
            }
            let (ids, offsets, n) = py
                .detach(|| {
                    self.inner.encode_files(
                        &paths[first..end],
                        opts.allowed,
                        opts.separator,
                        opts.replace,
                        opts.par,
                        opts.width,
                        None,
                    )
                })
                .map_err(to_py)?;
            let base = flat.len();
            flat.ids.extend_from_slice(&ids);
            flat.offsets.extend(offsets[1..].iter().map(|o| base + o));
            replaced += n;
            py.check_signals()?;
        }
        Ok((flat, replaced))
    }

    /// One large file into `flat` as one document, a round at a time: byte ranges of about a
    /// round, cut where `Encoder::encode_files` cuts it (`count::file_cuts` at the same
    /// targets), so the ids are those it gives. Returns the number of replacements.
    fn encode_file_rounds(
        &self,
        py: Python<'_>,
        path: &str,
        opts: &FileOptions<'_>,
        flat: &mut Flat,
    ) -> PyResult<u64> {
        let par = opts.par;
        let size = round_bytes(par) as u64;
        let (bounds, _) = py
            .detach(|| crate::bpe::flat::file_bounds(&self.inner, path, size))
            .map_err(to_py)?;
        let last = bounds.len() - 2;
        let mut replaced = 0u64;
        let mut texts = Vec::new(); // one buffer, read into round after round
        for (k, w) in bounds.windows(2).enumerate() {
            let range = [(path.to_owned(), w[0], w[1])];
            let edges = [(k == 0, k == last)];
            replaced += py
                .detach(|| {
                    let replaced = read_ranges_into(&range, opts.replace, par.threads, &mut texts)?;
                    let text = texts[0].as_str();
                    let parts = self.inner.encode_parts_edges(
                        &[text],
                        opts.allowed,
                        opts.separator,
                        Some(&edges),
                        batch_parallel(par, text.len()),
                    )?;
                    parts.append_to(opts.width, &mut flat.ids, par.threads)?;
                    Ok::<_, Error>(replaced)
                })
                .map_err(to_py)?;
            py.check_signals()?;
        }
        let n = flat.len();
        flat.offsets.push(n);
        Ok(replaced)
    }

    /// `count_batch` of a large batch, in rounds.
    fn count_batch_rounds(
        &self,
        py: Python<'_>,
        texts: &[Text],
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
