// The replay host: loads a baseline JIT and a diff JIT (two shared libraries, each with its own
// copy of jitarena) into one process, as SuperPMI loads a baseline and a diff JIT, and compiles
// every function of the input with both. Each JIT gets its own host interface (minijit_host, as
// SuperPMI gives each JitInstance its own JitHost): slabs for its arena, counted so that every
// one must come back; its own options (-jitoption for the baseline, -jit2option for the diff, as
// SuperPMI's); the number of the context being compiled, its answer to
// SuperPMIMethodContextNumber; and the answers its collection recorded to the JIT's queries.
//
//   replay_host [-jitoption KEY=VALUE]... [-jit2option KEY=VALUE]... BASE.so DIFF.so PROGRAMS.txt [SHARD COUNT]
//
// Each JIT writes the stats log its option JitArenaLog names ("%p" in it becomes the process id):
//
//   replay_host -jitoption JitArenaLog=base.jas -jit2option JitArenaLog=diff.jas
//       libminijit_base.so libminijit_diff.so programs.txt
//
// Contexts are the input's functions, numbered from 1 through the whole input, as SuperPMI
// numbers a collection's. With SHARD and COUNT, only the contexts whose number minus 1 is SHARD
// modulo COUNT are compiled (a CI matrix's share); their numbers stay those of the whole input.
// A line may start with the tier the runtime asked for, "[Tier0] " or "[Tier1] " (what a
// SuperPMI context records of the runtime's flags); without one, the method is outside tiering.
//
// A query the collection has no answer to fails the context as SuperPMI's missing data does:
// "context N failed to replay", and the exit code is 3 when there were such contexts and no
// failures (1), as superpmi's.
#include <dlfcn.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "minijit.h"

namespace {

// The context being compiled, which both JITs' hosts give as SuperPMIMethodContextNumber.
int g_context = -1;

// One loaded JIT and its host (SuperPMI's JitInstance and JitHost).
struct JitInstance {
    const char* path = nullptr;
    std::vector<std::pair<std::string, std::string>> options;
    minijit_host host{};
    // The slabs handed out and not given back yet, with their sizes.
    std::unordered_map<void*, size_t> live;
    size_t slabs = 0;
    // The first slab given back that was not handed out, or with another size.
    std::string misuse;
    int (*startup)(const minijit_host*) = nullptr;
    int (*compile)(const char*, uint32_t, minijit_result*) = nullptr;
    const char* (*error)(void) = nullptr;
    int (*shutdown)(void) = nullptr;
};

// The callbacks are called from the JIT through C function pointers: nothing may throw out of
// them.
void* allocate_slab(void* self, size_t size, size_t* actual_size) {
    JitInstance* jit = static_cast<JitInstance*>(self);
    void* slab = std::malloc(size);  // aligned for any type: at least the 8 bytes jitarena needs
    if (slab == nullptr) return nullptr;
    try {
        jit->live.emplace(slab, size);
    } catch (const std::bad_alloc&) {
        std::free(slab);
        return nullptr;
    }
    jit->slabs++;
    *actual_size = size;
    return slab;
}

void free_slab(void* self, void* slab, size_t actual_size) {
    JitInstance* jit = static_cast<JitInstance*>(self);
    auto it = jit->live.find(slab);
    if (it == jit->live.end() || it->second != actual_size) {
        if (jit->misuse.empty()) {
            char what[160];
            std::snprintf(what, sizeof what, "a slab of %zu bytes given back that was %s", actual_size,
                          it == jit->live.end() ? "not handed out" : "handed out with another size");
            jit->misuse = what;
        }
        return;
    }
    jit->live.erase(it);
    std::free(slab);
}

const char* get_string_config(void* self, const char* name) {
    for (const auto& option : static_cast<JitInstance*>(self)->options) {
        if (option.first == name) return option.second.c_str();
    }
    return nullptr;
}

// The callees the collection recorded canInline answers for. The JITs know one more ("twice"):
// a context that calls it asks a query the collection never recorded.
int can_inline(void*, const char* callee) {
    for (const char* recorded : {"sq", "cube", "avg", "mad"}) {
        if (std::strcmp(callee, recorded) == 0) return 1;
    }
    return -1;
}

int get_int_config(void* self, const char* name, int default_value) {
    if (std::strcmp(name, "SuperPMIMethodContextNumber") == 0) return g_context;
    const char* value = get_string_config(self, name);
    if (value == nullptr || *value == '\0') return default_value;
    char* end = nullptr;
    long parsed = std::strtol(value, &end, 10);
    return *end == '\0' ? static_cast<int>(parsed) : default_value;
}

template <typename F>
F symbol(void* lib, const char* path, const char* name) {
    void* s = dlsym(lib, name);
    if (s == nullptr) {
        std::fprintf(stderr, "replay_host: %s has no %s\n", path, name);
        std::exit(3);
    }
    return reinterpret_cast<F>(s);
}

void load(JitInstance& jit, const char* path) {
    void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
        std::fprintf(stderr, "replay_host: %s\n", dlerror());
        std::exit(3);
    }
    jit.path = path;
    jit.startup = symbol<int (*)(const minijit_host*)>(lib, path, "minijit_startup");
    jit.compile = symbol<int (*)(const char*, uint32_t, minijit_result*)>(lib, path, "minijit_compile");
    jit.error = symbol<const char* (*)(void)>(lib, path, "minijit_error");
    jit.shutdown = symbol<int (*)(void)>(lib, path, "minijit_shutdown");
    jit.host = minijit_host{&jit, allocate_slab, free_slab, get_int_config, get_string_config, can_inline};
}

int usage() {
    std::fprintf(stderr,
                 "usage: replay_host [-jitoption KEY=VALUE]... [-jit2option KEY=VALUE]... BASE.so DIFF.so PROGRAMS.txt "
                 "[SHARD COUNT]\n");
    return 2;
}

// A whole decimal number from 0 to INT32_MAX, or -1.
long number(const char* text) {
    char* end = nullptr;
    errno = 0;
    long n = std::strtol(text, &end, 10);
    return (*text != '\0' && *end == '\0' && errno == 0 && n >= 0 && n <= 0x7fffffff) ? n : -1;
}

}  // namespace

int main(int argc, char** argv) {
    JitInstance jits[2];
    std::vector<const char*> args;
    for (int i = 1; i < argc; i++) {
        bool base = std::strcmp(argv[i], "-jitoption") == 0;
        if (base || std::strcmp(argv[i], "-jit2option") == 0) {
            const char* eq = i + 1 < argc ? std::strchr(argv[i + 1], '=') : nullptr;
            if (eq == nullptr || eq == argv[i + 1]) return usage();
            jits[base ? 0 : 1].options.emplace_back(std::string(argv[i + 1], static_cast<size_t>(eq - argv[i + 1])), std::string(eq + 1));
            i++;
        } else {
            args.push_back(argv[i]);
        }
    }
    if (args.size() != 3 && args.size() != 5) return usage();
    long shard = args.size() == 5 ? number(args[3]) : 0;
    long count = args.size() == 5 ? number(args[4]) : 1;
    if (count < 1 || shard < 0 || shard >= count) {
        std::fprintf(stderr, "replay_host: shard %s of %s is not a shard\n", args[3], args[4]);
        return 2;
    }
    load(jits[0], args[0]);
    load(jits[1], args[1]);
    if (jits[0].compile == jits[1].compile) {
        std::fprintf(stderr, "replay_host: both libraries resolved to one minijit_compile\n");
        return 4;
    }
    for (JitInstance& jit : jits) {
        if (jit.startup(&jit.host) != 0) {
            std::fprintf(stderr, "replay_host: %s does not start: %s\n", jit.path, jit.error());
            return 3;
        }
    }
    std::ifstream input(args[2]);
    if (!input) {
        std::fprintf(stderr, "replay_host: cannot read %s\n", args[2]);
        return 3;
    }
    std::string line;
    long seen = 0, compiled = 0, min_opts = 0, missing = 0;
    int failures = 0;
    size_t code[2] = {0, 0};
    while (std::getline(input, line)) {
        if (line.empty() || line[0] == '#') continue;
        long context = ++seen;
        if ((context - 1) % count != shard) continue;
        g_context = static_cast<int>(context);
        uint32_t flags = 0;
        for (auto tier : {std::make_pair("[Tier0] ", MINIJIT_FLAG_TIER0), std::make_pair("[Tier1] ", MINIJIT_FLAG_TIER1)}) {
            if (line.compare(0, std::strlen(tier.first), tier.first) == 0) {
                flags = tier.second;
                line.erase(0, std::strlen(tier.first));
            }
        }
        minijit_result results[2] = {};
        int rc[2] = {0, 0};
        for (int j = 0; j < 2; j++) {
            rc[j] = jits[j].compile(line.c_str(), flags, &results[j]);
            if (rc[j] == 2) {
                std::printf("%s: context %ld failed to replay: %s\n", jits[j].path, context, jits[j].error());
                continue;
            }
            if (rc[j] != 0) {
                std::fprintf(stderr, "replay_host: %s: context %ld: %s\n", jits[j].path, context, jits[j].error());
                failures++;
            } else if (results[j].min_opts) {
                std::printf("%s: context %ld compiled in MinOpts after: %s\n", jits[j].path, context, jits[j].error());
            }
            // What the JIT allocated outside every phase, by its own count: its record's
            // "(no phase)" must hold exactly this.
            std::printf("%s: context %ld: %llu bytes outside every phase\n", jits[j].path, context,
                        static_cast<unsigned long long>(results[j].no_phase_bytes));
            code[j] += results[j].bytecode_size;
        }
        if (rc[0] != rc[1] || results[0].checked_value != results[1].checked_value ||
            results[0].bytecode_size != results[1].bytecode_size || results[0].min_opts != results[1].min_opts) {
            std::fprintf(stderr, "replay_host: context %ld compiles differently in the two JITs\n", context);
            failures++;
        }
        if (rc[0] == 2) {
            missing++;
            continue;
        }
        min_opts += results[0].min_opts;
        compiled++;
    }
    g_context = -1;
    for (JitInstance& jit : jits) {
        if (jit.shutdown() != 0) {
            std::fprintf(stderr, "replay_host: %s: %s\n", jit.path, jit.error());
            failures++;
        }
        // Every page of the JIT's arena came from this host and went back to it (none came from
        // it when the JIT bypasses its host: JitDirectAlloc).
        bool direct = get_int_config(&jit, "JitDirectAlloc", 0) != 0;
        if (!jit.misuse.empty() || !jit.live.empty() || (compiled > 0 && (jit.slabs == 0) != direct)) {
            std::fprintf(stderr, "replay_host: %s: %zu slabs handed out, %zu not given back%s%s\n", jit.path, jit.slabs,
                         jit.live.size(), jit.misuse.empty() ? "" : "; ", jit.misuse.c_str());
            failures++;
        }
    }
    std::printf(
        "compiled %ld contexts with both JITs (%ld in MinOpts after a failed optimized attempt): %zu and %zu bytes of "
        "bytecode, %zu and %zu slabs from the host, %d failures, %ld missing\n",
        compiled, min_opts, code[0], code[1], jits[0].slabs, jits[1].slabs, failures, missing);
    return failures != 0 ? 1 : missing != 0 ? 3 : 0;
}
