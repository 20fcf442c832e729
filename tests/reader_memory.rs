//! Memory follows the bytes read, not the sizes and counts a file claims: a frame that claims
//! 1 GiB in a small file, and a trace frame that claims one event per byte but holds few, are
//! read with allocations bounded by what is there. Measured with a counting allocator, per
//! thread (each test measures its own thread only).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use jitarena::format::{header, put_frame, put_signed, put_str, put_varint, Content};

struct Counting;

thread_local! {
    static LIVE: Cell<i64> = const { Cell::new(0) };
    static PEAK: Cell<i64> = const { Cell::new(0) };
}

fn note(delta: i64) {
    // `try_with`: the allocator also runs while thread-locals are torn down.
    let _ = LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

// SAFETY: every call is passed on to the system allocator unchanged; the counters only
// observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is the system allocator's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            note(layout.size() as i64);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note(-(layout.size() as i64));
        // SAFETY: `ptr` was allocated by `System` with `layout` (through `alloc`/`realloc`).
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract for `realloc` is the system allocator's.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            note(new_size as i64 - layout.size() as i64);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The most memory `f` held at once on this thread beyond what was held before it.
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, i64) {
    let start = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(start));
    let out = f();
    (out, PEAK.with(Cell::get) - start)
}

fn tmp(name: &str) -> std::path::PathBuf {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("reader-memory");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// The schema frame of a one-kind, no-phase schema.
fn schema_frame(out: &mut Vec<u8>) {
    let mut p = Vec::new();
    put_varint(&mut p, 0);
    put_varint(&mut p, 1);
    put_str(&mut p, "A");
    put_varint(&mut p, 0);
    put_frame(out, 1, &p);
}

#[test]
fn a_frame_claiming_1_gib_in_a_small_file_is_not_allocated() {
    let mut bytes = header(Content::Log).to_vec();
    schema_frame(&mut bytes);
    bytes.push(3);
    put_varint(&mut bytes, (1 << 30) - 1);
    bytes.extend_from_slice(&[7u8; 1000]);
    let path = tmp("claims-1-gib.jas");
    std::fs::write(&path, &bytes).unwrap();
    let (result, peak) = peak_of(|| jitarena::log::read_all(&path));
    eprintln!(
        "a file of {} bytes claiming a 1 GiB frame: {peak} bytes at most",
        bytes.len()
    );
    let (records, warnings) = result.unwrap();
    assert!(records.is_empty());
    assert!(warnings[0].contains("cut short"), "{warnings:?}");
    assert!(
        peak < 1 << 20,
        "reading a file of {} bytes held {peak} bytes",
        bytes.len()
    );
}

#[test]
fn a_trace_frame_claiming_an_event_per_byte_reserves_only_what_it_decodes() {
    // 4 MiB of payload that claims 4 Mi events; the third event is not a number.
    const PAYLOAD: usize = 4 << 20;
    let mut bytes = header(Content::Trace).to_vec();
    schema_frame(&mut bytes);
    let mut p = Vec::new();
    put_varint(&mut p, 0);
    put_signed(&mut p, 1);
    put_varint(&mut p, 0);
    put_str(&mut p, "m");
    put_varint(&mut p, PAYLOAD as u64);
    p.extend_from_slice(&[0, 8, 0, 8]); // two allocations of kind 0
    p.extend_from_slice(&[0xFF; 11]); // a number longer than 64 bits
    p.resize(PAYLOAD, 1);
    put_frame(&mut bytes, 4, &p);
    let path = tmp("claims-4-mi-events.jat");
    std::fs::write(&path, &bytes).unwrap();
    let (result, peak) = peak_of(|| {
        jitarena::trace::open(&path)
            .and_then(|mut r| r.next_method())
            .map(|_| ())
    });
    eprintln!("a {PAYLOAD}-byte trace frame claiming as many events: {peak} bytes at most");
    let err = result.unwrap_err();
    assert!(err.message.contains("claims-4-mi-events.jat"), "{err}");
    // The frame is read (4 MiB, in a buffer that grows with the bytes read); the events vector holds
    // what was decoded, not 16 bytes for each of the 4 Mi events claimed (64 MiB).
    assert!(
        peak < 2 * PAYLOAD as i64,
        "decoding a {PAYLOAD}-byte frame held {peak} bytes"
    );
}
