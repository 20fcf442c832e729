//! Passes the target triple on to the tests that compile C and C++ programs with the `cc`
//! crate against `include/`.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=include/jitarena.h");
    let target = std::env::var("TARGET").unwrap_or_default();
    println!("cargo:rustc-env=JITARENA_TARGET={target}");
}
