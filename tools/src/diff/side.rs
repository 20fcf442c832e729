//! memdiff's first reading of one side of a diff: every record decoded once, on the side's own
//! thread (both sides at once), into what the match and the report need: each method's
//! identity, bytes and tier group, and the side's totals and per-kind and per-phase sums over
//! all its methods. The figures are taken from the reader as it decodes each record (a
//! [`CountsVisitor`]: no list is built per record) through the schema's slot map, which is
//! looked up once per schema, not once per record.

use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use super::tally::Sums;
use super::{tier_group, Totals};
use crate::progress::Progress;
use crate::union::{SchemaUnion, INVALID};
use jitarena::counters::Schema;
use jitarena::error::Error;
use jitarena::log::{CountsVisitor, LogReader, Mark, MethodInfo, MethodRecord, ReaderDictionary};
use jitarena::Shared;

/// A method's identity: its context number when it has one, else a 128-bit hash of its name
/// and tier (bit 127 set, so that the two cannot meet; a collision is out of reach).
pub(crate) fn identity(info: &MethodInfo) -> u128 {
    if info.context >= 0 {
        return info.context as u128;
    }
    let mut a = std::collections::hash_map::DefaultHasher::new();
    let mut b = std::collections::hash_map::DefaultHasher::new();
    (0u8, &info.name, &info.tier).hash(&mut a);
    (1u8, &info.name, &info.tier).hash(&mut b);
    (1u128 << 127) | (u128::from(a.finish()) << 64) | u128::from(b.finish())
}

/// A method name's 32-bit hash, never 0 (0 stands for no name): eight bytes at a time, so that
/// the first reading pays a few instructions per name. Two names that differ hash alike with a
/// chance of 2^-32: a count of renamed methods may miss one in four billion.
pub(crate) fn name_hash(name: Option<&str>) -> u32 {
    let Some(name) = name else {
        return 0;
    };
    let mut h: u64 = name.len() as u64;
    let mut chunks = name.as_bytes().chunks_exact(8);
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        h = (h.rotate_left(23) ^ word).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    let mut last = [0u8; 8];
    last[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    h = (h.rotate_left(23) ^ u64::from_le_bytes(last)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    ((h >> 32) as u32 ^ h as u32).max(1)
}

/// Marks a key that indexes [`Keys::hashed`] rather than holding a context number.
const HASHED: u64 = 1 << 63;

/// The identities and context numbers of a side's methods, in reading order, in 8 bytes per
/// method: a context number, or (for methods without one) an index into a table of hashed
/// identities.
#[derive(Default, PartialEq, Eq)]
pub(crate) struct Keys {
    keys: Vec<u64>,
    hashed: Vec<(u128, i64)>,
}

impl Keys {
    fn push(&mut self, info: &MethodInfo) {
        if info.context >= 0 {
            self.keys.push(info.context as u64);
        } else {
            self.keys.push(HASHED | self.hashed.len() as u64);
            self.hashed.push((identity(info), info.context));
        }
    }

    /// Methods.
    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }

    /// Method `i`'s identity (see [`identity`]).
    pub(crate) fn id(&self, i: usize) -> u128 {
        match self.keys[i] {
            k if k & HASHED == 0 => u128::from(k),
            k => self.hashed[(k & !HASHED) as usize].0,
        }
    }

    /// Every method's context number, in the memory of the keys (collected in place).
    pub(crate) fn into_contexts(self) -> Vec<i64> {
        let Keys { keys, hashed } = self;
        keys.into_iter()
            .map(|k| match k & HASHED {
                0 => k as i64,
                _ => hashed.get((k & !HASHED) as usize).map_or(-1, |h| h.1),
            })
            .collect()
    }

    /// Each method that has a context number: (its index, the number).
    pub(crate) fn contexts(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.keys
            .iter()
            .enumerate()
            .filter(|(_, &k)| k & HASHED == 0)
            .map(|(i, &k)| (i, k))
    }

    /// Method `i`'s context number, if it has one.
    pub(crate) fn context(&self, i: usize) -> Option<u64> {
        self.keys.get(i).copied().filter(|k| k & HASHED == 0)
    }

    /// The largest context number of the methods that have one.
    pub(crate) fn max_context_seen(&self) -> Option<u64> {
        self.contexts().map(|(_, c)| c).max()
    }

    /// The largest context number, if every method has one.
    pub(crate) fn max_context(&self) -> Option<u64> {
        match self.hashed.is_empty() {
            true => Some(self.keys.iter().copied().max().unwrap_or(0)),
            false => None,
        }
    }
}

/// What the first reading of one side gathers.
#[derive(Default)]
pub(crate) struct Side {
    /// The side's kind and phase names, united.
    pub union: SchemaUnion,
    /// Per united kind slot: whether it is left out.
    pub ignored: Vec<bool>,
    /// Per method: identity.
    pub keys: Keys,
    /// Per method: bytes requested, without ignored kinds.
    pub bytes: Vec<u64>,
    /// Per method: tier group.
    pub group: Vec<u8>,
    /// Per method: whether its arena refused a request on its memory limit.
    pub limit_hit: Vec<bool>,
    /// Per method: a 32-bit hash of its name ([`name_hash`]; 0: no name), to tell matched
    /// methods whose names differ.
    pub names: Vec<u32>,
    /// Per group (0: Overall): totals of all methods.
    pub groups: [Totals; 4],
    /// Per-kind and per-phase sums of all methods, by this side's united slots.
    pub sums: Sums,
    /// Whether a sum went past 2^64.
    pub overflow: bool,
    /// Readers' warnings.
    pub warnings: Vec<String>,
    /// Files whose last record was cut short.
    pub cut: Vec<String>,
    /// Where to read each file again from.
    pub files: Vec<FileMarks>,
    /// Each file's build ids (as it names them), by file.
    pub builds: Vec<(String, Vec<String>)>,
    /// The contexts (0 or more) whose compile the side's logs say failed
    /// (`jitarena_method.failed`), in file order, with who they were.
    pub failed: Vec<MethodInfo>,
    /// While reading: the per-kind sums, the invalid-kind bucket first (moved to `sums` at
    /// the end).
    kind_cells: Vec<u64>,
    /// While reading: the per-phase sums, "no phase" first.
    phase_cells: Vec<u64>,
}

/// Records between two marks of [`FileMarks`].
pub(crate) const MARK_EVERY: usize = 1024;

/// The longest name a mark of [`FileMarks`] holds: a name can be long in every record while
/// each takes a few bytes of the file (shared with the previous record's), and a mark copies it.
pub(crate) const MARK_NAME_MAX: usize = 4096;

/// Where a second reading of one of a side's files can start: a mark before every
/// [`MARK_EVERY`]th record, so that reaching any record passes over fewer than that many; but
/// a mark that would hold a name longer than [`MARK_NAME_MAX`] waits for the next record whose
/// name is short enough (memory stays a few bytes per record, not a name per mark).
pub(crate) struct FileMarks {
    /// The file.
    pub path: PathBuf,
    /// The side's index of the file's first record.
    pub first: usize,
    /// The file's records.
    pub count: usize,
    /// The side's index of the record each mark stands before, and the mark, in order; the
    /// first stands before the file's first record.
    pub marks: Vec<(usize, Mark)>,
    /// The file's schemas and tiers.
    pub dictionary: ReaderDictionary,
}

/// A kind's cell when it is left out.
const SKIP: u32 = u32::MAX;

/// The cell (in [`Side::kind_cells`] or [`Side::phase_cells`]) of united slot `united`.
fn cell(united: u32) -> u32 {
    if united == INVALID {
        0
    } else {
        united + 1
    }
}

/// What the last record's schema and tier resolved to: records of a log share a few of each.
#[derive(Default)]
struct Cache {
    schema: Option<Shared<Schema>>,
    kind_map: Vec<u32>,
    phase_map: Vec<u32>,
    /// Per schema slot: the kind's cell, or [`SKIP`].
    kind_cell: Vec<u32>,
    /// Per schema slot: the phase's cell.
    phase_cell: Vec<u32>,
    /// Tiers seen and their groups (the first few: a log names a handful).
    tiers: Vec<(Option<String>, u8)>,
}

impl Cache {
    /// The tier group of `tier`.
    fn group(&mut self, tier: &Option<String>) -> u8 {
        if let Some((_, g)) = self.tiers.iter().find(|t| t.0 == *tier) {
            return *g;
        }
        let g = tier_group(tier.as_deref());
        if self.tiers.len() < 16 {
            self.tiers.push((tier.clone(), g));
        }
        g
    }
}

/// Adds `v` to `cell`; false (and the largest value) when the sum passes 2^64.
fn add(cell: &mut u64, v: u64) -> bool {
    match cell.checked_add(v) {
        Some(sum) => {
            *cell = sum;
            true
        }
        None => {
            *cell = u64::MAX;
            false
        }
    }
}

impl Side {
    /// Reads every record of `files`, in order, leaving out the kinds named in `ignore`.
    /// `None` when `stop` was set (the other side failed) before the last record: checked
    /// before each file and every 4096 records.
    pub(crate) fn read(
        files: &[PathBuf],
        ignore: &[String],
        progress: &Progress,
        stop: &AtomicBool,
    ) -> Result<Option<Side>, Error> {
        let mut side = Side::default();
        let mut cache = Cache::default();
        let mut record = MethodRecord::default();
        for path in files {
            if stop.load(Ordering::Relaxed) {
                return Ok(None);
            }
            let mut reader = LogReader::open(path)?;
            let mut uncounted = 0;
            let first = side.bytes.len();
            let mut marks: Vec<(usize, Mark)> = Vec::new();
            loop {
                let index = side.bytes.len();
                // The first mark, before the first record, holds no name.
                let due = marks.last().is_none_or(|m| index - m.0 >= MARK_EVERY);
                if due && reader.mark_bytes() <= MARK_NAME_MAX {
                    marks.push((index, reader.mark()));
                }
                if !reader.next_raw()? {
                    break;
                }
                side.take(&reader, &mut record, ignore, &mut cache)?;
                uncounted += 1;
                if uncounted == 4096 {
                    progress.add(uncounted);
                    uncounted = 0;
                    if stop.load(Ordering::Relaxed) {
                        return Ok(None);
                    }
                }
            }
            progress.add(uncounted);
            if !reader.warnings().is_empty() {
                side.cut.push(path.display().to_string());
            }
            side.builds
                .push((path.display().to_string(), reader.builds().to_vec()));
            side.failed.extend(
                reader
                    .failed_compiles()
                    .iter()
                    .filter(|f| f.context >= 0)
                    .map(|f| MethodInfo {
                        name: f.name.clone(),
                        context: f.context,
                        tier: f.tier.clone(),
                    }),
            );
            side.files.push(FileMarks {
                path: path.clone(),
                first,
                count: side.bytes.len() - first,
                marks,
                dictionary: reader.dictionary(),
            });
            side.warnings.extend(reader.warnings().iter().cloned());
        }
        let (kinds, phases) = (&side.kind_cells, &side.phase_cells);
        side.sums.invalid_kind = kinds.first().copied().unwrap_or(0);
        side.sums.kinds = kinds.get(1..).unwrap_or(&[]).to_vec();
        side.sums.no_phase = phases.first().copied().unwrap_or(0);
        side.sums.phases = phases.get(1..).unwrap_or(&[]).to_vec();
        Ok(Some(side))
    }

    /// Takes one record, which `reader` moved to (undecoded).
    fn take(
        &mut self,
        reader: &LogReader,
        record: &mut MethodRecord,
        ignore: &[String],
        cache: &mut Cache,
    ) -> Result<(), Error> {
        let mut take = Take {
            side: self,
            cache,
            ignore,
            totals: Totals::default(),
            ok: true,
            group: 0,
        };
        reader.visit_current(record, &mut take)?;
        let (mut totals, ok, group) = (take.totals, take.ok, take.group);
        let c = &record.counts;
        totals.used = c.used_bytes;
        totals.reserved = c.reserved_bytes;
        let ok = ok & self.groups[0].add(&totals);
        self.groups[group as usize].add(&totals);
        self.overflow |= !ok;
        self.keys.push(&record.info);
        self.bytes.push(totals.bytes);
        self.group.push(group);
        self.limit_hit.push(c.limit_hit);
        self.names.push(name_hash(record.info.name.as_deref()));
        Ok(())
    }
}

/// One record being taken into a side: its counters arrive from the reader one by one.
struct Take<'a> {
    side: &'a mut Side,
    cache: &'a mut Cache,
    ignore: &'a [String],
    /// The record's totals so far (bytes and allocations of the kinds not left out).
    totals: Totals,
    /// False once a side's sum passed 2^64.
    ok: bool,
    /// The record's tier group.
    group: u8,
}

impl CountsVisitor for Take<'_> {
    fn start(&mut self, r: &MethodRecord) {
        let (side, cache) = (&mut *self.side, &mut *self.cache);
        if !cache
            .schema
            .as_ref()
            .is_some_and(|s| Shared::ptr_eq(s, &r.schema))
        {
            side.union.add(&r.schema);
            while side.ignored.len() < side.union.kind_count() {
                let name = side.union.kind_name(side.ignored.len() as u32);
                // Without case or `CMK_`, as the option is checked and the kind table filtered.
                side.ignored
                    .push(self.ignore.iter().any(|k| super::same_kind(k, name)));
            }
            let (kinds, phases) = side.union.slot_maps(&r.schema).unwrap_or((&[], &[]));
            cache.kind_map = kinds.to_vec();
            cache.phase_map = phases.to_vec();
            cache.schema = Some(Shared::clone(&r.schema));
            let ignored = &side.ignored;
            cache.kind_cell = kinds
                .iter()
                .map(|&k| match ignored.get(k as usize) {
                    Some(true) => SKIP,
                    _ => cell(k),
                })
                .collect();
            cache.phase_cell = phases.iter().map(|&p| cell(p)).collect();
            side.kind_cells.resize(side.union.kind_count() + 1, 0);
            side.phase_cells.resize(side.union.phase_count() + 1, 0);
        }
        self.group = cache.group(&r.info.tier);
    }

    #[inline(always)]
    fn kind(&mut self, slot: u32, bytes: u64, count: u64) {
        let cell = self
            .cache
            .kind_cell
            .get(slot as usize)
            .copied()
            .unwrap_or(0);
        if cell == SKIP {
            return;
        }
        // A record's own sums fit (the reader checks them): these cannot wrap.
        let t = &mut self.totals;
        t.bytes = t.bytes.wrapping_add(bytes);
        t.allocations = t.allocations.wrapping_add(count);
        // Every byte added to a kind's cell is added to the Overall group's bytes too, whose
        // sum is checked once per record (`Side::take`): while that sum fits, no cell can
        // pass 2^64, and once it does not, the side is refused whatever its cells hold.
        if let Some(sum) = self.side.kind_cells.get_mut(cell as usize) {
            *sum = sum.wrapping_add(bytes);
        }
    }

    #[inline(always)]
    fn phase(&mut self, slot: u32, bytes: u64) {
        let cell = self
            .cache
            .phase_cell
            .get(slot as usize)
            .copied()
            .unwrap_or(0);
        if let Some(sum) = self.side.phase_cells.get_mut(cell as usize) {
            self.ok &= add(sum, bytes);
        }
    }

    fn phase_kind(&mut self, phase: u32, kind: u32, bytes: u64) {
        let map = |m: &[u32], slot: u32| m.get(slot as usize).copied().unwrap_or(INVALID);
        let kind = map(&self.cache.kind_map, kind);
        let side = &mut *self.side;
        if !self.ignore.is_empty() && side.ignored.get(kind as usize).copied().unwrap_or(false) {
            return;
        }
        let phase = map(&self.cache.phase_map, phase);
        self.ok &= add(
            side.sums.phase_kinds.entry((phase, kind)).or_default(),
            bytes,
        );
    }
}

/// `sums` (by the slots of `from`) laid out against `to`, which holds every name of `from`.
pub(crate) fn relay(sums: &Sums, from: &SchemaUnion, to: &SchemaUnion) -> Sums {
    let mut out = Sums {
        kinds: vec![0; to.kind_count()],
        invalid_kind: sums.invalid_kind,
        phases: vec![0; to.phase_count()],
        no_phase: sums.no_phase,
        phase_kinds: Default::default(),
    };
    // Names of `from` are all in `to`; the buckets stay buckets.
    let relaid = |slot: u32, found: Option<u32>| {
        if slot == INVALID {
            INVALID
        } else {
            found.unwrap_or(INVALID)
        }
    };
    for (&(phase, kind), &bytes) in &sums.phase_kinds {
        let key = (
            relaid(phase, to.phase_slot(from.phase_name(phase))),
            relaid(kind, to.kind_slot(from.kind_name(kind))),
        );
        let cell = out.phase_kinds.entry(key).or_default();
        *cell = cell.saturating_add(bytes);
    }
    for (s, &bytes) in sums.kinds.iter().enumerate() {
        match to.kind_slot(from.kind_name(s as u32)) {
            Some(t) => out.kinds[t as usize] = bytes,
            None => out.invalid_kind = out.invalid_kind.saturating_add(bytes),
        }
    }
    for (s, &bytes) in sums.phases.iter().enumerate() {
        match to.phase_slot(from.phase_name(s as u32)) {
            Some(t) => out.phases[t as usize] = bytes,
            None => out.no_phase = out.no_phase.saturating_add(bytes),
        }
    }
    out
}
