/* The replay driver: runs an allocation stream through the header's inline fast path, as a JIT
 * would. Compiled by build.rs twice: as jitarena_replay (counted) and, with
 * JITARENA_NO_COUNTERS, as jitarena_replay_uncounted. */
#include "jitarena.h"

#ifdef JITARENA_NO_COUNTERS
#define REPLAY_NAME jitarena_replay_uncounted
#else
#define REPLAY_NAME jitarena_replay
#endif

static inline size_t replay_events(jitarena* arena, const jitarena_event* events, size_t count) {
    size_t failed = 0, i;
    for (i = 0; i < count; i++) {
        const jitarena_event* e = &events[i];
        if (e->op == JITARENA_EVENT_PHASE) {
            jitarena_set_phase(arena, e->arg);
        } else {
            /* The size may not fit size_t on a 32-bit host: such a request must fail. */
            size_t size = e->size > (uint64_t)(size_t)-1 ? (size_t)-1 : (size_t)e->size;
            unsigned char* p = (unsigned char*)jitarena_alloc(arena, size, e->arg);
            if (p == NULL) {
                failed++;
            } else if (size != 0) {
                *p = (unsigned char)i; /* touch the block, as its user would */
            }
        }
    }
    return failed;
}

size_t REPLAY_NAME(jitarena* arena, const jitarena_event* events, size_t count) {
    if (events == NULL) {
        return 0;
    }
    /* The same loop twice, so that the one with a live arena, which a JIT's allocations
     * resemble (its arena pointer is known to be non-NULL), has no NULL check per request. */
    if (arena == NULL) {
        return replay_events(NULL, events, count);
    }
    return replay_events(arena, events, count);
}
