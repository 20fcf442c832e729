//! Looking for a whole frame in the bytes after a frame whose length runs past the end of the
//! input, in linear time.
//!
//! A reader that meets a length running past the end must tell a file cut short inside its
//! last frame (a warning) from a damaged length with whole frames after it (an error). That
//! means asking, for every byte offset, whether a frame with a valid checksum starts there.
//! Hashing each candidate frame anew costs the sum of their lengths: quadratic in the input
//! when the bytes look like lengths. Instead, the CRC of every prefix is computed once; the CRC
//! of any slice then follows from two prefix CRCs and one multiplication in GF(2)\[x\] modulo
//! the CRC polynomial (CRC-32 is linear), so that every candidate costs a constant.

use super::payload::Payload;

/// The CRC-32 (IEEE) polynomial, bit-reflected: bit 31 stands for x^0, bit 0 for x^31.
const POLY: u32 = 0xEDB8_8320;
/// The polynomial 1 (x^0) in the reflected representation.
const ONE: u32 = 1 << 31;
/// Lengths are split as `hi * SPLIT + lo` to keep the power tables small.
const SPLIT: usize = 1 << 12;
/// Slices shorter than this (most candidates in real frames) are shifted by table lookups.
const SHORT: usize = 128;

/// `a * b` modulo the CRC polynomial, both reflected.
fn mul(a: u32, mut b: u32) -> u32 {
    let mut product = 0;
    let mut bit = ONE;
    while bit != 0 {
        // Branch-free: the masks are all ones or all zeros.
        product ^= b & 0u32.wrapping_sub(u32::from(a & bit != 0));
        b = (b >> 1) ^ (POLY & 0u32.wrapping_sub(b & 1)); // b *= x
        bit >>= 1;
    }
    product
}

/// `value * x^8`: the CRC register after one zero byte.
fn times_x8(value: u32, table: &[u32; 256]) -> u32 {
    (value >> 8) ^ table[(value & 0xFF) as usize]
}

/// The byte-at-a-time CRC table: `table[b]` is `b * x^32 / x^24`, reduced.
fn crc_table() -> [u32; 256] {
    let mut table = [0u32; 256];
    for (b, cell) in table.iter_mut().enumerate() {
        let mut c = b as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 { (c >> 1) ^ POLY } else { c >> 1 };
        }
        *cell = c;
    }
    table
}

/// The tables every search shares, made once.
struct Tables {
    /// The byte-at-a-time CRC table.
    byte: [u32; 256],
    /// `low[l]`: x^(8l), for `l < SPLIT`.
    low: Vec<u32>,
    /// x^(8 SPLIT).
    split: u32,
    /// `short[l][256 k + b]`: `(b << 8k) * x^(8l)`, for `l < SHORT`: a shift by a short length
    /// is four lookups.
    short: Vec<[u32; 1024]>,
}

fn tables() -> &'static Tables {
    static TABLES: std::sync::OnceLock<Tables> = std::sync::OnceLock::new();
    TABLES.get_or_init(|| {
        let byte = crc_table();
        let mut low = Vec::with_capacity(SPLIT);
        let mut x = ONE;
        for _ in 0..SPLIT {
            low.push(x);
            x = times_x8(x, &byte);
        }
        let mut short = Vec::with_capacity(SHORT);
        let mut row = [0u32; 1024];
        for (i, cell) in row.iter_mut().enumerate() {
            *cell = ((i % 256) as u32) << (8 * (i / 256));
        }
        for _ in 0..SHORT {
            short.push(row);
            row.iter_mut().for_each(|c| *c = times_x8(*c, &byte));
        }
        Tables {
            byte,
            low,
            split: x,
            short,
        }
    })
}

/// Finds whole frames inside a byte slice; counts the bytes it examines.
pub(crate) struct FrameSearch<'a> {
    bytes: &'a [u8],
    tables: &'static Tables,
    /// `prefix[k]`: the CRC-32 of `bytes[..k]`.
    prefix: Vec<u32>,
    /// `high[h]`: x^(8 h SPLIT), for the lengths of these bytes.
    high: Vec<u32>,
    /// Bytes hashed or read so far.
    pub(crate) examined: u64,
}

impl<'a> FrameSearch<'a> {
    /// Prepares to search `bytes`: one pass over them.
    pub(crate) fn new(bytes: &'a [u8]) -> FrameSearch<'a> {
        let tables = tables();
        let mut prefix = Vec::with_capacity(bytes.len() + 1);
        prefix.push(0);
        // The CRC register is the complement of the CRC so far; one table step per byte.
        let mut state = 0u32;
        for &b in bytes {
            let register = !state;
            let i = ((register ^ u32::from(b)) & 0xFF) as usize;
            state = !((register >> 8) ^ tables.byte[i]);
            prefix.push(state);
        }
        let mut high = Vec::with_capacity(bytes.len() / SPLIT + 1);
        let mut h = ONE;
        for _ in 0..high.capacity() {
            high.push(h);
            h = mul(h, tables.split);
        }
        FrameSearch {
            bytes,
            tables,
            prefix,
            high,
            examined: bytes.len() as u64,
        }
    }

    /// x^(8 len) modulo the polynomial.
    fn power(&self, len: usize) -> u32 {
        let (h, l) = (len / SPLIT, len % SPLIT);
        mul(self.high[h], self.tables.low[l])
    }

    /// `value * x^(8 len)`: `value` shifted through `len` zero bytes.
    fn shift(&self, value: u32, len: usize) -> u32 {
        match self.tables.short.get(len) {
            Some(t) => {
                let byte = |k: usize| t[256 * k + ((value >> (8 * k)) & 0xFF) as usize];
                byte(0) ^ byte(1) ^ byte(2) ^ byte(3)
            }
            None => mul(value, self.power(len)),
        }
    }

    /// The CRC-32 of `bytes[start..end]`.
    fn crc(&self, start: usize, end: usize) -> u32 {
        self.prefix[end] ^ self.shift(self.prefix[start], end - start)
    }

    /// Whether a complete frame (type, length, a payload of at least one byte, checksum) with
    /// a valid checksum starts at `at`.
    fn frame_at(&mut self, at: usize) -> bool {
        let Some(after_type) = self.bytes.get(at + 1..) else {
            return false;
        };
        let mut p = Payload::new(after_type);
        let Ok(len) = p.varint() else { return false };
        let head_len = 1 + p.position();
        self.examined += head_len as u64;
        let Some(end) = usize::try_from(len)
            .ok()
            .and_then(|n| n.checked_add(head_len + 4))
            .and_then(|n| n.checked_add(at))
        else {
            return false;
        };
        if len == 0 || end > self.bytes.len() {
            return false;
        }
        self.examined += 4;
        let stored = &self.bytes[end - 4..end];
        self.crc(at, end - 4).to_le_bytes() == stored
    }

    /// Whether a complete frame with a valid checksum starts anywhere in the bytes.
    pub(crate) fn holds_a_frame(&mut self) -> bool {
        (0..self.bytes.len()).any(|at| self.frame_at(at))
    }

    /// Whether `absorbed` followed by the bytes is exactly a frame body (payload and checksum)
    /// of type `kind`, whose length field was damaged. `absorbed` are the first bytes of the
    /// payload when the damaged length took them for more of its bytes (a cleared stop bit).
    pub(crate) fn is_whole_frame(&mut self, kind: u8, absorbed: &[u8]) -> bool {
        let Some(rest) = self.bytes.len().checked_sub(4) else {
            return false;
        };
        let mut head = vec![kind];
        crate::format::put_varint(&mut head, (absorbed.len() + rest) as u64);
        head.extend_from_slice(absorbed);
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(&head);
        // CRC(head ++ body) from CRC(head) and the body's prefix CRC.
        let crc = self.prefix[rest] ^ self.shift(hasher.finalize(), rest);
        self.examined += head.len() as u64 + 4;
        crc.to_le_bytes() == self.bytes[rest..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The old, quadratic search: hashes every candidate frame anew.
    fn holds_a_frame_slowly(bytes: &[u8]) -> bool {
        (0..bytes.len()).any(|i| {
            let mut p = Payload::new(&bytes[i + 1..]);
            let Ok(len) = p.varint() else { return false };
            let head_len = 1 + p.position();
            let Some(end) = (len as usize)
                .checked_add(head_len + 4)
                .and_then(|n| n.checked_add(i))
            else {
                return false;
            };
            if len == 0 || end > bytes.len() {
                return false;
            }
            crc32fast::hash(&bytes[i..end - 4]).to_le_bytes() == bytes[end - 4..end]
        })
    }

    /// A small deterministic generator (xorshift).
    fn noise(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    #[test]
    fn slice_crcs_equal_crc32fast() {
        let bytes: Vec<u8> = (0..20_000u32).map(|i| (i * 7919 % 251) as u8).collect();
        let s = FrameSearch::new(&bytes);
        for (a, b) in [
            (0, 0),
            (0, 1),
            (3, 17),
            (5, 133),
            (7, 134),
            (100, 4200),
            (4095, 8193),
            (1, 20_000),
        ] {
            assert_eq!(s.crc(a, b), crc32fast::hash(&bytes[a..b]), "{a}..{b}");
        }
    }

    #[test]
    fn finds_the_same_frames_as_hashing_each_candidate() {
        let mut seed = 0x9E37_79B9_7F4A_7C15;
        let mut found = 0;
        for round in 0..400 {
            let mut bytes: Vec<u8> = (0..(noise(&mut seed) % 300) as usize)
                .map(|_| noise(&mut seed) as u8 & if round % 2 == 0 { 0xFF } else { 0x0F })
                .collect();
            if round % 3 == 0 {
                // Plant a real frame somewhere.
                let payload: Vec<u8> = (0..1 + noise(&mut seed) % 40).map(|i| i as u8).collect();
                let mut frame = Vec::new();
                crate::format::put_frame(&mut frame, 3, &payload);
                let at = (noise(&mut seed) as usize) % (bytes.len() + 1);
                bytes.splice(at..at, frame);
            }
            let expected = holds_a_frame_slowly(&bytes);
            found += usize::from(expected);
            assert_eq!(
                FrameSearch::new(&bytes).holds_a_frame(),
                expected,
                "round {round}"
            );
        }
        assert!(found > 100, "only {found} rounds held a frame");
    }

    #[test]
    fn a_whole_frame_body_is_recognised() {
        let mut frame = Vec::new();
        crate::format::put_frame(&mut frame, 4, &[9u8; 300]);
        let body = &frame[3..]; // type and a two-byte length
        assert!(FrameSearch::new(body).is_whole_frame(4, &[]));
        assert!(!FrameSearch::new(body).is_whole_frame(3, &[]));
        assert!(!FrameSearch::new(&body[1..]).is_whole_frame(4, &[]));
        // The first payload bytes taken into a damaged length field.
        assert!(FrameSearch::new(&body[2..]).is_whole_frame(4, &body[..2]));
        assert!(!FrameSearch::new(&body[2..]).is_whole_frame(4, &body[..1]));
    }
}
