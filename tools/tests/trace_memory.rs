//! Traces are decoded a chunk at a time: `replay` and `dump --format text` of a trace holding
//! one method of tens of millions of events stay within twice the file (plus a fixed slack),
//! not 16 bytes per event, measured as the child's peak resident size (`wait4`'s
//! `ru_maxrss`, which also counts this process's peak at the spawn: it stays small). A chunked replay counts what a whole one does.

mod common;

use std::io::{BufWriter, Write};
use std::path::Path;

use common::{run_measured, s, tmp};
use jitarena::format::{header, put_frame, put_signed, put_str, put_varint, Content};
use jitarena::trace::{alloc_event, phase_event, TraceMethod};
use jitarena::{MethodInfo, Schema, Shared};
use jitarena_tools::harness::{ReplayOptions, Replayer};

/// Events of the big method.
const EVENTS: u64 = 24_000_000;
/// Every this many events, an allocation of one byte; the rest are phase switches.
const ALLOC_EVERY: u64 = 16;
/// What a run may hold beyond twice its input: the program, its buffers, and the arena's pages
/// for the allocations (1.5M blocks of 8 bytes).
const SLACK: u64 = 48 << 20;

/// Writes a binary trace of one method with `EVENTS` events (two phases, one kind) to `path`,
/// streamed a block at a time (the frame's checksum taken as it goes), so that this process
/// never holds much: a child spawned from it starts from its peak; returns the file's size.
fn big_trace(path: &Path) -> u64 {
    let mut out = BufWriter::new(std::fs::File::create(path).unwrap());
    let mut bytes = header(Content::Trace).to_vec();
    let mut p = Vec::new();
    put_varint(&mut p, 0); // schema 0
    put_varint(&mut p, 1);
    put_str(&mut p, "Kind");
    put_varint(&mut p, 2);
    put_str(&mut p, "Import");
    put_str(&mut p, "Morph - Inlining");
    put_frame(&mut bytes, 1, &p);
    out.write_all(&bytes).unwrap();
    let mut size = bytes.len() as u64;
    // The method's frame: type, length, payload, CRC-32 of all three.
    let mut prefix = Vec::new();
    put_varint(&mut prefix, 0);
    put_signed(&mut prefix, 42);
    put_varint(&mut prefix, 0);
    put_str(&mut prefix, "Big:method()");
    put_varint(&mut prefix, EVENTS);
    let len = prefix.len() as u64 + EVENTS + EVENTS / ALLOC_EVERY;
    let mut head = vec![4u8];
    put_varint(&mut head, len);
    let mut crc = flate2::Crc::new();
    for part in [&head, &prefix] {
        crc.update(part);
        out.write_all(part).unwrap();
    }
    let mut block = Vec::with_capacity(1 << 16);
    for i in 0..EVENTS {
        if i % ALLOC_EVERY == ALLOC_EVERY - 1 {
            block.extend_from_slice(&[0, 1]); // kind 0, 1 byte
        } else {
            block.push((((i & 1) << 1) | 1) as u8); // phase 0 or 1
        }
        if block.len() >= 1 << 16 || i == EVENTS - 1 {
            crc.update(&block);
            out.write_all(&block).unwrap();
            block.clear();
        }
    }
    out.write_all(&crc.sum().to_le_bytes()).unwrap();
    out.flush().unwrap();
    size += (head.len() as u64) + len + 4;
    assert_eq!(std::fs::metadata(path).unwrap().len(), size);
    size
}

#[test]
fn replay_and_dump_of_one_method_of_24m_events_stay_within_twice_the_file() {
    let path = tmp("big-method.jat");
    let size = big_trace(&path);
    let bound = 2 * size + SLACK;
    let allocs = EVENTS / ALLOC_EVERY;

    let (code, err, peak) = run_measured(&["replay", s(&path)], |_| {});
    eprintln!("replay: a {size}-byte trace of {EVENTS} events: peak resident {peak} bytes");
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(&format!(
            "replayed 1 methods ({} allocations, 0 failed)",
            jitarena_tools::text::thousands(allocs)
        )),
        "{err}"
    );
    assert!(
        peak < bound,
        "replay of a {size}-byte trace peaked at {peak} bytes (bound {bound})"
    );

    let (mut lines, mut phases, mut allocations) = (0u64, 0u64, 0u64);
    let (code, err, peak) = run_measured(&["dump", "--format", "text", s(&path)], |l| {
        lines += 1;
        phases += u64::from(l.starts_with("phase "));
        allocations += u64::from(l == "alloc Kind 1\n");
    });
    eprintln!("dump --format text: the same trace: peak resident {peak} bytes");
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        (lines, phases, allocations),
        (1 + EVENTS, EVENTS - allocs, allocs)
    );
    assert!(
        peak < bound,
        "dump of a {size}-byte trace peaked at {peak} bytes (bound {bound})"
    );
}

#[test]

fn a_method_replayed_in_chunks_counts_what_it_does_replayed_whole() {
    let schema = Schema::new(
        vec!["A".into(), "B".into(), "C".into()],
        vec!["P".into(), "Q".into()],
    )
    .and_then(Schema::interned)
    .unwrap();
    let mut events = Vec::new();
    for i in 0..50_000u64 {
        events.push(match i % 7 {
            0 => phase_event((i / 7 % 2) as u32),
            3 => phase_event(jitarena::sys::JITARENA_NO_PHASE),
            k => alloc_event((k % 3) as u32, 1 + i * 37 % 5000),
        });
    }
    let method = TraceMethod {
        schema: Shared::clone(&schema),
        info: MethodInfo::default(),
        events,
    };
    for kinds_by_phase in [false, true] {
        let options = ReplayOptions {
            page_size: 4096,
            limit_bytes: 40 << 20,
            kinds_by_phase,
            ..ReplayOptions::default()
        };
        let mut whole = Replayer::new(options.clone());
        let failed_whole = whole.run(&method).unwrap();
        for chunk in [1, 7, 4096, 100_000] {
            let mut chunked = Replayer::new(options.clone());
            chunked.start(&schema).unwrap();
            let failed: usize = method.events.chunks(chunk).map(|c| chunked.feed(c)).sum();
            chunked.finish().unwrap();
            assert_eq!(failed, failed_whole, "chunks of {chunk}");
            assert_eq!(chunked.counts(), whole.counts(), "chunks of {chunk}");
        }
    }
}
