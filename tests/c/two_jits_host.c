/* Loads two JITs (shared libraries, each with its own copy of jitarena) into one process and
 * compiles the same methods with both, each writing its own stats log.
 *   two_jits_host BASE.so DIFF.so BASE_LOG DIFF_LOG METHODS */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*compile_fn)(const char*, int);

static compile_fn load(const char* path) {
    void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    void* sym;
    if (lib == NULL) {
        fprintf(stderr, "host: %s\n", dlerror());
        exit(3);
    }
    sym = dlsym(lib, "jit_compile");
    if (sym == NULL) {
        fprintf(stderr, "host: %s\n", dlerror());
        exit(3);
    }
    return (compile_fn)(size_t)sym;
}

int main(int argc, char** argv) {
    compile_fn base, diff;
    int n, rb, rd;
    if (argc != 6) {
        fprintf(stderr, "usage: two_jits_host BASE.so DIFF.so BASE_LOG DIFF_LOG METHODS\n");
        return 2;
    }
    base = load(argv[1]);
    diff = load(argv[2]);
    if (base == diff) {
        fprintf(stderr, "host: both libraries resolved to one jit_compile\n");
        return 4;
    }
    n = atoi(argv[5]);
    rb = base(argv[3], n);
    rd = diff(argv[4], n);
    printf("base %d, diff %d\n", rb, rd);
    return rb != 0 || rd != 0;
}
