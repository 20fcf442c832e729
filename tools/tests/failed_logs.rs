//! Failing compiles over stats logs, counted exactly as over SuperPMI's CSV: a context the diff
//! JIT noted as failed (`jitarena_method.failed`) where the base compiled it is a failing
//! compile (INCOMPLETE unless `--allow-failing-compiles`), never a method the diff misses;
//! failed on both sides is counted on each; failed on one side and absent from the other is
//! counted on the failing side.

mod common;

use std::path::PathBuf;

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
