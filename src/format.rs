//! The container shared by stats logs and binary traces: a 12-byte header, then checksummed
//! frames. See `docs/formats.md` for the layout.
//!
//! A frame is `type: u8, length: LEB128, payload, crc32: u32 LE` (the CRC covers the type,
//! the length bytes and the payload). A file cut short inside its last frame reads back every
//! earlier frame with a warning; a frame whose checksum fails is an error, because what follows
//! it cannot be trusted.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorCode};
use crate::message::message;

mod pairs;
#[cfg(target_arch = "x86_64")]
pub(crate) use pairs::Pext;
pub(crate) use pairs::{PairReader, Portable};

/// The first 8 bytes of every jitarena file.
pub const MAGIC: &[u8; 8] = b"JITARENA";
/// Length of the file header: magic, content kind, version, two reserved bytes.
pub const HEADER_LEN: usize = 12;
/// The format version of the stats logs this build writes (it reads versions 1 and 2): version 2
/// has the compact method record (`docs/formats.md`).
pub const LOG_VERSION: u8 = 2;
/// The format version of the traces this build writes and reads.
pub const TRACE_VERSION: u8 = 1;
/// Largest frame payload accepted (a sanity bound: a trace frame holds one method's events).
pub const MAX_FRAME: u64 = 1 << 30;

/// What a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content {
    /// A stats log: one record of counters per method.
    Log,
    /// A binary allocation trace: one record of events per method.
    Trace,
}

impl Content {
    fn byte(self) -> u8 {
        match self {
            Content::Log => b'L',
            Content::Trace => b'T',
        }
    }

    fn name(self) -> &'static str {
        match self {
            Content::Log => "stats log",
            Content::Trace => "trace",
        }
    }

    /// The format version this build writes for `self`.
    pub fn version(self) -> u8 {
        match self {
            Content::Log => LOG_VERSION,
            Content::Trace => TRACE_VERSION,
        }
    }
}

/// A version-1 header for a file of `content`: version 1 frames are read by every reader
/// (hand-made files in tests use it). Writers use [`header_for`].
pub fn header(content: Content) -> [u8; HEADER_LEN] {
    header_for(content, 1)
}

/// The header bytes for a file of `content` in format `version`.
pub fn header_for(content: Content, version: u8) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..8].copy_from_slice(MAGIC);
    h[8] = content.byte();
    h[9] = version;
    h
}

/// Whether `head`, shorter than a header, is how a header of `content` in a readable version
/// begins (an empty file too): the start of a file whose writer was stopped before its header
/// was whole.
fn is_header_start(head: &[u8], content: Content) -> bool {
    let magic = head.len().min(MAGIC.len());
    head.get(..magic) == MAGIC.get(..magic)
        && head.get(8).is_none_or(|&c| c == content.byte())
        && head
            .get(9)
            .is_none_or(|&v| (1..=content.version()).contains(&v))
        && head.iter().skip(10).all(|&b| b == 0)
}

/// What the first bytes of a file say it is.
pub fn sniff(path: &Path) -> Result<Option<Content>, Error> {
    Ok(Source::open(path)?.content())
}

/// The byte stream of a [`Source`]: its first bytes, then the rest of the file.
pub type Input = BufReader<io::Chain<io::Cursor<Vec<u8>>, File>>;

/// A file opened once for reading, its first bytes looked at but kept: a pipe (which cannot
/// be opened twice) is sniffed and then read whole.
pub struct Source {
    path: PathBuf,
    head: Vec<u8>,
    file: File,
}

impl Source {
    /// Opens `path` and reads its first [`HEADER_LEN`] bytes (fewer if it is shorter).
    pub fn open(path: &Path) -> Result<Source, Error> {
        let mut file = open(path)?;
        let mut head = vec![0u8; HEADER_LEN];
        let n = read_up_to(&mut file, &mut head).map_err(|e| io_error(path, "read", &e))?;
        head.truncate(n);
        Ok(Source {
            path: path.to_path_buf(),
            head,
            file,
        })
    }

    /// What the first bytes say the file is (`None`: not a jitarena file).
    pub fn content(&self) -> Option<Content> {
        if self.head.len() < HEADER_LEN || &self.head[..8] != MAGIC {
            return None;
        }
        match self.head[8] {
            b'L' => Some(Content::Log),
            b'T' => Some(Content::Trace),
            _ => None,
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every byte of the file from its start, the first ones included.
    pub fn into_input(self) -> Input {
        BufReader::with_capacity(1 << 16, io::Cursor::new(self.head).chain(self.file))
    }
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// An I/O error naming the file (`ErrorCode::OutOfMemory` for an error of that kind). Made
/// without an allocation that could abort the process.
pub fn io_error(path: &Path, what: &str, err: &io::Error) -> Error {
    let code = match err.kind() {
        io::ErrorKind::OutOfMemory => ErrorCode::OutOfMemory,
        _ => ErrorCode::Io,
    };
    Error::new(code, message!(path, ": cannot ", what, ": ", err))
}

fn open(path: &Path) -> Result<File, Error> {
    File::open(path).map_err(|e| io_error(path, "open", &e))
}

/// Where the encoders below append: a `Vec<u8>`, which grows as `Vec` does (the tools and
/// tests), or the library's own buffer that grows only while memory can be had (the writers a
/// JIT runs).
pub trait Put {
    /// Appends `bytes`.
    fn put(&mut self, bytes: &[u8]);

    /// Appends `value` as unsigned LEB128.
    fn varint(&mut self, value: u64) {
        let (b, n) = varint_bytes(value);
        self.put(b.get(..n).unwrap_or(&b));
    }

    /// How many bytes were appended.
    fn written(&self) -> usize;

    /// The bytes appended from offset `start` on (empty if there are none).
    fn written_since(&self, start: usize) -> &[u8];
}

impl Put for Vec<u8> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }

    #[inline]
    fn varint(&mut self, mut value: u64) {
        while value >= 0x80 {
            self.push(value as u8 | 0x80);
            value >>= 7;
        }
        self.push(value as u8);
    }

    fn written(&self) -> usize {
        self.len()
    }

    fn written_since(&self, start: usize) -> &[u8] {
        self.get(start..).unwrap_or_default()
    }
}

/// Bytes being encoded by a writer that a JIT runs: appending grows the buffer only through
/// `try_reserve`. When memory runs out, the buffer stops taking bytes and says so
/// ([`TryBuf::check`]), where a `Vec` would abort the process. It never links the code that
/// grows a `Vec` infallibly.
#[derive(Default)]
pub(crate) struct TryBuf {
    bytes: Vec<u8>,
    /// Whether some bytes could not be appended for lack of memory.
    short: bool,
}

impl TryBuf {
    /// An empty buffer with room for `n` bytes, or the out-of-memory error.
    pub fn with_room(n: usize) -> io::Result<TryBuf> {
        let mut buf = TryBuf::default();
        buf.reserve(n)?;
        Ok(buf)
    }

    /// Makes room for `n` more bytes, or fails (out of memory) with nothing changed.
    pub fn reserve(&mut self, n: usize) -> io::Result<()> {
        self.bytes.try_reserve(n).map_err(no_memory)
    }

    /// Empties the buffer, keeping its room.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.short = false;
    }

    /// The bytes appended.
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes
    }

    /// How many bytes were appended.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Appends `n` zero bytes.
    pub fn put_zeros(&mut self, n: usize) {
        let len = self.bytes.len();
        if self.bytes.capacity() - len < n && (self.short || self.bytes.try_reserve(n).is_err()) {
            self.short = true;
            return;
        }
        // SAFETY: the `n` bytes after `len` are allocated (there is room, checked or just
        // reserved), and once written they are initialized.
        unsafe {
            self.bytes.as_mut_ptr().add(len).write_bytes(0, n);
            self.bytes.set_len(len + n);
        }
    }

    /// Sets bit `bit` of the bitmap that starts at byte `at` (appended before).
    pub fn set_bit(&mut self, at: usize, bit: usize) {
        if let Some(b) = self.bytes.get_mut(at + bit / 8) {
            *b |= 1 << (bit % 8);
        }
    }

    /// Fails (out of memory) if some bytes could not be appended since the last
    /// [`TryBuf::clear`].
    pub fn check(&self) -> io::Result<()> {
        match self.short {
            true => Err(io::Error::from(io::ErrorKind::OutOfMemory)),
            false => Ok(()),
        }
    }
}

impl Put for TryBuf {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        if crate::fallible::extend_within(&mut self.bytes, bytes) {
            return;
        }
        self.grow_and_put(bytes);
    }

    /// Byte by byte into the room when it has the longest varint's: no copy call.
    #[inline]
    fn varint(&mut self, mut value: u64) {
        let len = self.bytes.len();
        if self.bytes.capacity() - len < MAX_VARINT {
            let (b, n) = varint_bytes(value);
            return self.put(b.get(..n).unwrap_or(&b));
        }
        let mut n = 0;
        // SAFETY: the `MAX_VARINT` bytes after `len` are allocated (checked above), and a
        // varint of 64 bits takes at most that many; each is written before the length
        // covers it.
        unsafe {
            let at = self.bytes.as_mut_ptr().add(len);
            while value >= 0x80 && n < MAX_VARINT - 1 {
                at.add(n).write(value as u8 | 0x80);
                value >>= 7;
                n += 1;
            }
            at.add(n).write(value as u8);
            self.bytes.set_len(len + n + 1);
        }
    }

    fn written(&self) -> usize {
        self.bytes.len()
    }

    fn written_since(&self, start: usize) -> &[u8] {
        self.bytes.get(start..).unwrap_or_default()
    }
}

impl TryBuf {
    #[cold]
    #[inline(never)]
    fn grow_and_put(&mut self, bytes: &[u8]) {
        let fits = !self.short
            && self.bytes.try_reserve(bytes.len()).is_ok()
            && crate::fallible::extend_within(&mut self.bytes, bytes);
        self.short |= !fits;
    }
}

/// The error of an allocation that failed (no text to allocate).
pub(crate) fn no_memory(_: std::collections::TryReserveError) -> io::Error {
    io::Error::from(io::ErrorKind::OutOfMemory)
}

/// `value` as unsigned LEB128, in the first bytes of an array: the array and the length.
#[inline]
fn varint_bytes(mut value: u64) -> ([u8; MAX_VARINT], usize) {
    let mut b = [0u8; MAX_VARINT];
    let mut n = 0;
    // At most ten rounds: the tenth byte holds the last bit of a u64.
    while value >= 0x80 && n < MAX_VARINT - 1 {
        b[n] = value as u8 | 0x80;
        value >>= 7;
        n += 1;
    }
    b[n] = value as u8;
    (b, n + 1)
}

/// Appends `value` as unsigned LEB128.
#[inline]
pub fn put_varint(buf: &mut (impl Put + ?Sized), value: u64) {
    buf.varint(value);
}

/// Appends a signed value, zigzag-encoded.
pub fn put_signed(buf: &mut (impl Put + ?Sized), value: i64) {
    put_varint(buf, ((value << 1) ^ (value >> 63)) as u64);
}

/// Appends a length-prefixed string.
pub fn put_str(buf: &mut (impl Put + ?Sized), s: &str) {
    put_varint(buf, s.len() as u64);
    buf.put(s.as_bytes());
}

/// Appends one frame (type, length, payload, checksum) to `out`.
pub fn put_frame(out: &mut (impl Put + ?Sized), kind: u8, payload: &[u8]) {
    let start = out.written();
    out.put(&[kind]);
    out.varint(payload.len() as u64);
    out.put(payload);
    let crc = crc32fast::hash(out.written_since(start));
    out.put(&crc.to_le_bytes());
}

/// [`put_frame`] of a frame whose checksum `crc` is known: a frame read and checked before,
/// of the same type and payload.
pub(crate) fn put_frame_known(out: &mut (impl Put + ?Sized), kind: u8, payload: &[u8], crc: u32) {
    out.put(&[kind]);
    out.varint(payload.len() as u64);
    out.put(payload);
    out.put(&crc.to_le_bytes());
}

/// The most bytes a LEB128 value of 64 bits takes.
pub(crate) const MAX_VARINT: usize = 10;

/// The most bytes a frame adds to its payload: its type, its length and its checksum.
pub(crate) const FRAME_MOST: usize = 1 + MAX_VARINT + 4;

/// Decodes the LEB128 value at the start of `b`, which holds as many bytes as the longest
/// value takes: the value and its length, without a bounds check per byte.
#[inline(always)]
pub(crate) fn varint_in(b: &[u8; MAX_VARINT]) -> Result<(u64, usize), Malformed> {
    if b[0] < 0x80 {
        return Ok((u64::from(b[0]), 1));
    }
    if b[1] < 0x80 {
        return Ok((u64::from(b[0] & 0x7f) | u64::from(b[1]) << 7, 2));
    }
    varint_in_long(b)
}

/// [`varint_in`] for values of three bytes or more.
#[inline(never)]
fn varint_in_long(b: &[u8; MAX_VARINT]) -> Result<(u64, usize), Malformed> {
    let mut value = 0u64;
    for (i, &byte) in b.iter().enumerate() {
        if i == MAX_VARINT - 1 && byte > 1 {
            break; // the tenth byte holds bit 63 only
        }
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte < 0x80 {
            return Ok((value, i + 1));
        }
    }
    Err(Malformed("a number is longer than 64 bits"))
}

/// Reads the unsigned LEB128 value at `*at` of `bytes`, advancing `*at` past it: the step
/// under [`Payload::varint`], for decoders that keep their position in a local (a register).
#[inline(always)]
pub(crate) fn varint_at(bytes: &[u8], at: &mut usize) -> Result<u64, Malformed> {
    // With at least MAX_VARINT bytes left (all but the last few values of a record), one
    // bounds check covers every byte the value can take.
    if let Some(chunk) = bytes
        .get(*at..)
        .and_then(|rest| rest.first_chunk::<MAX_VARINT>())
    {
        let (value, len) = varint_in(chunk)?;
        *at += len;
        return Ok(value);
    }
    // The last values of a record (its phases): one-byte values checked byte by byte inline.
    match bytes.get(*at) {
        Some(&first) if first < 0x80 => {
            *at += 1;
            Ok(u64::from(first))
        }
        _ => varint_near_end(bytes, at),
    }
}

/// Reads two LEB128 values from byte `at` of `bytes`; returns them and the position after
/// them. With at least twice [`MAX_VARINT`] bytes left, one bounds check covers both; the
/// position is passed by value so that callers keep it in a register.
#[inline(always)]
pub(crate) fn varint_pair_at(bytes: &[u8], at: usize) -> Result<(u64, u64, usize), Malformed> {
    if let Some(chunk) = bytes
        .get(at..)
        .and_then(|rest| rest.first_chunk::<{ 2 * MAX_VARINT }>())
    {
        let word = u64::from_le_bytes(*chunk.first_chunk().ok_or(SHORT)?);
        // The commonest pair (a kind's bytes in two bytes, its count in one), without a branch
        // per byte: continuation bits 1, 0, 0.
        if word & 0x80_8080 == 0x80 {
            return Ok((word & 0x7f | word >> 1 & 0x3f80, word >> 16 & 0x7f, at + 3));
        }
        let (a, len_a) = varint_in(chunk.first_chunk().ok_or(SHORT)?)?;
        // len_a <= MAX_VARINT: at least MAX_VARINT bytes follow the first value.
        let (b, len_b) = varint_in(
            chunk
                .get(len_a..)
                .and_then(|r| r.first_chunk())
                .ok_or(SHORT)?,
        )?;
        return Ok((a, b, at + len_a + len_b));
    }
    varint_pair_near_end(bytes, at)
}

/// [`varint_pair_at`] near the end of a record.
#[inline(never)]
fn varint_pair_near_end(bytes: &[u8], mut at: usize) -> Result<(u64, u64, usize), Malformed> {
    let a = varint_near_end(bytes, &mut at)?;
    let b = varint_near_end(bytes, &mut at)?;
    Ok((a, b, at))
}

/// A value that runs past the end of its record.
const SHORT: Malformed = Malformed("a number runs past the record");

/// [`varint_at`] within the last bytes of a record (or past them), a byte at a time.
#[inline(never)]
fn varint_near_end(bytes: &[u8], at: &mut usize) -> Result<u64, Malformed> {
    let mut value = 0u64;
    let mut shift = 0;
    loop {
        let byte = *bytes.get(*at).ok_or(SHORT)?;
        *at += 1;
        if shift == 63 && byte > 1 {
            return Err(Malformed("a number is longer than 64 bits"));
        }
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Ok(value);
        }
        shift += 7;
        if shift > 63 {
            return Err(Malformed("a number is longer than 64 bits"));
        }
    }
}

/// A cursor over a frame's payload; every read is bounds-checked.
pub struct Payload<'a> {
    bytes: &'a [u8],
    at: usize,
}

/// Decoding a payload failed: it is shorter than its fields or holds an impossible value.
#[derive(Debug)]
pub struct Malformed(pub &'static str);

impl<'a> Payload<'a> {
    /// A cursor at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Payload<'a> {
        Payload { bytes, at: 0 }
    }

    /// A cursor at byte `at` of `bytes` (at most their length).
    pub(crate) fn at(bytes: &'a [u8], at: usize) -> Payload<'a> {
        Payload {
            bytes,
            at: at.min(bytes.len()),
        }
    }

    /// The bytes under the cursor, all of them.
    pub(crate) fn all(&self) -> &'a [u8] {
        self.bytes
    }

    /// How many bytes were read.
    pub fn position(&self) -> usize {
        self.at
    }

    /// How many bytes are left.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.at
    }

    /// Whether every byte was read.
    pub fn is_done(&self) -> bool {
        self.at == self.bytes.len()
    }

    /// Reads an unsigned LEB128 value.
    #[inline(always)] // the decoders' innermost step: most values are one or two bytes
    pub fn varint(&mut self) -> Result<u64, Malformed> {
        varint_at(self.bytes, &mut self.at)
    }

    /// Reads the next `n` bytes as they are.
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], Malformed> {
        let s = self
            .at
            .checked_add(n)
            .and_then(|end| self.bytes.get(self.at..end))
            .ok_or(Malformed("a field runs past the end of its record"))?;
        self.at += n;
        Ok(s)
    }

    /// Skips the next `n` bytes.
    pub fn skip(&mut self, n: usize) -> Result<(), Malformed> {
        self.bytes(n).map(drop)
    }

    /// Reads a zigzag-encoded signed value.
    #[inline(always)]
    pub fn signed(&mut self) -> Result<i64, Malformed> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    /// Reads a count that must be at most `max`.
    pub fn count(&mut self, max: u64) -> Result<usize, Malformed> {
        let v = self.varint()?;
        if v > max {
            return Err(Malformed("a count is larger than the record can hold"));
        }
        Ok(v as usize)
    }

    /// Reads a length-prefixed UTF-8 string.
    pub fn str(&mut self) -> Result<&'a str, Malformed> {
        // The length is bounded by the bytes left after it, not by those left before it.
        let len = self.varint()?;
        let s = usize::try_from(len)
            .ok()
            .and_then(|len| self.bytes.get(self.at..self.at.checked_add(len)?))
            .ok_or(Malformed("a name runs past the end of its record"))?;
        let len = s.len();
        self.at += len;
        std::str::from_utf8(s).map_err(|_| Malformed("a name is not UTF-8"))
    }
}

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
            let version = head.get(9).copied().unwrap_or(content.version());
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
        let version = head[9];
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
            let mut search = crate::scan::FrameSearch::new(rest);
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

#[cfg(test)]
mod tests {
    use super::{put_varint, varint_at, varint_pair_at, Payload};

    /// Values of every length from 1 to 10 bytes, and the edges between lengths.
    fn values() -> Vec<u64> {
        let mut v = vec![
            0,
            1,
            0x7f,
            0x80,
            0x3fff,
            0x4000,
            u64::MAX,
            u64::MAX - 1,
            1 << 63,
        ];
        v.extend((1..64).map(|b| 1u64 << b));
        v.extend((1..64).map(|b| (1u64 << b) - 1));
        v
    }

    #[test]
    fn pairs_and_single_values_decode_as_written_at_any_distance_from_the_end() {
        for &a in &values() {
            for &b in &values() {
                let mut bytes = Vec::new();
                put_varint(&mut bytes, a);
                put_varint(&mut bytes, b);
                let len = bytes.len();
                // 0 to 20 bytes after the pair: the window paths and the near-the-end paths.
                for tail in 0..=20 {
                    let mut buf = bytes.clone();
                    buf.resize(len + tail, 0x80);
                    assert_eq!(
                        varint_pair_at(&buf, 0).unwrap(),
                        (a, b, len),
                        "{a} {b} +{tail}"
                    );
                    let mut at = 0;
                    assert_eq!(varint_at(&buf, &mut at).unwrap(), a);
                    assert_eq!(varint_at(&buf, &mut at).unwrap(), b);
                    assert_eq!(at, len);
                    let mut p = Payload::new(&buf);
                    assert_eq!((p.varint().unwrap(), p.varint().unwrap()), (a, b));
                }
            }
        }
    }

    #[test]
    fn values_longer_than_64_bits_or_cut_short_are_refused() {
        // An eleventh byte, and a tenth byte above 1, whatever follows.
        let too_long = [[0xffu8; 10].as_slice(), &[0x02]].concat();
        let tenth_too_big = [[0xffu8; 9].as_slice(), &[0x02], &[0u8; 20]].concat();
        for bytes in [too_long.as_slice(), &tenth_too_big] {
            let mut at = 0;
            let e = varint_at(bytes, &mut at).unwrap_err();
            assert_eq!(e.0, "a number is longer than 64 bits");
            assert!(varint_pair_at(bytes, 0).is_err());
        }
        for cut in [&[0x80u8][..], &[0xff, 0xff], &[]] {
            let mut at = 0;
            let e = varint_at(cut, &mut at).unwrap_err();
            assert_eq!(e.0, "a number runs past the record");
        }
        // A whole first value and a second cut short.
        assert_eq!(
            varint_pair_at(&[0x05, 0x80], 0).unwrap_err().0,
            "a number runs past the record"
        );
    }
}
