//! Hostile inputs for `stats` and `merge` on two threads: they must give what one thread gives
//! (the same report, file or error) on invalid-kind and no-phase buckets, many tiers, schemas
//! alternating record by record, names of MiBs, empty logs and directories of shards.

mod common;

use std::path::PathBuf;

use common::{counts, hand_made, hand_made_of, schema, tmp, written, DERIVED, IN_4K};
use jitarena::format::{header_for, put_frame, put_str, put_varint, Content};
use jitarena::Shared;
use jitarena_tools::logtools::{merge_decoding, merge_in_batches};
use jitarena_tools::progress::Progress;
use jitarena_tools::report::stats::{render_json, render_text};
use jitarena_tools::stats::{collect_in_batches, collect_one_thread};

/// Stats on one thread equal stats on two, whatever the batches, the reports too; and the
/// merge writes the same file, or gives the same error, as the decoding merge.
fn same(name: &str, inputs: &[PathBuf]) {
    let one = collect_one_thread(inputs);
    for batch in [1, 2, 3, 5, 1024] {
        let two = collect_in_batches(inputs, batch);
        match (&one, &two) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a, b, "{name}: batches of {batch}");
                assert_eq!(render_json(a), render_json(b), "{name}");
                assert_eq!(render_text(a), render_text(b), "{name}");
            }
            (Err(a), Err(b)) => assert_eq!(a.message, b.message, "{name}: batches of {batch}"),
            _ => panic!("{name}: batches of {batch}: {one:?} but {two:?}"),
        }
    }
    let reference = tmp(&format!("{name}-ref.jas"));
    let want = merge_decoding(inputs, &reference, &Progress::hidden());
    for batch in [1, 2, 3, 1024] {
        let out = tmp(&format!("{name}-out.jas"));
        let _ = std::fs::remove_file(&out);
        let got = merge_in_batches(inputs, &out, &Progress::hidden(), batch);
        match (&want, &got) {
            (Ok(a), Ok(b)) => {
                assert_eq!((a.records, &a.warnings), (b.records, &b.warnings), "{name}");
                assert!(
                    std::fs::read(&reference).unwrap() == std::fs::read(&out).unwrap(),
                    "{name}: batches of {batch}: other bytes"
                );
            }
            (Err(a), Err(b)) => assert_eq!(a.message, b.message, "{name}: batches of {batch}"),
            _ => panic!("{name}: batches of {batch}: {want:?} but {got:?}"),
        }
    }
}

#[test]
fn alternating_schemas_many_tiers_and_buckets_are_the_same() {
    let schemas = [
        schema(&["A", "B"], &["P"]),
        schema(&["C", "A"], &["Q", "P"]),
        schema(&["B", "D", "E"], &[]),
    ];
    let records: Vec<_> = (0..300u64)
        .map(|i| {
            let s = Shared::clone(&schemas[(i % 3) as usize]);
            let mut c = counts(vec![(0, 3 + i % 7, 1), (1, 100 - i % 50, 2)], vec![]);
            if !s.phases.is_empty() && i % 4 != 0 {
                c.phases = vec![(0, 1 + i % 5)];
            }
            (s, format!("N.C:M{}", i % 37), c)
        })
        .collect();
    let tiers: Vec<String> = (0..23).map(|t| format!("T{t}")).collect();
    let a = written("alt.jas", &records, &tiers);
    same("alt", &[a.clone(), a]);
}

#[test]
fn long_names_empty_logs_and_directories_are_the_same() {
    let s = schema(&["A", "B"], &["P"]);
    let big = "x".repeat(3 << 20);
    let records: Vec<_> = (0..6u64)
        .map(|i| {
            let name = if i % 2 == 0 {
                format!("{big}{i}")
            } else {
                format!("M{i}")
            };
            let c = counts(vec![(1, 5 + i, 1)], vec![(0, 5 + i)]);
            (Shared::clone(&s), name, c)
        })
        .collect();
    let long = written("long.jas", &records, &["T"]);
    let empty = written("empty.jas", &records[..0], &["T"]);
    same(
        "long",
        &[empty.clone(), long.clone(), empty.clone(), long.clone()],
    );
    let dir = tmp("shards");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(&empty, dir.join("s0.jas")).unwrap();
    std::fs::copy(&long, dir.join("s1.jas")).unwrap();
    same("dir", &[dir]);
}

#[test]
fn totals_overflowing_only_when_both_threads_add_up_are_the_same() {
    let s = schema(&["A", "B"], &["P", "Q"]);
    // 4000 records, enough that the reading thread adds batches too; kind B (and phase Q, and
    // the used bytes) reach 2^64 only with the four large records, far apart.
    let build = |large: u64| -> Vec<_> {
        (0..4000u64)
            .map(|i| {
                let b = if [10, 1500, 2900, 3990].contains(&i) {
                    large
                } else {
                    1
                };
                let c = counts(vec![(0, 2, 1), (1, b, 1)], vec![(0, 2), (1, b)]);
                (Shared::clone(&s), format!("N.C:M{i}"), c)
            })
            .collect()
    };
    let tiers = ["T0", "T1", "T2"];
    let overflow = [written("split-overflow.jas", &build(1 << 62), &tiers)];
    assert!(collect_one_thread(&overflow).is_err());
    same("split-overflow", &overflow);
    let fits = build((1 << 62) - 100_000);
    let fits = [written("split-fits.jas", &fits, &tiers)];
    assert!(collect_one_thread(&fits).is_ok());
    same("split-fits", &fits);
}

#[test]
fn invalid_kind_and_no_phase_buckets_of_a_few_records_are_the_same() {
    let canonical: &[u8] = &[2, 1, 100, 0b011, 10, 1, 5, 1, 0, 0b01];
    // Kind slot 2, the invalid-kind bucket: 3 bytes in 1 allocation.
    let invalid: &[u8] = &[2, 1, 100, 0b111, 10, 1, 5, 1, 3, 1, 0, 0b01];
    // The no-phase slot: 5 bytes (P derives 10).
    let no_phase: &[u8] = &[2, 1, 100, 0b011, 10, 1, 5, 1, 0, 0b11, 5];
    // A corrupt one: bit 3 is past the invalid-kind bucket.
    let past: &[u8] = &[2, 1, 100, 0b1011, 10, 1, 5, 1, 0, 0b01];
    let mut records: Vec<(u8, &[u8])> = vec![(IN_4K | DERIVED, canonical); 3000];
    for at in [1, 1700, 2998] {
        records[at].1 = invalid;
    }
    for at in [2, 1701, 2999] {
        records[at].1 = no_phase;
    }
    let path = hand_made("buckets.jas", &records);
    let stats = collect_one_thread(std::slice::from_ref(&path)).unwrap();
    assert!(stats
        .kinds
        .iter()
        .any(|k| k.name == jitarena::counters::INVALID_KIND_NAME));
    assert!(stats
        .phases
        .iter()
        .any(|p| p.name == jitarena::counters::NO_PHASE_NAME));
    same("buckets", &[path.clone(), path.clone()]);
    // Only near the end (the adding thread's records, most likely).
    let mut late: Vec<(u8, &[u8])> = vec![(IN_4K | DERIVED, canonical); 3000];
    late[2998].1 = invalid;
    late[2999].1 = no_phase;
    // Kinds by phase with no entry (kind A of 0 bytes in phase P of 0 bytes), as merge_copy.rs.
    let by_phase: &[u8] = &[2, 1, 100, 0b001, 0, 1, 0, 0b01, 0b0];
    late[2997] = (IN_4K | DERIVED | 2, by_phase);
    same("late-buckets", &[hand_made("late-buckets.jas", &late)]);
    // A corrupt record in either thread's batch, then a corrupt head in a later file.
    for at in [5, 1500, 2999] {
        let mut corrupt = vec![(IN_4K | DERIVED, canonical); 3000];
        corrupt[at].1 = past;
        let bad = hand_made(&format!("past-{at}.jas"), &corrupt);
        let mut bytes = std::fs::read(&path).unwrap();
        put_frame(&mut bytes, 3, &[0, 0, 50, 0]);
        let head = tmp("bad-head.jas");
        std::fs::write(&head, bytes).unwrap();
        let inputs = [path.clone(), bad, head];
        let want = collect_one_thread(&inputs).unwrap_err();
        assert!(
            want.message.contains("outside its schema"),
            "{}",
            want.message
        );
        same(&format!("past-{at}"), &inputs);
    }
}

/// A schema of the most kinds a log holds (4,096).
#[test]
fn a_schema_of_the_most_kinds_a_log_holds_is_the_same() {
    const KINDS: usize = jitarena::counters::MAX_LOG_NAMES;
    let mut bytes = header_for(Content::Log, 2).to_vec();
    let mut p = Vec::new();
    put_varint(&mut p, 0);
    put_varint(&mut p, KINDS as u64);
    for k in 0..KINDS {
        put_str(&mut p, &format!("K{k}"));
    }
    put_varint(&mut p, 1);
    put_str(&mut p, "P");
    put_frame(&mut bytes, 1, &p);
    for i in 0..20usize {
        // Reserved 2 x 4 KiB, 1 page, largest 100; one kind of 10 + i bytes; P derived.
        let mut p = vec![IN_4K | DERIVED, 0, 0];
        put_str(&mut p, &format!("Ns.C:M{i}"));
        p.extend_from_slice(&[2, 1, 100]);
        let mut bitmap = vec![0u8; (KINDS + 1).div_ceil(8)];
        let k = i * 2477 % KINDS;
        bitmap[k / 8] |= 1 << (k % 8);
        p.extend_from_slice(&bitmap);
        p.extend_from_slice(&[10 + i as u8, 1, 0, 0b01]);
        put_frame(&mut bytes, 3, &p);
    }
    let wide = tmp("wide.jas");
    std::fs::write(&wide, bytes).unwrap();
    let canonical: &[u8] = &[2, 1, 100, 0b011, 10, 1, 5, 1, 0, 0b01];
    let narrow = hand_made("narrow.jas", &[(IN_4K | DERIVED, canonical); 30]);
    let stats = collect_one_thread(std::slice::from_ref(&wide)).unwrap();
    assert_eq!(stats.methods, 20);
    let inputs = [narrow, wide];
    same("wide", &inputs);
}

/// Merge's first pass reads heads only: a record decoded in the second pass alone (its schema
/// is not the output's) that is corrupt comes after a corrupt record still waiting, unchecked,
/// in a batch of copies. The first corrupt record is reported, as decoding every record does.
#[test]
fn a_corrupt_copy_waiting_in_a_batch_before_a_corrupt_decoded_record_is_reported() {
    let canonical: &[u8] = &[2, 1, 100, 0b011, 10, 1, 5, 1, 0, 0b01];
    let past: &[u8] = &[2, 1, 100, 0b1011, 10, 1, 5, 1, 0, 0b01];
    let short: &[u8] = &[2, 1, 100, 0b011, 10, 1, 5];
    for at in [0, 1, 2, 6] {
        let mut copies = vec![(IN_4K | DERIVED, canonical); 7];
        copies[at].1 = past;
        let copies = hand_made(&format!("copies-{at}.jas"), &copies);
        // Kinds B, A: the union is A, B, so these records are decoded, not copied.
        let other = [(IN_4K | DERIVED, short), (IN_4K | DERIVED, canonical)];
        let other = hand_made_of("other-order.jas", ["B", "A"], &other);
        let inputs = [copies, other];
        let want = merge_decoding(&inputs, &tmp("order-ref.jas"), &Progress::hidden());
        let want = want.expect_err("corrupt");
        assert!(
            want.message.contains("outside its schema"),
            "{}",
            want.message
        );
        same(&format!("order-{at}"), &inputs);
    }
}
