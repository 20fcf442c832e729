//! The version-2 method record of a stats log: kinds and phases as bitmaps over the schema's
//! slots, what is derivable left out, and the method's context and name relative to the
//! previous record's. Layout: `docs/formats.md` ("Method counters, version 2").
//!
//! The context and name depend on the previous record of the file: the writer advances its
//! [`Prev`] only once a record's frame reached the output (as its dictionary), and a reader
//! advances its own on every method frame, decoded or not ([`Head::read`]).

use std::io;

use crate::counters::MethodCounts;
use crate::format::varint::VarintOut;
use crate::format::{
    no_memory, put_varint, varint, varint_at, Malformed, PairReader, Payload, Portable, Put,
    TryBuf, MAX_VARINT,
};

pub(crate) use crate::format::spec::{
    BY_PHASE, LAST_PHASE_DERIVED, LIMIT_HIT, RESERVED_4K, SCHEMA_FOLLOWS, TIER_SHIFT,
};

/// What a record's context and name are relative to: the previous record of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Prev {
    /// The previous record's context (-1 before the first record).
    pub(crate) context: i64,
    /// The previous record's name (empty before the first record and for an unknown name).
    pub(crate) name: String,
}

impl Default for Prev {
    fn default() -> Prev {
        Prev {
            context: -1,
            name: String::new(),
        }
    }
}

/// Refuses a record: `InvalidInput`, whose reason is kept in `refused` rather than in the
/// error, since an error with a text of its own takes an allocation that cannot fail.
fn invalid(refused: &mut Option<&'static str>, what: &'static str) -> io::Error {
    *refused = Some(what);
    io::Error::from(io::ErrorKind::InvalidInput)
}

/// A payload written into room reserved for its largest possible size: a byte costs a store
/// and one bounds check, not a `Vec::push`. A write past the room (which the room's size
/// rules out) is dropped, and [`encode`] refuses the record when `at` ends past the room.
struct Out<'a> {
    buf: &'a mut [u8],
    at: usize,
    /// Where the last bitmap written starts.
    last_bitmap: usize,
}

impl VarintOut for Out<'_> {
    #[inline(always)]
    fn byte(&mut self, b: u8) {
        if let Some(at) = self.buf.get_mut(self.at) {
            *at = b;
        }
        self.at += 1;
    }
}

impl Out<'_> {
    fn signed(&mut self, v: i64) {
        self.varint(varint::zigzag(v));
    }

    /// Skips `n` bytes (left zero, for a bitmap) and returns where they start.
    fn zeros(&mut self, n: usize) -> usize {
        let at = self.at;
        if let Some(room) = self.buf.get_mut(at..at.wrapping_add(n)) {
            room.fill(0);
        }
        self.at = at.wrapping_add(n);
        at
    }

    fn bytes(&mut self, b: &[u8]) {
        let end = self.at.wrapping_add(b.len());
        if let Some(room) = self.buf.get_mut(self.at..end) {
            room.copy_from_slice(b);
        }
        self.at = end;
    }
}

/// A bitmap being built 64 slots at a time in a register, into bytes [`Out::zeros`] left.
struct Bits {
    /// Where the bitmap starts, and its length in bytes.
    at: usize,
    len: usize,
    /// The slots below `next` are done; slots must increase and stay below `slots`.
    next: usize,
    slots: usize,
    /// The 64-slot word being built, and the byte offset of that word in the bitmap.
    word: u64,
    word_at: usize,
}

impl Bits {
    fn new(out: &mut Out<'_>, slots: usize) -> Bits {
        let len = slots.div_ceil(8);
        let at = out.zeros(len);
        out.last_bitmap = at;
        Bits {
            at,
            len,
            next: 0,
            slots,
            word: 0,
            word_at: 0,
        }
    }

    /// Sets `slot`; false if it does not follow the last one set or lies past the last slot.
    #[inline(always)]
    fn set(&mut self, out: &mut Out<'_>, slot: u32) -> bool {
        let s = slot as usize;
        // next <= s < slots, in one comparison.
        if s.wrapping_sub(self.next) >= self.slots - self.next {
            return false;
        }
        self.next = s + 1;
        let word_at = s / 64 * 8;
        if word_at != self.word_at {
            self.flush(out);
            self.word = 0;
            self.word_at = word_at;
        }
        self.word |= 1 << (s % 64);
        true
    }

    fn flush(&self, out: &mut Out<'_>) {
        let word = self.word.to_le_bytes();
        let n = (self.len - self.word_at).min(word.len());
        let at = self.at + self.word_at;
        if let (Some(room), Some(bytes)) = (out.buf.get_mut(at..at + n), word.get(..n)) {
            room.copy_from_slice(bytes);
        }
    }
}

/// A writer's buffers, reused from record to record.
#[derive(Default)]
pub(crate) struct Scratch {
    /// Where a record is encoded (its length is the largest so far).
    room: Vec<u8>,
    /// Sums of kinds by phase, per kind.
    per_kind: Vec<u64>,
    /// Each kind's index among the record's kinds, by slot (`u32::MAX`: not among them).
    kind_index: Vec<u32>,
    /// Why the last record was refused (`InvalidInput`), if it was.
    pub(crate) refused: Option<&'static str>,
}

/// Who a record is and where it goes in its file: the fields it holds besides its counters.
#[derive(Clone, Copy)]
pub(crate) struct Fields<'a> {
    /// The id of its schema in the file (0 for the first one).
    pub(crate) schema_id: u64,
    /// The id of its tier in the file.
    pub(crate) tier_id: u64,
    /// Its schema's kinds.
    pub(crate) kind_count: usize,
    /// Its schema's phases.
    pub(crate) phase_count: usize,
    /// The method's name ("" if unknown).
    pub(crate) name: &'a str,
    /// The method's context number (-1 if unknown).
    pub(crate) context: i64,
}

/// Appends the version-2 payload of a record (after its frame's type and length) to `p`.
/// `prev` is what the previous record written says; it is not changed here. `scratch` is reused
/// by the checks of kinds by phase.
pub(crate) fn encode(
    p: &mut TryBuf,
    f: &Fields<'_>,
    prev: &Prev,
    c: &MethodCounts,
    scratch: &mut Scratch,
) -> io::Result<()> {
    let Fields {
        schema_id,
        tier_id,
        kind_count,
        phase_count,
        name,
        context,
    } = *f;
    let mut out = room_for(&mut scratch.room, f, c)?;
    let phase_sum = c.phases.iter().fold(0u64, |s, p| s.wrapping_add(p.1));
    let reserved_4k = c.reserved_bytes % 4096 == 0;
    let mut head = (tier_id << TIER_SHIFT) | u64::from(c.limit_hit);
    head |= if c.phase_kind_bytes.is_empty() {
        0
    } else {
        BY_PHASE
    };
    head |= if reserved_4k { RESERVED_4K } else { 0 };
    head |= if schema_id != 0 { SCHEMA_FOLLOWS } else { 0 };
    // LAST_PHASE_DERIVED is decided after the kinds; `head` is written last into its byte(s).
    let head_at = out.at;
    let head_room = varint_len(head | LAST_PHASE_DERIVED);
    out.at += head_room;
    if schema_id != 0 {
        out.varint(schema_id);
    }
    out.signed(context.wrapping_sub(prev.context.wrapping_add(1)));
    let mut shared = shared_prefix(name.as_bytes(), prev.name.as_bytes());
    while !name.is_char_boundary(shared) {
        shared -= 1;
    }
    out.varint(shared as u64);
    out.varint((name.len() - shared) as u64);
    out.bytes(name.as_bytes().get(shared..).unwrap_or_default());
    out.varint(if reserved_4k {
        c.reserved_bytes / 4096
    } else {
        c.reserved_bytes
    });
    out.varint(c.page_count);
    out.varint(c.largest_alloc);
    let mut total = 0u64;
    let kinds_ok = put_slots(
        &mut out,
        kind_count + 1,
        &c.kinds,
        |out, &(slot, bytes, count)| {
            total = total.wrapping_add(bytes);
            out.varint(bytes);
            out.varint(count);
            slot
        },
    );
    if !kinds_ok {
        return Err(invalid(
            &mut scratch.refused,
            "its kinds are not in increasing slot order within the schema",
        ));
    }
    out.signed(c.used_bytes.wrapping_sub(total) as i64);
    // The last phase's bytes are left out when the phases add up to the kinds.
    let derived = !c.phases.is_empty() && phase_sum == total;
    let stored = c.phases.len() - usize::from(derived);
    let phases_ok = put_slots(
        &mut out,
        phase_count + 1,
        c.phases.get(..stored).unwrap_or_default(),
        |out, &(slot, bytes)| {
            out.varint(bytes);
            slot
        },
    ) && put_slots_after(&mut out, phase_count + 1, &c.phases, stored);
    if !phases_ok {
        return Err(invalid(
            &mut scratch.refused,
            "its phases are not in increasing slot order within the schema",
        ));
    }
    let end = out.at;
    if end > out.buf.len() {
        // Ruled out by the room's size: every field is counted in `most`.
        return Err(invalid(&mut scratch.refused, "it outgrew its room"));
    }
    head |= if derived { LAST_PHASE_DERIVED } else { 0 };
    // The derived bit is below bit 7: it never changes the head's length.
    debug_assert_eq!(varint_len(head), head_room);
    out.at = head_at;
    out.varint(head);
    let by_phase_most =
        c.phases.len() * c.kinds.len().div_ceil(8) + MAX_VARINT * c.phase_kind_bytes.len();
    p.reserve(end + by_phase_most)?;
    p.put(scratch.room.get(..end).unwrap_or_default()); // within the room reserved
    if !c.phase_kind_bytes.is_empty() {
        put_by_phase(p, c, scratch)?;
    }
    p.check()
}

/// The room a record is encoded in, made as large as the largest payload these counts can
/// take (kinds by phase are appended after). It keeps its largest length from record to
/// record: it is not cleared each time.
#[inline(always)]
fn room_for<'a>(room: &'a mut Vec<u8>, f: &Fields<'_>, c: &MethodCounts) -> io::Result<Out<'a>> {
    let most = 10 * MAX_VARINT
        + f.name.len()
        + (f.kind_count + 1).div_ceil(8)
        + 2 * MAX_VARINT * c.kinds.len()
        + (f.phase_count + 1).div_ceil(8)
        + MAX_VARINT * c.phases.len();
    if room.len() < most {
        room.try_reserve(most - room.len()).map_err(no_memory)?;
        crate::fallible::resize_within(room, most, 0); // within the room reserved
    }
    Ok(Out {
        buf: room,
        at: 0,
        last_bitmap: 0,
    })
}

/// Writes a bitmap of `slots` bits, then what `each` writes of every item of `items` (it
/// returns the item's slot). False if the slots do not increase or one lies past the last.
/// A bitmap of at most 64 slots (most schemas) is built in one word.
#[inline(always)]
fn put_slots<T>(
    out: &mut Out<'_>,
    slots: usize,
    items: &[T],
    mut each: impl FnMut(&mut Out<'_>, &T) -> u32,
) -> bool {
    let mut bits = Bits::new(out, slots);
    if slots <= 64 {
        let (mut word, mut next) = (0u64, 0usize);
        for item in items {
            let s = each(out, item) as usize;
            // next <= s < slots, in one comparison.
            if s.wrapping_sub(next) >= slots - next {
                return false;
            }
            next = s + 1;
            word |= 1 << s;
        }
        bits.word = word;
        bits.flush(out);
        return true;
    }
    for item in items {
        let slot = each(out, item);
        if !bits.set(out, slot) {
            return false;
        }
    }
    bits.flush(out);
    true
}

/// Sets in the bitmap [`put_slots`] wrote last the bits of `items[from..]`, whose values are
/// left out (the last phase when derived); false as [`put_slots`].
fn put_slots_after<T: Slotted>(out: &mut Out<'_>, slots: usize, items: &[T], from: usize) -> bool {
    let bitmap = out.last_bitmap;
    let (done, rest) = items.split_at(from.min(items.len()));
    let mut next = done.last().map_or(0, |i| i.slot() as usize + 1);
    for item in rest {
        let s = item.slot() as usize;
        if s.wrapping_sub(next) >= slots - next {
            return false;
        }
        next = s + 1;
        if let Some(b) = out.buf.get_mut(bitmap + s / 8) {
            *b |= 1 << (s % 8);
        }
    }
    true
}

/// An entry with a slot.
trait Slotted {
    fn slot(&self) -> u32;
}

impl Slotted for (u32, u64) {
    fn slot(&self) -> u32 {
        self.0
    }
}

/// How many bytes `a` and `b` start with alike, compared 8 at a time.
fn shared_prefix(a: &[u8], b: &[u8]) -> usize {
    let mut i = 0;
    while let (Some(x), Some(y)) = (a.get(i..i + 8), b.get(i..i + 8)) {
        if x != y {
            break;
        }
        i += 8;
    }
    while let (Some(x), Some(y)) = (a.get(i), b.get(i)) {
        if x != y {
            break;
        }
        i += 1;
    }
    i
}

/// How many bytes `v` takes as a varint.
fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// Kinds by phase: per present phase, a bitmap over the record's present kinds, then the bytes
/// of each one set. Refuses entries that readers would refuse: ones naming a phase or kind the
/// record does not list, out of order, or not adding up to the kinds' and phases' bytes.
#[inline(never)] // only with kinds by phase: kept out of the path of every other record
fn put_by_phase(p: &mut TryBuf, c: &MethodCounts, scratch: &mut Scratch) -> io::Result<()> {
    let not_listed = "an entry of its kinds by phase names a phase or kind that the record does not list, or they are not sorted by phase then kind";
    let mismatch = "its kinds by phase do not add up to its kinds' and phases' bytes";
    let Scratch {
        per_kind,
        kind_index,
        refused,
        ..
    } = scratch;
    per_kind.clear();
    per_kind.try_reserve(c.kinds.len()).map_err(no_memory)?;
    crate::fallible::resize_within(per_kind, c.kinds.len(), 0); // within the room reserved

    // The record's kinds are in increasing slot order (checked before): an entry finds its
    // kind's index in one look rather than by a walk along the kinds.
    let slots = c.kinds.last().map_or(0, |&(slot, ..)| slot as usize + 1);
    kind_index.clear();
    kind_index.try_reserve(slots).map_err(no_memory)?;
    crate::fallible::resize_within(kind_index, slots, u32::MAX); // within the room reserved
    for (i, &(slot, ..)) in c.kinds.iter().enumerate() {
        if let Some(index) = kind_index.get_mut(slot as usize) {
            *index = i as u32;
        }
    }
    let bitmap = c.kinds.len().div_ceil(8);
    let mut entries = c.phase_kind_bytes.iter().peekable();
    for &(phase, phase_bytes) in &c.phases {
        let at = p.len();
        p.put_zeros(bitmap);
        let (mut next, mut sum) = (0, 0u64);
        while let Some(&&(_, kind, bytes)) = entries.peek().filter(|e| e.0 == phase) {
            // Listed, and after the phase's entry before it (`u32::MAX` is neither).
            let k = kind_index
                .get(kind as usize)
                .map_or(usize::MAX, |&i| i as usize);
            let Some(kind_sum) = per_kind.get_mut(k).filter(|_| k >= next) else {
                return Err(invalid(refused, not_listed));
            };
            p.set_bit(at, k);
            put_varint(p, bytes);
            let (Some(s), Some(ks)) = (sum.checked_add(bytes), kind_sum.checked_add(bytes)) else {
                return Err(invalid(refused, mismatch));
            };
            (sum, *kind_sum) = (s, ks);
            next = k + 1;
            entries.next();
        }
        if sum != phase_bytes {
            return Err(invalid(refused, mismatch));
        }
    }
    if entries.next().is_some() {
        return Err(invalid(refused, not_listed));
    }
    if per_kind.iter().zip(&c.kinds).any(|(&sum, k)| sum != k.1) {
        return Err(invalid(refused, mismatch));
    }
    Ok(())
}

/// The fields of a version-2 record before its counters, which depend on the previous record.
#[derive(Debug, Default, Clone)]
pub(crate) struct Head {
    head: u64,
    /// The record's schema id.
    pub(crate) schema: u64,
    /// The record's tier id (0: none).
    pub(crate) tier: u64,
    /// Where the counters start in the payload.
    pub(crate) body: usize,
}

impl Head {
    /// This head for the record's counters alone (`payload[body..]`): `body` is 0.
    pub(crate) fn of_counters(&self) -> Head {
        Head {
            body: 0,
            ..self.clone()
        }
    }

    /// Reads the head of a version-2 record from `payload`, advancing `prev` to this record
    /// (its context and name).
    pub(crate) fn read(payload: &[u8], prev: &mut Prev) -> Result<Head, Malformed> {
        let mut p = Payload::new(payload);
        let head = p.varint()?;
        let schema = if head & SCHEMA_FOLLOWS != 0 {
            p.varint()?
        } else {
            0
        };
        let delta = p.signed()?;
        let shared = p.varint()?;
        let suffix = p.str()?;
        let shared = usize::try_from(shared)
            .ok()
            .filter(|&n| prev.name.is_char_boundary(n))
            .ok_or(Malformed(
                "its name shares more of the previous record's name than there is",
            ))?;
        prev.context = prev.context.wrapping_add(1).wrapping_add(delta);
        prev.name.truncate(shared);
        prev.name.push_str(suffix);
        Ok(Head {
            head,
            schema,
            tier: head >> TIER_SHIFT,
            body: p.position(),
        })
    }
}

use crate::format::spec::{
    KIND_PAST_BITMAP as KIND_OUTSIDE, PHASE_PAST_BITMAP as PHASE_OUTSIDE, TOO_MANY_BYTES,
};

/// Reads a bitmap of `slots` bits; returns it and how many slots it sets. Each slot set but
/// `free` ones needs at least `each` more bytes of the record: a bitmap that claims more is
/// refused before any is decoded, so memory follows the bytes read.
#[inline(always)]
fn read_bitmap<'a>(
    p: &mut Payload<'a>,
    slots: usize,
    (each, free): (usize, usize),
    outside: Malformed,
) -> Result<(&'a [u8], usize), Malformed> {
    let bitmap = p.bytes(slots.div_ceil(8))?;
    if let Some(&last) = bitmap.last() {
        // Bits past the last slot must be clear.
        if slots % 8 != 0 && last >> (slots % 8) != 0 {
            return Err(outside);
        }
    }
    // By words: without a popcount instruction (the x86-64 baseline), each count is a dozen
    // instructions, so a count per byte cost seven times as many.
    let set: usize = words(bitmap).map(|w| w.count_ones() as usize).sum();
    if set.saturating_sub(free).saturating_mul(each) > p.remaining() {
        return Err(Malformed(
            "its bitmap lists more kinds or phases than the record holds",
        ));
    }
    u32::try_from(slots).map_err(|_| outside)?;
    Ok((bitmap, set))
}

/// The words of a bitmap, 64 slots each, little-endian (the last one padded with zeros).
#[inline(always)]
fn words(bitmap: &[u8]) -> impl Iterator<Item = u64> + '_ {
    let whole = bitmap.chunks_exact(8);
    let tail = whole.remainder();
    let tail = (!tail.is_empty()).then(|| tail_word(tail));
    whole
        .map(|w| u64::from_le_bytes(w.try_into().unwrap_or_default()))
        .chain(tail)
}

/// The little-endian value of at most 8 bytes, from two loads that may overlap (where they
/// do, they read the same bytes) instead of a loop over the bytes.
#[inline(always)]
fn tail_word(b: &[u8]) -> u64 {
    let n = b.len();
    if let (Some(lo), Some(hi)) = (b.first_chunk::<4>(), b.last_chunk::<4>()) {
        u64::from(u32::from_le_bytes(*lo)) | u64::from(u32::from_le_bytes(*hi)) << (8 * (n - 4))
    } else if let (Some(lo), Some(hi)) = (b.first_chunk::<2>(), b.last_chunk::<2>()) {
        u64::from(u16::from_le_bytes(*lo)) | u64::from(u16::from_le_bytes(*hi)) << (8 * (n - 2))
    } else {
        b.first().map_or(0, |&b| u64::from(b))
    }
}

/// Calls `f` with each slot set in `bitmap` (of fewer than 2^32 slots, as [`read_bitmap`]
/// checks), in increasing order.
#[inline(always)]
fn for_each_slot(
    bitmap: &[u8],
    mut f: impl FnMut(u32) -> Result<(), Malformed>,
) -> Result<(), Malformed> {
    let mut base = 0u32;
    for mut word in words(bitmap) {
        while word != 0 {
            f(base + word.trailing_zeros())?;
            word &= word - 1;
        }
        base = base.wrapping_add(64);
    }
    Ok(())
}

/// Where the kinds and phases of a record go as they are decoded: a [`MethodCounts`]'s lists,
/// or a reader's visitor (see [`crate::log::CountsVisitor`]).
pub(crate) trait CountsSink {
    /// `n` kinds follow (bounded by the bytes of the record).
    #[inline(always)]
    fn kinds(&mut self, _n: usize) {}
    /// A present kind, slots increasing.
    fn kind(&mut self, slot: u32, bytes: u64, count: u64);
    /// `n` phases follow (bounded by the bytes of the record).
    #[inline(always)]
    fn phases(&mut self, _n: usize) {}
    /// A present phase, slots increasing.
    fn phase(&mut self, slot: u32, bytes: u64);
}

impl CountsSink for MethodCounts {
    fn kinds(&mut self, n: usize) {
        self.kinds.clear();
        self.kinds.reserve(n);
    }
    #[inline(always)]
    fn kind(&mut self, slot: u32, bytes: u64, count: u64) {
        self.kinds.push((slot, bytes, count));
    }
    fn phases(&mut self, n: usize) {
        self.phases.clear();
        self.phases.reserve(n);
    }
    #[inline(always)]
    fn phase(&mut self, slot: u32, bytes: u64) {
        self.phases.push((slot, bytes));
    }
}

/// Decodes the `(bytes, count)` pair of each kind set in `bitmap` from `p` into `sink`;
/// returns the sums of bytes and of counts, and whether either passed 2^64 - 1. With BMI2's
/// `pext` where the processor runs it fast (`format::Pext`), else portably.
#[inline(always)]
fn read_kinds<S: CountsSink>(
    p: &mut Payload<'_>,
    bitmap: &[u8],
    sink: &mut S,
) -> Result<(u64, u64, bool), Malformed> {
    #[cfg(target_arch = "x86_64")]
    if let Some(pext) = crate::format::Pext::detect() {
        // SAFETY: `Pext::detect` found BMI2 on this processor.
        return unsafe { read_kinds_bmi2(p, bitmap, sink, pext) };
    }
    read_kinds_portable(p, bitmap, sink)
}

/// [`read_kinds_with`] for any processor.
#[inline(never)]
fn read_kinds_portable<S: CountsSink>(
    p: &mut Payload<'_>,
    bitmap: &[u8],
    sink: &mut S,
) -> Result<(u64, u64, bool), Malformed> {
    read_kinds_with(p, bitmap, sink, &Portable)
}

/// [`read_kinds_with`] compiled for BMI2, so that `pext` is inlined into its loop.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2")]
#[inline(never)]
fn read_kinds_bmi2<S: CountsSink>(
    p: &mut Payload<'_>,
    bitmap: &[u8],
    sink: &mut S,
    pext: &crate::format::Pext,
) -> Result<(u64, u64, bool), Malformed> {
    read_kinds_with(p, bitmap, sink, pext)
}

/// [`read_kinds`] with the pairs read by `pairs`. The innermost loop of every reader: its
/// position is kept in a local, not in `p`, and each of its callers is a function of its own so
/// that its state stays in registers.
#[inline(always)]
fn read_kinds_with<S: CountsSink, P: PairReader>(
    p: &mut Payload<'_>,
    bitmap: &[u8],
    sink: &mut S,
    pairs: &P,
) -> Result<(u64, u64, bool), Malformed> {
    let (bytes, mut at) = (p.all(), p.position());
    // Sums of at most 2^32 values below 2^64 cannot wrap in 128 bits.
    let (mut total, mut count_sum) = (0u128, 0u128);
    let mut base = 0u32;
    for mut word in words(bitmap) {
        while word != 0 {
            let slot = base + word.trailing_zeros();
            word &= word - 1;
            let (b, n, next) = pairs.pair_at(bytes, at)?;
            at = next;
            total += u128::from(b);
            count_sum += u128::from(n);
            sink.kind(slot, b, n);
        }
        base = base.wrapping_add(64);
    }
    *p = Payload::at(bytes, at);
    let overflow = total > u128::from(u64::MAX) || count_sum > u128::from(u64::MAX);
    Ok((total as u64, count_sum as u64, overflow))
}

/// Decodes the bytes of the first `stored` phases set in `bitmap` from `p` into `sink`;
/// returns their sum and the slot of the last phase set, if it is not stored (derived).
#[inline(never)]
fn read_phases<S: CountsSink>(
    p: &mut Payload<'_>,
    bitmap: &[u8],
    stored: usize,
    sink: &mut S,
) -> Result<(u64, Option<u32>), Malformed> {
    let (bytes, mut at) = (p.all(), p.position());
    let (mut sum, mut seen, mut unstored) = (0u64, 0usize, None);
    let mut base = 0u32;
    for mut word in words(bitmap) {
        while word != 0 {
            let slot = base + word.trailing_zeros();
            word &= word - 1;
            if seen < stored {
                let value = varint_at(bytes, &mut at)?;
                sum = sum.checked_add(value).ok_or(TOO_MANY_BYTES)?;
                sink.phase(slot, value);
                seen += 1;
            } else {
                unstored = Some(slot);
            }
        }
        base = base.wrapping_add(64);
    }
    *p = Payload::at(bytes, at);
    Ok((sum, unstored))
}

/// The fields of a record's counters other than its lists.
pub(crate) struct Scalars {
    pub(crate) limit_hit: bool,
    pub(crate) used_bytes: u64,
    pub(crate) reserved_bytes: u64,
    pub(crate) page_count: u64,
    pub(crate) largest_alloc: u64,
    /// The sums of the kinds' bytes and allocations (each fits: a record whose kinds add up
    /// to more than 2^64 - 1 is refused).
    pub(crate) kind_sums: (u64, u64),
}

impl Scalars {
    /// Sets the fields of `c` these are.
    pub(crate) fn set(&self, c: &mut MethodCounts) {
        c.limit_hit = self.limit_hit;
        c.used_bytes = self.used_bytes;
        c.reserved_bytes = self.reserved_bytes;
        c.page_count = self.page_count;
        c.largest_alloc = self.largest_alloc;
    }
}

/// Whether a record (of this head) holds kinds by phase.
pub(crate) fn has_by_phase(head: &Head) -> bool {
    head.head & BY_PHASE != 0
}

/// Decodes the counters of a version-2 record (from [`Head::body`]) up to its kinds by phase,
/// handing its kinds and phases to `sink`; returns its other fields and where it stands.
#[inline(always)]
fn decode_lists<'a, S: CountsSink>(
    payload: &'a [u8],
    head: &Head,
    kind_count: usize,
    phase_count: usize,
    sink: &mut S,
) -> Result<(Scalars, Payload<'a>), Malformed> {
    let mut p = Payload::new(payload);
    p.skip(head.body)?;
    let limit_hit = head.head & LIMIT_HIT != 0;
    let reserved = p.varint()?;
    let reserved_bytes = if head.head & RESERVED_4K != 0 {
        reserved
            .checked_mul(4096)
            .ok_or(Malformed("its reserved bytes are more than 2^64 - 1"))?
    } else {
        reserved
    };
    let page_count = p.varint()?;
    let largest_alloc = p.varint()?;
    let (bitmap, n) = read_bitmap(&mut p, kind_count + 1, (2, 0), KIND_OUTSIDE)?;
    // `n` is bounded by the bytes left (read_bitmap): reserving follows the bytes read.
    sink.kinds(n);
    let (total, count_sum, overflow) = read_kinds(&mut p, bitmap, sink)?;
    if overflow {
        return Err(Malformed(
            "its byte or allocation counts add up to more than 2^64 - 1",
        ));
    }
    let used_bytes = total.wrapping_add(p.signed()? as u64);
    let (bitmap, n) = read_bitmap(&mut p, phase_count + 1, (1, 1), PHASE_OUTSIDE)?;
    let derived = head.head & LAST_PHASE_DERIVED != 0;
    if derived && n == 0 {
        return Err(Malformed("it derives the bytes of a phase but has none"));
    }
    let stored = n - usize::from(derived);
    sink.phases(n);
    let (phase_sum, unstored) = read_phases(&mut p, bitmap, stored, sink)?;
    if let Some(slot) = unstored {
        // The last phase's bytes: the kinds' bytes less the other phases'.
        let bytes = total.checked_sub(phase_sum).ok_or(Malformed(
            "its phases hold more bytes than its kinds, but it says they hold as many",
        ))?;
        sink.phase(slot, bytes);
    }
    let scalars = Scalars {
        limit_hit,
        used_bytes,
        reserved_bytes,
        page_count,
        largest_alloc,
        kind_sums: (total, count_sum),
    };
    Ok((scalars, p))
}

/// Decodes the counters of a version-2 record (from [`Head::body`]) into `c`, reusing its
/// buffers; `scratch` is reused for the sums of kinds by phase.
pub(crate) fn decode_counts(
    payload: &[u8],
    head: &Head,
    kind_count: usize,
    phase_count: usize,
    c: &mut MethodCounts,
    scratch: &mut Vec<u64>,
) -> Result<(), Malformed> {
    let (scalars, mut p) = decode_lists(payload, head, kind_count, phase_count, c)?;
    scalars.set(c);
    c.phase_kind_bytes.clear();
    if head.head & BY_PHASE != 0 {
        read_by_phase(&mut p, c, scratch)?;
    }
    if !p.is_done() {
        return Err(Malformed("it has bytes after its last field"));
    }
    Ok(())
}

/// Decodes the counters of a version-2 record without kinds by phase ([`has_by_phase`] false)
/// into `sink`, checking what [`decode_counts`] checks; returns its other fields. On an
/// error, `sink` may have been handed part of the record.
pub(crate) fn decode_into<S: CountsSink>(
    payload: &[u8],
    head: &Head,
    kind_count: usize,
    phase_count: usize,
    sink: &mut S,
) -> Result<Scalars, Malformed> {
    debug_assert!(!has_by_phase(head));
    let (scalars, p) = decode_lists(payload, head, kind_count, phase_count, sink)?;
    if !p.is_done() {
        return Err(Malformed("it has bytes after its last field"));
    }
    Ok(scalars)
}

/// Reads the kinds by phase and checks them against the kinds' and the phases' bytes.
fn read_by_phase(
    p: &mut Payload<'_>,
    c: &mut MethodCounts,
    per_kind: &mut Vec<u64>,
) -> Result<(), Malformed> {
    const MISMATCH: Malformed =
        Malformed("its kinds by phase do not add up to its kinds' and phases' bytes");
    per_kind.clear();
    per_kind.resize(c.kinds.len(), 0);
    for &(phase, phase_bytes) in &c.phases {
        let mut sum = 0u64;
        let (bitmap, _) = read_bitmap(p, c.kinds.len(), (1, 0), MISMATCH)?;
        for_each_slot(bitmap, |k| {
            let bytes = p.varint()?;
            let k = k as usize;
            sum = sum.checked_add(bytes).ok_or(TOO_MANY_BYTES)?;
            per_kind[k] = per_kind[k].checked_add(bytes).ok_or(TOO_MANY_BYTES)?;
            c.phase_kind_bytes.push((phase, c.kinds[k].0, bytes));
            Ok(())
        })?;
        if sum != phase_bytes {
            return Err(MISMATCH);
        }
    }
    if per_kind.iter().zip(&c.kinds).any(|(&sum, k)| sum != k.1) {
        return Err(MISMATCH);
    }
    Ok(())
}

// Copying records from log to log (`jitarena merge`): the head re-encoded, the counters copied.
mod copy;
pub(crate) use copy::{copyable, put_head};

#[cfg(test)]
mod tests {
    use super::words;

    #[test]
    fn words_are_the_bitmap_read_little_endian() {
        let bytes: Vec<u8> = (1..=20u8).map(|b| b.wrapping_mul(37) | 1).collect();
        for len in 0..=bytes.len() {
            let b = &bytes[..len];
            let want: Vec<u64> = b
                .chunks(8)
                .map(|c| c.iter().rev().fold(0u64, |w, &x| w << 8 | u64::from(x)))
                .collect();
            assert_eq!(words(b).collect::<Vec<_>>(), want, "{len} bytes");
        }
    }
}
