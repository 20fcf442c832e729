//! The adoption kit: the CMake example JIT builds in both variants with the arena's symbols
//! private, its replay host writes two logs in one process, memdiff finds the heavier data
//! structure; and the CI workflow is valid and refers only to commands that exist.

mod native;

use std::path::{Path, PathBuf};
use std::process::Command;

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

#[test]
fn the_cmake_example_builds_replays_and_fails_the_gate_on_its_heavier_structure() {
    if !required("cmake", "JITARENA_REQUIRE_CMAKE") {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let build = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cmake-jit");
    let _ = std::fs::remove_dir_all(&build);
    ok(Command::new("cmake")
        .arg("-S")
        .arg(root.join("examples/cmake-jit"))
        .arg("-B")
        .arg(&build)
        .arg(format!("-DJITARENA_LIB={}", native::static_lib().display())));
    ok(Command::new("cmake").arg("--build").arg(&build));
    let (base, diff) = (
        build.join("libminijit_base.so"),
        build.join("libminijit_diff.so"),
    );
    assert!(base.exists() && diff.exists(), "both variants build");

    // Only the compiler's entry points are exported; the arena stays inside each library.
    if let Ok(out) = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(&base)
        .output()
    {
        let symbols = String::from_utf8_lossy(&out.stdout);
        assert!(symbols.contains("minijit_compile"), "{symbols}");
        assert!(
            !symbols.contains("jitarena_"),
            "the arena's symbols leak:\n{symbols}"
        );
    }

    let programs = root.join("examples/cmake-jit/programs.txt");
    let host = build.join("replay_host");
    let (base_log, diff_log) = (build.join("base.jas"), build.join("diff.jas"));
    let out = ok(Command::new(&host).args([&base, &diff, &programs, &base_log, &diff_log]));
    assert!(out.contains("0 failures"), "{out}");

    let jitarena = env!("CARGO_BIN_EXE_jitarena");
    let (code, report) = run(Command::new(jitarena)
        .arg("memdiff")
        .arg(&base_log)
        .arg(&diff_log));
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
            .starts_with("RegAlloc"),
        "{report}"
    );

    // Sharded as in CI: two shards per JIT, merged, give the same diff.
    let mut shard_logs = (Vec::new(), Vec::new());
    for shard in ["0", "1"] {
        let (b, d) = (
            build.join(format!("base-{shard}.jas")),
            build.join(format!("diff-{shard}.jas")),
        );
        let out = ok(Command::new(&host)
            .args([&base, &diff, &programs, &b, &d])
            .args([shard, "2"]));
        assert!(out.contains("0 failures"), "{out}");
        shard_logs.0.push(b);
        shard_logs.1.push(d);
    }
    let (merged_base, merged_diff) = (build.join("merged-base.jas"), build.join("merged-diff.jas"));
    ok(Command::new(jitarena)
        .arg("merge")
        .arg("-o")
        .arg(&merged_base)
        .args(&shard_logs.0));
    ok(Command::new(jitarena)
        .arg("merge")
        .arg("-o")
        .arg(&merged_diff)
        .args(&shard_logs.1));
    let json = |b: &Path, d: &Path| {
        let out = build.join("x.json");
        run(Command::new(jitarena)
            .arg("memdiff")
            .arg(b)
            .arg(d)
            .arg("-q")
            .arg("--json")
            .arg(&out));
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).expect("json")).expect("valid");
        // The collection is named after the inputs' file names; everything else must agree.
        (
            doc["verdict"]["status"].clone(),
            doc["collections"][0]["diff"].clone(),
        )
    };
    assert_eq!(json(&merged_base, &merged_diff), json(&base_log, &diff_log));
}

#[test]
fn the_ci_workflow_is_valid_and_runs_only_what_exists() {
    let has_yaml = Command::new("python3")
        .args(["-c", "import yaml"])
        .status()
        .is_ok_and(|s| s.success());
    if !has_yaml {
        assert!(
            std::env::var("CI").is_err(),
            "python3 with PyYAML is needed in CI to check the workflow"
        );
        eprintln!("python3 with PyYAML not found: skipping");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = ok(Command::new("python3")
        .arg(root.join("scripts/check_workflow.py"))
        .arg(root.join(".github/workflows/memdiff.yml"))
        .arg(env!("CARGO_BIN_EXE_jitarena")));
    assert!(out.contains(": ok"), "{out}");
}
