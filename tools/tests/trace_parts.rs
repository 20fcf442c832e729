//! A JIT's trace holds a long method in parts (`docs/formats.md`, "Methods in parts"): the JIT
//! keeps a bounded buffer of events, whatever the method's length, and a method is read only
//! once its closing frame is. `tests/c/trace_parts.c`, linked to the static library, records
//! through JITARENA_TRACE (and JITARENA_LOG, the arena's own record of each method) with
//! pages from one static buffer, so that its resident size is the library's; the tool reads
//! the trace within twice its size, and replays it to the recording's exact kind and phase
//! totals.
#![cfg(unix)]

mod common;

#[path = "../../tests/native/mod.rs"]
mod native;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::{run_measured, s, tmp};
use jitarena::format::{Content, FrameReader, Payload};
use jitarena::log;
use jitarena::trace;

/// Iterations of the long method: 10M phase switches, 625,000 allocations, 70,000 in each of
/// three runs of allocations with no phase mark (each outgrowing a part).
const LONG: &str = "5000000";
/// What the recording program may hold at its peak: the program, the C library, the trace's
/// buffers (a part of 64 Ki events, its sites and its encoding) and the log's. 16 bytes an
/// event would be 170 MB.
const RECORDER_PEAK: u64 = 32 << 20;
/// What a reader may hold beyond twice its input (as `trace_memory.rs`): the program, its
/// buffers, and the replay's arena pages.
const SLACK: u64 = 64 << 20;

fn program() -> PathBuf {
    static PROGRAM: OnceLock<PathBuf> = OnceLock::new();
    PROGRAM
        .get_or_init(|| native::build_program("trace_parts_c", &["tests/c/trace_parts.c"], false))
        .clone()
}

/// Runs the program in `mode` with `n` iterations, recording into `name`.jat and `name`.jas;
/// returns their paths and what it printed.
fn record(mode: &str, n: &str, name: &str) -> (PathBuf, PathBuf, String) {
    let (trace, log) = (tmp(&format!("{name}.jat")), tmp(&format!("{name}.jas")));
    let out = Command::new(program())
        .args([mode, n])
        .env("JITARENA_TRACE", &trace)
        .env("JITARENA_LOG", &log)
        .output()
        .expect("run trace_parts");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "trace_parts {mode} {n}: {text}");
    (trace, log, text)
}

/// Per context: the kinds (slot, bytes, count) and phases (slot, bytes) of a log's records.
type Totals = BTreeMap<i64, (Vec<(u32, u64, u64)>, Vec<(u32, u64)>)>;

fn totals(log: &Path) -> Totals {
    let (records, warnings) = log::read_all(log).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    records
        .into_iter()
        .map(|r| (r.info.context, (r.counts.kinds, r.counts.phases)))
        .collect()
}

/// Per context: the events and allocations of a trace's methods (read in chunks), and the
/// reader's warnings and dropped methods.
fn read_trace(path: &Path) -> (BTreeMap<i64, (u64, u64)>, Vec<String>, u64) {
    let mut r = trace::open(path).unwrap();
    let mut methods = BTreeMap::new();
    while let Some(mut m) = r.next_events().unwrap() {
        let (context, allocations) = (m.info().context, m.allocations());
        let mut events = 0;
        while let Some(chunk) = m.next_chunk().unwrap() {
            assert!(chunk.len() <= trace::CHUNK_EVENTS);
            events += chunk.len() as u64;
        }
        assert_eq!(events, m.len());
        methods.insert(context, (events, allocations));
    }
    (methods, r.warnings(), r.dropped_methods())
}

#[test]
fn a_method_of_10m_events_is_recorded_in_bounded_memory_and_replays_to_its_totals() {
    let (trace, log, printed) = record("long", LONG, "long");
    let peak: u64 = printed
        .lines()
        .find_map(|l| l.strip_prefix("peak "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak: {printed}"));
    let size = std::fs::metadata(&trace).unwrap().len();
    let (methods, warnings, _) = read_trace(&trace);
    assert!(warnings.is_empty(), "{warnings:?}");
    let (events, allocations) = methods[&1];
    eprintln!(
        "recording {events} events ({allocations} allocations): peak resident {peak} bytes; trace {size} bytes"
    );
    assert!(events > 10_000_000, "{events}");
    assert!(
        peak < RECORDER_PEAK,
        "the recording peaked at {peak} bytes (bound {RECORDER_PEAK})"
    );
    assert_eq!(trace::open(&trace).unwrap().version(), 3);

    let replayed = tmp("long-replayed.jas");
    let bound = 2 * size + SLACK;
    let (code, err, peak) = run_measured(&["replay", s(&trace), "-o", s(&replayed)], |_| {});
    eprintln!("replay: peak resident {peak} bytes");
    assert_eq!(code, 0, "{err}");
    assert!(
        peak < bound,
        "replay peaked at {peak} bytes (bound {bound})"
    );
    assert_eq!(totals(&replayed), totals(&log));
}

/// The stream id of each part frame of a trace, in order.
fn part_streams(path: &Path) -> Vec<u64> {
    let mut frames = FrameReader::open(path, Content::Trace).unwrap();
    let mut streams = Vec::new();
    while frames.advance().unwrap() {
        let frame = frames.frame();
        if frame.kind == 6 {
            streams.push(Payload::new(&frame.payload).varint().unwrap());
        }
    }
    streams
}

#[test]
fn two_arenas_on_two_threads_interleave_their_parts_and_read_back_whole() {
    let (trace, log, _) = record("two", "300000", "two");
    let streams = part_streams(&trace);
    let switches = streams.windows(2).filter(|w| w[0] != w[1]).count();
    assert!(switches >= 2, "parts not interleaved: {streams:?}");
    let (methods, warnings, dropped) = read_trace(&trace);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(dropped, 0);
    assert_eq!(methods.len(), 2, "{methods:?}");
    for (events, _) in methods.values() {
        assert!(*events > 600_000, "{methods:?}");
    }
    let replayed = tmp("two-replayed.jas");
    let (code, err, _) = run_measured(&["replay", s(&trace), "-o", s(&replayed)], |_| {});
    assert_eq!(code, 0, "{err}");
    assert_eq!(totals(&replayed), totals(&log));
}

#[test]
fn a_method_whose_end_never_came_is_dropped_and_said_and_the_others_read() {
    let (trace, _, _) = record("die", "300000", "die");
    let (methods, warnings, dropped) = read_trace(&trace);
    assert_eq!(methods.keys().copied().collect::<Vec<_>>(), [1]);
    assert_eq!(dropped, 1);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("die.jat") && warnings[0].contains("never closed"),
        "{warnings:?}"
    );
    let (code, err, _) = run_measured(&["replay", s(&trace)], |_| {});
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("never closed"), "{err}");
    assert!(err.contains("replayed 1 methods"), "{err}");
}

#[test]
fn a_trace_cut_among_a_long_methods_parts_drops_the_method_and_says_so() {
    let (trace, _, _) = record("end", "300000", "end");
    let (whole, warnings, _) = read_trace(&trace);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(whole.len(), 2);
    let bytes = std::fs::read(&trace).unwrap();
    let cut = tmp("end-cut.jat");
    for end in [bytes.len() / 3, bytes.len() / 2, bytes.len() - 10] {
        std::fs::write(&cut, &bytes[..end]).unwrap();
        let (methods, warnings, dropped) = read_trace(&cut);
        assert_eq!(methods, BTreeMap::from([(1, whole[&1])]), "cut at {end}");
        assert_eq!(dropped, 1, "cut at {end}");
        assert!(
            warnings.iter().any(|w| w.contains("never closed")),
            "cut at {end}: {warnings:?}"
        );
        let (code, err, _) = run_measured(&["dump", "--format", "text", s(&cut)], |_| {});
        assert_eq!(code, 0, "{err}");
        assert!(err.contains("never closed"), "cut at {end}: {err}");
    }
}

/// A version-3 trace of these part frames (type 6), each a stream id, a part number and a
/// piece with no sites, `fixups` fix-ups and no event.
fn parts_trace(name: &str, parts: &[(u64, u64)], fixups: u64) -> PathBuf {
    use jitarena::format::{header_for, put_frame, put_varint};
    let mut bytes = header_for(Content::Trace, 3).to_vec();
    for &(stream, part) in parts {
        let mut payload = Vec::new();
        put_varint(&mut payload, stream);
        put_varint(&mut payload, part);
        put_varint(&mut payload, 0); // no sites
        put_varint(&mut payload, 0);
        put_varint(&mut payload, fixups);
        for i in 0..fixups {
            put_varint(&mut payload, i);
            put_varint(&mut payload, 0);
        }
        put_varint(&mut payload, 0); // no events
        put_frame(&mut bytes, 6, &payload);
    }
    let path = tmp(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// The error reading a trace ends with.
fn read_error(path: &Path) -> String {
    let mut reader = trace::open(path).unwrap();
    loop {
        match reader.next_events() {
            Ok(Some(_)) => continue,
            Ok(None) => panic!("{} read to its end", path.display()),
            Err(e) => return e.message.to_string(),
        }
    }
}

#[test]
fn a_reader_keeps_a_bounded_state_beside_the_parts_bytes() {
    // Open methods: a JIT opens one per arena; 4,096 are read (and dropped unclosed), one more
    // is corrupt, so that the streams' state cannot outgrow the input.
    let many: Vec<(u64, u64)> = (1..=4096).map(|stream| (stream, 0)).collect();
    let (methods, _, dropped) = read_trace(&parts_trace("open-4096.jat", &many, 0));
    assert!(methods.is_empty());
    assert_eq!(dropped, 4096);
    let too_many: Vec<(u64, u64)> = (1..=4097).map(|stream| (stream, 0)).collect();
    let err = read_error(&parts_trace("open-4097.jat", &too_many, 0));
    assert!(err.contains("4,096"), "{err}");
    // Fix-ups: at most one a piece (each before an event written already; with none written,
    // even one is refused, as out of place).
    let err = read_error(&parts_trace("two-fixups.jat", &[(1, 0)], 2));
    assert!(err.contains("count is larger"), "{err}");
    let err = read_error(&parts_trace("one-fixup.jat", &[(1, 0)], 1));
    assert!(err.contains("fix-up"), "{err}");
}

/// A trace whose header still says version 2 but holds methods in parts (copied before the JIT
/// wrote the header's byte again) reads whole: its long methods are read, never lost silently.
#[test]
fn parts_under_a_version_2_header_are_read() {
    let (trace, _, _) = record("two", "100000", "two-v2");
    let mut bytes = std::fs::read(&trace).unwrap();
    assert_eq!(trace::open(&trace).unwrap().version(), 3);
    let at = 9; // the header's version byte (docs/formats.md, "The container")
    assert_eq!(bytes[at], 3, "the version byte");
    bytes[at] = 2;
    let old = tmp("two-v2-header.jat");
    std::fs::write(&old, &bytes).unwrap();
    assert_eq!(trace::open(&old).unwrap().version(), 2);
    let (whole, _, _) = read_trace(&trace);
    let (read, warnings, dropped) = read_trace(&old);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!((dropped, whole.len()), (0, 2));
    assert_eq!(read, whole, "every method, its events and allocations");
}
