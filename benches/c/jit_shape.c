/* The whole cost of jitarena in the .NET JIT's shape, against a plain arena written from the
 * public description of the JIT's own (round to 8, bump, compare, 64 KiB pages from the host;
 * no counting, no phases). One program, two builds: -DPLAIN_ARENA for the plain arena, without
 * for jitarena. Each method: an arena created (the JIT's stack-local arena in jitNativeCode),
 * its phases begun and ended as the JIT's compiler runs them (children ended inside their
 * parent), about 2,700 allocations of JIT-like sizes through a kind held by an allocator object,
 * the method ended (no log open: a throughput run) and the arena destroyed. Methods are
 * heavy-tailed: most small (MinOpts), a few large.
 *
 *   jit_shape MODE METHODS [TIER]   MODE: all | alloc | held | marks | life | reset | done | none
 *                                   TIER: minopts | fullopts (every method of that shape, a
 *                                   FullOpts one of 2,700 allocations), or the mix below
 *
 * Run under callgrind (tests/whole_cost.rs), the instruction counts of the two builds differ by
 * exactly what jitarena adds. Each mode isolates one part: `alloc` allocations only at call
 * sites naming their kind (one arena for every method, reset between them), `held` the same
 * through allocator objects held in memory, `marks` phase marks only (reset between methods),
 * `life` create and destroy only, `reset` resets only, `done` jitarena_method_done only; `all`
 * is the whole method; `none` nothing (the start-up and set-up that the others are measured
 * above). Both builds make the JIT's own phase calls (its Release BeginPhase and EndPhase store
 * the phase); jitarena's marks come on top. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitarena.h"

#define KINDS 55
#define PHASES 131

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

/* What the JIT's own Release BeginPhase and EndPhase do, in both builds: the compiler's most
 * recently active phase, stored (jitarena's marks come on top of it, in the same functions). Not
 * static, so that the store stays, as the JIT's store into its Compiler object does. */
uint32_t most_recent_phase;

#ifdef PLAIN_ARENA
/* The JIT's own arena, from its public description. */
typedef struct page {
    struct page* prev;
    size_t size;
} page;
typedef struct plain {
    char* next;
    char* last;
    page* pages;
} plain;
static __attribute__((noinline)) void* plain_new_page(plain* a, size_t size) {
    size_t want = size + sizeof(page) > 65536 ? (size + sizeof(page) + 65535) / 65536 * 65536 : 65536;
    page* p = (page*)malloc(want);
    if (p == NULL) abort();
    p->prev = a->pages;
    p->size = want;
    a->pages = p;
    a->next = (char*)(p + 1) + size;
    a->last = (char*)p + want;
    return p + 1;
}
static inline void* plain_alloc(plain* a, size_t size) {
    void* block;
    size = (size + 7) & ~(size_t)7;
    block = a->next;
    if ((size_t)(a->last - a->next) < size) return plain_new_page(a, size);
    a->next += size;
    return block;
}
static __attribute__((noinline)) void plain_destroy(plain* a) {
    page* p = a->pages;
    while (p != NULL) {
        page* prev = p->prev;
        free(p);
        p = prev;
    }
    a->pages = NULL;
    a->next = a->last = NULL;
}
/* The JIT's Release CompAllocator: the arena alone (the kind is dropped). */
typedef struct { plain* arena; } allocator;
#define ARENA plain
static inline void* allocate(allocator c, size_t size) { return plain_alloc(c.arena, size); }
static inline allocator allocator_of(ARENA* a, uint32_t kind) { allocator c = {a}; (void)kind; return c; }
#define BEGIN_MARK(a, p) ((void)(a), (void)(p))
#define END_MARK(a, p) ((void)(a), (void)(p))
#else
static __attribute__((noinline)) void* out_of_memory(jitarena* a, size_t size, jitarena_kind_slot slot) {
    (void)a; (void)size; (void)slot;
    abort();
}
/* The guide's CompAllocator: the arena and the kind's slot. */
typedef struct { jitarena* arena; jitarena_kind_slot slot; } allocator;
#define ARENA jitarena
static inline void* allocate(allocator c, size_t size) {
    return jitarena_alloc_slot_or(c.arena, size, c.slot, out_of_memory);
}
static inline allocator allocator_of(ARENA* a, uint32_t kind) {
    allocator c = {a, jitarena_kind_slot_of(kind)};
    return c;
}
#define BEGIN_MARK(a, p) jitarena_phase_begin((a), (p))
#define END_MARK(a, p) jitarena_phase_end((a), (p))
static const char* kind_names[KINDS];
static const char* phase_names[PHASES];
static char name_text[KINDS + PHASES][32];
#endif

static uint64_t sink, allocations, marks;

/* The JIT's Compiler::BeginPhase and Compiler::EndPhase: functions of their own (compiler.cpp),
 * called from each phase's run, where the guide puts jitarena's marks. */
static __attribute__((noinline)) void BEGIN(ARENA* a, uint32_t p) {
    most_recent_phase = p;
    BEGIN_MARK(a, p);
}
static __attribute__((noinline)) void END(ARENA* a, uint32_t p) {
    most_recent_phase = p;
    END_MARK(a, p);
}

/* Call sites of the JIT: `new (compiler, CMK_...)` and getAllocator(CMK_...) name their kind as
 * a constant, so each site's allocator is made where it allocates. Eight sites, each its own
 * kind (spread over the 55), and each writing its own tag so that no build merges them. */
#define SITE(n)                                                                                \
    case n:                                                                                    \
        m = (char*)allocate(allocator_of(a, (n) * 7u), size);                                  \
        m[0] = (char)(n);                                                                      \
        break;
static inline char* allocate_at_site(ARENA* a, unsigned site, size_t size) {
    char* m;
    switch (site & 7u) {
        SITE(0) SITE(1) SITE(2) SITE(3) SITE(4) SITE(5) SITE(6)
        default: m = (char*)allocate(allocator_of(a, 49u), size); m[0] = 7; break;
    }
    return m;
}

/* One method's phases and allocations: `phases` top-level phases, every sixteenth with three
 * children ended inside it (about 18 child ends a FullOpts method, as the JIT's 17; each child
 * end a site of its own with its constant phase, as the JIT's EndPhase(PHASE_...) calls), the
 * allocations spread over them. `held`: the allocations go through allocator objects kept in
 * memory (a container's allocator: jitstd::vector's, ArrayStack's), one per kind, instead. */
static inline __attribute__((always_inline)) void compile_body(ARENA* a, size_t allocs, uint32_t phases, size_t* at, int do_alloc, int do_marks, const allocator* held) {
    uint32_t p;
    size_t per = allocs / phases + 1, done = 0;
    for (p = 0; p < phases && done < allocs; p++) {
        size_t i;
        unsigned child = 0;
        if (do_marks) BEGIN(a, p), marks++;
        for (i = 0; i < per && done < allocs; i++, done++) {
            size_t k = (*at)++ % STREAM;
            if (do_alloc) {
                char* m;
                allocations++;
                if (held != NULL) {
                    m = (char*)allocate(held[kinds[k] & 7u], sizes[k]);
                    m[0] = (char)k;
                } else {
                    m = allocate_at_site(a, kinds[k], sizes[k]);
                }
                sink += (uintptr_t)m;
            }
            if (do_marks && p % 16 == 0 && i % (per / 4 + 1) == per / 4) {
                switch (child++ % 3) {
                case 0: END(a, PHASES - 1); break;
                case 1: END(a, PHASES - 2); break;
                default: END(a, PHASES - 3); break;
                }
                marks++;
            }
        }
        if (do_marks) END(a, p), marks++;
    }
}

/* One copy of the loop per mode, each compiled with only what it runs: allocations alone
 * (at call sites or through held allocators), marks alone, or both (a whole method). */
static __attribute__((noinline)) void compile_allocs(ARENA* a, size_t allocs, uint32_t phases, size_t* at) {
    compile_body(a, allocs, phases, at, 1, 0, NULL);
}
static __attribute__((noinline)) void compile_held(ARENA* a, size_t allocs, uint32_t phases, size_t* at, const allocator* held) {
    compile_body(a, allocs, phases, at, 1, 0, held);
}
static __attribute__((noinline)) void compile_marks(ARENA* a, size_t allocs, uint32_t phases, size_t* at) {
    compile_body(a, allocs, phases, at, 0, 1, NULL);
}
static __attribute__((noinline)) void compile_all(ARENA* a, size_t allocs, uint32_t phases, size_t* at) {
    compile_body(a, allocs, phases, at, 1, 1, NULL);
}
static void compile(ARENA* a, size_t allocs, uint32_t phases, size_t* at, int do_alloc, int do_marks, const allocator* held) {
    if (held != NULL) compile_held(a, allocs, phases, at, held);
    else if (do_alloc && do_marks) compile_all(a, allocs, phases, at);
    else if (do_alloc) compile_allocs(a, allocs, phases, at);
    else if (do_marks) compile_marks(a, allocs, phases, at);
}

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
    allocator held[8];
#ifdef PLAIN_ARENA
    plain shared = {0, 0, 0};
    int i;
#else
    jitarena_config cfg;
    jitarena* shared;
    int i;
    for (i = 0; i < KINDS + PHASES; i++) snprintf(name_text[i], sizeof name_text[i], i < KINDS ? "CMK_Kind%d" : "Phase name %d", i);
    for (i = 0; i < KINDS; i++) kind_names[i] = name_text[i];
    for (i = 0; i < PHASES; i++) phase_names[i] = name_text[KINDS + i];
    jitarena_config_init(&cfg);
    cfg.kind_names = kind_names;
    cfg.kind_count = KINDS;
    cfg.phase_names = phase_names;
    cfg.phase_count = PHASES;
    shared = jitarena_create(&cfg); /* names seen before every method's create */
    if (shared == NULL) return 1;
#endif
    make_stream();
    for (m = 0; m < methods; m++) {
        /* Heavy-tailed: 3 of 4 MinOpts (about 700 allocations, 54 phases), the rest FullOpts
         * (about 2,700, or 20,000 for one in 16). */
        uint64_t r = next();
        int mixed = strcmp(tier, "mix") == 0;
        int minopts = mixed ? r % 4 != 0 : strcmp(tier, "minopts") == 0;
        size_t allocs = minopts ? 700 : ((r >> 8) % 16 == 0 && mixed ? 20000 : 2700);
        uint32_t phases = minopts ? 54 : 97;
#ifdef PLAIN_ARENA
        plain local = {0, 0, 0};
        plain* a = (all || life) ? &local : &shared;
        for (i = 0; i < 8; i++) held[i] = allocator_of(a, (uint32_t)i * 7u);
        if (all || alloc_only || marks_only || held_only)
            compile(a, allocs, phases, &at, all || alloc_only || held_only, all || marks_only, held_only ? held : NULL);
        if (life) (void)plain_alloc(a, 8); /* the page a method's first allocation brings */
        if (all || life) plain_destroy(a);
        else if (alloc_only || held_only || reset || marks_only) plain_destroy(a);
        (void)done;
#else
        jitarena_method meth = JITARENA_METHOD_INIT;
        jitarena* a = (all || life) ? jitarena_create(&cfg) : shared;
        if (a == NULL) return 1;
        for (i = 0; i < 8; i++) held[i] = allocator_of(a, (uint32_t)i * 7u);
        if (all || alloc_only || marks_only || held_only)
            compile(a, allocs, phases, &at, all || alloc_only || held_only, all || marks_only, held_only ? held : NULL);
        if (life) (void)jitarena_alloc(a, 8, 0);
        meth.context = m;
        if (all || done) (void)jitarena_method_done(a, &meth);
        if (all || life) jitarena_destroy(a);
        else if (alloc_only || held_only || reset || marks_only) jitarena_reset(a);
#endif
    }
    printf("methods %ld allocations %llu marks %llu (%llu)\n", methods, (unsigned long long)allocations,
           (unsigned long long)marks, (unsigned long long)(sink & 1));
    return 0;
}
