//! `jitarena summarize`: the memdiff reports of several platforms in one summary, whose exit
//! code is the worst of theirs and whose first lines name the platform and collection that
//! decided it.

mod common;

use std::path::PathBuf;

use common::{cli, generated, s, tmp};
use jitarena_tools::report::MD_BREAK;
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// A platform's memdiff JSON report over two collections, the second grown by `grow` percent
/// in LSRA.
fn platform_report(name: &str, seed: u64, grow: f64) -> PathBuf {
    let dir = tmp(name);
    let _ = std::fs::remove_dir_all(&dir);
    for (c, collection) in ["benchmarks.run", "libraries.pmi"].into_iter().enumerate() {
        for side in ["base", "diff"] {
            let scale: Vec<(&str, f64)> = match (side, c) {
                ("diff", 1) if grow != 0.0 => vec![("LSRA", grow)],
                _ => vec![],
            };
            let log = generated(
                &format!("{name}-{side}-{c}.jas"),
                seed + c as u64,
                60,
                &scale,
            );
            let to = dir.join(side).join(collection);
            std::fs::create_dir_all(&to).unwrap();
            std::fs::rename(log, to.join("s0.jas")).unwrap();
        }
    }
    let json = dir.join("memdiff.json");
    let (code, out, err) = cli(&[
        "memdiff",
        "--base-root",
        s(&dir.join("base")),
        "--diff-root",
        s(&dir.join("diff")),
        "--json",
        s(&json),
        "-q",
    ]);
    assert!(code == 0 || code == 1, "{out}{err}");
    json
}

#[test]
fn the_worst_platform_decides_and_is_named_first() {
    let linux = platform_report("linux-x64", 1, 0.0);
    let x86 = platform_report("windows-x86", 5, 200.0);
    let hostile = "windows **x64** <b>x</b> [l](http://e.example)";
    let win = platform_report("windows-x64", 9, 0.0);
    let md = tmp("platforms.md");
    let (code, out, err) = cli(&[
        "summarize",
        "--platform",
        "linux x64",
        s(&linux),
        "--platform",
        "windows x86",
        s(&x86),
        "--platform",
        hostile,
        s(&win),
        "--md",
        s(&md),
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let md = std::fs::read_to_string(&md).unwrap();
    let lines: Vec<&str> = md.lines().collect();
    assert_eq!(
        lines[0],
        "## jitarena memdiff over 3 platforms: ❌ FAIL (exit 1)"
    );
    assert!(
        lines[2].starts_with("**FAIL**: windows x86: collection libraries.pmi: kind LSRA grew"),
        "{md}"
    );
    for section in ["### linux x64", "### windows x86"] {
        assert!(md.contains(&format!("\n{section}\n")), "{section} in\n{md}");
    }
    // Rendered: no markup from a name; the hostile platform reads as its name.
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_GFM;
    let mut cells = Vec::new();
    let mut cell: Option<String> = None;
    for event in Parser::new_ext(&md, options) {
        match &event {
            Event::Start(Tag::TableCell) => cell = Some(String::new()),
            Event::End(TagEnd::TableCell) => cells.extend(cell.take()),
            Event::Text(t) => {
                if let Some(c) = cell.as_mut() {
                    c.push_str(&t.replace(MD_BREAK, ""));
                }
            }
            Event::Start(Tag::Link { .. } | Tag::Image { .. } | Tag::Emphasis) => {
                panic!("markup from a name: {event:?}")
            }
            Event::Html(h) | Event::InlineHtml(h) => {
                assert!(!h.contains("<b>"), "HTML from a name: {h:?}");
            }
            _ => {}
        }
    }
    assert!(cells.iter().any(|c| c == hostile), "{cells:?}");

    // Every platform passing passes; a file that is not a report is bad input.
    let (code, out, err) = cli(&[
        "summarize",
        "--platform",
        "a",
        s(&linux),
        "--platform",
        "b",
        s(&win),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("**PASS**: every platform passed"), "{out}");
    let (code, _, err) = cli(&["summarize", "--platform", "a", s(&tmp("platforms.md"))]);
    assert_eq!(code, 2);
    assert!(
        err.contains("platforms.md: not a memdiff JSON report"),
        "{err}"
    );
}

#[test]
fn a_report_whose_status_and_exit_code_disagree_is_refused() {
    let json = platform_report("tampered", 3, 0.0);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for (name, status, exit_code) in [
        ("incomplete-0", "INCOMPLETE", 0),
        ("pass-1", "PASS", 1),
        ("unknown", "WHAT", 1),
    ] {
        let mut doc = doc.clone();
        doc["verdict"]["status"] = status.into();
        doc["verdict"]["exit_code"] = exit_code.into();
        let path = tmp(&format!("{name}.json"));
        std::fs::write(&path, doc.to_string()).unwrap();
        let (code, out, err) = cli(&["summarize", "--platform", "p", s(&path)]);
        assert_eq!(code, 2, "{name}: {out}{err}");
        assert!(
            err.contains("not a memdiff JSON report (verdict."),
            "{name}: {err}"
        );
    }
}

/// A platform's report with one collection compared (passing) and one found under the base
/// root only: INCOMPLETE.
fn incomplete_report(name: &str) -> PathBuf {
    let dir = tmp(name);
    let _ = std::fs::remove_dir_all(&dir);
    for (side, collection) in [
        ("base", "libraries.pmi"),
        ("diff", "libraries.pmi"),
        ("base", "only.base"),
    ] {
        let log = generated(&format!("{name}-{side}-{collection}.jas"), 4, 40, &[]);
        let to = dir.join(side).join(collection);
        std::fs::create_dir_all(&to).unwrap();
        std::fs::rename(log, to.join("s0.jas")).unwrap();
    }
    let json = dir.join("memdiff.json");
    let (code, out, err) = cli(&[
        "memdiff",
        "--base-root",
        s(&dir.join("base")),
        "--diff-root",
        s(&dir.join("diff")),
        "--json",
        s(&json),
        "-q",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    json
}

/// A report's JSON document.
fn doc_of(path: &PathBuf) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `summarize` over one platform's report `doc`, written to `name`.
fn summarize_doc(name: &str, doc: &serde_json::Value) -> (i32, String, String) {
    let path = tmp(name);
    std::fs::write(&path, doc.to_string()).unwrap();
    cli(&["summarize", "--platform", "p", s(&path)])
}

#[test]
fn a_report_whose_verdict_disagrees_with_its_failures_or_collections_is_refused() {
    let json = platform_report("forged", 11, 200.0);
    let doc = doc_of(&json);
    assert_eq!(doc["verdict"]["status"], "FAIL");
    // Edited to PASS, its failure still listed: its page said "✅ PASS: ... grew ... above".
    let mut pass = doc.clone();
    pass["verdict"]["status"] = "PASS".into();
    pass["verdict"]["exit_code"] = 0.into();
    let (code, out, err) = summarize_doc("forged-pass.json", &pass);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("forged-pass.json: not a memdiff JSON report (verdict.status is PASS, but its collections give FAIL and its verdict.failures FAIL"),
        "{err}"
    );
    // Its failures taken out as well: the collection still fails.
    let mut bare = pass.clone();
    bare["verdict"]["failures"] = serde_json::json!([]);
    let (code, _, err) = summarize_doc("forged-bare.json", &bare);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("forged-bare.json: not a memdiff JSON report (verdict.status is PASS, but its collections give FAIL and its verdict.failures PASS"),
        "{err}"
    );
    // A collection edited to PASS, its growth failure still in it.
    let mut collection = doc.clone();
    let grown = collection["collections"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|c| c["status"] == "FAIL")
        .unwrap();
    grown["status"] = "PASS".into();
    grown["exit_code"] = 0.into();
    let (code, _, err) = summarize_doc("forged-collection.json", &collection);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("collection \"libraries.pmi\" states \"PASS\" (exit code 0) where its failures give FAIL (exit code 1)"),
        "{err}"
    );
    // A failure of no class memdiff writes.
    let mut class = doc.clone();
    class["verdict"]["failures"][0]["class"] = "MEH".into();
    let (code, _, err) = summarize_doc("forged-class.json", &class);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("whose class is \"MEH\""), "{err}");
    // The report as memdiff wrote it is read.
    let (code, out, err) = summarize_doc("forged-none.json", &doc);
    assert_eq!(code, 1, "{out}{err}");
}

#[test]
fn the_first_lines_name_the_verdict_over_all_platforms_and_every_platform_that_did_not_pass() {
    let incomplete = incomplete_report("reorder-incomplete");
    let fail = platform_report("reorder-fail", 5, 200.0);
    let pass = platform_report("reorder-pass", 1, 0.0);
    let md = tmp("reorder.md");
    let (code, out, err) = cli(&[
        "summarize",
        "--platform",
        "linux arm64",
        s(&incomplete),
        "--platform",
        "linux x64",
        s(&pass),
        "--platform",
        "windows x86",
        s(&fail),
        "--md",
        s(&md),
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let md = std::fs::read_to_string(&md).unwrap();
    let lines: Vec<&str> = md.lines().collect();
    // Listed after the incomplete one, the regression was not in the first lines.
    assert_eq!(
        lines[0],
        "## jitarena memdiff over 3 platforms: ❌ INCOMPLETE, FAIL (exit 1)"
    );
    assert!(
        lines[2].starts_with("**FAIL**: windows x86: collection libraries.pmi: kind LSRA grew"),
        "{md}"
    );
    assert!(
        lines[4].starts_with("**INCOMPLETE**: linux arm64: collection only.base:"),
        "{md}"
    );
    assert!(!lines[..8].iter().any(|l| l.contains("linux x64")), "{md}");
}

#[test]
fn a_report_with_byte_order_marks_or_a_schema_version_of_3_0_is_read() {
    let json = platform_report("encodings", 2, 0.0);
    let text = std::fs::read_to_string(&json).unwrap();
    for (name, marks) in [("bom1.json", "\u{FEFF}"), ("bom2.json", "\u{FEFF}\u{FEFF}")] {
        let path = tmp(name);
        std::fs::write(&path, format!("{marks}{text}")).unwrap();
        let (code, out, err) = cli(&["summarize", "--platform", "p", s(&path)]);
        assert_eq!(code, 0, "{name}: {out}{err}");
    }
    let mut doc = doc_of(&json);
    doc["schema_version"] = serde_json::json!(3.0);
    let (code, out, err) = summarize_doc("schema-3.0.json", &doc);
    assert_eq!(code, 0, "{out}{err}");
    for (name, version, says) in [
        (
            "schema-text.json",
            serde_json::json!("3"),
            "schema_version is \"3\", not a number",
        ),
        (
            "schema-2.5.json",
            serde_json::json!(2.5),
            "schema_version 2.5; this jitarena reads 3",
        ),
        (
            "schema-none.json",
            serde_json::Value::Null,
            "(no schema_version)",
        ),
    ] {
        doc["schema_version"] = version;
        let (code, _, err) = summarize_doc(name, &doc);
        assert_eq!(code, 2, "{name}: {err}");
        assert!(
            err.contains(&format!("{name}: not a memdiff JSON report")) && err.contains(says),
            "{name}: {err}"
        );
    }
}

#[test]
fn summarize_over_many_collections_holds_about_its_report() {
    // A report of many collections, each a copy of a real one renamed, streamed to the file
    // so that this process stays small (the child's peak counts this process's).
    const COLLECTIONS: usize = 4_000;
    let mut doc = doc_of(&platform_report("many", 5, 0.0));
    let one = doc["collections"][0].clone();
    assert_eq!(one["status"], "PASS");
    doc["collections"] = serde_json::json!("@collections@");
    doc["one_sided"] = serde_json::json!([]);
    doc["verdict"]["status"] = serde_json::json!("PASS");
    let text = doc.to_string();
    let (head, tail) = text.split_once("\"@collections@\"").unwrap();
    let path = tmp("many-collections.json");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    use std::io::Write;
    write!(out, "{head}[").unwrap();
    for i in 0..COLLECTIONS {
        let mut c = one.clone();
        c["name"] = serde_json::json!(format!("collection.{i:06}.mch"));
        if i > 0 {
            out.write_all(b",").unwrap();
        }
        serde_json::to_writer(&mut out, &c).unwrap();
    }
    write!(out, "]{tail}").unwrap();
    out.flush().unwrap();
    drop(out);
    let size = std::fs::metadata(&path).unwrap().len();
    let md = tmp("many-collections.md");
    let (code, err, peak) = common::run_measured(
        &["summarize", "--platform", "p", s(&path), "--md", s(&md)],
        |_| {},
    );
    eprintln!(
        "summarize: a {size}-byte report of {COLLECTIONS} collections: peak resident {peak} bytes"
    );
    assert_eq!(code, 0, "{err}");
    let page = std::fs::read_to_string(&md).unwrap();
    assert!(page.contains("collection.003999.mch"), "{}", &page[..500]);
    let bound = 2 * size + (32 << 20);
    assert!(
        peak < bound,
        "summarize of a {size}-byte report peaked at {peak} bytes (bound {bound})"
    );
}

/// The same report given for two platforms is said on standard error (a copy-paste slip in a
/// pipeline), and the summary is still written.
#[test]
fn the_same_report_for_two_platforms_is_said() {
    let linux = platform_report("same-linux", 1, 0.0);
    let copy = tmp("same-copy.json");
    std::fs::copy(&linux, &copy).unwrap();
    let (code, out, err) = cli(&[
        "summarize",
        "--platform",
        "linux x64",
        s(&linux),
        "--platform",
        "windows x64",
        s(&copy),
    ]);
    assert!(code == 0 || code == 1, "{out}{err}");
    assert!(
        err.contains("warning: --platform \"windows x64\"") && err.contains("same report"),
        "{err}"
    );
    let other = platform_report("same-other", 5, 200.0);
    let (_, _, err) = cli(&[
        "summarize",
        "--platform",
        "a",
        s(&linux),
        "--platform",
        "b",
        s(&other),
    ]);
    assert!(!err.contains("same report"), "{err}");
}
