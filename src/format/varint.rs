//! The one LEB128 codec of the file format: unsigned values of up to 64 bits, 7 bits a byte,
//! least significant first, the high bit set on every byte but the last; signed values
//! zigzag-encoded first. Encoding is one loop ([`VarintOut::varint`]); decoding is one
//! byte-by-byte loop
//! ([`decode_bytewise`]) under fast paths for the common cases (a value of one or two bytes,
//! a pair of values, ten bytes known to be there). Merge's copy path keeps a stricter reader,
//! beside them, that also refuses padded values ([`strict_at`]), which the writer never makes.

use super::spec::Malformed;

/// The most bytes a LEB128 value of 64 bits takes.
pub(crate) const MAX_VARINT: usize = 10;

/// Where the one encoder writes a value's bytes: a `Vec`, a buffer's room, a record being
/// encoded. Each says where a byte goes ([`VarintOut::byte`]); the encoding itself, the loop
/// of [`VarintOut::varint`], is written once, here, and compiled into each.
pub(crate) trait VarintOut {
    /// Whether the loop also counts its bytes up to [`MAX_VARINT`], which the value's shifts
    /// alone imply: the count lets the compiler see the loop's trip count, which makes stores
    /// through a raw pointer faster (measured with callgrind) and checked stores slower.
    const COUNTED: bool = false;

    /// Takes the next byte.
    fn byte(&mut self, b: u8);

    /// Writes `value` as unsigned LEB128: at most [`MAX_VARINT`] bytes.
    #[inline(always)]
    fn varint(&mut self, mut value: u64) {
        // At most ten bytes: the tenth holds the last bit of a u64.
        let mut n = 1;
        while value >= 0x80 && (!Self::COUNTED || n < MAX_VARINT) {
            self.byte(value as u8 | 0x80);
            value >>= 7;
            n += 1;
        }
        self.byte(value as u8);
    }
}

/// The bytes of one value, in an array.
struct InArray {
    bytes: [u8; MAX_VARINT],
    len: usize,
}

impl VarintOut for InArray {
    #[inline(always)]
    fn byte(&mut self, b: u8) {
        if let Some(slot) = self.bytes.get_mut(self.len) {
            *slot = b;
        }
        self.len += 1;
    }
}

/// A signed value as the unsigned one the format writes (zigzag: 0, -1, 1, -2, ...).
#[inline(always)]
pub(crate) fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// The signed value of an unsigned one read ([`zigzag`] undone).
#[inline(always)]
pub(crate) fn unzigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

/// `value` as unsigned LEB128, in the first bytes of an array: the array and the length.
#[inline]
pub(crate) fn encoded(value: u64) -> ([u8; MAX_VARINT], usize) {
    let mut out = InArray {
        bytes: [0; MAX_VARINT],
        len: 0,
    };
    out.varint(value);
    (out.bytes, out.len)
}

/// The one decoding loop: the value at `*at` of `bytes`, a byte at a time, advancing `*at`
/// past it; also whether it was padded (it ends in a zero byte after others: a longer
/// encoding than the writer makes). Fails when it runs past `bytes` or past 64 bits. Inlined
/// into the slow paths below: over a slice, over ten bytes known to be there (whose bounds
/// checks then fold away), and merge's strict reader.
#[inline(always)]
fn decode_loop(bytes: &[u8], at: &mut usize) -> Result<(u64, bool), Malformed> {
    let mut value = 0u64;
    let mut shift = 0;
    loop {
        let byte = *bytes.get(*at).ok_or(SHORT)?;
        *at += 1;
        if shift == 63 && byte > 1 {
            return Err(TOO_LONG);
        }
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Ok((value, byte == 0 && shift > 0));
        }
        shift += 7;
        if shift > 63 {
            return Err(TOO_LONG);
        }
    }
}

/// [`decode_loop`] out of line: the slow path of every reader but [`varint_in`]'s.
#[inline(never)]
pub(crate) fn decode_bytewise(bytes: &[u8], at: &mut usize) -> Result<(u64, bool), Malformed> {
    decode_loop(bytes, at)
}

/// [`varint_in`] for values of three bytes or more.
#[inline(never)]
fn varint_in_long(b: &[u8; MAX_VARINT]) -> Result<(u64, usize), Malformed> {
    let mut len = 0;
    // Ten bytes end a value or exceed 64 bits: the loop never runs past them.
    decode_loop(b, &mut len).map(|(value, _)| (value, len))
}

/// A value that runs past the end of its record.
const SHORT: Malformed = Malformed("a number runs past the record");
/// A value of more than 64 bits.
const TOO_LONG: Malformed = Malformed("a number is longer than 64 bits");

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

/// Reads the unsigned LEB128 value at `*at` of `bytes`, advancing `*at` past it: the step
/// under [`Payload::varint`](super::Payload::varint), for decoders that keep their position in
/// a local (a register).
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
        _ => decode_bytewise(bytes, at).map(|(value, _)| value),
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
    let (a, _) = decode_bytewise(bytes, &mut at)?;
    let (b, _) = decode_bytewise(bytes, &mut at)?;
    Ok((a, b, at))
}

/// The minimal LEB128 value at `at` in `bytes` and the position after it: one or two bytes
/// (most numbers) inline, longer ones by [`decode_bytewise`]. `None` when it runs past the
/// end, is longer than 64 bits or is padded (not the writer's encoding): merge's copy path,
/// which copies counters as they are only when the writer would write them byte for byte.
#[inline(always)]
pub(crate) fn strict_at(bytes: &[u8], at: usize) -> Option<(u64, usize)> {
    match bytes.get(at) {
        Some(&first) if first < 0x80 => Some((u64::from(first), at + 1)),
        Some(&first) => match bytes.get(at + 1) {
            Some(&second) if second < 0x80 && second != 0 => {
                Some((u64::from(first & 0x7f) | u64::from(second) << 7, at + 2))
            }
            _ => strict_long(bytes, at),
        },
        None => None,
    }
}

/// [`strict_at`] for values of three bytes or more: [`decode_loop`] out of line, its own copy
/// (the copy path meets such values in most records' kinds).
#[inline(never)]
fn strict_long(bytes: &[u8], at: usize) -> Option<(u64, usize)> {
    let mut end = at;
    match decode_loop(bytes, &mut end) {
        Ok((value, false)) => Some((value, end)),
        _ => None,
    }
}
