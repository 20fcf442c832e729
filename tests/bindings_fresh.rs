//! The Rust view of the arena's shared layout (`src/sys.rs`) is generated from
//! `include/jitarena.h` with bindgen and committed, so that a machine without libclang still
//! builds. This test regenerates it and fails if the committed file differs.
//!
//! The header is generated for three targets, one per C layout of its structs: a 64-bit one
//! (`x86_64-unknown-linux-gnu`: every 64-bit target lays them out alike), i686 Linux (32-bit,
//! `uint64_t` aligned to 4 inside structs) and arm32 Linux (32-bit, `uint64_t` aligned to 8, as
//! on 32-bit Windows). The items must come out the same (the header's types map to `usize` and
//! fixed-width integers); bindgen's layout assertions for each target are kept under the `cfg`
//! that selects it, so that each build checks the Rust layout against what clang computes.
//!
//! Where libclang is missing the test says so and passes, unless `JITARENA_REQUIRE_BINDGEN=1`
//! (set by `.ci/run`, which installs libclang). `JITARENA_BLESS=1` rewrites `src/sys.rs`.

use std::path::Path;

const PRELUDE: &str = "//! The arena's shared layout and constants, generated from `include/jitarena.h` by bindgen,\n//! with the layout assertions of each C layout: 64-bit, i686 Linux, other 32-bit targets.\n//! Do not edit: `JITARENA_BLESS=1 cargo test --test bindings_fresh` regenerates it.\n\n";

/// The first line of each of bindgen's layout assertion blocks; the block ends at `};`.
const LAYOUT_START: &str = "#[allow(clippy::unnecessary_operation, clippy::identity_op)]";

/// The targets generated, each with the `cfg` predicate its layout assertions are kept under.
const TARGETS: [(&str, &str); 3] = [
    ("x86_64-unknown-linux-gnu", "target_pointer_width = \"64\""),
    (
        "i686-unknown-linux-gnu",
        "all(target_pointer_width = \"32\", target_arch = \"x86\", not(windows))",
    ),
    (
        "armv7-unknown-linux-gnueabihf",
        "all(target_pointer_width = \"32\", any(not(target_arch = \"x86\"), windows))",
    ),
];

fn generate(target: &str) -> Result<String, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let header = root.join("include/jitarena.h");
    let bindings = bindgen::Builder::default()
        .header(header.to_string_lossy())
        .clang_arg(format!("--target={target}"))
        // Clang's own <stdint.h> and <stddef.h>: no C library headers for the target needed.
        .clang_arg("-ffreestanding")
        .allowlist_type("jitarena(_.*)?")
        .allowlist_var("JITARENA_.*")
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        .use_core()
        .layout_tests(true)
        .derive_partialeq(true)
        .derive_eq(true)
        .generate()
        .map_err(|e| format!("bindgen failed on {} for {target}: {e}", header.display()))?;
    Ok(bindings.to_string())
}

/// A piece of bindgen's output: items, or one layout assertion block.
#[derive(Debug, PartialEq)]
enum Piece {
    Items(String),
    Layout(String),
}

/// Splits bindgen's output into items and layout assertion blocks, in order.
fn split(text: &str) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let mut current = String::new();
    let mut in_layout = false;
    for line in text.lines() {
        if !in_layout && line == LAYOUT_START {
            if !current.is_empty() {
                pieces.push(Piece::Items(std::mem::take(&mut current)));
            }
            in_layout = true;
        }
        current.push_str(line);
        current.push('\n');
        if in_layout && line == "};" {
            pieces.push(Piece::Layout(std::mem::take(&mut current)));
            in_layout = false;
        }
    }
    if !current.is_empty() {
        pieces.push(Piece::Items(current));
    }
    pieces
}

/// The committed form: the items once, each layout block once per target, under its `cfg`.
fn merge(generated: &[(String, &str)]) -> Result<String, String> {
    let split: Vec<(Vec<Piece>, &str)> = generated
        .iter()
        .map(|(text, cfg)| (split(text), *cfg))
        .collect();
    let (first, _) = &split[0];
    let mut out = String::from(PRELUDE);
    for (i, piece) in first.iter().enumerate() {
        match piece {
            Piece::Items(items) => {
                for (other, cfg) in &split[1..] {
                    if other.get(i) != Some(piece) {
                        return Err(format!(
                            "the header's items differ between 64-bit and {cfg} targets \
                             (a type whose Rust form depends on the target?): piece {i}:\n{items}"
                        ));
                    }
                }
                out.push_str(items);
            }
            Piece::Layout(_) => {
                for (pieces, cfg) in &split {
                    let Some(Piece::Layout(block)) = pieces.get(i) else {
                        return Err(format!("no layout block {i} for {cfg}"));
                    };
                    out.push_str(&format!("#[cfg({cfg})]\n{block}"));
                }
            }
        }
    }
    if split.iter().any(|(pieces, _)| pieces.len() != first.len()) {
        return Err("bindgen's output has a different shape per target".into());
    }
    Ok(out)
}

fn fresh() -> Result<String, String> {
    let generated = TARGETS
        .iter()
        .map(|(target, cfg)| generate(target).map(|text| (text, *cfg)))
        .collect::<Result<Vec<_>, _>>()?;
    merge(&generated)
}

#[test]
fn committed_bindings_match_the_header_for_64_and_32_bit_targets() {
    let require = std::env::var("JITARENA_REQUIRE_BINDGEN").as_deref() == Ok("1");
    let loaded =
        std::panic::catch_unwind(|| bindgen::clang_version().parsed.is_some()).unwrap_or(false);
    if !loaded && !require {
        eprintln!("libclang not found: skipping the bindings check (install libclang-dev)");
        return;
    }
    let fresh = match std::panic::catch_unwind(fresh) {
        Ok(Ok(text)) => text,
        Ok(Err(e)) => panic!("{e}"),
        Err(_) if !require => {
            eprintln!("libclang could not be loaded: skipping the bindings check");
            return;
        }
        Err(_) => panic!("libclang could not be loaded, and JITARENA_REQUIRE_BINDGEN=1"),
    };
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sys.rs");
    if std::env::var("JITARENA_BLESS").as_deref() == Ok("1") {
        std::fs::write(&path, &fresh).expect("write src/sys.rs");
        return;
    }
    let committed = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    assert!(
        committed == fresh,
        "{} is stale: the header changed. Run `JITARENA_BLESS=1 cargo test --test bindings_fresh` and commit it.",
        path.display()
    );
}

#[test]
fn each_layout_is_kept_under_its_own_cfg() {
    // One assertion block per struct and target layout: a 32-bit build does not see the 64-bit
    // sizes (which is what made `--target i686-unknown-linux-gnu` fail), and an arm32 build
    // does not see i686's 4-byte alignment of `uint64_t`.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sys.rs");
    let committed = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let blocks = split(&committed)
        .iter()
        .filter(|p| matches!(p, Piece::Layout(_)))
        .count();
    let guarded: Vec<usize> = TARGETS
        .iter()
        .map(|(_, cfg)| {
            committed
                .matches(&format!("#[cfg({cfg})]\n{LAYOUT_START}"))
                .count()
        })
        .collect();
    assert!(blocks >= 12, "{blocks} layout blocks in {}", path.display());
    assert_eq!(
        guarded.iter().sum::<usize>(),
        blocks,
        "an unguarded layout block"
    );
    assert!(
        guarded.iter().all(|&n| n == blocks / TARGETS.len()),
        "{guarded:?}"
    );
    for size in [104, 68, 72] {
        let assertion = format!("[::core::mem::size_of::<jitarena_config>() - {size}usize]");
        assert!(committed.contains(&assertion), "no {assertion}");
    }
}
