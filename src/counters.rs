//! What an arena counts: the names of its kinds and phases (the schema) and the counters of one
//! method (or of many, summed).

use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::error::{Error, ErrorCode};
use crate::fallible::{self, out_of_memory};
use crate::message::{message, Quoted};
use crate::shared::Shared;
use crate::sys::{JITARENA_MAX_KINDS, JITARENA_MAX_PHASES};

/// Longest kind or phase name, in bytes.
pub const MAX_NAME_LEN: usize = 255;

/// The names of an arena's kinds and phases. Kind `i` is `kinds[i]`; every kind at or above
/// `kinds.len()` is counted as invalid. Phase `i` is `phases[i]`; bytes outside any phase are
/// counted as "no phase".
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Schema {
    /// Kind names, in kind order.
    pub kinds: Vec<String>,
    /// Phase names, in phase order.
    pub phases: Vec<String>,
}

/// The most kinds, and the most phases, of a schema read from a stats log or united from
/// several ([`Schema::of_log`]): 16 times an arena's kinds, 4 times its phases. Every record of a
/// merged log carries a bitmap over the union's slots, so a bound on them bounds what a merge
/// can write for each record, whatever schema a crafted log defines.
pub const MAX_LOG_NAMES: usize = 4096;

/// Name shown for the invalid-kind bucket.
pub const INVALID_KIND_NAME: &str = "(invalid kind)";
/// Name shown for bytes requested outside any phase.
pub const NO_PHASE_NAME: &str = "(no phase)";

impl Schema {
    /// A schema after checking its names: at most 255 kinds and 1024 phases, each name 1 to 255
    /// bytes with no control characters and no white space at either end (spaces inside, as in
    /// the .NET JIT's "Morph - Inlining", are names' own), unique within its list.
    pub fn new(kinds: Vec<String>, phases: Vec<String>) -> Result<Schema, Error> {
        check_names(
            "kind",
            &kinds,
            JITARENA_MAX_KINDS as usize,
            first_repeat_hashed,
        )?;
        check_names(
            "phase",
            &phases,
            JITARENA_MAX_PHASES as usize,
            first_repeat_hashed,
        )?;
        Ok(Schema { kinds, phases })
    }

    /// A schema read from a stats log, or united from several, after checking its names as
    /// [`Schema::new`] does, but with wider limits on their number ([`MAX_LOG_NAMES`] kinds
    /// and phases): logs merged from many processes, or written by other tools, may name more
    /// than 255 kinds, and readers count them all. Arenas (and replay) keep the limits of
    /// [`Schema::new`].
    pub fn of_log(kinds: Vec<String>, phases: Vec<String>) -> Result<Schema, Error> {
        check_names("kind", &kinds, MAX_LOG_NAMES, first_repeat_sorted)?;
        check_names("phase", &phases, MAX_LOG_NAMES, first_repeat_sorted)?;
        Ok(Schema { kinds, phases })
    }

    /// A schema united from the schemas of several logs, for a report over them (`stats`):
    /// its names checked as [`Schema::of_log`] checks them, but any number of them. A union that
    /// is written as a log's schema (a merge) keeps [`Schema::of_log`]'s limits.
    pub fn united(kinds: Vec<String>, phases: Vec<String>) -> Result<Schema, Error> {
        check_names("kind", &kinds, usize::MAX, first_repeat_sorted)?;
        check_names("phase", &phases, usize::MAX, first_repeat_sorted)?;
        Ok(Schema { kinds, phases })
    }

    /// The schema shared by every arena with the same names (arenas are created per method, so
    /// they share one copy of the names rather than copying them each time). Fails only when
    /// memory for a new copy runs out.
    pub fn interned(self) -> Result<Shared<Schema>, Error> {
        const MAX_INTERNED: usize = 64;
        let mut cache = lock_schema_cache();
        if let Some(found) = cache.iter().rev().find(|s| ***s == self) {
            return Ok(Shared::clone(found));
        }
        let fresh = Shared::try_new(self).map_err(|_| out_of_memory("no memory for the names"))?;
        if cache.len() < MAX_INTERNED {
            let _ = fallible::push(&mut cache, Shared::clone(&fresh)); // no memory: not cached
        }
        Ok(fresh)
    }

    /// The name of kind slot `i` (`kinds.len()` is the invalid bucket).
    pub fn kind_name(&self, i: usize) -> &str {
        self.kinds.get(i).map_or(INVALID_KIND_NAME, String::as_str)
    }

    /// The name of phase slot `i` (`phases.len()` is the "no phase" bucket).
    pub fn phase_name(&self, i: usize) -> &str {
        self.phases.get(i).map_or(NO_PHASE_NAME, String::as_str)
    }
}

/// The schemas shared by arenas (see [`Schema::interned`]).
static SCHEMA_CACHE: Mutex<Vec<Shared<Schema>>> = Mutex::new(Vec::new());

/// The name arrays of the last `jitarena_create` that read its names (their pointers, as
/// addresses) and the schema checked from them.
pub(crate) struct NamesSeen {
    /// The kind names' pointers.
    pub(crate) kinds: Vec<usize>,
    /// The phase names' pointers.
    pub(crate) phases: Vec<usize>,
    /// The schema checked from them.
    pub(crate) schema: Shared<Schema>,
}

/// What the last create made of its names: the JIT's per-method arena is created again and
/// again from the same static name arrays, whose strings need no second reading. One lock per
/// create, none per allocation.
static NAMES_SEEN: Mutex<Option<NamesSeen>> = Mutex::new(None);

/// The last create's names, locked (also held across `fork`, as the schema cache is).
pub(crate) fn lock_names_seen() -> MutexGuard<'static, Option<NamesSeen>> {
    NAMES_SEEN.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Locks the shared schemas (also held across a `fork`, see `crate::fork`). A panic while it
/// was held cannot leave it half-updated: its only update is one push.
pub(crate) fn lock_schema_cache() -> MutexGuard<'static, Vec<Shared<Schema>>> {
    SCHEMA_CACHE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// FNV-1a, to find repeated names: unlike the standard library's default hasher (SipHash with
/// random keys, which a set must fetch from the kernel), it adds next to no code to a JIT that
/// links the library (see BENCHMARKS.md, "Footprint"). The names are the host's own (at most
/// 1,024 of them), so a hash flood is no concern; names a file gives, of any number, are
/// checked by sorting ([`first_repeat_sorted`]).
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The names seen so far, by index into the list checked: an open-addressing table of
/// `index + 1` (0: empty) at least twice as large as the list, allocated once and fallibly
/// (a `HashSet`'s insert links a growth path that aborts).
struct NameSet<'a> {
    names: &'a [String],
    table: Vec<usize>,
}

impl<'a> NameSet<'a> {
    fn new(names: &'a [String]) -> Option<NameSet<'a>> {
        let size = names
            .len()
            .checked_mul(2)?
            .checked_next_power_of_two()?
            .max(2);
        Some(NameSet {
            names,
            table: fallible::filled(0, size)?,
        })
    }

    /// Adds name `i`; false if an earlier name is the same.
    fn insert(&mut self, i: usize) -> bool {
        let Some(name) = self.names.get(i) else {
            return true;
        };
        let mask = self.table.len() - 1;
        let mut at = fnv(name.as_bytes()) as usize & mask;
        // The table is never full (twice the names), so an empty entry ends every probe.
        while let Some(entry) = self.table.get_mut(at) {
            if *entry == 0 {
                *entry = i + 1;
                return true;
            }
            if self.names.get(*entry - 1) == Some(name) {
                return false;
            }
            at = (at + 1) & mask;
        }
        true
    }
}

/// The first of `names` that repeats an earlier one, by [`NameSet`]: for the host's names.
fn first_repeat_hashed(names: &[String]) -> Result<Option<usize>, Error> {
    let mut seen =
        NameSet::new(names).ok_or_else(|| out_of_memory("no memory to check the names"))?;
    Ok((0..names.len()).find(|&i| !seen.insert(i)))
}

/// The first of `names` that repeats an earlier one, by sorting their indexes by name: for the
/// names a file gives, however many, in O(n log n) comparisons whatever they are (crafted names
/// could make every one meet in a table hashed without a key).
fn first_repeat_sorted(names: &[String]) -> Result<Option<usize>, Error> {
    let mut order = Vec::new();
    order
        .try_reserve_exact(names.len())
        .map_err(|_| out_of_memory("no memory to check the names"))?;
    order.extend(0..names.len());
    let name = |i: usize| names.get(i).map_or("", String::as_str);
    order.sort_unstable_by(|&a, &b| name(a).cmp(name(b)).then(a.cmp(&b)));
    // In each run of equal names, sorted by index, every index after the first repeats it.
    Ok(order
        .windows(2)
        .filter(|w| name(w[0]) == name(w[1]))
        .map(|w| w[1])
        .min())
}

/// Checks a list of names: at most `max`, each valid, none repeated (`first_repeat` finds the
/// first name that repeats an earlier one). The error names the first bad or repeated name.
fn check_names(
    what: &str,
    names: &[String],
    max: usize,
    first_repeat: fn(&[String]) -> Result<Option<usize>, Error>,
) -> Result<(), Error> {
    if names.len() > max {
        return Err(Error::new(
            ErrorCode::Config,
            message!(
                names.len(),
                " ",
                what,
                "s given, at most ",
                max,
                " are allowed"
            ),
        ));
    }
    let bad = |name: &String| {
        name.is_empty()
            || name.len() > MAX_NAME_LEN
            || name.chars().any(char::is_control)
            || name.starts_with(char::is_whitespace)
            || name.ends_with(char::is_whitespace)
    };
    // Repeats are looked for among the names before the first bad one, which are short.
    let good = names.iter().position(bad).unwrap_or(names.len());
    let repeat = first_repeat(names.get(..good).unwrap_or_default())?;
    for (i, name) in names.iter().enumerate() {
        if bad(name) {
            return Err(Error::new(
                ErrorCode::Config,
                message!(
                    what,
                    " ",
                    i,
                    " has the name ",
                    Quoted(name),
                    ": a name is 1 to ",
                    MAX_NAME_LEN,
                    " bytes of UTF-8 without control characters (tabs and line breaks among them) and without white space at either end; spaces and punctuation inside are allowed, as in \"Morph - Inlining\""
                ),
            ));
        }
        if repeat == Some(i) {
            return Err(Error::new(
                ErrorCode::Config,
                message!(what, " ", i, " repeats the name ", Quoted(name)),
            ));
        }
    }
    Ok(())
}

/// The counters of one method (or a sum of methods), laid out against a [`Schema`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Counters {
    /// Bytes requested per kind; the last entry is the invalid-kind bucket.
    pub kind_bytes: Vec<u64>,
    /// Allocations per kind; the last entry is the invalid-kind bucket.
    pub kind_count: Vec<u64>,
    /// Bytes requested per phase; the last entry is the "no phase" bucket.
    pub phase_bytes: Vec<u64>,
    /// Bytes handed out after rounding each request up to the pointer size.
    pub used_bytes: u64,
    /// Page bytes obtained from the page allocator.
    pub reserved_bytes: u64,
    /// Pages obtained.
    pub page_count: u64,
    /// The largest single request.
    pub largest_alloc: u64,
    /// Whether a request failed on the memory limit.
    pub limit_hit: bool,
}

impl Counters {
    /// Zeroed counters for a schema.
    pub fn zeroed(schema: &Schema) -> Counters {
        Counters {
            kind_bytes: vec![0; schema.kinds.len() + 1],
            kind_count: vec![0; schema.kinds.len() + 1],
            phase_bytes: vec![0; schema.phases.len() + 1],
            ..Counters::default()
        }
    }

    /// Bytes requested, all kinds.
    pub fn total_bytes(&self) -> u64 {
        self.kind_bytes.iter().sum()
    }

    /// [`Counters::zeroed`], or `None` when the memory cannot be had.
    pub(crate) fn try_zeroed(schema: &Schema) -> Option<Counters> {
        Some(Counters {
            kind_bytes: fallible::filled(0, schema.kinds.len() + 1)?,
            kind_count: fallible::filled(0, schema.kinds.len() + 1)?,
            phase_bytes: fallible::filled(0, schema.phases.len() + 1)?,
            ..Counters::default()
        })
    }

    /// Allocations, all kinds.
    pub fn total_count(&self) -> u64 {
        self.kind_count.iter().sum()
    }
}

/// Who a record is about.
#[derive(Debug, Clone, PartialEq, Eq, Default, Hash)]
pub struct MethodInfo {
    /// The method's full name, if known.
    pub name: Option<String>,
    /// The replay tool's index of the method, -1 if unknown.
    pub context: i64,
    /// Optimization level or tier (`MinOpts`, `FullOpts`, `Tier0`, ...), if known.
    pub tier: Option<String>,
}

/// One method's counters, sparse: only kinds and phases with bytes or allocations.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MethodCounts {
    /// `(kind slot, bytes, count)`, slots increasing; the slot equal to the schema's kind
    /// count is the invalid-kind bucket.
    pub kinds: Vec<(u32, u64, u64)>,
    /// `(phase slot, bytes)`, slots increasing; the slot equal to the phase count is "no phase".
    pub phases: Vec<(u32, u64)>,
    /// Rounded bytes handed out.
    pub used_bytes: u64,
    /// Page bytes obtained.
    pub reserved_bytes: u64,
    /// Pages obtained.
    pub page_count: u64,
    /// The largest request.
    pub largest_alloc: u64,
    /// Whether a request failed on the memory limit.
    pub limit_hit: bool,
    /// Bytes per (phase slot, kind slot), non-zero entries only, sorted by phase then kind;
    /// empty unless the arena was created with `kinds_by_phase` on.
    pub phase_kind_bytes: Vec<(u32, u32, u64)>,
}

impl MethodCounts {
    /// Bytes requested, all kinds. Never wraps: it saturates at `u64::MAX`, which no record
    /// read by a log reader reaches (the reader refuses a record whose sums do not fit); see
    /// [`MethodCounts::checked_total_bytes`] for counts from elsewhere.
    pub fn total_bytes(&self) -> u64 {
        self.checked_total_bytes().unwrap_or(u64::MAX)
    }

    /// Allocations, all kinds; saturates as [`MethodCounts::total_bytes`] does.
    pub fn total_count(&self) -> u64 {
        self.checked_total_count().unwrap_or(u64::MAX)
    }

    /// Bytes requested, all kinds; `None` if the sum does not fit in 64 bits.
    pub fn checked_total_bytes(&self) -> Option<u64> {
        checked_sum(self.kinds.iter().map(|k| k.1))
    }

    /// Allocations, all kinds; `None` if the sum does not fit in 64 bits.
    pub fn checked_total_count(&self) -> Option<u64> {
        checked_sum(self.kinds.iter().map(|k| k.2))
    }

    /// Bytes of all phases; `None` if the sum does not fit in 64 bits.
    pub fn checked_phase_bytes(&self) -> Option<u64> {
        checked_sum(self.phases.iter().map(|p| p.1))
    }
}

/// The sum of `values`, `None` if it does not fit in 64 bits.
pub fn checked_sum(values: impl IntoIterator<Item = u64>) -> Option<u64> {
    values
        .into_iter()
        .try_fold(0u64, |sum, v| sum.checked_add(v))
}

/// One method's record: its schema, who it is, what it allocated (a stats log's record).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MethodRecord {
    /// The kind and phase names the counters refer to.
    pub schema: Shared<Schema>,
    /// Who.
    pub info: MethodInfo,
    /// What it allocated.
    pub counts: MethodCounts,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_names_finds_the_first_repeat_among_many_names() {
        let mut names: Vec<String> = (0..1024).map(|i| format!("Phase{i}")).collect();
        assert!(check_names("phase", &names, 1024, first_repeat_hashed).is_ok());
        names[700] = "Phase12".to_string();
        names[900] = "Phase3".to_string();
        let err =
            check_names("phase", &names, 1024, first_repeat_hashed).expect_err("a repeated name");
        assert!(
            err.message
                .contains("phase 700 repeats the name \"Phase12\""),
            "{}",
            err.message
        );
        let hashes: std::collections::HashSet<u64> =
            names.iter().map(|n| fnv(n.as_bytes())).collect();
        assert!(hashes.len() > 1000, "FNV-1a spreads the names");
        // Only repeats are refused, in the smallest tables (2 entries for one name, 4 for two).
        for list in [
            vec!["A"],
            vec!["A", "B"],
            vec!["A", "A"],
            vec!["B", "C", "B"],
        ] {
            let list: Vec<String> = list.into_iter().map(String::from).collect();
            let repeats = (1..list.len()).any(|i| list[..i].contains(&list[i]));
            assert_eq!(
                check_names("kind", &list, 255, first_repeat_hashed).is_err(),
                repeats,
                "{list:?}"
            );
        }
        // Names whose hashes meet in the table (4 entries for two names, 8 for three): the
        // second probes past the first and is told apart from it, and its repeat, past both,
        // is found.
        let names: Vec<String> = (0..64).map(|i| format!("K{i}")).collect();
        let meeting = |mask: u64| {
            let slot = |n: &String| fnv(n.as_bytes()) & mask;
            names
                .iter()
                .enumerate()
                .find_map(|(i, a)| {
                    names[..i]
                        .iter()
                        .find(|b| slot(b) == slot(a))
                        .map(|b| (a, b))
                })
                .expect("two of 64 names share a slot")
        };
        let (a, b) = meeting(3);
        assert!(check_names("kind", &[a.clone(), b.clone()], 255, first_repeat_hashed).is_ok());
        let (a, b) = meeting(7);
        assert!(check_names("kind", &[a.clone(), b.clone()], 255, first_repeat_hashed).is_ok());
        assert!(check_names(
            "kind",
            &[a.clone(), b.clone(), b.clone()],
            255,
            first_repeat_hashed
        )
        .is_err());
    }

    /// The two ways of finding a repeat find the same one: the first name that repeats an
    /// earlier one, whatever the order of the repeats; a file's many names are checked by
    /// sorting, with the same error.
    #[test]
    fn sorting_finds_the_repeat_hashing_finds() {
        let base: Vec<String> = (0..600).map(|i| format!("N{}", i * 7919 % 600)).collect();
        for (at, of) in [(599, 3), (10, 9), (300, 200), (1, 0)] {
            let mut names = base.clone();
            names[at] = names[of].clone();
            names[at / 2 + 1] = if at / 2 + 1 > of {
                names[of].clone()
            } else {
                "Z".into()
            };
            let hashed = first_repeat_hashed(&names).unwrap();
            assert!(hashed.is_some());
            assert_eq!(first_repeat_sorted(&names).unwrap(), hashed, "{at} {of}");
        }
        assert_eq!(first_repeat_sorted(&base).unwrap(), None);
        assert_eq!(first_repeat_sorted(&[]).unwrap(), None);
        let mut many: Vec<String> = (0..MAX_LOG_NAMES - 1).map(|i| format!("Kind{i}")).collect();
        many.push("Kind1234".into());
        let err = Schema::of_log(many.clone(), Vec::new()).expect_err("a repeated name");
        assert!(
            err.message
                .contains("kind 4095 repeats the name \"Kind1234\""),
            "{}",
            err.message
        );
        many.push("Kind4096".into());
        let err = Schema::of_log(many, Vec::new()).expect_err("too many names");
        assert!(
            err.message.contains("4097 kinds given, at most 4096"),
            "{}",
            err.message
        );
    }
}
