//! The arena core behind both the C ABI and the safe Rust API: pages, the slow path, limits,
//! phases and the readers. Pages and blocks are laid out as the .NET JIT's own arena lays them
//! out (`ArenaAllocatorT`): a page starts with a descriptor of three pointer-sized words, blocks
//! are bumped upward from just past it, and a request that does not fit takes a new page of the
//! descriptor plus its size, rounded up to the page size, at whose first block it lies. The fast
//! path lives in `include/jitarena.h` (and its Rust twin in `Arena::alloc_bytes`); both move
//! `head.cursor` up by the rounded size, towards the page's end (`head.limit`), add to the
//! packed counter of the kind's slot (see [`super::kinds`]), and call [`RawArena::alloc_slow`]
//! for everything else. The inline phase marks write the bytes used into the head's marks, read
//! here ([`RawArena::settle`]) into bytes used per phase ([`super::phases`]); bytes per (phase,
//! kind) are differences of the kind slots, taken at every mark of an arena that records them.

use std::alloc::Layout;
use std::borrow::Cow;
use std::ffi::c_void;
use std::ptr;

use super::by_phase::KindsByPhase;
use super::kinds::KindTotals;
use super::phases::{Interval, PhaseBytes};
use super::registry;
pub(crate) use super::slots::SLOTS;
use crate::counters::MethodCounts;
use crate::counters::{Counters, Schema};
use crate::error::{Error, ErrorCode};
use crate::fallible::{self, out_of_memory};
use crate::message::{message, Hex};
use crate::shared::Shared;
use crate::sites::MethodSites;
use crate::sys::{
    jitarena_event, jitarena_head, jitarena_mark, jitarena_page, JITARENA_CONSTANT_SIZE_MAX,
    JITARENA_EVENT_ALLOC, JITARENA_EVENT_PHASE, JITARENA_MARKS, JITARENA_MAX_KINDS,
};
use crate::trace_buffer::TraceBuffer;

/// The bytes of the head's marks: how far past their start `head.mark_limit` lies in an arena
/// that takes marks inline.
const MARKS_BYTES: usize = JITARENA_MARKS as usize * std::mem::size_of::<jitarena_mark>();

/// The address of the head's first mark, which `head.mark_next` starts from (exposed: the
/// inline path writes through it).
pub(crate) fn marks_start(head: &mut jitarena_head) -> usize {
    head.marks.as_mut_ptr().expose_provenance()
}

/// How many marks the inline path wrote into the head since the library last read them.
pub(crate) fn marks_written(head: &mut jitarena_head) -> usize {
    let start = marks_start(head);
    head.mark_next.wrapping_sub(start) / std::mem::size_of::<jitarena_mark>()
}

/// Largest request served: half the address space, so that no size arithmetic can wrap.
pub(crate) const MAX_REQUEST: usize = isize::MAX as usize / 2;
/// What every request is rounded up to and every block aligned to: the pointer size, as the
/// .NET JIT's arena rounds (the header's `JITARENA_ALIGN`). The built-in pages are aligned to 16.
pub(crate) const ALIGN: usize = std::mem::size_of::<usize>();
const PAGE_ALIGN: usize = 16;
/// The descriptor at every page's start (the header's `jitarena_page`), before its first block.
pub(crate) const DESCRIPTOR: usize = std::mem::size_of::<jitarena_page>();
/// How far below the end of the address space a page must end: the inline path bumps the
/// cursor by a constant size of up to this without testing for a wrap.
const END_ROOM: usize = JITARENA_CONSTANT_SIZE_MAX as usize;
/// Most bytes of free pages an arena keeps across resets (built-in pager; the .NET runtime's
/// host caches up to 16 MiB of slabs).
const SPARE_BYTES: usize = 16 << 20;

/// Host page allocator callbacks, as in `jitarena_config`.
pub(crate) type PageAllocFn = unsafe extern "C" fn(*mut c_void, usize) -> *mut c_void;
/// Host page free callback, as in `jitarena_config`.
pub(crate) type PageFreeFn = unsafe extern "C" fn(*mut c_void, *mut c_void, usize);

/// Where pages come from.
#[derive(Clone, Copy)]
pub(crate) enum Pager {
    /// The Rust global allocator.
    Builtin,
    /// The host's callbacks and context.
    Host {
        alloc: PageAllocFn,
        free: PageFreeFn,
        host: *mut c_void,
    },
}

/// A checked arena configuration (from `jitarena_config` or from the Rust API's `Config`).
#[derive(Clone)]
pub(crate) struct ArenaSetup {
    pub schema: Shared<Schema>,
    pub page_size: usize,
    pub limit_bytes: u64,
    pub pager: Pager,
    /// Record every allocation for a trace.
    pub trace: bool,
    /// Record bytes per (phase, kind).
    pub kinds_by_phase: bool,
    /// Pages of the descriptor and the request that opened them, not rounded to the page size.
    pub exact_pages: bool,
    /// The JIT's build id, written into the stats log with its records.
    pub build: Option<String>,
}

struct Page {
    base: *mut u8,
    size: usize,
}

/// One arena. `head` must stay the first field: the C header casts `jitarena*` to
/// `jitarena_head*`. Aligned to `JITARENA_ARENA_ALIGN`, so that an arena's address and a kind
/// slot share one word (the header's `jitarena_kind_handle`).
#[repr(C, align(256))]
pub(crate) struct RawArena {
    pub(crate) head: jitarena_head,
    /// The 64-bit per-kind totals that `head.kind_packed` is drained into.
    pub(crate) kinds: KindTotals,
    pub(crate) schema: Shared<Schema>,
    /// The JIT's build id, from the config.
    pub(crate) build: Option<String>,
    page_size: usize,
    /// Pages sized to the descriptor and the request that opened them (the config's
    /// `exact_pages`).
    exact_pages: bool,
    limit_bytes: u64,
    pager: Pager,
    pages: Vec<Page>,
    /// Free pages of the page size kept for reuse across methods (built-in pager only), as the
    /// .NET runtime's host caches slabs: not counted as reserved, returned at drop.
    spare: Vec<Page>,
    /// The current page's first block, just past its descriptor (where `head.cursor` started).
    window_start: usize,
    /// The current page's end, where `head.limit` stands (but while recording a trace).
    page_end: usize,
    /// Rounded bytes handed out in the pages before the current one.
    used_closed: u64,
    reserved: u64,
    largest: u64,
    failure: i32,
    limit_hit: bool,
    /// Bytes used per phase, from the marks read so far.
    phases: PhaseBytes,
    /// Bytes per (phase, kind), when the config asked for them.
    by_phase: Option<KindsByPhase>,
    /// While recording a trace: this method's events not written yet (the inline window is
    /// kept empty so that every allocation comes through the slow path and is seen here).
    pub(crate) trace: Option<TraceBuffer>,
    /// Whether an event of this method could not be recorded for lack of memory: the method's
    /// trace is then refused at its end rather than written with events missing.
    pub(crate) trace_short: bool,
    /// While recording a trace: the site of each of this method's allocations.
    pub(crate) trace_sites: MethodSites,
    /// While recording a trace: where this method's events stood at the last phase mark, and
    /// the phase their last phase event names (see [`RawArena::trace_mark`]).
    trace_mark: (usize, usize),
    /// Whether the registry lists the arena (from the end of [`RawArena::new`] to its drop).
    listed: bool,
    /// The buffers `jitarena_method_done` reads the method's counters into, kept from method
    /// to method until the arena is destroyed (empty until the first method that something
    /// reads; a JIT that makes an arena per method pays their few allocations per method).
    pub(crate) method_counts: MethodCounts,
}

impl RawArena {
    /// A new empty arena (no page yet) on the heap, listed in the registry of live arenas under
    /// its address until it is dropped: keep it in this box (never move it out), so that the
    /// address the C entry points are given stays the registered one. Fails (with nothing
    /// left behind) only when memory runs out.
    pub(crate) fn new(setup: ArenaSetup) -> Result<Box<RawArena>, Error> {
        let phases = setup.schema.phases.len();
        let by_phase = match setup.kinds_by_phase {
            true => Some(
                KindsByPhase::new(setup.schema.kinds.len(), phases)
                    .ok_or_else(|| out_of_memory("no memory for the kinds by phase"))?,
            ),
            false => None,
        };
        let phase_bytes =
            PhaseBytes::new(phases).ok_or_else(|| out_of_memory("no memory for the phases"))?;
        // Marks go out of line where each needs more than the cursor: a trace's events, the
        // kind counters' differences.
        let eager_marks = setup.trace || by_phase.is_some();
        let mut arena = fallible::boxed(RawArena {
            head: jitarena_head {
                // SAFETY: the head is integers and arrays of integers: all zero is valid (no
                // page, no counts, no marks).
                ..unsafe { std::mem::zeroed() }
            },
            kinds: KindTotals::new(setup.schema.kinds.len()),
            schema: setup.schema,
            page_size: setup.page_size,
            exact_pages: setup.exact_pages,
            limit_bytes: setup.limit_bytes,
            pager: setup.pager,
            pages: Vec::new(),
            spare: Vec::new(),
            window_start: 0,
            page_end: 0,
            used_closed: 0,
            reserved: 0,
            largest: 0,
            failure: 0,
            limit_hit: false,
            phases: phase_bytes,
            by_phase,
            trace: setup.trace.then(TraceBuffer::default),
            trace_short: false,
            trace_sites: MethodSites::default(),
            trace_mark: (0, phases),
            build: setup.build,
            listed: false,
            method_counts: MethodCounts::default(),
        })
        .ok_or_else(|| out_of_memory("no memory for the arena"))?;
        // The marks lie in the box, which never moves: the inline path writes from their
        // start to their end, or to their start alone where every mark goes out of line.
        let start = marks_start(&mut arena.head);
        arena.head.mark_next = start;
        arena.head.mark_limit = if eager_marks {
            start
        } else {
            start + MARKS_BYTES
        };
        // On failure, dropping the box frees what it holds and leaves the registry as it was.
        registry::register(ptr::from_ref::<RawArena>(&*arena).addr())
            .map_err(|()| out_of_memory("no memory to list the arena among the live ones"))?;
        arena.listed = true;
        Ok(arena)
    }

    fn fail(&mut self, code: ErrorCode, message: impl Into<Cow<'static, str>>) -> Error {
        self.failure = code as i32;
        if code == ErrorCode::Limit {
            self.limit_hit = true;
        }
        Error::new(code, message)
    }

    /// Records a failure caught at the API boundary.
    pub(crate) fn fail_internal(&mut self, message: &'static str) {
        self.fail(ErrorCode::Internal, message);
    }

    /// Everything the fast path does not: size 0 (a block of `ALIGN` bytes), requests that do
    /// not fit the current page, the first page, every request while recording a trace.
    /// Counts the request on success.
    #[cold]
    #[inline(never)]
    pub(crate) fn alloc_slow(
        &mut self,
        size: usize,
        kind: u32,
        site: usize,
    ) -> Result<*mut u8, Error> {
        if size > MAX_REQUEST {
            return Err(self.fail(
                ErrorCode::SizeOverflow,
                message!(
                    "a request of ",
                    size,
                    " bytes exceeds the largest request, ",
                    MAX_REQUEST,
                    " bytes"
                ),
            ));
        }
        // No overflow: size <= MAX_REQUEST.
        let rounded = (size.max(1) + (ALIGN - 1)) & !(ALIGN - 1);
        // At most a new window and this request reach the kind counters' packed bytes.
        let room = (self.page_size + rounded) as u64;
        let open = self.head.limit.saturating_sub(self.head.cursor) as u64;
        if self
            .kinds
            .make_room(&mut self.head.kind_packed, room, open)
            .is_err()
        {
            return Err(self.fail(
                ErrorCode::OutOfMemory,
                "no memory for the kind counters' 64-bit totals",
            ));
        }
        let at = if self.page_end.saturating_sub(self.head.cursor) >= rounded {
            self.head.cursor
        } else {
            self.new_page(rounded)?
        };
        self.head.cursor = at + rounded;
        self.head.limit = self.window_limit();
        self.kinds
            .window_opened(self.head.limit.saturating_sub(self.head.cursor));
        // The page was exposed when it was obtained: the block is an address in it.
        let ptr = ptr::with_exposed_provenance_mut(at);
        if let Some(events) = &mut self.trace {
            let event = jitarena_event {
                op: JITARENA_EVENT_ALLOC,
                arg: kind,
                size: size as u64,
            };
            self.trace_short |= events.push(event).is_err();
            self.trace_short |= self.trace_sites.record(site).is_err();
        }
        let slot = kind.min(JITARENA_MAX_KINDS) as usize;
        // Within the room made above: fails only for a request too large for a packed
        // counter, whose totals could not be made.
        if self
            .kinds
            .add(&mut self.head.kind_packed, slot, size as u64)
            .is_err()
        {
            return Err(self.fail(
                ErrorCode::OutOfMemory,
                "no memory for the kind counters' 64-bit totals",
            ));
        }
        self.largest = self.largest.max(size as u64);
        Ok(ptr)
    }

    /// Where the inline window ends: the page's end; at the cursor (empty) while recording a
    /// trace.
    fn window_limit(&self) -> usize {
        if self.trace.is_some() {
            self.head.cursor
        } else {
            self.page_end
        }
    }

    /// The .NET JIT's `allocateNewPage`: a page of the descriptor plus `rounded`, rounded up to
    /// the page size, becomes the current page, and the old one's tail is abandoned. Returns
    /// the new page's first block, where the request lies. The descriptor's bytes are left as
    /// the pager gave them: the arena keeps its page list apart and touches no page.
    fn new_page(&mut self, rounded: usize) -> Result<usize, Error> {
        // A page of the page size unless the request needs more (no division then). `rounded`
        // is at most MAX_REQUEST, a quarter of the address space, and the page size at most
        // 1 GiB and never 0 (checked with the config): the rounding never overflows.
        let wanted = DESCRIPTOR + rounded;
        let bytes = match wanted <= self.page_size {
            _ if self.exact_pages => wanted,
            true => self.page_size,
            // Never `None` (see above): the fallback only keeps the division's checks quiet.
            false => wanted
                .checked_next_multiple_of(self.page_size)
                .unwrap_or(wanted),
        };
        // Exposed: the cursor (an integer, shared with C) is turned back into pointers into it.
        let base = self.obtain(bytes)?.expose_provenance();
        self.used_closed += (self.head.cursor - self.window_start) as u64;
        self.window_start = base + DESCRIPTOR;
        self.page_end = base + bytes;
        self.head.cursor = self.window_start;
        self.rebias();
        Ok(self.window_start)
    }

    /// Obtains a page of `size` bytes (a multiple of the page size) from the page allocator,
    /// within the limit.
    fn obtain(&mut self, size: usize) -> Result<*mut u8, Error> {
        if self.limit_bytes != 0 && self.reserved + size as u64 > self.limit_bytes {
            return Err(self.fail(
                ErrorCode::Limit,
                message!(
                    "a page of ",
                    size,
                    " bytes would bring the arena to ",
                    self.reserved + size as u64,
                    " bytes, over its limit of ",
                    self.limit_bytes,
                    " bytes"
                ),
            ));
        }
        let cached = (size == self.page_size).then(|| self.spare.pop()).flatten();
        let base = match (cached, self.pager) {
            (Some(page), _) => page.base,
            (None, Pager::Builtin) => match Layout::from_size_align(size, PAGE_ALIGN) {
                // SAFETY: the layout has a non-zero size (size >= 8 by construction).
                Ok(layout) => unsafe { std::alloc::alloc(layout) },
                Err(_) => ptr::null_mut(),
            },
            // SAFETY: the host promised in its config that `alloc` may be called with `host`.
            (None, Pager::Host { alloc, host, .. }) => unsafe { alloc(host, size) as *mut u8 },
        };
        if base.is_null() {
            return Err(self.fail(
                ErrorCode::OutOfMemory,
                message!("the page allocator returned no memory for ", size, " bytes"),
            ));
        }
        if base.addr() % ALIGN != 0 {
            self.release(Page { base, size });
            return Err(self.fail(
                ErrorCode::Config,
                message!(
                    "the host's page_alloc returned ",
                    Hex(base.addr()),
                    ", not aligned to ",
                    ALIGN,
                    " bytes"
                ),
            ));
        }
        if base.addr().checked_add(size + END_ROOM).is_none() {
            self.release(Page { base, size });
            return Err(self.fail(
                ErrorCode::Config,
                message!(
                    "the host's page_alloc returned ",
                    Hex(base.addr()),
                    ", whose ",
                    size,
                    " bytes would end within ",
                    END_ROOM,
                    " bytes of the end of the address space"
                ),
            ));
        }
        if let Err(page) = fallible::push(&mut self.pages, Page { base, size }) {
            self.release(page);
            return Err(self.fail(
                ErrorCode::OutOfMemory,
                "no memory to keep track of another page",
            ));
        }
        self.reserved += size as u64;
        Ok(base)
    }

    fn release(&self, page: Page) {
        match self.pager {
            Pager::Builtin => {
                if let Ok(layout) = Layout::from_size_align(page.size, PAGE_ALIGN) {
                    // SAFETY: `page` came from `std::alloc::alloc` with this very layout.
                    unsafe { std::alloc::dealloc(page.base, layout) }
                }
            }
            // SAFETY: `page` came from the host's `alloc` with this size and host.
            Pager::Host { free, host, .. } => unsafe { free(host, page.base.cast(), page.size) },
        }
    }

    /// Empties the arena for the next method, as a new arena: every page given back.
    #[inline(never)]
    pub(crate) fn reset(&mut self) {
        self.give_back_pages();
        self.kinds.clear(&mut self.head.kind_packed);
        // The marks nobody read are the method's: dropped with it.
        self.head.mark_next = marks_start(&mut self.head);
        self.used_closed = 0;
        self.rebias();
        self.largest = 0;
        self.failure = 0;
        self.limit_hit = false;
        self.phases.clear();
        if let Some(by_phase) = &mut self.by_phase {
            by_phase.clear();
        }
        if let Some(events) = &mut self.trace {
            events.clear();
        }
        self.trace_sites.clear();
        self.trace_short = false;
        self.trace_mark = (0, self.schema.phases.len());
    }

    /// Every page goes to the spares (the built-in pager's pages of the page size, while they
    /// hold under `SPARE_BYTES`) or back to the pager, and the window is left empty with no
    /// page, so that the next method obtains its pages as a new arena's would (its counters,
    /// `largest` among them, then do not depend on what the arena served before).
    fn give_back_pages(&mut self) {
        // In the order they were obtained, as the JIT's arena walks its page list: a host's
        // allocator then sees the frees a JIT's would.
        let mut pages = std::mem::take(&mut self.pages);
        for page in pages.drain(..) {
            let cacheable = matches!(self.pager, Pager::Builtin) && page.size == self.page_size;
            if cacheable && (self.spare.len() + 1) * self.page_size <= SPARE_BYTES {
                if let Err(page) = fallible::push(&mut self.spare, page) {
                    self.release(page); // no memory to cache it
                }
            } else {
                self.release(page);
            }
        }
        self.pages = pages; // empty, its room kept
        self.forget_window();
    }

    /// No page and no window: the state of a new arena.
    fn forget_window(&mut self) {
        self.reserved = 0;
        self.window_start = 0;
        self.page_end = 0;
        self.head.cursor = 0;
        self.head.limit = 0;
    }

    /// Keeps `head.used_bias` such that the cursor less it is the bytes used (modulo the
    /// address space, which the bytes used of one arena never pass).
    fn rebias(&mut self) {
        self.head.used_bias = self.window_start.wrapping_sub(self.used_closed as usize);
    }

    /// Reads the phase marks the inline path left in the head, in order.
    #[inline]
    pub(crate) fn settle(&mut self) {
        if self.head.mark_next != marks_start(&mut self.head) {
            self.read_marks();
        }
    }

    /// [`RawArena::settle`]'s work, out of line (it is reached from the slow paths and the
    /// readers alike).
    #[inline(never)]
    fn read_marks(&mut self) {
        let n = marks_written(&mut self.head);
        self.head.mark_next = marks_start(&mut self.head);
        let marks = self.head.marks.get(..n).unwrap_or_default();
        self.phases.marks(marks);
    }

    /// A phase mark out of line: after the marks in the head, this one; for an arena that
    /// records kinds by phase, the kind counters' growth since the last mark goes to the phase
    /// the bytes went to, and for one recording a trace, the trace's phase events say the same.
    pub(crate) fn mark_slow(&mut self, phase: u32, op: u32) {
        self.settle();
        let position = self.phase_position();
        let interval = self.phases.mark(position, phase, op);
        if let Some(by_phase) = &mut self.by_phase {
            let total = self.kinds.total_bytes(&self.head.kind_packed);
            let slots = self.kinds.slots(&self.head.kind_packed);
            by_phase.close(interval.slot, slots, total);
        }
        if self.trace.is_some() {
            self.trace_mark(interval);
        }
    }

    /// The trace's phase events for one mark: the trace says which phase runs with "switch"
    /// events, which replay through `jitarena_set_phase` to the same bytes. The events since
    /// the last mark belong to `interval.slot`: when that is not the phase the trace named at
    /// that mark (a child phase ended inside its parent), a switch to it goes in before them.
    fn trace_mark(&mut self, interval: Interval) {
        let Some(events) = &mut self.trace else {
            return;
        };
        let (at, named) = self.trace_mark;
        let switch = |slot: usize| jitarena_event {
            op: JITARENA_EVENT_PHASE,
            arg: slot as u32,
            size: 0,
        };
        let mut ends_in = named;
        if interval.slot != named && at < events.len() {
            if events.insert(at, switch(interval.slot)).is_ok() {
                ends_in = interval.slot;
            } else {
                self.trace_short = true;
            }
        }
        if interval.running != ends_in {
            self.trace_short |= events.push(switch(interval.running)).is_err();
        }
        self.trace_mark = (events.len(), interval.running);
    }

    /// The last failure code, 0 if none.
    pub(crate) fn failure(&self) -> i32 {
        self.failure
    }

    /// Bytes requested with `kind`; `u32::MAX` reads the invalid bucket.
    pub(crate) fn kind_bytes(&self, kind: u32) -> u64 {
        let packed = &self.head.kind_packed;
        match self.kind_slot(kind) {
            Some(slot) => self.kinds.bytes(packed, slot),
            None if kind == u32::MAX => self.kinds.invalid(packed).0,
            None => 0,
        }
    }

    /// Allocations with `kind`; `u32::MAX` reads the invalid bucket.
    pub(crate) fn kind_count(&self, kind: u32) -> u64 {
        let packed = &self.head.kind_packed;
        match self.kind_slot(kind) {
            Some(slot) => self.kinds.count(packed, slot),
            None if kind == u32::MAX => self.kinds.invalid(packed).1,
            None => 0,
        }
    }

    /// The slot of a configured kind.
    fn kind_slot(&self, kind: u32) -> Option<usize> {
        ((kind as usize) < self.schema.kinds.len()).then_some(kind as usize)
    }

    /// Adds this arena's per-kind counters into dense per-kind sums (`kind_count + 1` slots,
    /// the last for invalid kinds); dense, so that the additions vectorize.
    pub(crate) fn add_kinds_to(&self, bytes: &mut [u64], counts: &mut [u64]) {
        let kinds = self.schema.kinds.len();
        let packed = &self.head.kind_packed;
        let (invalid_bytes, invalid_count) = self.invalid_bucket();
        // `kinds + 1` slots each, the last for the invalid bucket.
        let sums = bytes.iter_mut().zip(counts.iter_mut()).take(kinds + 1);
        for (slot, (sum_b, sum_c)) in sums.enumerate() {
            let (b, c) = match slot < kinds {
                true => (
                    self.kinds.bytes(packed, slot),
                    self.kinds.count(packed, slot),
                ),
                false => (invalid_bytes, invalid_count),
            };
            *sum_b += b;
            *sum_c += c;
        }
    }

    /// The invalid bucket's (bytes, count), looking at the unnamed slots only if they were used.
    fn invalid_bucket(&self) -> (u64, u64) {
        self.kinds.invalid(&self.head.kind_packed)
    }

    /// Bytes used in `phase`; an out-of-range phase reads the "no phase" bucket.
    pub(crate) fn phase_bytes(&mut self, phase: u32) -> u64 {
        self.settle();
        let slot = (phase as usize).min(self.schema.phases.len());
        self.phases.bytes(slot, self.phase_position())
    }

    /// Where the phases' count stands: bytes used, or bytes requested in an arena that
    /// records kinds by phase (whose record holds, per phase, its kinds' requested bytes,
    /// adding up to the phase's).
    fn phase_position(&self) -> u64 {
        match self.by_phase {
            Some(_) => self.total_bytes(),
            None => self.used_bytes(),
        }
    }

    /// Bytes requested with `kind` while `phase` was current (out-of-range phase: "no phase";
    /// `u32::MAX` kind: the invalid bucket; other out-of-range kinds, or kinds by phase off: 0).
    pub(crate) fn phase_kind_bytes(&self, phase: u32, kind: u32) -> u64 {
        let Some(by_phase) = &self.by_phase else {
            return 0;
        };
        let kinds = self.schema.kinds.len();
        let k = match kind {
            k if (k as usize) < kinds => k as usize,
            u32::MAX => kinds,
            _ => return 0,
        };
        let p = (phase as usize).min(self.schema.phases.len());
        let closed = by_phase.closed(p, k);
        if p == self.phases.running() {
            let slots = self.kinds.slots(&self.head.kind_packed);
            let open = by_phase.growth(slots, self.total_bytes(), k);
            closed.wrapping_add(open)
        } else {
            closed
        }
    }

    /// Bytes requested, all kinds: the sum of every kind slot.
    pub(crate) fn total_bytes(&self) -> u64 {
        self.kinds.total_bytes(&self.head.kind_packed)
    }

    /// Allocations, all kinds.
    pub(crate) fn total_count(&self) -> u64 {
        self.kinds.sum_counts(&self.head.kind_packed, 0..SLOTS)
    }

    /// Rounded bytes handed out.
    pub(crate) fn used_bytes(&self) -> u64 {
        self.used_closed + (self.head.cursor - self.window_start) as u64
    }

    /// Page bytes held.
    pub(crate) fn reserved_bytes(&self) -> u64 {
        self.reserved
    }

    /// Pages held.
    pub(crate) fn page_count(&self) -> u64 {
        self.pages.len() as u64
    }

    /// The largest request.
    pub(crate) fn largest_alloc(&self) -> u64 {
        self.largest
    }

    /// Whether a request failed on the limit.
    pub(crate) fn limit_hit(&self) -> bool {
        self.limit_hit
    }

    /// All counters at once, laid out against the schema.
    pub(crate) fn counters(&mut self) -> Counters {
        self.settle();
        let kinds = self.schema.kinds.len();
        let packed = &self.head.kind_packed;
        let mut kind_bytes: Vec<u64> = (0..kinds).map(|k| self.kinds.bytes(packed, k)).collect();
        kind_bytes.push(self.kind_bytes(u32::MAX));
        let mut kind_count: Vec<u64> = (0..kinds).map(|k| self.kinds.count(packed, k)).collect();
        kind_count.push(self.kind_count(u32::MAX));
        let used = self.phase_position();
        let phase_bytes = (0..self.phases.slots())
            .map(|p| self.phases.bytes(p, used))
            .collect();
        Counters {
            kind_bytes,
            kind_count,
            phase_bytes,
            used_bytes: self.used_bytes(),
            reserved_bytes: self.reserved,
            page_count: self.page_count(),
            largest_alloc: self.largest,
            limit_hit: self.limit_hit,
        }
    }
}

impl RawArena {
    /// This method's counters, sparse, into `out` (its vectors are reused). Runs once per
    /// method: one pass over the named kinds and one over the phases.
    /// Fails only when memory runs out.
    pub(crate) fn fill_counts(&mut self, out: &mut MethodCounts) -> Result<(), Error> {
        self.settle();
        let no_memory = |_| out_of_memory("no memory for the method's counters");
        let kinds = self.schema.kinds.len();
        let packed = &self.head.kind_packed;
        out.kinds.clear();
        out.kinds.try_reserve(kinds + 1).map_err(no_memory)?;
        out.phases.clear();
        out.phases
            .try_reserve(self.phases.slots())
            .map_err(no_memory)?;
        let mut named = 0u64;
        self.kinds.for_each(packed, kinds, |slot, b, c| {
            named = named.wrapping_add(b);
            if c != 0 {
                // Within the room reserved above, as the pushes below.
                let _ = fallible::push_within(&mut out.kinds, (slot as u32, b, c));
            }
        });
        let (invalid_bytes, invalid_count) = self.invalid_bucket();
        if invalid_count != 0 {
            let _ =
                fallible::push_within(&mut out.kinds, (kinds as u32, invalid_bytes, invalid_count));
        }
        let total = named.wrapping_add(invalid_bytes);
        for (slot, b) in self.phases.each_nonzero(self.phase_position()) {
            let _ = fallible::push_within(&mut out.phases, (slot as u32, b));
        }
        out.phase_kind_bytes.clear();
        if let Some(by_phase) = &self.by_phase {
            by_phase
                .nonzero(
                    self.phases.running(),
                    self.kinds.slots(&self.head.kind_packed),
                    total,
                    &mut out.phase_kind_bytes,
                )
                .map_err(|()| out_of_memory("no memory for the method's kinds by phase"))?;
        }
        out.used_bytes = self.used_bytes();
        out.reserved_bytes = self.reserved;
        out.page_count = self.page_count();
        out.largest_alloc = self.largest;
        out.limit_hit = self.limit_hit;
        Ok(())
    }
}

impl RawArena {
    /// Empties a destroyed arena to be kept for a later create (see [`super::reuse`]): reset,
    /// every page given back but one spare, taken out of the registry of live arenas (so that its old
    /// pointer is refused as any destroyed arena's is).
    pub(crate) fn retire(&mut self) {
        self.reset();
        if self.listed {
            registry::unregister(ptr::from_mut(self).addr());
            self.listed = false;
        }
        self.keep_one_page();
        // A long method's events are not held while the arena waits.
        if let Some(events) = &mut self.trace {
            events.release();
        }
        self.trace_sites = MethodSites::default();
    }

    /// Gives back every page but one of the built-in pager, kept as a spare for the next
    /// method (the first allocation after a create then asks the C library for nothing, as the
    /// .NET JIT's host keeps its slabs); a host's pages all go back to the host. The page lists
    /// keep their room.
    fn keep_one_page(&mut self) {
        let builtin = matches!(self.pager, Pager::Builtin);
        let mut kept = None;
        while let Some(page) = self.pages.pop().or_else(|| self.spare.pop()) {
            if builtin && kept.is_none() && page.size == self.page_size {
                kept = Some(page);
            } else {
                self.release(page);
            }
        }
        if let Some(page) = kept {
            if let Err(page) = fallible::push(&mut self.spare, page) {
                self.release(page); // no memory to list it
            }
        }
    }

    /// Whether a retired arena is what `setup` would make: the same schema, pages, limit,
    /// pager, trace, kinds by phase and build.
    pub(crate) fn fits(&self, setup: &ArenaSetup) -> bool {
        let same_pager = match (self.pager, setup.pager) {
            (Pager::Builtin, Pager::Builtin) => true,
            (
                Pager::Host { alloc, free, host },
                Pager::Host {
                    alloc: a,
                    free: f,
                    host: h,
                },
            ) => std::ptr::fn_addr_eq(alloc, a) && std::ptr::fn_addr_eq(free, f) && host == h,
            _ => false,
        };
        Shared::ptr_eq(&self.schema, &setup.schema)
            && self.page_size == setup.page_size
            && self.exact_pages == setup.exact_pages
            && self.limit_bytes == setup.limit_bytes
            && same_pager
            && self.trace.is_some() == setup.trace
            && self.by_phase.is_some() == setup.kinds_by_phase
            && self.build == setup.build
    }

    /// Lists a retired arena as live again, under its address. Fails only when memory for the
    /// registry runs out.
    pub(crate) fn revive(&mut self) -> Result<(), Error> {
        registry::register(ptr::from_ref::<RawArena>(self).addr())
            .map_err(|()| out_of_memory("no memory to list the arena among the live ones"))?;
        self.listed = true;
        Ok(())
    }
}

impl Drop for RawArena {
    fn drop(&mut self) {
        if self.listed {
            let found = registry::unregister(ptr::from_mut(self).addr());
            debug_assert!(
                found,
                "an arena was moved out of the box it was registered in"
            );
        }
        let pages = std::mem::take(&mut self.pages);
        for page in pages.into_iter().chain(std::mem::take(&mut self.spare)) {
            self.release(page);
        }
    }
}

// The C header casts `jitarena*` to `jitarena_head*`: the head must sit at offset 0.
const _: () = assert!(std::mem::offset_of!(RawArena, head) == 0);
// A kind handle keeps the slot in the address's low bits, below the header's alignment.
const _: () =
    assert!(std::mem::align_of::<RawArena>() == crate::sys::JITARENA_ARENA_ALIGN as usize);
