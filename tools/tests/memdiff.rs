//! memdiff: the real traces' known growth, injected regressions, the gate, one-sided methods,
//! shards, bad inputs, the CSV bridge, and the report files against expected ones.

mod common;

mod real;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{cli, generated, generator, s, tmp};
use jitarena_tools::cli::gen_trace;
use jitarena_tools::diff::{self, CsvColumns, DiffOptions, MemDiff, Thresholds};
use jitarena_tools::harness::{self, ReplayOptions};
use jitarena_tools::report;

/// A stats log of generated methods replayed through the arena.
fn replayed(name: &str, seed: u64, methods: u64, scale: &[(&str, f64)]) -> PathBuf {
    let trace = tmp(&format!("{name}.jat"));
    gen_trace(&generator(seed, methods, scale), &trace).unwrap();
    let out = tmp(&format!("{name}.jas"));
    harness::replay(&[trace], Some(&out), &ReplayOptions::default()).unwrap();
    out
}

fn memdiff(base: &Path, diff: &Path) -> MemDiff {
    diff::diff_logs(
        &[base.to_path_buf()],
        &[diff.to_path_buf()],
        &DiffOptions::default(),
    )
    .unwrap()
}

fn kind<'a>(d: &'a MemDiff, name: &str) -> &'a diff::Delta {
    d.kinds
        .iter()
        .find(|k| k.name == name)
        .unwrap_or_else(|| panic!("no kind {name}"))
}

fn pct(b: u64, d: u64) -> f64 {
    diff::pct_change(b, d).unwrap()
}

#[test]
fn the_real_traces_show_the_growth_their_readme_states() {
    let (base, diff_log) = (tmp("cl100.jas"), tmp("cl104.jas"));
    harness::replay(
        &[real::trace("png-cl0.100-speed.txt")],
        Some(&base),
        &ReplayOptions::default(),
    )
    .unwrap();
    harness::replay(
        &[real::trace("png-cl0.104-speed.txt")],
        Some(&diff_log),
        &ReplayOptions::default(),
    )
    .unwrap();
    let d = memdiff(&base, &diff_log);
    assert_eq!(
        (
            d.coverage.matched,
            d.coverage.only_base,
            d.coverage.only_diff
        ),
        (194, 0, 0)
    );
    let o = d.overall();
    // 111.5 MB -> 132.2 MB, +18.6%.
    let mb = |b: u64| (b as f64 / 100_000.0).round() / 10.0;
    assert_eq!((mb(o.base.bytes), mb(o.diff.bytes)), (111.5, 132.2));
    assert!((pct(o.base.bytes, o.diff.bytes) - 18.6).abs() < 0.05);
    let expect = [
        ("EgraphBasedOptimizations", 97.8),
        ("VCodeLowering", 97.6),
        ("CompilationPasses", 44.5),
        ("RegisterAllocation", -2.0),
    ];
    for (name, want) in expect {
        let k = kind(&d, name);
        let got = pct(k.base, k.diff);
        assert!(
            (got - want).abs() < 0.05,
            "{name}: {got:.2}% instead of {want}%"
        );
    }
    // The three growing kinds lead the table.
    let top3: Vec<&str> = d.kinds.iter().take(3).map(|k| k.name.as_str()).collect();
    for name in [
        "EgraphBasedOptimizations",
        "VCodeLowering",
        "CompilationPasses",
    ] {
        assert!(top3.contains(&name), "{top3:?}");
    }
    // Example methods that grew, named, with the kind that moved most.
    assert!(d.top_growth.len() >= 5);
    for m in &d.top_growth {
        assert!(
            m.diff > m.base && m.name.as_deref().is_some_and(|n| n.starts_with("wasm::")),
            "{m:?}"
        );
        assert!(m.top_kind.is_some());
    }
    assert!(
        d.verdict.regression,
        "+97.8% in a kind of 14 MB fails the kind gate"
    );
}

#[test]
fn an_injected_regression_is_found_in_its_kind_and_methods_and_fails() {
    let base = replayed("inj-base", 3, 300, &[]);
    let diff_log = replayed("inj-diff", 3, 300, &[("LSRA_RefPosition", 30.0)]);
    let d = memdiff(&base, &diff_log);
    assert_eq!(d.kinds[0].name, "LSRA_RefPosition");
    assert!((pct(d.kinds[0].base, d.kinds[0].diff) - 30.0).abs() < 0.5);
    assert!(
        d.kinds[1..].iter().all(|k| k.base == k.diff),
        "only the injected kind moved"
    );
    assert!(d.top_growth.iter().all(|m| m
        .top_kind
        .as_ref()
        .is_some_and(|k| k.0 == "LSRA_RefPosition")));
    assert!(d.verdict.regression);
    assert!(
        d.verdict.rule.contains("kind LSRA_RefPosition grew +30"),
        "{}",
        d.verdict.rule
    );
    let total = pct(d.overall().base.bytes, d.overall().diff.bytes);
    assert!(
        total < 25.0,
        "the total alone ({total:.1}%) would not have failed"
    );
    // The same change with the kind gate off passes: the total grew by less than 25%.
    let options = DiffOptions {
        thresholds: Thresholds {
            kind_fail_above: None,
            ..Thresholds::default()
        },
        ..DiffOptions::default()
    };
    assert!(
        !diff::diff_logs(&[base], &[diff_log], &options)
            .unwrap()
            .verdict
            .regression
    );
}

#[test]
fn a_one_percent_change_passes_and_thirty_percent_in_a_large_kind_fails() {
    let base = generated("gate-base.jas", 5, 3000, &[]);
    let small = generated("gate-small.jas", 5, 3000, &[("ASTNode", 1.0)]);
    let large = generated("gate-large.jas", 5, 3000, &[("ValueNumber", 30.0)]);
    let d = memdiff(&base, &small);
    assert!(!d.verdict.regression, "{}", d.verdict.rule);
    assert!(
        d.verdict.rule.starts_with("no regression"),
        "{}",
        d.verdict.rule
    );
    let d = memdiff(&base, &large);
    assert!(d.verdict.regression, "{}", d.verdict.rule);
    assert_eq!(d.kinds[0].name, "ValueNumber");
    // Exit codes through the command: 0 and 1.
    assert_eq!(cli(&["memdiff", s(&base), s(&small), "-q"]).0, 0);
    assert_eq!(cli(&["memdiff", s(&base), s(&large), "-q"]).0, 1);
    // A small kind cannot fail on its own when it is under the floor.
    let tiny = generated("gate-tiny.jas", 5, 3000, &[("LoopHoist", 80.0)]);
    assert!(!memdiff(&base, &tiny).verdict.regression);
    let (code, _, _) = cli(&[
        "memdiff",
        s(&base),
        s(&tiny),
        "-q",
        "--kind-min-bytes",
        "1000",
    ]);
    assert_eq!(
        code, 1,
        "with a floor of 1,000 bytes, +80% in LoopHoist fails"
    );
    // Improvements never fail.
    assert_eq!(
        cli(&[
            "memdiff",
            s(&large),
            s(&base),
            "-q",
            "--fail-above",
            "0",
            "--kind-fail-above",
            "0"
        ])
        .0,
        0
    );
    // The method gate.
    let (code, out, _) = cli(&[
        "memdiff",
        s(&base),
        s(&large),
        "--kind-fail-above",
        "off",
        "--method-fail-above",
        "5",
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("grew more than --method-fail-above 5%"),
        "{out}"
    );
}

#[test]
fn methods_on_one_side_only_are_counted_and_left_out() {
    let base = generated("cov-base.jas", 8, 120, &[]);
    let fewer = generated("cov-fewer.jas", 8, 100, &[]);
    let more = generated("cov-more.jas", 8, 150, &[]);
    let d = memdiff(&base, &fewer);
    assert_eq!(
        (
            d.coverage.matched,
            d.coverage.only_base,
            d.coverage.only_diff
        ),
        (100, 20, 0)
    );
    assert!(d.coverage.only_base_bytes > 0);
    assert_eq!(
        d.overall().base.bytes,
        d.overall().diff.bytes,
        "one-sided methods are not in the deltas"
    );
    assert!(!d.verdict.regression);
    let d = memdiff(&base, &more);
    assert_eq!(
        (
            d.coverage.matched,
            d.coverage.only_base,
            d.coverage.only_diff
        ),
        (120, 0, 30)
    );
    let text = report::diff::render_text(&d);
    assert!(
        text.contains("120 matched, 0 only in base (0 bytes), 30 only in diff"),
        "{text}"
    );
}

#[test]
fn methods_without_context_match_by_name_tier_and_occurrence() {
    use jitarena::log::{LogWriter, MethodCounts};
    use jitarena::Shared;
    let schema = Shared::new(jitarena::Schema::new(vec!["A".into(), "B".into()], vec![]).unwrap());
    let write = |path: &Path, sizes: &[(&str, &str, u64)]| {
        let mut w = LogWriter::new(std::fs::File::create(path).unwrap()).unwrap();
        for &(name, tier, bytes) in sizes {
            let c = MethodCounts {
                kinds: vec![(0, bytes, 1)],
                ..MethodCounts::default()
            };
            w.write(&schema, Some(name), -1, Some(tier), &c).unwrap();
        }
        w.finish().unwrap();
    };
    let (b, d) = (tmp("names-base.jas"), tmp("names-diff.jas"));
    write(
        &b,
        &[
            ("M", "Tier0", 100),
            ("M", "Tier1", 1000),
            ("M", "Tier0", 200),
            ("N", "Tier0", 5),
        ],
    );
    write(
        &d,
        &[
            ("M", "Tier1", 1000),
            ("M", "Tier0", 100),
            ("M", "Tier0", 260),
            ("X", "Tier0", 7),
        ],
    );
    let r = memdiff(&b, &d);
    assert_eq!(
        (
            r.coverage.matched,
            r.coverage.only_base,
            r.coverage.only_diff
        ),
        (3, 1, 1)
    );
    assert_eq!(r.top_growth.len(), 1);
    assert_eq!(
        (r.top_growth[0].base, r.top_growth[0].diff),
        (200, 260),
        "second Tier0 M matches second Tier0 M"
    );
    let groups: Vec<(&str, u64)> = r
        .groups
        .iter()
        .map(|g| (g.name.as_str(), g.methods))
        .collect();
    assert_eq!(groups, [("Overall", 3), ("MinOpts", 2), ("FullOpts", 1)]);
}

/// Both sides are read at once and matched afterwards: a diff method whose tier differs from
/// its base method's counts in the base method's group, methods only in the diff count in no
/// group and no kind, and context numbers far apart (no dense table) match as close ones do.
#[test]
fn groups_are_the_base_methods_and_one_sided_methods_stay_out() {
    use jitarena::log::{LogWriter, MethodCounts};
    use jitarena::Shared;
    let schema = Shared::new(jitarena::Schema::new(vec!["A".into(), "B".into()], vec![]).unwrap());
    let write = |path: &Path, methods: &[(i64, &str, u64, u64)]| {
        let mut w = LogWriter::new(std::fs::File::create(path).unwrap()).unwrap();
        for &(context, tier, a, b) in methods {
            let c = MethodCounts {
                kinds: vec![(0, a, 1), (1, b, 2)],
                ..MethodCounts::default()
            };
            w.write(&schema, Some("M"), context, Some(tier), &c)
                .unwrap();
        }
        w.finish().unwrap();
    };
    for far in [0, 1 << 40] {
        let (b, d) = (tmp("moved-base.jas"), tmp("moved-diff.jas"));
        write(
            &b,
            &[
                (far, "Tier0", 100, 0),
                (far + 1, "Tier1", 1000, 10),
                (far + 3, "Tier1", 70, 0),
            ],
        );
        write(
            &d,
            &[
                (far + 2, "Tier0", 50, 5),
                (far, "Tier1", 150, 1),
                (far + 1, "Tier1", 1000, 10),
            ],
        );
        let r = memdiff(&b, &d);
        let c = &r.coverage;
        assert_eq!((c.matched, c.only_base, c.only_diff), (2, 1, 1), "{far}");
        assert_eq!((c.only_base_bytes, c.only_diff_bytes), (70, 55));
        let groups: Vec<(&str, u64, u64, u64, u64)> = r
            .groups
            .iter()
            .map(|g| {
                let (b, d) = (&g.base, &g.diff);
                (g.name.as_str(), g.methods, b.bytes, d.bytes, d.allocations)
            })
            .collect();
        assert_eq!(
            groups,
            [
                ("Overall", 2, 1110, 1161, 6),
                ("MinOpts", 1, 100, 151, 3),
                ("FullOpts", 1, 1010, 1010, 3),
            ],
            "{far}"
        );
        assert_eq!((kind(&r, "A").base, kind(&r, "A").diff), (1100, 1150));
        assert_eq!((kind(&r, "B").base, kind(&r, "B").diff), (10, 11));
        let missing = &r.coverage.missing_in_base;
        assert_eq!(
            (missing.len(), missing[0].context, missing[0].bytes),
            (1, far + 2, 55)
        );
    }
}

#[test]
fn shards_give_the_same_answer_as_the_merged_log() {
    let base = generated("sh-base.jas", 12, 400, &[]);
    let diff_log = generated("sh-diff.jas", 12, 400, &[("SSA", 40.0), ("CSE", -20.0)]);
    // Split the diff into three shards by dumping and rewriting records.
    let (records, _) = jitarena::log::read_all(&diff_log).unwrap();
    let dir = tmp("sh-shards");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut writers: Vec<_> = (0..3)
        .map(|i| {
            jitarena::log::LogWriter::new(
                std::fs::File::create(dir.join(format!("shard{i}.jas"))).unwrap(),
            )
            .unwrap()
        })
        .collect();
    for (i, r) in records.iter().enumerate() {
        writers[i % 3].write_record(r).unwrap();
    }
    writers.into_iter().for_each(|w| drop(w.finish().unwrap()));
    let whole = memdiff(&base, &diff_log);
    let mut sharded = diff::diff_logs(
        std::slice::from_ref(&base),
        std::slice::from_ref(&dir),
        &DiffOptions::default(),
    )
    .unwrap();
    assert_eq!(sharded.coverage.diff_files, 3);
    sharded.coverage.diff_files = 1;
    assert_eq!(
        report::diff::render_json(&sharded),
        report::diff::render_json(&whole)
    );
    // And through `merge`.
    let merged = tmp("sh-merged.jas");
    assert_eq!(cli(&["merge", "-o", s(&merged), s(&dir)]).0, 0);
    assert_eq!(
        report::diff::render_json(&memdiff(&base, &merged)),
        report::diff::render_json(&whole)
    );
}

#[test]
fn bad_inputs_exit_2_with_a_clear_message() {
    let good = generated("bad-good.jas", 1, 10, &[]);
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "bad-magic.jas",
            b"NOTARENA\x4c\x01\x00\x00\x00\x00".to_vec(),
            "not a jitarena stats log",
        ),
        (
            "bad-not-a-header.jas",
            b"JITAX".to_vec(),
            "not a jitarena stats log",
        ),
        (
            "bad-text.jas",
            b"context,bytes\n1,2\n".to_vec(),
            "not a jitarena stats log",
        ),
        (
            "bad-trace.jas",
            b"JITARENA\x54\x01\x00\x00".to_vec(),
            "this is a jitarena trace, not a stats log",
        ),
    ];
    for (name, bytes, says) in cases {
        let path = tmp(name);
        std::fs::write(&path, bytes).unwrap();
        let (code, _, err) = cli(&["memdiff", s(&good), s(&path)]);
        assert_eq!(code, 2, "{name}: {err}");
        assert!(
            err.contains(name) && err.contains(says) && !err.contains("panicked"),
            "{name}: {err}"
        );
    }
    let (code, _, err) = cli(&["memdiff", s(&good), s(&tmp("bad-missing.jas"))]);
    assert!(
        code == 2 && err.contains("bad-missing.jas") && err.contains("cannot open"),
        "{err}"
    );
    let (code, _, err) = cli(&["memdiff", s(&good)]);
    assert!(code == 2 && err.contains("BASE DIFF"), "{err}");
    let (code, _, _) = cli(&["memdiff", s(&good), s(&good), "--kind-fail-above", "lots"]);
    assert_eq!(code, 2);
    // A log cut inside its header (empty, or a JIT killed as it began it) holds no records,
    // with a warning: INCOMPLETE, as any log cut short.
    for (name, bytes) in [
        ("bad-empty.jas", &b""[..]),
        ("bad-header-cut.jas", b"JITAR"),
    ] {
        let path = tmp(name);
        std::fs::write(&path, bytes).unwrap();
        let (code, out, err) = cli(&["memdiff", s(&good), s(&path)]);
        assert_eq!(code, 1, "{name}: {out}{err}");
        assert!(out.contains("INCOMPLETE (exit 1)"), "{name}: {out}");
        assert!(
            err.contains(name) && err.contains("cut short inside its header"),
            "{name}: {err}"
        );
    }
    // A log cut inside its last record is read with a warning, not refused; the check is
    // INCOMPLETE unless the cut (and the method it lost) is accepted.
    let cut = tmp("bad-cut.jas");
    let bytes = std::fs::read(&good).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() - 3]).unwrap();
    let (code, out, _) = cli(&["memdiff", s(&good), s(&cut)]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("INCOMPLETE (exit 1)"), "{out}");
    let (code, out, err) = cli(&[
        "memdiff",
        s(&good),
        s(&cut),
        "--allow-truncated",
        "--max-missed",
        "10",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("warning:") && err.contains("cut short"),
        "{err}"
    );
    assert!(out.contains("9 matched, 1 only in base"), "{out}");
    // Merged with another shard, the cut shard still makes the check INCOMPLETE: the merged
    // log carries its warning.
    let other = generated("bad-other.jas", 8, 10, &[]);
    let merged = tmp("bad-merged-cut.jas");
    let (code, _, err) = cli(&["merge", "-o", s(&merged), s(&cut), s(&other)]);
    assert!(code == 0 && err.contains("cut short"), "{err}");
    let whole = tmp("bad-merged-whole.jas");
    let (code, _, err) = cli(&["merge", "-o", s(&whole), s(&good), s(&other)]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = cli(&["memdiff", s(&whole), s(&merged)]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("INCOMPLETE (exit 1)") && out.contains("bad-merged-cut.jas: a log cut short"),
        "{out}"
    );
    assert!(
        err.contains("holds the records of a log that was cut short")
            && err.contains("bad-cut.jas"),
        "{err}"
    );
    // The two generated shards share their context numbers (0 to 9): duplicates, accepted
    // here, where the cut shard is what is tested.
    let (code, _, err) = cli(&[
        "memdiff",
        s(&whole),
        s(&merged),
        "--allow-truncated",
        "--allow-duplicates",
        "--max-missed",
        "10",
    ]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn ignore_kind_leaves_a_debug_only_pool_out() {
    let base = generated("ig-base.jas", 4, 500, &[]);
    let diff_log = generated("ig-diff.jas", 4, 500, &[("DebugOnly", 5000.0)]);
    let loud = memdiff(&base, &diff_log);
    assert_eq!(loud.kinds[0].name, "DebugOnly");
    let options = DiffOptions {
        ignore_kinds: vec!["DebugOnly".into()],
        ..DiffOptions::default()
    };
    let quiet = diff::diff_logs(&[base], &[diff_log], &options).unwrap();
    assert!(quiet.kinds.iter().all(|k| k.name != "DebugOnly"));
    assert_eq!(quiet.overall().base.bytes, quiet.overall().diff.bytes);
    assert!(quiet.overall().base.bytes < loud.overall().base.bytes);
    assert_eq!(quiet.distribution.same, 500);
}

#[test]
fn the_csv_bridge_gives_the_same_totals_distribution_and_top_methods() {
    let base = generated("csv-base.jas", 6, 300, &[]);
    let diff_log = generated("csv-diff.jas", 6, 300, &[("Generic", 15.0)]);
    let d = memdiff(&base, &diff_log);
    // A replay tool's details file: one row per method, base and diff byte columns.
    let (b, _) = jitarena::log::read_all(&base).unwrap();
    let (df, _) = jitarena::log::read_all(&diff_log).unwrap();
    let mut csv = String::from("Context,Method full name,Tier,Base bytes,Diff bytes\n");
    for (x, y) in b.iter().zip(&df) {
        let name = x.info.name.as_deref().unwrap();
        csv.push_str(&format!(
            "{},\"{name}\",{},{},{}\n",
            x.info.context,
            x.info.tier.as_deref().unwrap(),
            x.counts.total_bytes(),
            y.counts.total_bytes()
        ));
    }
    csv.push_str("999,\"Only:InBase()\",FullOpts,1234,\n");
    let path = tmp("details.csv");
    std::fs::write(&path, csv).unwrap();
    let c = diff::diff_csv(&path, &CsvColumns::metric("bytes"), &DiffOptions::default()).unwrap();
    assert!(!c.has_kinds && c.kinds.is_empty());
    assert_eq!(
        (
            c.coverage.matched,
            c.coverage.only_base,
            c.coverage.only_base_bytes
        ),
        (300, 1, 1234)
    );
    let bytes = |m: &MemDiff| {
        m.groups
            .iter()
            .map(|g| (g.name.clone(), g.methods, g.base.bytes, g.diff.bytes))
            .collect::<Vec<_>>()
    };
    assert_eq!(bytes(&c), bytes(&d));
    assert_eq!(c.distribution, d.distribution);
    let names = |l: &[diff::MethodDelta]| l.iter().map(|m| m.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&c.top_growth), names(&d.top_growth));
    assert_eq!(names(&c.top_relative_growth), names(&d.top_relative_growth));
    // Through the command, with a bad column named.
    let (code, out, _) = cli(&[
        "memdiff",
        "--csv",
        s(&path),
        "--base-col",
        "Base bytes",
        "--diff-col",
        "Diff bytes",
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("300 matched, 1 only in base"), "{out}");
    let (code, _, err) = cli(&[
        "memdiff",
        "--csv",
        s(&path),
        "--base-col",
        "Base",
        "--diff-col",
        "Diff bytes",
    ]);
    assert!(
        code == 2 && err.contains("details.csv:1: no column \"Base\""),
        "{err}"
    );
}

/// Compares a report with its expected file (`JITARENA_BLESS=1` rewrites the file).
fn check_expected(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/expected")
        .join(name);
    if std::env::var("JITARENA_BLESS").as_deref() == Ok("1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if let Some((i, (a, e))) = actual
        .lines()
        .zip(expected.lines())
        .enumerate()
        .find(|(_, (a, e))| a != e)
    {
        panic!("{name} differs from {} at line {}:\n  actual:   {a}\n  expected: {e}\n(JITARENA_BLESS=1 cargo test --test memdiff rewrites it)", path.display(), i + 1);
    }
    assert_eq!(
        actual.lines().count(),
        expected.lines().count(),
        "{name}: line count"
    );
}

fn report_inputs() -> (PathBuf, PathBuf) {
    (
        generated("rep-base.jas", 21, 60, &[]),
        generated(
            "rep-diff.jas",
            21,
            64,
            &[("LSRA", 35.0), ("ASTNode", -4.0), ("bitset", 12.0)],
        ),
    )
}

#[test]
fn markdown_and_json_match_the_expected_files() {
    let (base, diff_log) = report_inputs();
    let (md, md_long, json, html) = (
        tmp("rep.md"),
        tmp("rep-long.md"),
        tmp("rep.json"),
        tmp("rep.html"),
    );
    let (code, out, err) = cli(&[
        "memdiff",
        s(&base),
        s(&diff_log),
        "--md",
        s(&md),
        "--md-long",
        s(&md_long),
        "--json",
        s(&json),
        "--html",
        s(&html),
    ]);
    assert_eq!(code, 1, "{err}");
    check_expected("memdiff.md", &std::fs::read_to_string(&md).unwrap());
    check_expected(
        "memdiff-long.md",
        &std::fs::read_to_string(&md_long).unwrap(),
    );
    check_expected("memdiff.json", &std::fs::read_to_string(&json).unwrap());
    check_expected("memdiff.txt", &out);
    // Deterministic: the same inputs give the same bytes.
    let (_, again, _) = cli(&["memdiff", s(&base), s(&diff_log)]);
    assert_eq!(out, again);
}

#[test]
fn the_html_page_is_well_formed_and_self_contained() {
    let (base, diff_log) = report_inputs();
    let html = tmp("page.html");
    cli(&["memdiff", s(&base), s(&diff_log), "-q", "--html", s(&html)]);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert_eq!(
        page.matches("<svg ").count(),
        5,
        "bytes by collection, kinds across collections; the collection's kind bars, scatter, distribution"
    );
    for external in ["<script", "http://", "https://", "src=", "@import"] {
        let hits: Vec<_> = page
            .match_indices(external)
            .filter(|(i, _)| !page[*i..].starts_with("http://www.w3.org/"))
            .collect();
        assert!(
            hits.is_empty(),
            "the page refers to something outside it: {external}"
        );
    }
    // Well-formed XML, checked by an independent parser where Python is present.
    let check = Command::new("python3")
        .args([
            "-c",
            "import sys, xml.etree.ElementTree as ET; ET.parse(sys.argv[1]); print('ok')",
            s(&html),
        ])
        .output();
    match check {
        Ok(out) => assert!(
            out.status.success() && out.stdout.starts_with(b"ok"),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(_) => assert!(
            std::env::var("CI").is_err(),
            "python3 is needed in CI to check the HTML"
        ),
    }
}

/// A method whose arena refused a request on its memory limit stops counting there: the diff
/// hitting the limit where the base did not is a regression no threshold could see, and fails
/// the gate; hits on both sides do not.
#[test]
fn a_memory_limit_hit_only_in_the_diff_fails() {
    use jitarena::log::LogWriter;
    let schema = common::schema(&["A", "B"], &["P"]);
    let log = |name: &str, hits: &[i64]| {
        let path = tmp(name);
        let mut w = LogWriter::new(std::fs::File::create(&path).unwrap()).unwrap();
        for context in 0..10 {
            let mut c = common::counts(vec![(0, 1000, 10), (1, 500, 5)], vec![(0, 1500)]);
            c.limit_hit = hits.contains(&context);
            w.write(&schema, Some("M"), context, Some("FullOpts"), &c)
                .unwrap();
        }
        w.finish().unwrap();
        path
    };
    let base = log("limit-base.jas", &[3]);
    let (diff_log, both) = (
        log("limit-diff.jas", &[3, 5, 7]),
        log("limit-both.jas", &[3]),
    );
    let json = tmp("limit.json");
    let (code, out, err) = cli(&["memdiff", s(&base), s(&diff_log), "--json", s(&json)]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("FAIL (exit 1)")
            && out.contains("2 methods hit the arena's memory limit in the diff but not in the base")
            && out.contains("memory limit hit by 1 base and 3 diff methods (2 matched methods only in the diff)"),
        "{out}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let coverage = &doc["collections"][0]["diff"]["coverage"];
    assert_eq!(
        (
            &coverage["limit_hits_base"],
            &coverage["limit_hits_diff"],
            &coverage["limit_hits_new"]
        ),
        (&1.into(), &3.into(), &2.into())
    );
    let (code, out, err) = cli(&["memdiff", s(&base), s(&both)]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("memory limit hit by 1 base and 1 diff methods (0 matched"),
        "{out}"
    );
}
