//! A compile that failed, in the stats log: `jitarena_method.failed` notes the context (its
//! name and tier) in place of a record (`docs/formats.md`, frame type 6), which readers list
//! with the log's failed compiles; the records of the other contexts are as before, and a
//! `jitarena_method` of an older header's size is taken as not failed.

mod native;

use jitarena::log::{FailedCompile, LogReader};
use native::{build_program, run};

#[test]
fn a_failed_compile_is_noted_in_place_of_its_record() {
    let exe = build_program("failed_compile", &["tests/c/failed_compile.c"], false);
    let log = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("failed_compile.jas");
    run(&exe, &[log.to_str().unwrap()]);
    let mut reader = LogReader::open(&log).unwrap();
    let mut contexts = Vec::new();
    while let Some(r) = reader.next_record().unwrap() {
        contexts.push(r.info.context);
        assert_eq!(r.counts.total_bytes(), 40, "{}", r.info.context);
    }
    assert_eq!(contexts, [1, 2, 4, 6], "the failed contexts have no record");
    let failed = |context, tier: &str| FailedCompile {
        context,
        name: Some("Ns.C:M()".into()),
        tier: Some(tier.into()),
    };
    assert_eq!(
        reader.failed_compiles(),
        [failed(3, "FullOpts"), failed(5, "FullOpts")]
    );
}
