//! `RecordBatch`: records taken from a log, checked and written to another, give the file that
//! writing them decoded gives; an unchecked batch is never written. (Batches that fail their
//! check, corrupt or laid out otherwise, are tested through `merge`: tools/tests/merge_copy.rs.)

use std::io::ErrorKind;

use jitarena::log::{LogReader, LogWriter, MethodCounts, RecordBatch};
use jitarena::Schema;
use jitarena::Shared;

fn schema() -> Shared<Schema> {
    let names = |l: &[&str]| l.iter().map(|s| s.to_string()).collect();
    Shared::new(Schema::new(names(&["A", "B", "C"]), names(&["P", "Q"])).unwrap())
}

/// A log of `n` records of `schema`, their names sharing prefixes, two tiers.
fn log(schema: &Shared<Schema>, n: u64) -> Vec<u8> {
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
    reader_opened(bytes, name, LogReader::open)
}

fn reader_opened(
    bytes: &[u8],
    name: &str,
    open: fn(&std::path::Path) -> Result<LogReader, jitarena::Error>,
) -> LogReader {
    let path =
        std::env::temp_dir().join(format!("jitarena-copy-batch-{}-{name}", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    let reader = open(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    reader
}

/// Records taken as they are, or to be copied (their heads and checksums kept, which the
/// writer reuses where it writes the same head), from a reader that checks every checksum or
/// one whose checks are deferred (whose checksums are never reused).
#[test]
fn a_checked_batch_writes_the_file_that_decoded_records_write() {
    type Take = fn(&LogReader, &mut RecordBatch) -> bool;
    let takes: [(&str, Take); 2] = [
        ("as they are", LogReader::take_current),
        ("to copy", LogReader::take_current_to_copy),
    ];
    for (what, take) in takes {
        for (opened, open) in [
            ("checked", LogReader::open as fn(&_) -> _),
            ("deferred", LogReader::open_again),
        ] {
            takes_and_writes(&format!("{what}, {opened}"), take, open);
        }
    }
}

fn takes_and_writes(
    case: &str,
    take: fn(&LogReader, &mut RecordBatch) -> bool,
    open: fn(&std::path::Path) -> Result<LogReader, jitarena::Error>,
) {
    let schema = schema();
    let input = log(&schema, 10);
    // Taken in batches of 3 (the last of 1), written one batch after another.
    let mut reader = reader_opened(&input, "good", open);
    let mut out = LogWriter::new(Vec::new()).unwrap();
    let mut batch = RecordBatch::new();
    let mut taken = 0;
    while reader.next_raw().unwrap() {
        assert!(take(&reader, &mut batch), "{case}");
        taken += 1;
        if batch.len() == 3 || taken == 10 {
            assert!(!batch.is_checked());
            assert!(batch.check());
            out.write_batch(&schema, &batch).unwrap();
            batch.clear();
            assert!(batch.is_empty() && batch.bytes() == 0);
        }
    }
    assert!(out.finish().unwrap() == input, "{case}");
    // After a record of another name, the first record's head is written otherwise (its name
    // shares no prefix with the one before): its checksum is computed, not reused.
    let mut reader = reader_opened(&input, "after", open);
    let mut out = LogWriter::new(Vec::new()).unwrap();
    let mut want = LogWriter::new(Vec::new()).unwrap();
    let other = MethodCounts {
        used_bytes: 8,
        kinds: vec![(1, 8, 1)],
        phases: vec![(0, 8)],
        ..MethodCounts::default()
    };
    for w in [&mut out, &mut want] {
        w.write(&schema, Some("Other:M"), 1000, None, &other)
            .unwrap();
    }
    let mut batch = RecordBatch::new();
    let mut record = jitarena::MethodRecord::default();
    while reader.next_raw().unwrap() {
        assert!(take(&reader, &mut batch), "{case}");
        reader.decode_current(&mut record).unwrap();
        let i = &record.info;
        let (name, tier) = (i.name.as_deref(), i.tier.as_deref());
        want.write(&schema, name, i.context, tier, &record.counts)
            .unwrap();
    }
    assert!(batch.check());
    out.write_batch(&schema, &batch).unwrap();
    assert!(
        out.finish().unwrap() == want.finish().unwrap(),
        "{case}, after another record"
    );
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
    let other = Shared::new(Schema::new(vec!["A".into()], vec![]).unwrap());
    let err = out.write_batch(&other, &batch).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    let empty = LogWriter::new(Vec::new()).unwrap().finish().unwrap();
    assert_eq!(out.finish().unwrap(), empty, "nothing was written");
}
