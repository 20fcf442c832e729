//! Copying version-2 records from log to log without decoding their counters: what
//! `jitarena merge` does with records whose schema is already the output's. Only the head (the
//! schema and tier ids, the context and the name, which depend on the file and the previous
//! record) is written again; the counters are copied when they are ones that the reader accepts
//! and that [`LogWriter::write`] would write byte for byte, so a copy is the same file as a
//! re-encoding.

use std::io::{self, Write};
use std::sync::Arc;

use super::{LogReader, LogWriter, FRAME_METHOD};
use crate::counters::Schema;
use crate::error::Error;
use crate::record;

/// A version-2 record whose counters can be copied to another log as they are (see
/// [`LogReader::current_copyable`]).
pub struct CopyableRecord<'a> {
    /// The record's schema, as its file defines it.
    pub schema: &'a Arc<Schema>,
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
    pub fn current_schema(&self) -> Result<Option<&Arc<Schema>>, Error> {
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
            name: Some(self.prev.name.as_str()).filter(|n| !n.is_empty()),
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
    pub fn write_copy(&mut self, schema: &Arc<Schema>, r: &CopyableRecord<'_>) -> io::Result<()> {
        if schema.kinds.len() != r.schema.kinds.len()
            || schema.phases.len() != r.schema.phases.len()
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the record cannot be copied: its schema has other kinds or phases than the output's",
            ));
        }
        let name = r.name.unwrap_or("");
        let (prev, head, payload) = (&self.prev, r.head, r.payload);
        self.records
            .write_raw(FRAME_METHOD, schema, r.tier, |p, schema_id, tier_id| {
                record::put_head(p, head, (schema_id, tier_id), prev, name, r.context);
                p.extend_from_slice(&payload[head.body..]);
                Ok(())
            })?;
        self.prev.context = r.context;
        self.prev.name.clear();
        self.prev.name.push_str(name);
        Ok(())
    }
}
