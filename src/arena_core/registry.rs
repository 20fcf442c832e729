//! The process-wide set of live arenas, by address, so that the C entry points can refuse a
//! destroyed (or never created) arena pointer without reading the memory it points to.
//!
//! An arena is added when [`super::raw::RawArena::new`] boxes it and removed when it is dropped.
//! A C entry point looks the pointer up first and touches the arena only if it is listed, so a
//! use after `jitarena_destroy` is refused with `JITARENA_E_STATE` instead of reading freed
//! memory. One limit remains: once a new arena is created at the address of a destroyed one, a
//! stale pointer names the new arena, which the lookup cannot tell apart (memory-safe, but the
//! caller's bug then lands on the new arena).
//!
//! Only the out-of-line entry points consult the set (create, destroy, reset, the slow path,
//! phase switches, readers, `method_done`); the inline fast path of the header never does. The
//! set is split into shards by address so that threads working on different arenas rarely meet
//! on one lock, and a fork taken while another thread holds a shard leaves the child usable
//! (the fork handlers of `crate::fork` hold every shard across a `fork`).

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Number of shards (a power of two).
pub(crate) const SHARDS: usize = 16;
/// Fibonacci hashing multiplier (truncated to the pointer width: still odd).
const MIX: usize = 0x9E37_79B9_7F4A_7C15_u64 as usize;

/// Who frees an arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owner {
    /// A Rust owner (`jitarena::Arena`, the replay harness), which frees it on drop.
    Rust,
    /// The C caller, through `jitarena_destroy`.
    C,
}

/// Live arena addresses and their owners, sorted by address: a JIT has a few live arenas
/// (one per compiling thread), so a sorted list is as fast as a hash table here, and it can
/// grow only through `try_reserve` (a `HashMap`'s insert links a growth path that aborts).
#[derive(Default)]
pub(crate) struct Set(Vec<(usize, Owner)>);

impl Set {
    const fn new() -> Set {
        Set(Vec::new())
    }

    fn find(&self, addr: usize) -> Result<usize, usize> {
        self.0.binary_search_by_key(&addr, |&(a, _)| a)
    }

    fn get(&self, addr: usize) -> Option<Owner> {
        let at = self.find(addr).ok()?;
        self.0.get(at).map(|&(_, owner)| owner)
    }

    fn get_mut(&mut self, addr: usize) -> Option<&mut Owner> {
        let at = self.find(addr).ok()?;
        self.0.get_mut(at).map(|(_, owner)| owner)
    }

    /// Adds `addr` (or sets its owner); fails, adding nothing, when memory runs out.
    fn insert(&mut self, addr: usize, owner: Owner) -> Result<(), ()> {
        let at = match self.find(addr) {
            Ok(at) => {
                if let Some(entry) = self.0.get_mut(at) {
                    entry.1 = owner;
                }
                return Ok(());
            }
            Err(at) => at.min(self.0.len()),
        };
        self.0.try_reserve(1).map_err(drop)?;
        let len = self.0.len();
        // SAFETY: there is room for one more entry (reserved above) and `at <= len`: the
        // entries from `at` move one place up within the allocation, then the new one fills
        // the gap, so all `len + 1` entries are initialized.
        unsafe {
            let p = self.0.as_mut_ptr().add(at);
            std::ptr::copy(p, p.add(1), len - at);
            p.write((addr, owner));
            self.0.set_len(len + 1);
        }
        Ok(())
    }

    fn remove(&mut self, addr: usize) -> Option<Owner> {
        let at = self.find(addr).ok()?;
        let owner = self.0.get(at)?.1;
        let len = self.0.len();
        // SAFETY: `at < len` (it was found): the entries after it move one place down over
        // it, within the initialized entries, and the length drops by the one removed (an
        // entry is two plain values: nothing to drop). `Vec::remove` does the same, but
        // reports a bad index with a panic.
        unsafe {
            let p = self.0.as_mut_ptr().add(at);
            std::ptr::copy(p.add(1), p, len - at - 1);
            self.0.set_len(len - 1);
        }
        Some(owner)
    }
}

static LIVE: [Mutex<Set>; SHARDS] = [const { Mutex::new(Set::new()) }; SHARDS];

/// The shard of an address, locked. A poisoned shard is still consistent: every critical
/// section below is one set operation.
fn shard(addr: usize) -> MutexGuard<'static, Set> {
    let index = addr.wrapping_mul(MIX) >> (usize::BITS - SHARDS.trailing_zeros());
    lock(&LIVE[index % SHARDS])
}

fn lock(shard: &'static Mutex<Set>) -> MutexGuard<'static, Set> {
    shard.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Every shard, locked in index order (as every other path takes one at most): what the fork
/// handlers hold across a `fork`, so that the child never inherits a shard that a thread
/// which does not exist in it held.
#[cfg_attr(not(unix), allow(dead_code))] // the fork handlers' (Unix)
pub(crate) fn lock_all() -> [MutexGuard<'static, Set>; SHARDS] {
    LIVE.each_ref().map(lock)
}

/// Records the arena at `addr` as live, owned by Rust code until [`hand_to_c`]; fails, with
/// nothing recorded, only when the memory to record it cannot be had.
/// Bumped whenever an arena leaves the set or changes owner: a thread's cached look-up (see
/// [`LAST`]) of an older epoch is looked up again.
static EPOCH: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// This thread's last look-up that found an arena: its address, the epoch it was found in
    /// and its owner, so that the calls of one method on one arena (reset, end, reads) take no
    /// lock. An arena that left the set since has bumped the epoch.
    static LAST: Cell<(usize, u64, Option<Owner>)> = const { Cell::new((0, u64::MAX, None)) };
}

/// Notes a look-up's answer for this thread.
fn remember(addr: usize, epoch: u64, owner: Option<Owner>) {
    // A thread being torn down has no cache: nothing is remembered.
    let _ = LAST.try_with(|last| last.set((addr, epoch, owner)));
}

/// Lists a new arena (owned by Rust until handed to C).
pub(crate) fn register(addr: usize) -> Result<(), ()> {
    let epoch = EPOCH.load(Ordering::Acquire);
    shard(addr).insert(addr, Owner::Rust)?;
    remember(addr, epoch, Some(Owner::Rust));
    Ok(())
}

/// Hands a listed arena to a C owner.
pub(crate) fn hand_to_c(addr: usize) {
    let mut set = shard(addr);
    if let Some(owner) = set.get_mut(addr) {
        *owner = Owner::C;
        let epoch = EPOCH.fetch_add(1, Ordering::AcqRel) + 1;
        remember(addr, epoch, Some(Owner::C));
    }
}

/// Takes an arena out of the set; whether it was listed.
pub(crate) fn unregister(addr: usize) -> bool {
    let mut set = shard(addr);
    let found = set.remove(addr).is_some();
    // Bumped while the shard is held: a look-up that found the arena before its removal
    // cached an older epoch.
    EPOCH.fetch_add(1, Ordering::AcqRel);
    remember(0, u64::MAX, None);
    found
}

/// The owner of a listed arena, or `None`: from this thread's last look-up when nothing left
/// the set or changed owner since, else from the set.
#[inline]
pub(crate) fn owner(addr: usize) -> Option<Owner> {
    let epoch = EPOCH.load(Ordering::Acquire);
    if let Ok((last, seen, owner)) = LAST.try_with(Cell::get) {
        if last == addr && seen == epoch && owner.is_some() {
            return owner;
        }
    }
    look_up(addr, epoch)
}

/// [`owner`] from the set, remembered for this thread.
#[cold]
#[inline(never)]
fn look_up(addr: usize, epoch: u64) -> Option<Owner> {
    let owner = shard(addr).get(addr);
    if owner.is_some() {
        remember(addr, epoch, owner);
    }
    owner
}

#[cfg(all(test, target_os = "linux", not(miri)))]
mod tests {
    use std::ffi::c_int;
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    use super::*;

    extern "C" {
        fn fork() -> c_int;
        fn waitpid(pid: c_int, status: *mut c_int, options: c_int) -> c_int;
        fn kill(pid: c_int, signal: c_int) -> c_int;
        fn _exit(code: c_int) -> !;
    }
    const WNOHANG: c_int = 1;
    const SIGKILL: c_int = 9;

    /// A fork taken while another thread holds a shard: without the fork handlers the child
    /// inherits the shard locked and blocks for ever on its first lookup.
    #[test]
    fn a_child_forked_while_a_shard_is_held_can_look_arenas_up() {
        // An odd address: never a real arena's, so no other test sees it.
        let addr = 0x5eed_0001;
        register(addr).unwrap();
        let (held_tx, held_rx) = mpsc::channel();
        let holder = std::thread::spawn(move || {
            let guard = shard(addr);
            held_tx.send(()).unwrap();
            std::thread::sleep(Duration::from_millis(300));
            drop(guard);
        });
        held_rx.recv().unwrap();
        // SAFETY: the child only locks a shard, reads the map and exits, without allocating.
        let pid = unsafe { fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            let ok = owner(addr) == Some(Owner::Rust);
            // SAFETY: ends the child at once, without running the parent's test harness.
            unsafe { _exit(if ok { 0 } else { 3 }) };
        }
        holder.join().unwrap();
        let mut status: c_int = 0;
        let start = Instant::now();
        let exited = loop {
            // SAFETY: `pid` is our child; `status` is writable.
            let done = unsafe { waitpid(pid, &mut status, WNOHANG) };
            if done == pid {
                break true;
            }
            if start.elapsed() > Duration::from_secs(10) {
                // SAFETY: our own child, stuck.
                unsafe { kill(pid, SIGKILL) };
                // SAFETY: as above; reaps it.
                unsafe { waitpid(pid, &mut status, 0) };
                break false;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        assert!(unregister(addr));
        assert!(exited, "the forked child deadlocked on a registry shard");
        assert_eq!(
            status, 0,
            "the child did not find the arena (wait status {status})"
        );
    }
}
