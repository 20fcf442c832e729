//! memdiff's first reading of one side of a diff: every record decoded once, on the side's own
//! thread (both sides at once), into what the match and the report need: each method's
//! identity, bytes and tier group, and the side's totals and per-kind and per-phase sums over
//! all its methods. The figures are taken straight from the decoded record through the
//! schema's slot map, which is looked up once per schema, not once per record.

use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::tally::Sums;
use super::{tier_group, Totals};
use crate::progress::Progress;
use crate::union::{SchemaUnion, INVALID};
use jitarena::counters::Schema;
use jitarena::error::Error;
use jitarena::log::{LogReader, MethodCounts, MethodInfo, MethodRecord};

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

/// Marks a key that indexes [`Keys::hashed`] rather than holding a context number.
const HASHED: u64 = 1 << 63;

/// The identities and context numbers of a side's methods, in reading order, in 8 bytes per
/// method: a context number, or (for methods without one) an index into a table of hashed
/// identities.
#[derive(Default)]
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

    /// Method `i`'s context number.
    pub(crate) fn context(&self, i: usize) -> i64 {
        match self.keys[i] {
            k if k & HASHED == 0 => k as i64,
            k => self.hashed[(k & !HASHED) as usize].1,
        }
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
}

/// What the last record's schema and tier resolved to: records of a log share a few of each.
#[derive(Default)]
struct Cache {
    schema: Option<Arc<Schema>>,
    kind_map: Vec<u32>,
    phase_map: Vec<u32>,
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
        let mut record = MethodRecord {
            schema: Arc::new(Schema::default()),
            info: MethodInfo::default(),
            counts: MethodCounts::default(),
        };
        for path in files {
            if stop.load(Ordering::Relaxed) {
                return Ok(None);
            }
            let mut reader = LogReader::open(path)?;
            let mut uncounted = 0;
            while reader.next_into(&mut record)? {
                side.take(&record, ignore, &mut cache);
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
            side.warnings.extend(reader.warnings().iter().cloned());
        }
        Ok(Some(side))
    }

    /// Takes one record.
    fn take(&mut self, r: &MethodRecord, ignore: &[String], cache: &mut Cache) {
        if !cache
            .schema
            .as_ref()
            .is_some_and(|s| Arc::ptr_eq(s, &r.schema))
        {
            self.union.add(&r.schema);
            let (kinds, phases) = self.union.slot_maps(&r.schema).unwrap_or((&[], &[]));
            cache.kind_map = kinds.to_vec();
            cache.phase_map = phases.to_vec();
            cache.schema = Some(Arc::clone(&r.schema));
            while self.ignored.len() < self.union.kind_count() {
                let name = self.union.kind_name(self.ignored.len() as u32);
                self.ignored.push(ignore.iter().any(|k| k == name));
            }
            self.sums.kinds.resize(self.union.kind_count(), 0);
            self.sums.phases.resize(self.union.phase_count(), 0);
        }
        let group = cache.group(&r.info.tier);
        let c = &r.counts;
        let mut totals = Totals {
            used: c.used_bytes,
            reserved: c.reserved_bytes,
            ..Totals::default()
        };
        let mut ok = true;
        let ignoring = !ignore.is_empty();
        for &(slot, bytes, count) in &c.kinds {
            let united = cache
                .kind_map
                .get(slot as usize)
                .copied()
                .unwrap_or(INVALID);
            if ignoring && self.ignored.get(united as usize).copied().unwrap_or(false) {
                continue;
            }
            // A record's own sums fit (the reader checks them); the side's may not.
            totals.bytes = totals.bytes.saturating_add(bytes);
            totals.allocations = totals.allocations.saturating_add(count);
            let s = &mut self.sums;
            ok &= add(
                s.kinds
                    .get_mut(united as usize)
                    .unwrap_or(&mut s.invalid_kind),
                bytes,
            );
        }
        for &(slot, bytes) in &c.phases {
            let united = cache
                .phase_map
                .get(slot as usize)
                .copied()
                .unwrap_or(INVALID);
            let s = &mut self.sums;
            ok &= add(
                s.phases.get_mut(united as usize).unwrap_or(&mut s.no_phase),
                bytes,
            );
        }
        for &(phase, kind, bytes) in &c.phase_kind_bytes {
            let map = |m: &[u32], slot: u32| m.get(slot as usize).copied().unwrap_or(INVALID);
            let kind = map(&cache.kind_map, kind);
            if ignoring && self.ignored.get(kind as usize).copied().unwrap_or(false) {
                continue;
            }
            let phase = map(&cache.phase_map, phase);
            ok &= add(
                self.sums.phase_kinds.entry((phase, kind)).or_default(),
                bytes,
            );
        }
        ok &= self.groups[0].add(&totals);
        self.groups[group as usize].add(&totals);
        self.overflow |= !ok;
        self.keys.push(&r.info);
        self.bytes.push(totals.bytes);
        self.group.push(group);
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
