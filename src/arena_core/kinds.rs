//! Per-kind bytes and counts: the head's packed counters, which the inline path adds to, and
//! the 64-bit totals they are drained into.
//!
//! The inline path adds `PACKED_ONE + size` to its slot's `kind_packed`, where `PACKED_ONE` is
//! -2^31 (modulo 2^64, an addend of a 32-bit immediate): a counter holds its bytes less 2^31
//! per allocation, so while the bytes stay below 2^31 they are its low 31 bits ([`bytes_of`]),
//! and the count is what the rest takes away ([`count_of`]). The inline path only serves
//! requests that fit the bump window, and the sizes it adds between two slow-path calls sum to
//! at most the window's length (every size is at most its rounded size, and the rounded sizes
//! fit the window). So the bytes added since the last drain are at most the sum of the windows
//! opened since then: [`KindTotals::window_opened`] keeps that sum and drains every slot before
//! it could reach 2^31, so bytes and count never mix, whatever the page size. Readers add the
//! packed counters' bytes and counts to the totals; they never need to drain. The bytes of *all*
//! slots together stay below 2^31 too, so the wrapping sum of any range of packed counters is
//! itself a packed counter of the range: one pass reads both.

use std::ops::{Range, RangeTo};

use super::slots::{wrapping_sum, SLOTS};

/// How far the count sits in a packed counter: each allocation takes 2^31 away.
const COUNT_SHIFT: u32 = 31;

/// One inline allocation in a packed counter: -2^31 (`JITARENA_PACKED_ONE` of the header).
pub(crate) const PACKED_ONE: u64 = 0u64.wrapping_sub(1 << COUNT_SHIFT);

/// The bytes of a packed counter: its low 31 bits.
const LOW: u64 = (1 << COUNT_SHIFT) - 1;

/// The most bytes the packed counters may hold together between two drains.
pub(crate) const DRAIN_AT: u64 = LOW;

/// The bytes of a packed counter (or of a wrapping sum of them).
#[inline]
fn bytes_of(packed: u64) -> u64 {
    packed & LOW
}

/// The allocations of a packed counter (or of a wrapping sum of them): what its 2^31 per
/// allocation took away from its bytes.
#[inline]
fn count_of(packed: u64) -> u64 {
    bytes_of(packed).wrapping_sub(packed) >> COUNT_SHIFT
}

/// The 64-bit totals of the slots, once a drain or a request too large for a packed counter needed
/// them.
pub(crate) struct Totals {
    /// Bytes per slot.
    bytes: [u64; SLOTS],
    /// Allocations per slot.
    count: [u64; SLOTS],
}

/// The 64-bit totals behind the head's packed counters.
pub(crate) struct KindTotals {
    /// Drained from the packed counters, plus requests too large for them; made at the
    /// first drain (a method that hands out 2 GiB) and kept until the arena is dropped, so that
    /// creating an arena and a method that hands out less pay nothing for them.
    totals: Option<Box<Totals>>,
    /// Whether `totals` may hold a non-zero slot.
    dirty: bool,
    /// The sum of the totals' bytes (so that the total reads one array, not two).
    bytes_sum: u64,
    /// A bound on the packed counters' bytes: the windows opened and the slow path's requests since
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

    /// Makes room for the slow path to let `bytes` more reach the packed counters (a window and a
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
        debug_assert!(packed.iter().map(|&p| bytes_of(p)).sum::<u64>() <= self.undrained);
        if self.undrained.saturating_add(bytes) > self.drain_at {
            self.drain(packed)?;
            self.undrained = open;
        }
        Ok(())
    }

    /// Counts one request served by the slow path, after [`KindTotals::make_room`] for it: in
    /// the packed counter when it fits below 2^31 with the others, else in the totals.
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
            *b = b.wrapping_add(bytes_of(v));
            *c = c.wrapping_add(count_of(v));
            drained = drained.wrapping_add(bytes_of(v));
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
        total.wrapping_add(bytes_of(packed[at]))
    }

    /// Allocations of one slot.
    #[inline]
    pub(crate) fn count(&self, packed: &[u64; SLOTS], slot: usize) -> u64 {
        let at = slot % SLOTS;
        let total = self.total_counts_of().map_or(0, |t| t[at]);
        total.wrapping_add(count_of(packed[at]))
    }

    /// Calls `f` with the slot, bytes and count of each of slots `0..n`, in order: one pass over
    /// the packed counters, and over the totals too only once a drain or a large request made
    /// them.
    #[inline]
    pub(crate) fn for_each(
        &self,
        packed: &[u64; SLOTS],
        n: usize,
        mut f: impl FnMut(usize, u64, u64),
    ) {
        let packed = packed.get(..n).unwrap_or(packed);
        match self.totals.as_deref() {
            Some(t) if self.dirty => {
                let totals = t.bytes.iter().zip(&t.count);
                for (slot, (&p, (&b, &c))) in packed.iter().zip(totals).enumerate() {
                    f(
                        slot,
                        b.wrapping_add(bytes_of(p)),
                        c.wrapping_add(count_of(p)),
                    );
                }
            }
            _ => {
                for (slot, &p) in packed.iter().enumerate() {
                    f(slot, bytes_of(p), count_of(p));
                }
            }
        }
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
            bytes.wrapping_add(bytes_of(both)),
            count.wrapping_add(count_of(both)),
        )
    }

    /// Allocations of a range of slots.
    pub(crate) fn sum_counts(&self, packed: &[u64; SLOTS], range: Range<usize>) -> u64 {
        let count = self.total_counts_of().and_then(|t| t.get(range.clone()));
        wrapping_sum(count.unwrap_or_default()).wrapping_add(count_of(wrapping_sum(
            packed.get(range).unwrap_or_default(),
        )))
    }

    /// Bytes of every slot.
    #[inline]
    pub(crate) fn total_bytes(&self, packed: &[u64; SLOTS]) -> u64 {
        self.bytes_sum.wrapping_add(bytes_of(wrapping_sum(packed)))
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
        total.wrapping_add(bytes_of(self.packed[at]))
    }

    /// Bytes of slots `0..n`, in order.
    pub(crate) fn iter_bytes(&self, n: usize) -> impl Iterator<Item = u64> + '_ {
        let n = n.min(SLOTS);
        let packed = self.packed.get(..n).unwrap_or_default();
        let bytes = self.bytes;
        packed.iter().enumerate().map(move |(i, &p)| {
            let total = bytes.and_then(|b| b.get(i)).copied().unwrap_or(0);
            total.wrapping_add(bytes_of(p))
        })
    }

    /// Bytes of the slots in `range`.
    pub(crate) fn sum_bytes(&self, range: RangeTo<usize>) -> u64 {
        let bytes = self.bytes.and_then(|b| b.get(range));
        wrapping_sum(bytes.unwrap_or_default()).wrapping_add(bytes_of(wrapping_sum(
            self.packed.get(range).unwrap_or_default(),
        )))
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
        let add = |p: &mut u64, size: u64| *p = p.wrapping_add(PACKED_ONE + size);
        t.make_room(&mut packed, window as u64, 0).unwrap();
        t.window_opened(window);
        for _ in 0..6 {
            add(&mut packed[3], window as u64);
            t.make_room(&mut packed, window as u64, 0).unwrap();
            t.window_opened(window);
        }
        assert_eq!(packed[3], 6u64.wrapping_mul(PACKED_ONE) + 6 * (1 << 28));
        assert_eq!((t.bytes(&packed, 3), t.count(&packed, 3)), (6 << 28, 6));
        assert!(t.totals.is_none(), "no drain, no totals");
        add(&mut packed[3], window as u64);
        t.make_room(&mut packed, window as u64, 0).unwrap();
        t.window_opened(window);
        assert_eq!(packed[3], 0);
        assert_eq!(t.bytes(&packed, 3), 7 << 28);
        assert_eq!(t.count(&packed, 3), 7);
        assert_eq!(t.total_bytes(&packed), 7 << 28);
        add(&mut packed[3], 8);
        assert_eq!(t.bytes(&packed, 3), (7 << 28) + 8);
        assert_eq!(t.sum_counts(&packed, 0..SLOTS), 8);
        add(&mut packed[200], 16);
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
        assert_eq!((t.bytes(&packed, 1), t.count(&packed, 1)), (100, 1));
        t.add(&mut packed, 0, DRAIN_AT).unwrap(); // would carry: to the totals
        assert_eq!(t.bytes(&packed, 0), DRAIN_AT);
        assert_eq!(t.bytes(&packed, 1), 100);
        assert_eq!(t.total_bytes(&packed), DRAIN_AT + 100);
        assert_eq!(t.sum_counts(&packed, 0..2), 2);
    }
}
