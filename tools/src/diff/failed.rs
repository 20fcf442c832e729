//! Failing compiles over stats logs: the contexts a JIT noted as failed (`jitarena_method.failed`,
//! read by [`jitarena::log::LogReader::failed_compiles`]) counted as SuperPMI counts its
//! `Error` results, and as the CSV reading counts them (`docs/memdiff.md`, the table of results):
//! a context failed on one side and compiled on the other is a failing compile (never a method
//! missing from the other side), failed on both is counted on each, failed on one side and absent
//! from the other is counted on the failing side with nothing measured on either.

use super::side::Side;
use super::tally::FastMap;
use super::Coverage;

/// The failed contexts of each side (contexts of 0 or more: an unknown context matches none).
#[derive(Default)]
pub(crate) struct Failed {
    base: FastMap<i64, ()>,
    diff: FastMap<i64, ()>,
}

impl Failed {
    /// The failed contexts of both sides' logs.
    pub(crate) fn of(base: &Side, diff: &Side) -> Failed {
        let set = |side: &Side| side.failed.iter().map(|m| (m.context, ())).collect();
        Failed {
            base: set(base),
            diff: set(diff),
        }
    }

    /// Whether the base's compile of `context` failed.
    pub(crate) fn in_base(&self, context: Option<i64>) -> bool {
        context.is_some_and(|c| self.base.contains_key(&c))
    }

    /// Whether the diff's compile of `context` failed.
    pub(crate) fn in_diff(&self, context: Option<i64>) -> bool {
        context.is_some_and(|c| self.diff.contains_key(&c))
    }

    /// Counts the failed contexts that no record of the other side pairs with: failed on both
    /// sides (counted on each), or failed on one and absent from the other. The failures paired
    /// with a record of the other side are counted where that record is taken out of the
    /// totals (the second reading).
    pub(crate) fn count_unpaired(&self, base: &Side, diff: &Side, cov: &mut Coverage) {
        let contexts = |side: &Side| -> FastMap<i64, ()> {
            side.keys.contexts().map(|(_, c)| (c as i64, ())).collect()
        };
        let (base_has, diff_has) = (contexts(base), contexts(diff));
        for &c in self.diff.keys() {
            if self.base.contains_key(&c) {
                cov.failing_base += 1;
                cov.failing_diff += 1;
            } else if !base_has.contains_key(&c) {
                cov.failing_diff += 1;
                cov.missed_base_failing_diff += 1;
            }
        }
        for &c in self.base.keys() {
            if !self.diff.contains_key(&c) && !diff_has.contains_key(&c) {
                cov.failing_base += 1;
                cov.missed_diff_failing_base += 1;
            }
        }
    }

    /// A record of a context failed on the other side: a failing compile of that side (`true`),
    /// else `false`. `base_record`: the record is the base's (the diff failed).
    pub(crate) fn counts_record(
        &self,
        context: Option<i64>,
        base_record: bool,
        cov: &mut Coverage,
    ) -> bool {
        match base_record {
            true if self.in_diff(context) => {
                cov.failing_diff += 1;
                cov.failing_diff_only += 1;
                true
            }
            false if self.in_base(context) => {
                cov.failing_base += 1;
                cov.failing_base_only += 1;
                true
            }
            _ => false,
        }
    }
}
