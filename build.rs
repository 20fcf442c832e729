//! Compiles the replay driver (`src/driver/replay.c`: `jitarena_replay` and
//! `jitarena_replay_uncounted`) from the header, twice: with counters and with
//! `JITARENA_NO_COUNTERS`; and the exported slow path `jitarena_alloc_slow`
//! (`src/driver/site.c`), which passes its return address, the allocation's site, to
//! `jitarena_alloc_slow_at` (a cdylib exports only the Rust entry points, so the shared library
//! lacks it: a JIT links the static archive). Passes the target triple on to the tests that
//! compile C and C++ programs with the `cc` crate.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=include/jitarena.h");
    println!("cargo:rerun-if-changed=src/driver/replay.c");
    println!("cargo:rerun-if-changed=src/driver/site.c");
    cc::Build::new()
        .file("src/driver/site.c")
        .include("include")
        .opt_level(2)
        .warnings(true)
        .compile("jitarena_site");
    for (name, uncounted) in [
        ("jitarena_replay_counted", false),
        ("jitarena_replay_uncounted", true),
    ] {
        let mut build = cc::Build::new();
        build
            .file("src/driver/replay.c")
            .include("include")
            .opt_level(2)
            .warnings(true);
        if uncounted {
            build.define("JITARENA_NO_COUNTERS", None);
        }
        build.compile(name);
    }
    let target = std::env::var("TARGET").unwrap_or_default();
    println!("cargo:rustc-env=JITARENA_TARGET={target}");
}
