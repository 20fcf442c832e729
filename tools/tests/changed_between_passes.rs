//! `merge` and `dump` read their logs twice (the schemas, then the records). A log that changes
//! in between (a JIT still appending to it, a pipe refilled by its writer) and whose second
//! reading names kinds the first did not see is an error naming the file: `dump --format csv`
//! panicked on it (a kind past its columns), and `merge` blamed its own output.

#![cfg(unix)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use jitarena::log::LogWriter;
use jitarena::{MethodCounts, Schema};

fn tmp(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("changed_between_passes");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// A log of two records whose schema has these kinds.
fn log(kinds: &[&str]) -> Vec<u8> {
    let schema = Arc::new(
        Schema::read(
            kinds.iter().map(|k| k.to_string()).collect(),
            vec!["Import".to_string()],
        )
        .unwrap(),
    );
    let last = kinds.len() as u32 - 1;
    let counts = MethodCounts {
        kinds: vec![(0, 64, 2), (last, 40, 1)],
        phases: vec![(0, 104)],
        used_bytes: 104,
        reserved_bytes: 4096,
        page_count: 1,
        largest_alloc: 40,
        ..MethodCounts::default()
    };
    let mut w = LogWriter::new(Vec::new()).unwrap();
    for context in 0..2 {
        w.write(&schema, Some("M:m()"), context, None, &counts)
            .unwrap();
    }
    w.finish().unwrap()
}

/// Whether process `pid` holds `path` open (Linux: its `/proc` entries).
fn holds_open(pid: u32, path: &std::path::Path) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false; // gone
    };
    fds.flatten()
        .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|target| target == path))
}

/// Runs `jitarena args... FIFO` while a writer fills the FIFO with `first` for the command's
/// first reading and `second` for its second; returns (exit code, standard error).
fn run_on_changing_pipe(
    name: &str,
    args: &[&str],
    first: Vec<u8>,
    second: Vec<u8>,
) -> (Option<i32>, String) {
    let fifo = tmp(name);
    let _ = std::fs::remove_file(&fifo);
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let fifo = fifo.canonicalize().unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_jitarena"))
        .args(args)
        .arg(&fifo)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run jitarena");
    let written = Arc::new(AtomicUsize::new(0));
    let writer = {
        let (fifo, written, pid) = (fifo.clone(), Arc::clone(&written), child.id());
        std::thread::spawn(move || {
            for bytes in [first, second] {
                // The first reading must have closed the pipe, or this would feed it too.
                while holds_open(pid, &fifo) {
                    std::thread::sleep(Duration::from_millis(5));
                }
                // Blocks until the command opens the pipe for its next reading.
                let mut f = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
                let _ = f.write_all(&bytes);
                drop(f);
                written.fetch_add(1, Ordering::SeqCst);
            }
        })
    };
    let out = child.wait_with_output().expect("wait for jitarena");
    // A command that stopped before its second reading leaves the writer waiting: read for it.
    while written.load(Ordering::SeqCst) < 2 {
        let _ = std::fs::read(&fifo);
    }
    writer.join().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_log_that_gains_kinds_between_the_two_readings_is_an_error_naming_it() {
    let before = log(&["ASTNode", "LSRA"]);
    let after = log(&["ASTNode", "LSRA", "NewKind"]);
    let merged = tmp("merged.jas");
    let merge = ["merge", "-o", merged.to_str().unwrap()];
    let cases: [(&str, &[&str]); 3] = [
        ("merge", &merge),
        ("dump-csv", &["dump", "--format", "csv"]),
        ("dump-jsonl", &["dump", "--format", "jsonl"]),
    ];
    for (name, args) in cases {
        let (code, err) = run_on_changing_pipe(name, args, before.clone(), after.clone());
        assert_eq!(code, Some(2), "{name}: {err}");
        assert!(err.starts_with("error: "), "{name}: {err}");
        assert!(
            err.contains(name) && err.contains("changed while being read"),
            "{name}: {err}"
        );
        assert!(!err.contains("panicked"), "{name}: {err}");
    }
    assert!(!merged.exists(), "no merged log is left behind");
    // The same bytes twice merge as usual: only a change is refused.
    let (code, err) = run_on_changing_pipe("unchanged", &merge, before.clone(), before);
    assert_eq!(code, Some(0), "{err}");
}
