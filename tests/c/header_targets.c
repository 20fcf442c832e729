/* Compiled, not linked, by .ci/run for targets this machine cannot run (Windows x86_64 and x86,
 * aarch64 and arm32 Linux) and for i686 Linux: the header must compile as freestanding C99 on
 * each, with the head laid out as the inline path and src/sys.rs expect. */
#include <stddef.h>

#include "jitarena.h"

#define LAYOUT_CHECK(name, cond) typedef char layout_check_##name[(cond) ? 1 : -1]

LAYOUT_CHECK(head_cursor, offsetof(jitarena_head, cursor) == 0);
LAYOUT_CHECK(head_limit, offsetof(jitarena_head, limit) == sizeof(void*));
LAYOUT_CHECK(head_mark_next, offsetof(jitarena_head, mark_next) == 2 * sizeof(void*));
LAYOUT_CHECK(head_mark_limit, offsetof(jitarena_head, mark_limit) == 3 * sizeof(void*));
LAYOUT_CHECK(head_used_bias, offsetof(jitarena_head, used_bias) == 4 * sizeof(void*));
/* The counters follow the five words, aligned as uint64_t is inside a struct on the target (to
 * 8 on 32-bit ARM and Windows, to 4 on i686 Linux). */
struct align_of_u64 {
    char c;
    uint64_t v;
};
#define U64_ALIGN offsetof(struct align_of_u64, v)
LAYOUT_CHECK(head_kind_packed, offsetof(jitarena_head, kind_packed) ==
                                   ((5 * sizeof(void*) + U64_ALIGN - 1) & ~(size_t)(U64_ALIGN - 1)));
LAYOUT_CHECK(head_marks, offsetof(jitarena_head, marks) ==
                             offsetof(jitarena_head, kind_packed) + 8 * JITARENA_KIND_SLOTS);
LAYOUT_CHECK(head_size, sizeof(jitarena_head) >= offsetof(jitarena_head, marks) +
                                                     JITARENA_MARKS * sizeof(jitarena_mark));
LAYOUT_CHECK(mark_size, sizeof(jitarena_mark) == sizeof(void*) + 8);
LAYOUT_CHECK(packed_one, JITARENA_PACKED_ONE == 0xFFFFFFFF80000000ull);
LAYOUT_CHECK(every_slot_indexes, JITARENA_KIND_SLOTS == 256u);
/* kinds_by_phase lies past the end of every ABI-1 config (which ended with `host`, its size
 * rounded up to 8 at most), so an old struct_size never reaches it. */
LAYOUT_CHECK(kinds_by_phase_past_old_configs,
             offsetof(jitarena_config, kinds_by_phase) >=
                 ((offsetof(jitarena_config, host) + sizeof(void*) + 7u) & ~(size_t)7u));
LAYOUT_CHECK(event_size, sizeof(jitarena_event) == 16);
LAYOUT_CHECK(config_starts_with_size, offsetof(jitarena_config, struct_size) == 0);
LAYOUT_CHECK(method_starts_with_size, offsetof(jitarena_method, struct_size) == 0);

/* The inline fast paths, instantiated. */
void* header_targets_alloc(jitarena* arena, size_t size, uint32_t kind);
void* header_targets_alloc(jitarena* arena, size_t size, uint32_t kind) {
    return jitarena_alloc(arena, size, kind);
}
void* header_targets_alloc_slot(jitarena* arena, size_t size, uint32_t kind);
void* header_targets_alloc_slot(jitarena* arena, size_t size, uint32_t kind) {
    return jitarena_alloc_slot(arena, size, jitarena_kind_slot_of(kind));
}
void header_targets_phases(jitarena* arena);
void header_targets_phases(jitarena* arena) {
    jitarena_phase_begin(arena, 0);
    jitarena_phase_end(arena, 1);
    jitarena_phase_end(arena, 0);
}
