//! `compare_block`: `compare`'s numbers for one block of text and several byte-level BPE
//! encoders, in one call (`crate::compare`).

use pyo3::prelude::*;

use super::utf8::Utf8;
use super::{to_py, PyEncoder};
use crate::bpe::encode::Encoder;
use crate::compare::measure_block;

pub(super) fn add(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(compare_block, m)?)?;
    Ok(())
}

/// Per encoder: (tokens, words its token boundaries cut, bytes its tokens cover).
type Rows = Vec<(u64, u64, u64)>;

/// The words of `text` (`classes`: the word class of each code point below 65,536, as
/// `bytepair.analysis.words._CLASS`), and for each encoder (tokens, words its token boundaries
/// cut, bytes its tokens cover), special-token text encoded as ordinary text.
#[pyfunction]
fn compare_block(
    py: Python<'_>,
    text: Utf8<'_>,
    encoders: Vec<Bound<'_, PyEncoder>>,
    classes: &[u8],
) -> PyResult<(u64, Rows)> {
    let text: &str = &text;
    let encs: Vec<&Encoder> = encoders.iter().map(|e| &e.get().inner).collect();
    let (words, rows) = py
        .detach(|| measure_block(text, classes, &encs))
        .map_err(to_py)?;
    Ok((
        words,
        rows.iter().map(|m| (m.tokens, m.cut, m.bytes)).collect(),
    ))
}
