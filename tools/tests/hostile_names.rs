//! Reports no name can forge: method, tier, kind, phase and collection names hostile to
//! markdown and HTML, recorded through the C API and through a text trace, leave no element,
//! link or image in the markdown as a CommonMark library renders it, and no element in the HTML
//! page as an XML parser reads it; and each name still reads back as exactly its characters.

mod common;

#[path = "../../tests/native/mod.rs"]
mod native;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{cli, s, tmp_in};
use native::build_program;
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// `name` in this crate's temporary directory, `hostile`: `hostile_names` there is the native
/// test program of that name.
fn tmp(name: &str) -> PathBuf {
    tmp_in("hostile", name)
}

/// The method names tests/c/hostile_names.c records.
const C_METHODS: [&str; 10] = [
    "Evil\n# Heading\n<img src=x onerror=alert(1)>",
    "![img](http://evil.example/i.png)",
    "[click](javascript:alert(1))",
    "A|B|C</td><td>forged",
    "&amp; &#x3C;b&#x3E; &lt;i&gt;",
    "**bold** _em_ ~~s~~ $x^2$ `code`",
    "<https://evil.example/autolink> www.evil.example user@evil.example @dotnet/jit #123",
    "Ns.Class`1[System.__Canon]:Method(int):this\r\n| --- |",
    "\x1b[31mred\x1b[0m \u{202e}evil",
    "</details><details open><summary>forged</summary>",
];

/// Method names of the text trace (a line holds the name: no line breaks).
const TEXT_METHODS: [&str; 4] = [
    "<script>alert(document.cookie)</script>",
    "[x](http://evil.example) ![y](http://evil.example/y.png) <b>b</b>",
    "a | b || c &nbsp; &#169; \\| \\` *x* _y_",
    "<!-- comment --> <![CDATA[x]]> &",
];

const COLLECTION_NAMES: [&str; 2] = [
    "<img src=x onerror=alert(1)>|[c](http://evil.example)",
    "line\nbreak **x** `y` &amp;",
];

/// Base and diff logs of the hostile C program.
fn c_logs() -> (PathBuf, PathBuf) {
    let exe = build_program("hostile_names", &["tests/c/hostile_names.c"], false);
    let (base, diff) = (tmp("c-base.jas"), tmp("c-diff.jas"));
    for (log, scale) in [(&base, "1"), (&diff, "2")] {
        let out = Command::new(&exe).args([s(log), scale]).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    (base, diff)
}

/// Base and diff logs of a hostile text trace, replayed.
fn text_logs() -> (PathBuf, PathBuf) {
    let mut logs = Vec::new();
    for (side, scale) in [("base", 1), ("diff", 3)] {
        let mut trace = String::new();
        for (i, name) in TEXT_METHODS.iter().enumerate() {
            trace.push_str(&format!("method {i} Tier<1>|x {name}\n"));
            trace.push_str("phase <iframe>|p\n");
            for (k, kind) in ["<svg/onload=alert(1)>", "[k](http://e)", "`k`|k"]
                .iter()
                .enumerate()
            {
                trace.push_str(&format!("alloc {kind} {}\n", 2000 * scale * (k + 1)));
            }
        }
        let path = tmp(&format!("text-{side}.txt"));
        std::fs::write(&path, trace).unwrap();
        let log = tmp(&format!("text-{side}.jas"));
        let (code, _, err) = cli(&["replay", s(&path), "-o", s(&log)]);
        assert_eq!(code, 0, "{err}");
        logs.push(log);
    }
    (logs[0].clone(), logs[1].clone())
}

/// Runs memdiff over the two hostile collections, once for all tests; returns (markdown, long
/// markdown, html).
fn reports() -> &'static (String, String, String) {
    static REPORTS: std::sync::OnceLock<(String, String, String)> = std::sync::OnceLock::new();
    REPORTS.get_or_init(make_reports)
}

fn make_reports() -> (String, String, String) {
    let (cb, cd) = c_logs();
    let (tb, td) = text_logs();
    let (md, long, html) = (tmp("r.md"), tmp("r-long.md"), tmp("r.html"));
    let (code, out, err) = cli(&[
        "memdiff",
        "--collection",
        COLLECTION_NAMES[0],
        s(&cb),
        s(&cd),
        "--collection",
        COLLECTION_NAMES[1],
        s(&tb),
        s(&td),
        "--md",
        s(&md),
        "--md-long",
        s(&long),
        "--html",
        s(&html),
    ]);
    assert_eq!(code, 1, "both grew beyond the gate: {out}{err}");
    // The console shows no raw control character from a name (no terminal escape).
    assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{out:?}");
    let read = |p: &Path| std::fs::read_to_string(p).unwrap();
    (read(&md), read(&long), read(&html))
}

/// A name as the reports show it: control characters as pictures, overrides as U+FFFD.
fn visible(name: &str) -> String {
    jitarena_tools::report::visible(name).into_owned()
}

/// What the markdown renders to, as a CommonMark (with GitHub's extensions) library sees it:
/// fails on any link, image, emphasis, code, math, heading or HTML that the report itself
/// does not write; returns the text of every table cell.
fn rendered_cells(md: &str) -> Vec<String> {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_MATH
        | Options::ENABLE_GFM;
    let mut cells = Vec::new();
    let mut cell: Option<String> = None;
    let mut strong: Option<String> = None;
    for event in Parser::new_ext(md, options) {
        match &event {
            Event::Start(Tag::TableCell) => cell = Some(String::new()),
            Event::End(TagEnd::TableCell) => cells.extend(cell.take()),
            Event::Start(Tag::Strong) => strong = Some(String::new()),
            Event::End(TagEnd::Strong) => {
                let text = strong.take().unwrap_or_default();
                assert!(
                    [
                        "PASS",
                        "FAIL",
                        "INCOMPLETE",
                        "INCOMPLETE, FAIL",
                        "Total",
                        "Regression"
                    ]
                    .contains(&text.as_str()),
                    "bold text the report does not write: {text:?}"
                );
            }
            Event::Text(t) => {
                // No GitHub mention or issue reference: `@` and `#` are followed by a break.
                for (i, c) in t.char_indices() {
                    if c == '@' || c == '#' {
                        assert_eq!(
                            t[i + 1..].chars().next(),
                            Some(jitarena_tools::report::MD_BREAK),
                            "{t:?}"
                        );
                    }
                }
                let t = t.replace(jitarena_tools::report::MD_BREAK, "");
                for open in [&mut cell, &mut strong].into_iter().flatten() {
                    open.push_str(&t);
                }
            }
            Event::Start(Tag::Heading { .. }) | Event::End(TagEnd::Heading(_)) => {}
            Event::Html(h) | Event::InlineHtml(h) => {
                for line in h.lines().filter(|l| !l.is_empty()) {
                    let mut rest = line.to_string();
                    for ours in [
                        "<span style=\"color:red\">",
                        "<span style=\"color:green\">",
                        "</span>",
                        "<details>",
                        "</details>",
                        "<summary>",
                        "</summary>",
                    ] {
                        rest = rest.replace(ours, "");
                    }
                    assert!(
                        !rest.contains('<') && !rest.contains('>'),
                        "HTML the report does not write: {line:?}"
                    );
                }
            }
            Event::Start(
                Tag::Link { .. }
                | Tag::Image { .. }
                | Tag::Emphasis
                | Tag::Strikethrough
                | Tag::CodeBlock(_)
                | Tag::BlockQuote(_)
                | Tag::FootnoteDefinition(_),
            )
            | Event::Code(_)
            | Event::InlineMath(_)
            | Event::DisplayMath(_)
            | Event::FootnoteReference(_)
            | Event::TaskListMarker(_) => panic!("a name introduced {event:?}"),
            _ => {}
        }
    }
    cells
}

#[test]
fn hostile_names_leave_no_markup_in_the_markdown() {
    let (md, long, _) = reports();
    for doc in [md, long] {
        let headings = Parser::new_ext(doc, Options::ENABLE_TABLES)
            .filter(|e| matches!(e, Event::Start(Tag::Heading { .. })))
            .count();
        let ours = doc.lines().filter(|l| l.starts_with("## ")).count();
        assert_eq!(headings, ours, "a name made a heading");
        let cells = rendered_cells(doc);
        // Every name reads back as exactly its characters, in a cell of its own.
        for name in COLLECTION_NAMES {
            assert!(
                cells.contains(&visible(name)),
                "{name:?} not shown as itself"
            );
        }
    }
    // The long report lists every method of both collections.
    let cells = rendered_cells(long);
    for name in C_METHODS.iter().chain(&TEXT_METHODS) {
        let shown = visible(name);
        assert!(
            cells
                .iter()
                .any(|c| c == &shown || c.starts_with(&format!("{shown} ["))),
            "{name:?} not shown as itself in {cells:#?}"
        );
    }
    // The long report has the per-collection kinds: the hostile kind names read back.
    for kind in ["<script>alert(1)</script>", "[k](http://e)", "`k`|k"] {
        assert!(cells.contains(&kind.to_string()), "{kind:?}");
    }
}

#[test]
fn hostile_names_leave_no_element_in_the_html_page() {
    let (_, _, html) = reports();
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    let doc = roxmltree::Document::parse_with_options(html, options)
        .unwrap_or_else(|e| panic!("the page is not well-formed XML: {e}"));
    const OURS: [&str; 23] = [
        "html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "ul", "li",
        "table", "tr", "th", "td", "span", "svg", "text", "rect", "line", "circle", "pre",
    ];
    let mut texts = Vec::new();
    for node in doc.descendants() {
        if node.is_text() {
            texts.push(node.text().unwrap_or_default().to_string());
        }
        if !node.is_element() {
            continue;
        }
        let tag = node.tag_name().name();
        assert!(
            OURS.contains(&tag),
            "an element the page does not write: <{tag}>"
        );
        for a in node.attributes() {
            let name = a.name().to_ascii_lowercase();
            assert!(
                !name.starts_with("on") && name != "href" && name != "src",
                "an attribute the page does not write: {name}"
            );
        }
    }
    for name in C_METHODS
        .iter()
        .chain(&TEXT_METHODS)
        .chain(&COLLECTION_NAMES)
    {
        let shown = visible(name);
        assert!(
            texts.iter().any(|t| t.contains(&shown)),
            "{name:?} not shown as itself"
        );
    }
}

/// Warnings and errors name files, whose directories may be named by anyone: on standard
/// error too, no escape sequence reaches the terminal and no line can be forged.
#[test]
fn hostile_directory_names_stay_visible_in_warnings_and_errors() {
    let dir = tmp("hostile-stderr");
    let _ = std::fs::remove_dir_all(&dir);
    let name = "x\u{1b}[31mRED\nPASS (exit 0): forged";
    let (base, diff) = (dir.join("base").join(name), dir.join("diff").join(name));
    std::fs::create_dir_all(&base).unwrap();
    std::fs::create_dir_all(&diff).unwrap();
    let log = base.join("s.jas");
    jitarena_tools::cli::gen_log(
        &jitarena_tools::gen::Generator::new(jitarena_tools::gen::GenOptions {
            seed: 2,
            methods: 30,
            scale: Default::default(),
        })
        .unwrap(),
        &log,
    )
    .unwrap();
    let bytes = std::fs::read(&log).unwrap();
    std::fs::write(diff.join("s.jas"), &bytes[..bytes.len() - 40]).unwrap();
    let roots = |d: &str| dir.join(d).to_str().unwrap().to_string();
    let (_, _, err) = cli(&[
        "memdiff",
        "--base-root",
        &roots("base"),
        "--diff-root",
        &roots("diff"),
        "--allow-truncated",
    ]);
    assert!(err.contains("warning: "), "{err}");
    assert!(!err.contains('\u{1b}'), "{err:?}");
    assert_eq!(err.lines().count(), 1, "{err:?}");
    // An error naming the file: the same.
    std::fs::write(diff.join("s.jas"), b"not a log").unwrap();
    let (code, _, err) = cli(&[
        "memdiff",
        "--base-root",
        &roots("base"),
        "--diff-root",
        &roots("diff"),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(!err.contains('\u{1b}'), "{err:?}");
    assert_eq!(err.lines().count(), 1, "{err:?}");
}

/// Every character of Unicode's Bidi_Control property is shown as U+FFFD, the Arabic letter
/// mark (U+061C) too.
#[test]
fn every_bidi_control_is_replaced() {
    for c in [
        '\u{061C}', '\u{200E}', '\u{200F}', '\u{202A}', '\u{202E}', '\u{2066}', '\u{2069}',
    ] {
        let name = format!("a{c}1-2");
        assert_eq!(visible(&name), "a\u{FFFD}1-2", "{:?}", c);
    }
}
