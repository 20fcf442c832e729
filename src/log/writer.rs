//! Writing a stats log: one frame per method, after the schema and tier frames it needs, each
//! reaching the output whole.

use std::io::{self, Write};

use crate::counters::{MethodCounts, MethodRecord, Schema};
use crate::format::record;
use crate::format::spec::{FRAME_BUILD, FRAME_CUT_NOTE, FRAME_FAILED, FRAME_METHOD};
use crate::format::writer::FrameWriter;
use crate::format::{self, no_memory, Content};
use crate::shared::Shared;

/// What a refused record's reason follows ([`LogWriter::refusal`]).
pub(crate) const REFUSED: &str = "the record cannot be written: ";

/// Writes a stats log to any output, one `write_all` per record (so that a record reaches the
/// operating system whole, and a crash loses at most the one being written).
///
/// A failed write does not spoil the records before it: the schema and tier names of the
/// failed record are written again with the next record that needs them. When part of the
/// failed record reached the output, later writes are refused until
/// [`LogWriter::remove_torn`] has removed it.
pub struct LogWriter<W: Write> {
    pub(super) records: FrameWriter<W>,
    /// The last record written: the next one's context and name are written relative to it.
    pub(super) prev: record::Prev,
    /// Buffers reused from record to record.
    pub(super) scratch: record::Scratch,
    /// The build id of the last [`FRAME_BUILD`] written, if any.
    pub(super) build: Vec<u8>,
    /// Whether a build frame was written (`build` then holds its id).
    pub(super) build_written: bool,
}

impl<W: Write> LogWriter<W> {
    /// Starts a log: writes the file header.
    pub fn new(out: W) -> io::Result<LogWriter<W>> {
        Ok(LogWriter {
            records: FrameWriter::new(out, Content::Log)?,
            prev: record::Prev::default(),
            scratch: record::Scratch::default(),
            build: Vec::new(),
            build_written: false,
        })
    }

    /// Names the build of the JIT whose records follow: writes a build frame unless the last
    /// one written named `build` already. Allocates nothing that cannot fail: out of memory, it
    /// fails with [`io::ErrorKind::OutOfMemory`], writing nothing.
    pub fn note_build(&mut self, build: &str) -> io::Result<()> {
        if self.build_written && self.build == build.as_bytes() {
            return Ok(());
        }
        self.build.clear();
        self.build
            .try_reserve_exact(build.len())
            .map_err(format::no_memory)?;
        let _ = crate::fallible::extend_within(&mut self.build, build.as_bytes()); // within the room
        self.build_written = false;
        self.records
            .write_plain(FRAME_BUILD, |p| format::put_str(p, build))?;
        self.build_written = true;
        Ok(())
    }

    /// Notes a compile that failed (a failed-compile frame, type 6: `docs/formats.md`), in
    /// place of its record. Allocates nothing that cannot fail.
    pub fn note_failed(
        &mut self,
        name: Option<&str>,
        context: i64,
        tier: Option<&str>,
    ) -> io::Result<()> {
        // Refused after a record cut short that could not be removed, as every frame is.
        self.records.write_plain(FRAME_FAILED, |p| {
            format::put_signed(p, context);
            format::put_str(p, name.unwrap_or(""));
            format::put_str(p, tier.unwrap_or(""));
        })
    }

    /// Appends one method's record. Fails with [`io::ErrorKind::InvalidInput`], writing
    /// nothing, when the counts cannot be a record: slots that do not increase or lie outside
    /// the schema, or kinds by phase that name a kind or phase the record does not list, are out
    /// of order or do not add up to the kinds' and phases' bytes.
    pub fn write(
        &mut self,
        schema: &Shared<Schema>,
        name: Option<&str>,
        context: i64,
        tier: Option<&str>,
        c: &MethodCounts,
    ) -> io::Result<()> {
        self.records.refuse_torn()?;
        self.write_counts(schema, name, context, tier, c)
            .map_err(|e| match self.scratch.refused.take() {
                Some(why) => io::Error::new(io::ErrorKind::InvalidInput, format!("{REFUSED}{why}")),
                None => e,
            })
    }

    /// [`LogWriter::write`] for a JIT, whose failures allocate nothing: a record refused after
    /// one cut short that could not be removed fails with [`io::ErrorKind::Other`] (check
    /// [`LogWriter::torn`] first), and counts that cannot be a record with
    /// [`io::ErrorKind::InvalidInput`] alone.
    #[inline(never)] // once per method; kept whole so that profiles can name it
    pub(crate) fn write_counts(
        &mut self,
        schema: &Shared<Schema>,
        name: Option<&str>,
        context: i64,
        tier: Option<&str>,
        c: &MethodCounts,
    ) -> io::Result<()> {
        self.scratch.refused = None;
        let name = name.unwrap_or("");
        // Room for the name as the next record's previous one, made before the write.
        self.prev.name.try_reserve(name.len()).map_err(no_memory)?;
        let (prev, scratch) = (&self.prev, &mut self.scratch);
        let (kinds, phases) = (schema.kinds.len(), schema.phases.len());
        self.records
            .write_raw(FRAME_METHOD, schema, tier, |p, schema_id, tier_id| {
                let fields = record::Fields {
                    schema_id,
                    tier_id,
                    kind_count: kinds,
                    phase_count: phases,
                    name,
                    context,
                };
                record::encode(p, &fields, prev, c, scratch)
            })?;
        self.prev.context = context;
        self.prev.name.clear();
        // Within the room reserved above.
        let _ = crate::fallible::extend_within(
            // SAFETY: the bytes appended are `name`'s, which are UTF-8.
            unsafe { self.prev.name.as_mut_vec() },
            name.as_bytes(),
        );
        Ok(())
    }

    /// Why the last [`LogWriter::write_counts`] that failed with `InvalidInput` refused its
    /// counts, if it did.
    pub(crate) fn refusal(&self) -> Option<&'static str> {
        self.scratch.refused
    }

    /// The record cut short that writes wait on, if any: the bytes of it that follow the last
    /// whole record, and where that record ends ([`LogWriter::remove_torn`] removes it).
    pub fn torn(&self) -> Option<(u64, u64)> {
        self.records.torn()
    }

    /// After a failed write, removes the part of the record that reached the output:
    /// `truncate(output, length)` must cut the output to `length` bytes, the end of its last
    /// whole record, and leave its position there. Until it succeeds, writes are refused.
    pub fn remove_torn(
        &mut self,
        truncate: impl FnOnce(&mut W, u64) -> io::Result<()>,
    ) -> io::Result<()> {
        self.records.remove_torn(truncate)
    }

    /// Appends a record read from another log.
    pub fn write_record(&mut self, r: &MethodRecord) -> io::Result<()> {
        let info = &r.info;
        self.write(
            &r.schema,
            info.name.as_deref(),
            info.context,
            info.tier.as_deref(),
            &r.counts,
        )
    }

    /// Appends a note that this log holds the records of another log that was cut short,
    /// `warning` being what its reader said of it ([`LogReader::warnings`](super::LogReader::warnings)): `jitarena merge`
    /// writes one for each such input, so that every reader of the merged log warns of it
    /// too, and a gate treats the merged log as one cut short.
    pub fn write_cut_note(&mut self, warning: &str) -> io::Result<()> {
        self.records.refuse_torn()?;
        self.records
            .write_plain(FRAME_CUT_NOTE, |p| format::put_str(p, warning))
    }

    /// Flushes and returns the output.
    pub fn finish(self) -> io::Result<W> {
        self.records.finish()
    }
}
