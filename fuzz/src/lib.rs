//! Helpers shared by the fuzz targets: jitarena's readers take paths, so each input is written
//! to a file first.

use std::path::PathBuf;

/// Writes `data` to this process's input file for `tag` (in `/dev/shm` where there is one, so
/// that rewriting it costs no disk flush; else in the temporary directory; replaced on every
/// call) and returns its path.
pub fn input_file(tag: &str, data: &[u8]) -> PathBuf {
    let shm = std::path::Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let path = dir.join(format!("jitarena-fuzz-{}-{tag}", std::process::id()));
    if let Err(e) = std::fs::write(&path, data) {
        panic!("{}: cannot write the fuzz input: {e}", path.display());
    }
    path
}

/// Splits one input into two: at the second `JITARENA` magic if there is one (so that two
/// concatenated logs make a seed), else in the middle.
pub fn split_two(data: &[u8]) -> (&[u8], &[u8]) {
    const MAGIC: &[u8] = b"JITARENA";
    let at = data
        .windows(MAGIC.len())
        .skip(1)
        .position(|w| w == MAGIC)
        .map_or(data.len() / 2, |i| i + 1);
    data.split_at(at)
}

/// A copy of `data` with the checksum of every whole frame recomputed, so that mutations of a
/// log's or trace's frames reach the decoders instead of stopping at the CRC check (which the
/// crate's own tests cover). The walk follows the container of `docs/formats.md`: a 12-byte
/// header, then frames of type, LEB128 length, payload and CRC-32; it stops at the first frame
/// that does not fit.
pub fn with_checksums(data: &[u8]) -> Vec<u8> {
    let mut out = data.to_vec();
    let mut at = 12;
    while at < out.len() {
        let mut len: u64 = 0;
        let mut end = at + 1;
        let mut shift = 0;
        loop {
            let Some(&byte) = out.get(end) else {
                return out;
            };
            end += 1;
            if shift < 64 {
                len |= u64::from(byte & 0x7f) << shift;
            }
            shift += 7;
            if byte & 0x80 == 0 {
                break;
            }
            if end - at >= 11 {
                return out;
            }
        }
        let Some(crc_at) = usize::try_from(len).ok().and_then(|l| end.checked_add(l)) else {
            return out;
        };
        if crc_at.saturating_add(4) > out.len() {
            return out;
        }
        let crc = crc32fast::hash(&out[at..crc_at]);
        out[crc_at..crc_at + 4].copy_from_slice(&crc.to_le_bytes());
        at = crc_at + 4;
    }
    out
}
