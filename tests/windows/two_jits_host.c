/* The Windows twin of tests/c/two_jits_host.c, run under Wine by scripts/windows/check.sh:
 * loads two JITs (DLLs built from tests/c/mini_jit.c, each linking its own copy of
 * libjitarena.a, as clrjit.dll does) into one process, as the .NET JIT's replay tool loads a
 * baseline and a diff JIT, and compiles the same methods with both.
 *   two_jits_host BASE.dll DIFF.dll BASE_LOG DIFF_LOG METHODS
 * A log of "-" opens none: that copy opens JITARENA_LOG at its first method. Prints
 * "base RC, diff RC" (jit_compile's results: 0, or a JITARENA_E_* code). */
#include <stdio.h>
#include <stdlib.h>
#include <windows.h>

typedef int (*compile_fn)(const char*, int);

static compile_fn load(const char* path) {
    HMODULE lib = LoadLibraryA(path);
    FARPROC sym;
    if (lib == NULL) {
        fprintf(stderr, "host: cannot load %s (error %lu)\n", path, GetLastError());
        exit(3);
    }
    sym = GetProcAddress(lib, "jit_compile");
    if (sym == NULL) {
        fprintf(stderr, "host: %s has no jit_compile (error %lu)\n", path, GetLastError());
        exit(3);
    }
    return (compile_fn)(void (*)(void))sym;
}

int main(int argc, char** argv) {
    compile_fn base, diff;
    int n, rb, rd;
    if (argc != 6) {
        fprintf(stderr, "usage: two_jits_host BASE.dll DIFF.dll BASE_LOG DIFF_LOG METHODS\n");
        return 2;
    }
    base = load(argv[1]);
    diff = load(argv[2]);
    if (base == diff) {
        fprintf(stderr, "host: both DLLs resolved to one jit_compile\n");
        return 4;
    }
    n = atoi(argv[5]);
    rb = base(argv[3], n);
    rd = diff(argv[4], n);
    printf("base %d, diff %d\n", rb, rd);
    return rb != 0 || rd != 0;
}
