/* Compiled, not linked, by .ci/run for targets this machine cannot run (Windows x86_64 and x86,
 * aarch64 and arm32 Linux) and for i686 Linux: the header must compile as freestanding C99 on
 * each, with the head laid out as the inline path and src/sys.rs expect. */
#include <stddef.h>

#include "jitarena.h"

#define LAYOUT_CHECK(name, cond) typedef char layout_check_##name[(cond) ? 1 : -1]

LAYOUT_CHECK(head_first_counter, offsetof(jitarena_head, total_bytes) == 0);
LAYOUT_CHECK(head_cursor, offsetof(jitarena_head, cursor) == 8);
LAYOUT_CHECK(head_limit, offsetof(jitarena_head, limit) == 8 + sizeof(void*));
LAYOUT_CHECK(head_kind_bytes_aligned, offsetof(jitarena_head, kind_bytes) % 4 == 0);
LAYOUT_CHECK(event_size, sizeof(jitarena_event) == 16);
LAYOUT_CHECK(config_starts_with_size, offsetof(jitarena_config, struct_size) == 0);
LAYOUT_CHECK(method_starts_with_size, offsetof(jitarena_method, struct_size) == 0);

/* The inline fast path, instantiated. */
void* header_targets_alloc(jitarena* arena, size_t size, uint32_t kind);
void* header_targets_alloc(jitarena* arena, size_t size, uint32_t kind) {
    return jitarena_alloc(arena, size, kind);
}
