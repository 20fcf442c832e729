//! The console and JSON reports of `jitarena stats`, laid out as the .NET JIT's memory
//! statistics (totals, then `kind | size | pct`), plus per-method percentiles, the largest
//! methods, the tier split and the phase table.

use std::fmt::Write as _;

use serde_json::json;

use super::{pct, shown, thousands};
use crate::stats::{quantile, Named, Stats, KINDS_PER_PHASE};

fn per(total: u64, n: u64) -> u64 {
    total.checked_div(n).unwrap_or(0)
}

/// The console report.
pub fn render_text(s: &Stats) -> String {
    let mut o = String::new();
    totals_text(&mut o, s);
    tiers_text(&mut o, s);
    kinds_text(&mut o, s);
    phases_text(&mut o, s);
    phase_kinds_text(&mut o, s);
    largest_methods_text(&mut o, s);
    o
}

/// The console report's first lines: the totals as the .NET JIT shows them, per method and
/// per allocation, the memory limit hits, and the bytes-per-method percentiles.
fn totals_text(o: &mut String, s: &Stats) {
    let m = s.methods;
    let _ = writeln!(
        o,
        "jitarena stats: {} methods from {} log{}",
        thousands(m),
        s.files,
        if s.files == 1 { "" } else { "s" }
    );
    if s.failed_compiles > 0 {
        let _ = writeln!(
            o,
            "failed compiles: {} (noted in the logs without a record: in none of the figures below)",
            thousands(s.failed_compiles)
        );
    }
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "  count: {}, size: {}, max = {}",
        thousands(s.allocations),
        thousands(s.bytes),
        thousands(s.largest)
    );
    let _ = writeln!(
        o,
        "  allocateMemory: {}, nraUsed: {}",
        thousands(s.reserved),
        thousands(s.used)
    );
    let _ = writeln!(
        o,
        "  per method: {} allocations, {} bytes; {} page bytes obtained, {} used",
        thousands(per(s.allocations, m)),
        thousands(per(s.bytes, m)),
        thousands(per(s.reserved, m)),
        thousands(per(s.used, m))
    );
    let _ = writeln!(
        o,
        "  per allocation: {} bytes",
        thousands(per(s.bytes, s.allocations))
    );
    if s.limit_hits > 0 {
        let _ = writeln!(
            o,
            "  methods that hit the memory limit: {}",
            thousands(s.limit_hits)
        );
    }
    let b = &s.method_bytes;
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "Bytes per method: p50 {}, p90 {}, p99 {}, max {}",
        thousands(quantile(b, 0.5)),
        thousands(quantile(b, 0.9)),
        thousands(quantile(b, 0.99)),
        thousands(b.last().copied().unwrap_or(0))
    );
}

/// The console table of the tiers (methods, bytes, share, bytes per method), when the logs
/// name any tier.
fn tiers_text(o: &mut String, s: &Stats) {
    let any_named = s.tiers.len() > 1 || s.tiers.first().is_some_and(|t| !t.name.is_empty());
    if !any_named {
        return;
    }
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "{:>22} | {:>10} | {:>14} | {:>8} | {:>12}",
        "tier", "methods", "size", "pct", "per method"
    );
    let _ = writeln!(
        o,
        "  {:-<20}-+-{:-<10}-+-{:-<14}-+-{:-<8}-+-{:-<12}",
        "", "", "", "", ""
    );
    for t in &s.tiers {
        let name = if t.name.is_empty() {
            "(unknown)"
        } else {
            &t.name
        };
        let _ = writeln!(
            o,
            "{name:>22} | {:>10} | {:>14} | {:>8} | {:>12}",
            thousands(t.methods),
            thousands(t.bytes),
            pct(t.bytes, s.bytes),
            thousands(per(t.bytes, t.methods))
        );
    }
}

/// The console table of the kinds that were allocated: bytes, share and count.
fn kinds_text(o: &mut String, s: &Stats) {
    let _ = writeln!(o);
    let _ = writeln!(o, "Alloc'd bytes by kind:");
    let _ = writeln!(
        o,
        "{:>22} | {:>14} | {:>8} | {:>12}",
        "kind", "size", "pct", "count"
    );
    let _ = writeln!(o, "  {:-<20}-+-{:-<14}-+-{:-<8}-+-{:-<12}", "", "", "", "");
    for k in s.kinds.iter().filter(|k| k.count > 0) {
        let _ = writeln!(
            o,
            "{:>22} | {:>14} | {:>8} | {:>12}",
            k.name,
            thousands(k.bytes),
            pct(k.bytes, s.bytes),
            thousands(k.count)
        );
    }
}

/// The console table of the phases' bytes and shares, when the logs have phases.
fn phases_text(o: &mut String, s: &Stats) {
    if s.phases.is_empty() {
        return;
    }
    let _ = writeln!(o);
    let _ = writeln!(o, "Alloc'd bytes by phase:");
    let _ = writeln!(o, "{:>22} | {:>14} | {:>8}", "phase", "size", "pct");
    let _ = writeln!(o, "  {:-<20}-+-{:-<14}-+-{:-<8}", "", "", "");
    for p in &s.phases {
        let _ = writeln!(
            o,
            "{:>22} | {:>14} | {:>8}",
            p.name,
            thousands(p.bytes),
            pct(p.bytes, s.bytes)
        );
    }
}

/// The console table of the largest methods (size, allocations, context, tier, name), when
/// any were kept.
fn largest_methods_text(o: &mut String, s: &Stats) {
    if s.top.is_empty() {
        return;
    }
    let _ = writeln!(o);
    let _ = writeln!(o, "Largest methods:");
    let _ = writeln!(
        o,
        "{:>16} | {:>12} | {:>8} | {:>9} | method",
        "size", "allocations", "context", "tier"
    );
    for t in &s.top {
        let _ = writeln!(
            o,
            "{:>16} | {:>12} | {:>8} | {:>9} | {}",
            thousands(t.bytes),
            thousands(t.allocations),
            t.context,
            t.tier,
            t.name
        );
    }
}

/// The kinds that used most of each phase's bytes, when the logs recorded kinds by phase.
fn phase_kinds_text(o: &mut String, s: &Stats) {
    if s.phase_kinds.is_empty() {
        return;
    }
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "Alloc'd bytes by phase and kind (the {KINDS_PER_PHASE} largest kinds of each phase):"
    );
    let _ = writeln!(
        o,
        "{:>22} | {:>22} | {:>14} | {:>8}",
        "phase", "kind", "size", "of phase"
    );
    let _ = writeln!(o, "  {:-<20}-+-{:-<22}-+-{:-<14}-+-{:-<8}", "", "", "", "");
    let mut i = 0;
    while i < s.phase_kinds.len() {
        let phase = &s.phase_kinds[i].phase;
        let end = i + s.phase_kinds[i..]
            .iter()
            .take_while(|p| p.phase == *phase)
            .count();
        let total: u64 = s.phase_kinds[i..end]
            .iter()
            .fold(0, |t, p| t.saturating_add(p.bytes));
        for (n, p) in s.phase_kinds[i..end].iter().enumerate() {
            if n == KINDS_PER_PHASE {
                let _ = writeln!(
                    o,
                    "{:>22} | {:>22} | {:>14} |",
                    "",
                    format!("({} more)", end - i - n),
                    ""
                );
                break;
            }
            let _ = writeln!(
                o,
                "{:>22} | {:>22} | {:>14} | {:>8}",
                if n == 0 { shown(&p.phase) } else { "".into() },
                shown(&p.kind),
                thousands(p.bytes),
                pct(p.bytes, total)
            );
        }
        i = end;
    }
}

/// The version of the JSON report's schema (`schema_version` in it; `docs/formats.md`).
pub const JSON_SCHEMA_VERSION: u32 = 1;

/// The JSON report (schema in `docs/formats.md`): one line, ending in a newline.
pub fn render_json(s: &Stats) -> String {
    let named = |list: &[Named], with_count: bool| -> Vec<serde_json::Value> {
        list.iter()
            .map(|n| {
                let mut v = json!({"name": n.name, "bytes": n.bytes});
                if with_count {
                    v["count"] = json!(n.count);
                }
                v
            })
            .collect()
    };
    let b = &s.method_bytes;
    let tiers: Vec<serde_json::Value> = s
        .tiers
        .iter()
        .map(|t| {
            json!({
                "tier": t.name,
                "methods": t.methods,
                "bytes": t.bytes,
                "allocations": t.count,
            })
        })
        .collect();
    let top: Vec<serde_json::Value> = s
        .top
        .iter()
        .map(|t| {
            json!({
                "bytes": t.bytes,
                "allocations": t.allocations,
                "context": t.context,
                "tier": t.tier,
                "name": t.name,
            })
        })
        .collect();
    let mut doc = json!({
        "schema_version": JSON_SCHEMA_VERSION,
        "version": JSON_SCHEMA_VERSION,
        "files": s.files,
        "methods": s.methods,
        "allocations": s.allocations,
        "bytes": s.bytes,
        "used_bytes": s.used,
        "reserved_bytes": s.reserved,
        "pages": s.pages,
        "largest_alloc": s.largest,
        "limit_hits": s.limit_hits,
        "failed_compiles": s.failed_compiles,
        "method_bytes": {
            "p50": quantile(b, 0.5),
            "p90": quantile(b, 0.9),
            "p99": quantile(b, 0.99),
            "max": b.last().copied().unwrap_or(0),
        },
        "tiers": tiers,
        "kinds": named(&s.kinds, true),
        "phases": named(&s.phases, false),
        "largest_methods": top,
    });
    if let (Some(map), false) = (doc.as_object_mut(), s.phase_kinds.is_empty()) {
        let pairs: Vec<serde_json::Value> = s
            .phase_kinds
            .iter()
            .map(|p| json!({"phase": p.phase, "kind": p.kind, "bytes": p.bytes}))
            .collect();
        map.insert("phase_kinds".into(), json!(pairs));
    }
    let mut out = serde_json::to_string(&doc).unwrap_or_default();
    out.push('\n');
    out
}
