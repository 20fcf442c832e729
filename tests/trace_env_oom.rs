//! `JITARENA_TRACE` read when memory runs out: `jitarena_create` fails with
//! `JITARENA_E_OUT_OF_MEMORY` (never an abort; its message holds the code's text), and the next
//! one consults the variable again, so that the trace is recorded once memory is back. Its own
//! test binary: the variable is read once per process.

mod failing_alloc;
use failing_alloc::failing_from;

use std::ffi::{c_char, CStr};

use ::jitarena::sys::{jitarena, jitarena_config, jitarena_method};

extern "C" {
    fn jitarena_config_init(config: *mut jitarena_config);
    fn jitarena_create(config: *const jitarena_config) -> *mut jitarena;
    fn jitarena_destroy(arena: *mut jitarena);
    fn jitarena_alloc_slow(arena: *mut jitarena, size: usize, kind: u32) -> *mut std::ffi::c_void;
    fn jitarena_method_done(arena: *mut jitarena, method: *const jitarena_method) -> i32;
    fn jitarena_trace_close() -> i32;
    fn jitarena_last_error_message() -> *const c_char;
}

fn last_error() -> String {
    // SAFETY: the library returns a NUL-terminated string, valid until the next failure.
    unsafe { CStr::from_ptr(jitarena_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

#[test]
fn a_trace_named_by_the_environment_opens_once_memory_is_back() {
    let path = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("trace-env-oom.jat");
    let _ = std::fs::remove_file(&path);
    // The only test of this binary: no other thread reads the environment meanwhile.
    std::env::set_var("JITARENA_TRACE", &path);
    let kinds = [c"A".as_ptr()];
    let mut c = std::mem::MaybeUninit::<jitarena_config>::uninit();
    // SAFETY: `jitarena_config_init` writes the whole struct.
    let mut c = unsafe {
        jitarena_config_init(c.as_mut_ptr());
        c.assume_init()
    };
    c.kind_names = kinds.as_ptr();
    c.kind_count = 1;
    let mut refused = 0;
    let arena = (0..)
        .find_map(|n| {
            // SAFETY: a valid config whose names outlive the call.
            let (arena, failed) = failing_from(n, || unsafe { jitarena_create(&c) });
            if arena.is_null() {
                assert!(failed, "refused with memory: {}", last_error());
                assert!(last_error().contains("out of memory"), "{}", last_error());
                refused += 1;
                return None;
            }
            Some(arena)
        })
        .unwrap();
    assert!(refused >= 3, "only {refused} allocations before the arena");
    // SAFETY: a live arena.
    unsafe { jitarena_alloc_slow(arena, 40, 0) };
    let method = jitarena_method {
        struct_size: std::mem::size_of::<jitarena_method>(),
        name: c"Ns.C:M()".as_ptr(),
        context: 7,
        tier: std::ptr::null(),
    };
    // SAFETY: a live arena and a method whose strings outlive the call.
    assert_eq!(
        unsafe { jitarena_method_done(arena, &method) },
        0,
        "{}",
        last_error()
    );
    // SAFETY: a live arena of this test, not used again.
    unsafe { jitarena_destroy(arena) };
    // SAFETY: the trace is this test's.
    assert_eq!(unsafe { jitarena_trace_close() }, 0, "{}", last_error());
    let mut reader = ::jitarena::trace::open(&path).unwrap();
    let m = reader.next_method().unwrap().expect("the method's trace");
    assert_eq!((m.info.context, m.events.len()), (7, 1));
}
