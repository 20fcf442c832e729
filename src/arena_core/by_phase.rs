//! Bytes per (phase, kind), taken from the kind slots' sums. It runs out of line (at phase switches, reads and the end of a method), so that the
//! allocation path adds to a kind's packed counter and nothing else.

use super::kinds::Slots;
use crate::fallible;

/// Bytes per (phase, kind), taken at phase switches from the kind slots' growth since the last
/// switch. Kinds are the configured ones plus the invalid bucket (every other slot, found as
/// the total less the named slots); phases the configured ones plus "no phase".
pub(crate) struct KindsByPhase {
    /// Kinds plus the invalid bucket: the row length of `bytes`.
    kinds: usize,
    /// Each bucket's bytes (named kind slots, then the invalid bucket) at the last switch.
    last: Vec<u64>,
    /// Closed intervals' bytes, `bytes[phase * kinds + kind]`.
    bytes: Vec<u64>,
    /// Whether each phase's row has any bytes (so that reading skips the others).
    touched: Vec<bool>,
}

impl KindsByPhase {
    /// Zeroed, for `kinds` named kinds and `phases` named phases.
    /// `None` when the memory for them cannot be had.
    pub(crate) fn new(kinds: usize, phases: usize) -> Option<KindsByPhase> {
        Some(KindsByPhase {
            kinds: kinds + 1,
            last: fallible::filled(0, kinds + 1)?,
            bytes: fallible::filled(0, (kinds + 1) * (phases + 1))?,
            touched: fallible::filled(false, phases + 1)?,
        })
    }

    /// Zeroes everything (the arena's counters were zeroed).
    #[inline(never)] // reached only by arenas that record kinds by phase
    pub(crate) fn clear(&mut self) {
        self.last.fill(0);
        for (row, touched) in self
            .bytes
            .chunks_exact_mut(self.kinds.max(1)) // `kinds` is at least 1: the invalid bucket
            .zip(&mut self.touched)
        {
            if std::mem::take(touched) {
                row.fill(0);
            }
        }
    }

    /// The growth of bucket `kind` since the last switch; `total` is the sum of all slots.
    pub(crate) fn growth(&self, slots: Slots<'_>, total: u64, kind: usize) -> u64 {
        let named = self.kinds - 1;
        let now = if kind < named {
            slots.bytes(kind)
        } else {
            total.wrapping_sub(slots.sum_bytes(..named))
        };
        now.wrapping_sub(self.last.get(kind).copied().unwrap_or(0))
    }

    /// Closes the open interval of `phase`: each bucket's growth goes to that phase's row.
    pub(crate) fn close(&mut self, phase: usize, slots: Slots<'_>, total: u64) {
        let named = self.kinds - 1;
        let Some(row) = self
            .bytes
            .get_mut(phase * self.kinds..(phase + 1) * self.kinds)
        else {
            return; // not a phase slot: the caller passes one
        };
        let (mut named_sum, mut grew) = (0u64, 0u64);
        for ((sum, last), now) in row
            .iter_mut()
            .zip(self.last.iter_mut())
            .zip(slots.iter_bytes(named))
        {
            let delta = now.wrapping_sub(*last);
            *sum = sum.wrapping_add(delta);
            *last = now;
            named_sum = named_sum.wrapping_add(now);
            grew |= delta;
        }
        let invalid = total.wrapping_sub(named_sum);
        let (Some(sum), Some(last)) = (row.get_mut(named), self.last.get_mut(named)) else {
            return; // `named < kinds`: both rows have the invalid bucket
        };
        let delta = invalid.wrapping_sub(*last);
        *sum = sum.wrapping_add(delta);
        *last = invalid;
        if let Some(touched) = self.touched.get_mut(phase) {
            *touched |= (grew | delta) != 0;
        }
    }

    /// Bytes of closed intervals of (phase, kind).
    pub(crate) fn closed(&self, phase: usize, kind: usize) -> u64 {
        self.bytes
            .get(phase * self.kinds + kind)
            .copied()
            .unwrap_or(0)
    }

    /// The non-zero `(phase, kind, bytes)` in (phase, kind) order into `out`, the open interval
    /// of phase `current` included; fails when `out` cannot grow.
    pub(crate) fn nonzero(
        &self,
        current: usize,
        slots: Slots<'_>,
        total: u64,
        out: &mut Vec<(u32, u32, u64)>,
    ) -> Result<(), ()> {
        let named = self.kinds - 1;
        for (phase, row) in self.bytes.chunks_exact(self.kinds.max(1)).enumerate() {
            if phase == current {
                let invalid = total.wrapping_sub(slots.sum_bytes(..named));
                let now = slots.iter_bytes(named).chain(std::iter::once(invalid));
                for (kind, ((&closed, &last), now)) in
                    row.iter().zip(&self.last).zip(now).enumerate()
                {
                    let b = closed.wrapping_add(now.wrapping_sub(last));
                    if b != 0 {
                        fallible::push(out, (phase as u32, kind as u32, b)).map_err(drop)?;
                    }
                }
            } else if self.touched.get(phase) == Some(&true) {
                for (kind, &b) in row.iter().enumerate() {
                    if b != 0 {
                        fallible::push(out, (phase as u32, kind as u32, b)).map_err(drop)?;
                    }
                }
            }
        }
        Ok(())
    }
}
