//! Misuse of the C ABI: destroyed and foreign arena pointers, an arena destroyed by the wrong
//! owner, a panic on the slow path. These run under miri too (`.ci/run`), which reports any
//! read of freed memory or aliasing violation in the library's own checks.

use std::ffi::CStr;
use std::ptr;
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::*;
use crate::sys::{JITARENA_E_NULL, JITARENA_E_STATE};

/// The exported slow path is C (`src/driver/site.c`), which miri cannot run: its Rust part,
/// with an unknown site.
unsafe fn jitarena_alloc_slow(
    arena: *mut jitarena,
    size: usize,
    kind: u32,
) -> *mut std::ffi::c_void {
    // SAFETY: forwarded contract.
    unsafe { jitarena_alloc_slow_at(arena, size, kind, ptr::null()) }
}

/// Taken by every test here that creates an arena: a test that destroys one then checks the
/// dangling pointer must not see another test's new arena land at the same address.
static ARENAS: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    ARENAS.lock().unwrap_or_else(PoisonError::into_inner)
}

fn make_arena() -> *mut jitarena {
    let kinds = [c"ASTNode".as_ptr(), c"LSRA".as_ptr()];
    let mut cfg = default_config();
    cfg.kind_names = kinds.as_ptr();
    cfg.kind_count = 2;
    // SAFETY: a config from `default_config` with two NUL-terminated names.
    let arena = unsafe { jitarena_create(&cfg) };
    assert!(!arena.is_null(), "{}", last_error());
    arena
}

fn last_error() -> String {
    // SAFETY: the library returns a NUL-terminated string, valid until its next call here.
    unsafe { CStr::from_ptr(jitarena_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

#[test]
fn a_destroyed_arena_is_refused_without_reading_its_memory() {
    let _serial = serial();
    let arena = make_arena();
    // SAFETY: live, from jitarena_create, used by this thread only.
    unsafe {
        assert!(!jitarena_alloc_slow(arena, 24, 0).is_null());
        jitarena_destroy(arena);
    }
    // Every call below gets the dangling pointer: each must refuse it from the registry alone
    // (under miri, any read through it is reported as a use after free). The allocation path
    // (inline, and its slow path) takes the pointer on trust, as the header says.
    // SAFETY: the entry points accept any pointer value; none is dereferenced once refused.
    unsafe {
        jitarena_reset(arena);
        assert!(
            last_error().contains("not a live arena"),
            "{}",
            last_error()
        );
        assert_eq!(jitarena_total_bytes(arena), 0);
        assert_eq!(jitarena_failure(arena), 0);
        assert_eq!(
            jitarena_method_done(arena, ptr::null()),
            JITARENA_E_STATE as c_int
        );
        // A second destroy is refused too, not a double free.
        jitarena_destroy(arena);
        assert!(
            last_error().contains("not a live arena"),
            "{}",
            last_error()
        );
    }
}

#[test]
fn a_pointer_to_something_else_is_refused_without_reading_it() {
    let _serial = serial();
    // Eight bytes: an arena check that read the arena's fields would read past them.
    let mut not_an_arena = 0u64;
    let p = ptr::from_mut(&mut not_an_arena).cast::<jitarena>();
    // SAFETY: as above: the pointer is refused before any read.
    unsafe {
        assert_eq!(jitarena_phase_bytes(p, 1), 0);
        assert_eq!(jitarena_kind_count_configured(p), 0);
        jitarena_destroy(p);
    }
    assert_eq!(not_an_arena, 0);
    assert!(
        last_error().contains("not a live arena"),
        "{}",
        last_error()
    );
    // SAFETY: NULL is always accepted.
    unsafe { jitarena_reset(ptr::null_mut()) };
    assert!(last_error().contains("NULL"), "{}", last_error());
    assert_eq!(
        // SAFETY: as above.
        unsafe { jitarena_method_done(ptr::null_mut(), ptr::null()) },
        JITARENA_E_NULL as c_int
    );
}

#[test]
fn destroy_refuses_an_arena_that_a_rust_owner_frees() {
    let _serial = serial();
    let arena = crate::Arena::new(&crate::Config::new(&["A"])).unwrap();
    arena.alloc_bytes(40, crate::Kind(0)).unwrap();
    // SAFETY: a live arena; destroy must refuse it rather than free it under its owner.
    unsafe { jitarena_destroy(arena.as_c_ptr()) };
    assert!(last_error().contains("Rust owner"), "{}", last_error());
    // Still alive and usable; freed once, by the owner's drop.
    arena.alloc_bytes(8, crate::Kind(0)).unwrap();
    assert_eq!(arena.snapshot().counters.total_bytes(), 48);
}

/// A panic inside the slow path is caught, recorded on the arena, and the arena is reached
/// again only through the reference the panicking call was borrowed from (miri checks the
/// aliasing). A cursor moved below its page's first block makes the slow path's bytes used
/// overflow when it leaves the page, which panics in builds with overflow checks.
#[cfg(debug_assertions)]
#[test]
fn a_panic_on_the_slow_path_is_recorded_on_the_arena() {
    use crate::sys::{jitarena_head, JITARENA_E_INTERNAL};
    let _serial = serial();
    let arena = make_arena();
    let head = arena.cast::<jitarena_head>();
    // SAFETY: a live arena from jitarena_create.
    let first = unsafe { jitarena_alloc_slow(arena, 8, 0) };
    assert!(!first.is_null());
    // A cursor below the page's first block, then a request for a page of its own: leaving
    // the page overflows. SAFETY: the head is the arena's first field (as the header's inline
    // path uses it); no reference to the arena is live here.
    unsafe { (*head).cursor = first.addr() - 8 };
    // SAFETY: a live arena from jitarena_create.
    let p = unsafe { jitarena_alloc_slow(arena, 100_000, 0) };
    assert!(p.is_null());
    assert!(last_error().contains("panic"), "{}", last_error());
    // SAFETY: as above.
    unsafe {
        assert_eq!(jitarena_failure(arena), JITARENA_E_INTERNAL as c_int);
        jitarena_destroy(arena);
    }
}

/// A config of the size before `kinds_by_phase` (any bytes after it) creates an arena with
/// kinds by phase off; the full size turns them on.
#[test]
fn an_old_config_size_leaves_kinds_by_phase_off() {
    let _serial = serial();
    let kinds = [c"ASTNode".as_ptr(), c"LSRA".as_ptr()];
    let phases = [c"Import".as_ptr()];
    for (size, want) in [
        (offset_of!(jitarena_config, reserved), 0),
        (size_of::<jitarena_config>(), 40),
    ] {
        let mut cfg = default_config();
        cfg.struct_size = size;
        cfg.kind_names = kinds.as_ptr();
        cfg.kind_count = 2;
        cfg.phase_names = phases.as_ptr();
        cfg.phase_count = 1;
        cfg.reserved = 0xDEAD_BEEF;
        cfg.kinds_by_phase = 1;
        // SAFETY: a config with valid name arrays; `size` bytes of it are readable.
        unsafe {
            let arena = jitarena_create(&cfg);
            assert!(!arena.is_null(), "{}", last_error());
            // Kinds by phase: every mark out of line, as the header's inline mark sends it.
            jitarena_phase_mark_slow(arena, 0, crate::sys::JITARENA_MARK_SWITCH);
            assert!(!jitarena_alloc_slow(arena, 40, 1).is_null());
            assert_eq!(jitarena_phase_kind_bytes(arena, 0, 1), want, "size {size}");
            assert_eq!(jitarena_phase_bytes(arena, 0), 40);
            jitarena_destroy(arena);
        }
    }
}

/// What `jitarena_method_done` hands the log writer: the non-zero bytes per (phase, kind),
/// sorted, the invalid bucket and "no phase" included.
#[test]
fn method_counts_carry_the_nonzero_phase_kind_bytes_sorted() {
    let _serial = serial();
    let config = crate::Config::new(&["A", "B", "C"])
        .phases(&["P0", "P1"])
        .kinds_by_phase(true);
    let arena = crate::Arena::new(&config).unwrap();
    let alloc = |size, kind| arena.alloc_bytes(size, crate::Kind(kind)).unwrap();
    alloc(5, 2); // no phase
    arena.set_phase(crate::Phase(1));
    alloc(7, 0);
    alloc(9, 200); // an unnamed slot: the invalid bucket
    arena.set_phase(crate::Phase(0));
    alloc(11, 1);
    alloc(13, u32::MAX);
    arena.set_phase(crate::Phase(1));
    alloc(17, 0);
    let mut counts = crate::counters::MethodCounts::default();
    // SAFETY: the arena is live and only read here.
    let raw = unsafe { &mut *arena.as_c_ptr().cast::<RawArena>() };
    raw.fill_counts(&mut counts).unwrap();
    assert_eq!(
        counts.phase_kind_bytes,
        vec![(0, 1, 11), (0, 3, 13), (1, 0, 24), (1, 3, 9), (2, 2, 5)]
    );
    let off = crate::Arena::new(&crate::Config::new(&["A"])).unwrap();
    off.alloc_bytes(8, crate::Kind(0)).unwrap();
    // SAFETY: as above.
    unsafe { &mut *off.as_c_ptr().cast::<RawArena>() }
        .fill_counts(&mut counts)
        .unwrap();
    assert!(counts.phase_kind_bytes.is_empty());
}

/// Kinds by phase read through the C entry points with bad arguments: a NULL or destroyed
/// arena and out-of-range phases and kinds read 0 or the buckets, and an arena with no phases
/// keeps everything in "no phase".
#[test]
fn phase_kind_bytes_with_bad_arguments_and_no_phases() {
    let _serial = serial();
    let kinds = [c"A".as_ptr(), c"B".as_ptr()];
    let mut cfg = default_config();
    cfg.kind_names = kinds.as_ptr();
    cfg.kind_count = 2;
    cfg.phase_count = 0;
    cfg.kinds_by_phase = 1;
    // SAFETY: a config from `default_config` with two NUL-terminated names.
    let arena = unsafe { jitarena_create(&cfg) };
    assert!(!arena.is_null(), "{}", last_error());
    // SAFETY: live, from jitarena_create, used by this thread only; then destroyed, and the
    // dangling pointer only given to readers, which refuse it from the registry.
    unsafe {
        assert_eq!(jitarena_phase_kind_bytes(ptr::null(), 0, 0), 0);
        // Past the phases: "no phase" (kinds by phase: out of line, as the inline mark sends it).
        jitarena_phase_mark_slow(arena, 7, crate::sys::JITARENA_MARK_SWITCH);
        assert!(!jitarena_alloc_slow(arena, 24, 0).is_null());
        assert!(!jitarena_alloc_slow(arena, 8, 1).is_null());
        assert!(!jitarena_alloc_slow(arena, 40, 9).is_null()); // the invalid bucket
        for phase in [0, 1, u32::MAX] {
            assert_eq!(jitarena_phase_kind_bytes(arena, phase, 0), 24, "{phase}");
            assert_eq!(jitarena_phase_kind_bytes(arena, phase, 1), 8, "{phase}");
            assert_eq!(jitarena_phase_kind_bytes(arena, phase, u32::MAX), 40);
            assert_eq!(jitarena_phase_kind_bytes(arena, phase, 2), 0);
            assert_eq!(jitarena_phase_kind_bytes(arena, phase, 9), 0);
        }
        assert_eq!(jitarena_phase_bytes(arena, u32::MAX), 72);
        jitarena_destroy(arena);
        assert_eq!(jitarena_phase_kind_bytes(arena, 0, 0), 0);
    }
}

/// The aggregate turned on and off from several threads while each ends methods: no crash,
/// and it counts at least the methods ended while it was on and at most all of them.
#[test]
fn aggregate_toggled_between_methods_on_several_threads() {
    let _serial = serial();
    jitarena_aggregate_reset();
    let on_count = std::sync::atomic::AtomicU64::new(0);
    // Fewer under miri, which runs this too (module capi::).
    let rounds: u64 = if cfg!(miri) { 6 } else { 200 };
    std::thread::scope(|scope| {
        for t in 0..4u64 {
            let on_count = &on_count;
            scope.spawn(move || {
                let arena = make_arena();
                let method = jitarena_method {
                    struct_size: size_of::<jitarena_method>(),
                    name: ptr::null(),
                    context: -1,
                    tier: ptr::null(),
                    failed: 0,
                    reserved: 0,
                };
                for i in 0..rounds {
                    // Only thread 0 turns it on (and off): the others see either.
                    if t == 0 {
                        jitarena_aggregate_enable(c_int::from(i % 2 == 0));
                    }
                    // SAFETY: live, from jitarena_create, used by this thread only.
                    unsafe {
                        assert!(!jitarena_alloc_slow(arena, 16, 1).is_null());
                        assert_eq!(jitarena_method_done(arena, &method), 0, "{}", last_error());
                        jitarena_reset(arena);
                    }
                    if t == 0 && i % 2 == 0 {
                        on_count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                }
                // SAFETY: as above; not used after.
                unsafe { jitarena_destroy(arena) };
            });
        }
    });
    jitarena_aggregate_enable(0);
    let methods = jitarena_aggregate_methods();
    // Thread 0's methods ended while it was on are in; no more than all 800.
    assert!(
        methods >= on_count.into_inner() && methods <= 800,
        "{methods}"
    );
    assert_eq!(jitarena_aggregate_total_bytes(), 16 * methods);
    jitarena_aggregate_reset();
}

#[test]
fn a_path_that_is_not_utf8_is_refused_rather_than_taken_for_another() {
    let _serial = serial();
    // "café.jas" in Windows-1252, as a JIT passing an ANSI path would give it.
    let path = c"caf\xE9-%p.jas";
    // SAFETY: a NUL-terminated string.
    let rc = unsafe { jitarena_log_open(path.as_ptr()) };
    assert_eq!(rc, crate::sys::JITARENA_E_CONFIG as c_int);
    // SAFETY: the message is a NUL-terminated string of this thread's.
    let message = unsafe { CStr::from_ptr(jitarena_last_error_message()) };
    assert!(
        message.to_string_lossy().contains("not UTF-8"),
        "{message:?}"
    );
    // (Miri runs without a file system to look at.)
    if !cfg!(miri) {
        let other = format!("caf\u{FFFD}-{}.jas", std::process::id());
        assert!(
            !std::path::Path::new(&other).exists(),
            "no file of another name is made"
        );
    }
}
