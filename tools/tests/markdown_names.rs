//! Names in markdown reports: escaped only where CommonMark needs it, so that the raw summary
//! reads as the names are (`benchmarks.run`, `System.Int32:Parse`), while a hostile name stays
//! inert text. Checked by rendering with a CommonMark library (pulldown-cmark, with GitHub's
//! extensions).

mod common;

use common::{cli, s, tmp};
use jitarena_tools::report::{md_text, visible, MD_BREAK};
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// Names that need no escape: they must come out of [`md_text`] unchanged.
const PLAIN: [&str; 8] = [
    "benchmarks.run",
    "libraries.pmi.windows.x64.checked.mch",
    "System.Int32:Parse(System.String):int",
    "LSRA_Interval",
    "Tier1-OSR",
    "a+b=c; 50% (x, y) /z/ 'q' \"r\" ?!{}^>",
    "Lowering2",
    "Ns.Class:Method(int,ref):this",
];

/// Names that try to be markup.
const HOSTILE: [&str; 12] = [
    "**bold** _em_ __strong__ *x*",
    "[link](http://evil.example) ![img](x.png)",
    "<b>tag</b> <!-- c --> &amp; &#169;",
    "a|b|c",
    "`code` ``more``",
    "~~gone~~ ~x~ $math$ $$y$$",
    "https://evil.example/x www.evil.example",
    "user@evil.example @dotnet/jit-contrib #123",
    "back\\slash \\* \\_",
    "_leading and trailing_",
    "snake_case_name_ _x",
    "Dictionary`2[System.__Canon,System.Int32]:TryInsert",
];

fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_MATH
        | Options::ENABLE_GFM
}

/// The text a line of markdown renders to, failing on anything but text.
fn rendered_text(md: &str) -> String {
    let mut text = String::new();
    for event in Parser::new_ext(md, options()) {
        match event {
            Event::Text(t) => text.push_str(&t),
            Event::Start(Tag::Paragraph) | Event::End(TagEnd::Paragraph) => {}
            other => panic!("{md:?} renders {other:?}"),
        }
    }
    text.replace(MD_BREAK, "")
}

#[test]
fn a_name_renders_as_itself_and_plain_names_keep_no_backslash() {
    for name in PLAIN.iter().chain(&HOSTILE) {
        let md = md_text(name);
        assert_eq!(
            rendered_text(&format!("x {md} y")),
            format!("x {} y", visible(name))
        );
        if PLAIN.contains(name) {
            assert_eq!(md, *name, "a plain name is left as it is");
        }
    }
}

#[test]
fn the_reports_show_names_as_they_are_and_hostile_ones_inert() {
    let dir = tmp("summary");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let header = "Context,Method full name,Base result,Diff result,MinOpts,Base BytesAllocated,Diff BytesAllocated\n";
    let mut files = Vec::new();
    for (c, collection) in ["benchmarks.run", "libraries.pmi"].iter().enumerate() {
        let mut text = header.to_string();
        for (i, name) in PLAIN.iter().chain(&HOSTILE).enumerate() {
            let base = 100_000 * (i as u64 + 1);
            let diff = base + 10_000 * (c as u64 + 1);
            let quoted = name.replace('"', "\"\"");
            text.push_str(&format!(
                "{i},\"{quoted}\",Success,Success,False,{base},{diff}\n"
            ));
        }
        let path = dir.join(format!("{collection}_details.csv"));
        std::fs::write(&path, text).unwrap();
        files.push(path);
    }
    // The long markdown: the summary, then each collection's lists of methods, every one here.
    let md = dir.join("long.md");
    let args = [
        "memdiff",
        "--csv",
        s(&files[0]),
        "--csv",
        s(&files[1]),
        "--md-long",
        s(&md),
        "--top",
        "30",
    ];
    let (code, out, err) = cli(&args);
    assert!(code == 0 || code == 1, "{out}{err}");
    let md = std::fs::read_to_string(&md).unwrap();
    // Raw: plain names read as they are.
    for name in [
        "benchmarks.run",
        "libraries.pmi",
        "System.Int32:Parse(System.String):int",
    ] {
        assert!(md.contains(&format!("|{name}|")), "{name} in\n{md}");
    }
    // Rendered: every table cell's text, the names among them exactly.
    let mut cells = Vec::new();
    let mut cell: Option<String> = None;
    for event in Parser::new_ext(&md, options()) {
        match event {
            Event::Start(Tag::TableCell) => cell = Some(String::new()),
            Event::End(TagEnd::TableCell) => cells.extend(cell.take()),
            Event::Text(t) => {
                if let Some(c) = cell.as_mut() {
                    c.push_str(&t.replace(MD_BREAK, ""));
                }
            }
            Event::Start(Tag::Link { .. } | Tag::Image { .. } | Tag::Emphasis)
            | Event::Start(Tag::Strikethrough)
            | Event::Code(_)
            | Event::InlineMath(_)
            | Event::DisplayMath(_) => panic!("markup from a name: {event:?}\n{md}"),
            _ => {}
        }
    }
    // A method's cell is its name, then its context (`Name [context 3]`).
    for (i, name) in PLAIN.iter().chain(&HOSTILE).enumerate() {
        let want = format!("{} [context {i}]", visible(name));
        assert!(cells.contains(&want), "no cell {want:?} in {cells:?}");
    }
}
