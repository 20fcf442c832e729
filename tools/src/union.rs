//! Uniting the kind and phase lists of many logs by name, so that shards, merged logs and the
//! two sides of a diff can be added up and compared kind by kind.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use jitarena::counters::Schema;
use jitarena::error::Error;
use jitarena::log::MethodCounts;
use jitarena::Shared;

/// The slot of the invalid-kind (and no-phase) bucket in remapped counts.
pub const INVALID: u32 = u32::MAX;

/// The union of several schemas: every kind and phase name once, in the order first seen; each
/// member schema's invalid-kind and no-phase buckets map to the union's. Adding a schema costs
/// the length of its names once (it is hashed, and its names interned), whatever the number of
/// schemas already added; adding the same `Arc` again costs a lookup.
#[derive(Default)]
pub struct SchemaUnion {
    kinds: Vec<String>,
    phases: Vec<String>,
    kind_ids: HashMap<String, u32>,
    phase_ids: HashMap<String, u32>,
    /// Member schemas and their slot maps (named slots only; the buckets are mapped at use).
    members: Vec<(Shared<Schema>, Vec<u32>, Vec<u32>)>,
    /// Members by a hash of their names: readers of different files hold equal schemas in
    /// different `Arc`s.
    by_content: HashMap<u64, Vec<usize>>,
    /// Every schema `Arc` seen, by address, with its member. The `Arc` is kept, so that its
    /// address is not reused by another schema.
    seen: HashMap<usize, (Shared<Schema>, usize)>,
    /// Names hashed or interned and schemas compared so far.
    work: u64,
    /// Whether more names were seen than slots can number.
    overflow: bool,
}

/// The most names a union holds: slots are `u32`, and [`INVALID`] is taken.
const MAX_NAMES: usize = INVALID as usize - 1;

impl SchemaUnion {
    /// Adds a schema's names.
    pub fn add(&mut self, schema: &Shared<Schema>) {
        let address = Shared::as_ptr(schema) as usize;
        if self.seen.contains_key(&address) {
            return;
        }
        let hash = self.content_hash(schema);
        let i = match self.find(hash, schema) {
            Some(i) => i,
            None => {
                let kinds = schema
                    .kinds
                    .iter()
                    .map(|k| intern(&mut self.kinds, &mut self.kind_ids, k, &mut self.overflow))
                    .collect();
                let phases = schema
                    .phases
                    .iter()
                    .map(|p| intern(&mut self.phases, &mut self.phase_ids, p, &mut self.overflow))
                    .collect();
                self.work += (schema.kinds.len() + schema.phases.len()) as u64;
                self.members.push((Shared::clone(schema), kinds, phases));
                let i = self.members.len() - 1;
                self.by_content.entry(hash).or_default().push(i);
                i
            }
        };
        self.seen.insert(address, (Shared::clone(schema), i));
    }

    /// A hash of the schema's names.
    fn content_hash(&mut self, schema: &Schema) -> u64 {
        self.work += (schema.kinds.len() + schema.phases.len()) as u64;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        schema.hash(&mut h);
        h.finish()
    }

    /// The member with the names of `schema`, given their hash.
    fn find(&mut self, hash: u64, schema: &Schema) -> Option<usize> {
        let candidates = self.by_content.get(&hash)?;
        self.work += candidates.len() as u64;
        candidates
            .iter()
            .copied()
            .find(|&i| *self.members[i].0 == *schema)
    }

    fn member(&self, schema: &Shared<Schema>) -> Option<usize> {
        if let Some((_, i)) = self.seen.get(&(Shared::as_ptr(schema) as usize)) {
            return Some(*i);
        }
        let mut h = std::collections::hash_map::DefaultHasher::new();
        schema.hash(&mut h);
        self.by_content
            .get(&h.finish())?
            .iter()
            .copied()
            .find(|&i| *self.members[i].0 == **schema)
    }

    /// The member schemas, in the order first added (each set of names once).
    pub fn schemas(&self) -> impl Iterator<Item = &Shared<Schema>> {
        self.members.iter().map(|m| &m.0)
    }

    /// The united slots of `schema`'s kinds and phases (by its slot), if it was added.
    pub fn slot_maps(&self, schema: &Shared<Schema>) -> Option<(&[u32], &[u32])> {
        let (_, kinds, phases) = &self.members[self.member(schema)?];
        Some((kinds, phases))
    }

    /// The united slot of the kind named `name`, if any log names it.
    pub fn kind_slot(&self, name: &str) -> Option<u32> {
        self.kind_ids.get(name).copied()
    }

    /// The united slot of the phase named `name`, if any log names it.
    pub fn phase_slot(&self, name: &str) -> Option<u32> {
        self.phase_ids.get(name).copied()
    }

    /// Names hashed or interned and schemas compared so far: the union's work, which grows
    /// with the names added, not with the square of the number of schemas.
    pub fn work(&self) -> u64 {
        self.work
    }

    /// The united schema, for a report: any number of kinds and phases (see
    /// [`Schema::united`]).
    pub fn schema(&self) -> Result<Schema, Error> {
        if self.overflow {
            return Err(Error::new(
                jitarena::ErrorCode::Io,
                format!("the logs name more than {MAX_NAMES} distinct kinds or phases"),
            ));
        }
        Schema::united(self.kinds.clone(), self.phases.clone())
    }

    /// The united schema, to be written as a log's (merge) or as a row per method (dump): at
    /// most [`jitarena::counters::MAX_LOG_NAMES`] kinds and as many phases, since every record
    /// or row holds a place for each.
    pub fn log_schema(&self) -> Result<Schema, Error> {
        let most = jitarena::counters::MAX_LOG_NAMES;
        if !self.overflow && (self.kinds.len() > most || self.phases.len() > most) {
            return Err(Error::new(
                jitarena::ErrorCode::Io,
                format!(
                    "the logs name {} distinct kinds and {} phases in all, but a log holds at most {most} of each (a log from another program, or a crafted one?)",
                    self.kinds.len(),
                    self.phases.len()
                ),
            ));
        }
        self.schema()
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
            .map_or(jitarena::counters::INVALID_KIND_NAME, String::as_str)
    }

    /// The name of united phase slot `slot` ([`INVALID`]: the no-phase bucket).
    pub fn phase_name(&self, slot: u32) -> &str {
        self.phases
            .get(slot as usize)
            .map_or(jitarena::counters::NO_PHASE_NAME, String::as_str)
    }

    /// `counts` (laid out against `schema`, which must have been added) re-laid against the
    /// union, into `out`; slots stay in increasing order. The invalid-kind and no-phase buckets
    /// become [`INVALID`], which stays valid as the union grows; [`SchemaUnion::seal`] turns
    /// them into the final union schema's bucket slots.
    pub fn remap(&self, schema: &Shared<Schema>, counts: &MethodCounts, out: &mut MethodCounts) {
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
        out.phase_kind_bytes.clear();
        out.phase_kind_bytes
            .extend(counts.phase_kind_bytes.iter().map(|&(phase, kind, b)| {
                (
                    phase_map.get(phase as usize).copied().unwrap_or(none),
                    kind_map.get(kind as usize).copied().unwrap_or(invalid),
                    b,
                )
            }));
        if !out.phase_kind_bytes.is_sorted_by_key(|e| (e.0, e.1)) {
            out.phase_kind_bytes.sort_unstable_by_key(|e| (e.0, e.1));
        }
        out.used_bytes = counts.used_bytes;
        out.reserved_bytes = counts.reserved_bytes;
        out.page_count = counts.page_count;
        out.largest_alloc = counts.largest_alloc;
        out.limit_hit = counts.limit_hit;
    }
}

impl SchemaUnion {
    /// For a pass that writes against the finished union ([`SchemaUnion::remap`], then
    /// [`SchemaUnion::seal`]): `counts` re-laid against the union's schema, into `out`.
    /// `schema`, known by its names since the union was built, is also remembered by address,
    /// so that the later records of its file are not matched by hashing every name again.
    ///
    /// Returns `false`, and leaves `out` as it was, when `schema` names a kind or phase that the
    /// union lacks: its schema is already out (a file's columns, a merged log's schema), so the
    /// counts have no place in it. That happens only when a file changed between the passes.
    #[must_use]
    pub fn remap_sealed(
        &mut self,
        schema: &Shared<Schema>,
        counts: &MethodCounts,
        out: &mut MethodCounts,
    ) -> bool {
        let names = (self.kinds.len(), self.phases.len());
        self.add(schema);
        if (self.kinds.len(), self.phases.len()) != names {
            return false;
        }
        self.remap(schema, counts, out);
        self.seal(out);
        true
    }

    /// Replaces the [`INVALID`] buckets of remapped counts with the slots of the finished
    /// union's schema (its kind and phase counts), for writing against that schema.
    pub fn seal(&self, counts: &mut MethodCounts) {
        for k in counts.kinds.iter_mut().filter(|k| k.0 == INVALID) {
            k.0 = self.kinds.len() as u32;
        }
        for p in counts.phases.iter_mut().filter(|p| p.0 == INVALID) {
            p.0 = self.phases.len() as u32;
        }
        for e in &mut counts.phase_kind_bytes {
            if e.0 == INVALID {
                e.0 = self.phases.len() as u32;
            }
            if e.1 == INVALID {
                e.1 = self.kinds.len() as u32;
            }
        }
    }
}

fn intern(
    names: &mut Vec<String>,
    ids: &mut HashMap<String, u32>,
    name: &str,
    overflow: &mut bool,
) -> u32 {
    if let Some(&id) = ids.get(name) {
        return id;
    }
    if names.len() >= MAX_NAMES {
        *overflow = true;
        return INVALID;
    }
    names.push(name.to_string());
    ids.insert(name.to_string(), names.len() as u32 - 1);
    names.len() as u32 - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(kinds: &[&str]) -> Shared<Schema> {
        let kinds = kinds.iter().map(|k| k.to_string()).collect();
        Shared::new(Schema::of_log(kinds, vec!["Import".to_string()]).unwrap())
    }

    /// A file that gains a kind between a tool's two readings (a JIT still appending to it):
    /// its record has no place in the union already written out, and must be refused (dump's
    /// columns indexed past their end, merge's writer blamed its output), while a schema of the
    /// union's names in another order still re-lays its counts.
    #[test]
    fn a_schema_with_names_the_sealed_union_lacks_is_refused() {
        let mut union = SchemaUnion::default();
        union.add(&schema(&["ASTNode", "LSRA"]));
        let sealed = union.schema().unwrap();
        let counts = MethodCounts {
            kinds: vec![(0, 64, 2), (1, 40, 1)],
            phases: vec![(0, 104)],
            ..MethodCounts::default()
        };
        let mut out = MethodCounts::default();
        assert!(union.remap_sealed(&schema(&["LSRA", "ASTNode"]), &counts, &mut out));
        assert_eq!(out.kinds, vec![(0, 40, 1), (1, 64, 2)]);
        let before = out.clone();
        let grown = schema(&["ASTNode", "LSRA", "NewKind"]);
        assert!(!union.remap_sealed(&grown, &counts, &mut out));
        assert_eq!(out, before, "left as it was");
        assert_eq!(union.schema().unwrap().kinds.len(), sealed.kinds.len() + 1);
    }
}
