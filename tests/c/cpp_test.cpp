// Exercises include/jitarena.hpp: the RAII owner, the typed kind-tagged allocator with standard
// containers, make<T>, std::bad_alloc on failure, and moves. Run by tests/c_api.rs.
#include <cstring>
#include <map>
#include <new>
#include <string>
#include <vector>

#include "jitarena.hpp"
#include "check.h"

enum Kind : std::uint32_t { CMK_ASTNode, CMK_BasicBlock, CMK_LSRA, CMK_Count };
static const char* const KIND_NAMES[CMK_Count] = {"ASTNode", "BasicBlock", "LSRA"};

struct Node {
    int op;
    Node* left;
    Node* right;
    Node(int o, Node* l, Node* r) : op(o), left(l), right(r) {}
};

static jitarena_config config(std::uint64_t limit = 0) {
    jitarena_config cfg;
    jitarena_config_init(&cfg);
    cfg.kind_names = KIND_NAMES;
    cfg.kind_count = CMK_Count;
    cfg.limit_bytes = limit;
    return cfg;
}

int main() {
    {
        jitarena_cxx::Arena arena(config());
        jitarena_cxx::Allocator<int> ints(arena, CMK_BasicBlock);
        std::vector<int, jitarena_cxx::Allocator<int>> v(ints);
        for (int i = 0; i < 10000; i++) {
            v.push_back(i);
        }
        long sum = 0;
        for (int x : v) {
            sum += x;
        }
        CHECK(sum == 49995000L);
        CHECK(jitarena_kind_count(arena.get(), CMK_BasicBlock) > 10);  // the vector's growth
        CHECK(jitarena_kind_bytes(arena.get(), CMK_BasicBlock) >= 10000 * sizeof(int));

        using Pair = std::pair<const int, std::string>;
        jitarena_cxx::Allocator<Pair> pairs(arena.get(), CMK_LSRA);
        std::map<int, std::string, std::less<int>, jitarena_cxx::Allocator<Pair>> m(std::less<int>(), pairs);
        for (int i = 0; i < 100; i++) {
            m[i] = std::to_string(i);
        }
        CHECK(m.size() == 100 && m[42] == "42");
        CHECK(jitarena_kind_count(arena.get(), CMK_LSRA) == 100);  // one node per entry

        Node* leaf = arena.make<Node>(CMK_ASTNode, 1, nullptr, nullptr);
        Node* root = arena.make<Node>(CMK_ASTNode, 2, leaf, leaf);
        CHECK(root->left == leaf && root->op == 2);
        CHECK(jitarena_kind_bytes(arena.get(), CMK_ASTNode) == 2 * sizeof(Node));

        CHECK(ints == jitarena_cxx::Allocator<long>(ints));  // rebinding keeps arena and kind
        CHECK(jitarena_cxx::Allocator<long>(ints).kind() == CMK_BasicBlock);
        CHECK(jitarena_cxx::Allocator<long>(ints).slot() == CMK_BasicBlock);
        CHECK(jitarena_cxx::Allocator<long>(arena, 0xFFFFFFFFu).slot() == JITARENA_MAX_KINDS);
        jitarena_cxx::Allocator<long>(arena, 0xFFFFFFFFu).allocate(3);  // the invalid-kind bucket
        CHECK(jitarena_kind_bytes(arena.get(), JITARENA_INVALID_KIND) == 3 * sizeof(long));

        m.clear();  // its nodes lie in the arena's pages, which the reset below gives back
        jitarena_cxx::Arena moved(std::move(arena));
        CHECK(arena.get() == nullptr && moved.get() != nullptr);
        moved.set_phase(0);
        moved.reset();
        CHECK(jitarena_total_count(moved.get()) == 0);
    }
    {
        jitarena_cxx::Arena small(config(64 * 1024));
        bool threw = false;
        try {
            small.allocate(1 << 20, CMK_ASTNode);
        } catch (const std::bad_alloc&) {
            threw = true;
        }
        CHECK(threw && jitarena_failure(small.get()) == JITARENA_E_LIMIT);
        threw = false;
        try {
            jitarena_cxx::Allocator<double>(small, CMK_LSRA).allocate(static_cast<std::size_t>(-1) / 4);
        } catch (const std::bad_alloc&) {
            threw = true;
        }
        CHECK(threw);
    }
    {
        bool threw = false;
        jitarena_config bad = config();
        bad.page_size = 1;
        try {
            jitarena_cxx::Arena never(bad);
        } catch (const std::bad_alloc&) {
            threw = true;
        }
        CHECK(threw && std::strstr(jitarena_last_error_message(), "page size") != nullptr);
    }
    std::printf("cpp_test: %d passed, 0 failed\n", checks_passed);
    return 0;
}
