//! The readers against hostile and unusual input: garbage after a damaged length (work counted,
//! not timed), logs still being written, pipes, sums that overflow, more than 256 kinds and
//! many schemas. Hostile files are built with the crate's own frame writer.

#[path = "../common/mod.rs"]
mod common;
mod kinds;
mod live;
mod numbers;
mod scan;

use std::path::Path;
use std::process::{Command, Output, Stdio};

pub use common::tmp;
use jitarena::format::{header, put_frame, put_signed, put_str, put_varint, Content};

/// Runs the `jitarena` command, feeding `stdin` to it.
pub fn jitarena(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_jitarena"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run jitarena");
    let mut input = child.stdin.take().unwrap();
    let bytes = stdin.to_vec();
    // Written from another thread: the command may read all of it before writing anything.
    let feeder = std::thread::spawn(move || {
        let _ = std::io::Write::write_all(&mut input, &bytes);
    });
    let out = child.wait_with_output().expect("wait for jitarena");
    feeder.join().unwrap();
    out
}

/// Standard error of a run, as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A file being built frame by frame, as a writer (or an attacker) would.
pub struct Builder {
    pub bytes: Vec<u8>,
}

impl Builder {
    pub fn new(content: Content) -> Builder {
        Builder {
            bytes: header(content).to_vec(),
        }
    }

    /// A schema frame (type 1).
    pub fn schema(&mut self, id: u64, kinds: &[String], phases: &[String]) -> &mut Builder {
        let mut p = Vec::new();
        put_varint(&mut p, id);
        put_varint(&mut p, kinds.len() as u64);
        kinds.iter().for_each(|k| put_str(&mut p, k));
        put_varint(&mut p, phases.len() as u64);
        phases.iter().for_each(|k| put_str(&mut p, k));
        put_frame(&mut self.bytes, 1, &p);
        self
    }

    /// A method-counters frame (type 3) with raw slot deltas: `kinds` are
    /// `(delta, bytes, count)`, `phases` are `(delta, bytes)`.
    pub fn method(
        &mut self,
        schema: u64,
        context: i64,
        kinds: &[(u64, u64, u64)],
        phases: &[(u64, u64)],
    ) -> &mut Builder {
        let mut p = Vec::new();
        put_varint(&mut p, schema);
        put_signed(&mut p, context);
        put_varint(&mut p, 0); // no tier
        put_str(&mut p, "");
        put_varint(&mut p, 0); // flags
        [8, 65536, 1, 8].iter().for_each(|&v| put_varint(&mut p, v));
        put_varint(&mut p, kinds.len() as u64);
        for &(d, b, c) in kinds {
            [d, b, c].iter().for_each(|&v| put_varint(&mut p, v));
        }
        put_varint(&mut p, phases.len() as u64);
        for &(d, b) in phases {
            [d, b].iter().for_each(|&v| put_varint(&mut p, v));
        }
        put_frame(&mut self.bytes, 3, &p);
        self
    }

    pub fn write(&self, path: &Path) {
        std::fs::write(path, &self.bytes).unwrap();
    }
}

/// Names `prefix0`, `prefix1`, ...
pub fn names(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}
