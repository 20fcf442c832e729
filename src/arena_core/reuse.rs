//! Destroyed arenas kept for the next creates: a JIT creates and destroys an arena per method
//! (the .NET JIT's stack-local arena in `jitNativeCode`), and an arena's head (3 KB of counters
//! and marks) and tables cost more to allocate and zero than to keep. A kept arena holds at
//! most one free page of the built-in pager, for its next method's first allocation (every
//! other page, and every page of a host's pager, goes back at destroy), and is not listed among the live
//! arenas, so its old pointer is refused as any destroyed arena's is. At most [`KEPT`] are
//! kept, process-wide, behind one lock taken once per create and destroy.

use std::sync::{Mutex, MutexGuard, PoisonError};

use super::raw::{ArenaSetup, RawArena};
use crate::error::Error;
use crate::fallible;

/// The most arenas kept: a JIT's compiling threads' worth.
const KEPT: usize = 8;

/// A retired arena.
pub(crate) struct Kept(Box<RawArena>);

// SAFETY: a retired arena holds no pointer into any thread's state: its one spare page is
// memory of the process's allocator (freed on any thread), its raw pointers (the host's page
// callbacks and context) are the config's, valid on any thread, and
// it is reached only under the list's lock until it is handed out whole.
unsafe impl Send for Kept {}

/// The retired arenas.
static RETIRED: Mutex<Vec<Kept>> = Mutex::new(Vec::new());

/// The list, locked (also held across `fork`, as every lock of the process-wide state is).
pub(crate) fn lock() -> MutexGuard<'static, Vec<Kept>> {
    RETIRED.lock().unwrap_or_else(PoisonError::into_inner)
}

/// An arena that `setup` would make, taken from the retired ones and listed as live again;
/// `None` when none fits (or memory to list it runs out: it is then dropped).
#[inline(never)]
pub(crate) fn take(setup: &ArenaSetup) -> Option<Result<Box<RawArena>, Error>> {
    let mut kept = {
        let mut list = lock();
        let at = list.iter().rposition(|k| k.0.fits(setup))?;
        list.swap_remove(at).0
    };
    Some(kept.revive().map(|()| kept))
}

/// Retires a destroyed arena and keeps it for a later create, or drops it when the list is
/// full (or has no room).
#[inline(never)]
pub(crate) fn keep(mut arena: Box<RawArena>) {
    arena.retire();
    let mut list = lock();
    if list.len() < KEPT {
        if let Err(back) = fallible::push(&mut list, Kept(arena)) {
            drop(list);
            drop(back);
        }
    }
}
