/* The same inline path compiled with JITARENA_NO_COUNTERS, linked into api_test. */
#define JITARENA_NO_COUNTERS
#include "jitarena.h"

void* alloc_uncounted(jitarena* a, size_t size, uint32_t kind);

void* alloc_uncounted(jitarena* a, size_t size, uint32_t kind) {
    return jitarena_alloc(a, size, kind);
}
