//! `JITARENA_TRACE` read when memory runs out: `jitarena_create` fails with
//! `JITARENA_E_OUT_OF_MEMORY` (never an abort; its message holds the code's text), and the next
//! one consults the variable again, so that the trace is recorded once memory is back. Its own
//! test binary: the variable is read once per process.

mod failing_alloc;
use failing_alloc::failing_from;

mod c_entry;
use c_entry::*;

#[test]
fn a_trace_named_by_the_environment_opens_once_memory_is_back() {
    let path = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("trace-env-oom.jat");
    let _ = std::fs::remove_file(&path);
    // The only test of this binary: no other thread reads the environment meanwhile.
    std::env::set_var("JITARENA_TRACE", &path);
    let kinds = [c"A".as_ptr()];
    let c = config(&kinds, &[]);
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
    let method = method(c"Ns.C:M()", 7);
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
