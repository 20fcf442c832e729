// arenaallocator.h: the .NET JIT's arena (src/coreclr/jitshared/arenaallocator.h and
// compallocator.h) over jitarena, in the same shape: a template over a traits type that names
// the memory kinds and gets pages from the host. docs/adopting.md walks through it. What changes:
//
// - ArenaAllocatorT::allocateMemory takes the kind's counter slot and is
//   jitarena_alloc_slot_or: the JIT's own rounding up (to sizeof(size_t)) and pointer bump, with
//   every block where the JIT's arena puts it, inline, plus one addition to the kind's counter;
//   a failure calls the
//   traits' outOfMemory() (NOMEM()) from the caller's code, so nothing tests the result on the
//   inline path.
// - jitarena keeps the pages (each starting with the JIT's three-word descriptor, reserved), so
//   PageDescriptor, allocateNewPage and destroy's page walk go.
// - Pages still come from the host (the traits' allocateHostMemory, which the .NET JIT's traits
//   answer with g_jitHost->allocateSlab), through jitarena's page_alloc and page_free.
// - The lifetime is the JIT's: a stack-local arena per method (jitNativeCode's), created once
//   for all its attempts and destroyed when the method is done; no pool. As the JIT's, it has
//   no destructor (jitNativeCode's error trap is SEH): destroy() is called explicitly.
//   ArenaAllocatorWithDestructorT (the interpreter's) destroys in its destructor.
// - CompAllocatorT holds the jitarena itself and keeps its kind's slot in Release builds too:
//   one more word than the .NET JIT's Release CompAllocator, which drops its kind.
// - What a method's record needs (its name) is allocated in a second jitarena the arena owns,
//   recordArena(), never in the arena the record measures.
// - MEASURE_MEM_ALLOC (the .NET JIT's Debug memory statistics) keeps its MemStats beside
//   jitarena's counts: the form below compiles and counts what the .NET JIT's does.
#ifndef MINIJIT_ARENAALLOCATOR_H
#define MINIJIT_ARENAALLOCATOR_H

#include <cstddef>
#include <cstdint>

#include "jitarena.h"

#if MEASURE_MEM_ALLOC
#include "memstats.h"
#endif

// TMemKindTraits provides:
//   MemKind                                   the enum of memory kinds
//   Count, Names                              how many, and their names (const char* const[Count])
//   PhaseCount, PhaseNames                    the phases the arena counts bytes by, likewise
//   BuildId                                   which build this is (written into the stats log)
//   bypassHostAllocator()                     pages from the C library, not the host (JitDirectAlloc)
//   allocateHostMemory(size, &actualSize)     a page from the host; may throw, as the host's does
//   freeHostMemory(block, size)               gives a page back
//   outOfMemory()                             does not return (the JIT's NOMEM())
template <typename TMemKindTraits>
class ArenaAllocatorT
{
public:
    using MemKind = typename TMemKindTraits::MemKind;

    // Nothing is created yet: declaring an arena costs nothing (an inline attempt declares one
    // and never uses it). initialize() creates it, inside the compile's error trap.
    ArenaAllocatorT()
        : m_arena(nullptr)
        , m_recordArena(nullptr)
    {
    }

    ArenaAllocatorT(const ArenaAllocatorT&)            = delete;
    ArenaAllocatorT& operator=(const ArenaAllocatorT&) = delete;

    // No destructor, as the JIT's (its note: one interacts badly with SEH in jitNativeCode):
    // the method's compile calls destroy() when it is done.

    // Creates the arena: cheap when its names were seen before (jitarena caches the checked
    // names), so an arena per method needs no pool. A failure is NOMEM().
    void initialize()
    {
        m_arena = createArena();
    }

    bool isInitialized() const
    {
        return m_arena != nullptr;
    }

    // Every page goes back to the host, the record arena's too. Nothing to do for an arena
    // never created.
    void destroy()
    {
        jitarena_destroy(m_recordArena);
        m_recordArena = nullptr;
        jitarena_destroy(m_arena);
        m_arena = nullptr;
    }

    // A jitarena of its own for what the method's record needs (its name, from
    // compCompileFinish), created at the first call and destroyed with this arena, on every way
    // out of the compile: nothing the record needs is counted in the arena it measures, so a
    // logged run measures the bytes of an unlogged one.
    jitarena* recordArena()
    {
        if (m_recordArena == nullptr)
        {
            m_recordArena = createArena();
        }
        return m_recordArena;
    }

    // Was: round the size up to sizeof(size_t), bump m_nextFreeByte, allocateNewPage past the
    // page's end. Now the same bump, inline, counting the bytes under the kind's slot; a
    // failure (out of line) calls outOfMemory(). Static, for CompAllocatorT, which holds the
    // jitarena itself: the .NET JIT's Debug fault injection and fillWithUninitializedPattern
    // stay here, as they are static calls of the traits.
    static void* allocateMemory(jitarena* arena, size_t size, jitarena_kind_slot slot)
    {
        return jitarena_alloc_slot_or(arena, size, slot, onFailure);
    }

    // The same through a kind handle (the jitarena and the kind's slot in one word), for
    // CompAllocatorT.
    static void* allocateMemory(jitarena_kind_handle handle, size_t size)
    {
        return jitarena_alloc_handle_or(handle, size, onFailure);
    }

    // The same, for the few callers that allocate through the arena object (jitNativeCode's
    // Compiler objects).
    void* allocateMemory(size_t size, jitarena_kind_slot slot)
    {
        return allocateMemory(m_arena, size, slot);
    }

    // What the .NET JIT's other code still asks of its arena: its pages' bytes (JitTimer's CSV
    // in Release builds, compCompileFinish's Debug checks, MEASURE_MEM_ALLOC), the bytes handed
    // out (compCompileFinish's BytesAllocated under JitReportMetrics, MEASURE_MEM_ALLOC), the
    // page size (those Debug checks) and the template's rounding helper.
    size_t getTotalBytesAllocated() const
    {
        return static_cast<size_t>(jitarena_reserved_bytes(m_arena));
    }

    size_t getTotalBytesUsed() const
    {
        return static_cast<size_t>(jitarena_used_bytes(m_arena));
    }

    static size_t getDefaultPageSize()
    {
        return JITARENA_DEFAULT_PAGE_SIZE;
    }

    static size_t roundUp(size_t size, size_t alignment)
    {
        return (size + (alignment - 1)) & ~(alignment - 1);
    }

    // The jitarena, for CompAllocatorT, the phase calls and jitarena_method_done() (nullptr
    // before initialize()).
    jitarena* handle() const
    {
        return m_arena;
    }

#if MEASURE_MEM_ALLOC
    // The .NET JIT's Debug memory statistics (jitshared/arenaallocator.h): a MemStats per arena
    // and a MemStatsAllocator per kind, which a CompAllocator made from the arena object holds.
    // Its allocateMemory counts the request and allocates with the kind's slot: jitarena counts
    // it too, so both sets of counts stay.
    struct MemStatsAllocator
    {
        ArenaAllocatorT* m_arena;
        MemKind          m_kind;

        void* allocateMemory(size_t sz)
        {
            m_arena->m_stats.AddAlloc(sz, m_kind);
            return m_arena->allocateMemory(sz, jitarena_kind_slot_of(static_cast<uint32_t>(m_kind)));
        }
    };

    MemStatsAllocator* getMemStatsAllocator(MemKind kind)
    {
        MemStatsAllocator& allocator = m_statsAllocators[static_cast<int>(kind)];
        allocator.m_arena            = this;
        allocator.m_kind             = kind;
        return &allocator;
    }

    void finishMemStats()
    {
        m_stats.nraTotalSizeAlloc = getTotalBytesAllocated();
        m_stats.nraTotalSizeUsed  = getTotalBytesUsed();
    }

    const MemStats<TMemKindTraits>& getStats() const
    {
        return m_stats;
    }
#endif // MEASURE_MEM_ALLOC

private:
    // The method's arena and its record's (TMemKindTraits' kinds and phases, host pages).
    static jitarena* createArena()
    {
        jitarena_config config;
        jitarena_config_init(&config);
        config.kind_names  = TMemKindTraits::Names;
        config.kind_count  = static_cast<uint32_t>(TMemKindTraits::Count);
        config.phase_names = TMemKindTraits::PhaseNames;
        config.phase_count = TMemKindTraits::PhaseCount;
        config.page_alloc  = allocatePage;
        config.page_free   = freePage;
        config.build_id    = TMemKindTraits::BuildId;
        // The JIT's arena sizes a page exactly (its descriptor and the request) when it bypasses
        // the host: so does jitarena (each page still from the C library, through the traits).
        config.exact_pages = TMemKindTraits::bypassHostAllocator() ? 1 : 0;
        jitarena* arena  = jitarena_create(&config);
        if (arena == nullptr)
        {
            TMemKindTraits::outOfMemory();
        }
        return arena;
    }

    // What jitarena_alloc_slot_or() calls when a request fails: NOMEM(), in the JIT's code.
    // It takes nothing, so that no allocation's inline path keeps values alive for it.
    [[noreturn]] static void* onFailure()
    {
        TMemKindTraits::outOfMemory();
    }

    // jitarena calls these for its pages. No exception may cross jitarena's frames: what the
    // host's allocator throws (the runtime's JitHost::allocateSlab, `new BYTE[size]`; the
    // traits' NOMEM() when they bypass the host) is caught here and the page is nullptr, on
    // which allocateMemory calls outOfMemory() from the JIT's own code.
    static void* allocatePage(void*, size_t size)
    {
        try
        {
            size_t actualSize;
            return TMemKindTraits::allocateHostMemory(size, &actualSize);
        }
        catch (...)
        {
            return nullptr;
        }
    }

    // jitarena gives back the size it asked for. A host that handed out a larger slab (the
    // runtime's JitHost may reuse a cached one up to 4 times larger) caches it as the size it
    // is told: capacity unused until the cache is trimmed, never memory overrun. A throw is
    // caught too: the page is then lost, and nothing crosses jitarena's frames.
    static void freePage(void*, void* page, size_t size)
    {
        try
        {
            TMemKindTraits::freeHostMemory(page, size);
        }
        catch (...)
        {
        }
    }

    jitarena* m_arena;
    jitarena* m_recordArena;
#if MEASURE_MEM_ALLOC
    MemStats<TMemKindTraits> m_stats;
    MemStatsAllocator        m_statsAllocators[TMemKindTraits::Count];
#endif
};

// The interpreter's arena (jitshared's ArenaAllocatorWithDestructorT): the same, destroyed
// when it goes out of scope, for code without SEH.
template <typename TMemKindTraits>
class ArenaAllocatorWithDestructorT : public ArenaAllocatorT<TMemKindTraits>
{
public:
    ~ArenaAllocatorWithDestructorT()
    {
        this->destroy();
    }
};

// An allocator of one kind, passed by value (the .NET JIT's CompAllocator, from
// compiler->getAllocator(CMK_...)). It holds the jitarena itself, not the ArenaAllocatorT
// object, with its kind's slot in the same word (a jitarena_kind_handle): one word, as the .NET
// JIT's Release CompAllocator, so that it travels in a register by value on every calling
// convention, and an allocation through one held in memory (a container's) loads the arena's
// bump pointers through one pointer, as the .NET JIT's own does.
template <typename TMemKindTraits>
class CompAllocatorT
{
    using MemKind = typename TMemKindTraits::MemKind;
    using Arena   = ArenaAllocatorT<TMemKindTraits>;

    // The jitarena and the kind's counter slot, in one word (the .NET JIT's Release
    // CompAllocator holds only its arena): counting is then one addition, with no clamp.
    jitarena_kind_handle m_handle;
#if MEASURE_MEM_ALLOC
    // The Debug statistics of the arena object it was made from (nullptr when made from a
    // jitarena alone, as the record's allocators are: counted in neither).
    typename Arena::MemStatsAllocator* m_statsAllocator;
#endif

public:
    // From the Compiler's jitarena (Compiler::getAllocator).
    CompAllocatorT(jitarena* arena, MemKind kind)
        : m_handle(jitarena_kind_handle_of(arena, static_cast<uint32_t>(kind)))
#if MEASURE_MEM_ALLOC
        , m_statsAllocator(nullptr)
#endif
    {
    }

    // From an arena object, for the JIT's other callers. It must be initialized: a
    // CompAllocator holds the jitarena it has then.
    CompAllocatorT(Arena* arena, MemKind kind)
        : CompAllocatorT(arena->handle(), kind)
    {
#if MEASURE_MEM_ALLOC
        m_statsAllocator = arena->getMemStatsAllocator(kind);
#endif
    }

    // A block for `count` objects of type T.
    template <typename T>
    T* allocate(size_t count)
    {
        if (count > SIZE_MAX / sizeof(T))
        {
            TMemKindTraits::outOfMemory();
        }
#if MEASURE_MEM_ALLOC
        if (m_statsAllocator != nullptr)
        {
            return static_cast<T*>(m_statsAllocator->allocateMemory(count * sizeof(T)));
        }
#endif
        return static_cast<T*>(Arena::allocateMemory(m_handle, count * sizeof(T)));
    }

    // Blocks are freed with the arena.
    void deallocate(void*)
    {
    }
};

#endif // MINIJIT_ARENAALLOCATOR_H
