//! The CSV bridge of memdiff: one fuzzed per-method CSV with `Base bytes` and `Diff bytes`
//! columns, compared and rendered as text and JSON (the `memdiff` target renders markdown and
//! HTML too; here they would halve the executions).
#![no_main]

use jitarena_tools::diff::{diff_csv, CsvColumns, DiffOptions};
use jitarena_tools::report::diff;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = jitarena_fuzz::input_file("csv", data);
    if let Ok(d) = diff_csv(&path, &CsvColumns::metric("bytes"), &DiffOptions::default()) {
        let _ = diff::render_text(&d);
        let _ = diff::render_json(&d);
    }
});
