//! The binary trace reader: every method of one fuzzed trace (its frames' checksums made
//! valid), written back as text (as `dump --format text` does). Inputs without the magic go to
//! the text reader (`trace_text` fuzzes that one).
#![no_main]

use jitarena::trace;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = jitarena_fuzz::input_file("jat", &jitarena_fuzz::with_checksums(data));
    let Ok(mut reader) = trace::open(&path) else {
        return;
    };
    while let Ok(Some(method)) = reader.next_method() {
        let _ = trace::write_text(&mut std::io::sink(), &method);
    }
    let _ = reader.warnings();
});
