//! No silent wrong numbers: sums that overflow, slot deltas that wrap and slots outside the
//! schema are errors naming the file (exit 2), in logs and in CSV; never a wrapped total, and
//! never a merged file that cannot be read back.

use jitarena::format::Content;
use jitarena::log;
use jitarena_tools::diff::{diff_csv, CsvColumns, DiffOptions};

use super::{jitarena, names, stderr, tmp, Builder};

const HALF: u64 = 1 << 63;

/// Asserts that `stats` and `merge` refuse the log with exit 2 and a message naming it and
/// saying `says`, and that the reader refuses it too (or, for sums across records only
/// `stats` makes, reads it).
fn refused(name: &str, b: &Builder, says: &str, reader_refuses: bool) {
    let path = tmp(name);
    b.write(&path);
    let p = path.to_str().unwrap();
    let read = log::read_all(&path);
    if reader_refuses {
        let e = read.expect_err(name);
        assert!(e.message.contains(name) && e.message.contains(says), "{e}");
        let merged = tmp(&format!("merged-{name}"));
        let out = jitarena(&["merge", "-o", merged.to_str().unwrap(), p], b"");
        assert_eq!(out.status.code(), Some(2), "merge {name}: {}", stderr(&out));
        assert!(stderr(&out).contains(name), "{}", stderr(&out));
    } else {
        read.unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let out = jitarena(&["stats", "--json", p], b"");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "stats {name}: {err}");
    assert!(err.contains(name) && err.contains(says), "{err}");
    assert!(out.stdout.is_empty());
}

fn schema(kinds: usize) -> Builder {
    let mut b = Builder::new(Content::Log);
    b.schema(0, &names("K", kinds), &names("P", 2));
    b
}

#[test]
fn two_kinds_of_2_pow_63_bytes_are_an_error_not_a_method_of_0_bytes() {
    let mut b = schema(3);
    b.method(0, 1, &[(0, HALF, 1), (0, HALF, 1)], &[]);
    refused("two-halves.jas", &b, "add up to more than", true);
    let mut b = schema(3);
    b.method(0, 1, &[(0, 8, u64::MAX), (0, 8, 1)], &[]);
    refused("counts.jas", &b, "add up to more than", true);
    let mut b = schema(3);
    b.method(0, 1, &[(0, 8, 1)], &[(0, HALF), (0, HALF)]);
    refused("phases.jas", &b, "add up to more than", true);
}

#[test]
fn a_slot_delta_that_wraps_is_an_error_not_slot_0() {
    // Slot 1, then a delta of u64::MAX: 2 + u64::MAX wraps to slot 1 again.
    let mut b = schema(3);
    b.method(0, 1, &[(1, 8, 1), (u64::MAX, 8, 1)], &[]);
    refused("wrap.jas", &b, "outside its schema", true);
    let mut b = schema(3);
    b.method(0, 1, &[(0, 8, 1)], &[(1, 8), (u64::MAX - 1, 8)]);
    refused("wrap-phase.jas", &b, "outside its schema", true);
    // Past the invalid-kind bucket (slot 3 of a 3-kind schema is that bucket; 4 is outside).
    let mut b = schema(3);
    b.method(0, 1, &[(4, 8, 1)], &[]);
    refused("outside.jas", &b, "outside its schema", true);
}

#[test]
fn the_invalid_kind_bucket_is_a_slot_and_merge_reads_back() {
    let mut b = schema(3);
    b.method(0, 1, &[(1, 8, 1), (1, 16, 2)], &[(2, 24)]);
    let path = tmp("bucket.jas");
    b.write(&path);
    let merged = tmp("bucket-merged.jas");
    let out = jitarena(
        &[
            "merge",
            "-o",
            merged.to_str().unwrap(),
            path.to_str().unwrap(),
        ],
        b"",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let (back, _) = log::read_all(&merged).unwrap();
    assert_eq!(back[0].counts.kinds, vec![(1, 8, 1), (3, 16, 2)]);
    assert_eq!(back[0].counts.phases, vec![(2, 24)]);
}

#[test]
fn totals_over_many_methods_that_overflow_are_an_error() {
    // Each method alone is fine; their sum is not.
    let mut b = schema(2);
    b.method(0, 1, &[(0, HALF, 1)], &[]);
    b.method(0, 2, &[(1, HALF, 1)], &[]);
    refused("sum.jas", &b, "add up to more than", false);
    let mut b = schema(2);
    b.method(0, 1, &[(0, HALF, 1)], &[]);
    b.method(0, 2, &[(0, HALF, 1)], &[]);
    refused("sum-kind.jas", &b, "add up to more than", false);
}

#[test]
fn the_first_sum_of_a_kind_to_overflow_is_the_one_named() {
    // stats adds a record's kinds without a check each and checks at the end of the record;
    // on an overflow it must name what the first sum to overflow is, in slot order. Here the
    // second record passes 2^64 - 1 in kind 1's allocations and in kind 2's bytes (the
    // builder takes slot deltas).
    let mut b = schema(3);
    b.method(0, 1, &[(1, 8, HALF), (0, HALF, 1)], &[]);
    b.method(0, 2, &[(1, 8, HALF), (0, HALF, 1)], &[]);
    refused("allocations-first.jas", &b, "allocations of a kind", false);
    let mut b = schema(3);
    b.method(0, 1, &[(1, HALF, 1), (0, 8, HALF)], &[]);
    b.method(0, 2, &[(1, HALF, 1), (0, 8, HALF)], &[]);
    refused("bytes-first.jas", &b, "bytes of a kind", false);
}

fn csv(name: &str, rows: &str) -> Result<jitarena_tools::diff::MemDiff, jitarena::Error> {
    let path = tmp(name);
    std::fs::write(&path, format!("method,base,diff\n{rows}")).unwrap();
    diff_csv(
        &path,
        &CsvColumns {
            base: "base".into(),
            diff: "diff".into(),
        },
        &DiffOptions::default(),
    )
}

#[test]
fn csv_sums_that_overflow_and_numbers_past_2_pow_64_are_errors() {
    let max = u64::MAX;
    for (name, rows, line) in [
        ("max-sum.csv", format!("a,{max},1\nb,1,1\n"), ":3:"),
        ("max-diff.csv", format!("a,100,{max}\nb,100,100\n"), ":3:"),
        ("only-base.csv", format!("a,{max},\nb,1,\n"), ":3:"),
        (
            "too-big.csv",
            "a,18446744073709551616,1\n".to_string(),
            ":2:",
        ),
        ("too-big-float.csv", "a,1e30,1\n".to_string(), ":2:"),
    ] {
        let err = csv(name, &rows).map(|_| ()).expect_err(name);
        assert!(
            err.message.contains(name) && err.message.contains(line),
            "{name}: {err}"
        );
    }
    // One row of u64::MAX is a number, exactly.
    let d = csv("max.csv", &format!("a,{max},{max}\n")).unwrap();
    assert_eq!((d.groups[0].base.bytes, d.groups[0].diff.bytes), (max, max));
    let d = csv("float.csv", "a,1.5e3,2000.4\n").unwrap();
    assert_eq!(
        (d.groups[0].base.bytes, d.groups[0].diff.bytes),
        (1500, 2000)
    );
}
