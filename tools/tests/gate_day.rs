//! The gate in a JIT team's real day: kinds a pull request adds, splits or renames; contexts
//! seen twice; options mistyped; and a verdict that says why first.

mod common;

use std::path::PathBuf;

use common::{cli, counts, s, schema, tmp, written};
use jitarena::log::LogWriter;

/// Methods per log.
const METHODS: usize = 50;

/// A log of [`METHODS`] methods over `kinds`, the `i`th method's kind `k` holding
/// `bytes(i)[k]` bytes, all in one phase.
fn log_of(name: &str, kinds: &[&str], bytes: impl Fn(usize) -> Vec<u64>) -> PathBuf {
    log_n(name, kinds, METHODS, bytes)
}

/// As [`log_of`], of the first `methods` methods.
fn log_n(name: &str, kinds: &[&str], methods: usize, bytes: impl Fn(usize) -> Vec<u64>) -> PathBuf {
    let sch = schema(kinds, &["Main"]);
    let records: Vec<_> = (0..methods)
        .map(|i| {
            let b = bytes(i);
            let per_kind = b
                .iter()
                .enumerate()
                .filter(|(_, &v)| v > 0)
                .map(|(k, &v)| (k as u32, v, v / 16))
                .collect();
            let total = b.iter().sum();
            (
                sch.clone(),
                format!("Test:Method{i}()"),
                counts(per_kind, vec![(0, total)]),
            )
        })
        .collect();
    written(name, &records, &["FullOpts", "MinOpts"])
}

/// The base: ASTNode, BasicBlock and LSRA, growing with the method.
fn base_log(name: &str) -> PathBuf {
    log_of(name, &["ASTNode", "BasicBlock", "LSRA"], |i| {
        let n = 1 + i as u64;
        vec![5_000 * n, 3_000 * n, 2_000 * n]
    })
}

#[test]
fn a_kind_that_takes_over_another_passes_and_a_real_growth_still_fails() {
    let base = base_log("kinds-base.jas");
    // BasicBlock's allocations move to a new kind: the total does not move.
    let moved = log_of(
        "kinds-moved.jas",
        &["ASTNode", "BasicBlock", "LSRA", "BlockSet"],
        |i| {
            let n = 1 + i as u64;
            vec![5_000 * n, 0, 2_000 * n, 3_000 * n]
        },
    );
    let md = tmp("kinds-moved.md");
    let (code, out, err) = cli(&["memdiff", s(&base), s(&moved), "--md", s(&md)]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("PASS"), "{out}");
    let md = std::fs::read_to_string(&md).unwrap();
    let row = |name: &str| {
        md.lines()
            .find(|l| l.starts_with(&format!("| {name} |")))
            .unwrap_or_else(|| panic!("no row of {name} in\n{md}"))
            .to_string()
    };
    assert!(row("BlockSet").contains("appeared"), "{md}");
    assert!(row("BasicBlock").contains("vanished"), "{md}");
    // The passing rule does not say that no kind grew under a kind that appeared with more
    // bytes than its floor: it names the new kind, judged through the total.
    let blockset = 3_000 * (METHODS * (METHODS + 1) / 2) as u64;
    for text in [&out, &md] {
        assert!(!text.contains("no kind of at least"), "{text}");
        assert!(
            text.contains(&format!(
                "kind new in the diff, judged through the total: BlockSet ({} bytes)",
                jitarena_tools::report::thousands(blockset)
            )),
            "{text}"
        );
    }

    // The same, and LSRA, on both sides, grows by 40%: that fails, naming LSRA alone.
    let grown = log_of(
        "kinds-grown.jas",
        &["ASTNode", "BasicBlock", "LSRA", "BlockSet"],
        |i| {
            let n = 1 + i as u64;
            vec![5_000 * n, 0, 2_800 * n, 3_000 * n]
        },
    );
    let json = tmp("kinds-grown.json");
    let (code, out, err) = cli(&["memdiff", s(&base), s(&grown), "--json", s(&json)]);
    assert_eq!(code, 1, "{out}{err}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let failures = doc["verdict"]["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 1, "{failures:?}");
    let f = &failures[0];
    assert_eq!(f["rule"], "kind_fail_above");
    assert_eq!(f["subject"], "LSRA");
    assert_eq!(f["percent"], 40);
    assert_eq!(f["limit"], 25);
    assert_eq!(f["base"], 2_000 * (METHODS * (METHODS + 1) / 2) as u64);
    assert!(f["sentence"]
        .as_str()
        .unwrap()
        .starts_with("kind LSRA grew +40.00%"));
}

#[test]
fn a_shard_given_twice_is_reported_as_duplicates_never_as_missing_methods() {
    let dir = tmp("twice");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("base")).unwrap();
    let shard = base_log("twice-shard.jas");
    for name in ["shard0.jas", "shard0-retry.jas"] {
        std::fs::copy(&shard, dir.join("base").join(name)).unwrap();
    }
    let diff = base_log("twice-diff.jas");
    let (json, md) = (dir.join("twice.json"), dir.join("twice.md"));
    let base_dir = dir.join("base");
    let args = ["memdiff", "--base", s(&base_dir), "--diff", s(&diff)];
    let (code, out, err) = cli(&[&args[..], &["--json", s(&json), "--md", s(&md)]].concat());
    assert_eq!(code, 1, "{out}{err}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let c = &doc["collections"][0];
    let cov = &c["diff"]["coverage"];
    assert_eq!(cov["matched"], METHODS);
    assert_eq!(cov["only_base"], 0, "no method is missing from the diff");
    assert_eq!(cov["duplicates_base"], METHODS);
    assert_eq!(cov["duplicates_diff"], 0);
    assert!(c["missing_in_diff"].as_array().unwrap().is_empty());
    let example = &c["duplicates"][0];
    assert_eq!(example["side"], "base");
    let files: Vec<&str> = example["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
    assert!(files[0].ends_with("shard0-retry.jas") && files[1].ends_with("shard0.jas"));
    assert_eq!(
        (example["records"].as_u64(), example["more_files"].as_u64()),
        (Some(2), Some(0))
    );
    let failures = doc["verdict"]["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(failures[0]["rule"], "duplicates");
    assert_eq!(failures[0]["subject"], "base");
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(!md.contains("compiled on one side only"), "{md}");
    assert!(md.contains("DUPLICATE contexts"), "{md}");
    // Accepted on request: the k-th record of a context against the k-th of the other side.
    let (code, out, err) = cli(&[&args[..], &["--allow-duplicates", "-q"]].concat());
    assert_eq!(code, 0, "{out}{err}");
    // merge says so too.
    let merged = dir.join("merged.jas");
    let (code, _, err) = cli(&["merge", "-o", s(&merged), s(&base_dir)]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("the merged log holds 50 records of a context already merged"),
        "{err}"
    );
}

#[test]
fn options_are_strict_and_percentages_take_a_percent_sign() {
    let base = base_log("options-base.jas");
    let (code, out, err) = cli(&[
        "memdiff",
        s(&base),
        s(&base),
        "--fail-above",
        "5%",
        "--kind-fail-above",
        "30%",
        "--max-missed",
        "0.5%",
        "-q",
    ]);
    // The same file on both sides is refused as INCOMPLETE, after the options are read.
    assert_eq!(code, 1, "{out}{err}");
    for (flag, value, says) in [
        ("--max-missed", "200", "expected a share from 0 to 100%"),
        ("--max-missed=-1", "", "expected a share from 0 to 100%"),
        (
            "--fail-above=-5%",
            "",
            "expected a percentage of at least 0",
        ),
        (
            "--fail-above",
            "five",
            "expected a percentage of at least 0",
        ),
        (
            "--kind-fail-above",
            "5%%",
            "expected a percentage of at least 0",
        ),
        // No sign: `-0` was taken, and shown as "-0%".
        ("--fail-above=-0", "", "expected a percentage of at least 0"),
        ("--max-missed=-0", "", "expected a share from 0 to 100%"),
    ] {
        let args = ["memdiff", s(&base), s(&base), flag, value];
        let (code, _, err) = cli(&args[..args.len() - usize::from(value.is_empty())]);
        assert_eq!(code, 2, "{flag} {value}: {err}");
        assert!(err.contains(says), "{flag} {value}: {err}");
    }
    let other = base_log("options-other.jas");
    let (code, _, err) = cli(&["memdiff", s(&base), s(&other), "--ignore-kind", "LSRa_"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("did you mean LSRA"), "{err}");
}

/// The first lines of a summary: its heading, then the verdict and why.
fn summary_head(args: &[&str], name: &str) -> (i32, Vec<String>) {
    let md = tmp(&format!("{name}.md"));
    let (code, _, err) = cli(&[args, &["--md", s(&md), "-q"]].concat());
    assert!(code == 0 || code == 1, "{err}");
    let text = std::fs::read_to_string(&md).unwrap();
    (code, text.lines().take(3).map(String::from).collect())
}

#[test]
fn the_summary_opens_with_the_verdict_and_its_reason() {
    let base = base_log("head-base.jas");
    let grown = log_of("head-grown.jas", &["ASTNode", "BasicBlock", "LSRA"], |i| {
        let n = 1 + i as u64;
        vec![5_000 * n, 3_000 * n, 3_000 * n]
    });
    let (code, head) = summary_head(&["memdiff", s(&base), s(&grown)], "head-fail");
    assert_eq!(code, 1);
    assert_eq!(head[0], "## jitarena memdiff: ❌ FAIL (exit 1)");
    assert!(
        head[2].starts_with("**FAIL**: kind LSRA grew +50.00%"),
        "{head:?}"
    );
    assert!(head[2].contains("above --kind-fail-above 25%"), "{head:?}");

    // The diff JIT stopped after 40 methods of 50.
    let fewer = log_n(
        "head-fewer.jas",
        &["ASTNode", "BasicBlock", "LSRA"],
        40,
        |i| {
            let n = 1 + i as u64;
            vec![5_000 * n, 3_000 * n, 2_000 * n]
        },
    );
    let (code, head) = summary_head(&["memdiff", s(&base), s(&fewer)], "head-incomplete");
    assert_eq!(code, 1);
    assert_eq!(head[0], "## jitarena memdiff: ❌ INCOMPLETE (exit 1)");
    assert!(
        head[2].starts_with("**INCOMPLETE**: the diff misses 10 of the base's 50 methods"),
        "{head:?}"
    );

    let same = base_log("head-same.jas");
    let (code, head) = summary_head(&["memdiff", s(&base), s(&same)], "head-pass");
    assert_eq!(code, 0);
    assert_eq!(head[0], "## jitarena memdiff: ✅ PASS (exit 0)");
    assert!(
        head[2].starts_with("**PASS**: no regression: total +0.00% (limit +25%)"),
        "{head:?}"
    );
}

/// A log of the base's methods `range`, its records after a build frame naming `build`.
fn built_log(name: &str, build: Option<&str>, range: std::ops::Range<usize>) -> PathBuf {
    let sch = schema(&["ASTNode", "LSRA"], &["Main"]);
    let path = tmp(name);
    let mut w = LogWriter::new(std::fs::File::create(&path).unwrap()).unwrap();
    if let Some(build) = build {
        w.note_build(build).unwrap();
        w.note_build(build).unwrap(); // named once
    }
    for i in range {
        let n = 1 + i as u64;
        let c = counts(
            vec![(0, 5_000 * n, 10), (1, 2_000 * n, 4)],
            vec![(0, 7_000 * n)],
        );
        w.write(
            &sch,
            Some(&format!("M{i}()")),
            i as i64,
            Some("FullOpts"),
            &c,
        )
        .unwrap();
    }
    w.finish().unwrap();
    path
}

#[test]
fn build_ids_are_shown_and_mixed_builds_on_one_side_are_warned_of() {
    let dir = tmp("builds");
    let _ = std::fs::remove_dir_all(&dir);
    for side in ["base", "diff"] {
        std::fs::create_dir_all(dir.join(side)).unwrap();
    }
    let place = |from: PathBuf, side: &str, name: &str| {
        std::fs::rename(from, dir.join(side).join(name)).unwrap();
    };
    place(
        built_log("b0.jas", Some("a1b2c3d"), 0..20),
        "base",
        "s0.jas",
    );
    place(
        built_log("b1.jas", Some("a1b2c3d"), 20..40),
        "base",
        "s1.jas",
    );
    place(
        built_log("d0.jas", Some("e4f5a6b"), 0..20),
        "diff",
        "s0.jas",
    );
    place(
        built_log("d1.jas", Some("0ddba11"), 20..40),
        "diff",
        "s1.jas",
    );
    let (md, json) = (dir.join("b.md"), dir.join("b.json"));
    let (base, diff) = (dir.join("base"), dir.join("diff"));
    let (code, out, err) = cli(&[
        "memdiff",
        "--base",
        s(&base),
        "--diff",
        s(&diff),
        "--md",
        s(&md),
        "--json",
        s(&json),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        err.contains("the diff's logs come from 2 JIT builds (e4f5a6b in ")
            && err.contains("0ddba11 in "),
        "{err}"
    );
    assert!(
        out.contains("Builds: base a1b2c3d; diff e4f5a6b, 0ddba11"),
        "{out}"
    );
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(
        md.contains("Builds: base a1b2c3d; diff e4f5a6b, 0ddba11"),
        "{md}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let builds = &doc["collections"][0]["diff"]["builds"];
    assert_eq!(builds["base"], serde_json::json!(["a1b2c3d"]));
    assert_eq!(builds["diff"], serde_json::json!(["e4f5a6b", "0ddba11"]));

    // A merged side names its inputs' builds.
    let merged = dir.join("merged.jas");
    let (code, _, err) = cli(&["merge", "-o", s(&merged), s(&diff)]);
    assert_eq!(code, 0, "{err}");
    let mut reader = jitarena::log::LogReader::open(&merged).unwrap();
    while reader.next_raw().unwrap() {}
    assert_eq!(reader.builds(), ["e4f5a6b", "0ddba11"]);

    // One build on both sides, and a shard that names none.
    let same = built_log("same.jas", Some("a1b2c3d"), 0..40);
    let (_, _, err) = cli(&["memdiff", s(&base), s(&same), "-q"]);
    assert!(
        err.contains("the base and the diff name the same build (a1b2c3d)"),
        "{err}"
    );
    std::fs::rename(
        built_log("none.jas", None, 40..50),
        dir.join("base").join("s2.jas"),
    )
    .unwrap();
    let (_, _, err) = cli(&["memdiff", "--base", s(&base), "--diff", s(&diff), "-q"]);
    assert!(err.contains("1 of the base's logs name no build"), "{err}");
}

/// A log of [`METHODS`] methods of one kind, `bytes` each, named `{prefix}.Method{i}()` and
/// numbered as contexts from 0.
fn named_log(name: &str, prefix: &str, bytes: u64) -> PathBuf {
    let sch = schema(&["ASTNode"], &["Main"]);
    let records: Vec<_> = (0..METHODS)
        .map(|i| {
            (
                sch.clone(),
                format!("{prefix}.Method{i}()"),
                counts(vec![(0, bytes, 1)], vec![(0, bytes)]),
            )
        })
        .collect();
    written(name, &records, &["FullOpts"])
}

#[test]
fn an_ignored_kind_is_left_out_of_every_total_whatever_its_case_and_the_summary_says_so() {
    let base = base_log("ignore-base.jas");
    let grown = log_of(
        "ignore-grown.jas",
        &["ASTNode", "BasicBlock", "LSRA"],
        |i| {
            let n = 1 + i as u64;
            vec![5_000 * n, 3_000 * n, 2_000 * n * 7]
        },
    );
    for spelling in ["LSRA", "lsra", "Lsra", "CMK_LSRA", "cmk_lsra"] {
        let md = tmp(&format!("ignore-{spelling}.md"));
        let (code, out, err) = cli(&[
            "memdiff",
            s(&base),
            s(&grown),
            "--ignore-kind",
            spelling,
            "--md",
            s(&md),
            "-q",
        ]);
        assert_eq!(code, 0, "{spelling}: {out}{err}");
        let md = std::fs::read_to_string(&md).unwrap();
        assert!(md.contains("total +0.00%"), "{spelling}: {md}");
        assert!(
            md.contains("IGNORED kinds (--ignore-kind"),
            "{spelling}: {md}"
        );
    }
    for nothing in ["CMK_", ""] {
        let (code, _, err) = cli(&["memdiff", s(&base), s(&grown), "--ignore-kind", nothing]);
        assert_eq!(code, 2, "{nothing:?}: {err}");
        assert!(err.contains("names no kind"), "{err}");
    }
}

/// Logs whose kinds carry the .NET JIT's `CMK_` prefix: the prefix is taken off the log's
/// names as off the option's, so every spelling ignores the kind.
#[test]
fn a_kind_named_cmk_in_the_logs_is_ignored_by_every_spelling() {
    let kinds = ["CMK_ASTNode", "CMK_BasicBlock", "CMK_LSRA"];
    let base = log_of("cmk-base.jas", &kinds, |i| {
        let n = 1 + i as u64;
        vec![5_000 * n, 3_000 * n, 2_000 * n]
    });
    let grown = log_of("cmk-grown.jas", &kinds, |i| {
        let n = 1 + i as u64;
        vec![5_000 * n, 3_000 * n, 2_000 * n * 7]
    });
    let (code, _, err) = cli(&["memdiff", s(&base), s(&grown), "-q"]);
    assert_eq!(code, 1, "{err}");
    for spelling in ["LSRA", "lsra", "CMK_LSRA", "cmk_lsra", "CMK_lsra"] {
        let json = tmp(&format!("cmk-{spelling}.json"));
        let (code, out, err) = cli(&[
            "memdiff",
            s(&base),
            s(&grown),
            "--ignore-kind",
            spelling,
            "--json",
            s(&json),
            "-q",
        ]);
        assert_eq!(code, 0, "{spelling}: {out}{err}");
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let kinds = doc["collections"][0]["diff"]["kinds"].as_array().unwrap();
        assert!(
            kinds.iter().all(|k| k["name"] != "CMK_LSRA"),
            "{spelling}: {kinds:?}"
        );
        assert_eq!(kinds.len(), 2, "{spelling}: {kinds:?}");
    }
}

#[test]
fn a_context_in_many_shards_names_a_few_files_and_counts_the_rest() {
    let dir = tmp("many-shards");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let shard = base_log("many-shard.jas");
    for k in 0..10 {
        std::fs::copy(&shard, dir.join(format!("s{k}.jas"))).unwrap();
    }
    let (json, md) = (dir.with_extension("json"), dir.with_extension("md"));
    let (code, out, err) = cli(&[
        "memdiff",
        "--base",
        s(&dir),
        "--diff",
        s(&shard),
        "--json",
        s(&json),
        "--md",
        s(&md),
        "-q",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let example = &doc["collections"][0]["duplicates"][0];
    assert_eq!(example["records"], 10);
    assert_eq!(example["files"].as_array().unwrap().len(), 3);
    assert_eq!(example["more_files"], 7);
    let md = std::fs::read_to_string(&md).unwrap();
    let headline = md.lines().nth(2).unwrap();
    assert!(headline.contains("10 records in "), "{headline}");
    assert!(headline.contains(" and 7 more files)"), "{headline}");
    assert!(headline.len() < 600, "{headline}");
}

#[test]
fn matched_methods_with_other_names_are_warned_of() {
    let base = named_log("names-base.jas", "Foo", 1_000);
    let same = named_log("names-same.jas", "Foo", 1_000);
    let other = named_log("names-other.jas", "Bar", 1_000);
    let (code, _, err) = cli(&["memdiff", s(&base), s(&same), "-q"]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("another name"), "{err}");
    let json = tmp("names.json");
    let (code, _, err) = cli(&["memdiff", s(&base), s(&other), "--json", s(&json), "-q"]);
    assert_eq!(code, 0, "a warning, not a verdict: {err}");
    assert!(
        err.contains("50 of 50 matched methods have another name in the diff than in the base (the first: context 0)"),
        "{err}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let warnings = doc["collections"][0]["diff"]["warnings"].to_string();
    assert!(warnings.contains("another name"), "{warnings}");
}

#[test]
fn a_failure_just_above_its_limit_says_so_in_its_fields() {
    let base = named_log("limit-base.jas", "M", 20_000_000);
    // 50 methods of 20,000,000 bytes against 49 of 25,000,000 and one of 25,000,001: the
    // total grows by 25.000001%, which rounds to the limit at 4 decimals.
    let sch = schema(&["ASTNode"], &["Main"]);
    let records: Vec<_> = (0..METHODS)
        .map(|i| {
            let b = 25_000_000 + u64::from(i == 0);
            let name = format!("M.Method{i}()");
            (sch.clone(), name, counts(vec![(0, b, 1)], vec![(0, b)]))
        })
        .collect();
    let diff = written("limit-diff.jas", &records, &["FullOpts"]);
    let json = tmp("limit.json");
    let (code, _, err) = cli(&["memdiff", s(&base), s(&diff), "--json", s(&json), "-q"]);
    assert_eq!(code, 1, "{err}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let failure = &doc["verdict"]["failures"][0];
    assert_eq!(failure["rule"], "fail_above");
    let (percent, limit) = (
        failure["percent"].as_f64().unwrap(),
        failure["limit"].as_f64().unwrap(),
    );
    assert!(percent > limit, "{failure}");
}

#[test]
fn an_empty_shard_is_not_a_build_of_other_kinds() {
    let dir = tmp("empty-shard");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(base_log("empty-shard-good.jas"), dir.join("a.jas")).unwrap();
    std::fs::write(dir.join("b.jas"), b"").unwrap();
    let base = base_log("empty-shard-base.jas");
    let (code, _, err) = cli(&["memdiff", "--base", s(&base), "--diff", s(&dir), "-q"]);
    // The run reads both shards and judges: the empty one is warned of as cut short (and so
    // INCOMPLETE), not as a build with other kinds.
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("b.jas: the file is cut short"), "{err}");
    assert!(!err.contains("do not hold the same kinds"), "{err}");
}
