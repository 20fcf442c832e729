//! `jitarena sites`: per-site bytes of two JITs' traces, symbolized and diffed. Hand-made
//! traces check the matching (moved lines, sites that appear and vanish), the reports (text,
//! markdown with names inert, JSON) and that the sites add up to each side's kind and phase
//! totals exactly. The example JIT (`examples/cmake-jit`, built with debug information), whose
//! diff build makes one allocation site heavier, is traced with both builds in one process,
//! and `sites` must name that site's function and file (its line within a tolerance) as the one
//! that grew most. A trace of 1M allocations is symbolized and diffed in seconds.

mod common;

#[path = "../../tests/native/mod.rs"]
mod native;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{s, tmp};
use jitarena::trace::{alloc_event, phase_event, Site, TraceWriter};
use jitarena::{Schema, Shared};
use serde_json::Value;

fn schema() -> Shared<Schema> {
    Shared::new(
        Schema::new(
            vec!["ASTNode".into(), "LSRA".into(), "Generic".into()],
            vec!["Import".into(), "Morph - Inlining".into()],
        )
        .unwrap(),
    )
}

/// Kind and phase totals of a trace as `dump --format text` lists its events: what the sites
/// must add up to.
/// Bytes and allocations by name.
type ByName = BTreeMap<String, (u64, u64)>;

/// A method's allocations: (kind, size, site offset).
type Allocs = Vec<(u32, u64, u64)>;

fn totals(trace: &Path) -> (ByName, ByName) {
    let text = common::ok(&["dump", s(trace), "--format", "text"]);
    let (mut kinds, mut phases) = (BTreeMap::new(), BTreeMap::new());
    let mut phase = "(no phase)".to_string();
    for line in text.lines() {
        if let Some(p) = line.strip_prefix("phase ") {
            phase = if p == "-" {
                "(no phase)".into()
            } else {
                p.to_string()
            };
        } else if let Some(a) = line.strip_prefix("alloc ") {
            let (kind, size) = a.rsplit_once(' ').unwrap();
            let size: u64 = size.parse().unwrap();
            let k: &mut (u64, u64) = kinds.entry(kind.to_string()).or_default();
            *k = (k.0 + size, k.1 + 1);
            let p: &mut (u64, u64) = phases.entry(phase.clone()).or_default();
            *p = (p.0 + size, p.1 + 1);
        } else if line.starts_with("method ") {
            phase = "(no phase)".into();
        }
    }
    (kinds, phases)
}

/// Checks that the JSON report's sites add up, kind by kind and phase by phase, to the side's
/// totals, and those to the trace's own (`dump`).
fn check_sums(json: &Value, side: &str, trace: &Path) {
    let (kinds, phases) = totals(trace);
    for (what, want) in [("kinds", kinds), ("phases", phases)] {
        let mut sum: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        for site in json["sites"].as_array().unwrap() {
            for (name, c) in site[side][what].as_object().unwrap() {
                let e = sum.entry(name.clone()).or_default();
                e.0 += c["bytes"].as_u64().unwrap();
                e.1 += c["allocations"].as_u64().unwrap();
            }
        }
        assert_eq!(sum, want, "{side}: the sites' {what} are the trace's");
        let totals: BTreeMap<String, (u64, u64)> = json[side]["totals"][what]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, c)| {
                (
                    k.clone(),
                    (
                        c["bytes"].as_u64().unwrap(),
                        c["allocations"].as_u64().unwrap(),
                    ),
                )
            })
            .collect();
        assert_eq!(
            totals, want,
            "{side}: the side's {what} totals are the trace's"
        );
    }
}

/// Writes a trace of `methods`, each allocating `(kind, size, site)` in phase order, the sites
/// in a module that does not exist here (so they show as module+offset).
fn write_trace(path: &Path, methods: &[(&str, Allocs)]) {
    let mut w = TraceWriter::new(std::fs::File::create(path).unwrap()).unwrap();
    let module = w.module("/nowhere/libjit.so").unwrap();
    for (name, allocs) in methods {
        let mut table: Vec<Site> = Vec::new();
        let mut events = vec![phase_event(0)];
        let mut of = Vec::new();
        for (i, &(kind, size, offset)) in allocs.iter().enumerate() {
            if i == allocs.len() / 2 {
                events.push(phase_event(1));
            }
            let site = Site { module, offset };
            let index = table.iter().position(|s| *s == site).unwrap_or_else(|| {
                table.push(site);
                table.len() - 1
            });
            events.push(alloc_event(kind, size));
            of.push(index as u32);
        }
        w.write_sited(&schema(), Some(name), -1, None, &events, &table, &of)
            .unwrap();
    }
    w.finish().unwrap();
}

#[test]
fn sites_are_diffed_reported_and_add_up_to_the_kinds_and_phases() {
    let (base, diff) = (tmp("sites_base.jat"), tmp("sites_diff.jat"));
    let hostile = "A:`[x](http://e.com)` <b>|@team #1|";
    write_trace(
        &base,
        &[
            (
                "A:m()",
                vec![(0, 100, 0x10), (1, 50, 0x20), (0, 8, 0x10), (2, 7, 0x30)],
            ),
            (hostile, vec![(1, 40, 0x20), (0, 16, 0x10)]),
        ],
    );
    write_trace(
        &diff,
        &[
            (
                "A:m()",
                vec![(0, 100, 0x10), (1, 500, 0x20), (0, 8, 0x10), (2, 9, 0x40)],
            ),
            (hostile, vec![(1, 40, 0x20), (0, 16, 0x10)]),
        ],
    );
    let json: Value =
        serde_json::from_str(&common::ok(&["sites", s(&base), s(&diff), "--json"])).unwrap();
    check_sums(&json, "base", &base);
    check_sums(&json, "diff", &diff);
    let sites = json["sites"].as_array().unwrap();
    let name = |v: &Value| {
        let p = if v["diff_place"].is_null() {
            &v["base_place"]
        } else {
            &v["diff_place"]
        };
        p["function"].as_str().unwrap().to_string()
    };
    // The largest growth first: the LSRA site, then the one that appeared; the one that
    // vanished last.
    assert_eq!(name(&sites[0]), "libjit.so+0x20");
    assert_eq!(sites[0]["status"], "grew");
    assert_eq!(sites[0]["delta_bytes"], 450);
    assert_eq!(sites[0]["methods_grown"][0]["method"], "A:m()");
    assert_eq!(sites[1]["status"], "new");
    assert_eq!(name(&sites[1]), "libjit.so+0x40");
    let last = sites.last().unwrap();
    assert_eq!(
        (last["status"].as_str(), name(last).as_str()),
        (Some("gone"), "libjit.so+0x30")
    );
    assert_eq!(sites.len(), 4);

    let text = common::ok(&["sites", s(&base), s(&diff)]);
    assert!(
        text.contains("+450 bytes (+500.0%) [grew] libjit.so+0x20"),
        "{text}"
    );
    assert!(text.contains("[gone] libjit.so+0x30"), "{text}");
    assert!(
        text.contains("1 new in the diff, 1 gone from the base"),
        "{text}"
    );

    // A hostile method name stays inert in markdown: no link, HTML, table cell or mention.
    write_trace(
        &diff,
        &[
            (
                "A:m()",
                vec![(0, 100, 0x10), (1, 50, 0x20), (0, 8, 0x10), (2, 7, 0x30)],
            ),
            (hostile, vec![(1, 400, 0x20), (0, 16, 0x10)]),
        ],
    );
    let md = common::ok(&["sites", s(&base), s(&diff), "--markdown"]);
    let row = md
        .lines()
        .find(|l| l.contains("libjit.so+0x20"))
        .expect(&md);
    assert!(row.contains(r"A:\`\[x\](http:"), "{row}");
    assert_eq!(
        row.matches('<').count(),
        row.matches(r"\<").count(),
        "{row}"
    );
    assert!(row.contains(r"\|@"), "{row}");
    let cells = row
        .char_indices()
        .filter(|&(i, c)| c == '|' && !row[..i].ends_with('\\'))
        .count();
    assert_eq!(cells, 9, "eight cells: {row}");
}

#[test]
fn lines_that_moved_are_matched_by_function_and_file() {
    // The matching itself, on places as symbolization makes them: two sites of one function
    // and file, both moved down by 30 lines, are paired in order; a third site of the diff
    // (more sites than the base) is paired by nearest line within the tolerance.
    use jitarena_tools::sites::{Count, Figures, Place};
    let place = |line| Place {
        function: "Compiler::fgMorph".into(),
        file: "/src/jit/morph.cpp".into(),
        line,
        inlined_into: vec![],
        skipped: vec![],
    };
    let fig = |bytes| Figures {
        total: Count {
            bytes,
            allocations: 1,
        },
        ..Figures::default()
    };
    let d = jitarena_tools::sites::pair_places(
        vec![(place(100), fig(10)), (place(200), fig(20))],
        vec![(place(130), fig(11)), (place(230), fig(25))],
        20,
    );
    let lines: Vec<_> = d
        .iter()
        .map(|s| {
            (
                s.base_place.as_ref().unwrap().line,
                s.diff_place.as_ref().unwrap().line,
            )
        })
        .collect();
    assert_eq!(lines, vec![(200, 230), (100, 130)]);
    let d = jitarena_tools::sites::pair_places(
        vec![(place(100), fig(10)), (place(200), fig(20))],
        vec![
            (place(105), fig(11)),
            (place(150), fig(5)),
            (place(210), fig(25)),
        ],
        20,
    );
    let mut got: Vec<_> = d
        .iter()
        .map(|s| {
            (
                s.base_place.as_ref().map(|p| p.line),
                s.diff_place.as_ref().map(|p| p.line),
            )
        })
        .collect();
    got.sort();
    assert_eq!(
        got,
        vec![
            (None, Some(150)),
            (Some(100), Some(105)),
            (Some(200), Some(210))
        ]
    );
}

#[test]
fn a_million_allocations_are_diffed_in_seconds() {
    let (base, diff) = (tmp("sites_1m_base.jat"), tmp("sites_1m_diff.jat"));
    for (path, extra) in [(&base, 0u64), (&diff, 8)] {
        let methods: Vec<(String, Allocs)> = (0..100)
            .map(|m| {
                let allocs = (0..10_000u64)
                    .map(|i| {
                        (
                            (i % 3) as u32,
                            16 + (i % 7) * 8 + extra * u64::from(i % 50 == 0),
                            0x1000 + (i * 7919 % 300) * 16,
                        )
                    })
                    .collect();
                (format!("M:m{m}()"), allocs)
            })
            .collect();
        let refs: Vec<(&str, Allocs)> = methods
            .iter()
            .map(|(n, a)| (n.as_str(), a.clone()))
            .collect();
        write_trace(path, &refs);
    }
    let size = std::fs::metadata(&base).unwrap().len();
    let start = std::time::Instant::now();
    let json: Value =
        serde_json::from_str(&common::ok(&["sites", s(&base), s(&diff), "--json"])).unwrap();
    let took = start.elapsed();
    eprintln!(
        "sites over 2 x 1M allocations ({size} bytes a trace, {:.2} bytes an event): {took:?}",
        size as f64 / 1_010_000.0
    );
    assert_eq!(json["base"]["totals"]["allocations"], 1_000_000);
    assert_eq!(json["sites"].as_array().unwrap().len(), 300);
    assert!(took.as_secs() < 60, "{took:?}");
}

/// The example JIT built with debug information (RelWithDebInfo) in a directory of its own.
fn example_with_debug_info() -> Option<PathBuf> {
    let found = Command::new("cmake")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("JITARENA_REQUIRE_CMAKE").as_deref() != Ok("1"),
            "cmake is required (JITARENA_REQUIRE_CMAKE=1) but not found"
        );
        eprintln!("cmake not found: skipping");
        return None;
    }
    let build = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sites-cmake-jit");
    let _ = std::fs::remove_dir_all(&build);
    let run = |cmd: &mut Command| {
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{cmd:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(Command::new("cmake")
        .arg("-S")
        .arg(native::workspace_root().join("examples/cmake-jit"))
        .arg("-B")
        .arg(&build)
        .arg("-DCMAKE_BUILD_TYPE=RelWithDebInfo")
        .arg(format!("-DJITARENA_LIB={}", native::static_lib().display())));
    run(Command::new("cmake").arg("--build").arg(&build));
    Some(build)
}

#[test]
fn the_example_jits_heavier_site_is_named_with_its_function_and_file() {
    let Some(build) = example_with_debug_info() else {
        return;
    };
    let dir = tmp("sites_example");
    let _ = std::fs::create_dir_all(&dir);
    let pattern = dir.join("trace-%m.jat");
    let (base_so, diff_so) = (
        build.join("libminijit_base.so"),
        build.join("libminijit_diff.so"),
    );
    let programs = native::workspace_root().join("examples/cmake-jit/programs.txt");
    // Both JITs in one process, as SuperPMI loads them; each copy of the library names its
    // own trace (%m), and each JIT its own log (so that methods carry their contexts).
    let out = Command::new(build.join("replay_host"))
        .env("JITARENA_TRACE", &pattern)
        .arg("-jitoption")
        .arg(format!("JitArenaLog={}", dir.join("base.jas").display()))
        .arg("-jit2option")
        .arg(format!("JitArenaLog={}", dir.join("diff.jas").display()))
        .arg(&base_so)
        .arg(&diff_so)
        .arg(&programs)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (base, diff) = (
        dir.join("trace-libminijit_base.jat"),
        dir.join("trace-libminijit_diff.jat"),
    );
    let args = |format: &str| {
        let mut a = vec![
            "sites".to_string(),
            s(&base).into(),
            s(&diff).into(),
            "--base-module".into(),
            s(&base_so).into(),
            "--diff-module".into(),
            s(&diff_so).into(),
            // The example's allocator code: ArenaAllocatorT and CompAllocatorT, its
            // placement new.
            "--skip-file".into(),
            "arenaallocator.h".into(),
            "--skip-function".into(),
            "operator new".into(),
        ];
        if !format.is_empty() {
            a.push(format.into());
        }
        a
    };
    let run = |format: &str| {
        let a = args(format);
        common::ok(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let json: Value = serde_json::from_str(&run("--json")).unwrap();
    check_sums(&json, "base", &base);
    check_sums(&json, "diff", &diff);
    for side in ["base", "diff"] {
        assert_eq!(json[side]["modules"][0]["debug_info"], true, "{side}");
        assert_eq!(json[side]["unsited_allocations"], 0, "{side}");
    }
    // The diff build's one heavier structure: `new (comp, CMK_LSRA_Interval) Interval()`.
    let source =
        std::fs::read_to_string(native::workspace_root().join("examples/cmake-jit/minijit.cpp"))
            .unwrap();
    let line = 1 + source
        .lines()
        .position(|l| l.contains("new (comp, CMK_LSRA_Interval) Interval()"))
        .expect("the Interval allocation") as u64;
    let top = &json["sites"][0];
    let place = &top["diff_place"];
    let chain: Vec<&str> = place["inlined_into"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert_eq!(top["status"], "grew", "{top}");
    assert!(
        chain.iter().any(|f| f.contains("allocate_registers"))
            || place["function"]
                .as_str()
                .unwrap()
                .contains("allocate_registers"),
        "{top}"
    );
    assert!(
        place["file"].as_str().unwrap().ends_with("minijit.cpp"),
        "{top}"
    );
    assert!(
        place["line"].as_u64().unwrap().abs_diff(line) <= 2,
        "line {line}: {top}"
    );
    assert!(top["diff"]["kinds"]["LSRA_Interval"].is_object(), "{top}");
    // Every other site is the same on both sides.
    for other in &json["sites"].as_array().unwrap()[1..] {
        assert_eq!(other["delta_bytes"], 0, "{other}");
    }
    // Its methods are named (each JIT names its contexts when it writes a log).
    assert!(
        top["methods_grown"][0]["method"].as_str().is_some(),
        "{top}"
    );
    let text = run("");
    assert!(text.contains("minijit.cpp:"), "{text}");
    let md = run("--markdown");
    assert!(md.contains("Sites that grew most"), "{md}");
}

#[test]
fn a_directory_of_traces_is_a_side() {
    // One trace per process (JITARENA_TRACE=sites/%m/%p.jat): a side's traces add up.
    let dir = tmp("sites_dir");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (one, two) = (dir.join("1.jat"), dir.join("2.jat"));
    write_trace(&one, &[("A:m()", vec![(0, 100, 0x10), (1, 50, 0x20)])]);
    write_trace(&two, &[("A:n()", vec![(0, 30, 0x10), (1, 5, 0x20)])]);
    let whole = tmp("sites_dir_whole.jat");
    write_trace(
        &whole,
        &[
            ("A:m()", vec![(0, 100, 0x10), (1, 50, 0x20)]),
            ("A:n()", vec![(0, 30, 0x10), (1, 5, 0x20)]),
        ],
    );
    let json: Value =
        serde_json::from_str(&common::ok(&["sites", s(&dir), s(&whole), "--json"])).unwrap();
    assert_eq!(json["base"]["traces"].as_array().unwrap().len(), 2);
    assert_eq!(json["base"]["totals"], json["diff"]["totals"]);
    for site in json["sites"].as_array().unwrap() {
        assert_eq!(site["status"], "same", "{site}");
    }
}

#[test]
fn traces_without_sites_are_counted_at_one_place_with_a_warning() {
    // A text trace (as the Cranelift traces are): every allocation at "(no site recorded)",
    // the totals still those of the trace.
    let text = tmp("sites_text.txt");
    std::fs::write(
        &text,
        "method 1 - A:m()\nphase Import\nalloc ASTNode 24\nalloc LSRA 8\nmethod 2 - A:n()\nalloc LSRA 16\n",
    )
    .unwrap();
    let (code, out, err) = common::cli(&["sites", s(&text), s(&text), "--json"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("its allocations carry no site"), "{err}");
    let json: Value = serde_json::from_str(&out).unwrap();
    check_sums(&json, "base", &text);
    assert_eq!(json["base"]["unsited_allocations"], 3);
    assert_eq!(
        json["sites"][0]["diff_place"]["function"],
        "(no site recorded)"
    );
}
