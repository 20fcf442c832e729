//! Reading a record's counters without building its lists: [`LogReader::visit_current`]
//! hands each present kind and phase to a [`CountsVisitor`] as it is decoded, checking all
//! that [`LogReader::decode_current`] checks. For readers that only add the counters up
//! (`jitarena memdiff`), this saves building a [`MethodCounts`] per record.

use std::cell::Cell;

use super::reader::LogReader;
use crate::counters::{MethodCounts, MethodRecord};
use crate::error::Error;
use crate::format::record::{self, CountsSink};
use crate::format::Malformed;

/// Receives the counters of a record as [`LogReader::visit_current`] decodes them.
pub trait CountsVisitor {
    /// Called first, once the record's schema and identity (`record.schema`, `record.info`)
    /// are set; `record.counts` is not this record's yet.
    fn start(&mut self, record: &MethodRecord);
    /// A present kind: its slot in the record's schema (the kind count: the invalid-kind
    /// bucket), bytes and allocations. Slots increase.
    fn kind(&mut self, slot: u32, bytes: u64, count: u64);
    /// A present phase: its slot (the phase count: "no phase") and bytes, after every kind.
    /// Slots increase.
    fn phase(&mut self, slot: u32, bytes: u64);
    /// An entry of kinds by phase (phase slot, kind slot, bytes), after every phase, sorted by
    /// phase then kind.
    fn phase_kind(&mut self, phase: u32, kind: u32, bytes: u64);
    /// Called last: the sums of the record's kinds' bytes and allocations. Each is at most
    /// 2^64 - 1 (a record whose kinds add up to more is refused as corrupt).
    fn sums(&mut self, bytes: u64, allocations: u64) {
        let _ = (bytes, allocations);
    }
}

/// A visitor as the decoder's sink.
struct Visiting<'a, V>(&'a mut V);

impl<V: CountsVisitor> CountsSink for Visiting<'_, V> {
    #[inline(always)]
    fn kind(&mut self, slot: u32, bytes: u64, count: u64) {
        self.0.kind(slot, bytes, count);
    }
    #[inline(always)]
    fn phase(&mut self, slot: u32, bytes: u64) {
        self.0.phase(slot, bytes);
    }
}

/// Hands the lists of `c` to `v`.
fn replay<V: CountsVisitor>(c: &MethodCounts, v: &mut V) {
    for &(slot, bytes, count) in &c.kinds {
        v.kind(slot, bytes, count);
    }
    for &(slot, bytes) in &c.phases {
        v.phase(slot, bytes);
    }
    for &(phase, kind, bytes) in &c.phase_kind_bytes {
        v.phase_kind(phase, kind, bytes);
    }
    // Decoding refused a record whose sums pass 2^64 - 1: these cannot wrap.
    let (bytes, allocations) = c.kinds.iter().fold((0u64, 0u64), |(b, n), k| {
        (b.wrapping_add(k.1), n.wrapping_add(k.2))
    });
    v.sums(bytes, allocations);
}

impl LogReader {
    /// Decodes the record [`LogReader::next_raw`] moved to as
    /// [`LogReader::decode_current`] does, with the same checks and errors, but hands its
    /// kinds, phases and kinds by phase to `v` instead of storing them: afterwards
    /// `record.schema`, `record.info` and the fields of `record.counts` other than its lists
    /// are the record's, and its lists are empty. On an error, `v` may have been handed part
    /// of the record.
    pub fn visit_current<V: CountsVisitor>(
        &self,
        record: &mut MethodRecord,
        v: &mut V,
    ) -> Result<(), Error> {
        self.frames.check_current()?;
        let frame = self.frames.frame();
        self.visit(&frame.payload, record, v)
            .map_err(|e| self.frames.corrupt(frame.offset, e.0))
    }

    fn visit<V: CountsVisitor>(
        &self,
        payload: &[u8],
        record: &mut MethodRecord,
        v: &mut V,
    ) -> Result<(), Malformed> {
        let h = &self.head;
        if self.frames.version() == 1 {
            // Rare: decoded whole, then handed over.
            self.decode(payload, record)?;
            hand_over(record, v);
            return Ok(());
        }
        self.ids_into(record)?;
        visit_v2(payload, h, record, v, &self.scratch)
    }
}

/// Hands the lists of `record.counts`, decoded whole, to `v`, leaving them empty.
fn hand_over<V: CountsVisitor>(record: &mut MethodRecord, v: &mut V) {
    let mut c = std::mem::take(&mut record.counts);
    v.start(record);
    replay(&c, v);
    c.kinds.clear();
    c.phases.clear();
    c.phase_kind_bytes.clear();
    record.counts = c;
}

/// Hands the counters of a version-2 record (in `payload` from `head.body`) to `v`, as
/// [`LogReader::visit_current`] does; `record.schema` and `record.info` are the record's.
/// `scratch` is reused for the checks of kinds by phase.
pub(super) fn visit_v2<V: CountsVisitor>(
    payload: &[u8],
    head: &record::Head,
    record: &mut MethodRecord,
    v: &mut V,
    scratch: &Cell<Vec<u64>>,
) -> Result<(), Malformed> {
    let (kinds, phases) = (record.schema.kinds.len(), record.schema.phases.len());
    if record::has_by_phase(head) {
        // Rare: decoded whole, then handed over.
        let mut buffer = scratch.take();
        let result = record::decode_counts(
            payload,
            head,
            kinds,
            phases,
            &mut record.counts,
            &mut buffer,
        );
        scratch.set(buffer);
        result?;
        hand_over(record, v);
        return Ok(());
    }
    v.start(record);
    let scalars = record::decode_into(payload, head, kinds, phases, &mut Visiting(v))?;
    v.sums(scalars.kind_sums.0, scalars.kind_sums.1);
    let c = &mut record.counts;
    scalars.set(c);
    c.kinds.clear();
    c.phases.clear();
    c.phase_kind_bytes.clear();
    Ok(())
}
