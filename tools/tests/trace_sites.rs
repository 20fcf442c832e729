//! Version 2 traces: each allocation's site (a per-method site table over module frames), read
//! back as written; version 1 traces still read, without sites; a version newer than this
//! build reads is refused with the message that a version-1 reader gives a version-2 trace.

mod common;

use std::io::Write;

use common::{s, tmp};
use jitarena::trace::{self, alloc_event, phase_event, Site, TraceWriter, NO_SITE};
use jitarena::{Schema, Shared};

fn schema() -> Shared<Schema> {
    Shared::new(Schema::new(vec!["ASTNode".into(), "LSRA".into()], vec!["Import".into()]).unwrap())
}

#[test]
fn sites_are_read_back_as_written_and_modules_once() {
    let path = tmp("sites_round_trip.jat");
    let mut w = TraceWriter::new(std::fs::File::create(&path).unwrap()).unwrap();
    let jit = w.module("/opt/jit/libclrjit.so").unwrap();
    let other = w.module("/usr/lib/libc.so.6").unwrap();
    assert_eq!((jit, other), (1, 2));
    let events = [
        phase_event(0),
        alloc_event(0, 24),
        alloc_event(1, 64),
        phase_event(1),
        alloc_event(0, 8),
    ];
    let sites = [
        Site {
            module: jit,
            offset: 0x1234,
        },
        Site {
            module: 0,
            offset: 0,
        },
    ];
    w.write_sited(
        &schema(),
        Some("A:m()"),
        1,
        None,
        &events,
        &sites,
        &[0, 1, 0],
    )
    .unwrap();
    let sites2 = [Site {
        module: other,
        offset: 9,
    }];
    w.write_sited(
        &schema(),
        Some("A:n()"),
        2,
        None,
        &events,
        &sites2,
        &[0, 0, 0],
    )
    .unwrap();
    // A method without sites, in the same trace.
    w.write(&schema(), Some("A:o()"), 3, None, &events).unwrap();
    // Refused, nothing written: a site per allocation, indices in the table, modules declared.
    for (sites, of) in [
        (&sites[..], &[0u32, 1][..]),
        (&sites[..], &[0, 1, 2][..]),
        (
            &[Site {
                module: 3,
                offset: 0,
            }][..],
            &[0, 0, 0][..],
        ),
    ] {
        let e = w
            .write_sited(&schema(), None, 4, None, &events, sites, of)
            .unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{e}");
    }
    w.finish().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes[9], 2, "version 2");
    // Each module's frame once, before the first method naming it: its path appears once.
    let count = |needle: &[u8]| bytes.windows(needle.len()).filter(|w| *w == needle).count();
    assert_eq!(count(b"/opt/jit/libclrjit.so"), 1);
    assert_eq!(count(b"/usr/lib/libc.so.6"), 1);

    let mut r = trace::open(&path).unwrap();
    assert_eq!(r.version(), 2);
    let mut seen = Vec::new();
    while let Some(mut m) = r.next_events().unwrap() {
        let table = m.sites().to_vec();
        let mut of = Vec::new();
        while let Some((events, sites)) = m.next_chunk_sited().unwrap() {
            assert_eq!(events.len(), sites.len());
            for (e, &site) in events.iter().zip(sites) {
                if e.op == jitarena::sys::JITARENA_EVENT_PHASE {
                    assert_eq!(site, NO_SITE);
                } else {
                    of.push(site);
                }
            }
        }
        seen.push((table, of));
    }
    assert_eq!(seen[0], (sites.to_vec(), vec![0, 1, 0]));
    assert_eq!(seen[1], (sites2.to_vec(), vec![0, 0, 0]));
    assert_eq!(seen[2], (vec![], vec![NO_SITE; 3]));
    assert_eq!(seen.len(), 3);
    assert_eq!(r.module(1), Some("/opt/jit/libclrjit.so"));
    assert_eq!(r.module(2), Some("/usr/lib/libc.so.6"));
    assert_eq!(r.module(0), None);
    // Tools that know nothing of sites read the same events.
    let text = common::ok(&["dump", s(&path), "--format", "text"]);
    assert_eq!(text.matches("alloc ASTNode 24").count(), 3, "{text}");
}

#[test]
fn a_version_1_trace_reads_without_sites() {
    // A version-1 trace as written before sites: header version 1, schema, one method.
    let path = tmp("sites_v1.jat");
    let mut w = TraceWriter::new(Vec::new()).unwrap();
    w.write(
        &schema(),
        Some("A:m()"),
        7,
        None,
        &[alloc_event(1, 40), phase_event(0), alloc_event(0, 8)],
    )
    .unwrap();
    let mut bytes = w.finish().unwrap();
    // The version-2 writer's method frame without sites is a version-1 frame plus its site
    // count (0): take it out and mark the file version 1.
    bytes[9] = 1;
    let v1 = rewrite_without_site_counts(&bytes);
    std::fs::File::create(&path)
        .unwrap()
        .write_all(&v1)
        .unwrap();
    let mut r = trace::open(&path).unwrap();
    assert_eq!(r.version(), 1);
    let mut m = r.next_events().unwrap().unwrap();
    assert!(m.sites().is_empty());
    assert_eq!(m.allocations(), 2);
    let (events, sites) = m.next_chunk_sited().unwrap().unwrap();
    assert_eq!(events.len(), 3);
    assert!(sites.iter().all(|&s| s == NO_SITE));
    assert_eq!(m.info().context, 7);
}

#[test]
fn a_newer_version_is_refused_with_the_message_version_1_readers_give() {
    // Version 3 (methods in parts) is what a version-2 reader refuses so, with "version 3"
    // and "versions 1 to 2"; this build reads it, and refuses version 4.
    let path = tmp("sites_v4.jat");
    let mut bytes = TraceWriter::new(Vec::new()).unwrap().finish().unwrap();
    bytes[9] = 4;
    std::fs::write(&path, &bytes).unwrap();
    let err = common::fails(&["dump", s(&path), "--format", "text"]);
    assert!(
        err.contains("format version 4 is not readable by this jitarena, which reads versions 1 to 3: use a jitarena at least as new as the writer"),
        "{err}"
    );
    assert!(err.contains(s(&path)), "{err}");
}

/// A trace's frames with each method frame (type 4) re-framed without the site count that
/// follows its name: the version-1 layout.
fn rewrite_without_site_counts(bytes: &[u8]) -> Vec<u8> {
    use jitarena::format::{put_frame, Payload};
    let mut out = bytes[..12].to_vec();
    let mut at = 12;
    while at < bytes.len() {
        let kind = bytes[at];
        let mut p = Payload::new(&bytes[at + 1..]);
        let len = p.varint().unwrap() as usize;
        let start = at + 1 + p.position();
        let payload = &bytes[start..start + len];
        if kind == 4 {
            let mut q = Payload::new(payload);
            q.varint().unwrap(); // schema
            q.signed().unwrap(); // context
            q.varint().unwrap(); // tier
            q.str().unwrap(); // name
            let head = q.position();
            assert_eq!(payload[head], 0, "no sites");
            let mut v1 = payload[..head].to_vec();
            v1.extend_from_slice(&payload[head + 1..]);
            put_frame(&mut out, kind, &v1);
        } else {
            put_frame(&mut out, kind, payload);
        }
        at = start + len + 4;
    }
    out
}
