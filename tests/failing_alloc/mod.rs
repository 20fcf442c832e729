//! A global allocator for tests whose allocations can be made to fail, per thread: from the
//! `n`th on, or only the `n`th, as a JIT out of memory sees them. Shared by the test binaries
//! that include it (`mod failing_alloc;`), each of which gets its own.
#![allow(dead_code)] // each binary uses some of it

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    /// Whether this thread's allocations fail.
    pub static FAILING: Cell<bool> = const { Cell::new(false) };
    /// Allocations of this thread that succeed before [`FAILING`] is set (`usize::MAX`: no
    /// limit): the injection of a failure at the `n`th allocation of a call.
    static SUCCEED_FOR: Cell<usize> = const { Cell::new(usize::MAX) };
    /// When the count of [`SUCCEED_FOR`] runs out, only that allocation fails.
    static ONLY_ONE: Cell<bool> = const { Cell::new(false) };
    /// Whether an allocation of this thread failed since the last look.
    pub static FAILED: Cell<bool> = const { Cell::new(false) };
    /// Bytes this thread's allocations hold (what it freed subtracted).
    pub static LIVE: Cell<i64> = const { Cell::new(0) };
}

/// The system allocator, except that it returns NULL while [`FAILING`] is set.
struct FailWhenAsked;

pub fn failing() -> bool {
    let fail = FAILING.try_with(Cell::get).unwrap_or(false)
        || SUCCEED_FOR
            .try_with(|left| match left.get() {
                usize::MAX => false,
                0 => {
                    match ONLY_ONE.with(Cell::get) {
                        true => left.set(usize::MAX),
                        false => FAILING.with(|on| on.set(true)),
                    }
                    true
                }
                n => {
                    left.set(n - 1);
                    false
                }
            })
            .unwrap_or(false);
    if fail {
        let _ = FAILED.try_with(|f| f.set(true));
    }
    fail
}

/// Counts `bytes` more (or fewer) held by this thread.
fn held(bytes: i64) {
    let _ = LIVE.try_with(|live| live.set(live.get() + bytes));
}

// SAFETY: every call is forwarded to `System` with its arguments, or answered with NULL,
// which `GlobalAlloc` allows for any request.
unsafe impl GlobalAlloc for FailWhenAsked {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if failing() {
            return std::ptr::null_mut();
        }
        held(layout.size() as i64);
        // SAFETY: forwarded contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if failing() {
            return std::ptr::null_mut();
        }
        held(layout.size() as i64);
        // SAFETY: forwarded contract.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if failing() {
            return std::ptr::null_mut();
        }
        held(new_size as i64 - layout.size() as i64);
        // SAFETY: forwarded contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        held(-(layout.size() as i64));
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: FailWhenAsked = FailWhenAsked;

/// Runs `f` with every allocation of this thread failing.
pub fn without_memory<T>(f: impl FnOnce() -> T) -> T {
    FAILING.with(|on| on.set(true));
    let out = f();
    FAILING.with(|on| on.set(false));
    FAILED.with(|f| f.set(false));
    out
}

/// Runs `f` with the allocations of this thread failing from the `n`th on (0: the first);
/// whether any failed.
pub fn failing_from<T>(n: usize, f: impl FnOnce() -> T) -> (T, bool) {
    injected(n, false, f)
}

/// Runs `f` with the `n`th allocation of this thread failing, and no other; whether it did.
pub fn failing_once_at<T>(n: usize, f: impl FnOnce() -> T) -> (T, bool) {
    injected(n, true, f)
}

pub fn injected<T>(n: usize, only_one: bool, f: impl FnOnce() -> T) -> (T, bool) {
    ONLY_ONE.with(|one| one.set(only_one));
    SUCCEED_FOR.with(|left| left.set(n));
    let out = f();
    FAILING.with(|on| on.set(false));
    SUCCEED_FOR.with(|left| left.set(usize::MAX));
    (out, FAILED.with(|f| f.replace(false)))
}

/// The header's inline `jitarena_set_phase`, as a C caller compiles it: one mark into the
/// arena's head, or its out-of-line part when the head takes no more.
///
/// # Safety
/// `arena` is a live arena used by this thread only.
pub unsafe fn jitarena_set_phase(arena: *mut jitarena::sys::jitarena, phase: u32) {
    use jitarena::sys::{jitarena_head, jitarena_mark, JITARENA_MARK_SWITCH};
    extern "C" {
        fn jitarena_phase_mark_slow(arena: *mut jitarena::sys::jitarena, phase: u32, op: u32);
    }
    // SAFETY: a live arena starts with its head, used by this thread only (the contract).
    let head = unsafe { &mut *arena.cast::<jitarena_head>() };
    let size = std::mem::size_of::<jitarena_mark>();
    if head.mark_next < head.mark_limit {
        let start = head.marks.as_ptr().addr();
        let at = head.mark_next.wrapping_sub(start) / size;
        if let Some(m) = head.marks.get_mut(at) {
            *m = jitarena_mark {
                used: head.cursor.wrapping_sub(head.used_bias),
                phase,
                op: JITARENA_MARK_SWITCH,
            };
            head.mark_next += size;
            return;
        }
    }
    // SAFETY: as above.
    unsafe { jitarena_phase_mark_slow(arena, phase, JITARENA_MARK_SWITCH) };
}
