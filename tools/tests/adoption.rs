//! The adoption kit: the CMake example JIT builds in both variants with the arena's symbols
//! private, its replay host writes two logs in one process, memdiff finds the heavier data
//! structure; the CI pipelines (GitHub Actions and Azure Pipelines) are valid and refer only to
//! commands, flags and files that exist; and their replay matrix, merged and diffed as they do,
//! gives the unsharded answer.

#[path = "../../tests/native/mod.rs"]
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
    let root = &native::workspace_root();
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

/// The replay matrix a pipeline runs, as the check reads it: (collection, programs, shard).
fn pipeline_matrix(file: &Path) -> Vec<(String, String, u64)> {
    let (code, out, err) = check_pipeline(file, true);
    assert_eq!(code, 0, "{}: {err}", file.display());
    let doc: serde_json::Value = serde_json::from_str(&out).expect("the matrix as JSON");
    doc.as_array()
        .expect("a list")
        .iter()
        .map(|e| {
            (
                e["collection"].as_str().expect("a collection").to_owned(),
                e["programs"].as_str().expect("a programs file").to_owned(),
                e["shard"].as_u64().expect("a shard"),
            )
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
    // Both pipelines replay the same collections and shards.
    let matrices: Vec<_> = PIPELINES
        .iter()
        .map(|(_, f)| pipeline_matrix(&root.join(f)))
        .collect();
    assert_eq!(matrices[0], matrices[1]);
    assert!(matrices[0].len() >= 4, "{:?}", matrices[0]);

    // Each file broken one way at a time: the check must fail and say why.
    let mutants: &[(&str, &str, &str, &str)] = &[
        (
            PIPELINES[0].1,
            "--diff-root merged/diff",
            "--diff-rot merged/diff",
            "passes --diff-rot to `jitarena memdiff`",
        ),
        (
            PIPELINES[1].1,
            "--diff-root merged/diff",
            "--diff-rot merged/diff",
            "passes --diff-rot to `jitarena memdiff`",
        ),
        (
            PIPELINES[0].1,
            "--md summary.md",
            "--mdd summary.md",
            "passes --mdd to `jitarena memdiff`",
        ),
        (
            PIPELINES[1].1,
            "--max-missed 1",
            "--max-miss 1",
            "passes --max-miss to `jitarena memdiff`",
        ),
        (
            PIPELINES[0].1,
            "jitarena memdiff",
            "jitarena memdif",
            "runs `jitarena memdif`",
        ),
        (
            PIPELINES[1].1,
            "jitarena memdiff",
            "jitarena mem-diff",
            "runs `jitarena mem-diff`",
        ),
        (
            PIPELINES[0].1,
            "programs-pressure.txt",
            "programs-presure.txt",
            "refers to examples/cmake-jit/programs-presure.txt",
        ),
        (
            PIPELINES[1].1,
            "programs-pressure.txt, shard: 3",
            "programs-presure.txt, shard: 3",
            "collection pressure is replayed with different values",
        ),
        (
            PIPELINES[1].1,
            "scripts/merge_shards.sh",
            "scripts/merge-shards.sh",
            "refers to scripts/merge-shards.sh",
        ),
        (
            PIPELINES[0].1,
            "actions/checkout@v4",
            "actions/checkout@main",
            "uses actions/checkout@main, not pinned",
        ),
        (
            PIPELINES[1].1,
            "PublishPipelineArtifact@1",
            "PublishPipelineArtifact",
            "uses PublishPipelineArtifact, not pinned",
        ),
        (
            PIPELINES[0].1,
            "shard: [0, 1, 2, 3]",
            "shard: [0, 1, 2]",
            "has shards ['0', '1', '2'], not 0..3",
        ),
        (
            PIPELINES[1].1,
            "  SHARDS: 4",
            "  SHARDS: 5",
            "not 0..4 (SHARDS=5)",
        ),
        (
            PIPELINES[0].1,
            "logs-${{ matrix.collection.name }}-${{ matrix.shard }}",
            "logs-${{ matrix.shard }}",
            "does not name a different artifact",
        ),
        (
            PIPELINES[1].1,
            "logs/base/$(collection)/",
            "logs/base/$(colection)/",
            "uses $(colection)",
        ),
        (
            PIPELINES[0].1,
            "matrix.collection.programs",
            "matrix.collection.program",
            "uses matrix.collection.program,",
        ),
        (
            PIPELINES[0].1,
            "test \"${{ steps.diff.outputs.code }}\" = 0",
            "true",
            "no step after memdiff fails on its exit code",
        ),
        (
            PIPELINES[1].1,
            "test \"$(memdiffCode)\" = 0",
            "true",
            "no step after memdiff fails on its exit code",
        ),
        (
            PIPELINES[1].1,
            "uploadsummary]$(System.DefaultWorkingDirectory)/memdiff.md",
            "uploadsummary]$(System.DefaultWorkingDirectory)/other.md",
            "publishes no summary written by memdiff",
        ),
        (
            PIPELINES[1].1,
            "    dependsOn: build\n",
            "",
            "job replay does not wait for job build",
        ),
    ];
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ci-mutants");
    std::fs::create_dir_all(&dir).expect("a directory for the mutants");
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

#[test]
fn the_ci_pipeline_replays_merges_and_gates_the_example_collections() {
    if !required("cmake", "JITARENA_REQUIRE_CMAKE") || !has_pyyaml() {
        return;
    }
    let root = &native::workspace_root();
    let work = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ci-pipeline");
    let _ = std::fs::remove_dir_all(&work);
    let build = work.join("build");
    ok(Command::new("cmake")
        .arg("-S")
        .arg(root.join("examples/cmake-jit"))
        .arg("-B")
        .arg(&build)
        .arg(format!("-DJITARENA_LIB={}", native::static_lib().display())));
    ok(Command::new("cmake").arg("--build").arg(&build));
    let (host, base_jit, diff_jit) = (
        build.join("replay_host"),
        build.join("libminijit_base.so"),
        build.join("libminijit_diff.so"),
    );

    // The replay job, once per matrix entry, each writing its artifact's layout.
    let matrix = pipeline_matrix(&root.join(PIPELINES[0].1));
    let shards = matrix.iter().map(|m| m.2).max().expect("shards") + 1;
    let mut collections: Vec<(String, String)> =
        matrix.iter().map(|m| (m.0.clone(), m.1.clone())).collect();
    collections.dedup();
    assert!(collections.len() >= 2, "{collections:?}");
    for (collection, programs, shard) in &matrix {
        let artifact = work.join(format!("shards/logs-{collection}-{shard}"));
        let logs: Vec<PathBuf> = ["base", "diff"]
            .iter()
            .map(|side| {
                let dir = artifact.join(side).join(collection);
                std::fs::create_dir_all(&dir).expect("the artifact's directories");
                dir.join(format!("{shard}.jas"))
            })
            .collect();
        let out = ok(Command::new(&host)
            .args([
                &base_jit,
                &diff_jit,
                &root.join(programs),
                &logs[0],
                &logs[1],
            ])
            .args([shard.to_string(), shards.to_string()]));
        assert!(out.contains("0 failures"), "{out}");
    }

    // Azure downloads every artifact of the run beside the logs: the merge leaves them alone.
    std::fs::create_dir_all(work.join("shards/jits")).expect("the JITs' artifact");
    std::fs::copy(&base_jit, work.join("shards/jits/libminijit_base.so")).expect("a JIT");

    // The memdiff job: merge with the pipeline's script (jitarena on PATH), then diff the roots.
    let bin = Path::new(env!("CARGO_BIN_EXE_jitarena"));
    let path = format!(
        "{}:{}",
        bin.parent().expect("the binary's directory").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let merge = |into: &str| {
        run(Command::new(root.join("scripts/merge_shards.sh"))
            .arg(work.join("shards"))
            .arg(work.join(into))
            .arg(shards.to_string())
            .env("PATH", &path))
    };
    let (code, out) = merge("merged");
    assert_eq!(code, 0, "{out}");
    let diff_roots = |base: PathBuf, diff: PathBuf, json: &str| {
        let (code, report) = run(Command::new(bin)
            .arg("memdiff")
            .arg("--base-root")
            .arg(base)
            .arg("--diff-root")
            .arg(diff)
            .arg("-q")
            .arg("--json")
            .arg(work.join(json)));
        let text = std::fs::read_to_string(work.join(json)).expect("the JSON report");
        let doc: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        (code, report, doc)
    };
    let (code, report, merged) = diff_roots(
        work.join("merged/base"),
        work.join("merged/diff"),
        "merged.json",
    );
    // The example's diff JIT is heavier on purpose: the gate fails on a regression, not on
    // coverage, and every collection is there whole.
    assert_eq!(code, 1, "{report}");
    assert_eq!(merged["verdict"]["status"], "FAIL", "{report}");
    let names: Vec<&str> = merged["collections"]
        .as_array()
        .expect("collections")
        .iter()
        .map(|c| c["name"].as_str().expect("a name"))
        .collect();
    let expected: Vec<&str> = collections.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(names, expected);

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
        ok(Command::new(&host).args([
            &base_jit,
            &diff_jit,
            &root.join(programs),
            &logs[0],
            &logs[1],
        ]));
    }
    let (_, _, whole) = diff_roots(
        work.join("whole/base"),
        work.join("whole/diff"),
        "whole.json",
    );
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

    // A replay job that uploaded nothing fails the merge, naming the shard, instead of leaving
    // both sides equally short (which the coverage check could not see).
    let (lost, _, lost_shard) = &matrix[matrix.len() - 2];
    std::fs::remove_dir_all(work.join(format!("shards/logs-{lost}-{lost_shard}"))).expect("remove");
    let (code, out) = merge("merged-short");
    assert_eq!(code, 1, "{out}");
    for side in ["base", "diff"] {
        assert!(
            out.contains(&format!(
                "collection {lost}: no {side} log for shard {lost_shard} of {shards}"
            )),
            "{out}"
        );
    }
}
