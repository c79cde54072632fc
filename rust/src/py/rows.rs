//! `padded_rows`: the rows of `tok(batch, ...)` as Python lists, made from one flat array of
//! the batch's ids.
//!
//! The lists shape of a model-inputs call used to encode every text to a list of ints, then
//! slice, join and pad those lists in Python: on 1,000 chat-sized texts (Llama 3, cl100k ranks,
//! `max_length=512`) that took 15-20 ms more than the NumPy shape, which fills its arrays from
//! the flat ids without a Python int per token. Here each row's list is made once, at its final
//! length: its kept slices and the template's tokens, then the padding, with one int object per
//! distinct id shared by every list (an increment per token instead of an allocation) and the
//! 0s and 1s of the masks taken from the interpreter's small ints.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyList;

pub(super) fn add(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(padded_rows, m)?)?;
    Ok(())
}

/// One item of a template: a text's kept slice (`A`, `B`) or fixed tokens, with its type id.
enum Item {
    A,
    B,
    Fixed(Vec<u32>),
}

/// The shared int objects of one call: a slot per id below the bound, each made on first use
/// and holding one reference, released when the call ends. Ids at or above the bound (a table
/// that large would follow an id, not the data) get a new int each time.
struct Ints<'py> {
    py: Python<'py>,
    slots: Vec<Option<Bound<'py, PyAny>>>,
}

impl<'py> Ints<'py> {
    fn new(py: Python<'py>, bound: usize) -> Self {
        Ints {
            py,
            slots: (0..bound).map(|_| None).collect(),
        }
    }

    fn get(&mut self, id: u32) -> Bound<'py, PyAny> {
        match self.slots.get_mut(id as usize) {
            Some(Some(int)) => int.clone(),
            Some(slot) => {
                let Ok(int) = id.into_pyobject(self.py);
                slot.insert(int.into_any()).clone()
            }
            None => {
                let Ok(int) = id.into_pyobject(self.py);
                int.into_any()
            }
        }
    }
}

/// The rows of a batch of `n` texts (and their pairs), each text's ids at `flat` (native-endian
/// u32s): for row `k`, the template `layout` (`(-1, ids, type)` fixed tokens, `(0, [], type)`
/// the kept slice `a[k]` of the text, `(1, [], type)` the kept slice `b[k]` of its pair, as
/// `(start, stop)` indices into `flat`, given flat: `a[2k]`, `a[2k + 1]`, so that the caller
/// makes no list per text for the collector to count), padded with `pad_id` to `target` (on
/// the left when `left`; rows already that long or longer are left as they are). Returns the lists of
/// `input_ids`, then of `token_type_ids`, `attention_mask` and `special_tokens_mask` where asked
/// (None where not).
#[pyfunction]
#[pyo3(signature = (flat, a, b, layout, pad_id, target, left, types, mask, special))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn padded_rows<'py>(
    py: Python<'py>,
    flat: &[u8],
    a: Vec<usize>,
    b: Option<Vec<usize>>,
    layout: Vec<(i64, Vec<u32>, i64)>,
    pad_id: Option<u32>,
    target: usize,
    left: bool,
    types: bool,
    mask: bool,
    special: bool,
) -> PyResult<(
    Bound<'py, PyList>,
    Option<Bound<'py, PyList>>,
    Option<Bound<'py, PyList>>,
    Option<Bound<'py, PyList>>,
)> {
    if flat.len() % 4 != 0 {
        return Err(PyValueError::new_err(
            "flat ids: the length is not a multiple of 4",
        ));
    }
    let ids: Vec<u32> = flat
        .chunks_exact(4)
        .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let windows = |flat: Vec<usize>, what: &str| -> PyResult<Vec<[usize; 2]>> {
        if flat.len() % 2 != 0 {
            return Err(PyValueError::new_err(format!(
                "the {what} windows: {} bounds, not (start, stop) pairs",
                flat.len()
            )));
        }
        Ok(flat.chunks_exact(2).map(|w| [w[0], w[1]]).collect())
    };
    let a = windows(a, "text")?;
    let n = a.len();
    let b = match b {
        Some(b) => windows(b, "pair")?,
        None => vec![[0, 0]; n],
    };
    if b.len() != n {
        return Err(PyValueError::new_err(
            "the pair windows are not one per text",
        ));
    }
    for &[start, stop] in a.iter().chain(&b) {
        if start > stop || stop > ids.len() {
            return Err(PyValueError::new_err(format!(
                "window {start}..{stop} is outside the {} flat ids",
                ids.len()
            )));
        }
    }
    let mut items = Vec::with_capacity(layout.len());
    for (what, fixed, type_id) in layout {
        let item = match what {
            0 => Item::A,
            1 => Item::B,
            -1 => Item::Fixed(fixed),
            _ => {
                return Err(PyValueError::new_err(format!(
                    "unknown template item {what}"
                )))
            }
        };
        items.push((item, type_id));
    }
    let pad = match pad_id {
        Some(p) => p,
        None if target == 0 => 0,
        None => return Err(PyValueError::new_err("padding needs a pad id")),
    };

    // The table covers the ids this batch uses, up to twice as many slots as the batch has ids
    // (its making is then a small part of the call: a table up to the largest id, about 128k
    // slots for Llama 3, cost a text of 250 ids 100 microseconds); larger ids get an int of
    // their own.
    let largest = ids.iter().copied().max().unwrap_or(0).max(pad) as usize;
    let bound = (largest + 1).min(2 * ids.len() + 1024);
    let mut ints = Ints::new(py, bound);
    let small = |v: i64| -> Bound<'py, PyAny> {
        let Ok(int) = v.into_pyobject(py);
        int.into_any()
    };
    let (zero, one) = (small(0), small(1));
    let type_ints: Vec<Bound<'py, PyAny>> = items.iter().map(|(_, t)| small(*t)).collect();

    // Each out of the collector's sight until all are made (`BatchLists`).
    let mut all_ids = super::BatchLists::gil_held(py, n);
    let mut all_types = super::BatchLists::with_capacity(py, if types { n } else { 0 });
    let mut all_mask = super::BatchLists::with_capacity(py, if mask { n } else { 0 });
    let mut all_special = super::BatchLists::with_capacity(py, if special { n } else { 0 });
    let mut row: Vec<Bound<'py, PyAny>> = Vec::new();
    let mut row_types: Vec<Bound<'py, PyAny>> = Vec::new();
    let mut row_special: Vec<Bound<'py, PyAny>> = Vec::new();
    for k in 0..n {
        let len: usize = items
            .iter()
            .map(|(item, _)| match item {
                Item::A => a[k][1] - a[k][0],
                Item::B => b[k][1] - b[k][0],
                Item::Fixed(f) => f.len(),
            })
            .sum();
        let gap = target.saturating_sub(len);
        row.clear();
        row_types.clear();
        row_special.clear();
        for ((item, _), type_int) in items.iter().zip(&type_ints) {
            let (part, is_special): (&[u32], bool) = match item {
                Item::A => (&ids[a[k][0]..a[k][1]], false),
                Item::B => (&ids[b[k][0]..b[k][1]], false),
                Item::Fixed(f) => (f, true),
            };
            row.extend(part.iter().map(|&id| ints.get(id)));
            if types {
                row_types.extend(std::iter::repeat_n(type_int, part.len()).cloned());
            }
            if special {
                let flag = if is_special { &one } else { &zero };
                row_special.extend(std::iter::repeat_n(flag, part.len()).cloned());
            }
        }
        pad_rows(
            &mut ints,
            pad,
            gap,
            (&zero, &one),
            &mut row,
            types.then_some(&mut row_types),
            special.then_some(&mut row_special),
        );
        if left {
            // the padding made at the end goes to the front
            row.rotate_right(gap);
            if types {
                row_types.rotate_right(gap);
            }
            if special {
                row_special.rotate_right(gap);
            }
        }
        all_ids.push(PyList::new(py, row.drain(..))?);
        if types {
            all_types.push(PyList::new(py, row_types.drain(..))?);
        }
        if mask {
            let ones = std::iter::repeat_n(&one, len);
            let zeros = std::iter::repeat_n(&zero, gap);
            let flags: Vec<&Bound<'py, PyAny>> = if left {
                zeros.chain(ones).collect()
            } else {
                ones.chain(zeros).collect()
            };
            all_mask.push(PyList::new(py, flags)?);
        }
        if special {
            all_special.push(PyList::new(py, row_special.drain(..))?);
        }
    }
    Ok((
        all_ids.finish()?,
        if types {
            Some(all_types.finish()?)
        } else {
            None
        },
        if mask { Some(all_mask.finish()?) } else { None },
        if special {
            Some(all_special.finish()?)
        } else {
            None
        },
    ))
}

/// `gap` padding items at the end of a row's lists: the pad id in `row`, type 0 in `types`
/// and the flag 1 in `special` (each where asked for).
fn pad_rows<'py>(
    ints: &mut Ints<'py>,
    pad: u32,
    gap: usize,
    (zero, one): (&Bound<'py, PyAny>, &Bound<'py, PyAny>),
    row: &mut Vec<Bound<'py, PyAny>>,
    types: Option<&mut Vec<Bound<'py, PyAny>>>,
    special: Option<&mut Vec<Bound<'py, PyAny>>>,
) {
    if gap == 0 {
        return;
    }
    let int = ints.get(pad);
    row.extend(std::iter::repeat_n(&int, gap).cloned());
    if let Some(types) = types {
        types.extend(std::iter::repeat_n(zero, gap).cloned());
    }
    if let Some(special) = special {
        special.extend(std::iter::repeat_n(one, gap).cloned());
    }
}
