//! Uniting the kind and phase lists of many logs by name, so that shards, merged logs and the
//! two sides of a diff can be added up and compared kind by kind.

use std::collections::HashMap;
use std::sync::Arc;

use crate::counters::Schema;
use crate::error::Error;
use crate::log::MethodCounts;

/// The slot of the invalid-kind (and no-phase) bucket in remapped counts.
pub const INVALID: u32 = u32::MAX;

/// The union of several schemas: every kind and phase name once, in the order first seen; each
/// member schema's invalid-kind and no-phase buckets map to the union's.
#[derive(Default)]
pub struct SchemaUnion {
    kinds: Vec<String>,
    phases: Vec<String>,
    kind_ids: HashMap<String, u32>,
    phase_ids: HashMap<String, u32>,
    /// Member schemas and their slot maps (named slots only; the buckets are mapped at use).
    members: Vec<(Arc<Schema>, Vec<u32>, Vec<u32>)>,
    /// Every schema `Arc` seen, with its member: readers of different files hold equal
    /// schemas in different `Arc`s, and comparing pointers is cheaper than comparing names.
    seen: Vec<(Arc<Schema>, usize)>,
}

impl SchemaUnion {
    /// Adds a schema's names.
    pub fn add(&mut self, schema: &Arc<Schema>) {
        if self.seen.iter().any(|(s, _)| Arc::ptr_eq(s, schema)) {
            return;
        }
        if let Some(i) = self.members.iter().position(|(s, _, _)| **s == **schema) {
            self.seen.push((Arc::clone(schema), i));
            return;
        }
        self.seen.push((Arc::clone(schema), self.members.len()));
        let kinds = schema
            .kinds
            .iter()
            .map(|k| intern(&mut self.kinds, &mut self.kind_ids, k))
            .collect();
        let phases = schema
            .phases
            .iter()
            .map(|p| intern(&mut self.phases, &mut self.phase_ids, p))
            .collect();
        self.members.push((Arc::clone(schema), kinds, phases));
    }

    fn member(&self, schema: &Arc<Schema>) -> Option<usize> {
        let seen = self
            .seen
            .iter()
            .find(|(s, _)| Arc::ptr_eq(s, schema))
            .map(|(_, i)| *i);
        seen.or_else(|| self.members.iter().position(|(s, _, _)| **s == **schema))
    }

    /// The united schema.
    pub fn schema(&self) -> Result<Schema, Error> {
        Schema::new(self.kinds.clone(), self.phases.clone())
    }

    /// Number of united kinds (the invalid bucket is this index).
    pub fn kind_count(&self) -> usize {
        self.kinds.len()
    }

    /// Number of united phases (the no-phase bucket is this index).
    pub fn phase_count(&self) -> usize {
        self.phases.len()
    }

    /// The name of united kind slot `slot` ([`INVALID`] and out-of-range: the invalid bucket).
    pub fn kind_name(&self, slot: u32) -> &str {
        self.kinds
            .get(slot as usize)
            .map_or(crate::counters::INVALID_KIND_NAME, String::as_str)
    }

    /// The name of united phase slot `slot` ([`INVALID`]: the no-phase bucket).
    pub fn phase_name(&self, slot: u32) -> &str {
        self.phases
            .get(slot as usize)
            .map_or(crate::counters::NO_PHASE_NAME, String::as_str)
    }

    /// `counts` (laid out against `schema`, which must have been added) re-laid against the
    /// union, into `out`; slots stay in increasing order. The invalid-kind and no-phase buckets
    /// become [`INVALID`], which stays valid as the union grows; [`SchemaUnion::seal`] turns
    /// them into the final union schema's bucket slots.
    pub fn remap(&self, schema: &Arc<Schema>, counts: &MethodCounts, out: &mut MethodCounts) {
        let Some(i) = self.member(schema) else {
            *out = counts.clone();
            return;
        };
        let (_, kind_map, phase_map) = &self.members[i];
        let (invalid, none) = (INVALID, INVALID);
        out.kinds.clear();
        out.kinds.extend(counts.kinds.iter().map(|&(slot, b, c)| {
            (
                kind_map.get(slot as usize).copied().unwrap_or(invalid),
                b,
                c,
            )
        }));
        if !out.kinds.is_sorted_by_key(|k| k.0) {
            out.kinds.sort_unstable_by_key(|k| k.0);
        }
        out.phases.clear();
        out.phases.extend(
            counts
                .phases
                .iter()
                .map(|&(slot, b)| (phase_map.get(slot as usize).copied().unwrap_or(none), b)),
        );
        if !out.phases.is_sorted_by_key(|p| p.0) {
            out.phases.sort_unstable_by_key(|p| p.0);
        }
        out.used_bytes = counts.used_bytes;
        out.reserved_bytes = counts.reserved_bytes;
        out.page_count = counts.page_count;
        out.largest_alloc = counts.largest_alloc;
        out.limit_hit = counts.limit_hit;
    }
}

impl SchemaUnion {
    /// Replaces the [`INVALID`] buckets of remapped counts with the slots of the finished
    /// union's schema (its kind and phase counts), for writing against that schema.
    pub fn seal(&self, counts: &mut MethodCounts) {
        for k in counts.kinds.iter_mut().filter(|k| k.0 == INVALID) {
            k.0 = self.kinds.len() as u32;
        }
        for p in counts.phases.iter_mut().filter(|p| p.0 == INVALID) {
            p.0 = self.phases.len() as u32;
        }
    }
}

fn intern(names: &mut Vec<String>, ids: &mut HashMap<String, u32>, name: &str) -> u32 {
    *ids.entry(name.to_string()).or_insert_with(|| {
        names.push(name.to_string());
        names.len() as u32 - 1
    })
}
