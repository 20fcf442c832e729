//! The arena, with a safe Rust API over the same core as the C ABI.
//!
//! ```
//! use jitarena::{Arena, Config, Kind, Phase};
//!
//! const AST: Kind = Kind(0);
//! const LSRA: Kind = Kind(1);
//! let config = Config::new(&["ASTNode", "LSRA"]).phases(&["Importation", "Linear scan register alloc"]);
//! let mut arena = Arena::new(&config)?;
//!
//! arena.set_phase(Phase(0));
//! let node: &mut [u64; 6] = arena.alloc(AST, [0u64; 6])?;
//! node[0] = 42;
//! arena.set_phase(Phase(1));
//! let intervals = arena.alloc_slice_copy(LSRA, &[1u32, 2, 3])?;
//! assert_eq!(intervals.len(), 3);
//!
//! let stats = arena.snapshot();
//! assert_eq!(stats.kind_bytes("ASTNode"), Some(48));
//! assert_eq!(stats.kind_bytes("LSRA"), Some(12)); // bytes requested
//! assert_eq!(stats.counters.phase_bytes[1], 16); // bytes used: rounded up to the pointer size
//! arena.reset(); // the next method: empty again, counters zeroed
//! assert_eq!(arena.snapshot().counters.total_bytes(), 0);
//! # Ok::<(), jitarena::Error>(())
//! ```

use std::marker::PhantomData;
use std::ptr::NonNull;

use crate::arena_core::kinds::PACKED_ONE;
use crate::arena_core::raw::{ArenaSetup, Pager, RawArena, ALIGN};
use crate::counters::{Counters, Schema};
use crate::error::{Error, ErrorCode};
use crate::message::message;
use crate::shared::Shared;
use crate::sys::{
    JITARENA_DEFAULT_PAGE_SIZE, JITARENA_MARK_BEGIN, JITARENA_MARK_END, JITARENA_MARK_SWITCH,
    JITARENA_MAX_KINDS, JITARENA_MAX_PAGE_SIZE, JITARENA_MIN_PAGE_SIZE,
};

/// An allocation kind: an index into the configured kind names. Kinds at or above the
/// number of names are counted in the invalid-kind bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Kind(pub u32);

/// A phase: an index into the configured phase names ([`Phase::NONE`] for none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Phase(pub u32);

impl Phase {
    /// No phase: bytes go to the "no phase" bucket.
    pub const NONE: Phase = Phase(u32::MAX);
}

/// How to build an arena: names of kinds and phases, page size, memory limit.
#[derive(Debug, Clone)]
pub struct Config {
    kinds: Vec<String>,
    phases: Vec<String>,
    page_size: usize,
    limit_bytes: u64,
    kinds_by_phase: bool,
    exact_pages: bool,
    build_id: Option<String>,
}

impl Config {
    /// A configuration with these kind names, no phases, 64 KiB pages and no limit.
    pub fn new<S: AsRef<str>>(kinds: &[S]) -> Config {
        Config {
            kinds: kinds.iter().map(|k| k.as_ref().to_string()).collect(),
            phases: Vec::new(),
            page_size: JITARENA_DEFAULT_PAGE_SIZE as usize,
            limit_bytes: 0,
            kinds_by_phase: false,
            exact_pages: false,
            build_id: None,
        }
    }

    /// Sets the phase names.
    pub fn phases<S: AsRef<str>>(mut self, phases: &[S]) -> Config {
        self.phases = phases.iter().map(|p| p.as_ref().to_string()).collect();
        self
    }

    /// Sets the page size in bytes (4 KiB to 1 GiB; a multiple of the pointer size).
    pub fn page_size(mut self, bytes: usize) -> Config {
        self.page_size = bytes;
        self
    }

    /// Sets the most page bytes the arena may hold (0: no limit).
    pub fn limit_bytes(mut self, bytes: u64) -> Config {
        self.limit_bytes = bytes;
        self
    }

    /// Records bytes per (phase, kind) ([`Arena::phase_kind_bytes`]), as the C config's
    /// `kinds_by_phase` does: taken at phase switches, so allocation costs the same.
    pub fn kinds_by_phase(mut self, on: bool) -> Config {
        self.kinds_by_phase = on;
        self
    }

    /// Sizes each new page to the descriptor and the request that opened it, not rounded up to
    /// the page size, as the C config's `exact_pages` does (the .NET JIT's arena bypassing its
    /// host).
    pub fn exact_pages(mut self, on: bool) -> Config {
        self.exact_pages = on;
        self
    }

    /// Names the JIT's build (its commit, say), written into the stats log with its records,
    /// as the C config's `build_id` does (at most `JITARENA_MAX_BUILD_ID` bytes).
    pub fn build_id(mut self, build: &str) -> Config {
        self.build_id = Some(build.to_string());
        self
    }

    pub(crate) fn setup(&self, pager: Pager) -> Result<ArenaSetup, Error> {
        let schema = Schema::new(self.kinds.clone(), self.phases.clone())?.interned()?;
        check_page_size(self.page_size)?;
        let most = crate::sys::JITARENA_MAX_BUILD_ID as usize;
        if let Some(build) = self.build_id.as_ref().filter(|b| b.len() > most) {
            let m = message!("build_id is ", build.len(), " bytes, at most ", most);
            return Err(Error::new(ErrorCode::Config, m));
        }
        Ok(ArenaSetup {
            schema,
            page_size: self.page_size,
            limit_bytes: self.limit_bytes,
            pager,
            trace: false,
            kinds_by_phase: self.kinds_by_phase,
            exact_pages: self.exact_pages,
            build: self.build_id.clone(),
        })
    }
}

/// Checks a page size against the limits of the header.
pub(crate) fn check_page_size(bytes: usize) -> Result<(), Error> {
    let (min, max) = (
        JITARENA_MIN_PAGE_SIZE as usize,
        JITARENA_MAX_PAGE_SIZE as usize,
    );
    if bytes < min || bytes > max || bytes % ALIGN != 0 {
        return Err(Error::new(
            ErrorCode::Config,
            message!(
                "page size ",
                bytes,
                " is not a multiple of the pointer size between ",
                min,
                " and ",
                max
            ),
        ));
    }
    Ok(())
}

/// The counters of an arena at one moment, with the names they refer to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The kind and phase names.
    pub schema: Shared<Schema>,
    /// The counters, laid out against `schema`.
    pub counters: Counters,
}

impl Snapshot {
    /// Bytes requested with the kind of this name.
    pub fn kind_bytes(&self, name: &str) -> Option<u64> {
        let i = self.schema.kinds.iter().position(|k| k == name)?;
        Some(self.counters.kind_bytes[i])
    }
}

/// An arena for one thread at a time: allocations live until [`Arena::reset`] or drop, and are
/// counted by kind and phase. Values put in it are never dropped (as with `bumpalo`).
pub struct Arena {
    raw: NonNull<RawArena>,
    /// Not `Sync`: allocation mutates the arena through `&self`.
    _not_sync: PhantomData<std::cell::Cell<()>>,
}

// SAFETY: an `Arena` owns its `RawArena` exclusively; moving it to another thread moves that
// ownership (the pages and the host context travel with it, as a C caller may do too).
unsafe impl Send for Arena {}

impl Arena {
    /// A new arena with the built-in page allocator.
    pub fn new(config: &Config) -> Result<Arena, Error> {
        // Before anything takes a lock of the process-wide state (schemas, registry).
        crate::fork::install_handlers();
        let raw = RawArena::new(config.setup(Pager::Builtin)?)?;
        Ok(Arena {
            raw: NonNull::from(Box::leak(raw)),
            _not_sync: PhantomData,
        })
    }

    /// A new arena with the built-in page allocator for kind and phase names already gathered
    /// in a [`Schema`] (as a trace or a log carries them): the replay harness's arena.
    /// `kinds_by_phase` does what [`Config::kinds_by_phase`] does.
    pub fn from_schema(
        schema: Shared<Schema>,
        page_size: usize,
        limit_bytes: u64,
        kinds_by_phase: bool,
    ) -> Result<Arena, Error> {
        crate::fork::install_handlers();
        check_page_size(page_size)?;
        let raw = RawArena::new(ArenaSetup {
            schema,
            page_size,
            limit_bytes,
            pager: Pager::Builtin,
            trace: false,
            kinds_by_phase,
            exact_pages: false,
            build: None,
        })?;
        Ok(Arena {
            raw: NonNull::from(Box::leak(raw)),
            _not_sync: PhantomData,
        })
    }

    /// Writes this method's counters (what its stats-log record holds) into `out`, reusing its
    /// buffers. Fails only when memory runs out.
    pub fn fill_counts(&self, out: &mut crate::counters::MethodCounts) -> Result<(), Error> {
        self.raw_mut().fill_counts(out)
    }

    fn raw(&self) -> &RawArena {
        // SAFETY: `raw` is a live box owned by `self`; no `&mut` to it outlives a method call.
        unsafe { self.raw.as_ref() }
    }

    #[allow(clippy::mut_from_ref)]
    fn raw_mut(&self) -> &mut RawArena {
        // SAFETY: `Arena` is !Sync and no method keeps a reference to the `RawArena` past its
        // return, so this is the only reference while it lives (the same argument as `Cell`).
        unsafe { &mut *self.raw.as_ptr() }
    }

    /// Allocates `size` bytes of `kind`, aligned to the pointer size, uninitialised; the same
    /// fast path as the C header's `jitarena_alloc` for a size known at run time.
    #[inline]
    pub fn alloc_bytes(&self, size: usize, kind: Kind) -> Result<NonNull<u8>, Error> {
        let raw = self.raw_mut();
        let head = &mut raw.head;
        // The header's test for a size not known at compile time: the rounded size less one
        // against the bytes left (size 0, whose rounded size less one is usize::MAX, never
        // fits), then the cursor moved up past the block.
        let block = head.cursor;
        let rounded_less_one = size.wrapping_sub(1) | (ALIGN - 1);
        if rounded_less_one < head.limit.wrapping_sub(block) {
            head.cursor = block + rounded_less_one + 1;
            let slot = kind.0.min(JITARENA_MAX_KINDS) as usize;
            // Within the window, so at most a page: it stays below the count's 2^31.
            head.kind_packed[slot] = head.kind_packed[slot].wrapping_add(PACKED_ONE + size as u64);
            // SAFETY: `block` lies in the current page (the window below `limit`, its end, is
            // not empty), so it is not 0; the page's address was exposed when it was obtained.
            return Ok(unsafe {
                NonNull::new_unchecked(std::ptr::with_exposed_provenance_mut(block))
            });
        }
        let p = raw.alloc_slow(size, kind.0, 0)?;
        // SAFETY: the slow path never returns a null pointer on success.
        Ok(unsafe { NonNull::new_unchecked(p) })
    }

    /// Moves `value` into the arena. Alignments above the pointer size are honoured by
    /// over-allocating.
    // Each call returns fresh memory, so `&mut` results never alias (as in bumpalo).
    #[allow(clippy::mut_from_ref)]
    pub fn alloc<T>(&self, kind: Kind, value: T) -> Result<&mut T, Error> {
        let p = self
            .alloc_layout(std::alloc::Layout::new::<T>(), kind)?
            .cast::<T>();
        // SAFETY: `p` is fresh, aligned for T, large enough and exclusively ours.
        unsafe {
            p.as_ptr().write(value);
            Ok(&mut *p.as_ptr())
        }
    }

    /// Copies a slice into the arena.
    #[allow(clippy::mut_from_ref)]
    pub fn alloc_slice_copy<T: Copy>(&self, kind: Kind, src: &[T]) -> Result<&mut [T], Error> {
        let layout = std::alloc::Layout::for_value(src);
        let p = self.alloc_layout(layout, kind)?.cast::<T>();
        // SAFETY: `p` is fresh, aligned for T and has room for `src.len()` values of T.
        unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr(), p.as_ptr(), src.len());
            Ok(std::slice::from_raw_parts_mut(p.as_ptr(), src.len()))
        }
    }

    fn alloc_layout(&self, layout: std::alloc::Layout, kind: Kind) -> Result<NonNull<u8>, Error> {
        if layout.align() <= ALIGN {
            return self.alloc_bytes(layout.size(), kind);
        }
        let padded = layout
            .size()
            .checked_add(layout.align() - ALIGN)
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::SizeOverflow,
                    message!(layout.size(), " bytes aligned to ", layout.align()),
                )
            })?;
        let p = self.alloc_bytes(padded, kind)?;
        // Computed from the address rather than with `align_offset`, which may give up.
        let addr = p.as_ptr().addr();
        let offset = addr.next_multiple_of(layout.align()) - addr;
        // SAFETY: `addr` is a multiple of ALIGN and the alignment a larger power of two, so
        // `offset <= align - ALIGN`: the padding, within the block of `padded` bytes.
        Ok(unsafe { NonNull::new_unchecked(p.as_ptr().add(offset)) })
    }

    /// From now on, bytes go to `phase` alone (the header's `jitarena_set_phase`: an inline
    /// mark, read out of line later).
    pub fn set_phase(&self, phase: Phase) {
        self.mark(phase.0, JITARENA_MARK_SWITCH);
    }

    /// Begins `phase` inside the running one (the header's `jitarena_phase_begin`).
    pub fn phase_begin(&self, phase: Phase) {
        self.mark(phase.0, JITARENA_MARK_BEGIN);
    }

    /// Ends `phase`, the running one or a child ended inside it (the header's
    /// `jitarena_phase_end`).
    pub fn phase_end(&self, phase: Phase) {
        self.mark(phase.0, JITARENA_MARK_END);
    }

    /// The header's `jitarena_phase_mark`: one mark into the head, or out of line when the
    /// head's marks are full or the arena takes them all out of line.
    #[inline]
    fn mark(&self, phase: u32, op: u32) {
        let raw = self.raw_mut();
        let head = &mut raw.head;
        if head.mark_next < head.mark_limit {
            let at = crate::arena_core::raw::marks_written(head);
            let used = head.cursor.wrapping_sub(head.used_bias);
            if let Some(m) = head.marks.get_mut(at) {
                *m = crate::sys::jitarena_mark { used, phase, op };
                head.mark_next += std::mem::size_of::<crate::sys::jitarena_mark>();
                return;
            }
        }
        raw.mark_slow(phase, op);
    }
    /// Empties the arena for the next method: memory is reused, counters are zeroed.
    pub fn reset(&mut self) {
        self.raw_mut().reset();
    }

    /// Ends a method: folds the counters into the process-wide aggregate and appends a record to
    /// the stats log if one is open (see [`crate::process`]). Reset the arena afterwards.
    pub fn method_done(&mut self, method: crate::process::MethodRef<'_>) -> Result<(), Error> {
        crate::recorder::method_done(self.raw_mut(), method)
    }

    /// The C handle of this arena, for C or C++ code that allocates from it through the header's
    /// inline path while this `Arena` owns it (and outlives that use, on the same thread).
    pub fn as_c_ptr(&self) -> *mut crate::sys::jitarena {
        self.raw.as_ptr().cast()
    }

    /// The last failure since creation or reset.
    pub fn failure(&self) -> Option<ErrorCode> {
        ErrorCode::from_raw(self.raw().failure())
    }

    /// The kind with this name, if configured.
    pub fn kind(&self, name: &str) -> Option<Kind> {
        self.raw()
            .schema
            .kinds
            .iter()
            .position(|k| k == name)
            .map(|i| Kind(i as u32))
    }

    /// The phase with this name, if configured.
    pub fn phase(&self, name: &str) -> Option<Phase> {
        self.raw()
            .schema
            .phases
            .iter()
            .position(|p| p == name)
            .map(|i| Phase(i as u32))
    }

    /// Bytes requested with `kind` while `phase` was current, for an arena configured with
    /// [`Config::kinds_by_phase`] (else 0). [`Phase::NONE`] (or any phase past the configured
    /// ones) reads the "no phase" bucket; `Kind(u32::MAX)` the invalid-kind bucket; other kinds
    /// past the configured ones read 0.
    pub fn phase_kind_bytes(&self, phase: Phase, kind: Kind) -> u64 {
        self.raw().phase_kind_bytes(phase.0, kind.0)
    }

    /// The counters now.
    pub fn snapshot(&self) -> Snapshot {
        let raw = self.raw_mut();
        Snapshot {
            schema: Shared::clone(&raw.schema),
            counters: raw.counters(),
        }
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        // SAFETY: `raw` came from `Box::leak` in `Arena::new` and is dropped only here.
        drop(unsafe { Box::from_raw(self.raw.as_ptr()) });
    }
}

#[cfg(test)]
mod drain_tests;
