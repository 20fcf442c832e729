//! memdiff's inputs: a pipe (which memdiff cannot read twice) is refused up front, naming it,
//! instead of waiting forever; a corrupt log on either side ends the run with exit code 2 and
//! that file named, with no report.

#![cfg(unix)]

mod common;

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::tmp;
use jitarena::format::{header_for, put_frame, Content};

/// A version-2 log whose one method record is impossible (its checksum is right).
fn corrupt_log(name: &str) -> PathBuf {
    let path = tmp(name);
    let mut bytes = header_for(Content::Log, 2).to_vec();
    put_frame(&mut bytes, 3, &[0xff; 3]);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// A pipe holding a log header, with its writer kept open (returned): a reader of it waits
/// for more.
fn open_pipe(name: &str) -> (PathBuf, File) {
    let path = tmp(name);
    let _ = std::fs::remove_file(&path);
    let made = Command::new("mkfifo").arg(&path).status().unwrap();
    assert!(made.success(), "mkfifo failed");
    // Read and write: the open does not wait for a reader (Linux), and the pipe never ends.
    let mut writer = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    writer.write_all(&header_for(Content::Log, 2)).unwrap();
    (path, writer)
}

/// Runs `jitarena memdiff base diff`; the exit code, stdout and stderr, or a panic if it has
/// not ended within a minute.
fn memdiff_within_a_minute(base: &Path, diff: &Path) -> (i32, String, String) {
    within_a_minute(&["memdiff".as_ref(), base.as_os_str(), diff.as_os_str()])
}

/// Runs `jitarena` with `args`; the exit code, stdout and stderr, or a panic if it has not
/// ended within a minute.
fn within_a_minute(args: &[&std::ffi::OsStr]) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_jitarena"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("memdiff still runs after a minute: it waits for the side that did not fail");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn a_pipe_is_refused_up_front_naming_it() {
    // memdiff reads each log twice: a pipe would be empty (or wait for a writer) the second
    // time. Before the check, this run waited forever on the pipe.
    let base = tmp("base_empty.jas");
    std::fs::write(&base, header_for(Content::Log, 2)).unwrap();
    let (diff, _writer) = open_pipe("diff_pipe.jas");
    let (code, stdout, stderr) = memdiff_within_a_minute(&base, &diff);
    assert_eq!(code, 2, "stderr: {stderr}");
    assert!(stderr.contains(&diff.display().to_string()), "{stderr}");
    assert!(stderr.contains("not a regular file"), "{stderr}");
    assert!(stdout.is_empty(), "a partial report: {stdout}");
}

/// merge and dump read each log twice too: a pipe is refused before anything is read (merge
/// said "the file is empty" of `<(cat log)`, and waited forever on a FIFO).
#[test]
fn merge_and_dump_refuse_a_pipe_up_front_naming_it() {
    let (pipe, _writer) = open_pipe("merge_pipe.jas");
    let out = tmp("merged_from_pipe.jas");
    for (tool, args) in [
        (
            "merge",
            vec![
                "merge".as_ref(),
                "-o".as_ref(),
                out.as_os_str(),
                pipe.as_os_str(),
            ],
        ),
        ("dump", vec!["dump".as_ref(), pipe.as_os_str()]),
    ] {
        let (code, stdout, stderr) = within_a_minute(&args);
        assert_eq!(code, 2, "{tool}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "{}: not a regular file (a pipe?); {tool} reads each log twice",
                pipe.display()
            )),
            "{tool}: {stderr}"
        );
        assert!(stdout.is_empty(), "{tool}: {stdout}");
    }
    assert!(!out.exists());
}

#[test]
fn a_corrupt_log_names_itself_and_ends_the_run() {
    let base = tmp("base_empty2.jas");
    std::fs::write(&base, header_for(Content::Log, 2)).unwrap();
    let diff = corrupt_log("diff_corrupt.jas");
    for (b, d, bad) in [(&base, &diff, &diff), (&diff, &base, &diff)] {
        let (code, stdout, stderr) = memdiff_within_a_minute(b, d);
        assert_eq!(code, 2, "stderr: {stderr}");
        assert!(stderr.contains(&bad.display().to_string()), "{stderr}");
        assert!(!stderr.contains("base_empty2"), "{stderr}");
        assert!(stdout.is_empty(), "a partial report: {stdout}");
    }
}
