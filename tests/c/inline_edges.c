/* The header's inline allocation path alone, on whatever target this is compiled for, against
 * what it must do: a head made up here (no library: this program defines the out-of-line entry
 * points itself) with cursors from 0 to the top of the address space and windows from empty to
 * 64 KiB, and sizes of 0, a few bytes, the window's bytes left and either side of them, sizes
 * near the cursor's value and near SIZE_MAX. A request fits exactly when its size is not 0 and
 * its size rounded up to 8 is at most the bytes left; a fit takes the block at the cursor less
 * the rounded size, counts the size and one allocation in the slot, and calls nothing; a miss
 * goes out of line, and jitarena_alloc_slot_or() then returns what on_failure() returns.
 *
 *   inline_edges      prints "inline_edges: N cases, F failed" */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "jitarena.h"

static int slow_calls, failure_calls;
static char failure_block[8];

void* jitarena_alloc_slow(jitarena* arena, size_t size, uint32_t kind) {
    (void)arena;
    (void)size;
    (void)kind;
    slow_calls++;
    return NULL;
}

void* jitarena_alloc_slow_at(jitarena* arena, size_t size, uint32_t kind, const void* site) {
    (void)site;
    return jitarena_alloc_slow(arena, size, kind);
}

static void* on_failure(void) {
    failure_calls++;
    return failure_block;
}

static jitarena_head head;
static long cases, failed;

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        if (failed++ < 20) {                                                                       \
            printf("inline_edges: cursor %#llx window %llu size %#llx: ",                          \
                   (unsigned long long)cursor, (unsigned long long)window,                        \
                   (unsigned long long)size);                                                      \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

/* One request through jitarena_alloc_slot_or() against the rule above. */
static void request(uintptr_t cursor, uintptr_t window, size_t size) {
    /* Rounded in 64 bits, which no size_t of these targets can wrap past zero... except a
     * 64-bit size within 7 of SIZE_MAX, which rounds past the address space. */
    unsigned long long rounded = ((unsigned long long)size + 7u) & ~7ull;
    int past = sizeof(size_t) == 8 && size > SIZE_MAX - 7;
    int fits = size != 0 && !past && rounded <= (unsigned long long)window;
    int slow_before = slow_calls, failures_before = failure_calls;
    void* block;
    cases++;
    head.cursor = cursor;
    head.limit = cursor - window;
    memset(head.kind_packed, 0, sizeof head.kind_packed);
    block = jitarena_alloc_slot_or((jitarena*)&head, size, 3, on_failure);
    if (fits) {
        uint64_t packed = head.kind_packed[3], bytes = packed & 0x7FFFFFFFu;
        if (slow_calls != slow_before || failure_calls != failures_before) FAIL("went out of line");
        if ((uintptr_t)block != cursor - (uintptr_t)rounded || head.cursor != (uintptr_t)block)
            FAIL("block %p, cursor %#llx", block, (unsigned long long)head.cursor);
        if (bytes != size || (bytes - packed) >> 31 != 1) FAIL("counted %#llx", (unsigned long long)packed);
    } else {
        if (slow_calls != slow_before + 1 || failure_calls != failures_before + 1) FAIL("stayed inline");
        if (block != failure_block) FAIL("returned %p, not on_failure()'s", block);
        if (head.cursor != cursor || head.kind_packed[3] != 0) FAIL("the head changed");
    }
}

int main(void) {
    const uintptr_t top = UINTPTR_MAX & ~(uintptr_t)7, middle = (uintptr_t)1 << (sizeof(uintptr_t) * 8 - 1);
    const uintptr_t cursors[] = {0, 8, 16, 4096, 65536, middle, middle + 8, top, top - 8, top - 65536};
    const uintptr_t windows[] = {0, 8, 16, 4096, 65536};
    const size_t sizes[] = {0, 1, 7, 8, 9, 15, 16, 17, 4095, 4096, 4097, 65535, 65536, 65537,
                            SIZE_MAX, SIZE_MAX - 6, SIZE_MAX - 7, SIZE_MAX - 8, SIZE_MAX - 15,
                            SIZE_MAX / 2, SIZE_MAX / 2 + 1, SIZE_MAX / 2 + 8};
    unsigned c, w, s;
    int d;
    for (c = 0; c < sizeof cursors / sizeof cursors[0]; c++) {
        for (w = 0; w < sizeof windows / sizeof windows[0]; w++) {
            uintptr_t cursor = cursors[c], window = windows[w];
            if (window > cursor) continue;
            for (d = -8; d <= 8; d++) {
                request(cursor, window, (size_t)window + (size_t)d); /* the bytes left, either side */
                request(cursor, window, (size_t)cursor + (size_t)d); /* the cursor's value */
            }
            for (s = 0; s < sizeof sizes / sizeof sizes[0]; s++) request(cursor, window, sizes[s]);
        }
    }
    printf("inline_edges: %ld cases, %ld failed\n", cases, failed);
    return failed != 0;
}
