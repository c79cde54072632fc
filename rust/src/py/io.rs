//! Formats read in Rust: the `HfModel` and `HfVocab` classes (the vocab and merges of a Hugging
//! Face tokenizer.json) and `jsonl_texts` / `jsonl_block` (the texts of JSON lines, for corpus
//! encoding).
//!
//! The `TextBlock` that `jsonl_block` makes is defined in `mod.rs`, since `BatchEncoder`
//! (`arrays.rs`) encodes it; `HfVocab.rank_encoder` makes an `Encoder` (`super::PyEncoder`).

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use super::{to_py, PyEncoder, TextBlock};
use crate::bpe::encode::Bpe;
use crate::text::pretok::Pretokenizer;
use crate::Rank;

pub(super) fn add(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyHfModel>()?;
    m.add_class::<PyHfVocab>()?;
    m.add_function(wrap_pyfunction!(jsonl_texts, m)?)?;
    m.add_function(wrap_pyfunction!(jsonl_block, m)?)?;
    Ok(())
}

// ---- Hugging Face tokenizer.json, the fast reader ----
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

// ---- JSON lines for corpus encoding ----

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
