//! Per-kind bytes and counts: the head's packed counters, which the inline path adds to, and
//! the 64-bit totals they are drained into.
//!
//! The inline path adds `PACKED_ONE + size` to its slot's `kind_packed`: the count in the high
//! 32 bits, the requested bytes in the low 32 bits. It only serves requests that fit the bump
//! window, and the sizes it adds between two slow-path calls sum to at most the window's length
//! (every size is at most its rounded size, and the rounded sizes fit the window). So the bytes
//! added to the low halves since the last drain are at most the sum of the windows opened since
//! then: [`KindTotals::window_opened`] keeps that sum and drains every slot before it could
//! reach 2^32, so a low half never carries into its count, whatever the page size. Readers add
//! the packed halves to the totals; they never need to drain.

use std::ops::Range;

use super::by_phase::wrapping_sum;
use super::raw::SLOTS;

/// One inline allocation in a packed counter: a count of 1 in the high half
/// (`JITARENA_PACKED_ONE` of the header).
pub(crate) const PACKED_ONE: u64 = 1 << 32;

/// The low half of a packed counter: bytes.
const LOW: u64 = PACKED_ONE - 1;

/// The most bytes the inline path may add to the low halves between two drains.
pub(crate) const DRAIN_AT: u64 = LOW;

/// The 64-bit totals behind the head's packed counters.
pub(crate) struct KindTotals {
    /// Bytes per slot: drained from the packed counters, plus the slow path's requests.
    bytes: [u64; SLOTS],
    /// Allocations per slot, likewise.
    count: [u64; SLOTS],
    /// The sum of `bytes` (so that the total reads one array, not two).
    bytes_sum: u64,
    /// The sum of the windows opened since the last drain: a bound on the low halves' bytes.
    undrained: u64,
    /// Drain before `undrained` would pass this ([`DRAIN_AT`]; smaller in tests).
    drain_at: u64,
    /// Drains so far (tests check that they exercised the drain).
    #[cfg(test)]
    pub(crate) drains: u64,
}

impl KindTotals {
    /// All zero.
    pub(crate) fn new() -> KindTotals {
        KindTotals {
            bytes: [0; SLOTS],
            count: [0; SLOTS],
            bytes_sum: 0,
            undrained: 0,
            drain_at: DRAIN_AT,
            #[cfg(test)]
            drains: 0,
        }
    }

    /// Drains more often (at most `bytes` between drains), to exercise the drain in tests.
    #[cfg(test)]
    pub(crate) fn set_drain_at(&mut self, bytes: u64) {
        self.drain_at = bytes.min(DRAIN_AT);
    }

    /// Counts one request served by the slow path (directly into the totals).
    #[inline]
    pub(crate) fn add(&mut self, slot: usize, size: u64) {
        self.bytes[slot] = self.bytes[slot].wrapping_add(size);
        self.count[slot] = self.count[slot].wrapping_add(1);
        self.bytes_sum = self.bytes_sum.wrapping_add(size);
    }

    /// The slow path is about to let the inline path hand out up to `window` more bytes:
    /// drains first if the low halves could otherwise reach 2^32.
    #[inline]
    pub(crate) fn window_opened(&mut self, packed: &mut [u64; SLOTS], window: usize) {
        let window = window as u64;
        if self.undrained.saturating_add(window) > self.drain_at {
            self.drain(packed);
        }
        self.undrained += window;
    }

    /// Moves every packed counter into the totals and zeroes it.
    #[cold]
    #[inline(never)]
    fn drain(&mut self, packed: &mut [u64; SLOTS]) {
        for ((p, b), c) in packed.iter_mut().zip(&mut self.bytes).zip(&mut self.count) {
            let v = std::mem::take(p);
            *b = b.wrapping_add(v & LOW);
            *c = c.wrapping_add(v >> 32);
            self.bytes_sum = self.bytes_sum.wrapping_add(v & LOW);
        }
        self.undrained = 0;
        #[cfg(test)]
        {
            self.drains += 1;
        }
    }

    /// Bytes of one slot.
    #[inline]
    pub(crate) fn bytes(&self, packed: &[u64; SLOTS], slot: usize) -> u64 {
        self.bytes[slot].wrapping_add(packed[slot] & LOW)
    }

    /// Allocations of one slot.
    #[inline]
    pub(crate) fn count(&self, packed: &[u64; SLOTS], slot: usize) -> u64 {
        self.count[slot].wrapping_add(packed[slot] >> 32)
    }

    /// Bytes of the slots in `range`.
    pub(crate) fn sum_bytes(&self, packed: &[u64; SLOTS], range: Range<usize>) -> u64 {
        wrapping_sum(&self.bytes[range.clone()]).wrapping_add(low_sum(&packed[range]))
    }

    /// Allocations of the slots in `range`.
    pub(crate) fn sum_counts(&self, packed: &[u64; SLOTS], range: Range<usize>) -> u64 {
        wrapping_sum(&self.count[range.clone()]).wrapping_add(high_sum(&packed[range]))
    }

    /// Bytes of every slot: one pass over the packed counters.
    #[inline]
    pub(crate) fn total_bytes(&self, packed: &[u64; SLOTS]) -> u64 {
        self.bytes_sum.wrapping_add(low_sum(packed))
    }

    /// Bytes per slot, totals and packed halves added (for the bytes per (phase, kind)).
    pub(crate) fn bytes_now(&self, packed: &[u64; SLOTS]) -> [u64; SLOTS] {
        let mut out = self.bytes;
        for (o, &p) in out.iter_mut().zip(packed) {
            *o = o.wrapping_add(p & LOW);
        }
        out
    }

    /// Whether any slot in `range` counted an allocation.
    pub(crate) fn any_used(&self, packed: &[u64; SLOTS], range: Range<usize>) -> bool {
        super::by_phase::any_nonzero(&self.count[range.clone()])
            || super::by_phase::any_nonzero(&packed[range])
    }

    /// Zeroes the slots in `range`, packed counters included.
    pub(crate) fn clear_slots(&mut self, packed: &mut [u64; SLOTS], range: Range<usize>) {
        self.bytes[range.clone()].fill(0);
        self.count[range.clone()].fill(0);
        packed[range].fill(0);
    }

    /// After every used slot was cleared: the sums start again.
    pub(crate) fn cleared(&mut self) {
        self.bytes_sum = 0;
        self.undrained = 0;
    }
}

/// The wrapping sum of the low halves (bytes) of packed counters; with AVX2 (detected at run
/// time) four at a time.
#[inline]
fn low_sum(values: &[u64]) -> u64 {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above), the only requirement.
        return unsafe { low_sum_avx2(values) };
    }
    low_sum_plain(values)
}

#[cfg(all(target_arch = "x86_64", not(miri)))]
#[target_feature(enable = "avx2")]
unsafe fn low_sum_avx2(values: &[u64]) -> u64 {
    low_sum_plain(values)
}

#[inline(always)]
fn low_sum_plain(values: &[u64]) -> u64 {
    values.iter().fold(0u64, |s, &v| s.wrapping_add(v & LOW))
}

/// The sum of the high halves (counts) of packed counters.
fn high_sum(values: &[u64]) -> u64 {
    values.iter().fold(0u64, |s, &v| s.wrapping_add(v >> 32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_past_the_bound_drain_every_slot_first() {
        let mut t = KindTotals::new();
        let mut packed = [0u64; SLOTS];
        let window = 1usize << 28; // a quarter of the largest page
        t.window_opened(&mut packed, window);
        for _ in 0..14 {
            // The inline path fills each window with one request of slot 3.
            packed[3] += PACKED_ONE + window as u64;
            t.window_opened(&mut packed, window);
        }
        // 15 windows opened, 14 filled: not drained yet.
        assert_eq!(packed[3], 14 * PACKED_ONE + 14 * (1 << 28));
        packed[3] += PACKED_ONE + window as u64;
        // 15 * 2^28 in the low half; a 16th window could bring it to 2^32: drained first.
        t.window_opened(&mut packed, window);
        assert_eq!(packed[3], 0);
        assert_eq!(t.bytes(&packed, 3), 15 << 28);
        assert_eq!(t.count(&packed, 3), 15);
        assert_eq!(t.total_bytes(&packed), 15 << 28);
        packed[3] += PACKED_ONE + 8;
        assert_eq!(t.bytes(&packed, 3), (15 << 28) + 8);
        assert_eq!(t.sum_counts(&packed, 0..SLOTS), 16);
        assert_eq!(t.sum_bytes(&packed, 3..4), (15 << 28) + 8);
    }
}
