// arenaallocator.h: the .NET JIT's arena (src/coreclr/jitshared/arenaallocator.h and
// compallocator.h) over jitarena, in the same shape: a template over a traits type that names
// the memory kinds and gets pages from the host. docs/adopting.md walks through it. What changes:
//
// - ArenaAllocatorT::allocateMemory takes the kind's counter slot and is jitarena_alloc_slot:
//   the same rounding up to 8 and pointer bump, inline, plus one addition to the kind's counter.
//   jitarena keeps the pages, so PageDescriptor, allocateNewPage and destroy's page walk go.
// - Pages still come from the host (the traits' allocateHostMemory, which the .NET JIT's traits
//   answer with g_jitHost->allocateSlab), through jitarena's page_alloc and page_free.
// - An arena serves one method context (every attempt at it) and is then reset and kept for the
//   next context: creating one reads and checks every kind and phase name.
// - CompAllocatorT keeps its kind's slot in Release builds too: one more word than the .NET
//   JIT's Release CompAllocator, which drops its kind.
#ifndef MINIJIT_ARENAALLOCATOR_H
#define MINIJIT_ARENAALLOCATOR_H

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>
#include <vector>

#include "jitarena.h"

// TMemKindTraits provides:
//   MemKind                                   the enum of memory kinds
//   Count, Names                              how many, and their names (const char* const[Count])
//   PhaseCount, PhaseNames                    the phases jitarena_set_phase() names, likewise
//   BuildId                                   which build this is (written into the stats log)
//   allocateHostMemory(size, &actualSize)     a page from the host, or nullptr (never a throw)
//   freeHostMemory(block, size)               gives a page back
//   outOfMemory()                             does not return (the JIT's NOMEM())
template <typename TMemKindTraits>
class ArenaAllocatorT
{
public:
    using MemKind = typename TMemKindTraits::MemKind;

    // An arena for one method context: an idle one, else a new one.
    ArenaAllocatorT()
        : m_arena(takeIdle())
    {
    }

    // The context's compilation ended (its record written): the arena is emptied (counters
    // zeroed, one page kept) and waits for the next context.
    ~ArenaAllocatorT()
    {
        jitarena_reset(m_arena);
        Pool&                       pool = idlePool();
        std::lock_guard<std::mutex> hold(pool.lock);
        pool.idle.push_back(m_arena); // never allocates: takeIdle made the room
    }

    ArenaAllocatorT(const ArenaAllocatorT&)            = delete;
    ArenaAllocatorT& operator=(const ArenaAllocatorT&) = delete;

    // Was: round the size up to sizeof(size_t), bump m_nextFreeByte, allocateNewPage past the
    // page's end. Now the same bump, inline, counting the bytes under the kind's slot.
    void* allocateMemory(size_t size, jitarena_kind_slot slot)
    {
        void* block = jitarena_alloc_slot(m_arena, size, slot);
        if (block == nullptr)
        {
            TMemKindTraits::outOfMemory();
        }
        return block;
    }

    // The arena, for jitarena_set_phase() and jitarena_method_done().
    jitarena* handle() const
    {
        return m_arena;
    }

    // At shutdown, when no compile runs: every arena's pages go back to the host.
    static void destroyIdle()
    {
        Pool&                       pool = idlePool();
        std::lock_guard<std::mutex> hold(pool.lock);
        for (jitarena* arena : pool.idle)
        {
            jitarena_destroy(arena);
        }
        pool.idle.clear();
        pool.created = 0;
    }

private:
    // The idle arenas, one for each compile that ran at once. Creating an arena costs about
    // 109,000 instructions with 55 kinds and 80 phases (reading and checking the names),
    // resetting one about 650: an arena per context would pay the first for every method.
    struct Pool
    {
        std::mutex             lock;
        std::vector<jitarena*> idle;
        size_t                 created = 0;
    };

    static Pool& idlePool()
    {
        static Pool pool;
        return pool;
    }

    static jitarena* takeIdle()
    {
        Pool& pool = idlePool();
        bool  room = true;
        {
            std::lock_guard<std::mutex> hold(pool.lock);
            if (!pool.idle.empty())
            {
                jitarena* arena = pool.idle.back();
                pool.idle.pop_back();
                return arena;
            }
            // Room for every arena there is, so that giving one back cannot fail.
            try
            {
                pool.idle.reserve(pool.created + 1);
                pool.created++;
            }
            catch (const std::bad_alloc&)
            {
                room = false;
            }
        }
        // outOfMemory() is called with no lock held: it may leave by longjmp.
        if (!room)
        {
            TMemKindTraits::outOfMemory();
        }
        jitarena_config config;
        jitarena_config_init(&config);
        config.kind_names  = TMemKindTraits::Names;
        config.kind_count  = static_cast<uint32_t>(TMemKindTraits::Count);
        config.phase_names = TMemKindTraits::PhaseNames;
        config.phase_count = TMemKindTraits::PhaseCount;
        config.page_alloc  = allocatePage;
        config.page_free   = freePage;
        config.build_id    = TMemKindTraits::BuildId;
        jitarena* arena    = jitarena_create(&config);
        if (arena == nullptr)
        {
            {
                std::lock_guard<std::mutex> hold(pool.lock);
                pool.created--;
            }
            TMemKindTraits::outOfMemory();
        }
        return arena;
    }

    // jitarena calls these for its pages. They must return nullptr rather than throw: an
    // exception cannot cross jitarena's frames (allocateMemory calls outOfMemory() instead).
    static void* allocatePage(void*, size_t size)
    {
        size_t actualSize;
        return TMemKindTraits::allocateHostMemory(size, &actualSize);
    }

    // jitarena gives back the size it asked for. A host that handed out a larger slab (the
    // runtime's JitHost may reuse a cached one up to 4 times larger) caches it as the size it
    // is told: capacity unused until the cache is trimmed, never memory overrun.
    static void freePage(void*, void* page, size_t size)
    {
        TMemKindTraits::freeHostMemory(page, size);
    }

    jitarena* m_arena;
};

// An allocator of one kind, passed by value (the .NET JIT's CompAllocator, from
// compiler->getAllocator(CMK_...)).
template <typename TMemKindTraits>
class CompAllocatorT
{
    using MemKind = typename TMemKindTraits::MemKind;
    using Arena   = ArenaAllocatorT<TMemKindTraits>;

    Arena* m_arena;
    // The kind's counter slot, kept in Release builds too (the .NET JIT's Release CompAllocator
    // holds only m_arena): counting is then the slot's load and one addition, with no clamp.
    jitarena_kind_slot m_slot;

public:
    CompAllocatorT(Arena* arena, MemKind kind)
        : m_arena(arena)
        , m_slot(jitarena_kind_slot_of(static_cast<uint32_t>(kind)))
    {
    }

    // A block for `count` objects of type T.
    template <typename T>
    T* allocate(size_t count)
    {
        if (count > SIZE_MAX / sizeof(T))
        {
            TMemKindTraits::outOfMemory();
        }
        return static_cast<T*>(m_arena->allocateMemory(count * sizeof(T), m_slot));
    }

    // Blocks are freed with the arena.
    void deallocate(void*)
    {
    }
};

#endif // MINIJIT_ARENAALLOCATOR_H
