//! The allocation benchmark's batches (`benches/alloc.rs`: 4,096 requests, each touched, then a
//! reset) timed one batch at a time, the three allocators taking turns, for a shared machine:
//! other processes' load lands on all three alike, and the minimum and 10th percentile of many
//! single batches show what a quiet core would, where criterion's medians wander by a third.
//!
//! `cargo run --release -p jitarena-tools --example alloc_interleaved [TRIALS]` (default 5000).

use std::alloc::Layout;
use std::hint::black_box;
use std::time::Instant;

use jitarena::trace::alloc_event;
use jitarena::{Arena, Config, Event};
use jitarena_tools::gen::{GenOptions, Generator, RYUJIT_KINDS};
use jitarena_tools::harness::replay_events;

/// Requests per batch, as in `benches/alloc.rs`.
const BATCH: usize = 4096;

/// The benchmark's workloads: fixed sizes over 55 kinds, and the generator's JIT-like mix.
fn workloads() -> Vec<(String, Vec<Event>)> {
    let mut out: Vec<(String, Vec<Event>)> = [8u64, 24, 64, 256]
        .iter()
        .map(|&size| {
            let events = (0..BATCH)
                .map(|i| alloc_event((i % 55) as u32, size))
                .collect();
            (format!("{size}B"), events)
        })
        .collect();
    let options = GenOptions {
        seed: 1,
        methods: 64,
        scale: vec![],
    };
    let generator = Generator::new(options).expect("the default generator options are valid");
    let (mut mix, mut events) = (Vec::new(), Vec::new());
    for m in 0.. {
        generator.method_events(m, &mut events);
        mix.extend(events.iter().filter(|e| e.op == 0).copied());
        if mix.len() >= BATCH {
            break;
        }
    }
    mix.truncate(BATCH);
    out.push(("jit-mix".to_string(), mix));
    out
}

/// Minimum, 10th percentile and median of `times`, in microseconds.
fn summary(times: &mut [f64]) -> (f64, f64, f64) {
    times.sort_by(f64::total_cmp);
    let n = times.len();
    (times[0], times[n / 10], times[n / 2])
}

fn main() {
    let trials = std::env::args()
        .nth(1)
        .and_then(|a| a.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(5000);
    let kinds: Vec<&str> = RYUJIT_KINDS.to_vec();
    let mut arena = Arena::new(&Config::new(&kinds)).expect("a valid config");
    let mut bump = bumpalo::Bump::new();
    println!("{trials} batches each; microseconds per batch of {BATCH}: min / p10 / median");
    for (name, events) in workloads() {
        let mut times: [Vec<f64>; 3] = Default::default();
        for trial in 0..trials {
            for turn in 0..3 {
                let variant = (trial + turn) % 3;
                let start = Instant::now();
                if variant < 2 {
                    black_box(replay_events(&arena, &events, variant == 0));
                    arena.reset();
                } else {
                    for (i, e) in events.iter().enumerate() {
                        let layout =
                            Layout::from_size_align(e.size as usize, 8).expect("a small size");
                        let p = bump.alloc_layout(layout);
                        // SAFETY: a fresh block of e.size >= 8 bytes.
                        unsafe { *p.as_ptr() = i as u8 };
                    }
                    bump.reset();
                }
                times[variant].push(start.elapsed().as_secs_f64() * 1e6);
            }
        }
        let [counted, uncounted, bumpalo] = times.each_mut().map(|t| summary(t));
        let show =
            |(min, p10, median): (f64, f64, f64)| format!("{min:.2} / {p10:.2} / {median:.2}");
        println!(
            "{name:8} counted {}  uncounted {}  bumpalo {}  (min: counted {:.2}x, uncounted {:.2}x bumpalo)",
            show(counted),
            show(uncounted),
            show(bumpalo),
            counted.0 / bumpalo.0,
            uncounted.0 / bumpalo.0,
        );
    }
}
