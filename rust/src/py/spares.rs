//! Array outputs kept for reuse: the two latest bytearrays of 1 to 32 MiB that the bulk calls
//! returned (`bytearray_with`). A new output takes one whose caller has let go of it (this
//! module then holds its only reference: no array, view or name sees it) instead of fresh
//! memory from the system.
//!
//! Why: an output of a few MiB is fresh memory, and the kernel's work of mapping it page by
//! page was most of the page faults of a bulk call, a tenth of a call over unseen text
//! (bench/README.md, session 24). A program that encodes batch after batch lets each output go
//! a call or two later; the next one then reuses its pages. Outputs are made an eighth larger
//! than asked (the bytearray keeps the room past its length), so that a slightly longer output
//! fits in a kept one without a move. Memory: up to two outputs (72 MiB at most) stay held
//! after their callers are done with them.

use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::PyByteArray;

/// Outputs of these sizes are kept.
const SMALLEST: usize = 1 << 20;
const LARGEST: usize = 32 << 20;
/// How many are kept.
const KEPT: usize = 2;

/// The kept bytearrays, oldest first, each with the bytes it has room for.
static SPARES: Mutex<Vec<(Py<PyByteArray>, usize)>> = Mutex::new(Vec::new());

/// A bytearray of `n` bytes whose contents the caller writes, all of them: a kept one nothing
/// else references where one has room for `n` bytes (its contents are stale), else a new one
/// (uninitialized). Kept again once written (`keep`, with the room this returns).
pub(super) fn bytearray(py: Python<'_>, n: usize) -> PyResult<(Bound<'_, PyByteArray>, usize)> {
    if let Some(found) = take(py, n) {
        return Ok(found);
    }
    let room = if (SMALLEST..=LARGEST).contains(&n) {
        n + n / 8
    } else {
        n
    };
    let size = |n: usize| {
        isize::try_from(n).map_err(|_| {
            pyo3::exceptions::PyValueError::new_err(format!("an output of {n} bytes is too large"))
        })
    };
    // SAFETY: a NULL source asks CPython for `room` uninitialized bytes (and the final NUL);
    // the new reference is owned by the `Bound`.
    let array = unsafe {
        Bound::from_owned_ptr_or_err(
            py,
            pyo3::ffi::PyByteArray_FromStringAndSize(std::ptr::null(), size(room)?),
        )?
        .cast_into_unchecked::<PyByteArray>()
    };
    if room != n {
        // SAFETY: a new bytearray no one else sees; down to more than half its size, CPython
        // keeps its memory and only sets the length.
        if unsafe { pyo3::ffi::PyByteArray_Resize(array.as_ptr(), size(n)?) } != 0 {
            return Err(PyErr::fetch(py));
        }
    }
    Ok((array, room))
}

fn take(py: Python<'_>, n: usize) -> Option<(Bound<'_, PyByteArray>, usize)> {
    if !(SMALLEST..=LARGEST).contains(&n) {
        return None;
    }
    let mut spares = SPARES.lock().ok()?;
    // Room for `n` and less than twice as much (CPython would move a bytearray resized below
    // half its room), and no reference but this one.
    let (i, _) = spares.iter().enumerate().find(|(_, (s, room))| {
        (room / 2 < n && n <= *room)
            // SAFETY: a live object's reference count, read with the GIL held.
            && unsafe { pyo3::ffi::Py_REFCNT(s.as_ptr()) } == 1
    })?;
    let (array, room) = spares.remove(i);
    let array = array.into_bound(py);
    // SAFETY: a bytearray only this function references (a buffer export would hold a
    // reference), resized within its room: CPython sets its length and moves nothing.
    if unsafe { pyo3::ffi::PyByteArray_Resize(array.as_ptr(), n as isize) } != 0 {
        drop(PyErr::take(py));
        return None;
    }
    Some((array, room))
}

/// Keeps `array` (with room for `room` bytes) for a later `bytearray`, dropping the oldest kept
/// one.
pub(super) fn keep(array: &Bound<'_, PyByteArray>, room: usize) {
    if !(SMALLEST..=LARGEST + LARGEST / 8).contains(&room) {
        return;
    }
    let Ok(mut spares) = SPARES.lock() else {
        return;
    };
    if spares.len() == KEPT {
        spares.remove(0);
    }
    spares.push((array.clone().unbind(), room));
}
