/* The header's inline allocation path alone, on whatever target this is compiled for, against
 * what it must do: a head made up here (no library: this program defines the out-of-line entry
 * points itself) with windows [cursor, limit) from the empty one of no page (both 0) up to ones
 * that end at the highest end a page may have (JITARENA_CONSTANT_SIZE_MAX below the top of the
 * address space), of 0 bytes to 64 KiB and of 1 GiB (the largest page), and sizes of 0, a few
 * bytes, the window's bytes left and either side of them, sizes near the cursor's and the
 * limit's values, near SIZE_MAX - cursor (where the bumped cursor wraps) and near SIZE_MAX.
 *
 * A request fits exactly when its size is not 0 and its size rounded up to JITARENA_ALIGN is at
 * most limit - cursor. A fit returns the cursor, moves it up by the rounded size, adds
 * JITARENA_PACKED_ONE + size to the slot's packed counter (its bytes up by the size, its count
 * by one), changes nothing else and calls nothing. A miss calls the slow path once (with the
 * arena, the size, a kind of the slot and, from jitarena_alloc_slot_at(), the site), leaves the
 * head as it was and returns the slow path's block, or, from jitarena_alloc_slot_or() with an
 * on_failure, what on_failure() returns when that block is NULL.
 *
 * Each request goes through jitarena_alloc_slot_or() with and without on_failure,
 * jitarena_alloc_slot(), jitarena_alloc_slot_at() and jitarena_alloc(): with sizes the compiler
 * cannot see (the variable test), and with literal sizes, which an optimizing gcc or clang sees
 * as constants, as the program checks (the constant test for 1 to JITARENA_CONSTANT_SIZE_MAX,
 * the variable test for the others; without optimization, the variable test for all).
 *
 *   inline_edges      prints "inline_edges: N cases, F failed" */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "jitarena.h"

#define ALIGN ((uintptr_t)JITARENA_ALIGN)
/* The highest end a page may have, and the highest aligned one. */
#define TOP_LIMIT (UINTPTR_MAX - (uintptr_t)JITARENA_CONSTANT_SIZE_MAX)
#define TOP_ALIGNED (TOP_LIMIT & ~(ALIGN - 1u))
#define MIDDLE ((uintptr_t)1 << (sizeof(uintptr_t) * 8 - 1))
#define GIB ((uintptr_t)1 << 30)

/* The entry points, and what the slow path returns on a miss. */
enum {
    OR_FAILURE,            /* jitarena_alloc_slot_or(), on_failure; the slow path returns NULL */
    OR_FAILURE_SLOW_BLOCK, /* the same; the slow path returns a block */
    OR_NULL,               /* jitarena_alloc_slot_or(), no on_failure */
    SLOT,                  /* jitarena_alloc_slot() */
    SLOT_AT,               /* jitarena_alloc_slot_at() */
    ALLOC,                 /* jitarena_alloc() */
    ENTRIES
};
static const char* const entry_names[ENTRIES] = {
    "slot_or(on_failure)", "slot_or(on_failure) with a slow block", "slot_or(NULL)", "slot",
    "slot_at", "alloc"};

/* The head the inline path works on, and what it held before the request. */
static jitarena_head head, before;
static char slow_block[16], failure_block[16], site;
static void* slow_result;
static int slow_calls, slow_at_calls, failure_calls;
static jitarena* slow_arena;
static size_t slow_size;
static uint32_t slow_kind;
static const void* slow_site;

void* jitarena_alloc_slow(jitarena* arena, size_t size, uint32_t kind) {
    slow_calls++;
    slow_arena = arena;
    slow_size = size;
    slow_kind = kind;
    return slow_result;
}

void* jitarena_alloc_slow_at(jitarena* arena, size_t size, uint32_t kind, const void* at) {
    slow_at_calls++;
    slow_arena = arena;
    slow_size = size;
    slow_kind = kind;
    slow_site = at;
    return slow_result;
}

static void* on_failure(void) {
    failure_calls++;
    return failure_block;
}

/* A value the compiler cannot see through. */
static uintptr_t opaque(uintptr_t x) {
    volatile uintptr_t v = x;
    return v;
}
static size_t opaque_size(size_t x) {
    volatile size_t v = x;
    return v;
}

/* The request under test. */
static struct {
    uintptr_t cursor, limit;
    size_t size;
    int entry, constant;
    jitarena_kind_slot slot;
    uint32_t kind;
    int slow_calls, slow_at_calls, failure_calls;
    int failed;
} req;
static long cases, failed;

/* Counts the request as failed, once, and says why (for the first 20 failed requests). */
#define FAIL(...)                                                                                  \
    do {                                                                                           \
        if (!req.failed && failed++ < 20) {                                                        \
            printf("inline_edges: %s, %s size %#llx, cursor %#llx limit %#llx: ",                  \
                   entry_names[req.entry], req.constant ? "constant" : "variable",                \
                   (unsigned long long)req.size, (unsigned long long)req.cursor,                  \
                   (unsigned long long)req.limit);                                                 \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
        req.failed = 1;                                                                            \
    } while (0)

/* Kinds taken in turn: their slots (the slot entries take the kind's low byte as the slot). */
static const uint32_t kinds[] = {0, 3, 254, 255, 1000, 0xFFFFFFFFu};

/* Sets the head's window for a request through `entry`. */
static void begin(uintptr_t cursor, uintptr_t limit, size_t size, int entry, int constant) {
    uint32_t kind = kinds[cases % (sizeof kinds / sizeof kinds[0])];
    cases++;
    req.cursor = cursor;
    req.limit = limit;
    req.size = size;
    req.entry = entry;
    req.constant = constant;
    req.kind = kind;
    req.slot = (jitarena_kind_slot)(entry == ALLOC ? (kind < 255u ? kind : 255u) : kind & 255u);
    req.slow_calls = slow_calls;
    req.slow_at_calls = slow_at_calls;
    req.failure_calls = failure_calls;
    req.failed = 0;
    slow_result = entry == OR_FAILURE              ? NULL
                  : entry == OR_FAILURE_SLOW_BLOCK ? (void*)slow_block
                  : cases / 7 % 2                  ? (void*)slow_block
                                                   : NULL;
    head.cursor = before.cursor = opaque(cursor);
    head.limit = before.limit = opaque(limit);
}

/* The request through req.entry, of SIZE bytes: a literal is a constant to the inline path. */
#define ARENA ((jitarena*)&head)
#define CALL(SIZE)                                                                                 \
    (req.entry == OR_FAILURE || req.entry == OR_FAILURE_SLOW_BLOCK                                 \
         ? jitarena_alloc_slot_or(ARENA, (SIZE), req.slot, on_failure)                             \
     : req.entry == OR_NULL                                                                        \
         ? jitarena_alloc_slot_or(ARENA, (SIZE), req.slot, (jitarena_on_failure)NULL)              \
     : req.entry == SLOT    ? jitarena_alloc_slot(ARENA, (SIZE), req.slot)                         \
     : req.entry == SLOT_AT ? jitarena_alloc_slot_at(ARENA, (SIZE), req.slot, &site)               \
                            : jitarena_alloc(ARENA, (SIZE), req.kind))

/* Checks what the request returned and did against the rule. */
static void finish(void* block) {
    uintptr_t cursor = req.cursor, window = req.limit - req.cursor;
    size_t size = req.size;
    /* Rounded only when the size is at most the window (at most 1 GiB): it cannot wrap. */
    int fits = size != 0 && size <= window && (size + (ALIGN - 1u)) / ALIGN * ALIGN <= window;
    if (fits) {
        uintptr_t next = cursor + (size + (ALIGN - 1u)) / ALIGN * ALIGN;
        uint64_t was = before.kind_packed[req.slot], now = head.kind_packed[req.slot];
        uint64_t was_bytes = was & 0x7FFFFFFFu, bytes = now & 0x7FFFFFFFu;
        if (slow_calls != req.slow_calls || slow_at_calls != req.slow_at_calls ||
            failure_calls != req.failure_calls)
            FAIL("went out of line");
        if (block != (void*)cursor) FAIL("returned %p, not the cursor", block);
        if (head.cursor != next) FAIL("moved the cursor to %#llx", (unsigned long long)head.cursor);
        if (now - was != JITARENA_PACKED_ONE + size || bytes != was_bytes + size ||
            (bytes - now) >> 31 != ((was_bytes - was) >> 31) + 1)
            FAIL("counted %#llx after %#llx", (unsigned long long)now, (unsigned long long)was);
        /* The two fields a fit changes, as they were, so that the rest compares below. */
        head.cursor = before.cursor;
        head.kind_packed[req.slot] = was;
    } else {
        int at = req.entry == SLOT_AT;
        int with_failure = req.entry == OR_FAILURE || req.entry == OR_FAILURE_SLOW_BLOCK;
        void* expected = slow_result != NULL ? slow_result : with_failure ? failure_block : NULL;
        if (slow_calls == req.slow_calls && slow_at_calls == req.slow_at_calls)
            FAIL("stayed inline, returning %p", block);
        else if (slow_calls != req.slow_calls + !at || slow_at_calls != req.slow_at_calls + at)
            FAIL("called the slow path %d and slow_at %d times", slow_calls - req.slow_calls,
                 slow_at_calls - req.slow_at_calls);
        else if (slow_arena != ARENA || slow_size != size ||
                 (slow_kind < 255u ? slow_kind : 255u) != req.slot ||
                 (at && slow_site != (const void*)&site))
            FAIL("passed the slow path %p, %#llx, kind %u, site %p", (void*)slow_arena,
                 (unsigned long long)slow_size, (unsigned)slow_kind, slow_site);
        if (failure_calls != req.failure_calls + (with_failure && slow_result == NULL))
            FAIL("called on_failure() %d times", failure_calls - req.failure_calls);
        if (block != expected) FAIL("returned %p, not %p", block, expected);
    }
    if (memcmp(&head, &before, sizeof head) != 0) {
        FAIL(fits ? "changed more than the cursor and the slot's counter" : "changed the head");
        head = before;
    }
}

/* One request of `size` bytes, unseen by the compiler, through every entry point. */
static void variable(uintptr_t cursor, uintptr_t limit, size_t size) {
    int entry;
    for (entry = 0; entry < ENTRIES; entry++) {
        begin(cursor, limit, size, entry, 0);
        finish(CALL(opaque_size(size)));
    }
}

/* Every variable size of interest in the window [cursor, limit). */
static void variable_sizes(uintptr_t cursor, uintptr_t limit) {
    const size_t a = (size_t)ALIGN, window = (size_t)(limit - cursor);
    const size_t fixed[] = {0, 1, a - 1, a, a + 1, 2 * a - 1, 2 * a, 2 * a + 1, 3 * a, 4095,
                            4096, 4097, 65535, 65536, 65537, (size_t)GIB, (size_t)GIB + 1,
                            SIZE_MAX / 2, SIZE_MAX / 2 + 1, SIZE_MAX / 2 + a};
    /* Either side of: the bytes left; the cursor's and the limit's values; the sizes whose
     * bump wraps the cursor round to itself and to the limit; SIZE_MAX + 1 (0). */
    const size_t around[] = {window, (size_t)cursor, (size_t)limit, (size_t)(0 - cursor),
                             (size_t)(0 - cursor) + window, 0};
    unsigned i;
    size_t d;
    for (i = 0; i < sizeof fixed / sizeof fixed[0]; i++) variable(cursor, limit, fixed[i]);
    for (i = 0; i < sizeof around / sizeof around[0]; i++)
        for (d = 0; d <= 4 * a + 2; d++) variable(cursor, limit, around[i] + d - (2 * a + 1));
}

/* Windows of these bytes from cursors low (across 2^32 on 64-bit targets), in the middle and
 * up to the highest page ends. */
static void variable_path(void) {
    const uintptr_t a = ALIGN, half = (uintptr_t)1 << (sizeof(uintptr_t) * 4);
    const uintptr_t windows[] = {0, 1, a - 1, a, a + 1, 2 * a, 3 * a, 4096, 65536 - 3 * a,
                                 65535, 65536, 65536 + a, GIB};
    const uintptr_t low[] = {a, 3 * a, 4096 + 3 * a, 65536 + 3 * a, half - a, half,
                             MIDDLE - a, MIDDLE, MIDDLE + 3 * a};
    unsigned w, c;
    variable_sizes(0, 0); /* no page */
    for (w = 0; w < sizeof windows / sizeof windows[0]; w++) {
        const uintptr_t window = windows[w];
        const uintptr_t high[] = {TOP_LIMIT - window, TOP_ALIGNED - window,
                                  TOP_ALIGNED - a - window, TOP_ALIGNED - 65536 - window};
        for (c = 0; c < sizeof low / sizeof low[0]; c++) variable_sizes(low[c], low[c] + window);
        for (c = 0; c < sizeof high / sizeof high[0]; c++)
            variable_sizes(high[c], high[c] + window);
    }
}

/* Windows [cursor, limit) around a request of n bytes: no page, low, in the middle, and ending
 * at the highest page ends. */
static unsigned constant_windows(size_t n, uintptr_t* cursors, uintptr_t* limits) {
    const uintptr_t a = ALIGN;
    const uintptr_t r = n != 0 && n <= GIB ? (n + (a - 1u)) / a * a : 0;
    const uintptr_t windows[] = {0, 1, a - 1, a, r - a, r - 1, r, r + 1, r + a,
                                 65535, 65536, 65536 + a, GIB};
    const uintptr_t ends[] = {TOP_LIMIT, TOP_ALIGNED};
    unsigned count = 0, w, e;
    cursors[count] = 0;
    limits[count++] = 0;
    for (w = 0; w < sizeof windows / sizeof windows[0]; w++) {
        uintptr_t window = windows[w];
        if (window > GIB + a) continue; /* r - a or r - 1 below 0 */
        cursors[count] = 3 * a;
        limits[count++] = 3 * a + window;
        cursors[count] = MIDDLE;
        limits[count++] = MIDDLE + window;
        for (e = 0; e < sizeof ends / sizeof ends[0]; e++) {
            cursors[count] = ends[e] - window;
            limits[count++] = ends[e];
        }
    }
    return count;
}

#if defined(__OPTIMIZE__) && (defined(__GNUC__) || defined(__clang__))
/* Whether a literal reaches an inline function as a constant, as jitarena_fits() needs for its
 * constant test: else that test went untested. */
static inline int seen_as_constant(size_t size) { return __builtin_constant_p(size); }
#define CHECK_CONSTANT(N)                                                                          \
    do {                                                                                           \
        begin(0, 0, (N), OR_FAILURE, 1);                                                           \
        if (!seen_as_constant(N)) FAIL("the compiler did not see the size as a constant");        \
    } while (0)
#else
#define CHECK_CONSTANT(N) ((void)0)
#endif

/* The literal size N through every entry point, in every window of constant_windows(): a
 * function of its own for each size, small enough for the compiler to inline every call. */
#define CONSTANT(NAME, N)                                                                          \
    static void NAME(void) {                                                                       \
        uintptr_t cursors[64], limits[64];                                                         \
        unsigned i, n = constant_windows((N), cursors, limits);                                    \
        int entry;                                                                                 \
        CHECK_CONSTANT(N);                                                                         \
        for (i = 0; i < n; i++)                                                                    \
            for (entry = 0; entry < ENTRIES; entry++) {                                            \
                begin(cursors[i], limits[i], (N), entry, 1);                                       \
                finish(CALL(N));                                                                   \
            }                                                                                      \
    }
CONSTANT(constant_1, 1)
CONSTANT(constant_3, 3)
CONSTANT(constant_4, 4)
CONSTANT(constant_5, 5)
CONSTANT(constant_7, 7)
CONSTANT(constant_8, 8)
CONSTANT(constant_9, 9)
CONSTANT(constant_24, 24)
CONSTANT(constant_4096, 4096)
CONSTANT(constant_65535, 65535)
CONSTANT(constant_65536, 65536)
/* Literal sizes that take the variable test. */
CONSTANT(constant_0, 0)
CONSTANT(constant_65537, 65537)
CONSTANT(constant_gib, 1u << 30)
CONSTANT(constant_half, SIZE_MAX / 2 + 1)
CONSTANT(constant_max_less_one, SIZE_MAX - 1)
CONSTANT(constant_max, SIZE_MAX)

static void (*const constant_sizes[])(void) = {
    constant_1,    constant_3,     constant_4,     constant_5,    constant_7,
    constant_8,    constant_9,     constant_24,    constant_4096, constant_65535,
    constant_65536, constant_0,    constant_65537, constant_gib,  constant_half,
    constant_max_less_one, constant_max};

/* jitarena_alloc() of a NULL arena goes out of line. */
static void null_arena(void) {
    void* block;
    int calls = slow_calls;
    begin(0, 0, 8, ALLOC, 0);
    slow_result = slow_block;
    block = jitarena_alloc(NULL, opaque_size(8), 3);
    if (slow_calls != calls + 1 || slow_arena != NULL || slow_size != 8 || block != slow_block)
        FAIL("a NULL arena: %d slow calls, arena %p, returned %p", slow_calls - calls,
             (void*)slow_arena, block);
}

int main(void) {
    unsigned s;
    before.mark_next = 0x1230;
    before.mark_limit = 0x4560;
    before.used_bias = 0x789A;
    for (s = 0; s < JITARENA_KIND_SLOTS; s++) /* bytes 1000 + s, count 7 + s */
        before.kind_packed[s] = (uint64_t)(1000u + s) - (uint64_t)(7u + s) * ((uint64_t)1 << 31);
    memset(before.marks, 0x5A, sizeof before.marks);
    head = before;
    variable_path();
    for (s = 0; s < sizeof constant_sizes / sizeof constant_sizes[0]; s++) constant_sizes[s]();
    null_arena();
    printf("inline_edges: %ld cases, %ld failed\n", cases, failed);
    return failed != 0;
}
