//! The whole cost of jitarena in the .NET JIT's shape, held under callgrind (exact instruction
//! counts, so no timed test): `benches/c/jit_shape.c` built against the JIT's library (profile
//! `jit`) and as the plain arena written from the JIT's public description, the same methods
//! through both. Each figure is the difference of the two builds' counts, divided by what the
//! part did (allocations, marks, methods). BENCHMARKS.md, "The whole cost", gives today's
//! figures; the budgets here hold them with a little room, and fail on a regression.
//! Skipped where valgrind is missing, unless `JITARENA_REQUIRE_VALGRIND=1` (`.ci/run`).

mod native;

use std::path::{Path, PathBuf};
use std::process::Command;

use native::{link_program, valgrind_available, workspace_root};

/// The JIT's library (profile `jit`), as tests/footprint.rs builds it.
fn jit_static_lib() -> PathBuf {
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

/// Instructions a program runs under callgrind, and what it printed.
fn instructions(program: &Path, args: &[&str]) -> (u64, String) {
    let out = Command::new("valgrind")
        .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
        .arg(program)
        .args(args)
        .output()
        .expect("run valgrind");
    assert!(out.status.success(), "{} failed", program.display());
    let err = String::from_utf8_lossy(&out.stderr);
    let collected = err
        .lines()
        .find_map(|l| l.split("Collected : ").nth(1))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no instruction count in callgrind's output:\n{err}"));
    (collected, String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A count the program printed after `word`.
fn printed(out: &str, word: &str) -> u64 {
    let mut words = out.split_whitespace();
    words.find(|w| *w == word);
    words
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {word} in {out:?}"))
}

#[test]
fn each_part_of_the_whole_cost_stays_within_its_budget() {
    if !valgrind_available() || !cfg!(all(target_arch = "x86_64", target_os = "linux")) {
        return;
    }
    let lib = jit_static_lib();
    let source = ["benches/c/jit_shape.c"];
    let arena = link_program("jit_shape", &source, false, &[], Some(&lib));
    let plain = link_program("jit_shape_plain", &source, false, &["-DPLAIN_ARENA"], None);
    let methods = "200";
    // `none` runs the methods' loop and nothing in it: each build's start-up and set-up.
    let (ours_none, _) = instructions(&arena, &["none", methods]);
    let (theirs_none, _) = instructions(&plain, &["none", methods]);
    let cost = |mode: &str| {
        let (ours, out) = instructions(&arena, &[mode, methods]);
        let (theirs, _) = instructions(&plain, &[mode, methods]);
        let added = (ours - ours_none) as f64 - (theirs - theirs_none) as f64;
        (added, out)
    };
    let per = |part: f64, n: u64| part / n.max(1) as f64;

    let (reset, _) = cost("reset");
    let per_reset = per(reset, 200);
    // Each method's marks, then the reset that ends it (as a JIT's destroy would).
    let (marks, out) = cost("marks");
    let per_mark = per(marks - reset, printed(&out, "marks"));
    let (done, _) = cost("done");
    let per_done = per(done, 200);
    let (life, _) = cost("life");
    let per_life = per(life, 200);
    let (alloc, out) = cost("alloc");
    let per_alloc = per(alloc - reset, printed(&out, "allocations"));
    let (all, out) = cost("all");
    let per_alloc_all = per(all, printed(&out, "allocations"));
    eprintln!(
        "per mark {per_mark:.1}, method_done {per_done:.0}, reset {per_reset:.0}, create and \
         destroy {per_life:.0}, per allocation {per_alloc:.2}, all included per allocation \
         {per_alloc_all:.1}"
    );
    // Today's figures (BENCHMARKS.md) with a little room; before the inline marks and the kept
    // arenas a mark cost about 256 and a create about 183,000.
    assert!(
        per_mark <= 28.0,
        "a phase mark costs {per_mark:.1} instructions"
    );
    assert!(per_done <= 90.0, "jitarena_method_done costs {per_done:.0}");
    assert!(per_reset <= 270.0, "a reset costs {per_reset:.0}");
    assert!(per_life <= 2_100.0, "create and destroy cost {per_life:.0}");
    assert!(per_alloc <= 9.0, "an allocation costs {per_alloc:.2} more");
    assert!(
        per_alloc_all <= 15.0,
        "all included: {per_alloc_all:.1} per allocation"
    );
}
