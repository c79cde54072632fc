//! WordPiece: the `WordPiece` class (BERT normalization, pre-tokenization and WordPiece
//! encoding) and `bert_pre_tokenize` (the `WordCounter` of training is in `words.rs`).
//!
//! The lists of `encode_batch_ids` share one int object per id (`ints`), as the `Encoder`'s do.
//! Inputs of more than `round_bytes` are encoded in rounds with Ctrl-C looked at between them,
//! as the `Encoder` does: a large text is cut where its parts encode to the ids of the whole
//! (`WordPiece::cuts`), the texts of a batch are grouped.

use std::sync::Mutex;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyList};
use rayon::prelude::*;

use super::utf8::{Text, Texts, Utf8};
use super::{batch_rounds, parallel_batch, round_bytes, to_py, with_buffer, HOLD_GIL_BYTES};
use crate::bpe::encode::Parallel;
use crate::error::Error;
use crate::wordpiece::model::{BertOptions, WordPiece};
use crate::Rank;

thread_local! {
    /// The ids of short `encode` calls, reused: no allocation per call.
    static SHORT_IDS: std::cell::RefCell<Vec<Rank>> = const { std::cell::RefCell::new(Vec::new()) };
}

pub(super) fn add(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyWordPiece>()?;
    m.add_function(wrap_pyfunction!(bert_pre_tokenize, m)?)?;
    Ok(())
}

/// A WordPiece model with BERT normalization and pre-tokenization (`wordpiece`).
#[pyclass(module = "bytepair._core", frozen, name = "WordPiece")]
pub(super) struct PyWordPiece {
    pub(super) inner: WordPiece,
    /// one Python int per id, shared by every list returned (no int made per token)
    ints: Vec<Py<PyAny>>,
}

#[pymethods]
impl PyWordPiece {
    /// `vocab`: (id, token) pairs; `special_tokens`: (text, id) pairs matched in the raw text;
    /// `split_unknown_characters`: an unmatchable character is the unknown token on its own.
    #[new]
    #[pyo3(signature = (vocab, unk_token, continuing_subword_prefix, max_input_chars_per_word, clean_text, handle_chinese_chars, strip_accents, lowercase, special_tokens, *, split_unknown_characters = false))]
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
        split_unknown_characters: bool,
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
                .map(|wp| wp.with_split_unknown(split_unknown_characters))
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

    /// The segment cache's budget in bytes (0: off); with `max_bytes`, sets it first (and
    /// empties the cache).
    #[pyo3(signature = (max_bytes=None))]
    fn segment_cache(&self, max_bytes: Option<usize>) -> usize {
        if let Some(b) = max_bytes {
            self.inner.set_segment_cache(b);
        }
        self.inner.segment_cache()
    }

    fn encode<'py>(&self, py: Python<'py>, text: Utf8<'_>) -> PyResult<Bound<'py, PyList>> {
        let text: &str = &text;
        if text.len() < HOLD_GIL_BYTES {
            // A few words: encoded with the GIL held into this thread's buffer, as a list of
            // the shared ints.
            return with_buffer(&SHORT_IDS, |ids| {
                ids.clear();
                self.inner.encode(text, ids, None);
                self.id_list(py, ids)
            });
        }
        let ids = if text.len() > round_bytes(Parallel::SERIAL) {
            self.encode_rounds(py, text, false)?.0
        } else {
            py.detach(|| {
                let mut ids = Vec::new();
                self.inner.encode(text, &mut ids, None);
                ids
            })
        };
        self.id_list(py, &ids)
    }

    fn encode_with_offsets(
        &self,
        py: Python<'_>,
        text: Utf8<'_>,
    ) -> PyResult<crate::wordpiece::model::Encoded> {
        let text: &str = &text;
        if text.len() > round_bytes(Parallel::SERIAL) {
            return self.encode_rounds(py, text, true);
        }
        Ok(py.detach(|| {
            let mut ids = Vec::new();
            let mut offsets = Vec::new();
            self.inner.encode(text, &mut ids, Some(&mut offsets));
            (ids, offsets)
        }))
    }

    #[pyo3(signature = (texts, *, with_offsets = false, num_threads = None))]
    fn encode_batch(
        &self,
        py: Python<'_>,
        texts: Texts<'_>,
        with_offsets: bool,
        num_threads: Option<usize>,
    ) -> PyResult<Vec<crate::wordpiece::model::Encoded>> {
        let texts: &[Text] = &texts;
        let par = parallel_batch(num_threads, None, texts)?;
        let refs: Vec<&str> = texts.iter().map(|t| &**t).collect();
        let mut out = Vec::with_capacity(refs.len());
        for (first, end) in batch_rounds(texts, round_bytes(par)) {
            if end - first == 1 && refs[first].len() > round_bytes(par) {
                out.push(self.encode_rounds(py, refs[first], with_offsets)?);
                continue;
            }
            let part = py
                .detach(|| {
                    self.inner
                        .encode_batch(&refs[first..end], with_offsets, par.threads)
                })
                .map_err(to_py)?;
            out.extend(part);
            py.check_signals()?;
        }
        Ok(out)
    }

    /// The ids of each text (no offsets), on `num_threads` threads.
    #[pyo3(signature = (texts, *, num_threads = None))]
    fn encode_batch_ids<'py>(
        &self,
        py: Python<'py>,
        texts: Texts<'_>,
        num_threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyList>> {
        let texts: &[Text] = &texts;
        let par = parallel_batch(num_threads, None, texts)?;
        let refs: Vec<&str> = texts.iter().map(|t| &**t).collect();
        let size = round_bytes(par);
        if refs.iter().map(|t| t.len()).sum::<usize>() <= size {
            return self.ids_lists(py, &refs, par.threads);
        }
        let mut lists: Vec<Bound<'py, PyAny>> = Vec::with_capacity(refs.len());
        for (first, end) in batch_rounds(texts, size) {
            if end - first == 1 && refs[first].len() > size {
                let ids = self.encode_rounds(py, refs[first], false)?.0;
                lists.push(self.id_list(py, &ids)?.into_any());
                continue;
            }
            lists.extend(self.ids_lists(py, &refs[first..end], par.threads)?.iter());
            py.check_signals()?;
        }
        PyList::new(py, lists)
    }

    /// The ids of each text in one flat buffer of `width`-byte (2 or 4) little-endian ids, and
    /// the document offsets as little-endian u64, one more than texts (as `encode_flat`).
    #[pyo3(signature = (texts, *, width, num_threads = None))]
    fn encode_batch_flat<'py>(
        &self,
        py: Python<'py>,
        texts: Texts<'_>,
        width: usize,
        num_threads: Option<usize>,
    ) -> PyResult<(Bound<'py, PyByteArray>, Bound<'py, PyByteArray>)> {
        let texts: &[Text] = &texts;
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
        let par = parallel_batch(num_threads, None, texts)?;
        let refs: Vec<&str> = texts.iter().map(|t| &**t).collect();
        let size = round_bytes(par);
        let (flat, ends) = if refs.iter().map(|t| t.len()).sum::<usize>() <= size {
            py.detach(|| self.inner.encode_batch_flat(&refs, par.threads))
                .map_err(to_py)?
        } else {
            let (mut flat, mut ends) = (Vec::new(), Vec::with_capacity(refs.len()));
            for (first, end) in batch_rounds(texts, size) {
                if end - first == 1 && refs[first].len() > size {
                    flat.extend(self.encode_rounds(py, refs[first], false)?.0);
                    ends.push(flat.len());
                    continue;
                }
                let (ids, part) = py
                    .detach(|| self.inner.encode_batch_flat(&refs[first..end], par.threads))
                    .map_err(to_py)?;
                let base = flat.len();
                flat.extend(ids);
                ends.extend(part.iter().map(|&e| e + base));
                py.check_signals()?;
            }
            (flat, ends)
        };
        let (ids, offsets) = py
            .detach(|| -> crate::error::Result<(Vec<u8>, Vec<u8>)> {
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
    /// One text in rounds of about `round_bytes` bytes, cut where the parts encode to the ids
    /// (and offsets) of the whole (`WordPiece::cuts`), with Ctrl-C looked at between rounds.
    fn encode_rounds(
        &self,
        py: Python<'_>,
        text: &str,
        with_offsets: bool,
    ) -> PyResult<crate::wordpiece::model::Encoded> {
        let cuts = py.detach(|| self.inner.cuts(text, round_bytes(Parallel::SERIAL)));
        let (mut ids, mut offsets) = (Vec::new(), Vec::new());
        let (mut start, mut chars) = (0usize, 0u32);
        for end in cuts.into_iter().chain(std::iter::once(text.len())) {
            let part = &text[start..end];
            py.detach(|| {
                if with_offsets {
                    let mut o = Vec::new();
                    self.inner.encode(part, &mut ids, Some(&mut o));
                    // Offsets count characters of the whole text.
                    offsets.extend(o.iter().map(|&(a, b)| (a + chars, b + chars)));
                    chars += part.chars().count() as u32;
                } else {
                    self.inner.encode(part, &mut ids, None);
                }
            });
            py.check_signals()?;
            start = end;
        }
        Ok((ids, offsets))
    }

    /// The ids of `refs` as lists (made while the pool encodes, on several threads).
    fn ids_lists<'py>(
        &self,
        py: Python<'py>,
        refs: &[&str],
        threads: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        if threads > 1 {
            return self.encode_batch_ids_pipelined(py, refs, threads);
        }
        let (ids, ends) = py
            .detach(|| self.inner.encode_batch_flat(refs, threads))
            .map_err(to_py)?;
        let mut start = 0;
        let mut lists = super::BatchLists::gil_held(py, ends.len());
        for &end in &ends {
            lists.push(self.id_list(py, &ids[start..end])?);
            start = end;
        }
        lists.finish()
    }

    fn id_list<'py>(&self, py: Python<'py>, ids: &[Rank]) -> PyResult<Bound<'py, PyList>> {
        super::int_list(py, &self.ints, ids)
    }

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
        let mut hidden = super::BatchLists::with_capacity(py, refs.len());
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
                    let list = hidden.hide(self.id_list(py, one)?);
                    out.set_item(chunks[c].start + k, list)?;
                }
            }
            Ok(())
        })?;
        drop(hidden); // the lists tracked again
        Ok(out)
    }
}

/// BERT normalization + pre-tokenization of `text`: (word, (start, end)) in characters.
#[pyfunction]
#[pyo3(signature = (text, *, clean_text = true, handle_chinese_chars = true, strip_accents = true, lowercase = true))]
fn bert_pre_tokenize(
    py: Python<'_>,
    text: Utf8<'_>,
    clean_text: bool,
    handle_chinese_chars: bool,
    strip_accents: bool,
    lowercase: bool,
) -> Vec<(String, (u32, u32))> {
    let text: &str = &text;
    let opts = BertOptions {
        clean_text,
        handle_chinese_chars,
        strip_accents,
        lowercase,
    };
    py.detach(|| crate::wordpiece::model::pre_tokenize(&opts, text))
}
