//! Kinds by phase end to end: the real Cranelift traces replayed with `--kinds-by-phase`, their
//! records, `stats` and `memdiff` in every output format. The pairs must add up to the kind
//! totals and to the phase totals at every level, and logs without them must report as before.

mod common;

mod real;

use std::collections::BTreeMap;
use std::path::PathBuf;

use common::{cli, s, tmp};
use jitarena::log::read_all;
use serde_json::Value;

/// The stats log of a real trace replayed with (or without) kinds by phase.
fn replayed(trace: &str, by_phase: bool) -> PathBuf {
    // A file of its own for each call: tests run at once, and one that replays a trace again
    // must not replace the log another is reading (memdiff refuses a log that changed).
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let log = tmp(&format!("{trace}.{by_phase}.{call}.jas"));
    let trace = real::trace(trace);
    let mut args = vec!["replay", s(&trace), "-o", s(&log)];
    if by_phase {
        args.push("--kinds-by-phase");
    }
    let (code, _, err) = cli(&args);
    assert_eq!(code, 0, "{err}");
    log
}

fn sum_by<K: Ord>(pairs: impl Iterator<Item = (K, u64)>) -> BTreeMap<K, u64> {
    let mut sums = BTreeMap::new();
    for (k, v) in pairs {
        *sums.entry(k).or_insert(0u64) += v;
    }
    sums
}

#[test]
fn every_record_holds_pairs_that_add_up_to_its_kinds_and_phases() {
    let log = replayed("png-cl0.104-speed.txt", true);
    let (records, warnings) = read_all(&log).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(records.len(), 194);
    for r in &records {
        let c = &r.counts;
        assert!(!c.phase_kind_bytes.is_empty(), "{:?}", r.info.name);
        let by_kind = sum_by(c.phase_kind_bytes.iter().map(|e| (e.1, e.2)));
        let by_phase = sum_by(c.phase_kind_bytes.iter().map(|e| (e.0, e.2)));
        let kinds: BTreeMap<u32, u64> = c.kinds.iter().map(|k| (k.0, k.1)).collect();
        let phases: BTreeMap<u32, u64> = c
            .phases
            .iter()
            .filter(|p| p.1 > 0)
            .map(|p| (p.0, p.1))
            .collect();
        assert_eq!(by_kind, kinds, "{:?}", r.info.name);
        assert_eq!(by_phase, phases, "{:?}", r.info.name);
    }
    // Without the switch, nothing is recorded.
    let plain = replayed("png-cl0.104-speed.txt", false);
    let (records, _) = read_all(&plain).unwrap();
    assert!(records.iter().all(|r| r.counts.phase_kind_bytes.is_empty()));
}

#[test]
fn stats_lists_the_pairs_and_they_add_up() {
    let log = replayed("png-cl0.100-speed.txt", true);
    let (code, out, err) = cli(&["stats", s(&log), "--json"]);
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let pairs = doc["phase_kinds"].as_array().expect("phase_kinds");
    let pair = |p: &Value| {
        (
            p["phase"].as_str().unwrap().to_string(),
            p["kind"].as_str().unwrap().to_string(),
            p["bytes"].as_u64().unwrap(),
        )
    };
    let pairs: Vec<_> = pairs.iter().map(pair).collect();
    let total: u64 = pairs.iter().map(|p| p.2).sum();
    assert_eq!(total, doc["bytes"].as_u64().unwrap());
    let named = |key: &str| -> BTreeMap<String, u64> {
        doc[key]
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n["bytes"].as_u64().unwrap() > 0)
            .map(|n| {
                (
                    n["name"].as_str().unwrap().into(),
                    n["bytes"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(
        sum_by(pairs.iter().map(|p| (p.1.clone(), p.2))),
        named("kinds")
    );
    assert_eq!(
        sum_by(pairs.iter().map(|p| (p.0.clone(), p.2))),
        named("phases")
    );
    // Phases in the logs' phase order, each phase's kinds largest first.
    let order: Vec<String> = doc["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    let position = |name: &str| order.iter().position(|n| n == name).unwrap();
    for w in pairs.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        assert!(
            position(&a.0) < position(&b.0) || (a.0 == b.0 && a.2 >= b.2),
            "{a:?} before {b:?}"
        );
    }
    let (_, text, _) = cli(&["stats", s(&log)]);
    assert!(text.contains("Alloc'd bytes by phase and kind"), "{text}");
    let (largest_phase, largest_kind, bytes) = &pairs[0];
    let line = text
        .lines()
        .find(|l| l.contains(largest_kind.as_str()) && l.contains(largest_phase.as_str()))
        .unwrap_or_else(|| panic!("no line for {largest_phase}/{largest_kind}:\n{text}"));
    assert!(line.contains(&thousands(*bytes)), "{line}");
    // A log without them: no section, no key.
    let plain = replayed("png-cl0.100-speed.txt", false);
    let (_, out, _) = cli(&["stats", s(&plain), "--json"]);
    assert!(!out.contains("phase_kinds"));
    let (_, text, _) = cli(&["stats", s(&plain)]);
    assert!(!text.contains("by phase and kind"));
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[test]
fn memdiff_names_the_pairs_that_moved_most_in_every_format() {
    let base = replayed("png-cl0.100-speed.txt", true);
    let diff = replayed("png-cl0.104-speed.txt", true);
    let (md, json, html) = (tmp("d.md"), tmp("d.json"), tmp("d.html"));
    let (code, text, err) = cli(&[
        "memdiff",
        s(&base),
        s(&diff),
        "--fail-above",
        "1000",
        "--kind-fail-above",
        "off",
        "--md",
        s(&md),
        "--json",
        s(&json),
        "--html",
        s(&html),
    ]);
    assert!(code == 0 || code == 1, "{err}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let one = &doc["collections"][0]["diff"];
    let rows: Vec<(String, String, u64, u64)> = one["phase_kinds"]
        .as_array()
        .expect("phase_kinds in the collection's diff")
        .iter()
        .map(|p| {
            (
                p["phase"].as_str().unwrap().into(),
                p["kind"].as_str().unwrap().into(),
                p["base"].as_u64().unwrap(),
                p["diff"].as_u64().unwrap(),
            )
        })
        .collect();
    // Per kind, the pairs add up to the kind's figures on both sides.
    for k in one["kinds"].as_array().unwrap() {
        let name = k["name"].as_str().unwrap();
        let (b, d) = rows
            .iter()
            .filter(|r| r.1 == name)
            .fold((0, 0), |(b, d), r| (b + r.2, d + r.3));
        assert_eq!(
            (b, d),
            (k["base"].as_u64().unwrap(), k["diff"].as_u64().unwrap()),
            "{name}"
        );
    }
    // Sorted by absolute delta; the first is the pair that moved most.
    let delta = |r: &(String, String, u64, u64)| (r.3 as i128 - r.2 as i128).abs();
    assert!(rows.windows(2).all(|w| delta(&w[0]) >= delta(&w[1])));
    let (phase, kind, _, _) = &rows[0];
    assert!(delta(&rows[0]) > 0);
    // The same pair leads the console, markdown and HTML sections, and the summary's JSON.
    assert_eq!(doc["phase_kinds"][0]["kind"], one["phase_kinds"][0]["kind"]);
    let section = text
        .split("Kinds by phase")
        .nth(1)
        .unwrap_or_else(|| panic!("no section in the console report:\n{text}"));
    let first = section.lines().nth(2).unwrap();
    assert!(
        first.contains(phase.as_str()) && first.contains(kind.as_str()),
        "{first}"
    );
    let md = std::fs::read_to_string(&md).unwrap();
    let section = md
        .split("Kinds by phase, across collections")
        .nth(1)
        .expect("markdown");
    let first = section
        .lines()
        .find(|l| l.starts_with("| ") && !l.starts_with("| Phase") && !l.starts_with("| ---"))
        .unwrap();
    assert!(
        first.contains(&jitarena_tools::report::md_text(phase)),
        "{first}"
    );
    assert!(
        first.contains(&jitarena_tools::report::md_text(kind)),
        "{first}"
    );
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(html.contains("Kinds by phase that moved most"));
    // Logs without them: no section anywhere, and the JSON has no key.
    let (pb, pd) = (
        replayed("png-cl0.100-speed.txt", false),
        replayed("png-cl0.104-speed.txt", false),
    );
    let plain_json = tmp("plain.json");
    let _ = std::fs::remove_file(&plain_json); // an earlier run's must not stand in for this one's
    let (code, text, err) = cli(&[
        "memdiff",
        s(&pb),
        s(&pd),
        "--json",
        s(&plain_json),
        "--fail-above",
        "1000",
        "--kind-fail-above",
        "off",
    ]);
    assert_eq!(code, 0, "{text}{err}");
    assert!(!text.contains("Kinds by phase"));
    assert!(!std::fs::read_to_string(&plain_json)
        .unwrap()
        .contains("phase_kinds"));
}
