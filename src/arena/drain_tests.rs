//! The packed counters against a model, with the drain bound made small so that the slow path
//! drains often: every reader (kind bytes and counts, the invalid bucket, totals, phase bytes,
//! bytes per (phase, kind), a method's record counts) must stay exact across drains and resets,
//! for requests through the Rust inline path and (outside miri) the C header's inline path.

use super::{Arena, Config, Kind, Phase};
use crate::counters::MethodCounts;
#[cfg(not(miri))]
use crate::sys::{jitarena, jitarena_event, JITARENA_EVENT_ALLOC};

#[cfg(not(miri))]
extern "C" {
    /// The replay driver (src/driver/replay.c): each request through the header's inline path.
    fn jitarena_replay(arena: *mut jitarena, events: *const jitarena_event, count: usize) -> usize;
}

/// SplitMix64, so that a failure reproduces from its seed.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n
    }
}

/// What the arena must report: per kind bucket (the last is the invalid bucket), per phase
/// (the last is "no phase": bytes used, each request rounded up to the pointer size, or bytes requested with
/// kinds by phase on), per (phase, kind)
/// (bytes requested).
struct Model {
    bytes: Vec<u64>,
    count: Vec<u64>,
    phase: Vec<u64>,
    phase_kind: Vec<Vec<u64>>,
    current: usize,
    /// Phases count bytes requested (kinds by phase on), else bytes used.
    requested: bool,
}

impl Model {
    fn new(kinds: usize, phases: usize) -> Model {
        Model {
            bytes: vec![0; kinds + 1],
            count: vec![0; kinds + 1],
            phase: vec![0; phases + 1],
            phase_kind: vec![vec![0; kinds + 1]; phases + 1],
            current: phases,
            requested: false,
        }
    }

    fn add(&mut self, kind: u32, size: u64) {
        let k = (kind as usize).min(self.bytes.len() - 1);
        self.bytes[k] += size;
        self.count[k] += 1;
        self.phase[self.current] += match self.requested {
            true => size,
            false => size
                .max(1)
                .next_multiple_of(std::mem::size_of::<usize>() as u64),
        };
        self.phase_kind[self.current][k] += size;
    }
}

fn check(arena: &Arena, model: &Model, kinds_by_phase: bool, what: &str) {
    let kinds = model.bytes.len() - 1;
    let c = arena.snapshot().counters;
    assert_eq!(c.kind_bytes, model.bytes, "{what}: kind bytes");
    assert_eq!(c.kind_count, model.count, "{what}: kind counts");
    assert_eq!(c.phase_bytes, model.phase, "{what}: phase bytes");
    let raw = arena.raw();
    assert_eq!(raw.total_bytes(), model.bytes.iter().sum::<u64>(), "{what}");
    assert_eq!(raw.total_count(), model.count.iter().sum::<u64>(), "{what}");
    let invalid = (model.bytes[kinds], model.count[kinds]);
    assert_eq!(
        (raw.kind_bytes(u32::MAX), raw.kind_count(u32::MAX)),
        invalid,
        "{what}: invalid bucket"
    );
    let mut mc = MethodCounts::default();
    arena.fill_counts(&mut mc).unwrap();
    let want_kinds: Vec<(u32, u64, u64)> = (0..=kinds)
        .filter(|&k| model.count[k] != 0)
        .map(|k| (k as u32, model.bytes[k], model.count[k]))
        .collect();
    assert_eq!(mc.kinds, want_kinds, "{what}: record kinds");
    let want_phases: Vec<(u32, u64)> = (0..model.phase.len())
        .filter(|&p| model.phase[p] != 0)
        .map(|p| (p as u32, model.phase[p]))
        .collect();
    assert_eq!(mc.phases, want_phases, "{what}: record phases");
    let mut want_pk = Vec::new();
    for (p, row) in model.phase_kind.iter().enumerate() {
        for (k, &b) in row.iter().enumerate() {
            let kind = if k == kinds { u32::MAX } else { k as u32 };
            let got = arena.phase_kind_bytes(Phase(p as u32), Kind(kind));
            assert_eq!(
                got,
                if kinds_by_phase { b } else { 0 },
                "{what}: ({p}, {k})"
            );
            if b != 0 && kinds_by_phase {
                want_pk.push((p as u32, k as u32, b));
            }
        }
    }
    assert_eq!(mc.phase_kind_bytes, want_pk, "{what}: record (phase, kind)");
}

/// A size: mostly small, some up to and past the quarter page, some 0.
fn size(rng: &mut Rng, page: usize) -> usize {
    match rng.below(100) {
        0 => 0,
        1..=3 => page / 4 - 16 + rng.below(32) as usize,
        4..=5 => page / 4 + rng.below(page as u64) as usize,
        6..=15 => rng.below(page as u64 / 4) as usize,
        _ => 1 + rng.below(120) as usize,
    }
}

#[test]
fn every_reader_stays_exact_across_drains_and_resets() {
    let (seeds, ops) = if cfg!(miri) { (2, 300) } else { (16, 4000) };
    let mut drains = 0;
    for seed in 0..seeds {
        let mut rng = Rng(seed);
        let kind_count = 1 + rng.below(40) as usize;
        let phase_count = rng.below(4) as usize;
        let page = [4096usize, 65536][rng.below(2) as usize];
        let kinds_by_phase = rng.below(2) == 0;
        let kind_names: Vec<String> = (0..kind_count).map(|i| format!("K{i}")).collect();
        let phase_names: Vec<String> = (0..phase_count).map(|i| format!("P{i}")).collect();
        let config = Config::new(&kind_names)
            .phases(&phase_names)
            .page_size(page)
            .kinds_by_phase(kinds_by_phase);
        let mut arena = Arena::new(&config).unwrap();
        // 0: a drain at every window; the others every few windows.
        let bound = [0, 64, page as u64, 5 * page as u64][rng.below(4) as usize];
        arena.raw_mut().kinds.set_drain_at(bound);
        let mut model = Model::new(kind_count, phase_count);
        model.requested = kinds_by_phase;
        for op in 0..ops {
            let what = format!("seed {seed}, op {op}, bound {bound}");
            match rng.below(200) {
                0 => {
                    check(&arena, &model, kinds_by_phase, &what);
                    arena.reset();
                    model = Model::new(kind_count, phase_count);
                    model.requested = kinds_by_phase;
                }
                1..=3 => {
                    let phase = rng.below(phase_count as u64 + 2) as u32;
                    arena.set_phase(Phase(phase));
                    model.current = (phase as usize).min(phase_count);
                }
                _ => {
                    let size = size(&mut rng, page);
                    let kind = match rng.below(40) {
                        0 => kind_count as u32 + rng.below(300) as u32,
                        1 => u32::MAX - rng.below(2) as u32,
                        _ => rng.below(kind_count as u64) as u32,
                    };
                    #[cfg(not(miri))]
                    if rng.below(2) == 0 {
                        let event = jitarena_event {
                            op: JITARENA_EVENT_ALLOC,
                            arg: kind,
                            size: size as u64,
                        };
                        // SAFETY: a live arena and one event.
                        let failed = unsafe { jitarena_replay(arena.as_c_ptr(), &event, 1) };
                        assert_eq!(failed, 0, "{what}");
                        model.add(kind, size as u64);
                        continue;
                    }
                    arena.alloc_bytes(size, Kind(kind)).unwrap();
                    model.add(kind, size as u64);
                }
            }
            if op % 97 == 0 {
                check(&arena, &model, kinds_by_phase, &what);
            }
        }
        check(&arena, &model, kinds_by_phase, &format!("seed {seed}, end"));
        drains += arena.raw().kinds.drains;
    }
    let enough = if cfg!(miri) { 10 } else { 100 };
    assert!(
        drains > enough,
        "only {drains} drains: the test missed the drain path"
    );
}
