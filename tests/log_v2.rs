//! The version-2 stats log: records read back exactly (kinds by phase, derived fields, names
//! and contexts relative to the previous record), a log cut at every byte reads back every
//! record before the cut, the version-1 log checked in at `tests/data/v1.jas` still reads, and
//! damaged or impossible records are refused with the file and offset named.

use std::cell::RefCell;
use std::io::{self, Write};
use std::path::PathBuf;
use std::rc::Rc;

use jitarena::format::{header_for, put_frame, put_str, put_varint, Content, HEADER_LEN};
use jitarena::log::{self, LogReader, LogWriter, MethodRecord};
use jitarena::Shared;
use jitarena::{MethodCounts, MethodInfo, Schema};

fn tmp(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("log_v2");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// An output whose bytes the test can see while the writer owns it.
#[derive(Default, Clone)]
struct SharedBytes(Rc<RefCell<Vec<u8>>>);

impl Write for SharedBytes {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn schema(kinds: &[&str], phases: &[&str]) -> Shared<Schema> {
    let names = |l: &[&str]| l.iter().map(|s| s.to_string()).collect();
    Shared::new(Schema::new(names(kinds), names(phases)).unwrap())
}

/// 20 records over three schemas (one of more than 64 kinds and phases) and three tiers (and none), with names that share prefixes
/// (also inside a multi-byte character), unknown names and contexts, the invalid-kind and
/// no-phase buckets, kinds by phase on some records, phases that add up to the kinds' bytes
/// and phases that do not, reserved bytes in and out of 4 KiB units, used below the total.
fn sample() -> Vec<MethodRecord> {
    let schemas = [
        schema(&["A", "B", "C"], &["P", "Q"]),
        // More than 64 kinds and phases: bitmaps of more than one word.
        Shared::new(
            Schema::of_log(
                (0..100).map(|i| format!("K{i}")).collect(),
                (0..70).map(|i| format!("P{i}")).collect(),
            )
            .unwrap(),
        ),
        schema(&["X"], &[]),
    ];
    let names = [
        "Ns.C:M0(int)",
        "Ns.C:M1(int)",
        "Ns.C:M10(int)",
        "",
        "Ñame",
        "Òther",
        "Ns.D:M",
        "Ns.D:M",
        "x",
        "Ns.C:M0(int)",
    ];
    (0..20u64)
        .map(|i| {
            let s = Shared::clone(&schemas[(i % 3) as usize]);
            let k = s.kinds.len() as u32;
            let ph = s.phases.len() as u32;
            let mut kinds: Vec<(u32, u64, u64)> = (0..=k)
                .filter(|slot| (u64::from(*slot) + i) % 2 == 0 || *slot == k && i % 4 == 1)
                .map(|slot| (slot, 8 * i + u64::from(slot) * 300 + 1, i % 5 + 1))
                .collect();
            if i == 7 {
                kinds.clear();
            }
            let total: u64 = kinds.iter().map(|k| k.1).sum();
            let mut phase_kind_bytes = Vec::new();
            let phases = if i % 5 == 2 {
                // Phases that do not add up to the kinds (a log from elsewhere).
                let mut phases = vec![(0, total / 3 + 1)];
                if ph > 0 {
                    phases.push((ph, 7));
                }
                phases
            } else if kinds.is_empty() {
                Vec::new()
            } else {
                // Everything in the first phase but the last kind, which is in the last slot
                // (named phase or "no phase").
                let last = kinds.len() - 1;
                let first: u64 = kinds[..last].iter().map(|k| k.1).sum();
                let last_phase = if i % 2 == 0 { ph } else { ph.min(1) };
                if i % 3 == 1 {
                    for kind in &kinds[..last] {
                        phase_kind_bytes.push((0, kind.0, kind.1));
                    }
                    phase_kind_bytes.push((last_phase, kinds[last].0, kinds[last].1));
                }
                if first == 0 || last_phase == 0 {
                    vec![(last_phase, total)]
                } else {
                    vec![(0, first), (last_phase, kinds[last].1)]
                }
            };
            if phases.len() == 1 {
                phase_kind_bytes.retain(|e| e.0 == phases[0].0);
                phase_kind_bytes.iter_mut().for_each(|e| e.0 = phases[0].0);
                if phase_kind_bytes.iter().map(|e| e.2).sum::<u64>() != total {
                    phase_kind_bytes.clear();
                }
            }
            MethodRecord {
                schema: s,
                info: MethodInfo {
                    name: Some(names[(i % 10) as usize].to_string()).filter(|n| !n.is_empty()),
                    context: [i as i64, -1, 1 << 40, i as i64 - 3][(i % 4) as usize],
                    tier: [None, Some("Tier0"), Some("Tier1"), Some("OSR")][(i % 4) as usize]
                        .map(String::from),
                },
                counts: MethodCounts {
                    used_bytes: if i == 5 { total / 2 } else { total + 8 * i },
                    reserved_bytes: if i % 3 == 0 {
                        65536 * (i + 1)
                    } else {
                        1000 + i
                    },
                    page_count: i % 3,
                    largest_alloc: 100 + i,
                    limit_hit: i % 6 == 1,
                    kinds,
                    phases,
                    phase_kind_bytes,
                },
            }
        })
        .collect()
}

/// The sample written as a version-2 log, and the offset after each of its frames.
fn written(records: &[MethodRecord]) -> (Vec<u8>, Vec<usize>) {
    let out = SharedBytes::default();
    let mut w = LogWriter::new(out.clone()).unwrap();
    for r in records {
        w.write_record(r).unwrap();
    }
    w.finish().unwrap();
    let bytes = out.0.borrow().clone();
    let mut ends = Vec::new();
    let mut at = HEADER_LEN;
    while at < bytes.len() {
        let (mut len, mut shift, mut i) = (0usize, 0, at + 1);
        loop {
            len |= usize::from(bytes[i] & 0x7f) << shift;
            shift += 7;
            i += 1;
            if bytes[i - 1] < 0x80 {
                break;
            }
        }
        at = i + len + 4;
        ends.push(at);
    }
    assert_eq!(at, bytes.len());
    (bytes, ends)
}

#[test]
fn records_read_back_exactly() {
    let records = sample();
    let count = |f: &dyn Fn(&MethodCounts) -> bool| records.iter().filter(|r| f(&r.counts)).count();
    assert!(count(&|c| !c.phase_kind_bytes.is_empty()) >= 4);
    assert!(count(&|c| c.used_bytes < c.total_bytes()) >= 1);
    assert!(count(&|c| c.checked_phase_bytes() != Some(c.total_bytes())) >= 4);
    assert!(
        count(&|c| c.phases.len() >= 2 && c.checked_phase_bytes() == Some(c.total_bytes())) >= 4
    );
    assert_eq!(
        records
            .iter()
            .map(|r| &r.schema)
            .collect::<std::collections::HashSet<_>>()
            .len(),
        3
    );
    let (bytes, _) = written(&records);
    assert_eq!(bytes[9], 2, "a version-2 header");
    let path = tmp("sample.jas");
    std::fs::write(&path, &bytes).unwrap();
    let (back, warnings) = log::read_all(&path).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(back.len(), records.len());
    for (got, want) in back.iter().zip(&records) {
        assert_eq!(got, want);
    }
}

#[test]
fn a_log_cut_at_every_byte_reads_back_every_record_before_the_cut() {
    let records = sample();
    let (bytes, ends) = written(&records);
    // The offset after each method record: the frames that end at one of these.
    let record_ends: Vec<usize> = {
        let mut v = Vec::new();
        let mut seen = 0;
        for &end in &ends {
            let path = tmp("prefix.jas");
            std::fs::write(&path, &bytes[..end]).unwrap();
            let n = log::read_all(&path).unwrap().0.len();
            if n > seen {
                v.push(end);
                seen = n;
            }
        }
        v
    };
    assert_eq!(record_ends.len(), records.len());
    let path = tmp("cut.jas");
    for cut in 0..=bytes.len() {
        std::fs::write(&path, &bytes[..cut]).unwrap();
        let (back, warnings) = log::read_all(&path).unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
        let whole = record_ends.iter().filter(|&&end| end <= cut).count();
        assert_eq!(back.len(), whole, "cut at {cut}");
        assert_eq!(back[..], records[..whole], "cut at {cut}");
        let at_a_frame_end = cut == HEADER_LEN || ends.contains(&cut);
        assert_eq!(
            warnings.is_empty(),
            at_a_frame_end,
            "cut at {cut}: {warnings:?}"
        );
        if let Some(w) = warnings.first() {
            assert!(w.contains("cut short") && w.contains("cut.jas"), "{w}");
        }
    }
}

#[test]
fn the_checked_in_version_1_log_reads_and_converts() {
    let v1 = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/v1.jas");
    let mut reader = LogReader::open(&v1).unwrap();
    assert_eq!(reader.version(), 1);
    let mut records = Vec::new();
    while let Some(r) = reader.next_record().unwrap() {
        records.push(r);
    }
    assert_eq!(records.len(), 30);
    assert_eq!(
        records[0].info.name.as_deref(),
        Some("Gen.Class0:Method0(int,ref)")
    );
    assert_eq!(records[0].counts.total_bytes(), 52066);
    assert_eq!(records[1].info.tier.as_deref(), Some("MinOpts"));
    // Written again as version 2: the same records, in fewer bytes.
    let (bytes, _) = written(&records);
    let path = tmp("v1-as-v2.jas");
    std::fs::write(&path, &bytes).unwrap();
    let (back, warnings) = log::read_all(&path).unwrap();
    assert!(warnings.is_empty());
    assert_eq!(back, records);
    let old = std::fs::metadata(&v1).unwrap().len() as usize;
    assert!(bytes.len() * 10 < old * 8, "{} vs {old} bytes", bytes.len());
}

/// A version-2 log of one schema (kinds A, B; phase P) and one record whose kinds by phase
/// give `by_phase` bytes to A and B in phase P (A has 10 bytes, B 5, P 15).
fn hand_made(by_phase: (u64, u64)) -> Vec<u8> {
    let mut bytes = header_for(Content::Log, 2).to_vec();
    let mut p = Vec::new();
    put_varint(&mut p, 0);
    put_varint(&mut p, 2);
    put_str(&mut p, "A");
    put_str(&mut p, "B");
    put_varint(&mut p, 1);
    put_str(&mut p, "P");
    put_frame(&mut bytes, 1, &p);
    let mut p = Vec::new();
    // head (kinds by phase follow), context delta, shared prefix, name, reserved, pages,
    // largest.
    p.extend_from_slice(&[2, 0, 0]);
    put_str(&mut p, "m");
    p.extend_from_slice(&[0, 0, 0]);
    p.extend_from_slice(&[0b011, 10, 1, 5, 1]); // kinds A and B
    p.push(0); // used - total
    p.extend_from_slice(&[0b01, 15]); // phase P
    p.extend_from_slice(&[0b11, by_phase.0 as u8, by_phase.1 as u8]);
    put_frame(&mut bytes, 3, &p);
    bytes
}

#[test]
fn kinds_by_phase_that_do_not_add_up_are_corrupt() {
    let path = tmp("by-phase-ok.jas");
    std::fs::write(&path, hand_made((10, 5))).unwrap();
    let (records, _) = log::read_all(&path).unwrap();
    assert_eq!(records[0].counts.phase_kind_bytes, [(0, 0, 10), (0, 1, 5)]);
    assert_eq!(records[0].info.context, 0);
    for (name, split) in [
        ("by-phase-kind.jas", (11, 4)),
        ("by-phase-sum.jas", (10, 4)),
    ] {
        let path = tmp(name);
        std::fs::write(&path, hand_made(split)).unwrap();
        let err = log::read_all(&path).expect_err("a mismatch is an error");
        assert!(
            err.message.contains(name)
                && err.message.contains("record at byte 27 is corrupt")
                && err.message.contains("kinds by phase do not add up"),
            "{}",
            err.message
        );
    }
}

#[test]
fn the_writer_refuses_kinds_by_phase_readers_would_refuse_and_goes_on() {
    let s = schema(&["A", "B"], &["P"]);
    let good = MethodCounts {
        kinds: vec![(0, 10, 1), (1, 5, 1)],
        phases: vec![(0, 15)],
        phase_kind_bytes: vec![(0, 0, 10), (0, 1, 5)],
        ..MethodCounts::default()
    };
    let bad = [
        vec![(0, 0, 10), (0, 1, 4)],            // does not add up
        vec![(0, 0, 10), (1, 1, 5)],            // a phase the record does not list
        vec![(0, 1, 5), (0, 0, 10)],            // out of order
        vec![(0, 0, 10), (0, 1, 5), (0, 2, 0)], // a kind the record does not list
    ];
    let out = SharedBytes::default();
    let mut w = LogWriter::new(out.clone()).unwrap();
    w.write(&s, Some("m0"), 0, None, &good).unwrap();
    let before = out.0.borrow().len();
    for entries in bad {
        let c = MethodCounts {
            phase_kind_bytes: entries,
            ..good.clone()
        };
        let err = w.write(&s, Some("bad"), 1, Some("T"), &c).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err}");
        assert_eq!(out.0.borrow().len(), before, "nothing written");
    }
    w.write(&s, Some("m2"), 2, Some("T"), &good).unwrap();
    let path = tmp("refused.jas");
    std::fs::write(&path, out.0.borrow().as_slice()).unwrap();
    let (records, warnings) = log::read_all(&path).unwrap();
    assert!(warnings.is_empty());
    let seen: Vec<_> = records
        .iter()
        .map(|r| {
            (
                r.info.name.clone().unwrap(),
                r.info.context,
                r.info.tier.clone(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [("m0".into(), 0, None), ("m2".into(), 2, Some("T".into()))]
    );
}

#[test]
fn a_newer_version_is_refused_with_a_message() {
    let path = tmp("v3.jas");
    std::fs::write(&path, header_for(Content::Log, 3)).unwrap();
    let err = LogReader::open(&path).err().expect("version 3 is refused");
    assert!(
        err.message.contains("format version 3")
            && err.message.contains("reads versions 1 to 2")
            && err.message.contains("v3.jas"),
        "{}",
        err.message
    );
    // Traces are version 2 (sites), or 3 once they hold a method in parts: a version-2
    // reader refuses those with "reads versions 1 to 2"; this one refuses version 4.
    let path = tmp("v4.jat");
    std::fs::write(&path, header_for(Content::Trace, 4)).unwrap();
    let err = jitarena::trace::open(&path)
        .err()
        .expect("a version-4 trace");
    assert!(
        err.message.contains("format version 4") && err.message.contains("reads versions 1 to 3"),
        "{}",
        err.message
    );
}

/// A version-2 log of one schema of `kinds` kinds (no phases) and one record `body` after a
/// head of no flags, context delta 0 and `shared` bytes shared with the (empty) previous name.
fn with_record(kinds: usize, shared: u8, body: &[u8]) -> Vec<u8> {
    let mut bytes = header_for(Content::Log, 2).to_vec();
    let mut p = Vec::new();
    put_varint(&mut p, 0);
    put_varint(&mut p, kinds as u64);
    (0..kinds).for_each(|i| put_str(&mut p, &format!("K{i}")));
    put_varint(&mut p, 0);
    put_frame(&mut bytes, 1, &p);
    let mut p = vec![0, 0, shared];
    put_str(&mut p, "m");
    p.extend_from_slice(&[0, 0, 0]); // reserved, pages, largest
    p.extend_from_slice(body);
    put_frame(&mut bytes, 3, &p);
    bytes
}

#[test]
fn impossible_version_2_records_are_corrupt_and_cost_no_memory() {
    // A good record first, so that the cases below differ from it in one thing each.
    let path = tmp("v2-good.jas");
    // Kinds: slot 1 (8 bytes, 1 allocation); used - total 0; phases: "no phase", derived: no.
    std::fs::write(&path, with_record(2, 0, &[0b010, 8, 1, 0, 0b1, 8])).unwrap();
    let (records, _) = log::read_all(&path).unwrap();
    assert_eq!(records[0].counts.kinds, [(1, 8, 1)]);
    assert_eq!(records[0].counts.phases, [(0, 8)]);
    let mut many = vec![0xFF; 4_000 / 8];
    many.extend_from_slice(&[1, 1, 0, 0]);
    let cases: [(&str, Vec<u8>, &str); 4] = [
        // The previous name is empty: nothing to share.
        (
            "shared.jas",
            with_record(2, 1, &[0b010, 8, 1, 0, 0b1, 8]),
            "shares more",
        ),
        // Bit 3 is the slot after the invalid-kind bucket (slot 2).
        (
            "past.jas",
            with_record(2, 0, &[0b1000, 8, 1, 0, 0b1, 8]),
            "outside its schema",
        ),
        // 3,999 kinds and an invalid bucket claimed, two bytes of them there.
        (
            "claims.jas",
            with_record(3_999, 0, &many),
            "lists more kinds",
        ),
        // The record ends inside its phases.
        (
            "short.jas",
            with_record(2, 0, &[0b010, 8, 1, 0, 0b1]),
            "runs past",
        ),
    ];
    for (name, bytes, says) in cases {
        let path = tmp(name);
        std::fs::write(&path, bytes).unwrap();
        let err = log::read_all(&path).expect_err(name);
        assert!(
            err.message.contains(name)
                && err.message.contains("is corrupt")
                && err.message.contains(says),
            "{name}: {}",
            err.message
        );
    }
}

/// The sample with a frame of an unknown type after every frame: readers skip them, and the
/// names and contexts of the records after them are still relative to the previous record.
#[test]
fn unknown_frames_and_undecoded_records_keep_names_and_contexts_right() {
    let records = sample();
    let (bytes, ends) = written(&records);
    let mut with_unknown = bytes[..HEADER_LEN].to_vec();
    let mut at = HEADER_LEN;
    for (i, &end) in ends.iter().enumerate() {
        with_unknown.extend_from_slice(&bytes[at..end]);
        // Unknown types, one of them with a payload that looks like a record.
        put_frame(&mut with_unknown, 9 + (i % 3) as u8, &bytes[at..end]);
        at = end;
    }
    let path = tmp("unknown_frames.jas");
    std::fs::write(&path, &with_unknown).unwrap();
    let (back, warnings) = log::read_all(&path).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(back, records);
    // As memdiff's second pass reads: every record moved to, one in three decoded.
    let mut reader = LogReader::open(&path).unwrap();
    let mut record = MethodRecord::default();
    let mut n = 0;
    while reader.next_raw().unwrap() {
        if n % 3 == 2 {
            reader.decode_current(&mut record).unwrap();
            assert_eq!(record, records[n], "record {n}");
        }
        n += 1;
    }
    assert_eq!(n, records.len());
}

/// Kinds by phase that cannot be a record (naming a kind the record does not list, out of
/// order, repeated, in a phase it does not list, or not adding up) are refused with
/// `InvalidInput` and the reason, and nothing reaches the output; the writer goes on.
#[test]
fn kinds_by_phase_that_cannot_be_a_record_are_refused_with_the_reason() {
    let s = schema(&["A", "B", "C"], &["P", "Q"]);
    let counts = |phase_kind_bytes: Vec<(u32, u32, u64)>| MethodCounts {
        kinds: vec![(0, 10, 1), (2, 5, 1)],
        phases: vec![(0, 12), (1, 3)],
        used_bytes: 15,
        phase_kind_bytes,
        ..MethodCounts::default()
    };
    let out = SharedBytes::default();
    let mut w = LogWriter::new(out.clone()).unwrap();
    let good = vec![(0, 0, 10), (0, 2, 2), (1, 2, 3)];
    w.write(&s, Some("Ns.C:Good()"), 0, None, &counts(good.clone()))
        .unwrap();
    let not_listed = "names a phase or kind that the record does not list";
    for (entries, says) in [
        (vec![(0, 0, 10), (0, 1, 2), (1, 2, 3)], not_listed), // kind B has no bytes
        (vec![(0, 2, 2), (0, 0, 10), (1, 2, 3)], not_listed), // out of kind order
        (vec![(0, 0, 5), (0, 0, 5), (0, 2, 2), (1, 2, 3)], not_listed), // kind A twice
        (
            vec![(0, 0, 10), (0, 2, 2), (1, 2, 3), (3, 0, 1)],
            not_listed,
        ), // phase 3 not listed
        (vec![(1, 2, 3), (0, 0, 10), (0, 2, 2)], "do not add up"), // phase P read empty
        (vec![(0, 0, 10), (0, 2, 1), (1, 2, 3)], "do not add up"), // phase P: 11 of 12
        (vec![(0, 0, 9), (0, 2, 3), (1, 2, 3)], "do not add up"), // kind A: 9 of 10
    ] {
        let before = out.0.borrow().len();
        let err = w
            .write(&s, Some("Ns.C:Bad()"), 1, None, &counts(entries.clone()))
            .expect_err("refused");
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{entries:?}");
        assert!(err.to_string().contains(says), "{entries:?}: {err}");
        assert_eq!(out.0.borrow().len(), before, "{entries:?}: bytes written");
    }
    w.write(&s, Some("Ns.C:Good()"), 2, None, &counts(good))
        .unwrap();
    let bytes = out.0.borrow().clone();
    let path = tmp("by-phase-refused.jas");
    std::fs::write(&path, bytes).unwrap();
    let (records, warnings) = log::read_all(&path).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let contexts: Vec<_> = records.iter().map(|r| r.info.context).collect();
    assert_eq!(contexts, [0, 2]);
}

/// Notes of logs cut short, as `jitarena merge` writes them: each read back as a warning, its
/// text shown without control or direction characters and cut when long, at most 100 shown
/// (and a last warning saying there are more); a note with bytes after its text is corrupt.
#[test]
fn notes_of_logs_cut_short_read_back_as_warnings() {
    let path = tmp("notes.jas");
    let s = schema(&["A"], &["P"]);
    let counts = one_kind_of_8_bytes();
    let mut w = LogWriter::new(std::fs::File::create(&path).unwrap()).unwrap();
    w.write(&s, Some("M"), 0, None, &counts).unwrap();
    w.write_cut_note("a.jas: cut \u{1b}[31m red \u{202e}txt.exe\n")
        .unwrap();
    w.write_cut_note(&"x".repeat(3000)).unwrap();
    for i in 0..110 {
        w.write_cut_note(&format!("shard {i}")).unwrap();
    }
    w.write(&s, Some("N"), 1, None, &counts).unwrap();
    w.finish().unwrap();
    let (records, warnings) = log::read_all(&path).unwrap();
    assert_eq!(records.len(), 2, "notes are no records");
    assert_eq!(warnings.len(), 101, "{warnings:?}");
    let first = &warnings[0];
    assert!(
        first.contains("notes.jas: holds the records of a log that was cut short")
            && first.ends_with(r"a.jas: cut \u{1b}[31m red \u{202e}txt.exe\n"),
        "{first}"
    );
    assert!(!first.contains('\u{1b}') && !first.contains('\u{202e}') && !first.contains('\n'));
    assert!(warnings[1].ends_with("x..."), "{}", warnings[1]);
    assert!(warnings[1].len() < 2200, "{}", warnings[1].len());
    assert!(warnings[99].ends_with("shard 97"), "{}", warnings[99]);
    assert!(
        warnings[100].contains("more logs that were cut short"),
        "{}",
        warnings[100]
    );

    let mut bytes = header_for(Content::Log, 2).to_vec();
    let mut payload = Vec::new();
    put_str(&mut payload, "b.jas: cut");
    payload.push(0);
    put_frame(&mut bytes, 4, &payload);
    let bad = tmp("notes-bad.jas");
    std::fs::write(&bad, bytes).unwrap();
    let e = log::read_all(&bad).expect_err("a note with bytes after its text");
    assert!(e.message.contains("bytes after its last field"), "{e}");
}

/// A record may share all of a long name with the one before it for a few bytes of the file:
/// readers hand out at most `NAME_SHOWN_MAX` bytes of it, so that a crafted file of such
/// records (here 2 MiB of name, then 20,000 records of 21 bytes) costs its own size to read,
/// not a name's length per record.
#[test]
fn a_long_name_shared_by_many_records_is_handed_out_cut() {
    let s = schema(&["A"], &["P"]);
    let counts = one_kind_of_8_bytes();
    let big = format!("{}é", "a".repeat(2 << 20));
    let mut w = LogWriter::new(Vec::new()).unwrap();
    w.write(&s, Some(&big), 0, None, &counts).unwrap();
    let mut w = {
        let first = w.finish().unwrap();
        let mut w = LogWriter::new(Vec::new()).unwrap();
        w.write(&s, Some(&big), 0, None, &counts).unwrap();
        w.write(&s, Some(&big), 1, None, &counts).unwrap();
        let both = w.finish().unwrap();
        let again = both[first.len()..].to_vec();
        assert!(again.len() < 32, "{}", again.len());
        let mut bytes = both;
        for _ in 0..20_000 {
            bytes.extend_from_slice(&again);
        }
        bytes
    };
    let path = tmp("long-shared-name.jas");
    std::fs::write(&path, std::mem::take(&mut w)).unwrap();
    let (records, warnings) = log::read_all(&path).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(records.len(), 20_002);
    for r in [&records[0], &records[20_001]] {
        let name = r.info.name.as_deref().unwrap();
        assert!(name.len() <= log::NAME_SHOWN_MAX, "{}", name.len());
        assert!(
            name.starts_with("aaaa") && name.ends_with("a..."),
            "{}",
            &name[name.len() - 8..]
        );
    }
    assert_eq!(records[20_001].info.context, 20_001);
}

/// A log's schema holds at most `MAX_LOG_NAMES` kinds and as many phases: one of more is
/// corrupt (every record of a merged log carries a bitmap over its union's slots, so a crafted
/// schema could make each record of a merge kilobytes long).
#[test]
fn a_schema_of_more_kinds_than_a_log_holds_is_corrupt() {
    let most = jitarena::counters::MAX_LOG_NAMES;
    let names = |n: usize, what: &str| (0..n).map(|i| format!("{what}{i}")).collect::<Vec<_>>();
    let frame = |kinds: usize, phases: usize| {
        let mut bytes = header_for(Content::Log, 2).to_vec();
        let mut payload = Vec::new();
        put_varint(&mut payload, 0);
        for list in [names(kinds, "K"), names(phases, "P")] {
            put_varint(&mut payload, list.len() as u64);
            for name in &list {
                put_str(&mut payload, name);
            }
        }
        put_frame(&mut bytes, 1, &payload);
        let path = tmp(&format!("schema-{kinds}-{phases}.jas"));
        std::fs::write(&path, bytes).unwrap();
        path
    };
    assert!(log::read_all(&frame(most, most)).is_ok());
    for (kinds, phases, what) in [(most + 1, 1, "kind"), (1, most + 1, "phase")] {
        let e = log::read_all(&frame(kinds, phases)).expect_err("too many names");
        assert!(
            e.message.contains("is corrupt")
                && e.message
                    .contains(&format!("{} {what}s given, at most {most}", most + 1)),
            "{e}"
        );
    }
}

/// A tier's name is handed out by every record of the tier: readers cut a long one to
/// `TIER_SHOWN_MAX` bytes once, where the tier is defined, as they cut long method names.
#[test]
fn a_long_tier_name_is_handed_out_cut() {
    let s = schema(&["A"], &["P"]);
    let counts = one_kind_of_8_bytes();
    let tier = format!("T{}", "é".repeat(1 << 20));
    let path = tmp("long-tier.jas");
    let mut w = LogWriter::new(std::fs::File::create(&path).unwrap()).unwrap();
    for context in 0..3 {
        w.write(&s, Some("M"), context, Some(&tier), &counts)
            .unwrap();
    }
    w.finish().unwrap();
    let (records, _) = log::read_all(&path).unwrap();
    assert_eq!(records.len(), 3);
    for r in &records {
        let shown = r.info.tier.as_deref().unwrap();
        assert!(shown.len() <= log::TIER_SHOWN_MAX, "{}", shown.len());
        assert!(
            shown.starts_with("Té") && shown.ends_with("é..."),
            "{shown}"
        );
    }
}

/// Counts of one allocation of 8 bytes, of kind 0 in phase 0.
fn one_kind_of_8_bytes() -> MethodCounts {
    let mut counts = MethodCounts::default();
    counts.kinds.push((0, 8, 1));
    counts.phases.push((0, 8));
    counts
}
