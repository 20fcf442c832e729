//! Reading a stats log record by record: every record checked, or only its frame (and decoded
//! later, or copied), from a mark left by an earlier reading.

use std::cell::Cell;
use std::path::Path;
use std::sync::Arc;

use crate::counters::{MethodRecord, Schema};
use crate::error::Error;
use crate::format::dictionary::{cut_name, DictionaryReader, NAME_SHOWN_MAX};
use crate::format::record;
use crate::format::spec::{FRAME_BUILD, FRAME_CUT_NOTE, FRAME_FAILED, FRAME_METHOD};
use crate::format::{Content, FrameReader, Malformed, Payload};
use crate::shared::Shared;

/// The build ids a reader keeps, at most (a log names one, a merged log a few).
const BUILDS_KEPT: usize = 64;
/// The notes of logs cut short a reader keeps as warnings, at most; it says how many more
/// there were.
const CUT_NOTES_KEPT: usize = 100;
/// The bytes of a note's text a warning shows, at most.
const CUT_NOTE_SHOWN: usize = 2000;
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
    pub(super) frames: FrameReader,
    pub(super) dict: DictionaryReader,
    /// Version 2: the current record's context and name (each record's are relative to the
    /// previous one's, so every method frame advances them, decoded or not).
    pub(super) prev: record::Prev,
    /// Version 2: the current record's fields before its counters.
    pub(super) head: record::Head,
    /// Reused by the checks of kinds by phase.
    pub(super) scratch: Cell<Vec<u64>>,
    /// Notes of logs cut short met so far ([`FRAME_CUT_NOTE`]).
    pub(super) cut_notes: usize,
    /// Version 2: the current record's name as handed out, when `prev.name` is longer than
    /// [`NAME_SHOWN_MAX`] (see [`LogReader::name`]).
    pub(super) long_name: String,
    /// The build ids named so far ([`FRAME_BUILD`]).
    pub(super) builds: Vec<String>,
    /// The failed compiles noted so far ([`FRAME_FAILED`]), in order.
    pub(super) failed: Vec<FailedCompile>,
}

/// A compile that the JIT said failed (`jitarena_method.failed`), noted in the log in place of
/// a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedCompile {
    /// The context number, -1 if unknown.
    pub context: i64,
    /// The method's name (cut as record names are), if known.
    pub name: Option<String>,
    /// The tier, if known.
    pub tier: Option<String>,
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
            failed: Vec::new(),
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
                crate::error::ErrorCode::Internal,
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
    /// short whose records this log holds ([`LogWriter::write_cut_note`](super::LogWriter::write_cut_note)). A log with any
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
            if frame.kind == FRAME_FAILED {
                self.take_failed()?;
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

    /// Takes the failed compile of the current frame into [`LogReader::failed_compiles`].
    fn take_failed(&mut self) -> Result<(), Error> {
        let frame = self.frames.frame();
        let mut p = Payload::new(&frame.payload);
        let read = |p: &mut Payload<'_>| -> Result<FailedCompile, Malformed> {
            let context = p.signed()?;
            let text = |s: &str| {
                let mut kept = s.to_string();
                if s.len() > NAME_SHOWN_MAX {
                    cut_name(s, NAME_SHOWN_MAX, &mut kept);
                }
                (!s.is_empty()).then_some(kept)
            };
            let name = text(p.str()?);
            let tier = text(p.str()?);
            match p.is_done() {
                true => Ok(FailedCompile {
                    context,
                    name,
                    tier,
                }),
                false => Err(Malformed("it has bytes after its last field")),
            }
        };
        let failed = read(&mut p).map_err(|e| self.frames.corrupt(frame.offset, e.0))?;
        self.failed.push(failed);
        Ok(())
    }

    /// The failed compiles the log noted so far, in order (all of them once it is read
    /// through).
    pub fn failed_compiles(&self) -> &[FailedCompile] {
        &self.failed
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

    pub(super) fn decode(
        &self,
        payload: &[u8],
        record: &mut MethodRecord,
    ) -> Result<(), Malformed> {
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
    pub(super) fn ids_into(&self, record: &mut MethodRecord) -> Result<&Shared<Schema>, Malformed> {
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

use crate::format::spec::{
    KIND_PAST_DELTA as KIND_OUTSIDE, PHASE_PAST_DELTA as PHASE_OUTSIDE, TOO_MANY_BYTES,
};

/// The slot `delta` after `next` (the slot after the previous one), which must lie below
/// `slots`: slots increase, so that none repeats, and a delta cannot wrap around; `outside`
/// says what is wrong otherwise.
fn next_slot(next: u64, delta: u64, slots: u64, outside: Malformed) -> Result<u32, Malformed> {
    let slot = next
        .checked_add(delta)
        .filter(|&s| s < slots)
        .ok_or(Malformed(outside.0))?;
    u32::try_from(slot).map_err(|_| Malformed(outside.0))
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
/// The error for a sum over untrusted input that does not fit in 64 bits: it names `path` and
/// what was being added up.
pub fn sum_too_large(path: &Path, what: &str) -> Error {
    Error::new(
        crate::error::ErrorCode::Io,
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
