//! The plain text trace reader: one fuzzed text trace, parsed and written back as text.
#![no_main]

use jitarena::trace;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = jitarena_fuzz::input_file("txt", data);
    if let Ok(methods) = trace::read_text(&path) {
        for method in &methods {
            let _ = trace::write_text(&mut std::io::sink(), method);
        }
    }
});
