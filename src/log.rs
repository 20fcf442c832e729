//! The stats log: one checksummed record of counters per compiled method, preceded by the
//! schema (kind and phase names) and tier names it refers to. Layout: `docs/formats.md`.

use std::cell::Cell;
use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;

use crate::counters::Schema;
use crate::error::Error;
use crate::format::{
    self, no_memory, put_frame, put_signed, put_str, put_varint, Content, FrameReader, Malformed,
    Payload, TryBuf, FRAME_MOST, MAX_VARINT,
};
use crate::record;
use crate::shared::Shared;

mod copy;
mod visit;
pub use copy::{CopyableRecord, RecordBatch};
pub use visit::CountsVisitor;

/// Frame type: a schema (its id, kind names, phase names).
pub(crate) const FRAME_SCHEMA: u8 = 1;
/// Frame type: a tier name and its id.
pub(crate) const FRAME_TIER: u8 = 2;
/// Frame type: one method's counters.
const FRAME_METHOD: u8 = 3;
/// Frame type: a note that the log holds the records of another that was cut short (written
/// by `jitarena merge`), its text that log's warning. A reader warns of it as of a log cut
/// short, so that a gate over the merged log sees what a gate over the shards would have.
const FRAME_CUT_NOTE: u8 = 4;
/// Frame type: the build id of the JIT whose records follow (`jitarena_config.build_id`),
/// written before the first record of a build the file has not named since the last such
/// frame; a merged log names the builds of its inputs. Readers before it skip it, as any
/// frame type they do not know.
const FRAME_BUILD: u8 = 5;
/// The build ids a reader keeps, at most (a log names one, a merged log a few).
const BUILDS_KEPT: usize = 64;
/// The notes of logs cut short a reader keeps as warnings, at most; it says how many more
/// there were.
const CUT_NOTES_KEPT: usize = 100;
/// The bytes of a note's text a warning shows, at most.
const CUT_NOTE_SHOWN: usize = 2000;
/// The bytes of a method's name a version-2 reader hands out, at most: a longer name is cut
/// (at a character) and ends in `...`. A record can share all of a long name with the record
/// before it at the cost of a few bytes of the file, so a reader that handed out whole names
/// would copy a name's length for each such record: megabytes per record of a crafted file.
pub const NAME_SHOWN_MAX: usize = 4096;
/// The bytes of a tier's name a reader hands out, at most (cut as names are): every record of
/// the tier hands it out.
pub const TIER_SHOWN_MAX: usize = 256;

/// Who a record is about.
#[derive(Debug, Clone, PartialEq, Eq, Default, Hash)]
pub struct MethodInfo {
    /// The method's full name, if known.
    pub name: Option<String>,
    /// The replay tool's index of the method, -1 if unknown.
    pub context: i64,
    /// Optimization level or tier (`MinOpts`, `FullOpts`, `Tier0`, ...), if known.
    pub tier: Option<String>,
}

/// One method's counters, sparse: only kinds and phases with bytes or allocations.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MethodCounts {
    /// `(kind slot, bytes, count)`, slots increasing; the slot equal to the schema's kind
    /// count is the invalid-kind bucket.
    pub kinds: Vec<(u32, u64, u64)>,
    /// `(phase slot, bytes)`, slots increasing; the slot equal to the phase count is "no phase".
    pub phases: Vec<(u32, u64)>,
    /// Rounded bytes handed out.
    pub used_bytes: u64,
    /// Page bytes obtained.
    pub reserved_bytes: u64,
    /// Pages obtained.
    pub page_count: u64,
    /// The largest request.
    pub largest_alloc: u64,
    /// Whether a request failed on the memory limit.
    pub limit_hit: bool,
    /// Bytes per (phase slot, kind slot), non-zero entries only, sorted by phase then kind;
    /// empty unless the arena was created with `kinds_by_phase` on.
    pub phase_kind_bytes: Vec<(u32, u32, u64)>,
}

impl MethodCounts {
    /// Bytes requested, all kinds. Never wraps: it saturates at `u64::MAX`, which no record
    /// read by [`LogReader`] reaches (the reader refuses a record whose sums do not fit); see
    /// [`MethodCounts::checked_total_bytes`] for counts from elsewhere.
    pub fn total_bytes(&self) -> u64 {
        self.checked_total_bytes().unwrap_or(u64::MAX)
    }

    /// Allocations, all kinds; saturates as [`MethodCounts::total_bytes`] does.
    pub fn total_count(&self) -> u64 {
        self.checked_total_count().unwrap_or(u64::MAX)
    }

    /// Bytes requested, all kinds; `None` if the sum does not fit in 64 bits.
    pub fn checked_total_bytes(&self) -> Option<u64> {
        checked_sum(self.kinds.iter().map(|k| k.1))
    }

    /// Allocations, all kinds; `None` if the sum does not fit in 64 bits.
    pub fn checked_total_count(&self) -> Option<u64> {
        checked_sum(self.kinds.iter().map(|k| k.2))
    }

    /// Bytes of all phases; `None` if the sum does not fit in 64 bits.
    pub fn checked_phase_bytes(&self) -> Option<u64> {
        checked_sum(self.phases.iter().map(|p| p.1))
    }
}

/// The sum of `values`, `None` if it does not fit in 64 bits.
pub fn checked_sum(values: impl IntoIterator<Item = u64>) -> Option<u64> {
    values
        .into_iter()
        .try_fold(0u64, |sum, v| sum.checked_add(v))
}

/// The error for a sum over untrusted input that does not fit in 64 bits: it names `path` and
/// what was being added up.
pub fn sum_too_large(path: &Path, what: &str) -> Error {
    Error::new(
        crate::ErrorCode::Io,
        format!(
            "{}: the {what} add up to more than {} (2^64 - 1): the input holds impossible counts",
            path.display(),
            u64::MAX
        ),
    )
}

/// Adds `value` to `total`, or fails with [`sum_too_large`]: for sums over untrusted input,
/// which must never wrap.
#[inline]
pub fn add_checked(total: &mut u64, value: u64, path: &Path, what: &str) -> Result<(), Error> {
    *total = total
        .checked_add(value)
        .ok_or_else(|| sum_too_large(path, what))?;
    Ok(())
}

/// One record of a stats log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MethodRecord {
    /// The kind and phase names the counters refer to.
    pub schema: Shared<Schema>,
    /// Who.
    pub info: MethodInfo,
    /// What it allocated.
    pub counts: MethodCounts,
}

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
    schema: u64,
    tier: u64,
    new_schema: bool,
    new_tier: bool,
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

/// Writes the records of a log or a trace: each is one frame, preceded by the frames of the
/// schema and tier it refers to the first time, and reaches the output in one `write_all`.
///
/// A failed write never leaves the file unreadable: the dictionary does not take the entries
/// of the failed record, and when part of the record reached the output (a short write, `EFBIG`,
/// `ENOSPC` mid-record), every later write is refused until [`RecordWriter::remove_torn`]
/// has cut the output back to its last whole frame.
pub(crate) struct RecordWriter<W: Write> {
    out: W,
    dict: Dictionary,
    frame: TryBuf,
    payload: TryBuf,
    /// Bytes of whole frames (and the header) the output has taken.
    good: u64,
    /// Bytes of a record cut short after `good` that are still in the output.
    torn: Option<u64>,
}

impl<W: Write> RecordWriter<W> {
    /// Starts a file of `content`: writes its header.
    pub(crate) fn new(mut out: W, content: Content) -> io::Result<RecordWriter<W>> {
        let header = format::header_for(content, content.version());
        let (frame, payload) = (TryBuf::with_room(512)?, TryBuf::with_room(512)?);
        write_counted(&mut out, &header).map_err(|(e, _)| e)?;
        Ok(RecordWriter {
            out,
            dict: Dictionary::default(),
            frame,
            payload,
            good: header.len() as u64,
            torn: None,
        })
    }

    /// Appends a record of frame type `kind`: the method's info, then what `body` encodes.
    pub(crate) fn write(
        &mut self,
        kind: u8,
        schema: &Shared<Schema>,
        method: (Option<&str>, i64, Option<&str>),
        body: impl FnOnce(&mut TryBuf),
    ) -> io::Result<()> {
        let (name, context, tier) = method;
        self.write_raw(kind, schema, tier, |p, schema_id, tier_id| {
            put_varint(p, schema_id);
            put_signed(p, context);
            put_varint(p, tier_id);
            put_str(p, name.unwrap_or(""));
            body(p);
            Ok(())
        })
    }

    /// Appends a record of frame type `kind` whose whole payload `body` encodes, given the ids
    /// of its schema and tier. When `body` fails, nothing is written.
    #[inline(always)]
    pub(crate) fn write_raw(
        &mut self,
        kind: u8,
        schema: &Shared<Schema>,
        tier: Option<&str>,
        body: impl FnOnce(&mut TryBuf, u64, u64) -> io::Result<()>,
    ) -> io::Result<()> {
        self.write_raw_known(kind, schema, tier, |p, schema_id, tier_id| {
            body(p, schema_id, tier_id).map(|()| None)
        })
    }

    /// [`RecordWriter::write_raw`] whose `body` also returns the frame's checksum when it
    /// knows it: a copy, byte for byte, of a frame of type `kind` read and checked before.
    pub(crate) fn write_raw_known(
        &mut self,
        kind: u8,
        schema: &Shared<Schema>,
        tier: Option<&str>,
        body: impl FnOnce(&mut TryBuf, u64, u64) -> io::Result<Option<u32>>,
    ) -> io::Result<()> {
        if self.torn.is_some() {
            // What [`RecordWriter::refuse_torn`] says; kept short here, where no text may be
            // allocated (a JIT's writer checks [`RecordWriter::torn`] before it writes).
            return Err(io::Error::from(io::ErrorKind::Other));
        }
        self.frame.clear();
        let ids = self.dict.ids(schema, tier, &mut self.frame)?;
        let p = &mut self.payload;
        p.clear();
        let known = body(p, ids.schema, ids.tier)?;
        self.send_frame(kind, known)?;
        self.dict.commit(ids, schema);
        Ok(())
    }

    /// Appends a frame of type `kind` that names no schema or tier, whose whole payload
    /// `body` encodes.
    pub(crate) fn write_plain(
        &mut self,
        kind: u8,
        body: impl FnOnce(&mut TryBuf),
    ) -> io::Result<()> {
        if self.torn.is_some() {
            return Err(io::Error::from(io::ErrorKind::Other));
        }
        self.frame.clear();
        self.payload.clear();
        body(&mut self.payload);
        self.send_frame(kind, None)
    }

    /// Frames `self.payload` as type `kind` after what `self.frame` holds (`known`: the
    /// frame's checksum, when it is a copy of one read and checked) and writes the frame to the
    /// output, counting it as good once whole, or the part of it that the output took as torn.
    fn send_frame(&mut self, kind: u8, known: Option<u32>) -> io::Result<()> {
        let p = &self.payload;
        p.check()?;
        self.frame.reserve(p.len() + FRAME_MOST)?;
        match known {
            Some(crc) => format::put_frame_known(&mut self.frame, kind, p.as_slice(), crc),
            None => put_frame(&mut self.frame, kind, p.as_slice()),
        }
        self.frame.check()?;
        match write_counted(&mut self.out, self.frame.as_slice()) {
            Ok(()) => {
                self.good += self.frame.len() as u64;
                Ok(())
            }
            Err((e, taken)) => {
                if taken > 0 {
                    self.torn = Some(taken as u64);
                }
                Err(e)
            }
        }
    }

    /// Refuses a write, with the numbers in its message, when a record cut short could not be
    /// removed: the check of the public writers (whose message may take an allocation that
    /// aborts when memory runs out; a JIT's writer says the same from [`RecordWriter::torn`]).
    pub(crate) fn refuse_torn(&self) -> io::Result<()> {
        match self.torn {
            Some(torn) => Err(io::Error::other(format!(
                "an earlier record was cut short ({torn} of its bytes follow the last whole record, which ends at byte {}) and could not be removed, so no record is written after it",
                self.good
            ))),
            None => Ok(()),
        }
    }

    /// When a record cut short could not be removed (so every write is refused): the bytes of
    /// it that follow the last whole record, and where that record ends.
    pub(crate) fn torn(&self) -> Option<(u64, u64)> {
        self.torn.map(|torn| (torn, self.good))
    }

    /// After a failed [`RecordWriter::write`] whose record reached the output in part, cuts
    /// the output back to its last whole frame with `truncate(output, length)`, which must
    /// also leave the output's position at `length`. Then writing may go on. Does nothing
    /// when no record is cut short; on failure, writes stay refused.
    pub(crate) fn remove_torn(
        &mut self,
        truncate: impl FnOnce(&mut W, u64) -> io::Result<()>,
    ) -> io::Result<()> {
        if self.torn.is_some() {
            truncate(&mut self.out, self.good)?;
            self.torn = None;
        }
        Ok(())
    }

    /// Flushes and returns the output.
    pub(crate) fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// `write_all` that says, on failure, how many bytes the output took before it failed.
fn write_counted(out: &mut impl Write, mut bytes: &[u8]) -> Result<(), (io::Error, usize)> {
    let mut taken = 0;
    while !bytes.is_empty() {
        match out.write(bytes) {
            Ok(0) => {
                // A kind with no text of its own: it allocates nothing.
                return Err((io::Error::from(io::ErrorKind::WriteZero), taken));
            }
            Ok(n) => {
                taken += n;
                bytes = bytes.get(n..).unwrap_or_default();
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err((e, taken)),
        }
    }
    Ok(())
}

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
    records: RecordWriter<W>,
    /// The last record written: the next one's context and name are written relative to it.
    prev: record::Prev,
    /// Buffers reused from record to record.
    scratch: record::Scratch,
    /// The build id of the last [`FRAME_BUILD`] written, if any.
    build: Vec<u8>,
    /// Whether a build frame was written (`build` then holds its id).
    build_written: bool,
}

impl<W: Write> LogWriter<W> {
    /// Starts a log: writes the file header.
    pub fn new(out: W) -> io::Result<LogWriter<W>> {
        Ok(LogWriter {
            records: RecordWriter::new(out, Content::Log)?,
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
                record::encode(
                    p,
                    (schema_id, tier_id),
                    kinds,
                    phases,
                    prev,
                    name,
                    context,
                    c,
                    scratch,
                )
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
    /// `warning` being what its reader said of it ([`LogReader::warnings`]): `jitarena merge`
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

/// Reads schemas and tiers as they come, for log and trace readers.
pub(crate) struct DictionaryReader {
    schemas: Vec<Shared<Schema>>,
    tiers: Vec<Arc<str>>,
    /// For traces, the arena's limits on kinds and phases (their events replay through an
    /// arena); `None` for logs, whose readers count any number of kinds.
    arena_limits: Option<(usize, usize)>,
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
    pub(crate) fn take(
        &mut self,
        frame: &format::Frame,
        reader: &FrameReader,
    ) -> Result<bool, Error> {
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
                    None => Schema::read(kinds, phases),
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
fn cut_name(name: &str, max: usize, into: &mut String) {
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

/// Where a [`LogReader`] stands between two records (see [`LogReader::mark`]).
#[derive(Debug, Clone)]
pub struct Mark {
    offset: u64,
    prev: record::Prev,
    schemas: usize,
    tiers: usize,
}

/// The schemas and tiers a [`LogReader`] has read (see [`LogReader::dictionary`]).
#[derive(Debug, Clone, Default)]
pub struct ReaderDictionary {
    schemas: Vec<Shared<Schema>>,
    tiers: Vec<Arc<str>>,
}

impl ReaderDictionary {
    /// The schemas (kind and phase lists) the log named, in order.
    pub fn schemas(&self) -> &[Shared<Schema>] {
        &self.schemas
    }
}

/// Reads a stats log record by record.
pub struct LogReader {
    frames: FrameReader,
    dict: DictionaryReader,
    /// Version 2: the current record's context and name (each record's are relative to the
    /// previous one's, so every method frame advances them, decoded or not).
    prev: record::Prev,
    /// Version 2: the current record's fields before its counters.
    head: record::Head,
    /// Reused by the checks of kinds by phase.
    scratch: Cell<Vec<u64>>,
    /// Notes of logs cut short met so far ([`FRAME_CUT_NOTE`]).
    cut_notes: usize,
    /// Version 2: the current record's name as handed out, when `prev.name` is longer than
    /// [`NAME_SHOWN_MAX`] (see [`LogReader::name`]).
    long_name: String,
    /// The build ids named so far ([`FRAME_BUILD`]).
    builds: Vec<String>,
}

impl LogReader {
    /// Opens a stats log, checking its header. Reads format versions 1 and 2.
    pub fn open(path: &Path) -> Result<LogReader, Error> {
        Ok(LogReader {
            frames: FrameReader::open(path, Content::Log)?,
            dict: DictionaryReader::for_logs(),
            prev: record::Prev::default(),
            head: record::Head::default(),
            scratch: Cell::new(Vec::new()),
            cut_notes: 0,
            long_name: String::new(),
            builds: Vec::new(),
        })
    }

    /// Opens a log for a reading beside another that checks every record of it (before it, or
    /// after it and before anything is made of this one): the checksums of its records are
    /// checked only for those decoded ([`LogReader::decode_current`]), not for those passed
    /// over (schema and tier frames are checked as ever). memdiff's later passes read each
    /// file again for a few records; merge's first pass reads only the records' heads.
    pub fn open_again(path: &Path) -> Result<LogReader, Error> {
        let mut reader = LogReader::open(path)?;
        reader.frames.defer_checks();
        Ok(reader)
    }

    /// Where the reader stands between two records: a [`LogReader::resume`] from here reads
    /// what this reader's next [`LogReader::next_raw`] calls read.
    pub fn mark(&self) -> Mark {
        Mark {
            offset: self.frames.next_offset(),
            prev: self.prev.clone(),
            schemas: self.dict.schemas.len(),
            tiers: self.dict.tiers.len(),
        }
    }

    /// The bytes a [`LogReader::mark`] taken now holds besides its fixed size: the name of
    /// the record the reader is on, which a log can make long at little cost per record (a
    /// record shares its name with the previous one's).
    pub fn mark_bytes(&self) -> usize {
        self.prev.name.len()
    }

    /// The schemas and tiers this reader has read so far, for [`LogReader::resume`].
    pub fn dictionary(&self) -> ReaderDictionary {
        ReaderDictionary {
            schemas: self.dict.schemas.clone(),
            tiers: self.dict.tiers.clone(),
        }
    }

    /// Opens `path` again, as [`LogReader::open_again`] does, at `mark`: a mark that a reading
    /// of the same file took, whose schemas and tiers `dictionary` holds (taken by that reading
    /// at the mark or later). Seeking needs a file, not a pipe.
    pub fn resume(
        path: &Path,
        mark: &Mark,
        dictionary: &ReaderDictionary,
    ) -> Result<LogReader, Error> {
        let mut reader = LogReader::open_again(path)?;
        let (schemas, tiers) = (
            dictionary.schemas.get(..mark.schemas),
            dictionary.tiers.get(..mark.tiers),
        );
        let (Some(schemas), Some(tiers)) = (schemas, tiers) else {
            return Err(Error::new(
                crate::ErrorCode::Internal,
                format!(
                    "{}: a mark names schemas or tiers its dictionary does not hold",
                    path.display()
                ),
            ));
        };
        reader.frames.seek_to(mark.offset)?;
        reader.prev = mark.prev.clone();
        reader.dict.schemas = schemas.to_vec();
        reader.dict.tiers = tiers.to_vec();
        Ok(reader)
    }

    /// The log's format version (1 or 2).
    pub fn version(&self) -> u8 {
        self.frames.version()
    }

    /// Warnings so far: a cut-short last record, and the notes a merge left of the logs cut
    /// short whose records this log holds ([`LogWriter::write_cut_note`]). A log with any
    /// warning is one cut short, or merged from one.
    pub fn warnings(&self) -> &[String] {
        &self.frames.warnings
    }

    /// The build ids the log named so far (`jitarena_config.build_id`), in the order first
    /// named, each once; at most 64.
    pub fn builds(&self) -> &[String] {
        &self.builds
    }

    /// The reader's work so far, in bytes read or examined (see
    /// [`FrameReader::bytes_scanned`]).
    pub fn bytes_scanned(&self) -> u64 {
        self.frames.bytes_scanned()
    }

    /// The next record, `None` at the end.
    pub fn next_record(&mut self) -> Result<Option<MethodRecord>, Error> {
        let mut record = MethodRecord::default();
        Ok(self.next_into(&mut record)?.then_some(record))
    }

    /// Reads the next record into `record`, reusing its buffers; false at the end.
    pub fn next_into(&mut self, record: &mut MethodRecord) -> Result<bool, Error> {
        if !self.next_raw()? {
            return Ok(false);
        }
        self.decode_current(record)?;
        Ok(true)
    }

    /// Moves to the next record, checking its frame but not decoding it; false at the end.
    /// [`LogReader::decode_current`] decodes it when wanted.
    pub fn next_raw(&mut self) -> Result<bool, Error> {
        while self.frames.advance()? {
            let frame = self.frames.frame();
            if frame.kind != FRAME_METHOD {
                self.frames.check_current()?;
            }
            if frame.kind == FRAME_CUT_NOTE {
                let warning = self.cut_note_warning()?;
                self.frames.warnings.extend(warning);
                continue;
            }
            if frame.kind == FRAME_BUILD {
                self.take_build()?;
                continue;
            }
            if self.dict.take(frame, &self.frames)? || frame.kind != FRAME_METHOD {
                continue; // schema and tier frames; unknown frame types are skipped
            }
            if self.frames.version() >= 2 {
                self.head = record::Head::read(&frame.payload, &mut self.prev).map_err(|e| {
                    // A damaged frame is named as such, checked or not.
                    match self.frames.check_current() {
                        Err(damaged) => damaged,
                        Ok(()) => self.frames.corrupt(frame.offset, e.0),
                    }
                })?;
                if self.prev.name.len() > NAME_SHOWN_MAX {
                    cut_name(&self.prev.name, NAME_SHOWN_MAX, &mut self.long_name);
                }
            }
            return Ok(true);
        }
        Ok(false)
    }

    /// Version 2: the context number of the record [`LogReader::next_raw`] moved to, known
    /// without decoding it (`None` for a version-1 log, whose records must be decoded).
    pub fn current_context(&self) -> Option<i64> {
        (self.frames.version() >= 2).then_some(self.prev.context)
    }

    /// Version 2: the name of the record [`LogReader::next_raw`] moved to, as handed out: at
    /// most [`NAME_SHOWN_MAX`] bytes.
    pub(crate) fn name(&self) -> &str {
        match self.prev.name.len() > NAME_SHOWN_MAX {
            true => &self.long_name,
            false => &self.prev.name,
        }
    }

    /// The warning of the current frame, a note of a log cut short: `None` past the notes
    /// kept, but the first past them says how many there are.
    /// Takes the build id of the current frame, a build frame, into [`LogReader::builds`]: at
    /// most [`NAME_SHOWN_MAX`] bytes of it (cut at a character).
    fn take_build(&mut self) -> Result<(), Error> {
        let frame = self.frames.frame();
        let mut p = Payload::new(&frame.payload);
        let build = p
            .str()
            .and_then(|b| match p.is_done() {
                true => Ok(b),
                false => Err(Malformed("it has bytes after its last field")),
            })
            .map_err(|e| self.frames.corrupt(frame.offset, e.0))?;
        if self.builds.len() < BUILDS_KEPT && !self.builds.iter().any(|b| b == build) {
            let mut kept = build.to_string();
            if build.len() > NAME_SHOWN_MAX {
                cut_name(build, NAME_SHOWN_MAX, &mut kept);
            }
            if !self.builds.contains(&kept) {
                self.builds.push(kept);
            }
        }
        Ok(())
    }

    fn cut_note_warning(&mut self) -> Result<Option<String>, Error> {
        let frame = self.frames.frame();
        let mut p = Payload::new(&frame.payload);
        let note = p
            .str()
            .and_then(|note| match p.is_done() {
                true => Ok(note),
                false => Err(Malformed("it has bytes after its last field")),
            })
            .map_err(|e| self.frames.corrupt(frame.offset, e.0))?;
        self.cut_notes += 1;
        let path = self.frames.path().display();
        if self.cut_notes > CUT_NOTES_KEPT {
            return Ok((self.cut_notes == CUT_NOTES_KEPT + 1).then(|| {
                format!("{path}: holds the records of more logs that were cut short; the warnings of the first {CUT_NOTES_KEPT} are shown")
            }));
        }
        // A note is any text: shown without control or direction characters, and not too long.
        // Escaped only as far as it is shown: an escape takes up to 10 bytes per byte.
        let mut shown = String::new();
        for c in note.chars() {
            let escaped = c.escape_debug();
            if shown.len() + escaped.len() > CUT_NOTE_SHOWN {
                shown.push_str("...");
                break;
            }
            shown.extend(escaped);
        }
        Ok(Some(format!(
            "{path}: holds the records of a log that was cut short (at byte {} of this file, a note of the merge that wrote it): {shown}",
            frame.offset
        )))
    }

    /// Decodes the record [`LogReader::next_raw`] moved to.
    pub fn decode_current(&self, record: &mut MethodRecord) -> Result<(), Error> {
        self.frames.check_current()?;
        let frame = self.frames.frame();
        self.decode(&frame.payload, record)
            .map_err(|e| self.frames.corrupt(frame.offset, e.0))
    }

    fn decode(&self, payload: &[u8], record: &mut MethodRecord) -> Result<(), Malformed> {
        if self.frames.version() == 1 {
            return self.decode_v1(payload, record);
        }
        let h = &self.head;
        let schema = self.ids_into(record)?;
        let mut scratch = self.scratch.take();
        let result = record::decode_counts(
            payload,
            h,
            schema.kinds.len(),
            schema.phases.len(),
            &mut record.counts,
            &mut scratch,
        );
        self.scratch.set(scratch);
        result
    }

    /// Sets the schema and identity of the current version-2 record in `record`; returns the
    /// schema.
    fn ids_into(&self, record: &mut MethodRecord) -> Result<&Shared<Schema>, Malformed> {
        let h = &self.head;
        let schema = self
            .dict
            .ids_into(h.schema, h.tier, self.name(), &mut record.info)?;
        record.info.context = self.prev.context;
        if !Shared::ptr_eq(&record.schema, schema) {
            record.schema = Shared::clone(schema);
        }
        Ok(schema)
    }

    /// A version-1 record: every field in full.
    fn decode_v1(&self, payload: &[u8], record: &mut MethodRecord) -> Result<(), Malformed> {
        let mut p = Payload::new(payload);
        let schema = self.dict.info_into(&mut p, &mut record.info)?;
        if !Shared::ptr_eq(&record.schema, schema) {
            record.schema = Shared::clone(schema);
        }
        let flags = p.varint()?;
        let c = &mut record.counts;
        c.limit_hit = flags & 1 != 0;
        c.used_bytes = p.varint()?;
        c.reserved_bytes = p.varint()?;
        c.page_count = p.varint()?;
        c.largest_alloc = p.varint()?;
        // Counts are bounded by the schema and by the bytes left (a kind takes at least
        // three, a phase two).
        let kind_slots = schema.kinds.len() as u64 + 1;
        let n = p.count(kind_slots.min(p.remaining() as u64 / 3))?;
        c.kinds.clear();
        c.kinds.reserve(n);
        let (mut next, mut bytes_sum, mut count_sum) = (0u64, 0u64, 0u64);
        for _ in 0..n {
            let slot = next_slot(next, p.varint()?, kind_slots, KIND_OUTSIDE)?;
            let (bytes, count) = (p.varint()?, p.varint()?);
            bytes_sum = bytes_sum.checked_add(bytes).ok_or(TOO_MANY_BYTES)?;
            count_sum = count_sum.checked_add(count).ok_or(Malformed(
                "its allocation counts add up to more than 2^64 - 1",
            ))?;
            c.kinds.push((slot, bytes, count));
            next = u64::from(slot) + 1;
        }
        let phase_slots = schema.phases.len() as u64 + 1;
        let n = p.count(phase_slots.min(p.remaining() as u64 / 2))?;
        c.phases.clear();
        c.phases.reserve(n);
        let (mut next, mut phase_sum) = (0u64, 0u64);
        for _ in 0..n {
            let slot = next_slot(next, p.varint()?, phase_slots, PHASE_OUTSIDE)?;
            let bytes = p.varint()?;
            phase_sum = phase_sum.checked_add(bytes).ok_or(TOO_MANY_BYTES)?;
            c.phases.push((slot, bytes));
            next = u64::from(slot) + 1;
        }
        c.phase_kind_bytes.clear();
        if !p.is_done() {
            return Err(Malformed("it has bytes after its last field"));
        }
        Ok(())
    }
}

const TOO_MANY_BYTES: Malformed = Malformed("its byte counts add up to more than 2^64 - 1");
const KIND_OUTSIDE: &str =
    "a kind is outside its schema (a slot delta overflows or runs past the last kind)";
const PHASE_OUTSIDE: &str =
    "a phase is outside its schema (a slot delta overflows or runs past the last phase)";

/// The slot `delta` after `next` (the slot after the previous one), which must lie below
/// `slots`: slots increase, so that none repeats, and a delta cannot wrap around; `outside`
/// says what is wrong otherwise.
fn next_slot(next: u64, delta: u64, slots: u64, outside: &'static str) -> Result<u32, Malformed> {
    let slot = next
        .checked_add(delta)
        .filter(|&s| s < slots)
        .ok_or(Malformed(outside))?;
    u32::try_from(slot).map_err(|_| Malformed(outside))
}

/// Reads every record of a log into memory, returning them with the reader's warnings.
pub fn read_all(path: &Path) -> Result<(Vec<MethodRecord>, Vec<String>), Error> {
    let mut reader = LogReader::open(path)?;
    let mut records = Vec::new();
    while let Some(r) = reader.next_record()? {
        records.push(r);
    }
    Ok((records, reader.warnings().to_vec()))
}
