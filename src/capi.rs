//! The C ABI declared in `include/jitarena.h`. Every function checks its pointers, turns
//! failures into codes, and never unwinds into the caller: the code it reaches holds no panic
//! (`tests/footprint.rs`), and a build that unwinds anyway catches one at the boundary.

use std::borrow::Cow;
use std::ffi::{c_char, c_int, CStr};
use std::mem::{offset_of, size_of};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use crate::arena::check_page_size;
use crate::arena_core::raw::{ArenaSetup, Pager, RawArena};
use crate::arena_core::registry::{self, Owner};
use crate::arena_core::reuse;
use crate::counters::{lock_names_seen, NamesSeen, Schema};
use crate::error::{last_error_message, set_last_error, Error, ErrorCode};
use crate::fallible::{self, out_of_memory};
use crate::fork;
use crate::message::{message, Message};
use crate::recorder::{self, MethodRef};
use crate::shared::Shared;
use crate::sys::{
    jitarena, jitarena_config, jitarena_method, JITARENA_ABI_VERSION, JITARENA_DEFAULT_PAGE_SIZE,
};

/// Runs `f`, turning an error or a panic into `fallback` and this thread's last error.
pub(crate) fn guard<T>(fallback: T, f: impl FnOnce() -> Result<T, Error>) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(value)) => value,
        Ok(Err(err)) => {
            failed(err);
            fallback
        }
        Err(_) => {
            panicked();
            fallback
        }
    }
}

/// Records a failure as this thread's last error. Out of line, as [`panicked`]: `guard` is
/// copied into every entry point, and this saves each copy the error's handling (see
/// BENCHMARKS.md, "Footprint").
#[inline(never)]
fn failed(err: Error) {
    set_last_error(&err);
}

/// Records a panic caught at the C boundary as this thread's last error.
#[cold]
#[inline(never)]
fn panicked() {
    set_last_error(&Error::new(
        ErrorCode::Internal,
        "a panic was caught at the C boundary",
    ));
}

/// The live arena behind a C pointer, or the error for a NULL or dead one. The pointer is
/// looked up in the registry of live arenas before anything is read through it, so a destroyed
/// or foreign pointer is refused without touching its memory.
///
/// # Safety
/// `arena` is NULL, or a pointer that this thread alone uses for the call if it is a live arena.
pub(crate) unsafe fn arena_mut<'a>(arena: *mut jitarena) -> Result<&'a mut RawArena, Error> {
    let raw = live(arena.cast_const())?.cast_mut();
    // SAFETY: `raw` is the address of a live `RawArena` (listed from `RawArena::new` until its
    // drop), and per the contract no other reference to it is in use during the call.
    Ok(unsafe { &mut *raw })
}

/// The arena behind the pointer the inline path hands its slow path: NULL is refused, liveness
/// is not looked up. The inline `jitarena_alloc` has already read the arena's cursor through
/// this pointer before calling (a dead arena is undefined behaviour there, in the caller's
/// code, before this call), so a lookup could not make a dead pointer safe; it would only add
/// its lock and hash to every new page of every allocation-heavy method.
///
/// # Safety
/// `arena` is NULL or a live arena that this thread alone uses for the call.
unsafe fn arena_from_inline_path<'a>(arena: *mut jitarena) -> Result<&'a mut RawArena, Error> {
    let raw = arena.cast::<RawArena>();
    if raw.is_null() {
        return Err(Error::new(ErrorCode::Null, "the arena pointer is NULL"));
    }
    // SAFETY: per the contract, `raw` is a live `RawArena` used by this thread alone.
    Ok(unsafe { &mut *raw })
}

/// The arena behind a C pointer if it is non-null and listed as live.
fn live(arena: *const jitarena) -> Result<*const RawArena, Error> {
    let raw = arena.cast::<RawArena>();
    if raw.is_null() {
        return Err(Error::new(ErrorCode::Null, "the arena pointer is NULL"));
    }
    if registry::owner(raw.addr()).is_none() {
        return Err(Error::new(
            ErrorCode::State,
            "the arena pointer is not a live arena (destroyed?)",
        ));
    }
    Ok(raw)
}

/// Reads an arena for a reader function; NULL or dead arenas read as `None`.
///
/// # Safety
/// As for [`arena_mut`], for reading only.
unsafe fn arena_ref<'a>(arena: *const jitarena) -> Option<&'a RawArena> {
    let raw = live(arena).ok()?;
    // SAFETY: `raw` is a live `RawArena`, and per the contract nothing mutates it during the
    // call.
    Some(unsafe { &*raw })
}

/// The ABI version of this library.
#[no_mangle]
pub extern "C" fn jitarena_abi_version() -> u32 {
    JITARENA_ABI_VERSION
}

/// A static text for a failure code.
#[no_mangle]
pub extern "C" fn jitarena_strerror(code: c_int) -> *const c_char {
    let text: &'static CStr = match ErrorCode::from_raw(code) {
        None if code == 0 => c"success",
        None => c"unknown jitarena error code",
        Some(ErrorCode::Null) => c"a required pointer argument was NULL",
        Some(ErrorCode::OutOfMemory) => c"out of memory",
        Some(ErrorCode::SizeOverflow) => c"requested size too large to represent",
        Some(ErrorCode::Limit) => c"the arena's memory limit would be exceeded",
        Some(ErrorCode::Config) => c"invalid configuration or argument",
        Some(ErrorCode::Internal) => c"internal error caught at the API boundary",
        Some(ErrorCode::Io) => c"file input/output error",
        Some(ErrorCode::State) => c"call out of order, or not a live arena",
    };
    text.as_ptr()
}

/// This thread's last failure message.
#[no_mangle]
pub extern "C" fn jitarena_last_error_message() -> *const c_char {
    last_error_message()
}

fn default_config() -> jitarena_config {
    jitarena_config {
        struct_size: size_of::<jitarena_config>(),
        kind_names: ptr::null(),
        kind_count: 0,
        phase_count: 0,
        phase_names: ptr::null(),
        page_size: JITARENA_DEFAULT_PAGE_SIZE as usize,
        limit_bytes: 0,
        page_alloc: None,
        page_free: None,
        host: ptr::null_mut(),
        reserved: 0,
        kinds_by_phase: 0,
        reserved2: 0,
        build_id: ptr::null(),
        reserved3: 0,
        exact_pages: 0,
    }
}

/// Fills a config with the defaults.
///
/// # Safety
/// `config` is NULL or points to writable memory for a `jitarena_config`.
#[no_mangle]
pub unsafe extern "C" fn jitarena_config_init(config: *mut jitarena_config) {
    if !config.is_null() {
        // SAFETY: non-null and writable per the contract.
        unsafe { config.write(default_config()) };
    }
}

/// Reads a caller's config, taking the fields its `struct_size` covers and defaults for the
/// rest (a config from an older header).
///
/// # Safety
/// `config` points to at least `struct_size` readable bytes.
unsafe fn read_config(config: *const jitarena_config) -> Result<jitarena_config, Error> {
    if config.is_null() {
        return Err(Error::new(ErrorCode::Null, "the config pointer is NULL"));
    }
    // SAFETY: every config starts with struct_size, a usize.
    let size = unsafe { ptr::read_unaligned(config.cast::<usize>()) };
    let full = size_of::<jitarena_config>();
    if size < size_of::<usize>() || size > full {
        return Err(Error::new(
            ErrorCode::Config,
            message!(
                "config.struct_size is ",
                size,
                "; this library knows sizes up to ",
                full,
                " (call jitarena_config_init first)"
            ),
        ));
    }
    let mut out = default_config();
    macro_rules! take {
        ($($field:ident),*) => {$(
            let end = offset_of!(jitarena_config, $field) + size_of_val(&out.$field);
            if end <= size {
                // SAFETY: the field lies within the `size` bytes the caller provides.
                out.$field = unsafe { ptr::read_unaligned(ptr::addr_of!((*config).$field)) };
            }
        )*};
    }
    take!(
        kind_names,
        kind_count,
        phase_count,
        phase_names,
        page_size,
        limit_bytes,
        page_alloc,
        page_free,
        host,
        kinds_by_phase,
        build_id,
        exact_pages
    );
    Ok(out)
}

/// Copies `count` C strings into owned names.
///
/// # Safety
/// `names` is NULL or points to `count` pointers, each NULL or a NUL-terminated string.
unsafe fn read_names(
    what: &str,
    names: *const *const c_char,
    count: u32,
) -> Result<Vec<String>, Error> {
    if count == 0 {
        return Ok(Vec::new());
    }
    if names.is_null() {
        return Err(Error::new(
            ErrorCode::Config,
            message!(what, "_count is ", count, " but ", what, "_names is NULL"),
        ));
    }
    let no_memory = || out_of_memory("no memory to copy the names");
    let mut out = Vec::new();
    out.try_reserve_exact(count as usize)
        .map_err(|_| no_memory())?;
    for i in 0..count as usize {
        // SAFETY: `names` has `count` entries per the contract.
        let p = unsafe { *names.add(i) };
        if p.is_null() {
            return Err(Error::new(
                ErrorCode::Config,
                message!(what, " ", i, " has a NULL name"),
            ));
        }
        // SAFETY: a non-null entry is a NUL-terminated string per the contract. (Not
        // `CStr::to_str`, whose code links the standard library's panic machinery.)
        let name = std::str::from_utf8(unsafe { CStr::from_ptr(p) }.to_bytes()).map_err(|_| {
            Error::new(
                ErrorCode::Config,
                message!(what, " ", i, "'s name is not UTF-8"),
            )
        })?;
        let name = fallible::string(name).ok_or_else(no_memory)?;
        let _ = fallible::push_within(&mut out, name); // within the room reserved
    }
    Ok(out)
}

/// A name array's pointers as addresses, to compare (one `memcmp`) with a [`NamesSeen`] list.
fn addresses(names: &[*const c_char]) -> &[usize] {
    // SAFETY: a pointer and a `usize` have one size and alignment; its bits are read as an
    // address (never turned back into a pointer), for the length of the same slice.
    unsafe { std::slice::from_raw_parts(names.as_ptr().cast::<usize>(), names.len()) }
}

/// The entries of a name array (none when `count` is 0).
///
/// # Safety
/// `names` is NULL with `count` 0, or points to `count` pointers.
unsafe fn entries<'a>(names: *const *const c_char, count: u32) -> &'a [*const c_char] {
    if count == 0 || names.is_null() {
        return &[];
    }
    // SAFETY: `count` readable pointers per the contract.
    unsafe { std::slice::from_raw_parts(names, count as usize) }
}

/// The schema of a config whose name arrays hold the very pointers the last create that read
/// its names was given, or `None`.
///
/// # Safety
/// As for `jitarena_create`.
#[inline(never)]
unsafe fn schema_seen(c: &jitarena_config) -> Option<Shared<Schema>> {
    // SAFETY: forwarded contract on the name arrays.
    let (kinds, phases) = unsafe {
        (
            entries(c.kind_names, c.kind_count),
            entries(c.phase_names, c.phase_count),
        )
    };
    let seen = lock_names_seen();
    let last = seen.as_ref()?;
    let same =
        addresses(kinds) == last.kinds.as_slice() && addresses(phases) == last.phases.as_slice();
    same.then(|| Shared::clone(&last.schema))
}

/// Remembers a config's name arrays with the schema checked from them, for the next create
/// (nothing when memory for the copies runs out).
///
/// # Safety
/// As for `jitarena_create`.
#[inline(never)]
unsafe fn remember_names(c: &jitarena_config, schema: &Shared<Schema>) {
    // SAFETY: forwarded contract on the name arrays.
    let (kinds, phases) = unsafe {
        (
            entries(c.kind_names, c.kind_count),
            entries(c.phase_names, c.phase_count),
        )
    };
    let copy = |names: &[*const c_char]| {
        let mut v = Vec::new();
        v.try_reserve_exact(names.len()).ok()?;
        for &address in addresses(names) {
            let _ = fallible::push_within(&mut v, address); // within the room reserved
        }
        Some(v)
    };
    if let (Some(kinds), Some(phases)) = (copy(kinds), copy(phases)) {
        let seen = NamesSeen {
            kinds,
            phases,
            schema: Shared::clone(schema),
        };
        *lock_names_seen() = Some(seen);
    }
}

/// The checked schema of a config's names: the last create's when the arrays hold the same
/// pointers, else read, checked and interned.
///
/// # Safety
/// As for `jitarena_create`.
unsafe fn schema_of(c: &jitarena_config) -> Result<Shared<Schema>, Error> {
    // SAFETY: forwarded contract.
    if let Some(schema) = unsafe { schema_seen(c) } {
        return Ok(schema);
    }
    // SAFETY: forwarded contract.
    unsafe { schema_read(c) }
}

/// [`schema_of`] for names not seen before: read, checked, interned and remembered.
///
/// # Safety
/// As for `jitarena_create`.
#[inline(never)]
unsafe fn schema_read(c: &jitarena_config) -> Result<Shared<Schema>, Error> {
    // SAFETY: forwarded contract on the name arrays.
    let kinds = unsafe { read_names("kind", c.kind_names, c.kind_count)? };
    // SAFETY: as above.
    let phases = unsafe { read_names("phase", c.phase_names, c.phase_count)? };
    let schema = Schema::new(kinds, phases)?.interned()?;
    // SAFETY: forwarded contract.
    unsafe { remember_names(c, &schema) };
    Ok(schema)
}

/// Turns a caller's config into a checked setup.
///
/// # Safety
/// As for `jitarena_create`.
#[inline(never)]
unsafe fn setup_from_c(config: *const jitarena_config) -> Result<ArenaSetup, Error> {
    // SAFETY: forwarded contract.
    let c = unsafe { read_config(config)? };
    if c.kind_count > crate::sys::JITARENA_MAX_KINDS {
        return Err(Error::new(
            ErrorCode::Config,
            message!(
                "kind_count is ",
                c.kind_count,
                ", at most ",
                crate::sys::JITARENA_MAX_KINDS,
                " kinds"
            ),
        ));
    }
    if c.phase_count > crate::sys::JITARENA_MAX_PHASES {
        return Err(Error::new(
            ErrorCode::Config,
            message!("phase_count is ", c.phase_count, ", at most 1024 phases"),
        ));
    }
    // SAFETY: forwarded contract on the name arrays.
    let schema = unsafe { schema_of(&c)? };
    check_page_size(c.page_size)?;
    let pager = match (c.page_alloc, c.page_free) {
        (None, None) => Pager::Builtin,
        (Some(alloc), Some(free)) => Pager::Host {
            alloc,
            free,
            host: c.host,
        },
        _ => {
            return Err(Error::new(
                ErrorCode::Config,
                "page_alloc and page_free must be set together",
            ));
        }
    };
    // SAFETY: NULL or NUL-terminated per the contract.
    let build = unsafe { build_arg(c.build_id)? };
    Ok(ArenaSetup {
        schema,
        page_size: c.page_size,
        limit_bytes: c.limit_bytes,
        pager,
        trace: recorder::trace_recording()?,
        kinds_by_phase: c.kinds_by_phase != 0,
        exact_pages: c.exact_pages != 0,
        build,
    })
}

/// Creates an arena.
///
/// # Safety
/// `config` is NULL or a config filled by `jitarena_config_init` whose name arrays hold
/// `kind_count` / `phase_count` NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn jitarena_create(config: *const jitarena_config) -> *mut jitarena {
    guard(ptr::null_mut(), || {
        // Before anything takes a lock of the process-wide state (schemas, trace, registry).
        fork::install_handlers();
        // SAFETY: forwarded contract.
        let setup = unsafe { setup_from_c(config)? };
        let arena = match reuse::take(&setup) {
            Some(kept) => kept?,
            None => RawArena::new(setup)?,
        };
        let raw = Box::into_raw(arena);
        registry::hand_to_c(raw.addr());
        Ok(raw.cast::<jitarena>())
    })
}

/// Creates an arena for a caller compiled with this library's header (`jitarena_create` as
/// the header's macro calls it).
///
/// # Safety
/// As for `jitarena_create`.
#[no_mangle]
pub unsafe extern "C" fn jitarena_create_checked(
    config: *const jitarena_config,
    abi_version: u32,
    head_size: usize,
) -> *mut jitarena {
    let ours = size_of::<crate::sys::jitarena_head>();
    if abi_version != JITARENA_ABI_VERSION || head_size != ours {
        failed(Error::new(
            ErrorCode::Config,
            message!(
                "the program was compiled with jitarena.h of ABI version ",
                abi_version,
                " (an arena head of ",
                head_size,
                " bytes), but links the library of ABI version ",
                JITARENA_ABI_VERSION,
                " (",
                ours,
                " bytes): compile it against the header that came with the library"
            ),
        ));
        return ptr::null_mut();
    }
    // SAFETY: forwarded contract.
    unsafe { jitarena_create(config) }
}

/// Destroys an arena.
///
/// # Safety
/// `arena` is NULL or a live arena from `jitarena_create`, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn jitarena_destroy(arena: *mut jitarena) {
    guard((), || {
        // SAFETY: forwarded contract.
        let raw = unsafe { arena_mut(arena)? };
        if registry::owner(ptr::from_mut(raw).addr()) != Some(Owner::C) {
            return Err(Error::new(
                ErrorCode::State,
                "the arena belongs to a Rust owner (jitarena::Arena), which frees it when dropped",
            ));
        }
        // Kept for a later create, or dropped.
        // SAFETY: an arena owned by C was made by `Box::into_raw` in `jitarena_create`; it is
        // taken back once, as retiring or dropping it takes it out of the registry (a second
        // destroy is refused above).
        reuse::keep(unsafe { Box::from_raw(ptr::from_mut(raw)) });
        Ok(())
    })
}

/// Empties an arena for the next method.
///
/// # Safety
/// `arena` is NULL or a live arena used by this thread only.
#[no_mangle]
pub unsafe extern "C" fn jitarena_reset(arena: *mut jitarena) {
    guard((), || {
        // SAFETY: forwarded contract.
        unsafe { arena_mut(arena)? }.reset();
        Ok(())
    })
}

/// The slow path of `jitarena_alloc`, naming the allocation's site (the code address a trace
/// records; NULL: unknown). The exported `jitarena_alloc_slow` is `src/driver/site.c`'s, which
/// passes its own return address. Like the inline path, it takes the arena pointer on trust
/// (NULL aside): it does not look the arena up among the live ones.
///
/// # Safety
/// `arena` is NULL or a live arena used by this thread only.
#[no_mangle]
pub unsafe extern "C" fn jitarena_alloc_slow_at(
    arena: *mut jitarena,
    size: usize,
    kind: u32,
    site: *const std::ffi::c_void,
) -> *mut std::ffi::c_void {
    guard(ptr::null_mut(), || {
        // SAFETY: forwarded contract.
        let raw = unsafe { arena_from_inline_path(arena)? };
        // A build that cannot unwind (the JIT's archive) has nothing to catch here: the call
        // stays inline, as the trace's every allocation comes this way.
        #[cfg(panic = "abort")]
        {
            // What the unwinding build calls on a panic, named so that it is used in both.
            let _caught: fn(&mut RawArena, &'static str) = RawArena::fail_internal;
            let p = raw.alloc_slow(size, kind, site.addr());
            trace_part_if_full(raw);
            return p.map(|p| p.cast());
        }
        // The closure reborrows `raw` for the call only; the arena is reached again through
        // `raw` itself afterwards, never through a pointer taken before that reborrow.
        #[cfg(not(panic = "abort"))]
        match catch_unwind(AssertUnwindSafe(|| {
            let p = raw.alloc_slow(size, kind, site.addr());
            trace_part_if_full(raw);
            p
        })) {
            Ok(result) => result.map(|p| p.cast()),
            Err(_) => {
                raw.fail_internal("a panic was caught in jitarena_alloc_slow");
                Err(Error::new(
                    ErrorCode::Internal,
                    "a panic was caught in jitarena_alloc_slow",
                ))
            }
        }
    })
}

/// The out-of-line part of a phase mark: the head's marks read, then this one.
///
/// # Safety
/// `arena` is NULL or a live arena used by this thread only.
#[no_mangle]
pub unsafe extern "C" fn jitarena_phase_mark_slow(arena: *mut jitarena, phase: u32, op: u32) {
    guard((), || {
        // SAFETY: forwarded contract. Taken on trust as the inline path's other slow path is:
        // the inline mark has read the head through this pointer already.
        let raw = unsafe { arena_from_inline_path(arena)? };
        raw.mark_slow(phase, op);
        trace_part_if_full(raw);
        Ok(())
    })
}

/// While a trace is recorded: once the arena's buffer of events is full, writes it as a part
/// of the method (`recorder::trace_part`).
#[inline(always)]
fn trace_part_if_full(raw: &mut RawArena) {
    if raw.trace.as_ref().is_some_and(|t| t.full()) {
        recorder::trace_part(raw);
    }
}

macro_rules! reader {
    ($(#[$doc:meta] $name:ident ($($arg:ident : $ty:ty),*) -> $ret:ty = |$a:ident| $body:expr;)*) => {$(
        #[$doc]
        ///
        /// # Safety
        /// `arena` is NULL or a live arena used by this thread only.
        #[no_mangle]
        pub unsafe extern "C" fn $name(arena: *const jitarena $(, $arg: $ty)*) -> $ret {
            guard(0 as $ret, || {
                // SAFETY: forwarded contract.
                Ok(match unsafe { arena_ref(arena) } {
                    Some($a) => $body,
                    None => 0 as $ret,
                })
            })
        }
    )*};
}

reader! {
    /// The arena's last failure code.
    jitarena_failure() -> c_int = |a| a.failure();
    /// Bytes requested with a kind.
    jitarena_kind_bytes(kind: u32) -> u64 = |a| a.kind_bytes(kind);
    /// Allocations with a kind.
    jitarena_kind_count(kind: u32) -> u64 = |a| a.kind_count(kind);
    /// Bytes requested with a kind in a phase (kinds by phase on; else 0).
    jitarena_phase_kind_bytes(phase: u32, kind: u32) -> u64 = |a| a.phase_kind_bytes(phase, kind);
    /// Bytes requested, all kinds.
    jitarena_total_bytes() -> u64 = |a| a.total_bytes();
    /// Allocations, all kinds.
    jitarena_total_count() -> u64 = |a| a.total_count();
    /// Rounded bytes handed out.
    jitarena_used_bytes() -> u64 = |a| a.used_bytes();
    /// Page bytes held.
    jitarena_reserved_bytes() -> u64 = |a| a.reserved_bytes();
    /// Pages held.
    jitarena_page_count() -> u64 = |a| a.page_count();
    /// The largest request.
    jitarena_largest_alloc() -> u64 = |a| a.largest_alloc();
    /// 1 if the limit was hit.
    jitarena_limit_hit() -> c_int = |a| c_int::from(a.limit_hit());
    /// The configured number of kinds.
    jitarena_kind_count_configured() -> u32 = |a| a.schema.kinds.len() as u32;
    /// The configured number of phases.
    jitarena_phase_count_configured() -> u32 = |a| a.schema.phases.len() as u32;
}

/// Bytes used in a phase (the marks in the head read first).
///
/// # Safety
/// `arena` is NULL or a live arena used by this thread only.
#[no_mangle]
pub unsafe extern "C" fn jitarena_phase_bytes(arena: *const jitarena, phase: u32) -> u64 {
    guard(0, || {
        // SAFETY: forwarded contract; the arena is this thread's for the call, and reading its
        // marks changes no count (the header's `const` is the caller's view).
        Ok(unsafe { arena_mut(arena.cast_mut()) }.map_or(0, |a| a.phase_bytes(phase)))
    })
}

/// A C string argument as UTF-8, or `None` for NULL; invalid UTF-8 is replaced.
///
/// # Safety
/// `s` is NULL or a NUL-terminated string.
unsafe fn opt_str<'a>(s: *const c_char) -> Result<Option<Cow<'a, str>>, Error> {
    if s.is_null() {
        return Ok(None);
    }
    // SAFETY: non-null, so NUL-terminated per the contract.
    let bytes = unsafe { CStr::from_ptr(s) }.to_bytes();
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Ok(Some(Cow::Borrowed(text)));
    }
    // As `to_string_lossy`, with an allocation that cannot abort.
    let mut lossy = Message::new();
    for chunk in bytes.utf8_chunks() {
        lossy.push(chunk.valid());
        if !chunk.invalid().is_empty() {
            lossy.push("\u{fffd}");
        }
    }
    match lossy.into_whole() {
        Some(text) => Ok(Some(Cow::Owned(text))),
        None => Err(out_of_memory("no memory for a name that is not UTF-8")),
    }
}

/// The config's build id, copied: at most `JITARENA_MAX_BUILD_ID` bytes of UTF-8.
///
/// # Safety
/// `s` is NULL or a NUL-terminated string.
unsafe fn build_arg(s: *const c_char) -> Result<Option<String>, Error> {
    if s.is_null() {
        return Ok(None);
    }
    // SAFETY: non-null, so NUL-terminated per the contract.
    let bytes = unsafe { CStr::from_ptr(s) }.to_bytes();
    let most = crate::sys::JITARENA_MAX_BUILD_ID as usize;
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Err(Error::new(ErrorCode::Config, "build_id is not UTF-8"));
    };
    if bytes.len() > most {
        let m = message!("build_id is ", bytes.len(), " bytes, at most ", most);
        return Err(Error::new(ErrorCode::Config, m));
    }
    crate::fallible::string(text)
        .map(Some)
        .ok_or_else(|| out_of_memory("no memory for the build id"))
}

/// A name argument of a reader, if it is one: a name that is not UTF-8 names no kind.
///
/// # Safety
/// `s` is NULL or a NUL-terminated string.
unsafe fn name_arg<'a>(s: *const c_char) -> Option<&'a str> {
    // SAFETY: non-null, so NUL-terminated per the contract.
    (!s.is_null()).then(|| std::str::from_utf8(unsafe { CStr::from_ptr(s) }.to_bytes()).ok())?
}

/// Turns a result into a C status code, recording the message.
fn status(result: Result<(), Error>) -> c_int {
    match result {
        Ok(()) => 0,
        Err(err) => {
            set_last_error(&err);
            err.code as c_int
        }
    }
}

/// The size of a `jitarena_method` of a header before its `failed` field: the least accepted.
const METHOD_BEFORE_FAILED: usize = offset_of!(jitarena_method, failed);

/// Ends a method: aggregate, stats log record, trace.
///
/// # Safety
/// `arena` is NULL or a live arena used by this thread only; `method` is NULL or points to a
/// `jitarena_method` whose strings are NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn jitarena_method_done(
    arena: *mut jitarena,
    method: *const jitarena_method,
) -> c_int {
    // SAFETY: forwarded contract.
    if let Some(code) = unsafe { method_done_feeding_nothing(arena, method) } {
        return code;
    }
    guard(ErrorCode::Internal as c_int, || {
        // SAFETY: forwarded contract.
        Ok(status(unsafe { method_done(arena, method) }))
    })
}

/// `jitarena_method_done` of a throughput run, which feeds nothing: the arguments checked, 0.
/// `None` for every other case (and for a bad argument, whose message the full path records).
///
/// # Safety
/// As for `jitarena_method_done`.
#[inline(always)]
unsafe fn method_done_feeding_nothing(
    arena: *mut jitarena,
    method: *const jitarena_method,
) -> Option<c_int> {
    let raw = live(arena).ok()?;
    // SAFETY: `raw` is a live arena, used by this thread only per the contract.
    if !recorder::feeds_nothing(unsafe { &*raw }) {
        return None;
    }
    if !method.is_null() {
        // SAFETY: non-null, points to a jitarena_method per the contract; struct_size first.
        let size = unsafe { ptr::read_unaligned(method.cast::<usize>()) };
        if size < METHOD_BEFORE_FAILED {
            return None;
        }
    }
    Some(0)
}

/// The body of `jitarena_method_done`.
///
/// # Safety
/// As for `jitarena_method_done`.
unsafe fn method_done(arena: *mut jitarena, method: *const jitarena_method) -> Result<(), Error> {
    // SAFETY: forwarded contract.
    let raw = unsafe { arena_mut(arena)? };
    let (mut name, mut tier, mut context, mut failed) = (None, None, -1, false);
    if !method.is_null() {
        // SAFETY: non-null, points to a jitarena_method per the contract; struct_size first.
        let size = unsafe { ptr::read_unaligned(method.cast::<usize>()) };
        let want = METHOD_BEFORE_FAILED;
        if size < want {
            let message = message!(
                "the jitarena_method has struct_size ",
                size,
                ", expected ",
                want,
                ": initialize it with JITARENA_METHOD_INIT or jitarena_method_init()"
            );
            return Err(Error::new(ErrorCode::Config, message));
        }
        // The strings are decoded only when something will write them.
        if recorder::wants_method_info(raw) {
            // SAFETY: as above.
            let m = unsafe { &*method };
            // SAFETY: the strings are NULL or NUL-terminated per the contract.
            (name, tier, context) = unsafe { (opt_str(m.name)?, opt_str(m.tier)?, m.context) };
        }
        let failed_end = offset_of!(jitarena_method, failed) + size_of::<u32>();
        if size >= failed_end {
            // SAFETY: the field lies within the `size` bytes the caller provides.
            failed = unsafe { ptr::read_unaligned(ptr::addr_of!((*method).failed)) } != 0;
        }
    }
    let info = MethodRef {
        name: name.as_deref(),
        context,
        tier: tier.as_deref(),
        failed,
    };
    recorder::method_done(raw, info)
}

/// Reads a path argument.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string.
unsafe fn path_arg<'a>(path: *const c_char) -> Result<Cow<'a, str>, Error> {
    if path.is_null() {
        return Err(Error::new(ErrorCode::Null, "the path is NULL"));
    }
    // SAFETY: non-null, so NUL-terminated per the contract.
    let bytes = unsafe { CStr::from_ptr(path) }.to_bytes();
    // Not decoded with replacements, as names are: a path so altered would name another file.
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(Cow::Borrowed(text)),
        Err(_) => Err(Error::new(
            ErrorCode::Config,
            "the path is not UTF-8: jitarena takes paths in UTF-8 (on Windows, convert a path in the ANSI code page first)",
        )),
    }
}

/// Opens the stats log.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn jitarena_log_open(path: *const c_char) -> c_int {
    guard(ErrorCode::Internal as c_int, || {
        // SAFETY: forwarded contract.
        let path = unsafe { path_arg(path) };
        fork::install_handlers();
        Ok(status(path.and_then(|p| recorder::log_open(&p))))
    })
}

/// Closes the stats log.
#[no_mangle]
pub extern "C" fn jitarena_log_close() -> c_int {
    guard(ErrorCode::Internal as c_int, || {
        Ok(status(recorder::log_close()))
    })
}

/// Starts recording a trace.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn jitarena_trace_open(path: *const c_char) -> c_int {
    guard(ErrorCode::Internal as c_int, || {
        // SAFETY: forwarded contract.
        let path = unsafe { path_arg(path) };
        fork::install_handlers();
        Ok(status(path.and_then(|p| recorder::trace_open(&p))))
    })
}

/// Stops recording the trace.
#[no_mangle]
pub extern "C" fn jitarena_trace_close() -> c_int {
    guard(ErrorCode::Internal as c_int, || {
        Ok(status(recorder::trace_close()))
    })
}

/// Sums a field over the aggregate's schemas. One copy for the four entry points that call it
/// (a `dyn` closure, not a generic one: see BENCHMARKS.md, "Footprint").
#[inline(never)]
fn aggregate_sum(f: &dyn Fn(&crate::Schema, u64, &crate::Counters) -> u64) -> u64 {
    guard(0, || Ok(recorder::aggregate_sum(f)))
}

/// Finds a kind by name in a schema: its slot, the invalid bucket for "(invalid kind)".
fn kind_slot(schema: &crate::Schema, name: &str) -> Option<usize> {
    if name == crate::counters::INVALID_KIND_NAME {
        return Some(schema.kinds.len());
    }
    schema.kinds.iter().position(|k| k == name)
}

/// Turns the aggregate on or off; returns 1 if it was on.
#[no_mangle]
pub extern "C" fn jitarena_aggregate_enable(on: c_int) -> c_int {
    c_int::from(recorder::aggregate_enable(on != 0))
}

/// Methods in the aggregate.
#[no_mangle]
pub extern "C" fn jitarena_aggregate_methods() -> u64 {
    aggregate_sum(&|_, methods, _| methods)
}

/// Bytes in the aggregate.
#[no_mangle]
pub extern "C" fn jitarena_aggregate_total_bytes() -> u64 {
    aggregate_sum(&|_, _, c| c.total_bytes())
}

/// Bytes of one kind in the aggregate.
///
/// # Safety
/// `kind_name` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn jitarena_aggregate_kind_bytes(kind_name: *const c_char) -> u64 {
    // SAFETY: forwarded contract.
    let Some(name) = (unsafe { name_arg(kind_name) }) else {
        return 0;
    };
    aggregate_sum(&|s, _, c| {
        kind_slot(s, name)
            .and_then(|i| c.kind_bytes.get(i))
            .map_or(0, |&b| b)
    })
}

/// Allocations of one kind in the aggregate.
///
/// # Safety
/// `kind_name` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn jitarena_aggregate_kind_count(kind_name: *const c_char) -> u64 {
    // SAFETY: forwarded contract.
    let Some(name) = (unsafe { name_arg(kind_name) }) else {
        return 0;
    };
    aggregate_sum(&|s, _, c| {
        kind_slot(s, name)
            .and_then(|i| c.kind_count.get(i))
            .map_or(0, |&n| n)
    })
}

/// Clears the aggregate.
#[no_mangle]
pub extern "C" fn jitarena_aggregate_reset() {
    guard((), || {
        recorder::aggregate_reset();
        Ok(())
    })
}

#[cfg(test)]
#[path = "capi_tests.rs"]
mod tests;
