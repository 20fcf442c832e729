//! memdiff on SuperPMI's own output: its per-context details files (`superpmi -details`), one
//! per collection, with the compile results, the MinOpts flag and the `BytesAllocated` metric,
//! generated here in SuperPMI's layout.

mod common;

use std::path::{Path, PathBuf};

use common::{cli, s, tmp};

/// How one JIT's compile of a context ended.
#[derive(Clone, Copy, PartialEq)]
enum R {
    Success,
    Miss,
    Error,
}

/// One context of a details file.
struct Ctx {
    context: u64,
    name: String,
    min_opts: bool,
    base: (R, u64),
    diff: (R, u64),
}

/// A field as SuperPMI prints a method's name: always quoted, a quote doubled.
fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// Writes `rows` as SuperPMI's details file: its header, its metric columns in its order
/// (a few of them), `True`/`False` flags, and a name quoted whatever it holds.
fn details_file(dir: &Path, collection: &str, rows: &[Ctx]) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(format!("{collection}_details.csv"));
    let mut text = String::from(
        "Context,Context size,Method full name,Tier name,Base result,Diff result,MinOpts,Has diff,Base size,Diff size,Base instructions,Diff instructions,Base PerfScore,Diff PerfScore,Base BytesAllocated,Diff BytesAllocated\n",
    );
    let word = |r: R| match r {
        R::Success => "Success",
        R::Miss => "Miss",
        R::Error => "Error",
    };
    for c in rows {
        let flag = |b: bool| if b { "True" } else { "False" };
        let tier = if c.min_opts { "Tier0" } else { "Tier1" };
        // A compile that did not succeed reports 0 for its metrics.
        let bytes = |(r, b): (R, u64)| if r == R::Success { b } else { 0 };
        text.push_str(&format!(
            "{},{},{},{tier},{},{},{},{},{},{},{},{},{:.6},{:.6},{},{}\n",
            c.context,
            1000 + c.context,
            quoted(&c.name),
            word(c.base.0),
            word(c.diff.0),
            flag(c.min_opts),
            flag(c.base.1 != c.diff.1),
            100 + c.context,
            100 + c.context,
            50_000 + c.context,
            50_000 + c.context,
            12.5,
            12.5,
            bytes(c.base),
            bytes(c.diff),
        ));
    }
    std::fs::write(&path, text).unwrap();
    path
}

/// `n` contexts compiled by both JITs, the diff's bytes `grow` percent above the base's; a
/// third in MinOpts; generic names with commas and quotes.
fn contexts(n: u64, seed: u64, grow: f64) -> Vec<Ctx> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let base = 20_000 + x % 400_000;
            let diff = (base as f64 * (1.0 + grow / 100.0)).round() as u64;
            Ctx {
                context: i + 1,
                name: format!(
                    "System.Collections.Generic.Dictionary`2[System.__Canon,System.Int32]:TryInsert{i}(System.__Canon,int,ubyte):bool:this \"q\""
                ),
                min_opts: i % 3 == 0,
                base: (R::Success, base),
                diff: (R::Success, diff),
            }
        })
        .collect()
}

fn json_of(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `memdiff --csv FILE` with its JSON and markdown reports written in `dir`: the exit code,
/// the JSON document, the markdown, and what the command printed.
fn memdiff_reports(dir: &Path, file: &Path) -> (i32, serde_json::Value, String, String) {
    let (json, md) = (dir.join("report.json"), dir.join("report.md"));
    let (code, out, err) = cli(&[
        "memdiff",
        "--csv",
        s(file),
        "--json",
        s(&json),
        "--md",
        s(&md),
    ]);
    let md = std::fs::read_to_string(&md).unwrap();
    (code, json_of(&json), md, out + &err)
}

#[test]
fn a_failing_diff_compile_fails_the_check_and_is_never_a_shrinking_method() {
    let dir = tmp("one");
    let mut rows = contexts(200, 1, 1.0);
    // Context 5 fails in the diff JIT: SuperPMI writes 0 bytes for it.
    rows[4].diff = (R::Error, 0);
    let base_of_5 = rows[4].base.1;
    // Contexts 7 and 8 are missed by both JITs (the collection lacks their data).
    rows[6].base = (R::Miss, 0);
    rows[6].diff = (R::Miss, 0);
    rows[7].base = (R::Miss, 0);
    rows[7].diff = (R::Miss, 0);
    let file = details_file(&dir, "libraries.pmi.windows.x64.checked.mch", &rows);
    let (code, doc, md, printed) = memdiff_reports(&dir, &file);
    assert_eq!(code, 1, "{printed}");
    let c = &doc["collections"][0];
    let cov = &c["diff"]["coverage"];
    assert_eq!(cov["failing_diff"], 1);
    assert_eq!(cov["failing_diff_only"], 1);
    assert_eq!(cov["failing_base"], 0);
    assert_eq!(cov["missed_both"], 2);
    assert_eq!(c["failing_in_diff"][0]["context"], 5);
    assert_eq!(c["failing_in_diff"][0]["bytes"], base_of_5);
    // Compared: the 197 contexts both JITs compiled, and nothing else.
    let both: Vec<&Ctx> = rows
        .iter()
        .filter(|r| r.base.0 == R::Success && r.diff.0 == R::Success)
        .collect();
    assert_eq!(both.len(), 197);
    assert_eq!(cov["matched"], 197);
    let overall = &c["diff"]["groups"][0];
    assert_eq!(
        overall["base"]["bytes"],
        both.iter().map(|r| r.base.1).sum::<u64>()
    );
    assert_eq!(
        overall["diff"]["bytes"],
        both.iter().map(|r| r.diff.1).sum::<u64>()
    );
    let min = both.iter().filter(|r| r.min_opts).count();
    let group = |name: &str| {
        c["diff"]["groups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["name"] == name)
            .map_or(0, |g| g["methods"].as_u64().unwrap())
    };
    assert_eq!(group("MinOpts"), min as u64);
    assert_eq!(group("FullOpts"), (both.len() - min) as u64);
    // No method shrank: the failing compile is not a -100% method.
    assert_eq!(c["diff"]["distribution"]["shrank"], 0);
    assert!(c["diff"]["methods"]["shrinkage"]
        .as_array()
        .unwrap()
        .is_empty());
    // The verdict names the rule, and no other rule broke.
    let failures = doc["verdict"]["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(failures[0]["rule"], "failing_compiles");
    assert_eq!(failures[0]["subject"], "diff");
    let head: Vec<&str> = md.lines().take(3).collect();
    assert!(
        head[2].starts_with("**INCOMPLETE**: the diff JIT failed to compile 1 context"),
        "{md}"
    );
    assert!(md.contains(&format!(
        "Diffs are based on 197 contexts ({min} MinOpts, {} FullOpts).",
        both.len() - min
    )));
    assert!(md.contains("FAILING compiles: base: 0, diff: 1"), "{md}");
    assert!(md.contains("MISSED contexts: base: 2"), "{md}");
    assert!(md.contains("Kinds and phases: not in a CSV"), "{md}");
    // Accepted on request: the check passes on its thresholds.
    let (code, out, err) = cli(&[
        "memdiff",
        "--csv",
        s(&file),
        "--allow-failing-compiles",
        "-q",
    ]);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn contexts_missed_by_both_sides_are_reported_and_pass() {
    let dir = tmp("missed");
    let mut rows = contexts(100, 2, 0.5);
    for r in rows.iter_mut().skip(10).take(3) {
        r.base = (R::Miss, 0);
        r.diff = (R::Miss, 0);
    }
    let file = details_file(&dir, "benchmarks.run.linux.x64.checked.mch", &rows);
    let md = dir.join("missed.md");
    let (code, out, err) = cli(&["memdiff", "--csv", s(&file), "--md", s(&md)]);
    assert_eq!(code, 0, "{out}{err}");
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(
        md.contains("MISSED contexts: base: 3 (3.00%), diff: 3 (3.00%)"),
        "{md}"
    );
    assert!(md.contains("Diffs are based on 97 contexts"), "{md}");
}

#[test]
fn a_context_missed_on_one_side_counts_against_max_missed() {
    let dir = tmp("one-side");
    let mut rows = contexts(100, 3, 0.0);
    for r in rows.iter_mut().take(5) {
        r.diff = (R::Miss, 0);
    }
    let file = details_file(&dir, "coreclr_tests.run.mch", &rows);
    let json = dir.join("one-side.json");
    let (code, out, err) = cli(&["memdiff", "--csv", s(&file), "--json", s(&json), "-q"]);
    assert_eq!(code, 1, "{out}{err}");
    let doc = json_of(&json);
    assert_eq!(doc["verdict"]["failures"][0]["rule"], "max_missed");
    assert_eq!(doc["verdict"]["failures"][0]["subject"], "diff");
    let (code, _, err) = cli(&["memdiff", "--csv", s(&file), "--max-missed", "5%", "-q"]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn three_collections_fail_on_the_one_over_the_threshold_and_name_it() {
    let dir = tmp("three");
    let names = [
        "benchmarks.run.windows.x64.checked.mch",
        "libraries.pmi.windows.x64.checked.mch",
        "realworld.run.windows.x64.checked.mch",
    ];
    let files: Vec<PathBuf> = names
        .iter()
        .zip([2.0, 30.0, -1.0])
        .enumerate()
        .map(|(i, (name, grow))| details_file(&dir, name, &contexts(150, i as u64 + 7, grow)))
        .collect();
    let json = dir.join("three.json");
    let mut args = vec!["memdiff", "--json", s(&json), "-q"];
    for f in &files {
        args.extend(["--csv", s(f)]);
    }
    let (code, out, err) = cli(&args);
    assert_eq!(code, 1, "{out}{err}");
    let doc = json_of(&json);
    let status = |name: &str| {
        doc["collections"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("no collection {name}"))["status"]
            .clone()
    };
    assert_eq!(status(names[0]), "PASS");
    assert_eq!(status(names[1]), "FAIL");
    assert_eq!(status(names[2]), "PASS");
    // The total fails, and so does each tier, judged on its own (both grew 30%).
    let failures = doc["verdict"]["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 3, "{failures:?}");
    for (f, subject) in failures.iter().zip(["total", "MinOpts", "FullOpts"]) {
        assert_eq!(f["collection"], names[1]);
        assert_eq!(f["rule"], "fail_above");
        assert_eq!(f["subject"], subject);
    }
    assert!(doc["verdict"]["headline"]
        .as_str()
        .unwrap()
        .starts_with(&format!(
            "collection {}: total bytes grew +30.00%",
            names[1]
        )));
    // The same collection twice is refused.
    let (code, _, err) = cli(&["memdiff", "--csv", s(&files[0]), "--csv", s(&files[0])]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn another_metric_and_named_columns_are_read_and_bad_results_refused() {
    let dir = tmp("metric");
    let rows = contexts(40, 11, 3.0);
    let file = details_file(&dir, "x.mch", &rows);
    // PerfScore is the same on both sides: no change.
    let (code, out, err) = cli(&["memdiff", "--csv", s(&file), "--metric", "PerfScore"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("+0.00%") || out.contains("0.00%"), "{out}");
    let (code, _, err) = cli(&["memdiff", "--csv", s(&file), "--metric", "Nope"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("no column \"Base Nope\"") && err.contains("--metric"),
        "{err}"
    );
    // A result SuperPMI never writes.
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replacen(",Success,", ",Maybe,", 1);
    let bad = dir.join("bad_details.csv");
    std::fs::write(&bad, text).unwrap();
    let (code, _, err) = cli(&["memdiff", "--csv", s(&bad)]);
    assert_eq!(code, 2);
    assert!(
        err.contains("bad_details.csv:2:") && err.contains("\"Maybe\""),
        "{err}"
    );
}

#[test]
fn a_context_missed_on_one_side_and_failing_on_the_other_is_counted_on_each_side() {
    let dir = tmp("miss-error");
    let mut rows = contexts(100, 4, 0.0);
    rows[0].base = (R::Miss, 0);
    rows[0].diff = (R::Error, 0);
    rows[1].base = (R::Error, 0);
    rows[1].diff = (R::Miss, 0);
    let file = details_file(&dir, "aspnet.run.windows.x64.checked.mch", &rows);
    let (code, doc, md, printed) = memdiff_reports(&dir, &file);
    // Nothing was measured on either side of those two: no failing compile the change
    // brought, no one-sided miss.
    assert_eq!(code, 0, "{printed}");
    let cov = &doc["collections"][0]["diff"]["coverage"];
    assert_eq!(
        (cov["failing_base"].as_u64(), cov["failing_diff"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(cov["failing_diff_only"], 0);
    assert_eq!(cov["failing_base_only"], 0);
    assert_eq!(cov["missed_base_failing_diff"], 1);
    assert_eq!(cov["missed_diff_failing_base"], 1);

    // Each side's misses as the file has them: one Miss on each side.
    assert!(
        md.contains("MISSED contexts: base: 1 (1.00%), diff: 1 (1.00%)"),
        "{md}"
    );
    assert!(md.contains("FAILING compiles: base: 1, diff: 1"), "{md}");
    assert!(md.contains("Diffs are based on 98 contexts"), "{md}");
    // A PASS over a CSV says nothing of kinds, which a CSV does not have.
    let head: String = md.lines().take(4).collect();
    assert!(head.contains("**PASS**"), "{md}");
    assert!(!head.contains("kind"), "{head}");
}

#[test]
fn a_context_given_twice_is_a_duplicate_and_each_of_its_rows_is_compared() {
    let dir = tmp("dup-rows");
    let mut rows = contexts(50, 5, 0.0);
    let mut again = contexts(1, 5, 0.0).remove(0);
    again.context = rows[0].context;
    again.diff = (R::Success, again.base.1 + 8000);
    let base_sum: u64 = rows.iter().map(|r| r.base.1).sum::<u64>() + again.base.1;
    let diff_sum: u64 = rows.iter().map(|r| r.diff.1).sum::<u64>() + again.diff.1;
    rows.push(again);
    let file = details_file(&dir, "dup.mch", &rows);
    let json = dir.join("dup.json");
    let (code, out, err) = cli(&["memdiff", "--csv", s(&file), "--json", s(&json), "-q"]);
    assert_eq!(code, 1, "{out}{err}");
    let doc = json_of(&json);
    assert_eq!(doc["verdict"]["failures"][0]["rule"], "duplicates");
    let (code, out, err) = cli(&[
        "memdiff",
        "--csv",
        s(&file),
        "--json",
        s(&json),
        "--allow-duplicates",
        "-q",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let doc = json_of(&json);
    let overall = &doc["collections"][0]["diff"]["groups"][0];
    assert_eq!(overall["methods"], 51);
    assert_eq!(overall["base"]["bytes"], base_sum);
    assert_eq!(overall["diff"]["bytes"], diff_sum);
    assert_eq!(doc["collections"][0]["diff"]["coverage"]["only_base"], 0);
}

#[test]
fn sums_past_2_to_the_64_over_collections_and_huge_falls_are_handled() {
    let dir = tmp("huge");
    let one = |name: &str, base: u64, diff: u64| {
        let mut rows = contexts(1, 6, 0.0);
        rows[0].base = (R::Success, base);
        rows[0].diff = (R::Success, diff);
        details_file(&dir, name, &rows)
    };
    // Each file fits; together they pass 2^64.
    let (a, b) = (
        one("a.mch", 10_000_000_000_000_000_000, 1),
        one("b.mch", 10_000_000_000_000_000_000, 1),
    );
    let (code, out, err) = cli(&["memdiff", "--csv", s(&a), "--csv", s(&b), "-q"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("add up past 2^64"), "{err}");
    // A method that falls by more than 2^63 bytes: a report, not a crash.
    let json = dir.join("fall.json");
    let (code, out, err) = cli(&["memdiff", "--csv", s(&a), "--json", s(&json), "-q"]);
    assert_eq!(code, 0, "{out}{err}");
    let doc = json_of(&json);
    let fall = &doc["collections"][0]["diff"]["methods"]["shrinkage"][0]["delta"];
    assert!(fall.as_f64().is_some_and(|d| d < -9.0e18), "{fall}");
}

/// A details file cut short inside its last row's number (a replay killed while writing it) is
/// INCOMPLETE, named as a CSV file cut short, as a log cut short is: read as whole, its
/// truncated number turned a regression into a pass.
#[test]
fn a_details_file_cut_short_is_incomplete_and_named_as_such() {
    let dir = tmp("cut");
    let mut rows = contexts(50, 3, 40.0);
    rows[49].diff.1 = 90_000_000; // the regression's largest part, in the row the cut hits
    let file = details_file(&dir, "cut.mch", &rows);
    let whole = std::fs::read_to_string(&file).unwrap();
    // Cut inside the last cell: `90000000\n` becomes `90`.
    std::fs::write(&file, &whole[..whole.len() - 7]).unwrap();
    let (code, doc, md, printed) = memdiff_reports(&dir, &file);
    assert_eq!(code, 1, "{printed}");
    assert_eq!(doc["collections"][0]["diff"]["coverage"]["matched"], 49);
    let failures = doc["verdict"]["failures"].as_array().unwrap();
    assert!(
        failures.iter().any(|f| f["rule"] == "truncated"
            && f["sentence"]
                .as_str()
                .unwrap()
                .contains("a CSV file cut short (its last line has no line ending")),
        "{failures:?}"
    );
    assert!(md.contains("**INCOMPLETE, FAIL**"), "{md}");
    // Accepted on request: judged on the rows that are whole.
    let (code, out, err) = cli(&["memdiff", "--csv", s(&file), "--allow-truncated", "-q"]);
    assert_eq!(code, 1, "{out}{err}"); // 40% growth still fails
    let (code, out, err) = cli(&[
        "memdiff",
        "--csv",
        s(&file),
        "--allow-truncated",
        "--fail-above",
        "50",
        "-q",
    ]);
    assert_eq!(code, 0, "{out}{err}");
}

/// The top lists cost O(n log k): `--top 200000` over 200,000 rows (each context given twice,
/// a quarter of the rows on one side only) takes a few times as long as `--top 10`, not the
/// hundredfold that keeping each list sorted by insertion and finding each duplicate by a
/// search of the list took (9.5 s against 0.12 s, release build).
#[test]
fn the_top_lists_at_200k_cost_a_few_times_those_at_10() {
    use std::fmt::Write as _;
    let mut text = String::from("Context,Method,Base bytes,Diff bytes\n");
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in 0..200_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let base = 1_000 + x % 500_000;
        let diff = base / 2 + x % base;
        let context = i / 2; // each context in two rows
        let (base, diff) = match i % 8 {
            1 => (base.to_string(), String::new()),
            3 => (String::new(), diff.to_string()),
            _ => (base.to_string(), diff.to_string()),
        };
        let _ = writeln!(text, "{context},M{i},{base},{diff}");
    }
    let file = tmp("top-200k.csv");
    std::fs::write(&file, text).unwrap();
    let time = |top: &str| {
        (0..2)
            .map(|_| {
                let start = std::time::Instant::now();
                let (code, out, err) = cli(&[
                    "memdiff",
                    "--csv",
                    s(&file),
                    "--base-col",
                    "Base bytes",
                    "--diff-col",
                    "Diff bytes",
                    "--top",
                    top,
                    "--allow-duplicates",
                    "--max-missed",
                    "100",
                    "-q",
                ]);
                assert_eq!(code, 0, "{out}{err}");
                start.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min)
    };
    let (few, all) = (time("10"), time("200000"));
    assert!(
        all < 8.0 * few.max(0.05),
        "--top 200000: {all:.2} s, --top 10: {few:.2} s"
    );
}

/// A metric or column named by nothing is bad usage: `--metric ''` read the columns `Base `
/// and `Diff `, which a file with columns named `Base` and `Diff` holds.
#[test]
fn an_empty_metric_or_column_name_is_bad_usage() {
    let dir = tmp("empty-names");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("plain.csv");
    std::fs::write(&file, "Method,Base,Diff\nA,1,2\n").unwrap();
    for args in [
        &["--metric", ""][..],
        &["--metric", "  "],
        &["--base-col", "", "--diff-col", "Diff"],
        &["--base-col", "Base", "--diff-col", ""],
    ] {
        let (code, out, err) = cli(&[&["memdiff", "--csv", s(&file), "-q"][..], args].concat());
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(
            err.contains("expected a name, not an empty one"),
            "{args:?}: {err}"
        );
    }
}
