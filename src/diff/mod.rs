//! memdiff: what moved between a baseline JIT's stats logs and a changed JIT's, per kind, per
//! phase, per tier and per method, and whether it moved enough to fail the check.
//!
//! [`diff_logs`] streams the logs with memory bounded by the number of methods; [`diff_csv`]
//! does the same from a per-method CSV with base and diff byte columns.

mod csv;
mod logs;

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

pub use csv::diff_csv;
pub use logs::diff_logs;

use crate::log::{MethodCounts, MethodInfo};
use crate::union::{SchemaUnion, INVALID};

/// What to compare and how to judge it.
#[derive(Debug, Clone)]
pub struct DiffOptions {
    /// Kinds left out of every total (e.g. `DebugOnly`, to compare debug builds).
    pub ignore_kinds: Vec<String>,
    /// How many methods each top list names.
    pub top: usize,
    /// Methods smaller than this (in the base) are left out of the relative top lists.
    pub min_method_bytes: u64,
    /// The gate.
    pub thresholds: Thresholds,
}

impl Default for DiffOptions {
    fn default() -> DiffOptions {
        DiffOptions {
            ignore_kinds: Vec::new(),
            top: 10,
            min_method_bytes: 10_000,
            thresholds: Thresholds::default(),
        }
    }
}

/// The gate: growth beyond these fails the check (improvements never fail).
#[derive(Debug, Clone, PartialEq)]
pub struct Thresholds {
    /// Total bytes requested may grow by at most this percentage.
    pub fail_above: f64,
    /// Any kind may grow by at most this percentage (`None`: not checked)...
    pub kind_fail_above: Option<f64>,
    /// ...counting only kinds of at least this many bytes on one side (`None`: 1% of the
    /// base's total bytes).
    pub kind_min_bytes: Option<u64>,
    /// Any method may grow by at most this percentage (`None`: not checked)...
    pub method_fail_above: Option<f64>,
    /// ...counting only methods of at least this many bytes in the base.
    pub method_min_bytes: u64,
}

impl Default for Thresholds {
    fn default() -> Thresholds {
        Thresholds {
            fail_above: 25.0,
            kind_fail_above: Some(25.0),
            kind_min_bytes: None,
            method_fail_above: None,
            method_min_bytes: 100_000,
        }
    }
}

/// Figures of one side for a set of methods.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Bytes requested.
    pub bytes: u64,
    /// Allocations.
    pub allocations: u64,
    /// Rounded bytes handed out.
    pub used: u64,
    /// Page bytes obtained.
    pub reserved: u64,
}

/// Totals of the matched methods of one tier group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// `Overall`, `MinOpts`, `FullOpts` or `Other`.
    pub name: String,
    /// Matched methods in the group.
    pub methods: u64,
    /// The base's figures.
    pub base: Totals,
    /// The diff's figures.
    pub diff: Totals,
}

/// A named base/diff pair (a kind, a phase).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delta {
    /// The name.
    pub name: String,
    /// Base bytes.
    pub base: u64,
    /// Diff bytes.
    pub diff: u64,
}

impl Delta {
    /// Diff minus base.
    pub fn delta(&self) -> i128 {
        i128::from(self.diff) - i128::from(self.base)
    }
}

/// A method in a top list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodDelta {
    /// Context number (-1: unknown).
    pub context: i64,
    /// Name, if known.
    pub name: Option<String>,
    /// Tier, if known.
    pub tier: Option<String>,
    /// Base bytes.
    pub base: u64,
    /// Diff bytes.
    pub diff: u64,
    /// The kind whose bytes moved most in this method, and by how much.
    pub top_kind: Option<(String, i128)>,
}

/// Who was compared.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Files read per side.
    pub base_files: usize,
    /// Files read for the diff side.
    pub diff_files: usize,
    /// Methods on both sides.
    pub matched: u64,
    /// Methods only in the base, and their bytes.
    pub only_base: u64,
    /// Bytes of the methods only in the base.
    pub only_base_bytes: u64,
    /// Methods only in the diff.
    pub only_diff: u64,
    /// Bytes of the methods only in the diff.
    pub only_diff_bytes: u64,
}

/// Quantiles of per-method bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Quantiles {
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// Largest.
    pub max: u64,
}

/// The per-method distribution of matched methods.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Distribution {
    /// Base per-method bytes.
    pub base: Quantiles,
    /// Diff per-method bytes.
    pub diff: Quantiles,
    /// Methods whose bytes grew.
    pub grew: u64,
    /// Methods whose bytes shrank.
    pub shrank: u64,
    /// Methods whose bytes stayed equal.
    pub same: u64,
    /// Methods per bucket of change: see [`CHANGE_BUCKETS`].
    pub change_histogram: Vec<u64>,
}

/// The buckets of [`Distribution::change_histogram`]: per-method change in percent.
pub const CHANGE_BUCKETS: [&str; 10] = [
    "-50% or less",
    "-50% to -10%",
    "-10% to -1%",
    "-1% to 0%",
    "unchanged",
    "0% to +1%",
    "+1% to +10%",
    "+10% to +50%",
    "+50% to +100%",
    "+100% or more",
];

/// The outcome of the gate.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// Whether growth went beyond a threshold.
    pub regression: bool,
    /// The rule that decided, in words.
    pub rule: String,
    /// Every threshold crossed.
    pub failures: Vec<String>,
    /// The thresholds applied (with the kind floor resolved).
    pub thresholds: Thresholds,
}

/// Everything memdiff reports.
#[derive(Debug, Clone, PartialEq)]
pub struct MemDiff {
    /// Who was compared.
    pub coverage: Coverage,
    /// Overall first, then each tier group present.
    pub groups: Vec<Group>,
    /// Per kind, by absolute delta (largest first), then name; empty for a CSV diff.
    pub kinds: Vec<Delta>,
    /// Per phase, in phase order; empty where no phases were recorded.
    pub phases: Vec<Delta>,
    /// Whether per-kind figures exist (not for a CSV diff).
    pub has_kinds: bool,
    /// Kinds left out of the totals.
    pub ignored_kinds: Vec<String>,
    /// Per-method distribution.
    pub distribution: Distribution,
    /// Methods that grew most, in bytes.
    pub top_growth: Vec<MethodDelta>,
    /// Methods that shrank most, in bytes.
    pub top_shrinkage: Vec<MethodDelta>,
    /// Methods that grew most, relatively (at least `min_method_bytes` in the base).
    pub top_relative_growth: Vec<MethodDelta>,
    /// Methods that shrank most, relatively.
    pub top_relative_shrinkage: Vec<MethodDelta>,
    /// The floor of the relative lists.
    pub min_method_bytes: u64,
    /// Up to 4,000 matched methods' (base, diff) bytes, for a scatter plot: those in the top
    /// lists and an even sample of the rest.
    pub scatter: Vec<(u64, u64)>,
    /// The gate's outcome.
    pub verdict: Verdict,
    /// Readers' warnings.
    pub warnings: Vec<String>,
}

impl MemDiff {
    /// The Overall group.
    pub fn overall(&self) -> &Group {
        &self.groups[0]
    }
}

/// Percent change from `base` to `diff` (`None` when the base is 0).
pub fn pct_change(base: u64, diff: u64) -> Option<f64> {
    (base != 0).then(|| (diff as f64 - base as f64) * 100.0 / base as f64)
}

/// The tier group of a tier name: MinOpts (MinOpts, Tier0), FullOpts (FullOpts, Tier1, OSR),
/// or Other.
pub fn tier_group(tier: Option<&str>) -> u8 {
    let t = tier
        .unwrap_or("")
        .to_ascii_lowercase()
        .replace(['-', ' ', '_'], "");
    if t.contains("minopt") || t.contains("tier0") {
        1
    } else if t.contains("fullopt") || t.contains("tier1") || t.contains("osr") {
        2
    } else {
        3
    }
}

const GROUP_NAMES: [&str; 4] = ["Overall", "MinOpts", "FullOpts", "Other"];

/// The per-method figures and sums gathered from both sides, from which the report is made.
#[derive(Default)]
pub(crate) struct Tally {
    /// Per base method (in base order): bytes requested, without ignored kinds.
    pub base_bytes: Vec<u64>,
    /// Per base method: the matched diff method's bytes.
    pub diff_bytes: Vec<u64>,
    /// Per base method: its tier group (see [`tier_group`]).
    pub group: Vec<u8>,
    /// Per base method: whether a diff method matched it.
    pub matched: Vec<bool>,
    /// Per base method: its context number (ties in the top lists go to the smaller one, so
    /// that the lists do not depend on the order of shards).
    pub context: Vec<i64>,
    /// Per group (0: Overall): totals of the matched base methods.
    pub groups_base: [Totals; 4],
    /// Per group: totals of the matched diff methods.
    pub groups_diff: [Totals; 4],
    /// Per-kind and per-phase sums of the matched methods.
    pub sums_base: Sums,
    /// The same for the diff side.
    pub sums_diff: Sums,
    /// The united kind and phase names.
    pub union: SchemaUnion,
    /// Per united kind slot: whether it is left out.
    pub ignored: Vec<bool>,
    /// Who was compared.
    pub coverage: Coverage,
}

impl Tally {
    /// `counts` (against the union) without the ignored kinds, and its totals.
    pub(crate) fn without_ignored(
        &mut self,
        counts: &mut MethodCounts,
        ignore: &[String],
    ) -> Totals {
        self.sync_ignored(ignore);
        strip_ignored(&self.ignored, counts)
    }

    /// Extends the ignored flags to every united kind.
    pub(crate) fn sync_ignored(&mut self, ignore: &[String]) {
        while self.ignored.len() < self.union.kind_count() {
            let name = self.union.kind_name(self.ignored.len() as u32);
            self.ignored.push(ignore.iter().any(|k| k == name));
        }
    }

    fn delta(&self, i: u32) -> i128 {
        i128::from(self.diff_bytes[i as usize]) - i128::from(self.base_bytes[i as usize])
    }
}

/// Removes the ignored kinds (flags by united slot) from `counts`; returns its totals.
pub(crate) fn strip_ignored(ignored: &[bool], counts: &mut MethodCounts) -> Totals {
    if !ignored.is_empty() && ignored.contains(&true) {
        counts
            .kinds
            .retain(|k| !ignored.get(k.0 as usize).copied().unwrap_or(false));
    }
    Totals {
        bytes: counts.total_bytes(),
        allocations: counts.total_count(),
        used: counts.used_bytes,
        reserved: counts.reserved_bytes,
    }
}

/// Per-kind and per-phase byte sums of one side, by united slot.
#[derive(Default)]
pub(crate) struct Sums {
    kinds: Vec<u64>,
    invalid_kind: u64,
    phases: Vec<u64>,
    no_phase: u64,
}

impl Sums {
    /// Adds (or, with `sign` false, takes away) a method's counts, laid out against `union`.
    pub(crate) fn add(&mut self, c: &MethodCounts, union: &SchemaUnion, sign: bool) {
        self.kinds.resize(union.kind_count(), 0);
        self.phases.resize(union.phase_count(), 0);
        let apply = |cell: &mut u64, v: u64| *cell = if sign { *cell + v } else { *cell - v };
        for &(slot, bytes, _) in &c.kinds {
            apply(
                self.kinds
                    .get_mut(slot as usize)
                    .unwrap_or(&mut self.invalid_kind),
                bytes,
            );
        }
        for &(slot, bytes) in &c.phases {
            apply(
                self.phases
                    .get_mut(slot as usize)
                    .unwrap_or(&mut self.no_phase),
                bytes,
            );
        }
    }
}

impl Totals {
    pub(crate) fn add(&mut self, o: &Totals) {
        self.bytes += o.bytes;
        self.allocations += o.allocations;
        self.used += o.used;
        self.reserved += o.reserved;
    }

    pub(crate) fn sub(&mut self, o: &Totals) {
        self.bytes -= o.bytes;
        self.allocations -= o.allocations;
        self.used -= o.used;
        self.reserved -= o.reserved;
    }
}

/// A fast hasher for keys that are already well mixed (contexts and 128-bit name hashes).
#[derive(Default)]
struct MixHasher(u64);

impl Hasher for MixHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }
    fn write_i64(&mut self, v: i64) {
        self.write_u64(v as u64);
    }
    fn write_u128(&mut self, v: u128) {
        self.write_u64(v as u64);
        self.write_u64((v >> 64) as u64);
    }
    fn write_u8(&mut self, v: u8) {
        self.write_u64(u64::from(v));
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
    fn write_isize(&mut self, v: isize) {
        self.write_u64(v as u64);
    }
}

type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<MixHasher>>;

/// The indexes of the methods each top list names.
pub(crate) struct TopLists {
    pub growth: Vec<u32>,
    pub shrinkage: Vec<u32>,
    pub relative_growth: Vec<u32>,
    pub relative_shrinkage: Vec<u32>,
    /// All of them, sorted, once each.
    pub all: Vec<u32>,
}

impl TopLists {
    /// The lists of the matched methods of a tally.
    pub(crate) fn of(t: &Tally, options: &DiffOptions) -> TopLists {
        let n = options.top;
        let matched: Vec<u32> = (0..t.base_bytes.len() as u32)
            .filter(|&i| t.matched[i as usize])
            .collect();
        let rel = |i: u32| t.diff_bytes[i as usize] as f64 / t.base_bytes[i as usize] as f64;
        // The n first by `order` (ties by index), found in linear time, then sorted.
        let pick = |keep: &dyn Fn(u32) -> bool, order: &dyn Fn(u32, u32) -> std::cmp::Ordering| {
            let mut list: Vec<u32> = matched.iter().copied().filter(|&i| keep(i)).collect();
            let cmp = |a: &u32, b: &u32| {
                order(*a, *b)
                    .then(t.context[*a as usize].cmp(&t.context[*b as usize]))
                    .then(a.cmp(b))
            };
            if n > 0 && list.len() > n {
                list.select_nth_unstable_by(n - 1, cmp);
            }
            list.truncate(n);
            list.sort_by(cmp);
            list
        };
        let floor = options.min_method_bytes.max(1);
        let big = |i: u32| t.base_bytes[i as usize] >= floor;
        let growth = pick(&|i| t.delta(i) > 0, &|a, b| t.delta(b).cmp(&t.delta(a)));
        let shrinkage = pick(&|i| t.delta(i) < 0, &|a, b| t.delta(a).cmp(&t.delta(b)));
        let relative_growth = pick(&|i| big(i) && t.delta(i) > 0, &|a, b| {
            rel(b).total_cmp(&rel(a))
        });
        let relative_shrinkage = pick(&|i| big(i) && t.delta(i) < 0, &|a, b| {
            rel(a).total_cmp(&rel(b))
        });
        let mut all: Vec<u32> = [&growth, &shrinkage, &relative_growth, &relative_shrinkage]
            .into_iter()
            .flatten()
            .copied()
            .collect();
        all.sort_unstable();
        all.dedup();
        TopLists {
            growth,
            shrinkage,
            relative_growth,
            relative_shrinkage,
            all,
        }
    }

    /// The four lists, each method described by `describe`.
    pub(crate) fn describe(&self, describe: impl Fn(u32) -> MethodDelta) -> [Vec<MethodDelta>; 4] {
        [
            &self.growth,
            &self.shrinkage,
            &self.relative_growth,
            &self.relative_shrinkage,
        ]
        .map(|l| l.iter().map(|&i| describe(i)).collect())
    }
}

/// A listed method: its figures, and the kind that moved most between the two sides' sparse
/// per-kind bytes (united slots).
pub(crate) fn method_delta(
    t: &Tally,
    i: u32,
    info: &MethodInfo,
    base: &[(u32, u64)],
    diff: &[(u32, u64)],
) -> MethodDelta {
    let mut moves: FastMap<u32, i128> = FastMap::default();
    for &(slot, b) in base {
        *moves.entry(slot).or_default() -= i128::from(b);
    }
    for &(slot, b) in diff {
        *moves.entry(slot).or_default() += i128::from(b);
    }
    let top_kind = moves
        .into_iter()
        .filter(|m| m.1 != 0)
        .max_by(|a, b| a.1.abs().cmp(&b.1.abs()).then(b.0.cmp(&a.0)))
        .map(|(slot, delta)| (t.union.kind_name(slot).to_string(), delta));
    MethodDelta {
        context: info.context,
        name: info.name.clone(),
        tier: info.tier.clone(),
        base: t.base_bytes[i as usize],
        diff: t.diff_bytes[i as usize],
        top_kind,
    }
}

fn quantiles(mut v: Vec<u64>) -> Quantiles {
    v.sort_unstable();
    Quantiles {
        p50: crate::report::quantile(&v, 0.5),
        p90: crate::report::quantile(&v, 0.9),
        p99: crate::report::quantile(&v, 0.99),
        max: v.last().copied().unwrap_or(0),
    }
}

/// The bucket of [`CHANGE_BUCKETS`] a method's change falls in.
pub fn change_bucket(base: u64, diff: u64) -> usize {
    if base == diff {
        return 4;
    }
    let p = pct_change(base, diff).unwrap_or(f64::INFINITY);
    match p {
        p if p <= -50.0 => 0,
        p if p <= -10.0 => 1,
        p if p <= -1.0 => 2,
        p if p < 0.0 => 3,
        p if p < 1.0 => 5,
        p if p < 10.0 => 6,
        p if p < 50.0 => 7,
        p if p < 100.0 => 8,
        _ => 9,
    }
}

/// Makes the report from a finished tally and its described top lists.
pub(crate) fn finish(
    t: Tally,
    options: &DiffOptions,
    lists: [Vec<MethodDelta>; 4],
    listed: &[u32],
    warnings: Vec<String>,
) -> MemDiff {
    let mut groups: Vec<Group> = GROUP_NAMES
        .iter()
        .zip(t.groups_base.iter().zip(&t.groups_diff))
        .map(|(n, (b, d))| Group {
            name: n.to_string(),
            methods: 0,
            base: *b,
            diff: *d,
        })
        .collect();
    let mut distribution = Distribution {
        change_histogram: vec![0; CHANGE_BUCKETS.len()],
        ..Distribution::default()
    };
    let mut pairs = Vec::with_capacity(t.base_bytes.len());
    for i in (0..t.base_bytes.len()).filter(|&i| t.matched[i]) {
        let (b, d) = (t.base_bytes[i], t.diff_bytes[i]);
        groups[0].methods += 1;
        groups[t.group[i] as usize].methods += 1;
        match d.cmp(&b) {
            std::cmp::Ordering::Greater => distribution.grew += 1,
            std::cmp::Ordering::Less => distribution.shrank += 1,
            std::cmp::Ordering::Equal => distribution.same += 1,
        }
        distribution.change_histogram[change_bucket(b, d)] += 1;
        pairs.push((b, d));
    }
    let mut coverage = t.coverage.clone();
    coverage.matched = groups[0].methods;
    groups.retain(|g| g.name == "Overall" || g.methods > 0);
    distribution.base = quantiles(pairs.iter().map(|p| p.0).collect());
    distribution.diff = quantiles(pairs.iter().map(|p| p.1).collect());
    let kinds = kind_deltas(&t);
    let phases = phase_deltas(&t);
    let scatter = scatter_sample(&t, listed);
    let [top_growth, top_shrinkage, top_relative_growth, top_relative_shrinkage] = lists;
    let mut diff = MemDiff {
        coverage,
        groups,
        kinds,
        phases,
        has_kinds: true,
        ignored_kinds: options.ignore_kinds.clone(),
        distribution,
        top_growth,
        top_shrinkage,
        top_relative_growth,
        top_relative_shrinkage,
        min_method_bytes: options.min_method_bytes,
        scatter,
        verdict: Verdict {
            regression: false,
            rule: String::new(),
            failures: Vec::new(),
            thresholds: options.thresholds.clone(),
        },
        warnings,
    };
    diff.verdict = judge(&diff, &options.thresholds, &pairs);
    diff
}

fn kind_deltas(t: &Tally) -> Vec<Delta> {
    let (b, d) = (&t.sums_base, &t.sums_diff);
    let mut kinds: Vec<Delta> = (0..t.union.kind_count())
        .filter(|&s| !t.ignored.get(s).copied().unwrap_or(false))
        .map(|s| Delta {
            name: t.union.kind_name(s as u32).to_string(),
            base: b.kinds.get(s).copied().unwrap_or(0),
            diff: d.kinds.get(s).copied().unwrap_or(0),
        })
        .collect();
    if b.invalid_kind + d.invalid_kind > 0 {
        kinds.push(Delta {
            name: t.union.kind_name(INVALID).to_string(),
            base: b.invalid_kind,
            diff: d.invalid_kind,
        });
    }
    kinds.sort_by(|x, y| {
        y.delta()
            .abs()
            .cmp(&x.delta().abs())
            .then_with(|| x.name.cmp(&y.name))
    });
    kinds
}

fn phase_deltas(t: &Tally) -> Vec<Delta> {
    let (b, d) = (&t.sums_base, &t.sums_diff);
    let mut phases: Vec<Delta> = (0..t.union.phase_count())
        .map(|s| Delta {
            name: t.union.phase_name(s as u32).to_string(),
            base: b.phases.get(s).copied().unwrap_or(0),
            diff: d.phases.get(s).copied().unwrap_or(0),
        })
        .collect();
    if b.no_phase + d.no_phase > 0 && !phases.is_empty() {
        phases.push(Delta {
            name: t.union.phase_name(INVALID).to_string(),
            base: b.no_phase,
            diff: d.no_phase,
        });
    }
    phases
}

/// Up to 4,000 (base, diff) pairs of matched methods: the listed ones and an even sample of
/// the rest, each method once.
fn scatter_sample(t: &Tally, listed: &[u32]) -> Vec<(u64, u64)> {
    const MAX: usize = 4000;
    let matched: Vec<usize> = (0..t.base_bytes.len()).filter(|&i| t.matched[i]).collect();
    let room = MAX - listed.len().min(MAX / 2);
    let step = matched.len().div_ceil(room).max(1);
    let mut chosen: Vec<usize> = matched.into_iter().step_by(step).collect();
    chosen.extend(listed.iter().map(|&i| i as usize));
    chosen.sort_unstable();
    chosen.dedup();
    chosen.truncate(MAX);
    chosen
        .into_iter()
        .map(|i| (t.base_bytes[i], t.diff_bytes[i]))
        .collect()
}

/// Applies the thresholds.
pub fn judge(diff: &MemDiff, t: &Thresholds, methods: &[(u64, u64)]) -> Verdict {
    let o = diff.overall();
    // `failures`: one self-contained line per threshold crossed (for machines); `summary`: the
    // same, with the kinds that crossed one threshold on one line (for people).
    let mut failures: Vec<String> = Vec::new();
    let mut summary: Vec<String> = Vec::new();
    let total = pct_change(o.base.bytes, o.diff.bytes);
    let fmt_pct = |p: Option<f64>| p.map_or("new".to_string(), |p| format!("{p:+.2}%"));
    let th = crate::report::thousands;
    if o.diff.bytes > o.base.bytes && total.is_none_or(|p| p > t.fail_above) {
        failures.push(format!(
            "total bytes grew {} ({} → {}), above --fail-above {}%",
            fmt_pct(total),
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
                    k.name,
                    fmt_pct(p),
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
    let regression = !failures.is_empty();
    let rule = if regression {
        summary.join("; ")
    } else {
        let mut parts = vec![format!(
            "total {} (limit +{}%)",
            fmt_pct(total).replace("new", "+0.00%"),
            t.fail_above
        )];
        if let Some(limit) = t.kind_fail_above {
            parts.push(match worst_kind {
                Some((k, p)) => format!(
                    "largest kind growth {} {} (limit +{limit}% for kinds of at least {} bytes)",
                    k.name,
                    fmt_pct(p),
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
