//! [`read_both`]: the first side to fail ends the read at once, even while the other side
//! waits on a pipe whose writer stays open (memdiff refuses pipes up front; this is the
//! thread logic underneath).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use super::*;
use jitarena::format::{header_for, put_frame, Content};

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("jitarena-read-both-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// A version-2 log whose one method record is impossible (its checksum is right).
fn corrupt_log(name: &str) -> PathBuf {
    let path = tmp(name);
    let mut bytes = header_for(Content::Log, 2).to_vec();
    put_frame(&mut bytes, 3, &[0xff; 3]);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// A pipe holding a log header, its writer kept open (returned): a reader of it waits.
fn open_pipe(name: &str) -> (PathBuf, File) {
    let path = tmp(name);
    let _ = std::fs::remove_file(&path);
    assert!(Command::new("mkfifo")
        .arg(&path)
        .status()
        .unwrap()
        .success());
    // Read and write: the open does not wait for a reader (Linux), and the pipe never ends.
    let mut writer = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    writer.write_all(&header_for(Content::Log, 2)).unwrap();
    (path, writer)
}

/// `read_both`'s error, or a panic if it has not returned within a minute.
fn error_within_a_minute(base: PathBuf, diff: PathBuf) -> String {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let result = read_both(&[base], &[diff], &[], &Progress::hidden());
        let _ = send.send(result.err().map(|e| e.message.into_owned()));
    });
    match receive.recv_timeout(Duration::from_secs(60)) {
        Ok(Some(message)) => message,
        Ok(None) => panic!("both sides read without an error"),
        Err(_) => panic!("still reading after a minute: it waits for the side that did not fail"),
    }
}

#[test]
fn a_corrupt_base_ends_the_read_while_the_diff_waits() {
    let base = corrupt_log("base_corrupt.jas");
    let (diff, _writer) = open_pipe("diff_pipe.jas");
    let message = error_within_a_minute(base.clone(), diff);
    assert!(message.contains(&base.display().to_string()), "{message}");
}

#[test]
fn a_corrupt_diff_ends_the_read_while_the_base_waits() {
    let (base, _writer) = open_pipe("base_pipe.jas");
    let diff = corrupt_log("diff_corrupt.jas");
    let message = error_within_a_minute(base, diff.clone());
    assert!(message.contains(&diff.display().to_string()), "{message}");
}

#[test]
fn a_file_changed_after_the_first_reading_is_refused() {
    let path = corrupt_log("stamped.jas");
    let files = [path.clone()];
    let stamps = [check_rereadable(&path).unwrap()];
    unchanged(files.iter(), &stamps).unwrap();
    // Rewritten in place, the same length: a later modification time.
    let file = OpenOptions::new().write(true).open(&path).unwrap();
    let later = std::fs::metadata(&path).unwrap().modified().unwrap() + Duration::from_secs(3);
    file.set_modified(later).unwrap();
    let e = unchanged(files.iter(), &stamps).unwrap_err();
    assert!(e.message.starts_with(&format!(
        "{}: changed while memdiff read it",
        path.display()
    )));
    // Appended to.
    let stamps = [check_rereadable(&path).unwrap()];
    OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(&[0])
        .unwrap();
    file.set_modified(later).unwrap();
    assert!(unchanged(files.iter(), &stamps).is_err());
}

/// Writes `records` into one log.
fn write_log(name: &str, records: &[MethodRecord]) -> PathBuf {
    let path = tmp(name);
    let mut w = jitarena::log::LogWriter::new(File::create(&path).unwrap()).unwrap();
    for r in records {
        w.write_record(r).unwrap();
    }
    w.finish().unwrap();
    path
}

#[test]
fn a_diff_in_another_order_is_matched_as_one_in_the_same_order() {
    // Every identity once (a repeated one is matched by occurrence, which a reversal changes);
    // one method in five without a context number (matched by name and tier): the match by
    // identity, against the match by position.
    let (_, records) = shards();
    let base: Vec<MethodRecord> = records
        .into_iter()
        .enumerate()
        .map(|(i, mut r)| {
            r.info.context = if i % 5 == 0 { -1 } else { 3 * i as i64 };
            r.info.name = Some(format!("Ns.C:M{i}"));
            r
        })
        .collect();
    let diff: Vec<MethodRecord> = base
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut r = r.clone();
            r.counts.kinds[0].1 += (i % 7) as u64 * 100;
            r.counts.used_bytes += (i % 7) as u64 * 100;
            r.counts.phases[0].1 += (i % 7) as u64 * 100;
            // A method whose tier group moved (not one matched by name and tier).
            if i % 11 == 0 && r.info.context >= 0 {
                r.info.tier = Some("Tier1".into());
            }
            r
        })
        .collect();
    let base_path = write_log("order-base.jas", &base);
    let same = write_log("order-same.jas", &diff);
    let mut reversed = diff.clone();
    reversed.reverse();
    let other = write_log("order-reversed.jas", &reversed);
    let options = DiffOptions::default();
    let in_order = diff_logs(std::slice::from_ref(&base_path), &[same], &options).unwrap();
    let out_of_order = diff_logs(&[base_path], &[other], &options).unwrap();
    assert_eq!(in_order.coverage.matched, base.len() as u64);
    assert!(!in_order.top_growth.is_empty());
    let (a, b) = (&in_order, &out_of_order);
    assert_eq!(a.coverage, b.coverage);
    assert_eq!(a.groups, b.groups);
    assert_eq!(a.kinds, b.kinds);
    assert_eq!(a.phases, b.phases);
    assert_eq!(a.distribution, b.distribution);
    assert_eq!(a.top_growth, b.top_growth);
    assert_eq!(a.top_relative_growth, b.top_relative_growth);
    assert_eq!(a.scatter, b.scatter);
    assert_eq!(a.verdict, b.verdict);
    assert_eq!(in_order, out_of_order);
}

/// Three shards of a side: 2,500, 1 and 3,000 records, two schemas, tiers, names that share
/// prefixes and contexts that go up and down.
fn shards() -> (Vec<PathBuf>, Vec<MethodRecord>) {
    use jitarena::counters::Schema;
    use jitarena::log::{LogWriter, MethodCounts, MethodInfo};
    use jitarena::Shared;
    let names = |p: &str, n: usize| (0..n).map(|i| format!("{p}{i}")).collect();
    let schemas = [
        Shared::new(Schema::of_log(names("K", 5), names("P", 3)).unwrap()),
        Shared::new(Schema::of_log(names("Q", 70), names("R", 2)).unwrap()),
    ];
    let mut all = Vec::new();
    let mut paths = Vec::new();
    for (s, n) in [2500usize, 1, 3000].into_iter().enumerate() {
        let path = tmp(&format!("shard{s}.jas"));
        let mut w = LogWriter::new(File::create(&path).unwrap()).unwrap();
        for i in 0..n {
            let k = (s * 10_000 + i) as u64;
            let schema = Shared::clone(&schemas[(k % 7 == 0) as usize]);
            let r = MethodRecord {
                info: MethodInfo {
                    name: Some(format!("Ns.C{}:M{}", k % 13, k * 7919 % 10_007)),
                    context: (k as i64 * 37) % 9_001 - 50,
                    tier: [None, Some("Tier0".into()), Some("Tier1".into())][(k % 3) as usize]
                        .clone(),
                },
                counts: MethodCounts {
                    kinds: vec![(1, k + 1, 1), (4, 3 * k, k % 5 + 1)],
                    phases: vec![(0, k + 1), (2, 3 * k)],
                    used_bytes: 4 * k + 1,
                    ..MethodCounts::default()
                },
                schema,
            };
            w.write_record(&r).unwrap();
            all.push(r);
        }
        w.finish().unwrap();
        paths.push(path);
    }
    (paths, all)
}

#[test]
fn records_reached_by_marks_are_those_read_through() {
    let (paths, all) = shards();
    let side = Side::read(&paths, &[], &Progress::hidden(), &AtomicBool::new(false))
        .unwrap()
        .unwrap();
    let collect = |by_marks: bool, needed: &[u32]| {
        let mut got = Vec::new();
        let f = |i: usize, reader: &LogReader, r: &mut MethodRecord| {
            reader.decode_current(r)?;
            got.push((i, r.clone()));
            Ok(())
        };
        match by_marks {
            true => visit_by_marks(&side.files, needed, "base", f),
            false => visit_through(&side.files, needed, "base", f),
        }
        .unwrap();
        got
    };
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let n = all.len() as u32;
    let mut sets: Vec<Vec<u32>> = vec![
        vec![],
        vec![0],
        vec![n - 1],
        vec![1023, 1024, 1025, 2499, 2500, 2501, 3524, 3525],
        (0..n).collect(),
    ];
    for density in [3u64, 50, 700] {
        sets.push(
            (0..n)
                .filter(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    seed % density == 0
                })
                .collect(),
        );
    }
    for needed in &sets {
        let want: Vec<(usize, MethodRecord)> = needed
            .iter()
            .map(|&i| (i as usize, all[i as usize].clone()))
            .collect();
        assert_eq!(
            collect(true, needed),
            want,
            "by marks, {} records",
            needed.len()
        );
        assert_eq!(
            collect(false, needed),
            want,
            "through, {} records",
            needed.len()
        );
    }
}

#[test]
fn marks_do_not_copy_a_long_name_shared_from_record_to_record() {
    use jitarena::counters::Schema;
    use jitarena::log::{LogWriter, MethodCounts};
    use jitarena::Shared;
    // Records 1 to 2,999 share record 0's name of 256 KiB whole: each takes a few bytes of
    // the file, and a mark before each 1,024th would copy the name (2 GiB for 8M records).
    let schema = Shared::new(Schema::of_log(vec!["K0".into()], vec!["P0".into()]).unwrap());
    let record = |context: i64| MethodRecord {
        info: MethodInfo {
            name: Some("N".repeat(256 << 10)),
            context,
            tier: None,
        },
        counts: MethodCounts {
            kinds: vec![(0, 16, 1)],
            phases: vec![(0, 16)],
            used_bytes: 16,
            ..MethodCounts::default()
        },
        schema: Shared::clone(&schema),
    };
    let write = |n: i64| {
        let mut bytes = Vec::new();
        let mut w = LogWriter::new(&mut bytes).unwrap();
        for context in 0..n {
            w.write_record(&record(context)).unwrap();
        }
        w.finish().unwrap();
        bytes
    };
    // Each record after the first is the same frame (context one more, the same name).
    let (two, mut bytes) = (write(2), write(3));
    let frame = bytes[two.len()..].to_vec();
    for _ in 3..3000 {
        bytes.extend_from_slice(&frame);
    }
    let path = tmp("long-names.jas");
    std::fs::write(&path, &bytes).unwrap();
    let side = Side::read(
        std::slice::from_ref(&path),
        &[],
        &Progress::hidden(),
        &AtomicBool::new(false),
    )
    .unwrap()
    .unwrap();
    let file = &side.files[0];
    assert_eq!(file.count, 3000);
    // Only the mark before the first record, which holds no name.
    assert_eq!(file.marks.len(), 1);
    // Records are still reached, from that mark.
    let mut got = Vec::new();
    visit_by_marks(&side.files, &[1, 1500, 2999], "base", |i, reader, r| {
        reader.decode_current(r)?;
        got.push((i, r.info.context, r.info.name.as_ref().map(String::len)));
        Ok(())
    })
    .unwrap();
    // Handed out cut, as every reader hands out a long name.
    let name = Some(jitarena::log::NAME_SHOWN_MAX);
    assert_eq!(got, [(1, 1, name), (1500, 1500, name), (2999, 2999, name)]);
}
