//! What an allocation costs, with and without counting, beside bumpalo and the C library's
//! malloc (and LLVM's BumpPtrAllocator with `--features llvm-bench`); what a whole replayed
//! method costs; what `jitarena_method_done` adds. Run: `cargo bench --bench alloc`.
//! The figures of record are in BENCHMARKS.md.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use jitarena::log::LogWriter;
use jitarena::trace::{alloc_event, TraceMethod};
use jitarena::{Arena, Config, Event, Kind, MethodRef, Phase};
use jitarena_tools::gen::{GenOptions, Generator};
use jitarena_tools::harness::{replay_events, ReplayOptions, Replayer};

/// Allocations per measured batch (the arena is reset after each batch).
const BATCH: usize = 4096;

fn kinds() -> Vec<String> {
    jitarena_tools::gen::RYUJIT_KINDS
        .iter()
        .map(|k| k.to_string())
        .collect()
}

/// A batch of requests: fixed size, or the JIT-like mix of the generator.
fn workloads() -> Vec<(String, Vec<Event>)> {
    let mut out: Vec<(String, Vec<Event>)> = [8u64, 24, 64, 256]
        .iter()
        .map(|&size| {
            (
                format!("{size}B"),
                (0..BATCH)
                    .map(|i| alloc_event((i % 55) as u32, size))
                    .collect(),
            )
        })
        .collect();
    let generator = Generator::new(GenOptions {
        seed: 1,
        methods: 64,
        scale: vec![],
    })
    .expect("generator");
    let mut mix = Vec::new();
    let mut events = Vec::new();
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

#[cfg(feature = "llvm-bench")]
extern "C" {
    fn jitarena_llvm_bump_batch(events: *const Event, count: usize) -> usize;
}

fn allocation(c: &mut Criterion) {
    let mut group = c.benchmark_group("alloc");
    group.throughput(Throughput::Elements(BATCH as u64));
    let mut arena = Arena::new(&Config::new(&kinds())).expect("arena");
    let mut bump = bumpalo::Bump::new();
    for (name, events) in workloads() {
        group.bench_with_input(
            BenchmarkId::new("jitarena-counted", &name),
            &events,
            |b, ev| {
                b.iter(|| {
                    black_box(replay_events(&arena, ev, true));
                    arena.reset();
                })
            },
        );
        group.bench_with_input(
            BenchmarkId::new("jitarena-uncounted", &name),
            &events,
            |b, ev| {
                b.iter(|| {
                    black_box(replay_events(&arena, ev, false));
                    arena.reset();
                })
            },
        );
        group.bench_with_input(BenchmarkId::new("bumpalo", &name), &events, |b, ev| {
            b.iter(|| {
                for (i, e) in ev.iter().enumerate() {
                    let layout = Layout::from_size_align(e.size as usize, 8).expect("layout");
                    let p = bump.alloc_layout(layout);
                    // SAFETY: a fresh block of e.size >= 8 bytes.
                    unsafe { *p.as_ptr() = i as u8 };
                }
                bump.reset();
            })
        });
        let mut blocks: Vec<(*mut u8, Layout)> = Vec::with_capacity(BATCH);
        group.bench_with_input(BenchmarkId::new("malloc", &name), &events, |b, ev| {
            b.iter(|| {
                for (i, e) in ev.iter().enumerate() {
                    let layout = Layout::from_size_align(e.size as usize, 8).expect("layout");
                    // SAFETY: a non-zero size; freed below with the same layout.
                    let p = unsafe { System.alloc(layout) };
                    if !p.is_null() {
                        // SAFETY: a fresh block of at least one byte.
                        unsafe { *p = i as u8 };
                        blocks.push((p, layout));
                    }
                }
                for (p, layout) in blocks.drain(..) {
                    // SAFETY: allocated above with this layout.
                    unsafe { System.dealloc(p, layout) };
                }
            })
        });
        #[cfg(feature = "llvm-bench")]
        group.bench_with_input(BenchmarkId::new("llvm-bumpptr", &name), &events, |b, ev| {
            // SAFETY: a valid slice; the C++ side owns its allocator.
            b.iter(|| black_box(unsafe { jitarena_llvm_bump_batch(ev.as_ptr(), ev.len()) }))
        });
    }
    group.finish();
}

/// Generated whole methods, in memory.
fn methods(n: u64) -> Vec<TraceMethod> {
    let generator = Generator::new(GenOptions {
        seed: 2,
        methods: n,
        scale: vec![],
    })
    .expect("generator");
    (0..n)
        .map(|i| {
            let mut events = Vec::new();
            let info = generator.method_events(i, &mut events);
            TraceMethod {
                schema: generator.schema().clone(),
                info,
                events,
            }
        })
        .collect()
}

fn replay(c: &mut Criterion) {
    let trace = methods(200);
    let allocations: u64 = trace
        .iter()
        .map(|m| m.events.iter().filter(|e| e.op == 0).count() as u64)
        .sum();
    for (unit, elements) in [
        ("allocations", allocations),
        ("methods", trace.len() as u64),
    ] {
        let mut group = c.benchmark_group(format!("replay-{unit}"));
        group.sample_size(20);
        group.throughput(Throughput::Elements(elements));
        for (variant, counters, log) in [
            ("uncounted", false, false),
            ("counted", true, false),
            ("counted+log", true, true),
        ] {
            group.bench_function(variant, |b| {
                let mut replayer = Replayer::new(ReplayOptions {
                    counters,
                    ..ReplayOptions::default()
                });
                let mut writer = LogWriter::new(std::io::sink()).expect("sink");
                b.iter(|| {
                    for m in &trace {
                        black_box(replayer.run(m).expect("replay"));
                        if log {
                            let i = &m.info;
                            writer
                                .write(
                                    &m.schema,
                                    i.name.as_deref(),
                                    i.context,
                                    i.tier.as_deref(),
                                    replayer.counts(),
                                )
                                .expect("write");
                        }
                    }
                })
            });
        }
        group.finish();
    }
}

/// One JIT-like method: about 40 allocations over 30 kinds and 10 phases.
fn fill(arena: &Arena) {
    for p in 0..10u32 {
        arena.set_phase(Phase(p));
        for k in (p..55).step_by(7) {
            black_box(arena.alloc_bytes(16 + k as usize, Kind(k)).expect("alloc"));
        }
    }
}

fn method_done(c: &mut Criterion) {
    let mut group = c.benchmark_group("method_done");
    group.throughput(Throughput::Elements(1));
    let config = Config::new(&kinds()).phases(&jitarena_tools::gen::PHASES);
    let method = MethodRef {
        name: Some("System.Collections.Generic.List`1[int]:Add(int):this"),
        context: 1234,
        tier: Some("FullOpts"),
        failed: false,
    };
    let mut arena = Arena::new(&config).expect("arena");
    group.bench_function("fill-only", |b| {
        b.iter(|| {
            fill(&arena);
            arena.reset();
        })
    });
    group.bench_function("fill+method_done-nolog", |b| {
        b.iter(|| {
            fill(&arena);
            arena.method_done(method).expect("method_done");
            arena.reset();
        })
    });
    let dir = std::env::temp_dir().join(format!("jitarena-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let log = dir.join("bench.jas");
    jitarena::process::log_open(log.to_str().expect("path")).expect("log");
    group.bench_function("fill+method_done-log", |b| {
        b.iter(|| {
            fill(&arena);
            arena.method_done(method).expect("method_done");
            arena.reset();
        })
    });
    group.bench_function("fill+method_done-log-2threads", |b| {
        b.iter_custom(|iters| {
            let start = std::time::Instant::now();
            std::thread::scope(|s| {
                for _ in 0..2 {
                    let config = &config;
                    s.spawn(move || {
                        let mut arena = Arena::new(config).expect("arena");
                        for _ in 0..iters.div_ceil(2) {
                            fill(&arena);
                            arena.method_done(method).expect("method_done");
                            arena.reset();
                        }
                    });
                }
            });
            start.elapsed()
        })
    });
    jitarena::process::log_close().expect("close");
    let _ = std::fs::remove_dir_all(&dir);
    group.finish();
}

criterion_group!(benches, allocation, replay, method_done);
criterion_main!(benches);
