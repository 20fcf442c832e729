//! The stats-log reader: `stats` (both renderings) and `dump` (csv and jsonl) of one fuzzed
//! file, its frames' checksums made valid; and `LogReader::visit_current` against
//! `decode_current` on it: the same counters, or the same error; and a reading resumed at each
//! of its marks (`LogReader::resume`, as memdiff's second reading) against the first reading
//! from there: the same records, then the same error. Errors are fine; panics, hangs,
//! unbounded memory and a difference between two readings are not.
#![no_main]

use std::path::Path;

use jitarena::Shared;
use jitarena::log::{CountsVisitor, LogReader, MethodRecord};
use jitarena::{MethodCounts, MethodInfo, Schema};
use jitarena_tools::logtools::{dump, DumpFormat};
use jitarena_tools::report::stats;
use jitarena_tools::stats::collect;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = jitarena_fuzz::input_file("log", &jitarena_fuzz::with_checksums(data));
    let paths = [path];
    if let Ok(s) = collect(&paths) {
        let _ = stats::render_text(&s);
        let _ = stats::render_json(&s);
    }
    for format in [DumpFormat::Csv, DumpFormat::Jsonl] {
        let _ = dump(&paths, format, &mut std::io::sink(), Path::new("<sink>"));
    }
    visiting_agrees(&paths[0]);
    resuming_agrees(&paths[0]);
});

/// The lists a visitor is handed.
#[derive(Default)]
struct Collect(MethodCounts);

impl CountsVisitor for Collect {
    fn start(&mut self, _: &MethodRecord) {}
    fn kind(&mut self, slot: u32, bytes: u64, count: u64) {
        self.0.kinds.push((slot, bytes, count));
    }
    fn phase(&mut self, slot: u32, bytes: u64) {
        self.0.phases.push((slot, bytes));
    }
    fn phase_kind(&mut self, phase: u32, kind: u32, bytes: u64) {
        self.0.phase_kind_bytes.push((phase, kind, bytes));
    }
}

fn visiting_agrees(path: &Path) {
    let (Ok(mut a), Ok(mut b)) = (LogReader::open(path), LogReader::open(path)) else {
        return;
    };
    let empty = || MethodRecord {
        schema: Shared::new(Schema::default()),
        info: MethodInfo::default(),
        counts: MethodCounts::default(),
    };
    let (mut decoded, mut visited) = (empty(), empty());
    loop {
        match (a.next_raw(), b.next_raw()) {
            (Ok(true), Ok(true)) => {}
            (x, y) => {
                assert_eq!(x.map_err(|e| e.message), y.map_err(|e| e.message));
                return;
            }
        }
        let mut v = Collect::default();
        let x = a.decode_current(&mut decoded).map_err(|e| e.message);
        let y = b.visit_current(&mut visited, &mut v).map_err(|e| e.message);
        assert_eq!(x, y);
        if x.is_err() {
            return;
        }
        let c = &visited.counts;
        v.0.used_bytes = c.used_bytes;
        v.0.reserved_bytes = c.reserved_bytes;
        v.0.page_count = c.page_count;
        v.0.largest_alloc = c.largest_alloc;
        v.0.limit_hit = c.limit_hit;
        assert_eq!(v.0, decoded.counts);
        assert_eq!(visited.info, decoded.info);
        assert_eq!(visited.schema, decoded.schema);
    }
}

/// What reading one record gives: the record, or the message of the error that ends the file.
type Step = Result<MethodRecord, String>;

/// The records from where `reader` stands, decoded, to the end or the first error.
fn read_on(reader: &mut LogReader, mut mark: impl FnMut(&LogReader)) -> Vec<Step> {
    let mut steps = Vec::new();
    loop {
        mark(reader);
        match reader.next_raw() {
            Ok(true) => {}
            Ok(false) => return steps,
            Err(e) => {
                steps.push(Err(e.message.into_owned()));
                return steps;
            }
        }
        let mut record = MethodRecord {
            schema: Shared::new(Schema::default()),
            info: MethodInfo::default(),
            counts: MethodCounts::default(),
        };
        match reader.decode_current(&mut record) {
            Ok(()) => steps.push(Ok(record)),
            Err(e) => {
                steps.push(Err(e.message.into_owned()));
                return steps;
            }
        }
    }
}

fn resuming_agrees(path: &Path) {
    let Ok(mut first) = LogReader::open(path) else {
        return;
    };
    let mut marks = Vec::new();
    let steps = read_on(&mut first, |r| marks.push(r.mark()));
    let dictionary = first.dictionary();
    // A mark stands before each step (and one after the last record).
    for (k, mark) in marks.iter().enumerate().take(steps.len()) {
        let mut again = LogReader::resume(path, mark, &dictionary).expect("resumes at its mark");
        assert_eq!(read_on(&mut again, |_| {}), steps[k..], "from mark {k}");
    }
}
