//! Properties of the arena through the safe Rust API: alignment, no overlap, large requests,
//! limits, reset, and counters equal to what was requested, on random request sequences.
//!
//! `.ci/run` also runs this file under miri (`cargo +nightly miri test --test arena`), with
//! fewer iterations: see [`scaled`].

use jitarena::{Arena, Config, ErrorCode, Kind, Phase};

/// What every request is rounded up to and every block aligned to: the pointer size.
const ALIGN: u64 = std::mem::size_of::<usize>() as u64;

/// The bytes a request takes: its size rounded up to the pointer size (size 0 as 1).
fn rounded(size: u64) -> u64 {
    size.max(1).next_multiple_of(ALIGN)
}

/// SplitMix64: a small deterministic generator, so failures reproduce from the seed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// `normal`, or the smaller `miri` under miri, which runs the arena core about a thousand times
/// slower but checks every access.
fn scaled(normal: u64, miri: u64) -> u64 {
    if cfg!(miri) {
        miri
    } else {
        normal
    }
}

fn kinds(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("K{i}")).collect()
}

/// A JIT-like size: mostly small, sometimes a few KiB, rarely larger than a page.
fn size(rng: &mut Rng) -> usize {
    match rng.below(100) {
        0 => 0,
        1..=2 => 16 * 1024 + rng.below(200_000) as usize,
        3..=10 => rng.below(4096) as usize,
        _ => 1 + rng.below(200) as usize,
    }
}

#[test]
fn random_sequences_are_aligned_disjoint_and_counted_exactly() {
    for seed in 0..scaled(20, 2) {
        let mut rng = Rng(seed);
        let kind_count = 1 + rng.below(60) as usize;
        let page = [4096, 65536, 1 << 20][rng.below(3) as usize];
        let arena = Arena::new(&Config::new(&kinds(kind_count)).page_size(page)).unwrap();
        let mut want_bytes = vec![0u64; kind_count + 1];
        let mut want_count = vec![0u64; kind_count + 1];
        let mut blocks: Vec<(*mut u8, usize, u8)> = Vec::new();
        let mut used = 0u64;
        for i in 0..scaled(3000, 150) {
            let size = size(&mut rng);
            // Now and then a kind out of range: counted in the invalid bucket.
            let kind = if rng.below(50) == 0 {
                kind_count as u32 + rng.below(1000) as u32
            } else {
                rng.below(kind_count as u64) as u32
            };
            let p = arena.alloc_bytes(size, Kind(kind)).unwrap().as_ptr();
            assert_eq!(
                p as usize % ALIGN as usize,
                0,
                "seed {seed}: allocation {i} of {size} bytes is misaligned"
            );
            let fill = (i % 251) as u8;
            // SAFETY: the arena gave us `size` writable bytes at `p`.
            unsafe { std::ptr::write_bytes(p, fill, size) };
            blocks.push((p, size, fill));
            let slot = (kind as usize).min(kind_count);
            want_bytes[slot] += size as u64;
            want_count[slot] += 1;
            used += rounded(size as u64);
        }
        for (i, &(p, size, fill)) in blocks.iter().enumerate() {
            // SAFETY: every block is still live: nothing was reset.
            let bytes = unsafe { std::slice::from_raw_parts(p, size) };
            assert!(
                bytes.iter().all(|&b| b == fill),
                "seed {seed}: block {i} was overwritten by another"
            );
        }
        let snap = arena.snapshot();
        let c = &snap.counters;
        assert_eq!(c.kind_bytes, want_bytes, "seed {seed}");
        assert_eq!(c.kind_count, want_count, "seed {seed}");
        assert_eq!(c.used_bytes, used, "seed {seed}");
        assert_eq!(c.total_bytes(), want_bytes.iter().sum::<u64>());
        assert!(c.reserved_bytes >= c.used_bytes);
        // Exact whenever the largest request is above the page size (no window holds it, so
        // it always takes the out-of-line path); below that, a lower bound.
        let largest = blocks.iter().map(|b| b.1 as u64).max().unwrap();
        if largest > page as u64 {
            assert_eq!(c.largest_alloc, largest, "seed {seed}");
        } else {
            assert!(c.largest_alloc <= largest, "seed {seed}");
        }
    }
}

#[test]
fn a_request_that_does_not_fit_takes_a_page_of_its_size_as_the_jits_arena_does() {
    const DESCRIPTOR: usize = 3 * std::mem::size_of::<usize>();
    let arena = Arena::new(&Config::new(&["A"])).unwrap();
    let small = arena.alloc_bytes(100, Kind(0)).unwrap().as_ptr() as usize;
    let big = arena.alloc_bytes(10 << 20, Kind(0)).unwrap().as_ptr() as usize;
    let next = arena.alloc_bytes(100, Kind(0)).unwrap().as_ptr() as usize;
    // Blocks are bumped upward from just past the page's descriptor; the large request opens
    // a page of the descriptor plus its size, rounded up to 64 KiB, and the blocks after it
    // go on in that page's tail (the first page's is abandoned).
    let rounded_100 = 100usize.next_multiple_of(std::mem::size_of::<usize>());
    assert_eq!(
        next,
        big + (10 << 20),
        "the next block follows the large one"
    );
    assert_ne!(
        small + rounded_100,
        next,
        "the first page's tail is abandoned"
    );
    let c = arena.snapshot().counters;
    assert_eq!(c.page_count, 2);
    assert_eq!(
        c.reserved_bytes,
        65536 + ((DESCRIPTOR + (10 << 20)) as u64).next_multiple_of(65536),
        "a page of the descriptor plus the request, rounded up to the page size"
    );
    assert_eq!(c.used_bytes, (2 * rounded_100 + (10 << 20)) as u64);
}

/// With the largest page (1 GiB) the bytes that the inline path counts in the packed counters
/// between two slow-path calls reach 2^31 after a few windows: the slow path must drain
/// before. The pages are never touched, so they cost address space
/// only (64-bit targets, not under miri).
#[test]
#[cfg(all(target_pointer_width = "64", not(miri)))]
fn the_largest_pages_count_exactly_past_4_gib_per_kind() {
    let page = 1usize << 30;
    let arena = Arena::new(&Config::new(&["A", "B"]).page_size(page)).unwrap();
    let size = (page / 4) - 8;
    let mut phase_a = 0u64;
    for i in 0..40u64 {
        arena.alloc_bytes(size, Kind(0)).unwrap();
        arena.alloc_bytes(8, Kind(1)).unwrap();
        phase_a += size as u64 + 8;
        let c = arena.snapshot().counters;
        assert_eq!(
            c.kind_bytes[0],
            (i + 1) * size as u64,
            "after {} requests",
            i + 1
        );
        assert_eq!(c.kind_count[0], i + 1);
        assert_eq!(c.kind_bytes[1], (i + 1) * 8);
        assert_eq!(c.kind_count[1], i + 1);
        assert_eq!(c.total_bytes(), phase_a);
    }
    assert!(arena.snapshot().counters.kind_bytes[0] > 1 << 33);
}

#[test]
fn zero_size_gives_distinct_blocks_and_huge_sizes_fail_cleanly() {
    let arena = Arena::new(&Config::new(&["A"])).unwrap();
    let a = arena.alloc_bytes(0, Kind(0)).unwrap();
    let b = arena.alloc_bytes(0, Kind(0)).unwrap();
    assert_ne!(a, b);
    let c = arena.snapshot().counters;
    assert_eq!(
        (c.kind_count[0], c.kind_bytes[0], c.used_bytes),
        (2, 0, 2 * ALIGN)
    );
    for huge in [
        usize::MAX,
        usize::MAX - 7,
        usize::MAX / 2 + 1,
        isize::MAX as usize,
    ] {
        let err = arena.alloc_bytes(huge, Kind(0)).unwrap_err();
        assert_eq!(err.code, ErrorCode::SizeOverflow, "{huge}");
        assert!(err.message.contains(&huge.to_string()), "{}", err.message);
    }
    assert_eq!(arena.failure(), Some(ErrorCode::SizeOverflow));
    assert_eq!(
        arena.snapshot().counters.kind_count[0],
        2,
        "failed requests are not counted"
    );
}

#[test]
fn the_limit_fails_requests_and_is_reported_then_reset_clears_it() {
    let mut arena = Arena::new(&Config::new(&["A"]).page_size(4096).limit_bytes(3 * 4096)).unwrap();
    let mut ok = 0;
    let err = loop {
        match arena.alloc_bytes(1000, Kind(0)) {
            Ok(_) => ok += 1,
            Err(e) => break e,
        }
    };
    assert_eq!(err.code, ErrorCode::Limit);
    assert_eq!(ok, 12, "three pages of four 1000-byte blocks each");
    assert!(err.message.contains("12288"), "{}", err.message);
    let c = arena.snapshot().counters;
    assert!(c.limit_hit && c.reserved_bytes <= 3 * 4096);
    assert!(
        arena.alloc_bytes(100_000, Kind(0)).is_err(),
        "a large request is held to the limit too"
    );
    arena.reset();
    let c = arena.snapshot().counters;
    assert!(!c.limit_hit && c.total_count() == 0 && arena.failure().is_none());
    assert_eq!(
        (c.page_count, c.reserved_bytes),
        (0, 0),
        "reset gives every page back, as a new arena holds none"
    );
    arena.alloc_bytes(1000, Kind(0)).unwrap();
}

#[test]
fn reset_reuses_the_kept_page_and_frees_the_rest() {
    let mut arena = Arena::new(&Config::new(&["A"]).page_size(4096)).unwrap();
    for _ in 0..100 {
        arena.alloc_bytes(100, Kind(0)).unwrap();
    }
    arena.alloc_bytes(50_000, Kind(0)).unwrap();
    assert!(arena.snapshot().counters.page_count > 3);
    arena.reset();
    let first = arena.alloc_bytes(8, Kind(0)).unwrap();
    let c = arena.snapshot().counters;
    assert_eq!((c.page_count, c.used_bytes, c.total_count()), (1, 8, 1));
    assert_eq!(first.as_ptr() as usize % ALIGN as usize, 0);
}

#[test]
fn pages_freed_by_reset_are_reused_by_the_next_methods() {
    let mut arena = Arena::new(&Config::new(&["A"]).page_size(4096)).unwrap();
    let fill = |arena: &Arena| -> std::collections::BTreeSet<usize> {
        (0..40)
            .map(|_| arena.alloc_bytes(1000, Kind(0)).unwrap().as_ptr() as usize & !4095)
            .collect()
    };
    let first = fill(&arena);
    assert!(first.len() >= 9, "{} pages", first.len());
    arena.reset();
    let second = fill(&arena);
    assert_eq!(first, second, "the same pages serve the next method");
    let c = arena.snapshot().counters;
    assert_eq!(
        c.reserved_bytes,
        c.page_count * 4096,
        "cached pages count again only once used"
    );
}

#[test]
fn phases_split_the_bytes_and_add_up_to_the_total() {
    let config = Config::new(&["A", "B"]).phases(&["Import", "Morph", "LSRA"]);
    let arena = Arena::new(&config).unwrap();
    arena.alloc_bytes(5, Kind(0)).unwrap(); // no phase yet
    arena.set_phase(Phase(0));
    arena.alloc_bytes(100, Kind(0)).unwrap();
    arena.set_phase(Phase(2));
    arena.alloc_bytes(30, Kind(1)).unwrap();
    arena.alloc_bytes(1 << 20, Kind(1)).unwrap(); // slow path, large
    arena.set_phase(Phase(0));
    arena.alloc_bytes(1, Kind(0)).unwrap();
    arena.set_phase(Phase(77)); // out of range: no phase
    arena.alloc_bytes(2, Kind(0)).unwrap();
    let c = arena.snapshot().counters;
    // Bytes used: each request rounded up to the pointer size.
    assert_eq!(
        c.phase_bytes,
        vec![
            rounded(100) + rounded(1),
            0,
            rounded(30) + (1 << 20),
            rounded(5) + rounded(2)
        ]
    );
    assert_eq!(c.phase_bytes.iter().sum::<u64>(), c.used_bytes);
}

/// The .NET JIT's phases as its compiler runs them: children ended inside their running
/// parent without being begun (LSRA's steps), an inlinee's phases begun and ended inside the
/// inliner's "Morph - Inlining", bytes between phases in "no phase"; past the head's 64 marks
/// and across pages.
#[test]
fn phases_as_the_jit_runs_them_put_every_byte_in_the_innermost_running_phase() {
    let names = [
        "Importation",
        "Morph - Inlining",
        "Linear scan register alloc",
        "LSRA build intervals",
        "LSRA allocate",
    ];
    let config = Config::new(&["ASTNode", "LSRA"])
        .phases(&names)
        .page_size(4096);
    let arena = Arena::new(&config).unwrap();
    let (import, inline, lsra, build, allocate) =
        (Phase(0), Phase(1), Phase(2), Phase(3), Phase(4));
    let mut want = [0u64; 6];
    for round in 0..40u64 {
        arena.alloc_bytes(8, Kind(0)).unwrap(); // between phases
        want[5] += 8;
        arena.phase_begin(import);
        arena.alloc_bytes(100, Kind(0)).unwrap();
        arena.phase_end(import);
        want[0] += rounded(100);
        arena.phase_begin(inline);
        arena.alloc_bytes(16, Kind(0)).unwrap();
        arena.phase_begin(import); // the inlinee's importer
        arena.alloc_bytes(40 + round as usize, Kind(0)).unwrap();
        arena.phase_end(import);
        want[0] += rounded(40 + round);
        arena.alloc_bytes(24, Kind(0)).unwrap();
        arena.phase_end(inline);
        want[1] += 16 + 24;
        arena.phase_begin(lsra);
        arena.alloc_bytes(200, Kind(1)).unwrap();
        arena.phase_end(build); // a child ended inside its parent
        arena.alloc_bytes(3000, Kind(1)).unwrap(); // a new page now and then
        arena.phase_end(allocate);
        arena.alloc_bytes(8, Kind(1)).unwrap();
        arena.phase_end(lsra);
        want[3] += 200;
        want[4] += 3000;
        want[2] += 8;
    }
    let c = arena.snapshot().counters;
    assert_eq!(c.phase_bytes, want);
    assert_eq!(c.phase_bytes.iter().sum::<u64>(), c.used_bytes);
    for (p, &w) in want.iter().enumerate().take(5) {
        assert_eq!(arena.snapshot().counters.phase_bytes[p], w);
    }
}

#[test]
fn values_and_slices_keep_their_alignment_and_contents() {
    #[repr(align(64))]
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Wide([u8; 64]);
    let arena = Arena::new(&Config::new(&["A"])).unwrap();
    let mut refs = Vec::new();
    for i in 0..200u8 {
        arena.alloc_bytes(i as usize % 13, Kind(0)).unwrap();
        let w = arena.alloc(Kind(0), Wide([i; 64])).unwrap();
        assert_eq!(w as *const Wide as usize % 64, 0);
        refs.push(&*w);
    }
    assert!(refs.iter().enumerate().all(|(i, w)| w.0 == [i as u8; 64]));
    let s = arena.alloc_slice_copy(Kind(0), &[1u16, 2, 3]).unwrap();
    assert_eq!(s, &[1, 2, 3]);
}

#[test]
fn the_jits_display_names_are_taken_as_they_are() {
    let phases = [
        "Indirect call transform",
        "SSA: DF",
        "Morph - Inlining",
        "Place 'align' instructions",
    ];
    let arena = Arena::new(&Config::new(&["CMK_ASTNode", "Ünïcode kind"]).phases(&phases)).unwrap();
    assert_eq!(arena.phase("SSA: DF"), Some(Phase(1)));
    assert_eq!(arena.kind("Ünïcode kind"), Some(Kind(1)));
}

#[test]
fn bad_configurations_are_refused_with_a_reason() {
    let cases: Vec<(Config, &str)> = vec![
        (Config::new(&["A", "A"]), "repeats"),
        (Config::new(&["tab\tinside"]), "without control characters"),
        (Config::new(&[" Leading"]), "white space at either end"),
        (Config::new(&["A", "line\nbreak"]), "kind 1"),
        (Config::new(&[""]), "kind 0"),
        (Config::new(&kinds(257)), "257 kinds"),
        (Config::new(&["A"]).page_size(100), "page size 100"),
        (Config::new(&["A"]).page_size(4097), "page size 4097"),
        (Config::new(&["A"]).phases(&["P", "P"]), "phase 1"),
    ];
    for (config, says) in cases {
        let err = Arena::new(&config).err().expect("refused");
        assert_eq!(err.code, ErrorCode::Config);
        assert!(
            err.message.contains(says),
            "{:?} should say {says:?}",
            err.message
        );
    }
}

#[test]
fn many_threads_create_fill_and_destroy_arenas_at_once() {
    let handles: Vec<_> = (0..scaled(8, 2))
        .map(|t| {
            std::thread::spawn(move || {
                let mut rng = Rng(t);
                let mut arena = Arena::new(&Config::new(&kinds(55))).unwrap();
                for method in 0..scaled(200, 4) {
                    let mut want = 0u64;
                    let n = rng.below(scaled(500, 40));
                    for _ in 0..n {
                        let s = size(&mut rng);
                        let p = arena.alloc_bytes(s, Kind(rng.below(55) as u32)).unwrap();
                        // SAFETY: `s` fresh bytes at `p`.
                        unsafe { std::ptr::write_bytes(p.as_ptr(), t as u8, s) };
                        want += s as u64;
                    }
                    assert_eq!(
                        arena.snapshot().counters.total_bytes(),
                        want,
                        "thread {t} method {method}"
                    );
                    if method % 3 == 0 {
                        arena = Arena::new(&Config::new(&kinds(55))).unwrap();
                    } else {
                        arena.reset();
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("a thread failed");
    }
}

/// Kinds by phase through the Rust API against a model: random sizes (past the quarter page
/// too), kinds out of range, phase switches and resets. Bytes per (phase, kind) sum over kinds
/// to the phase totals and over phases to the kind totals; with the option off they read 0.
#[test]
fn kinds_by_phase_sum_to_kind_and_phase_totals() {
    for seed in 0..scaled(24, 2) {
        let mut rng = Rng(1000 + seed);
        let kind_count = 1 + rng.below(40) as usize;
        let phase_count = rng.below(8) as usize;
        let on = seed % 4 != 3;
        let phase_names: Vec<String> = (0..phase_count).map(|i| format!("P{i}")).collect();
        let config = Config::new(&kinds(kind_count))
            .phases(&phase_names)
            .page_size(4096)
            .kinds_by_phase(on);
        let mut arena = Arena::new(&config).unwrap();
        // model[phase][kind]; the last row is "no phase", the last column the invalid bucket.
        let mut model = vec![vec![0u64; kind_count + 1]; phase_count + 1];
        let mut counts = vec![0u64; kind_count + 1];
        let mut used = vec![0u64; phase_count + 1];
        let mut phase = phase_count;
        for i in 0..scaled(2500, 120) {
            match rng.below(100) {
                0..=3 => {
                    let next = rng.below(phase_count as u64 + 2) as u32;
                    let next = if next as usize > phase_count {
                        u32::MAX
                    } else {
                        next
                    };
                    arena.set_phase(Phase(next));
                    phase = (next as usize).min(phase_count);
                }
                4 => {
                    arena.reset();
                    model.iter_mut().for_each(|row| row.fill(0));
                    used.fill(0);
                    counts.fill(0);
                    phase = phase_count;
                }
                _ => {
                    let kind = match rng.below(10) {
                        0 => [254, 255, 256, u32::MAX][rng.below(4) as usize],
                        1 => kind_count as u32 + rng.below(300) as u32,
                        _ => rng.below(kind_count as u64) as u32,
                    };
                    let size = match rng.below(10) {
                        0 => 1024 - 16 + rng.below(33) as usize,
                        1 => 1024 + rng.below(10_000) as usize,
                        _ => rng.below(200) as usize,
                    };
                    arena.alloc_bytes(size, Kind(kind)).unwrap();
                    let bucket = (kind as usize).min(kind_count);
                    model[phase][bucket] += size as u64;
                    used[phase] += rounded(size as u64);
                    counts[bucket] += 1;
                }
            }
            if i % 50 != 0 {
                continue;
            }
            let c = arena.snapshot().counters;
            for (p, row) in model.iter().enumerate() {
                let phase_id = if p == phase_count {
                    Phase::NONE
                } else {
                    Phase(p as u32)
                };
                let mut over_kinds = 0;
                for (k, &want) in row.iter().enumerate() {
                    let kind_id = if k == kind_count {
                        Kind(u32::MAX)
                    } else {
                        Kind(k as u32)
                    };
                    let got = arena.phase_kind_bytes(phase_id, kind_id);
                    assert_eq!(
                        got,
                        if on { want } else { 0 },
                        "seed {seed} op {i} ({p}, {k})"
                    );
                    over_kinds += got;
                }
                // Bytes requested with kinds by phase on (its kinds add up to them), else used.
                let want = if on { row.iter().sum::<u64>() } else { used[p] };
                assert_eq!(c.phase_bytes[p], want, "seed {seed} phase {p}");
                if on {
                    assert_eq!(over_kinds, c.phase_bytes[p], "seed {seed} phase {p}");
                }
            }
            for k in 0..=kind_count {
                let want: u64 = model.iter().map(|row| row[k]).sum();
                assert_eq!(c.kind_bytes[k], want, "seed {seed} kind {k}");
                assert_eq!(c.kind_count[k], counts[k], "seed {seed} kind {k}");
            }
            assert_eq!(arena.phase_kind_bytes(Phase(0), Kind(kind_count as u32)), 0);
        }
    }
}
