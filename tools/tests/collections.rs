//! memdiff over collections: the verdict names the collection that regressed, coverage is part
//! of the gate (one-sided collections, missed methods, no match, logs cut short), the summary's
//! ranges and significance rule, and the checked-in summary of three collections.

mod common;

use std::path::{Path, PathBuf};

use common::{cli, log_at, s, tmp};

const NAMES: [&str; 3] = ["benchmarks.run", "libraries.pmi", "realworld.run"];

/// Base and diff roots of three collections (seeds 1, 2, 3), the diff side scaled by `scale`
/// in collection `regressed` only (or in all with `None`).
fn roots(tag: &str, regressed: Option<usize>, scale: &[(&str, f64)]) -> (PathBuf, PathBuf) {
    let (base, diff) = (tmp(&format!("{tag}/base")), tmp(&format!("{tag}/diff")));
    let _ = std::fs::remove_dir_all(tmp(tag));
    for (i, name) in NAMES.iter().enumerate() {
        let seed = i as u64 + 1;
        log_at(&base.join(name).join("shard0.jas"), seed, 120, &[]);
        let scaled = regressed.is_none_or(|r| r == i);
        log_at(
            &diff.join(name).join("shard0.jas"),
            seed,
            120,
            if scaled { scale } else { &[] },
        );
    }
    (base, diff)
}

/// Every kind of the generator's schema, scaled by `pct`.
fn all_kinds(pct: f64) -> Vec<(&'static str, f64)> {
    jitarena_tools::gen::RYUJIT_KINDS
        .iter()
        .map(|k| (*k, pct))
        .collect()
}

#[test]
fn a_regression_in_one_of_three_collections_fails_and_is_named() {
    let (base, diff) = roots("one-regressed", Some(1), &[("LSRA", 60.0)]);
    let md = tmp("one-regressed.md");
    let (code, out, err) = cli(&[
        "memdiff",
        "--base-root",
        s(&base),
        "--diff-root",
        s(&diff),
        "--md",
        s(&md),
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let verdict = out.lines().last().unwrap();
    assert!(
        verdict.starts_with("FAIL (exit 1): regression in libraries.pmi: kind LSRA grew"),
        "{verdict}"
    );
    assert!(!verdict.contains("benchmarks.run") && !verdict.contains("realworld.run"));
    // The summary names the collection, and only it, as significant.
    let md = std::fs::read_to_string(&md).unwrap();
    check_expected("collections.md", &md);
}

#[test]
fn every_collection_at_plus_one_percent_passes() {
    let (base, diff) = roots("all-plus-one", None, &all_kinds(1.0));
    let md = tmp("all-plus-one.md");
    let (code, out, err) = cli(&[
        "memdiff",
        "--base-root",
        s(&base),
        "--diff-root",
        s(&diff),
        "--md",
        s(&md),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("PASS (exit 0): no regression in 3 collections"),
        "{out}"
    );
    let md = std::fs::read_to_string(&md).unwrap();
    // Each collection moved by about +1%: all three are significant and listed in Overall.
    let overall = section(&md, "<summary>Overall (");
    for name in NAMES {
        assert!(overall.contains(&md_name(name)), "{name} in {overall}");
    }
    assert!(!md.contains("No significant memory differences found"));
}

/// A collection name as the markdown escapes it.
fn md_name(name: &str) -> String {
    jitarena_tools::report::md_text(name)
}

/// The `<details>` block that starts with `start`.
fn section<'a>(md: &'a str, start: &str) -> &'a str {
    let at = md
        .find(start)
        .unwrap_or_else(|| panic!("no {start:?} in\n{md}"));
    let end = md[at..].find("</details>").unwrap() + at;
    &md[at..end]
}

#[test]
fn the_summary_line_gives_the_range_and_lists_only_significant_changes() {
    // benchmarks.run: +~2%; libraries.pmi: +~10%; realworld.run: unchanged.
    let (base, diff) = (tmp("range/base"), tmp("range/diff"));
    let _ = std::fs::remove_dir_all(tmp("range"));
    for (i, (name, pct)) in NAMES.iter().zip([2.0, 10.0, 0.0]).enumerate() {
        let seed = i as u64 + 1;
        log_at(&base.join(name).join("a.jas"), seed, 80, &[]);
        let scale = if pct > 0.0 { all_kinds(pct) } else { vec![] };
        log_at(&diff.join(name).join("a.jas"), seed, 80, &scale);
    }
    let md = tmp("range.md");
    let json = tmp("range.json");
    let (code, out, err) = cli(&[
        "memdiff",
        "--base-root",
        s(&base),
        "--diff-root",
        s(&diff),
        "--md",
        s(&md),
        "--json",
        s(&json),
        "-q",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let md = std::fs::read_to_string(&md).unwrap();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["schema_version"], 3);
    let pct_of = |name: &str| -> f64 {
        let c = doc["collections"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("{name} in the JSON"));
        c["diff"]["groups"][0]["pct"].as_f64().unwrap()
    };
    let (lo, hi) = (pct_of("benchmarks.run"), pct_of("libraries.pmi"));
    assert!(lo > 0.5 && hi > lo, "{lo} {hi}");
    let line = md
        .lines()
        .find(|l| l.starts_with("<summary>Overall ("))
        .unwrap();
    assert_eq!(
        line,
        format!(
            "<summary>Overall (<span style=\"color:red\">{lo:+.2}%</span> to <span style=\"color:red\">{hi:+.2}%</span> 🔴)</summary>"
        )
    );
    let overall = section(&md, "<summary>Overall (");
    assert!(overall.contains("|benchmarks.run|") && overall.contains("|libraries.pmi|"));
    assert!(!overall.contains("realworld"), "unchanged: not significant");
    // Every collection is in the details, with a total row.
    let details = section(&md, "<summary>Details</summary>");
    for name in NAMES {
        assert!(details.contains(&format!("|{}|", md_name(name))));
    }
    assert!(details.contains("|**Total**|"));
}

#[test]
fn nothing_significant_says_so() {
    // Equal logs (a root compared with itself is not compared: see
    // a_collection_linked_to_the_other_side_is_not_compared).
    let (base, diff) = roots("same", None, &[]);
    let md = tmp("same.md");
    let (code, out, err) = cli(&[
        "memdiff",
        "--base-root",
        s(&base),
        "--diff-root",
        s(&diff),
        "--md",
        s(&md),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(
        md.contains("\nNo significant memory differences found\n"),
        "{md}"
    );
    assert!(!md.contains("<summary>Overall ("));
}

#[test]
fn a_collection_on_one_side_only_fails() {
    let (base, diff) = roots("one-sided", Some(0), &[]);
    log_at(&base.join("coreclr_tests.run").join("a.jas"), 9, 20, &[]);
    let md = tmp("one-sided.md");
    let (code, out, err) = cli(&[
        "memdiff",
        "--base-root",
        s(&base),
        "--diff-root",
        s(&diff),
        "--md",
        s(&md),
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let verdict = out.lines().last().unwrap();
    assert!(
        verdict.starts_with("INCOMPLETE (exit 1): incomplete: collection coreclr_tests.run: only under the base root"),
        "{verdict}"
    );
    // The summary says so near the top, not only in the verdict.
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(
        md.contains("\nNOT COMPARED collections: 1 (coreclr_tests.run)\n"),
        "{md}"
    );
    // An empty shard directory on one side (the JIT died before writing) fails the same way.
    std::fs::create_dir_all(diff.join("coreclr_tests.run")).unwrap();
    let (code, out, _) = cli(&["memdiff", "--base-root", s(&base), "--diff-root", s(&diff)]);
    assert_eq!(code, 1);
    assert!(
        out.contains("collection coreclr_tests.run: no log on the diff side"),
        "{out}"
    );
}

#[test]
fn a_diff_missing_thirty_percent_of_a_collection_fails_with_the_counts() {
    let (base, diff) = (tmp("missed/base.jas"), tmp("missed/diff.jas"));
    log_at(&base, 4, 200, &[]);
    log_at(&diff, 4, 140, &[]); // the diff JIT "crashed" on the last 60 methods
    let json = tmp("missed.json");
    let md = tmp("missed.md");
    let (code, out, err) = cli(&[
        "memdiff",
        "--collection",
        "libraries.pmi",
        s(&base),
        s(&diff),
        "--json",
        s(&json),
        "--md",
        s(&md),
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("INCOMPLETE (exit 1): incomplete: collection libraries.pmi: the diff misses 60 of the base's 200 methods (30.00%), above --max-missed 1%"),
        "{out}"
    );
    // The largest missing methods are listed, so that the engineer can find the crash.
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(
        md.contains("MISSED contexts: base: 0 (0.00%), diff: 60 (30.00%)"),
        "{md}"
    );
    let missing = section(&md, "<summary>Largest methods compiled on one side only");
    assert_eq!(
        missing.matches("|libraries.pmi|diff|").count(),
        10,
        "{missing}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["verdict"]["status"], "INCOMPLETE");
    // The collection's own verdict is INCOMPLETE too; its diff's is the thresholds' alone.
    assert_eq!(doc["collections"][0]["status"], "INCOMPLETE");
    assert_eq!(doc["collections"][0]["exit_code"], 1);
    assert_eq!(doc["collections"][0]["diff"]["verdict"]["exit_code"], 0);
    // A failing verdict is never told "no significant differences".
    assert!(
        !md.contains("No significant memory differences found"),
        "{md}"
    );
    assert_eq!(doc["collections"][0]["diff"]["coverage"]["only_base"], 60);
    assert_eq!(
        doc["collections"][0]["missing_in_diff"]
            .as_array()
            .unwrap()
            .len(),
        10
    );
    // A generous --max-missed lets the same diff pass.
    let (code, _, _) = cli(&[
        "memdiff",
        "--collection",
        "libraries.pmi",
        s(&base),
        s(&diff),
        "--max-missed",
        "40",
    ]);
    assert_eq!(code, 0);
}

#[test]
fn zero_matched_methods_fail() {
    let (base, diff) = (tmp("nomatch/base.jas"), tmp("nomatch/diff.jas"));
    log_at(&base, 5, 50, &[]);
    // Contexts 0..49 in both, but renumbered: write the diff through a different generator
    // seed and shift its contexts past the base's.
    log_at(&diff, 5, 50, &[]);
    let shifted = tmp("nomatch/shifted.jas");
    shift_contexts(&diff, &shifted, 1_000_000);
    let (code, out, err) = cli(&["memdiff", s(&base), s(&shifted)]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("no method matched (base 50 methods, diff 50)"),
        "{out}"
    );
    assert!(
        !out.contains("PASS"),
        "never PASS over 0 matched methods: {out}"
    );
}

/// Copies a log with every context number moved by `by`.
fn shift_contexts(from: &Path, to: &Path, by: i64) {
    let (records, _) = jitarena::log::read_all(from).unwrap();
    let file = std::fs::File::create(to).unwrap();
    let mut w = jitarena::log::LogWriter::new(std::io::BufWriter::new(file)).unwrap();
    for mut r in records {
        r.info.context += by;
        w.write_record(&r).unwrap();
    }
    w.finish().unwrap();
}

#[test]
fn a_log_cut_short_fails_unless_allowed() {
    let (base, diff) = (tmp("cut/base.jas"), tmp("cut/diff.jas"));
    log_at(&base, 6, 100, &[]);
    log_at(&diff, 6, 100, &[]);
    let bytes = std::fs::read(&diff).unwrap();
    std::fs::write(&diff, &bytes[..bytes.len() - 3]).unwrap();
    let (code, out, err) = cli(&["memdiff", s(&base), s(&diff), "--max-missed", "5"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("diff.jas: a log cut short"), "{out}");
    assert!(out.contains("--allow-truncated accepts it"), "{out}");
    let (code, out, err) = cli(&[
        "memdiff",
        s(&base),
        s(&diff),
        "--max-missed",
        "5",
        "--allow-truncated",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains("warning"), "the cut is still reported: {err}");
    // In the pull request's summary too.
    let md = tmp("cut/summary.md");
    let (code, _, _) = cli(&[
        "memdiff",
        s(&base),
        s(&diff),
        "--max-missed",
        "5",
        "--allow-truncated",
        "--md",
        s(&md),
    ]);
    assert_eq!(code, 0);
    let md = std::fs::read_to_string(&md).unwrap();
    let warnings = section(&md, "Warnings (1):");
    assert!(
        warnings.contains("diff.jas: the last record") && warnings.contains("cut short"),
        "{md}"
    );
}

/// Two directory names that differ only in bytes that are not UTF-8 are two collections: the
/// base's `bad\xFE` is not compared with the diff's `bad\xFF`, and a regression in one of them
/// is not hidden behind the other.
#[cfg(unix)]
#[test]
fn directory_names_differing_only_in_invalid_utf8_stay_apart() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let (base, diff) = (tmp("not-utf8/base"), tmp("not-utf8/diff"));
    let _ = std::fs::remove_dir_all(tmp("not-utf8"));
    for raw in [&b"bad\xfe"[..], &b"bad\xff"[..]] {
        let name = OsStr::from_bytes(raw);
        log_at(&base.join(name).join("a.jas"), 5, 40, &[]);
        let scale: &[(&str, f64)] = if raw[3] == 0xff {
            &[("LSRA", 300.0)]
        } else {
            &[]
        };
        log_at(&diff.join(name).join("a.jas"), 5, 40, scale);
    }
    let json = tmp("not-utf8.json");
    let (code, out, err) = cli(&[
        "memdiff",
        "--base-root",
        s(&base),
        "--diff-root",
        s(&diff),
        "--json",
        s(&json),
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let verdict = out.lines().last().unwrap();
    assert!(
        verdict.starts_with("FAIL (exit 1): regression in bad\\xFF: kind LSRA grew"),
        "{verdict}"
    );
    let json = std::fs::read_to_string(&json).unwrap();
    assert!(json.contains(r#""name":"bad\\xFE""#), "{json}");
}

/// --ignore-kind naming every kind leaves nothing to compare: the check cannot pass on zero
/// bytes against zero bytes.
#[test]
fn ignoring_every_kind_is_incomplete() {
    let (base, diff) = (tmp("ignore-all/base.jas"), tmp("ignore-all/diff.jas"));
    log_at(&base, 6, 40, &[]);
    log_at(&diff, 6, 40, &all_kinds(300.0));
    let mut args = vec!["memdiff", s(&base), s(&diff)];
    for k in jitarena_tools::gen::RYUJIT_KINDS.iter() {
        args.extend(["--ignore-kind", k]);
    }
    let (code, out, err) = cli(&args);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.lines()
            .last()
            .unwrap()
            .starts_with("INCOMPLETE (exit 1): incomplete: --ignore-kind left no byte"),
        "{out}"
    );
}

/// A diff collection that is a link to the base's (or the same log named on both sides) holds
/// no diff: it cannot pass as "no change".
#[cfg(unix)]
#[test]
fn a_collection_linked_to_the_other_side_is_not_compared() {
    let (base, diff) = roots("linked", None, &[]);
    let name = NAMES[1];
    std::fs::remove_dir_all(diff.join(name)).unwrap();
    std::os::unix::fs::symlink(base.join(name), diff.join(name)).unwrap();
    let (code, out, err) = cli(&["memdiff", "--base-root", s(&base), "--diff-root", s(&diff)]);
    assert_eq!(code, 1, "{out}{err}");
    let verdict = out.lines().last().unwrap();
    assert!(
        verdict.starts_with(&format!(
            "INCOMPLETE (exit 1): incomplete: collection {name}: "
        )),
        "{verdict}"
    );
    assert!(
        verdict.contains("on both the base and the diff side"),
        "{verdict}"
    );
    // A hard link of the base's log left in the diff's directory (a tree copied with
    // `cp -al`, where the diff JIT wrote nothing).
    std::fs::remove_file(diff.join(name)).unwrap();
    std::fs::create_dir_all(diff.join(name)).unwrap();
    std::fs::hard_link(
        base.join(name).join("shard0.jas"),
        diff.join(name).join("shard0.jas"),
    )
    .unwrap();
    let (code, out, err) = cli(&["memdiff", "--base-root", s(&base), "--diff-root", s(&diff)]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("on both the base and the diff side"), "{out}");
    // The same log given as both sides of a single pair.
    let log = base.join(NAMES[0]).join("shard0.jas");
    let (code, out, err) = cli(&["memdiff", s(&log), s(&log)]);
    assert_eq!(code, 1, "{out}{err}");
}

/// A growth too small for a float to see still shows as growth.
#[test]
fn a_tiny_growth_of_huge_totals_keeps_its_sign() {
    use jitarena_tools::report::diff::pdiff;
    assert_eq!(pdiff(1 << 60, (1 << 60) + 1), "+0.00%");
    assert_eq!(pdiff((1 << 60) + 1, 1 << 60), "-0.00%");
    assert_eq!(pdiff(20_000, 20_001), "+0.01%"); // exactly +0.005%
    assert_eq!(pdiff(20_000, 19_999), "-0.01%");
}

/// The long markdown's section of a collection that broke a coverage rule says so where its
/// verdict stands: not "No regression" and "PASS" above a list at its end.
#[test]
fn an_incomplete_collection_does_not_read_as_a_pass_in_the_long_markdown() {
    let (base, diff) = (
        tmp("incomplete-long/base.jas"),
        tmp("incomplete-long/diff.jas"),
    );
    log_at(&base, 7, 100, &[]);
    log_at(&diff, 7, 60, &[]); // the diff JIT "crashed"
    let long = tmp("incomplete-long.md");
    let (code, out, err) = cli(&["memdiff", s(&base), s(&diff), "--md-long", s(&long)]);
    assert_eq!(code, 1, "{out}{err}");
    let long = std::fs::read_to_string(&long).unwrap();
    let section = long
        .split("\n## Collection ")
        .nth(1)
        .expect("a collection section");
    assert!(!section.contains("**PASS**"), "{section}");
    assert!(!section.contains("✅"), "{section}");
    assert!(section.contains("**INCOMPLETE** (exit 1)"), "{section}");
    assert!(
        section.contains("the diff misses 40 of the base"),
        "{section}"
    );
}

/// A log put directly under a root is in no collection: an error naming it, not a check that
/// passes without it.
#[test]
fn a_file_directly_under_a_root_is_an_error() {
    let (base, diff) = roots("loose-file", None, &[]);
    log_at(&base.join("loose.jas"), 8, 30, &[]);
    log_at(&diff.join("loose.jas"), 8, 30, &all_kinds(300.0));
    let (code, out, err) = cli(&["memdiff", "--base-root", s(&base), "--diff-root", s(&diff)]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("loose.jas: a file directly under a root"),
        "{err}"
    );
    // A collection linked on both sides to artifacts that are not there (dangling links).
    #[cfg(unix)]
    {
        std::fs::remove_file(base.join("loose.jas")).unwrap();
        std::fs::remove_file(diff.join("loose.jas")).unwrap();
        for root in [&base, &diff] {
            std::os::unix::fs::symlink(tmp("loose-file/nowhere"), root.join("gone.run")).unwrap();
        }
        let (code, out, err) = cli(&["memdiff", "--base-root", s(&base), "--diff-root", s(&diff)]);
        assert_eq!(code, 2, "{out}{err}");
        assert!(
            err.contains("gone.run: neither a directory nor a file"),
            "{err}"
        );
    }
}

/// A collection named "" would show as an empty cell and `collection : ...` in the verdict.
#[test]
fn an_empty_collection_name_is_bad_usage() {
    let (base, diff) = (tmp("empty-name/base.jas"), tmp("empty-name/diff.jas"));
    log_at(&base, 9, 20, &[]);
    log_at(&diff, 9, 20, &[]);
    let (code, out, err) = cli(&["memdiff", "--collection", "", s(&base), s(&diff)]);
    assert_eq!(code, 2, "{out}{err}");
}

/// A share of missed methods just above the limit does not read as equal to it.
#[test]
fn a_missed_share_just_above_the_limit_reads_above_it() {
    let (base, diff) = (tmp("just-above/base.jas"), tmp("just-above/diff.jas"));
    log_at(&base, 10, 299, &[]);
    log_at(&diff, 10, 296, &[]); // 3 of 299 missed: 1.0033%
    let (code, out, err) = cli(&["memdiff", s(&base), s(&diff), "--max-missed", "1"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("the diff misses 3 of the base's 299 methods (1.003%), above --max-missed 1%"),
        "{out}"
    );
}

/// A diff side that counted nothing over its matched methods (a JIT built without counters)
/// is no measurement: its -100% is not a pass.
#[test]
fn a_side_that_counted_no_byte_is_incomplete() {
    std::fs::create_dir_all(tmp("no-bytes")).unwrap();
    let mut logs = Vec::new();
    for (side, bytes) in [("base", 4000), ("diff", 0)] {
        let mut trace = String::new();
        for i in 0..40 {
            trace.push_str(&format!("method {i} Tier1 M{i}\n"));
            if bytes > 0 {
                trace.push_str(&format!("alloc LSRA {bytes}\n"));
            }
        }
        let (path, log) = (
            tmp(&format!("no-bytes/{side}.txt")),
            tmp(&format!("no-bytes/{side}.jas")),
        );
        std::fs::write(&path, trace).unwrap();
        let (code, _, err) = cli(&["replay", s(&path), "-o", s(&log)]);
        assert_eq!(code, 0, "{err}");
        logs.push(log);
    }
    let (code, out, err) = cli(&["memdiff", s(&logs[0]), s(&logs[1])]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.lines().last().unwrap().starts_with(
            "INCOMPLETE (exit 1): incomplete: the diff counted no byte in its 40 matched methods"
        ),
        "{out}"
    );
}

/// A shard linked on both sides to a log that is not there is an error, not a shard both
/// sides leave out alike (which the coverage check cannot see).
#[cfg(unix)]
#[test]
fn a_dangling_shard_link_is_an_error() {
    let (base, diff) = roots("dangling-shard", None, &[]);
    for root in [&base, &diff] {
        std::os::unix::fs::symlink(
            tmp("dangling-shard/nowhere.jas"),
            root.join(NAMES[0]).join("shard1.jas"),
        )
        .unwrap();
    }
    let (code, out, err) = cli(&["memdiff", "--base-root", s(&base), "--diff-root", s(&diff)]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("shard1.jas: cannot be read"), "{err}");
}

/// A report path that is an input, or inside an input directory, is refused before anything
/// is written: the diff log is not overwritten by the JSON.
#[test]
fn a_report_over_an_input_is_refused() {
    let (base, diff) = (tmp("report-over/base.jas"), tmp("report-over/diff.jas"));
    log_at(&base, 12, 20, &[]);
    log_at(&diff, 12, 20, &[]);
    let before = std::fs::read(&diff).unwrap();
    let (code, out, err) = cli(&["memdiff", s(&base), s(&diff), "--json", s(&diff)]);
    assert_eq!(code, 2, "{out}{err}");
    assert_eq!(std::fs::read(&diff).unwrap(), before);
    let (broot, droot) = roots("report-inside", None, &[]);
    let md = broot.join(NAMES[0]).join("summary.md");
    let (code, out, err) = cli(&[
        "memdiff",
        "--base-root",
        s(&broot),
        "--diff-root",
        s(&droot),
        "--md",
        s(&md),
    ]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(!md.exists());
}

fn check_expected(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/expected")
        .join(name);
    if std::env::var("JITARENA_BLESS").as_deref() == Ok("1") {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    // The checked-in summary holds the tmp paths of no one: compare it whole.
    assert_eq!(
        actual,
        expected,
        "{} differs (JITARENA_BLESS=1 rewrites it)",
        path.display()
    );
}

#[test]
fn an_ignored_kind_no_log_names_is_an_error_with_the_nearest_names() {
    let (base, diff) = (tmp("ignore/base.jas"), tmp("ignore/diff.jas"));
    log_at(&base, 8, 30, &[]);
    log_at(&diff, 8, 30, &[]);
    let (code, _, err) = cli(&[
        "memdiff",
        s(&base),
        s(&diff),
        "--ignore-kind",
        "DebugOnyl",
        "-q",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--ignore-kind DebugOnyl: no log names this kind; did you mean DebugOnly"),
        "{err}"
    );
    let (code, _, err) = cli(&["memdiff", s(&base), s(&diff), "--ignore-kind", "LSRA", "-q"]);
    assert!(code == 0 && !err.contains("no log names"), "{err}");
    // The .NET JIT's spelling, and another case, name the same kind.
    for name in ["CMK_DebugOnly", "debugonly"] {
        let (code, _, err) = cli(&["memdiff", s(&base), s(&diff), "--ignore-kind", name, "-q"]);
        assert!(code == 0 && err.is_empty(), "{name}: {err}");
    }
}
