//! Fidelity: a throughput diff taken on jitarena reads as on the JIT's own arena. JIT engineers
//! compare a baseline and a changed JIT by the instructions they run (a throughput diff, read
//! to 0.01%); a JIT linking jitarena must report the same diff as one on its own arena, block
//! placement included (glibc's vectorized `strcmp`, `memset` and `memcpy` take different paths
//! by where a block lies in its 4 KiB page).
//!
//! `benches/c/fidelity.c` does over its arena blocks what the JIT does (fixed-size nodes,
//! growing arrays, cleared tables and bit sets, names copied and compared), built as the plain
//! arena the JIT's public description gives (`-DPLAIN_ARENA`) and against the JIT's library
//! (profile `jit`). Each build runs the baseline and two changes, `grow` (allocations about 20%
//! larger) and `shrink` (about 17% smaller), under callgrind; the two builds' diffs of each
//! change must agree to [`TOLERANCE`]. BENCHMARKS.md, "Fidelity", gives today's figures.
//! Skipped where valgrind is missing, unless `JITARENA_REQUIRE_VALGRIND=1` (`.ci/run`).

mod native;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use native::{link_program, valgrind_available, workspace_root};

/// Methods each run compiles: a heavy tail's worth (1 in 100 of thousands of statements), about
/// 370 million instructions a run.
const METHODS: &str = "1000";

/// The changes whose diffs are compared, against `base`.
const CHANGES: [&str; 2] = ["grow", "shrink"];

/// The largest difference, in percentage points, between the two builds' diffs of a change.
const TOLERANCE: f64 = 0.05;

/// The JIT's library (profile `jit`), as tests/whole_cost.rs builds it.
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

/// Whether the figures can be taken here: valgrind, on the x86_64 Linux they were measured on.
fn measurable() -> bool {
    if !valgrind_available() {
        return false;
    }
    let here = cfg!(all(target_arch = "x86_64", target_os = "linux"));
    if !here {
        eprintln!("fidelity is measured on x86_64 Linux: skipping");
    }
    here
}

/// One run of a build under callgrind: the instructions it ran and what it printed (the pages
/// it took from the host and its checksum, the same in both builds).
struct Run {
    instructions: u64,
    printed: String,
}

/// Runs `program CHANGE METHODS` under callgrind, with no stats log or trace.
fn callgrind(program: &Path, change: &str) -> Run {
    let out = Command::new("valgrind")
        .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
        .arg(program)
        .args([change, METHODS])
        .env_remove("JITARENA_LOG")
        .env_remove("JITARENA_TRACE")
        .output()
        .expect("run valgrind");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{} {change} failed:\n{err}",
        program.display()
    );
    let instructions = err
        .lines()
        .find_map(|l| l.split("Collected : ").nth(1))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no instruction count in callgrind's output:\n{err}"));
    Run {
        instructions,
        printed: String::from_utf8_lossy(&out.stdout).into_owned(),
    }
}

/// Runs every (program, change) under callgrind, as many at once as the machine has cores;
/// the results in the order given.
fn callgrind_all(jobs: &[(&Path, &str)]) -> Vec<Run> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Run>>> = Mutex::new(jobs.iter().map(|_| None).collect());
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..workers.min(jobs.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(program, change)) = jobs.get(i) else {
                    break;
                };
                let run = callgrind(program, change);
                results.lock().expect("no worker panicked")[i] = Some(run);
            });
        }
    });
    results
        .into_inner()
        .expect("no worker panicked")
        .into_iter()
        .map(|run| run.expect("every job ran"))
        .collect()
}

/// The throughput diff of `changed` against `base`, in percent.
fn diff(base: u64, changed: u64) -> f64 {
    (changed as f64 / base as f64 - 1.0) * 100.0
}

/// One build's runs: the baseline and each change.
struct Build {
    name: &'static str,
    base: Run,
    changed: Vec<Run>,
}

impl Build {
    /// The diff of change `i` (of [`CHANGES`]), in percent.
    fn diff(&self, i: usize) -> f64 {
        diff(self.base.instructions, self.changed[i].instructions)
    }
}

#[test]
fn a_throughput_diff_on_jitarena_reads_as_on_the_jits_own_arena() {
    if !measurable() {
        return;
    }
    let lib = jit_static_lib();
    let source = ["benches/c/fidelity.c"];
    let ours = link_program("fidelity", &source, false, &[], Some(&lib));
    let plain = link_program("fidelity_plain", &source, false, &["-DPLAIN_ARENA"], None);
    let programs = [("plain", plain.as_path()), ("jitarena", ours.as_path())];
    let changes = std::iter::once("base").chain(CHANGES);
    let jobs: Vec<(&Path, &str)> = programs
        .iter()
        .flat_map(|&(_, program)| changes.clone().map(move |change| (program, change)))
        .collect();
    let mut runs = callgrind_all(&jobs).into_iter();
    let builds: Vec<Build> = programs
        .iter()
        .map(|&(name, _)| Build {
            name,
            base: runs.next().expect("a base run"),
            changed: CHANGES
                .iter()
                .map(|_| runs.next().expect("a changed run"))
                .collect(),
        })
        .collect();
    let (plain, ours) = (&builds[0], &builds[1]);
    // Both builds compile the same methods and take the same pages from the host.
    for (a, b) in
        std::iter::once((&plain.base, &ours.base)).chain(plain.changed.iter().zip(&ours.changed))
    {
        assert_eq!(a.printed, b.printed, "the two builds did different work");
    }

    eprintln!("fidelity: callgrind instructions, {METHODS} methods");
    eprintln!(
        "{:<10} {:>14} {:>14} {:>14} {:>11} {:>11}",
        "build", "base", "grow", "shrink", "grow diff", "shrink diff"
    );
    for build in &builds {
        eprintln!(
            "{:<10} {:>14} {:>14} {:>14} {:>+10.4}% {:>+10.4}%",
            build.name,
            build.base.instructions,
            build.changed[0].instructions,
            build.changed[1].instructions,
            build.diff(0),
            build.diff(1)
        );
    }
    let gaps: Vec<f64> = (0..CHANGES.len())
        .map(|i| ours.diff(i) - plain.diff(i))
        .collect();
    eprintln!(
        "{:<56} {:>+10.4}  {:>+10.4}  (points)",
        "jitarena's diff less the plain arena's", gaps[0], gaps[1]
    );
    for (change, gap) in CHANGES.iter().zip(&gaps) {
        assert!(
            gap.abs() <= TOLERANCE,
            "{change}: jitarena's throughput diff differs from the plain arena's by {gap:+.4} \
             points, over {TOLERANCE}"
        );
    }
}
