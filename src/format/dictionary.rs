//! The schemas (kind and phase names) and tiers of a file: written once each, before the first
//! record that refers to them ([`Dictionary`]), and read as they come ([`DictionaryReader`]).

use std::io;
use std::sync::Arc;

use super::payload::Payload;
use super::put::{put_frame, put_str, put_varint, TryBuf, FRAME_MOST};
use super::spec::Malformed;
use super::spec::{FRAME_SCHEMA, FRAME_TIER};
use super::varint::MAX_VARINT;
use super::{no_memory, Frame, FrameReader};
use crate::counters::{MethodInfo, Schema};
use crate::error::Error;
use crate::shared::Shared;

/// The bytes of a method's name a version-2 reader hands out, at most: a longer name is cut
/// (at a character) and ends in `...`. A record can share all of a long name with the record
/// before it at the cost of a few bytes of the file, so a reader that handed out whole names
/// would copy a name's length for each such record: megabytes per record of a crafted file.
pub const NAME_SHOWN_MAX: usize = 4096;
/// The bytes of a tier's name a reader hands out, at most (cut as names are): every record of
/// the tier hands it out.
pub const TIER_SHOWN_MAX: usize = 256;

/// The schema and tier tables of one file being written: each is written once, before the
/// first record that refers to it. An entry counts as written only once the frame that carries
/// it has reached the output: lookups only say what a record would add, and
/// [`Dictionary::commit`] adds it after the write.
#[derive(Default)]
pub(crate) struct Dictionary {
    schemas: Vec<Shared<Schema>>,
    tiers: Vec<String>,
    /// The copy of the new tier that [`Dictionary::ids`] made, for [`Dictionary::commit`]:
    /// made before the write, so that committing what reached the output cannot fail.
    pending_tier: Option<String>,
}

/// The ids of a record's schema and tier, and whether its frames define them.
#[derive(Clone, Copy)]
pub(crate) struct Ids {
    pub(crate) schema: u64,
    pub(crate) tier: u64,
    pub(crate) new_schema: bool,
    pub(crate) new_tier: bool,
}

impl Dictionary {
    /// The ids of `schema` and `tier` (tier 0: none); appends to `out` the frames of those not
    /// written yet, and makes the room that [`Dictionary::commit`] takes. Fails (out of
    /// memory) with nothing taken.
    pub(crate) fn ids(
        &mut self,
        schema: &Shared<Schema>,
        tier: Option<&str>,
        out: &mut TryBuf,
    ) -> io::Result<Ids> {
        let known = self
            .schemas
            .iter()
            .position(|s| Shared::ptr_eq(s, schema) || **s == **schema);
        let schema_id = known.unwrap_or(self.schemas.len()) as u64;
        if known.is_none() {
            let names = schema.kinds.iter().chain(&schema.phases);
            let most = names.map(|n| n.len() + MAX_VARINT).sum::<usize>() + 3 * MAX_VARINT;
            self.schemas.try_reserve(1).map_err(no_memory)?;
            out.reserve(most + FRAME_MOST)?;
            let mut p = TryBuf::with_room(most)?; // what follows fits in it
            put_varint(&mut p, schema_id);
            put_varint(&mut p, schema.kinds.len() as u64);
            schema.kinds.iter().for_each(|k| put_str(&mut p, k));
            put_varint(&mut p, schema.phases.len() as u64);
            schema.phases.iter().for_each(|k| put_str(&mut p, k));
            p.check()?;
            put_frame(out, FRAME_SCHEMA, p.as_slice());
        }
        let (tier_id, new_tier) = match tier {
            None => (0, false),
            Some(tier) => match self.tiers.iter().position(|t| t == tier) {
                Some(i) => (i as u64 + 1, false),
                None => {
                    let id = self.tiers.len() as u64 + 1;
                    let most = 2 * MAX_VARINT + tier.len();
                    self.tiers.try_reserve(1).map_err(no_memory)?;
                    out.reserve(most + FRAME_MOST)?;
                    self.pending_tier = Some(
                        crate::fallible::string(tier)
                            .ok_or_else(|| io::Error::from(io::ErrorKind::OutOfMemory))?,
                    );
                    let mut p = TryBuf::with_room(most)?; // what follows fits in it
                    put_varint(&mut p, id);
                    put_str(&mut p, tier);
                    p.check()?;
                    put_frame(out, FRAME_TIER, p.as_slice());
                    (id, true)
                }
            },
        };
        Ok(Ids {
            schema: schema_id,
            tier: tier_id,
            new_schema: known.is_none(),
            new_tier,
        })
    }

    /// Records that the frames [`Dictionary::ids`] appended reached the output, in the room
    /// it made: allocates nothing.
    pub(crate) fn commit(&mut self, ids: Ids, schema: &Shared<Schema>) {
        // Within the room `ids` reserved: these cannot fail.
        if ids.new_schema {
            let _ = crate::fallible::push_within(&mut self.schemas, Shared::clone(schema));
        }
        if let (true, Some(tier)) = (ids.new_tier, self.pending_tier.take()) {
            let _ = crate::fallible::push_within(&mut self.tiers, tier);
        }
    }
}

/// Reads schemas and tiers as they come, for log and trace readers.
pub(crate) struct DictionaryReader {
    pub(crate) schemas: Vec<Shared<Schema>>,
    pub(crate) tiers: Vec<Arc<str>>,
    /// For traces, the arena's limits on kinds and phases (their events replay through an
    /// arena); `None` for logs, whose readers count any number of kinds.
    pub(crate) arena_limits: Option<(usize, usize)>,
}

impl DictionaryReader {
    /// For a stats log: any number of kinds and phases.
    pub(crate) fn for_logs() -> DictionaryReader {
        DictionaryReader {
            schemas: Vec::new(),
            tiers: Vec::new(),
            arena_limits: None,
        }
    }

    /// For a trace: at most the arena's kinds and phases.
    pub(crate) fn for_traces() -> DictionaryReader {
        DictionaryReader {
            arena_limits: Some((
                crate::sys::JITARENA_MAX_KINDS as usize,
                crate::sys::JITARENA_MAX_PHASES as usize,
            )),
            ..DictionaryReader::for_logs()
        }
    }

    /// Takes a schema or tier frame; returns false for other frame types.
    pub(crate) fn take(&mut self, frame: &Frame, reader: &FrameReader) -> Result<bool, Error> {
        let bad = |e: Malformed| reader.corrupt(frame.offset, e.0);
        let mut p = Payload::new(&frame.payload);
        match frame.kind {
            FRAME_SCHEMA => {
                let id = p.varint().map_err(bad)?;
                let kinds = read_names(&mut p).map_err(bad)?;
                let phases = read_names(&mut p).map_err(bad)?;
                if !p.is_done() {
                    return Err(bad(Malformed("it has bytes after its last field")));
                }
                if id != self.schemas.len() as u64 {
                    return Err(reader.corrupt(frame.offset, "schema ids are out of order"));
                }
                let schema = match self.arena_limits {
                    Some((max_kinds, max_phases)) => {
                        if kinds.len() > max_kinds || phases.len() > max_phases {
                            return Err(reader.corrupt(frame.offset, &format!(
                                "its schema has {} kinds and {} phases; a trace replays through the arena, which has at most {max_kinds} kinds and {max_phases} phases",
                                kinds.len(),
                                phases.len()
                            )));
                        }
                        Schema::new(kinds, phases)
                    }
                    None => Schema::of_log(kinds, phases),
                }
                .map_err(|e| reader.corrupt(frame.offset, &e.message))?;
                self.schemas.push(Shared::new(schema));
            }
            FRAME_TIER => {
                let id = p.varint().map_err(bad)?;
                let name = p.str().map_err(bad)?;
                if id != self.tiers.len() as u64 + 1 {
                    return Err(reader.corrupt(frame.offset, "tier ids are out of order"));
                }
                // Every record of the tier hands out its name: a long one is cut once, here.
                let mut cut = String::new();
                if name.len() > TIER_SHOWN_MAX {
                    cut_name(name, TIER_SHOWN_MAX, &mut cut);
                }
                self.tiers
                    .push(Arc::from(if cut.is_empty() { name } else { &cut }));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Reads the method-info part of a record.
    pub(crate) fn info(
        &self,
        p: &mut Payload<'_>,
    ) -> Result<(Shared<Schema>, MethodInfo), Malformed> {
        let mut info = MethodInfo::default();
        let schema = Shared::clone(self.info_into(p, &mut info)?);
        Ok((schema, info))
    }

    /// Reads the method-info part of a record into `info` (reusing its strings); returns the
    /// record's schema.
    pub(crate) fn info_into(
        &self,
        p: &mut Payload<'_>,
        info: &mut MethodInfo,
    ) -> Result<&Shared<Schema>, Malformed> {
        let schema_id = p.varint()?;
        info.context = p.signed()?;
        let tier_id = p.varint()?;
        let name = p.str()?;
        let mut cut = String::new();
        if name.len() > NAME_SHOWN_MAX {
            cut_name(name, NAME_SHOWN_MAX, &mut cut);
            return self.ids_into(schema_id, tier_id, &cut, info);
        }
        self.ids_into(schema_id, tier_id, name, info)
    }

    /// Looks up a record's schema and tier by id and sets `info`'s tier and name (reusing its
    /// strings); returns the record's schema.
    pub(crate) fn ids_into(
        &self,
        schema_id: u64,
        tier_id: u64,
        name: &str,
        info: &mut MethodInfo,
    ) -> Result<&Shared<Schema>, Malformed> {
        let schema = usize::try_from(schema_id)
            .ok()
            .and_then(|id| self.schemas.get(id))
            .ok_or(Malformed("it names a schema not defined before it"))?;
        match tier_id {
            0 => info.tier = None,
            id => {
                let tier = usize::try_from(id - 1)
                    .ok()
                    .and_then(|id| self.tiers.get(id))
                    .ok_or(Malformed("it names a tier not defined before it"))?;
                reuse(&mut info.tier, tier);
            }
        }
        if name.is_empty() {
            info.name = None;
        } else {
            reuse(&mut info.name, name);
        }
        Ok(schema)
    }
}

/// Sets `slot` to `text`, reusing its allocation.
/// `name` cut to `max` bytes (at least 3), at a character, ending in `...`, into `into`.
pub(crate) fn cut_name(name: &str, max: usize, into: &mut String) {
    let mut end = max.saturating_sub(3);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    into.clear();
    into.push_str(name.get(..end).unwrap_or_default());
    into.push_str("...");
}

/// Sets `slot` to `text`, reusing its string.
fn reuse(slot: &mut Option<String>, text: &str) {
    match slot {
        Some(s) => {
            s.clear();
            s.push_str(text);
        }
        None => *slot = Some(text.to_string()),
    }
}

/// A list of names: its count is bounded by the bytes left (a name takes at least two).
fn read_names(p: &mut Payload<'_>) -> Result<Vec<String>, Malformed> {
    let n = p.count(p.remaining() as u64 / 2)?;
    let mut names = Vec::with_capacity(n);
    for _ in 0..n {
        names.push(p.str()?.to_string());
    }
    Ok(names)
}
