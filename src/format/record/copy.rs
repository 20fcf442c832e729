//! Copying version-2 records from log to log: a record's counters depend on nothing before it,
//! so a copy re-encodes only the head (schema and tier ids, context and name, which depend on
//! the file and the previous record) and takes the counters as they are. That is safe only when
//! the counters are ones the reader accepts and that the writer would write byte for byte
//! ([`copyable`]); anything else is decoded and encoded again.

use super::{Head, Prev, BY_PHASE, LAST_PHASE_DERIVED, RESERVED_4K, SCHEMA_FOLLOWS, TIER_SHIFT};
use crate::format::{put_varint, strict_at, Put};

/// The head bits a copy keeps: every bit below the schema and tier ids.
const COUNTER_BITS: u64 = SCHEMA_FOLLOWS - 1;

/// A cursor over the counters that accepts only minimal varints (those the writer writes).
struct Strict<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Strict<'a> {
    #[inline(always)]
    fn varint(&mut self) -> Option<u64> {
        let (value, at) = varint_at(self.bytes, self.at)?;
        self.at = at;
        Some(value)
    }

    /// A bitmap of `slots` bits whose bits past the last slot are clear.
    fn bitmap(&mut self, slots: usize) -> Option<&'a [u8]> {
        let bitmap = self
            .bytes
            .get(self.at..self.at.checked_add(slots.div_ceil(8))?)?;
        self.at += bitmap.len();
        match bitmap.last() {
            Some(&last) if slots % 8 != 0 && last >> (slots % 8) != 0 => None,
            _ => Some(bitmap),
        }
    }
}

/// The minimal varint at `at` in `bytes` and the position after it (see [`strict_at`]).
#[inline(always)]
fn varint_at(bytes: &[u8], at: usize) -> Option<(u64, usize)> {
    strict_at(bytes, at)
}

/// The 8 bytes at `at` as a little-endian word, if there are 8.
#[inline(always)]
fn word_at(bytes: &[u8], at: usize) -> Option<u64> {
    let word = bytes.get(at..at.wrapping_add(8))?;
    Some(u64::from_le_bytes(<[u8; 8]>::try_from(word).ok()?))
}

/// The high bit of every byte of a word.
const HIGH: u64 = 0x8080_8080_8080_8080;
/// The low 7 bits of every byte of a word.
const LOW: u64 = 0x7f7f_7f7f_7f7f_7f7f;

/// Bytes with their high bit in `lanes` kept, the others cleared.
#[inline(always)]
fn lanes(lanes: u64) -> u64 {
    (lanes >> 7) * 0xff
}

/// The sum of the 8 bytes of `x` (each below 0x80).
#[inline(always)]
fn byte_sum(x: u64) -> u64 {
    let pairs = (x & 0x00ff_00ff_00ff_00ff) + ((x >> 8) & 0x00ff_00ff_00ff_00ff);
    pairs.wrapping_mul(0x0001_0001_0001_0001) >> 48
}

/// The kinds of a record, checked 8 bytes at a time: the `2 * n` varints from `at` in `bytes`
/// (each kind's bytes, then its count). Returns the sum of the kinds' bytes and the position
/// after the last number. Where a number starts and which kind it belongs to follow from the
/// bytes below 0x80 (which end numbers) alone, so that no byte waits on the number before it
/// being decoded: each byte's 7 bits are summed by their place in their number (the sum of
/// every kind's first byte, of every second byte, ...), and the places are weighted at the end.
/// `None` when it cannot tell (a number of more than 4 bytes, fewer than 8 bytes left to read)
/// or a number is padded; the caller then reads the numbers one by one. No sum can wrap: the
/// numbers are below 2^28 and fewer than there are bytes.
#[inline(always)]
fn kinds_bulk(bytes: &[u8], at: usize, n: usize) -> Option<(u64, usize)> {
    let (mut left, mut word_start) = (2 * n, at);
    let mut sums = [0u64; 4];
    // The previous word's continuation bytes; whether an odd number of numbers ended before.
    let (mut prev_cont, mut odd_before) = (0u64, 0u64);
    while left > 0 {
        let w = word_at(bytes, word_start)?;
        let cont = w & HIGH;
        let ends = cont ^ HIGH;
        // One bit per byte: counted by a multiply (no `popcnt` on baseline x86-64).
        let found = ((ends >> 7).wrapping_mul(0x0101_0101_0101_0101) >> 56) as usize;
        // The bytes of this word that belong to the kinds: up to the last number's end.
        let mut inside = HIGH;
        let mut len = 8;
        if found >= left {
            let mut e = ends;
            for _ in 1..left {
                e &= e - 1;
            }
            let last = e.trailing_zeros(); // 8 * byte + 7
            len = (last as usize + 1) / 8;
            inside = HIGH >> (63 - last);
        }
        // Bytes after 1, 2, 3 and 4 continuation bytes of their number.
        let after1 = (cont << 8) | (prev_cont >> 56);
        let after2 = after1 & ((cont << 16) | (prev_cont >> 48));
        let after3 = after2 & ((cont << 24) | (prev_cont >> 40));
        let after4 = after3 & ((cont << 32) | (prev_cont >> 32));
        // A byte of 0 that ends a number of more than one byte pads it.
        let zero = !(((w & LOW) + LOW) | w) & HIGH;
        if (after4 | (zero & after1)) & inside != 0 {
            return None;
        }
        // Bytes after an odd number of ends in this word, then of numbers of odd index.
        let mut odd = ends << 8;
        odd ^= odd << 8;
        odd ^= odd << 16;
        odd ^= odd << 32;
        let even = !(odd ^ odd_before) & inside;
        let low = w & LOW;
        sums[0] += byte_sum(low & lanes(even & !after1));
        sums[1] += byte_sum(low & lanes(even & after1 & !after2));
        sums[2] += byte_sum(low & lanes(even & after2 & !after3));
        sums[3] += byte_sum(low & lanes(even & after3));
        if found & 1 == 1 {
            odd_before ^= HIGH;
        }
        prev_cont = cont;
        left -= found.min(left);
        word_start += len;
    }
    let total = sums[0] + (sums[1] << 7) + (sums[2] << 14) + (sums[3] << 21);
    Some((total, word_start))
}

/// [`kinds_bulk`] 16 bytes at a time with SSE2 (part of every x86-64 processor): each byte's
/// place in its number follows from the continuation bytes before it, shifted in from the
/// block before; the numbers' ends and parity are found on the blocks' 16-bit masks; the 7-bit
/// groups of each place are summed by `psadbw`. Same results; `None` also when fewer than 16
/// bytes are left to read from a block's start.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
fn kinds_sse2(bytes: &[u8], at: usize, n: usize) -> Option<(u64, usize)> {
    use std::arch::x86_64::{
        __m128i, _mm_add_epi64, _mm_and_si128, _mm_andnot_si128, _mm_cmpeq_epi8, _mm_cmplt_epi8,
        _mm_cvtsi128_si64, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_sad_epu8,
        _mm_set1_epi8, _mm_set_epi64x, _mm_setzero_si128, _mm_slli_si128, _mm_srli_si128,
    };
    let (mut left, mut block) = (2 * n, at);
    // SAFETY: SSE2 is enabled on every x86-64 target; registers only.
    let (zero, low) = unsafe { (_mm_setzero_si128(), _mm_set1_epi8(0x7f)) };
    let mut sums = [zero; 4];
    // The previous block's continuation bytes; whether an odd number of numbers ended before.
    let (mut prev_cont, mut odd_before) = (zero, 0u32);
    while left > 0 {
        let chunk = bytes.get(block..)?.first_chunk::<16>()?;
        // SAFETY: SSE2 is enabled on every x86-64 target; `chunk` holds the 16 bytes loaded
        // (`loadu` needs no alignment).
        let v = unsafe { _mm_loadu_si128(chunk.as_ptr().cast()) };
        // SAFETY: SSE2 is enabled on every x86-64 target; registers only.
        let (cont, bits) = unsafe {
            let cont = _mm_cmplt_epi8(v, zero);
            (cont, _mm_movemask_epi8(cont) as u32)
        };
        let ends = !bits & 0xffff;
        let found = ends.count_ones() as usize;
        // The bytes of this block that belong to the kinds: up to the last number's end.
        let (mut inside, mut len) = (0xffff_u32, 16);
        if found >= left {
            let mut e = ends;
            for _ in 1..left {
                e &= e - 1;
            }
            let last = e.trailing_zeros();
            inside = (2 << last) - 1;
            len = last as usize + 1;
        }
        // Bytes of numbers of even index: after an even number of ends (this block's, then
        // the blocks' before).
        let mut odd = ends << 1;
        odd ^= odd << 1;
        odd ^= odd << 2;
        odd ^= odd << 4;
        odd ^= odd << 8;
        let even = !(odd ^ odd_before) & inside;
        // SAFETY: SSE2 is enabled on every x86-64 target; registers only.
        let (bad, places) = unsafe {
            // Bytes after 1, 2, 3 and 4 continuation bytes of their number.
            let after1 = _mm_or_si128(_mm_slli_si128(cont, 1), _mm_srli_si128(prev_cont, 15));
            let c2 = _mm_or_si128(_mm_slli_si128(cont, 2), _mm_srli_si128(prev_cont, 14));
            let c3 = _mm_or_si128(_mm_slli_si128(cont, 3), _mm_srli_si128(prev_cont, 13));
            let c4 = _mm_or_si128(_mm_slli_si128(cont, 4), _mm_srli_si128(prev_cont, 12));
            let after2 = _mm_and_si128(after1, c2);
            let after3 = _mm_and_si128(after2, c3);
            let after4 = _mm_and_si128(after3, c4);
            // A byte of 0 that ends a number of more than one byte pads it.
            let padded = _mm_and_si128(_mm_cmpeq_epi8(v, zero), after1);
            let bad = _mm_movemask_epi8(_mm_or_si128(after4, padded)) as u32;
            // `even` as bytes: 0xff where set.
            const SPREAD: u64 = 0x0101_0101_0101_0101;
            const BITS: i64 = 0x8040_2010_0804_0201_u64 as i64;
            let select = _mm_set_epi64x(BITS, BITS);
            let spread = _mm_set_epi64x(
                (u64::from(even >> 8 & 0xff) * SPREAD) as i64,
                (u64::from(even & 0xff) * SPREAD) as i64,
            );
            let even = _mm_cmpeq_epi8(_mm_and_si128(spread, select), select);
            let groups = _mm_and_si128(v, low);
            let of_even = _mm_and_si128(groups, even);
            (
                bad,
                [
                    _mm_andnot_si128(after1, of_even),
                    _mm_and_si128(_mm_andnot_si128(after2, after1), of_even),
                    _mm_and_si128(_mm_andnot_si128(after3, after2), of_even),
                    _mm_and_si128(after3, of_even),
                ],
            )
        };
        if bad & inside != 0 {
            return None;
        }
        for (sum, place) in sums.iter_mut().zip(places) {
            // SAFETY: SSE2 is enabled on every x86-64 target; registers only.
            *sum = unsafe { _mm_add_epi64(*sum, _mm_sad_epu8(place, zero)) };
        }
        if found & 1 == 1 {
            odd_before ^= 0xffff;
        }
        prev_cont = cont;
        left -= found.min(left);
        block += len;
    }
    // Each place's sum, its two halves added: at most 127 per byte read, so none can wrap.
    let place = |s: __m128i| -> u64 {
        // SAFETY: SSE2 is enabled on every x86-64 target; registers only.
        unsafe { (_mm_cvtsi128_si64(s) as u64) + (_mm_cvtsi128_si64(_mm_srli_si128(s, 8)) as u64) }
    };
    let [s0, s1, s2, s3] = sums.map(place);
    Some((s0 + (s1 << 7) + (s2 << 14) + (s3 << 21), block))
}

/// The bits set in `bitmap`, in increasing order.
fn set_bits(bitmap: &[u8]) -> impl Iterator<Item = usize> + '_ {
    bitmap.iter().enumerate().flat_map(|(i, &b)| {
        let mut b = b;
        std::iter::from_fn(move || {
            (b != 0).then(|| {
                let bit = b.trailing_zeros() as usize;
                b &= b - 1;
                i * 8 + bit
            })
        })
    })
}

fn count_bits(bitmap: &[u8]) -> usize {
    let mut words = bitmap.chunks_exact(8);
    let whole: usize = words
        .by_ref()
        .map(|w| {
            u64::from_le_bytes(<[u8; 8]>::try_from(w).unwrap_or_default()).count_ones() as usize
        })
        .sum();
    whole
        + words
            .remainder()
            .iter()
            .map(|b| b.count_ones() as usize)
            .sum::<usize>()
}

/// Whether the counters of the version-2 record `payload` (whose head is `head`), laid out
/// against a schema of `kind_count` kinds and `phase_count` phases, can be copied as they are:
/// [`super::decode_counts`] accepts them, and [`super::encode`] of what it decodes writes the
/// same bytes and the same head bits. False for counters a reader refuses and for ones another
/// writer laid out otherwise (padded numbers, a derivable phase or reserved size written out,
/// an empty kinds-by-phase block): the caller decodes those, which reports the first and
/// re-encodes the second. `scratch` is reused for the checks of kinds by phase.
pub(crate) fn copyable(
    payload: &[u8],
    head: &Head,
    kind_count: usize,
    phase_count: usize,
    scratch: &mut Vec<u64>,
) -> bool {
    check(payload, head, kind_count, phase_count, scratch).is_some()
}

fn check(
    payload: &[u8],
    head: &Head,
    kind_count: usize,
    phase_count: usize,
    scratch: &mut Vec<u64>,
) -> Option<()> {
    let bits = head.head;
    let mut p = Strict {
        bytes: payload,
        at: head.body,
    };
    let reserved = p.varint()?;
    if bits & RESERVED_4K != 0 {
        reserved.checked_mul(4096)?;
    } else if reserved % 4096 == 0 {
        return None; // the writer writes such a size in 4 KiB units
    }
    p.varint()?; // pages
    p.varint()?; // largest allocation
    let kind_slots = kind_count.checked_add(1)?;
    let phase_slots = phase_count.checked_add(1)?;
    u32::try_from(kind_slots.max(phase_slots)).ok()?;
    let kinds = p.bitmap(kind_slots)?;
    let n_kinds = count_bits(kinds);
    let by_phase = bits & BY_PHASE != 0;
    // Kinds by phase are checked against each kind's bytes.
    scratch.clear();
    let total = if by_phase {
        kinds_sum::<true>(&mut p, n_kinds, scratch)?
    } else {
        kinds_sum::<false>(&mut p, n_kinds, scratch)?
    };
    p.varint()?; // used, relative to the kinds' bytes
    let phases = p.bitmap(phase_slots)?;
    let n_phases = count_bits(phases);
    let derived = bits & LAST_PHASE_DERIVED != 0;
    if derived && n_phases == 0 {
        return None;
    }
    let phase_at = scratch.len();
    let mut phase_sum = 0u64;
    for _ in 0..n_phases - usize::from(derived) {
        let bytes = p.varint()?;
        phase_sum = phase_sum.checked_add(bytes)?;
        if by_phase {
            scratch.push(bytes);
        }
    }
    if derived {
        let last = total.checked_sub(phase_sum)?;
        if by_phase {
            scratch.push(last);
        }
    } else if n_phases > 0 && phase_sum == total {
        return None; // the writer leaves the last phase's bytes out
    }
    if by_phase {
        check_by_phase(&mut p, scratch, phase_at)?;
    }
    (p.at == payload.len()).then_some(())
}

/// Reads `n` kinds' bytes and counts; returns the sum of their bytes, `None` if either sum
/// does not fit. With `KEEP`, pushes each kind's bytes to `bytes`.
#[inline(always)]
fn kinds_sum<const KEEP: bool>(p: &mut Strict<'_>, n: usize, bytes: &mut Vec<u64>) -> Option<u64> {
    if !KEEP {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        if let Some((total, end)) = kinds_sse2(p.bytes, p.at, n) {
            p.at = end;
            return Some(total);
        }
        if let Some((total, end)) = kinds_bulk(p.bytes, p.at, n) {
            p.at = end;
            return Some(total);
        }
    }
    bytes.clear();
    let (mut total, mut count_sum, mut overflow) = (0u64, 0u64, false);
    let (b, mut at) = (p.bytes, p.at);
    for _ in 0..n {
        let (kind_bytes, next) = varint_at(b, at)?;
        let (count, next) = varint_at(b, next)?;
        at = next;
        let (t, o1) = total.overflowing_add(kind_bytes);
        let (c, o2) = count_sum.overflowing_add(count);
        (total, count_sum, overflow) = (t, c, overflow | o1 | o2);
        if KEEP {
            bytes.push(kind_bytes);
        }
    }
    p.at = at;
    (!overflow).then_some(total)
}

/// Kinds by phase: per present phase, a bitmap over the present kinds and their bytes, adding
/// up to each phase's bytes and to each kind's; at least one entry (the writer writes the
/// block only when there is one). `sums` holds the kinds' bytes, then from `phase_at` the
/// phases'.
fn check_by_phase(p: &mut Strict<'_>, sums: &mut [u64], phase_at: usize) -> Option<()> {
    let (kinds, phases) = sums.split_at_mut(phase_at);
    let mut entries = 0;
    for &phase_bytes in phases.iter() {
        let bitmap = p.bitmap(kinds.len())?;
        let mut sum = 0u64;
        for k in set_bits(bitmap) {
            let bytes = p.varint()?;
            sum = sum.checked_add(bytes)?;
            // Each kind's bytes are counted down to 0.
            kinds[k] = kinds[k].checked_sub(bytes)?;
            entries += 1;
        }
        if sum != phase_bytes {
            return None;
        }
    }
    (entries > 0 && kinds.iter().all(|&k| k == 0)).then_some(())
}

/// Appends the head of a copied record to `p`: `head`'s counter bits, then the schema and tier
/// ids of the output, then the context and name relative to `prev` (the previous record of the
/// output), as [`super::encode`] writes them. The counters follow, copied.
pub(crate) fn put_head(
    p: &mut impl Put,
    head: &Head,
    (schema_id, tier_id): (u64, u64),
    prev: &Prev,
    name: &str,
    context: i64,
) {
    let mut bits = (tier_id << TIER_SHIFT) | (head.head & COUNTER_BITS);
    if schema_id != 0 {
        bits |= SCHEMA_FOLLOWS;
    }
    put_varint(p, bits);
    if schema_id != 0 {
        put_varint(p, schema_id);
    }
    let delta = context.wrapping_sub(prev.context.wrapping_add(1));
    put_varint(p, ((delta << 1) ^ (delta >> 63)) as u64);
    let mut shared = super::shared_prefix(name.as_bytes(), prev.name.as_bytes());
    while !name.is_char_boundary(shared) {
        shared -= 1;
    }
    put_varint(p, shared as u64);
    put_varint(p, (name.len() - shared) as u64);
    p.put(name.as_bytes().get(shared..).unwrap_or_default());
}

#[cfg(test)]
mod tests {
    use super::super::{decode_counts, encode, Fields, Scratch};
    use super::*;
    use crate::counters::MethodCounts;

    /// SplitMix64, for reproducible cases.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }

        /// A number of a random size: up to 2^bits - 1 for a random `bits` below `max_bits`.
        fn sized(&mut self, max_bits: u64) -> u64 {
            let bits = self.below(max_bits);
            self.next() & ((1u64 << bits) - 1)
        }
    }

    /// Random counts against a schema of `kinds` kinds and `phases` phases: any numbers, phases
    /// that add up to the kinds or not, kinds by phase (all in one phase) on some.
    fn counts(rng: &mut Rng, kinds: u32, phases: u32) -> MethodCounts {
        let mut c = MethodCounts::default();
        for slot in 0..=kinds {
            if rng.below(3) == 0 {
                c.kinds.push((slot, rng.sized(40), rng.sized(30)));
            }
        }
        let total: u64 = c.kinds.iter().map(|k| k.1).sum();
        let one_phase = rng.below(phases as u64 + 1) as u32;
        match rng.below(4) {
            0 => {}
            1 => c.phases.push((one_phase, total)),
            2 => {
                for slot in 0..=phases {
                    if rng.below(2) == 0 {
                        c.phases.push((slot, rng.sized(40)));
                    }
                }
            }
            _ => {
                c.phases.push((one_phase, total));
                c.phase_kind_bytes = c.kinds.iter().map(|k| (one_phase, k.0, k.1)).collect();
            }
        }
        c.used_bytes = rng.next();
        c.reserved_bytes = if rng.below(2) == 0 {
            4096 * rng.sized(40)
        } else {
            rng.sized(50)
        };
        c.page_count = rng.sized(20);
        c.largest_alloc = rng.sized(30);
        c.limit_hit = rng.below(5) == 0;
        c
    }

    /// The payload [`encode`] writes for `c`, and the head read back from it.
    fn encoded(c: &MethodCounts, kinds: u32, phases: u32) -> Vec<u8> {
        let mut p = crate::format::TryBuf::default();
        let (prev, mut scratch) = (Prev::default(), Scratch::default());
        let fields = Fields {
            schema_id: 0,
            tier_id: 1,
            kind_count: kinds as usize,
            phase_count: phases as usize,
            name: "m",
            context: 0,
        };
        encode(&mut p, &fields, &prev, c, &mut scratch).unwrap();
        p.as_slice().to_vec()
    }

    #[test]
    fn copyable_counters_are_exactly_those_the_writer_writes_again() {
        let mut rng = Rng(11);
        let (mut copied, mut refused) = (0, 0);
        for case in 0..4000 {
            let (kinds, phases) = if case % 4 == 0 {
                (rng.below(150) as u32, rng.below(80) as u32)
            } else {
                (rng.below(20) as u32, rng.below(8) as u32)
            };
            let (k, ph) = (kinds as usize, phases as usize);
            let c = counts(&mut rng, kinds, phases);
            let good = encoded(&c, kinds, phases);
            let head = Head::read(&good, &mut Prev::default()).unwrap();
            let mut sums = Vec::new();
            assert!(copyable(&good, &head, k, ph, &mut sums), "case {case}");
            // The same counters with bytes changed, inserted or removed: wherever the copy
            // check accepts them, the reader accepts them and the writer writes them again
            // byte for byte.
            for _ in 0..20 {
                let mut bad = good.clone();
                let at = head.body + rng.below((bad.len() - head.body) as u64) as usize;
                match rng.below(4) {
                    0 => bad.insert(at, rng.next() as u8),
                    1 => drop(bad.remove(at)),
                    2 => bad[at] ^= 1 << rng.below(8),
                    _ => bad[at] = [0, 0x80, 0x7f, 0xff][rng.below(4) as usize],
                }
                let Ok(head) = Head::read(&bad, &mut Prev::default()) else {
                    continue;
                };
                if !copyable(&bad, &head, k, ph, &mut sums) {
                    refused += 1;
                    continue;
                }
                copied += 1;
                let mut back = MethodCounts::default();
                decode_counts(&bad, &head, k, ph, &mut back, &mut sums)
                    .unwrap_or_else(|e| panic!("case {case}: copied, but the reader says {}", e.0));
                assert_eq!(encoded(&back, kinds, phases), bad, "case {case}");
            }
        }
        // Both outcomes were met often.
        assert!(copied > 10_000 && refused > 10_000, "{copied} {refused}");
    }

    /// Records written by other writers: the same counters, laid out otherwise.
    #[test]
    fn counters_laid_out_otherwise_are_not_copied() {
        let mut c = MethodCounts {
            kinds: vec![(0, 300, 2), (1, 5, 1)],
            phases: vec![(0, 305)],
            reserved_bytes: 8192,
            ..MethodCounts::default()
        };
        let good = encoded(&c, 1, 1);
        let head = Head::read(&good, &mut Prev::default()).unwrap();
        let check = |p: &[u8], head_bits: u64| {
            let mut h = Head::read(p, &mut Prev::default()).unwrap();
            h.head = head_bits;
            let mut back = MethodCounts::default();
            let decodes = decode_counts(p, &h, 1, 1, &mut back, &mut Vec::new()).is_ok();
            (decodes, copyable(p, &h, 1, 1, &mut Vec::new()))
        };
        assert_eq!(check(&good, head.head), (true, true));
        let b = head.body;
        // reserved 8192 written in bytes (bit 3 clear): 0x80 0x40.
        let mut bytes = good[..b].to_vec();
        bytes.extend_from_slice(&[0x80, 0x40]);
        bytes.extend_from_slice(&good[b + 1..]);
        assert_eq!(check(&bytes, head.head & !RESERVED_4K), (true, false));
        // The number of pages (0) padded to two bytes.
        let mut padded = good[..b + 1].to_vec();
        padded.extend_from_slice(&[0x80, 0x00]);
        padded.extend_from_slice(&good[b + 2..]);
        assert_eq!(check(&padded, head.head), (true, false));
        // The last phase written out although the phases add up to the kinds.
        let mut written_out = good.clone();
        written_out.extend_from_slice(&[0xb1, 0x02]); // 305
        assert_eq!(
            check(&written_out, head.head & !LAST_PHASE_DERIVED),
            (true, false)
        );
        // A block of kinds by phase with no entry (a kind and a phase of 0 bytes).
        c.kinds = vec![(0, 0, 1)];
        c.phases = vec![(0, 0)];
        let mut empty = encoded(&c, 1, 1);
        empty.push(0);
        assert_eq!(check(&empty, head.head | BY_PHASE), (true, false));
    }

    #[test]
    fn kinds_in_bulk_sum_as_one_by_one() {
        let mut rng = Rng(5);
        let mut bulk = 0;
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        let mut sse2 = 0;
        for case in 0..20_000 {
            let n = rng.below(40) as usize;
            let long = rng.below(4) == 0;
            let mut bytes = vec![rng.next() as u8; rng.below(3) as usize];
            let at = bytes.len();
            for _ in 0..2 * n {
                let bits = if long && rng.below(8) == 0 { 64 } else { 29 };
                let v = rng.sized(bits);
                crate::format::put_varint(&mut bytes, v);
            }
            // Damage: padded numbers, lost ends.
            if rng.below(4) == 0 && bytes.len() > at {
                let i = at + rng.below((bytes.len() - at) as u64) as usize;
                bytes[i] = [0, 0x80][rng.below(2) as usize];
            }
            bytes.extend((0..rng.below(12)).map(|_| rng.next() as u8));
            let mut p = Strict { bytes: &bytes, at };
            let one_by_one = kinds_sum::<true>(&mut p, n, &mut Vec::new()).map(|t| (t, p.at));
            if let Some(got) = kinds_bulk(&bytes, at, n) {
                bulk += 1;
                assert_eq!(Some(got), one_by_one, "case {case}: {bytes:?}");
            }
            #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
            if let Some(got) = kinds_sse2(&bytes, at, n) {
                sse2 += 1;
                assert_eq!(Some(got), one_by_one, "case {case} (SSE2): {bytes:?}");
            }
        }
        assert!(bulk > 10_000, "{bulk}");
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        assert!(sse2 > 5_000, "{sse2}");
    }
}
