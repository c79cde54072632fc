//! Text arguments as UTF-8, without the copy CPython keeps on each `str`.
//!
//! `&str` and `PyBackedStr` read a `str` through `PyUnicode_AsUTF8AndSize`. An ASCII `str` is
//! its own UTF-8, so that costs nothing; any other `str` gets its UTF-8 made once and kept with
//! it for as long as it lives: a `malloc` and a copy per text, in memory the process has not
//! touched yet when the texts are new. On a bulk call over 8 MiB of unseen prose (o200k, 8 KiB
//! documents, 590 of 1,014 not ASCII), a quarter of the call's page faults were those copies
//! (`perf`, page-fault call graphs), and a caller who keeps the texts keeps their UTF-8 too: up
//! to three bytes more per character of CJK text, for as long as the strings live.
//!
//! Here an ASCII `str` lends its bytes, as before, and any other is converted from its own
//! code units (Latin-1, UCS-2 or UCS-4, what CPython stores) into a buffer this thread keeps
//! between calls (`SCRATCH`, up to `KEPT` bytes), so that the memory is warm and nothing is left
//! on the strings. A lone surrogate has no UTF-8: CPython's own conversion is then asked for, and
//! raises its `UnicodeEncodeError` (which the Python layer repairs, as before).
//!
//! The limited API (the abi3 wheel) cannot see how a `str` is stored. There a text of fewer than
//! `ABI3_SHORT` characters is read through `PyUnicode_AsUTF8AndSize` (a short copy, if any, is
//! left on it), a longer one is asked `isascii()` (a flag CPython keeps; a method call, about
//! the cost of encoding a few bytes), and a non-ASCII one is copied out as UCS-4
//! (`PyUnicode_AsUCS4`, into a second buffer the thread keeps) and converted from there; the
//! search for special tokens' starts uses `PyUnicode_FindChar` and `PyUnicode_ReadChar`.

use std::cell::RefCell;
use std::ops::Deref;

use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::text::code_units;

/// The largest buffer a thread keeps between calls (a batch of more text frees its own).
const KEPT: usize = 32 << 20;

thread_local! {
    /// The conversion buffer of the last call on this thread, emptied, for the next one.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// The abi3 build's copy of a text's code units as UCS-4, before its conversion.
    #[cfg(feature = "abi3")]
    static UCS4: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// Texts shorter than this (in characters) are read through CPython in the abi3 build.
#[cfg(feature = "abi3")]
const ABI3_SHORT: isize = 64;

// `try_with`: a thread being torn down has no buffer to lend or keep, and gets a fresh one.
fn take_scratch() -> Vec<u8> {
    SCRATCH
        .try_with(|s| std::mem::take(&mut *s.borrow_mut()))
        .unwrap_or_default()
}

fn give_back(mut buf: Vec<u8>) {
    if buf.capacity() == 0 || buf.capacity() > KEPT {
        return;
    }
    buf.clear();
    let _ = SCRATCH.try_with(|s| {
        let mut s = s.borrow_mut();
        if buf.capacity() > s.capacity() {
            *s = buf;
        }
    });
}

/// This thread's buffer while a call holds it: taken the first time a text needs converting,
/// given back when dropped (with the call's arguments, or on an error).
#[derive(Default)]
struct Held(Option<Vec<u8>>);

impl Held {
    fn get(&mut self) -> &mut Vec<u8> {
        self.0.get_or_insert_with(take_scratch)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(buf) = self.0.take() {
            give_back(buf);
        }
    }
}

/// UTF-8 owned by the `Utf8` or `Texts` it is reached through (the `str` it was lent by, or
/// their buffer). Neither `Copy` nor `Clone`: a borrow of it cannot outlive its owner.
pub(crate) struct Text {
    ptr: *const u8,
    len: usize,
}

// SAFETY: a `Text` is a view of immutable bytes (a `str`'s, or a buffer no one writes while it
// is seen) that its owner keeps alive; reading them from any thread is safe.
unsafe impl Send for Text {}
// SAFETY: as above.
unsafe impl Sync for Text {}

impl Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        // SAFETY: `ptr` and `len` are UTF-8 (a `str`'s ASCII or the conversion's output) that
        // live as long as the owner `self` is borrowed from.
        unsafe { std::str::from_utf8_unchecked(std::slice::from_raw_parts(self.ptr, self.len)) }
    }
}

/// Where a text's UTF-8 is: lent by its `str`, or at an offset of the buffer (which may still
/// move while other texts are converted).
#[derive(Clone, Copy)]
enum Place {
    Lent(*const u8, usize),
    Converted(usize, usize),
}

/// The UTF-8 of `s`: its own bytes when it has them, else appended to this thread's buffer
/// (`held`).
fn place(s: &Bound<'_, PyString>, held: &mut Held) -> PyResult<Place> {
    #[cfg(not(feature = "abi3"))]
    {
        use pyo3::types::string::PyStringData;
        // SAFETY: `s` is a live `str`; its data is read while it is borrowed.
        let data = unsafe { s.data()? };
        if let PyStringData::Ucs1(b) = data {
            if b.is_ascii() {
                return Ok(Place::Lent(b.as_ptr(), b.len()));
            }
        }
        let buf = held.get();
        let start = buf.len();
        let done = match data {
            PyStringData::Ucs1(b) => code_units::from_latin1(b, buf),
            PyStringData::Ucs2(u) => code_units::from_ucs2(u, buf),
            PyStringData::Ucs4(u) => code_units::from_ucs4(u, buf),
        };
        converted(s, buf, start, done)
    }
    #[cfg(feature = "abi3")]
    {
        use pyo3::ffi;
        use pyo3::intern;
        // SAFETY: `s` is a live `str`.
        let n = unsafe { ffi::PyUnicode_GetLength(s.as_ptr()) };
        if n < 0 {
            return Err(PyErr::fetch(s.py()));
        }
        if n < ABI3_SHORT || s.call_method0(intern!(s.py(), "isascii"))?.is_truthy()? {
            let t = s.to_str()?;
            return Ok(Place::Lent(t.as_ptr(), t.len()));
        }
        let buf = held.get();
        let start = buf.len();
        let done = UCS4.with(|u| -> PyResult<bool> {
            let mut u = u.borrow_mut();
            u.clear();
            u.reserve(n as usize);
            // SAFETY: `u` has room for `n` code units, which CPython writes (no NUL asked for).
            let ok = unsafe { ffi::PyUnicode_AsUCS4(s.as_ptr(), u.as_mut_ptr(), n, 0) };
            if ok.is_null() {
                return Err(PyErr::fetch(s.py()));
            }
            // SAFETY: the `n` code units were written just above.
            unsafe { u.set_len(n as usize) };
            let done = code_units::from_ucs4(&u, buf);
            if u.capacity() > KEPT / 4 {
                *u = Vec::new();
            }
            Ok(done)
        })?;
        converted(s, buf, start, done)
    }
}

/// The place of the text just appended to `buf` from `start`; where the conversion stopped at a
/// surrogate (`done` false), what CPython's own conversion raises (it keeps nothing on `s`).
fn converted(
    s: &Bound<'_, PyString>,
    buf: &mut Vec<u8>,
    start: usize,
    done: bool,
) -> PyResult<Place> {
    if !done {
        buf.truncate(start);
        s.to_str()?;
        return Err(pyo3::exceptions::PyUnicodeEncodeError::new_err(
            "surrogates not allowed",
        ));
    }
    Ok(Place::Converted(start, buf.len() - start))
}

fn resolve(p: &Place, held: &Held) -> Text {
    match (*p, &held.0) {
        (Place::Lent(ptr, len), _) => Text { ptr, len },
        (Place::Converted(at, len), Some(buf)) => Text {
            ptr: buf[at..at + len].as_ptr(),
            len,
        },
        (Place::Converted(..), None) => unreachable!("a converted text has a buffer"),
    }
}

/// One `str` argument's UTF-8.
pub(crate) struct Utf8<'py> {
    _str: Bound<'py, PyString>,
    text: Text,
    _held: Held,
}

impl<'py> Utf8<'py> {
    pub(crate) fn new(s: Bound<'py, PyString>) -> PyResult<Self> {
        let mut held = Held::default();
        let text = resolve(&place(&s, &mut held)?, &held);
        Ok(Utf8 {
            _str: s,
            text,
            _held: held,
        })
    }
}

impl Deref for Utf8<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        &self.text
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for Utf8<'py> {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Utf8::new(obj.cast::<PyString>()?.to_owned())
    }
}

/// A list of `str` arguments' UTF-8, the converted ones one after another in one buffer.
pub(crate) struct Texts<'py> {
    _strs: Vec<Bound<'py, PyString>>,
    texts: Vec<Text>,
    _held: Held,
}

impl<'py> Texts<'py> {
    pub(crate) fn new(strs: Vec<Bound<'py, PyString>>) -> PyResult<Self> {
        let mut held = Held::default();
        let places = strs
            .iter()
            .map(|s| place(s, &mut held))
            .collect::<PyResult<Vec<_>>>()?;
        // Resolved once every text is placed: the buffer does not move after that.
        let texts = places.iter().map(|p| resolve(p, &held)).collect();
        Ok(Texts {
            _strs: strs,
            texts,
            _held: held,
        })
    }
}

impl Deref for Texts<'_> {
    type Target = [Text];

    fn deref(&self) -> &[Text] {
        &self.texts
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for Texts<'py> {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Texts::new(obj.extract()?)
    }
}

/// How a special token's text starts: its first character and the one after it, if any.
pub(crate) type Head = (char, Option<char>);

/// Whether `s` may hold a text that starts with one of `heads` (None: any text may be there).
/// Read from its code units, without its UTF-8.
pub(crate) fn may_hold(s: &Bound<'_, PyString>, heads: Option<&[Head]>) -> PyResult<bool> {
    #[cfg(not(feature = "abi3"))]
    {
        use pyo3::types::string::PyStringData;
        let Some(heads) = heads else {
            return Ok(true);
        };
        // SAFETY: `s` is a live `str`; its data is read while it is borrowed.
        let data = unsafe { s.data()? };
        Ok(heads.iter().any(|&(a, b)| {
            let (a, b) = (a as u32, b.map(|b| b as u32));
            match data {
                PyStringData::Ucs1(u) => code_units::holds(u, a, b),
                PyStringData::Ucs2(u) => code_units::holds(u, a, b),
                PyStringData::Ucs4(u) => code_units::holds(u, a, b),
            }
        }))
    }
    #[cfg(feature = "abi3")]
    {
        use pyo3::ffi;
        let Some(heads) = heads else {
            return Ok(true);
        };
        let p = s.as_ptr();
        // SAFETY: `s` is a live `str`.
        let n = unsafe { ffi::PyUnicode_GetLength(p) };
        for &(a, b) in heads {
            let mut from = 0;
            while from < n {
                // SAFETY: as above; `from..n` lies in the string.
                let at = unsafe { ffi::PyUnicode_FindChar(p, a as u32, from, n, 1) };
                if at == -1 {
                    break;
                }
                if at < 0 {
                    return Err(PyErr::fetch(s.py()));
                }
                // SAFETY: as above; `at + 1 < n` is read only when it is in the string.
                match b {
                    None => return Ok(true),
                    Some(b)
                        if at + 1 < n
                            && unsafe { ffi::PyUnicode_ReadChar(p, at + 1) } == b as u32 =>
                    {
                        return Ok(true)
                    }
                    _ => from = at + 1,
                }
            }
        }
        Ok(false)
    }
}
