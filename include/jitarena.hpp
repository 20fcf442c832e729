// jitarena.hpp - a thin C++ layer over jitarena.h: an RAII arena owner and a typed,
// kind-tagged allocator for standard containers, used the way the .NET JIT uses its
// CompAllocator:
//
//   jitarena_cxx::Arena arena(config);                      // owns a jitarena*
//   jitarena_cxx::Allocator<BasicBlock*> alloc(arena, CMK_BasicBlock);   // holds its kind slot
//   std::vector<BasicBlock*, jitarena_cxx::Allocator<BasicBlock*>> blocks(alloc);
//   GenTree* node = arena.make<GenTree>(CMK_ASTNode, args...);   // placement-constructs
//
// Where the C call returns NULL, this layer calls JITARENA_ON_OOM(arena): by default it throws
// std::bad_alloc (or calls std::abort() when exceptions are disabled). Define JITARENA_ON_OOM
// before including this header to route it to the JIT's own out-of-memory path.
// Deallocation is a no-op: memory returns to the arena at reset or destroy. An Allocator turns
// its kind into a counter slot once, when it is made (jitarena_kind_slot_of), and allocates with
// jitarena_alloc_slot: no clamp per allocation, as the .NET JIT's CompAllocator holds its kind.
#ifndef JITARENA_HPP
#define JITARENA_HPP

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <utility>

#include "jitarena.h"

#ifndef JITARENA_ON_OOM
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(_CPPUNWIND)
#define JITARENA_ON_OOM(arena) throw std::bad_alloc()
#else
#define JITARENA_ON_OOM(arena) std::abort()
#endif
#endif

namespace jitarena_cxx {

// Allocates or reports out-of-memory; never returns NULL.
inline void* allocate_or_fail(::jitarena* arena, std::size_t size, std::uint32_t kind) {
    void* p = jitarena_alloc(arena, size, kind);
    if (p == nullptr) {
        JITARENA_ON_OOM(arena);
    }
    return p;
}

// The same with a kind slot (from jitarena_kind_slot_of); never returns NULL.
inline void* allocate_slot_or_fail(::jitarena* arena, std::size_t size, ::jitarena_kind_slot slot) {
    void* p = jitarena_alloc_slot(arena, size, slot);
    if (p == nullptr) {
        JITARENA_ON_OOM(arena);
    }
    return p;
}

// Owns one jitarena* (create in the constructor, destroy in the destructor). Move-only.
class Arena {
public:
    // Creates the arena; on failure calls JITARENA_ON_OOM (jitarena_last_error_message() says
    // why).
    explicit Arena(const jitarena_config& config) : arena_(jitarena_create(&config)) {
        if (arena_ == nullptr) {
            JITARENA_ON_OOM(arena_);
        }
    }
    ~Arena() { jitarena_destroy(arena_); }
    Arena(Arena&& other) noexcept : arena_(other.arena_) { other.arena_ = nullptr; }
    Arena& operator=(Arena&& other) noexcept {
        if (this != &other) {
            jitarena_destroy(arena_);
            arena_ = other.arena_;
            other.arena_ = nullptr;
        }
        return *this;
    }
    Arena(const Arena&) = delete;
    Arena& operator=(const Arena&) = delete;

    // The C handle, for the C API's readers and jitarena_method_done().
    ::jitarena* get() const noexcept { return arena_; }

    // Raw memory of `kind`, aligned to JITARENA_ALIGN (the pointer size); never NULL.
    void* allocate(std::size_t size, std::uint32_t kind) { return allocate_or_fail(arena_, size, kind); }

    // Constructs a T in the arena (its destructor is never run).
    template <typename T, typename... Args>
    T* make(std::uint32_t kind, Args&&... args) {
        static_assert(alignof(T) <= JITARENA_ALIGN, "jitarena allocations are aligned to the pointer size");
        return new (allocate(sizeof(T), kind)) T(std::forward<Args>(args)...);
    }

    void set_phase(std::uint32_t phase) noexcept { jitarena_set_phase(arena_, phase); }
    void reset() noexcept { jitarena_reset(arena_); }

private:
    ::jitarena* arena_;
};

// A standard-library allocator that takes its memory from an arena under one kind, held as
// its counter slot (validated once, here; kinds >= JITARENA_MAX_KINDS count as invalid).
template <typename T>
class Allocator {
public:
    using value_type = T;

    Allocator(::jitarena* arena, std::uint32_t kind) noexcept : arena_(arena), slot_(jitarena_kind_slot_of(kind)) {}
    Allocator(const Arena& arena, std::uint32_t kind) noexcept
        : arena_(arena.get()), slot_(jitarena_kind_slot_of(kind)) {}
    template <typename U>
    Allocator(const Allocator<U>& other) noexcept : arena_(other.arena()), slot_(other.slot()) {}

    T* allocate(std::size_t n) {
        static_assert(alignof(T) <= JITARENA_ALIGN, "jitarena allocations are aligned to the pointer size");
        if (n > static_cast<std::size_t>(-1) / sizeof(T)) {
            JITARENA_ON_OOM(arena_);
        }
        return static_cast<T*>(allocate_slot_or_fail(arena_, n * sizeof(T), slot_));
    }
    void deallocate(T*, std::size_t) noexcept {}

    ::jitarena* arena() const noexcept { return arena_; }
    // The kind's counter slot: the kind itself below JITARENA_MAX_KINDS.
    ::jitarena_kind_slot slot() const noexcept { return slot_; }
    // The kind, as a slot (JITARENA_MAX_KINDS for a kind out of range).
    std::uint32_t kind() const noexcept { return slot_; }

private:
    ::jitarena* arena_;
    ::jitarena_kind_slot slot_;
};

template <typename T, typename U>
bool operator==(const Allocator<T>& a, const Allocator<U>& b) noexcept {
    return a.arena() == b.arena();
}
template <typename T, typename U>
bool operator!=(const Allocator<T>& a, const Allocator<U>& b) noexcept {
    return !(a == b);
}

}  // namespace jitarena_cxx

#endif  // JITARENA_HPP
