//! The gate: whether growth went beyond the thresholds, and the rule that decided.

use super::{pct_change, CoverageRules, Delta, MemDiff, Thresholds, Verdict};

/// Applies the thresholds.
pub fn judge(diff: &MemDiff, t: &Thresholds, methods: &[(u64, u64)]) -> Verdict {
    let o = diff.overall();
    // `failures`: one self-contained line per threshold crossed (for machines); `summary`: the
    // same, with the kinds that crossed one threshold on one line (for people).
    let mut failures: Vec<String> = Vec::new();
    let mut summary: Vec<String> = Vec::new();
    let total = pct_change(o.base.bytes, o.diff.bytes);
    // A change beside its limit, with the decimals that keep it on its side of the limit
    // (`+25.0004%` above 25%, not `+25.00%`; a figure within its limit keeps two decimals,
    // `+25.00%` for 24.9996, which does not read as above it).
    let against = |p: Option<f64>, limit: f64| match p {
        Some(p) => format!("{p:+.0$}%", decimals_against(p, limit)),
        None => "new".to_string(),
    };
    let th = crate::report::thousands;
    if o.diff.bytes > o.base.bytes && total.is_none_or(|p| p > t.fail_above) {
        failures.push(format!(
            "total bytes grew {} ({} → {}), above --fail-above {}%",
            against(total, t.fail_above),
            th(o.base.bytes),
            th(o.diff.bytes),
            t.fail_above
        ));
        summary.extend(failures.last().cloned());
    }
    let mut resolved = t.clone();
    let floor = t.kind_min_bytes.unwrap_or(o.base.bytes / 100);
    resolved.kind_min_bytes = Some(floor);
    let mut worst_kind: Option<(&Delta, Option<f64>)> = None;
    let mut kinds_over = Vec::new();
    if let Some(limit) = t.kind_fail_above {
        for k in diff
            .kinds
            .iter()
            .filter(|k| k.base.max(k.diff) >= floor && k.diff > k.base)
        {
            let p = pct_change(k.base, k.diff);
            if worst_kind
                .is_none_or(|(_, w)| p.unwrap_or(f64::INFINITY) > w.unwrap_or(f64::INFINITY))
            {
                worst_kind = Some((k, p));
            }
            if p.is_none_or(|p| p > limit) {
                kinds_over.push(format!(
                    "kind {} grew {} ({} → {})",
                    crate::report::shown(&k.name),
                    against(p, limit),
                    th(k.base),
                    th(k.diff)
                ));
            }
        }
        let rule = format!(
            "above --kind-fail-above {limit}% for kinds of at least {} bytes",
            th(floor)
        );
        failures.extend(kinds_over.iter().map(|k| format!("{k}, {rule}")));
        if !kinds_over.is_empty() {
            summary.push(format!("{}, {rule}", kinds_over.join(", ")));
        }
    }
    if let Some(limit) = t.method_fail_above {
        let over: Vec<&(u64, u64)> = methods
            .iter()
            .filter(|(b, d)| {
                *b >= t.method_min_bytes && pct_change(*b, *d).is_some_and(|p| p > limit)
            })
            .collect();
        if !over.is_empty() {
            failures.push(format!(
                "{} method{} of at least {} bytes grew more than --method-fail-above {limit}%",
                th(over.len() as u64),
                if over.len() == 1 { "" } else { "s" },
                th(t.method_min_bytes)
            ));
            summary.extend(failures.last().cloned());
        }
    }
    let new_hits = diff.coverage.limit_hits_new;
    if new_hits > 0 {
        failures.push(format!(
            "{} method{} hit the arena's memory limit in the diff but not in the base (their bytes stop at the limit, so their growth is understated)",
            th(new_hits),
            if new_hits == 1 { "" } else { "s" }
        ));
        summary.extend(failures.last().cloned());
    }
    let regression = !failures.is_empty();
    let rule = if regression {
        summary.join("; ")
    } else {
        let mut parts = vec![format!(
            "total {} (limit +{}%)",
            against(total, t.fail_above).replace("new", "+0.00%"),
            t.fail_above
        )];
        if let Some(limit) = t.kind_fail_above {
            parts.push(match worst_kind {
                Some((k, p)) => format!(
                    "largest kind growth {} {} (limit +{limit}% for kinds of at least {} bytes)",
                    crate::report::shown(&k.name),
                    against(p, limit),
                    th(floor)
                ),
                None => format!(
                    "no kind of at least {} bytes grew (limit +{limit}%)",
                    th(floor)
                ),
            });
        }
        if let Some(limit) = t.method_fail_above {
            parts.push(format!(
                "no method of at least {} bytes grew more than {limit}%",
                th(t.method_min_bytes)
            ));
        }
        format!("no regression: {}", parts.join("; "))
    };
    Verdict {
        regression,
        rule,
        failures,
        thresholds: resolved,
    }
}

/// The coverage rules broken by one collection's diff, in words: no matched method, a side
/// missing more than `max_missed` percent of the other side's methods, a log cut short.
pub fn judge_coverage(diff: &MemDiff, rules: &CoverageRules) -> Vec<String> {
    let th = crate::report::thousands;
    let c = &diff.coverage;
    let mut out = Vec::new();
    if c.matched == 0 {
        out.push(format!(
            "no method matched (base {} methods, diff {}): the logs do not come from the same methods",
            th(c.base_methods()),
            th(c.diff_methods())
        ));
    }
    // No byte over matched methods is no measurement: every byte in an ignored kind, or a JIT
    // whose arena did not count (JITARENA_NO_COUNTERS); its "-100%" is not a saving.
    let o = diff.overall();
    let ignoring = !diff.ignored_kinds.is_empty();
    if c.matched > 0 && o.base.bytes == 0 && o.diff.bytes == 0 && ignoring {
        out.push(format!(
            "--ignore-kind left no byte of the {} matched methods to compare (every byte was in an ignored kind)",
            th(c.matched)
        ));
    } else if c.matched > 0 {
        for (side, bytes) in [("base", o.base.bytes), ("diff", o.diff.bytes)] {
            if bytes == 0 {
                out.push(format!(
                    "the {side} counted no byte in its {} matched methods{}: no measurement (a JIT built with JITARENA_NO_COUNTERS?)",
                    th(c.matched),
                    if ignoring { " outside the ignored kinds" } else { "" }
                ));
            }
        }
    }
    for (side, other, missed, of) in [
        ("diff", "base", c.only_base, c.base_methods()),
        ("base", "diff", c.only_diff, c.diff_methods()),
    ] {
        let share = if of == 0 {
            0.0
        } else {
            missed as f64 * 100.0 / of as f64
        };
        if missed > 0 && share > rules.max_missed {
            // Enough decimals that the share does not read as within the limit (`1.00%, above
            // --max-missed 1%`).
            let shown = format!("{share:.0$}", decimals_against(share, rules.max_missed));
            out.push(format!(
                "the {side} misses {} of the {other}'s {} methods ({shown}%), above --max-missed {}%",
                th(missed),
                th(of),
                rules.max_missed
            ));
        }
    }
    if !rules.allow_truncated {
        for file in &c.truncated {
            out.push(format!(
                "{file}: a log cut short (its last record, or that of a log merged into it, is incomplete: a JIT killed while writing, or a log still being written); --allow-truncated accepts it"
            ));
        }
    }
    out
}

/// The decimals, from 2 to 9, that `value` needs to read on the same side of `limit` as it is
/// (above it, or at or below it).
fn decimals_against(value: f64, limit: f64) -> usize {
    let above = value > limit;
    (2..=9)
        .find(|&digits| {
            format!("{value:.digits$}")
                .parse::<f64>()
                .is_ok_and(|shown| (shown > limit) == above)
        })
        .unwrap_or(9)
}

#[cfg(test)]
mod tests {
    use super::decimals_against;

    #[test]
    fn a_figure_reads_on_its_side_of_the_limit() {
        assert_eq!(decimals_against(30.0, 25.0), 2);
        assert_eq!(decimals_against(25.001, 25.0), 3);
        assert_eq!(decimals_against(25.0004, 25.0), 4);
        assert_eq!(decimals_against(24.9996, 25.0), 2); // 25.00: not above
        assert_eq!(decimals_against(25.0, 25.0), 2);
        assert_eq!(decimals_against(1.000_000_000_01, 1.0), 9);
    }
}
