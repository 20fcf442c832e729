//! The page engineers know: SuperPMI's per-tier "Top method regressions" and "Top method
//! improvements" (by PDIFF, with a byte floor) in markdown, HTML and JSON; the summary's first
//! screen (the verdict, then each collection's PDIFFs, raw bytes in `<details>`); failing
//! collections first; no empty table. Markdown is read back with pulldown-cmark.

mod common;

use common::{cli, counts, s, schema, tmp, written};
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use std::path::{Path, PathBuf};

fn json_of(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A SuperPMI details file named `collection` of `rows` (context, MinOpts, base, diff).
fn details(dir: &Path, collection: &str, rows: &[(u64, bool, u64, u64)]) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(format!("{collection}_details.csv"));
    let mut text = String::from(
        "Context,Method full name,Base result,Diff result,MinOpts,Base BytesAllocated,Diff BytesAllocated\n",
    );
    for (context, min_opts, base, diff) in rows {
        let flag = if *min_opts { "True" } else { "False" };
        text.push_str(&format!(
            "{context},M{context}(int),Success,Success,{flag},{base},{diff}\n"
        ));
    }
    std::fs::write(&path, text).unwrap();
    path
}

/// Each table of a markdown document, as its rows of cells' text (the header first).
fn tables(md: &str) -> Vec<Vec<Vec<String>>> {
    let mut out: Vec<Vec<Vec<String>>> = Vec::new();
    let (mut row, mut cell): (Vec<String>, String) = (Vec::new(), String::new());
    let mut in_table = false;
    for event in Parser::new_ext(md, Options::ENABLE_TABLES | Options::ENABLE_GFM) {
        match event {
            Event::Start(Tag::Table(_)) => {
                in_table = true;
                out.push(Vec::new());
            }
            Event::End(TagEnd::Table) => in_table = false,
            Event::End(TagEnd::TableCell) => row.push(std::mem::take(&mut cell)),
            Event::End(TagEnd::TableHead | TagEnd::TableRow) => {
                if let Some(t) = out.last_mut() {
                    t.push(std::mem::take(&mut row));
                }
            }
            Event::Text(t) | Event::Code(t) if in_table => cell.push_str(&t),
            _ => {}
        }
    }
    out
}

/// The rows (no header) of the table that follows `title` in `md`.
fn table_after(md: &str, title: &str) -> Vec<Vec<String>> {
    let at = md
        .find(title)
        .unwrap_or_else(|| panic!("no {title:?} in:\n{md}"));
    let rest = &md[at..];
    let t = tables(rest);
    let first = t
        .first()
        .unwrap_or_else(|| panic!("no table after {title:?}"));
    first[1..].to_vec()
}

/// The HTML page as XML (its doctype allowed).
fn xhtml(html: &str) -> Result<roxmltree::Document<'_>, roxmltree::Error> {
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    roxmltree::Document::parse_with_options(html, options)
}

/// memdiff over `args` with every report: (code, markdown, long markdown, JSON, HTML, output).
fn reports(dir: &Path, args: &[&str]) -> (i32, String, String, serde_json::Value, String, String) {
    let (md, long, json, html) = (
        dir.join("r.md"),
        dir.join("r-long.md"),
        dir.join("r.json"),
        dir.join("r.html"),
    );
    let mut all = vec![
        "memdiff",
        "--md",
        s(&md),
        "--md-long",
        s(&long),
        "--json",
        s(&json),
        "--html",
        s(&html),
    ];
    all.extend_from_slice(args);
    let (code, out, err) = cli(&all);
    let read = |p: &Path| std::fs::read_to_string(p).unwrap();
    (
        code,
        read(&md),
        read(&long),
        json_of(&json),
        read(&html),
        out + &err,
    )
}

/// 30 FullOpts methods of 100,000 bytes growing by 1% to 30%, 30 shrinking by 1% to 30%, and
/// 10 MinOpts methods growing 2% to 20%; a 16-byte FullOpts method doubles (too small to list).
fn rows() -> Vec<(u64, bool, u64, u64)> {
    let mut rows = Vec::new();
    for i in 1..=30u64 {
        rows.push((i, false, 100_000, 100_000 + 1_000 * i));
        rows.push((100 + i, false, 100_000, 100_000 - 1_000 * i));
    }
    for i in 1..=10u64 {
        rows.push((200 + i, true, 50_000, 50_000 + 1_000 * i));
    }
    rows.push((999, false, 16, 32));
    rows
}

#[test]
fn top_method_lists_per_tier_by_pdiff_with_a_floor_in_every_report() {
    let dir = tmp("tier-lists");
    let file = details(&dir, "bench.mch", &rows());
    let (code, md, long, json, html, out) = reports(&dir, &["--csv", s(&file)]);
    assert_eq!(code, 0, "{out}");
    // Markdown: SuperPMI's titles and columns, by PDIFF, the 20 largest, the floor stated.
    for title in [
        "Top method regressions (FullOpts, by PDIFF %)",
        "Top method improvements (FullOpts, by PDIFF %)",
        "Top method regressions (MinOpts, by PDIFF %)",
    ] {
        assert!(
            md.contains(&format!("<summary>{title}</summary>")),
            "{title}:\n{md}"
        );
    }
    assert!(md.contains("of the methods of at least 10,000 bytes in the base (--min-method-bytes)"));
    let header = &tables(&md[md.find("Top method regressions (FullOpts").unwrap()..])[0][0];
    assert_eq!(
        header,
        &["Collection", "Context", "Method", "Base", "Diff", "PDIFF"]
    );
    let up = table_after(&md, "<summary>Top method regressions (FullOpts");
    assert_eq!(up.len(), 20);
    assert_eq!(
        up[0][..5],
        ["bench.mch", "30", "M30(int)", "100,000", "130,000"]
    );
    assert!(up[0][5].starts_with("+30.00%"), "{:?}", up[0]);
    assert_eq!(up[19][1], "11");
    assert!(
        !up.iter().any(|r| r[1] == "999"),
        "the 16-byte method is below the floor"
    );
    let down = table_after(&md, "<summary>Top method improvements (FullOpts");
    assert_eq!(down[0][1], "130");
    assert!(down[0][5].starts_with("-30.00%"), "{:?}", down[0]);
    let min = table_after(&md, "<summary>Top method regressions (MinOpts");
    assert_eq!(min.len(), 10);
    assert_eq!(min[0][1], "210");
    // No MinOpts method shrank: one line, no table.
    assert!(md.contains(
        "Top method improvements (MinOpts, by PDIFF %): none (no MinOpts method of at least 10,000 bytes in the base shrank)."
    ));
    assert!(!md.contains("<summary>Top method improvements (MinOpts"));
    // The long markdown has the collection's own lists.
    let own = table_after(&long, "## Collection");
    assert!(!own.is_empty());
    assert!(long.contains("| Context | Method | Base | Diff | PDIFF |"));
    // JSON: across collections and per collection, FullOpts first.
    let top = &json["top_methods"];
    assert_eq!(top["min_method_bytes"], 10_000);
    assert_eq!(top["top"], 20);
    assert_eq!(top["tiers"][0]["tier"], "FullOpts");
    assert_eq!(top["tiers"][0]["regressions"].as_array().unwrap().len(), 20);
    assert_eq!(top["tiers"][0]["regressions"][0]["context"], 30);
    assert_eq!(top["tiers"][0]["regressions"][0]["collection"], "bench.mch");
    assert_eq!(top["tiers"][1]["tier"], "MinOpts");
    assert_eq!(top["tiers"][1]["improvements"].as_array().unwrap().len(), 0);
    let per = &json["collections"][0]["diff"]["methods"]["tiers"];
    assert_eq!(per[0]["improvements"][0]["context"], 130);
    // HTML: the same titles, well formed, one line where a tier has nothing.
    xhtml(&html).expect("well-formed XHTML");
    assert!(html.contains("<h2>Top method regressions (FullOpts, by PDIFF %)</h2>"));
    assert!(html
        .contains("<p>None: no MinOpts method of at least 10,000 bytes in the base shrank.</p>"));
    // The floor moves with --min-method-bytes: the 16-byte method doubling tops the list.
    let (_, md, ..) = reports(&dir, &["--csv", s(&file), "--min-method-bytes", "1"]);
    let up = table_after(&md, "<summary>Top method regressions (FullOpts");
    assert_eq!(up[0][1], "999");
    assert!(
        md.contains("of the methods of at least 1 byte in the base"),
        "{md}"
    );
    assert!(up[0][5].starts_with("+100.00%"), "{:?}", up[0]);
}

#[test]
fn the_lists_name_methods_over_logs() {
    let sch = schema(&["A"], &["P"]);
    let rec = |grow: u64| -> Vec<_> {
        (0..30u64)
            .map(|i| {
                let b = 20_000 + i * (100 + grow * i);
                (
                    &sch,
                    format!("N.C{i}:M()"),
                    counts(vec![(0, b, 1)], vec![(0, b)]),
                )
            })
            .collect()
    };
    let base = written("lists-base.jas", &rec(0), &["Tier0", "Tier1"]);
    let diff = written("lists-diff.jas", &rec(30), &["Tier0", "Tier1"]);
    let dir = tmp("lists-logs");
    std::fs::create_dir_all(&dir).unwrap();
    let (_, md, _, json, _, out) = reports(&dir, &[s(&base), s(&diff)]);
    let up = table_after(&md, "<summary>Top method regressions (FullOpts");
    assert_eq!(up[0][2], "N.C29:M()", "{out}");
    assert_eq!(up.len(), 15);
    let min = &json["top_methods"]["tiers"][1];
    assert_eq!(min["tier"], "MinOpts");
    assert_eq!(min["regressions"][0]["name"], "N.C28:M()");
}

#[test]
fn the_first_screen_gives_the_verdict_then_pdiffs_failing_collections_first() {
    let dir = tmp("first-screen");
    let flat: Vec<_> = (0..20u64)
        .map(|i| (i, i % 2 == 0, 100_000, 100_500))
        .collect();
    let grown: Vec<_> = (0..20u64)
        .map(|i| (i, i % 2 == 0, 100_000, 140_000))
        .collect();
    let a = details(&dir, "a.mch", &flat);
    let b = details(&dir, "b.mch", &grown);
    let (code, md, long, _, html, out) = reports(&dir, &["--csv", s(&a), "--csv", s(&b)]);
    assert_eq!(code, 1, "{out}");
    let lines: Vec<&str> = md.lines().filter(|l| !l.is_empty()).collect();
    assert!(lines[0].starts_with("## jitarena memdiff: ❌ FAIL"), "{md}");
    assert!(
        lines[1].starts_with("**FAIL**: collection b.mch: total bytes grew +40.00%"),
        "{md}"
    );
    let at = lines
        .iter()
        .position(|l| *l == "PDIFF per collection (Lower is better):")
        .unwrap();
    // The failures' list, then the table: the failing collection first.
    assert!(
        lines[2..at].iter().all(|l| l.starts_with("- FAIL: ")),
        "{md}"
    );
    let rows = table_after(&md, "PDIFF per collection (Lower is better):");
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0][0], "b.mch");
    assert!(rows[0][1].starts_with("+40.00%"), "{rows:?}");
    assert_eq!(rows[0][4], "FAIL");
    assert_eq!(rows[1][0], "a.mch");
    assert_eq!(rows[1][4], "PASS");
    // No raw byte count between the table and the Details: they are inside <details> (the
    // verdict's sentence gives the figures that decided it).
    let details_at = md.find("<summary>Details</summary>").unwrap();
    let table_at = md.find("PDIFF per collection").unwrap();
    assert!(!md[table_at..details_at].contains("2,000,000"), "{md}");
    assert!(md[details_at..].contains("2,000,000"));
    // Failing first in the Details' tables, the long markdown's collections and the HTML.
    let totals = table_after(&md[details_at..], "All contexts:");
    assert_eq!(totals[0][0], "b.mch");
    let coverage = table_after(&md[details_at..], "Coverage:");
    assert_eq!(coverage[0][0], "b.mch");
    assert!(long.find("## Collection b.mch").unwrap() < long.find("## Collection a.mch").unwrap());
    assert!(
        html.find("<h2>Collection b.mch</h2>").unwrap()
            < html.find("<h2>Collection a.mch</h2>").unwrap()
    );
    assert!(
        out.find("\nb.mch").unwrap() < out.find("\na.mch").unwrap(),
        "{out}"
    );
}

#[test]
fn no_table_is_rendered_empty() {
    let dir = tmp("no-empty");
    // Only FullOpts, no change at all: every list is empty.
    let rows: Vec<_> = (0..10u64).map(|i| (i, false, 50_000, 50_000)).collect();
    let file = details(&dir, "still.mch", &rows);
    let (code, md, long, _, html, out) = reports(&dir, &["--csv", s(&file)]);
    assert_eq!(code, 0, "{out}");
    for doc in [&md, &long] {
        for t in tables(doc) {
            assert!(t.len() > 1, "a table with a header only:\n{t:?}\nin\n{doc}");
        }
    }
    assert!(md.contains("MinOpts: no contexts."), "{md}");
    assert!(
        md.contains("Top method regressions (FullOpts, by PDIFF %): none"),
        "{md}"
    );
    let doc = xhtml(&html).unwrap();
    for table in doc.descendants().filter(|n| n.has_tag_name("table")) {
        let rows = table.children().filter(|n| n.has_tag_name("tr")).count();
        assert!(rows > 1, "an HTML table with a header only");
    }
}
