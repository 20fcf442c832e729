//! Progress lines (`replay`, `merge`, `memdiff`): drawn on a terminal, and never in piped
//! output or with `--quiet`.

mod common;

use std::path::PathBuf;
use std::process::{Command, Stdio};

use common::{s, tmp};

const BIN: &str = env!("CARGO_BIN_EXE_jitarena");

/// Runs with standard output and error piped; returns standard error.
fn piped(args: &[&str]) -> String {
    let out = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{args:?}: {err}");
    err
}

/// A log and a trace of `methods` generated methods.
fn inputs(name: &str, seed: &str, methods: &str) -> (PathBuf, PathBuf) {
    let (log, trace) = (tmp(&format!("{name}.jas")), tmp(&format!("{name}.jat")));
    piped(&[
        "gen",
        "--seed",
        seed,
        "--methods",
        methods,
        "--log",
        s(&log),
    ]);
    piped(&[
        "gen",
        "--seed",
        seed,
        "--methods",
        methods,
        "--trace",
        s(&trace),
    ]);
    (log, trace)
}

fn assert_no_drawing(what: &str, err: &str) {
    assert!(!err.contains('\r'), "{what}: a carriage return in {err:?}");
    assert!(
        !err.contains('\x1b'),
        "{what}: an escape sequence in {err:?}"
    );
}

#[test]
fn piped_standard_error_holds_no_progress() {
    let (base, base_trace) = inputs("pipe-base", "3", "3000");
    let (diff, _) = inputs("pipe-diff", "4", "3000");
    let replayed = tmp("pipe-replayed.jas");
    let err = piped(&["replay", s(&base_trace), "-o", s(&replayed)]);
    assert_no_drawing("replay", &err);
    assert!(err.contains("replayed 3,000 methods"), "{err}");
    let merged = tmp("pipe-merged.jas");
    let err = piped(&["merge", "-o", s(&merged), s(&base), s(&replayed)]);
    assert_no_drawing("merge", &err);
    assert!(err.contains("merged 6,000 methods"), "{err}");
    let err = piped(&["memdiff", s(&base), s(&diff)]);
    assert_no_drawing("memdiff", &err);
    let err = piped(&[
        "memdiff",
        "--collection",
        "one",
        s(&base),
        s(&diff),
        "--collection",
        "two",
        s(&merged),
        s(&diff),
    ]);
    assert_no_drawing("memdiff over collections", &err);
}

/// Runs `args` on a terminal (util-linux `script` gives it one); returns all it wrote there,
/// or `None` when `script` is not installed.
fn on_terminal(args: &[&str]) -> Option<String> {
    let line = std::iter::once(BIN)
        .chain(args.iter().copied())
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect::<Vec<_>>()
        .join(" ");
    let out = Command::new("script")
        .args(["-qec", &format!("{line} >/dev/null"), "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn a_terminal_gets_progress_unless_quiet() {
    let (base, trace) = inputs("tty-base", "5", "3000");
    let (diff, _) = inputs("tty-diff", "6", "3000");
    let Some(shown) = on_terminal(&["memdiff", s(&base), s(&diff)]) else {
        eprintln!("no `script` command: the terminal case is not checked");
        return;
    };
    // Drawn, then cleared: the line is rewritten in place.
    assert!(shown.contains("memdiff: "), "{shown:?}");
    assert!(shown.contains("\r\x1b["), "{shown:?}");
    let replayed = tmp("tty-replayed.jas");
    let shown = on_terminal(&["replay", s(&trace), "-o", s(&replayed)]).unwrap();
    assert!(shown.contains("replay: file 1/1"), "{shown:?}");
    let merged = tmp("tty-merged.jas");
    let shown = on_terminal(&["merge", "-o", s(&merged), s(&base), s(&replayed)]).unwrap();
    assert!(shown.contains("merge: "), "{shown:?}");
    let quiet = on_terminal(&["memdiff", "--quiet", s(&base), s(&diff)]).unwrap();
    assert!(!quiet.contains('\x1b'), "{quiet:?}");
    assert!(!quiet.contains("memdiff: "), "{quiet:?}");
}
