//! A stats log or trace that is a FIFO never kills or hangs the JIT: when its reader has gone,
//! records fail with `JITARENA_E_IO` instead of `SIGPIPE` killing the process (and the
//! program's own SIGPIPE handler, mask and pending signal are left as they were); a FIFO that
//! no process reads is refused at once instead of blocking `jitarena_log_open` forever. The
//! native cases run `tests/c/fifo_writes.c`, linked to the static library.
#![cfg(unix)]

mod native;

use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use native::build_program;

/// The program, built once for all tests of this file.
fn program() -> PathBuf {
    static PROGRAM: OnceLock<PathBuf> = OnceLock::new();
    PROGRAM
        .get_or_init(|| build_program("fifo_writes_c", &["tests/c/fifo_writes.c"], false))
        .clone()
}

/// One test at a time: a child that another test spawns holds this test's descriptors from its
/// fork to its exec, and a reader's descriptor held there would still read the FIFO.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A new FIFO at `name` in this test's temporary directory.
fn fifo(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fifo_writes");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    let c_path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: `c_path` is a NUL-terminated path that lives across the call.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0, "mkfifo");
    path
}

/// Waits for `child` to end within `limit` (killing it past that: a hang), and returns how it
/// ended and what it printed.
fn finish(mut child: Child, limit: Duration) -> (std::process::ExitStatus, String) {
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("fifo_writes did not finish within {limit:?}: blocked");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut text = String::new();
    if let Some(mut out) = child.stdout.take() {
        out.read_to_string(&mut text).unwrap();
    }
    if let Some(mut err) = child.stderr.take() {
        err.read_to_string(&mut text).unwrap();
    }
    (status, text)
}

/// Reads the line the program prints once its first record is written.
fn wait_for_opened(child: &mut Child) -> String {
    let out = child.stdout.as_mut().unwrap();
    let mut seen = Vec::new();
    let mut byte = [0u8; 1];
    while !seen.ends_with(b"opened\n") {
        match out.read(&mut byte) {
            Ok(1) => seen.push(byte[0]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&seen).into()
}

/// Runs the program in `mode` on a FIFO whose reader takes the first record, then goes: the
/// program must stay alive, each later record failing with `JITARENA_E_IO`.
fn reader_goes(mode: &str, how: &str) {
    let path = fifo(&format!("{mode}-{how}.fifo"));
    // The reader is there before the writer opens (without waiting for a writer).
    let mut reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&path)
        .unwrap();
    let mut cmd = Command::new(program());
    cmd.args([mode, path.to_str().unwrap(), how])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if mode == "env" {
        cmd.env("JITARENA_LOG", &path);
    }
    let mut child = cmd.spawn().expect("run fifo_writes");
    let printed = wait_for_opened(&mut child);
    assert!(printed.ends_with("opened\n"), "{mode} {how}: {printed}");
    let mut first = Vec::new();
    let _ = reader.read_to_end(&mut first); // what is there now (WouldBlock after)
    assert!(!first.is_empty(), "{mode} {how}: nothing read");
    drop(reader); // the reader goes
    child.stdin.as_mut().unwrap().write_all(b"go\n").unwrap();
    let (status, out) = finish(child, Duration::from_secs(30));
    assert_eq!(
        status.signal(),
        None,
        "{mode} {how}: killed by signal {:?} (13 is SIGPIPE):\n{out}",
        status.signal()
    );
    assert!(status.success(), "{mode} {how}: {status}:\n{out}");
    assert!(out.contains("alive"), "{mode} {how}: {out}");
    let io: Vec<&str> = out.lines().filter(|l| l.starts_with("io ")).collect();
    assert_eq!(io.len(), 3, "{mode} {how}: {out}");
    if mode != "trace" {
        assert!(
            io[0].contains(path.to_str().unwrap()) && io[0].contains("Broken pipe"),
            "{mode} {how}: {out}"
        );
    }
}

#[test]
fn a_log_whose_reader_has_gone_fails_its_records_and_the_process_lives() {
    let _one = one_at_a_time();
    for how in ["", "handler", "pending"] {
        reader_goes("log", how);
    }
    reader_goes("env", "");
}

#[test]
fn a_trace_whose_reader_has_gone_fails_its_methods_and_the_process_lives() {
    let _one = one_at_a_time();
    for how in ["", "handler"] {
        reader_goes("trace", how);
    }
}

#[test]
fn a_fifo_with_no_reader_is_refused_at_once() {
    let _one = one_at_a_time();
    let path = fifo("noreader.fifo");
    let child = Command::new(program())
        .args(["noreader", path.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run fifo_writes");
    let (status, out) = finish(child, Duration::from_secs(20));
    assert!(status.success(), "{status}:\n{out}");
    assert!(
        out.contains(&format!(
            "{}: cannot create: No such device or address",
            path.display()
        )),
        "{out}"
    );
}
