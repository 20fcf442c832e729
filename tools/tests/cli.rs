//! The `jitarena` command, run as a user runs it: gen, replay, stats, dump, merge, and the
//! errors and exit codes on bad input.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{fails, jitarena, ok, s, tmp};

#[test]
fn gen_is_deterministic_for_a_seed() {
    let (a, b, c) = (tmp("det-a.jat"), tmp("det-b.jat"), tmp("det-c.jat"));
    ok(&["gen", "--seed", "5", "--methods", "50", "--trace", s(&a)]);
    ok(&["gen", "--seed", "5", "--methods", "50", "--trace", s(&b)]);
    ok(&["gen", "--seed", "6", "--methods", "50", "--trace", s(&c)]);
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert_ne!(std::fs::read(&a).unwrap(), std::fs::read(&c).unwrap());
    let (l1, l2) = (tmp("det-1.jas"), tmp("det-2.jas"));
    ok(&["gen", "--seed", "5", "--methods", "500", "--log", s(&l1)]);
    ok(&["gen", "--seed", "5", "--methods", "500", "--log", s(&l2)]);
    assert_eq!(std::fs::read(&l1).unwrap(), std::fs::read(&l2).unwrap());
}

#[test]
fn gen_replay_stats_is_the_whole_flow() {
    let (trace, log) = (tmp("flow.jat"), tmp("flow.jas"));
    ok(&["gen", "--methods", "120", "--trace", s(&trace)]);
    ok(&["replay", s(&trace), "-o", s(&log), "--page-size", "16384"]);
    let text = ok(&["stats", s(&log)]);
    for needle in [
        "120 methods",
        "count: ",
        "allocateMemory: ",
        "Alloc'd bytes by kind:",
        "ASTNode",
        "p50",
        "MinOpts",
        "FullOpts",
        "Alloc'd bytes by phase:",
        "LSRA",
        "Largest methods:",
    ] {
        assert!(text.contains(needle), "stats lacks {needle:?}:\n{text}");
    }
    let json = ok(&["stats", "--json", s(&log)]);
    assert!(
        json.starts_with("{\"schema_version\":1,\"version\":1,\"files\":1,\"methods\":120,"),
        "{json}"
    );
    // It parses, as one line, and carries its schema version and the documented keys in order.
    assert_eq!(json.lines().count(), 1, "{json}");
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["schema_version"], 1);
    let keys: Vec<&str> = doc
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "schema_version",
            "version",
            "files",
            "methods",
            "allocations",
            "bytes",
            "used_bytes",
            "reserved_bytes",
            "pages",
            "largest_alloc",
            "limit_hits",
            "failed_compiles",
            "method_bytes",
            "tiers",
            "kinds",
            "phases",
            "largest_methods"
        ]
    );
    assert_eq!(doc["methods"], 120);
    // The table's total equals the sum of the dump's rows.
    let csv = ok(&["dump", s(&log), "--format", "csv"]);
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    assert_eq!(
        &header[..5],
        ["context", "tier", "name", "bytes", "allocations"]
    );
    assert_eq!(csv.lines().count(), 121);
    let jsonl = ok(&["dump", s(&log), "--format", "jsonl"]);
    let field = |line: &str, key: &str| -> u64 {
        let at = line.find(&format!("\"{key}\":")).unwrap() + key.len() + 3;
        line[at..]
            .split([',', '}'])
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let total: u64 = jsonl.lines().map(|l| field(l, "bytes")).sum();
    assert!(json.contains(&format!("\"bytes\":{total},")), "{json}");
    assert_eq!(jsonl.lines().count(), 120);
    assert!(jsonl
        .lines()
        .all(|l| l.starts_with("{\"context\":") && l.ends_with('}')));
    // Every line parses, with the documented keys in order.
    for line in jsonl.lines() {
        let row: serde_json::Value = serde_json::from_str(line).unwrap();
        let keys: Vec<&str> = row
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "context",
                "tier",
                "name",
                "bytes",
                "allocations",
                "used_bytes",
                "reserved_bytes",
                "pages",
                "largest_alloc",
                "limit_hit",
                "kinds",
                "phases"
            ]
        );
        assert!(row["kinds"]
            .as_object()
            .unwrap()
            .values()
            .all(|k| k["bytes"].is_u64()));
    }
}

#[test]
fn merge_of_shards_equals_the_log_of_the_whole() {
    use jitarena::trace::{self, TraceWriter};
    let whole_trace = tmp("whole.jat");
    ok(&[
        "gen",
        "--seed",
        "9",
        "--methods",
        "90",
        "--trace",
        s(&whole_trace),
    ]);
    // Three shards: every third method, as a sharded CI replay would split a collection.
    let shards: Vec<PathBuf> = (0..3).map(|i| tmp(&format!("shard{i}.jat"))).collect();
    let mut writers: Vec<_> = shards
        .iter()
        .map(|p| TraceWriter::new(std::fs::File::create(p).unwrap()).unwrap())
        .collect();
    let mut reader = trace::open(&whole_trace).unwrap();
    let mut i = 0;
    while let Some(m) = reader.next_method().unwrap() {
        writers[i % 3].write_method(&m).unwrap();
        i += 1;
    }
    writers.into_iter().for_each(|w| drop(w.finish().unwrap()));
    let whole = tmp("whole.jas");
    ok(&["replay", s(&whole_trace), "-o", s(&whole)]);
    let dir = tmp("shard-logs");
    std::fs::create_dir_all(&dir).unwrap();
    for (i, shard) in shards.iter().enumerate() {
        ok(&["replay", s(shard), "-o", s(&dir.join(format!("{i}.jas")))]);
    }
    let merged = tmp("merged.jas");
    ok(&["merge", "-o", s(&merged), s(&dir)]);
    let sorted = |log: &Path| {
        let mut rows: Vec<String> = ok(&["dump", s(log), "--format", "jsonl"])
            .lines()
            .map(String::from)
            .collect();
        rows.sort();
        rows
    };
    let (m, w) = (sorted(&merged), sorted(&whole));
    assert_eq!(m.len(), w.len());
    if let Some((a, b)) = m.iter().zip(&w).find(|(a, b)| a != b) {
        panic!("merged and whole differ:\n{a}\n{b}");
    }
    assert_eq!(
        ok(&["stats", "--json", s(&merged)]),
        ok(&["stats", "--json", s(&whole)])
    );
}

#[test]
fn dump_text_of_a_trace_gives_back_its_lines() {
    let trace = tmp("text.txt");
    let text = "# a comment\nmethod 3 FullOpts Ns.C:M(int, long)\nphase Import\nalloc ASTNode 48\nalloc LSRA 100\nphase -\nalloc ASTNode 8\nmethod -1 - \nalloc Generic 0\n";
    std::fs::write(&trace, text).unwrap();
    let dumped = ok(&["dump", s(&trace), "--format", "text"]);
    let expected: String = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| format!("{}\n", l.trim_end()))
        .collect();
    assert_eq!(
        dumped.lines().map(str::trim_end).collect::<Vec<_>>(),
        expected.lines().collect::<Vec<_>>()
    );
}

#[test]
fn bad_inputs_exit_2_with_a_message_naming_the_file() {
    let missing = tmp("missing.jas");
    let err = fails(&["stats", s(&missing)]);
    assert!(
        err.contains("missing.jas") && err.contains("cannot open"),
        "{err}"
    );
    let empty = tmp("empty.jas");
    std::fs::write(&empty, b"").unwrap();
    // An empty log is one whose writer stopped before its header: no records, a warning.
    let (code, out, err) = common::cli(&["stats", s(&empty)]);
    assert!(
        code == 0 && err.contains("empty.jas: the file is cut short inside its header"),
        "{out}{err}"
    );
    let text = tmp("notes.txt");
    std::fs::write(&text, "hello world\n").unwrap();
    let err = fails(&["stats", s(&text)]);
    assert!(
        err.contains("notes.txt") && err.contains("not a jitarena stats log"),
        "{err}"
    );
    let err = fails(&["replay", s(&text), "-o", s(&tmp("x.jas"))]);
    assert!(
        err.contains("notes.txt:1") && err.contains("unknown line"),
        "{err}"
    );
    let log = tmp("a-log.jas");
    ok(&["gen", "--methods", "3", "--log", s(&log)]);
    let err = fails(&["replay", s(&log), "-o", s(&tmp("y.jas"))]);
    assert!(err.contains("stats log, not a trace"), "{err}");
    let err = fails(&[
        "gen",
        "--methods",
        "3",
        "--trace",
        s(&tmp("z.jat")),
        "--scale",
        "NoSuchKind=10",
    ]);
    assert!(err.contains("NoSuchKind"), "{err}");
    let bad_trace = tmp("bad.txt");
    std::fs::write(&bad_trace, "alloc ASTNode 8\n").unwrap();
    assert!(fails(&["replay", s(&bad_trace), "-o", s(&tmp("w.jas"))])
        .contains("bad.txt:1: `alloc` before any `method` line"));
    std::fs::write(&bad_trace, "method 1 FullOpts m\nalloc ASTNode eight\n").unwrap();
    assert!(fails(&["replay", s(&bad_trace), "-o", s(&tmp("w.jas"))]).contains("bad.txt:2"));
    let err = fails(&[
        "replay",
        s(&bad_trace),
        "-o",
        s(&tmp("w.jas")),
        "--page-size",
        "100",
    ]);
    assert!(
        err.contains("bad.txt:2") || err.contains("page size"),
        "{err}"
    );
    // A usage error is exit 2 too.
    let out = jitarena(&["stats"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_truncated_log_is_read_with_a_warning() {
    let log = tmp("trunc.jas");
    ok(&["gen", "--methods", "20", "--log", s(&log)]);
    let bytes = std::fs::read(&log).unwrap();
    std::fs::write(&log, &bytes[..bytes.len() - 10]).unwrap();
    let out = jitarena(&["stats", s(&log)]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning:") && err.contains("cut short") && err.contains("trunc.jas"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("19 methods"));
}

/// Runs `args` with standard output closed by its reader after `keep` bytes (none: before the
/// command writes), as `jitarena ... | head -c keep` would; returns the exit code and standard
/// error.
fn with_reader_gone(args: &[&str], keep: usize) -> (Option<i32>, String) {
    use std::io::Read;
    let mut child = Command::new(env!("CARGO_BIN_EXE_jitarena"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run jitarena");
    let mut stdout = child.stdout.take().unwrap();
    let mut first = vec![0u8; keep];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    (out.status.code(), String::from_utf8(out.stderr).unwrap())
}

#[test]
fn a_reader_that_stops_reading_ends_the_output_quietly() {
    let (base, diff) = (tmp("gone-base.jas"), tmp("gone-diff.jas"));
    ok(&["gen", "--seed", "3", "--methods", "300", "--log", s(&base)]);
    let scaled = [
        "gen",
        "--seed",
        "3",
        "--methods",
        "300",
        "--scale",
        "LSRA=40",
    ];
    ok(&[&scaled[..], &["--log", s(&diff)]].concat());
    // dump's rows (hundreds of KB) outgrow the pipe: it meets the closed pipe mid-stream.
    for fmt in ["csv", "jsonl"] {
        let (code, err) = with_reader_gone(&["dump", "--format", fmt, s(&base)], 100);
        assert_eq!((code, err.as_str()), (Some(0), ""), "dump --format {fmt}");
    }
    let (code, err) = with_reader_gone(&["stats", s(&base)], 0);
    assert_eq!((code, err.as_str()), (Some(0), ""), "stats");
    // memdiff still gives its verdict: the same code as with its output read.
    let verdict = jitarena(&["memdiff", s(&base), s(&diff)]).status.code();
    assert_eq!(verdict, Some(1), "the scaled kind is a regression");
    let (code, err) = with_reader_gone(&["memdiff", s(&base), s(&diff)], 0);
    assert_eq!(code, verdict, "{err}");
    assert!(!err.contains("error"), "{err}");
}
