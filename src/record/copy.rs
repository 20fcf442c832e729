//! Copying version-2 records from log to log: a record's counters depend on nothing before it,
//! so a copy re-encodes only the head (schema and tier ids, context and name, which depend on
//! the file and the previous record) and takes the counters as they are. That is safe only when
//! the counters are ones the reader accepts and that the writer would write byte for byte
//! ([`copyable`]); anything else is decoded and encoded again.

use super::{Head, Prev, BY_PHASE, LAST_PHASE_DERIVED, RESERVED_4K, SCHEMA_FOLLOWS, TIER_SHIFT};
use crate::format::put_varint;

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
        let first = *self.bytes.get(self.at)?;
        self.at += 1;
        if first < 0x80 {
            return Some(u64::from(first));
        }
        let mut value = u64::from(first & 0x7f);
        let mut shift = 7;
        loop {
            let byte = *self.bytes.get(self.at)?;
            self.at += 1;
            if shift == 63 && byte > 1 {
                return None;
            }
            value |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                // A last byte of 0 after others pads the number: not the writer's encoding.
                return (byte != 0).then_some(value);
            }
            shift += 7;
            if shift > 63 {
                return None;
            }
        }
    }

    /// A bitmap of `slots` bits whose bits past the last slot are clear.
    fn bitmap(&mut self, slots: usize) -> Option<&'a [u8]> {
        let bitmap = self.bytes.get(self.at..self.at.checked_add(slots.div_ceil(8))?)?;
        self.at += bitmap.len();
        match bitmap.last() {
            Some(&last) if slots % 8 != 0 && last >> (slots % 8) != 0 => None,
            _ => Some(bitmap),
        }
    }
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
    bitmap.iter().map(|b| b.count_ones() as usize).sum()
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
    let (mut total, mut count_sum) = (0u64, 0u64);
    for _ in 0..n_kinds {
        let (bytes, count) = (p.varint()?, p.varint()?);
        total = total.checked_add(bytes)?;
        count_sum = count_sum.checked_add(count)?;
        if by_phase {
            scratch.push(bytes);
        }
    }
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
    p: &mut Vec<u8>,
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
    p.extend_from_slice(&name.as_bytes()[shared..]);
}
