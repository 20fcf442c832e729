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

/// The 64-bit totals of the slots, once a drain or a request too large for a low half needed
/// them.
pub(crate) struct Totals {
    /// Bytes per slot.
    bytes: [u64; SLOTS],
    /// Allocations per slot.
    count: [u64; SLOTS],
}

/// The 64-bit totals behind the head's packed counters.
pub(crate) struct KindTotals {
    /// Drained from the packed counters, plus requests too large for a low half; made at the
    /// first drain (a method that hands out 4 GiB) and kept until the arena is dropped, so that
    /// creating an arena and a method that hands out less pay nothing for them.
    totals: Option<Box<Totals>>,
    /// Whether `totals` may hold a non-zero slot.
    dirty: bool,
    /// The sum of the totals' bytes (so that the total reads one array, not two).
    bytes_sum: u64,
    /// A bound on the low halves' bytes: the windows opened and the slow path's requests since
    /// the last drain.
    undrained: u64,
    /// Drain before `undrained` would pass this ([`DRAIN_AT`]; smaller in tests).
    drain_at: u64,
    /// The configured kinds: slots from here on are the invalid bucket's.
    named: usize,
    /// Drains so far (tests check that they exercised the drain).
    #[cfg(test)]
    pub(crate) drains: u64,
}

/// The totals could not be made: memory ran out.
#[derive(Debug)]
pub(crate) struct NoMemory;

impl KindTotals {
    /// All zero, for `named` configured kinds.
    pub(crate) fn new(named: usize) -> KindTotals {
        KindTotals {
            totals: None,
            dirty: false,
            bytes_sum: 0,
            undrained: 0,
            drain_at: DRAIN_AT,
            named,
            #[cfg(test)]
            drains: 0,
        }
    }

    /// Drains more often (at most `bytes` between drains), to exercise the drain in tests.
    #[cfg(test)]
    pub(crate) fn set_drain_at(&mut self, bytes: u64) {
        self.drain_at = bytes.min(DRAIN_AT);
    }

    /// The totals' bytes, if made (none: every slot zero).
    fn total_bytes_of(&self) -> Option<&[u64; SLOTS]> {
        self.totals.as_deref().map(|t| &t.bytes)
    }

    /// The totals' counts, if made.
    fn total_counts_of(&self) -> Option<&[u64; SLOTS]> {
        self.totals.as_deref().map(|t| &t.count)
    }

    /// The totals, made on first use.
    fn totals_mut(&mut self) -> Result<&mut Totals, NoMemory> {
        if self.totals.is_none() {
            // SAFETY: `Totals` is two arrays of integers, valid as zero bytes, of 4 KB.
            let totals = unsafe { crate::fallible::boxed_zeroed::<Totals>() };
            self.totals = Some(totals.ok_or(NoMemory)?);
        }
        self.dirty = true;
        self.totals.as_deref_mut().ok_or(NoMemory)
    }

    /// Makes room for the slow path to let `bytes` more reach the low halves (a window and a
    /// request): drains first when they could carry. `open` is what the inline path may still
    /// add from the window open now, which a drain leaves open. Fails, with nothing changed,
    /// only when the totals cannot be made.
    #[inline]
    pub(crate) fn make_room(
        &mut self,
        packed: &mut [u64; SLOTS],
        bytes: u64,
        open: u64,
    ) -> Result<(), NoMemory> {
        debug_assert!(packed.iter().map(|p| p & LOW).sum::<u64>() <= self.undrained);
        if self.undrained.saturating_add(bytes) > self.drain_at {
            self.drain(packed)?;
            self.undrained = open;
        }
        Ok(())
    }

    /// Counts one request served by the slow path, after [`KindTotals::make_room`] for it: in
    /// the packed counter when it fits a low half, else in the totals.
    #[inline]
    pub(crate) fn add(
        &mut self,
        packed: &mut [u64; SLOTS],
        slot: usize,
        size: u64,
    ) -> Result<(), NoMemory> {
        let at = slot % SLOTS; // `slot < SLOTS` already: the remainder proves it to the compiler
        if self.undrained.saturating_add(size) <= self.drain_at {
            self.undrained += size;
            packed[at] = packed[at].wrapping_add(PACKED_ONE + size);
            return Ok(());
        }
        let totals = self.totals_mut()?;
        totals.bytes[at] = totals.bytes[at].wrapping_add(size);
        totals.count[at] = totals.count[at].wrapping_add(1);
        self.bytes_sum = self.bytes_sum.wrapping_add(size);
        Ok(())
    }

    /// Notes a bump window of `window` bytes opened for the inline path (after
    /// [`KindTotals::make_room`] for it).
    #[inline]
    pub(crate) fn window_opened(&mut self, window: usize) {
        self.undrained += window as u64;
    }

    #[cold]
    #[inline(never)]
    fn drain(&mut self, packed: &mut [u64; SLOTS]) -> Result<(), NoMemory> {
        let totals = self.totals_mut()?;
        let mut drained = 0u64;
        for ((p, b), c) in packed
            .iter_mut()
            .zip(&mut totals.bytes)
            .zip(&mut totals.count)
        {
            let v = std::mem::take(p);
            *b = b.wrapping_add(v & LOW);
            *c = c.wrapping_add(v >> 32);
            drained = drained.wrapping_add(v & LOW);
        }
        self.bytes_sum = self.bytes_sum.wrapping_add(drained);
        self.undrained = 0;
        #[cfg(test)]
        {
            self.drains += 1;
        }
        Ok(())
    }

    /// Bytes of one slot.
    #[inline]
    pub(crate) fn bytes(&self, packed: &[u64; SLOTS], slot: usize) -> u64 {
        let at = slot % SLOTS; // `slot < SLOTS` already: the remainder proves it to the compiler
        let total = self.total_bytes_of().map_or(0, |t| t[at]);
        total.wrapping_add(packed[at] & LOW)
    }

    /// Allocations of one slot.
    #[inline]
    pub(crate) fn count(&self, packed: &[u64; SLOTS], slot: usize) -> u64 {
        let at = slot % SLOTS;
        let total = self.total_counts_of().map_or(0, |t| t[at]);
        total.wrapping_add(packed[at] >> 32)
    }

    /// The invalid bucket's (bytes, count): every slot from the configured kinds on.
    pub(crate) fn invalid(&self, packed: &[u64; SLOTS]) -> (u64, u64) {
        let both = wrapping_sum(packed.get(self.named..).unwrap_or_default());
        let (bytes, count) = match self.totals.as_deref() {
            Some(t) if self.dirty => (
                wrapping_sum(t.bytes.get(self.named..).unwrap_or_default()),
                wrapping_sum(t.count.get(self.named..).unwrap_or_default()),
            ),
            _ => (0, 0),
        };
        (
            bytes.wrapping_add(both & LOW),
            count.wrapping_add(both >> 32),
        )
    }

    /// Allocations of a range of slots.
    pub(crate) fn sum_counts(&self, packed: &[u64; SLOTS], range: Range<usize>) -> u64 {
        let count = self.total_counts_of().and_then(|t| t.get(range.clone()));
        wrapping_sum(count.unwrap_or_default())
            .wrapping_add(wrapping_sum(packed.get(range).unwrap_or_default()) >> 32)
    }

    /// Bytes of every slot.
    #[inline]
    pub(crate) fn total_bytes(&self, packed: &[u64; SLOTS]) -> u64 {
        self.bytes_sum.wrapping_add(wrapping_sum(packed) & LOW)
    }

    /// The slots' totals and packed counters, to read together.
    pub(crate) fn slots<'a>(&'a self, packed: &'a [u64; SLOTS]) -> Slots<'a> {
        Slots {
            bytes: self.total_bytes_of(),
            packed,
        }
    }

    /// Empties every slot for the next method, and the totals only when a drain or a large
    /// request filled them. Every slot, since the inline path counts any slot value a caller
    /// passes (those past the configured kinds in the invalid-kind bucket), exactly per method.
    pub(crate) fn clear(&mut self, packed: &mut [u64; SLOTS]) {
        super::slots::zero(packed);
        if std::mem::take(&mut self.dirty) {
            if let Some(totals) = self.totals.as_deref_mut() {
                totals.bytes.fill(0);
                totals.count.fill(0);
            }
        }
        self.bytes_sum = 0;
        self.undrained = 0;
    }
}

/// One kind slot range's totals and packed counters, read together.
#[derive(Clone, Copy)]
pub(crate) struct Slots<'a> {
    /// The totals' bytes, if made.
    bytes: Option<&'a [u64; SLOTS]>,
    packed: &'a [u64; SLOTS],
}

impl Slots<'_> {
    /// Bytes of one slot.
    #[inline]
    pub(crate) fn bytes(&self, slot: usize) -> u64 {
        let at = slot % SLOTS;
        let total = self.bytes.map_or(0, |b| b[at]);
        total.wrapping_add(self.packed[at] & LOW)
    }

    /// Bytes of slots `0..n`, in order.
    pub(crate) fn iter_bytes(&self, n: usize) -> impl Iterator<Item = u64> + '_ {
        let n = n.min(SLOTS);
        let packed = self.packed.get(..n).unwrap_or_default();
        let bytes = self.bytes;
        packed.iter().enumerate().map(move |(i, &p)| {
            let total = bytes.and_then(|b| b.get(i)).copied().unwrap_or(0);
            total.wrapping_add(p & LOW)
        })
    }

    /// Bytes of the slots in `range`.
    pub(crate) fn sum_bytes(&self, range: RangeTo<usize>) -> u64 {
        let bytes = self.bytes.and_then(|b| b.get(range));
        wrapping_sum(bytes.unwrap_or_default())
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
        t.make_room(&mut packed, window as u64, 0).unwrap();
        t.window_opened(window);
        for _ in 0..14 {
            packed[3] += PACKED_ONE + window as u64;
            t.make_room(&mut packed, window as u64, 0).unwrap();
            t.window_opened(window);
        }
        assert_eq!(packed[3], 14 * PACKED_ONE + 14 * (1 << 28));
        assert!(t.totals.is_none(), "no drain, no totals");
        packed[3] += PACKED_ONE + window as u64;
        t.make_room(&mut packed, window as u64, 0).unwrap();
        t.window_opened(window);
        assert_eq!(packed[3], 0);
        assert_eq!(t.bytes(&packed, 3), 15 << 28);
        assert_eq!(t.count(&packed, 3), 15);
        assert_eq!(t.total_bytes(&packed), 15 << 28);
        packed[3] += PACKED_ONE + 8;
        assert_eq!(t.bytes(&packed, 3), (15 << 28) + 8);
        assert_eq!(t.sum_counts(&packed, 0..SLOTS), 16);
        packed[200] += PACKED_ONE + 16;
        assert_eq!(t.invalid(&packed), (16, 1));
        t.clear(&mut packed);
        assert_eq!(
            (t.total_bytes(&packed), t.sum_counts(&packed, 0..SLOTS)),
            (0, 0)
        );
        assert_eq!(t.invalid(&packed), (0, 0));
    }

    #[test]
    fn the_slow_paths_requests_count_in_the_packed_counters_until_they_could_carry() {
        let mut t = KindTotals::new(2);
        let mut packed = [0u64; SLOTS];
        t.add(&mut packed, 1, 100).unwrap();
        assert_eq!(packed[1], PACKED_ONE + 100);
        t.add(&mut packed, 0, DRAIN_AT).unwrap(); // would carry: to the totals
        assert_eq!(t.bytes(&packed, 0), DRAIN_AT);
        assert_eq!(t.bytes(&packed, 1), 100);
        assert_eq!(t.total_bytes(&packed), DRAIN_AT + 100);
        assert_eq!(t.sum_counts(&packed, 0..2), 2);
    }
}
