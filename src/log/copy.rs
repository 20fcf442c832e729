//! Copying version-2 records from log to log without decoding their counters: what
//! `jitarena merge` does with records whose schema is already the output's. Only the head (the
//! schema and tier ids, the context and the name, which depend on the file and the previous
//! record) is written again; the counters are copied when they are ones that the reader accepts
//! and that [`LogWriter::write`] would write byte for byte, so a copy is the same file as a
//! re-encoding. Also [`RecordBatch`]: records taken from a reader, to be copied or decoded on
//! another thread.

use std::io::{self, Write};
use std::ops::Range;
use std::sync::Arc;

use std::cell::Cell;

use super::reader::LogReader;
use super::visit::visit_v2;
use super::visit::CountsVisitor;
use super::writer::LogWriter;
use crate::counters::MethodRecord;
use crate::counters::Schema;
use crate::error::{Error, ErrorCode};
use crate::format::record;
use crate::format::spec::FRAME_METHOD;
use crate::format::Put;
use crate::shared::Shared;

/// A version-2 record whose counters can be copied to another log as they are (see
/// [`LogReader::current_copyable`]).
pub struct CopyableRecord<'a> {
    /// The record's schema, as its file defines it.
    pub schema: &'a Shared<Schema>,
    /// The record's tier, if known.
    pub tier: Option<&'a str>,
    /// The record's context.
    pub context: i64,
    /// The record's name, if known.
    pub name: Option<&'a str>,
    head: &'a record::Head,
    payload: &'a [u8],
}

impl LogReader {
    /// The schema of the record [`LogReader::next_raw`] moved to, read from its head alone:
    /// its counters are neither decoded nor checked. `None` for a version-1 log, whose records
    /// are decoded whole ([`LogReader::decode_current`]).
    pub fn current_schema(&self) -> Result<Option<&Shared<Schema>>, Error> {
        if self.frames.version() < 2 {
            return Ok(None);
        }
        let schemas = &self.dict.schemas;
        usize::try_from(self.head.schema)
            .ok()
            .and_then(|id| schemas.get(id))
            .map(Some)
            .ok_or_else(|| {
                let frame = self.frames.frame();
                self.frames
                    .corrupt(frame.offset, "it names a schema not defined before it")
            })
    }

    /// The record [`LogReader::next_raw`] moved to, for [`LogWriter::write_copy`]: `Some` when
    /// the log is of version 2, the record's schema and tier are defined and its counters are
    /// ones [`LogReader::decode_current`] accepts and [`LogWriter::write`] would write byte
    /// for byte. `None` otherwise: `decode_current` then says what is wrong with the record,
    /// or gives it to be written again.
    pub fn current_copyable(&self) -> Option<CopyableRecord<'_>> {
        if self.frames.version() < 2 {
            return None;
        }
        let head = &self.head;
        let schema = self.dict.schemas.get(usize::try_from(head.schema).ok()?)?;
        let tier = match head.tier {
            0 => None,
            id => Some(&**self.dict.tiers.get(usize::try_from(id - 1).ok()?)?),
        };
        let payload = &self.frames.frame().payload;
        let mut scratch = self.scratch.take();
        let copyable = record::copyable(
            payload,
            head,
            schema.kinds.len(),
            schema.phases.len(),
            &mut scratch,
        );
        self.scratch.set(scratch);
        copyable.then(|| CopyableRecord {
            schema,
            tier,
            context: self.prev.context,
            name: Some(self.name()).filter(|n| !n.is_empty()),
            head,
            payload,
        })
    }
}

impl<W: Write> LogWriter<W> {
    /// Appends a record read by [`LogReader::current_copyable`], against `schema`: the same
    /// file as [`LogWriter::write`] of the decoded record would write. `schema` must name the
    /// record's kinds and phases in the same order (the caller checks the names; a schema of
    /// other lengths is refused with [`io::ErrorKind::InvalidInput`], nothing written).
    pub fn write_copy(
        &mut self,
        schema: &Shared<Schema>,
        r: &CopyableRecord<'_>,
    ) -> io::Result<()> {
        same_lengths(schema, r.schema.kinds.len(), r.schema.phases.len())?;
        let counters = &r.payload[r.head.body..];
        let name = r.name.unwrap_or("");
        self.copy_counters(schema, r.tier, r.head, counters, name, r.context, None)
    }

    /// Appends the records of `batch`, in order, as [`LogWriter::write_copy`] does: the same
    /// file as writing each decoded record. The batch must have passed [`RecordBatch::check`]
    /// (an unchecked batch, or one of another schema's lengths, is refused with
    /// [`io::ErrorKind::InvalidInput`], nothing written).
    pub fn write_batch(&mut self, schema: &Shared<Schema>, batch: &RecordBatch) -> io::Result<()> {
        if !batch.checked {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the records cannot be copied: their counters were not checked",
            ));
        }
        for t in &batch.taken {
            let theirs = &batch.schemas[t.schema];
            same_lengths(schema, theirs.kinds.len(), theirs.phases.len())?;
        }
        for t in &batch.taken {
            let tier = t.tier.map(|i| &*batch.tiers[i]);
            let counters = &batch.bytes[t.counters.clone()];
            let name = &batch.names[t.name.clone()];
            let known = t
                .read
                .clone()
                .map(|(payload, crc)| (&batch.bytes[payload], crc));
            self.copy_counters(schema, tier, &t.head, counters, name, t.context, known)?;
        }
        Ok(())
    }

    /// Appends a record of `schema` whose counters, laid out after `head`, are `counters`.
    /// `known`: the payload of the record as read and the checksum of its frame, checked when
    /// read: when the payload written is the same bytes (the record's head is written as it was
    /// read, as it is for every record of a shard after its first), so is the frame, and its
    /// checksum is not computed again.
    #[allow(clippy::too_many_arguments)]
    fn copy_counters(
        &mut self,
        schema: &Shared<Schema>,
        tier: Option<&str>,
        head: &record::Head,
        counters: &[u8],
        name: &str,
        context: i64,
        known: Option<(&[u8], u32)>,
    ) -> io::Result<()> {
        self.records.refuse_torn()?;
        let prev = &self.prev;
        self.records
            .write_raw_known(FRAME_METHOD, schema, tier, |p, schema_id, tier_id| {
                record::put_head(p, head, (schema_id, tier_id), prev, name, context);
                p.put(counters);
                Ok(known.and_then(|(read, crc)| (read == p.as_slice()).then_some(crc)))
            })?;
        self.prev.context = context;
        self.prev.name.clear();
        self.prev.name.push_str(name);
        Ok(())
    }
}

/// Refuses a copy between schemas of other lengths.
fn same_lengths(schema: &Schema, kinds: usize, phases: usize) -> io::Result<()> {
    if schema.kinds.len() != kinds || schema.phases.len() != phases {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the record cannot be copied: its schema has other kinds or phases than the output's",
        ));
    }
    Ok(())
}

/// Version-2 records taken from readers ([`LogReader::take_current`]), their counters neither
/// checked nor decoded, to be checked ([`RecordBatch::check`]) and copied
/// ([`LogWriter::write_batch`]) or decoded ([`RecordBatch::visit`]) later, on any thread: what
/// `jitarena merge` passes from the thread that reads its inputs to the one that writes its
/// output, and `jitarena stats` from the thread that reads its logs to the one that adds them
/// up. A batch owns copies of its records' counters, names, tiers and schemas (shared);
/// [`RecordBatch::clear`] keeps its buffers for the next records.
#[derive(Debug, Default)]
pub struct RecordBatch {
    /// The records' counters, one after another (for copies, each after its head).
    bytes: Vec<u8>,
    /// The records' names, one after another.
    names: String,
    taken: Vec<Taken>,
    /// The tiers the records name (consecutive records of a log share one).
    tiers: Vec<Arc<str>>,
    /// The schemas of the records (consecutive records of a log share one).
    schemas: Vec<Shared<Schema>>,
    /// Whether [`RecordBatch::check`] accepted every record since the batch was last empty.
    checked: bool,
}

/// One record of a [`RecordBatch`].
#[derive(Debug)]
struct Taken {
    /// The record's head, for its counters alone.
    head: record::Head,
    counters: Range<usize>,
    name: Range<usize>,
    context: i64,
    /// Index in [`RecordBatch::tiers`].
    tier: Option<usize>,
    /// Index in [`RecordBatch::schemas`].
    schema: usize,
    /// Where the record's frame starts in its log.
    offset: u64,
    /// For a record taken to be copied whose frame the reader checked: its payload as read (its
    /// head, then its counters, which `counters` holds) and its frame's checksum.
    read: Option<(Range<usize>, u32)>,
}

impl RecordBatch {
    /// An empty batch.
    pub fn new() -> RecordBatch {
        RecordBatch::default()
    }

    /// Records held.
    pub fn len(&self) -> usize {
        self.taken.len()
    }

    /// Whether the batch holds no record.
    pub fn is_empty(&self) -> bool {
        self.taken.is_empty()
    }

    /// Bytes of counters (and copies' heads) and names held.
    pub fn bytes(&self) -> usize {
        self.bytes.len() + self.names.len()
    }

    /// Whether [`RecordBatch::check`] accepted every record held (true for an empty batch).
    pub fn is_checked(&self) -> bool {
        self.checked || self.taken.is_empty()
    }

    /// Empties the batch, keeping its buffers.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.names.clear();
        self.taken.clear();
        self.tiers.clear();
        self.schemas.clear();
        self.checked = false;
    }

    /// Checks every record's counters as [`LogReader::current_copyable`] does: true when each
    /// can be copied as it is. False when one cannot: its reader would refuse it, or another
    /// writer laid it out otherwise; reading its log again and decoding that record says which.
    pub fn check(&mut self) -> bool {
        let mut scratch = Vec::new();
        let (bytes, schemas) = (&self.bytes, &self.schemas);
        self.checked = self.taken.iter().all(|t| {
            let schema = &schemas[t.schema];
            record::copyable(
                &bytes[t.counters.clone()],
                &t.head,
                schema.kinds.len(),
                schema.phases.len(),
                &mut scratch,
            )
        });
        self.checked
    }

    /// Decodes record `i` of the batch as [`LogReader::visit_current`] does when it is its
    /// log's current record, with the same checks: sets `record`'s schema and identity, hands
    /// its lists to `v` and sets the rest of `record.counts`. The error gives the record's
    /// offset and what is wrong with it, but not its file (the reader's error names both). `i`
    /// past the batch is an error too.
    pub fn visit<V: CountsVisitor>(
        &self,
        i: usize,
        record: &mut MethodRecord,
        v: &mut V,
    ) -> Result<(), Error> {
        let t = self.taken.get(i).ok_or_else(|| {
            Error::new(
                ErrorCode::Internal,
                format!("a batch of {} records has no record {i}", self.len()),
            )
        })?;
        let corrupt = |what: &str| {
            Error::new(
                ErrorCode::Io,
                format!("record at byte {} of its log is corrupt: {what}", t.offset),
            )
        };
        let schema = &self.schemas[t.schema];
        if !Shared::ptr_eq(&record.schema, schema) {
            record.schema = Shared::clone(schema);
        }
        let info = &mut record.info;
        info.context = t.context;
        reuse(&mut info.tier, t.tier.map(|k| &*self.tiers[k]));
        reuse(
            &mut info.name,
            Some(&self.names[t.name.clone()]).filter(|n| !n.is_empty()),
        );
        let scratch = Cell::new(Vec::new());
        visit_v2(
            &self.bytes[t.counters.clone()],
            &t.head,
            record,
            v,
            &scratch,
        )
        .map_err(|e| corrupt(e.0))
    }
}

impl LogReader {
    /// Adds the record [`LogReader::next_raw`] moved to to `batch`, its counters unchecked,
    /// and returns true; false (nothing added) for a version-1 log and for a record whose
    /// schema or tier its log does not define, which [`LogReader::decode_current`] reports.
    /// To copy, like [`LogReader::current_copyable`], for records whose schema the caller has
    /// found to be the output's (the batch is checked before it is written); or to decode
    /// later ([`RecordBatch::visit`]). The record's frame checksum was checked by
    /// [`LogReader::next_raw`] (unless the reader was opened with [`LogReader::open_again`]).
    pub fn take_current(&self, batch: &mut RecordBatch) -> bool {
        self.take(batch, false)
    }

    /// [`LogReader::take_current`] of a record to be copied: the batch also keeps the record's
    /// head as read and its frame's checksum if the reader checked it (with checks deferred, it
    /// checks only frames too large for its buffer), so that [`LogWriter::write_batch`] need not
    /// compute the checksum again when it writes the same head.
    pub fn take_current_to_copy(&self, batch: &mut RecordBatch) -> bool {
        self.take(batch, true)
    }

    #[inline(always)]
    fn take(&self, batch: &mut RecordBatch, keep_head: bool) -> bool {
        if self.frames.version() < 2 {
            return false;
        }
        let head = &self.head;
        let Some(schema) = usize::try_from(head.schema)
            .ok()
            .and_then(|id| self.dict.schemas.get(id))
        else {
            return false;
        };
        let tier = match head.tier {
            0 => None,
            id => match usize::try_from(id - 1)
                .ok()
                .and_then(|i| self.dict.tiers.get(i))
            {
                Some(tier) => Some(tier),
                None => return false,
            },
        };
        let schema_at = match batch.schemas.last() {
            Some(last) if Shared::ptr_eq(last, schema) => batch.schemas.len() - 1,
            _ => {
                batch.schemas.push(Shared::clone(schema));
                batch.schemas.len() - 1
            }
        };
        let tier = tier.map(|tier| match batch.tiers.last() {
            Some(last) if Arc::ptr_eq(last, tier) => batch.tiers.len() - 1,
            _ => {
                batch.tiers.push(Arc::clone(tier));
                batch.tiers.len() - 1
            }
        });
        let frame = self.frames.frame();
        // The head is kept only where its checksum can be.
        let crc = match keep_head && frame.kind == FRAME_METHOD {
            true => self.frames.checked_crc(),
            false => None,
        };
        let (start, body) = (batch.bytes.len(), if crc.is_some() { 0 } else { head.body });
        batch.bytes.extend_from_slice(&frame.payload[body..]);
        let counters = start + head.body - body..batch.bytes.len();
        let read = crc.map(|crc| (start..batch.bytes.len(), crc));
        let start = batch.names.len();
        batch.names.push_str(self.name());
        let name = start..batch.names.len();
        batch.taken.push(Taken {
            head: head.of_counters(),
            counters,
            name,
            context: self.prev.context,
            tier,
            schema: schema_at,
            offset: frame.offset,
            read,
        });
        batch.checked = false;
        true
    }
}

/// Sets `slot` to `text`, reusing its allocation.
fn reuse(slot: &mut Option<String>, text: Option<&str>) {
    match (slot.as_mut(), text) {
        (Some(s), Some(text)) => {
            s.clear();
            s.push_str(text);
        }
        (_, text) => *slot = text.map(str::to_string),
    }
}
