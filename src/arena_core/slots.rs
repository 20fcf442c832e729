//! The kind slots of an arena's head, and the sums that totals and phases are taken from:
//! out of line (at phase switches, reads and the end of a method), so that the allocation path
//! adds to a kind's packed counter and nothing else.

use crate::sys::JITARENA_KIND_SLOTS;

/// Number of kind slots of the head: every `u8` is one.
pub(crate) const SLOTS: usize = JITARENA_KIND_SLOTS as usize;

/// The wrapping sum of counters (the counters themselves wrap, as the C path's do). With AVX2
/// (detected at run time) four at a time: a phase switch sums all 256 kind slots.
#[inline]
pub(crate) fn wrapping_sum(values: &[u64]) -> u64 {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above), the only requirement of
        // `wrapping_sum_avx2`.
        return unsafe { wrapping_sum_avx2(values) };
    }
    wrapping_sum_plain(values)
}

/// [`wrapping_sum_plain`] compiled for AVX2.
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[target_feature(enable = "avx2")]
unsafe fn wrapping_sum_avx2(values: &[u64]) -> u64 {
    wrapping_sum_plain(values)
}

/// Zeroes every kind slot. With AVX2 (detected at run time) as 64 stores of 32 bytes, half
/// the instructions of the C library's `memset`, whose loop stores four vectors a turn (and
/// which clears 2 KB and more byte by byte, with `rep stosb`); else through `memset`, in one
/// run of 255 slots below that size, then the last.
#[inline]
pub(crate) fn zero(slots: &mut [u64; SLOTS]) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above), the only requirement of
        // `zero_avx2`.
        unsafe { zero_avx2(slots) };
        return;
    }
    let (below_last, last) = slots.split_at_mut(SLOTS - 1);
    below_last.fill(0);
    last[0] = 0;
}

/// [`zero`] as 64 vector stores of four slots each, written out: a loop of them, or the
/// intrinsics' stores, the compiler turns back into a call to `memset`.
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[target_feature(enable = "avx2")]
unsafe fn zero_avx2(slots: &mut [u64; SLOTS]) {
    const _: () = assert!(SLOTS * 8 == 64 * 32, "64 stores of 32 bytes");
    // SAFETY: the stores write the 2,048 bytes of `slots` (256 slots of 8 bytes, exclusively
    // borrowed) and nothing else, unaligned (`vmovdqu`); the registers they change are
    // declared clobbered; the caller checked that the CPU has AVX2.
    unsafe {
        std::arch::asm!(
            "vpxor xmm0, xmm0, xmm0",
            ".set jitarena_slot_offset, 0",
            ".rept 64",
            "vmovdqu ymmword ptr [{slots} + jitarena_slot_offset], ymm0",
            ".set jitarena_slot_offset, jitarena_slot_offset + 32",
            ".endr",
            // No penalty for the SSE code after it.
            "vzeroupper",
            slots = in(reg) slots.as_mut_ptr(),
            // Every vector register the C ABI lets a call change: ymm0, and every upper half
            // (vzeroupper).
            clobber_abi("C"),
            options(nostack, preserves_flags),
        );
    }
}

/// A fold that the compiler vectorizes.
#[inline(always)]
fn wrapping_sum_plain(values: &[u64]) -> u64 {
    values.iter().fold(0u64, |sum, &v| sum.wrapping_add(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The slots with a word either side, to see that clearing them writes nothing else.
    #[repr(C)]
    struct Fenced {
        before: u64,
        slots: [u64; SLOTS],
        after: u64,
    }

    #[test]
    fn zero_clears_every_slot_and_nothing_beside_them() {
        let mut fenced = Fenced {
            before: u64::MAX,
            slots: std::array::from_fn(|i| (i as u64 + 1) << 32 | 8),
            after: u64::MAX,
        };
        zero(&mut fenced.slots);
        assert!(fenced.slots.iter().all(|&s| s == 0));
        assert_eq!((fenced.before, fenced.after), (u64::MAX, u64::MAX));
    }

    #[test]
    fn the_sum_wraps_as_the_counters_do() {
        let mut slots = [0u64; SLOTS];
        slots[0] = u64::MAX;
        slots[SLOTS - 1] = 2;
        assert_eq!(wrapping_sum(&slots), 1);
    }
}
