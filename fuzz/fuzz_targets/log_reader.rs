//! The stats-log reader: `stats` (both renderings) and `dump` (csv and jsonl) of one fuzzed
//! file, its frames' checksums made valid. Errors are fine; panics, hangs and unbounded memory
//! are not.
#![no_main]

use std::path::Path;

use jitarena_tools::logtools::{dump, DumpFormat};
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
});
