//! `stats` on two threads gives what one thread gives, field by field, whatever the batches
//! the reading thread passes on (1, 2, 3 and 7 records, and the default): on generated logs,
//! logs of other schemas, a version-1 log, records with kinds by phase, a log cut short; the
//! largest methods of equal bytes are the first in the logs; and a corrupt record or an
//! overflowing total (of a kind or of a phase) gives one thread's error; phases whose
//! totals pass 2^64 - 1 only together are exact.

mod common;

use std::path::{Path, PathBuf};

use common::{counts, generated, schema, tmp};
use jitarena::Shared;
use jitarena::{MethodCounts, Schema};
use jitarena_tools::stats::{collect, collect_in_batches, collect_one_thread, Stats};

/// The statistics of `paths` on one thread, checked against two threads with every batch size.
fn same_on_two_threads(paths: &[PathBuf]) -> Stats {
    let one = collect_one_thread(paths).unwrap();
    for batch in [1, 2, 3, 7] {
        let two = collect_in_batches(paths, batch).unwrap();
        assert_eq!(two, one, "batches of {batch}");
    }
    assert_eq!(collect(paths).unwrap(), one, "default batches");
    one
}

/// A log of `records`, each `(schema, name, counts)`, written by the library's writer, tiers
/// alternating.
fn written(name: &str, records: &[(&Shared<Schema>, String, MethodCounts)]) -> PathBuf {
    common::written(name, records, &["Tier0", "Tier1", "Tier0-instr"])
}

#[test]
fn generated_shards_add_up_the_same_on_two_threads() {
    let a = generated("gen-a.jas", 1, 5000, &[]);
    let b = generated("gen-b.jas", 2, 3000, &[("LSRA", 30.0)]);
    let stats = same_on_two_threads(&[a.clone(), b]);
    assert_eq!(stats.methods, 8000);
    assert_eq!(stats.top.len(), 10);
    same_on_two_threads(&[a]);
}

#[test]
fn other_schemas_version_1_and_a_cut_log_add_up_the_same() {
    let ab = schema(&["A", "B"], &["P"]);
    let ba = schema(&["B", "A", "C"], &["Q", "P"]);
    let records: Vec<_> = (0..40u64)
        .map(|i| {
            if i % 5 < 2 {
                let c = counts(vec![(0, 10 + i, 1), (2, 3, 1)], vec![(0, 13 + i)]);
                (&ab, format!("N.C:M{i}"), c)
            } else {
                let c = counts(vec![(0, 5, 1), (2, i, 2)], vec![(1, 5 + i)]);
                (&ba, format!("N.D:M{i}"), c)
            }
        })
        .collect();
    let mixed = written("mixed.jas", &records);
    let v1 = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/v1.jas");
    let bytes = std::fs::read(&mixed).unwrap();
    let cut = tmp("cut.jas");
    std::fs::write(&cut, &bytes[..bytes.len() - 5]).unwrap();
    let stats = same_on_two_threads(&[mixed.clone(), v1.clone(), cut, mixed]);
    assert_eq!(stats.warnings.len(), 1, "{:?}", stats.warnings);
    // Phase P first: the first record names it (the order one thread's union takes).
    assert_eq!(stats.phases[0].name, "P");
    same_on_two_threads(&[v1]);
}

#[test]
fn kinds_by_phase_add_up_the_same() {
    let s = schema(&["A", "B"], &["P", "Q"]);
    let records: Vec<_> = (0..25u64)
        .map(|i| {
            let mut c = counts(vec![(0, 10 + i, 1), (1, 6, 2)], vec![(0, 12 + i), (1, 4)]);
            c.phase_kind_bytes = vec![(0, 0, 8 + i), (0, 1, 4), (1, 0, 2), (1, 1, 2)];
            (&s, format!("N.C:M{i}"), c)
        })
        .collect();
    let stats = same_on_two_threads(&[written("by-phase.jas", &records)]);
    assert_eq!(stats.phase_kinds.len(), 4);
}

#[test]
fn the_largest_methods_of_equal_bytes_are_the_first_in_the_logs() {
    let s = schema(&["A"], &["P"]);
    // 30 methods of 100 bytes, then 5 of 50: the ten listed are methods 0 to 9.
    let records: Vec<_> = (0..35u64)
        .map(|i| {
            let bytes = if i < 30 { 100 } else { 50 };
            let c = counts(vec![(0, bytes, 1 + i % 4)], vec![(0, bytes)]);
            (&s, format!("N.C:M{i:02}"), c)
        })
        .collect();
    let stats = same_on_two_threads(&[written("ties.jas", &records)]);
    let names: Vec<&str> = stats.top.iter().map(|m| m.name.as_str()).collect();
    let want: Vec<String> = (0..10).map(|i| format!("N.C:M{i:02}")).collect();
    assert_eq!(names, want);
}

#[test]
fn a_corrupt_record_gives_one_threads_error() {
    let a = generated("corrupt-src.jas", 3, 40, &[]);
    let mut bytes = std::fs::read(&a).unwrap();
    // A byte in the middle of the file: a frame's checksum no longer matches.
    let at = bytes.len() * 2 / 3;
    bytes[at] ^= 0x55;
    let corrupt = tmp("corrupt.jas");
    std::fs::write(&corrupt, &bytes).unwrap();
    let inputs = [a, corrupt];
    let want = collect_one_thread(&inputs).unwrap_err();
    assert!(want.message.contains("corrupt.jas"), "{}", want.message);
    for batch in [1, 2, 3, 7, 1024] {
        let got = collect_in_batches(&inputs, batch).unwrap_err();
        assert_eq!(got.message, want.message, "batches of {batch}");
    }
}

#[test]
fn an_overflowing_total_gives_one_threads_error() {
    let s = schema(&["A", "B"], &["P"]);
    // Kind B reaches 2^64 - 1 and past it at the fourth record, wherever the records are added.
    let records: Vec<_> = (0..6u64)
        .map(|i| {
            let c = MethodCounts {
                used_bytes: 1 << 62,
                reserved_bytes: 4096,
                page_count: 1,
                largest_alloc: 8,
                kinds: vec![(0, 1, 1), (1, 1 << 62, 1)],
                phases: vec![(0, 1 + (1 << 62))],
                ..MethodCounts::default()
            };
            (&s, format!("N.C:M{i}"), c)
        })
        .collect();
    let inputs = [written("overflow.jas", &records)];
    let want = collect_one_thread(&inputs).unwrap_err();
    assert!(want.message.contains("overflow.jas"), "{}", want.message);
    // The kind's total is the first sum to pass 2^64 - 1 (before the phase's and the total
    // bytes requested, which pass it with the same record).
    assert!(want.message.contains("bytes of a kind"), "{}", want.message);
    for batch in [1, 2, 3, 7, 1024] {
        let got = collect_in_batches(&inputs, batch).unwrap_err();
        assert_eq!(got.message, want.message, "batches of {batch}");
    }
}

/// Records of few bytes whose phases hold 2^62 bytes each (a writer may store phases that
/// add up to more than the kinds): `phases` per record, `records` of them.
fn heavy_phases(name: &str, phases: &[&str], records: u64) -> PathBuf {
    let s = schema(&["A"], phases);
    let list: Vec<_> = (0..records)
        .map(|i| {
            let c = MethodCounts {
                used_bytes: 64,
                reserved_bytes: 4096,
                page_count: 1,
                largest_alloc: 8,
                kinds: vec![(0, 64, 2)],
                phases: (0..phases.len() as u32).map(|p| (p, 1 << 62)).collect(),
                ..MethodCounts::default()
            };
            (&s, format!("N.C:M{i}"), c)
        })
        .collect();
    written(name, &list)
}

#[test]
fn an_overflowing_phase_gives_one_threads_error() {
    // Phase P passes 2^64 - 1 at the fourth record; no kind's total comes near it.
    let inputs = [heavy_phases("phase-overflow.jas", &["P"], 6)];
    let want = collect_one_thread(&inputs).unwrap_err();
    assert!(
        want.message.contains("phase-overflow.jas"),
        "{}",
        want.message
    );
    assert!(
        want.message.contains("bytes of a phase"),
        "{}",
        want.message
    );
    for batch in [1, 2, 3, 7, 1024] {
        let got = collect_in_batches(&inputs, batch).unwrap_err();
        assert_eq!(got.message, want.message, "batches of {batch}");
    }
}

#[test]
fn phases_that_add_up_past_2_pow_64_only_together_are_exact() {
    // Three phases of 3 x 2^62 bytes each: every phase's total fits, their sum does not.
    let inputs = [heavy_phases("phases-together.jas", &["P", "Q", "R"], 3)];
    let stats = same_on_two_threads(&inputs);
    let phases: Vec<(&str, u64)> = stats.phases.iter().map(|p| (&*p.name, p.bytes)).collect();
    assert_eq!(phases, [("P", 3 << 62), ("Q", 3 << 62), ("R", 3 << 62)]);
    // Records after them add up as they do alone.
    let more = generated("after-heavy-phases.jas", 5, 2000, &[]);
    let alone = same_on_two_threads(std::slice::from_ref(&more));
    let after = same_on_two_threads(&[inputs[0].clone(), more]);
    for p in &alone.phases {
        let got = after.phases.iter().find(|q| q.name == p.name).unwrap();
        assert_eq!(got.bytes, p.bytes, "{}", p.name);
    }
    assert_eq!(after.methods, alone.methods + 3);
}

/// A log read through a pipe cannot be read again after an error: stats reads it on one
/// thread, and its error is the one a file gives, with the pipe's name.
#[test]
fn a_corrupt_log_through_a_pipe_gives_the_files_error() {
    use std::io::Write;
    let a = generated("pipe-src.jas", 4, 3000, &[]);
    let mut bytes = std::fs::read(&a).unwrap();
    let at = bytes.len() * 2 / 3;
    bytes[at] ^= 0x55;
    let corrupt = tmp("pipe-corrupt.jas");
    std::fs::write(&corrupt, &bytes).unwrap();
    let want = collect_one_thread(std::slice::from_ref(&corrupt)).unwrap_err();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_jitarena"))
        .args(["stats", "/dev/stdin"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // The reader may stop at the error before taking every byte: a broken pipe is fine.
    let _ = stdin.write_all(&bytes);
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let want = want
        .message
        .replace(corrupt.to_str().unwrap(), "/dev/stdin");
    assert!(stderr.contains(&want), "want {want:?}, got {stderr:?}");
}
