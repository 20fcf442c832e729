//! `jitarena_method_done` and the process-wide stats log: many threads into one log, the
//! environment variables, trace recording, and two copies of the library in one process.

mod common;

#[path = "../../tests/native/mod.rs"]
mod native;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use common::tmp;
use jitarena::log;
use jitarena::{Arena, Config, Kind, MethodRef, Phase};
use jitarena_tools::harness::{self, ReplayOptions};
use native::{build_program, build_program_with, run};

#[test]
fn eight_threads_of_methods_into_one_log_lose_and_tear_nothing() {
    const THREADS: u64 = 8;
    const METHODS: u64 = 2500;
    let path = tmp("threads.jas");
    jitarena::process::log_open(path.to_str().unwrap()).unwrap();
    let err = jitarena::process::log_open(path.to_str().unwrap()).unwrap_err();
    assert!(err.message.contains("already open"), "{err}");
    jitarena::process::aggregate_reset();
    jitarena::process::aggregate_enable(true);
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            std::thread::spawn(move || {
                let config = Config::new(&["ASTNode", "LSRA", "Generic"]).phases(&["A", "B"]);
                let mut arena = Arena::new(&config).unwrap();
                for j in 0..METHODS {
                    arena.set_phase(Phase((j % 2) as u32));
                    for _ in 0..(j % 50 + 1) {
                        arena
                            .alloc_bytes(8 * (t as usize + 1), Kind((t % 3) as u32))
                            .unwrap();
                    }
                    let name = format!("T{t}:M{j}");
                    let method = MethodRef {
                        name: Some(&name),
                        context: (t * 100_000 + j) as i64,
                        tier: Some("FullOpts"),
                        failed: false,
                    };
                    arena.method_done(method).unwrap();
                    arena.reset();
                }
            })
        })
        .collect();
    handles.into_iter().for_each(|h| h.join().unwrap());
    jitarena::process::log_close().unwrap();

    let (records, warnings) = log::read_all(&path).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(records.len() as u64, THREADS * METHODS);
    let mut seen = HashSet::new();
    for r in &records {
        let t = r.info.context as u64 / 100_000;
        let j = r.info.context as u64 % 100_000;
        assert_eq!(r.info.name.as_deref(), Some(format!("T{t}:M{j}").as_str()));
        assert!(
            seen.insert(r.info.context),
            "record {} twice",
            r.info.context
        );
        let n = j % 50 + 1;
        assert_eq!(r.counts.kinds, vec![((t % 3) as u32, n * 8 * (t + 1), n)]);
        assert_eq!(r.counts.phases, vec![((j % 2) as u32, n * 8 * (t + 1))]);
    }
    let aggregate = jitarena::process::aggregate();
    let methods: u64 = aggregate.iter().map(|a| a.1).sum();
    assert_eq!(methods, THREADS * METHODS);
}

#[test]
fn recorded_trace_replays_to_the_logged_counters() {
    let exe = build_program("record_test", &["tests/c/record_test.c"], false);
    let dir = tmp("record");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let child = Command::new(&exe)
        .env("JITARENA_LOG", dir.join("log-%p.jas"))
        .env("JITARENA_TRACE", dir.join("trace.jat"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    let log_path = dir.join(format!("log-{pid}.jas"));
    let (logged, warnings) = log::read_all(&log_path).unwrap();
    assert!(warnings.is_empty());
    assert_eq!(logged.len(), 26);

    let replayed_path = dir.join("replayed.jas");
    harness::replay(
        &[dir.join("trace.jat")],
        Some(&replayed_path),
        &ReplayOptions::default(),
    )
    .unwrap();
    let (replayed, _) = log::read_all(&replayed_path).unwrap();
    assert_eq!(replayed.len(), logged.len());
    for (a, b) in logged.iter().zip(&replayed) {
        assert_eq!(a.info, b.info);
        assert_eq!(a.counts, b.counts, "method {:?}", a.info.name);
    }
    let invalid: u64 = logged
        .iter()
        .flat_map(|r| r.counts.kinds.iter().filter(|k| k.0 == 4).map(|k| k.2))
        .sum();
    assert!(invalid > 0, "the invalid kind is logged in its bucket");
}

/// The stand-in JITs (`tests/c/mini_jit.c`), a baseline and a diff, each a shared library
/// with its own copy of the library, and the host that loads both into one process: built
/// once for the tests that run them (at once, in threads).
fn two_jits() -> (PathBuf, PathBuf, PathBuf) {
    static BUILT: std::sync::OnceLock<(PathBuf, PathBuf, PathBuf)> = std::sync::OnceLock::new();
    BUILT.get_or_init(build_two_jits).clone()
}

fn build_two_jits() -> (PathBuf, PathBuf, PathBuf) {
    let so_flags = ["-shared", "-fPIC", "-Wl,--exclude-libs,ALL"];
    let base = build_program_with(
        "libmini_base.so",
        &["tests/c/mini_jit.c"],
        false,
        &[&so_flags[..], &["-DHEAVY=0"]].concat(),
    );
    let diff = build_program_with(
        "libmini_diff.so",
        &["tests/c/mini_jit.c"],
        false,
        &[&so_flags[..], &["-DHEAVY=1"]].concat(),
    );
    let host = build_program("two_jits_host", &["tests/c/two_jits_host.c"], false);
    (base, diff, host)
}

/// Bytes per kind of every record of a log, which must hold `methods` records.
fn sums_by_kind(path: &Path, methods: usize) -> BTreeMap<String, u64> {
    let (records, _) = log::read_all(path).unwrap();
    assert_eq!(records.len(), methods, "{}", path.display());
    let mut by_kind = BTreeMap::new();
    for r in &records {
        for &(slot, bytes, _) in &r.counts.kinds {
            *by_kind
                .entry(r.schema.kind_name(slot as usize).to_string())
                .or_insert(0u64) += bytes;
        }
    }
    by_kind
}

#[test]
fn two_copies_in_one_process_write_two_separate_correct_logs() {
    let (base, diff, host) = two_jits();
    let (base_log, diff_log) = (tmp("base.jas"), tmp("diff.jas"));
    let args = [
        base.to_str().unwrap(),
        diff.to_str().unwrap(),
        base_log.to_str().unwrap(),
        diff_log.to_str().unwrap(),
        "40",
    ];
    let out = run(&host, &args);
    assert!(out.contains("base 0, diff 0"), "{out}");
    let (b, d) = (sums_by_kind(&base_log, 40), sums_by_kind(&diff_log, 40));
    assert_eq!(b["ASTNode"], d["ASTNode"]);
    assert_eq!(b["BasicBlock"], d["BasicBlock"]);
    assert_eq!(
        2 * b["LSRA"],
        d["LSRA"],
        "the diff JIT's LSRA is twice as heavy"
    );
}

/// Both copies open their log from one `JITARENA_LOG` pattern, as a replay tool's environment
/// gives it to both JITs it loads.
fn two_copies_from_one_pattern(pattern: &str) -> (std::process::Output, PathBuf) {
    let (base, diff, host) = two_jits();
    let dir = tmp(&format!("one-pattern-{}", pattern.replace('%', "")));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(&host)
        .args([
            base.to_str().unwrap(),
            diff.to_str().unwrap(),
            "-",
            "-",
            "20",
        ])
        .env("JITARENA_LOG", dir.join(pattern))
        .output()
        .unwrap();
    (out, dir)
}

#[test]
fn two_copies_with_one_per_process_name_never_share_the_file() {
    // `%p` alone names one file for both copies: the second opener fails on every method,
    // saying why, and the first keeps all of its records.
    let (out, dir) = two_copies_from_one_pattern("jit-%p.jas");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.contains("base 0, diff 7"), "{stdout}\n{stderr}"); // JITARENA_E_IO
    assert!(
        stderr.contains("another writer has this file open") && stderr.contains("%m"),
        "{stderr}"
    );
    let files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let kinds = sums_by_kind(&files[0], 20);
    assert!(kinds["LSRA"] > 0);
}

#[test]
fn two_copies_named_by_module_write_every_record_apart() {
    let (out, dir) = two_copies_from_one_pattern("%m-%p.jas");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("base 0, diff 0"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pid_file = |module: &str| {
        let found: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                let name = p.file_name().unwrap().to_str().unwrap();
                name.starts_with(&format!("{module}-")) && name.ends_with(".jas")
            })
            .collect();
        assert_eq!(found.len(), 1, "{module}: {found:?}");
        found[0].clone()
    };
    let b = sums_by_kind(&pid_file("libmini_base"), 20);
    let d = sums_by_kind(&pid_file("libmini_diff"), 20);
    assert_eq!(b["ASTNode"], d["ASTNode"]);
    assert_eq!(
        2 * b["LSRA"],
        d["LSRA"],
        "the diff JIT's LSRA is twice as heavy"
    );
}
