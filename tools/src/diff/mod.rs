//! memdiff: what moved between a baseline JIT's stats logs and a changed JIT's, per kind, per
//! phase, per tier and per method, and whether it moved enough to fail the check.
//!
//! [`diff_logs`] streams the logs with memory bounded by the number of methods; [`diff_csv`]
//! does the same from a per-method CSV with base and diff byte columns.

mod collections;
mod csv;
mod failed;
mod gate;
mod logs;
pub(crate) use logs::regular_file;
mod identity;
mod repeats;
mod side;
mod tally;

pub use collections::{
    collections_from_roots, diff_collections, pair_name, Collection, CollectionDiff, CoverageRules,
    OneSided, Outcome, Report, Status, TierTopAcross,
};
pub use csv::{collection_name, diff_csv, CsvColumns, DEFAULT_METRIC};
pub use gate::{judge, judge_coverage, Failure, Rule};
pub use logs::diff_logs;
pub use tally::change_bucket;

use jitarena::log::MethodInfo;

/// What to compare and how to judge it.
#[derive(Debug, Clone)]
pub struct DiffOptions {
    /// Kinds left out of every total (e.g. `DebugOnly`, to compare debug builds).
    pub ignore_kinds: Vec<String>,
    /// How many methods each top list names.
    pub top: usize,
    /// Methods smaller than this (in the base) are left out of the relative top lists.
    pub min_method_bytes: u64,
    /// Methods that grew by fewer bytes are left out of the summary's list of methods that
    /// grew most, so that tiny methods with huge percentages stay out.
    pub min_delta_bytes: u64,
    /// The gate.
    pub thresholds: Thresholds,
    /// Where the reading of the logs is counted (by collection and side); hidden by default.
    pub progress: crate::progress::Progress,
}

impl Default for DiffOptions {
    fn default() -> DiffOptions {
        DiffOptions {
            ignore_kinds: Vec::new(),
            top: 10,
            min_method_bytes: 10_000,
            min_delta_bytes: 4_096,
            thresholds: Thresholds::default(),
            progress: crate::progress::Progress::hidden(),
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
    /// A tier group (MinOpts, FullOpts) is judged against `fail_above` on its own only when it
    /// holds at least this many bytes on one side...
    pub tier_min_bytes: u64,
    /// ...and at least this percentage of the collection's base bytes (the larger floor
    /// applies), so that a tier of a few methods does not fail the check on its own.
    pub tier_min_share: f64,
}

impl Thresholds {
    /// The least bytes a tier group needs, on one side, to be judged on its own, in a
    /// collection whose matched base methods hold `base_total` bytes: the larger of
    /// [`Thresholds::tier_min_bytes`] and [`Thresholds::tier_min_share`] of the total.
    pub fn tier_floor(&self, base_total: u64) -> u64 {
        let share = (base_total as f64 * self.tier_min_share / 100.0).ceil();
        // A share of a u64 is at most the u64 (for shares up to 100%).
        let share = if share >= u64::MAX as f64 {
            u64::MAX
        } else {
            share as u64
        };
        self.tier_min_bytes.max(share)
    }
}

impl Default for Thresholds {
    fn default() -> Thresholds {
        Thresholds {
            fail_above: 25.0,
            kind_fail_above: Some(25.0),
            kind_min_bytes: None,
            method_fail_above: None,
            method_min_bytes: 100_000,
            tier_min_bytes: 1_000_000,
            tier_min_share: 1.0,
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

/// Bytes of one kind while one phase was current (from arenas made with `kinds_by_phase` on).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhaseKindDelta {
    /// The phase's name.
    pub phase: String,
    /// The kind's name.
    pub kind: String,
    /// Base bytes.
    pub base: u64,
    /// Diff bytes.
    pub diff: u64,
}

impl PhaseKindDelta {
    /// Diff minus base.
    pub fn delta(&self) -> i128 {
        i128::from(self.diff) - i128::from(self.base)
    }
}

/// Sorts (phase, kind) pairs as the reports list them: by absolute delta (largest first),
/// then phase and kind name.
pub(crate) fn sort_phase_kinds(rows: &mut [PhaseKindDelta]) {
    rows.sort_by(|x, y| {
        y.delta()
            .abs()
            .cmp(&x.delta().abs())
            .then_with(|| x.phase.cmp(&y.phase))
            .then_with(|| x.kind.cmp(&y.kind))
    });
}

/// A kind's name without the .NET JIT's `CMK_` prefix (in any case): `CMK_LSRA` is `LSRA`.
pub fn without_cmk(kind: &str) -> &str {
    match kind.get(..4) {
        Some(prefix) if prefix.eq_ignore_ascii_case("CMK_") => &kind[4..],
        _ => kind,
    }
}

/// Whether two kind names name one kind, as `--ignore-kind` matches them: without case, and
/// without the `CMK_` prefix on either side (`CMK_DebugOnly`, `debugonly` and a log's
/// `CMK_DEBUGONLY` are one kind).
pub fn same_kind(a: &str, b: &str) -> bool {
    without_cmk(a).eq_ignore_ascii_case(without_cmk(b))
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
    /// The largest base methods the diff lacks (a crash of the diff JIT shows here), largest
    /// first, at most [`DiffOptions::top`] of them.
    pub missing_in_diff: Vec<Missing>,
    /// The largest diff methods the base lacks, largest first.
    pub missing_in_base: Vec<Missing>,
    /// Files whose last record was cut short (a JIT killed while writing, or a log still being
    /// written).
    pub truncated: Vec<String>,
    /// Methods whose arena refused a request on its memory limit, per side.
    pub limit_hits_base: u64,
    /// The same of the diff.
    pub limit_hits_diff: u64,
    /// Matched methods that hit the limit in the diff but not in the base: their diff bytes
    /// stop at the limit, so their growth is understated (a regression the gate fails).
    pub limit_hits_new: u64,
    /// Compiles that failed in the base, as SuperPMI's details file says (`Base result` of
    /// `Error`), counted as its `superpmi.py` counts "Failing compiles": on both sides or not.
    pub failing_base: u64,
    /// The same of the diff.
    pub failing_diff: u64,
    /// Contexts whose diff compile failed where the base's did not (a failing compile the
    /// change brought), largest (by base bytes) first, at most [`DiffOptions::top`] of them.
    pub failing_in_diff: Vec<Missing>,
    /// How many contexts [`Coverage::failing_in_diff`] lists in all.
    pub failing_diff_only: u64,
    /// Contexts whose base compile failed where the diff's did not.
    pub failing_in_base: Vec<Missing>,
    /// How many contexts [`Coverage::failing_in_base`] lists in all.
    pub failing_base_only: u64,
    /// Contexts missed on both sides (SuperPMI's `Miss`: the collection lacks data the
    /// compile asked for): reported, never held against `--max-missed`.
    pub missed_both: u64,
    /// Contexts the base missed (`Miss`) whose diff compile failed (`Error`): nothing was
    /// measured on either side. Counted in [`Coverage::failing_diff`] and among the base's
    /// missed contexts; never held against `--max-missed`, never a failing compile the change
    /// brought (the base's compile is unknown).
    pub missed_base_failing_diff: u64,
    /// Contexts the diff missed whose base compile failed.
    pub missed_diff_failing_base: u64,
    /// The rows of a CSV file, each one context (0 for logs).
    pub csv_rows: u64,
    /// Records of the base beyond the first of their context (a shard given twice, a
    /// context compiled twice): never counted as missing on the other side.
    pub duplicates_base: u64,
    /// The same of the diff.
    pub duplicates_diff: u64,
    /// The first contexts seen more than once on a side, with the files that hold them.
    pub duplicate_examples: Vec<Duplicate>,
}

/// A context seen more than once on one side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Duplicate {
    /// The side: `base`, `diff`, or `base and diff` (a CSV row given twice).
    pub side: &'static str,
    /// The context number.
    pub context: i64,
    /// How many records of the context the side holds.
    pub records: u64,
    /// The files that hold its records, each once, in reading order: the first
    /// [`Duplicate::MAX_FILES`] of them.
    pub files: Vec<String>,
    /// How many more files hold its records.
    pub more_files: u64,
}

impl Duplicate {
    /// How many files a duplicate names at most (5,000 shards numbering their contexts from
    /// 0 would otherwise put 5,000 names in every line that names one).
    pub const MAX_FILES: usize = 3;

    /// A context's records, each from the file that holds it, in reading order.
    pub fn new(side: &'static str, context: i64, record_files: &[String]) -> Duplicate {
        let mut files: Vec<String> = Vec::new();
        let mut more_files = 0;
        let mut seen = std::collections::HashSet::new();
        for f in record_files {
            if !seen.insert(f.as_str()) {
                continue;
            }
            if files.len() < Self::MAX_FILES {
                files.push(f.clone());
            } else {
                more_files += 1;
            }
        }
        Duplicate {
            side,
            context,
            records: record_files.len() as u64,
            files,
            more_files,
        }
    }

    /// Where its records are, in words: `3 records in a.jas, b.jas and 7 more files`, or
    /// `2 records in a.jas` (a file that holds both); each file name as `name` shows it.
    pub fn place(&self, name: impl Fn(&str) -> String) -> String {
        let mut files: Vec<String> = self.files.iter().map(|f| name(f)).collect();
        if self.more_files > 0 {
            files.push(format!(
                "{} more file{}",
                crate::text::thousands(self.more_files),
                if self.more_files == 1 { "" } else { "s" }
            ));
        }
        let list = match files.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => files.concat(),
        };
        format!("{} records in {list}", crate::text::thousands(self.records))
    }
}

impl Coverage {
    /// Methods the base side holds.
    pub fn base_methods(&self) -> u64 {
        self.matched + self.only_base
    }

    /// Methods the diff side holds.
    pub fn diff_methods(&self) -> u64 {
        self.matched + self.only_diff
    }

    /// Contexts the base missed (in the diff only, missed on both sides, or missed by the
    /// base where the diff failed).
    pub fn missed_by_base(&self) -> u64 {
        self.only_diff + self.missed_both + self.missed_base_failing_diff
    }

    /// Contexts the diff missed.
    pub fn missed_by_diff(&self) -> u64 {
        self.only_base + self.missed_both + self.missed_diff_failing_base
    }

    /// The whole that the base's missed contexts are a share of: every context of a CSV
    /// file (as `superpmi.py` counts its MISSED contexts), else the diff's methods.
    pub fn diff_contexts(&self) -> u64 {
        if self.csv_rows > 0 {
            self.csv_rows
        } else {
            self.diff_methods()
        }
    }

    /// The whole that the diff's missed contexts are a share of.
    pub fn base_contexts(&self) -> u64 {
        if self.csv_rows > 0 {
            self.csv_rows
        } else {
            self.base_methods()
        }
    }
}

/// A method found on one side only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    /// Context number (-1: unknown).
    pub context: i64,
    /// Name, if known.
    pub name: Option<String>,
    /// Tier, if known.
    pub tier: Option<String>,
    /// Its bytes on the side that has it.
    pub bytes: u64,
}

/// The `n` largest of a stream of one-sided methods, in a deterministic order (bytes, then
/// context, then name, then tier), whatever order they come in: a bounded heap whose top is the
/// last kept, so that each method offered costs O(log n) and nothing is copied for one that
/// does not make the list.
pub(crate) struct Largest {
    n: usize,
    heap: std::collections::BinaryHeap<Ranked>,
}

/// A kept method, ordered as [`Largest`] lists them (the first listed is the least).
struct Ranked(Missing);

impl Ranked {
    fn key(
        &self,
    ) -> (
        std::cmp::Reverse<u64>,
        i64,
        &Option<String>,
        &Option<String>,
    ) {
        let m = &self.0;
        (std::cmp::Reverse(m.bytes), m.context, &m.name, &m.tier)
    }
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Ranked) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Ranked {}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Ranked) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ranked {
    fn cmp(&self, other: &Ranked) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

impl Largest {
    /// A list of at most `n` methods.
    pub(crate) fn new(n: usize) -> Largest {
        Largest {
            n,
            heap: std::collections::BinaryHeap::new(),
        }
    }

    /// Offers a method of `bytes` bytes.
    pub(crate) fn offer(&mut self, bytes: u64, info: &MethodInfo) {
        if self.n == 0 {
            return;
        }
        if self.heap.len() == self.n {
            let Some(last) = self.heap.peek() else {
                return;
            };
            let key = (
                std::cmp::Reverse(bytes),
                info.context,
                &info.name,
                &info.tier,
            );
            if key >= last.key() {
                return;
            }
            self.heap.pop();
        }
        self.heap.push(Ranked(Missing {
            context: info.context,
            name: info.name.clone(),
            tier: info.tier.clone(),
            bytes,
        }));
    }

    /// The methods kept, the largest first.
    pub(crate) fn into_sorted(self) -> Vec<Missing> {
        self.heap
            .into_sorted_vec()
            .into_iter()
            .map(|r| r.0)
            .collect()
    }
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
    /// Every threshold crossed, as fields and in words (without a collection).
    pub failures: Vec<Failure>,
    /// The thresholds applied (with the kind floor resolved).
    pub thresholds: Thresholds,
    /// The least bytes a tier group needed, on one side, to be judged on its own (see
    /// [`Thresholds::tier_floor`]).
    pub tier_floor: u64,
    /// The tier groups judged on their own, and those that were not, with why.
    pub tiers: Vec<TierJudged>,
}

/// Whether a tier group (MinOpts, FullOpts) was judged on its own against `--fail-above`.
#[derive(Debug, Clone, PartialEq)]
pub struct TierJudged {
    /// `MinOpts` or `FullOpts`.
    pub tier: String,
    /// The group's base bytes.
    pub base: u64,
    /// The group's diff bytes.
    pub diff: u64,
    /// Why it was not judged on its own (`None`: judged): below the tier floor, or holding
    /// every matched method (its total is the collection's, judged already).
    pub skipped: Option<String>,
}

/// The methods of one tier group whose bytes changed most relatively (by PDIFF), as
/// SuperPMI's throughput summary lists its "Top method regressions" and "Top method
/// improvements" per tier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TierTop {
    /// `MinOpts` or `FullOpts`.
    pub tier: String,
    /// The methods that grew most relatively, the largest PDIFF first.
    pub regressions: Vec<MethodDelta>,
    /// The methods that shrank most relatively, the largest fall first.
    pub improvements: Vec<MethodDelta>,
}

/// How many methods each per-tier list ([`TierTop`]) names, as SuperPMI's summary does.
pub const TIER_TOP: usize = 20;

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
    /// Per (phase, kind) pair with bytes on either side, by absolute delta (largest first);
    /// empty unless a side's arenas recorded kinds by phase (`kinds_by_phase`).
    pub phase_kinds: Vec<PhaseKindDelta>,
    /// Whether per-kind figures exist (not for a CSV diff).
    pub has_kinds: bool,
    /// Kinds left out of the totals.
    pub ignored_kinds: Vec<String>,
    /// The build ids the base's logs name (`jitarena_config.build_id`), each once.
    pub builds_base: Vec<String>,
    /// The build ids the diff's logs name.
    pub builds_diff: Vec<String>,
    /// The `--ignore-kind` names that no log of this collection names (matched without
    /// case): every name, for a CSV, which has no kinds.
    pub unknown_ignored: Vec<String>,
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
    /// Per tier group, FullOpts then MinOpts (each when it has matched methods): the methods
    /// that grew and shrank most relatively, at most [`TIER_TOP`] of each, none smaller than
    /// `min_method_bytes` in the base.
    pub tier_tops: Vec<TierTop>,
    /// The floor of the relative lists (and of the per-tier ones).
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

/// The tier group of a tier name (1: MinOpts, 2: FullOpts, 3: Other), the name compared
/// without case, spaces, `-` or `_`, as the .NET JIT names its tiers (`compGetTieringName`):
///
/// 1. a name that says how the compile ended, with `MinOpts` or `FullOpts`, is that group;
///    one that names both is the one named last (`Tier0-FullOpts` and `Tier-0 switched to
///    FullOpts` are FullOpts; `Tier0-FullOpts-MinOpts` and `Tier-0 switched to FullOpts, then
///    to MinOpts` are MinOpts);
/// 2. otherwise a name with `Tier1` or `OSR` is FullOpts (`Tier1`, `Tier1-OSR`, `OSR`,
///    `Instrumented Tier1`, `Tier1 instrumented`);
/// 3. otherwise a name with `Tier0` or `Instrumented` is MinOpts (`Tier0`, `Instrumented
///    Tier0`, `Tier0-instrumented`, `Tier0 instrumented`, `Instrumented`);
/// 4. anything else (`Debug`, `Unknown`, no tier) is Other, which no per-tier rule judges.
pub fn tier_group(tier: Option<&str>) -> u8 {
    let t: String = tier
        .unwrap_or("")
        .chars()
        .filter(|c| !matches!(c, '-' | '_' | ' '))
        .flat_map(char::to_lowercase)
        .collect();
    match (t.rfind("minopt"), t.rfind("fullopt")) {
        (Some(min), Some(full)) => return if min > full { 1 } else { 2 },
        (Some(_), None) => return 1,
        (None, Some(_)) => return 2,
        (None, None) => {}
    }
    if t.contains("tier1") || t.contains("osr") {
        2
    } else if t.contains("tier0") || t.contains("instrumented") {
        1
    } else {
        3
    }
}

pub(crate) const GROUP_NAMES: [&str; 4] = ["Overall", "MinOpts", "FullOpts", "Other"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tier_names_map_to_groups() {
        for (name, group) in [
            ("MinOpts", 1),
            ("Tier0", 1),
            ("Tier-0", 1),
            ("Instrumented Tier0", 1),
            ("Tier0-instrumented", 1),
            ("Tier0 instrumented", 1),
            ("Instrumented", 1),
            ("Tier0-MinOpts", 1),
            ("Tier-0 switched MinOpts", 1),
            ("Tier0-FullOpts-MinOpts", 1),
            ("Tier-0 switched to FullOpts, then to MinOpts", 1),
            ("FullOpts", 2),
            ("Tier1", 2),
            ("Tier1-OSR", 2),
            ("OSR", 2),
            ("Instrumented Tier1", 2),
            ("Tier1 instrumented", 2),
            ("Instrumented Tier1-OSR", 2),
            ("Tier0-FullOpts", 2),
            ("Tier-0 switched to FullOpts", 2),
            ("fullopts", 2),
            ("Debug", 3),
            ("Unknown optimization level", 3),
            ("Optimization-Level-Not-Yet-Set", 3),
            ("", 3),
        ] {
            assert_eq!(tier_group(Some(name)), group, "{name:?}");
        }
        assert_eq!(tier_group(None), 3);
    }

    #[test]
    fn the_largest_equal_sorting_everything() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        for len in [0usize, 1, 2, 10, 100, 1000] {
            // Few distinct sizes and names: ties broken by context, then name, then tier.
            let methods: Vec<(u64, MethodInfo)> = (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    let info = MethodInfo {
                        name: (seed % 3 > 0).then(|| format!("M{}", seed % 5)),
                        context: (seed % 4) as i64 - 1,
                        tier: (seed % 7 > 3).then(|| "Tier0".to_string()),
                    };
                    (seed % 9, info)
                })
                .collect();
            let key = |m: &Missing| {
                (
                    std::cmp::Reverse(m.bytes),
                    m.context,
                    m.name.clone(),
                    m.tier.clone(),
                )
            };
            for n in [0usize, 1, 2, 7, 100, len, len + 1] {
                let mut all: Vec<Missing> = methods
                    .iter()
                    .map(|(bytes, info)| Missing {
                        context: info.context,
                        name: info.name.clone(),
                        tier: info.tier.clone(),
                        bytes: *bytes,
                    })
                    .collect();
                all.sort_by_key(key);
                all.truncate(n);
                let mut largest = Largest::new(n);
                for (bytes, info) in &methods {
                    largest.offer(*bytes, info);
                }
                assert_eq!(largest.into_sorted(), all, "len {len}, n {n}");
            }
        }
    }
}
