/* The exported slow path of the inline allocation: jitarena_alloc_slow passes its return
 * address, the allocation's call site in the caller's code, to the library's
 * jitarena_alloc_slow_at. While a trace is recorded every allocation comes through here (the
 * arena keeps its inline window empty), so the trace can name each allocation's site; the
 * untraced inline path never reaches it but for a new page. Compiled by build.rs. */
#include "jitarena.h"

#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
#pragma intrinsic(_ReturnAddress)
#define JITARENA_SITE_HERE() _ReturnAddress()
#else
/* Level 0 needs no frame pointer: the address is where the call pushed it. */
#define JITARENA_SITE_HERE() __builtin_return_address(0)
#endif

void* jitarena_alloc_slow(jitarena* arena, size_t size, uint32_t kind) {
    return jitarena_alloc_slow_at(arena, size, kind, JITARENA_SITE_HERE());
}
