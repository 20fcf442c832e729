//! The gate: which rules a diff broke, as fields ([`Failure`]), and the rule that decided.
//!
//! A rule is decided from the figures alone ([`judge`], [`judge_coverage`]); each failure is
//! then worded once, by its constructor, from its fields. Growth rules fail the check (FAIL);
//! coverage rules make it INCOMPLETE: the diff cannot be trusted.

use super::{pct_change, CoverageRules, Delta, MemDiff, Thresholds, TierJudged, Verdict};
use crate::text::{shown, thousands};

/// A rule of the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rule {
    /// A collection found on one side only, or with no log on a side, or the same file on
    /// both sides: not compared.
    NotCompared,
    /// No method matched between the sides.
    NoMatch,
    /// A side counted no byte over the matched methods.
    NoBytes,
    /// A compile failed on one side only (SuperPMI's `Error` result).
    FailingCompiles,
    /// A context seen more than once on one side.
    Duplicates,
    /// A side misses more than `--max-missed` percent of the other side's methods.
    Missed,
    /// A log, or a CSV file, cut short.
    Truncated,
    /// Total bytes grew past `--fail-above`.
    Total,
    /// A tier group's bytes (MinOpts, FullOpts) grew past `--fail-above`.
    Tier,
    /// A kind present on both sides grew past `--kind-fail-above`.
    Kind,
    /// Methods grew past `--method-fail-above`.
    Method,
    /// Methods hit the arena's memory limit in the diff but not in the base.
    MemoryLimit,
}

impl Rule {
    /// The rule's name in the JSON report: the option that sets it, where one does.
    pub fn name(self) -> &'static str {
        match self {
            Rule::NotCompared => "not_compared",
            Rule::NoMatch => "no_match",
            Rule::NoBytes => "no_bytes",
            Rule::FailingCompiles => "failing_compiles",
            Rule::Duplicates => "duplicates",
            Rule::Missed => "max_missed",
            Rule::Truncated => "truncated",
            // The same option judges the total and each tier (the subject names the tier).
            Rule::Total | Rule::Tier => "fail_above",
            Rule::Kind => "kind_fail_above",
            Rule::Method => "method_fail_above",
            Rule::MemoryLimit => "memory_limit",
        }
    }

    /// Whether breaking it makes the check INCOMPLETE (the diff cannot be trusted) rather
    /// than FAIL (a regression).
    pub fn is_coverage(self) -> bool {
        !matches!(
            self,
            Rule::Total | Rule::Tier | Rule::Kind | Rule::Method | Rule::MemoryLimit
        )
    }
}

/// One rule broken: its fields, for dashboards, and the sentence that says it, for people.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// The collection it was broken in (`None` for a single pair of inputs given without a
    /// collection name).
    pub collection: Option<String>,
    /// The rule.
    pub rule: Rule,
    /// What broke it: `total`, a kind's name, `methods`, the side that misses or failed
    /// (`base`, `diff`), a file, or why a collection was not compared.
    pub subject: String,
    /// The base's figure, where there is one (bytes; for counting rules, a count).
    pub base: Option<u64>,
    /// The diff's figure.
    pub diff: Option<u64>,
    /// The change, or share, in percent.
    pub percent: Option<f64>,
    /// The limit it was judged against, in percent.
    pub limit: Option<f64>,
    /// The failure in one sentence, without its collection.
    pub sentence: String,
}

impl Failure {
    fn new(rule: Rule, subject: impl Into<String>, sentence: String) -> Failure {
        Failure {
            collection: None,
            rule,
            subject: subject.into(),
            base: None,
            diff: None,
            percent: None,
            limit: None,
            sentence,
        }
    }

    fn figures(mut self, base: u64, diff: u64) -> Failure {
        self.base = Some(base);
        self.diff = Some(diff);
        self
    }

    fn against(mut self, percent: Option<f64>, limit: f64) -> Failure {
        self.percent = percent;
        self.limit = Some(limit);
        self
    }

    /// The sentence, with its collection in front when it has one.
    pub fn line(&self) -> String {
        match &self.collection {
            Some(c) => format!("collection {}: {}", shown(c), self.sentence),
            None => self.sentence.clone(),
        }
    }

    /// Total bytes grew past the limit.
    pub fn total(base: u64, diff: u64, limit: f64) -> Failure {
        let p = pct_change(base, diff);
        let sentence = format!(
            "total bytes grew {} ({} → {}), above --fail-above {limit}%",
            beside(p, limit),
            thousands(base),
            thousands(diff),
        );
        Failure::new(Rule::Total, "total", sentence)
            .figures(base, diff)
            .against(p, limit)
    }

    /// A tier group's bytes (`tier`: MinOpts, FullOpts) grew past the limit; `floor`: the
    /// least bytes a tier needs, on one side, to be judged on its own.
    pub fn tier(tier: &str, base: u64, diff: u64, limit: f64, floor: u64) -> Failure {
        let p = pct_change(base, diff);
        let sentence = format!(
            "{tier} bytes grew {} ({} → {}), above --fail-above {limit}% (judged per tier for tiers of at least {} bytes)",
            beside(p, limit),
            thousands(base),
            thousands(diff),
            thousands(floor)
        );
        Failure::new(Rule::Tier, tier, sentence)
            .figures(base, diff)
            .against(p, limit)
    }

    /// A kind present on both sides grew past the limit, its gain counted up to the
    /// collection's (`total_gain`, see `judged_growth`); `floor`: the least bytes a kind
    /// needs to be judged.
    pub fn kind(k: &Delta, limit: f64, floor: u64, total_gain: u64) -> Failure {
        let p = pct_change(k.base, k.diff);
        let sentence = format!(
            "{}, {}",
            kind_growth(k, limit, total_gain),
            kind_rule(limit, floor)
        );
        Failure::new(Rule::Kind, k.name.clone(), sentence)
            .figures(k.base, k.diff)
            .against(p, limit)
    }

    /// `count` methods of at least `floor` bytes grew past the limit, the most by `worst`.
    pub fn methods(count: u64, worst: f64, limit: f64, floor: u64) -> Failure {
        let sentence = format!(
            "{} method{} of at least {} bytes grew more than --method-fail-above {limit}% (the most by {})",
            thousands(count),
            plural(count),
            thousands(floor),
            beside(Some(worst), limit)
        );
        let mut f = Failure::new(Rule::Method, "methods", sentence).against(Some(worst), limit);
        f.diff = Some(count);
        f
    }

    /// `count` matched methods hit the memory limit in the diff only.
    pub fn memory_limit(count: u64) -> Failure {
        let sentence = format!(
            "{} method{} hit the arena's memory limit in the diff but not in the base (their bytes stop at the limit, so their growth is understated)",
            thousands(count),
            plural(count)
        );
        let mut f = Failure::new(Rule::MemoryLimit, "methods", sentence);
        f.diff = Some(count);
        f
    }

    /// A collection that could not be compared, and why.
    pub fn not_compared(reason: &str) -> Failure {
        Failure::new(Rule::NotCompared, reason, reason.to_string())
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// A change beside its limit, with the decimals that keep it on its side of the limit
/// (`+25.0004%` above 25%, not `+25.00%`; a figure within its limit keeps two decimals,
/// `+25.00%` for 24.9996, which does not read as above it); `new` from nothing.
fn beside(p: Option<f64>, limit: f64) -> String {
    match p {
        Some(p) => format!("{p:+.0$}%", decimals_against(p, limit)),
        None => "new".to_string(),
    }
}

/// The growth the kind rule judges, in percent of the kind's base bytes: the bytes the kind
/// gained, counted no further than the collection's own gain `total_gain` (bytes that moved to
/// it from other kinds, a re-tag, a merge of kinds, are not growth of the JIT's memory). `None`
/// for a kind with no base bytes (one-sided kinds are judged through the total).
pub fn judged_growth(k: &Delta, total_gain: u64) -> Option<f64> {
    let gain = k.diff.saturating_sub(k.base).min(total_gain);
    (k.base > 0).then(|| gain as f64 * 100.0 / k.base as f64)
}

/// `kind LSRA grew +60.00% (1,200,215 → 1,920,376)`, and what the rule judged of it where the
/// collection gained less: `, +20.00% counted (the collection gained 240,043 bytes)`.
fn kind_growth(k: &Delta, limit: f64, total_gain: u64) -> String {
    let grew = format!(
        "kind {} grew {} ({} → {})",
        shown(&k.name),
        beside(pct_change(k.base, k.diff), limit),
        thousands(k.base),
        thousands(k.diff)
    );
    if k.diff.saturating_sub(k.base) <= total_gain {
        return grew;
    }
    format!(
        "{grew}, {} counted (the collection gained {} bytes)",
        beside(judged_growth(k, total_gain), limit),
        thousands(total_gain)
    )
}

/// `above --kind-fail-above 25% for kinds of at least 204,741 bytes`.
fn kind_rule(limit: f64, floor: u64) -> String {
    format!(
        "above --kind-fail-above {limit}% for kinds of at least {} bytes",
        thousands(floor)
    )
}

/// Applies the thresholds. A kind on one side only (appeared, or vanished: added, split or
/// renamed by the change) never fails on its own: its bytes are judged through the total.
pub fn judge(diff: &MemDiff, t: &Thresholds, methods: &[(u64, u64)]) -> Verdict {
    let o = diff.overall();
    let mut failures: Vec<Failure> = Vec::new();
    let total = pct_change(o.base.bytes, o.diff.bytes);
    if o.diff.bytes > o.base.bytes && total.is_none_or(|p| p > t.fail_above) {
        failures.push(Failure::total(o.base.bytes, o.diff.bytes, t.fail_above));
    }
    let tier_floor = t.tier_floor(o.base.bytes);
    let tiers = judge_tiers(diff, t.fail_above, tier_floor, &mut failures);
    let mut resolved = t.clone();
    let floor = t.kind_min_bytes.unwrap_or(o.base.bytes / 100);
    resolved.kind_min_bytes = Some(floor);
    let judged = |k: &&Delta| k.base > 0 && k.base.max(k.diff) >= floor && k.diff > k.base;
    let total_gain = o.diff.bytes.saturating_sub(o.base.bytes);
    let worst_kind = diff
        .kinds
        .iter()
        .filter(judged)
        .map(|k| (k, pct_change(k.base, k.diff).unwrap_or(f64::INFINITY)))
        .fold(None::<(&Delta, f64)>, |w, (k, p)| match w {
            Some((_, wp)) if wp >= p => w,
            _ => Some((k, p)),
        });
    if let Some(limit) = t.kind_fail_above {
        for k in diff.kinds.iter().filter(judged) {
            if judged_growth(k, total_gain).is_some_and(|p| p > limit) {
                failures.push(Failure::kind(k, limit, floor, total_gain));
            }
        }
    }
    if let Some(limit) = t.method_fail_above {
        let over: Vec<f64> = methods
            .iter()
            .filter(|(b, _)| *b >= t.method_min_bytes)
            .filter_map(|&(b, d)| pct_change(b, d).filter(|p| *p > limit))
            .collect();
        if let Some(worst) = over.iter().copied().reduce(f64::max) {
            failures.push(Failure::methods(
                over.len() as u64,
                worst,
                limit,
                t.method_min_bytes,
            ));
        }
    }
    if diff.coverage.limit_hits_new > 0 {
        failures.push(Failure::memory_limit(diff.coverage.limit_hits_new));
    }
    let regression = !failures.is_empty();
    let rule = if regression {
        rule_of(diff, &failures, floor, total_gain)
    } else {
        let kinds = (!diff.kinds.is_empty()).then_some(diff.kinds.as_slice());
        let worst_kind = worst_kind.map(|(k, p)| (k, p, total_gain));
        passing_rule(t, total, &tiers, tier_floor, worst_kind, floor, kinds)
    };
    Verdict {
        regression,
        rule,
        failures,
        thresholds: resolved,
        tier_floor,
        tiers,
    }
}

/// Judges each tier group (MinOpts, FullOpts) against the total's limit on its own, so that a
/// tier's growth cannot hide behind the other's fall: only a tier of at least `floor` bytes on
/// one side, and one that does not hold every matched method (its total is the collection's,
/// judged already). Returns what was judged and what was not, with why.
fn judge_tiers(
    diff: &MemDiff,
    limit: f64,
    floor: u64,
    failures: &mut Vec<Failure>,
) -> Vec<TierJudged> {
    let matched = diff.overall().methods;
    let mut judged = Vec::new();
    for name in ["MinOpts", "FullOpts"] {
        let Some(g) = diff.groups.iter().find(|g| g.name == name) else {
            continue;
        };
        let (base, diff_bytes) = (g.base.bytes, g.diff.bytes);
        let skipped = if g.methods == matched {
            Some("it holds every matched method: its total is the collection's".to_string())
        } else if base.max(diff_bytes) < floor {
            Some(format!(
                "{} bytes, below the tier floor of {}",
                thousands(base.max(diff_bytes)),
                thousands(floor)
            ))
        } else {
            None
        };
        if skipped.is_none()
            && diff_bytes > base
            && pct_change(base, diff_bytes).is_none_or(|p| p > limit)
        {
            failures.push(Failure::tier(name, base, diff_bytes, limit, floor));
        }
        judged.push(TierJudged {
            tier: name.to_string(),
            base,
            diff: diff_bytes,
            skipped,
        });
    }
    judged
}

/// The failures in one line, for people: the kinds that crossed the kind threshold together,
/// where the first of them stood.
fn rule_of(diff: &MemDiff, failures: &[Failure], floor: u64, total_gain: u64) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut kinds_said = false;
    for f in failures {
        match (f.rule, f.limit) {
            (Rule::Kind, Some(limit)) if !kinds_said => {
                kinds_said = true;
                let grew: Vec<String> = failures
                    .iter()
                    .filter(|k| k.rule == Rule::Kind)
                    .filter_map(|k| diff.kinds.iter().find(|d| d.name == k.subject))
                    .map(|k| kind_growth(k, limit, total_gain))
                    .collect();
                parts.push(format!("{}, {}", grew.join(", "), kind_rule(limit, floor)));
            }
            (Rule::Kind, _) => {}
            _ => parts.push(f.sentence.clone()),
        }
    }
    parts.join("; ")
}

/// Why a diff passed: its total and its largest kind growth beside their limits, and the kinds
/// of at least `floor` bytes that are new in the diff (judged through the total, never on their
/// own). No word of kinds when its inputs have none (`kinds` is `None`: a CSV).
fn passing_rule(
    t: &Thresholds,
    total: Option<f64>,
    tiers: &[TierJudged],
    tier_floor: u64,
    worst_kind: Option<(&Delta, f64, u64)>,
    floor: u64,
    kinds: Option<&[Delta]>,
) -> String {
    let mut parts = vec![format!(
        "total {} (limit +{}%)",
        beside(total, t.fail_above).replace("new", "+0.00%"),
        t.fail_above
    )];
    parts.extend(tiers_passing(tiers, t.fail_above, tier_floor));
    if let (Some(limit), Some(kinds)) = (t.kind_fail_above, kinds) {
        parts.push(match worst_kind {
            Some((k, p, total_gain)) if p > limit => format!(
                "kind {} grew {} but {} of it counts, as the collection gained only {} bytes: \
                 the rest moved from other kinds (limit +{limit}% for kinds of at least {} bytes)",
                shown(&k.name),
                beside(Some(p), limit),
                beside(judged_growth(k, total_gain), limit),
                thousands(total_gain),
                thousands(floor)
            ),
            Some((k, p, _)) => format!(
                "largest kind growth {} {} (limit +{limit}% for kinds of at least {} bytes)",
                shown(&k.name),
                beside(Some(p), limit),
                thousands(floor)
            ),
            None => format!(
                "no kind of the base, of at least {} bytes on one side, grew (limit +{limit}%)",
                thousands(floor)
            ),
        });
        parts.extend(new_kinds(kinds, floor));
    }
    if let Some(limit) = t.method_fail_above {
        parts.push(format!(
            "no method of at least {} bytes grew more than {limit}%",
            thousands(t.method_min_bytes)
        ));
    }
    format!("no regression: {}", parts.join("; "))
}

/// The tiers judged on their own, each beside the limit, and those below the floor: `MinOpts
/// +3.00%, FullOpts -2.00% (limit +25% per tier of at least 1,000,000 bytes; MinOpts not
/// judged on its own: 12,000 bytes, below the tier floor)`. Nothing when no tier was judged
/// or skipped for its size (a collection of one tier).
fn tiers_passing(tiers: &[TierJudged], limit: f64, floor: u64) -> Option<String> {
    let judged: Vec<String> = tiers
        .iter()
        .filter(|t| t.skipped.is_none())
        .map(|t| {
            let p = pct_change(t.base, t.diff);
            format!("{} {}", t.tier, beside(p, limit).replace("new", "+0.00%"))
        })
        .collect();
    let small: Vec<&str> = tiers
        .iter()
        .filter(|t| t.skipped.is_some() && t.base.max(t.diff) < floor)
        .map(|t| t.tier.as_str())
        .collect();
    if judged.is_empty() && small.is_empty() {
        return None;
    }
    let mut text = if judged.is_empty() {
        String::new()
    } else {
        format!("{} ", judged.join(", "))
    };
    text.push_str(&format!(
        "(limit +{limit}% per tier of at least {} bytes",
        thousands(floor)
    ));
    if !small.is_empty() {
        text.push_str(&format!(
            "; {} below it, not judged on {} own",
            small.join(" and "),
            if small.len() == 1 { "its" } else { "their" }
        ));
    }
    text.push(')');
    Some(text)
}

/// The kinds of at least `floor` bytes that are new in the diff, largest first (at most 3
/// named): `kinds new in the diff, judged through the total: BlockSet (150,000 bytes)`.
fn new_kinds(kinds: &[Delta], floor: u64) -> Option<String> {
    const NAMED: usize = 3;
    let mut new: Vec<&Delta> = kinds
        .iter()
        .filter(|k| k.base == 0 && k.diff > 0 && k.diff >= floor)
        .collect();
    if new.is_empty() {
        return None;
    }
    new.sort_by(|a, b| b.diff.cmp(&a.diff).then_with(|| a.name.cmp(&b.name)));
    let mut named: Vec<String> = new
        .iter()
        .take(NAMED)
        .map(|k| format!("{} ({} bytes)", shown(&k.name), thousands(k.diff)))
        .collect();
    if new.len() > NAMED {
        named.push(format!("{} more", new.len() - NAMED));
    }
    Some(format!(
        "kind{} new in the diff, judged through the total: {}",
        plural(new.len() as u64),
        named.join(", ")
    ))
}

/// The coverage rules broken by one collection's diff: no matched method, a side that counted
/// no byte, a side missing more than `max_missed` percent of the other side's methods, a log
/// or CSV file cut short.
pub fn judge_coverage(diff: &MemDiff, rules: &CoverageRules) -> Vec<Failure> {
    let c = &diff.coverage;
    let mut out = Vec::new();
    if c.matched == 0 {
        let sentence = format!(
            "no method matched (base {} methods, diff {}): the inputs do not come from the same methods",
            thousands(c.base_methods()),
            thousands(c.diff_methods())
        );
        out.push(
            Failure::new(Rule::NoMatch, "methods", sentence)
                .figures(c.base_methods(), c.diff_methods()),
        );
    }
    no_bytes(diff, &mut out);
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
            let sentence = format!(
                "the {side} misses {} of the {other}'s {} methods ({shown}%), above --max-missed {}%",
                thousands(missed),
                thousands(of),
                rules.max_missed
            );
            out.push(
                Failure::new(Rule::Missed, side, sentence)
                    .figures(c.base_methods(), c.diff_methods())
                    .against(Some(share), rules.max_missed),
            );
        }
    }
    if !rules.allow_failing_compiles {
        failing_compiles(c, &mut out);
    }
    if !rules.allow_duplicates {
        duplicates(c, &mut out);
    }
    if !rules.allow_truncated {
        for file in &c.truncated {
            let sentence = if diff.has_kinds {
                format!(
                    "{file}: a log cut short (its last record, or that of a log merged into it, is incomplete: a JIT killed while writing, or a log still being written); --allow-truncated accepts it"
                )
            } else {
                format!(
                    "{file}: a CSV file cut short (its last line has no line ending, so its last row, which may stop inside a number, is not read: a replay killed while writing, or a file still being written); --allow-truncated accepts it"
                )
            };
            out.push(Failure::new(Rule::Truncated, file.clone(), sentence));
        }
    }
    out
}

/// Compiles that failed on one side only: the contexts that side's JIT could not compile,
/// which no byte count can stand for.
fn failing_compiles(c: &super::Coverage, out: &mut Vec<Failure>) {
    for (side, other, count, largest) in [
        ("diff", "base", c.failing_diff_only, &c.failing_in_diff),
        ("base", "diff", c.failing_base_only, &c.failing_in_base),
    ] {
        if count == 0 {
            continue;
        }
        let example = match largest.first() {
            Some(m) if m.context >= 0 => format!("; the largest: context {}", m.context),
            _ => String::new(),
        };
        let sentence = format!(
            "the {side} JIT failed to compile {} context{} that the {other} compiled (SuperPMI's Error result{example}); --allow-failing-compiles accepts them",
            thousands(count),
            plural(count)
        );
        out.push(
            Failure::new(Rule::FailingCompiles, side, sentence)
                .figures(c.failing_base_only, c.failing_diff_only),
        );
    }
}

/// Contexts seen more than once on a side: shards given twice, or a context compiled twice.
fn duplicates(c: &super::Coverage, out: &mut Vec<Failure>) {
    for (side, count) in [("base", c.duplicates_base), ("diff", c.duplicates_diff)] {
        if count == 0 {
            continue;
        }
        let example = c
            .duplicate_examples
            .iter()
            .find(|d| d.side.contains(side))
            .map_or(String::new(), |d| {
                format!(
                    " (context {}: {})",
                    d.context,
                    d.place(|f| shown(f).into_owned())
                )
            });
        let sentence = format!(
            "the {side} holds {} record{} of contexts it already has{example}: shards given twice, or a context recorded twice; --allow-duplicates compares the k-th record of a context with the k-th of the other side",
            thousands(count),
            plural(count)
        );
        out.push(
            Failure::new(Rule::Duplicates, side, sentence)
                .figures(c.duplicates_base, c.duplicates_diff),
        );
    }
}

/// No byte over matched methods is no measurement: every byte in an ignored kind, or a JIT
/// whose arena did not count (JITARENA_NO_COUNTERS); its "-100%" is not a saving.
fn no_bytes(diff: &MemDiff, out: &mut Vec<Failure>) {
    let c = &diff.coverage;
    let o = diff.overall();
    let ignoring = !diff.ignored_kinds.is_empty();
    if c.matched == 0 {
        return;
    }
    if o.base.bytes == 0 && o.diff.bytes == 0 && ignoring {
        let sentence = format!(
            "--ignore-kind left no byte of the {} matched methods to compare (every byte was in an ignored kind)",
            thousands(c.matched)
        );
        out.push(Failure::new(Rule::NoBytes, "ignored kinds", sentence).figures(0, 0));
        return;
    }
    for (side, bytes) in [("base", o.base.bytes), ("diff", o.diff.bytes)] {
        if bytes == 0 {
            let sentence = format!(
                "the {side} counted no byte in its {} matched methods{}: no measurement (a JIT built with JITARENA_NO_COUNTERS?)",
                thousands(c.matched),
                if ignoring { " outside the ignored kinds" } else { "" }
            );
            out.push(
                Failure::new(Rule::NoBytes, side, sentence).figures(o.base.bytes, o.diff.bytes),
            );
        }
    }
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
