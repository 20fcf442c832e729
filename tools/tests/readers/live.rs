//! A log still being appended reads as what is complete so far, and logs and traces read from
//! pipes: the reader never trusts a length taken at open, and never opens a file twice.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use jitarena::format::Content;
use jitarena::log::{self, LogReader};

use super::{jitarena, names, stderr, tmp, Builder};

/// A log of `n` methods (schema and all), as bytes, and where each record's frame ends.
fn log_bytes(n: i64) -> (Vec<u8>, Vec<usize>) {
    let mut b = Builder::new(Content::Log);
    b.schema(0, &names("K", 3), &names("P", 2));
    let mut ends = Vec::new();
    for i in 0..n {
        b.method(
            0,
            i,
            &[(0, 10 + i as u64, 1), (1, 5, 2)],
            &[(0, 15 + i as u64)],
        );
        ends.push(b.bytes.len());
    }
    (b.bytes, ends)
}

#[test]
fn records_appended_after_open_are_read_not_called_damaged() {
    let (bytes, ends) = log_bytes(8);
    let path = tmp("appended.jas");
    // Five records and half of the sixth are there when the reader opens the file ...
    let split = (ends[4] + ends[5]) / 2;
    std::fs::write(&path, &bytes[..split]).unwrap();
    let mut reader = LogReader::open(&path).unwrap();
    let first = reader.next_record().unwrap().unwrap();
    assert_eq!(first.info.context, 0);
    // ... and the rest arrives before it gets there.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(&bytes[split..]).unwrap();
    let mut n = 1;
    while let Some(r) = reader.next_record().unwrap() {
        assert_eq!(r.info.context, n);
        n += 1;
    }
    assert_eq!(n, 8);
    assert!(reader.warnings().is_empty(), "{:?}", reader.warnings());
}

#[test]
fn a_log_read_while_another_thread_appends_is_always_a_whole_prefix() {
    let (bytes, ends) = log_bytes(400);
    let path = tmp("live.jas");
    std::fs::write(&path, &bytes[..ends[0]]).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let writer = {
        let (path, done, bytes) = (path.clone(), Arc::clone(&done), bytes.clone());
        std::thread::spawn(move || {
            let mut file = std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .unwrap();
            let mut at = ends[0];
            // Each record in two writes, so that readers also meet half-written ones.
            for &end in &ends[1..] {
                let mid = (at + end) / 2;
                file.write_all(&bytes[at..mid]).unwrap();
                std::thread::yield_now();
                file.write_all(&bytes[mid..end]).unwrap();
                at = end;
            }
            done.store(true, Ordering::SeqCst);
        })
    };
    let (mut reads, mut partial) = (0, 0);
    loop {
        let finished = done.load(Ordering::SeqCst);
        let (records, warnings) =
            log::read_all(&path).unwrap_or_else(|e| panic!("read {reads}: {e}"));
        for (i, r) in records.iter().enumerate() {
            assert_eq!(r.info.context, i as i64);
        }
        assert!(warnings.len() <= 1, "{warnings:?}");
        if let Some(w) = warnings.first() {
            assert!(w.contains("cut short") && w.contains("live.jas"), "{w}");
            partial += 1;
        }
        reads += 1;
        if finished {
            assert_eq!(records.len(), 400);
            assert!(warnings.is_empty());
            break;
        }
    }
    writer.join().unwrap();
    eprintln!("{reads} reads while the log grew, {partial} of them met a half-written record");
}

#[test]
fn stats_reads_a_log_from_a_pipe() {
    let (bytes, _) = log_bytes(30);
    let path = tmp("piped.jas");
    std::fs::write(&path, &bytes).unwrap();
    let from_file = jitarena(&["stats", "--json", path.to_str().unwrap()], b"");
    assert!(from_file.status.success(), "{}", stderr(&from_file));
    let from_pipe = jitarena(&["stats", "--json", "/dev/stdin"], &bytes);
    assert!(from_pipe.status.success(), "{}", stderr(&from_pipe));
    assert_eq!(from_pipe.stdout, from_file.stdout);
    assert!(stderr(&from_pipe).is_empty(), "{}", stderr(&from_pipe));
}

#[test]
fn traces_binary_and_text_replay_and_dump_from_a_pipe() {
    let trace = tmp("piped.jat");
    let out = jitarena(
        &[
            "gen",
            "--seed",
            "3",
            "--methods",
            "40",
            "--trace",
            trace.to_str().unwrap(),
        ],
        b"",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let binary = std::fs::read(&trace).unwrap();
    // The binary trace, then its text form, each from a pipe and from a file.
    let text_from_file = jitarena(&["dump", "--format", "text", trace.to_str().unwrap()], b"");
    assert!(
        text_from_file.status.success(),
        "{}",
        stderr(&text_from_file)
    );
    let text_from_pipe = jitarena(&["dump", "--format", "text", "/dev/stdin"], &binary);
    assert!(
        text_from_pipe.status.success(),
        "{}",
        stderr(&text_from_pipe)
    );
    assert_eq!(text_from_pipe.stdout, text_from_file.stdout);
    let text = text_from_file.stdout;
    let again = jitarena(&["dump", "--format", "text", "/dev/stdin"], &text);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(again.stdout, text, "a text trace from a pipe");

    let (log_file, log_pipe, log_text) = (tmp("r-file.jas"), tmp("r-pipe.jas"), tmp("r-text.jas"));
    for (input, stdin, log) in [
        (trace.to_str().unwrap(), &[][..], &log_file),
        ("/dev/stdin", &binary[..], &log_pipe),
        ("/dev/stdin", &text[..], &log_text),
    ] {
        let out = jitarena(&["replay", input, "-o", log.to_str().unwrap()], stdin);
        assert!(out.status.success(), "replay {input}: {}", stderr(&out));
    }
    let (a, _) = log::read_all(&log_file).unwrap();
    let (b, _) = log::read_all(&log_pipe).unwrap();
    let (c, _) = log::read_all(&log_text).unwrap();
    assert_eq!(a.len(), 40);
    assert_eq!(a, b);
    let counts = |r: &[jitarena::MethodRecord]| {
        r.iter()
            .map(|r| {
                (
                    r.info.clone(),
                    r.counts.total_bytes(),
                    r.counts.total_count(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(counts(&a), counts(&c));
}

#[test]
fn stats_reads_a_named_pipe_as_bash_process_substitution_passes_it() {
    let (bytes, _) = log_bytes(12);
    let fifo = tmp("named.pipe");
    let _ = std::fs::remove_file(&fifo);
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_jitarena"))
        .args(["stats", "--json", fifo.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Opening for writing waits for the reader; written in pieces, as `cat` would.
    let mut pipe = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    for piece in bytes.chunks(97) {
        pipe.write_all(piece).unwrap();
    }
    drop(pipe);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"methods\":12,"));
}
