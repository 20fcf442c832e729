//! `stats` reads a log on two threads: the reader decodes some batches of records and hands
//! the others over undecoded, to be decoded by the thread that tallies. Every record must come
//! out as the reader alone decodes it, in order, and a record that does not decode must stop
//! the read at the same record with the same error, wherever it falls.

use std::path::Path;

use jitarena::format::{put_frame, Content, FrameReader};
use jitarena::log::{LogReader, MethodRecord};
use jitarena_tools::report::batches::for_each_record;

use super::{jitarena, stderr, tmp};

/// Methods enough for batches of both sorts (256 records each; two in five handed over).
const METHODS: usize = 3000;

fn generated(name: &str) -> std::path::PathBuf {
    let path = tmp(name);
    let out = jitarena(
        &[
            "gen",
            "--seed",
            "7",
            "--methods",
            &METHODS.to_string(),
            "--log",
            path.to_str().unwrap(),
        ],
        b"",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    path
}

/// Every record as the reader alone decodes it, and its error if one does not decode.
fn one_thread(path: &Path) -> (Vec<MethodRecord>, Option<String>) {
    let mut reader = LogReader::open(path).unwrap();
    let mut records = Vec::new();
    loop {
        match reader.next_record() {
            Ok(Some(r)) => records.push(r),
            Ok(None) => return (records, None),
            Err(e) => return (records, Some(e.message)),
        }
    }
}

fn two_threads(path: &Path) -> (Vec<MethodRecord>, Option<String>) {
    let mut records = Vec::new();
    let result = for_each_record(LogReader::open(path).unwrap(), |r| {
        records.push(r.clone());
        Ok(())
    });
    (records, result.err().map(|e| e.message))
}

#[test]
fn records_read_on_two_threads_are_the_records_read_on_one() {
    let path = generated("two-threads.jas");
    let (want, error) = one_thread(&path);
    assert_eq!(want.len(), METHODS);
    assert!(error.is_none());
    let (got, error) = two_threads(&path);
    assert!(error.is_none(), "{error:?}");
    assert_eq!(got, want);
}

#[test]
fn a_record_that_does_not_decode_stops_both_reads_at_the_same_record() {
    let path = generated("two-threads-source.jas");
    // Record 3 * 256 + 10 falls in a batch handed over undecoded, record 10 in one the reader
    // decodes: a byte after the record's last field (in a frame with a valid checksum).
    for bad in [10, 3 * 256 + 10] {
        let broken = tmp(&format!("two-threads-bad-{bad}.jas"));
        with_a_byte_more(&path, bad, &broken);
        let (want, want_error) = one_thread(&broken);
        assert_eq!(want.len(), bad);
        let want_error = want_error.expect("the reader refuses the record");
        assert!(
            want_error.contains("bytes after its last field")
                && want_error.contains(broken.to_str().unwrap()),
            "{want_error}"
        );
        let (got, error) = two_threads(&broken);
        assert_eq!(got, want, "record {bad}");
        assert_eq!(error.as_deref(), Some(want_error.as_str()), "record {bad}");
    }
}

/// Writes `from` to `to` with a zero byte appended to the payload of method record `index`.
fn with_a_byte_more(from: &Path, index: usize, to: &Path) {
    let bytes = std::fs::read(from).unwrap();
    let mut out = bytes[..jitarena::format::HEADER_LEN].to_vec();
    let mut frames = FrameReader::open(from, Content::Log).unwrap();
    let mut methods = 0;
    while frames.advance().unwrap() {
        let frame = frames.frame();
        let mut payload = frame.payload.clone();
        if frame.kind == 3 {
            if methods == index {
                payload.push(0);
            }
            methods += 1;
        }
        put_frame(&mut out, frame.kind, &payload);
    }
    std::fs::write(to, out).unwrap();
}
