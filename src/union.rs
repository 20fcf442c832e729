//! Uniting the kind and phase lists of many logs by name, so that shards, merged logs and the
//! two sides of a diff can be added up and compared kind by kind.

use std::collections::HashMap;
use std::sync::Arc;

use crate::counters::Schema;
use crate::error::Error;
use crate::log::MethodCounts;

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
}

impl SchemaUnion {
    /// Adds a schema's names.
    pub fn add(&mut self, schema: &Arc<Schema>) {
        if self.member(schema).is_some() {
            return;
        }
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
        self.members
            .iter()
            .position(|(s, _, _)| Arc::ptr_eq(s, schema) || **s == **schema)
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

    /// `counts` (laid out against `schema`, which must have been added) re-laid against the
    /// union, into `out`; slots stay in increasing order.
    pub fn remap(&self, schema: &Arc<Schema>, counts: &MethodCounts, out: &mut MethodCounts) {
        let Some(i) = self.member(schema) else {
            *out = counts.clone();
            return;
        };
        let (_, kind_map, phase_map) = &self.members[i];
        let invalid = self.kinds.len() as u32;
        let none = self.phases.len() as u32;
        out.kinds.clear();
        out.kinds.extend(counts.kinds.iter().map(|&(slot, b, c)| {
            (
                kind_map.get(slot as usize).copied().unwrap_or(invalid),
                b,
                c,
            )
        }));
        out.kinds.sort_unstable_by_key(|k| k.0);
        out.phases.clear();
        out.phases.extend(
            counts
                .phases
                .iter()
                .map(|&(slot, b)| (phase_map.get(slot as usize).copied().unwrap_or(none), b)),
        );
        out.phases.sort_unstable_by_key(|p| p.0);
        out.used_bytes = counts.used_bytes;
        out.reserved_bytes = counts.reserved_bytes;
        out.page_count = counts.page_count;
        out.largest_alloc = counts.largest_alloc;
        out.limit_hit = counts.limit_hit;
    }
}

fn intern(names: &mut Vec<String>, ids: &mut HashMap<String, u32>, name: &str) -> u32 {
    *ids.entry(name.to_string()).or_insert_with(|| {
        names.push(name.to_string());
        names.len() as u32 - 1
    })
}
