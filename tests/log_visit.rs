//! `LogReader::visit_current` against `LogReader::decode_current`: the same kinds, phases,
//! kinds by phase and other fields for every record of version-2 logs (several schemas, one of
//! more than 64 kinds and phases, kinds by phase, derived phases) and of the checked-in
//! version-1 log, and the same error, word for word, for every record damaged by changing one
//! byte of it or adding one. The sums handed over last are those of the kinds.

use std::path::{Path, PathBuf};

use jitarena::format::{put_frame, HEADER_LEN};
use jitarena::log::{self, CountsVisitor, LogReader, LogWriter, MethodRecord};
use jitarena::Shared;
use jitarena::{Error, MethodCounts, MethodInfo, Schema};

fn tmp(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("log_visit");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// What a visitor was handed, and whether it was handed anything before `start`.
#[derive(Default)]
struct Collect {
    started: bool,
    early: bool,
    counts: MethodCounts,
    /// What `sums` was handed, and whether anything came after it.
    sums: Option<(u64, u64)>,
    late: bool,
}

impl CountsVisitor for Collect {
    fn start(&mut self, record: &MethodRecord) {
        assert!(record.counts.kinds.is_empty() && record.counts.phases.is_empty());
        self.started = true;
    }
    fn kind(&mut self, slot: u32, bytes: u64, count: u64) {
        self.early |= !self.started;
        self.late |= self.sums.is_some();
        self.counts.kinds.push((slot, bytes, count));
    }
    fn phase(&mut self, slot: u32, bytes: u64) {
        self.early |= !self.started;
        self.late |= self.sums.is_some();
        self.counts.phases.push((slot, bytes));
    }
    fn phase_kind(&mut self, phase: u32, kind: u32, bytes: u64) {
        self.early |= !self.started;
        self.late |= self.sums.is_some();
        self.counts.phase_kind_bytes.push((phase, kind, bytes));
    }
    fn sums(&mut self, bytes: u64, allocations: u64) {
        assert!(self.sums.is_none(), "sums come once");
        self.sums = Some((bytes, allocations));
    }
}

/// Every record of `path` as `visit_current` hands it over, one record buffer reused.
fn visit_all(path: &Path) -> Result<Vec<MethodRecord>, Error> {
    let mut reader = LogReader::open(path)?;
    let mut record = MethodRecord::default();
    let mut out = Vec::new();
    while reader.next_raw()? {
        let mut v = Collect::default();
        reader.visit_current(&mut record, &mut v)?;
        assert!(v.started && !v.early, "start comes first");
        assert!(!v.late, "sums come last");
        let want: (u64, u64) = v
            .counts
            .kinds
            .iter()
            .fold((0, 0), |(b, n), k| (b + k.1, n + k.2));
        assert_eq!(v.sums, Some(want), "the sums of the kinds handed over");
        let c = &record.counts;
        assert!(c.kinds.is_empty() && c.phases.is_empty() && c.phase_kind_bytes.is_empty());
        let mut r = record.clone();
        r.counts = MethodCounts {
            used_bytes: c.used_bytes,
            reserved_bytes: c.reserved_bytes,
            page_count: c.page_count,
            largest_alloc: c.largest_alloc,
            limit_hit: c.limit_hit,
            ..v.counts
        };
        out.push(r);
    }
    Ok(out)
}

/// Both readings of `path` agree: the same records, or the same error.
fn agree(path: &Path) -> Result<usize, String> {
    match (log::read_all(path), visit_all(path)) {
        (Ok((want, _)), Ok(got)) => {
            assert_eq!(got, want, "{}", path.display());
            Ok(want.len())
        }
        (Err(want), Err(got)) => {
            assert_eq!(got.message, want.message);
            Err(want.message.into_owned())
        }
        (want, got) => panic!(
            "{}: decoding gives {:?}, visiting {:?}",
            path.display(),
            want.map(|r| r.0.len()).map_err(|e| e.message),
            got.map(|r| r.len()).map_err(|e| e.message)
        ),
    }
}

fn schema(kinds: usize, phases: usize) -> Shared<Schema> {
    let names = |p: &str, n: usize| (0..n).map(|i| format!("{p}{i}")).collect();
    Shared::new(Schema::of_log(names("K", kinds), names("P", phases)).unwrap())
}

/// 12 records over three schemas (one of 100 kinds and 70 phases), with the invalid-kind and
/// no-phase buckets, phases that add up to the kinds (the last one derived) and ones that do
/// not, and kinds by phase on some.
fn sample() -> Vec<MethodRecord> {
    let schemas = [schema(3, 2), schema(100, 70), schema(1, 0)];
    (0..12u64)
        .map(|i| {
            let s = Shared::clone(&schemas[(i % 3) as usize]);
            let (k, ph) = (s.kinds.len() as u32, s.phases.len() as u32);
            let kinds: Vec<(u32, u64, u64)> = (0..=k)
                .filter(|slot| (u64::from(*slot) + i) % 2 == 0)
                .map(|slot| (slot, 300 * u64::from(slot) + i + 1, i % 4 + 1))
                .collect();
            let total: u64 = kinds.iter().map(|k| k.1).sum();
            let (phases, phase_kind_bytes) = match i % 4 {
                0 if ph > 0 => (vec![(0, total / 3), (ph, total - total / 3)], Vec::new()),
                1 => (vec![(ph.min(1), total / 3 + 1)], Vec::new()),
                2 => (
                    vec![(0, total)],
                    kinds.iter().map(|k| (0, k.0, k.1)).collect(),
                ),
                0 => (vec![(0, total)], Vec::new()),
                _ => (Vec::new(), Vec::new()),
            };
            MethodRecord {
                schema: s,
                info: MethodInfo {
                    name: Some(format!("Ns.C:M{i}")),
                    context: [i as i64, -1][(i % 2) as usize],
                    tier: [None, Some("Tier1".to_string())][(i % 2) as usize].clone(),
                },
                counts: MethodCounts {
                    used_bytes: total + i,
                    reserved_bytes: 4096 * (i + 1) + i % 2,
                    page_count: i,
                    largest_alloc: 100 + i,
                    limit_hit: i % 5 == 1,
                    kinds,
                    phases,
                    phase_kind_bytes,
                },
            }
        })
        .collect()
}

/// Writes the [`sample`] records into a log named `name`; returns its path and the records.
fn write_sample(name: &str) -> (PathBuf, Vec<MethodRecord>) {
    let records = sample();
    let path = tmp(name);
    let mut w = LogWriter::new(std::fs::File::create(&path).unwrap()).unwrap();
    for r in &records {
        w.write_record(r).unwrap();
    }
    w.finish().unwrap();
    (path, records)
}

#[test]
fn visiting_hands_over_what_decoding_stores() {
    let (path, records) = write_sample("sample.jas");
    assert_eq!(agree(&path), Ok(records.len()));
    assert_eq!(visit_all(&path).unwrap(), records);
    let v1 = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/v1.jas");
    assert_eq!(agree(&v1), Ok(30));
}

#[test]
fn a_damaged_record_gives_the_same_error_either_way() {
    let (path, _) = write_sample("to-damage.jas");
    let bytes = std::fs::read(&path).unwrap();
    let damaged = tmp("damaged.jas");
    let mut errors = Vec::new();
    let mut start = HEADER_LEN;
    for (kind, payload) in frames_of(&bytes) {
        let end = payload.end + 4; // past the checksum
        if kind == 3 {
            let good = &bytes[payload];
            let mut variants: Vec<Vec<u8>> = vec![[good, &[0][..]].concat()];
            for i in 0..good.len() {
                for b in [good[i] ^ 1, good[i] ^ 0x80, good[i] ^ 0x10, 0xFF, 0] {
                    let mut p = good.to_vec();
                    p[i] = b;
                    variants.push(p);
                }
            }
            for p in variants {
                let mut log = bytes[..start].to_vec();
                put_frame(&mut log, kind, &p);
                log.extend_from_slice(&bytes[end..]);
                std::fs::write(&damaged, &log).unwrap();
                if let Err(e) = agree(&damaged) {
                    errors.push(e);
                }
            }
        }
        start = end;
    }
    // The damage reached each of the reader's checks.
    for says in [
        "bytes after its last field",
        "outside its schema",
        "runs past",
        "kinds by phase do not add up",
        "hold more bytes than its kinds",
        "lists more kinds or phases",
    ] {
        assert!(
            errors.iter().any(|e| e.contains(says)),
            "no error says {says}"
        );
    }
}

/// The frames of a log file: (type, payload range).
fn frames_of(bytes: &[u8]) -> Vec<(u8, std::ops::Range<usize>)> {
    let mut frames = Vec::new();
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
        frames.push((bytes[at], i..i + len));
        at = i + len + 4;
    }
    frames
}

/// Reads `path` with `open`, decoding the records for which `decode` holds; the records
/// decoded, or the first error.
fn read_some(
    path: &Path,
    open: fn(&Path) -> Result<LogReader, Error>,
    decode: impl Fn(usize) -> bool,
) -> Result<Vec<MethodRecord>, String> {
    let mut reader = open(path).map_err(|e| e.message)?;
    let mut record = MethodRecord::default();
    let (mut out, mut i) = (Vec::new(), 0);
    while reader.next_raw().map_err(|e| e.message)? {
        if decode(i) {
            reader.decode_current(&mut record).map_err(|e| e.message)?;
            out.push(record.clone());
        }
        i += 1;
    }
    Ok(out)
}

#[test]
fn a_second_reading_checks_the_records_it_decodes() {
    let (path, records) = write_sample("again.jas");
    let good = std::fs::read(&path).unwrap();
    let frames = frames_of(&good);
    let damaged = tmp("again-damaged.jas");
    let all = |_| true;
    // Undamaged, both readings give every record.
    assert_eq!(
        read_some(&path, LogReader::open_again, all),
        Ok(records.clone())
    );

    // The last byte of record 5's counters, then its name (stored as "5" after the previous
    // record's "Ns.C:M"), made invalid UTF-8, so that its head cannot be read.
    let methods: Vec<_> = frames.iter().filter(|f| f.0 == 3).collect();
    let head = methods[5].1.start..methods[5].1.start + 8;
    let name = head.start + good[head].iter().position(|&b| b == b'5').unwrap();
    for (at, value) in [
        (methods[5].1.end - 1, good[methods[5].1.end - 1] ^ 1),
        (name, 0xFF),
    ] {
        let mut bytes = good.clone();
        bytes[at] = value;
        std::fs::write(&damaged, &bytes).unwrap();
        let want = read_some(&damaged, LogReader::open, all).unwrap_err();
        assert!(want.contains("checksum mismatch"), "{want}");
        // Decoding it: the same error, whichever byte.
        assert_eq!(
            read_some(&damaged, LogReader::open_again, all),
            Err(want.clone())
        );
        assert_eq!(
            read_some(&damaged, LogReader::open_again, |i| i == 5),
            Err(want.clone())
        );
        // Passing over it: the others, decoded, unchanged; a damaged head is still found.
        let others = read_some(&damaged, LogReader::open_again, |i| i != 5);
        if at == name {
            assert_eq!(others, Err(want));
        } else {
            let mut want = records.clone();
            want.remove(5);
            assert_eq!(others, Ok(want));
        }
    }

    // A damaged schema frame is found by either reading, decoding or not.
    let schema_frame = frames.iter().rfind(|f| f.0 != 3).unwrap();
    let mut bytes = good.clone();
    bytes[schema_frame.1.end - 1] ^= 0x01;
    std::fs::write(&damaged, &bytes).unwrap();
    let want = read_some(&damaged, LogReader::open, all).unwrap_err();
    assert!(want.contains("checksum mismatch"), "{want}");
    assert_eq!(
        read_some(&damaged, LogReader::open_again, |_| false),
        Err(want)
    );
}

#[test]
fn a_reading_resumed_at_a_mark_reads_what_follows_it() {
    let (path, records) = write_sample("marks.jas");
    let mut reader = LogReader::open(&path).unwrap();
    let mut marks = vec![reader.mark()];
    while reader.next_raw().unwrap() {
        marks.push(reader.mark());
    }
    let dictionary = reader.dictionary();
    // From each mark (before each record, and at the end), in any order.
    for (k, mark) in marks.iter().enumerate().rev() {
        let mut again = LogReader::resume(&path, mark, &dictionary).unwrap();
        let mut got = Vec::new();
        let mut record = records[0].clone();
        while again.next_raw().unwrap() {
            again.decode_current(&mut record).unwrap();
            got.push(record.clone());
        }
        assert_eq!(got, records[k..], "from mark {k}");
    }
    // A dictionary that does not hold what a mark names is refused.
    let early = LogReader::open(&path).unwrap().dictionary();
    match LogReader::resume(&path, &marks[5], &early) {
        Err(e) => assert!(e.message.contains("dictionary"), "{}", e.message),
        Ok(_) => panic!("resumed with a dictionary that lacks the mark's schemas"),
    }
}
