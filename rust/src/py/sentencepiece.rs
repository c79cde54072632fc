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
    /// The ids of `text` when it is a `str` that `encode` takes as it is (the common call of
    /// `encode`); `None` for anything else (another type, lone surrogates), which
    /// `encode_rest` takes.
    #[inline]
    fn encode_common<'py>(&self, text: &Bound<'py, PyAny>) -> Option<PyResult<Bound<'py, PyAny>>> {
        if !text.is_exact_instance_of::<PyString>() {
            return None;
        }
        let t = text.extract::<Utf8<'_>>().ok()?;
        Some(self.encode(text.py(), t, None).map(Bound::into_any))
    }

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
        super::int_list(py, &self.ints, ids)
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
        if args.is_empty() && options.is_none_or(|o| o.is_empty()) {
            if let Some(ids) = slf.get().encode_common(text) {
                return ids;
            }
        }
        let mut all = vec![slf.clone().into_any(), text.clone()];
        all.extend(args.iter());
        encode_rest(slf.py(), all, options)
    }

    /// `encode_call` as a built-in function bound to this model that CPython calls with its
    /// arguments where they are (`METH_FASTCALL`): what each tokenizer's `__init__` sets as
    /// its own `encode`, so that a call comes straight here. The common call (a `str`, no
    /// options) is `encode`'s; any other goes to the Python function that holds the rest
    /// (`encode_rest`).
    ///
    /// The Python method in between cost about 120 ns of a 650 ns call on a line of text, 75
    /// of them its six keyword-only defaults (session 20). `encode_call` itself, a method that
    /// takes `**options`, is called by PyO3's convention for `*args, **kwargs` (`METH_VARARGS`:
    /// a tuple made and freed each call): this entry takes a call of
    /// `[enc(line) for line in lines]` on a line of text from 6,118 to 5,679 instructions
    /// (cachegrind, `NOTES.md` of `unigram`, session 31).
    fn encode_entry<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        // SAFETY: the definition lives as long as the process (`entry_def`); the function
        // holds a reference to `slf`, which it is called with.
        unsafe {
            Bound::from_owned_ptr_or_err(
                slf.py(),
                pyo3::ffi::PyCMethod_New(
                    entry_def(),
                    slf.as_ptr(),
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                ),
            )
        }
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

/// Any call of a tokenizer's `encode` but the common one: the Python function that holds the
/// rest (`bytepair.sentencepiece._encode`: options, checks, lone surrogates, the errors of
/// wrong arguments), called with the model and the call's arguments.
fn encode_rest<'py>(
    py: Python<'py>,
    args: Vec<Bound<'py, PyAny>>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    static REST: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();
    let rest = REST.get_or_try_init(py, || {
        py.import("bytepair.sentencepiece")?
            .getattr("_encode")
            .map(Bound::unbind)
    })?;
    rest.bind(py).call(PyTuple::new(py, args)?, options)
}

/// The definition of the function `encode_entry` binds, made once and kept for the process
/// (CPython keeps a pointer to it in every function made from it).
fn entry_def() -> *mut pyo3::ffi::PyMethodDef {
    static DEF: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let at = *DEF.get_or_init(|| {
        let def = Box::leak(Box::new(pyo3::ffi::PyMethodDef {
            ml_name: c"encode_call".as_ptr(),
            ml_meth: pyo3::ffi::PyMethodDefPointer {
                PyCFunctionFastWithKeywords: encode_entry_call,
            },
            ml_flags: pyo3::ffi::METH_FASTCALL | pyo3::ffi::METH_KEYWORDS,
            ml_doc: c"encode_call($self, text, *, add_bos=False, add_eos=False, enable_sampling=False, alpha=0.1, nbest_size=-1, seed=None)\n--\n\nThe ids of `text`, as `SentencePieceProcessor.encode` gives them (this is\n`SentencePieceTokenizer.encode`: see its documentation for the options).".as_ptr(),
        }));
        def as *mut pyo3::ffi::PyMethodDef as usize
    });
    at as *mut pyo3::ffi::PyMethodDef
}

/// The function `encode_entry` binds: `slf` the model, `args` the `nargs` positional arguments
/// followed by the values of the keywords `kwnames` names (CPython's vectorcall convention).
unsafe extern "C" fn encode_entry_call(
    slf: *mut pyo3::ffi::PyObject,
    args: *const *mut pyo3::ffi::PyObject,
    nargs: pyo3::ffi::Py_ssize_t,
    kwnames: *mut pyo3::ffi::PyObject,
) -> *mut pyo3::ffi::PyObject {
    let outcome = std::panic::catch_unwind(|| {
        // SAFETY: CPython calls a function of a `PyMethodDef` with the interpreter attached
        let py = unsafe { Python::assume_attached() };
        // SAFETY: `slf` is the object the function was made with (`encode_entry`), alive as
        // long as the function; `args` holds `nargs` arguments and then one value for each
        // name in `kwnames` (a tuple, or null when there are none), all alive for the call.
        let result = (|| -> PyResult<Bound<'_, PyAny>> {
            let this = unsafe { Bound::from_borrowed_ptr(py, slf) };
            let this = this.cast_into::<PySentencePiece>()?;
            let names = if kwnames.is_null() {
                None
            } else {
                Some(unsafe { Bound::from_borrowed_ptr(py, kwnames) }.cast_into::<PyTuple>()?)
            };
            let positional = usize::try_from(nargs).unwrap_or(0);
            let keywords = names.as_ref().map_or(0, |n| n.len());
            let argument = |i: usize| unsafe { Bound::from_borrowed_ptr(py, *args.add(i)) };
            if positional == 1 && keywords == 0 {
                if let Some(ids) = this.get().encode_common(&argument(0)) {
                    return ids;
                }
            }
            let mut all = vec![this.into_any()];
            all.extend((0..positional).map(argument));
            let options = match names {
                None => None,
                Some(names) => {
                    let d = PyDict::new(py);
                    for (k, name) in names.iter().enumerate() {
                        d.set_item(name, argument(positional + k))?;
                    }
                    Some(d)
                }
            };
            encode_rest(py, all, options.as_ref())
        })();
        match result {
            Ok(v) => v.into_ptr(),
            Err(e) => {
                e.restore(py);
                std::ptr::null_mut()
            }
        }
    });
    outcome.unwrap_or_else(|payload| {
        // SAFETY: as above
        let py = unsafe { Python::assume_attached() };
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".to_string());
        pyo3::panic::PanicException::new_err(what).restore(py);
        std::ptr::null_mut()
    })
}
