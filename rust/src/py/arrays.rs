//! Corpus encoding with reused buffers: the `BatchEncoder` class, whose batches are written
//! into a `bytearray` the caller passes again (`write_into`).
//!
//! `encode_corpus` encodes batch after batch for the whole run. Allocating each batch's texts,
//! id buffers and output anew let glibc's heap keep holes of every size, and peak RSS grew with
//! the corpus (179 / 211 / 266 MB at 100 MB / 262 MB / 1 GB). A `BatchEncoder` keeps the texts
//! read in Rust and the id buffers from one batch to the next (`crate::bpe::flat::Scratch`), and
//! writes the flat ids into a `bytearray` the caller owns and passes again (two, taken in turn,
//! in `encode_corpus`), as `readinto` does: it only grows, and stays the size of the largest
//! batch.
//!
//! The `Encoder` it wraps and the `TextBlock`s it encodes are named through `super` (they are
//! also used by other class files).

use std::sync::Mutex;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyMemoryView};

use super::utf8::{Text, Texts};
use super::{parallel, to_py, PyEncoder, TextBlock};
use crate::bpe::encode::Parallel;
use crate::bpe::flat::{Parts, Separator, Width};
use crate::Rank;

pub(super) fn add(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyBatchEncoder>()?;
    Ok(())
}

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
        texts: Texts<'_>,
        allowed: Vec<Rank>,
        out: &Bound<'py, PyByteArray>,
        width: usize,
        separator: Option<(Rank, bool)>,
        num_threads: Option<usize>,
        chunk_bytes: Option<usize>,
        edges: Option<Vec<(bool, bool)>>,
    ) -> PyResult<(usize, Bound<'py, PyByteArray>)> {
        let texts: &[Text] = &texts;
        let refs: Vec<&str> = texts.iter().map(|t| &**t).collect();
        // A corpus is read once: its documents are not kept in the segment cache.
        let par = Parallel {
            segments: false,
            ..parallel(num_threads, chunk_bytes)?
        };
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
        // A corpus is read once: its documents are not kept in the segment cache.
        let par = Parallel {
            segments: false,
            ..parallel(num_threads, chunk_bytes)?
        };
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
        // A corpus is read once: its documents are not kept in the segment cache.
        let par = Parallel {
            segments: false,
            ..parallel(num_threads, chunk_bytes)?
        };
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
    if !out.is_exact_instance_of::<PyByteArray>() {
        return Err(PyValueError::new_err("out must be a bytearray"));
    }
    let n = parts.total() * width.bytes();
    if out.len() < n {
        // An eighth more, so that slightly larger batches do not each grow it again.
        out.resize(n + n / 8)?;
    }
    // A memoryview of `out` is an export: while it lives the bytearray cannot be resized or
    // freed. The limited API (abi3) has no `PyBuffer` before 3.11; an exact bytearray's memory
    // is one writable, contiguous block at `data()` (a subclass could export other memory).
    let view = PyMemoryView::from(out.as_any())?;
    let addr = out.data() as usize;
    py.detach(|| {
        // SAFETY: `out`'s memory is at least `n` bytes, writable and contiguous; while `view`
        // is held the bytearray cannot be resized or freed. No Rust reference to that memory
        // exists elsewhere; Python code reading the bytearray meanwhile sees bytes being
        // written, as with `readinto`.
        let dst = unsafe { std::slice::from_raw_parts_mut(addr as *mut u8, n) };
        parts.write(width, dst, threads)
    })
    .map_err(to_py)?;
    view.call_method0("release")?;
    let offsets: Vec<u8> = parts.offsets.iter().flat_map(|o| o.to_le_bytes()).collect();
    Ok((parts.total(), PyByteArray::new(py, &offsets)))
}
