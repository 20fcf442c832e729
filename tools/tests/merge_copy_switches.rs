//! `merge` decides whether a record's schema is the output's once per schema of a file, not at
//! every switch between schemas: a shard whose records alternate between a large schema (the
//! union, of long names) and a small one compares each schema with the output's once (before,
//! 1 MB of names at each of 10,000 switches: more than twice the merge's own time), and merges
//! to the same file as decoding every record.

mod common;

use std::path::Path;

use common::tmp;
use jitarena::log::LogWriter;
use jitarena::Shared;
use jitarena::{MethodCounts, Schema};
use jitarena_tools::logtools::{merge_counted, merge_decoding};
use jitarena_tools::progress::Progress;

/// A copying merge of `input` into `out`: (records, copied, schemas compared).
fn copy(input: &Path, out: &Path) -> (u64, u64, u64) {
    let m = merge_counted(&[input.to_path_buf()], out, &Progress::hidden()).unwrap();
    (m.records, m.copied, m.schemas_compared)
}

#[test]
fn records_alternating_between_schemas_do_not_compare_every_name_each_time() {
    // 4,000 kinds of 250-byte names (the union, 1 MB of names), and a schema of one of them.
    let pad = "x".repeat(245);
    let kinds: Vec<String> = (0..4000).map(|k| format!("k{k:04}{pad}")).collect();
    let large = Shared::new(Schema::of_log(kinds, vec!["P".to_string()]).unwrap());
    let small = Shared::new(Schema::of_log(vec![format!("k0000{pad}")], Vec::new()).unwrap());
    let counts = MethodCounts {
        kinds: vec![(0, 64, 2)],
        used_bytes: 64,
        reserved_bytes: 4096,
        page_count: 1,
        largest_alloc: 32,
        ..MethodCounts::default()
    };
    // The same 20,000 records: switching schema at every record, and once.
    let write = |name: &str, large_at: &dyn Fn(i64) -> bool| {
        let path = tmp(name);
        let mut w = LogWriter::new(std::fs::File::create(&path).unwrap()).unwrap();
        for i in 0..20_000 {
            let schema = if large_at(i) { &large } else { &small };
            w.write(schema, Some("m"), i, None, &counts).unwrap();
        }
        w.finish().unwrap();
        path
    };
    let alternating = write("alternating.jas", &|i| i % 2 == 0);
    let grouped = write("grouped.jas", &|i| i < 10_000);

    let (copying, decoding) = (tmp("copying.jas"), tmp("decoding.jas"));
    let inputs = [alternating.clone()];
    merge_decoding(&inputs, &decoding, &Progress::hidden()).unwrap();
    assert_eq!(copy(&alternating, &copying), (20_000, 10_000, 2));
    assert!(std::fs::read(&copying).unwrap() == std::fs::read(&decoding).unwrap());
    assert_eq!(
        copy(&grouped, &tmp("grouped-copy.jas")),
        (20_000, 10_000, 2)
    );
}
