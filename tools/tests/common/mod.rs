//! Helpers shared by the tests of the `jitarena` tools: temporary files, running the command,
//! and logs made for a test (generated, written by the library's writer, or made by hand).
//! Each test crate that needs them includes this module with `mod common;` (`readers`, a
//! crate of several files, with `#[path]`).
// Each test crate uses a subset of these helpers: the rest are dead code in that crate.
#![allow(dead_code)]

use std::borrow::Borrow;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use jitarena::format::{header_for, put_frame, put_str, put_varint, Content};
use jitarena::log::LogWriter;
use jitarena::Shared;
use jitarena::{MethodCounts, Schema};
use jitarena_tools::cli::gen_log;
use jitarena_tools::gen::{GenOptions, Generator};

/// `name` in the test crate's own temporary directory, named after the crate (made if missing).
pub fn tmp(name: &str) -> PathBuf {
    tmp_in(env!("CARGO_CRATE_NAME"), name)
}

/// `name` in the temporary directory `dir` (made if missing), for a test crate whose name is
/// taken there by a file.
pub fn tmp_in(dir: &str, name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// A path as the text of an argument.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Runs `jitarena` with `args`.
pub fn jitarena(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_jitarena"))
        .args(args)
        .output()
        .expect("run jitarena")
}

/// `jitarena` with `args`: its exit code, standard output and standard error.
pub fn cli(args: &[&str]) -> (i32, String, String) {
    let out = jitarena(args);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// The standard output of `jitarena` with `args`, which must succeed.
pub fn ok(args: &[&str]) -> String {
    let out = jitarena(args);
    assert!(
        out.status.success(),
        "jitarena {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The standard error of `jitarena` with `args`, which must fail with exit 2 and an error
/// message, not a panic.
pub fn fails(args: &[&str]) -> String {
    let out = jitarena(args);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "jitarena {args:?}: {err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// The generator of `methods` methods from `seed`, kinds scaled by `scale` (percent).
pub fn generator(seed: u64, methods: u64, scale: &[(&str, f64)]) -> Generator {
    Generator::new(GenOptions {
        seed,
        methods,
        scale: scale.iter().map(|&(k, p)| (k.to_string(), p)).collect(),
    })
    .unwrap()
}

/// Writes a generated log of [`generator`] to `path` (creating its directory).
pub fn log_at(path: &Path, seed: u64, methods: u64, scale: &[(&str, f64)]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    gen_log(&generator(seed, methods, scale), path).unwrap();
}

/// A generated log of [`generator`] at [`tmp`]`(name)`.
pub fn generated(name: &str, seed: u64, methods: u64, scale: &[(&str, f64)]) -> PathBuf {
    let path = tmp(name);
    log_at(&path, seed, methods, scale);
    path
}

/// A schema of these kinds and phases.
pub fn schema(kinds: &[&str], phases: &[&str]) -> Shared<Schema> {
    let names = |l: &[&str]| l.iter().map(|s| s.to_string()).collect();
    Shared::new(Schema::new(names(kinds), names(phases)).unwrap())
}

/// Counts of these kinds `(slot, bytes, allocations)` and phases `(slot, bytes)`: used bytes
/// the kinds' and 16, one page of 4 KiB, the largest allocation 8 bytes.
pub fn counts(kinds: Vec<(u32, u64, u64)>, phases: Vec<(u32, u64)>) -> MethodCounts {
    let used = kinds.iter().map(|k| k.1).sum::<u64>() + 16;
    MethodCounts {
        used_bytes: used,
        reserved_bytes: 4096,
        page_count: 1,
        largest_alloc: 8,
        kinds,
        phases,
        ..MethodCounts::default()
    }
}

/// A log at [`tmp`]`(name)` of `records`, each `(schema, method name, counts)`, written by the
/// library's writer: the `i`th record of context `i` and tier `tiers[i % tiers.len()]`.
pub fn written<S, N, T>(name: &str, records: &[(S, N, MethodCounts)], tiers: &[T]) -> PathBuf
where
    S: Borrow<Shared<Schema>>,
    N: AsRef<str>,
    T: AsRef<str>,
{
    let path = tmp(name);
    let mut w = LogWriter::new(std::fs::File::create(&path).unwrap()).unwrap();
    for (i, (schema, method, counts)) in records.iter().enumerate() {
        let tier = tiers[i % tiers.len()].as_ref();
        w.write(
            schema.borrow(),
            Some(method.as_ref()),
            i as i64,
            Some(tier),
            counts,
        )
        .unwrap();
    }
    w.finish().unwrap();
    path
}

/// Head bits of a version-2 record: kinds by phase follow; the last phase derived; reserved
/// bytes in 4 KiB units.
pub const BY_PHASE: u8 = 2;
/// See [`BY_PHASE`].
pub const DERIVED: u8 = 4;
/// See [`BY_PHASE`].
pub const IN_4K: u8 = 8;

/// A version-2 log of schema (kinds A, B; phase P) whose records are `(head bits, body)`: the
/// body follows the head, context delta 0 and a name written whole (no prefix shared with the
/// previous one, although it could be: the merge writes the name relative to its own output).
pub fn hand_made(name: &str, records: &[(u8, &[u8])]) -> PathBuf {
    hand_made_of(name, ["A", "B"], records)
}

/// [`hand_made`] with the two kinds named `kinds`.
pub fn hand_made_of(name: &str, kinds: [&str; 2], records: &[(u8, &[u8])]) -> PathBuf {
    let mut bytes = header_for(Content::Log, 2).to_vec();
    let mut p = Vec::new();
    put_varint(&mut p, 0);
    put_varint(&mut p, 2);
    put_str(&mut p, kinds[0]);
    put_str(&mut p, kinds[1]);
    put_varint(&mut p, 1);
    put_str(&mut p, "P");
    put_frame(&mut bytes, 1, &p);
    for (i, (head, body)) in records.iter().enumerate() {
        let mut p = vec![*head, 0, 0];
        put_str(&mut p, &format!("Ns.C:M{i}"));
        p.extend_from_slice(body);
        put_frame(&mut bytes, 3, &p);
    }
    let path = tmp(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Runs `jitarena args`, handing its standard output line by line to `line`; returns its exit
/// code, standard error and peak resident size in bytes (`wait4`'s `ru_maxrss`). The peak
/// also counts this process's own at the spawn (the child starts in its memory): a test that
/// measures keeps its own small.
// The child is waited for by `wait4`, which std does not know of.
#[allow(clippy::zombie_processes)]
pub fn run_measured(args: &[&str], mut line: impl FnMut(&str)) -> (i32, String, u64) {
    use std::io::BufRead;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_jitarena"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run jitarena");
    let stderr = child.stderr.take().unwrap();
    let errors = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap());
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut text = String::new();
    while out.read_line(&mut text).unwrap() > 0 {
        line(&text);
        text.clear();
    }
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: the child is ours and not yet waited for; both out-pointers are valid.
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as libc::pid_t, "wait4 failed");
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    (code, errors.join().unwrap(), usage.ru_maxrss as u64 * 1024)
}
