//! The stats-log reader: `stats` (both renderings), `dump` (csv and jsonl) and `merge` of one
//! fuzzed file, its frames' checksums made valid. Errors are fine; panics, hangs and unbounded
//! memory are not, nor a `merge` (which copies the records it can) that writes another file or
//! fails otherwise than decoding every record does.
#![no_main]

use std::path::Path;

use jitarena_tools::logtools::{dump, merge_counted, merge_decoding, DumpFormat};
use jitarena_tools::progress::Progress;
use jitarena_tools::report::stats;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = jitarena_fuzz::input_file("log", &jitarena_fuzz::with_checksums(data));
    let paths = [path];
    if let Ok(s) = stats::collect(&paths) {
        let _ = stats::render_text(&s);
        let _ = stats::render_json(&s);
    }
    for format in [DumpFormat::Csv, DumpFormat::Jsonl] {
        let _ = dump(&paths, format, &mut std::io::sink(), Path::new("<sink>"));
    }
    // Beside the input (in /dev/shm where there is one: merge's fsync costs nothing there).
    let name = |end: &str| {
        let mut name = paths[0].file_name().unwrap_or_default().to_os_string();
        name.push(end);
        paths[0].with_file_name(name)
    };
    let (copying, decoding) = (name("-merged.jas"), name("-merged-ref.jas"));
    let hidden = Progress::hidden();
    match (
        merge_counted(&paths, &copying, &hidden),
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
