//! Allocations that report failure instead of aborting the process, for the paths of the
//! arena that a JIT calls: `Box::new`, `vec![0; n]` or `str::to_owned` abort a JIT that is
//! out of memory, where the C ABI promises a failure code. Each returns [`out_of_memory`]'s
//! error when the memory cannot be had (`tests/alloc_failure.rs` makes allocations fail).

use std::alloc::{alloc, Layout};

use crate::error::{Error, ErrorCode};

/// The failure of an allocation of the library's own bookkeeping.
pub(crate) fn out_of_memory(what: &'static str) -> Error {
    Error::new(ErrorCode::OutOfMemory, what)
}

/// `Box::new(value)`, or `None` when the memory cannot be had.
pub(crate) fn boxed<T>(value: T) -> Option<Box<T>> {
    boxed_or_back(value).ok()
}

/// `Box::new(value)`, or `Err(value)` back when the memory cannot be had.
pub(crate) fn boxed_or_back<T>(value: T) -> Result<Box<T>, T> {
    let layout = Layout::new::<T>();
    if layout.size() == 0 {
        return Ok(Box::new(value)); // allocates nothing
    }
    // SAFETY: the layout has a non-zero size.
    let p = unsafe { alloc(layout) }.cast::<T>();
    if p.is_null() {
        return Err(value);
    }
    // SAFETY: `p` is a fresh allocation of `T`'s layout from the global allocator, which is
    // what `Box` frees with; it is written before the box owns it.
    unsafe {
        p.write(value);
        Ok(Box::from_raw(p))
    }
}

/// A box of zeroed memory (from `alloc_zeroed`, which a fresh allocation may give without
/// writing it), or `None` when the memory cannot be had.
///
/// # Safety
/// All-zero bytes are a valid `T`, and `T` has a non-zero size.
pub(crate) unsafe fn boxed_zeroed<T>() -> Option<Box<T>> {
    let layout = Layout::new::<T>();
    // SAFETY: the layout has a non-zero size per the contract.
    let p = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    if p.is_null() {
        return None;
    }
    // SAFETY: `p` is a fresh allocation of `T`'s layout from the global allocator (what `Box`
    // frees with), and its zero bytes are a valid `T` per the contract.
    Some(unsafe { Box::from_raw(p) })
}

/// `vec![value; n]`, or `None` when the memory cannot be had.
pub(crate) fn filled<T: Clone>(value: T, n: usize) -> Option<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).ok()?;
    resize_within(&mut v, n, value);
    Some(v)
}

/// `v.resize(n, value)` within the capacity `v` has: it grows to at most its capacity (the
/// caller reserved the room), never allocating, so it links no growth path.
pub(crate) fn resize_within<T: Clone>(v: &mut Vec<T>, n: usize, value: T) {
    let len = v.len();
    if n <= len {
        v.truncate(n);
        return;
    }
    let spare = v.spare_capacity_mut();
    let add = spare.len().min(n - len);
    for slot in spare.iter_mut().take(add) {
        slot.write(value.clone());
    }
    // SAFETY: the `add` slots after `len` were just written (`add` is at most the spare
    // capacity).
    unsafe { v.set_len(len + add) };
}

/// `s.to_owned()`, or `None` when the memory cannot be had.
pub(crate) fn string(s: &str) -> Option<String> {
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(s.len()).ok()?;
    extend_within(&mut bytes, s.as_bytes()).then_some(())?;
    // SAFETY: the bytes are a copy of `s`'s, which are UTF-8.
    Some(unsafe { String::from_utf8_unchecked(bytes) })
}

/// `v.push(item)`, or `Err(item)` back when the memory for it cannot be had.
pub(crate) fn push<T>(v: &mut Vec<T>, item: T) -> Result<(), T> {
    if v.try_reserve(1).is_err() {
        return Err(item);
    }
    push_within(v, item)
}

/// `v.push(item)` within the capacity `v` has, or `Err(item)` back when it is full. Unlike
/// `push`, it can never grow `v`, so it links no growth path (which can abort the process).
#[inline]
pub(crate) fn push_within<T>(v: &mut Vec<T>, item: T) -> Result<(), T> {
    let len = v.len();
    if len == v.capacity() {
        return Err(item);
    }
    // SAFETY: `len < capacity`, so the slot at `len` is allocated and unused; once written,
    // it is initialized and may be counted in the length.
    unsafe {
        v.as_mut_ptr().add(len).write(item);
        v.set_len(len + 1);
    }
    Ok(())
}

/// `v.extend_from_slice(bytes)` within the capacity `v` has; false, appending nothing, when
/// they do not fit. Like [`push_within`], it never grows `v`.
#[inline]
pub(crate) fn extend_within(v: &mut Vec<u8>, bytes: &[u8]) -> bool {
    let len = v.len();
    if v.capacity() - len < bytes.len() {
        return false;
    }
    // SAFETY: the `bytes.len()` bytes after `len` are allocated (checked above) and unused;
    // `bytes` cannot alias them, since `v` is borrowed mutably here; once copied they are
    // initialized.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), v.as_mut_ptr().add(len), bytes.len());
        v.set_len(len + bytes.len());
    }
    true
}

/// The error of an allocation that failed (no text to allocate).
pub(crate) fn no_memory(_: std::collections::TryReserveError) -> std::io::Error {
    std::io::Error::from(std::io::ErrorKind::OutOfMemory)
}
