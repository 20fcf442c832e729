/* The inline paths and the slow path at the edges of the address space and of the window: a
 * host page allocator that hands out address ranges it never backs (the library never touches
 * a page; only this program's checks read the blocks' addresses) from just above 0 up, across
 * the middle of the address space, and down from the highest end a page may have (
 * JITARENA_CONSTANT_SIZE_MAX below the top); page sizes from 4 KiB (and one that is not a
 * multiple of 16) to 1 GiB; sizes of 0, 1 to 8, a page's exact bytes left and one more, a
 * quarter page either side, sizes near SIZE_MAX, and sizes known at compile time. Every block
 * must be aligned to the pointer size, inside a live page past its descriptor and disjoint from
 * every other block of the method; every reader must
 * agree with a model (kinds, counts, the invalid bucket, bytes used, phases); every page must
 * go back. Methods of 1 GiB pages hand out more than 2^31 bytes, so the packed counters drain.
 *
 *   address_extremes [SEEDS [OPERATIONS]]     prints "address_extremes: N checks, F failed" */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitarena.h"

#define BITS (sizeof(uintptr_t) * 8)
#define MAX_PAGES 4096
#define MAX_BLOCKS 20000

static uint64_t rng;
static uint64_t random64(void) {
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static uint64_t below(uint64_t n) { return random64() % n; }

static long checks, failed;
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        checks++;                                                                                  \
        if (!(cond)) {                                                                             \
            if (failed++ < 20) {                                                                   \
                printf("address_extremes: seed %u: ", seed);                                       \
                printf(__VA_ARGS__);                                                               \
                printf("\n");                                                                      \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* The host: consecutive ranges from `next`, upwards or downwards, a few words apart. */
static struct {
    uintptr_t base;
    size_t size;
    int live;
} pages[MAX_PAGES];
static int page_count, bad_frees, refused;
static uintptr_t next;
static int downwards;

static void* host_alloc(void* host, size_t size) {
    uintptr_t base;
    (void)host;
    refused = 1; /* until a page is handed out below */
    if (page_count == MAX_PAGES) return NULL;
    if (downwards) {
        if (next < size + 4096) return NULL;
        base = (next - size) & ~(uintptr_t)7;
        next = base - 8 * (uintptr_t)below(3);
    } else {
        base = next;
        if (base + size < base || base + size + JITARENA_CONSTANT_SIZE_MAX + 64 < base) return NULL;
        next = ((base + size + 7) & ~(uintptr_t)7) + 8 * (uintptr_t)below(3);
    }
    pages[page_count].base = base;
    pages[page_count].size = size;
    pages[page_count].live = 1;
    page_count++;
    refused = 0;
    return (void*)base;
}

static void host_free(void* host, void* page, size_t size) {
    int i;
    (void)host;
    for (i = page_count - 1; i >= 0; i--) {
        if (pages[i].live && pages[i].base == (uintptr_t)page) {
            bad_frees += pages[i].size != size;
            pages[i].live = 0;
            return;
        }
    }
    bad_frees++;
}

/* The model of one method. */
typedef struct {
    uintptr_t at, bytes;
} block;
static block blocks[MAX_BLOCKS];
static size_t block_count;
static uint64_t kind_bytes[9], kind_counts[9], phase_bytes[4], used;
static unsigned running; /* 3: no phase */

static void model_clear(void) {
    memset(kind_bytes, 0, sizeof kind_bytes);
    memset(kind_counts, 0, sizeof kind_counts);
    memset(phase_bytes, 0, sizeof phase_bytes);
    used = 0;
    running = 3;
    block_count = 0;
}

static int by_address(const void* a, const void* b) {
    uintptr_t x = ((const block*)a)->at, y = ((const block*)b)->at;
    return x < y ? -1 : x > y;
}

static void check_readers(jitarena* a, unsigned seed) {
    uint64_t bytes = 0, count = 0;
    unsigned k;
    size_t i;
    for (k = 0; k < 8; k++) {
        CHECK(jitarena_kind_bytes(a, k) == kind_bytes[k], "kind %u's bytes", k);
        CHECK(jitarena_kind_count(a, k) == kind_counts[k], "kind %u's count", k);
    }
    CHECK(jitarena_kind_bytes(a, JITARENA_INVALID_KIND) == kind_bytes[8], "invalid bytes");
    CHECK(jitarena_kind_count(a, JITARENA_INVALID_KIND) == kind_counts[8], "invalid count");
    for (k = 0; k < 9; k++) bytes += kind_bytes[k], count += kind_counts[k];
    CHECK(jitarena_total_bytes(a) == bytes, "total bytes");
    CHECK(jitarena_total_count(a) == count, "total count");
    CHECK(jitarena_used_bytes(a) == used, "bytes used %llu, want %llu",
          (unsigned long long)jitarena_used_bytes(a), (unsigned long long)used);
    for (k = 0; k < 3; k++) CHECK(jitarena_phase_bytes(a, k) == phase_bytes[k], "phase %u", k);
    CHECK(jitarena_phase_bytes(a, JITARENA_NO_PHASE) == phase_bytes[3], "no phase");
    qsort(blocks, block_count, sizeof(block), by_address);
    for (i = 0; i + 1 < block_count; i++) {
        CHECK(blocks[i].at + blocks[i].bytes <= blocks[i + 1].at, "blocks at %#llx and %#llx overlap",
              (unsigned long long)blocks[i].at, (unsigned long long)blocks[i + 1].at);
    }
}

/* A request's size: mostly small, and every edge often. */
static size_t request_size(jitarena* a, size_t page) {
    static const size_t huge[] = {SIZE_MAX, SIZE_MAX - 7, SIZE_MAX - 8, SIZE_MAX / 2 + 1,
                                  SIZE_MAX / 2, SIZE_MAX / 4 + 1, SIZE_MAX / 4 + 8};
    const jitarena_head* head = (const jitarena_head*)a;
    size_t left = (size_t)(head->limit - head->cursor);
    switch (below(24)) {
    case 0: return 0;
    case 1: return page / 4 - 16 + (size_t)below(33);
    case 2: return page / 4 + (size_t)below(page * 2);
    case 3: return page - 8 + (size_t)below(17);
    case 4: return huge[below(sizeof huge / sizeof huge[0])];
    case 5: return left; /* the window's bytes exactly */
    case 6: return left + 1;
    case 7: return left > 7 ? left - 7 : 1;
    case 8: return (size_t)below(page);
    case 9: return 1 + (size_t)below(8);
    case 10: return below(2) ? 24 : 8;
    default: return 1 + (size_t)below(200);
    }
}

static void allocate(jitarena* a, unsigned seed, size_t page, int kinds_by_phase) {
    size_t size = request_size(a, page);
    uint32_t kind = (uint32_t)(below(10) == 0 ? 8 + below(300) : below(8));
    unsigned slot = kind < 8 ? kind : 8;
    const uintptr_t align = JITARENA_ALIGN;
    uintptr_t at, rounded = size == 0 ? align : ((size + align - 1) & ~(align - 1));
    void* p;
    int i, in_page = 0;
    refused = 0;
    switch (size == 24 || size == 8 ? below(4) : below(3)) {
    case 3: /* sizes known at compile time: the header's shortest test */
        p = size == 24 ? jitarena_alloc(a, 24, kind) : jitarena_alloc_slot(a, 8, jitarena_kind_slot_of(kind));
        break;
    case 0: p = jitarena_alloc(a, size, kind); break;
    case 1: p = jitarena_alloc_slot(a, size, jitarena_kind_slot_of(kind)); break;
    default: p = jitarena_alloc_slot_at(a, size, jitarena_kind_slot_of(kind), (const void*)0); break;
    }
    if (size > SIZE_MAX / 4) {
        CHECK(p == NULL, "a request of %#llx bytes was served", (unsigned long long)size);
        return;
    }
    if (p == NULL && refused) {
        /* The host ran out of addresses (a 32-bit space, pages of 1 GiB): counted nowhere. */
        CHECK(jitarena_failure(a) == JITARENA_E_OUT_OF_MEMORY, "a refused page's failure");
        return;
    }
    CHECK(p != NULL, "a request of %llu bytes failed: %s", (unsigned long long)size,
          jitarena_last_error_message());
    if (p == NULL) return;
    at = (uintptr_t)p;
    CHECK(at % align == 0, "block %#llx is not aligned", (unsigned long long)at);
    for (i = page_count - 1; i >= 0 && !in_page; i--) {
        in_page = pages[i].live && at >= pages[i].base + sizeof(jitarena_page) &&
                  at - pages[i].base + rounded <= pages[i].size;
    }
    CHECK(in_page, "block %#llx of %llu bytes lies in no page", (unsigned long long)at,
          (unsigned long long)size);
    if (block_count < MAX_BLOCKS) {
        blocks[block_count].at = at;
        blocks[block_count].bytes = rounded;
        block_count++;
    }
    kind_bytes[slot] += size;
    kind_counts[slot]++;
    used += rounded;
    phase_bytes[running] += kinds_by_phase ? size : rounded;
}

static const char* const kind_names[8] = {"K0", "K1", "K2", "K3", "K4", "K5", "K6", "K7"};
static const char* const phase_names[3] = {"P0", "P1", "P2"};

static void run(unsigned seed, long operations, int kinds_by_phase) {
    static const size_t page_sizes[] = {4096, 4104, 65536, (size_t)1 << 20, (size_t)1 << 30};
    size_t page = page_sizes[below(5)];
    jitarena_config config;
    jitarena* a;
    long op;
    int i, live = 0;
    page_count = 0;
    switch (below(4)) {
    case 0: next = 8; downwards = 0; break;
    case 1: next = ((uintptr_t)1 << (BITS - 1)) - 3 * (uintptr_t)page; downwards = 0; break;
    case 2: next = UINTPTR_MAX - JITARENA_CONSTANT_SIZE_MAX; downwards = 1; break;
    default: next = (uintptr_t)1 << (BITS - 2); downwards = 1; break;
    }
    jitarena_config_init(&config);
    config.kind_names = kind_names;
    config.kind_count = 8;
    config.phase_names = phase_names;
    config.phase_count = 3;
    config.page_size = page;
    config.page_alloc = host_alloc;
    config.page_free = host_free;
    config.kinds_by_phase = (uint32_t)kinds_by_phase;
    a = jitarena_create(&config);
    CHECK(a != NULL, "create: %s", jitarena_last_error_message());
    if (a == NULL) return;
    model_clear();
    for (op = 0; op < operations; op++) {
        uint64_t r = below(1000);
        if (r == 0) {
            check_readers(a, seed);
            jitarena_reset(a);
            model_clear();
        } else if (r < 30) {
            uint32_t phase = (uint32_t)below(5);
            jitarena_set_phase(a, phase);
            running = phase < 3 ? phase : 3;
        } else {
            allocate(a, seed, page, kinds_by_phase);
        }
    }
    check_readers(a, seed);
    jitarena_destroy(a);
    for (i = 0; i < page_count; i++) live += pages[i].live;
    CHECK(live == 0 && bad_frees == 0, "%d pages not given back, %d freed wrongly", live, bad_frees);
}

int main(int argc, char** argv) {
    unsigned seeds = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 40, seed;
    long operations = argc > 2 ? strtol(argv[2], NULL, 10) : 20000;
    for (seed = 0; seed < seeds; seed++) {
        rng = (uint64_t)seed * 7919u + 1u;
        run(seed, operations, (int)(seed % 2));
    }
    printf("address_extremes: %ld checks, %ld failed\n", checks, failed);
    return failed != 0;
}
