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
