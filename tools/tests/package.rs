//! The prebuilt package (issue 33; docs/packaging.md). `scripts/package.sh linux-x64` builds the
//! JIT's archive and the command into this test's target directory (what the other tests built
//! is reused) and writes the archive; unpacked into a temporary prefix, a small C++ project
//! (`tests/package/`) finds it with `find_package(jitarena 0.1 REQUIRED)`, with no cargo on
//! `PATH` and nothing of the checkout but the project's sources, links `jitarena::jitarena`,
//! runs a method that is allocated, counted and recorded, and the package's own `bin/jitarena
//! stats` reads the log. The package refuses another major version, a 32-bit build and a header
//! of another ABI; pkg-config builds the same program, and the example JIT builds from the
//! package. linux-x86 the same with -m32, when the i686 target is installed
//! (`JITARENA_REQUIRE_PACKAGE_X86=1`, as `.ci/run` sets after installing it, makes it required).
//! Skipped without cmake unless `JITARENA_REQUIRE_CMAKE=1`. The release pipelines pass
//! `scripts/check_workflow.py`, and fail it when broken.

#[path = "../../tests/native/mod.rs"]
mod native;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

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

/// The library's version, as the package names it (Cargo.toml's [package] version).
fn version() -> String {
    let manifest =
        std::fs::read_to_string(native::workspace_root().join("Cargo.toml")).expect("Cargo.toml");
    let package = manifest.split("[package]").nth(1).expect("[package]");
    let line = package
        .lines()
        .find(|l| l.starts_with("version"))
        .expect("a version");
    line.split('"').nth(1).expect("a quoted version").to_owned()
}

/// `PATH` without any directory that holds cargo or rustc, checked to find neither.
fn path_without_cargo() -> OsString {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let kept: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|dir| !dir.join("cargo").exists() && !dir.join("rustc").exists())
        .collect();
    let joined = std::env::join_paths(&kept).expect("a PATH");
    for tool in ["cargo", "rustc"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .env_clear()
            .env("PATH", &joined)
            .output()
            .expect("sh runs");
        assert!(
            !found.status.success(),
            "{tool} is still on the PATH: {}",
            String::from_utf8_lossy(&found.stdout)
        );
    }
    joined
}

/// A command that sees only the cargo-less `PATH` and a home of its own: nothing of cargo's
/// environment reaches it.
fn bare(program: impl AsRef<std::ffi::OsStr>, home: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.env_clear()
        .env("PATH", path_without_cargo())
        .env("HOME", home)
        .env("LC_ALL", "C");
    cmd
}

/// Runs scripts/package.sh for `rid` into `dist`, with this test's target directory; unpacks the
/// archive into `prefix`; returns the package's root (`prefix/jitarena-VERSION-RID`).
fn package(rid: &str, dist: &Path, prefix: &Path) -> PathBuf {
    let root = native::workspace_root();
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let target_dir = tmp.parent().expect("the target directory");
    let text = ok(Command::new("bash")
        .arg(root.join("scripts/package.sh"))
        .arg("--out")
        .arg(dist)
        .arg(rid)
        .env("CARGO_TARGET_DIR", target_dir)
        .current_dir(&root));
    assert!(
        text.contains(&format!("built {rid}")),
        "the script says what it built:\n{text}"
    );
    let name = format!("jitarena-{}-{rid}", version());
    let archive = dist.join(format!("{name}.tar.gz"));
    assert!(
        archive.exists(),
        "{} is missing:\n{text}",
        archive.display()
    );
    // The checksum file names the archive and holds its SHA-256 (64 hex digits).
    let sum =
        std::fs::read_to_string(dist.join(format!("{name}.tar.gz.sha256"))).expect("the .sha256");
    let (digest, file) = sum.trim_end().split_once("  ").expect("DIGEST  FILE");
    assert_eq!(file, format!("{name}.tar.gz"));
    assert!(
        digest.len() == 64 && digest.bytes().all(|b| b.is_ascii_hexdigit()),
        "{sum}"
    );
    let sha = ok(Command::new("sha256sum").arg(&archive));
    assert!(sha.starts_with(digest), "{sha} vs {sum}");

    std::fs::create_dir_all(prefix).expect("the prefix");
    ok(Command::new("tar")
        .arg("xzf")
        .arg(&archive)
        .arg("-C")
        .arg(prefix));
    let pkg = prefix.join(&name);
    let mut files: Vec<String> = Vec::new();
    let mut stack = vec![pkg.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("a directory") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push(path.strip_prefix(&pkg).unwrap().display().to_string());
            }
        }
    }
    files.sort();
    assert_eq!(
        files,
        [
            "bin/jitarena",
            "include/jitarena.h",
            "include/jitarena.hpp",
            "lib/cmake/jitarena/jitarenaConfig.cmake",
            "lib/cmake/jitarena/jitarenaConfigVersion.cmake",
            "lib/libjitarena.a",
            "lib/pkgconfig/jitarena.pc",
        ],
        "the layout of {name}"
    );
    // Relocatable: the text files name no path of the machine that built them.
    for file in &files[3..5] {
        let text = std::fs::read_to_string(pkg.join(file)).expect("a text file");
        for here in [root.as_path(), target_dir] {
            assert!(
                !text.contains(&*here.to_string_lossy()),
                "{file} names {}",
                here.display()
            );
        }
    }
    let pc = std::fs::read_to_string(pkg.join("lib/pkgconfig/jitarena.pc")).expect("the .pc");
    assert!(
        pc.contains("prefix=${pcfiledir}/../..") && pc.contains(&format!("Version: {}", version())),
        "{pc}"
    );
    // The header, the archive and the package state the same ABI.
    let header = std::fs::read_to_string(pkg.join("include/jitarena.h")).expect("the header");
    let abi = header
        .lines()
        .find_map(|l| l.strip_prefix("#define JITARENA_ABI_VERSION "))
        .expect("JITARENA_ABI_VERSION")
        .trim_end_matches('u')
        .to_owned();
    let config =
        std::fs::read_to_string(pkg.join("lib/cmake/jitarena/jitarenaConfig.cmake")).unwrap();
    assert!(
        config.contains(&format!("set(jitarena_ABI_VERSION {abi})")),
        "{config}"
    );
    pkg
}

/// What the program printed it counted, and the pointer size it was built for.
struct Counted {
    ast_bytes: u64,
    ast_count: u64,
    lsra_bytes: u64,
    pointer: u64,
}

fn counted(out: &str) -> Counted {
    let field = |prefix: &str, n: usize| -> u64 {
        let line = out
            .lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix:?} in:\n{out}"));
        line.split_whitespace()
            .nth(n)
            .and_then(|w| w.trim_end_matches(',').parse().ok())
            .unwrap_or_else(|| panic!("{line}"))
    };
    Counted {
        ast_bytes: field("ASTNode ", 1),
        ast_count: field("ASTNode ", 3),
        lsra_bytes: field("LSRA ", 1),
        pointer: field("pointer size ", 2),
    }
}

/// Configures, builds and runs tests/package against the packages on `prefix_path`, with
/// `flags` as the compiler's, no cargo on PATH; checks what it counted against what the package's
/// command reads in its log. Returns the directory of the jitarena config CMake chose.
fn build_and_run(
    dir: &Path,
    prefix_path: &str,
    flags: &str,
    command: &Path,
    pointer: u64,
) -> String {
    let root = native::workspace_root();
    // The project's sources alone, away from the checkout.
    let src = dir.join("src");
    std::fs::create_dir_all(&src).expect("the sources");
    for file in ["CMakeLists.txt", "main.cpp"] {
        std::fs::copy(root.join("tests/package").join(file), src.join(file)).expect("a source");
    }
    let build = dir.join("build");
    let configured = ok(bare("cmake", dir)
        .arg("-S")
        .arg(&src)
        .arg("-B")
        .arg(&build)
        .arg(format!("-DCMAKE_PREFIX_PATH={prefix_path}"))
        .arg(format!("-DCMAKE_CXX_FLAGS={flags}"))
        .arg("-DCMAKE_BUILD_TYPE=Release"));
    let found = configured
        .lines()
        .find_map(|l| l.strip_prefix("-- jitarena "))
        .unwrap_or_else(|| panic!("find_package said nothing:\n{configured}"))
        .to_owned();
    ok(bare("cmake", dir).arg("--build").arg(&build));
    let log = dir.join("method.jas");
    let out = ok(bare(build.join("package_user"), dir).arg(&log));
    let c = counted(&out);
    assert_eq!(c.pointer, pointer, "{out}");
    assert_eq!(c.ast_count, 100, "{out}");
    // A GenTree is an int (padded to a pointer's alignment) and two pointers: the bytes
    // requested, 24 on 64-bit targets and 12 on 32-bit ones.
    let node = 3 * pointer;
    assert_eq!(c.ast_bytes, 100 * node, "{out}");
    assert_eq!(c.lsra_bytes, 4000, "{out}");
    // The command CMake names for the build's own steps is the package's.
    let named =
        std::fs::read_to_string(build.join("jitarena_command.txt")).expect("the command's path");
    assert_eq!(Path::new(named.trim()), command);

    let stats: Value =
        serde_json::from_str(&ok(bare(command, dir).arg("stats").arg("--json").arg(&log)))
            .expect("stats --json");
    assert_eq!(stats["methods"], 1, "{stats}");
    let kind = |name: &str| {
        stats["kinds"]
            .as_array()
            .expect("kinds")
            .iter()
            .find(|k| k["name"] == name)
            .unwrap_or_else(|| panic!("no kind {name}: {stats}"))
            .clone()
    };
    assert_eq!(kind("ASTNode")["bytes"], c.ast_bytes, "{stats}");
    assert_eq!(kind("ASTNode")["count"], c.ast_count, "{stats}");
    assert_eq!(kind("LSRA")["bytes"], c.lsra_bytes, "{stats}");
    assert_eq!(
        stats["largest_methods"][0]["name"], "Package:User(int)",
        "{stats}"
    );
    found
}

/// A project that only asks for the package: whether CMake takes it (exit 0) and what it said.
fn find_only(dir: &Path, prefix_path: &str, request: &str, flags: &str) -> (i32, String) {
    let src = dir.join("src");
    std::fs::create_dir_all(&src).expect("the sources");
    std::fs::write(
        src.join("CMakeLists.txt"),
        format!(
            "cmake_minimum_required(VERSION 3.16)\nproject(find_only LANGUAGES CXX)\nfind_package(jitarena {request} REQUIRED)\n"
        ),
    )
    .expect("the project");
    run(bare("cmake", dir)
        .arg("-S")
        .arg(&src)
        .arg("-B")
        .arg(dir.join("build"))
        .arg(format!("-DCMAKE_PREFIX_PATH={prefix_path}"))
        .arg(format!("-DCMAKE_CXX_FLAGS={flags}")))
}

fn has_i686() -> bool {
    let installed = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .is_ok_and(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .any(|l| l == "i686-unknown-linux-gnu")
        });
    let required = std::env::var("JITARENA_REQUIRE_PACKAGE_X86").as_deref() == Ok("1");
    if !installed {
        assert!(
            !required,
            "the i686 target is required (JITARENA_REQUIRE_PACKAGE_X86=1) but not installed"
        );
        eprintln!("rustup target i686-unknown-linux-gnu not installed: linux-x86 skipped");
    }
    installed || required
}

#[test]
fn the_package_is_found_by_cmake_and_pkg_config_without_cargo() {
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        eprintln!("the packages built here are for x64 Linux: skipping");
        return;
    }
    if !required("cmake", "JITARENA_REQUIRE_CMAKE") {
        return;
    }
    let dir = fresh("package");
    let dist = dir.join("dist");
    let x64 = package("linux-x64", &dist, &dir.join("prefix"));
    let x64_path = x64.to_string_lossy().into_owned();
    let found = build_and_run(
        &dir.join("x64"),
        &x64_path,
        "",
        &x64.join("bin/jitarena"),
        8,
    );
    let v = version();
    assert!(
        found.starts_with(&format!("{v} (ABI "))
            && found.contains("for linux-x64: ")
            && found.contains(&x64_path),
        "{found}"
    );

    // Another major version, and a 32-bit build, are refused, saying which version was found.
    let (code, text) = find_only(&dir.join("major"), &x64_path, "1.0", "");
    assert_ne!(code, 0, "find_package(jitarena 1.0) took {v}:\n{text}");
    assert!(
        text.contains(&format!("version: {v}")) && text.contains("1.0"),
        "{text}"
    );
    let (code, text) = find_only(&dir.join("newer"), &x64_path, &format!("{v}.1"), "");
    assert_ne!(
        code, 0,
        "a newer version than the package's was taken:\n{text}"
    );
    let (code, text) = find_only(&dir.join("exact"), &x64_path, &format!("{v} EXACT"), "");
    assert_eq!(code, 0, "{text}");
    let (code, text) = find_only(&dir.join("m32"), &x64_path, "0.1", "-m32");
    assert_ne!(code, 0, "a -m32 build took the linux-x64 package:\n{text}");
    assert!(text.contains("64bit"), "{text}");

    // A header that is not the one the archive was built from is refused.
    let header = x64.join("include/jitarena.h");
    let original = std::fs::read_to_string(&header).expect("the header");
    let line = original
        .lines()
        .find(|l| l.starts_with("#define JITARENA_ABI_VERSION "))
        .expect("JITARENA_ABI_VERSION");
    std::fs::write(
        &header,
        original.replacen(line, "#define JITARENA_ABI_VERSION 999u", 1),
    )
    .expect("a changed header");
    let (code, text) = find_only(&dir.join("abi"), &x64_path, "0.1", "");
    std::fs::write(&header, &original).expect("the header back");
    assert_ne!(code, 0, "a header of another ABI was taken:\n{text}");
    assert!(
        text.contains("states ABI") && text.contains("999u"),
        "{text}"
    );

    // pkg-config: the same program, compiled and linked from the .pc file alone.
    if Command::new("pkg-config")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        let flags = ok(bare("pkg-config", &dir)
            .env("PKG_CONFIG_PATH", x64.join("lib/pkgconfig"))
            .args(["--cflags", "--libs", "jitarena"]));
        assert!(
            flags.contains("-ljitarena") && flags.contains("-lpthread"),
            "{flags}"
        );
        let program = dir.join("pc_user");
        ok(bare("c++", &dir)
            .arg("-std=c++11")
            .arg(native::workspace_root().join("tests/package/main.cpp"))
            .args(flags.split_whitespace())
            .arg("-o")
            .arg(&program));
        let out = ok(bare(&program, &dir).arg(dir.join("pc.jas")));
        assert_eq!(counted(&out).ast_count, 100, "{out}");
    }

    // The example JIT takes the package (JITARENA_PACKAGE_DIR) instead of running cargo: its
    // baseline JIT builds, with the arena's symbols private.
    let example = dir.join("example");
    let configured = ok(bare("cmake", &dir)
        .arg("-S")
        .arg(native::workspace_root().join("examples/cmake-jit"))
        .arg("-B")
        .arg(&example)
        .arg(format!("-DJITARENA_PACKAGE_DIR={x64_path}"))
        .arg("-DMINIJIT_REVISION=package-test")
        .arg("-DMINIJIT_WERROR=ON"));
    assert!(
        configured.contains(&format!("-- jitarena {v} (linux-x64) from {x64_path}")),
        "{configured}"
    );
    ok(bare("cmake", &dir)
        .arg("--build")
        .arg(&example)
        .args(["--target", "minijit_base"]));
    let exported = ok(Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(example.join("libminijit_base.so")));
    assert!(
        exported.contains("minijit_") && !exported.contains("jitarena_"),
        "{exported}"
    );

    // linux-x86: the i686 archive and command, found by an -m32 build among both packages (the
    // x64 one, first on the path, is passed over as 64-bit).
    if !has_i686() {
        return;
    }
    let x86 = package("linux-x86", &dist, &dir.join("prefix"));
    let both = format!("{x64_path};{}", x86.display());
    let found = build_and_run(
        &dir.join("x86"),
        &both,
        "-m32",
        &x86.join("bin/jitarena"),
        4,
    );
    assert!(found.contains("for linux-x86: "), "{found}");
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

/// Runs scripts/check_workflow.py on a pipeline file: (exit code, stdout, stderr).
fn check_pipeline(file: &Path) -> (i32, String, String) {
    let out = Command::new("python3")
        .arg(native::workspace_root().join("scripts/check_workflow.py"))
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

/// The release pipelines (GitHub Actions and Azure Pipelines) pass the workflow checker, and
/// each broken one way at a time fails it, saying why.
#[test]
fn the_release_pipelines_build_every_rid_and_attach_checksums() {
    if !has_pyyaml() {
        return;
    }
    let root = native::workspace_root();
    let (github, azure) = (".github/workflows/release.yml", ".azure/release.yml");
    for (kind, file) in [("github", github), ("azure", azure)] {
        let (code, out, err) = check_pipeline(&root.join(file));
        assert_eq!(code, 0, "{file}: {out}{err}");
        assert!(
            out.contains(&format!("({kind}, release)"))
                && out.contains("9 RIDs")
                && out.contains(": ok"),
            "{out}"
        );
    }
    let mutants: &[(&str, &str, &str, &str)] = &[
        (
            github,
            "          - { name: osx-x64, runner: macos-15-intel, apt: \"\", cmake_args: \"\", run: true }\n",
            "",
            "does not build osx-x64",
        ),
        (
            azure,
            "        win_x86: { rid: win-x86,",
            "        win_x86: { rid: win-x64,",
            "builds win-x64 twice",
        ),
        (
            github,
            "name: linux-arm64, runner: ubuntu-24.04-arm",
            "name: linux-arm64, runner: ubuntu-24.04",
            "linux-arm64 is built on ubuntu-24.04, an x64 image",
        ),
        (
            github,
            "name: osx-x64, runner: macos-15-intel",
            "name: osx-x64, runner: macos-15",
            "osx-x64 is built on macos-15, an arm64 image",
        ),
        (
            azure,
            "rid: win-x64, vmImage: windows-2022",
            "rid: win-x64, vmImage: ubuntu-24.04",
            "win-x64 is built on ubuntu-24.04, not on a windows image",
        ),
        (
            github,
            "bash scripts/package.sh --out dist ${{ matrix.rid.name }}",
            "bash scripts/package.sh --out dist linux-x64",
            "which does not package linux-x86 alone",
        ),
        (
            azure,
            "scripts/package.sh --out",
            "scripts/packages.sh --out",
            "does not run scripts/package.sh",
        ),
        (
            github,
            "name: package-${{ matrix.rid.name }}",
            "name: package",
            "does not name a different artifact for every RID",
        ),
        (
            github,
            "sha256sum -c",
            "sha256sum",
            "does not check the archives against their SHA-256 checksums",
        ),
        (
            github,
            " dist/*.sha256 dist/SHA256SUMS",
            "",
            "does not attach the SHA-256 checksums",
        ),
        (
            azure,
            "            $(Build.ArtifactStagingDirectory)/dist/*.zip\n",
            "",
            "does not attach the .zip archives",
        ),
        (
            github,
            "        if: startsWith(github.ref, 'refs/tags/v')\n",
            "",
            "runs without a tag",
        ),
        (
            azure,
            "condition: and(succeeded(), startsWith(variables['Build.SourceBranch'], 'refs/tags/v'))",
            "condition: succeeded()",
            "runs without a tag",
        ),
        (
            github,
            "    needs: package\n",
            "",
            "job release does not wait for job package",
        ),
        (
            github,
            "actions/download-artifact@v4",
            "actions/download-artifact@main",
            "not pinned to a major version",
        ),
        (
            azure,
            "          assets: |\n",
            "          asets: |\n",
            "does not attach the .tar.gz archives",
        ),
        (
            azure,
            "GitHubRelease@1",
            "GitHubRelease",
            "uses GitHubRelease, not pinned to a major version",
        ),
        (
            github,
            "scripts/package_check.sh dist/",
            "scripts/package-check.sh dist/",
            "refers to scripts/package-check.sh",
        ),
    ];
    let dir = fresh("release-mutants");
    for (n, (file, from, to, expected)) in mutants.iter().enumerate() {
        let text = std::fs::read_to_string(root.join(file)).expect("the pipeline");
        assert!(
            text.contains(from),
            "{file} no longer contains {from:?}: update the mutant"
        );
        let mutant = dir.join(format!("{n}.yml"));
        std::fs::write(&mutant, text.replacen(from, to, 1)).expect("the mutant");
        let (code, out, err) = check_pipeline(&mutant);
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
