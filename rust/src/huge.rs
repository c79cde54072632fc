//! Tables that start empty (all zero bytes), in memory fresh from the system, each 2 MiB of it
//! asked to be one transparent huge page where the table will be written all over soon
//! (`Zeroed::in_huge_pages`), or from the allocator (`Zeroed::new`).
//!
//! A table of a few MiB written from scratch took one page fault a 4 KiB page, and a fresh
//! process's first pass over text paid them all at once: 512 for a word cache's 2 MiB of
//! slots (0.65 ms of a first call's 0.80), 512 more for each 2 MiB of a grown piece table.
//! A private anonymous mapping is zero already (no `memset`), and one advised before anything
//! touches it is backed by one huge page a 2 MiB, one fault each, where the system gives them
//! on request (Linux's `madvise` mode, the usual default). Elsewhere, or for tables under 2 MiB,
//! zeroed memory from the allocator.

use std::alloc::Layout;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

#[cfg(target_os = "linux")]
use crate::bpe::encode::advise_huge_any;
#[cfg(any(target_os = "linux", test))]
use crate::bpe::encode::HUGE_PAGE;

/// `len` values of `T` that start as all zero bytes.
pub struct Zeroed<T: Copy> {
    ptr: NonNull<T>,
    len: usize,
    /// from `map`, not the allocator
    mapped: bool,
}

// SAFETY: it owns its values as a `Box<[T]>` would.
unsafe impl<T: Copy + Send> Send for Zeroed<T> {}
// SAFETY: as above; shared access only reads.
unsafe impl<T: Copy + Sync> Sync for Zeroed<T> {}

impl<T: Copy> Zeroed<T> {
    /// `len` zero values in huge pages where the size is a multiple of `HUGE_PAGE` (else as
    /// `new`): for a table that will be written all over soon (its first touch maps 2 MiB).
    ///
    /// # Safety
    /// All zero bytes must be a valid `T`.
    pub unsafe fn in_huge_pages(len: usize) -> Zeroed<T> {
        // SAFETY: as the caller says.
        unsafe { Zeroed::make(len, true) }
    }

    /// `len` zero values from the allocator: fresh pages are mapped 4 KiB at a time as they are
    /// touched, so a table that a short call barely uses costs what it touches.
    ///
    /// # Safety
    /// All zero bytes must be a valid `T`.
    pub unsafe fn new(len: usize) -> Zeroed<T> {
        // SAFETY: as the caller says.
        unsafe { Zeroed::make(len, false) }
    }

    /// # Safety
    /// All zero bytes must be a valid `T`.
    unsafe fn make(len: usize, huge: bool) -> Zeroed<T> {
        let layout = Layout::array::<T>(len).expect("a table that fits in memory");
        if layout.size() == 0 {
            return Zeroed::default();
        }
        let mapped = if huge {
            map(layout.size())
        } else {
            std::ptr::null_mut()
        };
        let (raw, mapped) = match NonNull::new(mapped) {
            Some(p) => (p.as_ptr(), true),
            // SAFETY: the layout is not empty.
            None => (unsafe { std::alloc::alloc_zeroed(layout) }, false),
        };
        let Some(ptr) = NonNull::new(raw.cast::<T>()) else {
            std::alloc::handle_alloc_error(layout)
        };
        Zeroed { ptr, len, mapped }
    }

    fn layout(&self) -> Layout {
        Layout::array::<T>(self.len).expect("the layout it was made with")
    }
}

impl<T: Copy> Default for Zeroed<T> {
    fn default() -> Self {
        Zeroed {
            ptr: NonNull::dangling(),
            len: 0,
            mapped: false,
        }
    }
}

impl<T: Copy> Deref for Zeroed<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `len` values, zero or written since, owned (dangling and empty by default).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Copy> DerefMut for Zeroed<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as above, and `&mut self` is the only access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Copy> Drop for Zeroed<T> {
    fn drop(&mut self) {
        let layout = self.layout();
        if layout.size() == 0 {
            return;
        }
        if self.mapped {
            // SAFETY: mapped by `map` with this size, and dropped once.
            unsafe { unmap(self.ptr.as_ptr().cast(), layout.size()) };
        } else {
            // SAFETY: allocated by `alloc_zeroed` with this layout.
            unsafe { std::alloc::dealloc(self.ptr.as_ptr().cast(), layout) };
        }
    }
}

#[cfg(target_os = "linux")]
extern "C" {
    fn mmap(addr: *mut u8, len: usize, prot: i32, flags: i32, fd: i32, off: i64) -> *mut u8;
    fn munmap(addr: *mut u8, len: usize) -> i32;
}

/// `size` bytes (a multiple of `HUGE_PAGE`) of fresh memory from the system, zero, aligned to
/// `HUGE_PAGE` and advised to be huge pages before anything touches them; null where the size
/// is not such a multiple or the system gives none.
#[cfg(target_os = "linux")]
fn map(size: usize) -> *mut u8 {
    const PROT_READ: i32 = 1;
    const PROT_WRITE: i32 = 2;
    const MAP_PRIVATE: i32 = 2;
    const MAP_ANONYMOUS: i32 = 0x20;
    if size == 0 || size % HUGE_PAGE != 0 {
        return std::ptr::null_mut();
    }
    let total = size + HUGE_PAGE;
    // SAFETY: a new private anonymous mapping; the parts of it outside the aligned range are
    // given back at once.
    unsafe {
        let p = mmap(
            std::ptr::null_mut(),
            total,
            PROT_READ | PROT_WRITE,
            MAP_PRIVATE | MAP_ANONYMOUS,
            -1,
            0,
        );
        if p as isize == -1 {
            return std::ptr::null_mut();
        }
        let start = (p as usize).next_multiple_of(HUGE_PAGE);
        if start > p as usize {
            munmap(p, start - p as usize);
        }
        let end = p as usize + total;
        if end > start + size {
            munmap((start + size) as *mut u8, end - start - size);
        }
        advise_huge_any(start as *const u8, size);
        start as *mut u8
    }
}

#[cfg(not(target_os = "linux"))]
fn map(_size: usize) -> *mut u8 {
    std::ptr::null_mut()
}

/// # Safety
/// `p` and `size` are those of one `map` call, and nothing uses the memory after.
#[cfg(target_os = "linux")]
unsafe fn unmap(p: *mut u8, size: usize) {
    // SAFETY: as the caller says.
    unsafe { munmap(p, size) };
}

#[cfg(not(target_os = "linux"))]
unsafe fn unmap(_p: *mut u8, _size: usize) {
    unreachable!("nothing is mapped off Linux")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_start_zero_and_keep_what_is_written() {
        // under a huge page (the allocator), exactly one, and several
        for len in [
            0usize,
            1,
            1000,
            HUGE_PAGE / 8,
            3 * HUGE_PAGE / 8,
            HUGE_PAGE / 8 + 1,
        ] {
            // SAFETY: zero is a `u64`.
            let mut t = unsafe {
                if len % 2 == 0 {
                    Zeroed::<u64>::in_huge_pages(len)
                } else {
                    Zeroed::<u64>::new(len)
                }
            };
            assert_eq!(t.len(), len);
            assert!(t.iter().all(|&x| x == 0), "{len}");
            for (i, x) in t.iter_mut().enumerate() {
                *x = i as u64 * 7 + 1;
            }
            assert!(t.iter().enumerate().all(|(i, &x)| x == i as u64 * 7 + 1));
            t.fill(0);
            assert!(t.iter().all(|&x| x == 0));
        }
    }
}
