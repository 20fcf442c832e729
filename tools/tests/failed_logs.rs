//! Failing compiles over stats logs, counted exactly as over SuperPMI's CSV: a context the diff
//! JIT noted as failed (`jitarena_method.failed`) where the base compiled it is a failing
//! compile (INCOMPLETE unless `--allow-failing-compiles`), never a method the diff misses;
//! failed on both sides is counted on each; failed on one side and absent from the other is
//! counted on the failing side.

mod common;

use std::path::{Path, PathBuf};

use common::{cli, counts, s, schema, tmp};
use jitarena::log::LogWriter;

/// A log of contexts 0..20, each of 1,000 bytes, but those in `failed` (noted as failed) and
/// those in `absent` (not in the log at all).
fn log(name: &str, failed: &[i64], absent: &[i64]) -> PathBuf {
    let sch = schema(&["ASTNode"], &["Main"]);
    let path = tmp(name);
    let mut w = LogWriter::new(std::fs::File::create(&path).unwrap()).unwrap();
    for c in 0..20i64 {
        let method = format!("Ns.C:M{c}()");
        if failed.contains(&c) {
            w.note_failed(Some(&method), c, Some("FullOpts")).unwrap();
        } else if !absent.contains(&c) {
            let n = counts(vec![(0, 1000, 10)], vec![(0, 1000)]);
            w.write(&sch, Some(&method), c, Some("FullOpts"), &n)
                .unwrap();
        }
    }
    w.finish().unwrap();
    path
}

#[test]
fn failed_compiles_in_logs_are_counted_as_superpmi_counts_them() {
    // Diff fails 3 and 4 (compiled by the base), both fail 7, the base fails 9 (compiled by the
    // diff), the diff fails 12, which the base's log does not have.
    let base = log("failed_base.jas", &[7, 9], &[12]);
    let diff = log("failed_diff.jas", &[3, 4, 7, 12], &[]);
    let md = tmp("failed_logs.md");
    let json = tmp("failed_logs.json");
    let (code, out, err) = cli(&[
        "memdiff",
        s(&base),
        s(&diff),
        "--md",
        s(&md),
        "--json",
        s(&json),
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains("FAILING compiles: base: 2, diff: 4"), "{md}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let failures = doc["verdict"]["failures"].as_array().unwrap();
    let rules: Vec<(&str, &str)> = failures
        .iter()
        .map(|f| (f["rule"].as_str().unwrap(), f["subject"].as_str().unwrap()))
        .collect();
    assert!(rules.contains(&("failing_compiles", "diff")), "{rules:?}");
    assert!(rules.contains(&("failing_compiles", "base")), "{rules:?}");
    // Not methods missing from a side: the failed ones are not one-sided methods.
    let c = &doc["collections"][0];
    let cov = &c["diff"]["coverage"];
    assert_eq!(
        (cov["only_base"].as_u64(), cov["only_diff"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(cov["failing_diff_only"], 2);
    assert_eq!(cov["failing_base_only"], 1);
    assert_eq!(cov["missed_base_failing_diff"], 1);
    let contexts = |list: &serde_json::Value| -> Vec<u64> {
        list.as_array()
            .unwrap()
            .iter()
            .map(|m| m["context"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(contexts(&c["failing_in_diff"]), [3, 4]);
    assert_eq!(contexts(&c["failing_in_base"]), [9]);
    let accepted = cli(&["memdiff", s(&base), s(&diff), "--allow-failing-compiles"]);
    assert_eq!(accepted.0, 0, "{}{}", accepted.1, accepted.2);
}

/// A log of the contexts in `range`, each of 1,000 bytes, but those in `failed`.
fn shard(name: &str, range: std::ops::Range<i64>, failed: &[i64]) -> PathBuf {
    let sch = schema(&["ASTNode"], &["Main"]);
    let path = tmp(name);
    let mut w = LogWriter::new(std::fs::File::create(&path).unwrap()).unwrap();
    for c in range {
        let method = format!("Ns.C:M{c}()");
        if failed.contains(&c) {
            w.note_failed(Some(&method), c, Some("FullOpts")).unwrap();
        } else {
            let n = counts(vec![(0, 1000, 10)], vec![(0, 1000)]);
            w.write(&sch, Some(&method), c, Some("FullOpts"), &n)
                .unwrap();
        }
    }
    w.finish().unwrap();
    path
}

/// The verdict's failures of `memdiff base diff...` as (rule, subject), and its exit code.
fn verdict(base: &Path, diff: &[&PathBuf], json: &str) -> (i32, Vec<(String, String)>) {
    let json = tmp(json);
    let mut args = vec!["memdiff", "--base", s(base)];
    for d in diff {
        args.extend(["--diff", s(d)]);
    }
    args.extend(["--json", s(&json)]);
    let (code, out, err) = cli(&args);
    assert!(code == 0 || code == 1, "{out}{err}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let failures = doc["verdict"]["failures"].as_array().unwrap();
    let rules = failures
        .iter()
        .map(|f| {
            let field = |k: &str| f[k].as_str().unwrap().to_string();
            (field("rule"), field("subject"))
        })
        .collect();
    (code, rules)
}

/// `merge` keeps failed-compile notes (as it keeps cut notes and build ids): a diff JIT's
/// failed compile is a failing compile over its merged shards exactly as over the shards, never
/// a method the merged log lacks.
#[test]
fn a_merge_keeps_the_failed_compiles_of_its_shards() {
    let base = shard("merge_failed_base.jas", 0..20, &[]);
    let first = shard("merge_failed_diff_a.jas", 0..10, &[4]);
    let second = shard("merge_failed_diff_b.jas", 10..20, &[]);
    let merged = tmp("merge_failed_diff.jas");
    let _ = std::fs::remove_file(&merged);
    let (code, out, err) = cli(&["merge", "-o", s(&merged), s(&first), s(&second)]);
    assert_eq!(code, 0, "{out}{err}");
    let over_shards = verdict(&base, &[&first, &second], "merge_failed_shards.json");
    let over_merged = verdict(&base, &[&merged], "merge_failed_merged.json");
    let failing = ("failing_compiles".to_string(), "diff".to_string());
    assert!(over_shards.1.contains(&failing), "{over_shards:?}");
    assert_eq!(
        over_merged, over_shards,
        "the merged log's verdict is the shards'"
    );
    let (code, out, err) = cli(&["dump", s(&merged), "--format", "jsonl"]);
    assert_eq!(code, 0, "{out}{err}");
    let failed = out
        .lines()
        .filter(|l| l.contains("\"failed\":true"))
        .count();
    assert_eq!(
        (out.lines().count() - failed, failed),
        (19, 1),
        "every record and the failed compile kept: {out}"
    );
}

/// `stats` shows the failed compiles a log notes (which hold no record, so count in no other
/// figure), in its text and its JSON.
#[test]
fn stats_show_the_failed_compiles() {
    let path = shard("stats_failed.jas", 0..20, &[3, 7, 11]);
    let (code, out, err) = cli(&["stats", s(&path)]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("failed compiles: 3"), "{out}");
    assert!(out.contains("jitarena stats: 17 methods"), "{out}");
    let (code, out, err) = cli(&["stats", s(&path), "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (doc["failed_compiles"].as_u64(), doc["methods"].as_u64()),
        (Some(3), Some(17))
    );
}

/// `dump --format jsonl` ends each log's records with its failed compiles, marked as such.
#[test]
fn dump_shows_the_failed_compiles() {
    let path = shard("dump_failed.jas", 0..20, &[3, 7]);
    let (code, out, err) = cli(&["dump", s(&path), "--format", "jsonl"]);
    assert_eq!(code, 0, "{out}{err}");
    let rows: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 20, "{out}");
    let failed: Vec<i64> = rows
        .iter()
        .filter(|r| r["failed"] == true)
        .map(|r| r["context"].as_i64().unwrap())
        .collect();
    assert_eq!(failed, [3, 7]);
}
