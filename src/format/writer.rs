//! Writing the frames of a log or a trace so that a failed write never leaves the file
//! unreadable: a record and the dictionary frames it needs reach the output in one
//! `write_all`, and a record cut short (a short write, `EFBIG`, `ENOSPC` mid-record) is cut
//! back before anything else is written.

use std::io::{self, Write};

use super::dictionary::Dictionary;
use super::put::{put_frame, put_frame_known, put_signed, put_str, put_varint, TryBuf, FRAME_MOST};
use super::spec::header_for;
use super::spec::Content;
use crate::counters::Schema;
use crate::shared::Shared;

/// Writes the records of a log or a trace: each is one frame, preceded by the frames of the
/// schema and tier it refers to the first time, and reaches the output in one `write_all`.
///
/// A failed write never leaves the file unreadable: the dictionary does not take the entries
/// of the failed record, and when part of the record reached the output (a short write, `EFBIG`,
/// `ENOSPC` mid-record), every later write is refused until [`FrameWriter::remove_torn`]
/// has cut the output back to its last whole frame.
pub(crate) struct FrameWriter<W: Write> {
    out: W,
    dict: Dictionary,
    frame: TryBuf,
    payload: TryBuf,
    /// Bytes of whole frames (and the header) the output has taken.
    good: u64,
    /// Bytes of a record cut short after `good` that are still in the output.
    torn: Option<u64>,
}

impl<W: Write> FrameWriter<W> {
    /// Starts a file of `content`: writes its header.
    pub(crate) fn new(out: W, content: Content) -> io::Result<FrameWriter<W>> {
        FrameWriter::with_version(out, content, content.written_version())
    }

    /// Starts a file of `content` whose header says format `version`.
    pub(crate) fn with_version(
        mut out: W,
        content: Content,
        version: u8,
    ) -> io::Result<FrameWriter<W>> {
        let header = header_for(content, version);
        let (frame, payload) = (TryBuf::with_room(512)?, TryBuf::with_room(512)?);
        write_counted(&mut out, &header).map_err(|(e, _)| e)?;
        Ok(FrameWriter {
            out,
            dict: Dictionary::default(),
            frame,
            payload,
            good: header.len() as u64,
            torn: None,
        })
    }

    /// Appends a record of frame type `kind`: the method's info, then what `body` encodes
    /// into its second buffer. `body` may also put whole frames of its own (a trace's module
    /// frames) into its first, after the dictionary's frames and before the record's: all of
    /// them reach the output in the record's one write. When `body` fails, nothing is written.
    pub(crate) fn write_with_frames(
        &mut self,
        kind: u8,
        schema: &Shared<Schema>,
        method: (Option<&str>, i64, Option<&str>),
        body: impl FnOnce(&mut TryBuf, &mut TryBuf) -> io::Result<()>,
    ) -> io::Result<()> {
        let (name, context, tier) = method;
        if self.torn.is_some() {
            return Err(io::Error::from(io::ErrorKind::Other));
        }
        self.frame.clear();
        let ids = self.dict.ids(schema, tier, &mut self.frame)?;
        let p = &mut self.payload;
        p.clear();
        put_varint(p, ids.schema);
        put_signed(p, context);
        put_varint(p, ids.tier);
        put_str(p, name.unwrap_or(""));
        body(&mut self.frame, p)?;
        self.frame.check()?;
        self.send_frame(kind, None)?;
        self.dict.commit(ids, schema);
        Ok(())
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

    /// [`FrameWriter::write_raw`] whose `body` also returns the frame's checksum when it
    /// knows it: a copy, byte for byte, of a frame of type `kind` read and checked before.
    pub(crate) fn write_raw_known(
        &mut self,
        kind: u8,
        schema: &Shared<Schema>,
        tier: Option<&str>,
        body: impl FnOnce(&mut TryBuf, u64, u64) -> io::Result<Option<u32>>,
    ) -> io::Result<()> {
        if self.torn.is_some() {
            // What [`FrameWriter::refuse_torn`] says; kept short here, where no text may be
            // allocated (a JIT's writer checks [`FrameWriter::torn`] before it writes).
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

    /// Appends a frame of type `kind` that names no schema or tier, whose payload `body`
    /// encodes into its second buffer, after the whole frames it may put into its first (a
    /// trace's module frames): all of them reach the output in one write. When `body` fails,
    /// nothing is written.
    pub(crate) fn write_unnamed(
        &mut self,
        kind: u8,
        body: impl FnOnce(&mut TryBuf, &mut TryBuf) -> io::Result<()>,
    ) -> io::Result<()> {
        if self.torn.is_some() {
            return Err(io::Error::from(io::ErrorKind::Other));
        }
        self.frame.clear();
        self.payload.clear();
        body(&mut self.frame, &mut self.payload)?;
        self.frame.check()?;
        self.send_frame(kind, None)
    }

    /// The output, for a change in place that is no frame (a trace's header's version).
    pub(crate) fn output(&mut self) -> &mut W {
        &mut self.out
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
            Some(crc) => put_frame_known(&mut self.frame, kind, p.as_slice(), crc),
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
    /// aborts when memory runs out; a JIT's writer says the same from [`FrameWriter::torn`]).
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

    /// After a failed [`FrameWriter::write_with_frames`] whose record reached the output in part, cuts
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
