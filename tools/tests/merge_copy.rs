//! `merge` copies the counters of version-2 records whose schema is already the output's: the
//! file it writes is byte for byte the one that decoding and encoding every record writes
//! (`merge_decoding`, the way merge worked before), on generated shards, shards of other
//! schemas, a version-1 log and records that other writers laid out otherwise; and every corrupt
//! record is refused as before, naming the file and the offset. Each case also runs with the
//! reading thread passing records to the writing one in batches of 1, 2 and 3 records, so that
//! each record is checked on either thread, and a record that fails its check falls in a batch
//! of either.

mod common;

use std::path::{Path, PathBuf};

use common::{hand_made, schema, tmp, BY_PHASE, DERIVED, IN_4K};
use jitarena::format::put_frame;
use jitarena::Shared;
use jitarena::{MethodCounts, Schema};
use jitarena_tools::logtools::{merge_counted, merge_decoding, merge_in_batches, Merged};
use jitarena_tools::progress::Progress;

/// A generated log of 3,000 methods.
fn generated(name: &str, seed: u64, scale: &[(&str, f64)]) -> PathBuf {
    common::generated(name, seed, 3000, scale)
}

/// Batch sizes of the merges under test: small ones, and the default (`None`).
const BATCHES: [Option<usize>; 4] = [Some(1), Some(2), Some(3), None];

/// The copying merge with batches of `batch` records (`None`: the default).
fn copying(
    inputs: &[PathBuf],
    out: &Path,
    batch: Option<usize>,
) -> Result<Merged, jitarena::Error> {
    match batch {
        Some(n) => merge_in_batches(inputs, out, &Progress::hidden(), n),
        None => merge_counted(inputs, out, &Progress::hidden()),
    }
}

/// Both merges of `inputs`, the copying one with each of [`BATCHES`]: the outputs are the same
/// bytes and the results the same but for the copies, whatever the batches. Returns what the
/// copying merge did with the default batches.
fn both(name: &str, inputs: &[PathBuf]) -> Merged {
    let decoding = tmp(&format!("merged-{name}-ref.jas"));
    let want = merge_decoding(inputs, &decoding, &Progress::hidden()).unwrap();
    assert_eq!(want.copied, 0);
    let want_bytes = std::fs::read(decoding).unwrap();
    let mut got = Vec::new();
    for batch in BATCHES {
        let out = tmp(&format!("merged-{name}.jas"));
        let merged = copying(inputs, &out, batch).unwrap();
        assert_eq!(
            (merged.records, &merged.warnings),
            (want.records, &want.warnings),
            "{name}, batches of {batch:?}"
        );
        assert!(
            std::fs::read(out).unwrap() == want_bytes,
            "{name}, batches of {batch:?}: the copying merge wrote other bytes"
        );
        got.push(merged);
    }
    // The same records copied, whatever the batches.
    assert!(got.iter().all(|m| m == &got[0]), "{name}: {got:?}");
    got.pop().unwrap()
}

#[test]
fn generated_shards_are_copied_and_the_file_is_the_same() {
    let a = generated("gen-a.jas", 1, &[]);
    let b = generated("gen-b.jas", 2, &[("LSRA", 30.0)]);
    let merged = both("gen", &[a.clone(), b.clone()]);
    assert_eq!((merged.records, merged.copied), (6000, 6000));
    assert!(!merged.written_again, "every record passed its check");
    assert!(
        merged.first_pass_guessed,
        "every record has its shard's first schema"
    );
    // A merged log merged again with a shard: copied too.
    let again = both("gen-again", &[tmp("merged-gen.jas"), a]);
    assert_eq!((again.records, again.copied), (9000, 9000));
}

/// A log of `records`, each `(schema, name, counts)`, written by the library's writer, tiers
/// alternating.
fn written(name: &str, records: &[(&Shared<Schema>, &str, MethodCounts)]) -> PathBuf {
    common::written(name, records, &["Tier0", "Tier1"])
}

#[test]
fn shards_of_other_schemas_and_version_1_logs_are_the_same_file() {
    let ab = schema(&["A", "B"], &["P"]);
    let ba = schema(&["B", "A", "C"], &["Q", "P"]);
    let counts = |kinds: Vec<(u32, u64, u64)>, phases: Vec<(u32, u64)>| MethodCounts {
        used_bytes: 64,
        reserved_bytes: 4096,
        page_count: 1,
        kinds,
        phases,
        ..MethodCounts::default()
    };
    let first = written(
        "ab.jas",
        &[
            (
                &ab,
                "N.C:M0",
                counts(vec![(0, 10, 1), (2, 3, 1)], vec![(0, 13)]),
            ),
            (&ab, "N.C:M1", counts(vec![(1, 7, 2)], vec![(1, 7)])),
        ],
    );
    let second = written(
        "ba.jas",
        &[
            (
                &ba,
                "N.C:M1",
                counts(vec![(0, 5, 1), (2, 1, 1)], vec![(1, 6)]),
            ),
            (&ab, "N.D:M", counts(vec![(0, 4, 1)], vec![(0, 4)])),
        ],
    );
    let v1 = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/v1.jas");
    // The first file's schema is not the union (which has C and Q): nothing is copied.
    let v1_records = jitarena::log::read_all(&v1).unwrap().0.len() as u64;
    let mixed = both("mixed", &[first.clone(), second, v1.clone()]);
    assert_eq!((mixed.records, mixed.copied), (4 + v1_records, 0));
    // Alone, its records are copied.
    assert_eq!(both("ab", &[first]).copied, 2);
    // A version-1 log is converted, never copied.
    let converted = both("v1", &[v1]);
    assert_eq!((converted.records, converted.copied), (v1_records, 0));
    assert!(converted.first_pass_guessed);
    // The second file's second record is not of its first record's schema: the guess is given up.
    assert!(!mixed.first_pass_guessed);
}

/// A log whose later record adds a kind ahead of a later log's first record: the union taken
/// from the first records alone would order the kinds A, B, C, and every record's schema gives
/// A, C, B. The guess is given up at that record, and the file is the first pass's.
#[test]
fn a_guess_of_the_first_pass_that_a_later_record_proves_wrong_is_given_up() {
    let a = schema(&["A"], &["P"]);
    let ac = schema(&["A", "C"], &["P"]);
    let abc = schema(&["A", "B", "C"], &["P"]);
    let c = |kinds: Vec<(u32, u64, u64)>| {
        let bytes = kinds.iter().map(|k| k.1).sum();
        common::counts(kinds, vec![(0, bytes)])
    };
    let first = written(
        "guess-a.jas",
        &[
            (&a, "N.C:M0", c(vec![(0, 10, 1)])),
            (&ac, "N.C:M1", c(vec![(0, 4, 1), (1, 6, 2)])),
        ],
    );
    let second = written(
        "guess-abc.jas",
        &[(&abc, "N.D:M", c(vec![(1, 5, 1), (2, 7, 1)]))],
    );
    let merged = both("guess-wrong", &[first.clone(), second.clone()]);
    assert!(!merged.first_pass_guessed);
    assert_eq!(merged.records, 3);
    let (records, _) = jitarena::log::read_all(&tmp("merged-guess-wrong.jas")).unwrap();
    assert_eq!(records[0].schema.kinds, ["A", "C", "B"]);
    // Each file alone bears its guess out, or gives it up, as its records say.
    assert!(!both("guess-a", &[first]).first_pass_guessed);
    assert!(both("guess-abc", &[second]).first_pass_guessed);
}

#[test]
fn records_laid_out_otherwise_are_encoded_again_as_before() {
    // Reserved 2 x 4 KiB, 1 page, largest 100; kinds A (10 bytes, 1) and B (5, 1); used =
    // kinds; phase P, derived (15 bytes).
    let canonical: &[u8] = &[2, 1, 100, 0b011, 10, 1, 5, 1, 0, 0b01];
    let records: [(u8, &[u8]); 5] = [
        (IN_4K | DERIVED, canonical),
        // Reserved 8192 in bytes.
        (DERIVED, &[0x80, 0x40, 1, 100, 0b011, 10, 1, 5, 1, 0, 0b01]),
        // The page count padded to two bytes.
        (
            IN_4K | DERIVED,
            &[2, 0x81, 0x00, 100, 0b011, 10, 1, 5, 1, 0, 0b01],
        ),
        // The phase's bytes written out.
        (IN_4K, &[2, 1, 100, 0b011, 10, 1, 5, 1, 0, 0b01, 15]),
        // Kinds by phase with no entry: kind A of 0 bytes in phase P of 0 bytes.
        (
            IN_4K | DERIVED | BY_PHASE,
            &[2, 1, 100, 0b001, 0, 1, 0, 0b01, 0b0],
        ),
    ];
    let path = hand_made("other-layouts.jas", &records);
    let merged = both("other-layouts", &[path.clone(), path]);
    // Only the writer's own layout is copied: the others fail their check, and the records
    // are written again on one thread.
    assert_eq!((merged.records, merged.copied), (10, 2));
    assert!(merged.written_again);
}

#[test]
fn corrupt_records_are_refused_as_before() {
    let canonical: &[u8] = &[2, 1, 100, 0b011, 10, 1, 5, 1, 0, 0b01];
    let cases: [(&str, &[u8], &str); 5] = [
        // Bit 3 is past the invalid-kind bucket (slot 2).
        (
            "past",
            &[2, 1, 100, 0b1011, 10, 1, 5, 1, 0, 0b01],
            "outside its schema",
        ),
        ("short", &[2, 1, 100, 0b011, 10, 1, 5], "lists more kinds"),
        (
            "trailing",
            &[2, 1, 100, 0b011, 10, 1, 5, 1, 0, 0b01, 7],
            "after its last field",
        ),
        // The no-phase slot stores 20 bytes, and P would derive 15 - 20.
        (
            "negative",
            &[2, 1, 100, 0b011, 10, 1, 5, 1, 0, 0b11, 20],
            "more bytes than its kinds",
        ),
        // 2^63 bytes twice.
        (
            "overflow",
            &[
                2, 1, 100, 0b011, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 1, 1, 0x80,
                0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 1, 1, 0, 0b01,
            ],
            "more than 2^64 - 1",
        ),
    ];
    let good = hand_made("good.jas", &[(IN_4K | DERIVED, canonical)]);
    for (name, body, says) in cases {
        // After a good record, so that the corrupt one is not the first frame.
        let path = hand_made(
            &format!("{name}.jas"),
            &[(IN_4K | DERIVED, canonical), (IN_4K | DERIVED, body)],
        );
        let inputs = [good.clone(), path];
        let out = tmp("corrupt-out.jas");
        let want = merge_decoding(&inputs, &out, &Progress::hidden()).expect_err(name);
        for batch in BATCHES {
            let got = copying(&inputs, &out, batch).expect_err(name);
            assert_eq!(got.message, want.message, "{name}, batches of {batch:?}");
            assert!(!out.exists(), "{name}: no output is left");
        }
        assert!(
            want.message
                .contains(&format!("{name}.jas: record at byte "))
                && want.message.contains("is corrupt")
                && want.message.contains(says),
            "{name}: {}",
            want.message
        );
    }
}

#[test]
fn a_log_cut_short_merges_to_the_same_file_with_the_same_warning() {
    let a = generated("cut-a.jas", 3, &[]);
    let bytes = std::fs::read(&a).unwrap();
    let cut = tmp("cut.jas");
    std::fs::write(&cut, &bytes[..bytes.len() - 7]).unwrap();
    let merged = both("cut", &[cut, a]);
    // The cut log is a copy of the other: the merge also says that their contexts repeat.
    assert_eq!(merged.warnings.len(), 2);
    assert!(
        merged.warnings[0].contains("cut short"),
        "{:?}",
        merged.warnings
    );
    assert!(
        merged.warnings[1].contains("2,999 records of a context already merged"),
        "{:?}",
        merged.warnings
    );
    assert_eq!((merged.records, merged.copied), (5999, 5999));
    // The merged log says so too, and so does a merge of it: what a gate reads of the shards.
    let out = tmp("merged-cut.jas");
    let (records, warnings) = jitarena::log::read_all(&out).unwrap();
    assert_eq!(records.len(), 5999);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let carried = &warnings[0];
    assert!(
        carried.contains("merged-cut.jas: holds the records of a log that was cut short")
            && carried.contains(&merged.warnings[0]),
        "{carried}"
    );
    let again = both("cut-again", &[out]);
    assert_eq!(again.warnings[..1], warnings);
    let (_, nested) = jitarena::log::read_all(&tmp("merged-cut-again.jas")).unwrap();
    assert!(
        nested.len() == 1 && nested[0].ends_with(&merged.warnings[0]),
        "{nested:?}"
    );
}

/// The first corrupt record is reported, whether its counters or its head are corrupt: the
/// copying merge's first pass reads heads only, and fails on a later record's head.
#[test]
fn the_first_corrupt_record_is_reported_when_a_later_head_is_corrupt() {
    let canonical: &[u8] = &[2, 1, 100, 0b011, 10, 1, 5, 1, 0, 0b01];
    let past: &[u8] = &[2, 1, 100, 0b1011, 10, 1, 5, 1, 0, 0b01];
    let path = hand_made(
        "order.jas",
        &[(IN_4K | DERIVED, canonical), (IN_4K | DERIVED, past)],
    );
    let mut bytes = std::fs::read(&path).unwrap();
    // A record whose name shares 50 bytes with the previous one's 7.
    put_frame(&mut bytes, 3, &[0, 0, 50, 0]);
    std::fs::write(&path, bytes).unwrap();
    let out = tmp("order-out.jas");
    let inputs = [path];
    let want = merge_decoding(&inputs, &out, &Progress::hidden()).expect_err("corrupt");
    for batch in BATCHES {
        let got = copying(&inputs, &out, batch).expect_err("corrupt");
        assert_eq!(got.message, want.message, "batches of {batch:?}");
    }
    assert!(
        want.message.contains("outside its schema"),
        "{}",
        want.message
    );
}

/// Logs whose kinds add up to more than a log holds are refused by merge, naming the reason,
/// and no output is left.
#[test]
fn logs_whose_kinds_add_up_to_more_than_a_log_holds_are_refused() {
    let most = jitarena::counters::MAX_LOG_NAMES;
    let log = |name: &str, from: usize| {
        let kinds: Vec<String> = (from..from + most / 2 + 1)
            .map(|i| format!("K{i}"))
            .collect();
        let schema = Shared::new(Schema::of_log(kinds, vec!["P".to_string()]).unwrap());
        let path = tmp(name);
        let mut w = jitarena::log::LogWriter::new(std::fs::File::create(&path).unwrap()).unwrap();
        let counts = MethodCounts {
            kinds: vec![(0, 8, 1)],
            phases: vec![(0, 8)],
            used_bytes: 8,
            ..MethodCounts::default()
        };
        w.write(&schema, Some("M"), 0, None, &counts).unwrap();
        w.finish().unwrap();
        path
    };
    let inputs = [log("wide-a.jas", 0), log("wide-b.jas", most)];
    let out = tmp("wide-merged.jas");
    let e = merge_counted(&inputs, &out, &Progress::hidden()).expect_err("too many kinds");
    assert!(
        e.message.contains(&format!(
            "the logs name {} distinct kinds and 1 phases in all, but a log holds at most {most}",
            2 * (most / 2 + 1)
        )),
        "{e}"
    );
    assert!(!out.exists());
}
