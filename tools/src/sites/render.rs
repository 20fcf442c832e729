//! `jitarena sites`'s reports: text, markdown (names inert, as the memdiff summary's) and JSON
//! (`docs/formats.md`, "JSON outputs").

use std::collections::BTreeMap;
use std::fmt::Write;

use serde_json::{json, Value};

use super::{short_file, Count, Figures, Place, SiteDiff, SitesDiff};
use crate::report::md_text;
use crate::text::{shown, signed_thousands, thousands};

/// The largest entry of a breakdown (kind or phase) over both sides, as `name (share)`.
fn main_of(base: &BTreeMap<String, Count>, diff: &BTreeMap<String, Count>) -> String {
    let mut all: BTreeMap<&str, u64> = BTreeMap::new();
    for (k, c) in base.iter().chain(diff) {
        *all.entry(k).or_default() += c.bytes;
    }
    let total: u64 = all.values().sum();
    let mut v: Vec<(&str, u64)> = all.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    match v.first() {
        None => "-".to_string(),
        Some((name, bytes)) if v.len() == 1 || *bytes == total => name.to_string(),
        Some((name, bytes)) => format!(
            "{name} ({}%, +{} more)",
            (*bytes as u128 * 100 / total.max(1) as u128),
            v.len() - 1
        ),
    }
}

fn where_of(p: &Place) -> String {
    if p.file.is_empty() {
        return String::new();
    }
    format!("{}:{}", short_file(&p.file), p.line)
}

fn lines_of(s: &SiteDiff) -> String {
    match (&s.base_place, &s.diff_place) {
        (Some(b), Some(d)) if b.line != d.line && !d.file.is_empty() => {
            format!("{} (base line {})", where_of(d), b.line)
        }
        _ => where_of(s.place()),
    }
}

fn pct(s: &SiteDiff) -> String {
    match s.base.total.bytes {
        0 => "new".to_string(),
        b => format!("{:+.1}%", s.delta() as f64 * 100.0 / b as f64),
    }
}

/// The text report.
pub fn render_text(d: &SitesDiff) -> String {
    let mut out = String::new();
    let side = |out: &mut String, name: &str, s: &super::SideSummary| {
        let _ = writeln!(
            out,
            "{name}: {} methods, {} allocations, {} bytes at {} sites{}",
            thousands(s.methods),
            thousands(s.figures.total.allocations),
            thousands(s.figures.total.bytes),
            thousands(s.sites as u64),
            match s.unsited.allocations {
                0 => String::new(),
                n => format!(" ({} allocations without a site)", thousands(n)),
            }
        );
        for (m, debug) in &s.modules {
            let _ = writeln!(
                out,
                "  module {}{}",
                shown(m),
                if *debug {
                    ""
                } else {
                    " (no debug information)"
                }
            );
        }
    };
    side(&mut out, "base", &d.base);
    side(&mut out, "diff", &d.diff);
    let delta = i128::from(d.diff.figures.total.bytes) - i128::from(d.base.figures.total.bytes);
    let _ = writeln!(out, "total: {} bytes", signed_thousands(delta));
    let (new, gone) = (
        d.sites.iter().filter(|s| s.base_place.is_none()).count(),
        d.sites.iter().filter(|s| s.diff_place.is_none()).count(),
    );
    let _ = writeln!(
        out,
        "sites: {} matched, {new} new in the diff, {gone} gone from the base (lines matched within {} when a function's sites differ in number)",
        d.sites.len() - new - gone,
        d.line_tolerance
    );
    for (title, list, growth) in [
        ("Sites that grew most", d.grew().collect::<Vec<_>>(), true),
        (
            "Sites that shrank most",
            d.shrank().collect::<Vec<_>>(),
            false,
        ),
    ] {
        let _ = writeln!(out, "\n{title}:");
        if list.is_empty() {
            let _ = writeln!(out, "  none");
        }
        for (i, s) in list.iter().enumerate() {
            let p = s.place();
            let _ = writeln!(
                out,
                "{:>3}. {} bytes ({}) [{}] {}  {}",
                i + 1,
                signed_thousands(s.delta()),
                pct(s),
                s.status(),
                shown(&p.function),
                lines_of(s)
            );
            if !p.inlined_into.is_empty() {
                let chain: Vec<String> = p
                    .inlined_into
                    .iter()
                    .map(|f| shown(f).into_owned())
                    .collect();
                let _ = writeln!(out, "       inlined into {}", chain.join(" < "));
            }
            let _ = writeln!(
                out,
                "       base {} bytes in {} allocations, diff {} bytes in {}; kind {}; phase {}",
                thousands(s.base.total.bytes),
                thousands(s.base.total.allocations),
                thousands(s.diff.total.bytes),
                thousands(s.diff.total.allocations),
                shown(&main_of(&s.base.kinds, &s.diff.kinds)),
                shown(&main_of(&s.base.phases, &s.diff.phases)),
            );
            for (m, b, df) in s.methods_changed(d.top_methods, growth) {
                let _ = writeln!(
                    out,
                    "       {} {} bytes ({} -> {})",
                    shown(&m),
                    signed_thousands(i128::from(df.bytes) - i128::from(b.bytes)),
                    thousands(b.bytes),
                    thousands(df.bytes)
                );
            }
        }
    }
    out
}

/// The markdown report: names escaped and inert (no links, mentions or HTML).
pub fn render_markdown(d: &SitesDiff) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## Allocation sites\n");
    let _ = writeln!(
        out,
        "Base {} bytes in {} allocations at {} sites; diff {} bytes in {} allocations at {} sites ({} bytes).\n",
        thousands(d.base.figures.total.bytes),
        thousands(d.base.figures.total.allocations),
        thousands(d.base.sites as u64),
        thousands(d.diff.figures.total.bytes),
        thousands(d.diff.figures.total.allocations),
        thousands(d.diff.sites as u64),
        signed_thousands(
            i128::from(d.diff.figures.total.bytes) - i128::from(d.base.figures.total.bytes)
        ),
    );
    for (title, list, growth) in [
        ("Sites that grew most", d.grew().collect::<Vec<_>>(), true),
        (
            "Sites that shrank most",
            d.shrank().collect::<Vec<_>>(),
            false,
        ),
    ] {
        let _ = writeln!(out, "### {title}\n");
        if list.is_empty() {
            let _ = writeln!(out, "None.\n");
            continue;
        }
        let _ = writeln!(
            out,
            "| Site | Where | Kind | Phase | Base bytes (allocs) | Diff bytes (allocs) | Delta | Methods |"
        );
        let _ = writeln!(out, "| --- | --- | --- | --- | ---: | ---: | ---: | --- |");
        for s in list {
            let p = s.place();
            let mut site = md_text(&p.function);
            if !p.inlined_into.is_empty() {
                let chain: Vec<String> = p.inlined_into.iter().map(|f| md_text(f)).collect();
                let _ = write!(site, " (in {})", chain.join(" \u{2190} "));
            }
            let methods: Vec<String> = s
                .methods_changed(d.top_methods, growth)
                .into_iter()
                .map(|(m, b, df)| {
                    format!(
                        "{} {}",
                        md_text(&m),
                        signed_thousands(i128::from(df.bytes) - i128::from(b.bytes))
                    )
                })
                .collect();
            let _ = writeln!(
                out,
                "| {site} | {} | {} | {} | {} ({}) | {} ({}) | {} ({}, {}) | {} |",
                md_text(&lines_of(s)),
                md_text(&main_of(&s.base.kinds, &s.diff.kinds)),
                md_text(&main_of(&s.base.phases, &s.diff.phases)),
                thousands(s.base.total.bytes),
                thousands(s.base.total.allocations),
                thousands(s.diff.total.bytes),
                thousands(s.diff.total.allocations),
                signed_thousands(s.delta()),
                pct(s),
                s.status(),
                methods.join("; "),
            );
        }
        let _ = writeln!(out);
    }
    out
}

fn counts(map: &BTreeMap<String, Count>) -> Value {
    Value::Object(
        map.iter()
            .map(|(k, c)| {
                (
                    k.clone(),
                    json!({"bytes": c.bytes, "allocations": c.allocations}),
                )
            })
            .collect(),
    )
}

fn figures(f: &Figures) -> Value {
    json!({
        "bytes": f.total.bytes,
        "allocations": f.total.allocations,
        "kinds": counts(&f.kinds),
        "phases": counts(&f.phases),
    })
}

fn place(p: &Option<Place>) -> Value {
    match p {
        None => Value::Null,
        Some(p) => json!({
            "function": p.function,
            "file": p.file,
            "line": p.line,
            "inlined_into": p.inlined_into,
            "skipped": p.skipped,
        }),
    }
}

fn site(s: &SiteDiff, top_methods: usize) -> Value {
    let methods = |growth| {
        s.methods_changed(top_methods, growth)
            .into_iter()
            .map(|(m, b, d)| {
                json!({"method": m, "base_bytes": b.bytes, "diff_bytes": d.bytes,
                       "base_allocations": b.allocations, "diff_allocations": d.allocations})
            })
            .collect::<Vec<_>>()
    };
    json!({
        "status": s.status(),
        "delta_bytes": s.delta() as i64,
        "base_place": place(&s.base_place),
        "diff_place": place(&s.diff_place),
        "base": figures(&s.base),
        "diff": figures(&s.diff),
        "methods_grown": methods(true),
        "methods_shrunk": methods(false),
    })
}

/// The JSON document, one line ending in a newline: both sides' totals (by kind and phase,
/// what the sites add up to) and every site, the largest growth first.
pub fn render_json(d: &SitesDiff) -> String {
    let side = |s: &super::SideSummary| {
        json!({
            "traces": s.traces.iter().map(|t| t.display().to_string()).collect::<Vec<_>>(),
            "modules": s.modules.iter().map(|(m, debug)| json!({"file": m, "debug_info": debug})).collect::<Vec<_>>(),
            "methods": s.methods,
            "sites": s.sites,
            "unsited_allocations": s.unsited.allocations,
            "totals": figures(&s.figures),
        })
    };
    let v = json!({
        "base": side(&d.base),
        "diff": side(&d.diff),
        "line_tolerance": d.line_tolerance,
        "sites": d.sites.iter().map(|s| site(s, d.top_methods)).collect::<Vec<_>>(),
        "warnings": d.warnings,
    });
    let mut out = serde_json::to_string(&v).unwrap_or_default();
    out.push('\n');
    out
}
