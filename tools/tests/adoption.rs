//! The adoption kit. The CMake example JIT, in the .NET JIT's shape, builds warning-free in both
//! variants with the arena's symbols private; its replay host loads both into one process, each
//! JIT naming its own log through its own option; every context is one record numbered by the
//! host, the one retried in MinOpts too (holding the bytes of both attempts, named MinOpts though
//! tier 1 was asked), and memdiff matches them across base and diff and finds the heavier
//! structure. Phases' bytes are where the JIT's phase calls put them, with or without SSA. A
//! context whose query the host cannot answer passes the host's exception through the JIT: it
//! leaves no record and no failed-compile note, every page goes back to the host, and the replay
//! goes on. A logged run measures the bytes of an unlogged one (a record's name is built outside
//! the arena it measures); pages that bypass the host change no count; the JIT's Debug memory
//! statistics kept beside jitarena compile and change no record. `docs/adopting.md` quotes the example's code as it is. The CI pipelines (GitHub Actions and Azure Pipelines) are valid and
//! refer only to commands, flags and files that exist; their replay matrix, replayed for this
//! machine's platform, merged, diffed and summarized as they do, gives the unsharded answer.

#[path = "../../tests/native/mod.rs"]
mod native;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

fn required(tool: &str, var: &str) -> bool {
    let found = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var(var).as_deref() != Ok("1"),
            "{tool} is required ({var}=1) but not found"
        );
        eprintln!("{tool} not found: skipping");
    }
    found
}

fn run(cmd: &mut Command) -> (i32, String) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

fn ok(cmd: &mut Command) -> String {
    let (code, text) = run(cmd);
    assert_eq!(code, 0, "{cmd:?} failed:\n{text}");
    text
}

/// A fresh directory of this file's tests.
fn fresh(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a test directory");
    dir
}

/// The example, configured and built once for every test here (its warnings are errors): its
/// build directory, or None without cmake.
fn example() -> Option<&'static Path> {
    static BUILD: OnceLock<PathBuf> = OnceLock::new();
    if !required("cmake", "JITARENA_REQUIRE_CMAKE") {
        return None;
    }
    let build = BUILD.get_or_init(|| {
        let build = fresh("cmake-jit");
        ok(Command::new("cmake")
            .arg("-S")
            .arg(native::workspace_root().join("examples/cmake-jit"))
            .arg("-B")
            .arg(&build)
            .arg(format!("-DJITARENA_LIB={}", native::static_lib().display()))
            .arg("-DMINIJIT_WERROR=ON"));
        ok(Command::new("cmake").arg("--build").arg(&build));
        build
    });
    Some(build)
}

/// The example's replay host and its JITs: the baseline, the diff, and the baseline with the
/// .NET JIT's Debug memory statistics (MEASURE_MEM_ALLOC).
struct Example {
    host: PathBuf,
    base: PathBuf,
    diff: PathBuf,
    memstats: PathBuf,
}

impl Example {
    fn new(build: &Path) -> Example {
        let example = Example {
            host: build.join("replay_host"),
            base: build.join("libminijit_base.so"),
            diff: build.join("libminijit_diff.so"),
            memstats: build.join("libminijit_memstats.so"),
        };
        assert!(
            example.base.exists() && example.diff.exists() && example.memstats.exists(),
            "every JIT builds"
        );
        example
    }

    /// Replays `programs` with both JITs, each writing the log its own option names (SuperPMI's
    /// -jitoption and -jit2option); with `shard`, only that shard of `count`.
    fn replay(
        &self,
        programs: &Path,
        logs: [&Path; 2],
        shard: Option<(u64, u64)>,
    ) -> (i32, String) {
        let mut cmd = Command::new(&self.host);
        for (option, log) in ["-jitoption", "-jit2option"].into_iter().zip(logs) {
            cmd.arg(option)
                .arg(format!("JitArenaLog={}", log.display()));
        }
        cmd.arg(&self.base).arg(&self.diff).arg(programs);
        if let Some((shard, count)) = shard {
            cmd.args([shard.to_string(), count.to_string()]);
        }
        run(&mut cmd)
    }
}

/// The function names of a programs file, in order: context N is the N-th (a tier the runtime
/// asked for, "[Tier1] ", may stand before the name).
fn functions(programs: &Path) -> Vec<String> {
    std::fs::read_to_string(programs)
        .expect("the programs")
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let l = l.split_once("] ").map_or(l, |(_, rest)| rest);
            l.split('(').next().expect("a name").to_owned()
        })
        .collect()
}

/// A log's records, as `jitarena dump --format jsonl` gives them.
fn records(log: &Path) -> Vec<Value> {
    ok(Command::new(env!("CARGO_BIN_EXE_jitarena"))
        .arg("dump")
        .arg(log)
        .args(["--format", "jsonl"]))
    .lines()
    .map(|l| serde_json::from_str(l).expect("a JSON record"))
    .collect()
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("the JSON report");
    serde_json::from_str(&text).expect("valid JSON")
}

/// The one file in `dir` whose name starts with `prefix`.
fn only_file(dir: &Path, prefix: &str) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("the directory")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .collect();
    assert_eq!(found.len(), 1, "{prefix}* in {}: {found:?}", dir.display());
    found[0].clone()
}

/// The counts of a record that are the arena's, not the host's: what each kind and phase took,
/// and the bytes used.
fn counts(r: &Value) -> (Value, Value, Value) {
    (
        r["kinds"].clone(),
        r["phases"].clone(),
        r["used_bytes"].clone(),
    )
}

/// What the replay host says `jit` allocated outside every phase, per context (its lines
/// "JIT: context N: B bytes outside every phase"), by context number.
fn no_phase_bytes(out: &str, jit: &Path) -> std::collections::BTreeMap<u64, u64> {
    let prefix = format!("{}: context ", jit.display());
    out.lines()
        .filter_map(|l| l.strip_prefix(&prefix))
        .filter_map(|l| l.strip_suffix(" bytes outside every phase"))
        .map(|l| {
            let (context, bytes) = l.split_once(": ").expect("context: bytes");
            (
                context.parse().expect("a context"),
                bytes.parse().expect("bytes"),
            )
        })
        .collect()
}

/// A record's bytes in phase `name` (0 when it has none).
fn phase(r: &Value, name: &str) -> u64 {
    r["phases"][name].as_u64().unwrap_or(0)
}

/// The bytes of every phase of a record, "(no phase)" included.
fn phases_sum(r: &Value) -> u64 {
    r["phases"]
        .as_object()
        .expect("phases")
        .values()
        .map(|b| b.as_u64().expect("bytes"))
        .sum()
}

/// The example runs the .NET JIT's phases as it does: "(no phase)" holds exactly what the JIT
/// allocated outside every phase (its Compiler objects, one per attempt, and the table it
/// allocates between phases on purpose), nothing of the phases that were running; the phases
/// add up to the bytes used; children (never begun) get their bytes, whether ended inside a
/// running phase or, liveness's without SSA (`ssa` false), with no phase running; the inlinees'
/// bytes stay in their inliner's "Morph - Inlining".
fn check_phases(
    recs: &[Value],
    outside: &std::collections::BTreeMap<u64, u64>,
    names: &[String],
    ssa: bool,
) {
    assert_eq!(outside.len(), names.len(), "{outside:?}");
    for r in recs {
        let context = r["context"].as_u64().expect("a context");
        assert_eq!(
            phases_sum(r),
            r["used_bytes"].as_u64().unwrap(),
            "phases add up to the bytes used: {r}"
        );
        assert_eq!(
            phase(r, "(no phase)"),
            outside[&context],
            "\"(no phase)\" holds only what is outside every phase: {r}"
        );
        for child in [
            "LSRA build intervals",
            "LSRA allocate",
            "Local var liveness init",
            "Per block local var liveness",
            "Global local var liveness",
        ] {
            assert!(phase(r, child) > 0, "child {child:?} has no bytes: {r}");
        }
        // The final liveness pass is a phase of its own after Lowering (a leaf, which holds what
        // it allocates): its children take every byte it allocates, and the parent keeps none.
        assert_eq!(phase(r, "Local var liveness"), 0, "{r}");
        assert!(phase(r, "Lowering nodeinfo") > 0, "{r}");
        // SSA's children have bytes in every optimized record when SSA runs (and in a MinOpts
        // retry's, from its failed optimized attempt), in none when it does not.
        for child in ["SSA: liveness", "SSA: rename"] {
            if !ssa {
                assert_eq!(phase(r, child), 0, "child {child:?}: {r}");
            } else if r["tier"] != "MinOpts" {
                assert!(phase(r, child) > 0, "child {child:?} has no bytes: {r}");
            }
        }
        assert!(phase(r, "Importation") > 0, "{r}");
    }
    // A method with calls: its inlinees' Compiler object and imported trees are in "Morph -
    // Inlining" (their own phases do not reach the arena); one without calls has none there.
    let by_name = |n: &str| recs.iter().find(|r| r["name"] == n).expect(n);
    let inlined = by_name("nested_calls");
    assert!(phase(inlined, "Morph - Inlining") > 1000, "{inlined}");
    assert_eq!(phase(by_name("poly"), "Morph - Inlining"), 0);
}

#[test]
fn the_example_jit_records_each_context_once_and_fails_the_gate_on_its_heavier_structure() {
    let Some(build) = example() else { return };
    let jit = Example::new(build);
    let root = &native::workspace_root();

    // Only the compiler's entry points are exported; the arena stays inside each library.
    if let Ok(out) = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(&jit.base)
        .output()
    {
        let symbols = String::from_utf8_lossy(&out.stdout);
        assert!(symbols.contains("minijit_compile"), "{symbols}");
        assert!(
            !symbols.contains("jitarena_"),
            "the arena's symbols leak:\n{symbols}"
        );
    }

    // Each JIT opens the log its own option names; %p makes it this replay process's.
    let work = &fresh("example");
    let programs = root.join("examples/cmake-jit/programs.txt");
    let names = functions(&programs);
    let (code, out) = jit.replay(
        &programs,
        [&work.join("base-%p.jas"), &work.join("diff-%p.jas")],
        None,
    );
    assert_eq!(code, 0, "{out}");
    let retried = 1 + names.iter().position(|n| n == "sum70").expect("sum70");
    assert!(
        out.contains("(1 in MinOpts after a failed optimized attempt)")
            && out.contains(&format!(
                "context {retried} compiled in MinOpts after: more than 64 constants to fold"
            ))
            && out.contains(", 0 failures"),
        "{out}"
    );
    let (base_log, diff_log) = (only_file(work, "base-"), only_file(work, "diff-"));

    // One record per context, numbered by the host from 1 through the input. The retried
    // context's is in MinOpts (its request, tier 1, stays set after the retry) and holds its
    // failed optimized attempt's bytes too: only that attempt simplifies.
    for log in [&base_log, &diff_log] {
        let recs = records(log);
        let contexts: Vec<u64> = recs
            .iter()
            .map(|r| r["context"].as_u64().unwrap())
            .collect();
        assert_eq!(contexts, (1..=names.len() as u64).collect::<Vec<_>>());
        for (n, (r, name)) in recs.iter().zip(&names).enumerate() {
            assert_eq!(r["name"], name.as_str());
            let tier = if n + 1 == retried {
                "MinOpts"
            } else {
                "FullOpts"
            };
            assert_eq!(r["tier"], tier, "{r}");
        }
        let r = &recs[retried - 1];
        assert!(r["phases"]["Do value numbering"].as_u64() > Some(0), "{r}");
        assert!(r["phases"]["Generate code"].as_u64() > Some(0), "{r}");
    }
    for (log, jit_path) in [(&base_log, &jit.base), (&diff_log, &jit.diff)] {
        check_phases(&records(log), &no_phase_bytes(&out, jit_path), &names, true);
    }

    // Without SSA (the JIT's JitDoSsa=0), liveness runs outside every phase: its children still
    // take their bytes, and "(no phase)" is still exactly what the JIT counts outside phases.
    // Nothing is simplified, so nothing is retried: the tier-1 request is named Tier1.
    let (no_ssa_base, no_ssa_diff) = (work.join("no-ssa-base.jas"), work.join("no-ssa-diff.jas"));
    let (code, no_ssa_out) = run(Command::new(&jit.host)
        .args(["-jitoption", "JitDoSsa=0", "-jit2option", "JitDoSsa=0"])
        .arg("-jitoption")
        .arg(format!("JitArenaLog={}", no_ssa_base.display()))
        .arg("-jit2option")
        .arg(format!("JitArenaLog={}", no_ssa_diff.display()))
        .arg(&jit.base)
        .arg(&jit.diff)
        .arg(&programs));
    assert_eq!(code, 0, "{no_ssa_out}");
    assert!(
        no_ssa_out.contains("(0 in MinOpts after a failed optimized attempt)"),
        "{no_ssa_out}"
    );
    for (log, jit_path) in [(&no_ssa_base, &jit.base), (&no_ssa_diff, &jit.diff)] {
        let recs = records(log);
        check_phases(&recs, &no_phase_bytes(&no_ssa_out, jit_path), &names, false);
        assert_eq!(recs[retried - 1]["tier"], "Tier1", "{}", recs[retried - 1]);
        assert_eq!(phase(&recs[retried - 1], "Do value numbering"), 0);
    }

    // Under JITARENA_LOG (no JitArenaLog option), which the library opens by itself at the
    // first record, every record carries its context and name as under the JIT's option. "%m"
    // gives each JIT (libminijit_base, libminijit_diff) its own file.
    let env_dir = work.join("env");
    std::fs::create_dir_all(&env_dir).expect("a directory");
    let (code, env_out) = run(Command::new(&jit.host)
        .env("JITARENA_LOG", env_dir.join("%m-%p.jas"))
        .arg(&jit.base)
        .arg(&jit.diff)
        .arg(&programs));
    assert_eq!(code, 0, "{env_out}");
    for (prefix, option_log) in [
        ("libminijit_base-", &base_log),
        ("libminijit_diff-", &diff_log),
    ] {
        let env_recs = records(&only_file(&env_dir, prefix));
        let option_recs = records(option_log);
        assert_eq!(env_recs.len(), names.len(), "{prefix}");
        for (n, (e, o)) in env_recs.iter().zip(&option_recs).enumerate() {
            assert_eq!(e["context"], n as u64 + 1, "{e}");
            assert_eq!(e["name"], names[n].as_str(), "{e}");
            // The same record, whichever way the log was named.
            assert_eq!(e, o);
        }
    }

    // Both JITs given one file, as one JITARENA_LOG without %m would give them: the second is
    // refused at start-up, before it could overwrite the first's records.
    let shared = work.join("shared.jas");
    let (code, out) = jit.replay(&programs, [&shared, &shared], None);
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains("libminijit_diff.so does not start") && out.contains("another writer"),
        "{out}"
    );

    let jitarena = env!("CARGO_BIN_EXE_jitarena");
    let json = work.join("memdiff.json");
    let (code, report) = run(Command::new(jitarena)
        .arg("memdiff")
        .arg(&base_log)
        .arg(&diff_log)
        .arg("--json")
        .arg(&json));
    assert_eq!(code, 1, "the heavier diff fails the gate:\n{report}");
    let kinds = report.split("Kinds (").nth(1).expect("a kinds table");
    let first_kind = kinds.lines().nth(2).unwrap_or_default();
    assert!(
        first_kind.trim_start().starts_with("LSRA_Interval"),
        "{report}"
    );
    assert!(
        report.contains("FAIL (exit 1): kind LSRA_Interval grew"),
        "{report}"
    );
    let phases = report.split("Phases (").nth(1).expect("a phases table");
    assert!(
        phases
            .lines()
            .nth(2)
            .unwrap_or_default()
            .trim_start()
            .starts_with("LSRA build intervals"),
        "{report}"
    );

    // memdiff matches every context across the sides, each once, the retried one in MinOpts by
    // its context number; each side names its build.
    let doc = read_json(&json);
    let diff = &doc["collections"][0]["diff"];
    let coverage = &diff["coverage"];
    assert_eq!(coverage["matched"], names.len(), "{coverage}");
    for field in [
        "only_base",
        "only_diff",
        "duplicates_base",
        "duplicates_diff",
    ] {
        assert_eq!(coverage[field], 0, "{field}: {coverage}");
    }
    let min_opts = diff["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "MinOpts")
        .expect("a MinOpts group");
    assert_eq!(min_opts["methods"], 1, "{min_opts}");
    let growth = diff["methods"]["growth"].as_array().expect("the growth");
    assert!(
        growth
            .iter()
            .any(|m| m["name"] == "sum70" && m["tier"] == "MinOpts" && m["context"] == retried),
        "{growth:?}"
    );
    for (side, build) in [("base", "minijit_base@"), ("diff", "minijit_diff@")] {
        let builds = diff["builds"][side].as_array().expect("the builds");
        assert!(
            builds.len() == 1 && builds[0].as_str().unwrap().starts_with(build),
            "{builds:?}"
        );
    }

    // Sharded as in CI: two shards per JIT, merged, give the same diff.
    let mut shard_logs = (Vec::new(), Vec::new());
    for shard in 0..2 {
        let (b, d) = (
            work.join(format!("base-{shard}.jas")),
            work.join(format!("diff-{shard}.jas")),
        );
        let (code, out) = jit.replay(&programs, [&b, &d], Some((shard, 2)));
        assert_eq!(code, 0, "{out}");
        shard_logs.0.push(b);
        shard_logs.1.push(d);
    }
    let (merged_base, merged_diff) = (work.join("merged-base.jas"), work.join("merged-diff.jas"));
    for (out, logs) in [(&merged_base, &shard_logs.0), (&merged_diff, &shard_logs.1)] {
        ok(Command::new(jitarena)
            .arg("merge")
            .arg("-o")
            .arg(out)
            .args(logs));
    }
    let verdict = |b: &Path, d: &Path| {
        let out = work.join("x.json");
        run(Command::new(jitarena)
            .arg("memdiff")
            .arg(b)
            .arg(d)
            .arg("-q")
            .arg("--json")
            .arg(&out));
        let doc = read_json(&out);
        // The collection is named after the inputs' file names; everything else must agree.
        (
            doc["verdict"]["status"].clone(),
            doc["collections"][0]["diff"].clone(),
        )
    };
    assert_eq!(
        verdict(&merged_base, &merged_diff),
        verdict(&base_log, &diff_log)
    );
}

/// A host's exception that the JIT's traps do not catch (SuperPMI's missing data: here a
/// canInline query the collection never recorded) passes through jitNativeCode during an
/// attempt, and the library's C boundary catches it. The arena is destroyed on its way out: the
/// context leaves no record and no failed-compile note, every slab goes back to the host, and
/// the replay goes on with the next context.
#[test]
fn a_host_exception_through_the_jit_leaves_no_record_and_gives_every_page_back() {
    let Some(build) = example() else { return };
    let jit = Example::new(build);
    let programs = native::workspace_root().join("examples/cmake-jit/programs-missing.txt");
    let names = functions(&programs);
    let missing: Vec<u64> = std::fs::read_to_string(&programs)
        .expect("the programs")
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .enumerate()
        .filter(|(_, l)| l.contains("twice("))
        .map(|(n, _)| n as u64 + 1)
        .collect();
    assert_eq!(missing.len(), 2, "{names:?}");
    assert!(
        *missing.last().unwrap() < names.len() as u64,
        "a context follows the last missing one"
    );

    let work = &fresh("missing");
    let (base_log, diff_log) = (work.join("base.jas"), work.join("diff.jas"));
    let (code, out) = jit.replay(&programs, [&base_log, &diff_log], None);
    // superpmi's exit code for missing data, not a failure: the host, which counts every slab it
    // hands out, fails the replay on any not given back.
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains(", 0 failures, 2 missing") && !out.contains("not given back"),
        "{out}"
    );
    for jit_path in [&jit.base, &jit.diff] {
        for context in &missing {
            assert!(
                out.contains(&format!(
                    "{}: context {context} failed to replay: the host has no answer to canInline(twice)",
                    jit_path.display()
                )),
                "{out}"
            );
        }
    }

    // The other contexts are one record each, the retried one (after both missing ones) too,
    // with every phase rule of the whole replay.
    for (log, jit_path) in [(&base_log, &jit.base), (&diff_log, &jit.diff)] {
        let recs = records(log);
        let outside = no_phase_bytes(&out, jit_path);
        let contexts: Vec<u64> = recs
            .iter()
            .map(|r| r["context"].as_u64().unwrap())
            .collect();
        let expected: Vec<u64> = (1..=names.len() as u64)
            .filter(|c| !missing.contains(c))
            .collect();
        assert_eq!(contexts, expected);
        assert_eq!(outside.keys().copied().collect::<Vec<_>>(), expected);
        for r in &recs {
            let context = r["context"].as_u64().unwrap();
            assert_eq!(r["name"], names[context as usize - 1].as_str(), "{r}");
            assert_eq!(phases_sum(r), r["used_bytes"].as_u64().unwrap(), "{r}");
            assert_eq!(phase(r, "(no phase)"), outside[&context], "{r}");
        }
        let sum70 = recs.iter().find(|r| r["name"] == "sum70").expect("sum70");
        assert_eq!(sum70["tier"], "MinOpts", "{sum70}");
    }

    // No failed-compile note either: memdiff counts no failing compile on either side, and
    // matches the contexts that compiled.
    let json = work.join("memdiff.json");
    run(Command::new(env!("CARGO_BIN_EXE_jitarena"))
        .arg("memdiff")
        .arg(&base_log)
        .arg(&diff_log)
        .arg("-q")
        .arg("--json")
        .arg(&json));
    let doc = read_json(&json);
    let coverage = &doc["collections"][0]["diff"]["coverage"];
    assert_eq!(
        coverage["matched"],
        names.len() - missing.len(),
        "{coverage}"
    );
    for field in ["failing_base", "failing_diff", "only_base", "only_diff"] {
        assert_eq!(coverage[field], 0, "{field}: {coverage}");
    }
}

/// A record never counts itself: what it needs (its name) is built outside the arena it
/// measures, so a logged run measures the very bytes, kind by kind and phase by phase, of an
/// unlogged one. The unlogged run writes no record (it asks for no context and no name): its
/// counts come from its trace (JITARENA_TRACE, which asks for nothing either), replayed into a
/// log by `jitarena replay`.
#[test]
fn a_logged_run_measures_the_bytes_of_an_unlogged_one() {
    let Some(build) = example() else { return };
    let jit = Example::new(build);
    let programs = native::workspace_root().join("examples/cmake-jit/programs.txt");
    let names = functions(&programs);
    let work = &fresh("logged-unlogged");

    let (base_log, diff_log) = (work.join("base.jas"), work.join("diff.jas"));
    let mut logged = Command::new(&jit.host);
    logged
        .env_remove("JITARENA_LOG")
        .env_remove("JITARENA_TRACE");
    for (option, log) in [("-jitoption", &base_log), ("-jit2option", &diff_log)] {
        logged
            .arg(option)
            .arg(format!("JitArenaLog={}", log.display()));
    }
    let (code, out) = run(logged.arg(&jit.base).arg(&jit.diff).arg(&programs));
    assert_eq!(code, 0, "{out}");

    let traces = work.join("traces");
    std::fs::create_dir_all(&traces).expect("a directory");
    let (code, out) = run(Command::new(&jit.host)
        .env_remove("JITARENA_LOG")
        .env("JITARENA_TRACE", traces.join("%m.jat"))
        .arg(&jit.base)
        .arg(&jit.diff)
        .arg(&programs));
    assert_eq!(code, 0, "{out}");

    for (log, module) in [
        (&base_log, "libminijit_base"),
        (&diff_log, "libminijit_diff"),
    ] {
        let replayed = work.join(format!("{module}-unlogged.jas"));
        ok(Command::new(env!("CARGO_BIN_EXE_jitarena"))
            .arg("replay")
            .arg(traces.join(format!("{module}.jat")))
            .arg("-o")
            .arg(&replayed));
        let (with_log, without) = (records(log), records(&replayed));
        assert_eq!(with_log.len(), names.len(), "{module}");
        assert_eq!(without.len(), names.len(), "{module}");
        for (w, u) in with_log.iter().zip(&without) {
            // The unlogged run asked for neither: no context, no name.
            assert_eq!(u["context"], -1, "{u}");
            assert_eq!(
                counts(w),
                counts(u),
                "{module}: context {} measures other bytes when logged",
                w["context"]
            );
            assert!(w["kinds"].get("DebugOnly").is_none(), "{w}");
        }
        // Names longer than the JIT's buffer took the growth path (into the record's arena).
        assert!(
            with_log
                .iter()
                .any(|r| r["name"].as_str().is_some_and(|n| n.len() >= 8)),
            "{module}: no name took the growth path"
        );
    }
}

/// Bypassing the host (the .NET JIT's Debug JitDirectAlloc: pages from the C library, for
/// native memory tools) changes the pages, never the bytes: every record counts what it counts
/// with the host's pages, on pages of exactly their descriptor and block, and the host hands out no slab.
#[test]
fn bypassing_the_host_changes_the_pages_never_the_bytes() {
    let Some(build) = example() else { return };
    let jit = Example::new(build);
    let programs = native::workspace_root().join("examples/cmake-jit/programs.txt");
    let work = &fresh("direct-alloc");
    let (host_base, host_diff) = (work.join("host-base.jas"), work.join("host-diff.jas"));
    let (code, out) = jit.replay(&programs, [&host_base, &host_diff], None);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains(" 0 and 0 slabs from the host"), "{out}");

    let (direct_base, direct_diff) = (work.join("direct-base.jas"), work.join("direct-diff.jas"));
    let (code, out) = run(Command::new(&jit.host)
        .args([
            "-jitoption",
            "JitDirectAlloc=1",
            "-jit2option",
            "JitDirectAlloc=1",
        ])
        .arg("-jitoption")
        .arg(format!("JitArenaLog={}", direct_base.display()))
        .arg("-jit2option")
        .arg(format!("JitArenaLog={}", direct_diff.display()))
        .arg(&jit.base)
        .arg(&jit.diff)
        .arg(&programs));
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(" 0 and 0 slabs from the host, 0 failures"),
        "{out}"
    );

    for (host, direct) in [(&host_base, &direct_base), (&host_diff, &direct_diff)] {
        let (host, direct) = (records(host), records(direct));
        assert_eq!(host.len(), direct.len());
        for (h, d) in host.iter().zip(&direct) {
            assert_eq!(h["context"], d["context"]);
            assert_eq!(counts(h), counts(d), "context {}", h["context"]);
            // A page per allocation, of exactly its descriptor and its block (exact_pages).
            let field = |k: &str| d[k].as_u64().unwrap_or_else(|| panic!("{k}: {d}"));
            let descriptor = 3 * std::mem::size_of::<usize>() as u64;
            assert_eq!(
                field("reserved_bytes"),
                field("used_bytes") + descriptor * field("pages"),
                "{d}"
            );
        }
        assert!(
            direct
                .iter()
                .any(|d| d["reserved_bytes"].as_u64() < Some(65536)),
            "no record on pages smaller than the host's"
        );
    }
}

/// The .NET JIT's Debug memory statistics (MEASURE_MEM_ALLOC) kept beside jitarena's counts, in
/// the form the guide gives them, compile and count what jitarena counts: the example's
/// statistics build writes a record for every context the baseline does, with each kind
/// allocated as many times (its bytes differ where a structure holds a CompAllocator, a word
/// wider in that flavour), and its own check that its MemStats count every kind's bytes as
/// jitarena does (but the Compiler objects, which no CompAllocator allocates) never fails a
/// compile.
#[test]
fn the_debug_memory_statistics_build_counts_what_jitarena_counts() {
    let Some(build) = example() else { return };
    let jit = Example::new(build);
    let programs = native::workspace_root().join("examples/cmake-jit/programs.txt");
    let work = &fresh("memstats");
    let (base_log, stats_log) = (work.join("base.jas"), work.join("memstats.jas"));
    let (code, out) = run(Command::new(&jit.host)
        .arg("-jitoption")
        .arg(format!("JitArenaLog={}", base_log.display()))
        .arg("-jit2option")
        .arg(format!("JitArenaLog={}", stats_log.display()))
        .arg(&jit.base)
        .arg(&jit.memstats)
        .arg(&programs));
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("(1 in MinOpts after a failed optimized attempt)") && !out.contains("differ"),
        "{out}"
    );
    let (base, stats) = (records(&base_log), records(&stats_log));
    assert_eq!(base.len(), functions(&programs).len());
    assert_eq!(base.len(), stats.len());
    let allocations = |r: &Value| -> Vec<(String, Value)> {
        r["kinds"]
            .as_object()
            .expect("kinds")
            .iter()
            .map(|(kind, k)| (kind.clone(), k["count"].clone()))
            .collect()
    };
    for (b, s) in base.iter().zip(&stats) {
        for field in ["context", "tier", "name", "allocations"] {
            assert_eq!(b[field], s[field], "{field}: {b} / {s}");
        }
        assert_eq!(allocations(b), allocations(s), "{b} / {s}");
    }
}

/// Every code block of `docs/adopting.md` whose first line names a file of the example (as
/// `// examples/cmake-jit/minijit.cpp`) is that file's code: its lines appear in the file in
/// that order (trimmed; `...` lines stand for what is left out).
#[test]
fn the_adoption_guide_quotes_the_example_as_it_is() {
    let root = &native::workspace_root();
    let guide = std::fs::read_to_string(root.join("docs/adopting.md")).expect("the guide");
    let mut quoted = 0;
    let mut in_block = false;
    let mut block: Vec<&str> = Vec::new();
    for line in guide.lines() {
        if line.trim_start().starts_with("```") {
            if in_block && !block.is_empty() {
                let first = block[0].trim();
                let named = first
                    .strip_prefix("// ")
                    .or_else(|| first.strip_prefix("# "))
                    .filter(|f| f.starts_with("examples/cmake-jit/"));
                if let Some(file) = named {
                    let source = std::fs::read_to_string(root.join(file))
                        .unwrap_or_else(|e| panic!("docs/adopting.md quotes {file}: {e}"));
                    let mut lines = source.lines().map(str::trim);
                    for want in block[1..].iter().map(|l| l.trim()) {
                        if want.is_empty() || want == "..." || want.ends_with(" ...") {
                            continue;
                        }
                        assert!(
                            lines.any(|l| l == want),
                            "docs/adopting.md quotes {file} with a line it lacks (or out of order): {want:?}"
                        );
                    }
                    quoted += 1;
                }
            }
            in_block = !in_block;
            block.clear();
        } else if in_block {
            block.push(line);
        }
    }
    assert!(quoted >= 8, "only {quoted} quotes of the example");
    // The recipe's key lines are among them.
    for key in [
        "return jitarena_alloc_slot_or(arena, size, slot, onFailure);",
        "TMemKindTraits::outOfMemory();",
        "config.page_alloc  = allocatePage;",
        "return g_jitHost->allocate_slab(g_jitHost->self, size, pActualSize);",
        ": m_handle(jitarena_kind_handle_of(arena, static_cast<uint32_t>(kind)))",
        "return static_cast<T*>(Arena::allocateMemory(m_handle, count * sizeof(T)));",
        "return CompAllocator(compArena, kind);",
        "jitarena_phase_begin(compArena, phase);",
        "jitarena_phase_end(compArena, phase);",
        "if (!compIsForInlining())",
        "comp->EndPhase(PHASE_LINEAR_SCAN_BUILD);",
        "alloc.destroy();",
        "catch (...)",
        "if (inlineInfo == nullptr && isFailure(result) && alloc.isInitialized())",
        "jitarena_method method = JITARENA_METHOD_INIT;",
        "method.context = g_jitHost->get_int_config(g_jitHost->self, \"SuperPMIMethodContextNumber\", -1);",
        "method.tier = opts.jitFlags->IsSet(JitFlags::JIT_FLAG_MIN_OPT) ? \"MinOpts\" : compGetTieringName(true);",
        "const char* log = host->get_string_config(host->self, \"JitArenaLog\");",
        "if (jitarena_log_close() != 0)",
        "MINIJIT_BUILD_ID=\"${name}@${MINIJIT_REVISION}\")",
        "jitFallbackCompile = true;",
        "mostRecentlyActivePhase = phase;",
        "CompAllocator(compArenaAllocator->recordArena(), CMK_DebugOnly));",
        "DoPhase(PHASE_LCLVARLIVENESS, [&] {",
        "config.exact_pages = TMemKindTraits::bypassHostAllocator() ? 1 : 0;",
        "return m_arena->allocateMemory(sz, jitarena_kind_slot_of(static_cast<uint32_t>(m_kind)));",
    ] {
        assert!(guide.contains(key), "docs/adopting.md does not show {key:?}");
    }
}

/// Whether python3 with PyYAML is here for the pipeline check; in CI it must be.
fn has_pyyaml() -> bool {
    let found = Command::new("python3")
        .args(["-c", "import yaml"])
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        assert!(
            std::env::var("CI").is_err(),
            "python3 with PyYAML is needed in CI to check the pipelines"
        );
        eprintln!("python3 with PyYAML not found: skipping");
    }
    found
}

/// The two CI pipelines: GitHub Actions and Azure Pipelines, the same jobs.
const PIPELINES: [(&str, &str); 2] = [
    ("github", ".github/workflows/memdiff.yml"),
    ("azure", ".azure/memdiff.yml"),
];

/// Runs scripts/check_workflow.py on a pipeline file: (exit code, stdout, stderr).
fn check_pipeline(file: &Path, matrix: bool) -> (i32, String, String) {
    let root = &native::workspace_root();
    let mut cmd = Command::new("python3");
    cmd.arg(root.join("scripts/check_workflow.py"));
    if matrix {
        cmd.arg("--matrix");
    }
    let out = cmd
        .arg(file)
        .arg(env!("CARGO_BIN_EXE_jitarena"))
        .output()
        .expect("python3 runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// One replay of the pipeline's matrix.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    platform: String,
    collection: String,
    programs: String,
    shard: u64,
}

/// The replay matrix a pipeline runs, as the check reads it.
fn pipeline_matrix(file: &Path) -> Vec<Entry> {
    let (code, out, err) = check_pipeline(file, true);
    assert_eq!(code, 0, "{}: {err}", file.display());
    let doc: Value = serde_json::from_str(&out).expect("the matrix as JSON");
    doc.as_array()
        .expect("a list")
        .iter()
        .map(|e| Entry {
            platform: e["platform"].as_str().expect("a platform").to_owned(),
            collection: e["collection"].as_str().expect("a collection").to_owned(),
            programs: e["programs"].as_str().expect("a programs file").to_owned(),
            shard: e["shard"].as_u64().expect("a shard"),
        })
        .collect()
}

#[test]
fn the_ci_workflow_is_valid_and_runs_only_what_exists() {
    if !has_pyyaml() {
        return;
    }
    let root = &native::workspace_root();
    for (kind, file) in PIPELINES {
        let (code, out, err) = check_pipeline(&root.join(file), false);
        assert_eq!(code, 0, "{file}: {out}{err}");
        assert!(
            out.contains(&format!("({kind})")) && out.contains(": ok"),
            "{out}"
        );
    }
    // Both pipelines replay the same platforms, collections and shards.
    let matrices: Vec<_> = PIPELINES
        .iter()
        .map(|(_, f)| pipeline_matrix(&root.join(f)))
        .collect();
    assert_eq!(matrices[0], matrices[1]);
    let mut platforms: Vec<&str> = matrices[0].iter().map(|e| e.platform.as_str()).collect();
    platforms.dedup();
    assert_eq!(platforms, ["linux-x64", "linux-x86"], "{:?}", matrices[0]);
    assert!(matrices[0].len() >= 8, "{:?}", matrices[0]);

    // Each file broken one way at a time: the check must fail and say why.
    let (github, azure) = (PIPELINES[0].1, PIPELINES[1].1);
    let mutants: &[(&str, &str, &str, &str)] = &[
        (
            github,
            "--diff-root merged/diff",
            "--diff-rot merged/diff",
            "passes --diff-rot to `jitarena memdiff`",
        ),
        (
            azure,
            "--diff-root merged/diff",
            "--diff-rot merged/diff",
            "passes --diff-rot to `jitarena memdiff`",
        ),
        (
            github,
            "--md summary.md --md-long",
            "--mdd summary.md --md-long",
            "passes --mdd to `jitarena memdiff`",
        ),
        (
            azure,
            "--max-missed 1",
            "--max-miss 1",
            "passes --max-miss to `jitarena memdiff`",
        ),
        (
            github,
            "jitarena memdiff",
            "jitarena memdif",
            "runs `jitarena memdif`",
        ),
        (
            azure,
            "jitarena memdiff",
            "jitarena mem-diff",
            "runs `jitarena mem-diff`",
        ),
        (
            github,
            "jitarena summarize",
            "jitarena summarise",
            "runs `jitarena summarise`",
        ),
        (
            azure,
            "            --md summary.md\n",
            "            --markdown summary.md\n",
            "passes --markdown to `jitarena summarize`",
        ),
        (
            azure,
            "--json memdiff.json --html memdiff.html\n          code=$?",
            "--html memdiff.html\n          code=$?",
            "the memdiff job's `jitarena memdiff` has no --json",
        ),
        (
            github,
            "programs-pressure.txt",
            "programs-presure.txt",
            "refers to examples/cmake-jit/programs-presure.txt",
        ),
        (
            azure,
            "programs-pressure.txt, shard: 1",
            "programs-presure.txt, shard: 1",
            "collection pressure is replayed with different values",
        ),
        (
            azure,
            "scripts/merge_shards.sh",
            "scripts/merge-shards.sh",
            "refers to scripts/merge-shards.sh",
        ),
        (
            github,
            "scripts/merge_shards.sh shards merged \"$SHARDS\" ${{ matrix.platform.name }}",
            "scripts/merge_shards.sh shards merged \"$SHARDS\"",
            "which does not merge that platform's shards alone",
        ),
        (
            github,
            "actions/checkout@v4",
            "actions/checkout@main",
            "uses actions/checkout@main, not pinned",
        ),
        (
            azure,
            "PublishPipelineArtifact@1",
            "PublishPipelineArtifact",
            "uses PublishPipelineArtifact, not pinned",
        ),
        (
            github,
            "shard: [0, 1]",
            "shard: [0]",
            "has shards ['0'] on linux-x64, not 0..1",
        ),
        (azure, "  SHARDS: 2", "  SHARDS: 3", "not 0..2 (SHARDS=3)"),
        (
            github,
            "logs-${{ matrix.platform.name }}-${{ matrix.collection.name }}-${{ matrix.shard }}",
            "logs-${{ matrix.collection.name }}-${{ matrix.shard }}",
            "does not name a different artifact",
        ),
        (
            azure,
            "logs-$(platform)-$(collection)-$(shard)",
            "logs-$(platform)-$(collection)",
            "does not name a different artifact",
        ),
        (
            azure,
            "mkdir -p $logs/base/$(collection)",
            "mkdir -p $logs/base/$(colection)",
            "uses $(colection)",
        ),
        (
            github,
            "matrix.collection.programs",
            "matrix.collection.program",
            "uses matrix.collection.program,",
        ),
        (
            github,
            "cflags: -m32",
            "cflags: -mx32",
            "platform linux-x86's platform.cflags is '-mx32' in job build but '-m32' in job replay",
        ),
        (
            azure,
            "        linux_x86: { platform: linux-x86 }\n",
            "",
            "job memdiff runs on ['linux-x64'], job build builds ['linux-x64', 'linux-x86']",
        ),
        (
            azure,
            "        linux_x86: { platform: linux-x86, rustTarget",
            "        # linux_x86: { platform: linux-x86, rustTarget",
            "the pipeline runs on 1 platform",
        ),
        (
            github,
            "--platform linux-x86 reports/report-linux-x86/memdiff.json \\\n",
            "",
            "the summarize job summarizes ['linux-x64'], the pipeline runs on ['linux-x64', 'linux-x86']",
        ),
        (
            azure,
            "\"$reports/report-linux-x86/memdiff.json\"",
            "\"$reports/report-linux-x64/memdiff.json\"",
            "for linux-x86: not the memdiff job's memdiff.json in a directory naming linux-x86",
        ),
        (
            github,
            "test \"${{ steps.diff.outputs.code }}\" = 0",
            "true",
            "no step after memdiff fails on its exit code",
        ),
        (
            azure,
            "test \"$(memdiffCode)\" = 0",
            "true",
            "no step after memdiff fails on its exit code",
        ),
        (
            github,
            "test \"${{ steps.summary.outputs.code }}\" = 0",
            "true",
            "no step after summarize fails on its exit code",
        ),
        (
            azure,
            "test \"$(summaryCode)\" = 0",
            "true",
            "no step after summarize fails on its exit code",
        ),
        (
            github,
            "cat summary.md >> \"$GITHUB_STEP_SUMMARY\"",
            "cat summary.md",
            "publishes no summary written by summarize",
        ),
        (
            azure,
            "uploadsummary]$(System.DefaultWorkingDirectory)/summary.md",
            "uploadsummary]$(System.DefaultWorkingDirectory)/other.md",
            "publishes no summary written by summarize",
        ),
        (
            azure,
            "    dependsOn: build\n",
            "",
            "job replay does not wait for job build",
        ),
        (
            github,
            "    needs: [build, memdiff]\n",
            "    needs: [build]\n",
            "job summarize does not wait for job memdiff",
        ),
    ];
    let dir = fresh("ci-mutants");
    for (n, (file, from, to, expected)) in mutants.iter().enumerate() {
        let text = std::fs::read_to_string(root.join(file)).expect("the pipeline");
        assert!(
            text.contains(from),
            "{file} no longer contains {from:?}: update the mutant"
        );
        let mutant = dir.join(format!("{n}.yml"));
        std::fs::write(&mutant, text.replacen(from, to, 1)).expect("the mutant");
        let (code, out, err) = check_pipeline(&mutant, false);
        assert_eq!(
            code, 1,
            "{file} with {from:?} -> {to:?} passed the check:\n{out}{err}"
        );
        assert!(
            err.contains(expected),
            "{file} with {from:?} -> {to:?}: expected {expected:?} in:\n{err}"
        );
    }
}

/// The pipelines' platform that this machine runs: the others need their own builds (linux-x86
/// the i686 archive and a multilib compiler, which CI's x86 jobs install), so only this one is
/// replayed here.
fn host_platform() -> Option<&'static str> {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => Some("linux-x64"),
        ("linux", "x86") => Some("linux-x86"),
        _ => None,
    }
}

#[test]
fn the_ci_pipeline_replays_merges_diffs_and_summarizes_the_example() {
    if !has_pyyaml() {
        return;
    }
    let Some(platform) = host_platform() else {
        eprintln!("no platform of the pipelines runs here: skipping");
        return;
    };
    let Some(build) = example() else { return };
    let jit = Example::new(build);
    let root = &native::workspace_root();
    let work = &fresh("ci-pipeline");

    // The replay job, once per matrix entry of this platform, each writing its artifact's
    // layout: logs-PLATFORM-COLLECTION-SHARD/PLATFORM/{base,diff}/COLLECTION/SHARD.jas.
    let matrix = pipeline_matrix(&root.join(PIPELINES[0].1));
    let shards = matrix.iter().map(|m| m.shard).max().expect("shards") + 1;
    let mut platforms: Vec<&str> = matrix.iter().map(|m| m.platform.as_str()).collect();
    platforms.dedup();
    assert!(platforms.contains(&platform), "{platforms:?}");
    let others: Vec<&str> = platforms
        .iter()
        .copied()
        .filter(|p| *p != platform)
        .collect();
    eprintln!("replaying the pipeline's {platform} entries; {others:?} need their own builds");
    let mine: Vec<&Entry> = matrix.iter().filter(|m| m.platform == platform).collect();
    let mut collections: Vec<(String, String)> = mine
        .iter()
        .map(|m| (m.collection.clone(), m.programs.clone()))
        .collect();
    collections.dedup();
    assert!(collections.len() >= 2, "{collections:?}");
    let artifact = |p: &str, c: &str, s: u64| work.join(format!("shards/logs-{p}-{c}-{s}"));
    for m in &mine {
        let logs: Vec<PathBuf> = ["base", "diff"]
            .iter()
            .map(|side| {
                let dir = artifact(platform, &m.collection, m.shard)
                    .join(platform)
                    .join(side)
                    .join(&m.collection);
                std::fs::create_dir_all(&dir).expect("the artifact's directories");
                dir.join(format!("{}.jas", m.shard))
            })
            .collect();
        let (code, out) = jit.replay(
            &root.join(&m.programs),
            [&logs[0], &logs[1]],
            Some((m.shard, shards)),
        );
        assert_eq!(code, 0, "{out}");
    }

    // Azure downloads every artifact of the run: the JITs, and the other platforms' logs
    // (stand-ins here: copies of this platform's, under the other platform's name, which its
    // merge must find and this platform's must leave alone).
    std::fs::create_dir_all(work.join(format!("shards/jits-{platform}"))).expect("the JITs");
    std::fs::copy(
        &jit.base,
        work.join(format!("shards/jits-{platform}/base.so")),
    )
    .expect("a JIT");
    for other in &others {
        for m in &mine {
            let from = artifact(platform, &m.collection, m.shard).join(platform);
            let to = artifact(other, &m.collection, m.shard).join(other);
            for side in ["base", "diff"] {
                let dir = to.join(side).join(&m.collection);
                std::fs::create_dir_all(&dir).expect("a stand-in's directories");
                let log = format!("{}.jas", m.shard);
                std::fs::copy(
                    from.join(side).join(&m.collection).join(&log),
                    dir.join(&log),
                )
                .expect("a stand-in log");
            }
        }
    }

    // The memdiff job, per platform: merge that platform's shards with the pipeline's script
    // (jitarena on PATH), then diff the roots into the report the summarize job reads.
    let bin = Path::new(env!("CARGO_BIN_EXE_jitarena"));
    let path = format!(
        "{}:{}",
        bin.parent().expect("the binary's directory").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let merge = |into: &str, platform: &str| {
        run(Command::new(root.join("scripts/merge_shards.sh"))
            .arg(work.join("shards"))
            .arg(work.join(into))
            .arg(shards.to_string())
            .arg(platform)
            .env("PATH", &path))
    };
    let diff_roots = |roots: &Path, json: &Path| {
        std::fs::create_dir_all(json.parent().unwrap()).expect("the report's directory");
        let (code, report) = run(Command::new(bin)
            .arg("memdiff")
            .arg("--base-root")
            .arg(roots.join("base"))
            .arg("--diff-root")
            .arg(roots.join("diff"))
            .arg("-q")
            .arg("--json")
            .arg(json));
        (code, report, read_json(json))
    };
    let mut reports = Vec::new();
    for p in &platforms {
        let (code, out) = merge(&format!("merged-{p}"), p);
        assert_eq!(code, 0, "{out}");
        assert!(
            out.contains(&format!("platform {p}: 2 collections")),
            "{out}"
        );
        let json = work.join(format!("reports/report-{p}/memdiff.json"));
        let (code, report, doc) = diff_roots(&work.join(format!("merged-{p}")), &json);
        // The example's diff JIT is heavier on purpose: the gate fails on a regression, not on
        // coverage, and every collection is there whole, each context once.
        assert_eq!(code, 1, "{report}");
        assert_eq!(doc["verdict"]["status"], "FAIL", "{report}");
        let names: Vec<&str> = doc["collections"]
            .as_array()
            .expect("collections")
            .iter()
            .map(|c| c["name"].as_str().expect("a name"))
            .collect();
        let expected: Vec<&str> = collections.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(names, expected);
        for c in doc["collections"].as_array().unwrap() {
            let coverage = &c["diff"]["coverage"];
            let contexts =
                functions(&root.join(&collections.iter().find(|x| x.0 == c["name"]).unwrap().1))
                    .len();
            assert_eq!(coverage["matched"], contexts, "{coverage}");
            assert_eq!(coverage["duplicates_base"], 0, "{coverage}");
            assert_eq!(coverage["duplicates_diff"], 0, "{coverage}");
        }
        reports.push((p.to_string(), json, doc));
    }

    // The same collections replayed unsharded give the same diff, collection by collection.
    for (collection, programs) in &collections {
        let logs: Vec<PathBuf> = ["base", "diff"]
            .iter()
            .map(|side| {
                let dir = work.join("whole").join(side).join(collection);
                std::fs::create_dir_all(&dir).expect("a collection directory");
                dir.join("all.jas")
            })
            .collect();
        let (code, out) = jit.replay(&root.join(programs), [&logs[0], &logs[1]], None);
        assert_eq!(code, 0, "{out}");
    }
    let (_, _, whole) = diff_roots(&work.join("whole"), &work.join("whole.json"));
    let merged = &reports[0].2;
    assert_eq!(merged["verdict"], whole["verdict"]);
    for (m, w) in merged["collections"]
        .as_array()
        .unwrap()
        .iter()
        .zip(whole["collections"].as_array().unwrap())
    {
        assert_eq!(m["name"], w["name"]);
        assert_eq!(m["diff"], w["diff"], "collection {}", m["name"]);
    }

    // The summarize job: one summary over the platforms, failing as the worst of them.
    let summary = work.join("summary.md");
    let mut cmd = Command::new(bin);
    cmd.arg("summarize");
    for (p, json, _) in &reports {
        cmd.arg("--platform").arg(p).arg(json);
    }
    let (code, out) = run(cmd.arg("--md").arg(&summary));
    assert_eq!(code, 1, "{out}");
    let text = std::fs::read_to_string(&summary).expect("the summary");
    for p in &platforms {
        assert!(text.contains(p), "{p} in:\n{text}");
    }

    // A replay job that uploaded nothing fails the merge, naming the shard, instead of leaving
    // both sides equally short (which the coverage check could not see).
    let lost = &mine[mine.len() - 2];
    std::fs::remove_dir_all(artifact(platform, &lost.collection, lost.shard)).expect("remove");
    let (code, out) = merge("merged-short", platform);
    assert_eq!(code, 1, "{out}");
    for side in ["base", "diff"] {
        assert!(
            out.contains(&format!(
                "collection {}: no {side} log for shard {} of {shards}",
                lost.collection, lost.shard
            )),
            "{out}"
        );
    }
}
