//! Trace recording when memory runs out: an event that cannot be recorded makes the method's
//! trace refused with `JITARENA_E_OUT_OF_MEMORY` (never an abort, never a method written with
//! events missing), and the next method records whole. Its own test binary: a trace is the
//! process's, and every arena created while it is open records into it.

mod failing_alloc;
use failing_alloc::{failing_once_at, jitarena_set_phase};

mod c_entry;
use c_entry::*;

use std::ffi::CString;

use ::jitarena::sys::JITARENA_E_OUT_OF_MEMORY;

/// Fails the `n`th allocation of a method's 300 requests and phase switches, for each `n` in
/// turn, on a fresh arena (whose list of events must grow): the method either ends with its
/// trace written, every event in it, or is refused with `JITARENA_E_OUT_OF_MEMORY` and nothing
/// of it in the trace.
#[test]
fn a_method_whose_events_cannot_all_be_recorded_is_refused_whole() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join("trace_oom.jat");
    let c_path = CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(
        unsafe { jitarena_trace_open(c_path.as_ptr()) },
        0,
        "{}",
        last_error()
    );
    let kinds = [c"A".as_ptr(), c"B".as_ptr()];
    let phases = [c"P".as_ptr()];
    let mut written = Vec::new(); // (context, events) of each method that reached the trace
    let mut refused = 0;
    for n in 0.. {
        let arena = new_arena(&kinds, &phases);
        let (served, failed) = failing_once_at(n, || {
            let mut events = 0;
            for i in 0..300u32 {
                if i == 150 {
                    // SAFETY: a live arena.
                    unsafe { jitarena_set_phase(arena, 0) };
                    events += 1;
                }
                // SAFETY: a live arena.
                let p = unsafe { jitarena_alloc_slow(arena, 24, i % 2) };
                events += usize::from(!p.is_null()); // a page that could not be had: no event
            }
            events
        });
        let method = method(c"Ns.C:M()", n as i64);
        // SAFETY: a live arena and a method whose strings outlive the call.
        let rc = unsafe { jitarena_method_done(arena, &method) };
        match rc {
            0 => written.push((n as i64, served)),
            _ => {
                assert_eq!(rc, JITARENA_E_OUT_OF_MEMORY as i32, "{}", last_error());
                assert!(failed, "refused with memory: {}", last_error());
                assert!(
                    last_error().contains("trace is not written"),
                    "{}",
                    last_error()
                );
                refused += 1;
            }
        }
        // SAFETY: a live arena of this test, not used again.
        unsafe { jitarena_destroy(arena) };
        if !failed {
            break;
        }
    }
    // Arenas made while the trace is open, whose methods lose an event after it closed (the
    // `n`th allocation failing: a page, or the list of events growing): nothing would be
    // written, so nothing is refused.
    let late: Vec<_> = (0..16).map(|_| new_arena(&kinds, &phases)).collect();
    // SAFETY: no other test of this binary uses the trace.
    assert_eq!(unsafe { jitarena_trace_close() }, 0, "{}", last_error());
    for (n, &arena) in late.iter().enumerate() {
        let ((), failed) = failing_once_at(n, || {
            for _ in 0..20 {
                // SAFETY: a live arena.
                unsafe { jitarena_alloc_slow(arena, 24, 0) };
            }
        });
        let method = method(c"Ns.C:Late()", n as i64);
        // SAFETY: a live arena and a method whose strings outlive the call.
        let rc = unsafe { jitarena_method_done(arena, &method) };
        assert_eq!(rc, 0, "{n}: {}", last_error());
        // SAFETY: a live arena of this test, not used again.
        unsafe { jitarena_destroy(arena) };
        if !failed {
            assert!(
                n >= 3,
                "only {n} allocations: the list of events did not grow"
            );
            break;
        }
    }
    assert!(refused >= 5, "only {refused} methods lost an event");
    let mut reader = ::jitarena::trace::open(&path).unwrap();
    let mut read = Vec::new();
    while let Some(m) = reader.next_method().unwrap() {
        read.push((m.info.context, m.events.len()));
    }
    assert_eq!(read, written);
}
