//! Passes the target triple on to the tests that compile C and C++ programs against
//! `include/jitarena.h` with the `cc` crate.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let target = std::env::var("TARGET").unwrap_or_default();
    println!("cargo:rustc-env=JITARENA_TARGET={target}");
}
