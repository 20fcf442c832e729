//! The Rust view of the arena's shared layout (`src/sys.rs`) is generated from
//! `include/jitarena.h` with bindgen and committed, so that a machine without libclang still
//! builds. This test regenerates it and fails if the committed file differs.
//!
//! Where libclang is missing the test says so and passes, unless `JITARENA_REQUIRE_BINDGEN=1`
//! (set by `.ci/run`, which installs libclang). `JITARENA_BLESS=1` rewrites `src/sys.rs`.

use std::path::Path;

const PRELUDE: &str = "//! The arena's shared layout and constants, generated from `include/jitarena.h` by bindgen.\n//! Do not edit: `JITARENA_BLESS=1 cargo test --test bindings_fresh` regenerates it.\n\n";

fn generate() -> Result<String, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let header = root.join("include/jitarena.h");
    let bindings = bindgen::Builder::default()
        .header(header.to_string_lossy())
        .allowlist_type("jitarena(_.*)?")
        .allowlist_var("JITARENA_.*")
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        .use_core()
        .layout_tests(true)
        .derive_partialeq(true)
        .derive_eq(true)
        .generate()
        .map_err(|e| format!("bindgen failed on {}: {e}", header.display()))?;
    Ok(format!("{PRELUDE}{bindings}"))
}

#[test]
fn committed_bindings_match_the_header() {
    let require = std::env::var("JITARENA_REQUIRE_BINDGEN").as_deref() == Ok("1");
    let loaded =
        std::panic::catch_unwind(|| bindgen::clang_version().parsed.is_some()).unwrap_or(false);
    if !loaded && !require {
        eprintln!("libclang not found: skipping the bindings check (install libclang-dev)");
        return;
    }
    let fresh = match std::panic::catch_unwind(generate) {
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
