//! Collections: several base/diff pairs diffed and judged one by one, and one verdict over all
//! of them. In the .NET JIT's replay pipeline a collection is one set of recorded methods
//! (`benchmarks.run`, `libraries.pmi`, ...), replayed through the baseline and the changed JIT.
//!
//! Matching is per collection. Coverage is part of the gate: a collection with no matched
//! method, a side that misses more than `--max-missed` percent of the other side's methods, a
//! log cut short (unless allowed) or a collection found on one side only makes the check
//! INCOMPLETE, which fails it as a regression does.

use std::path::{Path, PathBuf};

use super::{diff_logs, judge_coverage, pct_change, Delta, DiffOptions, MemDiff, MethodDelta};
use super::{Failure, Missing, Totals};
use crate::text::shown;
use jitarena::error::{Error, ErrorCode};

/// One base/diff pair to compare.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collection {
    /// Its name, as the reports show it.
    pub name: String,
    /// Baseline logs or directories of shards.
    pub base: Vec<PathBuf>,
    /// Diff logs or directories of shards.
    pub diff: Vec<PathBuf>,
}

/// A collection that could not be compared: found on one side only, or with no log on a side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OneSided {
    /// The collection's name.
    pub name: String,
    /// Why it could not be compared.
    pub reason: String,
}

/// The coverage rules of the gate.
#[derive(Debug, Clone, PartialEq)]
pub struct CoverageRules {
    /// Either side may miss at most this percentage of the other side's methods.
    pub max_missed: f64,
    /// Accept logs whose last record was cut short.
    pub allow_truncated: bool,
    /// Accept compiles that failed on one side only.
    pub allow_failing_compiles: bool,
    /// Accept contexts seen more than once on a side.
    pub allow_duplicates: bool,
}

impl Default for CoverageRules {
    fn default() -> CoverageRules {
        CoverageRules {
            max_missed: 1.0,
            allow_truncated: false,
            allow_failing_compiles: false,
            allow_duplicates: false,
        }
    }
}

/// One collection's diff and its coverage judgement.
#[derive(Debug, Clone, PartialEq)]
pub struct CollectionDiff {
    /// The collection's name.
    pub name: String,
    /// The diff, with the thresholds' verdict.
    pub diff: MemDiff,
    /// Each coverage rule broken (empty: coverage is complete).
    pub coverage_failures: Vec<Failure>,
}

impl CollectionDiff {
    /// Whether this collection fails the check, by growth or by coverage.
    pub fn failed(&self) -> bool {
        self.status() != Status::Pass
    }

    /// How the check ended for this collection alone.
    pub fn status(&self) -> Status {
        Status::of(
            !self.coverage_failures.is_empty(),
            self.diff.verdict.regression,
        )
    }
}

/// How the check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Every collection compared completely, and nothing grew beyond a threshold.
    Pass,
    /// Growth beyond a threshold in a collection.
    Fail,
    /// Coverage broke a rule: the diff cannot be trusted.
    Incomplete,
    /// Both.
    IncompleteAndFail,
}

impl Status {
    /// The status of a check whose coverage is `incomplete` and that found a `regression`.
    pub fn of(incomplete: bool, regression: bool) -> Status {
        match (incomplete, regression) {
            (false, false) => Status::Pass,
            (false, true) => Status::Fail,
            (true, false) => Status::Incomplete,
            (true, true) => Status::IncompleteAndFail,
        }
    }

    /// `PASS`, `FAIL`, `INCOMPLETE` or `INCOMPLETE, FAIL`.
    pub fn label(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Incomplete => "INCOMPLETE",
            Status::IncompleteAndFail => "INCOMPLETE, FAIL",
        }
    }

    /// The status a label names (as a JSON report writes it), if any.
    pub fn from_label(label: &str) -> Option<Status> {
        [
            Status::Pass,
            Status::Fail,
            Status::Incomplete,
            Status::IncompleteAndFail,
        ]
        .into_iter()
        .find(|s| s.label() == label)
    }

    /// The exit code of `jitarena memdiff`: 0 to pass, 1 otherwise.
    pub fn exit_code(self) -> u8 {
        u8::from(self != Status::Pass)
    }
}

/// The verdict over every collection.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// How the check ended.
    pub status: Status,
    /// The rules that decided it and the collections they decided it in, in words.
    pub rule: String,
    /// Why, in one sentence: the first rule broken (coverage first), with its collection, its
    /// figure and its limit, and how many more there are; on a pass, [`Outcome::rule`].
    pub headline: String,
    /// Every rule broken, each naming its collection: coverage first, then growth.
    pub failures: Vec<Failure>,
}

/// Everything a multi-collection memdiff reports.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The compared collections, by name.
    pub collections: Vec<CollectionDiff>,
    /// The collections that could not be compared.
    pub one_sided: Vec<OneSided>,
    /// The coverage rules applied.
    pub rules: CoverageRules,
    /// The floor of the cross-collection list of methods that grew most: smaller growth is
    /// left out.
    pub min_delta_bytes: u64,
    /// The floor of the per-tier lists ([`Report::tier_tops_across`]): methods smaller in the
    /// base are left out (`--min-method-bytes`).
    pub min_method_bytes: u64,
    /// The verdict.
    pub outcome: Outcome,
}

/// A name for a single pair of inputs: the file name when both sides share it, else both.
pub fn pair_name(base: &[PathBuf], diff: &[PathBuf]) -> String {
    let side = |paths: &[PathBuf]| {
        paths
            .iter()
            .map(|p| {
                p.file_name()
                    .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into())
            })
            .collect::<Vec<_>>()
            .join("+")
    };
    let (b, d) = (side(base), side(diff));
    if b == d {
        b
    } else {
        format!("{b} vs {d}")
    }
}

/// The collections under two roots: each subdirectory of `base_root` paired with the
/// same-named subdirectory of `diff_root`, by name; names found under one root only are
/// returned as one-sided.
pub fn collections_from_roots(
    base_root: &Path,
    diff_root: &Path,
) -> Result<(Vec<Collection>, Vec<OneSided>), Error> {
    let (base, diff) = (subdirectories(base_root)?, subdirectories(diff_root)?);
    let mut pairs = Vec::new();
    let mut one_sided = Vec::new();
    for (key, name, path) in &base {
        match diff.iter().find(|(k, _, _)| k == key) {
            Some((_, _, d)) => pairs.push(Collection {
                name: name.clone(),
                base: vec![path.clone()],
                diff: vec![d.clone()],
            }),
            None => one_sided.push(OneSided {
                name: name.clone(),
                reason: format!("only under the base root ({})", path.display()),
            }),
        }
    }
    for (_, name, path) in diff
        .iter()
        .filter(|(k, _, _)| !base.iter().any(|b| &b.0 == k))
    {
        one_sided.push(OneSided {
            name: name.clone(),
            reason: format!("only under the diff root ({})", path.display()),
        });
    }
    one_sided.sort_by(|a, b| a.name.cmp(&b.name));
    Ok((pairs, one_sided))
}

/// A directory's name as reports show it: its bytes that are not UTF-8 as `\xFF`, so that two
/// names differing only there stay apart.
fn dir_name(name: &std::ffi::OsStr) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let mut out = String::new();
        for chunk in name.as_bytes().utf8_chunks() {
            out.push_str(chunk.valid());
            for b in chunk.invalid() {
                out.push_str(&format!("\\x{b:02X}"));
            }
        }
        out
    }
    #[cfg(not(unix))]
    {
        name.to_string_lossy().into_owned()
    }
}

/// A root's subdirectories, by name: (exact name, name as shown, path). Sides are paired by
/// the exact name.
fn subdirectories(root: &Path) -> Result<Vec<(std::ffi::OsString, String, PathBuf)>, Error> {
    let entries =
        std::fs::read_dir(root).map_err(|e| jitarena::format::io_error(root, "list", &e))?;
    let paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    // A log directly under a root is in no collection, and a link that leads to no directory
    // (dangling, or a loop) holds none: left out silently, their methods would be missed by
    // both sides alike, which the coverage check cannot see.
    if let Some(other) = paths.iter().filter(|p| !p.is_dir()).min() {
        let what = if other.is_file() {
            "a file directly under a root, in no collection (a collection is a subdirectory of logs or shards; move it into one)"
        } else {
            "neither a directory nor a file (a dangling link, or a loop?): the collection cannot be read"
        };
        return Err(Error::new(
            ErrorCode::Io,
            format!("{}: {what}", other.display()),
        ));
    }
    let mut dirs: Vec<(std::ffi::OsString, String, PathBuf)> = paths
        .into_iter()
        .filter(|p| p.is_dir())
        .filter_map(|p| {
            let name = p.file_name()?.to_os_string();
            Some((name.clone(), dir_name(&name), p))
        })
        .collect();
    if dirs.is_empty() {
        return Err(Error::new(
            ErrorCode::Io,
            format!(
                "{}: holds no collection (a collection is a subdirectory of logs or shards)",
                root.display()
            ),
        ));
    }
    dirs.sort();
    Ok(dirs)
}

/// Whether a side of a collection holds any file to read (a directory of shards may be empty
/// when the JIT crashed before writing one).
fn holds_logs(paths: &[PathBuf]) -> bool {
    paths.iter().any(|p| {
        !p.is_dir()
            || std::fs::read_dir(p)
                .map(|mut e| e.any(|e| e.is_ok_and(|e| e.path().is_file())))
                .unwrap_or(true)
    })
}

/// A log file read on both sides (through a link, a hard link, or named twice), as found on
/// the base side.
fn shared_file(base: &[PathBuf], diff: &[PathBuf]) -> Option<PathBuf> {
    #[cfg(unix)]
    fn identity(p: &Path) -> Option<(u64, u64)> {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    fn identity(p: &Path) -> Option<PathBuf> {
        p.canonicalize().ok()
    }
    let files = |paths: &[PathBuf]| crate::inputs::expand_inputs(paths).unwrap_or_default();
    let diff: std::collections::HashSet<_> =
        files(diff).iter().filter_map(|p| identity(p)).collect();
    files(base)
        .into_iter()
        .find(|p| identity(p).is_some_and(|id| diff.contains(&id)))
}

/// Diffs every collection, one after the other (each diff already keeps both cores busy), and
/// judges them together. A collection whose side holds no log joins the one-sided ones.
pub fn diff_collections(
    collections: &[Collection],
    mut one_sided: Vec<OneSided>,
    options: &DiffOptions,
    rules: &CoverageRules,
) -> Result<Report, Error> {
    let mut diffs = Vec::new();
    for (i, c) in collections.iter().enumerate() {
        if collections.len() > 1 {
            let name = shown(&c.name);
            let n = collections.len();
            options
                .progress
                .set_prefix(format!("memdiff {name} ({}/{n})", i + 1));
        }
        let empty: Vec<&str> = [("base", &c.base), ("diff", &c.diff)]
            .into_iter()
            .filter(|(_, paths)| !holds_logs(paths))
            .map(|(side, _)| side)
            .collect();
        if !empty.is_empty() {
            one_sided.push(OneSided {
                name: c.name.clone(),
                reason: format!("no log on the {} side", empty.join(" and ")),
            });
            continue;
        }
        if let Some(shared) = shared_file(&c.base, &c.diff) {
            one_sided.push(OneSided {
                name: c.name.clone(),
                reason: format!(
                    "{} is on both the base and the diff side (a link?): a log compared with itself shows no change",
                    shared.display()
                ),
            });
            continue;
        }
        diffs.push((c.name.clone(), diff_logs(&c.base, &c.diff, options)?));
    }
    options.progress.finish();
    one_sided.sort_by(|a, b| a.name.cmp(&b.name));
    let report = Report::new(diffs, one_sided, options, rules);
    report.check_sums()?;
    Ok(report)
}

impl Report {
    /// Judges diffs already made (by name), and the collections that could not be compared.
    pub fn new(
        diffs: Vec<(String, MemDiff)>,
        one_sided: Vec<OneSided>,
        options: &DiffOptions,
        rules: &CoverageRules,
    ) -> Report {
        let collections: Vec<CollectionDiff> = diffs
            .into_iter()
            .map(|(name, diff)| CollectionDiff {
                coverage_failures: judge_coverage(&diff, rules),
                name,
                diff,
            })
            .collect();
        let outcome = outcome(&collections, &one_sided, true);
        Report {
            collections,
            one_sided,
            rules: rules.clone(),
            min_delta_bytes: options.min_delta_bytes,
            min_method_bytes: options.min_method_bytes,
            outcome,
        }
    }

    /// The same report for a single pair of inputs given without a collection name: its verdict
    /// names no collection (there is only one).
    pub fn unnamed(mut self) -> Report {
        self.outcome = outcome(&self.collections, &self.one_sided, false);
        self
    }

    /// Fails when a sum over collections would pass 2^64 (each collection's sums were checked
    /// as its logs were read; together they can still be too large to be real).
    pub fn check_sums(&self) -> Result<(), Error> {
        let mut wide = [0u128; 8];
        for c in &self.collections {
            let g = c.diff.overall();
            for (cell, v) in wide.iter_mut().zip([
                g.base.bytes,
                g.base.allocations,
                g.base.used,
                g.base.reserved,
                g.diff.bytes,
                g.diff.allocations,
                g.diff.used,
                g.diff.reserved,
            ]) {
                *cell += u128::from(v);
            }
        }
        if wide.iter().any(|&v| v > u128::from(u64::MAX)) {
            return Err(Error::new(
                ErrorCode::Io,
                "the collections' byte counts add up past 2^64, which no set of compilations can reach: an input (a log or a CSV file) is damaged",
            ));
        }
        Ok(())
    }

    /// The sums over every collection of a tier group (`Overall`, `MinOpts`, `FullOpts`):
    /// matched methods, base totals, diff totals.
    pub fn group_totals(&self, group: &str) -> (u64, Totals, Totals) {
        let mut sum = (0, Totals::default(), Totals::default());
        for g in self.collections.iter().filter_map(|c| c.group(group)) {
            sum.0 += g.methods;
            sum.1.add(&g.base);
            sum.2.add(&g.diff);
        }
        sum
    }

    /// Methods missed, summed over collections: (base misses, diff misses), as counts of the
    /// other side's methods (a method only in the diff is one the base missed), with the
    /// contexts both sides missed.
    pub fn missed(&self) -> (u64, u64) {
        self.collections.iter().fold((0, 0), |(b, d), c| {
            let cov = &c.diff.coverage;
            (b + cov.missed_by_base(), d + cov.missed_by_diff())
        })
    }

    /// Per-kind (or, with `phases`, per-phase) bytes summed by name over every collection,
    /// by absolute delta (largest first), then name.
    pub fn deltas_across(&self, phases: bool) -> Vec<Delta> {
        let mut sums: Vec<Delta> = Vec::new();
        let mut index = std::collections::HashMap::new();
        for c in &self.collections {
            for d in if phases {
                &c.diff.phases
            } else {
                &c.diff.kinds
            } {
                let i = *index.entry(d.name.clone()).or_insert_with(|| {
                    sums.push(Delta {
                        name: d.name.clone(),
                        base: 0,
                        diff: 0,
                    });
                    sums.len() - 1
                });
                // Parts of the totals that check_sums bounds: exact.
                sums[i].base = sums[i].base.saturating_add(d.base);
                sums[i].diff = sums[i].diff.saturating_add(d.diff);
            }
        }
        sums.sort_by(|a, b| {
            b.delta()
                .abs()
                .cmp(&a.delta().abs())
                .then_with(|| a.name.cmp(&b.name))
        });
        sums
    }

    /// Per (phase, kind) pair, bytes summed by name over every collection, by absolute delta
    /// (largest first), then names; empty unless some arena recorded kinds by phase.
    pub fn phase_kinds_across(&self) -> Vec<super::PhaseKindDelta> {
        let mut sums: Vec<super::PhaseKindDelta> = Vec::new();
        let mut index = std::collections::HashMap::new();
        for c in &self.collections {
            for d in &c.diff.phase_kinds {
                let i = *index
                    .entry((d.phase.clone(), d.kind.clone()))
                    .or_insert_with(|| {
                        sums.push(super::PhaseKindDelta {
                            phase: d.phase.clone(),
                            kind: d.kind.clone(),
                            base: 0,
                            diff: 0,
                        });
                        sums.len() - 1
                    });
                // Parts of the kind totals that check_sums bounds: exact.
                sums[i].base = sums[i].base.saturating_add(d.base);
                sums[i].diff = sums[i].diff.saturating_add(d.diff);
            }
        }
        super::sort_phase_kinds(&mut sums);
        sums
    }

    /// The methods that grew most across collections, by bytes, each with its collection:
    /// at most `n`, none that grew by less than [`Report::min_delta_bytes`].
    pub fn top_growth_across(&self, n: usize) -> Vec<(&str, &MethodDelta)> {
        let mut all: Vec<(&str, &MethodDelta)> = self
            .collections
            .iter()
            .flat_map(|c| c.diff.top_growth.iter().map(|m| (c.name.as_str(), m)))
            .filter(|(_, m)| m.diff.saturating_sub(m.base) >= self.min_delta_bytes.max(1))
            .collect();
        all.sort_by(|a, b| {
            let d = |m: &MethodDelta| m.diff - m.base;
            d(b.1)
                .cmp(&d(a.1))
                .then_with(|| a.0.cmp(b.0))
                .then_with(|| a.1.context.cmp(&b.1.context))
        });
        all.truncate(n);
        all
    }

    /// The compared collections as every per-collection section lists them: those that failed
    /// (FAIL, INCOMPLETE or both) first, each group in the order given.
    pub fn by_status(&self) -> Vec<&CollectionDiff> {
        let mut sorted: Vec<&CollectionDiff> = self.collections.iter().collect();
        sorted.sort_by_key(|c| !c.failed());
        sorted
    }

    /// Per tier group (FullOpts, then MinOpts, each when a collection has methods in it): the
    /// methods that grew most relatively (`regressions`) and those that shrank most
    /// (`improvements`) across collections, each with its collection, at most
    /// [`super::TIER_TOP`] of each, by PDIFF (the largest change first; ties by collection,
    /// then context). Each collection's lists hold its own first [`super::TIER_TOP`], so these
    /// are the first over all.
    pub fn tier_tops_across(&self) -> Vec<TierTopAcross<'_>> {
        let mut out: Vec<TierTopAcross> = Vec::new();
        for c in &self.collections {
            for t in &c.diff.tier_tops {
                let at = match out.iter().position(|o| o.tier == t.tier) {
                    Some(at) => at,
                    None => {
                        out.push(TierTopAcross {
                            tier: t.tier.clone(),
                            regressions: Vec::new(),
                            improvements: Vec::new(),
                        });
                        out.len() - 1
                    }
                };
                let name = c.name.as_str();
                out[at]
                    .regressions
                    .extend(t.regressions.iter().map(|m| (name, m)));
                out[at]
                    .improvements
                    .extend(t.improvements.iter().map(|m| (name, m)));
            }
        }
        // The relative change as the ratio diff/base (every listed base is at least 1 byte).
        let ratio = |m: &MethodDelta| m.diff as f64 / m.base.max(1) as f64;
        for o in &mut out {
            let then = |a: &(&str, &MethodDelta), b: &(&str, &MethodDelta)| {
                a.0.cmp(b.0).then_with(|| a.1.context.cmp(&b.1.context))
            };
            o.regressions
                .sort_by(|a, b| ratio(b.1).total_cmp(&ratio(a.1)).then_with(|| then(a, b)));
            o.improvements
                .sort_by(|a, b| ratio(a.1).total_cmp(&ratio(b.1)).then_with(|| then(a, b)));
            o.regressions.truncate(super::TIER_TOP);
            o.improvements.truncate(super::TIER_TOP);
        }
        out.sort_by_key(|o| o.tier != "FullOpts");
        out
    }

    /// The largest methods found on one side only, across collections: (collection, the side
    /// that lacks the method, the method), largest first, at most `n`.
    pub fn missing_across(&self, n: usize) -> Vec<(&str, &'static str, &Missing)> {
        let mut all: Vec<(&str, &'static str, &Missing)> = Vec::new();
        for c in &self.collections {
            let cov = &c.diff.coverage;
            all.extend(
                cov.missing_in_diff
                    .iter()
                    .map(|m| (c.name.as_str(), "diff", m)),
            );
            all.extend(
                cov.missing_in_base
                    .iter()
                    .map(|m| (c.name.as_str(), "base", m)),
            );
        }
        all.sort_by(|a, b| {
            b.2.bytes
                .cmp(&a.2.bytes)
                .then_with(|| a.0.cmp(b.0))
                .then_with(|| a.2.context.cmp(&b.2.context))
        });
        all.truncate(n);
        all
    }

    /// Fails (bad usage) when an `--ignore-kind` name is named by no log of any collection: a
    /// misspelled kind would leave the gate on bytes it was told to leave out. Names that some
    /// collections lack are warnings.
    pub fn check_ignored_kinds(&mut self, ignored: &[String]) -> Result<(), Error> {
        let mut known: Vec<String> = self
            .collections
            .iter()
            .flat_map(|c| c.diff.kinds.iter().map(|k| k.name.clone()))
            .collect();
        known.sort_unstable();
        known.dedup();
        let known: Vec<&str> = known.iter().map(String::as_str).collect();
        for name in ignored {
            let lacking = |c: &CollectionDiff| c.diff.unknown_ignored.contains(name);
            let count = self.collections.iter().filter(|c| lacking(c)).count();
            if count == 0 {
                continue;
            }
            if count == self.collections.len() {
                let near = crate::text::nearest(name, &known, 3);
                let hint = match (near.is_empty(), known.is_empty()) {
                    (_, true) => "no input names any kind (a CSV holds none)".to_string(),
                    (false, _) => format!("did you mean {}?", near.join(", ")),
                    (true, _) => format!("the kinds are {}", known.join(", ")),
                };
                return Err(Error::new(
                    ErrorCode::Config,
                    format!(
                        "--ignore-kind {}: no log names this kind; {hint}",
                        shown(name)
                    ),
                ));
            }
            for c in self.collections.iter_mut().filter(|c| lacking(c)) {
                let text = format!(
                    "--ignore-kind {}: no log of collection {} names this kind",
                    shown(name),
                    shown(&c.name)
                );
                c.diff.warnings.push(text);
            }
        }
        Ok(())
    }

    /// Warnings of every collection's readers.
    pub fn warnings(&self) -> Vec<String> {
        self.collections
            .iter()
            .flat_map(|c| c.diff.warnings.iter().cloned())
            .collect()
    }
}

/// One tier group's per-tier lists across collections (see [`Report::tier_tops_across`]).
#[derive(Debug, Clone, PartialEq)]
pub struct TierTopAcross<'a> {
    /// `FullOpts` or `MinOpts`.
    pub tier: String,
    /// (collection, method): the methods that grew most relatively.
    pub regressions: Vec<(&'a str, &'a MethodDelta)>,
    /// (collection, method): the methods that shrank most relatively.
    pub improvements: Vec<(&'a str, &'a MethodDelta)>,
}

impl CollectionDiff {
    /// A tier group of this collection by name, if it has methods in it.
    pub fn group(&self, name: &str) -> Option<&super::Group> {
        self.diff.groups.iter().find(|g| g.name == name)
    }
}

/// The verdict over every collection: which rules broke, in which collections.
fn outcome(collections: &[CollectionDiff], one_sided: &[OneSided], named: bool) -> Outcome {
    // A single pair of inputs given without a collection name names no collection.
    let single = !named && collections.len() == 1 && one_sided.is_empty();
    let owned = |name: &str, f: &Failure| Failure {
        collection: (!single).then(|| name.to_string()),
        ..f.clone()
    };
    let mut incomplete: Vec<Failure> = one_sided
        .iter()
        .map(|o| owned(&o.name, &Failure::not_compared(&o.reason)))
        .collect();
    if collections.is_empty() && one_sided.is_empty() {
        incomplete.push(Failure::not_compared("no collection was compared"));
    }
    for c in collections {
        incomplete.extend(c.coverage_failures.iter().map(|f| owned(&c.name, f)));
    }
    let mut failures = Vec::new();
    let mut regressions = Vec::new();
    for c in collections.iter().filter(|c| c.diff.verdict.regression) {
        failures.extend(c.diff.verdict.failures.iter().map(|f| owned(&c.name, f)));
        regressions.push(if single {
            c.diff.verdict.rule.clone()
        } else {
            format!("regression in {}: {}", shown(&c.name), c.diff.verdict.rule)
        });
    }
    let status = Status::of(!incomplete.is_empty(), !regressions.is_empty());
    let mut parts = Vec::new();
    if !incomplete.is_empty() {
        let lines: Vec<String> = incomplete.iter().map(Failure::line).collect();
        parts.push(format!("incomplete: {}", lines.join("; ")));
    }
    parts.extend(regressions);
    let rule = if status != Status::Pass {
        parts.join("; ")
    } else {
        passing_rule(collections)
    };
    failures.splice(0..0, incomplete);
    let headline = match failures.as_slice() {
        [] => rule.clone(),
        [only] => only.line(),
        [first, rest @ ..] => format!(
            "{} (and {} more rule{} broken)",
            first.line(),
            rest.len(),
            if rest.len() == 1 { "" } else { "s" }
        ),
    };
    Outcome {
        status,
        rule,
        headline,
        failures,
    }
}

/// Why every collection passed: the largest total change beside its limit.
fn passing_rule(collections: &[CollectionDiff]) -> String {
    if let [only] = collections {
        return only.diff.verdict.rule.clone();
    }
    let largest = collections
        .iter()
        .filter_map(|c| {
            let o = c.diff.overall();
            pct_change(o.base.bytes, o.diff.bytes).map(|p| (p, shown(&c.name)))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0).then_with(|| b.1.cmp(&a.1)));
    let t = collections.first().map(|c| &c.diff.verdict.thresholds);
    let limit = t.map_or(0.0, |t| t.fail_above);
    let with_kinds = collections.iter().all(|c| c.diff.has_kinds);
    let kinds = if with_kinds && t.is_some_and(|t| t.kind_fail_above.is_some()) {
        "; every kind within its limit"
    } else {
        ""
    };
    match largest {
        Some((p, name)) => format!(
            "no regression in {} collections: largest total change {p:+.2}% in {name} (limit +{limit}%){kinds}",
            collections.len()
        ),
        None => format!("no regression in {} collections", collections.len()),
    }
}
