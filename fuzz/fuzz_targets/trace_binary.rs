//! The binary trace reader: every method of one fuzzed trace (its frames' checksums made
//! valid), its events read a chunk at a time and written back as text (as `dump --format text`
//! does). Inputs without the magic go to the text reader (`trace_text` fuzzes that one).
#![no_main]

use jitarena::trace;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = jitarena_fuzz::input_file("jat", &jitarena_fuzz::with_checksums(data));
    let Ok(mut reader) = trace::open(&path) else {
        return;
    };
    // A chunk of events at a time, as `dump --format text` reads them.
    while let Ok(Some(mut method)) = reader.next_events() {
        let mut out = std::io::sink();
        let _ = trace::write_text_method(&mut out, method.info());
        let schema = jitarena::Shared::clone(method.schema());
        while let Ok(Some(chunk)) = method.next_chunk() {
            let _ = trace::write_text_events(&mut out, &schema, chunk);
        }
    }
    let _ = reader.warnings();
});
