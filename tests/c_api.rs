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
