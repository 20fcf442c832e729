// The replay host: loads a baseline JIT and a diff JIT (two shared libraries, each with its own
// copy of jitarena) into one process, as the .NET JIT's replay tool loads a baseline and a diff
// JIT, and compiles every function of the input with both; each JIT writes its own stats log.
//
//   replay_host BASE.so DIFF.so PROGRAMS.txt BASE_LOG DIFF_LOG [SHARD COUNT]
//
// With SHARD and COUNT, only the functions whose index modulo COUNT is SHARD are compiled (for a
// CI matrix); context numbers stay the functions' indexes in the whole input.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "minijit.h"

namespace {

struct Jit {
    const char* path;
    int (*open_log)(const char*);
    int (*compile)(const char*, int64_t, minijit_result*);
    const char* (*error)(void);
    int (*close_log)(void);
};

template <typename F>
F symbol(void* lib, const char* path, const char* name) {
    void* s = dlsym(lib, name);
    if (s == nullptr) {
        std::fprintf(stderr, "replay_host: %s has no %s\n", path, name);
        std::exit(3);
    }
    return reinterpret_cast<F>(s);
}

Jit load(const char* path) {
    void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
        std::fprintf(stderr, "replay_host: %s\n", dlerror());
        std::exit(3);
    }
    return Jit{path,
               symbol<int (*)(const char*)>(lib, path, "minijit_open_log"),
               symbol<int (*)(const char*, int64_t, minijit_result*)>(lib, path, "minijit_compile"),
               symbol<const char* (*)(void)>(lib, path, "minijit_error"),
               symbol<int (*)(void)>(lib, path, "minijit_close_log")};
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 6 && argc != 8) {
        std::fprintf(stderr, "usage: replay_host BASE.so DIFF.so PROGRAMS.txt BASE_LOG DIFF_LOG [SHARD COUNT]\n");
        return 2;
    }
    long shard = argc == 8 ? std::strtol(argv[6], nullptr, 10) : 0;
    long count = argc == 8 ? std::strtol(argv[7], nullptr, 10) : 1;
    if (count < 1 || shard < 0 || shard >= count) {
        std::fprintf(stderr, "replay_host: shard %s of %s is not a shard\n", argv[6], argv[7]);
        return 2;
    }
    Jit jits[2] = {load(argv[1]), load(argv[2])};
    if (jits[0].compile == jits[1].compile) {
        std::fprintf(stderr, "replay_host: both libraries resolved to one minijit_compile\n");
        return 4;
    }
    for (int j = 0; j < 2; j++) {
        if (jits[j].open_log(argv[4 + j]) != 0) {
            std::fprintf(stderr, "replay_host: %s cannot open its log %s\n", jits[j].path, argv[4 + j]);
            return 3;
        }
    }
    std::ifstream input(argv[3]);
    if (!input) {
        std::fprintf(stderr, "replay_host: cannot read %s\n", argv[3]);
        return 3;
    }
    std::string line;
    int64_t context = 0, compiled = 0;
    int failures = 0;
    size_t code[2] = {0, 0};
    while (std::getline(input, line)) {
        if (line.empty() || line[0] == '#') continue;
        if (context % count != shard) {
            context++;
            continue;
        }
        minijit_result results[2] = {};
        for (int j = 0; j < 2; j++) {
            if (jits[j].compile(line.c_str(), context, &results[j]) != 0) {
                std::fprintf(stderr, "replay_host: %s: function %lld: %s\n", jits[j].path, static_cast<long long>(context), jits[j].error());
                failures++;
            }
            code[j] += results[j].bytecode_size;
        }
        if (results[0].checked_value != results[1].checked_value || results[0].bytecode_size != results[1].bytecode_size) {
            std::fprintf(stderr, "replay_host: function %lld compiles differently in the two JITs\n", static_cast<long long>(context));
            failures++;
        }
        context++;
        compiled++;
    }
    for (Jit& jit : jits) jit.close_log();
    std::printf("compiled %lld functions with both JITs: %zu and %zu bytes of bytecode, %d failures\n",
                static_cast<long long>(compiled), code[0], code[1], failures);
    return failures == 0 ? 0 : 1;
}
