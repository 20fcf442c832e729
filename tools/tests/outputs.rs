//! Inputs are never outputs: `merge`, `replay` and `dump -o` refuse an output that is one of
//! their inputs or lies in an input directory (exit 2, both paths named), and write through a
//! temporary file, so that a failed run leaves the earlier output and no partial file.

mod common;

use std::path::{Path, PathBuf};

use common::{fails, ok, s};

/// A fresh directory for one test.
fn dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("outputs")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs and expects exit code 2; returns standard error.
fn gen_log(path: &Path, seed: &str) {
    ok(&["gen", "--seed", seed, "--methods", "40", "--log", s(path)]);
}

/// The names in a directory, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn merge_refuses_an_output_that_is_an_input_by_any_name() {
    let d = dir("merge-self");
    let (a, b) = (d.join("a.jas"), d.join("b.jas"));
    gen_log(&a, "1");
    gen_log(&b, "2");
    let before = std::fs::read(&a).unwrap();
    let err = fails(&["merge", "-o", s(&a), s(&a), s(&b)]);
    assert!(err.contains("also an input"), "{err}");
    assert_eq!(err.matches(s(&a)).count(), 2, "both paths are named: {err}");
    let dotted = d.join("sub").join("..").join("a.jas");
    std::fs::create_dir_all(d.join("sub")).unwrap();
    fails(&["merge", "-o", s(&dotted), s(&a), s(&b)]);
    let link = d.join("link.jas");
    std::os::unix::fs::symlink(&a, &link).unwrap();
    fails(&["merge", "-o", s(&link), s(&a), s(&b)]);
    let hard = d.join("hard.jas");
    std::fs::hard_link(&b, &hard).unwrap();
    fails(&["merge", "-o", s(&hard), s(&a), s(&b)]);
    assert!(
        std::fs::read(&a).unwrap() == before,
        "the input was changed"
    );
    assert_eq!(
        listing(&d),
        ["a.jas", "b.jas", "hard.jas", "link.jas", "sub"]
    );
}

#[test]
fn merge_refuses_an_output_inside_an_input_directory_and_reruns_leave_it_whole() {
    let d = dir("merge-dir");
    let shards = d.join("shards");
    std::fs::create_dir_all(&shards).unwrap();
    gen_log(&shards.join("s1.jas"), "1");
    gen_log(&shards.join("s2.jas"), "2");
    let inside = shards.join("merged.jas");
    for _ in 0..2 {
        let err = fails(&["merge", "-o", s(&inside), s(&shards)]);
        assert!(err.contains("inside the input directory"), "{err}");
        assert!(
            err.contains(s(&inside)) && err.contains(s(&shards)),
            "{err}"
        );
    }
    assert_eq!(listing(&shards), ["s1.jas", "s2.jas"]);
    // Outside the directory, a second run gives the same file as the first.
    let merged = d.join("merged.jas");
    ok(&["merge", "-o", s(&merged), s(&shards)]);
    let first = std::fs::read(&merged).unwrap();
    ok(&["merge", "-o", s(&merged), s(&shards)]);
    assert!(
        std::fs::read(&merged).unwrap() == first,
        "a rerun changed the merge"
    );
    let stats = ok(&["stats", s(&merged)]);
    assert!(stats.contains("80 methods"), "{stats}");
    assert_eq!(listing(&d), ["merged.jas", "shards"]);
}

#[test]
fn replay_refuses_to_write_over_its_trace() {
    let d = dir("replay-self");
    let trace = d.join("t.jat");
    ok(&["gen", "--methods", "30", "--trace", s(&trace)]);
    let before = std::fs::read(&trace).unwrap();
    let err = fails(&["replay", s(&trace), "-o", s(&trace)]);
    assert!(err.contains("also an input"), "{err}");
    assert!(
        std::fs::read(&trace).unwrap() == before,
        "the trace was changed"
    );
    let err = fails(&["replay", s(&d), "-o", s(&d.join("out.jas"))]);
    assert!(err.contains("inside the input directory"), "{err}");
    assert_eq!(listing(&d), ["t.jat"]);
}

#[test]
fn dump_o_refuses_an_input_and_writes_what_standard_output_shows() {
    let d = dir("dump");
    let log = d.join("a.jas");
    gen_log(&log, "3");
    let before = std::fs::read(&log).unwrap();
    let err = fails(&["dump", s(&log), "-o", s(&log)]);
    assert!(err.contains("also an input"), "{err}");
    assert!(
        std::fs::read(&log).unwrap() == before,
        "the input was changed"
    );
    let csv = d.join("a.csv");
    std::fs::write(&csv, "earlier content").unwrap();
    ok(&["dump", s(&log), "-o", s(&csv)]);
    assert_eq!(
        std::fs::read_to_string(&csv).unwrap(),
        ok(&["dump", s(&log)])
    );
    let jsonl = d.join("a.jsonl");
    ok(&["dump", "--format", "jsonl", s(&log), "--output", s(&jsonl)]);
    assert_eq!(
        std::fs::read_to_string(&jsonl).unwrap(),
        ok(&["dump", "--format", "jsonl", s(&log)])
    );
    assert_eq!(listing(&d), ["a.csv", "a.jas", "a.jsonl"]);
}

/// A trace whose frames after the first third fail their checksums.
fn damaged_trace(path: &Path) {
    ok(&["gen", "--seed", "9", "--methods", "60", "--trace", s(path)]);
    let mut bytes = std::fs::read(path).unwrap();
    let at = bytes.len() * 2 / 3;
    bytes[at] ^= 0x55;
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn a_run_that_fails_midway_leaves_the_earlier_output_and_no_temporary_file() {
    let d = dir("midway");
    let (good, bad) = (d.join("good.jat"), d.join("bad.jat"));
    ok(&["gen", "--methods", "30", "--trace", s(&good)]);
    damaged_trace(&bad);
    let out = d.join("out.jas");
    gen_log(&out, "4");
    let before = std::fs::read(&out).unwrap();
    let err = fails(&["replay", s(&good), s(&bad), "-o", s(&out)]);
    assert!(err.contains(s(&bad)), "{err}");
    assert!(
        std::fs::read(&out).unwrap() == before,
        "the earlier log was changed"
    );
    let text = d.join("out.txt");
    let err = fails(&[
        "dump",
        "--format",
        "text",
        s(&good),
        s(&bad),
        "-o",
        s(&text),
    ]);
    assert!(err.contains(s(&bad)), "{err}");
    assert_eq!(listing(&d), ["bad.jat", "good.jat", "out.jas"]);
}
