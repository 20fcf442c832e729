//! `stats` of two fuzzed stats logs (split as `split_two` does, their frames' checksums made
//! valid) on two threads, in batches of 1 to 4 records (a byte of the input chooses): the same
//! statistics and JSON report, or the same error, as one thread gives. Panics, hangs and
//! unbounded memory are failures too.
#![no_main]

use jitarena_tools::report::stats::render_json;
use jitarena_tools::stats::{collect_in_batches, collect_one_thread};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (first, second) = jitarena_fuzz::split_two(data);
    let paths = [
        jitarena_fuzz::input_file("stats-a", &jitarena_fuzz::with_checksums(first)),
        jitarena_fuzz::input_file("stats-b", &jitarena_fuzz::with_checksums(second)),
    ];
    let batch = 1 + usize::from(data.first().copied().unwrap_or(0) % 4);
    match (
        collect_in_batches(&paths, batch),
        collect_one_thread(&paths),
    ) {
        (Ok(got), Ok(want)) => {
            assert_eq!(render_json(&got), render_json(&want));
            assert_eq!(got, want);
        }
        (Err(got), Err(want)) => assert_eq!(got.message, want.message),
        (got, want) => panic!("two threads: {:?}, one: {:?}", got.err(), want.err()),
    }
});
