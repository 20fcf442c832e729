//! More than 256 kinds: a stats log (merged from many processes, or written by another tool)
//! may name any number; readers count them all. A trace replays through the arena, which has
//! 255 nameable kinds: a trace with more is refused, naming the file. Uniting many schemas costs
//! work in proportion to their names.

use jitarena::format::{put_frame, put_signed, put_str, put_varint, Content};
use jitarena::log::{self, LogReader};
use jitarena::Shared;
use jitarena_tools::union::SchemaUnion;

use super::{jitarena, names, stderr, tmp, Builder};

/// A log of one schema with `kinds` kinds named `prefix0..`, a method per `context` with
/// `i + 1` bytes in every kind `i`.
fn wide_log(name: &str, prefix: &str, kinds: usize, methods: i64) -> std::path::PathBuf {
    let mut b = Builder::new(Content::Log);
    b.schema(0, &names(prefix, kinds), &names("P", 1));
    for context in 0..methods {
        let slots: Vec<(u64, u64, u64)> = (0..kinds as u64).map(|i| (0, i + 1, 1)).collect();
        b.method(0, context, &slots, &[(0, 1)]);
    }
    let path = tmp(name);
    b.write(&path);
    path
}

fn json_kinds(stdout: &[u8]) -> usize {
    let text = String::from_utf8_lossy(stdout);
    let kinds = text
        .split("\"kinds\":[")
        .nth(1)
        .unwrap()
        .split(']')
        .next()
        .unwrap();
    kinds.matches("\"name\"").count()
}

#[test]
fn a_log_of_300_kinds_is_read_merged_and_dumped_whole() {
    let path = wide_log("wide.jas", "K", 300, 3);
    let (records, warnings) = log::read_all(&path).unwrap();
    assert!(warnings.is_empty());
    assert_eq!(records[0].schema.kinds.len(), 300);
    assert_eq!(records[0].counts.kinds.last(), Some(&(299, 300, 1)));

    let p = path.to_str().unwrap();
    let out = jitarena(&["stats", "--json", p], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json_kinds(&out.stdout), 300);
    assert!(String::from_utf8_lossy(&out.stdout)
        .contains("{\"name\":\"K299\",\"bytes\":900,\"count\":3}"));

    let merged = tmp("wide-merged.jas");
    let out = jitarena(&["merge", "-o", merged.to_str().unwrap(), p], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    let (back, _) = log::read_all(&merged).unwrap();
    assert_eq!(back, records, "merge reads back what it merged");

    let out = jitarena(&["dump", p], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let header = text.lines().next().unwrap();
    assert_eq!(header.matches(",bytes:K").count(), 300);
}

#[test]
fn two_logs_of_200_different_kinds_unite_into_400_not_into_none() {
    let a = wide_log("wide-a.jas", "A", 200, 1);
    let b = wide_log("wide-b.jas", "B", 200, 1);
    let out = jitarena(
        &["stats", "--json", a.to_str().unwrap(), b.to_str().unwrap()],
        b"",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json_kinds(&out.stdout), 400);
    let merged = tmp("wide-ab.jas");
    let out = jitarena(
        &[
            "merge",
            "-o",
            merged.to_str().unwrap(),
            a.to_str().unwrap(),
            b.to_str().unwrap(),
        ],
        b"",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let (back, _) = log::read_all(&merged).unwrap();
    assert_eq!(back[1].schema.kinds.len(), 400);
    assert_eq!(back[1].counts.kinds[0], (200, 1, 1));
}

#[test]
fn a_trace_of_300_kinds_is_refused_naming_the_file() {
    let mut bytes = jitarena::format::header(Content::Trace).to_vec();
    let mut p = Vec::new();
    put_varint(&mut p, 0);
    put_varint(&mut p, 300);
    names("K", 300).iter().for_each(|k| put_str(&mut p, k));
    put_varint(&mut p, 0);
    put_frame(&mut bytes, 1, &p);
    let path = tmp("wide.jat");
    std::fs::write(&path, &bytes).unwrap();
    let err = match jitarena::trace::open(&path).and_then(|mut r| r.next_method()) {
        Ok(_) => panic!("a 300-kind trace was read"),
        Err(e) => e.message,
    };
    assert!(
        err.contains("wide.jat") && err.contains("at most 255 kinds"),
        "{err}"
    );
    let out = jitarena(&["replay", path.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("at most 255 kinds"),
        "{}",
        stderr(&out)
    );
}

/// A log of `n` schemas, all different (each its own phase name), one method each.
fn many_schemas(n: u64) -> Vec<u8> {
    let mut bytes = jitarena::format::header(Content::Log).to_vec();
    for id in 0..n {
        let mut p = Vec::new();
        put_varint(&mut p, id);
        put_varint(&mut p, 2);
        ["A", "B"].iter().for_each(|k| put_str(&mut p, k));
        put_varint(&mut p, 1);
        put_str(&mut p, &format!("P{id}"));
        put_frame(&mut bytes, 1, &p);
        let mut p = Vec::new();
        put_varint(&mut p, id);
        put_signed(&mut p, id as i64);
        put_varint(&mut p, 0);
        put_str(&mut p, "");
        [0, 8, 65536, 1, 8]
            .iter()
            .for_each(|&v| put_varint(&mut p, v));
        put_varint(&mut p, 1);
        [1, 8, 1].iter().for_each(|&v| put_varint(&mut p, v));
        put_varint(&mut p, 1);
        [0, 8].iter().for_each(|&v| put_varint(&mut p, v));
        put_frame(&mut bytes, 3, &p);
    }
    bytes
}

#[test]
fn uniting_60000_schemas_costs_work_in_proportion_to_their_names() {
    const N: u64 = 60_000;
    let path = tmp("many-schemas.jas");
    std::fs::write(&path, many_schemas(N)).unwrap();
    let mut reader = LogReader::open(&path).unwrap();
    let mut union = SchemaUnion::default();
    let (mut names_seen, mut records) = (0u64, 0u64);
    while let Some(r) = reader.next_record().unwrap() {
        union.add(&r.schema);
        union.add(&r.schema); // the same Arc again: a lookup
        names_seen += (r.schema.kinds.len() + r.schema.phases.len()) as u64;
        records += 1;
    }
    assert_eq!(records, N);
    assert_eq!((union.kind_count(), union.phase_count()), (2, N as usize));
    // Each schema's names are hashed once and interned once, and compared with at most the
    // schemas of the same hash.
    assert!(
        union.work() <= 3 * names_seen,
        "{} units of work for {names_seen} names",
        union.work()
    );
    // The same schemas again, in new Arcs (as a second reader of the same file holds them):
    // found by their names, not added twice.
    let before = union.work();
    let mut reader = LogReader::open(&path).unwrap();
    while let Some(r) = reader.next_record().unwrap() {
        union.add(&r.schema);
    }
    assert_eq!(union.phase_count(), N as usize);
    assert!(union.work() - before <= 3 * names_seen);

    let stats = jitarena_tools::stats::collect(&[path]).unwrap();
    assert_eq!(stats.methods, N);
    assert_eq!(stats.phases.len(), N as usize);
    assert_eq!(stats.kinds.iter().map(|k| k.bytes).sum::<u64>(), 8 * N);
}

#[test]
fn equal_schemas_in_different_files_unite_as_one() {
    let a = wide_log("same-a.jas", "K", 5, 2);
    let b = wide_log("same-b.jas", "K", 5, 2);
    let (ra, _) = log::read_all(&a).unwrap();
    let (rb, _) = log::read_all(&b).unwrap();
    assert!(!Shared::ptr_eq(&ra[0].schema, &rb[0].schema));
    let mut union = SchemaUnion::default();
    union.add(&ra[0].schema);
    union.add(&rb[0].schema);
    assert_eq!(union.kind_count(), 5);
    let mut out = jitarena::MethodCounts::default();
    union.remap(&rb[0].schema, &rb[0].counts, &mut out);
    assert_eq!(out.kinds, rb[0].counts.kinds);
}
