//! The stats log and trace formats: round trips, crash-cut files, flipped bytes, and replay of
//! generated and real traces.

mod common;

#[path = "../../tests/native/mod.rs"]
mod native;
mod real;

use std::collections::BTreeMap;
use std::path::Path;

use common::tmp;
use jitarena::log::{self, LogWriter, MethodCounts, MethodRecord};
use jitarena::trace::{self, TraceMethod, TraceWriter};
use jitarena::Schema;
use jitarena::Shared;
use jitarena_tools::gen::{GenOptions, Generator};
use jitarena_tools::harness::{self, ReplayOptions};

fn schema() -> Shared<Schema> {
    Shared::new(
        Schema::new(
            vec!["ASTNode".into(), "LSRA".into(), "Generic".into()],
            vec!["Import".into(), "RegAlloc".into()],
        )
        .unwrap(),
    )
}

fn sample_records(n: u64) -> Vec<MethodRecord> {
    let schema = schema();
    (0..n)
        .map(|i| MethodRecord {
            schema: Shared::clone(&schema),
            info: jitarena::MethodInfo {
                name: (i % 5 != 0).then(|| format!("Ns.Class:Method{i}(int)")),
                context: if i % 7 == 0 { -1 } else { i as i64 },
                tier: [
                    None,
                    Some("MinOpts".to_string()),
                    Some("FullOpts".to_string()),
                ][(i % 3) as usize]
                    .clone(),
            },
            counts: MethodCounts {
                kinds: vec![(0, 1000 + i, 10 + i), (2, 5, 1), (3, 7 * i, i)]
                    .into_iter()
                    .filter(|k| k.2 > 0)
                    .collect(),
                phases: vec![(0, 900), (2, i)],
                used_bytes: 2000 + 8 * i,
                reserved_bytes: 65536,
                page_count: 1,
                largest_alloc: 300 + i,
                limit_hit: i % 11 == 0,
                phase_kind_bytes: Vec::new(),
            },
        })
        .collect()
}

fn write_log(path: &Path, records: &[MethodRecord]) {
    let mut w = LogWriter::new(std::fs::File::create(path).unwrap()).unwrap();
    for r in records {
        w.write_record(r).unwrap();
    }
    w.finish().unwrap();
}

#[test]
fn a_log_reads_back_what_was_written() {
    let records = sample_records(50);
    let path = tmp("roundtrip.jas");
    write_log(&path, &records);
    let (back, warnings) = log::read_all(&path).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(back, records);
}

#[test]
fn a_log_cut_anywhere_in_its_last_record_keeps_every_earlier_record_with_a_warning() {
    let records = sample_records(6);
    let whole = tmp("whole.jas");
    write_log(&whole, &records[..5]);
    let before_last = std::fs::metadata(&whole).unwrap().len() as usize;
    write_log(&whole, &records);
    let bytes = std::fs::read(&whole).unwrap();
    let cut = tmp("cut.jas");
    for end in before_last..bytes.len() {
        std::fs::write(&cut, &bytes[..end]).unwrap();
        let (back, warnings) = log::read_all(&cut).unwrap_or_else(|e| panic!("cut at {end}: {e}"));
        assert_eq!(back, records[..5], "cut at {end}");
        if end > before_last {
            assert_eq!(warnings.len(), 1, "cut at {end}");
            assert!(
                warnings[0].contains("cut short") && warnings[0].contains("cut.jas"),
                "{}",
                warnings[0]
            );
        } else {
            assert!(warnings.is_empty());
        }
    }
}

#[test]
fn flipped_bytes_give_an_error_never_a_panic_or_a_wrong_total() {
    let records = sample_records(8);
    let path = tmp("flip-src.jas");
    write_log(&path, &records);
    let bytes = std::fs::read(&path).unwrap();
    let flipped = tmp("flipped.jas");
    let (mut errors, mut same) = (0, 0);
    for at in 0..bytes.len() {
        for bit in [0x01u8, 0x80] {
            let mut damaged = bytes.clone();
            damaged[at] ^= bit;
            std::fs::write(&flipped, &damaged).unwrap();
            match std::panic::catch_unwind(|| log::read_all(&flipped)) {
                Err(_) => panic!("reading with byte {at} flipped panicked"),
                Ok(Err(e)) => {
                    assert!(e.message.contains("flipped.jas"), "{e}");
                    errors += 1;
                }
                Ok(Ok((back, _))) => {
                    // Only the header's two reserved bytes are not checked: the content is whole.
                    assert!(at == 10 || at == 11, "byte {at} flipped went unnoticed");
                    assert_eq!(back, records);
                    same += 1;
                }
            }
        }
    }
    assert_eq!(same, 4);
    assert_eq!(errors, 2 * bytes.len() - 4);
}

#[test]
fn not_a_log_is_refused_with_the_reason() {
    let cases: [(&str, &[u8], &str); 4] = [
        ("short.jas", b"JITAX", "not a jitarena stats log"),
        (
            "text.jas",
            b"method 1 FullOpts foo\nalloc A 8\n",
            "not a jitarena stats log",
        ),
        (
            "magic.jas",
            b"JITARENX\x4c\x01\x00\x00",
            "not a jitarena stats log",
        ),
        ("future.jas", b"JITARENA\x4c\x09\x00\x00", "version 9"),
    ];
    for (name, bytes, says) in cases {
        let path = tmp(name);
        std::fs::write(&path, bytes).unwrap();
        let err = log::read_all(&path).unwrap_err();
        assert!(
            err.message.contains(says) && err.message.contains(name),
            "{name}: {err}"
        );
    }
    // An empty file, or a header's first bytes, is a log whose writer stopped as it began.
    for (name, bytes) in [("empty.jas", &b""[..]), ("begun.jas", b"JITARENA\x4c")] {
        let path = tmp(name);
        std::fs::write(&path, bytes).unwrap();
        let (records, warnings) = log::read_all(&path).unwrap();
        assert!(records.is_empty());
        assert!(
            warnings.len() == 1 && warnings[0].contains("cut short inside its header"),
            "{name}: {warnings:?}"
        );
    }
    let err = log::read_all(&tmp("does-not-exist.jas")).unwrap_err();
    assert!(
        err.message.contains("does-not-exist.jas") && err.message.contains("cannot open"),
        "{err}"
    );
}

fn sample_trace() -> Vec<TraceMethod> {
    let g = Generator::new(GenOptions {
        seed: 7,
        methods: 40,
        scale: vec![],
    })
    .unwrap();
    let mut methods = Vec::new();
    for i in 0..40 {
        let mut events = Vec::new();
        let info = g.method_events(i, &mut events);
        methods.push(TraceMethod {
            schema: Shared::clone(g.schema()),
            info,
            events,
        });
    }
    methods
}

fn read_trace(path: &Path) -> Vec<TraceMethod> {
    let mut r = trace::open(path).unwrap();
    let mut out = Vec::new();
    while let Some(m) = r.next_method().unwrap() {
        out.push(m);
    }
    out
}

#[test]
fn traces_round_trip_in_binary_and_in_text() {
    let methods = sample_trace();
    let bin = tmp("rt.jat");
    let mut w = TraceWriter::new(std::fs::File::create(&bin).unwrap()).unwrap();
    methods.iter().for_each(|m| w.write_method(m).unwrap());
    w.finish().unwrap();
    assert_eq!(read_trace(&bin), methods);

    let txt = tmp("rt.txt");
    let mut out = Vec::new();
    methods
        .iter()
        .for_each(|m| trace::write_text(&mut out, m).unwrap());
    std::fs::write(&txt, &out).unwrap();
    let back = read_trace(&txt);
    assert_eq!(back.len(), methods.len());
    // Text numbers kinds in the order first seen: compare by name.
    for (a, b) in methods.iter().zip(&back) {
        assert_eq!(a.info, b.info);
        let named = |m: &TraceMethod| -> Vec<(String, u64)> {
            m.events
                .iter()
                .map(|e| {
                    if e.op == 1 {
                        (format!("phase {}", m.schema.phase_name(e.arg as usize)), 0)
                    } else {
                        (m.schema.kinds[e.arg as usize].clone(), e.size)
                    }
                })
                .collect()
        };
        assert_eq!(named(a), named(b));
    }
}

#[test]
fn a_damaged_binary_trace_gives_an_error_or_a_warning_never_a_panic() {
    let methods = sample_trace();
    let bin = tmp("flip-src.jat");
    let mut w = TraceWriter::new(std::fs::File::create(&bin).unwrap()).unwrap();
    methods
        .iter()
        .take(3)
        .for_each(|m| w.write_method(m).unwrap());
    w.finish().unwrap();
    let bytes = std::fs::read(&bin).unwrap();
    let damaged_path = tmp("flipped.jat");
    // Every 7th byte, flipped, and the file cut at every 13th byte.
    for at in (0..bytes.len()).step_by(7) {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x40;
        std::fs::write(&damaged_path, &damaged).unwrap();
        let read = std::panic::catch_unwind(|| -> Result<usize, jitarena::Error> {
            let mut r = trace::open(&damaged_path)?;
            let mut n = 0;
            while r.next_method()?.is_some() {
                n += 1;
            }
            Ok(n)
        });
        match read {
            Err(_) => panic!("byte {at} flipped: the reader panicked"),
            // Only the header's two reserved bytes are unchecked; those reads stay whole.
            Ok(Ok(n)) => assert!(
                (at == 10 || at == 11) && n == 3,
                "byte {at} flipped went unnoticed"
            ),
            Ok(Err(e)) => assert!(e.message.contains("flipped.jat"), "{e}"),
        }
    }
    for end in (0..bytes.len()).step_by(13) {
        std::fs::write(&damaged_path, &bytes[..end]).unwrap();
        let read = std::panic::catch_unwind(|| {
            trace::open(&damaged_path).and_then(|mut r| r.next_method())
        });
        assert!(read.is_ok(), "cut at {end}: the reader panicked");
    }
}

/// Per-kind (bytes, count) of a trace, summed straight from its events.
fn trace_sums(methods: &[TraceMethod]) -> BTreeMap<String, (u64, u64)> {
    let mut sums = BTreeMap::new();
    for m in methods {
        for e in m.events.iter().filter(|e| e.op == 0) {
            let s = sums
                .entry(m.schema.kinds[e.arg as usize].clone())
                .or_insert((0, 0));
            s.0 += e.size;
            s.1 += 1;
        }
    }
    sums
}

/// Per-kind (bytes, count) of a log.
fn log_sums(path: &Path) -> BTreeMap<String, (u64, u64)> {
    let (records, warnings) = log::read_all(path).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let mut sums = BTreeMap::new();
    for r in &records {
        for &(slot, bytes, count) in &r.counts.kinds {
            let s = sums
                .entry(r.schema.kind_name(slot as usize).to_string())
                .or_insert((0, 0));
            s.0 += bytes;
            s.1 += count;
        }
    }
    sums
}

#[test]
fn replay_of_a_generated_trace_reproduces_its_per_kind_sums_exactly() {
    let methods = sample_trace();
    let bin = tmp("gen.jat");
    let mut w = TraceWriter::new(std::fs::File::create(&bin).unwrap()).unwrap();
    methods.iter().for_each(|m| w.write_method(m).unwrap());
    w.finish().unwrap();
    for (page_size, counters) in [(65536, true), (4096, true), (1 << 20, true)] {
        let out = tmp("gen-replayed.jas");
        let summary = harness::replay(
            std::slice::from_ref(&bin),
            Some(&out),
            &ReplayOptions {
                page_size,
                counters,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(summary.methods, 40);
        assert_eq!(summary.failed, 0);
        assert_eq!(
            log_sums(&out),
            trace_sums(&methods),
            "page size {page_size}"
        );
    }
    // An uncounted replay runs without a log, and refuses to write one.
    let summary = harness::replay(
        std::slice::from_ref(&bin),
        None,
        &ReplayOptions {
            counters: false,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!((summary.methods, summary.failed), (40, 0));
    let err = harness::replay(
        &[bin],
        Some(&tmp("gen-uncounted.jas")),
        &ReplayOptions {
            counters: false,
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(err.message.contains("no counters to log"), "{err}");
}

#[test]
fn the_generator_is_deterministic_and_scale_changes_only_its_kind() {
    let events = |seed, scale: Vec<(String, f64)>| {
        let g = Generator::new(GenOptions {
            seed,
            methods: 30,
            scale,
        })
        .unwrap();
        let mut all = Vec::new();
        for i in 0..30 {
            let mut e = Vec::new();
            g.method_events(i, &mut e);
            all.push(e);
        }
        all
    };
    assert_eq!(events(3, vec![]), events(3, vec![]));
    assert_ne!(events(3, vec![]), events(4, vec![]));
    let base = events(3, vec![]);
    let diff = events(3, vec![("LSRA".into(), 50.0)]);
    let lsra = jitarena_tools::gen::RYUJIT_KINDS
        .iter()
        .position(|k| *k == "LSRA")
        .unwrap() as u32;
    let (mut b, mut d) = (0u64, 0u64);
    for (x, y) in base.iter().flatten().zip(diff.iter().flatten()) {
        assert_eq!((x.op, x.arg), (y.op, y.arg));
        if x.op == 0 && x.arg == lsra {
            b += x.size;
            d += y.size;
        } else {
            assert_eq!(x.size, y.size);
        }
    }
    let ratio = d as f64 / b as f64;
    assert!((ratio - 1.5).abs() < 0.01, "{ratio}");
    assert!(Generator::new(GenOptions {
        seed: 1,
        methods: 1,
        scale: vec![("NoSuchKind".into(), 5.0)]
    })
    .is_err());
}

#[test]
fn the_generated_workload_has_the_profile_shape() {
    let g = Generator::new(GenOptions {
        seed: 11,
        methods: 3000,
        scale: vec![],
    })
    .unwrap();
    let (mut allocs, mut bytes, mut largest) = (0u64, 0u64, 0u64);
    let mut per_method = Vec::new();
    let mut events = Vec::new();
    for i in 0..3000 {
        g.method_events(i, &mut events);
        let b: u64 = events.iter().filter(|e| e.op == 0).map(|e| e.size).sum();
        allocs += events.iter().filter(|e| e.op == 0).count() as u64;
        largest = largest.max(events.iter().map(|e| e.size).max().unwrap_or(0));
        bytes += b;
        per_method.push(b);
    }
    per_method.sort_unstable();
    let (per_alloc, allocs_per_method) = (bytes / allocs, allocs / 3000);
    assert!(
        (60..=120).contains(&per_alloc),
        "{per_alloc} bytes per allocation"
    );
    assert!(
        (1800..=3800).contains(&allocs_per_method),
        "{allocs_per_method} allocations per method"
    );
    assert!((50_000..=110_000).contains(&largest), "largest {largest}");
    // Heavy-tailed: the median method is far smaller than the mean one.
    assert!(
        per_method[1500] * 2 < bytes / 3000,
        "median {} mean {}",
        per_method[1500],
        bytes / 3000
    );
}

/// Per-kind (bytes, count) summed from a text trace's `alloc` lines, independently of the
/// crate's parser.
fn text_sums(path: &Path) -> BTreeMap<String, (u64, u64)> {
    let mut sums = BTreeMap::new();
    for line in std::fs::read_to_string(path).unwrap().lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.first() == Some(&"alloc") {
            let s = sums.entry(words[1].to_string()).or_insert((0, 0));
            s.0 += words[2].parse::<u64>().unwrap();
            s.1 += 1;
        }
    }
    sums
}

#[test]
fn the_real_traces_are_in_the_repository_and_equal_the_originals() {
    // Every packed trace is one of the named ones, and every name has its packed trace.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/traces");
    let mut packed: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".gz"))
        .collect();
    packed.sort();
    let want: Vec<String> = real::NAMES.iter().map(|n| format!("{n}.gz")).collect();
    assert_eq!(packed, want);
    // Where the originals are at hand, none of them is missing from the repository.
    if let Ok(entries) = std::fs::read_dir(real::shared_dir()) {
        let mut originals: Vec<String> = entries
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".txt"))
            .collect();
        originals.sort();
        assert_eq!(originals, real::NAMES);
    }
    for name in real::NAMES {
        // `bytes` also compares with ../shared's original where it exists.
        let text = String::from_utf8(real::bytes(name)).unwrap();
        assert!(text.starts_with("# Cranelift 0.10"), "{name}");
        let methods = text.lines().filter(|l| l.starts_with("method ")).count();
        assert_eq!(methods, 194, "{name}");
    }
}

#[test]
fn replay_of_the_real_traces_matches_the_sums_of_their_alloc_lines() {
    for file in real::traces() {
        let out = tmp("real.jas");
        let summary = harness::replay(
            std::slice::from_ref(&file),
            Some(&out),
            &ReplayOptions::default(),
        )
        .unwrap();
        assert_eq!(summary.methods, 194, "{}", file.display());
        assert_eq!(log_sums(&out), text_sums(&file), "{}", file.display());
    }
}

/// A trace cut short replays into a log that says so: its readers warn, and a memory diff over
/// it is INCOMPLETE (`truncated`) against the whole trace's replay, never a pass over the lost
/// methods.
#[test]
fn a_cut_trace_replays_into_a_log_that_memdiff_calls_incomplete() {
    let methods = sample_trace();
    let bin = tmp("cut-whole.jat");
    let mut w = TraceWriter::new(std::fs::File::create(&bin).unwrap()).unwrap();
    methods.iter().for_each(|m| w.write_method(m).unwrap());
    w.finish().unwrap();
    let bytes = std::fs::read(&bin).unwrap();
    let cut = tmp("cut-short.jat");
    std::fs::write(&cut, &bytes[..bytes.len() - 40]).unwrap();
    let (whole_log, cut_log) = (tmp("cut-whole.jas"), tmp("cut-short.jas"));
    for (trace, log) in [(&bin, &whole_log), (&cut, &cut_log)] {
        let options = ReplayOptions::default();
        let summary = harness::replay(std::slice::from_ref(trace), Some(log), &options).unwrap();
        assert_eq!(summary.warnings.is_empty(), trace == &bin, "{summary:?}");
    }
    let mut reader = jitarena::log::LogReader::open(&cut_log).unwrap();
    while reader.next_raw().unwrap() {}
    assert!(!reader.warnings().is_empty(), "the log notes the cut");
    let json = tmp("cut-short.json");
    let (code, out, err) = common::cli(&[
        "memdiff",
        common::s(&whole_log),
        common::s(&cut_log),
        "--json",
        common::s(&json),
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rules: Vec<&str> = doc["verdict"]["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert!(rules.contains(&"truncated"), "{rules:?}");
}
