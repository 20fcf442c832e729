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
//! (see [`fork_safety`]).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Number of shards (a power of two).
const SHARDS: usize = 16;
/// Fibonacci hashing multiplier (truncated to the pointer width: still odd).
const MIX: usize = 0x9E37_79B9_7F4A_7C15_u64 as usize;

/// Hashes an address: multiplicative, folded so that the low bits (what the table indexes by)
/// depend on the high ones, since arena addresses are aligned.
#[derive(Default)]
struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_usize(b as usize);
        }
    }

    fn write_usize(&mut self, addr: usize) {
        let h = (self.0 ^ addr as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 29);
    }
}

/// Who frees an arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owner {
    /// A Rust owner (`jitarena::Arena`, the replay harness), which frees it on drop.
    Rust,
    /// The C caller, through `jitarena_destroy`.
    C,
}

/// Live arena addresses and their owners.
type Set = HashMap<usize, Owner, BuildHasherDefault<AddrHasher>>;

static LIVE: [Mutex<Set>; SHARDS] =
    [const { Mutex::new(HashMap::with_hasher(BuildHasherDefault::new())) }; SHARDS];

/// The shard of an address, locked. A poisoned shard is still consistent: every critical
/// section below is one set operation.
fn shard(addr: usize) -> MutexGuard<'static, Set> {
    let index = addr.wrapping_mul(MIX) >> (usize::BITS - SHARDS.trailing_zeros());
    LIVE[index].lock().unwrap_or_else(PoisonError::into_inner)
}

/// Records the arena at `addr` as live, owned by Rust code until [`hand_to_c`]; fails, with
/// nothing recorded, only when the memory to record it cannot be had.
pub(crate) fn register(addr: usize) -> Result<(), ()> {
    fork_safety::install();
    let mut set = shard(addr);
    set.try_reserve(1).map_err(drop)?;
    set.insert(addr, Owner::Rust); // within the room reserved: no allocation
    Ok(())
}

/// Records that the live arena at `addr` now belongs to a C caller (`jitarena_create`).
pub(crate) fn hand_to_c(addr: usize) {
    if let Some(owner) = shard(addr).get_mut(&addr) {
        *owner = Owner::C;
    }
}

/// Records the arena at `addr` as gone; false if it was not live.
pub(crate) fn unregister(addr: usize) -> bool {
    shard(addr).remove(&addr).is_some()
}

/// The owner of the live arena at `addr`, or `None` if no live arena is there.
pub(crate) fn owner(addr: usize) -> Option<Owner> {
    shard(addr).get(&addr).copied()
}

/// Fork: a child is a copy of one thread, and a shard that another thread held at the fork
/// would stay locked in the child for ever. `pthread_atfork` handlers take every shard before
/// the fork and release them after it, in the parent and in the child, as glibc does for
/// `malloc`.
#[cfg(all(unix, not(miri)))]
mod fork_safety {
    use std::cell::RefCell;
    use std::ffi::c_int;
    use std::sync::{MutexGuard, Once, PoisonError};

    use super::{Set, LIVE};

    extern "C" {
        fn pthread_atfork(
            prepare: Option<unsafe extern "C" fn()>,
            parent: Option<unsafe extern "C" fn()>,
            child: Option<unsafe extern "C" fn()>,
        ) -> c_int;
    }

    thread_local! {
        /// The shards the forking thread holds between `prepare` and `release`.
        static HELD: RefCell<Vec<MutexGuard<'static, Set>>> = const { RefCell::new(Vec::new()) };
    }

    /// Registers the handlers, once per process.
    pub(super) fn install() {
        static ONCE: Once = Once::new();
        // SAFETY: the handlers are plain functions of this library, which is never unloaded
        // while it has arenas (a `staticlib` or `rlib` is part of the program).
        ONCE.call_once(|| unsafe {
            pthread_atfork(Some(prepare), Some(release), Some(release));
        });
    }

    /// Before `fork`: takes every shard, in index order (as every other path takes one at most).
    unsafe extern "C" fn prepare() {
        let _ = HELD.try_with(|held| {
            let mut held = held.borrow_mut();
            for shard in &LIVE {
                held.push(shard.lock().unwrap_or_else(PoisonError::into_inner));
            }
        });
    }

    /// After `fork`, in the parent and in the child: gives the shards back.
    unsafe extern "C" fn release() {
        let _ = HELD.try_with(|held| held.borrow_mut().clear());
    }
}

/// Without `fork` (or under miri, which cannot call `pthread_atfork`): nothing to install.
#[cfg(not(all(unix, not(miri))))]
mod fork_safety {
    /// Nothing to do.
    pub(super) fn install() {}
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
