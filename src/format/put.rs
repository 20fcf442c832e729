//! Encoding: where the writers append (a `Vec`, or a buffer a JIT's writer grows only while
//! memory can be had), and the fields and frames they append.

use std::io;

use super::varint::{self, VarintOut, MAX_VARINT};
pub(crate) use crate::fallible::no_memory;

/// Where the encoders below append: a `Vec<u8>`, which grows as `Vec` does (the tools and
/// tests), or the library's own buffer that grows only while memory can be had (the writers a
/// JIT runs).
pub trait Put {
    /// Appends `bytes`.
    fn put(&mut self, bytes: &[u8]);

    /// Appends `value` as unsigned LEB128.
    fn varint(&mut self, value: u64) {
        let (b, n) = varint::encoded(value);
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
    fn varint(&mut self, value: u64) {
        VarintOut::varint(self, value);
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
    fn varint(&mut self, value: u64) {
        let len = self.bytes.len();
        if self.bytes.capacity() - len < MAX_VARINT {
            let (b, n) = varint::encoded(value);
            return self.put(b.get(..n).unwrap_or(&b));
        }
        let mut room = Room {
            // SAFETY: `len` is within the allocation (it is the length).
            at: unsafe { self.bytes.as_mut_ptr().add(len) },
            n: 0,
        };
        room.varint(value);
        // SAFETY: the `MAX_VARINT` bytes after `len` are allocated (checked above), a varint
        // of 64 bits takes at most that many, and `room` wrote each before the length covers
        // it.
        unsafe { self.bytes.set_len(len + room.n) };
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

/// Allocated room after a buffer's length, at least [`MAX_VARINT`] bytes of it, that one value
/// is written into without a bounds check per byte.
struct Room {
    at: *mut u8,
    n: usize,
}

impl VarintOut for Room {
    const COUNTED: bool = true;

    #[inline(always)]
    fn byte(&mut self, b: u8) {
        // SAFETY: `TryBuf::varint` makes a room only with `MAX_VARINT` allocated bytes after
        // `at`, and one value writes at most that many.
        unsafe { self.at.add(self.n).write(b) };
        self.n += 1;
    }
}

impl VarintOut for Vec<u8> {
    #[inline(always)]
    fn byte(&mut self, b: u8) {
        self.push(b);
    }
}

/// Appends `value` as unsigned LEB128.
#[inline]
pub fn put_varint(buf: &mut (impl Put + ?Sized), value: u64) {
    buf.varint(value);
}

/// Appends a signed value, zigzag-encoded.
pub fn put_signed(buf: &mut (impl Put + ?Sized), value: i64) {
    put_varint(buf, varint::zigzag(value));
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

/// The most bytes a frame adds to its payload: its type, its length and its checksum.
pub(crate) const FRAME_MOST: usize = 1 + MAX_VARINT + 4;
