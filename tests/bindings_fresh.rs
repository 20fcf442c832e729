//! The Rust view of the arena's shared layout (`src/sys.rs`) is generated from
//! `include/jitarena.h` with bindgen and committed, so that a machine without libclang still
//! builds. This test regenerates it and fails if the committed file differs.
//!
//! The header is generated twice, for a 64-bit target (`x86_64-unknown-linux-gnu`) and a 32-bit
//! one (`i686-unknown-linux-gnu`): the items must come out the same (the header's types map to
//! `usize` and fixed-width integers), and bindgen's layout assertions for each target are kept
//! under `#[cfg(target_pointer_width = ...)]`, so that each build checks the Rust layout
//! against what clang computes for its own pointer width.
//!
//! Where libclang is missing the test says so and passes, unless `JITARENA_REQUIRE_BINDGEN=1`
//! (set by `.ci/run`, which installs libclang). `JITARENA_BLESS=1` rewrites `src/sys.rs`.

use std::path::Path;

const PRELUDE: &str = "//! The arena's shared layout and constants, generated from `include/jitarena.h` by bindgen,\n//! with the layout assertions of a 64-bit and a 32-bit target.\n//! Do not edit: `JITARENA_BLESS=1 cargo test --test bindings_fresh` regenerates it.\n\n";

/// The first line of each of bindgen's layout assertion blocks; the block ends at `};`.
const LAYOUT_START: &str = "#[allow(clippy::unnecessary_operation, clippy::identity_op)]";

/// The targets generated, each with the pointer width its layout assertions are kept under.
const TARGETS: [(&str, &str); 2] = [
    ("x86_64-unknown-linux-gnu", "64"),
    ("i686-unknown-linux-gnu", "32"),
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

/// The committed form: the items once, each layout block once per pointer width.
fn merge(generated: &[(String, &str)]) -> Result<String, String> {
    let split: Vec<(Vec<Piece>, &str)> = generated
        .iter()
        .map(|(text, width)| (split(text), *width))
        .collect();
    let (first, _) = &split[0];
    let mut out = String::from(PRELUDE);
    for (i, piece) in first.iter().enumerate() {
        match piece {
            Piece::Items(items) => {
                for (other, width) in &split[1..] {
                    if other.get(i) != Some(piece) {
                        return Err(format!(
                            "the header's items differ between 64-bit and {width}-bit targets \
                             (a type whose Rust form depends on the target?): piece {i}:\n{items}"
                        ));
                    }
                }
                out.push_str(items);
            }
            Piece::Layout(_) => {
                for (pieces, width) in &split {
                    let Some(Piece::Layout(block)) = pieces.get(i) else {
                        return Err(format!("no layout block {i} for the {width}-bit target"));
                    };
                    out.push_str(&format!(
                        "#[cfg(target_pointer_width = \"{width}\")]\n{block}"
                    ));
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
        .map(|(target, width)| generate(target).map(|text| (text, *width)))
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
fn the_32_bit_layout_differs_from_the_64_bit_one_and_is_kept_apart() {
    // The committed file keeps one assertion block per struct and width: a 32-bit build does
    // not see the 64-bit sizes (which is what made `--target i686-unknown-linux-gnu` fail).
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sys.rs");
    let committed = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let pieces = split(&committed);
    let blocks = pieces
        .iter()
        .filter(|p| matches!(p, Piece::Layout(_)))
        .count();
    let guarded = |width: &str| {
        committed
            .matches(&format!(
                "#[cfg(target_pointer_width = \"{width}\")]\n{LAYOUT_START}"
            ))
            .count()
    };
    assert!(blocks >= 8, "{blocks} layout blocks in {}", path.display());
    assert_eq!(
        guarded("64") + guarded("32"),
        blocks,
        "an unguarded layout block"
    );
    assert_eq!(guarded("64"), guarded("32"));
    assert!(committed.contains("[::core::mem::size_of::<jitarena_config>() - 72usize]"));
    assert!(committed.contains("[::core::mem::size_of::<jitarena_config>() - 44usize]"));
}
