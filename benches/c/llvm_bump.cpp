// LLVM's BumpPtrAllocator on the same batch of requests as the jitarena benchmarks (built by
// build.rs only with `--features llvm-bench`, against the installed LLVM's headers).
#include <cstddef>
#include <cstdint>

#include "llvm/Support/Allocator.h"

extern "C" {
#include "jitarena.h"

size_t jitarena_llvm_bump_batch(const jitarena_event* events, size_t count);
}

size_t jitarena_llvm_bump_batch(const jitarena_event* events, size_t count) {
    static llvm::BumpPtrAllocator allocator;
    size_t touched = 0;
    for (size_t i = 0; i < count; i++) {
        if (events[i].op != JITARENA_EVENT_ALLOC) continue;
        auto* p = static_cast<unsigned char*>(allocator.Allocate(events[i].size, llvm::Align(8)));
        *p = static_cast<unsigned char>(i);
        touched++;
    }
    allocator.Reset();
    return touched;
}
