//! The real allocation traces kept in the repository (`tests/data/traces/*.txt.gz`: the exact
//! text traces, gzip-compressed; `tests/data/traces/README.md` says what they are), unpacked for
//! the tests that read them. Where `../shared/data/traces` (or `$JITARENA_SHARED/data/traces`)
//! exists, every unpacked trace must equal its original there byte for byte.
#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The names of the real traces, as in `../shared/data/traces`.
pub const NAMES: [&str; 4] = [
    "png-cl0.100-speed.txt",
    "png-cl0.104-none.txt",
    "png-cl0.104-speed-noverify.txt",
    "png-cl0.104-speed.txt",
];

/// The original traces beside the project, where they are.
pub fn shared_dir() -> PathBuf {
    std::env::var_os("JITARENA_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared"))
        .join("data/traces")
}

/// The bytes of the real trace `name`, unpacked from the repository.
pub fn bytes(name: &str) -> Vec<u8> {
    let packed = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/traces")
        .join(format!("{name}.gz"));
    let file = std::fs::File::open(&packed).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (the real traces are part of the repository)",
            packed.display()
        )
    });
    let mut text = Vec::new();
    // The gzip member's CRC-32 and length are checked at its end.
    flate2::read::GzDecoder::new(file)
        .read_to_end(&mut text)
        .unwrap_or_else(|e| panic!("{}: {e}", packed.display()));
    let original = shared_dir().join(name);
    if let Ok(want) = std::fs::read(&original) {
        assert!(
            text == want,
            "{} differs from {}",
            packed.display(),
            original.display()
        );
    }
    text
}

/// The real trace `name` as a plain text trace file (unpacked once per content into the
/// target's temporary directory; each writer, in any thread or test process, writes a private
/// file and renames it into place).
pub fn trace(name: &str) -> PathBuf {
    let text = bytes(name);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("real-traces");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    if std::fs::read(&path).is_ok_and(|have| have == text) {
        return path;
    }
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let n = WRITES.fetch_add(1, Ordering::Relaxed);
    let private = dir.join(format!("{name}.{}-{n}.tmp", std::process::id()));
    std::fs::write(&private, &text).unwrap();
    std::fs::rename(&private, &path).unwrap();
    path
}

/// Every real trace, unpacked, in name order.
pub fn traces() -> Vec<PathBuf> {
    NAMES.iter().map(|n| trace(n)).collect()
}
