/* Layout identity with the .NET JIT's own arena (ArenaAllocatorT). A plain arena written from
 * the JIT's allocator rules alone and jitarena each run over the same allocation streams, with a
 * host that hands both the same pages (the same addresses, at varying word offsets from 4 KiB
 * boundaries) in the same order. Every block must lie in the same page (by ordinal) at the same
 * offset from the page's start; the host must be asked for the same page sizes in the same
 * order; the descriptor words of jitarena's live pages must be left as the host gave them; every page
 * must go back at destroy and at reset, and none be taken before the first request.
 *
 * Streams: thousands of methods of heavy-tailed sizes (constant-size call sites and run-time
 * sizes, sizes that fill a page's tail exactly or miss it by one, a page's size less the
 * descriptor, rare ones of 64 KiB to 4 MiB), kinds in and out of range, through jitarena_alloc,
 * jitarena_alloc_slot and jitarena_alloc_slow; a new arena per method and one arena reset
 * between methods; pages of 4 KiB, 64 KiB and 1 MiB, and pages of exactly the descriptor and the
 * request that opened them (exact_pages: the JIT's arena bypassing its host).
 *
 *   layout_identity [METHODS]     prints "layout_identity: N checks, F failed" */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitarena.h"

#define WORD sizeof(void*)

/* The plain arena's rules: requests rounded to a pointer, a descriptor of three pointers. */
#define PLAIN_ROUND WORD
#define PLAIN_DESCRIPTOR_WORDS 3

#define MAX_EVENTS 40000
#define MAX_PAGES 16384
#define HOST_BYTES ((size_t)112 << 20)
/* Past this many page bytes of a method, its stream asks only for small blocks. */
#define METHOD_BUDGET ((size_t)24 << 20)

static uint64_t rng;
static uint64_t random64(void) {
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static size_t below(size_t n) { return (size_t)(random64() % n); }

static long checks, failed;
static const char* where = "";
static unsigned method_no;
/* Failures by what they are about, for the summary. */
enum { ON_BLOCK, ON_PAGE_SIZE, ON_NEXT, ON_GIVE_BACK, ON_OTHER, ON_COUNT };
static long failed_on[ON_COUNT];
#define CHECK(cond, ...) CHECK_ON(ON_OTHER, cond, __VA_ARGS__)
#define CHECK_ON(on, cond, ...)                                                            \
    do {                                                                                   \
        checks++;                                                                          \
        if (!(cond)) {                                                                     \
            failed_on[on]++;                                                               \
            if (failed++ < 20) {                                                           \
                printf("layout_identity: %s, method %u: ", where, method_no);              \
                printf(__VA_ARGS__);                                                       \
                printf("\n");                                                              \
            }                                                                              \
        }                                                                                  \
    } while (0)

/* ---- The host: pages carved upward from one buffer, page i at a word offset from a 4 KiB
 * boundary that the run's salt and i choose; begin() starts over from the same addresses. -- */

typedef struct {
    uintptr_t base;
    size_t size;
    int live;
} host_page;

static struct {
    uintptr_t start, end, next;
    unsigned salt;
    host_page pages[MAX_PAGES];
    int count;
    int freed[MAX_PAGES]; /* the order pages came back in, by ordinal */
    int frees, bad_frees, exhausted;
    size_t high; /* the most bytes of the buffer any run reached */
} host;

static void host_begin(unsigned salt) {
    host.next = host.start;
    host.salt = salt;
    host.count = 0;
    host.frees = 0;
    host.bad_frees = 0;
}

static void* host_alloc(void* context, size_t size) {
    uintptr_t offset, base;
    (void)context;
    if (host.count == MAX_PAGES) return host.exhausted = 1, NULL;
    offset = WORD * (uintptr_t)((host.salt + 37u * (unsigned)host.count) % (4096u / WORD));
    base = host.next + ((offset - host.next) & 4095u);
    if (base > host.end || host.end - base < size) return host.exhausted = 1, NULL;
    host.pages[host.count].base = base;
    host.pages[host.count].size = size;
    host.pages[host.count].live = 1;
    host.count++;
    host.next = base + size;
    if (host.next - host.start > host.high) host.high = host.next - host.start;
    /* Poison where a descriptor goes: words an arena leaves unwritten read as no JIT's. */
    memset((void*)base, 0xCD, 4 * WORD);
    return (void*)base;
}

static void host_free(void* context, void* page, size_t size) {
    int i;
    (void)context;
    for (i = host.count - 1; i >= 0; i--) {
        if (host.pages[i].base == (uintptr_t)page && host.pages[i].live) {
            host.bad_frees += host.pages[i].size != size;
            host.pages[i].live = 0;
            host.freed[host.frees++] = i;
            return;
        }
    }
    host.bad_frees++;
}

/* The ordinal of the host page that holds [at, at + size), or -1. */
static int page_of(uintptr_t at, size_t size) {
    int lo = 0, hi = host.count - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        const host_page* p = &host.pages[mid];
        if (at < p->base) {
            hi = mid - 1;
        } else if (at - p->base >= p->size) {
            lo = mid + 1;
        } else {
            return size <= p->size - (at - p->base) ? mid : -1;
        }
    }
    return -1;
}

/* ---- The plain arena: the JIT's rules, nothing else. ------------------------------------ */

typedef struct plain_page {
    struct plain_page* next;
    size_t bytes;
    size_t used;
} plain_page;

typedef struct {
    size_t page_size;
    int exact; /* the JIT's bypassHostAllocator(): pages of exactly the descriptor and request */
    plain_page* first;
    plain_page* last;
    uintptr_t next_free, last_free;
} plain_arena;

static uintptr_t plain_contents(const plain_page* page) {
    return (uintptr_t)page + PLAIN_DESCRIPTOR_WORDS * WORD;
}

static void* plain_new_page(plain_arena* a, size_t size) {
    size_t bytes = PLAIN_DESCRIPTOR_WORDS * WORD + size;
    plain_page* page;
    if (!a->exact) bytes = (bytes + a->page_size - 1) / a->page_size * a->page_size;
    page = (plain_page*)host_alloc(NULL, bytes);
    if (page == NULL) return NULL;
    if (a->last != NULL) {
        a->last->used = a->next_free - plain_contents(a->last);
        a->last->next = page;
    } else {
        a->first = page;
    }
    page->next = NULL;
    page->bytes = bytes;
    page->used = 0;
    a->last = page;
    a->next_free = plain_contents(page) + size;
    a->last_free = (uintptr_t)page + bytes;
    return (void*)plain_contents(page);
}

static void* plain_alloc(plain_arena* a, size_t size) {
    uintptr_t block = a->next_free;
    size = (size + PLAIN_ROUND - 1) / PLAIN_ROUND * PLAIN_ROUND;
    if (block + size > a->last_free) return plain_new_page(a, size);
    a->next_free = block + size;
    return (void*)block;
}

static void plain_destroy(plain_arena* a) {
    plain_page* page = a->first;
    while (page != NULL) {
        plain_page* next = page->next;
        host_free(NULL, page, page->bytes);
        page = next;
    }
    a->first = a->last = NULL;
    a->next_free = a->last_free = 0;
}

/* ---- Streams ------------------------------------------------------------------------------ */

enum { PATH_ALLOC, PATH_SLOT, PATH_SLOW };

typedef struct {
    uint32_t size;
    uint8_t site; /* 0: a run-time size; else a constant-size call site */
    uint8_t path;
    uint8_t kind;
} event;

/* Constant-size call sites: each case's literal reaches the header's inline path. */
#define CONSTANT_SITES(X)                                                                   \
    X(1, 1) X(2, 3) X(3, 8) X(4, 12) X(5, 13) X(6, 16) X(7, 24) X(8, 40) X(9, 48) X(10, 64) \
    X(11, 72) X(12, 100) X(13, 128) X(14, 200) X(15, 256) X(16, 1000)                       \
    X(17, 4096 - sizeof(jitarena_page)) X(18, 4096)                                         \
    X(19, JITARENA_DEFAULT_PAGE_SIZE - sizeof(jitarena_page)) X(20, JITARENA_DEFAULT_PAGE_SIZE)
#define SITE_SIZE(n, size) (uint32_t)(size),
static const uint32_t site_size[] = {0, CONSTANT_SITES(SITE_SIZE)};
#define SMALL_SITES 16

static void* alloc_constant(jitarena* a, unsigned site, uint32_t kind, int by_slot) {
    jitarena_kind_slot slot = jitarena_kind_slot_of(kind);
    switch (site) {
#define SITE_CASE(n, size) \
    case n: return by_slot ? jitarena_alloc_slot(a, size, slot) : jitarena_alloc(a, size, kind);
        CONSTANT_SITES(SITE_CASE)
    default: return NULL;
    }
}

static event events[MAX_EVENTS];
static uint32_t ref_page[MAX_EVENTS], ref_offset[MAX_EVENTS];
static size_t ref_bytes[MAX_PAGES], ref_used[MAX_PAGES];
static int ref_next[MAX_PAGES];

/* Requests per thousand that aim at a page's tail: many in an edgy method, few otherwise. */
static unsigned tail_share;

/* A run-time size, drawn against the plain arena's state (a page's tail) and the method's
 * page bytes so far. */
static uint32_t draw_size(const plain_arena* p, size_t obtained) {
    const size_t page = p->page_size, desc = PLAIN_DESCRIPTOR_WORDS * WORD;
    size_t left = p->last_free - p->next_free, r = below(1000), size;
    int small = obtained >= METHOD_BUDGET;
    if (!small && below(20000) == 0) {
        size_t base = (size_t)65536 << below(6);
        return (uint32_t)(base + below(base)); /* 64 KiB to 4 MiB */
    }
    /* A page's size around its descriptor: often for small pages, rarely for large ones. */
    if (!small && below(page <= 4096 ? 100 : page <= 65536 ? 1000 : 5000) == 0) {
        static const int delta[] = {0, 0, 0, -1, 1, (int)WORD, -(int)WORD};
        size = page - desc + (size_t)(ptrdiff_t)delta[below(sizeof delta / sizeof delta[0])];
        return (uint32_t)(below(8) == 0 ? page + below(3) : size);
    }
    if (r < tail_share && (!small || left < 1000)) { /* exactly, by rounding, one over */
        switch (below(4)) {
        case 0: size = left; break;
        case 1: size = left > WORD ? left - below(WORD - 1) - 1 : left; break;
        case 2: size = left + 1; break;
        default: size = left + WORD; break;
        }
        return (uint32_t)(size != 0 ? size : 1);
    }
    if (r < 700 || small) return (uint32_t)(1 + below(200));
    if (r < 900) return (uint32_t)(WORD * (1 + below(25)));
    if (r < 970) return (uint32_t)(200 + below(800));
    if (r < 997) return (uint32_t)(256 + below(3800)); /* arrays */
    return (uint32_t)(4096 + below(28672));
}

static event draw_event(const plain_arena* p, size_t obtained) {
    event e;
    e.kind = (uint8_t)(below(8) == 0 ? 12 + below(244) : below(12));
    e.site = 0;
    if (below(4) == 0) {
        unsigned site = 1 + (unsigned)below(SMALL_SITES);
        if (below(100) == 0 && obtained < METHOD_BUDGET)
            site = SMALL_SITES + 1 + (unsigned)below(sizeof site_size / sizeof site_size[0] - 1 -
                                                     SMALL_SITES);
        e.site = (uint8_t)site;
        e.size = site_size[site];
        e.path = (uint8_t)below(2);
    } else {
        e.size = draw_size(p, obtained);
        e.path = (uint8_t)(below(10) == 0 ? PATH_SLOW : below(2));
    }
    return e;
}

static void* jit_alloc(jitarena* a, const event* e) {
    if (e->site != 0) return alloc_constant(a, e->site, e->kind, e->path == PATH_SLOT);
    switch (e->path) {
    case PATH_ALLOC: return jitarena_alloc(a, e->size, e->kind);
    case PATH_SLOT: return jitarena_alloc_slot(a, e->size, jitarena_kind_slot_of(e->kind));
    default: return jitarena_alloc_slow(a, e->size, e->kind);
    }
}

/* Writes a block's first and last bytes, as a JIT fills its nodes. */
static void touch(void* block, size_t size) {
    unsigned char* p = (unsigned char*)block;
    p[0] = 0x5A;
    p[size - 1] = 0xA5;
}

/* ---- One method ----------------------------------------------------------------------------- */

static long blocks_total, constant_total, pages_total, order_jit, order_reversed, order_other;

/* The plain arena over a fresh stream: the events, and where each block and page lies. */
static int plain_run(size_t page_size, int exact, size_t n, unsigned salt) {
    plain_arena p;
    size_t i, obtained = 0;
    int j, pages;
    memset(&p, 0, sizeof p);
    p.page_size = page_size;
    p.exact = exact;
    host_begin(salt);
    for (i = 0; i < n; i++) {
        void* block;
        events[i] = draw_event(&p, obtained);
        block = plain_alloc(&p, events[i].size);
        if (block == NULL) {
            CHECK(0, "the plain arena's host ran out at event %lu", (unsigned long)i);
            plain_destroy(&p);
            return -1;
        }
        ref_page[i] = (uint32_t)(host.count - 1);
        ref_offset[i] = (uint32_t)((uintptr_t)block - host.pages[host.count - 1].base);
        obtained = (size_t)(host.next - host.start);
        touch(block, events[i].size);
    }
    pages = host.count;
    for (j = 0; j < pages; j++) {
        const plain_page* d = (const plain_page*)host.pages[j].base;
        ref_bytes[j] = d->bytes;
        ref_used[j] = d->used;
        ref_next[j] = d->next == NULL ? -1 : page_of((uintptr_t)d->next, 1);
    }
    plain_destroy(&p);
    return pages;
}

/* Checks that every page of the run came back once, with its size; tallies the order. */
static void check_all_back(const char* what) {
    int j, forward = 1, backward = 1;
    CHECK_ON(ON_GIVE_BACK, host.bad_frees == 0, "%s: %d pages given back that were not live or of another size",
          what, host.bad_frees);
    CHECK_ON(ON_GIVE_BACK, host.frees == host.count, "%s: %d of %d pages given back", what, host.frees,
          host.count);
    for (j = 0; j < host.count; j++) {
        CHECK_ON(ON_GIVE_BACK, !host.pages[j].live, "%s: page %d of %d not given back", what, j, host.count);
    }
    if (host.frees < 2 || host.frees != host.count) return;
    for (j = 0; j < host.frees; j++) {
        forward &= host.freed[j] == j;
        backward &= host.freed[j] == host.count - 1 - j;
    }
    if (forward) order_jit++;
    else if (backward) order_reversed++;
    else order_other++;
}

static void run_method(jitarena** arena, const jitarena_config* cfg, int per_method) {
    size_t n, i, used = 0, requested = 0;
    uint64_t reserved = 0;
    unsigned salt = (unsigned)random64();
    unsigned r = (unsigned)below(100);
    int pages, j;
    jitarena* a;
    jitarena_method method = JITARENA_METHOD_INIT;

    tail_share = below(4) == 0 ? (cfg->page_size > 65536 ? 5 : 40) : 2;
    n = r < 60 ? 20 + below(400) : r < 90 ? 400 + below(3600) : r < 99 ? 4000 + below(16000)
                                                                       : 20000 + below(20000);
    /* Exact pages take a page (and a 4 KiB stride of the host's buffer) per request. */
    if (cfg->exact_pages && n > 2000) n = 2000;
    pages = plain_run(cfg->page_size, (int)cfg->exact_pages, n, salt);
    if (pages < 0) return;

    host_begin(salt);
    if (per_method) {
        *arena = jitarena_create(cfg);
        CHECK(*arena != NULL, "create: %s", jitarena_last_error_message());
        if (*arena == NULL) return;
    }
    a = *arena;
    CHECK(host.count == 0, "%d pages taken before the first request", host.count);
    for (i = 0; i < n; i++) {
        const event* e = &events[i];
        void* block = jit_alloc(a, e);
        int page;
        size_t offset;
        if (block == NULL) {
            CHECK(0, "event %lu (%lu bytes) failed: %s", (unsigned long)i, (unsigned long)e->size,
                  jitarena_last_error_message());
            break;
        }
        page = page_of((uintptr_t)block, e->size);
        offset = page < 0 ? 0 : (size_t)((uintptr_t)block - host.pages[page].base);
        CHECK_ON(ON_BLOCK, page == (int)ref_page[i] && offset == ref_offset[i],
              "block %lu (%lu bytes%s) in page %d at offset %lu, the JIT's in page %u at %u",
              (unsigned long)i, (unsigned long)e->size, e->site ? ", constant" : "", page,
              (unsigned long)offset, ref_page[i], ref_offset[i]);
        if (page >= 0) touch(block, e->size);
        used += (e->size + WORD - 1) / WORD * WORD;
        requested += e->size;
        blocks_total++;
        constant_total += e->site != 0;
    }
    CHECK_ON(ON_PAGE_SIZE, host.count == pages, "%d pages taken, the JIT's %d", host.count, pages);
    for (j = 0; j < host.count && j < pages; j++) {
        CHECK_ON(ON_PAGE_SIZE, host.pages[j].size == ref_bytes[j], "page %d of %lu bytes, the JIT's %lu", j,
              (unsigned long)host.pages[j].size, (unsigned long)ref_bytes[j]);
        reserved += host.pages[j].size;
    }
    pages_total += host.count;

    /* The live pages' descriptors: reserved where the JIT's lie, left as the host gave them
     * (jitarena keeps its page list apart and touches no page). The plain arena's words
     * (ref_next, ref_bytes, ref_used) are the JIT's; jitarena's pages must still hold the
     * host's fill. */
    for (j = 0; j < host.count && j < pages; j++) {
        const unsigned char* d = (const unsigned char*)host.pages[j].base;
        size_t k, touched = 0;
        for (k = 0; k < sizeof(jitarena_page); k++) touched += d[k] != 0xCD;
        CHECK_ON(ON_NEXT, touched == 0 && sizeof(jitarena_page) == 3 * WORD,
                 "page %d of %d: %lu descriptor bytes written (the JIT's next %ld, bytes %lu, "
                 "used %lu)", j, pages, (unsigned long)touched, (long)ref_next[j],
                 (unsigned long)ref_bytes[j], (unsigned long)ref_used[j]);
    }

    CHECK(jitarena_used_bytes(a) == used, "used %llu, want %llu",
          (unsigned long long)jitarena_used_bytes(a), (unsigned long long)used);
    CHECK(jitarena_total_bytes(a) == requested, "requested %llu, want %llu",
          (unsigned long long)jitarena_total_bytes(a), (unsigned long long)requested);
    CHECK(jitarena_total_count(a) == n, "count %llu, want %lu",
          (unsigned long long)jitarena_total_count(a), (unsigned long)n);
    CHECK(jitarena_reserved_bytes(a) == reserved, "reserved %llu, want %llu",
          (unsigned long long)jitarena_reserved_bytes(a), (unsigned long long)reserved);
    CHECK(jitarena_page_count(a) == (uint64_t)host.count, "page count %llu, want %d",
          (unsigned long long)jitarena_page_count(a), host.count);
    method.context = (int64_t)method_no;
    CHECK(jitarena_method_done(a, &method) == 0, "method_done: %s",
          jitarena_last_error_message());

    if (per_method) {
        jitarena_destroy(a);
        *arena = NULL;
        check_all_back("destroy");
    } else {
        jitarena_reset(a);
        check_all_back("reset");
    }
}

static const char* const kind_names[] = {"AST",  "BasicBlock", "InstDesc", "AssertionProp",
                                         "CallArgs", "FlowEdge", "ImpStack", "ValueNumber",
                                         "Generic", "LvaTable", "SSA", "bitset"};

int main(int argc, char** argv) {
    static const struct {
        size_t page_size;
        int per_method;
        int exact;
        const char* name;
        unsigned share; /* of METHODS, in eighths */
    } runs[] = {
        {65536, 1, 0, "64 KiB pages, an arena per method", 8},
        {65536, 0, 0, "64 KiB pages, one arena reset", 8},
        {4096, 1, 0, "4 KiB pages, an arena per method", 3},
        {4096, 0, 0, "4 KiB pages, one arena reset", 3},
        {1u << 20, 1, 0, "1 MiB pages, an arena per method", 3},
        {1u << 20, 0, 0, "1 MiB pages, one arena reset", 3},
        {65536, 1, 1, "exact pages (bypassing the host), an arena per method", 1},
        {65536, 0, 1, "exact pages (bypassing the host), one arena reset", 1},
    };
    unsigned methods = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 2000;
    unsigned char* buffer = (unsigned char*)malloc(HOST_BYTES + 4096);
    size_t k;
    if (buffer == NULL) {
        printf("layout_identity: no memory for the host's buffer\n");
        return 1;
    }
    host.start = ((uintptr_t)buffer + 4095u) & ~(uintptr_t)4095u;
    host.end = host.start + HOST_BYTES;
    rng = 0x1A70u;

    for (k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        jitarena_config cfg;
        jitarena* arena = NULL;
        unsigned m, count = methods * runs[k].share / 8;
        jitarena_config_init(&cfg);
        cfg.kind_names = kind_names;
        cfg.kind_count = sizeof kind_names / sizeof kind_names[0];
        cfg.page_size = runs[k].page_size;
        cfg.exact_pages = (uint32_t)runs[k].exact;
        cfg.page_alloc = host_alloc;
        cfg.page_free = host_free;
        where = runs[k].name;
        method_no = 0;
        if (!runs[k].per_method) {
            arena = jitarena_create(&cfg);
            CHECK(arena != NULL, "create: %s", jitarena_last_error_message());
            if (arena == NULL) continue;
        }
        for (m = 0; m < count; m++) {
            method_no = m;
            run_method(&arena, &cfg, runs[k].per_method);
        }
        if (!runs[k].per_method) {
            host_begin(0);
            jitarena_destroy(arena);
            CHECK(host.frees == 0 && host.bad_frees == 0, "destroy after reset gave back %d pages",
                  host.frees);
        }
    }
    CHECK(!host.exhausted, "the host's buffer ran out");

    printf("layout_identity: %ld blocks (%ld at constant-size sites), %ld pages, %lu-bit; "
           "host buffer high water %lu MiB\n",
           blocks_total, constant_total, pages_total, (unsigned long)(WORD * 8),
           (unsigned long)(host.high >> 20));
    printf("layout_identity: pages given back (methods of 2+ pages): first to last, as the "
           "JIT's destroy: %ld; last to first: %ld; other: %ld\n",
           order_jit, order_reversed, order_other);
    if (failed != 0) {
        printf("layout_identity: failed on blocks %ld, page sizes %ld, descriptors written %ld, "
               "pages given back %ld, other %ld\n",
               failed_on[ON_BLOCK], failed_on[ON_PAGE_SIZE], failed_on[ON_NEXT],
               failed_on[ON_GIVE_BACK], failed_on[ON_OTHER]);
    }
    printf("layout_identity: %ld checks, %ld failed\n", checks, failed);
    free(buffer);
    return failed != 0;
}
