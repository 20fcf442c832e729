/*
 * jitarena.h - a compiler arena allocator that counts every allocation by kind.
 *
 * This header is the contract of the jitarena library: the C API, its error codes and the
 * layout of the arena's public head, which the Rust side takes from here through bindgen.
 * It compiles as C99 and as C++ (any standard from C++11).
 *
 * Model
 * -----
 * An arena hands out memory for one compilation (one method): many small requests, freed all
 * at once by jitarena_reset() or jitarena_destroy(). Every request carries a *kind* (the .NET
 * JIT's CMK_* values, say), and optionally the arena is told the current *phase*. The arena
 * counts requested bytes and allocations per kind on its inline fast path (one addition to the
 * kind's packed counter, which holds both), and bytes used per phase from inline phase marks
 * that the library reads out of line (and, on request, bytes per phase and kind).
 *
 * What it costs, all included, against the JIT's own arena (round, bump, compare, pages
 * from the host) and its own phase calls: BENCHMARKS.md, "The whole cost".
 *
 *   jitarena_config cfg;
 *   jitarena_config_init(&cfg);
 *   cfg.kind_names = my_kind_names; cfg.kind_count = MY_KIND_COUNT;
 *   jitarena* a = jitarena_create(&cfg);
 *   void* p = jitarena_alloc(a, 48, MY_KIND_ASTNODE);      // inline, no call
 *   ...
 *   jitarena_method_done(a, &method);                       // per-method record (stats log)
 *   jitarena_reset(a);                                      // next method
 *   jitarena_destroy(a);
 *
 * Threads: one arena is used by one thread at a time (no locking inside an arena); any number
 * of arenas may be used on any number of threads at once. The process-wide state (the stats
 * log, the trace and the aggregate: see below) is thread-safe.
 *
 * Errors: no function aborts or unwinds into the caller. A function that fails returns NULL
 * or a non-zero jitarena_error code; jitarena_strerror() names a code, and
 * jitarena_last_error_message() gives this thread's last failure in detail (with file names).
 * The message is errno's contract: a failing call sets it, a succeeding call leaves it as it
 * was, so it is meaningful only right after a call that reported a failure.
 * When memory runs out, creating, using, resetting and destroying an arena, ending a method,
 * writing its stats-log record and opening a log or trace fail with JITARENA_E_OUT_OF_MEMORY
 * (a file a log was to replace is then left as it was), and what could not be done
 * is left undone whole: an arena, its record in the log and the aggregate are each updated
 * completely or not at all; a method whose trace events could not all be recorded has its
 * trace refused whole. The code a JIT links holds no panic: built with the repository's jit
 * profile (`cargo build --profile jit -p jitarena --lib`: the release profile with
 * panic = "abort"), a program linking it contains no Rust panic handler at all
 * (tests/footprint.rs checks this).
 *
 * Process-wide state
 * ------------------
 * Each copy of the library in a process has its own process-wide state: a JIT that links its
 * own copy (a baseline and a diff JIT loaded side by side by a replay tool) has its own stats
 * log, trace and aggregate, and names its own files. jitarena_method_done() feeds all three at
 * the end of each method, each behind its own lock, taken once per method and never per
 * allocation; records from many threads are appended whole.
 *
 * The stats log: one record per method (jitarena_method_done()). jitarena_log_open() opens it;
 * when no log was opened or closed with jitarena_log_open()/jitarena_log_close() before the
 * first jitarena_method_done(), the environment variable JITARENA_LOG names it. In its name,
 * "%p" becomes the process id and "%m" the file name, up to its first dot, of the module
 * (shared library, DLL or executable) that holds this copy of the library ("libclrjit" for
 * .../libclrjit.so), so that two JITs loaded side by side name two files from one pattern:
 * "logs/%m-%p.jas" gives each JIT of each worker process its own file. A file has one writer
 * (an advisory flock() on a regular file on Unix; on Windows a share mode that lets readers in
 * and no second writer): a second writer of the same file, in this process or another, fails
 * with JITARENA_E_IO and a message that says so, before the file is touched. Records are
 * written unbuffered and whole, one write per record. A failed write (a full disk, a file size
 * limit) never spoils the log: the records before it stay readable, and the failed record is
 * not in the log (the kind, phase and tier names it introduced are written again with the next
 * record that needs them). When part of it reached the file (a short write, EFBIG, ENOSPC in
 * mid-record), the file is cut back to its last whole record (ftruncate) and later records are
 * written as usual; when that cut fails (a pipe, a device), every later record is refused with
 * JITARENA_E_IO, so that no record ever lands after a torn one. A log that JITARENA_LOG names
 * and that cannot be opened fails every jitarena_method_done() with JITARENA_E_IO and the
 * reason, which is also written once to the standard error; one that could not be opened for
 * lack of memory is opened again at the next record.
 *
 * The trace: every allocation (method boundaries, kinds, sizes, phase changes) of the arenas
 * created while it is open, for `jitarena replay`. jitarena_trace_open() opens it, or
 * JITARENA_TRACE at the first jitarena_create() (a failure to open that one is written once to
 * the standard error); its name takes "%p" and "%m", and its file has one writer, as the log.
 * jitarena_method_done() appends each method's events; an arena holds at most 65,536 of them,
 * and a longer method's are written in parts as they fill, which readers take only once the
 * method's end is written (docs/formats.md).
 *
 * The aggregate: the sums of every method's counters, per kind list, read with the
 * jitarena_aggregate_* functions. Off by default (jitarena_aggregate_enable()), so that a run
 * that reads no aggregate pays nothing for it.
 *
 * fork(): a child process never writes to its parent's log or trace, and never hangs on a lock
 * that a parent thread held at the fork. When the log's name has "%p", the child logs to a
 * file of its own (the name with its process id), opened at its first record. Otherwise its
 * records are refused with JITARENA_E_STATE (the aggregate still counts them) until it opens
 * its own log with jitarena_log_open(). Its methods are refused the same way for the parent's
 * trace, whatever the trace's name.
 *
 * The environment: JITARENA_LOG (at the first jitarena_method_done()) and JITARENA_TRACE (at
 * the first jitarena_create()) are read with getenv(): as for any getenv(), no other thread may
 * change the environment (setenv(), putenv()) meanwhile.
 */
#ifndef JITARENA_H
#define JITARENA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Version of this ABI. jitarena_abi_version() returns the version the library was built with;
 *  a caller should refuse to run when the two differ. */
#define JITARENA_ABI_VERSION 8u

/** Kinds 0 .. JITARENA_MAX_KINDS-1 can be named; every allocation with a kind at or above
 *  kind_count is counted in the invalid-kind bucket. */
#define JITARENA_MAX_KINDS 255u

/** Counter slots of the public head: one per nameable kind, plus slot JITARENA_MAX_KINDS (255)
 *  for kinds >= JITARENA_MAX_KINDS. 256, so that every value of a jitarena_kind_slot indexes
 *  the counters in bounds. */
#define JITARENA_KIND_SLOTS (JITARENA_MAX_KINDS + 1u)

/** Pass this to jitarena_kind_bytes() / jitarena_kind_count() to read the invalid-kind bucket:
 *  every allocation whose kind was >= the configured kind_count. */
#define JITARENA_INVALID_KIND 0xFFFFFFFFu

/** At most this many phases can be named. */
#define JITARENA_MAX_PHASES 1024u

/** A phase mark with this value (or any phase >= phase_count) names the "no phase" bucket,
 *  which is also where bytes go before the first mark and between the JIT's phases. Pass it to
 *  jitarena_phase_bytes() to read that bucket. */
#define JITARENA_NO_PHASE 0xFFFFFFFFu

/** The longest jitarena_config.build_id, in bytes. */
#define JITARENA_MAX_BUILD_ID 256u

/** Default page size: 64 KiB, as the .NET JIT's arena. */
#define JITARENA_DEFAULT_PAGE_SIZE 65536u

/** Smallest and largest page sizes jitarena_create() accepts. */
#define JITARENA_MIN_PAGE_SIZE 4096u
#define JITARENA_MAX_PAGE_SIZE 1073741824u

/** What every request is rounded up to, and every block aligned to: the pointer size (8 bytes
 *  on 64-bit targets, 4 on 32-bit ones), as the .NET JIT's arena rounds its requests. */
#define JITARENA_ALIGN sizeof(void*)

/** The descriptor at the start of every page, as the .NET JIT's arena lays its pages out: three
 *  pointer-sized words (the JIT's next page, page bytes and bytes used), then the blocks, bumped
 *  upward from just past it, so that every block lies at the offset in its page where the JIT's
 *  arena would put it. The library reserves the words and leaves them as the page allocator
 *  gave them: it keeps its page list apart and never reads or writes a page's bytes. */
typedef struct jitarena_page {
    struct jitarena_page* next;
    size_t bytes;
    size_t used;
} jitarena_page;

/** Sizes known at compile time up to this take the inline path's shortest test (the JIT's own
 *  compare of the bumped cursor with the page's end); a page whose end lies within this many
 *  bytes of the end of the address space is refused, so that the bump cannot wrap. */
#define JITARENA_CONSTANT_SIZE_MAX 65536u

/** Failure codes. 0 is success. The values are stable across versions. */
typedef enum jitarena_error {
    JITARENA_OK = 0,
    /** A required pointer argument was NULL. */
    JITARENA_E_NULL = 1,
    /** The page allocator (built-in or the host's page_alloc) returned no memory, or the
     *  library's own bookkeeping (an arena's tables, a record being written) could not be
     *  allocated. */
    JITARENA_E_OUT_OF_MEMORY = 2,
    /** The requested size cannot be represented (larger than half the address space). */
    JITARENA_E_SIZE_OVERFLOW = 3,
    /** Obtaining another page would exceed the configured limit_bytes. */
    JITARENA_E_LIMIT = 4,
    /** A configuration or argument struct was rejected (struct_size, counts, page size, names). */
    JITARENA_E_CONFIG = 5,
    /** An internal error was caught at the API boundary; the arena is still usable. */
    JITARENA_E_INTERNAL = 6,
    /** The stats log or trace file could not be opened, written or closed. */
    JITARENA_E_IO = 7,
    /** A call came in the wrong order (for example a log opened twice), or the arena pointer
     *  does not point to a live arena. */
    JITARENA_E_STATE = 8
} jitarena_error;

/** Configuration of an arena. Always fill with jitarena_config_init() first, then set fields:
 *  a config from an older header (smaller struct_size) stays valid, the fields it lacks take
 *  their defaults. */
typedef struct jitarena_config {
    /** Set by jitarena_config_init() to sizeof(jitarena_config). */
    size_t struct_size;
    /** Names of kinds 0 .. kind_count-1 (NUL-terminated, non-NULL, unique; UTF-8 of 1 to 255
     *  bytes with no control characters and no white space at either end: the JIT's display
     *  names, spaces and punctuation inside, are taken as they are). Copied at create. A create
     *  whose kind_names and phase_names hold the very pointers of the last create that read
     *  its names reuses that check and copy without reading the strings (the JIT's static name
     *  arrays: a create then reads no name),
     *  so strings must not change in place while the library is loaded; any other pointer is
     *  read and checked. */
    const char* const* kind_names;
    /** Number of kinds, 0 .. JITARENA_MAX_KINDS. */
    uint32_t kind_count;
    /** Number of phases, 0 .. JITARENA_MAX_PHASES (0 with phase_names NULL: no phases). */
    uint32_t phase_count;
    /** Names of phases 0 .. phase_count-1, or NULL when phase_count is 0. Copied at create. */
    const char* const* phase_names;
    /** The page size, as the .NET JIT's DEFAULT_PAGE_SIZE: a request that does not fit the
     *  current page takes a new page of the descriptor (jitarena_page) plus its size, rounded
     *  up to a multiple of this, and lies at that page's start; the old page's tail is left.
     *  Default 64 KiB. */
    size_t page_size;
    /** 0: no limit; otherwise the most page bytes the arena may hold at once. A request that
     *  would need more fails with JITARENA_E_LIMIT. */
    uint64_t limit_bytes;
    /** Page allocator, or NULL for the built-in one. Must return memory aligned to at least
     *  JITARENA_ALIGN bytes, or NULL. A page that is not aligned, or whose end lies within
     *  JITARENA_CONSTANT_SIZE_MAX bytes of the end of the address space, is given back to
     *  page_free and the request fails with JITARENA_E_CONFIG. */
    void* (*page_alloc)(void* host, size_t size);
    /** Frees what page_alloc returned, with the same size. Required when page_alloc is set. */
    void (*page_free)(void* host, void* page, size_t size);
    /** Passed unchanged to page_alloc and page_free. */
    void* host;
    /** Unused; 0. Keeps kinds_by_phase past the end of a config from an older header on every
     *  target (on 32-bit ARM the old struct's tail padding would otherwise hold it). */
    uint32_t reserved;
    /** Non-zero: record the bytes requested per (phase, kind), read with
     *  jitarena_phase_kind_bytes() and written into each method's record. Computed at every
     *  phase mark (then out of line: it subtracts the kind counters) from the kind counters, so
     *  the allocation path costs the same either way. 0 (the default, and what a config from an
     *  older header gets): off. */
    uint32_t kinds_by_phase;
    /** Unused; 0. Keeps build_id past the end of a config from an older header on every target
     *  (on 32-bit ARM the old struct's tail padding would otherwise hold it). */
    uint32_t reserved2;
    /** Which build of the JIT this is (its commit, say: "a1b2c3d"), written into the stats log
     *  before the first record of this build, so that a memory diff can show which builds it
     *  compared and notice shards of different builds on one side. NULL (the default): none.
     *  UTF-8, at most JITARENA_MAX_BUILD_ID bytes. Copied at create. */
    const char* build_id;
    /** Unused; 0. Keeps exact_pages past the end of a config from an older header on every
     *  target (on 32-bit ARM and Windows the old struct's tail padding would otherwise hold
     *  it). */
    uint32_t reserved3;
    /** Non-zero: a new page holds exactly the descriptor and the request that opened it, not
     *  rounded up to page_size, as the .NET JIT's arena sizes its pages when it bypasses the
     *  host (bypassHostAllocator(): JitDirectAlloc), so that every allocation lies alone at
     *  the start of a page of its own from the page allocator, where a native memory tool sees
     *  an overrun. 0 (the default, and what a config from an older header gets): pages are
     *  rounded up to page_size. */
    uint32_t exact_pages;
} jitarena_config;

/** An arena. Opaque but for its first member, the public head that the inline fast path uses. */
typedef struct jitarena jitarena;

/** One phase mark of jitarena_phase_begin(), jitarena_phase_end() or jitarena_set_phase(), as
 *  the inline path writes it into the arena's head: the bytes used, the phase and what the mark
 *  does (JITARENA_MARK_*). The library reads the marks later (when the head holds
 *  JITARENA_MARKS of them, at a read, or at the end of a method that a log, trace or aggregate
 *  records) and attributes the bytes between them. */
typedef struct jitarena_mark {
    /** The arena's bytes used at the mark: the head's cursor less its used_bias. */
    uintptr_t used;
    /** The phase the call named. */
    uint32_t phase;
    /** JITARENA_MARK_SWITCH, JITARENA_MARK_BEGIN or JITARENA_MARK_END. */
    uint32_t op;
} jitarena_mark;

/** jitarena_mark.op: jitarena_set_phase(), jitarena_phase_begin(), jitarena_phase_end(). */
#define JITARENA_MARK_SWITCH 0u
#define JITARENA_MARK_BEGIN 1u
#define JITARENA_MARK_END 2u

/** Phase marks the head holds before the library must read them (out of line, in
 *  jitarena_phase_mark_slow()): more than a .NET JIT FullOpts method makes (about 210), so
 *  that a method whose marks nobody reads (no log open: a throughput run) never reads them. */
#define JITARENA_MARKS 256u

/** The first member of every arena: the bump window, the per-kind counters of the inline path
 *  and the phase marks not yet read. Read it only through the functions below; the layout is
 *  part of the ABI version. */
typedef struct jitarena_head {
    /** The next free byte of the current page: each inline allocation takes its block here and
     *  moves the cursor up by the rounded size, as the .NET JIT's m_nextFreeByte. */
    uintptr_t cursor;
    /** The end of the current page (the JIT's m_lastFreeByte), so that only a request that does
     *  not fit the page (or of size 0) reaches the slow path; or the cursor itself, an empty
     *  window that sends every request out of line (no page yet, after a reset, and always
     *  while the arena records a trace). */
    uintptr_t limit;
    /** Address of the next mark the inline path writes: within `marks`, or just past it. */
    uintptr_t mark_next;
    /** Address past the last mark the inline path may write: the end of `marks`, or its start
     *  (an arena recording a trace or kinds by phase), which sends every mark to
     *  jitarena_phase_mark_slow(). */
    uintptr_t mark_limit;
    /** What is taken from the cursor to give the arena's bytes used (the start of the current
     *  page's blocks less the bytes handed out before them), kept by the library. */
    uintptr_t used_bias;
    /** Per kind slot, what the inline path counted since the library last drained the slot
     *  into its 64-bit totals, as the bytes requested (before rounding) less 2^31 per
     *  allocation, modulo 2^64: the bytes in the low 31 bits, the allocations in (bytes -
     *  counter) >> 31. Each inline allocation adds JITARENA_PACKED_ONE + size. The slow path
     *  drains every slot before the bytes handed out since the last drain (the windows it
     *  opened, each less than a page of at most 1 GiB) could reach 2^31, so the two never mix;
     *  the readers add these to the totals. */
    uint64_t kind_packed[JITARENA_KIND_SLOTS];
    /** Phase marks not yet read: those before mark_next. */
    jitarena_mark marks[JITARENA_MARKS];
} jitarena_head;

/** One inline allocation in a packed counter (jitarena_head.kind_packed): minus 2^31, modulo
 *  2^64. Its addend (this plus the size) is one instruction with a 32-bit immediate on every
 *  compiler, where 2^32 took a 64-bit constant that clang rebuilds at each call site. */
#define JITARENA_PACKED_ONE ((uint64_t)0 - ((uint64_t)1 << 31))

/** A kind's counter slot: every value indexes the head's counters in bounds, so the inline
 *  path needs no check. Obtain it once, with jitarena_kind_slot_of(), where a JIT makes its
 *  allocator object (a CompAllocator holding its kind), and allocate with
 *  jitarena_alloc_slot(). Slots from kind_count to 254 are counted in the invalid-kind bucket,
 *  as slot 255 (JITARENA_MAX_KINDS) is. */
typedef uint8_t jitarena_kind_slot;

/** Every arena's address (jitarena_create()'s result) is a multiple of this, so that an arena
 *  and a kind's slot share one word: jitarena_kind_handle. */
#define JITARENA_ARENA_ALIGN 256u

/** An arena and one kind's counter slot in one pointer-sized word: the arena's address, whose
 *  low 8 bits are 0 (JITARENA_ARENA_ALIGN), with the slot in them. What a JIT's allocator object
 *  of one kind holds (the .NET JIT's CompAllocator is one word, passed in a register by value on
 *  every calling convention, Microsoft x64 included, where a 16-byte object goes through a copy
 *  in memory). Made with jitarena_kind_handle_of(), allocated from with
 *  jitarena_alloc_handle_or(). */
typedef uintptr_t jitarena_kind_handle;

/** A finished method, passed to jitarena_method_done(). Initialize it with
 *  JITARENA_METHOD_INIT or jitarena_method_init(), then set its fields: a struct_size of 0
 *  (as `jitarena_method m = {0}` leaves it) is refused with JITARENA_E_CONFIG. */
typedef struct jitarena_method {
    /** Set to sizeof(jitarena_method). */
    size_t struct_size;
    /** The method's full name (NUL-terminated), or NULL if unknown. */
    const char* name;
    /** The replay tool's index of the method (its context number), or -1 if unknown. */
    int64_t context;
    /** Optimization level or tier ("MinOpts", "FullOpts", "Tier0", "Tier1", ...), or NULL. */
    const char* tier;
    /** Non-zero: this compile failed (the JIT's error path: its result was a failure, neither
     *  CORJIT_OK nor CORJIT_SKIPPED, and no record of the method was written).
     *  The stats log then notes the failed compile of the context (name, tier) instead of a
     *  record of counters, so that a memory diff counts it as SuperPMI counts failing compiles;
     *  the aggregate and the trace leave the method out. A jitarena_method of the size before
     *  this field (an older header) reads as 0. */
    uint32_t failed;
    /** Unused; 0. */
    uint32_t reserved;
} jitarena_method;

/** An initializer of a jitarena_method for C99 and C++11: its size, no name, no context, no
 *  tier, not failed. `jitarena_method m = JITARENA_METHOD_INIT; m.name = name;` */
#define JITARENA_METHOD_INIT {sizeof(jitarena_method), NULL, -1, NULL, 0, 0}

/** Fills *method as JITARENA_METHOD_INIT does (for a jitarena_method that already exists). */
static inline void jitarena_method_init(jitarena_method* method) {
    const jitarena_method init = JITARENA_METHOD_INIT;
    *method = init;
}

/* ---- Version and errors ------------------------------------------------------------------ */

/** The ABI version the library was built with (JITARENA_ABI_VERSION of its header). */
uint32_t jitarena_abi_version(void);

/** A static, human-readable text for a failure code; never NULL, also for unknown codes. */
const char* jitarena_strerror(int code);

/** The calling thread's last failure message (naming the file, size or field at fault), or ""
 *  if none yet. Set by a call that fails, left as it was by a call that succeeds (as errno):
 *  read it right after a call that returned NULL or an error code. Valid until this thread's
 *  next jitarena call. At most 1,023 bytes: a longer one
 *  keeps its start and its end (the file's name and the reason), with "..." between. Recording
 *  it allocates nothing. */
const char* jitarena_last_error_message(void);

/* ---- Arena life cycle --------------------------------------------------------------------- */

/** Fills *config with the defaults: no kinds, no phases, 64 KiB pages, no limit, built-in page
 *  allocator. NULL is ignored. */
void jitarena_config_init(jitarena_config* config);

/** Creates an arena, or returns NULL (see jitarena_last_error_message()) when the config is
 *  NULL or invalid or memory is exhausted. No page is obtained until the first allocation.
 *  A destroyed arena of the same config may be handed out again (see jitarena_destroy()).
 *
 *  Called through the macro below, it first checks that the caller was compiled with this
 *  library's header: the inline paths read the arena's head, whose layout is the ABI version's. */
jitarena* jitarena_create(const jitarena_config* config);

/** jitarena_create() after checking that the caller's header (its JITARENA_ABI_VERSION and
 *  sizeof(jitarena_head)) is the library's: a program compiled against one header and linked
 *  with another library fails here with JITARENA_E_CONFIG and a message naming both versions,
 *  never silently. */
jitarena* jitarena_create_checked(const jitarena_config* config, uint32_t abi_version,
                                  size_t head_size);

/** Every jitarena_create() a program compiles goes through the check, as zlib's inflateInit()
 *  does (`(jitarena_create)(config)` calls the function itself). */
#define jitarena_create(config) \
    jitarena_create_checked((config), JITARENA_ABI_VERSION, sizeof(jitarena_head))

/** Frees every page the arena holds and ends the arena (the library keeps up to 8 destroyed
 *  arenas, with at most one spare page of the built-in page allocator and none of a host's,
 *  for later creates of the same config: a JIT that creates and
 *  destroys one per method then allocates nothing for them). NULL is ignored. The arena must not be used after:
 *  the library keeps a set of live arenas, so that this and every other out-of-line function
 *  refuses a destroyed (or never created) arena with JITARENA_E_STATE without reading it, until
 *  a new arena is created at the same address; the inline jitarena_alloc() cannot check. An
 *  arena owned by the Rust API (jitarena::Arena) is refused here: its owner frees it. */
void jitarena_destroy(jitarena* arena);

/** Empties the arena for the next method, as a new arena: every allocation is released,
 *  counters, phase and failure are zeroed, and every page is given back, so that the next
 *  method asks for its pages as the .NET JIT's new arena would and its blocks lie where the
 *  JIT's would. With a host page_free, pages go back to the host; the built-in page allocator
 *  keeps up to 16 MiB of pages of the page size for the next methods (as the .NET runtime's
 *  host caches slabs), not counted as reserved. NULL is ignored. */
void jitarena_reset(jitarena* arena);

/* ---- Allocation --------------------------------------------------------------------------- */

/** Out-of-line part of jitarena_alloc(): new pages, size 0, limits, tracing. Call
 *  jitarena_alloc() instead. Like jitarena_alloc(), it takes a non-NULL arena pointer on trust:
 *  it is not looked up among the live arenas (the other entry points do look it up), so that
 *  no lock is taken on the allocation path. */
void* jitarena_alloc_slow(jitarena* arena, size_t size, uint32_t kind);

/** jitarena_alloc_slow() naming the allocation's site: the code address that a trace records
 *  for it (module-relative; docs/formats.md, "Sites"). jitarena_alloc_slow() is this with its
 *  own return address, the call site inside the caller's inlined allocation. NULL: unknown.
 *  Only an arena recording a trace keeps the site; otherwise it is ignored. */
void* jitarena_alloc_slow_at(jitarena* arena, size_t size, uint32_t kind, const void* site);

#if defined(__GNUC__) || defined(__clang__)
#define JITARENA_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* The hit, expected at the call site, so that a compiler lays the miss out of the hit's way
 * (clang otherwise jumps from the hit to the code after it). */
#define JITARENA_LIKELY(x) __builtin_expect(!!(x), 1)
/* Tells the compiler what the inline path guarantees, so that a caller's NULL check of the
 * result folds away on that path. */
#define JITARENA_ASSUME(x) \
    do {                   \
        if (!(x)) __builtin_unreachable(); \
    } while (0)
#else
#define JITARENA_UNLIKELY(x) (x)
#define JITARENA_LIKELY(x) (x)
#define JITARENA_ASSUME(x) ((void)0)
#endif

/** The counter slot of `kind`: the kind itself below JITARENA_MAX_KINDS, else the invalid-kind
 *  slot (255). Defined for every value. */
static inline jitarena_kind_slot jitarena_kind_slot_of(uint32_t kind) {
    return (jitarena_kind_slot)(kind < JITARENA_MAX_KINDS ? kind : JITARENA_MAX_KINDS);
}

/** The handle of `kind` in `arena` (its slot as jitarena_kind_slot_of() gives it). `arena`
 *  must be NULL or an arena from jitarena_create() (the compiler is told its low bits are 0). */
static inline jitarena_kind_handle jitarena_kind_handle_of(jitarena* arena, uint32_t kind) {
    /* Tells the compiler the low bits are the slot's alone, so that a handle made where it is
     * used (a call site's allocator object) is taken apart at no cost. */
#if defined(__clang__)
    __builtin_assume(((uintptr_t)arena & (uintptr_t)(JITARENA_ARENA_ALIGN - 1u)) == 0);
#elif defined(__GNUC__)
    arena = (jitarena*)__builtin_assume_aligned(arena, JITARENA_ARENA_ALIGN);
#endif
    return (uintptr_t)arena | (uintptr_t)jitarena_kind_slot_of(kind);
}

/** The arena of a handle. */
static inline jitarena* jitarena_handle_arena(jitarena_kind_handle handle) {
    return (jitarena*)(handle & ~(uintptr_t)(JITARENA_ARENA_ALIGN - 1u));
}

/** The kind slot of a handle. */
static inline jitarena_kind_slot jitarena_handle_slot(jitarena_kind_handle handle) {
    return (jitarena_kind_slot)(handle & (uintptr_t)(JITARENA_ARENA_ALIGN - 1u));
}

/** What jitarena_alloc_slot_or() calls when a request fails: the JIT's out-of-memory path
 *  (which may throw or long-jump from here: it runs in the caller's code, never inside the
 *  library), or a function that returns a block from elsewhere, or NULL. It takes no
 *  arguments, so that the inline path keeps nothing alive across its out-of-line call (a
 *  compiler would otherwise save registers on every allocation's path, not only on the failing
 *  one's); jitarena_failure() and jitarena_last_error_message() say why the request failed. */
typedef void* (*jitarena_on_failure)(void);

/** Whether a request of `size` bytes fits the window that starts at `cursor` (the head's),
 *  and where the cursor goes if it does: `*next`, the cursor plus the size rounded up to
 *  JITARENA_ALIGN. A size known at compile time (1 to JITARENA_CONSTANT_SIZE_MAX) is tested
 *  as the .NET JIT's arena tests it, the bumped cursor against the page's end (no page ends
 *  within JITARENA_CONSTANT_SIZE_MAX of the end of the address space, so the bump cannot
 *  wrap). Any other size is tested as the rounded size less one, `(size - 1) | (ALIGN - 1)`,
 *  against the bytes left: one subtraction more, and size 0 (whose rounded size less one is
 *  SIZE_MAX, as for a size that rounds past SIZE_MAX) never fits, so it gets a distinct block
 *  out of line. */
static inline int jitarena_fits(const jitarena_head* head, uintptr_t cursor, size_t size,
                                uintptr_t* next) {
    const uintptr_t align_less_one = (uintptr_t)JITARENA_ALIGN - 1u;
#if defined(__GNUC__) || defined(__clang__)
    if (__builtin_constant_p(size) && size - 1u < (size_t)JITARENA_CONSTANT_SIZE_MAX) {
        *next = cursor + (((uintptr_t)size + align_less_one) & ~align_less_one);
        return !JITARENA_UNLIKELY(*next > head->limit);
    }
#endif
    {
        uintptr_t rounded_less_one = (uintptr_t)(size - 1u) | align_less_one;
        *next = cursor + rounded_less_one + 1u;
        return !JITARENA_UNLIKELY(rounded_less_one >= head->limit - cursor);
    }
}

/** The inline paths' hit, after jitarena_fits(): the cursor moved up to `next` and one
 *  addition to the slot's packed counter (compiled out with JITARENA_NO_COUNTERS). Returns the
 *  block, the cursor before. */
static inline void* jitarena_take(jitarena_head* head, uintptr_t block, uintptr_t next,
                                  size_t size, jitarena_kind_slot slot) {
    head->cursor = next;
#ifndef JITARENA_NO_COUNTERS
    {
        /* size <= the window (at most a page) here: it stays in the low 31 bits. */
        uint64_t add = JITARENA_PACKED_ONE + size;
#if defined(__GNUC__)
        /* Keeps the compiler from reassociating the two terms with the counter (load, add,
         * add, store, and the slot's index computed apart): one add to memory. A constant
         * size needs no such help: its addend is one 32-bit immediate. */
        if (!__builtin_constant_p(size)) __asm__("" : "+r"(add));
#endif
        head->kind_packed[slot] += add;
    }
#else
    (void)size;
    (void)slot;
#endif
    /* True: a block that fits lies in a page, and no page starts at 0 (with no page the
     * cursor and the limit are both 0, and nothing fits). */
    JITARENA_ASSUME(block != 0);
    return (void*)block;
}

/**
 * Allocates size bytes counted in kind slot `slot` (from jitarena_kind_slot_of()), as
 * jitarena_alloc_slot(); when the request fails, returns on_failure() instead (NULL: returns
 * NULL). The failure is tested on the out-of-line path alone, so a
 * caller that routes failures to on_failure has no test of the result on the inline path.
 *
 * `arena` must be a live arena: this inline path reads it without a check (NULL included).
 */
static inline void* jitarena_alloc_slot_or(jitarena* arena, size_t size, jitarena_kind_slot slot,
                                           jitarena_on_failure on_failure) {
    jitarena_head* head = (jitarena_head*)arena;
    uintptr_t cursor = head->cursor;
    uintptr_t next;
    void* block;
    if (JITARENA_LIKELY(jitarena_fits(head, cursor, size, &next))) {
        return jitarena_take(head, cursor, next, size, slot);
    }
    block = jitarena_alloc_slow(arena, size, slot);
    if (on_failure != NULL && block == NULL) {
        return on_failure();
    }
    return block;
}

/** jitarena_alloc_slot_or() through a kind handle (jitarena_kind_handle_of()): the arena and
 *  the slot taken from its one word, two instructions of arithmetic and no load. The handle's
 *  arena must be live, as for jitarena_alloc_slot_or(). */
static inline void* jitarena_alloc_handle_or(jitarena_kind_handle handle, size_t size,
                                             jitarena_on_failure on_failure) {
    return jitarena_alloc_slot_or(jitarena_handle_arena(handle), size,
                                  jitarena_handle_slot(handle), on_failure);
}

/** The return address of the function this is written in (NULL where the compiler has no
 *  way to say): the site to pass to jitarena_alloc_slot_at() from a JIT's allocator function
 *  that is kept out of line (JITARENA_NOINLINE), so that a trace names its caller. Needs no
 *  frame pointer. */
#if defined(__GNUC__) || defined(__clang__)
#define JITARENA_CALLER_SITE() __builtin_return_address(0)
#define JITARENA_NOINLINE __attribute__((noinline))
#elif defined(_MSC_VER)
void* _ReturnAddress(void);
#pragma intrinsic(_ReturnAddress)
#define JITARENA_CALLER_SITE() _ReturnAddress()
#define JITARENA_NOINLINE __declspec(noinline)
#else
#define JITARENA_CALLER_SITE() ((void*)0)
#define JITARENA_NOINLINE
#endif

/**
 * jitarena_alloc_slot() whose trace names `site` as the allocation's site instead of the call
 * inside this inline path: for a JIT's allocator function left out of line (a container's
 * grow calls it), which passes JITARENA_CALLER_SITE(), its own caller. The same inline path;
 * the site reaches the library only on the out-of-line path (always, while a trace is
 * recorded), and matters only then. `arena` must be a live arena.
 */
static inline void* jitarena_alloc_slot_at(jitarena* arena, size_t size, jitarena_kind_slot slot,
                                           const void* site) {
    jitarena_head* head = (jitarena_head*)arena;
    uintptr_t cursor = head->cursor;
    uintptr_t next;
    if (JITARENA_LIKELY(jitarena_fits(head, cursor, size, &next))) {
        return jitarena_take(head, cursor, next, size, slot);
    }
    return jitarena_alloc_slow_at(arena, size, slot, site);
}

/**
 * Allocates size bytes counted in kind slot `slot` (from jitarena_kind_slot_of()). Returns
 * what jitarena_alloc() returns, and counts the same way; the kind needs no clamp here.
 *
 * `arena` must be a live arena: this inline path reads it without a check (NULL included),
 * as the JIT's own allocator reads its arena. jitarena_alloc() accepts NULL.
 *
 * Fast path: the .NET JIT's own (the cursor moved up by the size rounded to JITARENA_ALIGN, and
 * a compare with the page's end; jitarena_fits()) and one addition to the slot's packed counter
 * (its count and bytes), no call, no lock. Blocks lie where the JIT's own arena puts them. With
 * JITARENA_NO_COUNTERS defined before this header, the addition is compiled out (to measure
 * its cost); such allocations are then not counted.
 */
static inline void* jitarena_alloc_slot(jitarena* arena, size_t size, jitarena_kind_slot slot) {
    return jitarena_alloc_slot_or(arena, size, slot, (jitarena_on_failure)NULL);
}

/**
 * Allocates size bytes of kind `kind`. Returns memory aligned to JITARENA_ALIGN that overlaps
 * no other live allocation of any arena, or NULL when the arena is NULL, memory is exhausted,
 * the size cannot be represented or the limit would be exceeded; jitarena_failure() then says
 * why. A size of 0 returns a distinct block of JITARENA_ALIGN bytes. A kind >= kind_count is
 * counted in the invalid-kind bucket. The memory is uninitialised and stays valid until reset
 * or destroy.
 *
 * Fast path: jitarena_alloc_slot() with jitarena_kind_slot_of(kind), after a test of the arena
 * against NULL: a bump of the cursor, one counter addition, and a clamp of the kind that a
 * constant kind folds away (a JIT's allocator object holding a run-time kind saves the clamp by
 * holding its slot instead).
 */
static inline void* jitarena_alloc(jitarena* arena, size_t size, uint32_t kind) {
    if (JITARENA_UNLIKELY(arena == NULL)) {
        return jitarena_alloc_slow(arena, size, kind);
    }
    return jitarena_alloc_slot(arena, size, jitarena_kind_slot_of(kind));
}

/* ---- Phases ------------------------------------------------------------------------------- */

/*
 * Phase bytes are the arena's bytes used (each request rounded up to JITARENA_ALIGN, as jitarena_used_bytes()
 * counts them, and as the .NET JIT's BytesAllocated measures a method), attributed to the
 * innermost running phase. They add up to jitarena_used_bytes() exactly, "no phase" included;
 * the kind bytes count requests before rounding, so a phase holds its kinds' bytes plus their
 * rounding. (An arena created with kinds_by_phase counts its phases' bytes as requested, before
 * rounding, so that each phase's kinds add up to it.) The three calls fit the JIT's BeginPhase
 * and EndPhase as they are:
 *
 * - jitarena_phase_begin(a, p): the bytes since the last mark go to the phase running until
 *   now (or "no phase"), and p runs, inside it.
 * - jitarena_phase_end(a, p): the bytes since the last mark go to p. When p is the running
 *   phase, the phase it was begun inside runs again (or "no phase"); otherwise p is a child
 *   phase ended inside its running parent without being begun (the JIT's LSRA, SSA and
 *   liveness steps), and the parent goes on running.
 * - jitarena_set_phase(a, p): the bytes since the last mark go to the running phase, and p
 *   runs alone (ending it leaves "no phase").
 *
 * Phases begun inside one another, the same phase again among them, unwind in turn: 64 deep at
 * most, deeper than any JIT nests (past that the phases begun so far are forgotten, and their
 * ends return to "no phase").
 *
 * Each call is inline: it writes one mark (the bytes used, the phase, the call) into the
 * arena's head, 10 instructions, and nothing else; the library reads the marks out of
 * line when the head is full (every JITARENA_MARKS marks), at a read and at the end of a method
 * that a log, trace or aggregate records, and a reset drops the marks nobody read. An arena recording a trace or kinds by phase takes every mark out of line. Phases
 * out of range (JITARENA_NO_PHASE among them) are "no phase". `arena` must be a live arena:
 * the marks read it without a check (NULL included).
 */

/** Out-of-line part of the phase marks: reads the marks in the head, then this one. Call
 *  jitarena_phase_begin(), jitarena_phase_end() or jitarena_set_phase() instead. */
void jitarena_phase_mark_slow(jitarena* arena, uint32_t phase, uint32_t op);

/** Writes one phase mark (JITARENA_MARK_* in op): the inline part of the three calls below. */
static inline void jitarena_phase_mark(jitarena* arena, uint32_t phase, uint32_t op) {
    jitarena_head* head = (jitarena_head*)arena;
    uintptr_t next = head->mark_next;
    jitarena_mark* mark;
    if (JITARENA_UNLIKELY(next >= head->mark_limit)) {
        jitarena_phase_mark_slow(arena, phase, op);
        return;
    }
    mark = (jitarena_mark*)next;
    mark->used = head->cursor - head->used_bias;
    mark->phase = phase;
    mark->op = op;
    head->mark_next = next + sizeof(jitarena_mark);
}

/** Begins `phase` inside the running one (the JIT's BeginPhase). */
static inline void jitarena_phase_begin(jitarena* arena, uint32_t phase) {
    jitarena_phase_mark(arena, phase, JITARENA_MARK_BEGIN);
}

/** Ends `phase`: the running one, or a child ended inside it (the JIT's EndPhase). */
static inline void jitarena_phase_end(jitarena* arena, uint32_t phase) {
    jitarena_phase_mark(arena, phase, JITARENA_MARK_END);
}

/** From now on, bytes are attributed to `phase` alone (JITARENA_NO_PHASE or an out-of-range
 *  value: the "no phase" bucket), for a compiler whose passes do not nest. */
static inline void jitarena_set_phase(jitarena* arena, uint32_t phase) {
    jitarena_phase_mark(arena, phase, JITARENA_MARK_SWITCH);
}

/* ---- Readers (NULL arena: 0) -------------------------------------------------------------- */

/** The last failure of this arena (a jitarena_error), 0 if none since create or reset. */
int jitarena_failure(const jitarena* arena);

/** Bytes requested with `kind` (before rounding, as the .NET JIT's statistics count them);
 *  JITARENA_INVALID_KIND reads the invalid-kind bucket; other out-of-range kinds read 0. */
uint64_t jitarena_kind_bytes(const jitarena* arena, uint32_t kind);

/** Number of allocations with `kind`; JITARENA_INVALID_KIND as for jitarena_kind_bytes(). */
uint64_t jitarena_kind_count(const jitarena* arena, uint32_t kind);

/** Bytes used (requests rounded up to JITARENA_ALIGN) while `phase` was the innermost running phase (see
 *  "Phases"); JITARENA_NO_PHASE reads the "no phase" bucket. The phases' bytes add up to
 *  jitarena_used_bytes(). */
uint64_t jitarena_phase_bytes(const jitarena* arena, uint32_t phase);

/** Bytes requested with `kind` while `phase` was the innermost running one, for an arena created with
 *  kinds_by_phase on (else 0). JITARENA_NO_PHASE (or any phase >= phase_count) reads the "no
 *  phase" bucket; JITARENA_INVALID_KIND the invalid-kind bucket; other kinds >= kind_count 0. */
uint64_t jitarena_phase_kind_bytes(const jitarena* arena, uint32_t phase, uint32_t kind);

/** Bytes requested, all kinds. */
uint64_t jitarena_total_bytes(const jitarena* arena);

/** Allocations, all kinds. */
uint64_t jitarena_total_count(const jitarena* arena);

/** Bytes handed out, after rounding each request up to JITARENA_ALIGN. */
uint64_t jitarena_used_bytes(const jitarena* arena);

/** Page bytes currently obtained from the page allocator. */
uint64_t jitarena_reserved_bytes(const jitarena* arena);

/** Pages currently held (normal and large). */
uint64_t jitarena_page_count(const jitarena* arena);

/** The largest single request, in bytes: exact whenever it exceeds the page size (64 KiB by
 *  default), as every such request takes the out-of-line path; otherwise the largest request
 *  that took that path (a lower bound), as comparing on the inline path would cost two more
 *  instructions per allocation. */
uint64_t jitarena_largest_alloc(const jitarena* arena);

/** 1 if a request failed with JITARENA_E_LIMIT since create or reset, else 0. */
int jitarena_limit_hit(const jitarena* arena);

/** The configured number of kinds and phases (0 for NULL). */
uint32_t jitarena_kind_count_configured(const jitarena* arena);
uint32_t jitarena_phase_count_configured(const jitarena* arena);

/* ---- Per-method records: the stats log, the aggregate, the trace ------------------------ */

/**
 * Ends a method (see "Process-wide state" at the top of this header): when the aggregate is on
 * (jitarena_aggregate_enable()), folds the arena's counters into it; when a stats log is open,
 * appends one record (the method, its per-kind bytes and counts, per-phase bytes, used and
 * reserved bytes, pages, largest request, whether the limit was hit); when the arena records a
 * trace, appends the method's allocation events to it. Then reset or destroy the arena for the
 * next method. `method` may be NULL (an unknown method). Thread-safe: one lock per record, none
 * per allocation. With no log open it does no I/O; with no log, no trace and the aggregate off
 * (the defaults: a throughput run) it reads nothing but the arena pointer's liveness.
 *
 * Returns 0, or JITARENA_E_IO when the record could not be written (the message names the file;
 * the failed record is not in the log), JITARENA_E_STATE for a record refused in a forked child,
 * JITARENA_E_NULL / JITARENA_E_STATE for a NULL or dead arena, JITARENA_E_CONFIG for a method of
 * a smaller struct_size, JITARENA_E_OUT_OF_MEMORY when memory ran out. The log, the trace and
 * the aggregate each go on when another fails (the aggregate counts a method whose record could
 * not be written, and the other way round); the log's failure is the one returned first.
 */
int jitarena_method_done(jitarena* arena, const jitarena_method* method);

/** Opens (creates or truncates) the stats log at `path` (UTF-8; a path that is not is refused
 *  with JITARENA_E_CONFIG rather than taken for another file) for this copy of the library.
 *  "%p" and "%m" in `path`, the file's one writer and what a failed write does: "Process-wide
 *  state" at the top of this header. Returns 0, JITARENA_E_NULL, JITARENA_E_STATE if a log is
 *  already open, JITARENA_E_IO if the file cannot be created or another writer holds it.
 *  Records are written unbuffered, one write per record. In a forked child, the child's
 *  descriptor of the log inherited from the parent is closed, without writing to the log, and
 *  the new log opened. */
int jitarena_log_open(const char* path);

/** Flushes and closes the stats log. Returns 0, JITARENA_E_STATE if none is open, or
 *  JITARENA_E_IO. Records written before are complete on disk either way. */
int jitarena_log_close(void);

/** Starts recording every allocation (method boundaries, kinds, sizes, phase changes) of the
 *  arenas created from now on to the binary trace at `path`, which `jitarena replay` reads.
 *  While recording, those arenas keep their inline window empty so that every allocation takes
 *  the slow path; arenas not recording pay nothing. The environment variable JITARENA_TRACE
 *  does the same at the first jitarena_create() (which fails with JITARENA_E_OUT_OF_MEMORY if
 *  memory for opening it runs out; the next one tries again). Returns as jitarena_log_open(). */
int jitarena_trace_open(const char* path);

/** Stops recording and closes the trace. Returns as jitarena_log_close(). */
int jitarena_trace_close(void);

/** Turns the process-wide aggregate on (non-zero) or off (0) for the jitarena_method_done()
 *  calls from now on, and returns 1 if it was on, else 0. Off by default, so that a run that
 *  reads no aggregate pays nothing for it; the sums gathered so far are kept either way (see
 *  jitarena_aggregate_reset()). The readers below read the aggregate. */
int jitarena_aggregate_enable(int on);

/** Methods folded into the process-wide aggregate by jitarena_method_done(). */
uint64_t jitarena_aggregate_methods(void);

/** Bytes requested, all methods, all kinds (of the methods folded in). */
uint64_t jitarena_aggregate_total_bytes(void);

/** Bytes requested and allocations, all methods, of the kind with this name (0 if unknown);
 *  "(invalid kind)" names the invalid-kind bucket. */
uint64_t jitarena_aggregate_kind_bytes(const char* kind_name);
uint64_t jitarena_aggregate_kind_count(const char* kind_name);

/** Clears the process-wide aggregate. */
void jitarena_aggregate_reset(void);

/* ---- Replay ------------------------------------------------------------------------------- */

/** One event of an allocation stream: op 0 allocates `size` bytes of kind `arg`; op 1 switches
 *  to phase `arg` (size unused). */
typedef struct jitarena_event {
    uint32_t op;
    uint32_t arg;
    uint64_t size;
} jitarena_event;

#define JITARENA_EVENT_ALLOC 0u
#define JITARENA_EVENT_PHASE 1u

/** Replays `count` events through jitarena_alloc() (the inline path) and jitarena_set_phase(),
 *  writing one byte into each block. Returns how many allocations failed. The library's own
 *  replay harness (`jitarena replay`) runs this. */
size_t jitarena_replay(jitarena* arena, const jitarena_event* events, size_t count);

/** The same, compiled with JITARENA_NO_COUNTERS: allocations are not counted. */
size_t jitarena_replay_uncounted(jitarena* arena, const jitarena_event* events, size_t count);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* JITARENA_H */
