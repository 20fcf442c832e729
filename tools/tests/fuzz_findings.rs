//! What the fuzzers (`fuzz/`, `scripts/fuzz.sh`) found, each reduced to the smallest input that
//! shows it: every one must read as an error naming the file, never a panic.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::tmp;
use jitarena::format::{header, put_frame, Content, Payload};
use jitarena::{log, trace};

/// A file of `content` holding one frame of type `kind` with a valid checksum.
fn one_frame(name: &str, content: Content, kind: u8, payload: &[u8]) -> PathBuf {
    let mut bytes = header(content).to_vec();
    put_frame(&mut bytes, kind, payload);
    let path = tmp(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// A tier frame (type 2: id 1, then a name) whose name length, 3, counts its own length byte:
/// only 2 bytes follow it.
const TIER_NAME_PAST_THE_END: [u8; 4] = [1, 3, b'F', b'O'];

#[test]
fn a_name_length_is_checked_against_the_bytes_after_it() {
    // Found by the memdiff target: the check counted the length's own byte as name bytes,
    // so the slice ran one byte past the record and panicked.
    assert!(Payload::new(&[2, b'a']).str().is_err());
    assert!(Payload::new(&[0x82, 0, b'a']).str().is_err());
    let mut p = Payload::new(&[1, b'a']);
    assert_eq!(p.str().ok(), Some("a"));
    assert!(p.is_done());
    let mut p = Payload::new(&[0]);
    assert_eq!(p.str().ok(), Some(""));
}

#[test]
fn a_log_with_a_name_past_its_record_is_an_error_naming_the_file() {
    let path = one_frame(
        "name-past-end.jas",
        Content::Log,
        2,
        &TIER_NAME_PAST_THE_END,
    );
    let err = log::read_all(&path).expect_err("an error, not records");
    assert!(
        err.message.contains("name-past-end.jas") && err.message.contains("runs past the end"),
        "{}",
        err.message
    );
    // memdiff's other side: a valid log of no records.
    let empty = tmp("empty.jas");
    std::fs::write(&empty, header(Content::Log)).unwrap();
    for args in [
        vec!["stats"],
        vec!["dump"],
        vec!["memdiff", "-q", empty.to_str().unwrap()],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_jitarena"))
            .args(&args)
            .arg(&path)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("name-past-end.jas") && !stderr.contains("panicked"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn a_trace_with_a_name_past_its_record_is_an_error_naming_the_file() {
    let path = one_frame(
        "name-past-end.jat",
        Content::Trace,
        2,
        &TIER_NAME_PAST_THE_END,
    );
    let mut reader = trace::open(&path).unwrap();
    let err = reader.next_method().expect_err("an error, not a method");
    assert!(
        err.message.contains("name-past-end.jat") && err.message.contains("runs past the end"),
        "{}",
        err.message
    );
}
