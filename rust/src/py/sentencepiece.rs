//! SentencePiece: the `SentencePiece` class, a `.model` file (Unigram or BPE) run as
//! sentencepiece runs it (`crate::sentencepiece`). Python's `SentencePieceTokenizer` holds one.
//!
//! Lists of ids share one int object per id (`ints`), as the `Encoder`'s do.

use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyMemoryView, PyString, PyTuple};
use rayon::prelude::*;

use super::utf8::{Text, Texts, Utf8};
use super::{parallel_batch, to_py, with_buffer, HOLD_GIL_BYTES};
use crate::bpe::flat::{put, Width};
use crate::error::Error;
use crate::io::spm_model::{self as m, ModelType};
use crate::sentencepiece::{Sampling, Scratch, SentencePiece};
use crate::unigram::sample::Rng;
use crate::Rank;

thread_local! {
    /// The buffers of short `encode` calls, reused (their sizes follow the short texts).
    static SHORT_BUFFERS: std::cell::RefCell<(Scratch, Vec<Rank>)> = std::cell::RefCell::default();
}

pub(super) fn add(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySentencePiece>()?;
    m.add("MAX_NBEST", crate::unigram::sample::MAX_NBEST)?;
    Ok(())
}

/// A SentencePiece model (`.model` file): normalizer, Unigram or BPE model, byte fallback.
#[pyclass(module = "bytepair._core", frozen, name = "SentencePiece")]
struct PySentencePiece {
    inner: SentencePiece,
    ints: Vec<Py<PyAny>>,
}

impl PySentencePiece {
    fn make(py: Python<'_>, inner: SentencePiece) -> PySentencePiece {
        let ints = (0..inner.len() as Rank)
            .map(|i| match i.into_pyobject(py) {
                Ok(o) => o.into_any().unbind(),
                Err(never) => match never {},
            })
            .collect();
        PySentencePiece { inner, ints }
    }

    fn id_list<'py>(&self, py: Python<'py>, ids: &[Rank]) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, ids.iter().map(|&i| self.ints[i as usize].bind(py)))
    }

    /// The texts encoded with the GIL released, on `num_threads` threads, in runs of
    /// consecutive texts: each run's ids in one buffer, with where each of its texts ends.
    /// One buffer per run, not per text: a list per text was a `malloc` and a `free` per text,
    /// with reallocations as each grew (a tenth of a batch of short lines' time, `perf`).
    fn encode_groups(
        &self,
        py: Python<'_>,
        texts: &[Text],
        num_threads: Option<usize>,
        sample: Option<(f64, i64, u64)>,
    ) -> PyResult<Vec<(Vec<Rank>, Vec<u32>)>> {
        let par = parallel_batch(num_threads, None, texts)?;
        let refs: Vec<&str> = texts.iter().map(|t| &**t).collect();
        let inner = &self.inner;
        let runs = text_runs(&refs, if par.threads > 1 { par.threads * 8 } else { 1 });
        py.detach(|| {
            crate::threads::run(par.threads, || {
                runs.par_iter()
                    .map_init(Scratch::default, |scratch, &(lo, hi)| {
                        let bytes: usize = refs[lo..hi].iter().map(|t| t.len()).sum();
                        let mut ids = Vec::with_capacity(bytes / 3 + 16);
                        let mut ends = Vec::with_capacity(hi - lo);
                        for (i, t) in refs[lo..hi].iter().enumerate() {
                            inner.encode_sampled_into(
                                t,
                                sampling(sample, lo + i),
                                scratch,
                                &mut ids,
                                None,
                            );
                            ends.push(ids.len() as u32);
                        }
                        (ids, ends)
                    })
                    .collect()
            })
        })
        .map_err(to_py)
    }
}

/// `sample` as Python passes it, `(alpha, nbest_size, seed)` (checked there), for text `i` of
/// a call: each text of a batch gets a seed of its own, the same whatever the threads.
fn sampling(sample: Option<(f64, i64, u64)>, i: usize) -> Sampling {
    match sample {
        None => Sampling::Best,
        Some((alpha, nbest, seed)) => Sampling::Sample {
            alpha,
            nbest,
            seed: Rng::new(seed ^ (i as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93)).next_u64(),
        },
    }
}

/// `texts` cut into at most `n` runs of consecutive texts of about equal bytes, as (lo, hi).
fn text_runs(texts: &[&str], n: usize) -> Vec<(usize, usize)> {
    let total: usize = texts.iter().map(|t| t.len()).sum();
    let target = total / n.max(1) + 1;
    let mut runs = Vec::new();
    let (mut lo, mut bytes) = (0, 0);
    for (i, t) in texts.iter().enumerate() {
        bytes += t.len();
        // a run's ids are counted in u32 ends: cut long before 4 G ids
        if bytes >= target.min(1 << 30) {
            runs.push((lo, i + 1));
            (lo, bytes) = (i + 1, 0);
        }
    }
    if lo < texts.len() || runs.is_empty() {
        runs.push((lo, texts.len()));
    }
    runs
}

/// Byte offsets in `text` as character offsets (an offset inside a character counts that
/// character as begun).
fn char_spans(text: &str, spans: &[(usize, usize)]) -> Vec<(usize, usize)> {
    // chars[b]: the number of characters that start before byte b
    let mut chars = vec![0usize; text.len() + 1];
    let mut c = 0;
    for (b, slot) in chars.iter_mut().enumerate() {
        *slot = c;
        if text.is_char_boundary(b) {
            c += 1;
        }
    }
    let at = |b: usize| chars[b.min(text.len())];
    spans.iter().map(|&(s, e)| (at(s), at(e))).collect()
}

#[pymethods]
impl PySentencePiece {
    /// Reads a `.model` file (errors name it).
    #[staticmethod]
    fn from_file(py: Python<'_>, path: &str) -> PyResult<Self> {
        let inner = py
            .detach(|| SentencePiece::from_file(path))
            .map_err(to_py)?;
        Ok(PySentencePiece::make(py, inner))
    }

    /// Reads a `.model` file's bytes; `name` names it in errors.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8], name: &str) -> PyResult<Self> {
        let inner = py
            .detach(|| SentencePiece::from_bytes(data, name))
            .map_err(to_py)?;
        Ok(PySentencePiece::make(py, inner))
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// The ids of `text`; with `sample` (alpha, nbest_size, seed), a segmentation drawn as
    /// sentencepiece's `enable_sampling` draws it.
    #[pyo3(signature = (text, *, sample = None))]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: Utf8<'_>,
        sample: Option<(f64, i64, u64)>,
    ) -> PyResult<Bound<'py, PyList>> {
        let text: &str = &text;
        let sampling = sampling(sample, 0);
        if text.len() < HOLD_GIL_BYTES {
            // A line of text: encoded with the GIL held, in the buffers of the last such call
            // on this thread (in a fresh `Scratch` and id vector it spent a tenth of its call in
            // malloc, realloc and free).
            return with_buffer(&SHORT_BUFFERS, |(scratch, ids)| {
                ids.clear();
                self.inner
                    .encode_sampled_into(text, sampling, scratch, ids, None);
                self.id_list(py, ids)
            });
        }
        let ids = py.detach(|| {
            let mut ids = Vec::new();
            self.inner
                .encode_sampled_into(text, sampling, &mut Scratch::default(), &mut ids, None);
            ids
        });
        self.id_list(py, &ids)
    }

    /// The ids of `text`, as `SentencePieceProcessor.encode` gives them (this is
    /// `SentencePieceTokenizer.encode`: see its documentation for the options).
    #[pyo3(
        signature = (text, *args, **options),
        text_signature = "($self, text, *, add_bos=False, add_eos=False, enable_sampling=False, alpha=0.1, nbest_size=-1, seed=None)"
    )]
    fn encode_call<'py>(
        slf: &Bound<'py, Self>,
        text: &Bound<'py, PyAny>,
        args: &Bound<'py, PyTuple>,
        options: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        // Each tokenizer's own `encode` attribute (set by its `__init__`), so that a call comes
        // straight here: the common call (a `str`, no options) is `encode`'s, any other goes
        // to the Python function that holds the rest (`bytepair.sentencepiece._encode`:
        // options, checks, lone surrogates). The Python method in between cost about 120 ns
        // of a 650 ns call on a line of text, 75 of them its six keyword-only defaults.
        let py = slf.py();
        if args.is_empty()
            && options.is_none_or(|o| o.is_empty())
            && text.is_exact_instance_of::<PyString>()
        {
            if let Ok(t) = text.extract::<Utf8<'_>>() {
                return slf.get().encode(py, t, None).map(Bound::into_any);
            }
        }
        static SLOW: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();
        let slow = SLOW.get_or_try_init(py, || {
            py.import("bytepair.sentencepiece")?
                .getattr("_encode")
                .map(Bound::unbind)
        })?;
        let mut all = vec![slf.clone().into_any(), text.clone()];
        all.extend(args.iter());
        slow.bind(py).call(PyTuple::new(py, all)?, options)
    }

    /// Ids and the (start, end) character offsets in `text` of each.
    #[allow(clippy::type_complexity)]
    fn encode_with_offsets(
        &self,
        py: Python<'_>,
        text: Utf8<'_>,
    ) -> (Vec<Rank>, Vec<(usize, usize)>) {
        let text: &str = &text;
        py.detach(|| {
            let mut ids = Vec::new();
            let mut spans = Vec::new();
            self.inner
                .encode_into(text, &mut Scratch::default(), &mut ids, Some(&mut spans));
            (ids, char_spans(text, &spans))
        })
    }

    /// The ids of each text, on `num_threads` threads (all cores by default); `sample` as for
    /// `encode`.
    #[pyo3(signature = (texts, *, num_threads = None, sample = None))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Texts<'_>,
        num_threads: Option<usize>,
        sample: Option<(f64, i64, u64)>,
    ) -> PyResult<Bound<'py, PyList>> {
        let texts: &[Text] = &texts;
        let groups = self.encode_groups(py, texts, num_threads, sample)?;
        let mut lists = super::BatchLists::gil_held(py, texts.len());
        for (ids, ends) in &groups {
            let mut start = 0;
            for &end in ends {
                lists.push(self.id_list(py, &ids[start..end as usize])?);
                start = end as usize;
            }
        }
        lists.finish()
    }

    /// `encode_batch` as flat arrays: (every id, `width` bytes each, little-endian, in a
    /// writable memoryview; the offsets of each text's ids as little-endian u64 in a bytearray,
    /// one more than texts). `width` must hold the largest id (checked by the caller).
    #[pyo3(signature = (texts, *, width, num_threads = None, sample = None))]
    fn encode_flat<'py>(
        &self,
        py: Python<'py>,
        texts: Texts<'_>,
        width: usize,
        num_threads: Option<usize>,
        sample: Option<(f64, i64, u64)>,
    ) -> PyResult<(Bound<'py, PyMemoryView>, Bound<'py, PyByteArray>)> {
        let texts: &[Text] = &texts;
        if width != 2 && width != 4 {
            return Err(to_py(Error::Invalid(format!(
                "width must be 2 or 4 bytes, got {width}"
            ))));
        }
        let groups = self.encode_groups(py, texts, num_threads, sample)?;
        let total: usize = groups.iter().map(|g| g.0.len()).sum();
        let mut offsets = Vec::with_capacity(8 * (texts.len() + 1));
        offsets.extend_from_slice(&0u64.to_le_bytes());
        let mut base = 0u64;
        for (ids, ends) in &groups {
            for &end in ends {
                offsets.extend_from_slice(&(base + u64::from(end)).to_le_bytes());
            }
            base += ids.len() as u64;
        }
        let w = Width::from_bytes(width).map_err(to_py)?;
        let out = super::bytearray_with(py, total * width, |dst| {
            py.detach(|| {
                let mut rest = dst;
                for (ids, _) in &groups {
                    rest = put(w, ids, rest)?;
                }
                Ok::<_, Error>(())
            })
            .map_err(to_py)
        })?;
        Ok((
            PyMemoryView::from(out.as_any())?,
            PyByteArray::new(py, &offsets),
        ))
    }

    /// The pieces (texts) of `text`'s ids.
    fn encode_pieces(&self, py: Python<'_>, text: Utf8<'_>) -> Vec<String> {
        let text: &str = &text;
        py.detach(|| self.inner.encode_pieces(text))
    }

    /// What the model sees of `text` (spaces as `▁` where the model escapes them).
    fn normalize(&self, py: Python<'_>, text: Utf8<'_>) -> String {
        let text: &str = &text;
        py.detach(|| {
            let mut out = Vec::new();
            self.inner.normalize(text, &mut out, None);
            String::from_utf8(out).unwrap_or_default()
        })
    }

    fn decode(&self, py: Python<'_>, ids: Vec<i64>) -> PyResult<String> {
        let ids = ids
            .into_iter()
            .map(|i| {
                Rank::try_from(i)
                    .ok()
                    .filter(|&r| (r as usize) < self.inner.len())
                    .ok_or_else(|| to_py(Error::UnknownId(i as u64)))
            })
            .collect::<PyResult<Vec<Rank>>>()?;
        py.detach(|| self.inner.decode(&ids)).map_err(to_py)
    }

    /// The id of a piece text (None where the model has no such piece).
    fn piece_to_id(&self, piece: &str) -> Option<Rank> {
        self.inner.piece_to_id(piece)
    }

    fn id_to_piece(&self, id: i64) -> Option<&str> {
        Rank::try_from(id).ok().and_then(|r| self.inner.piece(r))
    }

    /// Every piece as (text, score, type name), by id.
    fn pieces(&self) -> Vec<(&str, f32, &'static str)> {
        self.inner
            .file
            .pieces
            .iter()
            .map(|p| (p.piece.as_str(), p.score, p.kind.name()))
            .collect()
    }

    /// The model file's options that say how it encodes, and its special ids (-1: none).
    /// `"unigram"`, `"bpe"`, `"word"` or `"char"` (`spec`'s, without making the rest).
    #[getter]
    fn model_type(&self) -> &'static str {
        match self.inner.model_type {
            ModelType::Unigram => "unigram",
            ModelType::Bpe => "bpe",
            ModelType::Word => "word",
            ModelType::Char => "char",
        }
    }

    /// The trainer's BOS id (negative: none), as `spec` gives it.
    #[getter]
    fn bos_id(&self) -> PyResult<i32> {
        let t = &self.inner.file.trainer;
        t.int32(m::TRAINER_BOS_ID, 1, "model", "trainer_spec", "id")
            .map_err(to_py)
    }

    /// The trainer's EOS id (negative: none), as `spec` gives it.
    #[getter]
    fn eos_id(&self) -> PyResult<i32> {
        let t = &self.inner.file.trainer;
        t.int32(m::TRAINER_EOS_ID, 2, "model", "trainer_spec", "id")
            .map_err(to_py)
    }

    fn spec<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let f = &self.inner.file;
        let name = "model";
        let d = PyDict::new(py);
        let t = &f.trainer;
        let model_type = self.model_type();
        let opts = f.normalizer_options(name).map_err(to_py)?;
        d.set_item("model_type", model_type)?;
        d.set_item("byte_fallback", f.byte_fallback(name).map_err(to_py)?)?;
        d.set_item("split_digits", f.split_digits(name).map_err(to_py)?)?;
        d.set_item(
            "treat_whitespace_as_suffix",
            f.treat_whitespace_as_suffix(name).map_err(to_py)?,
        )?;
        d.set_item("normalizer", opts.name)?;
        d.set_item("add_dummy_prefix", opts.add_dummy_prefix)?;
        d.set_item("remove_extra_whitespaces", opts.remove_extra_whitespaces)?;
        d.set_item("escape_whitespaces", opts.escape_whitespaces)?;
        d.set_item("unk_id", self.inner.unk_id())?;
        let int = |num, default| t.int32(num, default, name, "trainer_spec", "id");
        d.set_item("bos_id", self.bos_id()?)?;
        d.set_item("eos_id", self.eos_id()?)?;
        d.set_item("pad_id", int(m::TRAINER_PAD_ID, -1).map_err(to_py)?)?;
        d.set_item(
            "vocab_size",
            int(m::TRAINER_VOCAB_SIZE, 8000).map_err(to_py)?,
        )?;
        Ok(d)
    }

    /// The model as a `.model` file's bytes (what was read, written back).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.to_bytes())
    }
}
