//! Bytes per phase from the phase marks: which phase runs, which it was begun inside, and the
//! bytes used between two marks given to the phase they belong to (the header's "Phases").
//!
//! The inline path writes each mark (the cursor, the phase, the call) into the arena's head; the
//! arena hands them here in order, each with the arena's bytes used at its cursor. A phase
//! slot is a phase below the configured count, or the count itself for "no phase".

use crate::fallible;
use crate::sys::{JITARENA_MARK_BEGIN, JITARENA_MARK_END};

/// The most phases [`PhaseBytes`] keeps begun inside one another: deeper than any JIT nests;
/// past it, the phases begun so far are forgotten (their ends then return to "no phase").
const NESTING: usize = 64;

/// The phases' bytes and which phase runs.
///
/// The invariant that [`PhaseBytes::mark`] relies on: `bytes` has `none + 1` entries, and
/// `running` and every entry of `outer` are at most `none`.
pub(crate) struct PhaseBytes {
    /// Bytes used per phase slot, of the intervals closed by a mark.
    bytes: Vec<u64>,
    /// The slots that ran when the phases begun since were begun, innermost last: where the
    /// end of the running phase returns. A stack, so that a phase begun again inside itself
    /// (A, B inside A, A inside B) unwinds through each; [`NESTING`] entries at most, its room
    /// made with the counters.
    outer: Vec<u32>,
    /// The "no phase" slot: the number of phases.
    none: u32,
    /// The running phase slot.
    running: u32,
    /// Bytes used at the last mark.
    mark: u64,
    /// Whether a mark was applied since the last clear (a method whose marks nobody read has
    /// nothing to clear).
    touched: bool,
}

/// Where one mark puts the bytes since the mark before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Interval {
    /// The phase slot the bytes belong to.
    pub(crate) slot: usize,
    /// The bytes used since the mark before.
    pub(crate) bytes: u64,
    /// The phase slot that runs after the mark.
    pub(crate) running: usize,
}

impl PhaseBytes {
    /// Counters for `phases` configured phases, "no phase" running. `None` when memory runs out.
    pub(crate) fn new(phases: usize) -> Option<PhaseBytes> {
        let none = phases as u32;
        let mut outer = fallible::filled(none, NESTING)?;
        outer.clear();
        Some(PhaseBytes {
            bytes: fallible::filled(0, phases + 1)?,
            outer,
            none,
            running: none,
            mark: 0,
            touched: false,
        })
    }

    /// The running phase slot.
    pub(crate) fn running(&self) -> usize {
        self.running as usize
    }

    /// Applies one mark made when the arena had used `used` bytes: the bytes since the last
    /// mark go to the running phase (a begin, a switch) or to the phase named (an end), and
    /// the phase named runs (a begin, a switch), or the one it was begun inside (the end of
    /// the running phase). Out-of-range phases are "no phase"; an unknown op is a switch.
    #[inline]
    pub(crate) fn mark(&mut self, used: u64, phase: u32, op: u32) -> Interval {
        let bytes = used.wrapping_sub(self.mark);
        self.mark = used;
        self.touched = true;
        let (owner, next) = self.step(self.running, phase, op, bytes);
        self.running = next;
        Interval {
            slot: owner as usize,
            bytes,
            running: next as usize,
        }
    }

    /// Applies the head's marks in order, as [`PhaseBytes::mark`] does one, with the running
    /// phase and the last mark kept in registers over the run.
    pub(crate) fn marks(&mut self, marks: &[crate::sys::jitarena_mark]) {
        let (mut last, mut running) = (self.mark, self.running);
        self.touched |= !marks.is_empty();
        for m in marks {
            let used = m.used as u64;
            let bytes = used.wrapping_sub(last);
            last = used;
            running = self.step(running, m.phase, m.op, bytes).1;
        }
        (self.mark, self.running) = (last, running);
    }

    /// One mark's step with `running` the running slot: the outer link it sets, the bytes
    /// added to the slot they belong to; returns that slot and the one that runs next.
    #[inline(always)]
    fn step(&mut self, running: u32, phase: u32, op: u32, bytes: u64) -> (u32, u32) {
        let slot = phase.min(self.none);
        let (owner, next) = match op {
            JITARENA_MARK_BEGIN => {
                if self.outer.len() == NESTING {
                    self.outer.clear(); // deeper than any JIT: forgotten
                }
                // Within the room made above and at `new`: never allocates.
                let _ = fallible::push_within(&mut self.outer, running);
                (running, slot)
            }
            JITARENA_MARK_END if slot == running => (slot, self.outer.pop().unwrap_or(self.none)),
            // A child ended inside the running phase without being begun.
            JITARENA_MARK_END => (slot, running),
            _ => {
                self.outer.clear();
                (running, slot)
            }
        };
        // SAFETY: `owner` is `running` or `slot`, both at most `none`: within `bytes`.
        let sum = unsafe { self.bytes.get_unchecked_mut(owner as usize) };
        *sum = sum.wrapping_add(bytes);
        (owner, next)
    }

    /// Bytes of `slot` when the arena has used `used` bytes: its closed intervals, and for the
    /// running phase the bytes since the last mark.
    pub(crate) fn bytes(&self, slot: usize, used: u64) -> u64 {
        let closed = self.bytes.get(slot).copied().unwrap_or(0);
        if slot == self.running as usize {
            closed.wrapping_add(used.wrapping_sub(self.mark))
        } else {
            closed
        }
    }

    /// Every slot's bytes (`(slot, bytes)`, non-zero ones) when the arena has used `used`.
    pub(crate) fn each_nonzero(&self, used: u64) -> impl Iterator<Item = (usize, u64)> + '_ {
        (0..self.bytes.len())
            .map(move |slot| (slot, self.bytes(slot, used)))
            .filter(|&(_, b)| b != 0)
    }

    /// The number of phase slots ("no phase" included).
    pub(crate) fn slots(&self) -> usize {
        self.bytes.len()
    }

    /// Empties the counters for the next method: "no phase" runs, nothing used.
    pub(crate) fn clear(&mut self) {
        if std::mem::take(&mut self.touched) {
            self.bytes.fill(0);
        }
        self.running = self.none;
        self.outer.clear();
        self.mark = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::JITARENA_MARK_SWITCH;

    const BEGIN: u32 = JITARENA_MARK_BEGIN;
    const END: u32 = JITARENA_MARK_END;
    const NONE: u32 = u32::MAX;

    /// The JIT's LSRA: a parent begun, its children ended inside it, the parent ended.
    #[test]
    fn children_ended_inside_their_parent_take_the_bytes_since_the_last_mark() {
        let (lsra, build, alloc, resolve) = (0u32, 1u32, 2u32, 3u32);
        let mut p = PhaseBytes::new(4).unwrap();
        p.mark(8, lsra, BEGIN); // 8 bytes before: "no phase"
        p.mark(108, build, END);
        p.mark(158, alloc, END);
        p.mark(160, resolve, END);
        assert_eq!(p.running(), lsra as usize, "the parent runs on");
        p.mark(170, lsra, END);
        assert_eq!(p.running(), 4, "no phase runs after the parent");
        let got: Vec<_> = p.each_nonzero(200).collect();
        assert_eq!(got, [(0, 10), (1, 100), (2, 50), (3, 2), (4, 8 + 30)]);
    }

    /// An inlinee's phases begun and ended inside the inliner's running phase.
    #[test]
    fn a_phase_begun_inside_another_returns_to_it_at_its_end() {
        let (import, inline) = (0u32, 1u32);
        let mut p = PhaseBytes::new(2).unwrap();
        p.mark(0, import, BEGIN);
        p.mark(40, import, END);
        p.mark(40, inline, BEGIN);
        p.mark(50, import, BEGIN); // the inlinee's importer
        p.mark(80, import, END);
        assert_eq!(p.running(), inline as usize);
        p.mark(90, inline, END);
        assert_eq!(p.bytes(0, 90), 70);
        assert_eq!(p.bytes(1, 90), 20);
        assert_eq!(p.bytes(2, 95), 5);
    }

    /// A phase begun again while it runs further out: A, B inside A, A inside B, each ended in
    /// turn, unwinds through each, and after the last end "no phase" runs.
    #[test]
    fn a_phase_begun_inside_itself_further_out_unwinds_through_each() {
        let (a, b) = (0u32, 1u32);
        let mut p = PhaseBytes::new(2).unwrap();
        p.mark(0, a, BEGIN);
        p.mark(10, b, BEGIN); // 10 to A
        p.mark(30, a, BEGIN); // 20 to B
        p.mark(70, a, END); // 40 to A; B runs again
        assert_eq!(p.running(), b as usize);
        p.mark(75, b, END); // 5 to B; A runs again
        assert_eq!(p.running(), a as usize);
        p.mark(76, a, END); // 1 to A; no phase
        assert_eq!(p.running(), 2, "no phase after the last end");
        p.mark(80, a, JITARENA_MARK_SWITCH); // 4 to no phase
        assert_eq!(
            p.each_nonzero(80).collect::<Vec<_>>(),
            [(0, 51), (1, 25), (2, 4)]
        );
    }

    /// Nesting deeper than kept forgets the phases begun so far: their ends return to "no
    /// phase", and every byte is still counted once.
    #[test]
    fn nesting_past_its_room_forgets_the_phases_begun_so_far() {
        let mut p = PhaseBytes::new(2).unwrap();
        for i in 0..(NESTING as u64 + 3) {
            p.mark(i, (i % 2) as u32, BEGIN);
        }
        for i in 0..(NESTING as u64 + 3) {
            let running = p.running() as u32;
            p.mark(100 + i, running, END);
        }
        assert_eq!(p.running(), 2);
        assert_eq!(p.each_nonzero(200).map(|(_, b)| b).sum::<u64>(), 200);
    }

    #[test]
    fn switches_run_one_phase_alone_and_out_of_range_is_no_phase() {
        let mut p = PhaseBytes::new(2).unwrap();
        p.mark(16, 1, JITARENA_MARK_SWITCH);
        p.mark(24, 0, JITARENA_MARK_SWITCH);
        p.mark(40, 0, END);
        assert_eq!(p.running(), 2);
        p.mark(48, 7, BEGIN);
        p.mark(56, NONE, JITARENA_MARK_SWITCH);
        assert_eq!(p.bytes(0, 56), 16);
        assert_eq!(p.bytes(1, 56), 8);
        assert_eq!(p.bytes(2, 64), 16 + 8 + 8 + 8);
        p.clear();
        assert_eq!(p.each_nonzero(0).count(), 0);
    }
}
