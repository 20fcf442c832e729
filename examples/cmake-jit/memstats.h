// memstats.h: the part of the .NET JIT's Debug memory statistics (src/coreclr/jitshared/memstats.h,
// MEASURE_MEM_ALLOC) that arenaallocator.h uses, for the example's MEASURE_MEM_ALLOC build
// (minijit_memstats): a count of the requests per kind, beside jitarena's own counts.
#ifndef MINIJIT_MEMSTATS_H
#define MINIJIT_MEMSTATS_H

#include <cstddef>
#include <cstdint>

template <typename TMemKindTraits>
struct MemStats
{
    using MemKind = typename TMemKindTraits::MemKind;

    unsigned allocCnt = 0;                             // requests
    uint64_t allocSz  = 0;                             // their bytes, before rounding
    uint64_t allocSzByKind[TMemKindTraits::Count] = {}; // the same, per kind
    uint64_t nraTotalSizeAlloc = 0;                    // the arena's pages' bytes (finishMemStats)
    uint64_t nraTotalSizeUsed  = 0;                    // the arena's bytes used (finishMemStats)

    void AddAlloc(size_t sz, MemKind kind)
    {
        allocCnt += 1;
        allocSz += sz;
        allocSzByKind[static_cast<int>(kind)] += sz;
    }
};

#endif // MINIJIT_MEMSTATS_H
