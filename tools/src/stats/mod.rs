//! `jitarena stats`: the aggregate of one or more stats logs (totals, kinds, phases, tiers,
//! per-method percentiles, the largest methods), gathered on two threads; `report::stats`
//! lays it out as the .NET JIT's memory statistics.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::path::{Path, PathBuf};

use crate::inputs::expand_inputs;
use crate::union::{SchemaUnion, INVALID};
use jitarena::counters::Schema;
use jitarena::error::Error;
use jitarena::log::{
    add_checked, sum_too_large, CountsVisitor, LogReader, MethodCounts, MethodRecord, RecordBatch,
};
use jitarena::Shared;

mod threads;

/// How many of the largest methods to list.
pub const TOP_METHODS: usize = 10;

/// A named pair of totals (a kind, a phase, a tier).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    /// The name.
    pub name: String,
    /// Bytes requested.
    pub bytes: u64,
    /// Allocations (for kinds and tiers) or methods (for tiers: see [`Stats::tiers`]).
    pub count: u64,
    /// Methods (tiers only; 0 elsewhere).
    pub methods: u64,
}

/// Bytes of one kind while one phase was current.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhaseKind {
    /// The phase's name.
    pub phase: String,
    /// The kind's name.
    pub kind: String,
    /// Bytes requested.
    pub bytes: u64,
}

/// How many kinds of each phase the console report lists.
pub(crate) const KINDS_PER_PHASE: usize = 5;

/// One of the largest methods.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct TopMethod {
    /// Bytes requested.
    pub bytes: u64,
    /// Allocations.
    pub allocations: u64,
    /// Context number (-1: unknown).
    pub context: i64,
    /// Tier, or empty.
    pub tier: String,
    /// Name, or empty.
    pub name: String,
}

/// The aggregate of a set of logs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Log files read.
    pub files: usize,
    /// Methods.
    pub methods: u64,
    /// Allocations.
    pub allocations: u64,
    /// Bytes requested.
    pub bytes: u64,
    /// Rounded bytes handed out.
    pub used: u64,
    /// Page bytes obtained.
    pub reserved: u64,
    /// Pages obtained.
    pub pages: u64,
    /// The largest single request.
    pub largest: u64,
    /// Methods that hit their memory limit.
    pub limit_hits: u64,
    /// Compiles the logs note as failed (`jitarena_method.failed`): no record, so in none of
    /// the other figures.
    pub failed_compiles: u64,
    /// Bytes requested per method, sorted.
    pub method_bytes: Vec<u64>,
    /// The largest methods, largest first.
    pub top: Vec<TopMethod>,
    /// Per tier (`count` = allocations, `methods` = methods), by name.
    pub tiers: Vec<Named>,
    /// Per kind, by bytes (largest first), then name.
    pub kinds: Vec<Named>,
    /// Per phase, in phase order of the logs.
    pub phases: Vec<Named>,
    /// Per (phase, kind) pair recorded by arenas made with `kinds_by_phase` on: phases in the
    /// order of [`Stats::phases`], each phase's kinds by bytes (largest first), then name;
    /// empty when no record holds them.
    pub phase_kinds: Vec<PhaseKind>,
    /// Readers' warnings.
    pub warnings: Vec<String>,
}

/// Reads logs and sums them up, on two threads ([`collect_in_batches`]).
pub fn collect(paths: &[PathBuf]) -> Result<Stats, Error> {
    collect_in_batches(paths, threads::BATCH_RECORDS)
}

/// [`collect`] with `batch_records` records at most in each batch that the thread reading the
/// logs passes to the thread adding them up (tests use small ones).
///
/// The reading thread adds one batch in three itself, the other thread the rest; their totals
/// are added together at the end. The figures are the same as one thread's
/// ([`collect_one_thread`]); so is the order of the largest methods, which ranks methods of
/// equal bytes by their place in the logs. On any error, or if the second thread cannot start,
/// the logs are read again on one thread, so that the error is the one of the first record
/// that has one; logs that are not all regular files (a pipe) are read on one thread only.
pub fn collect_in_batches(paths: &[PathBuf], batch_records: usize) -> Result<Stats, Error> {
    let files = expand_inputs(paths)?;
    // A pipe cannot be read again after an error: logs that are not all files are read on
    // one thread from the start.
    let files_only = files
        .iter()
        .all(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file()));
    if !files_only {
        return collect_files(&files);
    }
    match threads::collect(&files, batch_records) {
        Ok(Some(stats)) => Ok(stats),
        _ => collect_files(&files),
    }
}

/// [`collect`] on one thread.
pub fn collect_one_thread(paths: &[PathBuf]) -> Result<Stats, Error> {
    collect_files(&expand_inputs(paths)?)
}

fn collect_files(files: &[PathBuf]) -> Result<Stats, Error> {
    let mut acc = Accumulator::default();
    for path in files {
        acc.read(path)?;
    }
    acc.finish(files.len())
}

#[derive(Default)]
struct Accumulator {
    stats: Stats,
    union: SchemaUnion,
    kinds: Vec<(u64, u64)>,
    invalid: (u64, u64),
    phases: Vec<u64>,
    no_phase: u64,
    /// A bound on each phase's total: the sum of every record's phases added, or the largest
    /// total once they were added one by one ([`Accumulator::phases_may_have_wrapped`]).
    phase_total: u64,
    /// Bytes per (united phase, united kind) slot pair; the buckets as [`INVALID`].
    phase_kinds: HashMap<(u32, u32), u64>,
    /// Per tier name: methods, bytes, allocations.
    tiers: HashMap<String, (u64, u64, u64)>,
    top: BinaryHeap<Reverse<Ranked>>,
    /// The place in the logs of the next record read (from 0).
    next: u64,
}

/// A method of the largest list: ranked by bytes, then by its place in the logs (the first
/// first), so that the list does not depend on the order the records were added in.
#[derive(Debug)]
struct Ranked {
    bytes: u64,
    first: Reverse<u64>,
    method: TopMethod,
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Ranked) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Ranked {}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Ranked) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ranked {
    fn cmp(&self, other: &Ranked) -> std::cmp::Ordering {
        (self.bytes, self.first).cmp(&(other.bytes, other.first))
    }
}

/// What the last record's schema and tier resolved to: the records of a log share a few.
#[derive(Default)]
struct Last {
    schema: Option<Shared<Schema>>,
    kind_map: Vec<u32>,
    phase_map: Vec<u32>,
    /// The first few tiers seen, and their figures so far (added to [`Accumulator::tiers`] at
    /// the end of the file, or when a tier not among them comes).
    tiers: Vec<(Option<String>, (u64, u64, u64))>,
    /// The current record's kinds by phase (phase slot, kind slot, bytes), as decoded.
    record_phase_kinds: Vec<(u32, u32, u64)>,
}

/// Adds a record's kinds and phases to their totals as [`LogReader::visit_current`] decodes
/// them, without a check each: a kind's total is at most the sum of every record's bytes (or
/// allocations) added, so none can have wrapped while [`Stats::bytes`] and
/// [`Stats::allocations`] can take the record's sums ([`Accumulator::may_have_wrapped`]); a
/// phase's likewise ([`Accumulator::phases_may_have_wrapped`]). Keeps its kinds by phase in
/// [`Last`].
struct Adding<'a> {
    acc: &'a mut Accumulator,
    last: &'a mut Last,
    /// The sums of the record's kinds' bytes and allocations.
    sums: (u64, u64),
    /// The sum of the record's phases (it fits: decoding refuses a record whose phases pass
    /// 2^64 - 1).
    phase_sum: u64,
}

impl<'a> Adding<'a> {
    fn new(acc: &'a mut Accumulator, last: &'a mut Last) -> Adding<'a> {
        Adding {
            acc,
            last,
            sums: (0, 0),
            phase_sum: 0,
        }
    }
}

impl CountsVisitor for Adding<'_> {
    fn start(&mut self, r: &MethodRecord) {
        self.acc.switch_schema(r, self.last);
        self.last.record_phase_kinds.clear();
    }

    #[inline(always)]
    fn kind(&mut self, slot: u32, bytes: u64, count: u64) {
        let cell = self.acc.kind_cell(&self.last.kind_map, slot);
        *cell = (cell.0.wrapping_add(bytes), cell.1.wrapping_add(count));
    }

    fn phase(&mut self, slot: u32, bytes: u64) {
        let cell = self.acc.phase_cell(&self.last.phase_map, slot);
        *cell = cell.wrapping_add(bytes);
        self.phase_sum = self.phase_sum.wrapping_add(bytes);
    }

    fn phase_kind(&mut self, phase: u32, kind: u32, bytes: u64) {
        self.last.record_phase_kinds.push((phase, kind, bytes));
    }

    fn sums(&mut self, bytes: u64, allocations: u64) {
        self.sums = (bytes, allocations);
    }
}

/// How many tiers [`Last`] holds: a log names a handful.
const TIERS_HELD: usize = 16;

impl Accumulator {
    fn read(&mut self, path: &Path) -> Result<(), Error> {
        let mut reader = LogReader::open(path)?;
        let mut r = MethodRecord::default();
        let mut last = Last::default();
        let result = (|| {
            while reader.next_raw()? {
                let at = self.next;
                self.next += 1;
                self.add_current(&reader, &mut r, &mut last, path, at)?;
            }
            Ok(())
        })();
        self.flush_tier(&mut last, path)?;
        result?;
        self.stats
            .warnings
            .extend(reader.warnings().iter().cloned());
        self.stats.failed_compiles += reader.failed_compiles().len() as u64;
        Ok(())
    }

    /// Adds the record `reader` moved to, the `at`th of the logs, decoding it into `r`.
    fn add_current(
        &mut self,
        reader: &LogReader,
        r: &mut MethodRecord,
        last: &mut Last,
        path: &Path,
        at: u64,
    ) -> Result<(), Error> {
        let mut adding = Adding::new(self, last);
        reader.visit_current(r, &mut adding)?;
        let (sums, phase_sum) = (adding.sums, adding.phase_sum);
        let kinds_wrapped = self.may_have_wrapped(sums);
        let phases_wrapped = self.phases_may_have_wrapped(phase_sum);
        if kinds_wrapped || phases_wrapped {
            // A total may have passed 2^64 - 1: take this record's kinds or phases back and
            // add them again one by one, so that the error is the first sum to overflow.
            let mut whole = r.clone();
            reader.decode_current(&mut whole)?;
            if kinds_wrapped {
                self.add_kinds_checked(&whole.counts, &last.kind_map, path)?;
            }
            if phases_wrapped {
                self.add_phases_checked(&whole.counts, &last.phase_map, path)?;
            }
        }
        self.phase_total = match phases_wrapped {
            // The totals are exact again; the largest bounds them all, so that only records
            // that could take one past 2^64 - 1 are added one by one again.
            true => self.phases.iter().copied().fold(self.no_phase, u64::max),
            false => self.phase_total + phase_sum,
        };
        self.add(r, sums, last, path, at)
    }

    /// Adds the records of `batch`, the first of them the `first`th of the logs. A kind's
    /// total that overflows is an error that does not say which (the caller reads the logs
    /// again on one thread).
    fn add_batch(&mut self, batch: &RecordBatch, first: u64, last: &mut Last) -> Result<(), Error> {
        let mut r = MethodRecord::default();
        // Messages name no file: on any error, the caller reads the logs again.
        let path = Path::new("");
        for (i, at) in (0..batch.len()).zip(first..) {
            let mut adding = Adding::new(self, last);
            batch.visit(i, &mut r, &mut adding)?;
            let (sums, phase_sum) = (adding.sums, adding.phase_sum);
            if self.may_have_wrapped(sums) || self.phases_may_have_wrapped(phase_sum) {
                return Err(sum_too_large(path, "bytes of a kind or phase"));
            }
            self.phase_total += phase_sum;
            self.add(&r, sums, last, path, at)?;
        }
        Ok(())
    }

    /// Adds the totals of `other`, which read other records of the same logs, to these; the
    /// kinds and phases of `other` are among this union's.
    fn take_in(&mut self, other: Accumulator) -> Result<(), Error> {
        let path = Path::new("");
        let gone = || {
            Error::new(
                jitarena::ErrorCode::Internal,
                "a kind or phase went missing",
            )
        };
        self.kinds.resize(self.union.kind_count(), (0, 0));
        self.phases.resize(self.union.phase_count(), 0);
        let kind_of = |slot: u32| match slot {
            INVALID => Some(INVALID),
            slot => self.union.kind_slot(other.union.kind_name(slot)),
        };
        let phase_of = |slot: u32| match slot {
            INVALID => Some(INVALID),
            slot => self.union.phase_slot(other.union.phase_name(slot)),
        };
        let kind_slots: Vec<u32> = (0..other.kinds.len() as u32)
            .map(kind_of)
            .collect::<Option<_>>()
            .ok_or_else(gone)?;
        let phase_slots: Vec<u32> = (0..other.phases.len() as u32)
            .map(phase_of)
            .collect::<Option<_>>()
            .ok_or_else(gone)?;
        let pairs: Vec<((u32, u32), u64)> = other
            .phase_kinds
            .iter()
            .map(|(&(p, k), &bytes)| Some(((phase_of(p)?, kind_of(k)?), bytes)))
            .collect::<Option<_>>()
            .ok_or_else(gone)?;
        for (&slot, &(bytes, count)) in kind_slots.iter().zip(&other.kinds) {
            let cell = self.kinds.get_mut(slot as usize).ok_or_else(gone)?;
            add_checked(&mut cell.0, bytes, path, "bytes of a kind")?;
            add_checked(&mut cell.1, count, path, "allocations of a kind")?;
        }
        add_checked(
            &mut self.invalid.0,
            other.invalid.0,
            path,
            "bytes of a kind",
        )?;
        add_checked(
            &mut self.invalid.1,
            other.invalid.1,
            path,
            "allocations of a kind",
        )?;
        for (&slot, &bytes) in phase_slots.iter().zip(&other.phases) {
            let cell = self.phases.get_mut(slot as usize).ok_or_else(gone)?;
            add_checked(cell, bytes, path, "bytes of a phase")?;
        }
        add_checked(&mut self.no_phase, other.no_phase, path, "bytes of a phase")?;
        for (key, bytes) in pairs {
            let cell = self.phase_kinds.entry(key).or_default();
            add_checked(cell, bytes, path, "bytes of a kind in a phase")?;
        }
        for (name, (methods, bytes, allocations)) in other.tiers {
            let t = self.tiers.entry(name).or_default();
            t.0 += methods;
            add_checked(&mut t.1, bytes, path, "bytes of a tier")?;
            add_checked(&mut t.2, allocations, path, "allocations of a tier")?;
        }
        let (s, o) = (&mut self.stats, other.stats);
        s.methods += o.methods;
        add_checked(&mut s.bytes, o.bytes, path, "bytes requested")?;
        add_checked(&mut s.allocations, o.allocations, path, "allocations")?;
        add_checked(&mut s.used, o.used, path, "used bytes")?;
        add_checked(&mut s.reserved, o.reserved, path, "reserved bytes")?;
        add_checked(&mut s.pages, o.pages, path, "pages")?;
        s.largest = s.largest.max(o.largest);
        s.limit_hits += o.limit_hits;
        s.failed_compiles += o.failed_compiles;
        s.method_bytes.extend(o.method_bytes);
        s.warnings.extend(o.warnings);
        for Reverse(ranked) in other.top {
            self.rank(ranked);
        }
        Ok(())
    }

    /// Keeps `m` among the largest methods if it ranks there.
    fn rank(&mut self, m: Ranked) {
        let kept = self.top.len() < TOP_METHODS
            || self
                .top
                .peek()
                .is_some_and(|Reverse(smallest)| m > *smallest);
        if kept {
            self.top.push(Reverse(m));
            if self.top.len() > TOP_METHODS {
                self.top.pop();
            }
        }
    }

    /// Takes the new schema of `r` on: its kinds' and phases' slots in the union.
    fn switch_schema(&mut self, r: &MethodRecord, last: &mut Last) {
        if last
            .schema
            .as_ref()
            .is_some_and(|s| Shared::ptr_eq(s, &r.schema))
        {
            return;
        }
        self.union.add(&r.schema);
        let (kinds, phases) = self.union.slot_maps(&r.schema).unwrap_or((&[], &[]));
        last.kind_map = kinds.to_vec();
        last.phase_map = phases.to_vec();
        last.schema = Some(Shared::clone(&r.schema));
        self.kinds.resize(self.union.kind_count(), (0, 0));
        self.phases.resize(self.union.phase_count(), 0);
    }

    /// Adds the figures gathered in `last` for its tiers to their totals.
    fn flush_tier(&mut self, last: &mut Last, path: &Path) -> Result<(), Error> {
        for (tier, (methods, bytes, allocations)) in last.tiers.drain(..) {
            let t = self.tiers.entry(tier.unwrap_or_default()).or_default();
            t.0 += methods;
            add_checked(&mut t.1, bytes, path, "bytes of a tier")?;
            add_checked(&mut t.2, allocations, path, "allocations of a tier")?;
        }
        Ok(())
    }

    /// Adds one record to the totals, but for its kinds and phases (added as they were
    /// decoded; the kinds' sums are `bytes` and `allocations`), its kinds by phase taken from
    /// `last`.
    fn add(
        &mut self,
        r: &MethodRecord,
        (bytes, allocations): (u64, u64),
        last: &mut Last,
        path: &Path,
        at: u64,
    ) -> Result<(), Error> {
        let c = &r.counts;
        for &(phase, kind, bytes) in &last.record_phase_kinds {
            let map = |m: &[u32], slot: u32| m.get(slot as usize).copied().unwrap_or(INVALID);
            let key = (map(&last.phase_map, phase), map(&last.kind_map, kind));
            let cell = self.phase_kinds.entry(key).or_default();
            add_checked(cell, bytes, path, "bytes of a kind in a phase")?;
        }
        let s = &mut self.stats;
        s.methods += 1;
        add_checked(&mut s.bytes, bytes, path, "bytes requested")?;
        add_checked(&mut s.allocations, allocations, path, "allocations")?;
        add_checked(&mut s.used, c.used_bytes, path, "used bytes")?;
        add_checked(&mut s.reserved, c.reserved_bytes, path, "reserved bytes")?;
        add_checked(&mut s.pages, c.page_count, path, "pages")?;
        s.largest = s.largest.max(c.largest_alloc);
        s.limit_hits += u64::from(c.limit_hit);
        s.method_bytes.push(bytes);
        let held = match last.tiers.iter().position(|t| t.0 == r.info.tier) {
            Some(k) => k,
            None => {
                if last.tiers.len() == TIERS_HELD {
                    self.flush_tier(last, path)?;
                }
                last.tiers.push((r.info.tier.clone(), (0, 0, 0)));
                last.tiers.len() - 1
            }
        };
        {
            let t = &mut last.tiers[held].1;
            t.0 += 1;
            add_checked(&mut t.1, bytes, path, "bytes of a tier")?;
            add_checked(&mut t.2, allocations, path, "allocations of a tier")?;
        }
        let smallest = self.top.peek().map(|Reverse(m)| (m.bytes, m.first));
        if self.top.len() < TOP_METHODS || smallest.is_some_and(|k| (bytes, Reverse(at)) > k) {
            self.rank(Ranked {
                bytes,
                first: Reverse(at),
                method: TopMethod {
                    bytes,
                    allocations,
                    context: r.info.context,
                    tier: r.info.tier.clone().unwrap_or_default(),
                    name: r.info.name.clone().unwrap_or_default(),
                },
            });
        }
        Ok(())
    }

    /// After the kinds of `c` were added without a check and a total overflowed: takes them
    /// back, then adds them again checking each, so that the error is the one the first sum
    /// to overflow gives.
    fn add_kinds_checked(
        &mut self,
        c: &MethodCounts,
        kind_map: &[u32],
        path: &Path,
    ) -> Result<(), Error> {
        for &(slot, b, n) in &c.kinds {
            let cell = self.kind_cell(kind_map, slot);
            *cell = (cell.0.wrapping_sub(b), cell.1.wrapping_sub(n));
        }
        for &(slot, b, n) in &c.kinds {
            let cell = self.kind_cell(kind_map, slot);
            add_checked(&mut cell.0, b, path, "bytes of a kind")?;
            add_checked(&mut cell.1, n, path, "allocations of a kind")?;
        }
        Ok(())
    }

    /// After the phases of `c` were added without a check and a total may have overflowed:
    /// takes them back, then adds them again checking each (as [`Self::add_kinds_checked`]).
    fn add_phases_checked(
        &mut self,
        c: &MethodCounts,
        phase_map: &[u32],
        path: &Path,
    ) -> Result<(), Error> {
        for &(slot, bytes) in &c.phases {
            let cell = self.phase_cell(phase_map, slot);
            *cell = cell.wrapping_sub(bytes);
        }
        for &(slot, bytes) in &c.phases {
            add_checked(
                self.phase_cell(phase_map, slot),
                bytes,
                path,
                "bytes of a phase",
            )?;
        }
        Ok(())
    }

    /// Whether adding a record whose phases sum to `sum` may have wrapped a phase's total:
    /// each is at most [`Accumulator::phase_total`].
    fn phases_may_have_wrapped(&self, sum: u64) -> bool {
        self.phase_total.checked_add(sum).is_none()
    }

    /// The total of the phase at `slot` of a record's schema (`phase_map` maps it to the
    /// union).
    #[inline(always)]
    fn phase_cell(&mut self, phase_map: &[u32], slot: u32) -> &mut u64 {
        let united = phase_map.get(slot as usize).copied().unwrap_or(INVALID);
        self.phases
            .get_mut(united as usize)
            .unwrap_or(&mut self.no_phase)
    }

    /// Whether adding a record whose kinds sum to `sums` (bytes, allocations) may have wrapped
    /// a kind's total: each total is at most the sum of every record added, which
    /// [`Stats::bytes`] and [`Stats::allocations`] hold until one of them passes 2^64 - 1.
    fn may_have_wrapped(&self, (bytes, allocations): (u64, u64)) -> bool {
        self.stats.bytes.checked_add(bytes).is_none()
            || self.stats.allocations.checked_add(allocations).is_none()
    }

    /// The totals of the kind at `slot` of a record's schema (`kind_map` maps it to the union).
    #[inline(always)]
    fn kind_cell(&mut self, kind_map: &[u32], slot: u32) -> &mut (u64, u64) {
        let united = kind_map.get(slot as usize).copied().unwrap_or(INVALID);
        self.kinds
            .get_mut(united as usize)
            .unwrap_or(&mut self.invalid)
    }

    fn finish(self, files: usize) -> Result<Stats, Error> {
        let mut s = self.stats;
        s.files = files;
        crate::sort::sort_u64(&mut s.method_bytes);
        let schema = self.union.schema()?;
        let mut kinds: Vec<Named> = schema
            .kinds
            .iter()
            .zip(&self.kinds)
            .map(|(name, &(bytes, count))| Named {
                name: name.clone(),
                bytes,
                count,
                methods: 0,
            })
            .collect();
        if self.invalid.1 > 0 {
            let name = jitarena::counters::INVALID_KIND_NAME.to_string();
            kinds.push(Named {
                name,
                bytes: self.invalid.0,
                count: self.invalid.1,
                methods: 0,
            });
        }
        kinds.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.name.cmp(&b.name)));
        s.kinds = kinds;
        let mut phases: Vec<Named> = schema
            .phases
            .iter()
            .zip(&self.phases)
            .map(|(name, &bytes)| Named {
                name: name.clone(),
                bytes,
                count: 0,
                methods: 0,
            })
            .collect();
        if self.no_phase > 0 {
            phases.push(Named {
                name: jitarena::counters::NO_PHASE_NAME.into(),
                bytes: self.no_phase,
                count: 0,
                methods: 0,
            });
        }
        s.phases = phases;
        let name = |names: &[String], slot: u32, bucket: &str| {
            names
                .get(slot as usize)
                .map_or(bucket.to_string(), String::clone)
        };
        let mut pairs: Vec<(u32, PhaseKind)> = self
            .phase_kinds
            .into_iter()
            .map(|((phase, kind), bytes)| {
                let pair = PhaseKind {
                    phase: name(&schema.phases, phase, jitarena::counters::NO_PHASE_NAME),
                    kind: name(&schema.kinds, kind, jitarena::counters::INVALID_KIND_NAME),
                    bytes,
                };
                (phase, pair)
            })
            .collect();
        // Phases in phase order (the no-phase bucket, INVALID, last), then bytes, then kind.
        pairs.sort_by(|(pa, a), (pb, b)| {
            pa.cmp(pb)
                .then(b.bytes.cmp(&a.bytes))
                .then_with(|| a.kind.cmp(&b.kind))
        });
        s.phase_kinds = pairs.into_iter().map(|(_, p)| p).collect();
        let mut tiers: Vec<Named> = self
            .tiers
            .into_iter()
            .map(|(name, (methods, bytes, count))| Named {
                name,
                bytes,
                count,
                methods,
            })
            .collect();
        tiers.sort_by(|a, b| a.name.cmp(&b.name));
        s.tiers = tiers;
        s.top = self
            .top
            .into_sorted_vec()
            .into_iter()
            .map(|Reverse(m)| m.method)
            .collect();
        Ok(s)
    }
}

/// The value at quantile `q` (0..=1) of sorted values (nearest rank), 0 if empty.
pub fn quantile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}
