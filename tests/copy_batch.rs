//! `RecordBatch`: records taken from a log, checked and written to another, give the file that
//! writing them decoded gives; an unchecked batch is never written. (Batches that fail their
//! check, corrupt or laid out otherwise, are tested through `merge`: tools/tests/merge_copy.rs.)

use std::io::ErrorKind;
use std::sync::Arc;

use jitarena::log::{LogReader, LogWriter, MethodCounts, RecordBatch};
use jitarena::Schema;

fn schema() -> Arc<Schema> {
    let names = |l: &[&str]| l.iter().map(|s| s.to_string()).collect();
    Arc::new(Schema::new(names(&["A", "B", "C"]), names(&["P", "Q"])).unwrap())
}

/// A log of `n` records of `schema`, their names sharing prefixes, two tiers.
fn log(schema: &Arc<Schema>, n: u64) -> Vec<u8> {
    let mut w = LogWriter::new(Vec::new()).unwrap();
    for i in 0..n {
        let counts = MethodCounts {
            used_bytes: 64 * (i + 1) + 8,
            reserved_bytes: 4096 * (1 + i % 3),
            page_count: 1 + i % 3,
            largest_alloc: 48,
            kinds: vec![(0, 40 * (i + 1), i + 1), (2, 24 * (i + 1), 2)],
            phases: vec![(0, 30 * (i + 1)), (1, 34 * (i + 1))],
            ..MethodCounts::default()
        };
        let name = format!("Ns.Class{}:Method{i}", i / 4);
        let tier = ["Tier0", "Tier1"][(i % 2) as usize];
        w.write(schema, Some(&name), i as i64 * 3, Some(tier), &counts)
            .unwrap();
    }
    w.finish().unwrap()
}

fn reader_of(bytes: &[u8], name: &str) -> LogReader {
    let path =
        std::env::temp_dir().join(format!("jitarena-copy-batch-{}-{name}", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    let reader = LogReader::open(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    reader
}

#[test]
fn a_checked_batch_writes_the_file_that_decoded_records_write() {
    let schema = schema();
    let input = log(&schema, 10);
    // Taken in batches of 3 (the last of 1), written one batch after another.
    let mut reader = reader_of(&input, "good");
    let mut out = LogWriter::new(Vec::new()).unwrap();
    let mut batch = RecordBatch::new();
    let mut taken = 0;
    while reader.next_raw().unwrap() {
        assert!(reader.take_current(&mut batch));
        taken += 1;
        if batch.len() == 3 || taken == 10 {
            assert!(!batch.is_checked());
            assert!(batch.check());
            out.write_batch(&schema, &batch).unwrap();
            batch.clear();
            assert!(batch.is_empty() && batch.bytes() == 0);
        }
    }
    assert_eq!(out.finish().unwrap(), input);
}

#[test]
fn an_unchecked_batch_or_one_of_another_schema_is_refused_and_nothing_written() {
    let schema = schema();
    let input = log(&schema, 2);
    let mut reader = reader_of(&input, "refused");
    let mut batch = RecordBatch::new();
    while reader.next_raw().unwrap() {
        assert!(reader.take_current(&mut batch));
    }
    let mut out = LogWriter::new(Vec::new()).unwrap();
    let err = out.write_batch(&schema, &batch).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    // Against a schema of other lengths, even checked.
    assert!(batch.check());
    let other = Arc::new(Schema::new(vec!["A".into()], vec![]).unwrap());
    let err = out.write_batch(&other, &batch).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    let empty = LogWriter::new(Vec::new()).unwrap().finish().unwrap();
    assert_eq!(out.finish().unwrap(), empty, "nothing was written");
}
