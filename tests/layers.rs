//! The crates' layers import only downward. Every source file of `src/` (the library a JIT
//! links) and of `tools/src/` (the `jitarena` command) belongs to a layer; a file may refer
//! (`use crate::`, `use super::`, a `crate::` path in code) only to files of its own layer or
//! of layers below it, and the files' references form no circle, inside a layer either.
//!
//! The library, from the bottom: the JIT-safe base (errors, messages, fallible buffers, files
//! and the environment), the model (schemas, counters, a method's counts), the file format
//! (its spec, the one varint codec, frames, the log and trace writers and readers) and the
//! arena core beside it (no statics but the registry of live arenas), the process-wide
//! recorder (aggregate, log and trace files, fork count), and the API (the C entry points, the
//! Rust facade, fork handlers). The tools: names and numbers as shown, inputs and outputs;
//! the computations (stats, diff, merge and dump, replay, generator); the reports, which
//! render what the computations found and never the other way round; the command line.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The library's layers, from the bottom: each file by its path under `src/` (a folder
/// stands for every file under it).
const LIBRARY: &[(&str, &[&str])] = &[
    (
        "base",
        &[
            "sys.rs",
            "error.rs",
            "message.rs",
            "fallible.rs",
            "shared.rs",
            "file.rs",
        ],
    ),
    ("model", &["counters.rs", "sites.rs", "trace_buffer.rs"]),
    ("format", &["format/", "log/", "trace.rs"]),
    (
        "arena core",
        &[
            "arena_core/mod.rs",
            "arena_core/slots.rs",
            "arena_core/kinds.rs",
            "arena_core/by_phase.rs",
            "arena_core/phases.rs",
            "arena_core/registry.rs",
            "arena_core/raw.rs",
            "arena_core/reuse.rs",
        ],
    ),
    ("recorder", &["recorder.rs"]),
    (
        "API",
        &["fork.rs", "process.rs", "arena/mod.rs", "capi.rs", "lib.rs"],
    ),
];

/// The tools' layers, from the bottom, by path under `tools/src/`.
const TOOLS: &[(&str, &[&str])] = &[
    (
        "base",
        &[
            "text.rs",
            "progress.rs",
            "output.rs",
            "union.rs",
            "inputs.rs",
            "sort.rs",
        ],
    ),
    (
        "computation",
        &[
            "stats/",
            "diff/",
            "logtools.rs",
            "logtools/",
            "gen.rs",
            "harness.rs",
            "sites/mod.rs",
            "sites/symbolize.rs",
        ],
    ),
    ("rendering", &["report/", "sites/render.rs"]),
    ("command line", &["cli.rs", "bin/", "lib.rs"]),
];

/// Files only compiled into tests (`#[cfg(test)]` modules of their own).
fn is_test_file(path: &str) -> bool {
    path.ends_with("_tests.rs")
}

/// The `.rs` files under `root`, as paths relative to it with `/` separators.
fn sources(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(root).unwrap();
                let rel: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                out.push(rel.join("/"));
            }
        }
    }
    out.sort();
    out
}

/// A file's module path (`format/varint.rs`: `format::varint`; `log/mod.rs`: `log`).
fn module_of(file: &str) -> Vec<String> {
    let stem = file.strip_suffix(".rs").unwrap();
    let mut parts: Vec<String> = stem.split('/').map(String::from).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    if parts == ["lib"] {
        parts.clear();
    }
    parts
}

/// The text of a file that the library compiles outside tests: without comments, and without
/// its test module (`#[cfg(test)]` then `mod` or `#[path]`, to the end of the file).
fn code_of(text: &str) -> String {
    let mut code = String::new();
    for line in text.lines() {
        let line = match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        };
        code.push_str(line);
        code.push('\n');
    }
    for start in [
        "#[cfg(test)]\nmod ",
        "#[cfg(test)]\n#[path",
        "#[cfg(all(test",
    ] {
        if let Some(at) = code.find(start) {
            code.truncate(at);
        }
    }
    code
}

/// The paths a piece of code names from `crate`, `super` or `self`, with `use` groups
/// (`crate::a::{b, c::d}`) expanded: each as its first word and the names after it.
fn paths_in(code: &str) -> Vec<(String, Vec<String>)> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    for head in ["crate", "super", "self"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(head).map(|a| a + from) {
            from = at + head.len();
            let before = at.checked_sub(1).map(|b| bytes[b]);
            if before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':') {
                continue;
            }
            if !code[from..].starts_with("::") {
                continue;
            }
            let (tree, _) = use_tree(&code[from + 2..]);
            for path in tree {
                out.push((head.to_string(), path));
            }
        }
    }
    out
}

/// The paths of a use tree at the start of `text` (`a::b`, `a::{b, c::{d, e}}`), and where it
/// ends.
fn use_tree(text: &str) -> (Vec<Vec<String>>, usize) {
    let mut segs: Vec<String> = Vec::new();
    let mut at = 0;
    let bytes = text.as_bytes();
    loop {
        let rest = &text[at..];
        let trimmed = rest.trim_start();
        at += rest.len() - trimmed.len();
        if trimmed.starts_with('{') {
            let mut paths = Vec::new();
            at += 1;
            loop {
                let (sub, used) = use_tree(&text[at..]);
                at += used;
                for p in sub {
                    let mut whole = segs.clone();
                    whole.extend(p);
                    paths.push(whole);
                }
                let rest = &text[at..];
                let trimmed = rest.trim_start();
                at += rest.len() - trimmed.len();
                match trimmed.chars().next() {
                    Some(',') => at += 1,
                    Some('}') => {
                        at += 1;
                        break;
                    }
                    _ => break,
                }
                if text[at..].trim_start().starts_with('}') {
                    at += text[at..].find('}').unwrap() + 1;
                    break;
                }
            }
            return (paths, at);
        }
        let len = trimmed
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count();
        if len == 0 {
            break;
        }
        segs.push(trimmed[..len].to_string());
        at += len;
        if text[at..].starts_with("::") && bytes.get(at + 2) != Some(&b'<') {
            at += 2;
        } else {
            break;
        }
    }
    // `self` in a group names the group's own module.
    if segs.last().is_some_and(|s| s == "self") {
        segs.pop();
    }
    (vec![segs], at)
}

/// The file a path names: the deepest module file among its prefixes.
fn file_of(modules: &BTreeMap<Vec<String>, String>, path: &[String]) -> Option<String> {
    (0..=path.len())
        .rev()
        .find_map(|k| modules.get(&path[..k]).cloned())
}

/// Every file's references to other files of the crate at `root`.
fn graph(root: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let files: Vec<String> = sources(root)
        .into_iter()
        .filter(|f| !is_test_file(f))
        .collect();
    let modules: BTreeMap<Vec<String>, String> =
        files.iter().map(|f| (module_of(f), f.clone())).collect();
    let mut edges = BTreeMap::new();
    for file in &files {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        let module = module_of(file);
        let mut to = BTreeSet::new();
        for (head, path) in paths_in(&code_of(&text)) {
            let mut whole = match head.as_str() {
                "crate" => Vec::new(),
                "super" => module[..module.len().saturating_sub(1)].to_vec(),
                _ => module.clone(),
            };
            whole.extend(path);
            if let Some(target) = file_of(&modules, &whole).filter(|t| t != file) {
                to.insert(target);
            }
        }
        edges.insert(file.clone(), to);
    }
    edges
}

/// The layer of `file` (its index in `layers`).
fn layer_of(layers: &[(&str, &[&str])], file: &str) -> usize {
    layers
        .iter()
        .position(|(_, members)| {
            members
                .iter()
                .any(|m| file == *m || (m.ends_with('/') && file.starts_with(m)))
        })
        .unwrap_or_else(|| panic!("{file} belongs to no layer: add it to one in tests/layers.rs"))
}

/// A circle of references, if there is one.
fn circle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(node.to_string(), 1);
        stack.push(node.to_string());
        for next in edges.get(node).into_iter().flatten() {
            match state.get(next.as_str()) {
                Some(1) => {
                    let at = stack.iter().position(|s| s == next).unwrap();
                    let mut found = stack[at..].to_vec();
                    found.push(next.clone());
                    return Some(found);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(next, edges, state, stack) {
                        return Some(c);
                    }
                }
            }
        }
        stack.pop();
        state.insert(node.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in edges.keys() {
        if !state.contains_key(node) {
            if let Some(c) = visit(node, edges, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

/// What is wrong with a crate's layering: upward references, a circle.
fn violations(root: &Path, layers: &[(&str, &[&str])]) -> Vec<String> {
    let edges = graph(root);
    let mut out = Vec::new();
    for (from, tos) in &edges {
        let low = layer_of(layers, from);
        for to in tos {
            let high = layer_of(layers, to);
            if high > low {
                out.push(format!(
                    "{from} ({}) refers up to {to} ({})",
                    layers[low].0, layers[high].0
                ));
            }
        }
    }
    if let Some(c) = circle(&edges) {
        out.push(format!("a circle of references: {}", c.join(" -> ")));
    }
    out
}

fn root(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)
}

#[test]
fn the_library_imports_only_downward() {
    let bad = violations(&root("src"), LIBRARY);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn the_tools_import_only_downward_and_computation_never_imports_rendering() {
    let bad = violations(&root("tools/src"), TOOLS);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn an_upward_reference_and_a_circle_are_found() {
    // The check on a tree of its own, so that it cannot pass by finding nothing.
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("layers-fixture");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("low")).unwrap();
    let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
    write("lib.rs", "mod low;\nmod high;\n");
    write("high.rs", "use crate::low::{a::{B, C}, d};\n");
    write("low/mod.rs", "mod a;\nmod d;\n");
    write(
        "low/a.rs",
        "pub struct B;\n// use crate::high; (a comment)\n",
    );
    write(
        "low/d.rs",
        "pub fn d() { crate::high::x(); }\n#[cfg(test)]\nmod tests { use crate::high; }\n",
    );
    let layers: &[(&str, &[&str])] = &[("low", &["low/"]), ("high", &["high.rs", "lib.rs"])];
    let edges = graph(&dir);
    assert!(edges["high.rs"].contains("low/a.rs") && edges["high.rs"].contains("low/d.rs"));
    assert!(
        !edges["low/a.rs"].contains("high.rs"),
        "comments are not code"
    );
    let bad = violations(&dir, layers);
    assert_eq!(bad.len(), 2, "{bad:?}");
    assert!(
        bad[0].starts_with("low/d.rs (low) refers up to high.rs (high)"),
        "{bad:?}"
    );
    assert!(bad[1].starts_with("a circle of references"), "{bad:?}");
}
