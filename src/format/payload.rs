//! Decoding: a cursor over a frame's payload, every read bounds-checked.

use super::spec::Malformed;
use super::varint::{unzigzag, varint_at};

/// A cursor over a frame's payload; every read is bounds-checked.
pub struct Payload<'a> {
    bytes: &'a [u8],
    at: usize,
}

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
        Ok(unzigzag(v))
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
