//! Helpers for tests that build native programs against `include/` and the static library.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository's root (where `include/`, `tests/c/` and `examples/` are), from the library's
/// tests and from the tools' (`tools/`, a workspace member) alike.
pub fn workspace_root() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    if dir.join("include/jitarena.h").exists() {
        dir.to_path_buf()
    } else {
        dir.parent().expect("the workspace root").to_path_buf()
    }
}

/// Where cargo put this test binary's sibling artifacts (`target/<profile>/deps`).
pub fn deps_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    exe.parent().expect("deps dir").to_path_buf()
}

/// The static library cargo built alongside this test.
pub fn static_lib() -> PathBuf {
    let lib = deps_dir().join("libjitarena.a");
    assert!(
        lib.exists(),
        "{} is missing: cargo should build the staticlib with the tests",
        lib.display()
    );
    lib
}

fn compiler(cpp: bool) -> cc::Tool {
    let target = env!("JITARENA_TARGET");
    let mut build = cc::Build::new();
    build
        .target(target)
        .host(target)
        .opt_level(2)
        .debug(true)
        .cargo_metadata(false)
        .cpp(cpp)
        .include(workspace_root().join("include"));
    build.get_compiler()
}

/// Compiles `sources` (relative to the repository's root) into an executable linked to the static
/// library, in the test's target directory.
pub fn build_program(name: &str, sources: &[&str], cpp: bool) -> PathBuf {
    build_program_with(name, sources, cpp, &[])
}

/// As [`build_program`], with extra compiler flags.
pub fn build_program_with(name: &str, sources: &[&str], cpp: bool, flags: &[&str]) -> PathBuf {
    link_program(name, sources, cpp, flags, Some(&static_lib()))
}

/// Compiles `sources` (relative to the repository's root) into an executable in the test's
/// target directory, linked to `lib` (a static library) when given, with extra compiler flags.
pub fn link_program(
    name: &str,
    sources: &[&str],
    cpp: bool,
    flags: &[&str],
    lib: Option<&Path>,
) -> PathBuf {
    let root = workspace_root();
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let mut cmd = compiler(cpp).to_command();
    cmd.args(if cpp {
        ["-std=c++11", "-Wall"]
    } else {
        ["-std=c99", "-Wall"]
    })
    .args(["-Wextra", "-Werror"])
    .args(flags)
    .args(sources.iter().map(|s| root.join(s)))
    .args(lib)
    .args(["-lpthread", "-ldl", "-lm", "-lrt", "-o"])
    .arg(&out);
    let result = cmd.output().expect("run the C compiler");
    assert!(
        result.status.success(),
        "compiling {name} failed:\n{}",
        String::from_utf8_lossy(&result.stderr)
    );
    out
}

/// Runs a program, asserts success, returns its standard output and error.
pub fn run(program: &Path, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", program.display()));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "{} failed ({}):\n{text}",
        program.display(),
        out.status
    );
    text
}

/// Whether valgrind can run; when `JITARENA_REQUIRE_VALGRIND=1` (as in `.ci/run`), its absence
/// fails the test instead of skipping it.
pub fn valgrind_available() -> bool {
    let ok = Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("JITARENA_REQUIRE_VALGRIND").as_deref() != Ok("1"),
            "valgrind is required (JITARENA_REQUIRE_VALGRIND=1) but not found"
        );
        eprintln!("valgrind not found: skipping");
    }
    ok
}

/// The JIT's library (profile `jit`: the release build without unwinding), built into this
/// target directory: the archive a JIT links (`target/jit/libjitarena.a`).
pub fn jit_static_lib() -> PathBuf {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let target_dir = tmp.parent().expect("the target directory").to_path_buf();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(workspace_root())
        .args([
            "build",
            "--profile",
            "jit",
            "--quiet",
            "-p",
            "jitarena",
            "--lib",
        ])
        .arg("--target-dir")
        .arg(&target_dir)
        .status()
        .expect("run cargo build --profile jit");
    assert!(status.success(), "cargo build --profile jit failed");
    target_dir.join("jit/libjitarena.a")
}

/// The sum of callgrind_annotate's counts (`mode`: inclusive or not) over the functions that
/// `wanted` picks.
pub fn annotated_sum(out_file: &Path, mode: &str, wanted: impl Fn(&str) -> bool) -> u64 {
    let annotated = Command::new("callgrind_annotate")
        .args([mode, "--auto=no", "--threshold=100"])
        .arg(out_file)
        .output()
        .expect("run callgrind_annotate");
    assert!(annotated.status.success(), "callgrind_annotate failed");
    String::from_utf8_lossy(&annotated.stdout)
        .lines()
        .filter(|line| wanted(line.split(':').nth(1).unwrap_or("")))
        .filter_map(|line| {
            line.split_whitespace()
                .next()?
                .replace(',', "")
                .parse::<u64>()
                .ok()
        })
        .sum()
}
