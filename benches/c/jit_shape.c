/* The whole cost of jitarena in the .NET JIT's shape, against a plain arena written from the
 * public description of the JIT's own (round, bump, compare, 64 KiB pages from the host;
 * no counting, no phases). One program, two builds: -DPLAIN_ARENA for the plain arena, without
 * for jitarena as docs/adopting.md puts it into the JIT. Both builds have the JIT's objects as
 * far as the arena goes: a Compiler object pointing at its ArenaAllocator object (the JIT's
 * `compArenaAllocator`, on jitNativeCode's stack), which holds the JIT's own bump pointers in the
 * plain build and the jitarena it created in the other; allocator objects made from the
 * Compiler at each call site (`new (compiler, CMK_...)`) or held in memory (a container's); the
 * JIT's BeginPhase and EndPhase, functions of their own that store the phase, with the guide's
 * marks (skipped for an inlinee) on top; pages from the host (the replay host's allocateSlab,
 * which caches nothing: malloc and free) in both.
 *
 * Each method: an arena created (the JIT's stack-local arena in jitNativeCode), its phases begun
 * and ended as the JIT's compiler runs them (children ended inside their parent), about 2,700
 * allocations of JIT-like sizes, the method ended (no log open: a throughput run) and the arena
 * destroyed. Methods are heavy-tailed: most small (MinOpts), a few large.
 *
 *   jit_shape MODE METHODS [TIER]
 *     MODE: all | alloc | held | marks | life | reset | done | pages | small | inline | none
 *     TIER: minopts | fullopts (every method of that shape, a FullOpts one of 2,700
 *           allocations), or the mix below
 *
 * A third build, -DMARKS_OFF, is jitarena's without the phase marks (the guide's phase calls
 * keep their test and load), to measure the mark alone.
 *
 * Run under callgrind (tests/whole_cost.rs), the instruction counts of the two builds differ by
 * exactly what jitarena adds. Each mode isolates one part, each method creating and destroying
 * its arena unless said: `life` that alone (with the page a method's first allocation brings),
 * `alloc` allocations at call sites naming their kind, `held` the same through allocator objects
 * held in memory, `marks` phase marks, `pages` 300 requests of 13,000 bytes (five to a 64 KiB
 * page in both builds: 60 pages) and `small` as many of 8 bytes (one page), `inline` eight
 * inline attempts, each an inlinee Compiler in the inliner's arena running 9 phases with 100
 * allocations at call sites; `reset` a reset only and `done` jitarena_method_done only, of one
 * arena for every method; `all` the whole method; `none` nothing (the start-up and set-up that
 * the others are measured above). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitarena.h"

#define KINDS 55
#define PHASES 131
#define PAGE 65536

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void) {
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Sizes as jit-alloc-profile.md: small nodes dominate (about 88 bytes on average), a few
 * arrays. Precomputed so that both builds run the same stream at the same cost. */
#define STREAM 65536
static uint32_t sizes[STREAM];
static uint8_t kinds[STREAM];

static void make_stream(void) {
    size_t i;
    for (i = 0; i < STREAM; i++) {
        uint64_t r = next();
        uint32_t size;
        switch (r % 16) {
        case 0: size = 200 + (uint32_t)(r >> 8) % 800; break;
        case 1: size = (r >> 8) % 64 == 0 ? 4000 + (uint32_t)(r >> 16) % 12000 : 120; break;
        default: size = 16 + 8 * (uint32_t)((r >> 8) % 12); break;
        }
        sizes[i] = size;
        kinds[i] = (uint8_t)((r >> 40) % KINDS);
    }
}

/* The host's slabs (allocateSlab and freeSlab), the same in both builds: the replay host's,
 * which cache nothing. Out of line, as the host's calls are. */
static uint64_t host_pages;
static __attribute__((noinline)) void* host_alloc_page(void* host, size_t size) {
    (void)host;
    host_pages++;
    return malloc(size);
}
static __attribute__((noinline)) void host_free_page(void* host, void* page, size_t size) {
    (void)host; (void)size;
    free(page);
}

#ifdef PLAIN_ARENA
/* The JIT's own ArenaAllocator, from its public description: its bump pointers (as integers
 * here, so that the first bump from none is defined C) and page list in the object itself; a
 * page starts with its descriptor of three pointer-sized words. */
typedef struct page {
    struct page* next;
    size_t bytes;
    size_t used;
} page;
typedef struct arena_allocator {
    uintptr_t next;
    uintptr_t last;
    page* first;
    page* current;
} arena_allocator;
/* The JIT's allocateNewPage: the descriptor plus the request, rounded up to 64 KiB; the old
 * page's bytes used noted in its descriptor, the new page appended to the list. */
static __attribute__((noinline)) void* plain_new_page(arena_allocator* a, size_t size) {
    size_t want = (size + sizeof(page) + PAGE - 1) / PAGE * PAGE;
    page* p;
    if (a->current != NULL) {
        a->next -= size;
        a->current->used = a->next - (uintptr_t)(a->current + 1);
    }
    p = (page*)host_alloc_page(NULL, want);
    if (p == NULL) abort();
    p->next = NULL;
    p->bytes = want;
    p->used = 0;
    if (a->current != NULL) {
        a->current->next = p;
    } else {
        a->first = p;
    }
    a->current = p;
    a->next = (uintptr_t)(p + 1) + size;
    a->last = (uintptr_t)p + want;
    return p + 1;
}
/* As the JIT's allocateMemory: round the size up to the pointer size, bump, then compare the
 * bumped pointer with the page's end (a new page past it). */
static inline void* plain_alloc(arena_allocator* a, size_t size) {
    uintptr_t block = a->next;
    size = (size + sizeof(void*) - 1) & ~(sizeof(void*) - 1);
    a->next = block + size;
    if (a->next > a->last) return plain_new_page(a, size);
    return (void*)block;
}
static __attribute__((noinline)) void arena_destroy(arena_allocator* a) {
    page* p = a->first;
    while (p != NULL) {
        page* next = p->next;
        host_free_page(NULL, p, p->bytes);
        p = next;
    }
    a->first = a->current = NULL;
    a->next = a->last = 0;
}
static int arena_initialize(arena_allocator* a) {
    a->next = a->last = 0;
    a->first = a->current = NULL;
    return 1;
}
/* Between methods on one arena: the JIT has no reset; its pages go back. */
#define arena_reset arena_destroy
/* The JIT's Release CompAllocator: the ArenaAllocator alone (the kind is dropped). */
typedef struct { arena_allocator* arena; } allocator;
static inline void* allocate(allocator c, size_t size) { return plain_alloc(c.arena, size); }
#else
/* The guide's ArenaAllocatorT: the jitarena it created (initialize()). */
typedef struct arena_allocator { jitarena* handle; } arena_allocator;
static jitarena_config cfg;
static __attribute__((noinline)) void* out_of_memory(void) {
    abort();
}
static int arena_initialize(arena_allocator* a) {
    a->handle = jitarena_create(&cfg);
    return a->handle != NULL;
}
static void arena_destroy(arena_allocator* a) {
    jitarena_destroy(a->handle);
    a->handle = NULL;
}
static void arena_reset(arena_allocator* a) { jitarena_reset(a->handle); }
/* The guide's CompAllocatorT: one word, as the JIT's, the jitarena and the kind's slot in a
 * jitarena_kind_handle. */
typedef struct { jitarena_kind_handle handle; } allocator;
static inline void* allocate(allocator c, size_t size) {
    return jitarena_alloc_handle_or(c.handle, size, out_of_memory);
}
static const char* kind_names[KINDS];
static const char* phase_names[PHASES];
static char name_text[KINDS + PHASES][32];
#endif

/* The JIT's Compiler object, as far as the arena goes: compArenaAllocator, impInlineInfo
 * (non-NULL for an inlinee: compIsForInlining()), pCompJitTimer and mostRecentlyActivePhase;
 * the guide adds compArena, the jitarena of compArenaAllocator (compInit sets it; an inlinee's
 * is its inliner's). */
typedef struct compiler {
    arena_allocator* arena;
    const struct compiler* inliner;
    const void* timer;
    uint32_t most_recent_phase;
#ifndef PLAIN_ARENA
    jitarena* handle;
#endif
} compiler;

/* compInit's part: the arena the Compiler allocates from. */
static void compiler_init(compiler* comp, arena_allocator* arena, const compiler* inliner) {
    comp->arena = arena;
    comp->inliner = inliner;
    comp->timer = NULL;
    comp->most_recent_phase = 0;
#ifndef PLAIN_ARENA
    comp->handle = arena->handle;
#endif
}

/* Compiler::getAllocator(kind): the JIT's holds its ArenaAllocator, the guide's the jitarena
 * and the kind's slot in one word. */
static inline allocator allocator_of(const compiler* comp, uint32_t kind) {
#ifdef PLAIN_ARENA
    allocator c = {comp->arena};
    (void)kind;
#else
    allocator c = {jitarena_kind_handle_of(comp->handle, kind)};
#endif
    return c;
}

static uint64_t sink, allocations, marks, attempts;

/* The JIT's Compiler::BeginPhase and Compiler::EndPhase: functions of their own (compiler.cpp)
 * that store the phase, EndPhase after its timer's test (a JitTimer exists only when a time log
 * is asked for), called from each phase's run; jitarena's build adds the guide's mark, which an
 * inlinee skips. The empty asm tells the compiler that a call has effects it cannot see, as a
 * call into another of the JIT's files has: without it, gcc drops the plain build's calls whose
 * store the next call overwrites. */
static __attribute__((noinline)) void timer_end_phase(compiler* comp, uint32_t p) {
    (void)comp; (void)p;
    abort(); /* no timer here */
}
#if defined(PLAIN_ARENA)
#define GUIDE_MARK(comp, p, mark) ((void)0)
#elif defined(MARKS_OFF)
/* The guide's test and load without the mark (an empty asm takes the arena): the mark alone is
 * what the jitarena build runs beyond this one. */
#define GUIDE_MARK(comp, p, mark)                                                                \
    do {                                                                                         \
        if ((comp)->inliner == NULL) __asm__ __volatile__("" : : "r"((comp)->handle), "r"(p));   \
    } while (0)
#else
#define GUIDE_MARK(comp, p, mark)                                                                \
    do {                                                                                         \
        if ((comp)->inliner == NULL) mark((comp)->handle, (p));                                  \
    } while (0)
#endif
static __attribute__((noinline)) void BEGIN(compiler* comp, uint32_t p) {
    __asm__ __volatile__("" ::: "memory");
    comp->most_recent_phase = p;
    GUIDE_MARK(comp, p, jitarena_phase_begin);
}
static __attribute__((noinline)) void END(compiler* comp, uint32_t p) {
    __asm__ __volatile__("" ::: "memory");
    if (comp->timer != NULL) timer_end_phase(comp, p);
    comp->most_recent_phase = p;
    GUIDE_MARK(comp, p, jitarena_phase_end);
}

/* Call sites of the JIT: `new (compiler, CMK_...)` and getAllocator(CMK_...) name their kind as
 * a constant, so each site's allocator is made where it allocates. Eight sites, each its own
 * kind (spread over the 55) and each a function of its own, as the JIT's sites are spread over
 * its functions: the allocation is inlined into each, compiled apart (a switch over inlined
 * sites let a compiler share one site's work with the others, differently in the two builds). */
#if defined(__GNUC__) && !defined(__clang__)
/* Nor may the compiler learn what a site touches (gcc's noipa): it kept the loop's counters in
 * registers across the plain build's sites, whose slow path it could see, and not across
 * jitarena's, which calls the library. */
#define SITE_FUNCTION __attribute__((noipa))
#else
#define SITE_FUNCTION __attribute__((noinline))
#endif
#define SITE(n)                                                                                \
    static SITE_FUNCTION char* site_##n(const compiler* comp, size_t size) {                 \
        char* m = (char*)allocate(allocator_of(comp, (n) * 7u), size);                        \
        m[0] = (char)(n);                                                                      \
        return m;                                                                              \
    }
SITE(0) SITE(1) SITE(2) SITE(3) SITE(4) SITE(5) SITE(6) SITE(7)
static inline char* allocate_at_site(const compiler* comp, unsigned site, size_t size) {
    switch (site & 7u) {
    case 0: return site_0(comp, size);
    case 1: return site_1(comp, size);
    case 2: return site_2(comp, size);
    case 3: return site_3(comp, size);
    case 4: return site_4(comp, size);
    case 5: return site_5(comp, size);
    case 6: return site_6(comp, size);
    default: return site_7(comp, size);
    }
}

/* One method's phases and allocations: `phases` top-level phases, every sixteenth with three
 * children ended inside it (about 18 child ends a FullOpts method, as the JIT's 17; each child
 * end a site of its own with its constant phase, as the JIT's EndPhase(PHASE_...) calls), the
 * allocations spread over them. `held`: the allocations go through allocator objects kept in
 * memory (a container's allocator: jitstd::vector's, ArrayStack's), one per kind, instead. */
static inline __attribute__((always_inline)) void compile_body(compiler* comp, size_t allocs, uint32_t phases, size_t* at, int do_alloc, int do_marks, const allocator* held) {
    uint32_t p;
    size_t per = allocs / phases + 1, done = 0;
    for (p = 0; p < phases && done < allocs; p++) {
        size_t i;
        unsigned child = 0;
        if (do_marks) BEGIN(comp, p), marks++;
        for (i = 0; i < per && done < allocs; i++, done++) {
            size_t k = (*at)++ % STREAM;
            if (do_alloc) {
                char* m;
                allocations++;
                if (held != NULL) {
                    m = (char*)allocate(held[kinds[k] & 7u], sizes[k]);
                    m[0] = (char)k;
                } else {
                    m = allocate_at_site(comp, kinds[k], sizes[k]);
                }
                sink += (uintptr_t)m;
            }
            if (do_marks && p % 16 == 0 && i % (per / 4 + 1) == per / 4) {
                switch (child++ % 3) {
                case 0: END(comp, PHASES - 1); break;
                case 1: END(comp, PHASES - 2); break;
                default: END(comp, PHASES - 3); break;
                }
                marks++;
            }
        }
        if (do_marks) END(comp, p), marks++;
    }
}

/* One copy of the loop per mode, each compiled with only what it runs: allocations alone
 * (at call sites or through held allocators), marks alone, or both (a whole method). */
static __attribute__((noinline)) void compile_allocs(compiler* comp, size_t allocs, uint32_t phases, size_t* at) {
    compile_body(comp, allocs, phases, at, 1, 0, NULL);
}
static __attribute__((noinline)) void compile_held(compiler* comp, size_t allocs, uint32_t phases, size_t* at, const allocator* held) {
    compile_body(comp, allocs, phases, at, 1, 0, held);
}
static __attribute__((noinline)) void compile_marks(compiler* comp, size_t allocs, uint32_t phases, size_t* at) {
    compile_body(comp, allocs, phases, at, 0, 1, NULL);
}
static __attribute__((noinline)) void compile_all(compiler* comp, size_t allocs, uint32_t phases, size_t* at) {
    compile_body(comp, allocs, phases, at, 1, 1, NULL);
}

/* Inline attempts inside the root's "Morph - Inlining": each an inlinee Compiler (its
 * impInlineInfo names the inliner) in the inliner's arena, running its first phases (9 when
 * its import succeeds) with 100 allocations at call sites naming their kinds. */
#define ATTEMPTS 8
static __attribute__((noinline)) void compile_inlinees(compiler* root, size_t* at) {
    int n;
    for (n = 0; n < ATTEMPTS; n++) {
        compiler inlinee;
        compiler_init(&inlinee, root->arena, root);
        attempts++;
        compile_body(&inlinee, 100, 9, at, 1, 1, NULL);
    }
}

/* Requests of one size at one site: `pages` (13,000 bytes: five to a 64 KiB page in either
 * build, the sixth on a new page) and `small` (8 bytes) make as many. */
static __attribute__((noinline)) void compile_sized(compiler* comp, size_t size) {
    size_t i;
    for (i = 0; i < 300; i++) {
        char* m = (char*)allocate(allocator_of(comp, 3u), size);
        m[0] = (char)i;
        allocations++;
        sink += (uintptr_t)m;
    }
}

/* jitarena_method_done, as the guide's compCompileFinish calls it (no log: nothing asked of
 * the host). */
#ifndef PLAIN_ARENA
static void method_done(compiler* comp, long context) {
    jitarena_method meth = JITARENA_METHOD_INIT;
    meth.context = context;
    (void)jitarena_method_done(comp->handle, &meth);
}
#endif

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "all";
    long methods = argc > 2 ? atol(argv[2]) : 1000, m;
    const char* tier = argc > 3 ? argv[3] : "mix";
    size_t at = 0;
    int all = strcmp(mode, "all") == 0;
    int alloc_only = strcmp(mode, "alloc") == 0, marks_only = strcmp(mode, "marks") == 0;
    int life = strcmp(mode, "life") == 0, reset = strcmp(mode, "reset") == 0;
    int done = strcmp(mode, "done") == 0;
    int held_only = strcmp(mode, "held") == 0;
    int pages = strcmp(mode, "pages") == 0, small = strcmp(mode, "small") == 0;
    int inlining = strcmp(mode, "inline") == 0;
    /* Each method creates and destroys its arena, but in `reset`, `done` and `none`, which
     * share one (reset between methods in `reset`). */
    int own_arena = !(reset || done || strcmp(mode, "none") == 0);
    allocator held[8];
    arena_allocator shared;
    int i;
#ifndef PLAIN_ARENA
    for (i = 0; i < KINDS + PHASES; i++) snprintf(name_text[i], sizeof name_text[i], i < KINDS ? "CMK_Kind%d" : "Phase name %d", i);
    for (i = 0; i < KINDS; i++) kind_names[i] = name_text[i];
    for (i = 0; i < PHASES; i++) phase_names[i] = name_text[KINDS + i];
    jitarena_config_init(&cfg);
    cfg.kind_names = kind_names;
    cfg.kind_count = KINDS;
    cfg.phase_names = phase_names;
    cfg.phase_count = PHASES;
    cfg.page_alloc = host_alloc_page;
    cfg.page_free = host_free_page;
#endif
    if (!arena_initialize(&shared)) return 1; /* names seen before every method's create */
    make_stream();
    for (m = 0; m < methods; m++) {
        /* Heavy-tailed: 3 of 4 MinOpts (about 700 allocations, 54 phases), the rest FullOpts
         * (about 2,700, or 20,000 for one in 16). */
        uint64_t r = next();
        int mixed = strcmp(tier, "mix") == 0;
        int minopts = mixed ? r % 4 != 0 : strcmp(tier, "minopts") == 0;
        size_t allocs = minopts ? 700 : ((r >> 8) % 16 == 0 && mixed ? 20000 : 2700);
        uint32_t phases = minopts ? 54 : 97;
        arena_allocator local;
        compiler comp;
        if (own_arena && !arena_initialize(&local)) return 1;
        compiler_init(&comp, own_arena ? &local : &shared, NULL);
        for (i = 0; i < 8; i++) held[i] = allocator_of(&comp, (uint32_t)i * 7u);
        if (all) compile_all(&comp, allocs, phases, &at);
        else if (alloc_only) compile_allocs(&comp, allocs, phases, &at);
        else if (held_only) compile_held(&comp, allocs, phases, &at, held);
        else if (marks_only) compile_marks(&comp, allocs, phases, &at);
        else if (pages) compile_sized(&comp, 13000);
        else if (small) compile_sized(&comp, 8);
        else if (inlining) compile_inlinees(&comp, &at);
        else if (life) (void)allocate(allocator_of(&comp, 0), 8); /* the page a method's first allocation brings */
#ifndef PLAIN_ARENA
        if (all || done) method_done(&comp, m);
#endif
        if (own_arena) arena_destroy(comp.arena);
        else if (reset) arena_reset(comp.arena);
    }
    arena_destroy(&shared);
    (void)done;
    printf("methods %ld allocations %llu marks %llu attempts %llu pages %llu (%llu)\n", methods,
           (unsigned long long)allocations, (unsigned long long)marks, (unsigned long long)attempts,
           (unsigned long long)host_pages, (unsigned long long)(sink & 1));
    return 0;
}
