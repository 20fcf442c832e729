//! The memdiff report over collections: the markdown summary for a pull request (in the shape
//! of the .NET JIT replay tool's diff summaries), the long markdown with every collection's
//! detail, and the console text.
//!
//! Every name (collection, method, kind, phase, tier) goes through [`md_text`] or [`shown`]:
//! no name can add markup to a report.

use std::fmt::Write as _;

use super::diff::{
    colored, colored_pdiff, delta_details, details, mark, method_label, part_pdiff, pdiff,
    phase_kinds_details, phase_kinds_text, render_collection_markdown, render_text_body,
    span_colored,
};
use super::{md_text, pct, shown, signed_thousands, thousands, visible};
use crate::diff::{pct_change, Delta, Report, Status, Totals};

/// The tier groups the summary shows, in order.
const GROUPS: [&str; 3] = ["Overall", "MinOpts", "FullOpts"];

/// Rows shown in the summary's lists (kinds, phases, methods).
const SUMMARY_ROWS: usize = 10;

fn verdict_words(r: &Report) -> String {
    let o = &r.outcome;
    format!("{} (exit {})", o.status.label(), o.status.exit_code())
}

fn contexts_line(r: &Report) -> String {
    let (all, _, _) = r.group_totals("Overall");
    let (min, _, _) = r.group_totals("MinOpts");
    let (full, _, _) = r.group_totals("FullOpts");
    format!(
        "Diffs are based on {} contexts ({} MinOpts, {} FullOpts).",
        thousands(all),
        thousands(min),
        thousands(full)
    )
}

fn missed_line(r: &Report) -> String {
    let (base_missed, diff_missed) = r.missed();
    let (mut base_side, mut diff_side) = (0, 0);
    for c in &r.collections {
        let cov = &c.diff.coverage;
        base_side += cov.base_contexts();
        diff_side += cov.diff_contexts();
    }
    format!(
        "MISSED contexts: base: {} ({}), diff: {} ({})",
        thousands(base_missed),
        pct(base_missed, diff_side),
        thousands(diff_missed),
        pct(diff_missed, base_side)
    )
}

/// The build ids each side's logs name, over every collection, when any names one.
fn builds_line(r: &Report) -> Option<String> {
    let mut sides: [Vec<&str>; 2] = [Vec::new(), Vec::new()];
    for c in &r.collections {
        for (side, builds) in sides
            .iter_mut()
            .zip([&c.diff.builds_base, &c.diff.builds_diff])
        {
            for b in builds {
                if !side.contains(&b.as_str()) {
                    side.push(b);
                }
            }
        }
    }
    let said = |s: &[&str]| match s {
        [] => "none named".to_string(),
        _ => s
            .iter()
            .map(|b| shown(b).into_owned())
            .collect::<Vec<_>>()
            .join(", "),
    };
    (!sides[0].is_empty() || !sides[1].is_empty())
        .then(|| format!("Builds: base {}; diff {}", said(&sides[0]), said(&sides[1])))
}

/// SuperPMI's "Failing compiles" per side, as its `superpmi.py` counts them (a compile that
/// failed on both sides counts on both), when any compile failed.
fn failing_line(r: &Report) -> Option<String> {
    let (base, diff) = r.collections.iter().fold((0, 0), |(b, d), c| {
        let cov = &c.diff.coverage;
        (b + cov.failing_base, d + cov.failing_diff)
    });
    (base + diff > 0).then(|| {
        format!(
            "FAILING compiles: base: {}, diff: {}",
            thousands(base),
            thousands(diff)
        )
    })
}

/// Records beyond the first of their context, per side, when there are any.
fn duplicates_line(r: &Report) -> Option<String> {
    let (base, diff) = r.collections.iter().fold((0, 0), |(b, d), c| {
        let cov = &c.diff.coverage;
        (b + cov.duplicates_base, d + cov.duplicates_diff)
    });
    (base + diff > 0).then(|| {
        format!(
            "DUPLICATE contexts (records beyond the first of their context): base: {}, diff: {}",
            thousands(base),
            thousands(diff)
        )
    })
}

/// The kinds `--ignore-kind` left out, when it left any out: a gate run with fewer kinds is
/// said where the reviewer reads the verdict.
fn ignored_line(r: &Report) -> Option<String> {
    let mut kinds: Vec<&str> = r
        .collections
        .iter()
        .flat_map(|c| c.diff.ignored_kinds.iter().map(String::as_str))
        .collect();
    kinds.sort_unstable();
    kinds.dedup();
    let names: Vec<String> = kinds.iter().map(|k| md_text(&shown(k))).collect();
    (!names.is_empty()).then(|| {
        format!(
            "IGNORED kinds (--ignore-kind; left out of every total and rule): {}",
            names.join(", ")
        )
    })
}

/// What a CSV cannot give, said where a collection came from one.
fn no_kinds_note(r: &Report) -> Option<&'static str> {
    r.collections.iter().any(|c| !c.diff.has_kinds).then_some(
        "Kinds and phases: not in a CSV, which holds one total per context (SuperPMI's BytesAllocated). A JIT that links jitarena records each method's bytes by kind and by phase in its stats log (docs/adopting.md), and memdiff over those logs shows them.",
    )
}

/// Whether a change shows when rounded to two decimals.
fn significant(base: u64, diff: u64) -> bool {
    pct_change(base, diff).map_or(diff != base, |p| (p * 100.0).round() != 0.0)
}

/// The collections whose `group` changed significantly: (name, base bytes, diff bytes).
fn significant_rows<'a>(r: &'a Report, group: &str) -> Vec<(&'a str, u64, u64)> {
    r.by_status()
        .into_iter()
        .filter_map(|c| {
            c.group(group)
                .map(|g| (c.name.as_str(), g.base.bytes, g.diff.bytes))
        })
        .filter(|&(_, b, d)| significant(b, d))
        .collect()
}

/// `+0.12% to +31.40%` (colored), or one figure when the change is the same everywhere.
fn range(rows: &[(&str, u64, u64)]) -> String {
    let by_pct = |&&(_, b, d): &&(&str, u64, u64)| pct_change(b, d).unwrap_or(f64::INFINITY);
    let lo = rows.iter().min_by(|a, b| by_pct(a).total_cmp(&by_pct(b)));
    let hi = rows.iter().max_by(|a, b| by_pct(a).total_cmp(&by_pct(b)));
    match (lo, hi) {
        (Some(lo), Some(hi)) if pdiff(lo.1, lo.2) != pdiff(hi.1, hi.2) => {
            let marks = match (mark(lo.1, lo.2), mark(hi.1, hi.2)) {
                (a, b) if a == b => a.to_string(),
                (a, b) => format!("{a}{b}"),
            };
            format!(
                "{} to {} {marks}",
                span_colored(lo.1, lo.2, &pdiff(lo.1, lo.2)),
                span_colored(hi.1, hi.2, &pdiff(hi.1, hi.2))
            )
        }
        (Some(lo), _) => colored_pdiff(lo.1, lo.2),
        _ => String::new(),
    }
}

/// The pull request summary.
pub fn render_markdown(r: &Report) -> String {
    let mut o = String::new();
    let icon = if r.outcome.status == Status::Pass {
        "✅"
    } else {
        "❌"
    };
    let _ = writeln!(o, "## jitarena memdiff: {icon} {}", verdict_words(r));
    let _ = writeln!(o);
    verdict_md(&mut o, r);
    pdiff_table_md(&mut o, r);
    summary_lines_md(&mut o, r);
    significant_groups_md(&mut o, r);
    details(&mut o, "Details", |o| {
        for (group, title) in GROUPS.iter().zip(["All contexts", "MinOpts", "FullOpts"]) {
            totals_table(o, r, group, title);
        }
        coverage_table(o, r);
    });
    tier_tops_md(&mut o, r);
    moved_across_details(&mut o, r);
    failed_collections_details(&mut o, r);
    top_growth_details(&mut o, r);
    missing_details(&mut o, r, SUMMARY_ROWS);
    failing_details(&mut o, r, SUMMARY_ROWS);
    duplicate_details(&mut o, r, SUMMARY_ROWS);
    o
}

/// Rows of the first screen's table of collections, at most.
const PDIFF_ROWS: usize = 30;

/// The first screen's table: per collection, the failing ones first, the PDIFF of its
/// Overall, MinOpts and FullOpts bytes and its verdict (raw byte counts are in the Details).
fn pdiff_table_md(o: &mut String, r: &Report) {
    let compared = r.by_status();
    if compared.is_empty() && r.one_sided.is_empty() {
        let _ = writeln!(o, "No collection was compared.");
        let _ = writeln!(o);
        return;
    }
    let _ = writeln!(o, "PDIFF per collection (Lower is better):");
    let _ = writeln!(o);
    let _ = writeln!(o, "|Collection|Overall|MinOpts|FullOpts|Verdict|");
    let _ = writeln!(o, "|---|--:|--:|--:|---|");
    // Failing collections first: those not compared, then those that failed.
    let mut rows: Vec<String> = r
        .one_sided
        .iter()
        .map(|s| {
            format!(
                "|{}|not compared|||{}|",
                md_text(&shown(&s.name)),
                Status::Incomplete.label()
            )
        })
        .collect();
    let row = |c: &crate::diff::CollectionDiff| {
        let cell = |g: &str| {
            c.group(g)
                .map_or(String::new(), |g| colored_pdiff(g.base.bytes, g.diff.bytes))
        };
        format!(
            "|{}|{}|{}|{}|{}|",
            md_text(&shown(&c.name)),
            cell("Overall"),
            cell("MinOpts"),
            cell("FullOpts"),
            c.status().label()
        )
    };
    rows.extend(compared.into_iter().map(row));
    let more = rows.len().saturating_sub(PDIFF_ROWS);
    for line in rows.into_iter().take(PDIFF_ROWS) {
        let _ = writeln!(o, "{line}");
    }
    let _ = writeln!(o);
    if more > 0 {
        let _ = writeln!(
            o,
            "And {} more collection{} (every one in the Details below).",
            thousands(more as u64),
            if more == 1 { "" } else { "s" }
        );
        let _ = writeln!(o);
    }
}

/// Per tier group (FullOpts, then MinOpts), SuperPMI's "Top method regressions" and "Top
/// method improvements" across collections, by PDIFF, each in a `<details>` block, or one
/// line when the tier has none.
fn tier_tops_md(o: &mut String, r: &Report) {
    let floor = super::bytes_floor(r.min_method_bytes);
    for t in r.tier_tops_across() {
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
                    "{} across collections, of the methods of at least {floor} in the base (--min-method-bytes).",
                    super::largest_changes(list.len())
                );
                let _ = writeln!(o);
                let _ = writeln!(o, "|Collection|Context|Method|Base|Diff|PDIFF|");
                let _ = writeln!(o, "|---|--:|---|--:|--:|--:|");
                for (name, m) in list {
                    let _ = writeln!(
                        o,
                        "|{}|{}|{}|{}|{}|{}|",
                        md_text(&shown(name)),
                        context(m.context),
                        md_text(&shown(m.name.as_deref().unwrap_or("(unknown method)"))),
                        thousands(m.base),
                        thousands(m.diff),
                        colored_pdiff(m.base, m.diff)
                    );
                }
            });
        }
    }
}

/// The summary's paragraphs under the verdict: the builds, the contexts compared, those
/// missed, failing compiles, duplicate contexts, what a CSV lacks and the collections not
/// compared (each only when there is something to say).
fn summary_lines_md(o: &mut String, r: &Report) {
    if let Some(line) = builds_line(r) {
        let _ = writeln!(o, "{}", md_text(&line));
        let _ = writeln!(o);
    }
    let _ = writeln!(o, "{}", contexts_line(r));
    let _ = writeln!(o);
    let _ = writeln!(o, "{}", missed_line(r));
    let _ = writeln!(o);
    if let Some(line) = failing_line(r) {
        let _ = writeln!(o, "{line}");
        let _ = writeln!(o);
    }
    if let Some(line) = duplicates_line(r) {
        let _ = writeln!(o, "{line}");
        let _ = writeln!(o);
    }
    if let Some(note) = no_kinds_note(r) {
        let _ = writeln!(o, "{note}");
        let _ = writeln!(o);
    }
    if let Some(line) = ignored_line(r) {
        let _ = writeln!(o, "{line}");
        let _ = writeln!(o);
    }
    if !r.one_sided.is_empty() {
        let names: Vec<String> = r
            .one_sided
            .iter()
            .map(|s| md_text(&shown(&s.name)))
            .collect();
        let _ = writeln!(
            o,
            "NOT COMPARED collections: {} ({})",
            r.one_sided.len(),
            names.join(", ")
        );
        let _ = writeln!(o);
    }
}

/// Per tier group, a `<details>` block of the collections whose bytes changed significantly,
/// summarized by the range of their PDIFFs; or, when none did, a sentence that says so.
fn significant_groups_md(o: &mut String, r: &Report) {
    let mut any = false;
    for group in GROUPS {
        let rows = significant_rows(r, group);
        if rows.is_empty() {
            continue;
        }
        any = true;
        let _ = writeln!(o, "<details>");
        let _ = writeln!(o, "<summary>{group} ({})</summary>", range(&rows));
        let _ = writeln!(o);
        let _ = writeln!(o, "|Collection|PDIFF|");
        let _ = writeln!(o, "|---|--:|");
        for (name, b, d) in rows {
            let _ = writeln!(o, "|{}|{}|", md_text(&shown(name)), colored_pdiff(b, d));
        }
        let _ = writeln!(o);
        let _ = writeln!(o, "</details>");
        let _ = writeln!(o);
    }
    if !any {
        // The replay tool's words, but only where the verdict agrees with them: a kind's
        // growth fails with the totals unmoved.
        let text = match r.outcome.status {
            Status::Pass => "No significant memory differences found",
            _ => "No collection's total changed significantly; the verdict above names the rule that decided",
        };
        let _ = writeln!(o, "{text}");
        let _ = writeln!(o);
    }
}

/// The `<details>` blocks of the kinds, phases and (phase, kind) pairs that moved most,
/// summed across collections; each only when something moved.
fn moved_across_details(o: &mut String, r: &Report) {
    let kinds = r.deltas_across(false);
    if kinds.iter().any(|k| k.base != k.diff) {
        delta_details(
            o,
            "Kinds that moved, across collections",
            "Kind",
            &kinds,
            SUMMARY_ROWS,
        );
    }
    let phases = r.deltas_across(true);
    if phases.iter().any(|k| k.base != k.diff) {
        delta_details(
            o,
            "Phases that moved, across collections",
            "Phase",
            &phases,
            SUMMARY_ROWS,
        );
    }
    phase_kinds_details(
        o,
        "Kinds by phase, across collections",
        &r.phase_kinds_across(),
        SUMMARY_ROWS,
    );
}

/// When more than one collection was compared, a `<details>` block with the kinds and
/// phases that moved in each collection that failed its thresholds.
fn failed_collections_details(o: &mut String, r: &Report) {
    let failed: Vec<_> = r
        .collections
        .iter()
        .filter(|c| c.diff.verdict.regression && r.collections.len() > 1)
        .collect();
    if failed.is_empty() {
        return;
    }
    details(
        o,
        "Kinds and phases that moved in each failed collection",
        |o| {
            for c in failed {
                let _ = writeln!(o, "Collection {}:", md_text(&shown(&c.name)));
                let _ = writeln!(o);
                let moved = |rows: &[Delta]| rows.iter().any(|d| d.base != d.diff);
                if !moved(&c.diff.kinds) && !moved(&c.diff.phases) {
                    let _ = writeln!(o, "No kind or phase moved.");
                    let _ = writeln!(o);
                }
                for (what, rows) in [("Kind", &c.diff.kinds), ("Phase", &c.diff.phases)] {
                    moved_table_md(o, what, rows);
                }
            }
        },
    );
}

/// The markdown table of the `what`s (kinds or phases) of `rows` that moved, at most
/// [`SUMMARY_ROWS`]; nothing when none moved.
fn moved_table_md(o: &mut String, what: &str, rows: &[Delta]) {
    let rows: Vec<_> = rows.iter().filter(|d| d.base != d.diff).collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(o, "|{what}|Base|Diff|Delta|PDIFF|");
    let _ = writeln!(o, "|---|--:|--:|--:|--:|");
    for d in rows.into_iter().take(SUMMARY_ROWS) {
        let _ = writeln!(
            o,
            "|{}|{}|{}|{}|{}|",
            md_text(&shown(&d.name)),
            thousands(d.base),
            thousands(d.diff),
            signed_thousands(d.delta()),
            colored(d.base, d.diff, part_pdiff(d.base, d.diff))
        );
    }
    let _ = writeln!(o);
}

/// The `<details>` block of the methods that grew most across collections (by at least the
/// smallest delta reported), when any did.
fn top_growth_details(o: &mut String, r: &Report) {
    let grew = r.top_growth_across(SUMMARY_ROWS);
    if grew.is_empty() {
        return;
    }
    let title = format!(
        "Methods that grew most (by at least {} bytes)",
        thousands(r.min_delta_bytes.max(1))
    );
    details(o, &title, |o| {
        let _ = writeln!(o, "|Collection|Context|Method|Base|Diff|PDIFF|");
        let _ = writeln!(o, "|---|--:|---|--:|--:|--:|");
        for (name, m) in grew {
            let _ = writeln!(
                o,
                "|{}|{}|{}|{}|{}|{}|",
                md_text(&shown(name)),
                context(m.context),
                md_text(&shown(m.name.as_deref().unwrap_or("(unknown method)"))),
                thousands(m.base),
                thousands(m.diff),
                colored_pdiff(m.base, m.diff)
            );
        }
    });
}

/// The largest contexts that failed to compile on one side only, across collections.
fn failing_details(o: &mut String, r: &Report, n: usize) {
    let mut all: Vec<(&str, &str, &crate::diff::Missing)> = Vec::new();
    for c in &r.collections {
        let cov = &c.diff.coverage;
        all.extend(
            cov.failing_in_diff
                .iter()
                .map(|m| (c.name.as_str(), "diff", m)),
        );
        all.extend(
            cov.failing_in_base
                .iter()
                .map(|m| (c.name.as_str(), "base", m)),
        );
    }
    if all.is_empty() {
        return;
    }
    all.sort_by(|a, b| {
        b.2.bytes
            .cmp(&a.2.bytes)
            .then_with(|| a.0.cmp(b.0))
            .then_with(|| a.2.context.cmp(&b.2.context))
    });
    details(
        o,
        "Contexts that failed to compile on one side only (largest first)",
        |o| {
            let _ = writeln!(
                o,
                "|Collection|Failed in|Context|Method|Tier|Bytes on the other side|"
            );
            let _ = writeln!(o, "|---|---|--:|---|---|--:|");
            for (name, side, m) in all.into_iter().take(n) {
                let _ = writeln!(
                    o,
                    "|{}|{side}|{}|{}|{}|{}|",
                    md_text(&shown(name)),
                    context(m.context),
                    md_text(&shown(m.name.as_deref().unwrap_or("(unknown method)"))),
                    md_text(&shown(m.tier.as_deref().unwrap_or(""))),
                    thousands(m.bytes)
                );
            }
        },
    );
}

/// The first contexts seen more than once on a side, with their files.
fn duplicate_details(o: &mut String, r: &Report, n: usize) {
    let all: Vec<(&str, &crate::diff::Duplicate)> = r
        .collections
        .iter()
        .flat_map(|c| {
            c.diff
                .coverage
                .duplicate_examples
                .iter()
                .map(|d| (c.name.as_str(), d))
        })
        .take(n)
        .collect();
    if all.is_empty() {
        return;
    }
    details(o, "Contexts seen more than once on a side", |o| {
        let _ = writeln!(o, "|Collection|Side|Context|Records|");
        let _ = writeln!(o, "|---|---|--:|---|");
        for (name, d) in all {
            let _ = writeln!(
                o,
                "|{}|{}|{}|{}|",
                md_text(&shown(name)),
                d.side,
                d.context,
                d.place(|f| md_text(&shown(f)))
            );
        }
    });
}

fn context(c: i64) -> String {
    if c >= 0 {
        c.to_string()
    } else {
        String::new()
    }
}

fn totals_table(o: &mut String, r: &Report, group: &str, title: &str) {
    let rows: Vec<_> = r
        .by_status()
        .into_iter()
        .filter_map(|c| c.group(group).map(|g| (c.name.as_str(), g.base, g.diff)))
        .collect();
    if rows.is_empty() {
        let _ = writeln!(o, "{title}: no contexts.");
        let _ = writeln!(o);
        return;
    }
    let _ = writeln!(o, "{title}:");
    let _ = writeln!(o);
    let _ = writeln!(o, "|Collection|Base bytes|Diff bytes|PDIFF|");
    let _ = writeln!(o, "|---|--:|--:|--:|");
    let row = |o: &mut String, name: &str, b: &Totals, d: &Totals| {
        let _ = writeln!(
            o,
            "|{name}|{}|{}|{}|",
            thousands(b.bytes),
            thousands(d.bytes),
            colored_pdiff(b.bytes, d.bytes)
        );
    };
    for (name, b, d) in &rows {
        row(o, &md_text(&shown(name)), b, d);
    }
    if rows.len() > 1 {
        let (_, b, d) = r.group_totals(group);
        row(o, "**Total**", &b, &d);
    }
    let _ = writeln!(o);
}

fn coverage_table(o: &mut String, r: &Report) {
    if r.collections.is_empty() && r.one_sided.is_empty() {
        let _ = writeln!(o, "Coverage: no collection was compared.");
        coverage_warnings(o, r);
        return;
    }
    let _ = writeln!(o, "Coverage:");
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "|Collection|Matched|Missed by base|Missed by diff|Logs cut short|"
    );
    let _ = writeln!(o, "|---|--:|--:|--:|--:|");
    // Failing collections first: those not compared, then those that failed, then the rest.
    for s in &r.one_sided {
        let _ = writeln!(
            o,
            "|{}|not compared: {}||||",
            md_text(&shown(&s.name)),
            md_text(&s.reason)
        );
    }
    for c in r.by_status() {
        let cov = &c.diff.coverage;
        let _ = writeln!(
            o,
            "|{}|{}|{} ({})|{} ({})|{}|",
            md_text(&shown(&c.name)),
            thousands(cov.matched),
            thousands(cov.missed_by_base()),
            pct(cov.missed_by_base(), cov.diff_contexts()),
            thousands(cov.missed_by_diff()),
            pct(cov.missed_by_diff(), cov.base_contexts()),
            cov.truncated.len()
        );
    }
    coverage_warnings(o, r);
}

/// The readers' warnings under the coverage table, at most [`WARNINGS_SHOWN`].
fn coverage_warnings(o: &mut String, r: &Report) {
    let warnings = r.warnings();
    if !warnings.is_empty() {
        let _ = writeln!(o);
        let _ = writeln!(o, "Warnings ({}):", thousands(warnings.len() as u64));
        let _ = writeln!(o);
        for w in warnings.iter().take(WARNINGS_SHOWN) {
            let _ = writeln!(o, "- {}", md_text(&shown(w)));
        }
        if warnings.len() > WARNINGS_SHOWN {
            let _ = writeln!(
                o,
                "- and {} more (all of them in the JSON report and on standard error)",
                thousands((warnings.len() - WARNINGS_SHOWN) as u64)
            );
        }
    }
}

/// The readers' warnings the summary lists, at most.
const WARNINGS_SHOWN: usize = 20;

fn missing_details(o: &mut String, r: &Report, n: usize) {
    let missing = r.missing_across(n);
    if missing.is_empty() {
        return;
    }
    details(
        o,
        "Largest methods compiled on one side only (where a JIT crashed or skipped)",
        |o| {
            let _ = writeln!(o, "|Collection|Missing from|Context|Method|Tier|Bytes|");
            let _ = writeln!(o, "|---|---|--:|---|---|--:|");
            for (name, side, m) in missing {
                let _ = writeln!(
                    o,
                    "|{}|{side}|{}|{}|{}|{}|",
                    md_text(&shown(name)),
                    context(m.context),
                    md_text(&shown(m.name.as_deref().unwrap_or("(unknown method)"))),
                    md_text(&shown(m.tier.as_deref().unwrap_or(""))),
                    thousands(m.bytes)
                );
            }
        },
    );
}

/// The verdict and why, in one sentence (the collection, the rule, the figure, the limit),
/// then every rule broken when there are several.
fn verdict_md(o: &mut String, r: &Report) {
    let out = &r.outcome;
    let _ = writeln!(o, "**{}**: {}", out.status.label(), md_text(&out.headline));
    let _ = writeln!(o);
    if out.failures.len() > 1 {
        for f in &out.failures {
            let class = if f.rule.is_coverage() {
                "INCOMPLETE"
            } else {
                "FAIL"
            };
            let _ = writeln!(o, "- {class}: {}", md_text(&f.line()));
        }
        let _ = writeln!(o);
    }
}

/// The long markdown: the summary, then every collection's full detail.
pub fn render_long_markdown(r: &Report) -> String {
    let mut o = render_markdown(r);
    for c in r.by_status() {
        let _ = writeln!(o);
        let heading = format!("## Collection {}", md_text(&shown(&c.name)));
        o.push_str(&render_collection_markdown(
            &c.diff,
            &heading,
            true,
            &c.coverage_failures,
        ));
    }
    o
}

/// The console report: one collection in full, or a table of collections with what moved
/// across them; then the coverage and the verdict.
pub fn render_text(r: &Report) -> String {
    let mut o = String::new();
    match (r.collections.as_slice(), r.one_sided.is_empty()) {
        ([only], true) => {
            o.push_str(&render_text_body(&only.diff));
            if let Some(line) = builds_line(r) {
                let _ = writeln!(o, "{}", visible(&line));
            }
        }
        _ => collections_text(&mut o, r),
    }
    let missing = r.missing_across(10);
    if !missing.is_empty() {
        let _ = writeln!(o);
        let _ = writeln!(o, "Largest methods compiled on one side only");
        for (name, side, m) in missing {
            let _ = writeln!(
                o,
                "  {:>13}  missing from {side:<4}  {}  {}{}",
                thousands(m.bytes),
                shown(name),
                shown(m.name.as_deref().unwrap_or("(unknown method)")),
                if m.context >= 0 {
                    format!(" [context {}]", m.context)
                } else {
                    String::new()
                }
            );
        }
    }
    sites_hint(&mut o, r);
    let _ = writeln!(o);
    let _ = writeln!(o, "{}: {}", verdict_words(r), visible(&r.outcome.rule));
    if r.outcome.failures.len() > 1 {
        for f in &r.outcome.failures {
            let _ = writeln!(o, "  - {}", visible(&f.line()));
        }
    }
    o
}

/// After a regression, before the verdict: which contexts to replay with the trace on to see the allocation sites
/// that grew, and the commands (`docs/memdiff.md`, "From the gate to the site").
fn sites_hint(o: &mut String, r: &Report) {
    let grew: Vec<(&str, String)> = r
        .collections
        .iter()
        .filter(|c| c.diff.verdict.regression)
        .filter_map(|c| {
            let contexts: Vec<String> = c
                .diff
                .top_growth
                .iter()
                .filter(|m| m.context >= 0 && m.diff > m.base)
                .take(3)
                .map(|m| m.context.to_string())
                .collect();
            (!contexts.is_empty()).then(|| (c.name.as_str(), contexts.join(",")))
        })
        .collect();
    if grew.is_empty() {
        return;
    }
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "Which allocation sites grew: replay the contexts that grew most with both JITs and the trace on, then diff their sites:"
    );
    for (name, contexts) in grew {
        let mch = collection_file(name);
        let _ = writeln!(
            o,
            "  {}: JITARENA_TRACE=sites/%m.jat superpmi -c {contexts} <base JIT> <diff JIT> {mch}",
            shown(name),
        );
    }
    let _ = writeln!(
        o,
        "  then: jitarena sites sites/<base JIT>.jat sites/<diff JIT>.jat --base-module <base JIT> --diff-module <diff JIT>"
    );
}

/// The collection file a suggested command names, quoted for the shell it is pasted into: a
/// CSV's collection is named after its file, `.mch` included; a pair of logs given as such
/// (`a vs b`), or a name that cannot be pasted as it is (control characters, longer than a
/// report shows), names none: `<collection>.mch`. A name that starts with `-` gets `./`, so
/// that it is never taken for an option.
fn collection_file(name: &str) -> String {
    let file = match name.ends_with(".mch") {
        true => name.to_string(),
        false => format!("{name}.mch"),
    };
    let pasteable = !file.chars().any(char::is_control) && file.chars().count() <= 200;
    match (name.contains(" vs "), pasteable, file.starts_with('-')) {
        (false, true, false) => shell_quoted(&file),
        (false, true, true) => shell_quoted(&format!("./{file}")),
        _ => "<collection>.mch".to_string(),
    }
}

/// `word` as one word of a POSIX shell: as it is when it holds only letters, digits and
/// `._/+-:@%,=`, else in single quotes (a quote inside as `'\''`), so that a collection named
/// `x; rm -rf ~` is pasted as a file name, never run.
fn shell_quoted(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "._/+-:@%,=".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', "'\\''"))
}

/// The console report over several collections: a header, a table of the collections, then
/// what moved most across them.
fn collections_text(o: &mut String, r: &Report) {
    collections_header_text(o, r);
    collections_table_text(o, r);
    moved_across_text(o, r);
    phase_kinds_text(o, &r.phase_kinds_across(), SUMMARY_ROWS);
    top_growth_text(o, r);
}

/// The console lines above the collections' table: how many collections, the contexts
/// compared and missed, the collections not compared and the builds.
fn collections_header_text(o: &mut String, r: &Report) {
    let _ = writeln!(
        o,
        "jitarena memdiff: {} collection{}",
        r.collections.len() + r.one_sided.len(),
        if r.collections.len() + r.one_sided.len() == 1 {
            ""
        } else {
            "s"
        }
    );
    let _ = writeln!(o, "{}", contexts_line(r));
    let _ = writeln!(o, "{}", missed_line(r));
    if !r.one_sided.is_empty() {
        let _ = writeln!(o, "NOT COMPARED collections: {}", r.one_sided.len());
    }
    if let Some(line) = builds_line(r) {
        let _ = writeln!(o, "{}", visible(&line));
    }
}

/// The console table of the collections: per collection its methods, bytes, PDIFF, misses
/// and verdict (or why it was not compared), then the total.
fn collections_table_text(o: &mut String, r: &Report) {
    let _ = writeln!(o);
    let w = r
        .collections
        .iter()
        .map(|c| shown(&c.name).chars().count())
        .chain(r.one_sided.iter().map(|c| shown(&c.name).chars().count()))
        .max()
        .unwrap_or(0)
        .max(24);
    let _ = writeln!(
        o,
        "{:<w$} {:>12} {:>16} {:>16} {:>9}  {:>9} {:>9}  verdict",
        "Collection", "Methods", "Base bytes", "Diff bytes", "PDIFF", "base miss", "diff miss"
    );
    for s in &r.one_sided {
        let _ = writeln!(
            o,
            "{:<w$} not compared: {}",
            shown(&s.name),
            visible(&s.reason)
        );
    }
    for c in r.by_status() {
        let g = c.diff.overall();
        let cov = &c.diff.coverage;
        let verdict = c.status().label();
        let _ = writeln!(
            o,
            "{:<w$} {:>12} {:>16} {:>16} {:>9}  {:>9} {:>9}  {verdict}",
            shown(&c.name),
            thousands(cov.matched),
            thousands(g.base.bytes),
            thousands(g.diff.bytes),
            pdiff(g.base.bytes, g.diff.bytes),
            thousands(cov.missed_by_base()),
            thousands(cov.missed_by_diff()),
        );
    }
    let (n, b, d) = r.group_totals("Overall");
    let _ = writeln!(
        o,
        "{:<w$} {:>12} {:>16} {:>16} {:>9}",
        "Total",
        thousands(n),
        thousands(b.bytes),
        thousands(d.bytes),
        pdiff(b.bytes, d.bytes)
    );
}

/// The console lists of the kinds and of the phases that moved most across collections;
/// each only when something moved.
fn moved_across_text(o: &mut String, r: &Report) {
    for (title, phases) in [("Kinds", false), ("Phases", true)] {
        let rows = r.deltas_across(phases);
        let changed: Vec<_> = rows.iter().filter(|d| d.base != d.diff).collect();
        if changed.is_empty() {
            continue;
        }
        let _ = writeln!(o);
        let _ = writeln!(
            o,
            "{title} that moved most, across collections ({} changed)",
            changed.len()
        );
        for d in changed.into_iter().take(SUMMARY_ROWS) {
            let _ = writeln!(
                o,
                "  {:<30} {:>16} {:>16} {:>15} {:>9}",
                shown(&d.name),
                thousands(d.base),
                thousands(d.diff),
                signed_thousands(d.delta()),
                part_pdiff(d.base, d.diff)
            );
        }
    }
}

/// The console list of the methods that grew most across collections, when any did.
fn top_growth_text(o: &mut String, r: &Report) {
    let grew = r.top_growth_across(SUMMARY_ROWS);
    if grew.is_empty() {
        return;
    }
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "Methods that grew most (by at least {} bytes)",
        thousands(r.min_delta_bytes.max(1))
    );
    for (name, m) in grew {
        let _ = writeln!(
            o,
            "  {:>13} {:>9}  {}  {}",
            signed_thousands(i128::from(m.diff) - i128::from(m.base)),
            pdiff(m.base, m.diff),
            shown(name),
            method_label(m)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::shell_quoted;

    /// A quoted name reaches a command as itself, whatever it holds: never run.
    #[cfg(unix)]
    #[test]
    fn a_quoted_name_is_one_word_of_the_shell() {
        for name in [
            "libraries.pmi.windows.x64.checked.mch",
            "x; touch /tmp/jitarena-pwned #.mch",
            "it's $(id) `id` \\ \"q\" *.mch",
            "",
        ] {
            let quoted = shell_quoted(name);
            let out = std::process::Command::new("sh")
                .args(["-c", &format!("printf %s {quoted}")])
                .output()
                .unwrap();
            assert_eq!(String::from_utf8_lossy(&out.stdout), name, "{quoted}");
        }
        assert_eq!(
            shell_quoted("a.mch"),
            "a.mch",
            "a plain name stays as it is"
        );
    }

    /// The file named is the collection's own, once `.mch`, never an option, or none.
    #[test]
    fn a_collection_names_its_file_once() {
        use super::collection_file;
        assert_eq!(collection_file("x.mch"), "x.mch");
        assert_eq!(collection_file("x"), "x.mch");
        assert_eq!(collection_file("-rf"), "./-rf.mch");
        assert_eq!(collection_file("a\u{7}b"), "<collection>.mch");
        assert_eq!(collection_file("a.jas vs b.jas"), "<collection>.mch");
        assert_eq!(collection_file(&"n".repeat(300)), "<collection>.mch");
    }
}
