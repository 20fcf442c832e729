// A method compiled by a JIT linked to the packaged jitarena: its arena created from the JIT's
// kinds and phases, nodes allocated and counted by kind, one record written to the stats log
// named on the command line. Prints what it counted, for tools/tests/package.rs to compare with
// the log read by the package's bin/jitarena.
#include <cstdio>
#include <vector>

#include "jitarena.hpp"

enum CompMemKind : std::uint32_t { CMK_ASTNode, CMK_BasicBlock, CMK_LSRA, CMK_Count };
static const char* const KINDS[CMK_Count] = {"ASTNode", "BasicBlock", "LSRA"};
static const char* const PHASES[] = {"Importer", "Linear scan register alloc"};

struct GenTree {
    int oper;
    GenTree* op1;
    GenTree* op2;
};

static int fail(const char* what) {
    std::fprintf(stderr, "package_user: %s: %s\n", what, jitarena_last_error_message());
    return 1;
}

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: package_user LOG\n");
        return 2;
    }
    if (jitarena_abi_version() != JITARENA_ABI_VERSION) {
        std::fprintf(stderr, "package_user: header ABI %u, library ABI %u\n", JITARENA_ABI_VERSION,
                     jitarena_abi_version());
        return 1;
    }
    if (jitarena_log_open(argv[1]) != 0) {
        return fail("jitarena_log_open");
    }
    jitarena_config cfg;
    jitarena_config_init(&cfg);
    cfg.kind_names = KINDS;
    cfg.kind_count = CMK_Count;
    cfg.phase_names = PHASES;
    cfg.phase_count = 2;
    cfg.build_id = "package_user";
    {
        jitarena_cxx::Arena arena(cfg);
        jitarena_set_phase(arena.get(), 0);
        GenTree* last = nullptr;
        for (int i = 0; i < 100; i++) {
            last = arena.make<GenTree>(CMK_ASTNode, GenTree{i, last, nullptr});
        }
        jitarena_set_phase(arena.get(), 1);
        jitarena_cxx::Allocator<int> lsra(arena, CMK_LSRA);
        std::vector<int, jitarena_cxx::Allocator<int>> intervals(lsra);
        intervals.reserve(1000);
        for (int i = 0; i < 1000; i++) {
            intervals.push_back(i);
        }
        std::printf("ASTNode %llu bytes %llu allocations\n",
                    (unsigned long long)jitarena_kind_bytes(arena.get(), CMK_ASTNode),
                    (unsigned long long)jitarena_kind_count(arena.get(), CMK_ASTNode));
        std::printf("LSRA %llu bytes %llu allocations\n",
                    (unsigned long long)jitarena_kind_bytes(arena.get(), CMK_LSRA),
                    (unsigned long long)jitarena_kind_count(arena.get(), CMK_LSRA));
        jitarena_method m = JITARENA_METHOD_INIT;
        m.name = "Package:User(int)";
        m.context = 1;
        m.tier = "FullOpts";
        if (jitarena_method_done(arena.get(), &m) != 0) {
            return fail("jitarena_method_done");
        }
    }
    if (jitarena_log_close() != 0) {
        return fail("jitarena_log_close");
    }
    std::printf("pointer size %u, ABI %u\n", (unsigned)sizeof(void*), jitarena_abi_version());
    return 0;
}
