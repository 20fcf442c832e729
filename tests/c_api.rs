//! Compiles the C and C++ programs in `tests/c/` with the `cc` crate against `include/`, links
//! them to the static library, and runs them; the C one also under valgrind's memcheck.

mod native;

use native::{build_program, run, valgrind_available};

#[test]
fn c_program_exercises_every_entry_point() {
    let exe = build_program(
        "api_test",
        &["tests/c/api_test.c", "tests/c/no_counters.c"],
        false,
    );
    let out = run(&exe, &[]);
    assert!(
        out.contains("api_test:") && out.contains("passed, 0 failed"),
        "{out}"
    );
}

#[test]
fn c_paths_count_exactly_as_a_model_with_kinds_out_of_range() {
    // The inline jitarena_alloc and jitarena_alloc_slot, and jitarena_alloc_slow, with random
    // sizes and kinds, phase switches, resets, kinds by phase on and off and an old config
    // size: every reader against the model (tests/c/count_model.c).
    let exe = build_program("count_model", &["tests/c/count_model.c"], false);
    let out = run(&exe, &["40"]);
    assert!(
        out.contains("count_model:") && out.contains("passed, 0 failed"),
        "{out}"
    );
}

#[test]
fn the_inline_path_fits_exactly_what_the_window_holds_at_any_address() {
    // The header's inline path alone, against a head the program makes up (it defines the
    // out-of-line entry points itself): windows from no page (cursor and limit 0) up to the
    // highest end a page may have, sizes around the bytes left, the cursor's value, SIZE_MAX -
    // cursor and SIZE_MAX, unseen by the compiler and literal (the constant test), through
    // every inline entry point, and on_failure() on a miss.
    let exe = native::link_program(
        "inline_edges",
        &["tests/c/inline_edges.c"],
        false,
        &["-pedantic"],
        None,
    );
    let out = run(&exe, &[]);
    assert!(
        out.contains("inline_edges:") && out.contains("cases, 0 failed"),
        "{out}"
    );
}

#[test]
fn blocks_stay_in_their_pages_at_the_edges_of_the_address_space() {
    // Pages a host hands out (never backed: the library does not touch them) from just above 0,
    // across the middle and down from the top of the address space, pages of 4 KiB to 1 GiB,
    // sizes of 0, the window's bytes left and either side, near SIZE_MAX: every block aligned,
    // in a live page, disjoint from the others; every reader against a model; every page back.
    let exe = build_program("address_extremes", &["tests/c/address_extremes.c"], false);
    let out = run(&exe, &[]);
    assert!(
        out.contains("address_extremes:") && out.contains("checks, 0 failed"),
        "{out}"
    );
}

#[test]
fn cpp_program_uses_the_raii_owner_and_typed_allocator() {
    let exe = build_program("cpp_test", &["tests/c/cpp_test.cpp"], true);
    let out = run(&exe, &[]);
    assert!(
        out.contains("cpp_test:") && out.contains("passed, 0 failed"),
        "{out}"
    );
}

#[test]
fn c_program_is_clean_under_memcheck() {
    if !valgrind_available() {
        return;
    }
    let exe = build_program(
        "api_test_vg",
        &["tests/c/api_test.c", "tests/c/no_counters.c"],
        false,
    );
    let valgrind = std::path::PathBuf::from("valgrind");
    let exe_arg = exe.to_string_lossy().into_owned();
    let out = run(
        &valgrind,
        &[
            "--error-exitcode=1",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite",
            "--quiet",
            &exe_arg,
        ],
    );
    assert!(out.contains("passed, 0 failed"), "{out}");
}

#[test]
fn the_method_initializer_works_from_c99_and_cpp11() {
    for (name, source, cpp) in [
        ("method_init_c", "tests/c/method_init.c", false),
        ("method_init_cpp", "tests/c/method_init.cpp", true),
    ] {
        let exe = build_program(name, &[source], cpp);
        let log = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.jas"));
        let out = run(&exe, &[log.to_str().unwrap()]);
        assert!(out.contains("method_init: all passed"), "{name}: {out}");
    }
}

#[test]
fn blocks_lie_where_the_jits_own_arena_puts_them() {
    // A plain arena written from the .NET JIT's allocator rules and jitarena over the same
    // streams and the same host pages (tests/c/layout_identity.c): every block at the JIT's page
    // and offset, the same page sizes asked for in the same order, the JIT's descriptor words in
    // live pages, every page back at destroy and reset. Built for the target under test: run with
    // `--target i686-unknown-linux-gnu` (as .ci/run does) for the 32-bit layout.
    let exe = native::build_program_with(
        "layout_identity",
        &["tests/c/layout_identity.c"],
        false,
        &["-pedantic"],
    );
    let out = run(&exe, &[]);
    let checks = out
        .lines()
        .find_map(|line| {
            let rest = line.strip_prefix("layout_identity: ")?;
            rest.strip_suffix(" checks, 0 failed")?.parse::<u64>().ok()
        })
        .unwrap_or(0);
    assert!(out.contains("checks, 0 failed") && checks > 0, "{out}");
}
