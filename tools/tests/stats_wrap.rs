//! `stats` adds kinds' and phases' totals without a check each, trusting that none can pass
//! 2^64 - 1 unnoticed: these tests push the buckets (invalid kind, no phase), a kind that
//! lies at other slots in two files, and kinds by phase to 2^64 - 1 and past it. Past it,
//! the error names the file and the first sum to overflow, on one thread and on two; at
//! 2^64 - 1 exactly, the totals are exact and there is no error.

mod common;

use std::path::PathBuf;

use common::schema;
use jitarena::Shared;
use jitarena::{MethodCounts, Schema};
use jitarena_tools::stats::{collect_in_batches, collect_one_thread, Stats};

const HALF: u64 = 1 << 63;

/// Counts of these kinds, phases and kinds by phase, the other fields small.
fn counts(
    kinds: Vec<(u32, u64, u64)>,
    phases: Vec<(u32, u64)>,
    by_phase: Vec<(u32, u32, u64)>,
) -> MethodCounts {
    MethodCounts {
        used_bytes: 64,
        reserved_bytes: 4096,
        page_count: 1,
        largest_alloc: 8,
        kinds,
        phases,
        phase_kind_bytes: by_phase,
        ..MethodCounts::default()
    }
}

/// A log of these records, written by the library's writer.
fn written(name: &str, schema: &Shared<Schema>, records: Vec<MethodCounts>) -> PathBuf {
    let records: Vec<_> = records
        .into_iter()
        .enumerate()
        .map(|(i, c)| (schema, format!("N.C:M{i}"), c))
        .collect();
    common::written(name, &records, &["Tier0", "Tier1"])
}

/// The error of `inputs` on one thread, which names `file` and `sum`, and is the same on two
/// threads whatever the batches.
fn fails_on(inputs: &[PathBuf], file: &str, sum: &str) {
    let want = collect_one_thread(inputs).unwrap_err();
    assert!(want.message.contains(file), "{}", want.message);
    assert!(
        want.message
            .contains(&format!("the {sum} add up to more than")),
        "{sum}: {}",
        want.message
    );
    for batch in [1, 2, 3, 1024] {
        let got = collect_in_batches(inputs, batch).unwrap_err();
        assert_eq!(got.message, want.message, "batches of {batch}");
    }
}

/// The statistics of `inputs` on one thread, the same on two whatever the batches.
fn same_on_two_threads(inputs: &[PathBuf]) -> Stats {
    let one = collect_one_thread(inputs).unwrap();
    for batch in [1, 2, 3, 1024] {
        assert_eq!(
            collect_in_batches(inputs, batch).unwrap(),
            one,
            "batches of {batch}"
        );
    }
    one
}

fn totals(list: &[jitarena_tools::stats::Named]) -> Vec<(&str, u64, u64)> {
    list.iter().map(|n| (&*n.name, n.bytes, n.count)).collect()
}

#[test]
fn the_buckets_overflow_with_one_threads_error() {
    let s = schema(&["A", "B"], &["P"]);
    // The invalid-kind bucket (slot 2) passes 2^64 - 1 in bytes, then in allocations, at the
    // second record; the no-phase bucket (slot 1) likewise. Kind A's total stays small.
    let kind = |b, n| counts(vec![(0, 1, 1), (2, b, n)], vec![], vec![]);
    let bytes = written("invalid-bytes.jas", &s, vec![kind(HALF, 1), kind(HALF, 1)]);
    fails_on(&[bytes], "invalid-bytes.jas", "bytes of a kind");
    let allocations = written("invalid-allocs.jas", &s, vec![kind(1, HALF), kind(1, HALF)]);
    fails_on(
        &[allocations],
        "invalid-allocs.jas",
        "allocations of a kind",
    );
    let phase = || counts(vec![(0, 1, 1)], vec![(1, HALF)], vec![]);
    let no_phase = written("no-phase.jas", &s, vec![phase(), phase(), phase()]);
    fails_on(&[no_phase], "no-phase.jas", "bytes of a phase");
}

#[test]
fn a_kind_at_other_slots_in_two_files_overflows_in_the_second() {
    // Kind A is slot 0 of the first file's schema and slot 1 of the second's; phase P too.
    let first = written(
        "slots-first.jas",
        &schema(&["A", "B"], &["P", "Q"]),
        vec![counts(vec![(0, HALF, 1)], vec![(1, HALF)], vec![])],
    );
    let second = written(
        "slots-second.jas",
        &schema(&["B", "A"], &["Q", "P"]),
        vec![counts(vec![(1, HALF, 1)], vec![(0, HALF)], vec![])],
    );
    fails_on(
        &[first.clone(), second],
        "slots-second.jas",
        "bytes of a kind",
    );
    // Where the second file's half is B's and Q's, no kind or phase overflows: the total
    // bytes requested does.
    let other = written(
        "slots-other.jas",
        &schema(&["B", "A"], &["Q", "P"]),
        vec![counts(vec![(0, HALF, 1)], vec![(1, HALF)], vec![])],
    );
    fails_on(&[first, other], "slots-other.jas", "bytes requested");
}

#[test]
fn kinds_by_phase_that_overflow_give_one_threads_error() {
    let s = schema(&["A", "B"], &["P", "Q"]);
    let record = |phase| {
        counts(
            vec![(0, HALF, 1)],
            vec![(phase, HALF)],
            vec![(phase, 0, HALF)],
        )
    };
    // Kind A passes 2^64 - 1 with the second record (its phase another): the kind's error.
    let kind = written("by-phase-kind.jas", &s, vec![record(0), record(1)]);
    fails_on(&[kind], "by-phase-kind.jas", "bytes of a kind");
}

#[test]
fn totals_of_exactly_2_pow_64_minus_1_are_exact() {
    let s = schema(&["A", "B"], &["P"]);
    let max = u64::MAX;
    // Kind A's bytes, the total bytes, phase P and the no-phase bucket each reach 2^64 - 1
    // over four records of two files (one with kinds by phase), and so do the invalid-kind
    // bucket's allocations and the total allocations; none passes it.
    let records = vec![
        counts(vec![(0, HALF, 1)], vec![(0, HALF)], vec![(0, 0, HALF)]),
        counts(vec![(2, 0, HALF - 3)], vec![(1, HALF - 1)], vec![]),
        counts(vec![(0, HALF - 1, 1)], vec![(0, HALF - 1)], vec![]),
    ];
    let half = written("exact-half.jas", &s, records);
    let one = same_on_two_threads(std::slice::from_ref(&half));
    assert_eq!((one.bytes, one.allocations), (max, HALF - 1));
    let rest = written(
        "exact-rest.jas",
        &s,
        vec![counts(vec![(2, 0, HALF)], vec![(1, HALF)], vec![])],
    );
    let stats = same_on_two_threads(&[half, rest]);
    assert_eq!((stats.bytes, stats.allocations), (max, max));
    let invalid = jitarena::counters::INVALID_KIND_NAME;
    assert_eq!(
        totals(&stats.kinds),
        [("A", max, 2), (invalid, 0, max - 2), ("B", 0, 0)]
    );
    let no_phase = jitarena::counters::NO_PHASE_NAME;
    assert_eq!(totals(&stats.phases), [("P", max, 0), (no_phase, max, 0)]);
}
