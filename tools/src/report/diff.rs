//! memdiff reports: the console text, the markdown summary (in the style of the .NET JIT's
//! replay-tool diff summaries) and the JSON document.

use std::fmt::Write as _;

use serde_json::{json, Value};

use super::{json_f64, shown, signed_thousands, thousands};
use crate::diff::{
    pct_change, Delta, Group, MemDiff, MethodDelta, PhaseKindDelta, Quantiles, CHANGE_BUCKETS,
};

/// `+1.23%`, `-0.50%`, `0.00%`, or `new` when the base is 0 and the diff is not.
pub fn pdiff(base: u64, diff: u64) -> String {
    if base == diff {
        return "0.00%".into();
    }
    match pct_change(base, diff) {
        // Tiny changes keep their sign: "+0.00%" is not "no change".
        // The sign from the counts: past 2^53 bytes the float difference can be 0.
        Some(p) if p.abs() < 0.005 => if diff > base { "+0.00%" } else { "-0.00%" }.into(),
        Some(p) => format!("{p:+.2}%"),
        None => "new".into(),
    }
}

/// The PDIFF of a named part of the totals (a kind, a phase, a kind in a phase): as
/// [`pdiff`], but `appeared` when the base has none of it and `vanished` when the diff has
/// none (a kind a change adds, splits or renames is not infinite growth).
pub fn part_pdiff(base: u64, diff: u64) -> String {
    match (base, diff) {
        (0, d) if d > 0 => "appeared".into(),
        (b, 0) if b > 0 => "vanished".into(),
        _ => pdiff(base, diff),
    }
}

/// A method as reports name it: its name (as [`shown`]), tier and context.
pub(crate) fn method_label(m: &MethodDelta) -> String {
    let name = shown(m.name.as_deref().unwrap_or("(unknown method)"));
    let mut extra = Vec::new();
    if let Some(t) = &m.tier {
        extra.push(shown(t).into_owned());
    }
    if m.context >= 0 {
        extra.push(format!("context {}", m.context));
    }
    if extra.is_empty() {
        name.to_string()
    } else {
        format!("{name} [{}]", extra.join(", "))
    }
}

pub(crate) fn top_kind(m: &MethodDelta) -> String {
    m.top_kind.as_ref().map_or(String::new(), |(k, d)| {
        format!("{} {}", shown(k), signed_thousands(*d))
    })
}

fn verdict_line(d: &MemDiff) -> String {
    if d.verdict.regression {
        format!("FAIL (exit 1): {}", d.verdict.rule)
    } else {
        format!("PASS: {}", d.verdict.rule)
    }
}

fn coverage_line(d: &MemDiff) -> String {
    let c = &d.coverage;
    let mut line = format!(
        "{} matched, {} only in base ({} bytes), {} only in diff ({} bytes)",
        thousands(c.matched),
        thousands(c.only_base),
        thousands(c.only_base_bytes),
        thousands(c.only_diff),
        thousands(c.only_diff_bytes)
    );
    if c.limit_hits_base + c.limit_hits_diff > 0 {
        line.push_str(&format!(
            "; memory limit hit by {} base and {} diff methods ({} matched methods only in the diff)",
            thousands(c.limit_hits_base),
            thousands(c.limit_hits_diff),
            thousands(c.limit_hits_new)
        ));
    }
    if c.duplicates_base + c.duplicates_diff > 0 {
        line.push_str(&format!(
            "; records repeating a context: {} in base, {} in diff",
            thousands(c.duplicates_base),
            thousands(c.duplicates_diff)
        ));
    }
    line
}

/// The rows of a group's table: (label, base, diff).
fn group_rows(g: &Group, has_pages: bool) -> Vec<(&'static str, u64, u64)> {
    let mut rows = vec![("bytes requested", g.base.bytes, g.diff.bytes)];
    if has_pages {
        rows.push(("allocations", g.base.allocations, g.diff.allocations));
        rows.push(("used page bytes", g.base.used, g.diff.used));
        rows.push(("reserved page bytes", g.base.reserved, g.diff.reserved));
    }
    rows
}

/// The console report.
pub fn render_text(d: &MemDiff) -> String {
    let mut o = render_text_body(d);
    let _ = writeln!(o);
    let _ = writeln!(o, "{}", verdict_line(d));
    o
}

/// The console report without its verdict line.
pub(crate) fn render_text_body(d: &MemDiff) -> String {
    let mut o = String::new();
    header_text(&mut o, d);
    groups_text(&mut o, d);
    if d.has_kinds {
        delta_table_text(&mut o, "Kinds", "kind", "by absolute delta", &d.kinds);
    }
    if !d.phases.is_empty() {
        delta_table_text(&mut o, "Phases", "phase", "in phase order", &d.phases);
    }
    phase_kinds_text(&mut o, &d.phase_kinds, 10);
    distribution_text(&mut o, d);
    top_methods_text(&mut o, d);
    o
}

/// The console report's first lines: how many logs each side had, the coverage and the kinds
/// left out.
fn header_text(o: &mut String, d: &MemDiff) {
    let c = &d.coverage;
    if d.has_kinds {
        let _ = writeln!(
            o,
            "jitarena memdiff: base {} log{}, diff {} log{}",
            c.base_files,
            plural(c.base_files),
            c.diff_files,
            plural(c.diff_files)
        );
    } else {
        let _ = writeln!(o, "jitarena memdiff: a CSV file's base and diff columns");
    }
    let _ = writeln!(o, "Coverage: {}", coverage_line(d));
    if !d.ignored_kinds.is_empty() {
        let _ = writeln!(
            o,
            "Ignored kinds (left out of every total): {}",
            shown(&d.ignored_kinds.join(", "))
        );
    }
}

/// The console table of the tier groups' totals (bytes, and page figures when the logs have
/// them), each with its delta and PDIFF.
fn groups_text(o: &mut String, d: &MemDiff) {
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "{:<24} {:>16} {:>16} {:>15} {:>9}",
        "", "Base", "Diff", "Delta", "PDIFF"
    );
    for g in &d.groups {
        let _ = writeln!(o, "{} ({} methods)", g.name, thousands(g.methods));
        for (label, b, df) in group_rows(g, d.has_kinds) {
            let delta = i128::from(df) - i128::from(b);
            let _ = writeln!(
                o,
                "  {label:<22} {:>16} {:>16} {:>15} {:>9}",
                thousands(b),
                thousands(df),
                signed_thousands(delta),
                pdiff(b, df)
            );
        }
    }
}

/// The console lines of the per-method distribution: both sides' percentiles, and how many
/// methods grew, shrank or stayed.
fn distribution_text(o: &mut String, d: &MemDiff) {
    let dist = &d.distribution;
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "Bytes per method {:>14} {:>14} {:>14} {:>14}",
        "p50", "p90", "p99", "max"
    );
    for (label, q) in [("  base", &dist.base), ("  diff", &dist.diff)] {
        let _ = writeln!(
            o,
            "{label:<16} {:>14} {:>14} {:>14} {:>14}",
            thousands(q.p50),
            thousands(q.p90),
            thousands(q.p99),
            thousands(q.max)
        );
    }
    let _ = writeln!(
        o,
        "  {} grew, {} shrank, {} unchanged",
        thousands(dist.grew),
        thousands(dist.shrank),
        thousands(dist.same)
    );
}

/// The console lists of the methods that moved most, in bytes and relatively; an empty list
/// is left out.
fn top_methods_text(o: &mut String, d: &MemDiff) {
    let floor = thousands(d.min_method_bytes);
    for (title, list) in [
        ("Largest growth (bytes)".to_string(), &d.top_growth),
        ("Largest shrinkage (bytes)".to_string(), &d.top_shrinkage),
        (
            format!("Largest relative growth (methods of at least {floor} bytes)"),
            &d.top_relative_growth,
        ),
        (
            format!("Largest relative shrinkage (methods of at least {floor} bytes)"),
            &d.top_relative_shrinkage,
        ),
    ] {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(o);
        let _ = writeln!(o, "{title}");
        for m in list {
            let delta = i128::from(m.diff) - i128::from(m.base);
            let kind = top_kind(m);
            let kind = if kind.is_empty() {
                String::new()
            } else {
                format!("  (most: {kind})")
            };
            let _ = writeln!(
                o,
                "  {:>13} {:>9}  {}{kind}",
                signed_thousands(delta),
                pdiff(m.base, m.diff),
                method_label(m)
            );
        }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn delta_table_text(o: &mut String, title: &str, what: &str, order: &str, rows: &[Delta]) {
    let changed: Vec<&Delta> = rows.iter().filter(|r| r.base != r.diff).collect();
    let unchanged = rows.len() - changed.len();
    let _ = writeln!(o);
    let folded = if unchanged > 0 {
        format!("; {unchanged} unchanged not shown")
    } else {
        String::new()
    };
    let _ = writeln!(o, "{title} ({order}{folded})");
    // The name column widens for long names; the numbers stay aligned with the totals above
    // when names fit in 22 characters.
    let w = changed
        .iter()
        .map(|r| shown(&r.name).chars().count())
        .max()
        .unwrap_or(0)
        .max(22);
    let _ = writeln!(
        o,
        "  {what:<w$} {:>16} {:>16} {:>15} {:>9}",
        "Base", "Diff", "Delta", "PDIFF"
    );
    for r in changed {
        let _ = writeln!(
            o,
            "  {:<w$} {:>16} {:>16} {:>15} {:>9}",
            shown(&r.name),
            thousands(r.base),
            thousands(r.diff),
            signed_thousands(r.delta()),
            part_pdiff(r.base, r.diff)
        );
    }
}

/// The (phase, kind) pairs that moved most (at most `limit`), as a console table; nothing when
/// no arena recorded kinds by phase.
pub(crate) fn phase_kinds_text(o: &mut String, rows: &[PhaseKindDelta], limit: usize) {
    if rows.is_empty() {
        return;
    }
    let changed: Vec<&PhaseKindDelta> = rows.iter().filter(|r| r.base != r.diff).collect();
    let listed = changed.len().min(limit);
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "Kinds by phase (the {listed} of {} changed pairs that moved most, of {} recorded)",
        changed.len(),
        rows.len()
    );
    if changed.is_empty() {
        return;
    }
    let width = |f: &dyn Fn(&PhaseKindDelta) -> &str, least: usize| {
        changed
            .iter()
            .take(limit)
            .map(|r| shown(f(r)).chars().count())
            .max()
            .unwrap_or(0)
            .max(least)
    };
    let (wp, wk) = (width(&|r| &r.phase, 5), width(&|r| &r.kind, 16));
    let _ = writeln!(
        o,
        "  {:<wp$} {:<wk$} {:>16} {:>16} {:>15} {:>9}",
        "phase", "kind", "Base", "Diff", "Delta", "PDIFF"
    );
    for r in changed.iter().take(limit) {
        let _ = writeln!(
            o,
            "  {:<wp$} {:<wk$} {:>16} {:>16} {:>15} {:>9}",
            shown(&r.phase),
            shown(&r.kind),
            thousands(r.base),
            thousands(r.diff),
            signed_thousands(r.delta()),
            part_pdiff(r.base, r.diff)
        );
    }
}

/// The (phase, kind) pairs that moved most (at most `limit`) as a markdown `<details>` block,
/// under `title`; nothing when no arena recorded kinds by phase.
pub(crate) fn phase_kinds_details(
    o: &mut String,
    title: &str,
    rows: &[PhaseKindDelta],
    limit: usize,
) {
    if rows.is_empty() {
        return;
    }
    let changed: Vec<&PhaseKindDelta> = rows.iter().filter(|r| r.base != r.diff).collect();
    let listed = changed.len().min(limit);
    let mut summary = format!("{title}: {} changed", changed.len());
    if listed < changed.len() {
        summary.push_str(&format!(", the {listed} that moved most shown"));
    }
    summary.push_str(&format!(", {} unchanged", rows.len() - changed.len()));
    if changed.is_empty() {
        let _ = writeln!(o, "{}.", html_escape(&summary));
        let _ = writeln!(o);
        return;
    }
    details(o, &summary, |o| {
        let _ = writeln!(o, "| Phase | Kind | Base | Diff | Delta | PDIFF |");
        let _ = writeln!(o, "| --- | --- | --: | --: | --: | --: |");
        for r in changed.iter().take(limit) {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} | {} |",
                md_escape(&shown(&r.phase)),
                md_escape(&shown(&r.kind)),
                thousands(r.base),
                thousands(r.diff),
                signed_thousands(r.delta()),
                colored(r.base, r.diff, part_pdiff(r.base, r.diff))
            );
        }
    });
}

/// One collection's diff as markdown: `long` lists every changed kind and phase and every
/// listed method. The multi-collection summary is [`super::summary::render_markdown`].
pub fn render_markdown(d: &MemDiff, long: bool) -> String {
    render_collection_markdown(d, "## jitarena memdiff", long, &[])
}

/// One collection's diff as markdown under `heading` (markdown, already escaped), with the
/// coverage rules it broke (none: its verdict is that of its thresholds).
pub(crate) fn render_collection_markdown(
    d: &MemDiff,
    heading: &str,
    long: bool,
    coverage_failures: &[crate::diff::Failure],
) -> String {
    let mut o = String::new();
    let incomplete = !coverage_failures.is_empty();
    collection_headline_md(&mut o, d, heading, incomplete);
    collection_verdict_md(&mut o, d, coverage_failures);
    coverage_details(&mut o, d);
    tier_totals_details(&mut o, d);
    let limit = if long { usize::MAX } else { 10 };
    if d.has_kinds {
        delta_details(&mut o, "Kinds", "Kind", &d.kinds, limit);
    }
    if !d.phases.is_empty() {
        delta_details(&mut o, "Phases", "Phase", &d.phases, limit);
    }
    phase_kinds_details(&mut o, "Kinds by phase", &d.phase_kinds, limit);
    distribution_details(&mut o, d, long);
    top_methods_details(&mut o, d, long);
    tier_tops_details(&mut o, d);
    o
}

/// Per tier group (FullOpts, then MinOpts), the methods that grew and shrank most relatively,
/// in SuperPMI's words and columns (without the collection: there is one), each in a
/// `<details>` block, or one line when there is none.
fn tier_tops_details(o: &mut String, d: &MemDiff) {
    let floor = super::bytes_floor(d.min_method_bytes);
    for t in &d.tier_tops {
        for (what, verb, list) in [
            ("regressions", "grew", &t.regressions),
            ("improvements", "shrank", &t.improvements),
        ] {
            let title = format!("Top method {what} ({}, by PDIFF %)", t.tier);
            if list.is_empty() {
                let _ = writeln!(
                    o,
                    "{title}: none (no {} method of at least {floor} in the base {verb}).",
                    t.tier
                );
                let _ = writeln!(o);
                continue;
            }
            details(o, &title, |o| {
                let _ = writeln!(
                    o,
                    "Methods of at least {floor} in the base (--min-method-bytes)."
                );
                let _ = writeln!(o);
                let _ = writeln!(o, "| Context | Method | Base | Diff | PDIFF |");
                let _ = writeln!(o, "| --: | --- | --: | --: | --: |");
                for m in list {
                    let _ = writeln!(
                        o,
                        "| {} | {} | {} | {} | {} |",
                        if m.context >= 0 {
                            m.context.to_string()
                        } else {
                            String::new()
                        },
                        md_escape(&shown(m.name.as_deref().unwrap_or("(unknown method)"))),
                        thousands(m.base),
                        thousands(m.diff),
                        colored_pdiff(m.base, m.diff)
                    );
                }
            });
        }
    }
}

/// The markdown's heading, its status sentence (the overall bytes' change over the matched
/// methods) and the table of the tier groups' bytes.
fn collection_headline_md(o: &mut String, d: &MemDiff, heading: &str, incomplete: bool) {
    let g = d.overall();
    let _ = writeln!(o, "{heading}");
    let _ = writeln!(o);
    let status = if d.verdict.regression {
        "❌ **Regression**"
    } else if incomplete {
        "❌ **INCOMPLETE** coverage, no regression"
    } else {
        "✅ No regression"
    };
    let _ = writeln!(
        o,
        "{status}: bytes requested {} ({} → {}) over {} matched methods.",
        colored_pdiff(g.base.bytes, g.diff.bytes),
        thousands(g.base.bytes),
        thousands(g.diff.bytes),
        thousands(d.coverage.matched)
    );
    let _ = writeln!(o);
    let _ = writeln!(o, "| Collection | Base | Diff | PDIFF |");
    let _ = writeln!(o, "| --- | --: | --: | --: |");
    for grp in &d.groups {
        let _ = writeln!(
            o,
            "| {} bytes | {} | {} | {} |",
            grp.name,
            thousands(grp.base.bytes),
            thousands(grp.diff.bytes),
            colored_pdiff(grp.base.bytes, grp.diff.bytes)
        );
    }
    let _ = writeln!(o);
}

/// The markdown verdict (status, exit code when not 0, and the deciding rule), then the
/// coverage rules broken, when any.
fn collection_verdict_md(o: &mut String, d: &MemDiff, coverage_failures: &[crate::diff::Failure]) {
    let incomplete = !coverage_failures.is_empty();
    let status = crate::diff::Status::of(incomplete, d.verdict.regression);
    let verdict = match status.exit_code() {
        0 => format!("**{}**", status.label()),
        code => format!("**{}** (exit {code})", status.label()),
    };
    let _ = writeln!(o, "{verdict}: {}", md_escape(&d.verdict.rule));
    let _ = writeln!(o);
    if incomplete {
        let _ = writeln!(o, "Coverage rules broken:");
        let _ = writeln!(o);
        for f in coverage_failures {
            let _ = writeln!(o, "- {}", md_escape(&f.sentence));
        }
        let _ = writeln!(o);
    }
}

/// The markdown `<details>` block of the coverage: matched methods and those on one side only
/// per side, and the kinds left out.
fn coverage_details(o: &mut String, d: &MemDiff) {
    details(o, &format!("Coverage: {}", coverage_line(d)), |o| {
        let _ = writeln!(o, "| Side | Matched | Only on this side | Their bytes |");
        let _ = writeln!(o, "| --- | --: | --: | --: |");
        let c = &d.coverage;
        let _ = writeln!(
            o,
            "| Base | {} | {} | {} |",
            thousands(c.matched),
            thousands(c.only_base),
            thousands(c.only_base_bytes)
        );
        let _ = writeln!(
            o,
            "| Diff | {} | {} | {} |",
            thousands(c.matched),
            thousands(c.only_diff),
            thousands(c.only_diff_bytes)
        );
        if !d.ignored_kinds.is_empty() {
            let _ = writeln!(o);
            let _ = writeln!(
                o,
                "Ignored kinds (left out of every total): {}",
                md_escape(&shown(&d.ignored_kinds.join(", ")))
            );
        }
    });
}

/// The markdown `<details>` block of every tier group's figures, each with its delta and
/// colored PDIFF.
fn tier_totals_details(o: &mut String, d: &MemDiff) {
    details(o, "Totals by tier", |o| {
        let _ = writeln!(
            o,
            "| Tier | Methods | Figure | Base | Diff | Delta | PDIFF |"
        );
        let _ = writeln!(o, "| --- | --: | --- | --: | --: | --: | --: |");
        for grp in &d.groups {
            for (label, b, df) in group_rows(grp, d.has_kinds) {
                let delta = i128::from(df) - i128::from(b);
                let _ = writeln!(
                    o,
                    "| {} | {} | {label} | {} | {} | {} | {} |",
                    grp.name,
                    thousands(grp.methods),
                    thousands(b),
                    thousands(df),
                    signed_thousands(delta),
                    colored_pdiff(b, df)
                );
            }
        }
    });
}

/// The markdown `<details>` block of the per-method distribution: both sides' percentiles,
/// how many methods grew or shrank, and (`long`) the histogram of changes.
fn distribution_details(o: &mut String, d: &MemDiff, long: bool) {
    details(o, "Per-method distribution", |o| {
        let dist = &d.distribution;
        let _ = writeln!(o, "| Bytes per method | p50 | p90 | p99 | max |");
        let _ = writeln!(o, "| --- | --: | --: | --: | --: |");
        let row = |label: &str, q: &Quantiles| {
            format!(
                "| {label} | {} | {} | {} | {} |",
                thousands(q.p50),
                thousands(q.p90),
                thousands(q.p99),
                thousands(q.max)
            )
        };
        let _ = writeln!(o, "{}", row("Base", &dist.base));
        let _ = writeln!(o, "{}", row("Diff", &dist.diff));
        let _ = writeln!(o);
        let _ = writeln!(
            o,
            "{} methods grew, {} shrank, {} unchanged.",
            thousands(dist.grew),
            thousands(dist.shrank),
            thousands(dist.same)
        );
        if long {
            let _ = writeln!(o);
            let _ = writeln!(o, "| Change | Methods |");
            let _ = writeln!(o, "| --- | --: |");
            for (label, n) in CHANGE_BUCKETS.iter().zip(&dist.change_histogram) {
                let _ = writeln!(o, "| {label} | {} |", thousands(*n));
            }
        }
    });
}

/// The markdown `<details>` blocks of the methods that moved most, in bytes and relatively
/// (5 of each, every listed one when `long`); an empty list is left out.
fn top_methods_details(o: &mut String, d: &MemDiff, long: bool) {
    let top = if long { usize::MAX } else { 5 };
    let floor = thousands(d.min_method_bytes);
    for (title, list) in [
        ("Methods that grew most".to_string(), &d.top_growth),
        ("Methods that shrank most".to_string(), &d.top_shrinkage),
        (
            format!("Methods that grew most, relatively (at least {floor} bytes)"),
            &d.top_relative_growth,
        ),
        (
            format!("Methods that shrank most, relatively (at least {floor} bytes)"),
            &d.top_relative_shrinkage,
        ),
    ] {
        if list.is_empty() {
            continue;
        }
        details(o, &title, |o| methods_table_md(o, list, top, d.has_kinds));
    }
}

/// The markdown table of the first `top` methods of `list`, with the kind that moved most in
/// each when the logs have kinds (`kind_col`).
fn methods_table_md(o: &mut String, list: &[MethodDelta], top: usize, kind_col: bool) {
    let _ = writeln!(
        o,
        "| Method | Base | Diff | Delta | PDIFF |{}",
        if kind_col {
            " Kind that moved most |"
        } else {
            ""
        }
    );
    let _ = writeln!(
        o,
        "| --- | --: | --: | --: | --: |{}",
        if kind_col { " --- |" } else { "" }
    );
    for m in list.iter().take(top) {
        let delta = i128::from(m.diff) - i128::from(m.base);
        let kind = if kind_col {
            format!(" {} |", md_escape(&top_kind(m)))
        } else {
            String::new()
        };
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} |{kind}",
            md_escape(&method_label(m)),
            thousands(m.base),
            thousands(m.diff),
            signed_thousands(delta),
            colored_pdiff(m.base, m.diff)
        );
    }
}

pub(crate) fn details(o: &mut String, summary: &str, body: impl FnOnce(&mut String)) {
    let _ = writeln!(o, "<details>");
    let _ = writeln!(o, "<summary>{}</summary>", html_escape(summary));
    let _ = writeln!(o);
    body(o);
    let _ = writeln!(o);
    let _ = writeln!(o, "</details>");
    let _ = writeln!(o);
}

pub(crate) fn delta_details(o: &mut String, title: &str, what: &str, rows: &[Delta], limit: usize) {
    let changed: Vec<&Delta> = rows.iter().filter(|r| r.base != r.diff).collect();
    let unchanged = rows.len() - changed.len();
    let listed = changed.len().min(limit);
    let mut summary = format!("{title}: {} changed", changed.len());
    if listed < changed.len() {
        summary.push_str(&format!(", the {listed} that moved most shown"));
    }
    if unchanged > 0 {
        summary.push_str(&format!(", {unchanged} unchanged"));
    }
    if changed.is_empty() {
        let _ = writeln!(o, "{}.", html_escape(&summary));
        let _ = writeln!(o);
        return;
    }
    details(o, &summary, |o| {
        let _ = writeln!(o, "| {what} | Base | Diff | Delta | PDIFF |");
        let _ = writeln!(o, "| --- | --: | --: | --: | --: |");
        for r in changed.iter().take(limit) {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} |",
                md_escape(&shown(&r.name)),
                thousands(r.base),
                thousands(r.diff),
                signed_thousands(r.delta()),
                colored(r.base, r.diff, part_pdiff(r.base, r.diff))
            );
        }
    });
}

/// A PDIFF in red (more memory) or green (less), as the replay tool's summaries show them,
/// with a red or green mark after it that stays where a host strips the `style` (GitHub); a
/// change that rounds to `+0.00%` or `-0.00%` keeps its sign but no color.
pub(crate) fn colored_pdiff(base: u64, diff: u64) -> String {
    let text = pdiff(base, diff);
    if matches!(text.as_str(), "+0.00%" | "-0.00%") {
        return text; // a change too small to show is neither red nor green
    }
    colored(base, diff, text)
}

/// `text` colored as the change from `base` to `diff` is (see [`colored_pdiff`]).
pub(crate) fn colored(base: u64, diff: u64, text: String) -> String {
    match mark(base, diff) {
        "" => text,
        mark => format!("{} {mark}", span_colored(base, diff, &text)),
    }
}

/// `text` in a red or green span as the change from `base` to `diff` is, without the mark.
pub(crate) fn span_colored(base: u64, diff: u64, text: &str) -> String {
    match diff.cmp(&base) {
        std::cmp::Ordering::Greater => format!("<span style=\"color:red\">{text}</span>"),
        std::cmp::Ordering::Less => format!("<span style=\"color:green\">{text}</span>"),
        std::cmp::Ordering::Equal => text.to_string(),
    }
}

/// [`GREW`], [`SHRANK`], or nothing for no change.
pub(crate) fn mark(base: u64, diff: u64) -> &'static str {
    match diff.cmp(&base) {
        std::cmp::Ordering::Greater => GREW,
        std::cmp::Ordering::Less => SHRANK,
        std::cmp::Ordering::Equal => "",
    }
}

/// The mark of more memory: red where markdown's colors are stripped.
pub const GREW: &str = "🔴";
/// The mark of less memory.
pub const SHRANK: &str = "🟢";

/// Escapes text for HTML and XHTML: markup characters as entities, and the characters XML
/// forbids (control characters other than tab and line breaks, non-characters) as visible
/// pictures.
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if super::disguises(c) => out.push_str(&super::visible(c.encode_utf8(&mut [0; 4]))),
            _ => out.push(c),
        }
    }
    out
}

pub(crate) fn md_escape(s: &str) -> String {
    super::md_text(s)
}

/// The JSON document (schema in `docs/formats.md`), one line, ending in a newline.
pub fn render_json(d: &MemDiff) -> String {
    let mut out = serde_json::to_string(&json_value(d)).unwrap_or_default();
    out.push('\n');
    out
}

fn totals_json(t: &crate::diff::Totals) -> Value {
    json!({
        "bytes": t.bytes,
        "allocations": t.allocations,
        "used_bytes": t.used,
        "reserved_bytes": t.reserved,
    })
}

/// A difference of two byte counts as a JSON number: an integer whenever it fits in 64 bits
/// (always, but for a fall of more than 2^63 bytes, which only a hostile input gives; that
/// one is written as a float rather than failing the report).
fn delta_json(delta: i128) -> Value {
    if let Ok(v) = i64::try_from(delta) {
        json!(v)
    } else if let Ok(v) = u64::try_from(delta) {
        json!(v)
    } else {
        json_f64(delta as f64)
    }
}

fn pct_json(base: u64, diff: u64) -> Value {
    pct_change(base, diff).map_or(Value::Null, json_f64)
}

/// The version-2 JSON object of one diff (schema in `docs/formats.md`), keys in the
/// documented order.
pub fn json_value(d: &MemDiff) -> Value {
    let groups: Vec<Value> = d.groups.iter().map(group_json).collect();
    let t = &d.verdict.thresholds;
    let opt_f = |v: Option<f64>| v.map_or(Value::Null, json_f64);
    let mut doc = json!({
        "version": 2,
        "coverage": coverage_json(&d.coverage),
        "builds": {"base": d.builds_base, "diff": d.builds_diff},
        "ignored_kinds": d.ignored_kinds,
        "has_kinds": d.has_kinds,
        "groups": groups,
        "kinds": deltas_json(&d.kinds),
        "phases": deltas_json(&d.phases),
        "distribution": distribution_json(&d.distribution),
        "methods": {
            "min_method_bytes": d.min_method_bytes,
            "growth": methods_json(&d.top_growth),
            "shrinkage": methods_json(&d.top_shrinkage),
            "relative_growth": methods_json(&d.top_relative_growth),
            "relative_shrinkage": methods_json(&d.top_relative_shrinkage),
            "tiers": d.tier_tops.iter().map(|t| json!({
                "tier": t.tier,
                "regressions": methods_json(&t.regressions),
                "improvements": methods_json(&t.improvements),
            })).collect::<Vec<Value>>(),
        },
        "thresholds": {
            "fail_above": json_f64(t.fail_above),
            "kind_fail_above": opt_f(t.kind_fail_above),
            "kind_min_bytes": t.kind_min_bytes,
            "method_fail_above": opt_f(t.method_fail_above),
            "method_min_bytes": t.method_min_bytes,
            "tier_min_bytes": t.tier_min_bytes,
            "tier_min_share": json_f64(t.tier_min_share),
            "tier_floor": d.verdict.tier_floor,
        },
        "verdict": {
            "regression": d.verdict.regression,
            "exit_code": u8::from(d.verdict.regression),
            "rule": d.verdict.rule,
            "failures": failures_json(&d.verdict.failures),
            "tiers": tiers_judged_json(&d.verdict.tiers),
        },
        "warnings": d.warnings,
    });
    if let (Some(map), false) = (doc.as_object_mut(), d.phase_kinds.is_empty()) {
        map.insert("phase_kinds".into(), phase_kinds_json(&d.phase_kinds));
    }
    doc
}

/// Each tier group judged on its own against `--fail-above`, or not, with why not.
fn tiers_judged_json(tiers: &[crate::diff::TierJudged]) -> Vec<Value> {
    tiers
        .iter()
        .map(|t| {
            json!({
                "tier": t.tier,
                "base": t.base,
                "diff": t.diff,
                "pct": pct_json(t.base, t.diff),
                "judged": t.skipped.is_none(),
                "skipped": t.skipped,
            })
        })
        .collect()
}

/// A tier group's JSON: its name, methods, both sides' totals and the bytes' percent change.
fn group_json(g: &Group) -> Value {
    json!({
        "name": g.name,
        "methods": g.methods,
        "base": totals_json(&g.base),
        "diff": totals_json(&g.diff),
        "pct": pct_json(g.base.bytes, g.diff.bytes),
    })
}

/// The coverage's JSON: files, matched methods, those on one side only, memory limit hits,
/// failing compiles and duplicate contexts.
fn coverage_json(c: &crate::diff::Coverage) -> Value {
    json!({
        "base_files": c.base_files,
        "diff_files": c.diff_files,
        "matched": c.matched,
        "only_base": c.only_base,
        "only_base_bytes": c.only_base_bytes,
        "only_diff": c.only_diff,
        "only_diff_bytes": c.only_diff_bytes,
        "limit_hits_base": c.limit_hits_base,
        "limit_hits_diff": c.limit_hits_diff,
        "limit_hits_new": c.limit_hits_new,
        "failing_base": c.failing_base,
        "failing_diff": c.failing_diff,
        "failing_base_only": c.failing_base_only,
        "failing_diff_only": c.failing_diff_only,
        "missed_both": c.missed_both,
        "missed_base_failing_diff": c.missed_base_failing_diff,
        "missed_diff_failing_base": c.missed_diff_failing_base,
        "csv_rows": c.csv_rows,
        "duplicates_base": c.duplicates_base,
        "duplicates_diff": c.duplicates_diff,
    })
}

/// Named parts' deltas (kinds, phases) as JSON: name, both sides' bytes, delta and percent.
fn deltas_json(rows: &[Delta]) -> Vec<Value> {
    rows.iter()
        .map(|r| {
            json!({
                "name": r.name,
                "base": r.base,
                "diff": r.diff,
                "delta": delta_json(r.delta()),
                "pct": pct_json(r.base, r.diff),
            })
        })
        .collect()
}

/// Listed methods as JSON: who (context, name, tier), both sides' bytes, delta, percent and
/// the kind that moved most.
fn methods_json(list: &[MethodDelta]) -> Vec<Value> {
    list.iter()
        .map(|m| {
            let (kind, kind_delta) = match &m.top_kind {
                Some((k, v)) => (json!(k), delta_json(*v)),
                None => (Value::Null, Value::Null),
            };
            json!({
                "context": m.context,
                "name": m.name,
                "tier": m.tier,
                "base": m.base,
                "diff": m.diff,
                "delta": delta_json(i128::from(m.diff) - i128::from(m.base)),
                "pct": pct_json(m.base, m.diff),
                "top_kind": kind,
                "top_kind_delta": kind_delta,
            })
        })
        .collect()
}

/// Bytes-per-method percentiles as JSON.
fn quantiles_json(q: &Quantiles) -> Value {
    json!({"p50": q.p50, "p90": q.p90, "p99": q.p99, "max": q.max})
}

/// The per-method distribution as JSON: both sides' percentiles, the counts that grew,
/// shrank and stayed, and the histogram of changes with its buckets.
fn distribution_json(dist: &crate::diff::Distribution) -> Value {
    json!({
        "base": quantiles_json(&dist.base),
        "diff": quantiles_json(&dist.diff),
        "grew": dist.grew,
        "shrank": dist.shrank,
        "same": dist.same,
        "change_buckets": CHANGE_BUCKETS,
        "change_histogram": dist.change_histogram,
    })
}

/// Each rule broken as fields (collection, rule, subject, base, diff, percent, limit) beside
/// the sentence that says it.
/// A failure's percent, rounded as every figure of the JSON is, unless the rounding would
/// bring it to its limit or below (+25.0000001% against 25%): a field that says the limit was
/// not passed beside a verdict that says it was. Then it is written in full.
fn percent_json(percent: f64, limit: Option<f64>) -> Value {
    let rounded = json_f64(percent);
    match (rounded.as_f64(), limit) {
        (Some(r), Some(l)) if percent > l && r <= l => Value::from(percent),
        _ => rounded,
    }
}

fn failures_json(failures: &[crate::diff::Failure]) -> Value {
    failures
        .iter()
        .map(|f| {
            json!({
                "collection": f.collection,
                "rule": f.rule.name(),
                "class": if f.rule.is_coverage() { "INCOMPLETE" } else { "FAIL" },
                "subject": f.subject,
                "base": f.base,
                "diff": f.diff,
                "percent": f.percent.map_or(Value::Null, |p| percent_json(p, f.limit)),
                "limit": f.limit.map_or(Value::Null, json_f64),
                "sentence": f.line(),
            })
        })
        .collect()
}

/// Every recorded (phase, kind) pair: names, both sides' bytes, delta and percent.
fn phase_kinds_json(rows: &[PhaseKindDelta]) -> Value {
    rows.iter()
        .map(|r| {
            json!({
                "phase": r.phase,
                "kind": r.kind,
                "base": r.base,
                "diff": r.diff,
                "delta": delta_json(r.delta()),
                "pct": pct_json(r.base, r.diff),
            })
        })
        .collect()
}

/// SuperPMI's per-tier "Top method regressions" and "Top method improvements" across
/// collections, by PDIFF: each method with its collection, and the floor of the lists.
fn top_methods_json(r: &crate::diff::Report) -> Value {
    let listed = |list: &[(&str, &MethodDelta)]| -> Vec<Value> {
        list.iter()
            .map(|(collection, m)| {
                let mut v = methods_json(std::slice::from_ref(*m)).remove(0);
                if let Some(map) = v.as_object_mut() {
                    map.insert("collection".into(), json!(collection));
                }
                v
            })
            .collect()
    };
    let tiers: Vec<Value> = r
        .tier_tops_across()
        .iter()
        .map(|t| {
            json!({
                "tier": t.tier,
                "regressions": listed(&t.regressions),
                "improvements": listed(&t.improvements),
            })
        })
        .collect();
    json!({
        "min_method_bytes": r.min_method_bytes,
        "top": crate::diff::TIER_TOP,
        "tiers": tiers,
    })
}

/// The JSON document of a memdiff over collections (schema version 3, in `docs/formats.md`):
/// the verdict, the totals over collections, and per collection its coverage and the
/// version-1 document of its diff. One line, ending in a newline.
pub fn render_report_json(r: &crate::diff::Report) -> String {
    let missing = |list: &[crate::diff::Missing]| -> Vec<Value> {
        list.iter()
            .map(|m| {
                json!({
                    "context": m.context,
                    "name": m.name,
                    "tier": m.tier,
                    "bytes": m.bytes,
                })
            })
            .collect()
    };
    let groups: Vec<Value> = ["Overall", "MinOpts", "FullOpts"]
        .iter()
        .map(|g| {
            let (n, b, d) = r.group_totals(g);
            json!({
                "name": g,
                "methods": n,
                "base": totals_json(&b),
                "diff": totals_json(&d),
                "pct": pct_json(b.bytes, d.bytes),
            })
        })
        .collect();
    let collections: Vec<Value> = r
        .collections
        .iter()
        .map(|c| {
            let cov = &c.diff.coverage;
            json!({
                "name": c.name,
                "status": c.status().label(),
                "exit_code": c.status().exit_code(),
                "coverage_failures": failures_json(&c.coverage_failures),
                "missing_in_diff": missing(&cov.missing_in_diff),
                "missing_in_base": missing(&cov.missing_in_base),
                "failing_in_diff": missing(&cov.failing_in_diff),
                "failing_in_base": missing(&cov.failing_in_base),
                "duplicates": cov.duplicate_examples.iter().map(|d| json!({
                    "side": d.side,
                    "context": d.context,
                    "records": d.records,
                    "files": d.files,
                    "more_files": d.more_files,
                })).collect::<Vec<Value>>(),
                "truncated": cov.truncated,
                "diff": json_value(&c.diff),
            })
        })
        .collect();
    let one_sided: Vec<Value> = r
        .one_sided
        .iter()
        .map(|s| json!({"name": s.name, "reason": s.reason}))
        .collect();
    let (base_missed, diff_missed) = r.missed();
    let o = &r.outcome;
    let mut doc = json!({
        "schema_version": 3,
        "verdict": {
            "status": o.status.label(),
            "exit_code": o.status.exit_code(),
            "rule": o.rule,
            "headline": o.headline,
            "failures": failures_json(&o.failures),
        },
        "coverage_rules": {
            "max_missed": json_f64(r.rules.max_missed),
            "allow_truncated": r.rules.allow_truncated,
            "allow_failing_compiles": r.rules.allow_failing_compiles,
            "allow_duplicates": r.rules.allow_duplicates,
        },
        "min_delta_bytes": r.min_delta_bytes,
        "top_methods": top_methods_json(r),
        "totals": groups,
        "missed": {"by_base": base_missed, "by_diff": diff_missed},
        "one_sided": one_sided,
        "collections": collections,
    });
    let across = r.phase_kinds_across();
    if let (Some(map), false) = (doc.as_object_mut(), across.is_empty()) {
        map.insert("phase_kinds".into(), phase_kinds_json(&across));
    }
    let mut out = serde_json::to_string(&doc).unwrap_or_default();
    out.push('\n');
    out
}
