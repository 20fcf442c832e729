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
    let layout = Layout::new::<T>();
    if layout.size() == 0 {
        return Some(Box::new(value)); // allocates nothing
    }
    // SAFETY: the layout has a non-zero size.
    let p = unsafe { alloc(layout) }.cast::<T>();
    if p.is_null() {
        return None;
    }
    // SAFETY: `p` is a fresh allocation of `T`'s layout from the global allocator, which is
    // what `Box` frees with; it is written before the box owns it.
    unsafe {
        p.write(value);
        Some(Box::from_raw(p))
    }
}

/// `vec![value; n]`, or `None` when the memory cannot be had.
pub(crate) fn filled<T: Clone>(value: T, n: usize) -> Option<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).ok()?;
    v.resize(n, value); // within the capacity reserved: no allocation
    Some(v)
}

/// `s.to_owned()`, or `None` when the memory cannot be had.
pub(crate) fn string(s: &str) -> Option<String> {
    let mut out = String::new();
    out.try_reserve_exact(s.len()).ok()?;
    out.push_str(s); // within the capacity reserved: no allocation
    Some(out)
}

/// `v.push(item)`, or `Err(item)` back when the memory for it cannot be had.
pub(crate) fn push<T>(v: &mut Vec<T>, item: T) -> Result<(), T> {
    if v.try_reserve(1).is_err() {
        return Err(item);
    }
    v.push(item); // within the capacity reserved: no allocation
    Ok(())
}
