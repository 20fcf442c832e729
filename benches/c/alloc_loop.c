/* A JIT-like allocation loop for counting instructions with callgrind (scripts/callgrind.sh).
 * Compiled twice from the same source: with counters, and with JITARENA_NO_COUNTERS.
 *
 *   alloc_loop sites   one million allocations from call sites of fixed kind, as a JIT makes
 *                      them (`new (comp, CMK_ASTNode) GenTree`), sizes from a JIT-like mix,
 *                      methods of heavy-tailed size, the arena reset after each method;
 *   alloc_loop table   the same requests replayed from a table of (kind, size), the kind a
 *                      run-time uint32 value passed to jitarena_alloc (which clamps it);
 *   alloc_loop slot    the same requests, each through one of eight allocator objects made
 *                      once per kind (a JIT's CompAllocator: the arena and the kind's slot
 *                      from jitarena_kind_slot_of(), loaded at run time from the object),
 *                      with jitarena_alloc_slot (no clamp).
 *
 * A second argument "kbp" creates the arena with kinds_by_phase on (the inline path must cost
 * the same). Only run_sites / run_table / run_slot are measured (callgrind --toggle-collect). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitarena.h"

#define N 1000000u
#define SITES 8u

static const char* const KINDS[SITES] = {"ASTNode", "BasicBlock", "LSRA", "ValueNumber",
                                         "Generic", "LvaTable", "SSA", "InstDesc"};

static uint64_t rng_state = 0x243F6A8885A308D3ull;
static uint64_t next_random(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Small sizes dominate (the .NET JIT averages about 88 bytes), a few arrays are large. */
static uint32_t jit_like_size(void) {
    uint64_t r = next_random() % 1000u;
    if (r < 600u) return 16u + 8u * (uint32_t)(next_random() % 10u); /* nodes: 16..88 */
    if (r < 900u) return 8u + (uint32_t)(next_random() % 250u);
    if (r < 995u) return 256u + (uint32_t)(next_random() % 2048u);
    return 4096u + (uint32_t)(next_random() % 60000u);
}

static uint32_t sizes[N];
static uint32_t kinds[N];

/* A JIT's allocator object: made once per kind, holding its validated counter slot. */
typedef struct comp_allocator {
    jitarena* arena;
    jitarena_kind_slot slot;
} comp_allocator;
static comp_allocator allocators[SITES];
static const comp_allocator* request_allocator[N];
static uint32_t method_len[N];
static uint32_t methods;

/* Per-method request counts, heavy tailed (most methods small, a few huge). */
static void make_workload(void) {
    uint32_t done = 0, i;
    while (done < N) {
        uint32_t len = 40u + (uint32_t)(next_random() % 400u);
        if (next_random() % 10u == 0u) len *= 20u;
        if (len > N - done) len = N - done;
        method_len[methods++] = len;
        done += len;
    }
    for (i = 0; i < N; i++) {
        sizes[i] = jit_like_size();
        kinds[i] = (uint32_t)((i * 7u) / 3u % SITES);
    }
}

/* One method's requests from fixed-kind sites, in proportion to kinds[] (whose share per kind
 * is the same as the table's). */
#define SITE(k)                                                  \
    for (j = 0; j < per_site; j++) {                             \
        sink ^= (uintptr_t)jitarena_alloc(a, sizes[i++], (k));   \
    }

__attribute__((noinline)) uintptr_t run_sites(jitarena* a) {
    uintptr_t sink = 0;
    uint32_t i = 0, m, j;
    for (m = 0; m < methods; m++) {
        uint32_t per_site = method_len[m] / SITES, rest = method_len[m] % SITES;
        SITE(0) SITE(1) SITE(2) SITE(3) SITE(4) SITE(5) SITE(6) SITE(7)
        for (j = 0; j < rest; j++) {
            sink ^= (uintptr_t)jitarena_alloc(a, sizes[i++], 0);
        }
        jitarena_reset(a);
    }
    return sink;
}

__attribute__((noinline)) uintptr_t run_table(jitarena* a) {
    uintptr_t sink = 0;
    uint32_t i = 0, m, j;
    for (m = 0; m < methods; m++) {
        for (j = 0; j < method_len[m]; j++, i++) {
            sink ^= (uintptr_t)jitarena_alloc(a, sizes[i], kinds[i]);
        }
        jitarena_reset(a);
    }
    return sink;
}

__attribute__((noinline)) uintptr_t run_slot(jitarena* a) {
    uintptr_t sink = 0;
    uint32_t i = 0, m, j;
    for (m = 0; m < methods; m++) {
        for (j = 0; j < method_len[m]; j++, i++) {
            const comp_allocator* alloc = request_allocator[i];
            sink ^= (uintptr_t)jitarena_alloc_slot(alloc->arena, sizes[i], alloc->slot);
        }
        jitarena_reset(a);
    }
    return sink;
}

int main(int argc, char** argv) {
    jitarena_config cfg;
    jitarena* a;
    uintptr_t sink;
    const char* mode = argc > 1 ? argv[1] : "sites";
    uint32_t i;
    make_workload();
    jitarena_config_init(&cfg);
    cfg.kind_names = KINDS;
    cfg.kind_count = SITES;
    cfg.kinds_by_phase = argc > 2 && strcmp(argv[2], "kbp") == 0;
    a = jitarena_create(&cfg);
    if (a == NULL) {
        fprintf(stderr, "alloc_loop: %s\n", jitarena_last_error_message());
        return 2;
    }
    for (i = 0; i < SITES; i++) {
        allocators[i].arena = a;
        allocators[i].slot = jitarena_kind_slot_of(i);
    }
    for (i = 0; i < N; i++) request_allocator[i] = &allocators[kinds[i]];
    if (strcmp(mode, "table") == 0) {
        sink = run_table(a);
    } else if (strcmp(mode, "slot") == 0) {
        sink = run_slot(a);
    } else {
        sink = run_sites(a);
    }
    printf("%u allocations in %u methods (%s), sink %lx\n", N, methods, mode,
           (unsigned long)(sink & 0xF));
    jitarena_destroy(a);
    return 0;
}
