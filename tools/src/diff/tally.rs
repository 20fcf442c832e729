//! The figures gathered from both sides of a diff (per method, per group, per kind and phase),
//! the top lists, and the report made from them.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::{
    judge, pct_change, sort_phase_kinds, Coverage, Delta, DiffOptions, Distribution, Group,
    MemDiff, MethodDelta, PhaseKindDelta, Quantiles, TierTop, Totals, Verdict, CHANGE_BUCKETS,
    GROUP_NAMES, TIER_TOP,
};
use crate::union::{SchemaUnion, INVALID};
use jitarena::error::{Error, ErrorCode};
use jitarena::log::{MethodCounts, MethodInfo};

/// The per-method figures and sums gathered from both sides, from which the report is made.
#[derive(Default)]
pub(crate) struct Tally {
    /// Per base method (in base order): bytes requested, without ignored kinds.
    pub base_bytes: Vec<u64>,
    /// Per base method: the matched diff method's bytes.
    pub diff_bytes: Vec<u64>,
    /// Per base method: its tier group (see [`tier_group`](super::tier_group)).
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
    /// Whether a sum went past 2^64 (an error: never a wrapped number).
    pub overflow: bool,
}

impl Tally {
    /// Extends the ignored flags to every united kind.
    pub(crate) fn sync_ignored(&mut self, ignore: &[String]) {
        while self.ignored.len() < self.union.kind_count() {
            let name = self.union.kind_name(self.ignored.len() as u32);
            self.ignored
                .push(ignore.iter().any(|k| super::same_kind(k, name)));
        }
    }

    /// The error for a sum that went past 2^64 while reading `files`.
    pub(crate) fn check_overflow(&self, files: &[std::path::PathBuf]) -> Result<(), Error> {
        if !self.overflow {
            return Ok(());
        }
        let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        Err(Error::new(
            ErrorCode::Io,
            format!(
                "{}: the byte counts add up past 2^64, which no compilation can reach: the log is damaged",
                names.join(", ")
            ),
        ))
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
        counts
            .phase_kind_bytes
            .retain(|e| !ignored.get(e.1 as usize).copied().unwrap_or(false));
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
    /// Bytes per united kind slot.
    pub kinds: Vec<u64>,
    /// Bytes of the invalid-kind bucket.
    pub invalid_kind: u64,
    /// Bytes per united phase slot.
    pub phases: Vec<u64>,
    /// Bytes of the no-phase bucket.
    pub no_phase: u64,
    /// Bytes per (phase, kind) pair of united slots (the buckets as [`INVALID`]).
    pub phase_kinds: FastMap<(u32, u32), u64>,
}

impl Sums {
    /// Adds (or, with `sign` false, takes away) a method's counts, laid out against `union`.
    /// Returns false when a sum went past 2^64 (it then holds the largest value instead).
    pub(crate) fn add(&mut self, c: &MethodCounts, union: &SchemaUnion, sign: bool) -> bool {
        self.kinds.resize(union.kind_count(), 0);
        self.phases.resize(union.phase_count(), 0);
        let mut ok = true;
        let mut apply = |cell: &mut u64, v: u64| {
            *cell = if sign {
                cell.checked_add(v).unwrap_or_else(|| {
                    ok = false;
                    u64::MAX
                })
            } else {
                cell.saturating_sub(v)
            }
        };
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
        for &(phase, kind, bytes) in &c.phase_kind_bytes {
            apply(self.phase_kinds.entry((phase, kind)).or_default(), bytes);
        }
        ok
    }
}

impl Totals {
    /// Adds `o`; returns false (keeping the largest value) when a sum would pass 2^64.
    pub(crate) fn add(&mut self, o: &Totals) -> bool {
        let mut ok = true;
        for (cell, v) in [
            (&mut self.bytes, o.bytes),
            (&mut self.allocations, o.allocations),
            (&mut self.used, o.used),
            (&mut self.reserved, o.reserved),
        ] {
            *cell = cell.checked_add(v).unwrap_or_else(|| {
                ok = false;
                u64::MAX
            });
        }
        ok
    }

    /// Takes `o` away (it was added before, so nothing goes below 0).
    pub(crate) fn sub(&mut self, o: &Totals) {
        self.bytes = self.bytes.saturating_sub(o.bytes);
        self.allocations = self.allocations.saturating_sub(o.allocations);
        self.used = self.used.saturating_sub(o.used);
        self.reserved = self.reserved.saturating_sub(o.reserved);
    }
}

/// A fast hasher for keys that are already well mixed (contexts and 128-bit name hashes).
#[derive(Default)]
pub(crate) struct MixHasher(u64);

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

pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<MixHasher>>;

/// The indexes of the methods each top list names.
pub(crate) struct TopLists {
    pub growth: Vec<u32>,
    pub shrinkage: Vec<u32>,
    pub relative_growth: Vec<u32>,
    pub relative_shrinkage: Vec<u32>,
    /// Per tier group (FullOpts, MinOpts, as [`TIER_LISTS`] names them): the methods that grew
    /// most relatively, and those that shrank most, at most [`TIER_TOP`] of each.
    pub tiers: [[Vec<u32>; 2]; 2],
    /// All of them, sorted, once each.
    pub all: Vec<u32>,
}

/// The tier groups of the per-tier lists, in the order the reports show them (SuperPMI's:
/// FullOpts first), with their group numbers.
pub(crate) const TIER_LISTS: [(&str, u8); 2] = [("FullOpts", 2), ("MinOpts", 1)];

/// The lists a [`TopLists`] describes: the four of every tier, and the per-tier ones.
pub(crate) struct Described {
    pub lists: [Vec<MethodDelta>; 4],
    pub tiers: Vec<TierTop>,
}

impl TopLists {
    /// The lists of the matched methods of a tally, found in one pass over them.
    pub(crate) fn of(t: &Tally, options: &DiffOptions) -> TopLists {
        use std::cmp::Ordering;
        let n = options.top;
        let rel = |i: u32| t.diff_bytes[i as usize] as f64 / t.base_bytes[i as usize] as f64;
        // Each list's order, ties by context number, then by index: a total order.
        let then = |a: u32, b: u32| {
            t.context[a as usize]
                .cmp(&t.context[b as usize])
                .then(a.cmp(&b))
        };
        let by_growth = |a: &u32, b: &u32| t.delta(*b).cmp(&t.delta(*a)).then(then(*a, *b));
        let by_shrinkage = |a: &u32, b: &u32| t.delta(*a).cmp(&t.delta(*b)).then(then(*a, *b));
        let by_relative_growth = |a: &u32, b: &u32| rel(*b).total_cmp(&rel(*a)).then(then(*a, *b));
        let by_relative_shrinkage =
            |a: &u32, b: &u32| rel(*a).total_cmp(&rel(*b)).then(then(*a, *b));
        let floor = options.min_method_bytes.max(1);
        let [mut growth, mut shrinkage, mut relative_growth, mut relative_shrinkage] =
            [(); 4].map(|()| FirstN::new(n));
        // Per tier list (by TIER_LISTS' order): regressions and improvements.
        let mut tiers = [(); 2].map(|()| [(); 2].map(|()| FirstN::new(TIER_TOP)));
        let tier_of = |i: u32| {
            TIER_LISTS
                .iter()
                .position(|&(_, g)| g == t.group[i as usize])
        };
        for i in (0..t.base_bytes.len() as u32).filter(|&i| t.matched[i as usize]) {
            let big = t.base_bytes[i as usize] >= floor;
            let tier = tier_of(i).filter(|_| big);
            match t.delta(i).cmp(&0) {
                Ordering::Greater => {
                    growth.offer(i, &by_growth);
                    if big {
                        relative_growth.offer(i, &by_relative_growth);
                    }
                    if let Some(k) = tier {
                        tiers[k][0].offer(i, &by_relative_growth);
                    }
                }
                Ordering::Less => {
                    shrinkage.offer(i, &by_shrinkage);
                    if big {
                        relative_shrinkage.offer(i, &by_relative_shrinkage);
                    }
                    if let Some(k) = tier {
                        tiers[k][1].offer(i, &by_relative_shrinkage);
                    }
                }
                Ordering::Equal => {}
            }
        }
        let (growth, shrinkage) = (growth.sorted(&by_growth), shrinkage.sorted(&by_shrinkage));
        let relative_growth = relative_growth.sorted(&by_relative_growth);
        let relative_shrinkage = relative_shrinkage.sorted(&by_relative_shrinkage);
        let tiers = tiers.map(|[up, down]| {
            [
                up.sorted(&by_relative_growth),
                down.sorted(&by_relative_shrinkage),
            ]
        });
        let mut all: Vec<u32> = [&growth, &shrinkage, &relative_growth, &relative_shrinkage]
            .into_iter()
            .chain(tiers.iter().flatten())
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
            tiers,
            all,
        }
    }

    /// The lists, each method described by `describe`; the per-tier ones of the tiers that
    /// have matched methods (`methods`, per group as [`Matched`] counts them).
    pub(crate) fn describe(
        &self,
        methods: &[u64; 4],
        describe: impl Fn(u32) -> MethodDelta,
    ) -> Described {
        let list = |l: &Vec<u32>| l.iter().map(|&i| describe(i)).collect::<Vec<_>>();
        let lists = [
            &self.growth,
            &self.shrinkage,
            &self.relative_growth,
            &self.relative_shrinkage,
        ]
        .map(list);
        let tiers = TIER_LISTS
            .iter()
            .zip(&self.tiers)
            .filter(|((_, group), _)| methods[*group as usize] > 0)
            .map(|((name, _), [up, down])| TierTop {
                tier: name.to_string(),
                regressions: list(up),
                improvements: list(down),
            })
            .collect();
        Described { lists, tiers }
    }
}

/// The `n` first of the items offered, by an order (a total one). Candidates gather in a
/// buffer of at most `2n` (or 64); when it fills, it is cut back to its `n` first, in linear
/// time, and the last of those becomes the bar that a later item must beat to be kept at all.
/// Most items therefore cost one comparison, and the whole selection linear time.
pub(crate) struct FirstN {
    n: usize,
    full: usize,
    kept: Vec<u32>,
    bar: Option<u32>,
}

/// An order of items, for [`FirstN`].
pub(crate) trait Order: Fn(&u32, &u32) -> std::cmp::Ordering {}
impl<F: Fn(&u32, &u32) -> std::cmp::Ordering> Order for F {}

impl FirstN {
    /// A selection of the `n` first.
    pub(crate) fn new(n: usize) -> FirstN {
        FirstN {
            n,
            full: n.saturating_mul(2).max(64),
            kept: Vec::new(),
            bar: None,
        }
    }

    /// Offers item `i`; `cmp` must be the same order at every call.
    #[inline]
    pub(crate) fn offer(&mut self, i: u32, cmp: &impl Order) {
        if self.n == 0 || self.bar.is_some_and(|b| cmp(&i, &b).is_ge()) {
            return; // n kept items come before it
        }
        self.kept.push(i);
        if self.kept.len() >= self.full {
            self.cut(cmp);
            self.bar = self.kept.last().copied();
        }
    }

    /// Keeps the `n` first, the last of them last.
    fn cut(&mut self, cmp: &impl Order) {
        if self.kept.len() > self.n {
            self.kept.select_nth_unstable_by(self.n - 1, cmp);
            self.kept.truncate(self.n);
        }
    }

    /// The `n` first of the items offered, sorted.
    pub(crate) fn sorted(mut self, cmp: &impl Order) -> Vec<u32> {
        self.cut(cmp);
        self.kept.sort_by(cmp);
        self.kept
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

/// The quantiles of `v`, as [`crate::report::quantile`] takes them from the sorted values, but
/// found by selection, in linear time.
fn quantiles(mut v: Vec<u64>) -> Quantiles {
    let n = v.len();
    if n == 0 {
        return Quantiles::default();
    }
    let rank = |q: f64| ((q * n as f64).ceil() as usize).clamp(1, n) - 1;
    let mut at = 0;
    let mut nth = |k: usize| {
        v[at..].select_nth_unstable(k - at);
        at = k;
        v[k]
    };
    let (p50, p90, p99) = (nth(rank(0.5)), nth(rank(0.9)), nth(rank(0.99)));
    Quantiles {
        p50,
        p90,
        p99,
        max: v[at..].iter().copied().max().unwrap_or(0),
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

/// What the report says of the matched methods alone: their count per tier group, their
/// distribution, and their (base, diff) bytes, which the verdict judges. The second reading of
/// the logs does not change it.
pub(crate) struct Matched {
    /// Matched methods per group (0: Overall).
    pub methods: [u64; 4],
    distribution: Distribution,
    pairs: Vec<(u64, u64)>,
}

impl Matched {
    /// The matched methods of `t`, but for the quantiles of the diff's bytes (see
    /// [`diff_quantiles`]).
    fn of(t: &Tally) -> Matched {
        let mut methods = [0u64; 4];
        let mut distribution = Distribution {
            change_histogram: vec![0; CHANGE_BUCKETS.len()],
            ..Distribution::default()
        };
        let mut pairs = Vec::with_capacity(t.base_bytes.len());
        for i in (0..t.base_bytes.len()).filter(|&i| t.matched[i]) {
            let (b, d) = (t.base_bytes[i], t.diff_bytes[i]);
            methods[0] += 1;
            if let Some(m) = methods.get_mut(t.group[i] as usize) {
                *m += 1;
            }
            match d.cmp(&b) {
                std::cmp::Ordering::Greater => distribution.grew += 1,
                std::cmp::Ordering::Less => distribution.shrank += 1,
                std::cmp::Ordering::Equal => distribution.same += 1,
            }
            distribution.change_histogram[change_bucket(b, d)] += 1;
            pairs.push((b, d));
        }
        distribution.base = quantiles(pairs.iter().map(|p| p.0).collect());
        Matched {
            methods,
            distribution,
            pairs,
        }
    }
}

/// The quantiles of the diff's bytes of the matched methods of `t`.
fn diff_quantiles(t: &Tally) -> Quantiles {
    let n = t.base_bytes.len();
    quantiles(
        (0..n)
            .filter(|&i| t.matched[i])
            .map(|i| t.diff_bytes[i])
            .collect(),
    )
}

/// The top lists and [`Matched`] of a tally: most of `Matched` on a thread of its own (when
/// one can be started) while this one finds the top lists and the diff's quantiles, about as
/// long. None of them needs another.
pub(crate) fn rank(t: &Tally, options: &DiffOptions) -> (TopLists, Matched) {
    std::thread::scope(|scope| {
        let helper = std::thread::Builder::new()
            .name("memdiff distribution".into())
            .spawn_scoped(scope, || Matched::of(t));
        let top = TopLists::of(t, options);
        let diff = diff_quantiles(t);
        let mut matched = match helper {
            Ok(thread) => thread
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(_) => Matched::of(t),
        };
        matched.distribution.diff = diff;
        (top, matched)
    })
}

/// Makes the report from a finished tally, its matched methods and its described top lists.
pub(crate) fn finish(
    t: Tally,
    options: &DiffOptions,
    matched: Matched,
    described: Described,
    listed: &[u32],
    warnings: Vec<String>,
) -> MemDiff {
    let Matched {
        methods,
        distribution,
        pairs,
    } = matched;
    let mut groups: Vec<Group> = GROUP_NAMES
        .iter()
        .zip(t.groups_base.iter().zip(&t.groups_diff))
        .zip(methods)
        .map(|((n, (b, d)), methods)| Group {
            name: n.to_string(),
            methods,
            base: *b,
            diff: *d,
        })
        .collect();
    let mut coverage = t.coverage.clone();
    coverage.matched = groups[0].methods;
    groups.retain(|g| g.name == "Overall" || g.methods > 0);
    let kinds = kind_deltas(&t);
    let phases = phase_deltas(&t);
    let phase_kinds = phase_kind_rows(&t.union, &t.sums_base, &t.sums_diff);
    let scatter = scatter_sample(&t, listed, coverage.matched);
    let Described { lists, tiers } = described;
    let [top_growth, top_shrinkage, top_relative_growth, top_relative_shrinkage] = lists;
    let mut diff = MemDiff {
        coverage,
        groups,
        kinds,
        phases,
        phase_kinds,
        has_kinds: true,
        ignored_kinds: options.ignore_kinds.clone(),
        unknown_ignored: Vec::new(),
        builds_base: Vec::new(),
        builds_diff: Vec::new(),
        distribution,
        top_growth,
        top_shrinkage,
        top_relative_growth,
        top_relative_shrinkage,
        tier_tops: tiers,
        min_method_bytes: options.min_method_bytes,
        scatter,
        verdict: Verdict {
            regression: false,
            rule: String::new(),
            failures: Vec::new(),
            thresholds: options.thresholds.clone(),
            tier_floor: 0,
            tiers: Vec::new(),
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
    if b.invalid_kind > 0 || d.invalid_kind > 0 {
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
    if (b.no_phase > 0 || d.no_phase > 0) && !phases.is_empty() {
        phases.push(Delta {
            name: t.union.phase_name(INVALID).to_string(),
            base: b.no_phase,
            diff: d.no_phase,
        });
    }
    phases
}

/// Every (phase, kind) pair with bytes on either side, named, by absolute delta.
pub(crate) fn phase_kind_rows(
    union: &SchemaUnion,
    base: &Sums,
    diff: &Sums,
) -> Vec<PhaseKindDelta> {
    let mut keys: Vec<(u32, u32)> = base
        .phase_kinds
        .keys()
        .chain(diff.phase_kinds.keys())
        .copied()
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let mut rows: Vec<PhaseKindDelta> = keys
        .into_iter()
        .map(|key| PhaseKindDelta {
            phase: union.phase_name(key.0).to_string(),
            kind: union.kind_name(key.1).to_string(),
            base: base.phase_kinds.get(&key).copied().unwrap_or(0),
            diff: diff.phase_kinds.get(&key).copied().unwrap_or(0),
        })
        .filter(|r| r.base > 0 || r.diff > 0)
        .collect();
    sort_phase_kinds(&mut rows);
    rows
}

/// Up to 4,000 (base, diff) pairs of matched methods: the listed ones and an even sample of
/// the rest, each method once.
fn scatter_sample(t: &Tally, listed: &[u32], matched_count: u64) -> Vec<(u64, u64)> {
    const MAX: usize = 4000;
    let matched = || (0..t.base_bytes.len()).filter(|&i| t.matched[i]);
    let room = MAX - listed.len().min(MAX / 2);
    let step = matched_count.div_ceil(room as u64).max(1) as usize;
    let mut chosen: Vec<usize> = matched().step_by(step).collect();
    chosen.extend(listed.iter().map(|&i| i as usize));
    chosen.sort_unstable();
    chosen.dedup();
    chosen.truncate(MAX);
    chosen
        .into_iter()
        .map(|i| (t.base_bytes[i], t.diff_bytes[i]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The quantiles as the sorted values give them.
    fn sorted_quantiles(mut v: Vec<u64>) -> Quantiles {
        v.sort_unstable();
        Quantiles {
            p50: crate::stats::quantile(&v, 0.5),
            p90: crate::stats::quantile(&v, 0.9),
            p99: crate::stats::quantile(&v, 0.99),
            max: v.last().copied().unwrap_or(0),
        }
    }

    #[test]
    fn selected_quantiles_equal_sorted_ones() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        for n in (0..300).chain([999, 1000, 1001, 4096]) {
            let v: Vec<u64> = (0..n)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    seed % if n % 2 == 0 { 50 } else { 1 << 40 }
                })
                .collect();
            assert_eq!(quantiles(v.clone()), sorted_quantiles(v), "n = {n}");
        }
    }

    #[test]
    fn the_n_first_equal_sorting_everything() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for len in [0usize, 1, 2, 63, 64, 65, 200, 1000, 5000] {
            // Few distinct keys (many ties, broken by index), in random, rising and falling order.
            let keys: Vec<u64> = (0..len)
                .map(|i| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    match len % 3 {
                        0 => seed % 7,
                        1 => i as u64,
                        _ => (len - i) as u64 / 3,
                    }
                })
                .collect();
            let cmp = |a: &u32, b: &u32| keys[*a as usize].cmp(&keys[*b as usize]).then(a.cmp(b));
            for n in [0usize, 1, 2, 10, 31, 32, 33, 100, len, len + 1] {
                let mut all: Vec<u32> = (0..len as u32).collect();
                all.sort_by(cmp);
                all.truncate(n);
                let mut first = FirstN::new(n);
                for i in 0..len as u32 {
                    first.offer(i, &cmp);
                }
                assert_eq!(first.sorted(&cmp), all, "len {len}, n {n}");
            }
        }
    }
}
