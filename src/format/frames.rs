//! Reading a file's frames in order, each checksum checked; a file cut short inside its last
//! frame reads back every earlier frame with a warning; a frame whose checksum fails is an
//! error, because what follows it cannot be trusted.

use std::io;
use std::path::{Path, PathBuf};

use super::payload::Payload;
use super::put::put_varint;
use super::source::{io_error, read_up_to, Input, Source};
use super::spec::{is_header_start, Content, HEADER_LEN, MAGIC, MAX_FRAME, VERSION_AT};
use crate::error::{Error, ErrorCode};

/// What a frame whose checksum does not match is called.
const CHECKSUM_MISMATCH: &str = "checksum mismatch (the file was damaged)";

/// One frame read from a file.
pub struct Frame {
    /// The frame type.
    pub kind: u8,
    /// Where the frame starts in the file.
    pub offset: u64,
    /// The payload.
    pub payload: Vec<u8>,
}

/// Reads the frames of one file in order, checking each checksum. The file is read as a
/// stream, to its current end: a log still being appended reads as what is complete so far
/// (with a warning about a last record not yet whole), and pipes read like files.
pub struct FrameReader {
    path: PathBuf,
    version: u8,
    input: Input,
    offset: u64,
    /// Warnings gathered while reading (a cut-short last frame).
    pub warnings: Vec<String>,
    done: bool,
    frame: Frame,
    scanned: u64,
    /// Whether checksums wait for [`FrameReader::check_current`] (see
    /// [`FrameReader::defer_checks`]).
    deferred: bool,
    /// The current frame's checksum, while it is not yet checked.
    unchecked: Option<[u8; 4]>,
    /// The current frame's checksum, once checked.
    checked: Option<u32>,
}

/// The first read of a frame's body: larger frames are read in growing steps, so that memory
/// follows the bytes actually there, not the length a frame claims.
const FIRST_READ: usize = 1 << 16;

impl FrameReader {
    /// Opens `path`, checking that it is a jitarena file of `content` and a known version.
    pub fn open(path: &Path, content: Content) -> Result<FrameReader, Error> {
        FrameReader::from_source(Source::open(path)?, content)
    }

    /// Reads an opened file, checking that it is a jitarena file of `content` and a known
    /// version.
    pub fn from_source(source: Source, content: Content) -> Result<FrameReader, Error> {
        let path = source.path.clone();
        let head = &source.head;
        let bad = |what: String| Error::new(ErrorCode::Io, format!("{}: {what}", path.display()));
        if head.len() < HEADER_LEN && is_header_start(head, content) {
            // A writer stopped before its header was whole (a JIT killed as it opened its log,
            // or a disk full at its first write): a file of no records, cut short.
            let version = head
                .get(VERSION_AT as usize)
                .copied()
                .unwrap_or(content.version());
            let warning = format!(
                "{}: the file is cut short inside its header, after {} of its {HEADER_LEN} bytes, as by a crash or a kill as it was begun; it holds no records",
                path.display(),
                head.len()
            );
            let mut reader = FrameReader::new(path, version, source.into_input());
            reader.done = true;
            reader.warnings.push(warning);
            return Ok(reader);
        }
        if head.len() < HEADER_LEN || &head[..8] != MAGIC {
            return Err(bad(format!(
                "not a jitarena {} (it does not start with \"JITARENA\")",
                content.name()
            )));
        }
        if head[8] != content.byte() {
            let other = match head[8] {
                b'L' => "stats log",
                b'T' => "trace",
                _ => "file of unknown content",
            };
            return Err(bad(format!(
                "this is a jitarena {other}, not a {}",
                content.name()
            )));
        }
        let version = head[VERSION_AT as usize];
        if version == 0 || version > content.version() {
            let reads = match content.version() {
                1 => "version 1".to_string(),
                v => format!("versions 1 to {v}"),
            };
            return Err(bad(format!(
                "format version {version} is not readable by this jitarena, which reads {reads}: use a jitarena at least as new as the writer"
            )));
        }
        let mut input = source.into_input();
        let mut skip = [0u8; HEADER_LEN];
        read_up_to(&mut input, &mut skip).map_err(|e| io_error(&path, "read", &e))?;
        Ok(FrameReader::new(path, version, input))
    }

    /// A reader of `input` after its header, of format `version`.
    fn new(path: PathBuf, version: u8, input: Input) -> FrameReader {
        FrameReader {
            path,
            version,
            input,
            offset: HEADER_LEN as u64,
            warnings: Vec::new(),
            done: false,
            frame: Frame {
                kind: 0,
                offset: 0,
                payload: Vec::new(),
            },
            scanned: HEADER_LEN as u64,
            deferred: false,
            unchecked: None,
            checked: None,
        }
    }

    /// From now on, a frame that lies whole in the read buffer has its checksum checked only
    /// when [`FrameReader::check_current`] is called: for a second reading of a file that a
    /// first reading checked whole, which decodes only a few of its frames. Every frame's
    /// length is still checked, and a frame read past the buffer is checked at once.
    pub fn defer_checks(&mut self) {
        self.deferred = true;
    }

    /// Checks the current frame's checksum if [`FrameReader::advance`] deferred it; the same
    /// error as `advance` gives when it does not.
    pub fn check_current(&self) -> Result<(), Error> {
        let Some(crc) = self.unchecked else {
            return Ok(());
        };
        let f = &self.frame;
        // The length as the frame has it: advance refuses any other encoding of it.
        let mut head = vec![f.kind];
        put_varint(&mut head, f.payload.len() as u64);
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(&head);
        hasher.update(&f.payload);
        if hasher.finalize().to_le_bytes() != crc {
            return Err(self.corrupt(f.offset, CHECKSUM_MISMATCH));
        }
        Ok(())
    }

    /// The file being read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's format version (from its header).
    pub fn version(&self) -> u8 {
        self.version
    }

    /// Bytes read from the file plus bytes examined while looking for whole frames after a
    /// length that runs past the end: the reader's work, which stays within a small multiple of
    /// the file's size whatever the bytes are.
    pub fn bytes_scanned(&self) -> u64 {
        self.scanned
    }

    /// Where the next frame starts in the file.
    pub fn next_offset(&self) -> u64 {
        self.offset
    }

    /// Moves to byte `offset` of the file (past the header), where the next frame is read:
    /// for a file (not a pipe) whose frames an earlier reading found there.
    pub fn seek_to(&mut self, offset: u64) -> Result<(), Error> {
        use io::{BufRead, Seek};
        if offset < HEADER_LEN as u64 {
            return Err(self.corrupt(offset, "a frame cannot start inside the file's header"));
        }
        // Drop what is buffered; the header's copy is spent; the file moves to `offset`.
        let buffered = self.input.buffer().len();
        self.input.consume(buffered);
        let (head, file) = self.input.get_mut().get_mut();
        head.set_position(head.get_ref().len() as u64);
        file.seek(io::SeekFrom::Start(offset))
            .map_err(|e| io_error(&self.path, "seek in", &e))?;
        self.offset = offset;
        self.done = false;
        self.unchecked = None;
        Ok(())
    }

    /// An error about the frame at `offset`.
    pub fn corrupt(&self, offset: u64, what: &str) -> Error {
        Error::new(
            ErrorCode::Io,
            format!(
                "{}: record at byte {offset} is corrupt: {what}",
                self.path.display()
            ),
        )
    }

    /// Reads the next frame into [`FrameReader::frame`]; false at the end. A frame cut short
    /// by the end of the file ends the read with a warning; a damaged one is an error. The
    /// frame's buffer is reused from frame to frame.
    pub fn advance(&mut self) -> Result<bool, Error> {
        // Whatever happens below, the checksum of the frame before is no longer the current's.
        self.checked = None;
        if self.done {
            return Ok(false);
        }
        if self.advance_in_buffer()? {
            return Ok(true);
        }
        let start = self.offset;
        let mut head = [0u8; 11];
        let mut head_len = 0;
        // Type byte, then the length's LEB128 bytes.
        loop {
            let n = read_up_to(&mut self.input, &mut head[head_len..head_len + 1])
                .map_err(|e| io_error(&self.path, "read", &e))?;
            if n == 0 {
                self.done = true;
                if head_len > 0 {
                    self.cut_short(start, head_len as u64);
                }
                return Ok(false);
            }
            self.scanned += 1;
            let byte = head[head_len];
            head_len += 1;
            if head_len >= 2 && byte & 0x80 == 0 {
                // The writer never pads a length with zero continuation bytes.
                if byte == 0 && head_len > 2 {
                    return Err(self.corrupt(start, "its length field was damaged"));
                }
                break;
            }
            if head_len == head.len() {
                return Err(self.corrupt(start, "its length field is too long"));
            }
        }
        let head = &head[..head_len];
        let len = Payload::new(&head[1..])
            .varint()
            .map_err(|e| self.corrupt(start, e.0))?;
        if len > MAX_FRAME {
            return Err(self.corrupt(start, "its length is impossibly large"));
        }
        let want = len as usize + 4;
        let got = self.read_body(want)?;
        if got < want {
            // Either the writer was stopped inside this frame (or is still writing it), or its
            // length was damaged. Only in the second case can a whole frame follow somewhere in
            // the rest of the file.
            self.done = true;
            let rest = &self.frame.payload[..got];
            let mut search = super::resync::FrameSearch::new(rest);
            // The length's damage may have taken the payload's first bytes into it.
            let damaged = search.holds_a_frame()
                || (2..=head.len()).any(|k| search.is_whole_frame(head[0], &head[k..]));
            self.scanned += search.examined;
            if damaged {
                return Err(self.corrupt(start, "its length field was damaged"));
            }
            self.cut_short(start, (head_len + got) as u64);
            return Ok(false);
        }
        let body = &mut self.frame.payload;
        let (payload, crc) = body.split_at(len as usize);
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(head);
        hasher.update(payload);
        if hasher.finalize().to_le_bytes() != crc {
            return Err(self.corrupt(start, CHECKSUM_MISMATCH));
        }
        let checked = <[u8; 4]>::try_from(crc).ok().map(u32::from_le_bytes);
        body.truncate(len as usize);
        self.unchecked = None;
        self.checked = checked;
        self.frame.kind = head[0];
        self.frame.offset = start;
        self.offset = start + (head_len + want) as u64;
        Ok(true)
    }

    /// The common case of [`FrameReader::advance`], without a read per byte: when a whole,
    /// well-formed frame with a valid checksum lies in the input's buffer, takes it and returns
    /// true. Otherwise takes nothing and returns false, and `advance` reads byte by byte (and
    /// reports what is wrong, if anything).
    fn advance_in_buffer(&mut self) -> Result<bool, Error> {
        use io::BufRead;
        let buf = match self.input.fill_buf() {
            Ok(buf) => buf,
            Err(_) => return Ok(false), // `advance` reads again, and reports the error
        };
        // Type byte, then the length's LEB128 bytes, under the rules `advance` applies.
        let mut head_len = 1;
        loop {
            let Some(&byte) = buf.get(head_len) else {
                return Ok(false);
            };
            head_len += 1;
            if byte & 0x80 == 0 {
                if byte == 0 && head_len > 2 {
                    return Ok(false);
                }
                break;
            }
            if head_len == 11 {
                return Ok(false);
            }
        }
        let Ok(len) = Payload::new(&buf[1..head_len]).varint() else {
            return Ok(false);
        };
        if len > MAX_FRAME {
            return Ok(false);
        }
        let end = head_len + len as usize;
        let Some(&crc) = buf.get(end..).and_then(|rest| rest.first_chunk::<4>()) else {
            return Ok(false);
        };
        if self.deferred {
            self.unchecked = Some(crc);
            self.checked = None;
        } else if crc32fast::hash(&buf[..end]).to_le_bytes() != crc {
            return Ok(false);
        } else {
            self.checked = Some(u32::from_le_bytes(crc));
        }
        self.frame.kind = buf[0];
        self.frame.offset = self.offset;
        self.frame.payload.clear();
        self.frame.payload.extend_from_slice(&buf[head_len..end]);
        let whole = end + 4;
        self.input.consume(whole);
        self.offset += whole as u64;
        self.scanned += whole as u64;
        Ok(true)
    }

    /// Reads up to `want` bytes into the frame buffer, growing it as bytes arrive (at most
    /// doubling what was read); returns how many were read (fewer at the end of the file).
    fn read_body(&mut self, want: usize) -> Result<usize, Error> {
        let body = &mut self.frame.payload;
        body.clear();
        let mut got = 0;
        while got < want {
            let step = (want - got).min(FIRST_READ.max(got));
            body.reserve_exact(step);
            body.resize(got + step, 0);
            let n = read_up_to(&mut self.input, &mut body[got..])
                .map_err(|e| io_error(&self.path, "read", &e))?;
            got += n;
            self.scanned += n as u64;
            if n < step {
                body.truncate(got);
                break;
            }
        }
        Ok(got)
    }

    /// The frame read by the last successful [`FrameReader::advance`].
    pub fn frame(&self) -> &Frame {
        &self.frame
    }

    /// The checksum of the frame read by the last successful [`FrameReader::advance`], if
    /// `advance` checked it (with checks deferred, it checks only frames read past its
    /// buffer): a copy of the frame, the same type and payload byte for byte, has it too (its
    /// length has one encoding).
    pub(crate) fn checked_crc(&self) -> Option<u32> {
        self.checked
    }

    fn cut_short(&mut self, start: u64, have: u64) {
        self.warnings.push(format!(
            "{}: the last record (at byte {start}) is cut short after {have} bytes, as by a crash or a kill; it is ignored and every earlier record is read",
            self.path.display()
        ));
    }
}
