//! The memdiff HTML page: one self-contained file (no network, no scripts) with the pictures
//! people would rather look at than read: per-kind delta bars, a base-versus-diff scatter of
//! methods and the distribution of per-method change. Written as well-formed XHTML.

use std::fmt::Write as _;

use super::diff::{html_escape as esc, part_pdiff, pdiff, render_text};
use super::{shown, signed_thousands, thousands};
use crate::diff::{Delta, MemDiff, MethodDelta, PhaseKindDelta, Report, Status, CHANGE_BUCKETS};

const RED: &str = "#c62828";
const GREEN: &str = "#2e7d32";
const GREY: &str = "#9e9e9e";

/// The page of a memdiff over collections: the verdict, a table and a chart of the
/// collections, the kinds that moved across them, the methods found on one side only, then
/// each collection's own sections and the console report.
pub fn render_report_html(r: &Report) -> String {
    let mut o = String::new();
    page_head(&mut o);
    report_verdict(&mut o, r);
    collections_table(&mut o, r);
    tier_tops_across(&mut o, r);
    moved_across_sections(&mut o, r);
    one_sided_methods_table(&mut o, r);
    for c in r.by_status() {
        let _ = writeln!(o, "<h2>Collection {}</h2>", esc(&shown(&c.name)));
        for f in &c.coverage_failures {
            let _ = writeln!(
                o,
                "<p class=\"verdict fail\">INCOMPLETE: {}</p>",
                esc(&f.sentence)
            );
        }
        collection_sections(&mut o, &c.diff, "h3");
    }
    let _ = writeln!(
        o,
        "<h2>Full report</h2>\n<pre>{}</pre>\n</body>\n</html>",
        esc(&crate::report::summary::render_text(r))
    );
    o
}

/// The report's verdict paragraph (status, exit code, deciding rule), and the list of every
/// rule broken when more than one was.
fn report_verdict(o: &mut String, r: &Report) {
    let status = r.outcome.status;
    let class = if status == Status::Pass {
        "pass"
    } else {
        "fail"
    };
    let _ = writeln!(
        o,
        "<p class=\"verdict {class}\">{}</p>",
        esc(&format!(
            "{} (exit {}): {}",
            status.label(),
            status.exit_code(),
            r.outcome.rule
        ))
    );
    if r.outcome.failures.len() > 1 {
        let _ = writeln!(o, "<ul>");
        for f in &r.outcome.failures {
            let _ = writeln!(o, "<li>{}</li>", esc(&f.line()));
        }
        let _ = writeln!(o, "</ul>");
    }
}

/// Per tier group (FullOpts, then MinOpts), SuperPMI's "Top method regressions" and "Top
/// method improvements" across collections, by PDIFF; one line where a tier has none.
fn tier_tops_across(o: &mut String, r: &Report) {
    let floor = super::bytes_floor(r.min_method_bytes);
    for t in r.tier_tops_across() {
        for (what, verb, list) in [
            ("regressions", "grew", &t.regressions),
            ("improvements", "shrank", &t.improvements),
        ] {
            let _ = writeln!(o, "<h2>Top method {what} ({}, by PDIFF %)</h2>", t.tier);
            if list.is_empty() {
                let _ = writeln!(
                    o,
                    "<p>None: no {} method of at least {floor} in the base {verb}.</p>",
                    t.tier
                );
                continue;
            }
            let _ = writeln!(o, "<p>{} across collections, of the methods of at least {floor} in the base (--min-method-bytes).</p>", super::largest_changes(list.len()));
            let _ = writeln!(o, "<table>\n<tr><th>Collection</th><th class=\"n\">Context</th><th>Method</th><th class=\"n\">Base</th><th class=\"n\">Diff</th><th class=\"n\">PDIFF</th></tr>");
            for (name, m) in list {
                tier_top_row(o, Some(name), m);
            }
            let _ = writeln!(o, "</table>");
        }
    }
}

/// One row of a per-tier list: its collection (when the list spans several), context, method,
/// both sides' bytes and PDIFF.
fn tier_top_row(o: &mut String, collection: Option<&str>, m: &MethodDelta) {
    let collection = collection.map_or(String::new(), |c| format!("<td>{}</td>", esc(&shown(c))));
    let _ = writeln!(
        o,
        "<tr>{collection}<td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
        if m.context >= 0 { m.context.to_string() } else { String::new() },
        esc(&shown(m.name.as_deref().unwrap_or("(unknown method)"))),
        thousands(m.base),
        thousands(m.diff),
        span(m.base, m.diff)
    );
}

/// The table of the collections, the failing ones first: per collection its matched methods,
/// bytes, PDIFFs overall and per tier, misses and verdict; a collection not compared says why.
fn collections_table(o: &mut String, r: &Report) {
    let _ = writeln!(o, "<h2>Collections</h2>");
    let _ = writeln!(
        o,
        "<p>PDIFF: the change of bytes from the base (Lower is better).</p>"
    );
    let _ = writeln!(o, "<table id=\"collections\">\n<tr><th>Collection</th><th class=\"n\">Matched</th><th class=\"n\">Base</th><th class=\"n\">Diff</th><th class=\"n\">PDIFF</th><th class=\"n\">MinOpts</th><th class=\"n\">FullOpts</th><th class=\"n\">Missed by base</th><th class=\"n\">Missed by diff</th><th>Verdict</th></tr>");
    let group_pdiff = |c: &crate::diff::CollectionDiff, g: &str| {
        c.group(g)
            .map_or(String::new(), |g| span(g.base.bytes, g.diff.bytes))
    };
    for s in &r.one_sided {
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td colspan=\"8\">not compared: {}</td><td>INCOMPLETE</td></tr>",
            esc(&shown(&s.name)),
            esc(&s.reason)
        );
    }
    for c in r.by_status() {
        let (g, cov) = (c.diff.overall(), &c.diff.coverage);
        let verdict = c.status().label();
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{verdict}</td></tr>",
            esc(&shown(&c.name)),
            thousands(cov.matched),
            thousands(g.base.bytes),
            thousands(g.diff.bytes),
            span(g.base.bytes, g.diff.bytes),
            group_pdiff(c, "MinOpts"),
            group_pdiff(c, "FullOpts"),
            thousands(cov.missed_by_base()),
            thousands(cov.missed_by_diff())
        );
    }
    let _ = writeln!(o, "</table>");
}

/// The charts and tables of what moved across collections: each collection's bytes, the
/// kinds, and the (phase, kind) pairs (each when the logs have them).
fn moved_across_sections(o: &mut String, r: &Report) {
    let _ = writeln!(o, "<h2>Bytes by collection</h2>");
    let per_collection: Vec<Delta> = r
        .collections
        .iter()
        .map(|c| Delta {
            name: c.name.clone(),
            base: c.diff.overall().base.bytes,
            diff: c.diff.overall().diff.bytes,
        })
        .collect();
    delta_bars(o, &per_collection);
    let kinds = r.deltas_across(false);
    if !kinds.is_empty() {
        let _ = writeln!(o, "<h2>Kinds that moved most, across collections</h2>");
        delta_bars(o, &kinds);
        delta_table(o, "Kind", &kinds);
    }
    let pairs = r.phase_kinds_across();
    if !pairs.is_empty() {
        let _ = writeln!(
            o,
            "<h2>Kinds by phase that moved most, across collections</h2>"
        );
        phase_kind_table(o, &pairs);
    }
}

/// The table of the largest methods compiled on one side only, across collections, when
/// there are any.
fn one_sided_methods_table(o: &mut String, r: &Report) {
    let missing = r.missing_across(20);
    if missing.is_empty() {
        return;
    }
    let _ = writeln!(o, "<h2>Largest methods compiled on one side only</h2>\n<table>\n<tr><th>Collection</th><th>Missing from</th><th class=\"n\">Context</th><th>Method</th><th>Tier</th><th class=\"n\">Bytes</th></tr>");
    for (name, side, m) in missing {
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td>{side}</td><td class=\"n\">{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td></tr>",
            esc(&shown(name)),
            if m.context >= 0 { m.context.to_string() } else { String::new() },
            esc(&shown(m.name.as_deref().unwrap_or("(unknown method)"))),
            esc(&shown(m.tier.as_deref().unwrap_or(""))),
            thousands(m.bytes)
        );
    }
    let _ = writeln!(o, "</table>");
}

/// The page of one collection's diff.
pub fn render_html(d: &MemDiff) -> String {
    let mut o = String::new();
    page_head(&mut o);
    let verdict_class = if d.verdict.regression { "fail" } else { "pass" };
    let _ = writeln!(
        o,
        "<p class=\"verdict {verdict_class}\">{}</p>",
        esc(&format!(
            "{}: {}",
            if d.verdict.regression { "FAIL" } else { "PASS" },
            d.verdict.rule
        ))
    );
    collection_sections(&mut o, d, "h2");
    let _ = writeln!(
        o,
        "<h2>Full report</h2>\n<pre>{}</pre>\n</body>\n</html>",
        esc(&render_text(d))
    );
    o
}

fn page_head(o: &mut String) {
    let _ = write!(
        o,
        concat!(
            "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n",
            "<meta charset=\"utf-8\"/>\n<title>jitarena memdiff</title>\n<style>\n",
            "body{{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1100px}}\n",
            "table{{border-collapse:collapse;margin:0.5em 0 1.5em}}\n",
            "td,th{{padding:2px 10px;border-bottom:1px solid #ddd}}\n",
            "td.n,th.n{{text-align:right;font-variant-numeric:tabular-nums}}\n",
            ".up{{color:{red}}} .down{{color:{green}}}\n",
            ".verdict{{padding:0.6em 1em;border-radius:4px;font-weight:600}}\n",
            ".pass{{background:#e8f5e9}} .fail{{background:#ffebee}}\n",
            "svg text{{font-size:11px;fill:#333}}\n",
            "pre{{background:#f6f6f6;padding:1em;overflow:auto}}\n",
            "</style>\n</head>\n<body>\n<h1>jitarena memdiff</h1>\n"
        ),
        red = RED,
        green = GREEN
    );
}

/// The sections of one collection's diff, under headings of level `h` (`h2`, `h3`).
fn collection_sections(o: &mut String, d: &MemDiff, h: &str) {
    let g = d.overall();
    let _ = writeln!(
        o,
        "<p>Bytes requested: {} &#8594; {} ({}) over {} matched methods; {} only in base, {} only in diff.</p>",
        thousands(g.base.bytes),
        thousands(g.diff.bytes),
        span(g.base.bytes, g.diff.bytes),
        thousands(d.coverage.matched),
        thousands(d.coverage.only_base),
        thousands(d.coverage.only_diff)
    );
    let _ = writeln!(o, "<{h}>Totals</{h}>\n<table>\n<tr><th>Collection</th><th class=\"n\">Methods</th><th class=\"n\">Base</th><th class=\"n\">Diff</th><th class=\"n\">Delta</th><th class=\"n\">PDIFF</th></tr>");
    for grp in &d.groups {
        let _ = writeln!(
            o,
            "<tr><td>{} bytes</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(&grp.name),
            thousands(grp.methods),
            thousands(grp.base.bytes),
            thousands(grp.diff.bytes),
            signed_thousands(i128::from(grp.diff.bytes) - i128::from(grp.base.bytes)),
            span(grp.base.bytes, grp.diff.bytes)
        );
    }
    let _ = writeln!(o, "</table>");
    if d.has_kinds {
        let _ = writeln!(o, "<{h}>Kinds that moved most</{h}>");
        // The bars say "No kind changed." when none did: the table then says nothing more.
        delta_bars(o, &d.kinds);
        if d.kinds.iter().any(|r| r.base != r.diff) {
            delta_table(o, "Kind", &d.kinds);
        }
    }
    if !d.phases.is_empty() {
        let _ = writeln!(o, "<{h}>Phases</{h}>");
        delta_table(o, "Phase", &d.phases);
    }
    if !d.phase_kinds.is_empty() {
        let _ = writeln!(o, "<{h}>Kinds by phase that moved most</{h}>");
        phase_kind_table(o, &d.phase_kinds);
    }
    let _ = writeln!(o, "<{h}>Methods: base against diff</{h}>\n<p>Bytes requested per method, both axes logarithmic; above the diagonal a method grew (red), below it shrank (green). {} of {} matched methods are drawn.</p>", thousands(d.scatter.len() as u64), thousands(d.coverage.matched));
    scatter(o, &d.scatter);
    let _ = writeln!(o, "<{h}>Distribution of per-method change</{h}>");
    histogram(o, &d.distribution.change_histogram);
    for (title, list) in [
        ("Methods that grew most", &d.top_growth),
        ("Methods that shrank most", &d.top_shrinkage),
        ("Methods that grew most, relatively", &d.top_relative_growth),
        (
            "Methods that shrank most, relatively",
            &d.top_relative_shrinkage,
        ),
    ] {
        if !list.is_empty() {
            let _ = writeln!(o, "<{h}>{title}</{h}>");
            method_table(o, list, d.has_kinds);
        }
    }
    let floor = super::bytes_floor(d.min_method_bytes);
    for t in &d.tier_tops {
        for (what, verb, list) in [
            ("regressions", "grew", &t.regressions),
            ("improvements", "shrank", &t.improvements),
        ] {
            let _ = writeln!(o, "<{h}>Top method {what} ({}, by PDIFF %)</{h}>", t.tier);
            if list.is_empty() {
                let _ = writeln!(
                    o,
                    "<p>None: no {} method of at least {floor} in the base {verb}.</p>",
                    t.tier
                );
                continue;
            }
            let _ = writeln!(o, "<p>Methods of at least {floor} in the base (--min-method-bytes).</p>\n<table>\n<tr><th class=\"n\">Context</th><th>Method</th><th class=\"n\">Base</th><th class=\"n\">Diff</th><th class=\"n\">PDIFF</th></tr>");
            for m in list {
                tier_top_row(o, None, m);
            }
            let _ = writeln!(o, "</table>");
        }
    }
}

fn span(base: u64, diff: u64) -> String {
    span_of(base, diff, pdiff(base, diff))
}

/// A kind's or phase's PDIFF (`appeared`, `vanished`) in a span.
fn part_span(base: u64, diff: u64) -> String {
    span_of(base, diff, part_pdiff(base, diff))
}

fn span_of(base: u64, diff: u64, text: String) -> String {
    let class = match diff.cmp(&base) {
        std::cmp::Ordering::Greater => " class=\"up\"",
        std::cmp::Ordering::Less => " class=\"down\"",
        std::cmp::Ordering::Equal => "",
    };
    format!("<span{class}>{}</span>", esc(&text))
}

fn delta_table(o: &mut String, what: &str, rows: &[Delta]) {
    if rows.iter().all(|r| r.base == r.diff) {
        let _ = writeln!(o, "<p>No {} changed.</p>", what.to_lowercase());
        return;
    }
    let _ = writeln!(o, "<table>\n<tr><th>{what}</th><th class=\"n\">Base</th><th class=\"n\">Diff</th><th class=\"n\">Delta</th><th class=\"n\">PDIFF</th></tr>");
    for r in rows.iter().filter(|r| r.base != r.diff) {
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(&shown(&r.name)),
            thousands(r.base),
            thousands(r.diff),
            signed_thousands(r.delta()),
            part_span(r.base, r.diff)
        );
    }
    let _ = writeln!(o, "</table>");
}

/// The (phase, kind) pairs that moved, at most 20, largest move first.
fn phase_kind_table(o: &mut String, rows: &[PhaseKindDelta]) {
    if rows.iter().all(|r| r.base == r.diff) {
        let _ = writeln!(o, "<p>No kind changed in any phase.</p>");
        return;
    }
    let _ = writeln!(o, "<table>\n<tr><th>Phase</th><th>Kind</th><th class=\"n\">Base</th><th class=\"n\">Diff</th><th class=\"n\">Delta</th><th class=\"n\">PDIFF</th></tr>");
    for r in rows.iter().filter(|r| r.base != r.diff).take(20) {
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(&shown(&r.phase)),
            esc(&shown(&r.kind)),
            thousands(r.base),
            thousands(r.diff),
            signed_thousands(r.delta()),
            part_span(r.base, r.diff)
        );
    }
    let _ = writeln!(o, "</table>");
}

fn method_table(o: &mut String, list: &[MethodDelta], kinds: bool) {
    let _ = writeln!(o, "<table>\n<tr><th>Method</th><th>Tier</th><th class=\"n\">Base</th><th class=\"n\">Diff</th><th class=\"n\">Delta</th><th class=\"n\">PDIFF</th>{}</tr>", if kinds { "<th>Kind that moved most</th>" } else { "" });
    for m in list {
        let kind = match (&m.top_kind, kinds) {
            (Some((k, v)), true) => format!("<td>{} {}</td>", esc(&shown(k)), signed_thousands(*v)),
            (None, true) => "<td></td>".to_string(),
            _ => String::new(),
        };
        let name = m.name.as_deref().unwrap_or("(unknown method)");
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>{kind}</tr>",
            esc(&shown(name)),
            esc(&shown(m.tier.as_deref().unwrap_or(""))),
            thousands(m.base),
            thousands(m.diff),
            signed_thousands(i128::from(m.diff) - i128::from(m.base)),
            span(m.base, m.diff)
        );
    }
    let _ = writeln!(o, "</table>");
}

/// Horizontal bars of the 20 kinds that moved most, growth to the right in red.
fn delta_bars(o: &mut String, rows: &[Delta]) {
    let rows: Vec<&Delta> = rows.iter().filter(|r| r.base != r.diff).take(20).collect();
    if rows.is_empty() {
        let _ = writeln!(o, "<p>No kind changed.</p>");
        return;
    }
    let (label_w, bar_w, row_h) = (170.0, 560.0, 20.0);
    let width = label_w + bar_w + 150.0;
    let height = row_h * rows.len() as f64 + 10.0;
    let max = rows
        .iter()
        .map(|r| r.delta().unsigned_abs())
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let mid = label_w + bar_w / 2.0;
    let _ = writeln!(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" role=\"img\" aria-label=\"per-kind byte deltas\">");
    let _ = writeln!(
        o,
        "<line x1=\"{mid}\" y1=\"0\" x2=\"{mid}\" y2=\"{height}\" stroke=\"#888\"/>"
    );
    for (i, r) in rows.iter().enumerate() {
        let y = 5.0 + i as f64 * row_h;
        let delta = r.delta();
        let w = (delta.unsigned_abs() as f64 / max * (bar_w / 2.0)).max(1.0);
        let (x, color, anchor, tx) = if delta > 0 {
            (mid, RED, "start", mid + w + 4.0)
        } else {
            (mid - w, GREEN, "end", mid - w - 4.0)
        };
        let _ = writeln!(
            o,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text><rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{}\" fill=\"{color}\"><title>{}: {} ({})</title></rect><text x=\"{tx:.1}\" y=\"{}\" text-anchor=\"{anchor}\">{} ({})</text>",
            label_w - 6.0,
            y + 13.0,
            esc(&shown(&r.name)),
            row_h - 6.0,
            esc(&shown(&r.name)),
            signed_thousands(delta),
            esc(&part_pdiff(r.base, r.diff)),
            y + 13.0,
            signed_thousands(delta),
            esc(&part_pdiff(r.base, r.diff))
        );
    }
    let _ = writeln!(o, "</svg>");
}

/// Base against diff bytes per method, log-log, with the diagonal.
fn scatter(o: &mut String, points: &[(u64, u64)]) {
    let (size, pad) = (480.0, 90.0);
    let lo = points
        .iter()
        .flat_map(|p| [p.0, p.1])
        .filter(|&v| v > 0)
        .min()
        .unwrap_or(1) as f64;
    let hi = points
        .iter()
        .flat_map(|p| [p.0, p.1])
        .max()
        .unwrap_or(10)
        .max(2) as f64;
    let (lo, hi) = (
        lo.log10().floor(),
        hi.log10().ceil().max(lo.log10().floor() + 1.0),
    );
    let pos = |v: u64| (v.max(1) as f64).log10().clamp(lo, hi);
    let x = |v: u64| pad + (pos(v) - lo) / (hi - lo) * size;
    let y = |v: u64| pad + size - (pos(v) - lo) / (hi - lo) * size;
    let total = size + 2.0 * pad;
    let _ = writeln!(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{total}\" height=\"{total}\" role=\"img\" aria-label=\"base against diff bytes per method\">");
    let _ = writeln!(o, "<rect x=\"{pad}\" y=\"{pad}\" width=\"{size}\" height=\"{size}\" fill=\"none\" stroke=\"#888\"/>");
    let _ = writeln!(o, "<line x1=\"{pad}\" y1=\"{}\" x2=\"{}\" y2=\"{pad}\" stroke=\"#bbb\" stroke-dasharray=\"4 3\"/>", pad + size, pad + size);
    let mut decade = lo;
    while decade <= hi {
        let v = 10f64.powf(decade) as u64;
        let label = thousands(v);
        let _ = writeln!(o, "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{label}</text><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{label}</text>", x(v), pad + size + 16.0, pad - 4.0, y(v) + 4.0);
        decade += 1.0;
    }
    let _ = writeln!(o, "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">base bytes</text><text x=\"12\" y=\"{}\" transform=\"rotate(-90 12 {})\" text-anchor=\"middle\">diff bytes</text>", pad + size / 2.0, total - 4.0, pad + size / 2.0, pad + size / 2.0);
    for &(b, d) in points {
        let color = match d.cmp(&b) {
            std::cmp::Ordering::Greater => RED,
            std::cmp::Ordering::Less => GREEN,
            std::cmp::Ordering::Equal => GREY,
        };
        let _ = writeln!(o, "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.2\" fill=\"{color}\" fill-opacity=\"0.6\"><title>{} &#8594; {}</title></circle>", x(b), y(d), thousands(b), thousands(d));
    }
    let _ = writeln!(o, "</svg>");
}

/// Methods per bucket of change.
fn histogram(o: &mut String, counts: &[u64]) {
    let (bar_w, gap, h, base_y) = (84.0, 10.0, 200.0, 230.0);
    let max = counts.iter().copied().max().unwrap_or(1).max(1) as f64;
    let width = (bar_w + gap) * counts.len() as f64 + 20.0;
    let _ = writeln!(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"280\" role=\"img\" aria-label=\"methods per bucket of change\">");
    for (i, (&n, label)) in counts.iter().zip(CHANGE_BUCKETS).enumerate() {
        let bh = n as f64 / max * h;
        let x = 10.0 + i as f64 * (bar_w + gap);
        let color = match i {
            0..=3 => GREEN,
            4 => GREY,
            _ => RED,
        };
        let _ = writeln!(
            o,
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{bar_w}\" height=\"{bh:.1}\" fill=\"{color}\"><title>{}: {} methods</title></rect><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text><text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            base_y - bh,
            esc(label),
            thousands(n),
            x + bar_w / 2.0,
            base_y - bh - 4.0,
            thousands(n),
            x + bar_w / 2.0,
            base_y + 16.0,
            esc(label)
        );
    }
    let _ = writeln!(o, "</svg>");
}
