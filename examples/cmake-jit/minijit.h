/* minijit: a small compiler of arithmetic functions, built to show how a JIT adopts jitarena.
 * Each build (baseline or diff) is a shared library exporting only these functions; the arena
 * inside stays private to it. */
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

/** What compiling one function produced. */
typedef struct minijit_result {
    size_t bytecode_size;    /* bytes of bytecode emitted */
    uint32_t registers_used; /* physical registers the allocator used */
    uint32_t spills;         /* virtual registers spilled to stack slots */
    int64_t checked_value;   /* the function evaluated on its test input, by the bytecode */
} minijit_result;

/** Opens this JIT's own stats log (one record per compiled function). 0 on success. */
MINIJIT_EXPORT int minijit_open_log(const char* path);

/** Compiles one function, e.g. "poly(x) = 3*x*x + 2*x + 1"; `context` is its index in the
 *  input (the replay tool's method context). Runs the bytecode on test inputs and checks it
 *  against the source's meaning. 0 on success; otherwise a message is in minijit_error(). */
MINIJIT_EXPORT int minijit_compile(const char* source, int64_t context, minijit_result* out);

/** The last error of minijit_compile, or "". */
MINIJIT_EXPORT const char* minijit_error(void);

/** Flushes and closes the stats log. */
MINIJIT_EXPORT int minijit_close_log(void);

#ifdef __cplusplus
}
#endif

#endif
