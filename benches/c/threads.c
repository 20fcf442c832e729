/* Many threads compiling methods at once (issue 40, item 4): jitarena against a plain arena
 * written from the public description of the .NET JIT's own (round, bump, compare, 64 KiB pages
 * from the host; no counting, no phases), in methods per second. One program, two builds:
 * -DPLAIN_ARENA for the plain arena, without for jitarena as docs/adopting.md puts it into the
 * JIT (a jitarena per method, its phase marks, jitarena_method_done with no log, trace or
 * aggregate). The methods, their phases and their allocations are benches/c/jit_shape.c's
 * `all` mode, and so are the objects around the arena (a Compiler, BeginPhase and EndPhase as
 * functions of their own, allocation sites each a function of its own), so that what differs
 * between the two builds is what jitarena adds, now with threads meeting on its process-wide
 * state (its live-arena registry, its kept arenas, the names of the last create).
 *
 * Each thread compiles its own methods, each in an arena of its own (created, used, ended and
 * destroyed on that thread), as the JIT's compiling threads do; pages come from the host (a
 * callback calling malloc and free, as the replay host's slabs, which cache nothing) in both
 * builds, through one process-wide host and one config (the JIT's static name arrays).
 *
 * The work is fixed in all, whatever the number of threads: METHODS methods planned once
 * (jit_shape's heavy-tailed mix: 3 in 4 MinOpts, 700 allocations and 54 phases, the rest
 * FullOpts, 97 phases and 2,700 allocations, 20,000 for one in 16), method i compiled by thread
 * i mod THREADS, each method's allocations the same sizes and kinds at any number of threads.
 * The clock (CLOCK_MONOTONIC) is read around the parallel section only: the threads are
 * started first and wait at a barrier, and the section ends when the last one is joined.
 *
 *   threads THREADS [METHODS [REPS [life]]]    (`life`: every method only its arena's life,
 *                                              below: the per-method path alone)
 *
 * prints each repetition's methods per second and CPU microseconds per method (all threads'
 * CPU time over the section: what the methods cost however busy the machine is), after one
 * repetition not timed (the first create's check of the names, the first look at the
 * environment, the C library's heaps), then a summary line with the medians.
 * scripts/threads.sh runs both builds in turn and tables them. */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jitarena.h"

#define KINDS 55
#define PHASES 131
#define PAGE 65536
#define MAX_THREADS 64

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void) {
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Sizes and kinds as jit_shape.c's (jit-alloc-profile.md: small nodes, about 88 bytes on
 * average, a few arrays), precomputed and shared read-only by every thread. */
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

/* What each thread counts, its own (no line shared between threads). */
static __thread uint64_t sink, allocations, marks, host_pages;

/* The host's slabs, the same in both builds: one host for the process, whose calls are out of
 * line. */
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
/* The JIT's own ArenaAllocator, from its public description (jit_shape.c's): its bump pointers
 * and page list in the object itself, pages that start with a descriptor of three pointer-sized
 * words, requests rounded up to the pointer size, pages freed at the destroy. */
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
typedef struct { arena_allocator* arena; } allocator;
static inline void* allocate(allocator c, size_t size) { return plain_alloc(c.arena, size); }
#else
/* The guide's ArenaAllocatorT and CompAllocatorT, as jit_shape.c's; one config for the process
 * (static name arrays, one host). */
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
typedef struct { jitarena* arena; jitarena_kind_slot slot; } allocator;
static inline void* allocate(allocator c, size_t size) {
    return jitarena_alloc_slot_or(c.arena, size, c.slot, out_of_memory);
}
static const char* kind_names[KINDS];
static const char* phase_names[PHASES];
static char name_text[KINDS + PHASES][32];
#endif

typedef struct compiler {
    arena_allocator* arena;
    const struct compiler* inliner;
    const void* timer;
    uint32_t most_recent_phase;
#ifndef PLAIN_ARENA
    jitarena* handle;
#endif
} compiler;

static void compiler_init(compiler* comp, arena_allocator* arena, const compiler* inliner) {
    comp->arena = arena;
    comp->inliner = inliner;
    comp->timer = NULL;
    comp->most_recent_phase = 0;
#ifndef PLAIN_ARENA
    comp->handle = arena->handle;
#endif
}

static inline allocator allocator_of(const compiler* comp, uint32_t kind) {
#ifdef PLAIN_ARENA
    allocator c = {comp->arena};
    (void)kind;
#else
    allocator c = {comp->handle, jitarena_kind_slot_of(kind)};
#endif
    return c;
}

/* The JIT's BeginPhase and EndPhase (jit_shape.c's), with the guide's marks in jitarena's
 * build. */
static __attribute__((noinline)) void timer_end_phase(compiler* comp, uint32_t p) {
    (void)comp; (void)p;
    abort(); /* no timer here */
}
#if defined(PLAIN_ARENA)
#define GUIDE_MARK(comp, p, mark) ((void)0)
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

/* Eight call sites naming their kinds, each a function of its own (jit_shape.c's). */
#if defined(__GNUC__) && !defined(__clang__)
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

/* One method's phases and allocations, as jit_shape.c's `all` mode: every sixteenth phase a
 * parent with three children ended inside it. */
static __attribute__((noinline)) void compile_all(compiler* comp, size_t allocs, uint32_t phases, size_t at) {
    uint32_t p;
    size_t per = allocs / phases + 1, done = 0;
    for (p = 0; p < phases && done < allocs; p++) {
        size_t i;
        unsigned child = 0;
        BEGIN(comp, p), marks++;
        for (i = 0; i < per && done < allocs; i++, done++) {
            size_t k = at++ % STREAM;
            char* m;
            allocations++;
            m = allocate_at_site(comp, kinds[k], sizes[k]);
            sink += (uintptr_t)m;
            if (p % 16 == 0 && i % (per / 4 + 1) == per / 4) {
                switch (child++ % 3) {
                case 0: END(comp, PHASES - 1); break;
                case 1: END(comp, PHASES - 2); break;
                default: END(comp, PHASES - 3); break;
                }
                marks++;
            }
        }
        END(comp, p), marks++;
    }
}

#ifndef PLAIN_ARENA
static void method_done(compiler* comp, long context) {
    jitarena_method meth = JITARENA_METHOD_INIT;
    meth.context = context;
    if (jitarena_method_done(comp->handle, &meth) != 0) abort();
}
#endif

/* The plan: each method's allocations, phases and first entry of the stream, the same at any
 * number of threads. */
static long methods;
static uint32_t* plan_allocs;
static uint32_t* plan_phases;
static size_t* plan_at;

static void make_plan(void) {
    long m;
    size_t at = 0;
    plan_allocs = malloc(sizeof *plan_allocs * (size_t)methods);
    plan_phases = malloc(sizeof *plan_phases * (size_t)methods);
    plan_at = malloc(sizeof *plan_at * (size_t)methods);
    if (plan_allocs == NULL || plan_phases == NULL || plan_at == NULL) abort();
    for (m = 0; m < methods; m++) {
        uint64_t r = next();
        int minopts = r % 4 != 0;
        plan_allocs[m] = minopts ? 700 : ((r >> 8) % 16 == 0 ? 20000 : 2700);
        plan_phases[m] = minopts ? 54 : 97;
        plan_at[m] = at % STREAM;
        at += plan_allocs[m];
    }
}

/* `life`: each method only its arena's life (created, one allocation of 8 bytes and the page
 * it brings, ended, destroyed), as jit_shape.c's mode of that name with the method's end: the
 * per-method path alone, where threads meet on the process-wide state most often. */
static int life;

/* One method on this thread, in an arena of its own, as the JIT's jitNativeCode. */
static void compile_method(long m) {
    arena_allocator local;
    compiler comp;
    if (!arena_initialize(&local)) abort();
    compiler_init(&comp, &local, NULL);
    if (life) {
        char* p = (char*)allocate(allocator_of(&comp, 0), 8);
        p[0] = 1;
        sink += (uintptr_t)p;
        allocations++;
    } else {
        compile_all(&comp, plan_allocs[m], plan_phases[m], plan_at[m]);
    }
#ifndef PLAIN_ARENA
    method_done(&comp, m);
#endif
    arena_destroy(&local);
}

typedef struct worker {
    pthread_t id;
    long first, step;
    uint64_t allocations, marks, pages, sink;
    char pad[64];
} worker;

static pthread_barrier_t start;

static void* run_worker(void* arg) {
    worker* w = arg;
    long m;
    allocations = marks = host_pages = sink = 0;
    pthread_barrier_wait(&start);
    for (m = w->first; m < methods; m += w->step) compile_method(m);
    w->allocations = allocations;
    w->marks = marks;
    w->pages = host_pages;
    w->sink = sink;
    return NULL;
}

static double now(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* One repetition: THREADS threads started, released together, joined; the seconds between
 * the release and the last join, and the CPU seconds of all the process's threads meanwhile
 * (in `cpu`): what the methods cost, whatever else the machine runs. */
static double repetition(int threads, uint64_t* totals, double* cpu) {
    static worker workers[MAX_THREADS];
    double t0, t1, c0;
    int t;
    if (pthread_barrier_init(&start, NULL, (unsigned)threads + 1) != 0) abort();
    for (t = 0; t < threads; t++) {
        workers[t].first = t;
        workers[t].step = threads;
        if (pthread_create(&workers[t].id, NULL, run_worker, &workers[t]) != 0) abort();
    }
    c0 = now(CLOCK_PROCESS_CPUTIME_ID);
    t0 = now(CLOCK_MONOTONIC);
    pthread_barrier_wait(&start);
    for (t = 0; t < threads; t++) pthread_join(workers[t].id, NULL);
    t1 = now(CLOCK_MONOTONIC);
    *cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
    pthread_barrier_destroy(&start);
    totals[0] = totals[1] = totals[2] = totals[3] = 0;
    for (t = 0; t < threads; t++) {
        totals[0] += workers[t].allocations;
        totals[1] += workers[t].marks;
        totals[2] += workers[t].pages;
        totals[3] += workers[t].sink;
    }
    return t1 - t0;
}

static int by_value(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

int main(int argc, char** argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    int reps = argc > 3 ? atoi(argv[3]) : 5, r;
    double rates[100], cpu_us[100], cpu;
    uint64_t totals[4];
    methods = argc > 2 ? atol(argv[2]) : 20000;
    life = argc > 4 && strcmp(argv[4], "life") == 0;
    if (threads < 1 || threads > MAX_THREADS || methods < 1 || reps < 1 || reps > 100) {
        fprintf(stderr, "usage: threads THREADS(1..%d) [METHODS [REPS(1..100) [life]]]\n", MAX_THREADS);
        return 2;
    }
#ifndef PLAIN_ARENA
    for (r = 0; r < KINDS + PHASES; r++) snprintf(name_text[r], sizeof name_text[r], r < KINDS ? "CMK_Kind%d" : "Phase name %d", r);
    for (r = 0; r < KINDS; r++) kind_names[r] = name_text[r];
    for (r = 0; r < PHASES; r++) phase_names[r] = name_text[KINDS + r];
    jitarena_config_init(&cfg);
    cfg.kind_names = kind_names;
    cfg.kind_count = KINDS;
    cfg.phase_names = phase_names;
    cfg.phase_count = PHASES;
    cfg.page_alloc = host_alloc_page;
    cfg.page_free = host_free_page;
#endif
    /* The host's freed pages stay in the C library's heaps (each thread's), as the runtime's
     * host keeps its slabs, instead of going back to the kernel whenever a heap's top grows
     * past glibc's trim threshold. Given back, a method takes its pages again as page faults,
     * which cost more than the method itself, in one build and not the other as the two
     * builds' heaps happen to be laid out (the plain build's methods took 16 each, jitarena's,
     * whose kept arenas lie among the pages, none): the ratio then measures glibc's trimming.
     * THREADS_GLIBC_TRIM=1 keeps glibc's default. */
    if (getenv("THREADS_GLIBC_TRIM") == NULL) mallopt(M_TRIM_THRESHOLD, 1 << 30);
    make_stream();
    make_plan();
    (void)repetition(threads, totals, &cpu); /* not timed */
    for (r = 0; r < reps; r++) {
        double seconds = repetition(threads, totals, &cpu);
        rates[r] = (double)methods / seconds;
        cpu_us[r] = cpu * 1e6 / (double)methods;
        printf("rep %d seconds %.6f methods_per_s %.0f cpu_us_per_method %.3f\n", r + 1, seconds,
               rates[r], cpu_us[r]);
    }
    qsort(rates, (size_t)reps, sizeof rates[0], by_value);
    qsort(cpu_us, (size_t)reps, sizeof cpu_us[0], by_value);
    printf("threads %d methods %ld allocations %llu marks %llu pages %llu median_methods_per_s %.0f "
           "median_cpu_us_per_method %.3f (%llu)\n",
           threads, methods, (unsigned long long)totals[0], (unsigned long long)totals[1],
           (unsigned long long)totals[2], (rates[(reps - 1) / 2] + rates[reps / 2]) / 2,
           (cpu_us[(reps - 1) / 2] + cpu_us[reps / 2]) / 2, (unsigned long long)(totals[3] & 1));
    return 0;
}
