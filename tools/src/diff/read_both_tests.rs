//! [`read_both`]: the first side to fail ends the read at once, even while the other side
//! waits on a pipe whose writer stays open (memdiff refuses pipes up front; this is the
//! thread logic underneath).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use super::*;
use jitarena::format::{header_for, put_frame, Content};

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("jitarena-read-both-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// A version-2 log whose one method record is impossible (its checksum is right).
fn corrupt_log(name: &str) -> PathBuf {
    let path = tmp(name);
    let mut bytes = header_for(Content::Log, 2).to_vec();
    put_frame(&mut bytes, 3, &[0xff; 3]);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// A pipe holding a log header, its writer kept open (returned): a reader of it waits.
fn open_pipe(name: &str) -> (PathBuf, File) {
    let path = tmp(name);
    let _ = std::fs::remove_file(&path);
    assert!(Command::new("mkfifo")
        .arg(&path)
        .status()
        .unwrap()
        .success());
    // Read and write: the open does not wait for a reader (Linux), and the pipe never ends.
    let mut writer = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    writer.write_all(&header_for(Content::Log, 2)).unwrap();
    (path, writer)
}

/// `read_both`'s error, or a panic if it has not returned within a minute.
fn error_within_a_minute(base: PathBuf, diff: PathBuf) -> String {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let result = read_both(&[base], &[diff], &[], &Progress::hidden());
        let _ = send.send(result.err().map(|e| e.message));
    });
    match receive.recv_timeout(Duration::from_secs(60)) {
        Ok(Some(message)) => message,
        Ok(None) => panic!("both sides read without an error"),
        Err(_) => panic!("still reading after a minute: it waits for the side that did not fail"),
    }
}

#[test]
fn a_corrupt_base_ends_the_read_while_the_diff_waits() {
    let base = corrupt_log("base_corrupt.jas");
    let (diff, _writer) = open_pipe("diff_pipe.jas");
    let message = error_within_a_minute(base.clone(), diff);
    assert!(message.contains(&base.display().to_string()), "{message}");
}

#[test]
fn a_corrupt_diff_ends_the_read_while_the_base_waits() {
    let (base, _writer) = open_pipe("base_pipe.jas");
    let diff = corrupt_log("diff_corrupt.jas");
    let message = error_within_a_minute(base, diff.clone());
    assert!(message.contains(&diff.display().to_string()), "{message}");
}

#[test]
fn a_file_changed_after_the_first_reading_is_refused() {
    let path = corrupt_log("stamped.jas");
    let files = [path.clone()];
    let stamps = [check_rereadable(&path).unwrap()];
    unchanged(files.iter(), &stamps).unwrap();
    // Rewritten in place, the same length: a later modification time.
    let file = OpenOptions::new().write(true).open(&path).unwrap();
    let later = std::fs::metadata(&path).unwrap().modified().unwrap() + Duration::from_secs(3);
    file.set_modified(later).unwrap();
    let e = unchanged(files.iter(), &stamps).unwrap_err();
    assert!(e.message.starts_with(&format!(
        "{}: changed while memdiff read it",
        path.display()
    )));
    // Appended to.
    let stamps = [check_rereadable(&path).unwrap()];
    OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(&[0])
        .unwrap();
    file.set_modified(later).unwrap();
    assert!(unchanged(files.iter(), &stamps).is_err());
}
