//! With `--features llvm-bench`, compiles LLVM's allocator for the allocation benchmark. Passes
//! the target triple on to the tests that compile C and C++ programs with the `cc` crate.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var_os("CARGO_FEATURE_LLVM_BENCH").is_some() {
        build_llvm_bench();
    }
    let target = std::env::var("TARGET").unwrap_or_default();
    println!("cargo:rustc-env=JITARENA_TARGET={target}");
}

/// With `--features llvm-bench`: LLVM's BumpPtrAllocator for the allocation benchmark, compiled
/// against the LLVM that `llvm-config` (or `LLVM_CONFIG`) names.
fn build_llvm_bench() {
    println!("cargo:rerun-if-changed=../benches/c/llvm_bump.cpp");
    println!("cargo:rerun-if-env-changed=LLVM_CONFIG");
    let tool = std::env::var("LLVM_CONFIG").unwrap_or_else(|_| "llvm-config".into());
    let query = |arg: &str| -> String {
        let out = std::process::Command::new(&tool)
            .arg(arg)
            .output()
            .unwrap_or_else(|e| {
                panic!("--features llvm-bench needs {tool} (LLVM's development files): {e}")
            });
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    cc::Build::new()
        .cpp(true)
        .file("../benches/c/llvm_bump.cpp")
        .include("../include")
        .include(query("--includedir"))
        .flag("-std=c++17")
        .opt_level(2)
        .compile("jitarena_llvm_bench");
    println!("cargo:rustc-link-search=native={}", query("--libdir"));
    for lib in query("--libs").split_whitespace() {
        if let Some(name) = lib.strip_prefix("-l") {
            println!("cargo:rustc-link-lib=dylib={name}");
        }
    }
}
