/* minijit: a small compiler of arithmetic functions, in the shape of the .NET JIT, built to show
 * how a JIT adopts jitarena. Each build (baseline or diff) is a shared library exporting only
 * these functions; the arena inside stays private to it. A host (replay_host.cpp, as SuperPMI
 * for the .NET JIT) loads it, starts it up with its host interface, compiles functions and shuts
 * it down. */
#ifndef MINIJIT_H
#define MINIJIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define MINIJIT_EXPORT __declspec(dllexport)
#else
#define MINIJIT_EXPORT __attribute__((visibility("default")))
#endif

/** What the JIT asks of the process that loads it: the .NET JIT's ICorJitHost, cut down. One per
 *  loaded JIT, so that each JIT has its own configuration. */
typedef struct minijit_host {
    /** Passed back to every function below. */
    void* self;
    /** A slab of at least `size` bytes for the JIT's arena, its size in *actual_size; NULL when
     *  memory is exhausted (ICorJitHost::allocateSlab). */
    void* (*allocate_slab)(void* self, size_t size, size_t* actual_size);
    /** Gives a slab back (ICorJitHost::freeSlab). */
    void (*free_slab)(void* self, void* slab, size_t actual_size);
    /** A configuration value, or default_value when unset (ICorJitHost::getIntConfigValue). A
     *  replay host answers "SuperPMIMethodContextNumber" with the context being compiled. */
    int (*get_int_config)(void* self, const char* name, int default_value);
    /** A configuration string owned by the host, or NULL when unset
     *  (ICorJitHost::getStringConfigValue): the host's per-JIT options, as SuperPMI passes
     *  -jitoption to the baseline JIT and -jit2option to the diff JIT. */
    const char* (*get_string_config)(void* self, const char* name);
    /** Whether the method being compiled may inline its callee `callee` (the .NET JIT's
     *  ICorJitInfo::canInline): 1 yes, 0 no, -1 when the host has no answer. A replay host
     *  answers from what its collection recorded, and -1 for a query it never recorded (the
     *  JIT then throws the host's exception through its frames, as SuperPMI's missing data). */
    int (*can_inline)(void* self, const char* callee);
} minijit_host;

/** What the runtime asks for (the .NET JIT's tier flags, CORJIT_FLAGS): a method compiled at
 *  tier 0 (MinOpts code) or at tier 1 (optimized) of tiered compilation; neither, a method
 *  outside tiering (optimized, "FullOpts"). */
#define MINIJIT_FLAG_TIER0 1u
#define MINIJIT_FLAG_TIER1 2u

/** What compiling one function produced. */
typedef struct minijit_result {
    size_t bytecode_size;    /* bytes of bytecode emitted */
    uint32_t registers_used; /* physical registers the allocator used */
    uint32_t spills;         /* virtual registers spilled to stack slots */
    int64_t checked_value;   /* the function evaluated on its test input, by the bytecode */
    uint32_t min_opts;       /* 1 when compiled in MinOpts after the optimized attempt failed */
    uint64_t no_phase_bytes; /* arena bytes (rounded to the pointer size) the JIT allocated outside every phase */
} minijit_result;

/** Starts the JIT (the .NET JIT's jitStartup): keeps `host`, which must outlive the JIT, and
 *  opens the stats log its option JitArenaLog names, if set. A later call with another host only
 *  swaps the host. 0 on success; otherwise a message is in minijit_error(). */
MINIJIT_EXPORT int minijit_startup(const minijit_host* host);

/** Compiles one function, e.g. "poly(x) = 3*x*x + 2*x + 1", as `flags` (MINIJIT_FLAG_*) ask:
 *  parses it, lowers it to blocks of three-address code, simplifies it (unless in MinOpts),
 *  allocates registers, emits bytecode and checks the bytecode against the source on test
 *  inputs. A failure of the optimized attempt on an implementation limit or an internal error is
 *  retried once in MinOpts. 0 on success; 1 when the compile failed; 2 when the host had no
 *  answer to one of the JIT's queries (the compile was abandoned, as SuperPMI abandons a context
 *  with missing data). Unless 0, a message is in minijit_error(). */
MINIJIT_EXPORT int minijit_compile(const char* source, uint32_t flags, minijit_result* out);

/** The last error of this thread's minijit_startup, minijit_compile or minijit_shutdown, or "";
 *  after a compile that succeeded in MinOpts, why its optimized attempt failed. */
MINIJIT_EXPORT const char* minijit_error(void);

/** Shuts the JIT down (jitShutdown): closes its stats log. 0 on success; 1 when the log could
 *  not be closed or a method's record could not be written (minijit_error() says which). */
MINIJIT_EXPORT int minijit_shutdown(void);

#ifdef __cplusplus
}
#endif

#endif
