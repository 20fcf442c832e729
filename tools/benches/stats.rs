//! `stats` and `merge` speed: a generated stats log of 200,000 methods summed up, and two of
//! 100,000 merged into one (copying records, as `jitarena merge` does, and for reference
//! decoding and encoding every record, as it did before); throughput in methods. Run:
//! `cargo bench --bench stats`.

use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use jitarena_tools::cli::gen_log;
use jitarena_tools::gen::{GenOptions, Generator};
use jitarena_tools::logtools::{merge, merge_decoding};
use jitarena_tools::progress::Progress;
use jitarena_tools::stats::collect;

/// A generated log of `methods` methods (made once, kept between runs).
fn log(name: &str, seed: u64, methods: u64) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-stats");
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join(name);
    if !path.exists() {
        let generator = Generator::new(GenOptions {
            seed,
            methods,
            scale: vec![],
        })
        .expect("generator");
        gen_log(&generator, &path).expect("gen");
    }
    path
}

fn stats(c: &mut Criterion) {
    const METHODS: u64 = 200_000;
    let path = log("stats-200k.jas", 1, METHODS);
    let mut group = c.benchmark_group("stats");
    group.sample_size(10);
    group.throughput(Throughput::Elements(METHODS));
    group.bench_function("200k-methods", |b| {
        b.iter(|| collect(std::slice::from_ref(&path)).expect("stats"))
    });
    group.finish();
}

fn merging(c: &mut Criterion) {
    const METHODS: u64 = 100_000;
    let shards = [
        log("merge-a.jas", 1, METHODS),
        log("merge-b.jas", 2, METHODS),
    ];
    let out = shards[0].with_file_name("merged.jas");
    let mut group = c.benchmark_group("merge");
    group.sample_size(10);
    group.throughput(Throughput::Elements(2 * METHODS));
    group.bench_function("2x100k-methods", |b| {
        b.iter(|| merge(&shards, &out, &Progress::hidden()).expect("merge"))
    });
    group.bench_function("2x100k-methods-decoding", |b| {
        b.iter(|| merge_decoding(&shards, &out, &Progress::hidden()).expect("merge"))
    });
    group.finish();
}

criterion_group!(benches, stats, merging);
criterion_main!(benches);
