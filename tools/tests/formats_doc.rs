//! `docs/formats.md` against the memdiff JSON report as the code writes it: memdiff runs over
//! logs that give every member a value (two tiers, one judged and one below the tier floor,
//! growth and shrinkage in each, kinds by phase, failing compiles and duplicates, methods on
//! one side only, a collection under one root only, the total, a tier, a kind and methods
//! grown past their limits), and every key path of its report must have a row in the doc's
//! table of keys, with a type that fits each value written there; every row must name a path
//! the report writes. A key the code adds and the doc omits fails here, and so does a row left
//! for a key the code no longer writes. The schema version the doc states is the one written.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use common::{cli, counts, s, schema, tmp};
use jitarena::log::LogWriter;
use jitarena::{MethodCounts, Shared};
use serde_json::Value;

/// The heading of the doc's table of the report's keys.
const TABLE: &str = "### Every key of the memdiff report";

/// Where a shape that the report writes in several places is documented once, under its
/// letter (`docs/formats.md` names them so): a path that begins with the prefix is looked up
/// with the letter in its place. Applied in order, each rule again after every rewrite.
const SHAPES: &[(&str, &str)] = &[
    ("collections[].diff.", "D."),
    ("verdict.failures[].", "R."),
    ("collections[].coverage_failures[].", "R."),
    ("D.verdict.failures[].", "R."),
    ("collections[].missing_in_diff[].", "X."),
    ("collections[].missing_in_base[].", "X."),
    ("collections[].failing_in_diff[].", "X."),
    ("collections[].failing_in_base[].", "X."),
    ("D.methods.growth[].", "M."),
    ("D.methods.shrinkage[].", "M."),
    ("D.methods.relative_growth[].", "M."),
    ("D.methods.relative_shrinkage[].", "M."),
    ("D.methods.tiers[].regressions[].", "M."),
    ("D.methods.tiers[].improvements[].", "M."),
    ("top_methods.tiers[].regressions[].", "M."),
    ("top_methods.tiers[].improvements[].", "M."),
    ("phase_kinds[].", "P."),
    ("D.phase_kinds[].", "P."),
    ("totals[].", "G."),
    ("D.groups[].", "G."),
    ("G.base.", "S."),
    ("G.diff.", "S."),
    ("D.distribution.base.", "Q."),
    ("D.distribution.diff.", "Q."),
    ("D.kinds[].", "K."),
    ("D.phases[].", "K."),
];

/// A path as the doc writes it: the shapes' letters in place of their prefixes.
fn documented(path: &str) -> String {
    let mut p = path.to_string();
    'again: loop {
        for (prefix, letter) in SHAPES {
            if let Some(rest) = p.strip_prefix(prefix) {
                p = format!("{letter}{rest}");
                continue 'again;
            }
        }
        return p;
    }
}

/// A JSON value's type, in the doc's words.
fn type_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_u64() || n.is_i64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Every key path of `v` under `at` (array items as `[]`), each with the types of its values.
fn paths(v: &Value, at: &str, out: &mut BTreeMap<String, BTreeSet<&'static str>>) {
    match v {
        Value::Object(map) => {
            for (k, item) in map {
                let path = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                out.entry(documented(&path))
                    .or_default()
                    .insert(type_of(item));
                paths(item, &path, out);
            }
        }
        Value::Array(items) => {
            for item in items {
                paths(item, &format!("{at}[]"), out);
            }
        }
        _ => {}
    }
}

/// The doc's table of keys: each row's path (the first cell, in backticks) and its types (the
/// second cell: `integer`, `number`, `string`, `boolean`, `array ...`, `object ...`, joined
/// by ` or `, `null` among them when the value may be null).
fn doc_rows() -> BTreeMap<String, Vec<String>> {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/formats.md"))
            .expect("docs/formats.md");
    let at = doc
        .find(TABLE)
        .unwrap_or_else(|| panic!("no {TABLE:?} in docs/formats.md"));
    let section = &doc[at + TABLE.len()..];
    let section = &section[..section.find("\n#").unwrap_or(section.len())];
    let mut rows = BTreeMap::new();
    for line in section.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split(" | ").collect();
        let path = cells[0]
            .trim_start_matches("| `")
            .split('`')
            .next()
            .unwrap()
            .to_string();
        let types: Vec<String> = cells
            .get(1)
            .unwrap_or_else(|| panic!("a row without a type: {line}"))
            .split(" or ")
            .map(|t| {
                let t = t.trim();
                t[..t
                    .find(|c: char| !c.is_ascii_alphabetic())
                    .unwrap_or(t.len())]
                    .to_string()
            })
            .collect();
        for t in &types {
            assert!(
                ["integer", "number", "string", "boolean", "array", "object", "null"]
                    .contains(&t.as_str()),
                "{path}: type {t:?} is none of the doc's words"
            );
        }
        assert!(
            rows.insert(path.clone(), types).is_none(),
            "{path} has two rows"
        );
    }
    rows
}

/// Whether a value of type `seen` fits a key documented as `types`.
fn fits(seen: &str, types: &[String]) -> bool {
    types
        .iter()
        .any(|t| t == seen || (seen == "integer" && t == "number"))
}

/// Counts of `bytes` in kind `kind` (slot 0 or 1), all of it in phase `kind`, recorded by phase.
fn method(kind: u32, bytes: u64) -> MethodCounts {
    let mut c = counts(vec![(kind, bytes, 10)], vec![(kind, bytes)]);
    c.phase_kind_bytes = vec![(kind, kind, bytes)];
    c
}

/// A log at `path` of `build`: each `(context, tier, kind, bytes)` a record, each context of
/// `failed` a compile noted as failed.
fn log(path: &Path, build: &str, records: &[(i64, &str, u32, u64)], failed: &[i64]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let sch: Shared<_> = schema(&["ASTNode", "LSRA_Interval"], &["Import", "LSRA"]);
    let mut w = LogWriter::new(std::fs::File::create(path).unwrap()).unwrap();
    w.note_build(build).unwrap();
    for &(context, tier, kind, bytes) in records {
        let name = format!("Ns.C:M{context}()");
        w.write(&sch, Some(&name), context, Some(tier), &method(kind, bytes))
            .unwrap();
    }
    for &context in failed {
        w.note_failed(Some(&format!("Ns.C:F{context}()")), context, Some("Tier0"))
            .unwrap();
    }
    w.finish().unwrap();
}

/// memdiff's JSON report over two roots whose logs make every member of it hold something.
fn report() -> Value {
    let (base_root, diff_root) = (tmp("base"), tmp("diff"));
    // MinOpts: 20 methods of 50,000 bytes (1,000,000: judged on its own), all but one doubled;
    // FullOpts: 20 of 12,000 (below the tier floor), half grown by a half, half shrunk.
    let (mut base, mut diff) = (Vec::new(), Vec::new());
    for c in 0..40i64 {
        let (tier, kind, bytes) = if c % 2 == 0 {
            ("Tier0", 0, 50_000)
        } else {
            ("Tier1", 1, 12_000)
        };
        let grown = match (c % 2, c) {
            (0, 0) => bytes / 2,
            (0, _) => bytes * 2,
            _ if c % 4 == 1 => bytes * 3 / 2,
            _ => bytes * 3 / 4,
        };
        base.push((c, tier, kind, bytes));
        diff.push((c, tier, kind, grown));
    }
    // Methods on one side only, and compiles failed on one side that the other recorded.
    base.push((100, "Tier0", 0, 30_000));
    diff.push((101, "Tier0", 0, 30_000));
    base.push((102, "Tier1", 1, 20_000));
    diff.push((103, "Tier1", 1, 20_000));
    log(&base_root.join("a/base.jas"), "base 1.0", &base, &[103]);
    log(&diff_root.join("a/diff.jas"), "diff 1.1", &diff, &[102]);
    // A context the base holds twice (a second shard), and a collection under one root only.
    log(
        &base_root.join("a/again.jas"),
        "base 1.0",
        &[(2, "Tier0", 0, 50_000)],
        &[],
    );
    log(
        &base_root.join("only/base.jas"),
        "base 1.0",
        &[(0, "Tier0", 0, 1)],
        &[],
    );
    let json = tmp("report.json");
    let (code, out, err) = cli(&[
        "memdiff",
        "--base-root",
        s(&base_root),
        "--diff-root",
        s(&diff_root),
        "--method-fail-above",
        "40",
        "--method-min-bytes",
        "10000",
        "--json",
        s(&json),
        "-q",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

#[test]
fn every_key_of_the_memdiff_report_is_documented_as_written() {
    let doc = report();
    // The data gives what the test means it to: else a key could go unseen.
    let c = &doc["collections"][0];
    let failures: BTreeSet<&str> = doc["verdict"]["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    for rule in [
        "not_compared",
        "duplicates",
        "failing_compiles",
        "max_missed",
        "fail_above",
        "kind_fail_above",
        "method_fail_above",
    ] {
        assert!(failures.contains(rule), "{rule} not broken: {failures:?}");
    }
    let tiers = &c["diff"]["verdict"]["tiers"];
    assert!(
        tiers[0]["skipped"].is_null() && tiers[1]["skipped"].is_string(),
        "{tiers}"
    );
    for list in ["regressions", "improvements"] {
        for t in 0..2 {
            assert!(!doc["top_methods"]["tiers"][t][list]
                .as_array()
                .unwrap()
                .is_empty());
        }
    }
    for list in [
        "missing_in_diff",
        "missing_in_base",
        "failing_in_diff",
        "failing_in_base",
        "duplicates",
    ] {
        assert!(!c[list].as_array().unwrap().is_empty(), "{list} empty");
    }
    assert!(doc["phase_kinds"].is_array() && c["diff"]["phase_kinds"].is_array());

    let mut seen = BTreeMap::new();
    paths(&doc, "", &mut seen);
    let rows = doc_rows();
    let missing: Vec<&String> = seen.keys().filter(|p| !rows.contains_key(*p)).collect();
    assert!(
        missing.is_empty(),
        "keys the report writes that docs/formats.md ({TABLE:?}) does not list: {missing:?}"
    );
    for (path, types) in &seen {
        for t in types {
            assert!(
                fits(t, &rows[path]),
                "{path} holds a {t}, documented as {:?}",
                rows[path]
            );
        }
    }
    let stale: Vec<&String> = rows.keys().filter(|p| !seen.contains_key(*p)).collect();
    assert!(
        stale.is_empty(),
        "keys docs/formats.md lists that the report does not write: {stale:?}"
    );
}

#[test]
fn the_schema_version_the_doc_states_is_the_one_written() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/formats.md"))
            .unwrap();
    let written = report_version();
    let stated =
        format!("`jitarena memdiff --json FILE` writes one object, schema version {written}");
    assert!(
        doc.contains(&stated),
        "docs/formats.md does not say {stated:?}"
    );
    assert!(doc.contains(&format!("{{\"schema_version\":{written},")));
}

/// The `schema_version` of a report over one pair of logs.
fn report_version() -> u64 {
    let (base, diff) = (tmp("version/base.jas"), tmp("version/diff.jas"));
    log(&base, "b", &[(0, "Tier0", 0, 100)], &[]);
    log(&diff, "d", &[(0, "Tier0", 0, 100)], &[]);
    let json = tmp("version.json");
    let (code, out, err) = cli(&["memdiff", s(&base), s(&diff), "--json", s(&json), "-q"]);
    assert_eq!(code, 0, "{out}{err}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    v["schema_version"].as_u64().unwrap()
}
