//! Reading the (bytes, allocations) pairs of a record's kinds: two LEB128 values at a time.
//!
//! The portable reader ([`Portable`], [`super::varint::varint_pair_at`]) branches on the values'
//! lengths, and those vary from kind to kind, so the processor mispredicts about two pairs in
//! five (callgrind's branch simulation of `jitarena stats` on generated logs). Where the processor has BMI2's parallel bit extract and runs it in hardware
//! ([`Pext::detect`]), [`Pext`] reads any two values that end within the next eight bytes
//! without a branch on their lengths: the bytes' top bits index a table of where the two
//! values lie, and one `pext` per value gathers its 7-bit groups.

// The table and its index serve only the x86-64 reader (and the tests) elsewhere.
#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]

use super::spec::Malformed;
use super::varint::varint_pair_at;

/// Reads the pair of LEB128 values at byte `at` of `bytes`: their values and the position
/// after them, with the errors of [`super::varint_at`].
pub(crate) trait PairReader {
    /// The pair at `at`.
    fn pair_at(&self, bytes: &[u8], at: usize) -> Result<(u64, u64, usize), Malformed>;
}

/// The reader for any processor.
pub(crate) struct Portable;

impl PairReader for Portable {
    #[inline(always)]
    fn pair_at(&self, bytes: &[u8], at: usize) -> Result<(u64, u64, usize), Malformed> {
        varint_pair_at(bytes, at)
    }
}

/// The reader that uses BMI2's `pext`. Only [`Pext::detect`] makes one, on a processor that
/// has BMI2 and runs `pext` in hardware.
#[cfg(target_arch = "x86_64")]
pub(crate) struct Pext(());

#[cfg(target_arch = "x86_64")]
impl Pext {
    /// A reader, if this processor has BMI2 and does not run `pext` in microcode (AMD's and
    /// Hygon's before family 19h, Zen 3, take tens to hundreds of cycles per `pext`, more the
    /// more bits its mask sets). Checked once.
    pub(crate) fn detect() -> Option<&'static Pext> {
        static FAST: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        static PEXT: Pext = Pext(());
        FAST.get_or_init(|| std::is_x86_feature_detected!("bmi2") && !slow_pext())
            .then_some(&PEXT)
    }
}

/// Whether this processor runs `pext` in microcode: AMD's and Hygon's before family 19h.
/// Never under Miri, which has no `cpuid` (inline assembly) but runs `pext` itself, and
/// reports BMI2 only where the build enables it (`-C target-feature=+bmi2`).
#[cfg(target_arch = "x86_64")]
fn slow_pext() -> bool {
    use std::arch::x86_64::__cpuid;
    if cfg!(miri) {
        return false;
    }
    // `__cpuid` is a safe function in newer Rust than the oldest this crate builds with (1.86).
    // SAFETY: every x86-64 processor has the `cpuid` instruction; leaves 0 and 1 always exist.
    #[allow(unused_unsafe)]
    let (vendor, signature) = unsafe { (__cpuid(0), __cpuid(1).eax) };
    let vendor = [vendor.ebx, vendor.edx, vendor.ecx];
    let amd = vendor == [0x6874_7541, 0x6974_6e65, 0x444d_4163]; // "AuthenticAMD"
    let hygon = vendor == [0x6f67_7948, 0x6e65_476e, 0x656e_6975]; // "HygonGenuine"
    let base = signature >> 8 & 0xf;
    let family = if base == 0xf {
        base + (signature >> 20 & 0xff)
    } else {
        base
    };
    (amd || hygon) && family < 0x19
}

#[cfg(target_arch = "x86_64")]
impl PairReader for Pext {
    #[inline(always)]
    fn pair_at(&self, bytes: &[u8], at: usize) -> Result<(u64, u64, usize), Malformed> {
        use std::arch::x86_64::_pext_u64;
        if let Some(window) = bytes.get(at..).and_then(|rest| rest.first_chunk::<8>()) {
            let w = u64::from_le_bytes(*window);
            let shape = &SHAPES[ends(w)];
            if shape.len != 0 {
                // SAFETY: a `Pext` exists only where the processor has BMI2 (`Pext::detect`).
                let (a, b) = unsafe { (_pext_u64(w, shape.first), _pext_u64(w, shape.second)) };
                return Ok((a, b, at + usize::from(shape.len)));
            }
        }
        varint_pair_at(bytes, at)
    }
}

/// Which of the eight bytes of the little-endian word `w` end a value (their top bit is
/// clear): bit i for byte i.
#[inline(always)]
fn ends(w: u64) -> usize {
    let stops = !w >> 7 & 0x0101_0101_0101_0101;
    // The multiplication gathers bit 8i into bit 56 + i.
    (stops.wrapping_mul(0x0102_0408_1020_4080) >> 56) as usize
}

/// Where two values lie in eight bytes, for one pattern of [`ends`].
#[derive(Clone, Copy)]
struct Shape {
    /// The 7-bit groups of the first value.
    first: u64,
    /// Those of the second.
    second: u64,
    /// The bytes both take; 0 when fewer than two values end in the eight bytes.
    len: u8,
}

/// [`Shape`] for every pattern of [`ends`].
static SHAPES: [Shape; 256] = shapes();

/// The 7-bit groups of the first `bytes` bytes of a word (1 to 8).
const fn groups(bytes: u32) -> u64 {
    0x7f7f_7f7f_7f7f_7f7f >> (64 - 8 * bytes)
}

const fn shapes() -> [Shape; 256] {
    let none = Shape {
        first: 0,
        second: 0,
        len: 0,
    };
    let mut shapes = [none; 256];
    let mut ends = 1u32;
    while ends < 256 {
        let a = ends.trailing_zeros() + 1;
        let b = (ends >> a).trailing_zeros() + 1;
        if a + b <= 8 {
            shapes[ends as usize] = Shape {
                first: groups(a),
                second: groups(b) << (8 * a),
                len: (a + b) as u8,
            };
        }
        ends += 1;
    }
    shapes
}

#[cfg(test)]
mod tests {
    use super::{ends, shapes, PairReader, Portable};
    use crate::format::{put_varint, Payload};

    /// A xorshift generator from `seed`, for reproducible cases.
    fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    /// Runs `check` on the pext reader where this processor runs `pext` in hardware.
    #[cfg(target_arch = "x86_64")]
    fn on_pext(check: fn(&dyn PairReader)) {
        match super::Pext::detect() {
            Some(pext) => check(pext),
            None => eprintln!("no fast BMI2 here: the pext reader is not tested"),
        }
    }

    /// Pairs of values of every length, and words of random bytes (values padded with zero
    /// groups, runs of continuation bytes): `reader` reads what two values read one by one
    /// give, or the same error.
    fn agrees_with_one_by_one(reader: &dyn PairReader) {
        let mut values: Vec<u64> = (0..64).flat_map(|b| [1u64 << b, (1u64 << b) - 1]).collect();
        values.extend([u64::MAX, 0x80, 0x3fff, 0x4000]);
        // Under Miri, which runs some thousand times slower: every ninth value and fewer words.
        let (step, words) = if cfg!(miri) { (9, 300) } else { (1, 100_000) };
        let mut cases: Vec<Vec<u8>> = Vec::new();
        for &a in values.iter().step_by(step) {
            for &b in values.iter().step_by(step) {
                let mut bytes = Vec::new();
                put_varint(&mut bytes, a);
                put_varint(&mut bytes, b);
                cases.push(bytes);
            }
        }
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        for _ in 0..words {
            let state = next();
            let word = (state & 0x7f7f_7f7f_7f7f_7f7f) | (state >> 8 & 0x8080_8080_8080_8080);
            cases.push(word.to_le_bytes().to_vec());
        }
        for case in cases {
            // Followed by nothing, by a few bytes, or by enough for every path.
            for tail in [0, 3, 20] {
                let mut buf = case.clone();
                buf.resize(case.len() + tail, 0x01);
                let mut p = Payload::new(&buf);
                let want = p
                    .varint()
                    .and_then(|a| Ok((a, p.varint()?, p.position())))
                    .map_err(|e| e.0);
                let got = reader.pair_at(&buf, 0).map_err(|e| e.0);
                assert_eq!(got, want, "{buf:x?}");
            }
        }
    }

    #[test]
    fn the_portable_reader_reads_pairs_as_one_by_one() {
        agrees_with_one_by_one(&Portable);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_pext_reader_reads_pairs_as_one_by_one_where_the_processor_has_it() {
        on_pext(agrees_with_one_by_one);
    }

    /// Buffers of 1 to 40 bytes whose top bits are set with chance 1/8 to 7/8 (values of
    /// every length, padded ones like 0x80 0x00, runs of continuation bytes to the end):
    /// `reader` reads the same pair, position or error as [`Portable`] from every byte of
    /// each, so also where the eight-byte window reaches or passes the buffer's end, and
    /// chains of pairs read one after the other end at the same place.
    fn agrees_with_portable_at_every_offset(reader: &dyn PairReader) {
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        for case in 0..if cfg!(miri) { 100 } else { 20_000u64 } {
            let len = 1 + (next() % 40) as usize;
            let top = 1 + case % 7; // a top bit is set when a 3-bit draw is below `top`
            let buf: Vec<u8> = (0..len)
                .map(|_| {
                    let r = next();
                    (r as u8 & 0x7f) | if (r >> 8) % 8 < top { 0x80 } else { 0 }
                })
                .collect();
            for at in 0..=len {
                let got = reader.pair_at(&buf, at).map_err(|e| e.0);
                let want = Portable.pair_at(&buf, at).map_err(|e| e.0);
                assert_eq!(got, want, "at {at} of {buf:02x?}");
            }
            let mut at = 0;
            while let Ok((_, _, next_at)) = Portable.pair_at(&buf, at) {
                let got = reader.pair_at(&buf, at).map(|(_, _, n)| n).map_err(|e| e.0);
                assert_eq!(got, Ok(next_at), "at {at} of {buf:02x?}");
                at = next_at;
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_pext_reader_agrees_with_the_portable_one_at_every_offset() {
        on_pext(agrees_with_portable_at_every_offset);
    }

    #[test]
    fn every_pattern_of_two_values_ending_within_eight_bytes_has_a_shape() {
        let shapes = shapes();
        for (pattern, shape) in shapes.iter().enumerate() {
            let ends_at: Vec<u32> = (0..8).filter(|i| pattern >> i & 1 == 1).collect();
            match ends_at.as_slice() {
                [a, b, ..] => {
                    assert_eq!(u32::from(shape.len), b + 1, "{pattern:08b}");
                    assert_eq!(shape.first.count_ones(), 7 * (a + 1));
                    assert_eq!(shape.second.count_ones(), 7 * (b - a));
                    assert_eq!(shape.first & shape.second, 0);
                }
                _ => assert_eq!(shape.len, 0, "{pattern:08b}"),
            }
            // `ends` finds this pattern in a word whose bytes end values where it says.
            let word = (0..8).fold(0u64, |w, i| {
                w | u64::from(pattern >> i & 1 == 0) << (8 * i + 7)
            });
            assert_eq!(ends(word), pattern);
        }
    }
}
