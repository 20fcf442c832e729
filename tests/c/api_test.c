/* Exercises every entry point of jitarena.h from C, the inline fast path included. Run by
 * tests/c_api.rs, once plainly and once under valgrind's memcheck. */
#include <stdint.h>
#include <string.h>

#include "jitarena.h"
#include "check.h"

/* Allocation without counters, compiled in no_counters.c with JITARENA_NO_COUNTERS. */
void* alloc_uncounted(jitarena* a, size_t size, uint32_t kind);

static const char* const KINDS[] = {"ASTNode", "BasicBlock", "LSRA"};
static const char* const PHASES[] = {"Import", "Morph", "RegAlloc"};

typedef struct host_pages {
    size_t live_pages;
    size_t live_bytes;
    size_t calls;
} host_pages;

static void* host_alloc(void* host, size_t size) {
    host_pages* h = (host_pages*)host;
    h->calls++;
    h->live_pages++;
    h->live_bytes += size;
    return malloc(size);
}

static void host_free(void* host, void* page, size_t size) {
    host_pages* h = (host_pages*)host;
    h->live_pages--;
    h->live_bytes -= size;
    free(page);
}

/* A host allocator that breaks the contract: pages not aligned to 8. */
static void* misaligned_alloc(void* host, size_t size) {
    char* p = (char*)malloc(size + 16);
    (void)host;
    return p == NULL ? NULL : p + 1;
}

static void misaligned_free(void* host, void* page, size_t size) {
    (void)host;
    (void)size;
    free((char*)page - 1);
}

/* A host allocator that breaks the contract another way: a page whose end would reach the end
 * of the address space. Its memory does not exist, so the library must refuse it unread. */
static int wrapped_frees;

static void* wrapping_alloc(void* host, size_t size) {
    (void)host;
    return (void*)(((uintptr_t)0 - size / 2) & ~(uintptr_t)7);
}

static void wrapping_free(void* host, void* page, size_t size) {
    (void)host;
    (void)page;
    (void)size;
    wrapped_frees++;
}

static jitarena* make_arena(void) {
    jitarena_config cfg;
    jitarena_config_init(&cfg);
    cfg.kind_names = KINDS;
    cfg.kind_count = 3;
    cfg.phase_names = PHASES;
    cfg.phase_count = 3;
    return jitarena_create(&cfg);
}

static void test_version_and_errors(void) {
    int code;
    CHECK(jitarena_abi_version() == JITARENA_ABI_VERSION);
    CHECK(strcmp(jitarena_strerror(JITARENA_OK), "success") == 0);
    for (code = JITARENA_E_NULL; code <= JITARENA_E_STATE; code++) {
        CHECK(strlen(jitarena_strerror(code)) > 10);
    }
    CHECK(strstr(jitarena_strerror(999), "unknown") != NULL);
    CHECK(strstr(jitarena_strerror(-1), "unknown") != NULL);
}

static void test_config(void) {
    jitarena_config cfg;
    jitarena* a;
    memset(&cfg, 0xAB, sizeof cfg);
    jitarena_config_init(&cfg);
    jitarena_config_init(NULL);
    CHECK(cfg.struct_size == sizeof(jitarena_config));
    CHECK(cfg.page_size == JITARENA_DEFAULT_PAGE_SIZE);
    CHECK(cfg.kind_count == 0 && cfg.kind_names == NULL && cfg.phase_count == 0);
    CHECK(cfg.limit_bytes == 0 && cfg.page_alloc == NULL && cfg.page_free == NULL);

    CHECK(jitarena_create(NULL) == NULL);
    CHECK(strstr(jitarena_last_error_message(), "NULL") != NULL);

    cfg.kind_count = 3; /* but no names */
    CHECK(jitarena_create(&cfg) == NULL);
    CHECK(strstr(jitarena_last_error_message(), "kind_names is NULL") != NULL);

    jitarena_config_init(&cfg);
    cfg.kind_count = 300;
    cfg.kind_names = KINDS;
    CHECK(jitarena_create(&cfg) == NULL);
    CHECK(strstr(jitarena_last_error_message(), "300") != NULL);

    jitarena_config_init(&cfg);
    cfg.page_size = 100;
    CHECK(jitarena_create(&cfg) == NULL);
    CHECK(strstr(jitarena_last_error_message(), "page size 100") != NULL);

    jitarena_config_init(&cfg);
    cfg.page_alloc = host_alloc; /* without page_free */
    CHECK(jitarena_create(&cfg) == NULL);
    CHECK(strstr(jitarena_last_error_message(), "together") != NULL);

    jitarena_config_init(&cfg);
    cfg.struct_size = sizeof(jitarena_config) + 64; /* a newer header than the library */
    CHECK(jitarena_create(&cfg) == NULL);
    CHECK(strstr(jitarena_last_error_message(), "struct_size") != NULL);

    /* An older, shorter config: the fields past struct_size take their defaults. */
    jitarena_config_init(&cfg);
    cfg.kind_names = KINDS;
    cfg.kind_count = 3;
    cfg.page_size = 12345; /* beyond the old struct_size: ignored */
    cfg.struct_size = offsetof(jitarena_config, page_size);
    a = jitarena_create(&cfg);
    CHECK(a != NULL);
    CHECK(jitarena_kind_count_configured(a) == 3);
    CHECK(jitarena_alloc(a, 8, 0) != NULL);
    CHECK(jitarena_reserved_bytes(a) == JITARENA_DEFAULT_PAGE_SIZE);
    jitarena_destroy(a);
}

static void test_inline_path_and_readers(void) {
    jitarena* a = make_arena();
    char* p[1000];
    int i;
    uint64_t want = 0;
    CHECK(a != NULL);
    CHECK(jitarena_kind_count_configured(a) == 3 && jitarena_phase_count_configured(a) == 3);
    CHECK(jitarena_page_count(a) == 0 && jitarena_reserved_bytes(a) == 0);
    for (i = 0; i < 1000; i++) {
        size_t size = (size_t)(1 + i % 97);
        p[i] = (char*)jitarena_alloc(a, size, (uint32_t)(i % 3));
        CHECK(p[i] != NULL);
        CHECK(((uintptr_t)p[i] % JITARENA_ALIGN) == 0);
        memset(p[i], i & 0xFF, size);
        want += size;
    }
    for (i = 0; i < 1000; i++) {
        size_t size = (size_t)(1 + i % 97), j;
        for (j = 0; j < size; j++) {
            CHECK((unsigned char)p[i][j] == (unsigned char)(i & 0xFF));
        }
    }
    CHECK(jitarena_total_bytes(a) == want);
    CHECK(jitarena_total_count(a) == 1000);
    CHECK(jitarena_kind_bytes(a, 0) + jitarena_kind_bytes(a, 1) + jitarena_kind_bytes(a, 2) == want);
    CHECK(jitarena_kind_count(a, 0) == 334 && jitarena_kind_count(a, 1) == 333);
    CHECK(jitarena_kind_count(a, JITARENA_INVALID_KIND) == 0);
    CHECK(jitarena_kind_bytes(a, 3) == 0); /* out of range, not the invalid bucket: 0 */
    CHECK(jitarena_used_bytes(a) >= want && jitarena_used_bytes(a) % JITARENA_ALIGN == 0);
    CHECK(jitarena_reserved_bytes(a) >= jitarena_used_bytes(a));
    CHECK(jitarena_page_count(a) >= 1);
    CHECK(jitarena_failure(a) == 0 && jitarena_limit_hit(a) == 0);

    /* Invalid kinds go to the invalid bucket, whatever their value. */
    CHECK(jitarena_alloc(a, 10, 3) != NULL);
    CHECK(jitarena_alloc(a, 20, 255) != NULL);
    CHECK(jitarena_alloc(a, 30, 256) != NULL);
    CHECK(jitarena_alloc(a, 40, 0xFFFFFFFFu) != NULL);
    CHECK(jitarena_kind_bytes(a, JITARENA_INVALID_KIND) == 100);
    CHECK(jitarena_kind_count(a, JITARENA_INVALID_KIND) == 4);

    /* Size 0 gives distinct blocks; impossible sizes fail and say why. */
    CHECK(jitarena_alloc(a, 0, 0) != jitarena_alloc(a, 0, 0));
    CHECK(jitarena_alloc(a, SIZE_MAX, 0) == NULL);
    CHECK(jitarena_failure(a) == JITARENA_E_SIZE_OVERFLOW);
    CHECK(strstr(jitarena_last_error_message(), "too large") != NULL);
    CHECK(jitarena_alloc(a, SIZE_MAX - 6, 1) == NULL);

    /* A large request: a page of its size, seen by largest. */
    CHECK(jitarena_alloc(a, 1 << 20, 2) != NULL);
    CHECK(jitarena_largest_alloc(a) == (1u << 20));

    /* Without counters: still memory, not counted. */
    want = jitarena_total_count(a);
    CHECK(alloc_uncounted(a, 24, 1) != NULL);
    CHECK(jitarena_total_count(a) == want);

    jitarena_reset(a);
    CHECK(jitarena_total_bytes(a) == 0 && jitarena_total_count(a) == 0);
    CHECK(jitarena_failure(a) == 0 && jitarena_page_count(a) == 0);
    CHECK(jitarena_largest_alloc(a) == 0 && jitarena_used_bytes(a) == 0);
    jitarena_destroy(a);
}

/* The bytes a request of `size` (not 0) takes: rounded up to the pointer size. */
#define ROUNDED(size) (((size) + JITARENA_ALIGN - 1) / JITARENA_ALIGN * JITARENA_ALIGN)

static void test_phases(void) {
    jitarena* a = make_arena();
    CHECK(jitarena_alloc(a, 7, 0) != NULL);
    jitarena_set_phase(a, 1);
    CHECK(jitarena_alloc(a, 100, 0) != NULL);
    CHECK(jitarena_alloc(a, 50, 2) != NULL);
    jitarena_set_phase(a, 2);
    CHECK(jitarena_alloc(a, 200000, 2) != NULL);
    jitarena_set_phase(a, JITARENA_NO_PHASE);
    CHECK(jitarena_alloc(a, 3, 1) != NULL);
    /* Bytes used: each request rounded up to the pointer size. */
    CHECK(jitarena_phase_bytes(a, 0) == 0);
    CHECK(jitarena_phase_bytes(a, 1) == ROUNDED(100) + ROUNDED(50));
    CHECK(jitarena_phase_bytes(a, 2) == 200000);
    CHECK(jitarena_phase_bytes(a, JITARENA_NO_PHASE) == ROUNDED(7) + ROUNDED(3));
    jitarena_destroy(a);
}

/* The JIT's BeginPhase/EndPhase: a parent begun, a child ended inside it, a phase begun inside
 * another (an inlinee's), past the head's marks. */
static void test_nested_phases(void) {
    jitarena* a = make_arena();
    int i;
    for (i = 0; i < 100; i++) {
        jitarena_phase_begin(a, 0);
        CHECK(jitarena_alloc(a, 16, 0) != NULL);
        jitarena_phase_end(a, 1); /* child 1 ended inside 0: its 16 bytes */
        CHECK(jitarena_alloc(a, 24, 0) != NULL);
        jitarena_phase_begin(a, 2); /* inside 0 */
        CHECK(jitarena_alloc(a, 8, 1) != NULL);
        jitarena_phase_end(a, 2); /* back to 0 */
        CHECK(jitarena_alloc(a, 32, 0) != NULL);
        jitarena_phase_end(a, 0);
        CHECK(jitarena_alloc(a, 40, 0) != NULL); /* between phases */
    }
    CHECK(jitarena_phase_bytes(a, 0) == 100 * (24 + 32));
    CHECK(jitarena_phase_bytes(a, 1) == 100 * 16);
    CHECK(jitarena_phase_bytes(a, 2) == 100 * 8);
    CHECK(jitarena_phase_bytes(a, JITARENA_NO_PHASE) == 100 * 40);
    CHECK(jitarena_used_bytes(a) == 100 * 120);
    jitarena_destroy(a);
}

static void test_host_pages_and_limit(void) {
    host_pages h = {0, 0, 0};
    jitarena_config cfg;
    jitarena* a;
    int n = 0;
    jitarena_config_init(&cfg);
    cfg.kind_names = KINDS;
    cfg.kind_count = 3;
    cfg.page_size = 8192;
    cfg.limit_bytes = 4 * 8192;
    cfg.page_alloc = host_alloc;
    cfg.page_free = host_free;
    cfg.host = &h;
    a = jitarena_create(&cfg);
    CHECK(a != NULL);
    while (jitarena_alloc(a, 1000, 1) != NULL) {
        n++;
    }
    CHECK(n == 4 * 8);
    CHECK(jitarena_failure(a) == JITARENA_E_LIMIT && jitarena_limit_hit(a) == 1);
    CHECK(strstr(jitarena_last_error_message(), "limit") != NULL);
    CHECK(h.live_pages == 4 && h.live_bytes == 4 * 8192);
    CHECK(jitarena_reserved_bytes(a) == 4 * 8192);
    jitarena_reset(a);
    CHECK(h.live_pages == 0 && jitarena_limit_hit(a) == 0); /* every page back to the host */
    CHECK(jitarena_alloc(a, 100000, 0) == NULL); /* larger than the limit */
    jitarena_destroy(a);
    CHECK(h.live_pages == 0 && h.live_bytes == 0);
}

static void test_misaligned_host_pages(void) {
    jitarena_config cfg;
    jitarena* a;
    jitarena_config_init(&cfg);
    cfg.page_alloc = misaligned_alloc;
    cfg.page_free = misaligned_free;
    a = jitarena_create(&cfg);
    CHECK(a != NULL);
    CHECK(jitarena_alloc(a, 8, 0) == NULL);
    CHECK(jitarena_failure(a) == JITARENA_E_CONFIG);
    CHECK(strstr(jitarena_last_error_message(), "not aligned") != NULL);
    CHECK(jitarena_reserved_bytes(a) == 0 && jitarena_page_count(a) == 0);
    jitarena_destroy(a);
}

static void test_host_pages_past_the_address_space(void) {
    jitarena_config cfg;
    jitarena* a;
    jitarena_config_init(&cfg);
    cfg.page_alloc = wrapping_alloc;
    cfg.page_free = wrapping_free;
    a = jitarena_create(&cfg);
    CHECK(a != NULL);
    CHECK(jitarena_alloc(a, 8, 0) == NULL);
    CHECK(jitarena_failure(a) == JITARENA_E_CONFIG);
    CHECK(strstr(jitarena_last_error_message(), "address space") != NULL);
    CHECK(jitarena_reserved_bytes(a) == 0 && jitarena_page_count(a) == 0);
    CHECK(wrapped_frees == 1);
    jitarena_destroy(a);
    CHECK(wrapped_frees == 1);
}

/* A program compiled against another header than the library's is refused at create. */
/* A kind handle: the arena (aligned to JITARENA_ARENA_ALIGN) and the kind's slot in one word,
 * taken apart exactly, and its allocations counted under the kind (or the invalid bucket). */
static void test_kind_handles(void) {
    static const uint32_t kinds[] = {0, 1, 2, 3, 254, 255, 1000, 0xFFFFFFFFu};
    jitarena* a = make_arena();
    jitarena* b = make_arena();
    size_t i;
    CHECK(a != NULL && b != NULL);
    CHECK((uintptr_t)a % JITARENA_ARENA_ALIGN == 0 && (uintptr_t)b % JITARENA_ARENA_ALIGN == 0);
    for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        jitarena_kind_handle h = jitarena_kind_handle_of(a, kinds[i]);
        CHECK(jitarena_handle_arena(h) == a);
        CHECK(jitarena_handle_slot(h) == jitarena_kind_slot_of(kinds[i]));
        CHECK(jitarena_alloc_handle_or(h, 24, (jitarena_on_failure)NULL) != NULL);
    }
    CHECK(jitarena_kind_bytes(a, 0) == 24 && jitarena_kind_count(a, 2) == 1);
    /* Kinds 3 and up (3 are configured) are the invalid bucket's: 3, 254, 255, 1000, 2^32-1. */
    CHECK(jitarena_kind_count(a, JITARENA_INVALID_KIND) == 5);
    CHECK(jitarena_total_count(b) == 0); /* nothing went to the other arena */
    jitarena_destroy(a);
    jitarena_destroy(b);
}

static void test_abi_mismatch(void) {
    jitarena_config cfg;
    jitarena_config_init(&cfg);
    CHECK(jitarena_create_checked(&cfg, JITARENA_ABI_VERSION + 1, sizeof(jitarena_head)) == NULL);
    CHECK(strstr(jitarena_last_error_message(), "ABI version") != NULL);
    CHECK(jitarena_create_checked(&cfg, JITARENA_ABI_VERSION, sizeof(jitarena_head) - 8) == NULL);
    CHECK(strstr(jitarena_last_error_message(), "compile it against the header") != NULL);
    {
        jitarena* a = jitarena_create(&cfg); /* the macro: the check passes */
        CHECK(a != NULL);
        jitarena_destroy(a);
        a = (jitarena_create)(&cfg); /* the function itself */
        CHECK(a != NULL);
        jitarena_destroy(a);
    }
}

static void test_null_arena(void) {
    CHECK(jitarena_alloc(NULL, 8, 0) == NULL);
    CHECK(strstr(jitarena_last_error_message(), "NULL") != NULL);
    CHECK(jitarena_alloc_slow(NULL, 8, 0) == NULL);
    jitarena_phase_mark_slow(NULL, 1, JITARENA_MARK_SWITCH); /* the inline marks take a live arena */
    jitarena_reset(NULL);
    jitarena_destroy(NULL);
    CHECK(jitarena_failure(NULL) == 0);
    CHECK(jitarena_kind_bytes(NULL, 0) == 0 && jitarena_kind_count(NULL, 0) == 0);
    CHECK(jitarena_phase_bytes(NULL, 0) == 0 && jitarena_total_bytes(NULL) == 0);
    CHECK(jitarena_total_count(NULL) == 0 && jitarena_used_bytes(NULL) == 0);
    CHECK(jitarena_reserved_bytes(NULL) == 0 && jitarena_page_count(NULL) == 0);
    CHECK(jitarena_largest_alloc(NULL) == 0 && jitarena_limit_hit(NULL) == 0);
    CHECK(jitarena_kind_count_configured(NULL) == 0 && jitarena_phase_count_configured(NULL) == 0);
}

int main(void) {
    test_version_and_errors();
    test_config();
    test_inline_path_and_readers();
    test_phases();
    test_nested_phases();
    test_kind_handles();
    test_abi_mismatch();
    test_host_pages_and_limit();
    test_misaligned_host_pages();
    test_host_pages_past_the_address_space();
    test_null_arena();
    printf("api_test: %d passed, 0 failed\n", checks_passed);
    return 0;
}
