//! The command on both format versions: a version-1 log (checked in, made by the version-1
//! writer) dumps as it always did, `merge` converts it to version 2 with the same dump, and
//! kinds by phase go through `merge` and `dump --format jsonl`.

mod common;

use std::path::{Path, PathBuf};

use common::{ok, tmp};
use jitarena::log::{self, LogWriter};
use jitarena::Shared;
use jitarena::{MethodCounts, Schema};

/// `tests/data/` of the library crate (the repository root).
fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/data")
        .join(name)
}

#[test]
fn a_version_1_log_dumps_as_before_and_merge_converts_it() {
    let v1 = data("v1.jas");
    let v1 = v1.to_str().unwrap();
    for (format, expected) in [("jsonl", "v1.jsonl"), ("csv", "v1.csv")] {
        let want = std::fs::read_to_string(data(expected)).unwrap();
        assert_eq!(ok(&["dump", "--format", format, v1]), want, "{format}");
    }
    let v2 = tmp("converted.jas");
    ok(&["merge", "-o", v2.to_str().unwrap(), v1]);
    let bytes = std::fs::read(&v2).unwrap();
    assert_eq!(bytes[9], 2, "merge writes version 2");
    let old = std::fs::metadata(v1).unwrap().len() as usize;
    assert!(bytes.len() * 10 < old * 8, "{} vs {old} bytes", bytes.len());
    for (format, expected) in [("jsonl", "v1.jsonl"), ("csv", "v1.csv")] {
        let want = std::fs::read_to_string(data(expected)).unwrap();
        let got = ok(&["dump", "--format", format, v2.to_str().unwrap()]);
        assert_eq!(got, want, "{format} after conversion");
    }
    // The stats of both versions agree.
    assert_eq!(
        ok(&["stats", "--json", v1]),
        ok(&["stats", "--json", v2.to_str().unwrap()])
    );
}

#[test]
fn kinds_by_phase_go_through_merge_and_dump() {
    let names = |l: &[&str]| l.iter().map(|s| s.to_string()).collect();
    let a = Shared::new(Schema::new(names(&["A", "B"]), names(&["P", "Q"])).unwrap());
    // The second shard lists the kinds and phases in another order: merge remaps them.
    let b = Shared::new(Schema::new(names(&["B", "A"]), names(&["Q", "P"])).unwrap());
    let counts = MethodCounts {
        kinds: vec![(0, 10, 1), (1, 5, 2)],
        phases: vec![(0, 12), (2, 3)],
        phase_kind_bytes: vec![(0, 0, 7), (0, 1, 5), (2, 0, 3)],
        used_bytes: 16,
        ..MethodCounts::default()
    };
    let shards = [tmp("shard-a.jas"), tmp("shard-b.jas")];
    for (path, schema) in shards.iter().zip([&a, &b]) {
        let mut w = LogWriter::new(std::fs::File::create(path).unwrap()).unwrap();
        w.write(schema, Some("m"), 1, Some("Tier0"), &counts)
            .unwrap();
        w.finish().unwrap();
    }
    let merged = tmp("merged.jas");
    let mut args = vec!["merge", "-o", merged.to_str().unwrap()];
    args.extend(shards.iter().map(|p| p.to_str().unwrap()));
    ok(&args);
    let (records, _) = log::read_all(&merged).unwrap();
    // Union: kinds A, B; phases P, Q. Shard b's kind 0 is B and its phase 0 is Q.
    assert_eq!(
        records[0].counts.phase_kind_bytes,
        [(0, 0, 7), (0, 1, 5), (2, 0, 3)]
    );
    assert_eq!(
        records[1].counts.phase_kind_bytes,
        [(1, 0, 5), (1, 1, 7), (2, 1, 3)]
    );
    let dump = ok(&["dump", "--format", "jsonl", merged.to_str().unwrap()]);
    let lines: Vec<serde_json::Value> = dump
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines[0]["kinds_by_phase"],
        serde_json::json!({"P": {"A": 7, "B": 5}, "(no phase)": {"A": 3}})
    );
    assert_eq!(
        lines[1]["kinds_by_phase"],
        serde_json::json!({"Q": {"A": 5, "B": 7}, "(no phase)": {"B": 3}})
    );
    // A log without them dumps no such member.
    let v1 = data("v1.jas");
    let plain = ok(&["dump", "--format", "jsonl", v1.to_str().unwrap()]);
    assert!(!plain.contains("kinds_by_phase"));
}
