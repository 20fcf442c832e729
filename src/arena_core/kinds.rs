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
//! the packed halves to the totals; they never need to drain. The low halves of *all* slots
//! together stay below 2^32 too, so the wrapping sum of any range of packed counters holds the
//! range's bytes in its low half and its count in its high half: one pass reads both.

use std::ops::{Range, RangeTo};

use super::slots::{wrapping_sum, SLOTS};

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
    /// The configured kinds: slots from here on are the invalid bucket's.
    named: usize,
    /// Whether `bytes` or `count` may be non-zero in a slot from `named` to 254 (so that a
    /// reset and the invalid bucket's readers look only at the packed counters there
    /// otherwise).
    unnamed_totals: bool,
    /// Drains so far (tests check that they exercised the drain).
    #[cfg(test)]
    pub(crate) drains: u64,
}

impl KindTotals {
    /// All zero, for `named` configured kinds.
    pub(crate) fn new(named: usize) -> KindTotals {
        KindTotals {
            bytes: [0; SLOTS],
            count: [0; SLOTS],
            bytes_sum: 0,
            undrained: 0,
            drain_at: DRAIN_AT,
            named,
            unnamed_totals: false,
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
        let at = slot % SLOTS; // `slot < SLOTS` already: the remainder proves it to the compiler
        self.bytes[at] = self.bytes[at].wrapping_add(size);
        self.count[at] = self.count[at].wrapping_add(1);
        self.bytes_sum = self.bytes_sum.wrapping_add(size);
        self.unnamed_totals |= slot >= self.named && slot < SLOTS - 1;
    }

    /// The slow path is about to let the inline path hand out up to `window` more bytes:
    /// drains first if the low halves could otherwise reach 2^32.
    #[inline]
    pub(crate) fn window_opened(&mut self, packed: &mut [u64; SLOTS], window: usize) {
        let window = window as u64;
        // The bound holds: the inline path added at most the windows opened since the drain
        // (a window opened without this call would break it, and the drain's safety with it).
        debug_assert!(packed.iter().map(|p| p & LOW).sum::<u64>() <= self.undrained);
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
        self.unnamed_totals = true;
        #[cfg(test)]
        {
            self.drains += 1;
        }
    }

    /// Bytes of one slot.
    #[inline]
    pub(crate) fn bytes(&self, packed: &[u64; SLOTS], slot: usize) -> u64 {
        let at = slot % SLOTS; // `slot < SLOTS` already: the remainder proves it to the compiler
        self.bytes[at].wrapping_add(packed[at] & LOW)
    }

    /// Allocations of one slot.
    #[inline]
    pub(crate) fn count(&self, packed: &[u64; SLOTS], slot: usize) -> u64 {
        let at = slot % SLOTS;
        self.count[at].wrapping_add(packed[at] >> 32)
    }

    /// The invalid bucket's (bytes, count): every slot from `named` on. One pass over the
    /// packed counters, and over the totals only when an unnamed slot below 255 has any.
    pub(crate) fn invalid(&self, packed: &[u64; SLOTS]) -> (u64, u64) {
        let both = wrapping_sum(packed.get(self.named..).unwrap_or_default());
        let (bytes, count) = if self.unnamed_totals {
            (
                wrapping_sum(self.bytes.get(self.named..).unwrap_or_default()),
                wrapping_sum(self.count.get(self.named..).unwrap_or_default()),
            )
        } else {
            (self.bytes[SLOTS - 1], self.count[SLOTS - 1])
        };
        (
            bytes.wrapping_add(both & LOW),
            count.wrapping_add(both >> 32),
        )
    }

    /// Allocations of the slots in `range`.
    pub(crate) fn sum_counts(&self, packed: &[u64; SLOTS], range: Range<usize>) -> u64 {
        let count = self.count.get(range.clone()).unwrap_or_default();
        wrapping_sum(count).wrapping_add(wrapping_sum(packed.get(range).unwrap_or_default()) >> 32)
    }

    /// Bytes of every slot: one pass over the packed counters.
    #[inline]
    pub(crate) fn total_bytes(&self, packed: &[u64; SLOTS]) -> u64 {
        self.bytes_sum.wrapping_add(wrapping_sum(packed) & LOW)
    }

    /// The slots' bytes, read with `packed` (for the bytes per (phase, kind)).
    pub(crate) fn slots<'a>(&'a self, packed: &'a [u64; SLOTS]) -> Slots<'a> {
        Slots {
            bytes: &self.bytes,
            packed,
        }
    }

    /// Whether any unnamed slot below 255 (`named..SLOTS - 1`, which only a caller's invalid
    /// kind reaches) counted an allocation: the slow path notes its own, and an inline one
    /// leaves its slot's packed counter non-zero until a drain (which the flag notes too).
    pub(crate) fn unnamed_used(&self, packed: &[u64; SLOTS]) -> bool {
        self.unnamed_totals
            || super::slots::any_nonzero(packed.get(self.named..SLOTS - 1).unwrap_or_default())
    }

    /// Zeroes the slots in `range`, packed counters included.
    pub(crate) fn clear_slots(&mut self, packed: &mut [u64; SLOTS], range: Range<usize>) {
        for part in [&mut self.bytes, &mut self.count, packed] {
            if let Some(slots) = part.get_mut(range.clone()) {
                slots.fill(0);
            }
        }
    }

    /// After every used slot was cleared: the sums start again.
    pub(crate) fn cleared(&mut self) {
        self.bytes_sum = 0;
        self.undrained = 0;
        self.unnamed_totals = false;
    }
}

/// One kind slot range's totals and packed counters, read together.
#[derive(Clone, Copy)]
pub(crate) struct Slots<'a> {
    bytes: &'a [u64; SLOTS],
    packed: &'a [u64; SLOTS],
}

impl Slots<'_> {
    /// Bytes of one slot.
    #[inline]
    pub(crate) fn bytes(&self, slot: usize) -> u64 {
        let at = slot % SLOTS;
        self.bytes[at].wrapping_add(self.packed[at] & LOW)
    }

    /// Bytes of slots `0..n`, in order.
    pub(crate) fn iter_bytes(&self, n: usize) -> impl Iterator<Item = u64> + '_ {
        let n = n.min(SLOTS);
        let (bytes, packed) = (self.bytes.get(..n), self.packed.get(..n));
        bytes
            .unwrap_or_default()
            .iter()
            .zip(packed.unwrap_or_default())
            .map(|(&b, &p)| b.wrapping_add(p & LOW))
    }

    /// Bytes of the slots in `range`.
    pub(crate) fn sum_bytes(&self, range: RangeTo<usize>) -> u64 {
        let bytes = self.bytes.get(range).unwrap_or_default();
        wrapping_sum(bytes)
            .wrapping_add(wrapping_sum(self.packed.get(range).unwrap_or_default()) & LOW)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_past_the_bound_drain_every_slot_first() {
        let mut t = KindTotals::new(4);
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
        packed[200] += PACKED_ONE + 16;
        assert_eq!(t.invalid(&packed), (16, 1));
    }
}
