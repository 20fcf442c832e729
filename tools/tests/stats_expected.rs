//! `jitarena stats` of generated logs (fixed seeds) against the checked-in reports, byte for
//! byte: the text table and the JSON. The expected files were made by the `jitarena` of before
//! the read pipeline was made faster, so that the faster one is held to the same reports.
//! `JITARENA_BLESS=1` rewrites them.

use std::path::{Path, PathBuf};
use std::process::Command;

use jitarena_tools::cli::gen_log;
use jitarena_tools::gen::{GenOptions, Generator};

/// Two shards in a directory: 400 methods (seed 31), and 250 with LSRA +40% and ASTNode -20%
/// (seed 32).
fn shards() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("stats-expected");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, seed, methods, scale) in [
        ("a.jas", 31, 400, vec![]),
        (
            "b.jas",
            32,
            250,
            vec![("LSRA".to_string(), 40.0), ("ASTNode".to_string(), -20.0)],
        ),
    ] {
        let generator = Generator::new(GenOptions {
            seed,
            methods,
            scale,
        })
        .unwrap();
        gen_log(&generator, &dir.join(name)).unwrap();
    }
    dir
}

fn stats(args: &[&str], dir: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_jitarena"))
        .arg("stats")
        .args(args)
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Compares `actual` with the expected file byte for byte, naming the first line that differs.
fn check(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/expected")
        .join(name);
    if std::env::var("JITARENA_BLESS").as_deref() == Ok("1") {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if actual != expected {
        let line = actual
            .split_inclusive('\n')
            .zip(expected.split_inclusive('\n'))
            .position(|(a, e)| a != e)
            .map_or_else(|| "its end".to_string(), |i| format!("line {}", i + 1));
        panic!(
            "{name} differs from {} at {line}\n--- actual:\n{actual}",
            path.display()
        );
    }
}

#[test]
fn stats_text_and_json_equal_the_expected_reports() {
    let dir = shards();
    check("stats.txt", &stats(&[], &dir));
    let json = stats(&["--json"], &dir);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["methods"], 650);
    check("stats.json", &json);
}
