//! `merge` of two fuzzed stats logs (split as `split_two` does, their frames' checksums made
//! valid): merge copies the records it can, and must write the same file, or fail with the
//! same error, as decoding and encoding every record does, whatever the batches its two threads
//! pass records in. Panics, hangs and unbounded memory are failures too.
#![no_main]

use jitarena_tools::logtools::{merge_decoding, merge_in_batches};
use jitarena_tools::progress::Progress;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (first, second) = jitarena_fuzz::split_two(data);
    let paths = [
        jitarena_fuzz::input_file("merge-a", &jitarena_fuzz::with_checksums(first)),
        jitarena_fuzz::input_file("merge-b", &jitarena_fuzz::with_checksums(second)),
    ];
    // Beside the inputs (in /dev/shm where there is one: merge's fsync costs nothing there).
    let name = |end: &str| {
        let mut name = paths[0].file_name().unwrap_or_default().to_os_string();
        name.push(end);
        paths[0].with_file_name(name)
    };
    let (copying, decoding) = (name("-merged"), name("-merged-ref"));
    let hidden = Progress::hidden();
    // Records pass between merge's two threads in batches of 1 to 4 (a byte of the input
    // chooses), so that a record failing its check falls on either thread.
    let batch = 1 + usize::from(data.first().copied().unwrap_or(0) % 4);
    match (
        merge_in_batches(&paths, &copying, &hidden, batch),
        merge_decoding(&paths, &decoding, &hidden),
    ) {
        (Ok(got), Ok(want)) => {
            assert_eq!((got.records, got.warnings), (want.records, want.warnings));
            let same = std::fs::read(&copying).ok() == std::fs::read(&decoding).ok();
            assert!(same, "the copying merge wrote another file");
        }
        (Err(got), Err(want)) => assert_eq!(got.message, want.message),
        (got, want) => panic!("merge: {:?}, decoding: {:?}", got.err(), want.err()),
    }
});
