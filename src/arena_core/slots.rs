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

/// A fold that the compiler vectorizes.
#[inline(always)]
fn wrapping_sum_plain(values: &[u64]) -> u64 {
    values.iter().fold(0u64, |sum, &v| sum.wrapping_add(v))
}
