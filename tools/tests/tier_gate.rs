//! The gate per tier: MinOpts and FullOpts are each judged against `--fail-above`, so that
//! one tier's growth cannot hide behind the other's fall; a tier below the tier floor
//! (`--tier-min-bytes`, `--tier-min-share`) is not judged on its own. Over logs the tiers come
//! from the records' tier names, over CSVs from the `MinOpts` column.

mod common;

use common::{cli, counts, s, schema, tmp, written};
use std::path::{Path, PathBuf};

fn json_of(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A SuperPMI details file of `rows` (context, MinOpts, base bytes, diff bytes).
fn details(dir: &Path, rows: &[(u64, bool, u64, u64)]) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("tiers.mch_details.csv");
    let mut text = String::from(
        "Context,Base result,Diff result,MinOpts,Base BytesAllocated,Diff BytesAllocated\n",
    );
    for (context, min_opts, base, diff) in rows {
        let flag = if *min_opts { "True" } else { "False" };
        text.push_str(&format!("{context},Success,Success,{flag},{base},{diff}\n"));
    }
    std::fs::write(&path, text).unwrap();
    path
}

/// `count` contexts per tier: MinOpts methods of `min` bytes in the base growing by
/// `min_grow` percent, FullOpts methods of `full` bytes growing by `full_grow` percent.
fn two_tiers(
    count: u64,
    min: u64,
    min_grow: f64,
    full: u64,
    full_grow: f64,
) -> Vec<(u64, bool, u64, u64)> {
    let grown = |b: u64, g: f64| (b as f64 * (1.0 + g / 100.0)).round() as u64;
    (0..2 * count)
        .map(|i| {
            let min_opts = i % 2 == 0;
            let (b, g) = if min_opts {
                (min, min_grow)
            } else {
                (full, full_grow)
            };
            (i, min_opts, b, grown(b, g))
        })
        .collect()
}

/// memdiff over `args` with a JSON report: the exit code, the JSON, what was printed.
fn memdiff_json(dir: &Path, args: &[&str]) -> (i32, serde_json::Value, String) {
    let json = dir.join("report.json");
    let mut all = vec!["memdiff", "--json", s(&json)];
    all.extend_from_slice(args);
    let (code, out, err) = cli(&all);
    (code, json_of(&json), out + &err)
}

#[test]
fn a_minopts_regression_masked_by_a_fullopts_improvement_fails_over_csv() {
    let dir = tmp("tiers-csv");
    // MinOpts: 100 x 100,000 -> +100%; FullOpts: 100 x 400,000 -> -35%. Overall: -8%.
    let file = details(&dir, &two_tiers(100, 100_000, 100.0, 400_000, -35.0));
    let (code, doc, out) = memdiff_json(&dir, &["--csv", s(&file)]);
    assert_eq!(code, 1, "{out}");
    let groups = doc["totals"].as_array().unwrap();
    assert!(groups[0]["pct"].as_f64().unwrap() < 0.0, "{groups:?}");
    let failures = doc["verdict"]["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(failures[0]["rule"], "fail_above");
    assert_eq!(failures[0]["subject"], "MinOpts");
    assert_eq!(failures[0]["class"], "FAIL");
    let headline = doc["verdict"]["headline"].as_str().unwrap();
    assert!(
        headline.starts_with(
            "MinOpts bytes grew +100.00% (10,000,000 → 20,000,000), above --fail-above 25%"
        ),
        "{headline}"
    );
    assert!(
        headline.contains("tiers of at least 1,000,000 bytes"),
        "{headline}"
    );
    assert!(out.contains("MinOpts bytes grew +100.00%"), "{out}");
    // The tiers judged are in the JSON, with the floor.
    let diff = &doc["collections"][0]["diff"];
    assert_eq!(diff["thresholds"]["tier_floor"], 1_000_000);
    let tiers = diff["verdict"]["tiers"].as_array().unwrap();
    assert_eq!(tiers.len(), 2, "{tiers:?}");
    assert!(tiers.iter().all(|t| t["judged"] == true), "{tiers:?}");
}

#[test]
fn a_minopts_regression_masked_by_a_fullopts_improvement_fails_over_logs() {
    let sch = schema(&["A"], &["P"]);
    // Tier names as the .NET JIT writes them: even contexts MinOpts-like, odd FullOpts-like.
    let tiers = ["Tier0", "Tier1", "Instrumented Tier0", "Tier1-OSR"];
    let records = |min: u64, full: u64| -> Vec<_> {
        (0..40u64)
            .map(|i| {
                let bytes = if i % 2 == 0 { min } else { full };
                (
                    &sch,
                    format!("M{i}"),
                    counts(vec![(0, bytes, 10)], vec![(0, bytes)]),
                )
            })
            .collect()
    };
    let base = written("tiers-base.jas", &records(100_000, 400_000), &tiers);
    let diff = written("tiers-diff.jas", &records(200_000, 260_000), &tiers);
    let dir = tmp("tiers-logs");
    std::fs::create_dir_all(&dir).unwrap();
    let (code, doc, out) = memdiff_json(&dir, &[s(&base), s(&diff), "--kind-fail-above", "off"]);
    assert_eq!(code, 1, "{out}");
    let failures = doc["verdict"]["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(failures[0]["subject"], "MinOpts");
    assert!(
        doc["verdict"]["headline"]
            .as_str()
            .unwrap()
            .starts_with("MinOpts bytes grew +100.00% (2,000,000 → 4,000,000)"),
        "{}",
        doc["verdict"]["headline"]
    );
    // Each tier name went to its group: 20 methods each.
    let groups = doc["totals"].as_array().unwrap();
    assert_eq!(groups[1]["name"], "MinOpts");
    assert_eq!(groups[1]["methods"], 20);
    assert_eq!(groups[2]["methods"], 20);
}

#[test]
fn a_tier_below_the_floor_does_not_fail_on_its_own() {
    let dir = tmp("tiers-floor");
    // MinOpts: 10 x 5,000 bytes doubling (50,000 bytes); FullOpts: 10 x 4,000,000 flat.
    let file = details(&dir, &two_tiers(10, 5_000, 100.0, 4_000_000, 0.0));
    let (code, doc, out) = memdiff_json(&dir, &["--csv", s(&file)]);
    assert_eq!(code, 0, "{out}");
    let rule = doc["verdict"]["rule"].as_str().unwrap();
    assert!(
        rule.contains("FullOpts +0.00% (limit +25% per tier of at least 1,000,000 bytes; MinOpts below it, not judged on its own)"),
        "{rule}"
    );
    let tiers = doc["collections"][0]["diff"]["verdict"]["tiers"]
        .as_array()
        .unwrap();
    let min = tiers.iter().find(|t| t["tier"] == "MinOpts").unwrap();
    assert_eq!(min["judged"], false);
    assert_eq!(
        min["skipped"],
        "100,000 bytes, below the tier floor of 1,000,000"
    );
    // Without the floor, the tier fails.
    let (code, doc, out) = memdiff_json(
        &dir,
        &[
            "--csv",
            s(&file),
            "--tier-min-bytes",
            "0",
            "--tier-min-share",
            "0",
        ],
    );
    assert_eq!(code, 1, "{out}");
    assert_eq!(doc["verdict"]["failures"][0]["subject"], "MinOpts");
    // The share of the collection is a floor too: MinOpts holds 100,000 of 40 MB (0.25%).
    let (code, _, out) = memdiff_json(&dir, &["--csv", s(&file), "--tier-min-bytes", "0"]);
    assert_eq!(code, 0, "{out}");
    let (code, _, out) = memdiff_json(
        &dir,
        &[
            "--csv",
            s(&file),
            "--tier-min-bytes",
            "0",
            "--tier-min-share",
            "0.2",
        ],
    );
    assert_eq!(code, 1, "{out}");
}

#[test]
fn a_collection_of_one_tier_is_judged_through_its_total_once() {
    let dir = tmp("tiers-one");
    let rows: Vec<_> = (0..20u64)
        .map(|i| (i, false, 1_000_000, 1_300_000))
        .collect();
    let file = details(&dir, &rows);
    let (code, doc, out) = memdiff_json(&dir, &["--csv", s(&file)]);
    assert_eq!(code, 1, "{out}");
    let failures = doc["verdict"]["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(failures[0]["subject"], "total");
    let tiers = doc["collections"][0]["diff"]["verdict"]["tiers"]
        .as_array()
        .unwrap();
    assert_eq!(tiers[0]["tier"], "FullOpts");
    assert_eq!(
        tiers[0]["skipped"],
        "it holds every matched method: its total is the collection's"
    );
}

#[test]
fn tier_options_refuse_bad_values() {
    for (option, value) in [
        ("--tier-min-share", "101"),
        ("--tier-min-share", "-1"),
        ("--tier-min-bytes", "x"),
    ] {
        let (code, _, err) = cli(&["memdiff", "a", "b", option, value]);
        assert_eq!(code, 2, "{option} {value}: {err}");
    }
}
