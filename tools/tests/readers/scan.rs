//! Garbage after a damaged length costs linear work: the reader's work is counted in bytes
//! read or examined, which must stay within a constant times the file's size.

use jitarena::format::Content;
use jitarena::log::LogReader;

use super::{names, tmp, Builder};

/// A valid log of a few methods, then a frame whose length claims 512 MiB, then `garbage`
/// bytes that each start a plausible frame: a long length that fits in what follows.
fn log_with_garbage(garbage: usize, then_a_frame: bool) -> Vec<u8> {
    let mut b = Builder::new(Content::Log);
    b.schema(0, &names("K", 4), &names("P", 2));
    for i in 0..20 {
        b.method(0, i, &[(0, 100 + i as u64, 3), (2, 7, 1)], &[(1, 107)]);
    }
    let mut bytes = b.bytes.clone();
    bytes.extend_from_slice(&[3, 0x80, 0x80, 0x80, 0x80, 0x02]);
    let pattern = [0x80u8, 0x80, 0x40]; // lengths of 1 MiB, 8 KiB and 64 bytes, in turn
    bytes.extend(pattern.iter().cycle().take(garbage));
    if then_a_frame {
        jitarena::format::put_frame(&mut bytes, 3, b"a whole frame after the garbage");
    }
    bytes
}

/// Reads the log at `path`; returns (records, work, error or warning text).
fn read(path: &std::path::Path) -> (usize, u64, String) {
    let mut reader = LogReader::open(path).unwrap();
    let mut n = 0;
    loop {
        match reader.next_record() {
            Ok(Some(_)) => n += 1,
            Ok(None) => return (n, reader.bytes_scanned(), reader.warnings().join("\n")),
            Err(e) => return (n, reader.bytes_scanned(), e.message.into_owned()),
        }
    }
}

#[test]
fn garbage_after_a_damaged_length_costs_linear_work() {
    let mut works = Vec::new();
    for mib in [1usize, 4] {
        for then_a_frame in [false, true] {
            let bytes = log_with_garbage(mib << 20, then_a_frame);
            let path = tmp(&format!("garbage-{mib}-{then_a_frame}.jas"));
            std::fs::write(&path, &bytes).unwrap();
            let (records, work, said) = read(&path);
            assert_eq!(records, 20, "{said}");
            if then_a_frame {
                assert!(said.contains("length field was damaged"), "{said}");
            } else {
                assert!(said.contains("cut short"), "{said}");
            }
            assert!(
                said.contains(&format!("garbage-{mib}-{then_a_frame}.jas")),
                "{said}"
            );
            let ratio = work as f64 / bytes.len() as f64;
            eprintln!("{mib} MiB of garbage, then a frame: {then_a_frame}: {work} bytes scanned, {ratio:.2} times the file");
            // One read, one pass of prefix checksums, a few bytes per candidate frame.
            assert!(
                ratio < 16.0,
                "{mib} MiB of garbage: {work} bytes scanned for a file of {}",
                bytes.len()
            );
            works.push(work);
        }
    }
    // Four times the garbage, about four times the work (a quadratic scan: sixteen). A bit
    // more than four: more of the candidate frames' lengths fit in a longer file, and each
    // that fits has its checksum read.
    assert!(works[2] < 5 * works[0], "{works:?}");
    assert!(works[3] < 5 * works[1], "{works:?}");
}

#[test]
fn a_clean_log_is_read_once() {
    let bytes = log_with_garbage(0, false);
    let clean = &bytes[..bytes.len() - 6];
    let path = tmp("clean.jas");
    std::fs::write(&path, clean).unwrap();
    let (records, work, said) = read(&path);
    assert_eq!((records, said.as_str()), (20, ""));
    assert_eq!(work, clean.len() as u64);
}
