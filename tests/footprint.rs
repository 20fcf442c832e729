//! The library's footprint in a JIT: the text that `libjitarena.a`, as
//! `cargo build --profile jit` makes it (the archive a JIT links), adds to a C program that calls every entry point of `include/jitarena.h` and links
//! with `-Wl,--gc-sections` (`tests/c/every_entry.c`, against the empty `tests/c/empty.c`),
//! counted as `size` counts text. The list of entry points is read from the header, so that a
//! new one cannot be left out of the measured program. `scripts/footprint.sh` prints the same
//! figure with a breakdown by crate.

mod native;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use native::{link_program, run, workspace_root};

/// The most text, in bytes, the JIT's library (profile `jit`) may add on x86_64 Linux: issue
/// 12's 150 KB. Measured 149,535 on 2026-12-04 (the trace writer's values through one
/// out-of-line encoder, a write's failure message built out of line), after 153,319 once a
/// JIT's trace wrote long methods in parts; 144,344 on 2026-12-03, once traces recorded each
/// allocation's site; 116,883 on 2026-12-02, once the C-facing code reached no panic (see
/// BENCHMARKS.md, "Footprint"). What keeps it
/// there is that the program links no panic at all ([`PANIC_HANDLER`]): one reachable panic
/// brings the standard library's panic hook and backtrace symbolizer, about 300 KB.
const BUDGET: u64 = 150_000;

/// The standard library's panic handler: in a program as soon as any code it links can panic
/// (or unwind). Its name is mangled, but always holds this.
const PANIC_HANDLER: &str = "rust_begin_unwind";

/// The names of the functions `include/jitarena.h` declares or defines (`jitarena_` followed
/// by lowercase letters, digits and `_`, then `(`), comments excluded.
fn header_functions() -> BTreeSet<String> {
    let path = workspace_root().join("include/jitarena.h");
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    calls_in(&strip_comments(&text))
}

/// C source without its `/* */` and `//` comments.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("/*") {
            rest = after.find("*/").map_or("", |end| &after[end + 2..]);
            out.push(' ');
        } else if let Some(after) = rest.strip_prefix("//") {
            rest = after.find('\n').map_or("", |end| &after[end..]);
        } else {
            let c = rest.chars().next().expect("non-empty");
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// Every `jitarena_name(` (lowercase name, optional spaces before the parenthesis) in `code`.
fn calls_in(code: &str) -> BTreeSet<String> {
    let bytes = code.as_bytes();
    let mut names = BTreeSet::new();
    let mut at = 0;
    while let Some(found) = code[at..].find("jitarena_") {
        let start = at + found;
        let mut end = start + "jitarena_".len();
        while end < bytes.len()
            && (bytes[end].is_ascii_lowercase()
                || bytes[end].is_ascii_digit()
                || bytes[end] == b'_')
        {
            end += 1;
        }
        let word_start =
            start == 0 || !(bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_');
        let next = code[end..].trim_start().as_bytes().first().copied();
        let upper_follows = bytes.get(end).is_some_and(|b| b.is_ascii_uppercase());
        if word_start && !upper_follows && next == Some(b'(') && end > start + "jitarena_".len() {
            names.insert(code[start..end].to_string());
        }
        at = end;
    }
    names
}

/// The header's functions that the library itself defines: all but the inline ones, whose
/// bodies the header holds (`static inline` definitions).
fn library_functions() -> BTreeSet<String> {
    let path = workspace_root().join("include/jitarena.h");
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let inline = inline_functions(&strip_comments(&text));
    header_functions().difference(&inline).cloned().collect()
}

/// The functions that `code` defines `static inline` (on the line that names them).
fn inline_functions(code: &str) -> BTreeSet<String> {
    code.lines()
        .filter(|line| line.trim_start().starts_with("static inline"))
        .flat_map(calls_in)
        .collect()
}

/// The text size of a program, as `size` (Berkeley format) counts it.
fn text_size(program: &Path) -> u64 {
    let out = Command::new("size")
        .arg(program)
        .output()
        .unwrap_or_else(|e| panic!("run size (binutils) on {}: {e}", program.display()));
    assert!(out.status.success(), "size {} failed", program.display());
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .nth(1)
        .and_then(|line| line.split_whitespace().next())
        .and_then(|field| field.parse().ok())
        .unwrap_or_else(|| panic!("unexpected output of size: {text}"))
}

/// The defined text symbols of a program, by `nm` (demangled with `demangle`).
fn text_symbols(program: &Path, demangle: bool) -> BTreeSet<String> {
    let out = Command::new("nm")
        .args(["--defined-only"])
        .args(demangle.then_some("-C"))
        .arg(program)
        .output()
        .unwrap_or_else(|e| panic!("run nm (binutils) on {}: {e}", program.display()));
    assert!(out.status.success(), "nm {} failed", program.display());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let mut fields = line.splitn(3, ' ');
            let (_, kind, name) = (fields.next()?, fields.next()?, fields.next()?);
            matches!(kind, "T" | "t").then(|| name.to_string())
        })
        .collect()
}

const FLAGS: &[&str] = &["-O2", "-Wl,--gc-sections"];

/// Builds the measured program against `lib`, runs it (so that every call is known to link
/// and work), and checks that it calls every function of the header and links every function
/// the library defines.
fn every_entry_program(name: &str, lib: &Path) -> PathBuf {
    let source = workspace_root().join("tests/c/every_entry.c");
    let code = strip_comments(&std::fs::read_to_string(&source).expect("read every_entry.c"));
    let called = calls_in(&code);
    let declared = header_functions();
    let missing: Vec<_> = declared.difference(&called).collect();
    assert!(
        missing.is_empty(),
        "tests/c/every_entry.c does not call {missing:?}, declared in include/jitarena.h"
    );
    let exe = link_program(name, &["tests/c/every_entry.c"], false, FLAGS, Some(lib));
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let log = dir.join(format!("{name}.jas"));
    let trace = dir.join(format!("{name}.jat"));
    let out = run(&exe, &[&log.to_string_lossy(), &trace.to_string_lossy()]);
    assert!(out.contains("every entry point called"), "{out}");
    let symbols = text_symbols(&exe, false);
    let unlinked: Vec<_> = library_functions()
        .into_iter()
        .filter(|f| !symbols.contains(f))
        .collect();
    assert!(
        unlinked.is_empty(),
        "{name} does not link {unlinked:?}: the measured program must hold every entry point"
    );
    let readers: Vec<_> = text_symbols(&exe, true)
        .into_iter()
        .filter(|symbol| READERS.iter().any(|reader| symbol.contains(reader)))
        .collect();
    assert!(
        readers.is_empty(),
        "{name} links the library's readers, which only the tools use: {readers:?}"
    );
    exe
}

/// The readers of logs and traces (for the tools): `--gc-sections` must leave them out of a JIT.
const READERS: &[&str] = &[
    "jitarena::log::reader::LogReader",
    "jitarena::format::dictionary::DictionaryReader",
    "jitarena::log::reader::read_all",
    "jitarena::trace::TraceReader",
    "jitarena::trace::read_text",
    "jitarena::trace::open",
    "jitarena::format::frames::FrameReader",
    "jitarena::format::source::Source",
    "jitarena::format::source::sniff",
    "jitarena::format::resync::",
];

#[test]
fn the_header_scan_finds_declarations_and_inline_functions() {
    let declared = header_functions();
    for name in [
        "jitarena_alloc",
        "jitarena_alloc_slow",
        "jitarena_create",
        "jitarena_method_done",
        "jitarena_replay_uncounted",
    ] {
        assert!(declared.contains(name), "{name} missing from {declared:?}");
    }
    assert!(
        !declared.contains("jitarena_config"),
        "a type is not a function"
    );
    let library = library_functions();
    assert!(!library.contains("jitarena_alloc") && library.contains("jitarena_alloc_slow"));
    assert!(library.is_subset(&declared));
    let inline = inline_functions(
        "static inline jitarena_kind_slot jitarena_kind_slot_of(uint32_t kind) {\n\
         uint64_t jitarena_phase_kind_bytes(const jitarena* a, uint32_t p, uint32_t k);\n\
         static inline void* jitarena_alloc(jitarena* a, size_t s, uint32_t k) {\n\
             return jitarena_alloc_slow(a, s, k);",
    );
    let want = ["jitarena_alloc", "jitarena_kind_slot_of"];
    assert_eq!(inline, want.iter().map(|n| n.to_string()).collect());
    let code = "int jitarena_f (void); /* jitarena_g( */ my_jitarena_i(); JITARENA_J(";
    let found = calls_in(&strip_comments(code));
    assert_eq!(found, BTreeSet::from(["jitarena_f".to_string()]));
}

#[test]
fn every_entry_program_calls_and_links_every_entry_point() {
    let exe = every_entry_program("every_entry_debug", &native::static_lib());
    // The debug library (overflow checks, unwinding) can panic: the handler is there, so the
    // JIT profile's test's check that it is not could fail.
    let symbols = text_symbols(&exe, false);
    assert!(
        symbols.iter().any(|s| s.contains(PANIC_HANDLER)),
        "the debug build has no {PANIC_HANDLER}: the name to look for has changed"
    );
}

/// The library a JIT links (profile `jit`: release without unwinding), built by cargo into
/// this test's target directory (incremental after the first time: about 40 s cold on two
/// cores).
fn jit_static_lib() -> PathBuf {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let target_dir = tmp.parent().expect("the target directory").to_path_buf();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace_root())
        .args([
            "build",
            "--profile",
            "jit",
            "--quiet",
            "-p",
            "jitarena",
            "--lib",
        ])
        .arg("--target-dir")
        .arg(&target_dir);
    let status = cmd.status().expect("run cargo build --profile jit");
    assert!(
        status.success(),
        "cargo build --profile jit -p jitarena --lib failed"
    );
    let lib = target_dir.join("jit/libjitarena.a");
    assert!(lib.exists(), "{} is missing", lib.display());
    lib
}

#[test]
fn jit_library_adds_at_most_the_budgeted_text() {
    if env!("JITARENA_TARGET") != "x86_64-unknown-linux-gnu" {
        eprintln!("the budget is for x86_64-unknown-linux-gnu: skipping");
        return;
    }
    let lib = jit_static_lib();
    let program = every_entry_program("every_entry_jit", &lib);
    let empty = link_program("empty", &["tests/c/empty.c"], false, FLAGS, None);
    let added = text_size(&program) - text_size(&empty);
    eprintln!("libjitarena.a (profile jit) adds {added} bytes of text (budget {BUDGET})");
    let handlers: Vec<_> = text_symbols(&program, false)
        .into_iter()
        .filter(|s| s.contains(PANIC_HANDLER))
        .collect();
    assert!(
        handlers.is_empty(),
        "a JIT calling every entry point links the panic handler {handlers:?}: some code it \
         reaches can panic (an index, an unwrap, an allocation that aborts, a std call with a \
         landing pad); `scripts/footprint.sh --per-entry` names the entry points that bring \
         it, and BENCHMARKS.md section 7 says how to find the call"
    );
    assert!(
        added <= BUDGET,
        "the JIT's library (profile jit) adds {added} bytes of text to a program that calls every entry \
         point, over the budget of {BUDGET}: see scripts/footprint.sh for the breakdown"
    );
}

#[test]
fn the_reader_names_are_symbols_of_the_library() {
    // Otherwise the check that a JIT links no reader could not fail.
    let lib = native::static_lib();
    let out = Command::new("nm")
        .args(["--defined-only", "-C"])
        .arg(&lib)
        .output()
        .unwrap_or_else(|e| panic!("run nm (binutils) on {}: {e}", lib.display()));
    assert!(out.status.success(), "nm {} failed", lib.display());
    let symbols = String::from_utf8_lossy(&out.stdout);
    for reader in READERS {
        assert!(
            symbols.contains(reader),
            "no symbol of {} names {reader}",
            lib.display()
        );
    }
}
