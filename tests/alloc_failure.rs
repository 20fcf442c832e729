//! The arena's failures when the process has no memory left: every allocation of the Rust
//! allocator fails while the arena fails, as in a JIT out of memory. The failure must come
//! back with its code and the code's text (its details, which need memory, may be cut), not
//! abort the process as a `format!` or a growing `Vec` would.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ffi::{c_char, c_void, CStr};

use ::jitarena::sys::{
    jitarena, jitarena_config, jitarena_method, JITARENA_E_CONFIG, JITARENA_E_LIMIT,
    JITARENA_E_OUT_OF_MEMORY, JITARENA_E_SIZE_OVERFLOW,
};

mod failing_alloc;
use failing_alloc::*;

extern "C" {
    fn jitarena_reset(arena: *mut jitarena);
    fn jitarena_config_init(config: *mut jitarena_config);
    fn jitarena_create(config: *const jitarena_config) -> *mut jitarena;
    fn jitarena_destroy(arena: *mut jitarena);
    fn jitarena_alloc_slow(arena: *mut jitarena, size: usize, kind: u32) -> *mut c_void;
    fn jitarena_failure(arena: *const jitarena) -> i32;
    fn jitarena_last_error_message() -> *const c_char;
    fn jitarena_strerror(code: i32) -> *const c_char;
}

fn last_error() -> String {
    // SAFETY: the library returns a NUL-terminated string, valid until the next failure.
    unsafe { CStr::from_ptr(jitarena_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

fn code_text(code: u32) -> String {
    // SAFETY: a static NUL-terminated string.
    unsafe { CStr::from_ptr(jitarena_strerror(code as i32)) }
        .to_string_lossy()
        .into_owned()
}

fn config() -> jitarena_config {
    let mut c = std::mem::MaybeUninit::<jitarena_config>::uninit();
    // SAFETY: `jitarena_config_init` writes the whole struct.
    unsafe {
        jitarena_config_init(c.as_mut_ptr());
        c.assume_init()
    }
}

/// Pages for the arena from the system allocator, which the failing allocator does not
/// reach (the arena's pages, not its bookkeeping): `left` more of them, then NULL.
struct Host {
    left: usize,
    live: usize,
}

unsafe extern "C" fn host_page(host: *mut c_void, size: usize) -> *mut c_void {
    // SAFETY: `host` is the `Host` the test passes in its config, used by this thread alone.
    let host = unsafe { &mut *host.cast::<Host>() };
    if host.left == 0 {
        return std::ptr::null_mut();
    }
    host.left -= 1;
    host.live += 1;
    // SAFETY: a non-zero size with the alignment the arena needs.
    unsafe {
        System
            .alloc(Layout::from_size_align_unchecked(size, 16))
            .cast()
    }
}

unsafe extern "C" fn host_free(host: *mut c_void, page: *mut c_void, size: usize) {
    // SAFETY: as in `host_page`.
    let host = unsafe { &mut *host.cast::<Host>() };
    host.live -= 1;
    // SAFETY: `page` came from `host_page` with this size.
    unsafe { System.dealloc(page.cast(), Layout::from_size_align_unchecked(size, 16)) }
}

fn config_with(host: &mut Host) -> jitarena_config {
    let mut c = config();
    c.page_size = 4096;
    c.page_alloc = Some(host_page);
    c.page_free = Some(host_free);
    c.host = std::ptr::from_mut(host).cast();
    c
}

/// Checks a failure against `code`: the arena's code (NULL: a failed create), and this
/// thread's message, which starts with the code's text and, where `detail` is not empty,
/// holds it. Called with memory: the failure itself happened without.
fn assert_failed(arena: *const jitarena, code: u32, detail: &str) {
    if !arena.is_null() {
        // SAFETY: a live arena.
        assert_eq!(unsafe { jitarena_failure(arena) }, code as i32);
    }
    let message = last_error();
    assert!(
        message.starts_with(&format!("{}: ", code_text(code))),
        "{message}"
    );
    assert!(message.contains(detail), "{message}");
}

#[test]
fn the_arenas_failures_report_their_code_with_no_memory_left() {
    let mut host = Host { left: 10, live: 0 };
    let mut c = config_with(&mut host);
    c.limit_bytes = 3 * 4096;
    // SAFETY: a valid config; the host outlives the arena.
    let arena = unsafe { jitarena_create(&c) };
    assert!(!arena.is_null(), "{}", last_error());
    // A page obtained with memory: the arena's list of pages has room for more.
    // SAFETY: a live arena; a request of more than a quarter page takes a page of its own.
    assert!(!unsafe { jitarena_alloc_slow(arena, 4096, 2) }.is_null());

    for with_memory in [false, true] {
        let run = |f: &dyn Fn() -> bool| if with_memory { f() } else { without_memory(f) };
        // SAFETY: a live arena; the size is refused before anything is touched.
        assert!(run(&|| unsafe {
            jitarena_alloc_slow(arena, usize::MAX / 2 + 1, 1)
        }
        .is_null()));
        let detail = if with_memory {
            "exceeds the largest request"
        } else {
            ""
        };
        assert_failed(arena, JITARENA_E_SIZE_OVERFLOW, detail);
        // Two more pages fit the limit, a third does not.
        // SAFETY: a live arena.
        assert!(run(&|| (0..3)
            .any(
                |_| unsafe { jitarena_alloc_slow(arena, 4096, 2) }.is_null()
            )));
        let detail = if with_memory {
            "over its limit of 12288 bytes"
        } else {
            ""
        };
        assert_failed(arena, JITARENA_E_LIMIT, detail);
    }
    // SAFETY: a live arena, destroyed once.
    unsafe { jitarena_destroy(arena) };
    assert_eq!(host.live, 0, "every page is given back");

    // The host has no page left to give.
    let mut empty = Host { left: 0, live: 0 };
    let c = config_with(&mut empty);
    // SAFETY: as above.
    let arena = unsafe { jitarena_create(&c) };
    assert!(!arena.is_null(), "{}", last_error());
    // SAFETY: a live arena.
    assert!(without_memory(|| unsafe {
        jitarena_alloc_slow(arena, 64, 3)
    }
    .is_null()));
    assert_failed(arena, JITARENA_E_OUT_OF_MEMORY, "");
    // SAFETY: a live arena, destroyed once.
    unsafe { jitarena_destroy(arena) };

    // A config refused before the arena exists.
    let mut c = config_with(&mut empty);
    c.page_size = 4097;
    // SAFETY: a config of the right size, whose page size is refused.
    let refused = without_memory(|| unsafe { jitarena_create(&c) });
    assert!(refused.is_null());
    assert_failed(std::ptr::null(), JITARENA_E_CONFIG, "");
}

#[test]
fn a_page_the_arena_cannot_keep_track_of_is_given_back() {
    let mut host = Host {
        left: usize::MAX,
        live: 0,
    };
    let c = config_with(&mut host);
    // SAFETY: a valid config; the host outlives the arena.
    let arena = unsafe { jitarena_create(&c) };
    assert!(!arena.is_null(), "{}", last_error());
    // SAFETY: a live arena; a request of more than a quarter page takes a page of its own.
    assert!(!unsafe { jitarena_alloc_slow(arena, 4096, 1) }.is_null());
    // The host gives pages while the arena's list of pages cannot grow: once its room runs
    // out, the page it cannot list is refused and given back, not leaked nor an abort.
    let obtained = without_memory(|| {
        (0..5_000)
            // SAFETY: a live arena.
            .take_while(|_| !unsafe { jitarena_alloc_slow(arena, 4096, 1) }.is_null())
            .count()
    });
    assert!(obtained < 5_000, "{obtained}");
    assert_failed(arena, JITARENA_E_OUT_OF_MEMORY, "");
    assert_eq!(host.live, obtained + 1, "the refused page is given back");
    // With memory, the arena goes on, and gives every page back when destroyed.
    // SAFETY: a live arena.
    assert!(!unsafe { jitarena_alloc_slow(arena, 4096, 1) }.is_null());
    // SAFETY: a live arena, destroyed once.
    unsafe { jitarena_destroy(arena) };
    assert_eq!(host.live, 0);
}

/// Fails every allocation from the `n`th on, for each `n` in turn, in creating an arena of
/// kinds by phase: each call either succeeds or fails with `JITARENA_E_OUT_OF_MEMORY`, leaving
/// nothing behind; an arena made that way, with every allocation failing, refuses pages, and
/// resets and is destroyed without an abort.
#[test]
fn every_allocation_of_create_reset_and_destroy_may_fail() {
    let kinds = [
        c"CMK_Generic".as_ptr(),
        c"CMK_ASTNode".as_ptr(),
        c"CMK_LSRA".as_ptr(),
    ];
    let phases = [c"Import".as_ptr(), c"Morph".as_ptr()];
    let mut c = config();
    c.kind_names = kinds.as_ptr();
    c.kind_count = 3;
    c.phase_names = phases.as_ptr();
    c.phase_count = 2;
    c.kinds_by_phase = 1;
    // A first arena with these names, with memory, so that their schema is cached: the
    // schema's shared copy (an `Arc`) is the one allocation of `jitarena_create` that still
    // aborts when memory runs out (see BENCHMARKS.md, "Footprint").
    // SAFETY: a valid config whose names outlive the call.
    let warm = unsafe { jitarena_create(&c) };
    assert!(!warm.is_null(), "{}", last_error());
    // Every arena stays alive until the end: a destroyed one is kept for the next create,
    // which would then allocate nothing, and this test is of a create that makes its arena.
    let mut made = vec![warm];

    let mut refused = 0;
    for n in 0.. {
        // SAFETY: as above.
        let (arena, failed) = failing_from(n, || unsafe { jitarena_create(&c) });
        if arena.is_null() {
            assert!(failed, "refused with memory: {}", last_error());
            assert_failed(std::ptr::null(), JITARENA_E_OUT_OF_MEMORY, "no memory");
            refused += 1;
            continue;
        }
        let (_, failed_later) = failing_from(0, || {
            // SAFETY: a live arena; its pages come from the failing allocator.
            for round in 0..3 {
                unsafe {
                    jitarena_set_phase(arena, round % 2);
                    for size in [24, 4096, 100, 70_000] {
                        jitarena_alloc_slow(arena, size, round);
                    }
                    jitarena_reset(arena);
                }
            }
        });
        assert!(failed_later, "no page was asked for");
        // With memory again, the arena serves.
        // SAFETY: a live arena.
        assert!(!unsafe { jitarena_alloc_slow(arena, 4096, 1) }.is_null());
        made.push(arena);
        if !failed {
            break; // created without a failure: every allocation of create was tried
        }
    }
    assert!(refused >= 5, "only {refused} allocations in create");
    for arena in made {
        // SAFETY: a live arena, destroyed once, with every allocation failing.
        failing_from(0, || unsafe { jitarena_destroy(arena) });
    }
    // A create that takes a destroyed arena kept for it allocates at most to list it.
    for n in 0.. {
        // SAFETY: as above.
        let (arena, failed) = failing_from(n, || unsafe { jitarena_create(&c) });
        if arena.is_null() {
            assert!(failed, "refused with memory: {}", last_error());
            assert_failed(std::ptr::null(), JITARENA_E_OUT_OF_MEMORY, "no memory");
            continue;
        }
        // SAFETY: a live arena, destroyed once.
        unsafe { jitarena_destroy(arena) };
        if !failed {
            break;
        }
    }
}

extern "C" {
    fn jitarena_method_done(arena: *mut jitarena, method: *const jitarena_method) -> i32;
    fn jitarena_log_open(path: *const c_char) -> i32;
    fn jitarena_log_close() -> i32;
}

/// The stats log is the process's: its tests take turns.
static LOG_TESTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Ends methods on `arena`, the `n`th allocation of the `n`th call failing and no other,
/// until a call meets no failure; checks each result against what reached the log at `path`
/// and the aggregate, and adds the names of the records written to `written`. How many calls
/// failed with the log going on, and with the aggregate going on.
fn one_failure_at_a_time(
    arena: *mut jitarena,
    path: &std::path::Path,
    tier: &str,
    written: &mut Vec<String>,
) -> (usize, usize) {
    let tier = std::ffi::CString::new(tier).unwrap();
    let (mut log_went_on, mut aggregate_went_on) = (0, 0);
    for n in 0.. {
        let name = std::ffi::CString::new(format!("Ns.OneAtATime:Method{n}()")).unwrap();
        let method = jitarena_method {
            struct_size: std::mem::size_of::<jitarena_method>(),
            name: name.as_ptr(),
            context: n as i64,
            tier: tier.as_ptr(),
            failed: 0,
            reserved: 0,
        };
        // SAFETY: a live arena.
        unsafe { jitarena_alloc_slow(arena, 64, 0) };
        let len = std::fs::metadata(path).unwrap().len();
        let methods = unsafe { jitarena_aggregate_methods() };
        // SAFETY: a live arena and a method whose strings outlive the call.
        let (rc, failed) = failing_once_at(n, || unsafe { jitarena_method_done(arena, &method) });
        let logged = std::fs::metadata(path).unwrap().len() > len;
        let folded = unsafe { jitarena_aggregate_methods() } > methods;
        if logged {
            written.push(name.into_string().unwrap());
        }
        if rc == 0 {
            assert!(logged && folded);
        } else {
            assert!(failed && !(logged && folded), "{rc}: {}", last_error());
            assert_eq!(rc, JITARENA_E_OUT_OF_MEMORY as i32, "{}", last_error());
            log_went_on += usize::from(logged);
            aggregate_went_on += usize::from(folded);
        }
        // SAFETY: a live arena.
        unsafe { jitarena_reset(arena) };
        if !failed {
            return (log_went_on, aggregate_went_on);
        }
    }
    unreachable!()
}

/// Opens the stats log at `path`, with memory.
fn open_log(path: &std::path::Path) {
    let c_path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    let rc = unsafe { jitarena_log_open(c_path.as_ptr()) };
    assert_eq!(rc, 0, "{}", last_error());
}

/// An arena of kinds by phase over `kinds` (the array outlives it).
fn arena_of(kinds: &[*const c_char]) -> *mut jitarena {
    let phases = [c"Import".as_ptr(), c"Morph".as_ptr(), c"LSRA".as_ptr()];
    let mut c = config();
    c.kind_names = kinds.as_ptr();
    c.kind_count = kinds.len() as u32;
    c.phase_names = phases.as_ptr();
    c.phase_count = 3;
    c.kinds_by_phase = 1;
    // SAFETY: a valid config whose names outlive the call (they are copied).
    let arena = unsafe { jitarena_create(&c) };
    assert!(!arena.is_null(), "{}", last_error());
    arena
}

/// Fails every allocation from the `n`th on, for each `n` in turn, in `jitarena_method_done`
/// with a stats log open and the aggregate on: methods of growing names, kinds by phase, two
/// schemas and a new tier per round, so that the record's buffers and the log's dictionary
/// must grow. Each call either writes its record or fails with `JITARENA_E_OUT_OF_MEMORY`, and
/// the log reads back whole, with exactly the records that reached it. Then one allocation
/// failing at a time: the aggregate and the log each go on when the other fails.
#[test]
fn every_allocation_of_a_logged_method_may_fail() {
    let _turn = LOG_TESTS.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join("alloc_failure.jas");
    open_log(&path);
    let was_on = unsafe { jitarena_aggregate_enable(1) };
    let first = [c"CMK_Generic".as_ptr(), c"CMK_ASTNode".as_ptr()];
    let second = [
        c"CMK_LSRA".as_ptr(),
        c"CMK_Codegen".as_ptr(),
        c"CMK_Unknown".as_ptr(),
    ];
    let arenas = [arena_of(&first), arena_of(&second)];
    let (mut written, mut refused) = (Vec::new(), 0);
    for round in 0..4 {
        let arena = arenas[round / 2];
        let tier = std::ffi::CString::new(format!("Tier{round}")).unwrap();
        for n in 0.. {
            let name = std::ffi::CString::new(format!(
                "Ns.Class{round}:Method{n}({})",
                "int,".repeat(100 * round)
            ))
            .unwrap();
            let method = jitarena_method {
                struct_size: std::mem::size_of::<jitarena_method>(),
                name: name.as_ptr(),
                context: n as i64,
                tier: tier.as_ptr(),
                failed: 0,
                reserved: 0,
            };
            for phase in 0..3 {
                // SAFETY: a live arena.
                unsafe {
                    jitarena_set_phase(arena, phase);
                    jitarena_alloc_slow(arena, 100 + n, (n + phase as usize) as u32 % 4);
                }
            }
            let before = unsafe { jitarena_aggregate_methods() };
            // SAFETY: a live arena and a method whose strings outlive the call.
            let (rc, failed) = failing_from(n, || unsafe { jitarena_method_done(arena, &method) });
            if rc == 0 {
                written.push(name.into_string().unwrap());
                assert_eq!(unsafe { jitarena_aggregate_methods() }, before + 1);
            } else {
                assert!(failed, "refused with memory: {}", last_error());
                assert_eq!(rc, JITARENA_E_OUT_OF_MEMORY as i32, "{}", last_error());
                refused += 1;
            }
            // SAFETY: a live arena.
            unsafe { jitarena_reset(arena) };
            if !failed {
                break;
            }
        }
    }
    // One allocation failing at a time, where only the aggregate allocates (it starts again
    // empty; the log knows the schema and the tier), then where only the log does (a new log;
    // the aggregate knows the schema): the other goes on.
    unsafe { jitarena_aggregate_reset() };
    let went_on = one_failure_at_a_time(arenas[0], &path, "Tier0", &mut written);
    assert!(
        went_on.0 > 0 && went_on.1 == 0,
        "(log, aggregate) went on: {went_on:?}"
    );
    assert_eq!(unsafe { jitarena_log_close() }, 0, "{}", last_error());
    let second = dir.join("alloc_failure_2.jas");
    open_log(&second);
    let mut written_second = Vec::new();
    let went_on = one_failure_at_a_time(arenas[0], &second, "Tier0", &mut written_second);
    assert!(
        went_on.0 == 0 && went_on.1 > 0,
        "(log, aggregate) went on: {went_on:?}"
    );
    let (records, _) = ::jitarena::log::read_all(&second).expect("the second log reads back");
    let names: Vec<_> = records
        .iter()
        .map(|r| r.info.name.clone().unwrap())
        .collect();
    assert_eq!(names, written_second);
    for arena in arenas {
        // SAFETY: a live arena, destroyed once.
        unsafe { jitarena_destroy(arena) };
    }
    unsafe { jitarena_aggregate_enable(was_on) };
    assert_eq!(unsafe { jitarena_log_close() }, 0, "{}", last_error());
    let (records, warnings) = ::jitarena::log::read_all(&path).expect("the log reads back");
    assert!(warnings.is_empty(), "{warnings:?}");
    let names: Vec<_> = records
        .iter()
        .map(|r| r.info.name.clone().unwrap())
        .collect();
    assert_eq!(names, written);
    let tiers: Vec<_> = records
        .iter()
        .map(|r| r.info.tier.clone().unwrap())
        .collect();
    assert_eq!(
        tiers[..4],
        ["Tier0", "Tier1", "Tier2", "Tier3"],
        "{tiers:?}"
    );
    assert!(tiers[4..].iter().all(|t| t == "Tier0"));
    assert!(records
        .iter()
        .all(|r| !r.counts.phase_kind_bytes.is_empty()));
    // The buffers grew with the names and the schemas: some of their growths were refused.
    assert!(refused >= 8, "{refused} refused");
}

extern "C" {
    fn jitarena_page_count(arena: *const jitarena) -> u64;
    fn jitarena_aggregate_enable(on: i32) -> i32;
    fn jitarena_aggregate_methods() -> u64;
    fn jitarena_aggregate_reset();
}

/// A reset with no memory left: pages of the built-in allocator that would be kept for the
/// next method are given back instead (a reset gives every page back, as a new arena holds
/// none), and the arena serves the next method as before. With memory, pages are kept again:
/// the next method takes no new one.
#[test]
fn a_reset_with_no_memory_left_gives_pages_back() {
    const PAGE: i64 = 4096;
    let mut c = config();
    c.page_size = PAGE as usize;
    // SAFETY: a valid config.
    let arena = unsafe { jitarena_create(&c) };
    assert!(!arena.is_null(), "{}", last_error());
    let live = || LIVE.with(Cell::get);
    let fill = || {
        // SAFETY: a live arena. Requests of a quarter page: three to a page, past its
        // descriptor.
        for _ in 0..40 {
            assert!(!unsafe { jitarena_alloc_slow(arena, 1024, 1) }.is_null());
        }
    };
    fill();
    // SAFETY: a live arena.
    let pages = unsafe { jitarena_page_count(arena) } as i64;
    assert_eq!(pages, 14, "three requests to a page");
    // The spare list cannot grow: every page is given back.
    let before = live();
    // SAFETY: a live arena.
    let ((), failed) = failing_from(0, || unsafe { jitarena_reset(arena) });
    assert!(failed, "the reset cached no page");
    assert_eq!(before - live(), pages * PAGE, "every page freed");
    // SAFETY: a live arena.
    assert_eq!(unsafe { jitarena_page_count(arena) }, 0, "no page kept");
    fill();
    // With memory, a reset keeps the pages: the next method takes no new one.
    // SAFETY: a live arena.
    unsafe { jitarena_reset(arena) };
    let before = live();
    fill();
    assert!(
        live() - before < PAGE,
        "pages taken again: {}",
        live() - before
    );
    // SAFETY: a live arena, destroyed once with no memory left.
    failing_from(0, || unsafe { jitarena_destroy(arena) });
}

/// An open that fails with no memory left: a file that cannot be created is reported with the
/// operating system's reason (whose text `io::Error` would allocate), and a log whose buffers
/// cannot be had is refused with `JITARENA_E_OUT_OF_MEMORY`.
#[test]
fn opening_a_log_with_no_memory_left_fails_with_its_reason() {
    let _turn = LOG_TESTS.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let missing = std::ffi::CString::new(
        dir.join("no-such-directory")
            .join("x.jas")
            .to_str()
            .unwrap(),
    )
    .unwrap();
    let mut io_without_memory = 0;
    for n in 0.. {
        // SAFETY: a NUL-terminated path.
        let (rc, failed) = failing_from(n, || unsafe { jitarena_log_open(missing.as_ptr()) });
        if rc == ::jitarena::sys::JITARENA_E_IO as i32 {
            if !failed {
                break;
            }
            io_without_memory += 1; // the error's text could not be allocated: no abort
        } else {
            assert_eq!(rc, JITARENA_E_OUT_OF_MEMORY as i32, "{}", last_error());
        }
    }
    assert!(io_without_memory > 0);
    let message = last_error();
    assert!(
        message.contains("No such file or directory (os error 2)")
            && message.contains("no-such-directory"),
        "{message}"
    );
    // A path of 384 bytes or more, which `std::fs` would copy to the heap with an allocation
    // that aborts: the library copies it fallibly.
    let long = dir.join("d".repeat(200)).join("e".repeat(200));
    std::fs::create_dir_all(&long).unwrap();
    let long = long.join("open_oom.jas");
    assert!(long.as_os_str().len() >= 400);
    let path = std::ffi::CString::new(long.to_str().unwrap()).unwrap();
    // A log already there (an earlier run's) stays as it was when the new one cannot be set up.
    std::fs::write(&long, b"an earlier run's log").unwrap();
    let mut kept = 0;
    for n in 0.. {
        let before = std::fs::read(&long).unwrap();
        // SAFETY: a NUL-terminated path.
        let (rc, failed) = failing_from(n, || unsafe { jitarena_log_open(path.as_ptr()) });
        if rc == 0 {
            assert_eq!(unsafe { jitarena_log_close() }, 0, "{}", last_error());
            assert_ne!(std::fs::read(&long).unwrap(), b"an earlier run's log");
            if !failed {
                break;
            }
        } else {
            assert!(failed, "refused with memory: {}", last_error());
            assert_eq!(rc, JITARENA_E_OUT_OF_MEMORY as i32, "{}", last_error());
            assert_eq!(
                std::fs::read(&long).unwrap(),
                before,
                "a failed open emptied the file"
            );
            kept += usize::from(before == b"an earlier run's log");
        }
    }
    assert!(kept >= 3, "only {kept} failures before the first open");
}

/// A forked child of a process whose log is named per process (`%p`) opens a log of its own
/// at its first record; when memory runs out there, the record fails with
/// `JITARENA_E_OUT_OF_MEMORY` and the next one tries again, until the child's log is open.
#[cfg(target_os = "linux")]
#[test]
fn a_forked_childs_own_log_opens_once_memory_is_back() {
    extern "C" {
        fn fork() -> i32;
        fn waitpid(pid: i32, status: *mut i32, options: i32) -> i32;
        fn _exit(code: i32) -> !;
    }
    let _turn = LOG_TESTS.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fork-oom");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    open_log(&dir.join("log-%p.jas"));
    let kinds = [c"A".as_ptr()];
    let arena = arena_of(&kinds);
    let method = jitarena_method {
        struct_size: std::mem::size_of::<jitarena_method>(),
        name: c"Ns.C:M()".as_ptr(),
        context: 0,
        tier: std::ptr::null(),
        failed: 0,
        reserved: 0,
    };
    // SAFETY: a live arena, and a method whose strings outlive the call.
    assert_eq!(
        unsafe { jitarena_method_done(arena, &method) },
        0,
        "{}",
        last_error()
    );
    // SAFETY: the child only ends methods on its copy of the arena (allocations of its one
    // thread, whose failures the test's allocator injects) and exits at once.
    let pid = unsafe { fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let code = (|| {
            for n in 0..1000 {
                // SAFETY: the child's copy of a live arena.
                unsafe { jitarena_alloc_slow(arena, 64, 0) };
                // SAFETY: as above.
                let (rc, failed) =
                    failing_once_at(n, || unsafe { jitarena_method_done(arena, &method) });
                // SAFETY: as above.
                unsafe { jitarena_reset(arena) };

                match (rc, failed) {
                    (0, false) => return if n >= 3 { 0 } else { 5 },
                    (0, true) => {}
                    (rc, true) if rc == JITARENA_E_OUT_OF_MEMORY as i32 => {}
                    _ => return 2, // refused with memory: the failure stuck
                }
            }
            3
        })();
        // SAFETY: ends the child at once, without the test harness.
        unsafe { _exit(code) };
    }
    let mut status = 0;
    // SAFETY: our child; `status` is writable.
    assert_eq!(unsafe { waitpid(pid, &mut status, 0) }, pid);
    assert_eq!(
        status, 0,
        "the child's log never opened (wait status {status:#x})"
    );
    let child_log = dir.join(format!("log-{pid}.jas"));
    let (records, _) = ::jitarena::log::read_all(&child_log).unwrap();
    assert!(!records.is_empty(), "no record in {}", child_log.display());
    // SAFETY: a live arena of this test, not used again; the log is this test's.
    unsafe { jitarena_destroy(arena) };
    assert_eq!(unsafe { jitarena_log_close() }, 0, "{}", last_error());
}
