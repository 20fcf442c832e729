//! memdiff's speed: two generated stats logs of 200,000 methods each, diffed; throughput in
//! methods per side. Run: `cargo bench --bench memdiff`.

use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use jitarena_tools::cli::gen_log;
use jitarena_tools::diff::{diff_logs, DiffOptions};
use jitarena_tools::gen::{GenOptions, Generator};

const METHODS: u64 = 200_000;

fn logs() -> (PathBuf, PathBuf) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-memdiff");
    std::fs::create_dir_all(&dir).expect("dir");
    let mut paths = Vec::new();
    for (name, scale) in [
        ("base.jas", vec![]),
        ("diff.jas", vec![("LSRA".to_string(), 10.0)]),
    ] {
        let path = dir.join(name);
        if !path.exists() {
            let generator = Generator::new(GenOptions {
                seed: 1,
                methods: METHODS,
                scale,
            })
            .expect("generator");
            gen_log(&generator, &path).expect("gen");
        }
        paths.push(path);
    }
    (paths[0].clone(), paths[1].clone())
}

fn memdiff(c: &mut Criterion) {
    let (base, diff) = logs();
    let mut group = c.benchmark_group("memdiff");
    group.sample_size(10);
    group.throughput(Throughput::Elements(METHODS));
    group.bench_function("200k-methods-per-side", |b| {
        b.iter(|| {
            diff_logs(
                std::slice::from_ref(&base),
                std::slice::from_ref(&diff),
                &DiffOptions::default(),
            )
            .expect("diff")
        })
    });
    group.finish();
}

criterion_group!(benches, memdiff);
criterion_main!(benches);
