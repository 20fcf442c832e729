//! memdiff of two fuzzed stats logs (the input split in two at its second `JITARENA` magic, or
//! in the middle; each one's frame checksums made valid), rendered in every report format.
#![no_main]

use jitarena_tools::diff::{diff_logs, CoverageRules, DiffOptions, Report};
use jitarena_tools::report::{diff, html, summary};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (base, changed) = jitarena_fuzz::split_two(data);
    let base = jitarena_fuzz::input_file("base", &jitarena_fuzz::with_checksums(base));
    let changed = jitarena_fuzz::input_file("diff", &jitarena_fuzz::with_checksums(changed));
    if let Ok(d) = diff_logs(&[base], &[changed], &DiffOptions::default()) {
        let _ = diff::render_text(&d);
        let _ = diff::render_markdown(&d, true);
        let _ = diff::render_json(&d);
        let _ = html::render_html(&d);
        // The same diff as a collection: the summary, the coverage gate and their reports.
        let options = DiffOptions::default();
        let report = Report::new(
            vec![("fuzzed".to_string(), d)],
            Vec::new(),
            &options,
            &CoverageRules::default(),
        );
        let _ = report.check_sums();
        let _ = summary::render_markdown(&report);
        let _ = summary::render_long_markdown(&report);
        let _ = summary::render_text(&report);
        let _ = diff::render_report_json(&report);
        let _ = html::render_report_html(&report);
    }
});
