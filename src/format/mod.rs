//! The container shared by stats logs and binary traces: a 12-byte header, then checksummed
//! frames. See `docs/formats.md` for the layout.
//!
//! A frame is `type: u8, length: LEB128, payload, crc32: u32 LE` (the CRC covers the type,
//! the length bytes and the payload). A file cut short inside its last frame reads back every
//! earlier frame with a warning; a frame whose checksum fails is an error, because what follows
//! it cannot be trusted.

//!
//! The layers, each importing only those before it: [`spec`] (the numbers), `varint` (the one
//! LEB128 codec), `payload` (reading fields), `put` (writing fields and frames), `source` and
//! `frames` (reading a file's frames), `resync` (finding frames again after damage), `writer`
//! and `dictionary` (writing frames that never leave a record half written; schemas and tiers).

pub(crate) mod dictionary;
mod frames;
mod pairs;
mod payload;
mod put;
pub(crate) mod record;
pub(crate) mod resync;
mod source;
pub mod spec;
pub(crate) mod varint;
pub(crate) mod writer;

pub use frames::{Frame, FrameReader};
#[cfg(target_arch = "x86_64")]
pub(crate) use pairs::Pext;
pub(crate) use pairs::{PairReader, Portable};
pub use payload::Payload;
pub(crate) use put::{no_memory, TryBuf};
pub use put::{put_frame, put_signed, put_str, put_varint, Put};
pub use source::{io_error, sniff, Input, Source};
pub use spec::Malformed;
pub use spec::{
    header, header_for, Content, HEADER_LEN, LOG_VERSION, MAGIC, MAX_FRAME, TRACE_VERSION,
    TRACE_VERSION_WHOLE,
};
pub(crate) use varint::{strict_at, varint_at, MAX_VARINT};

#[cfg(test)]
mod tests {
    use super::varint::{varint_at, varint_pair_at};
    use super::{put_varint, Payload};

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
