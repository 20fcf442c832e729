//! `fork` in a process that uses the library, for the API layer (the C entry points and the
//! Rust facade), which installs the handlers before anything takes a lock of the process-wide
//! state: fork handlers hold every lock of the
//! process-wide state (schema cache, aggregate, stats log, trace, the shards of the registry of
//! live arenas) across the fork, so that the child never inherits a lock held by a thread that
//! does not exist in it, and they count forks, so that a child knows that the open log and
//! trace belong to its parent. A child
//! never writes to them: a log named with `%p` continues in a file of the child's own, and
//! otherwise the child's records get `JITARENA_E_STATE` until it opens a log; see "Process-wide
//! state" in the header.

#![cfg_attr(any(not(unix), miri), allow(dead_code))]

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether the handlers are registered (or being registered by some thread).
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// The locks held from the fork handler `prepare` to `parent` or `child`.
struct Held {
    _schemas: std::sync::MutexGuard<'static, Vec<crate::shared::Shared<crate::counters::Schema>>>,
    _names: std::sync::MutexGuard<'static, Option<crate::counters::NamesSeen>>,
    _retired: std::sync::MutexGuard<'static, Vec<crate::arena_core::reuse::Kept>>,
    _state: crate::recorder::Held,
    _arenas: [std::sync::MutexGuard<'static, crate::arena_core::registry::Set>;
        crate::arena_core::registry::SHARDS],
}

/// The forking thread's locks during a fork: set by `prepare` once it holds every lock, taken
/// by `parent` or `child` (in the thread that called `fork`, or in the child's copy of it),
/// which release them. Not a thread-local: one with a destructor is registered with the C
/// library on first use, which can fail and abort.
struct HeldSlot(UnsafeCell<Option<Held>>);

// SAFETY: only a thread that holds every lock of `Held` touches the slot (between its
// `prepare` and its `parent` or `child`), so the locks themselves serialize its users.
unsafe impl Sync for HeldSlot {}

static HELD: HeldSlot = HeldSlot(UnsafeCell::new(None));

/// Registers the fork handlers, once per process (cheap after the first call). Called
/// before the process-wide state is first used, and never with one of its locks held: `fork`
/// runs the handlers under the C library's own lock, which registering takes too.
pub(crate) fn install_handlers() {
    if INSTALLED.load(Ordering::Relaxed) || INSTALLED.swap(true, Ordering::AcqRel) {
        return;
    }
    register();
}

#[cfg(all(unix, not(miri)))]
fn register() {
    type Handler = Option<unsafe extern "C" fn()>;
    // Declared here: the `libc` crate lacks it on some Unix targets the library builds for.
    extern "C" {
        fn pthread_atfork(prepare: Handler, parent: Handler, child: Handler) -> std::ffi::c_int;
    }
    // SAFETY: `pthread_atfork` is POSIX, declared here with its C signature (three nullable
    // function pointers taking and returning nothing, an int result); the handlers are
    // functions of this library, which stay valid while they are registered (glibc removes a
    // shared object's handlers when it is unloaded; musl never unloads one).
    let rc = unsafe { pthread_atfork(Some(prepare), Some(parent), Some(child)) };
    if rc != 0 {
        // ENOMEM: forks stay as unprotected as without the handlers; allow a later retry.
        INSTALLED.store(false, Ordering::Release);
    }
}

/// No handlers: no `fork` on this platform, or under miri (which has no `pthread_atfork`).
#[cfg(any(not(unix), miri))]
fn register() {}

/// Before `fork`: takes every lock, in the one order used everywhere.
#[cfg(unix)]
extern "C" fn prepare() {
    let held = Held {
        _schemas: crate::counters::lock_schema_cache(),
        _names: crate::counters::lock_names_seen(),
        _retired: crate::arena_core::reuse::lock(),
        _state: crate::recorder::lock_all(),
        _arenas: crate::arena_core::registry::lock_all(),
    };
    // SAFETY: this thread holds every lock (just taken), so no other thread touches the slot
    // until they are released, from the slot, by this thread's `parent` or `child`.
    unsafe { *HELD.0.get() = Some(held) };
}

/// After `fork`, in the parent: releases the locks.
#[cfg(unix)]
extern "C" fn parent() {
    release();
}

/// After `fork`, in the child: counts the fork, stops trace recording (the trace is the
/// parent's), releases the locks. Only atomic operations and unlocks (an atomic swap and, if
/// another thread was waiting, a futex wake that finds no one): nothing that allocates.
#[cfg(unix)]
extern "C" fn child() {
    crate::recorder::forked_into_child();
    release();
}

#[cfg(unix)]
fn release() {
    // SAFETY: `prepare` ran in this thread (or in the parent's copy of it) and filled the slot
    // while holding every lock, which this thread still holds: no other thread touches it.
    drop(unsafe { (*HELD.0.get()).take() });
}
