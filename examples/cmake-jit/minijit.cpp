// minijit: compiles one arithmetic function at a time, the way the .NET JIT compiles a method,
// and counts its memory with jitarena the way docs/adopting.md has the .NET JIT do it:
//
// - a traits-based ArenaAllocatorT (arenaallocator.h) whose pages come from the host's slabs;
// - CompAllocators that hold the jitarena and keep their kind's counter slot in Release builds;
// - phases through BeginPhase and EndPhase, children ended inside whichever phase runs them;
// - one record per method context, written by compCompileFinish with the context number the
//   host gives and the tier of the attempt that produced the code, its name built outside the
//   arena it measures;
// - an optimized attempt that fails on an implementation limit is retried once in MinOpts, in
//   the same arena, so that the context's one record holds the bytes of both attempts;
// - an exception of the host's that passes through the JIT gives the arena back on its way;
// - the stats log opened at start-up from the JIT's own configuration, closed at shutdown.
//
// The compiler: parse into a tree, lower into basic blocks of three-address code, simplify,
// allocate registers by linear scan, emit bytecode, and check the bytecode by running it.
//
// Built three times (CMakeLists.txt): the baseline, a diff whose live intervals are heavier
// (MINIJIT_HEAVY), a known regression for memdiff to find, and the baseline with the .NET JIT's
// Debug memory statistics (MEASURE_MEM_ALLOC); each names its build (MINIJIT_BUILD_ID) in the
// stats log.
#include "minijit.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "arenaallocator.h"

#ifndef MINIJIT_HEAVY
#define MINIJIT_HEAVY 0
#endif
#ifndef MINIJIT_BUILD_ID
#error "MINIJIT_BUILD_ID names this build in the stats log (CMakeLists.txt defines it)"
#endif

namespace {

// ---- Memory kinds (the .NET JIT's compmemkind.h, which jit.h includes with alloc.h) ---------

#define MINIJIT_MEM_KINDS(K)                                                                         \
    K(Unknown) K(Token) K(ASTNode) K(Inlining) K(IR) K(DebugInfo) K(Simplify) K(SSA) K(Liveness)    \
    K(Generic) K(LSRA_Interval) K(LSRA) K(Bytecode) K(DebugOnly)

enum CompMemKind : uint32_t
{
#define K(kind) CMK_##kind,
    MINIJIT_MEM_KINDS(K)
#undef K
    CMK_Count
};

// ---- The host (the .NET JIT's g_jitHost) and the arena's traits (jit/alloc.h) --------------

const minijit_host* g_jitHost        = nullptr;
bool                g_jitInitialized = false;
bool                g_logOpen        = false;
// Whether this JIT's records go to a log: its JitArenaLog option, or JITARENA_LOG, which the
// library opens by itself at the first record. Records then carry their context and name.
bool g_recordsWanted = false;
// The JIT's configuration (the .NET JIT's JitConfig), read from the host at start-up.
struct JitConfigValues
{
    // 0: no SSA and no value numbering, liveness alone (an OPT_CONFIG knob of the .NET JIT's
    // Checked builds), which runs outside every phase.
    int JitDoSsa = 1;
    // Non-zero: the arena's pages come from the C library, not the host (the .NET JIT's Debug
    // JitDirectAlloc, for native memory tools), each of jitarena's smallest page size.
    int JitDirectAlloc = 0;
} JitConfig;
// Records that could not be written (a full disk, say): the compiles go on, shutdown says so.
std::atomic<unsigned> g_recordFailures{0};
std::string           g_firstRecordFailure;

thread_local std::string last_error;

// The traits live in alloc.h, which jit.h includes before compiler.h declares `enum Phases`:
// PHASE_NUMBER_OF is not visible here, so the phase count and names are only declared, and
// defined where the phases are (alloc.cpp or compiler.cpp, after compiler.h).
struct JitMemKindTraits
{
    using MemKind              = CompMemKind;
    static constexpr int Count = CMK_Count;
    static const char* const Names[CMK_Count];
    // The phases the arena counts bytes by, and which build this is (in the stats log).
    static const uint32_t           PhaseCount;
    static const char* const* const PhaseNames;
    static constexpr const char* BuildId = MINIJIT_BUILD_ID;

    // Whether pages bypass the host (the .NET JIT's traits: JitDirectAlloc, in Debug builds).
    static bool bypassHostAllocator()
    {
        return JitConfig.JitDirectAlloc != 0;
    }

    // The host's slabs, as the .NET JIT's traits call g_jitHost->allocateSlab; bypassing the
    // host, the C library's memory, and NOMEM() when there is none (the page callback catches
    // it: arenaallocator.h).
    static void* allocateHostMemory(size_t size, size_t* pActualSize)
    {
        if (bypassHostAllocator())
        {
            *pActualSize = size;
            void* page   = std::malloc(size);
            if (page == nullptr)
            {
                outOfMemory();
            }
            return page;
        }
        return g_jitHost->allocate_slab(g_jitHost->self, size, pActualSize);
    }

    static void freeHostMemory(void* block, size_t size)
    {
        if (bypassHostAllocator())
        {
            std::free(block);
            return;
        }
        g_jitHost->free_slab(g_jitHost->self, block, size);
    }

    // NOMEM(): unwinds the compile, which fails with CORJIT_OUTOFMEM (not retried).
    [[noreturn]] static void outOfMemory()
    {
        throw std::bad_alloc();
    }
};

const char* const JitMemKindTraits::Names[CMK_Count] = {
#define K(kind) #kind,
    MINIJIT_MEM_KINDS(K)
#undef K
};

// ---- Phases (the .NET JIT's compphases.h, declared in compiler.h) ---------------------------
//
// A subset of the JIT's phases, in its order, with its display names and its nesting. Children
// are never begun, only ended with EndPhase(child) at the end of each child's work, inside
// whichever phase runs them: SSA's inside "Build SSA representation" (ssabuilder.cpp), LSRA's
// inside "Linear scan register alloc" (lsra.cpp), and liveness's inside whichever phase runs a
// liveness pass (liveness.cpp): Build SSA, "Local var liveness" (their parent, which
// compCompile runs after Lowering as the final pass), or none. "Lowering nodeinfo" is a leaf,
// as in dotnet/runtime's compphases.h.
#define MINIJIT_PHASES(P)                                                                            \
    P(PHASE_PRE_IMPORT, "Pre-import", -1)                                                            \
    P(PHASE_IMPORTATION, "Importation", -1)                                                          \
    P(PHASE_POST_IMPORT, "Post-import", -1)                                                          \
    P(PHASE_MORPH_INIT, "Morph - Init", -1)                                                          \
    P(PHASE_MORPH_INLINE, "Morph - Inlining", -1)                                                    \
    P(PHASE_MORPH_GLOBAL, "Morph - Global", -1)                                                      \
    P(PHASE_BUILD_SSA, "Build SSA representation", -1)                                               \
    P(PHASE_BUILD_SSA_LIVENESS, "SSA: liveness", PHASE_BUILD_SSA)                                    \
    P(PHASE_BUILD_SSA_DF, "SSA: DF", PHASE_BUILD_SSA)                                                \
    P(PHASE_BUILD_SSA_INSERT_PHIS, "SSA: insert phis", PHASE_BUILD_SSA)                              \
    P(PHASE_BUILD_SSA_RENAME, "SSA: rename", PHASE_BUILD_SSA)                                        \
    P(PHASE_VALUE_NUMBER, "Do value numbering", -1)                                                  \
    P(PHASE_LCLVARLIVENESS, "Local var liveness", -1)                                                \
    P(PHASE_LCLVARLIVENESS_INIT, "Local var liveness init", PHASE_LCLVARLIVENESS)                    \
    P(PHASE_LCLVARLIVENESS_PERBLOCK, "Per block local var liveness", PHASE_LCLVARLIVENESS)           \
    P(PHASE_LCLVARLIVENESS_INTERBLOCK, "Global local var liveness", PHASE_LCLVARLIVENESS)            \
    P(PHASE_LOWERING, "Lowering nodeinfo", -1)                                                       \
    P(PHASE_LINEAR_SCAN, "Linear scan register alloc", -1)                                           \
    P(PHASE_LINEAR_SCAN_BUILD, "LSRA build intervals", PHASE_LINEAR_SCAN)                            \
    P(PHASE_LINEAR_SCAN_ALLOC, "LSRA allocate", PHASE_LINEAR_SCAN)                                   \
    P(PHASE_LINEAR_SCAN_RESOLVE, "LSRA resolve", PHASE_LINEAR_SCAN)                                  \
    P(PHASE_GENERATE_CODE, "Generate code", -1)                                                      \
    P(PHASE_EMIT_CODE, "Emit code", -1)                                                              \
    P(PHASE_POST_EMIT, "Post-Emit", -1)

enum Phases : uint32_t
{
#define P(phase, name, parent) phase,
    MINIJIT_PHASES(P)
#undef P
    PHASE_NUMBER_OF
};

// The JIT's PhaseNames (compiler.cpp), its display names as they are.
const char* const PhaseNames[PHASE_NUMBER_OF] = {
#define P(phase, name, parent) name,
    MINIJIT_PHASES(P)
#undef P
};

// Defined where compiler.h is visible (in the .NET JIT: alloc.cpp or compiler.cpp).
const uint32_t           JitMemKindTraits::PhaseCount = PHASE_NUMBER_OF;
const char* const* const JitMemKindTraits::PhaseNames = ::PhaseNames;

using ArenaAllocator = ArenaAllocatorT<JitMemKindTraits>;
using CompAllocator  = CompAllocatorT<JitMemKindTraits>;
#if !MEASURE_MEM_ALLOC
static_assert(sizeof(CompAllocator) == sizeof(void*),
              "a CompAllocator is its jitarena and its kind's slot in one word, as the .NET JIT's Release one");
#endif

// How a compile ends (the .NET JIT's CorJitResult), and the exception that ends it early.
enum CorJitResult
{
    CORJIT_OK,
    CORJIT_BADCODE,
    CORJIT_OUTOFMEM,
    CORJIT_INTERNALERROR,
    CORJIT_SKIPPED,
    CORJIT_RECOVERABLEERROR,
    CORJIT_IMPLLIMITATION,
    CORJIT_R2R_UNSUPPORTED
};

// The failures the .NET JIT retries once in MinOpts (jitNativeCode), for a method, not an
// inlinee: today's sources also retry CORJIT_R2R_UNSUPPORTED.
static bool retriedInMinOpts(CorJitResult result)
{
    return result == CORJIT_INTERNALERROR || result == CORJIT_RECOVERABLEERROR ||
           result == CORJIT_IMPLLIMITATION || result == CORJIT_R2R_UNSUPPORTED;
}

// A compile that failed: CORJIT_SKIPPED is no failure (a cross-targeting altjit returns it after
// compCompileFinish wrote its record).
static bool isFailure(CorJitResult result)
{
    return result != CORJIT_OK && result != CORJIT_SKIPPED;
}

// The flags of one compile (the .NET JIT's JitFlags): the runtime's request (its tier), and
// JIT_FLAG_MIN_OPT, which jitNativeCode sets for its MinOpts retry, leaving the tier flags set.
class JitFlags
{
public:
    enum Flag : uint32_t
    {
        JIT_FLAG_TIER0   = MINIJIT_FLAG_TIER0,
        JIT_FLAG_TIER1   = MINIJIT_FLAG_TIER1,
        JIT_FLAG_MIN_OPT = 1u << 8,
    };

    explicit JitFlags(uint32_t flags)
        : m_flags(flags)
    {
    }
    bool IsSet(Flag flag) const
    {
        return (m_flags & flag) != 0;
    }
    void Set(Flag flag)
    {
        m_flags |= flag;
    }

private:
    uint32_t m_flags;
};

struct JitError
{
    CorJitResult result;
    std::string  message;
};

// The source is wrong (not retried: MinOpts would fail the same way).
[[noreturn]] void badCode(const std::string& what)
{
    throw JitError{CORJIT_BADCODE, what};
}

// What the host throws when it has no answer to a query (SuperPMI's missing data). It is not a
// JitError: the JIT's traps let it pass, as the .NET JIT's __JITfilter lets every exception but
// its own, and the runtime (here, minijit_compile) catches it.
struct EEMissingData
{
    std::string query;
};

// The compiler is wrong (NO_WAY): retried in MinOpts, which runs fewer passes.
[[noreturn]] void noWay(const std::string& what)
{
    throw JitError{CORJIT_INTERNALERROR, what};
}

// A limit of the optimizer (IMPL_LIMITATION): retried in MinOpts.
[[noreturn]] void implLimitation(const std::string& what)
{
    throw JitError{CORJIT_IMPLLIMITATION, what};
}

// The bytes an allocation of `size` takes in the arena (rounded up to the pointer size, as the
// JIT's allocateMemory rounds): what the phases count.
constexpr uint64_t roundUp(size_t size)
{
    return (size + sizeof(void*) - 1) & ~uint64_t(sizeof(void*) - 1);
}

// ---- The compiler object ------------------------------------------------------------------

class Compiler;
struct Node;

// An inline attempt (the .NET JIT's InlineInfo): the inliner, and the callee to import.
struct InlineInfo
{
    Compiler*   InlinerCompiler;
    const char* source;
    Node*       result; // the inlinee's imported tree, set by its compile
};

class Compiler
{
public:
    // The .NET JIT's Compiler constructor (compInit in older copies): the arena in use (an
    // inlinee's is its inliner's), its jitarena, and the optimization level.
    Compiler(ArenaAllocator* arena, const char* source, JitFlags* jitFlags, InlineInfo* inlineInfo,
             uint64_t* noPhaseBytes)
        : compArenaAllocator(arena)
        , compArena(arena->handle())
        , compSource(source)
        , impInlineInfo(inlineInfo)
        , compNoPhaseBytes(noPhaseBytes)
    {
        opts.jitFlags = jitFlags;
        compSetOptimizationLevel();
    }

    // An allocator of one kind, as the .NET JIT's Compiler::getAllocator(CMK_...), from the
    // jitarena the Compiler keeps: one load reaches it, as one load reaches the .NET JIT's own
    // bump pointers through compArenaAllocator. The Debug statistics (MEASURE_MEM_ALLOC) need
    // the arena object, whose MemStats they add to.
    CompAllocator getAllocator(CompMemKind kind)
    {
#if MEASURE_MEM_ALLOC
        return CompAllocator(compArenaAllocator, kind);
#else
        return CompAllocator(compArena, kind);
#endif
    }

    // An inlinee is compiled by its own Compiler, in the inliner's arena.
    bool compIsForInlining() const
    {
        return impInlineInfo != nullptr;
    }

    ArenaAllocator* compGetArenaAllocator() const
    {
        return compArenaAllocator;
    }

    // Phase::Run calls BeginPhase before a phase and EndPhase after it. An inlinee's phases run
    // inside its inliner's "Morph - Inlining", in the inliner's arena: they do not reach the
    // arena, so the inlinee's bytes stay in that phase. jitarena's lines come last, after the
    // function's own store of the phase.
    void BeginPhase(Phases phase)
    {
        mostRecentlyActivePhase = phase;
        if (!compIsForInlining())
        {
            jitarena_phase_begin(compArena, phase);
        }
    }

    // Ends the running phase, or a child phase (never begun) inside whichever phase runs. (The
    // .NET JIT's calls its JitTimer's EndPhase first, when a time log is asked for.)
    void EndPhase(Phases phase)
    {
        mostRecentlyActivePhase = phase;
        if (!compIsForInlining())
        {
            jitarena_phase_end(compArena, phase);
        }
    }

    // The tier of this compile, as the .NET JIT's compGetTieringName: the tier flags first, then
    // the optimization level. A Tier1 method retried in MinOpts still reads "Tier1" here.
    const char* compGetTieringName(bool /* wantShortName */) const
    {
        if (opts.jitFlags->IsSet(JitFlags::JIT_FLAG_TIER0))
        {
            return "Tier0";
        }
        if (opts.jitFlags->IsSet(JitFlags::JIT_FLAG_TIER1))
        {
            return "Tier1";
        }
        return opts.MinOpts() ? "MinOpts" : "FullOpts";
    }

    // Runs every phase (an inlinee only its first ones); compCompileFinish writes the record.
    void compCompile(minijit_result* out);

    // The method's name for its record (the .NET JIT's eeGetMethodFullName): printed into the
    // caller's buffer, and into `alloc` when it does not fit.
    const char* eeGetMethodFullName(char* buffer, size_t bufferSize, CompAllocator alloc);

    struct Options
    {
        JitFlags* jitFlags = nullptr;
        bool      minOpts  = false;
        bool      MinOpts() const
        {
            return minOpts;
        }
    } opts;

    // The Compiler object of this method's inline attempts, made once in its arena.
    Compiler* InlineeCompiler = nullptr;

private:
    template <typename Action>
    void DoPhase(Phases phase, Action action)
    {
        BeginPhase(phase);
        action();
        EndPhase(phase);
    }

    void compCompileFinish();

    // MinOpts when asked (the retry's JIT_FLAG_MIN_OPT) or at tier 0; an inlinee as its
    // inliner (the .NET JIT's compSetOptimizationLevel).
    void compSetOptimizationLevel()
    {
        opts.minOpts = compIsForInlining() ? impInlineInfo->InlinerCompiler->opts.MinOpts()
                                           : opts.jitFlags->IsSet(JitFlags::JIT_FLAG_MIN_OPT) ||
                                                 opts.jitFlags->IsSet(JitFlags::JIT_FLAG_TIER0);
    }

    ArenaAllocator* compArenaAllocator;
    // compArenaAllocator's jitarena, for the allocators and the phase calls.
    jitarena*       compArena;
    Phases          mostRecentlyActivePhase = PHASE_PRE_IMPORT;
    const char*     compSource;
    InlineInfo*     impInlineInfo;
    // What this method context allocates outside every phase (its Compiler objects and a
    // scope table), counted here as the arena counts phases, for the host.
    uint64_t* compNoPhaseBytes;
};

// A standard container's allocator over a CompAllocator (the .NET JIT's jitstd::allocator).
template <typename T>
class StdAllocator
{
public:
    using value_type = T;

    explicit StdAllocator(CompAllocator alloc)
        : m_alloc(alloc)
    {
    }
    template <typename U>
    StdAllocator(const StdAllocator<U>& other)
        : m_alloc(other.compAllocator())
    {
    }

    T* allocate(size_t count)
    {
        return m_alloc.allocate<T>(count);
    }
    void deallocate(T*, size_t)
    {
    }
    CompAllocator compAllocator() const
    {
        return m_alloc;
    }

private:
    CompAllocator m_alloc;
};

// Every block can be "freed" by any of them: freeing is a no-op, the arena frees all at once.
template <typename T, typename U>
bool operator==(const StdAllocator<T>&, const StdAllocator<U>&)
{
    return true;
}
template <typename T, typename U>
bool operator!=(const StdAllocator<T>&, const StdAllocator<U>&)
{
    return false;
}

template <typename T>
using Vec = std::vector<T, StdAllocator<T>>;
template <typename K, typename V>
using Map = std::unordered_map<K, V, std::hash<K>, std::equal_to<K>, StdAllocator<std::pair<const K, V>>>;

}  // namespace

// `new (comp, CMK_ASTNode) Node{...}`, as in the .NET JIT (a placement form must be global).
inline void* operator new(size_t size, Compiler* compiler, CompMemKind kind)
{
    return compiler->getAllocator(kind).allocate<char>(size);
}
// Called only if a constructor throws: the block goes with the arena.
inline void operator delete(void*, Compiler*, CompMemKind)
{
}

namespace {

// ---- Parsing -------------------------------------------------------------------------------

enum class Tok { Num, Ident, Sym, End };

struct Token {
    Tok kind;
    int64_t value;
    const char* text;
    size_t len;
    bool is(const char* s) const { return (kind == Tok::Sym || kind == Tok::Ident) && len == std::strlen(s) && std::strncmp(text, s, len) == 0; }
};

enum class NodeKind { Num, Var, Neg, Bin, If, Let, Call };

struct Node {
    NodeKind kind;
    char op;  // + - * / % for Bin; < = > for comparisons in If
    int64_t value;
    int slot;  // variable slot; a Call's callee
    Node* a;
    Node* b;
    Node* c;
    Node* d;
};

// The methods a function may call (its callees, as `sq(x + 1)`): each is inlined, imported by
// its own Compiler object in the caller's arena, as the .NET JIT imports an inline candidate.
struct Callee {
    const char* name;
    int params;
    const char* source;
};
const Callee g_callees[] = {
    {"sq", 1, "sq(x) = x * x"},
    {"cube", 1, "cube(x) = x * x * x"},
    {"avg", 2, "avg(a, b) = (a + b) / 2"},
    {"mad", 3, "mad(a, b, c) = a * b + c"},
    // One the replay host's collection has no canInline answer for (programs-missing.txt).
    {"twice", 1, "twice(x) = x + x"},
};

class Parser {
public:
    Parser(Compiler* comp, const char* src)
        : comp_(comp), toks_(StdAllocator<Token>(comp->getAllocator(CMK_Token))), scopes_(StdAllocator<std::string>(comp->getAllocator(CMK_ASTNode))) {
        lex(src);
    }

    // name(params) = expr; the name is the record's (Compiler::eeGetMethodFullName).
    Node* function(int& params) {
        if (peek().kind != Tok::Ident) fail("expected a function name");
        next();
        expect("(");
        while (!peek().is(")")) {
            if (peek().kind != Tok::Ident) fail("expected a parameter name");
            scopes_.emplace_back(peek().text, peek().len);
            next();
            if (!peek().is(")")) expect(",");
        }
        next();
        params = static_cast<int>(scopes_.size());
        expect("=");
        Node* body = expr();
        if (peek().is(";")) next();
        if (peek().kind != Tok::End) fail("unexpected text after the function body");
        return body;
    }

    int slots() const { return max_slots_; }

private:
    void lex(const char* s) {
        while (*s) {
            if (std::isspace(static_cast<unsigned char>(*s))) {
                s++;
            } else if (std::isdigit(static_cast<unsigned char>(*s))) {
                int64_t v = 0;
                const char* start = s;
                while (std::isdigit(static_cast<unsigned char>(*s))) v = v * 10 + (*s++ - '0');
                toks_.push_back({Tok::Num, v, start, static_cast<size_t>(s - start)});
            } else if (std::isalpha(static_cast<unsigned char>(*s)) || *s == '_') {
                const char* start = s;
                while (std::isalnum(static_cast<unsigned char>(*s)) || *s == '_') s++;
                toks_.push_back({Tok::Ident, 0, start, static_cast<size_t>(s - start)});
            } else if (s[0] == '=' && s[1] == '=') {
                toks_.push_back({Tok::Sym, 0, s, 2});
                s += 2;
            } else if (std::strchr("+-*/%()<>=,;", *s)) {
                toks_.push_back({Tok::Sym, 0, s, 1});
                s++;
            } else {
                fail(std::string("unexpected character '") + *s + "'");
            }
        }
        toks_.push_back({Tok::End, 0, s, 0});
    }

    const Token& peek() const { return toks_[pos_]; }
    void next() {
        if (toks_[pos_].kind != Tok::End) pos_++;
    }
    void expect(const char* s) {
        if (!peek().is(s)) fail(std::string("expected '") + s + "'");
        next();
    }
    [[noreturn]] void fail(const std::string& what) { badCode(what); }

    Node* make(NodeKind k, char op = 0, Node* a = nullptr, Node* b = nullptr) {
        return new (comp_, CMK_ASTNode) Node{k, op, 0, -1, a, b, nullptr, nullptr};
    }

    Node* expr() {
        if (peek().is("if")) {
            next();
            Node* l = sum();
            char op = peek().is("<") ? '<' : peek().is(">") ? '>' : peek().is("==") ? '=' : 0;
            if (op == 0) fail("expected a comparison (<, >, ==) after 'if'");
            next();
            Node* r = sum();
            expect("then");
            Node* t = expr();
            expect("else");
            Node* e = expr();
            Node* n = make(NodeKind::If, op, l, r);
            n->c = t;
            n->d = e;
            return n;
        }
        if (peek().is("let")) {
            next();
            if (peek().kind != Tok::Ident) fail("expected a name after 'let'");
            std::string name(peek().text, peek().len);
            next();
            expect("=");
            Node* value = expr();
            expect("in");
            scopes_.push_back(name);
            if (static_cast<int>(scopes_.size()) > max_slots_) max_slots_ = static_cast<int>(scopes_.size());
            Node* body = expr();
            scopes_.pop_back();
            Node* n = make(NodeKind::Let, 0, value, body);
            n->slot = static_cast<int>(scopes_.size());
            return n;
        }
        return sum();
    }
    Node* sum() {
        Node* l = term();
        while (peek().is("+") || peek().is("-")) {
            char op = *peek().text;
            next();
            l = make(NodeKind::Bin, op, l, term());
        }
        return l;
    }
    Node* term() {
        Node* l = unary();
        while (peek().is("*") || peek().is("/") || peek().is("%")) {
            char op = *peek().text;
            next();
            l = make(NodeKind::Bin, op, l, unary());
        }
        return l;
    }
    Node* unary() {
        if (peek().is("-")) {
            next();
            return make(NodeKind::Neg, 0, unary());
        }
        return atom();
    }
    Node* atom() {
        const Token& t = peek();
        if (t.kind == Tok::Num) {
            Node* n = make(NodeKind::Num);
            n->value = t.value;
            next();
            return n;
        }
        if (t.kind == Tok::Ident && toks_[pos_ + 1].is("(")) return call();
        if (t.kind == Tok::Ident && !t.is("if") && !t.is("let")) {
            std::string name(t.text, t.len);
            for (int i = static_cast<int>(scopes_.size()) - 1; i >= 0; i--) {
                if (scopes_[i] == name) {
                    Node* n = make(NodeKind::Var);
                    n->slot = i;
                    next();
                    return n;
                }
            }
            fail("unknown name '" + name + "'");
        }
        if (t.is("(")) {
            next();
            Node* e = expr();
            expect(")");
            return e;
        }
        fail("expected a number, a name or '('");
    }

    // callee(args): a call to inline.
    Node* call() {
        std::string name(peek().text, peek().len);
        int callee = -1;
        for (size_t i = 0; i < sizeof g_callees / sizeof g_callees[0]; i++)
            if (name == g_callees[i].name) callee = static_cast<int>(i);
        if (callee < 0) fail("unknown function '" + name + "'");
        next();
        expect("(");
        Node* args[3] = {nullptr, nullptr, nullptr};
        int count = 0;
        while (!peek().is(")")) {
            if (count == 3) fail("too many arguments to '" + name + "'");
            args[count++] = expr();
            if (!peek().is(")")) expect(",");
        }
        next();
        if (count != g_callees[callee].params) fail("'" + name + "' takes " + std::to_string(g_callees[callee].params) + " arguments");
        Node* n = make(NodeKind::Call, 0, args[0], args[1]);
        n->c = args[2];
        n->slot = callee;
        return n;
    }

    Compiler* comp_;
    Vec<Token> toks_;
    size_t pos_ = 0;
    Vec<std::string> scopes_;
    int max_slots_ = 0;
};

// Wrapping arithmetic with total division (x / 0 = 0, x % 0 = 0): every function is defined
// on every input, so the bytecode can be checked against the tree.
int64_t arith(char op, int64_t a, int64_t b) {
    uint64_t x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);
    switch (op) {
        case '+': return static_cast<int64_t>(x + y);
        case '-': return static_cast<int64_t>(x - y);
        case '*': return static_cast<int64_t>(x * y);
        case '/': return (b == 0 || (a == INT64_MIN && b == -1)) ? 0 : a / b;
        case '%': return (b == 0 || (a == INT64_MIN && b == -1)) ? 0 : a % b;
        case '<': return a < b;
        case '>': return a > b;
        default: return a == b;  // '='
    }
}

int64_t eval(const Node* n, int64_t* env) {
    switch (n->kind) {
        case NodeKind::Num: return n->value;
        case NodeKind::Var: return env[n->slot];
        case NodeKind::Neg: return static_cast<int64_t>(0 - static_cast<uint64_t>(eval(n->a, env)));
        case NodeKind::Bin: return arith(n->op, eval(n->a, env), eval(n->b, env));
        case NodeKind::If: return arith(n->op, eval(n->a, env), eval(n->b, env)) ? eval(n->c, env) : eval(n->d, env);
        case NodeKind::Let: env[n->slot] = eval(n->a, env); return eval(n->b, env);
        case NodeKind::Call: noWay("a call that was not inlined");
    }
    return 0;
}

// ---- Inlining (the .NET JIT's fgInline, in "Morph - Inlining") ------------------------------

CorJitResult jitNativeCode(const char* source, JitFlags* compileFlags, minijit_result* out, InlineInfo* inlineInfo);

Node* cloneTree(Compiler* comp, const Node* n) {
    if (n == nullptr) return nullptr;
    Node* c = new (comp, CMK_Inlining) Node(*n);
    c->a = cloneTree(comp, n->a);
    c->b = cloneTree(comp, n->b);
    c->c = cloneTree(comp, n->c);
    c->d = cloneTree(comp, n->d);
    return c;
}

// The inlinee's parameters (its only names: a callee has no `let`) become the arguments.
Node* substituteArgs(Compiler* comp, Node* n, Node* const* args) {
    if (n == nullptr) return nullptr;
    if (n->kind == NodeKind::Var) return cloneTree(comp, args[n->slot]);
    n->a = substituteArgs(comp, n->a, args);
    n->b = substituteArgs(comp, n->b, args);
    n->c = substituteArgs(comp, n->c, args);
    n->d = substituteArgs(comp, n->d, args);
    return n;
}

// The JIT-EE query of inlining (the .NET JIT's ICorJitInfo::canInline), through the host. A host
// with no answer fails the query with its own exception, which passes through the JIT.
bool eeCanInline(const char* callee) {
    int answer = g_jitHost->can_inline(g_jitHost->self, callee);
    if (answer < 0) throw EEMissingData{std::string("canInline(") + callee + ")"};
    return answer != 0;
}

// Every call is an inline attempt: the callee is compiled by jitNativeCode with an InlineInfo,
// by the inliner's InlineeCompiler, in the inliner's arena (it takes no arena of its own), and
// runs only its first phases (Pre-import, Importation, Post-import). The example has no call
// instruction, so MinOpts inlines too (the .NET JIT's MinOpts leaves calls as they are), and a
// call the host does not let it inline is an implementation limit.
Node* fgInline(Compiler* comp, Node* n) {
    if (n == nullptr) return nullptr;
    n->a = fgInline(comp, n->a);
    n->b = fgInline(comp, n->b);
    n->c = fgInline(comp, n->c);
    n->d = fgInline(comp, n->d);
    if (n->kind != NodeKind::Call) return n;
    if (!eeCanInline(g_callees[n->slot].name)) implLimitation(std::string("cannot inline ") + g_callees[n->slot].name);
    InlineInfo inlineInfo{comp, g_callees[n->slot].source, nullptr};
    CorJitResult result = jitNativeCode(inlineInfo.source, comp->opts.jitFlags, nullptr, &inlineInfo);
    if (result == CORJIT_OUTOFMEM) JitMemKindTraits::outOfMemory();
    if (result != CORJIT_OK) noWay(std::string("inlinee ") + g_callees[n->slot].name + " failed: " + last_error);
    Node* args[3] = {n->a, n->b, n->c};
    return substituteArgs(comp, inlineInfo.result, args);
}

// ---- Three-address code in basic blocks ----------------------------------------------------

enum class Op : uint8_t { Param, Const, Copy, Neg, Bin, Cmp, Branch, Jump, Ret };

struct Block;

struct Inst {
    Op op;
    char bin;  // operator of Bin and Cmp
    int dst;   // virtual register written, -1 if none
    int a, b;  // virtual registers read, -1 if none
    int64_t imm;
    Block* t;  // Branch: taken if a != 0; Jump: target
    Block* f;  // Branch: otherwise
};

struct Block {
    int id;
    Vec<Inst*> insts;
    bool reachable;
    Block(Compiler* comp, int i) : id(i), insts(StdAllocator<Inst*>(comp->getAllocator(CMK_IR))), reachable(true) {}
};

class Lowering {
public:
    explicit Lowering(Compiler* comp) : blocks(StdAllocator<Block*>(comp->getAllocator(CMK_IR))), comp_(comp) {}

    void function(const Node* body, int params, int slots) {
        Vec<int> vars(static_cast<size_t>(slots > params ? slots : params), -1, StdAllocator<int>(comp_->getAllocator(CMK_IR)));
        cur_ = new_block();
        for (int i = 0; i < params; i++) {
            vars[i] = vreg();
            emit(Inst{Op::Param, 0, vars[i], -1, -1, i, nullptr, nullptr});
        }
        int result = expr(body, vars);
        emit(Inst{Op::Ret, 0, -1, result, -1, 0, nullptr, nullptr});
    }

    Vec<Block*> blocks;
    int vregs = 0;

private:
    Block* new_block() {
        Block* b = new (comp_, CMK_IR) Block(comp_, static_cast<int>(blocks.size()));
        blocks.push_back(b);
        return b;
    }
    int vreg() { return vregs++; }
    void emit(const Inst& i) { cur_->insts.push_back(new (comp_, CMK_IR) Inst(i)); }

    int expr(const Node* n, Vec<int>& vars) {
        switch (n->kind) {
            case NodeKind::Num: {
                int d = vreg();
                emit(Inst{Op::Const, 0, d, -1, -1, n->value, nullptr, nullptr});
                return d;
            }
            case NodeKind::Var: return vars[n->slot];
            case NodeKind::Neg: {
                int a = expr(n->a, vars), d = vreg();
                emit(Inst{Op::Neg, 0, d, a, -1, 0, nullptr, nullptr});
                return d;
            }
            case NodeKind::Bin: {
                int a = expr(n->a, vars), b = expr(n->b, vars), d = vreg();
                emit(Inst{Op::Bin, n->op, d, a, b, 0, nullptr, nullptr});
                return d;
            }
            case NodeKind::Let: {
                vars[n->slot] = expr(n->a, vars);
                return expr(n->b, vars);
            }
            case NodeKind::Call: noWay("a call that was not inlined");
            case NodeKind::If: {
                int a = expr(n->a, vars), b = expr(n->b, vars), c = vreg(), result = vreg();
                emit(Inst{Op::Cmp, n->op, c, a, b, 0, nullptr, nullptr});
                Block* then_b = new_block();
                Block* else_b = new_block();
                Block* join = new_block();
                emit(Inst{Op::Branch, 0, -1, c, -1, 0, then_b, else_b});
                cur_ = then_b;
                int t = expr(n->c, vars);
                emit(Inst{Op::Copy, 0, result, t, -1, 0, nullptr, nullptr});
                emit(Inst{Op::Jump, 0, -1, -1, -1, 0, join, nullptr});
                cur_ = else_b;
                int e = expr(n->d, vars);
                emit(Inst{Op::Copy, 0, result, e, -1, 0, nullptr, nullptr});
                emit(Inst{Op::Jump, 0, -1, -1, -1, 0, join, nullptr});
                cur_ = join;
                return result;
            }
        }
        return -1;
    }

    Compiler* comp_;
    Block* cur_ = nullptr;
};

// ---- Simplification: constant folding, identities, dead code --------------------------------

// The optimizer folds at most this many constants per function: an implementation limit (the
// .NET JIT has its own), past which the optimized attempt fails and the function is compiled
// again in MinOpts, which does not simplify.
constexpr size_t SIMPLIFY_MAX_CONSTANTS = 64;

void simplify(Compiler* comp, Lowering& ir) {
    StdAllocator<int> ints(comp->getAllocator(CMK_Simplify));
    Vec<int> defs(static_cast<size_t>(ir.vregs), 0, ints);
    for (Block* b : ir.blocks)
        for (Inst* i : b->insts)
            if (i->dst >= 0) defs[i->dst]++;
    Map<int, int64_t> constant(16, std::hash<int>(), std::equal_to<int>(), StdAllocator<std::pair<const int, int64_t>>(comp->getAllocator(CMK_Simplify)));
    bool changed = true;
    while (changed) {
        changed = false;
        for (Block* b : ir.blocks) {
            for (Inst* i : b->insts) {
                auto known = [&](int v, int64_t& out) {
                    auto it = constant.find(v);
                    if (it == constant.end()) return false;
                    out = it->second;
                    return true;
                };
                int64_t x, y;
                if ((i->op == Op::Bin || i->op == Op::Cmp) && known(i->a, x) && known(i->b, y)) {
                    *i = Inst{Op::Const, 0, i->dst, -1, -1, arith(i->bin, x, y), nullptr, nullptr};
                    changed = true;
                } else if (i->op == Op::Neg && known(i->a, x)) {
                    *i = Inst{Op::Const, 0, i->dst, -1, -1, static_cast<int64_t>(0 - static_cast<uint64_t>(x)), nullptr, nullptr};
                    changed = true;
                } else if (i->op == Op::Bin && (((i->bin == '+' || i->bin == '-') && known(i->b, y) && y == 0) || ((i->bin == '*' || i->bin == '/') && known(i->b, y) && y == 1))) {
                    *i = Inst{Op::Copy, 0, i->dst, i->a, -1, 0, nullptr, nullptr};
                    changed = true;
                } else if (i->op == Op::Bin && i->bin == '*' && ((known(i->a, x) && x == 0) || (known(i->b, y) && y == 0))) {
                    *i = Inst{Op::Const, 0, i->dst, -1, -1, 0, nullptr, nullptr};
                    changed = true;
                } else if (i->op == Op::Branch && known(i->a, x)) {
                    Block* target = x ? i->t : i->f;
                    *i = Inst{Op::Jump, 0, -1, -1, -1, 0, target, nullptr};
                    changed = true;
                }
                if (i->op == Op::Const && defs[i->dst] == 1 && constant.find(i->dst) == constant.end()) {
                    if (constant.size() == SIMPLIFY_MAX_CONSTANTS) {
                        implLimitation("more than " + std::to_string(SIMPLIFY_MAX_CONSTANTS) + " constants to fold");
                    }
                    constant.emplace(i->dst, i->imm);
                    changed = true;
                }
            }
        }
    }
    // Reachability, then dead instructions (results nobody reads).
    for (Block* b : ir.blocks) b->reachable = false;
    Vec<Block*> work(StdAllocator<Block*>(comp->getAllocator(CMK_Simplify)));
    work.push_back(ir.blocks[0]);
    while (!work.empty()) {
        Block* b = work.back();
        work.pop_back();
        if (b->reachable) continue;
        b->reachable = true;
        for (Inst* i : b->insts) {
            if (i->t) work.push_back(i->t);
            if (i->f) work.push_back(i->f);
        }
    }
    Vec<int> uses(static_cast<size_t>(ir.vregs), 0, ints);
    bool removed = true;
    while (removed) {
        removed = false;
        std::fill(uses.begin(), uses.end(), 0);
        for (Block* b : ir.blocks) {
            if (!b->reachable) continue;
            for (Inst* i : b->insts) {
                if (i->a >= 0) uses[i->a]++;
                if (i->b >= 0) uses[i->b]++;
            }
        }
        for (Block* b : ir.blocks) {
            auto& v = b->insts;
            size_t before = v.size();
            v.erase(std::remove_if(v.begin(), v.end(), [&](Inst* i) { return i->dst >= 0 && i->op != Op::Param && uses[i->dst] == 0; }), v.end());
            removed |= v.size() != before;
        }
    }
}

// ---- Liveness, SSA, lowering: children ended inside whichever phase runs them --------------

// A liveness pass: init, per block, then across blocks (the JIT's Liveness::Run, which each of
// its passes runs). It begins no phase: its children end inside whichever phase runs it ("Build
// SSA representation", "Local var liveness"), or with no phase running, and each takes the
// bytes since the mark before its end.
void liveness(Compiler* comp, Lowering& ir) {
    StdAllocator<uint8_t> live(comp->getAllocator(CMK_Liveness));
    const size_t blocks = ir.blocks.size(), vregs = static_cast<size_t>(ir.vregs);
    Vec<uint8_t> use(blocks * vregs, 0, live), def(blocks * vregs, 0, live);
    comp->EndPhase(PHASE_LCLVARLIVENESS_INIT);
    Vec<int> upwardExposed(blocks, 0, StdAllocator<int>(comp->getAllocator(CMK_Liveness)));
    for (Block* b : ir.blocks) {
        if (!b->reachable) continue;
        for (Inst* i : b->insts) {
            for (int v : {i->a, i->b})
                if (v >= 0 && !def[b->id * vregs + v] && !use[b->id * vregs + v]) {
                    use[b->id * vregs + v] = 1;
                    upwardExposed[b->id]++;
                }
            if (i->dst >= 0) def[b->id * vregs + i->dst] = 1;
        }
    }
    comp->EndPhase(PHASE_LCLVARLIVENESS_PERBLOCK);
    Vec<uint8_t> liveIn(use.begin(), use.end(), live);
    for (bool changed = true; changed;) {
        changed = false;
        for (Block* b : ir.blocks)
            for (Inst* i : b->insts)
                for (Block* s : {i->t, i->f})
                    if (s != nullptr)
                        for (size_t v = 0; v < vregs; v++)
                            if (liveIn[s->id * vregs + v] && !def[b->id * vregs + v] && !liveIn[b->id * vregs + v]) {
                                liveIn[b->id * vregs + v] = 1;
                                changed = true;
                            }
    }
    comp->EndPhase(PHASE_LCLVARLIVENESS_INTERBLOCK);
}

// "Build SSA representation": liveness first, then its four steps, each ending its child phase
// as it finishes, as the JIT's SsaBuilder::Build does; they are never begun.
void build_ssa(Compiler* comp, Lowering& ir) {
    liveness(comp, ir);
    StdAllocator<int> ssa(comp->getAllocator(CMK_SSA));
    // Where each virtual register is defined.
    Vec<int> defBlock(static_cast<size_t>(ir.vregs), -1, ssa);
    for (Block* b : ir.blocks)
        for (Inst* i : b->insts)
            if (i->dst >= 0) defBlock[i->dst] = b->id;
    comp->EndPhase(PHASE_BUILD_SSA_LIVENESS);
    // The successors of each block, from which dominance frontiers follow.
    Vec<int> succs(ssa);
    for (Block* b : ir.blocks)
        for (Inst* i : b->insts) {
            if (i->t) succs.push_back(i->t->id);
            if (i->f) succs.push_back(i->f->id);
        }
    comp->EndPhase(PHASE_BUILD_SSA_DF);
    // A phi for each register defined in more than one block (an `if`'s result).
    Vec<int> phis(ssa);
    Vec<int> seen(static_cast<size_t>(ir.vregs), -1, ssa);
    for (Block* b : ir.blocks)
        for (Inst* i : b->insts)
            if (i->dst >= 0) {
                if (seen[i->dst] >= 0 && seen[i->dst] != b->id) phis.push_back(i->dst);
                seen[i->dst] = b->id;
            }
    comp->EndPhase(PHASE_BUILD_SSA_INSERT_PHIS);
    // One version per definition.
    Vec<int> versions(static_cast<size_t>(ir.vregs), 0, ssa);
    for (Block* b : ir.blocks)
        for (Inst* i : b->insts)
            if (i->dst >= 0) versions[i->dst]++;
    comp->EndPhase(PHASE_BUILD_SSA_RENAME);
}

// "Lowering nodeinfo", a leaf: each instruction's operand count and the constants an arithmetic
// instruction could take as an immediate. The final liveness pass is a phase of its own after
// it ("Local var liveness", compCompile).
void lowering(Compiler* comp, Lowering& ir) {
    StdAllocator<uint8_t> gen(comp->getAllocator(CMK_Generic));
    Vec<uint8_t> srcCount(gen);
    for (Block* b : ir.blocks)
        for (Inst* i : b->insts) srcCount.push_back(static_cast<uint8_t>((i->a >= 0) + (i->b >= 0)));
    Vec<uint8_t> contained(static_cast<size_t>(ir.vregs), 0, gen);
    for (Block* b : ir.blocks)
        for (Inst* i : b->insts)
            if (i->op == Op::Const) contained[i->dst] = 1;
}

// ---- Linear-scan register allocation ------------------------------------------------------

constexpr int REGISTERS = 4;

struct Interval {
    int vreg;
    int start, end;
    int reg;   // physical register, or -1 when spilled
    int slot;  // stack slot when spilled
#if MINIJIT_HEAVY
    // The diff build's deliberate regression: per-interval scratch that nothing needs.
    int64_t scratch[12];
#endif
};

struct Allocation {
    Vec<int> location;  // per vreg: 0..3 a register, 0x80 | n stack slot n, -1 never live
    int spills = 0;
    int registers_used = 0;
    int slots = 0;
    explicit Allocation(Compiler* comp) : location(StdAllocator<int>(comp->getAllocator(CMK_LSRA))) {}
};

void allocate_registers(Compiler* comp, Lowering& ir, Allocation& out) {
    StdAllocator<Interval*> lsra(comp->getAllocator(CMK_LSRA));
    Vec<Interval*> by_vreg(static_cast<size_t>(ir.vregs), nullptr, lsra);
    Vec<Interval*> intervals(lsra);
    int pos = 0;
    auto touch = [&](int v, int at) {
        if (v < 0) return;
        Interval*& iv = by_vreg[v];
        if (!iv) {
            iv = new (comp, CMK_LSRA_Interval) Interval();
            iv->vreg = v;
            iv->start = at;
            iv->end = at;
            iv->reg = -1;
            iv->slot = -1;
            intervals.push_back(iv);
        }
        if (at < iv->start) iv->start = at;
        if (at > iv->end) iv->end = at;
    };
    for (Block* b : ir.blocks) {
        if (!b->reachable) continue;
        for (Inst* i : b->insts) {
            touch(i->a, pos);
            touch(i->b, pos);
            touch(i->dst, pos);
            pos++;
        }
    }
    std::sort(intervals.begin(), intervals.end(), [](const Interval* x, const Interval* y) { return x->start < y->start || (x->start == y->start && x->vreg < y->vreg); });
    // As LinearScan::doLinearScan: each step ends its child phase inside "Linear scan register
    // alloc", which runs on.
    comp->EndPhase(PHASE_LINEAR_SCAN_BUILD);
    out.location.assign(static_cast<size_t>(ir.vregs), -1);
    Vec<Interval*> active(lsra);
    bool used[REGISTERS] = {false, false, false, false};
    bool busy[REGISTERS] = {false, false, false, false};
    for (Interval* iv : intervals) {
        // Expire intervals that ended before this one starts.
        for (size_t k = 0; k < active.size();) {
            if (active[k]->end < iv->start) {
                busy[active[k]->reg] = false;
                active.erase(active.begin() + static_cast<long>(k));
            } else {
                k++;
            }
        }
        int free_reg = -1;
        for (int r = 0; r < REGISTERS && free_reg < 0; r++)
            if (!busy[r]) free_reg = r;
        if (free_reg >= 0) {
            iv->reg = free_reg;
            busy[free_reg] = used[free_reg] = true;
            active.push_back(iv);
            continue;
        }
        // Spill whichever interval ends last.
        Interval* last = iv;
        for (Interval* a : active)
            if (a->end > last->end) last = a;
        if (last != iv) {
            iv->reg = last->reg;
            last->reg = -1;
            active.erase(std::find(active.begin(), active.end(), last));
            active.push_back(iv);
        }
        last->slot = out.slots++;
        out.spills++;
    }
    comp->EndPhase(PHASE_LINEAR_SCAN_ALLOC);
    Vec<int> spilled(lsra);
    for (Interval* iv : intervals) {
        out.location[iv->vreg] = iv->reg >= 0 ? iv->reg : (0x80 | iv->slot);
        if (iv->reg < 0) spilled.push_back(iv->vreg);
    }
    for (bool u : used) out.registers_used += u;
    comp->EndPhase(PHASE_LINEAR_SCAN_RESOLVE);
}

// ---- Bytecode: emit and run -----------------------------------------------------------------

enum Byte : uint8_t { B_Param = 1, B_Const, B_Copy, B_Neg, B_Bin, B_Cmp, B_Branch, B_Jump, B_Ret };

void emit_bytecode(Compiler* comp, Lowering& ir, const Allocation& alloc, Vec<uint8_t>& code) {
    auto loc = [&](int v) { return static_cast<uint8_t>(v < 0 ? 0 : alloc.location[v] < 0 ? 0 : alloc.location[v]); };
    auto put64 = [&](int64_t x) {
        for (int k = 0; k < 8; k++) code.push_back(static_cast<uint8_t>(static_cast<uint64_t>(x) >> (8 * k)));
    };
    Vec<size_t> block_at(ir.blocks.size(), 0, StdAllocator<size_t>(comp->getAllocator(CMK_Bytecode)));
    Vec<std::pair<size_t, Block*>> fixups(StdAllocator<std::pair<size_t, Block*>>(comp->getAllocator(CMK_Bytecode)));
    auto target = [&](Block* b) {
        fixups.emplace_back(code.size(), b);
        code.push_back(0);
        code.push_back(0);
    };
    for (Block* b : ir.blocks) {
        if (!b->reachable) continue;
        block_at[b->id] = code.size();
        for (Inst* i : b->insts) {
            switch (i->op) {
                case Op::Param: code.insert(code.end(), {B_Param, loc(i->dst), static_cast<uint8_t>(i->imm)}); break;
                case Op::Const: code.insert(code.end(), {B_Const, loc(i->dst)}); put64(i->imm); break;
                case Op::Copy: code.insert(code.end(), {B_Copy, loc(i->dst), loc(i->a)}); break;
                case Op::Neg: code.insert(code.end(), {B_Neg, loc(i->dst), loc(i->a)}); break;
                case Op::Bin: code.insert(code.end(), {B_Bin, static_cast<uint8_t>(i->bin), loc(i->dst), loc(i->a), loc(i->b)}); break;
                case Op::Cmp: code.insert(code.end(), {B_Cmp, static_cast<uint8_t>(i->bin), loc(i->dst), loc(i->a), loc(i->b)}); break;
                case Op::Branch: code.insert(code.end(), {B_Branch, loc(i->a)}); target(i->t); target(i->f); break;
                case Op::Jump: code.push_back(B_Jump); target(i->t); break;
                case Op::Ret: code.insert(code.end(), {B_Ret, loc(i->a)}); break;
            }
        }
    }
    if (code.size() > 0xFFFF) implLimitation("more than 64 KiB of bytecode");
    for (auto& f : fixups) {
        size_t at = block_at[f.second->id];
        code[f.first] = static_cast<uint8_t>(at);
        code[f.first + 1] = static_cast<uint8_t>(at >> 8);
    }
}

int64_t run_bytecode(const Vec<uint8_t>& code, const int64_t* args, int slots) {
    int64_t regs[REGISTERS] = {0, 0, 0, 0};
    std::vector<int64_t> stack(static_cast<size_t>(slots) + 1, 0);
    auto at = [&](uint8_t l) -> int64_t& { return (l & 0x80) ? stack[l & 0x7f] : regs[l & 3]; };
    size_t pc = 0;
    for (size_t steps = 0; pc < code.size() && steps < 1000000; steps++) {
        uint8_t op = code[pc];
        switch (op) {
            case B_Param: at(code[pc + 1]) = args[code[pc + 2]]; pc += 3; break;
            case B_Const: {
                uint64_t x = 0;
                for (int k = 0; k < 8; k++) x |= static_cast<uint64_t>(code[pc + 2 + k]) << (8 * k);
                at(code[pc + 1]) = static_cast<int64_t>(x);
                pc += 10;
                break;
            }
            case B_Copy: at(code[pc + 1]) = at(code[pc + 2]); pc += 3; break;
            case B_Neg: at(code[pc + 1]) = static_cast<int64_t>(0 - static_cast<uint64_t>(at(code[pc + 2]))); pc += 3; break;
            case B_Bin:
            case B_Cmp: at(code[pc + 2]) = arith(static_cast<char>(code[pc + 1]), at(code[pc + 3]), at(code[pc + 4])); pc += 5; break;
            case B_Branch: pc = at(code[pc + 1]) ? (code[pc + 2] | code[pc + 3] << 8) : (code[pc + 4] | code[pc + 5] << 8); break;
            case B_Jump: pc = code[pc + 1] | code[pc + 2] << 8; break;
            case B_Ret: return at(code[pc + 1]);
            default: noWay("bad bytecode");
        }
    }
    noWay("the bytecode ran off its end");
}

}  // namespace

// ---- Compiling a method --------------------------------------------------------------------

void Compiler::compCompile(minijit_result* out)
{
    Node* body = nullptr;
    int params = 0, slots = 0;
    DoPhase(PHASE_PRE_IMPORT, [] {});
    DoPhase(PHASE_IMPORTATION, [&] {
        Parser parser(this, compSource);
        body = parser.function(params);
        slots = parser.slots() > params ? parser.slots() : params;
    });
    DoPhase(PHASE_POST_IMPORT, [] {});

    // An inlinee is imported, and its tree goes back to the inliner.
    if (compIsForInlining())
    {
        impInlineInfo->result = body;
        return;
    }

    // Between phases, as the JIT's code between its phases (which makes its LinearScan and
    // Lowering objects there): a scope table like compInitDebuggingInfo's (which the JIT
    // allocates before its first phase), outside every phase on purpose (the host checks the
    // record's "(no phase)" against what compNoPhaseBytes counts).
    constexpr size_t SCOPE_TABLE_BYTES = 44;
    getAllocator(CMK_DebugInfo).allocate<char>(SCOPE_TABLE_BYTES);
    *compNoPhaseBytes += roundUp(SCOPE_TABLE_BYTES);

    DoPhase(PHASE_MORPH_INIT, [] {});
    DoPhase(PHASE_MORPH_INLINE, [&] { body = fgInline(this, body); });

    Lowering ir(this);
    DoPhase(PHASE_MORPH_GLOBAL, [&] { ir.function(body, params, slots); });

    // MinOpts does not optimize. A liveness pass runs inside Build SSA, or without SSA, as the
    // JIT's compCompile ("At least do local var liveness"), outside every phase.
    if (!opts.MinOpts()) {
        if (JitConfig.JitDoSsa != 0) {
            DoPhase(PHASE_BUILD_SSA, [&] { build_ssa(this, ir); });
            DoPhase(PHASE_VALUE_NUMBER, [&] { simplify(this, ir); });
        } else {
            liveness(this, ir);
        }
    }
    DoPhase(PHASE_LOWERING, [&] { lowering(this, ir); });
    // The final liveness pass, a phase whose children end inside it (the JIT's fgLateLiveness,
    // after Lowering and its stack level setter); only an optimized compile runs liveness.
    DoPhase(PHASE_LCLVARLIVENESS, [&] {
        if (!opts.MinOpts()) liveness(this, ir);
    });

    Allocation alloc(this);
    DoPhase(PHASE_LINEAR_SCAN, [&] { allocate_registers(this, ir, alloc); });

    Vec<uint8_t> code(StdAllocator<uint8_t>(getAllocator(CMK_Bytecode)));
    DoPhase(PHASE_GENERATE_CODE, [&] { emit_bytecode(this, ir, alloc, code); });
    int64_t value = 0;
    DoPhase(PHASE_EMIT_CODE, [&] {
        // Check the bytecode against the tree on a few inputs.
        for (int trial = 0; trial < 4; trial++) {
            int64_t args[64], env[64];
            for (int k = 0; k < 64; k++) args[k] = env[k] = (k * 7 + trial * 13) % 23 - 9;
            int64_t want = eval(body, env);
            value = run_bytecode(code, args, alloc.slots);
            if (value != want) noWay("the bytecode computes " + std::to_string(value) + ", the source " + std::to_string(want));
        }
    });
    DoPhase(PHASE_POST_EMIT, [] {});

    compCompileFinish();
    if (out) {
        out->bytecode_size = code.size();
        out->registers_used = static_cast<uint32_t>(alloc.registers_used);
        out->spills = static_cast<uint32_t>(alloc.spills);
        out->checked_value = value;
        out->min_opts = opts.jitFlags->IsSet(JitFlags::JIT_FLAG_MIN_OPT) ? 1 : 0;
    }
}

// The method's name as its record gives it (the .NET JIT's eeGetMethodFullName prints it with a
// StringPrinter, into the caller's buffer while it fits and then into the printer's allocator):
// the function's name, from its source.
const char* Compiler::eeGetMethodFullName(char* buffer, size_t bufferSize, CompAllocator alloc)
{
    size_t length = 0;
    while (compSource[length] != '\0' && compSource[length] != '(')
    {
        length++;
    }
    char* name = length < bufferSize ? buffer : alloc.allocate<char>(length + 1);
    std::memcpy(name, compSource, length);
    name[length] = '\0';
    return name;
}

// The context's record, written once, when its compilation ends (the .NET JIT's
// Compiler::compCompileFinish, which runs for the method compiled, not for its inlinees).
void Compiler::compCompileFinish()
{
    jitarena_method method = JITARENA_METHOD_INIT;
    // The tier of the attempt that produced the code: "MinOpts" when it ran with
    // JIT_FLAG_MIN_OPT (the retry sets it and leaves the request's tier flags, which
    // compGetTieringName reads first), else the tiering name.
    method.tier = opts.jitFlags->IsSet(JitFlags::JIT_FLAG_MIN_OPT) ? "MinOpts" : compGetTieringName(true);
    // The name's buffer: small on purpose, so that the longer names take the growth path into
    // the record arena (the .NET JIT's would hold most names whole).
    char nameBuffer[8];
    if (g_recordsWanted)
    {
        // The host's number for this context (SuperPMI's for the context it replays), else -1,
        // and the method's name. Asked only when records go to a log (JitArenaLog or
        // JITARENA_LOG): a runtime's host looks every name up in its settings. The name is built
        // in this stack buffer and the arena's record arena, never in the arena the record
        // measures: a logged run then counts the bytes of an unlogged one.
        method.context = g_jitHost->get_int_config(g_jitHost->self, "SuperPMIMethodContextNumber", -1);
        method.name    = eeGetMethodFullName(nameBuffer, sizeof(nameBuffer),
                                             CompAllocator(compArenaAllocator->recordArena(), CMK_DebugOnly));
    }
#if MEASURE_MEM_ALLOC
    // The Debug statistics (the .NET JIT's JitMemStatsInfo::finishMemStats) count what
    // jitarena counts, kind by kind, but the Compiler objects, which jitNativeCode allocates
    // through the arena object with no CompAllocator (CMK_Unknown).
    compArenaAllocator->finishMemStats();
    for (uint32_t kind = 0; kind < CMK_Count; kind++)
    {
        if (kind != CMK_Unknown && compArenaAllocator->getStats().allocSzByKind[kind] != jitarena_kind_bytes(compArena, kind))
        {
            noWay(std::string("MemStats and jitarena differ on kind ") + JitMemKindTraits::Names[kind]);
        }
    }
#endif
    if (jitarena_method_done(compArena, &method) != 0)
    {
        // A lost record never fails the compile: memdiff counts the context as missing, and
        // shutdown says why.
        if (g_recordFailures.fetch_add(1) == 0)
        {
            g_firstRecordFailure = jitarena_last_error_message();
        }
    }
}

namespace {

// One method context (the .NET JIT's jitNativeCode), or an inline attempt (inlineInfo set).
// A method is compiled optimized and, when that fails on an implementation limit or an
// internal error, once more in MinOpts (jitFallbackCompile). Both attempts allocate from one
// arena, destroyed only when the method is done, so that its one record, written by
// compCompileFinish when its compilation ends, holds the bytes of both. An exception the
// traps do not catch (the host's) ends the method too: the arena is destroyed on its way out.
CorJitResult jitNativeCode(const char* source, JitFlags* compileFlags, minijit_result* out, InlineInfo* inlineInfo)
{
    // The method's arena, on this stack as the JIT's own: it costs nothing to declare (an
    // inline attempt never creates it, and allocates in its inliner's), and a method creates
    // it once, inside its first attempt's error trap, for all its attempts.
    ArenaAllocator  alloc;
    ArenaAllocator* pAlloc = inlineInfo != nullptr ? inlineInfo->InlinerCompiler->compGetArenaAllocator() : &alloc;
    bool            jitFallbackCompile = false;
    uint64_t        noPhaseBytes       = 0;
    CorJitResult    result;
    for (;;)
    {
        // One attempt's traps inside a finally (the guide's PAL_TRY and PAL_FINALLY; on Unix,
        // pal.h's PAL_FINALLY is such a catch of everything that runs the finally and rethrows).
        try
        {
            try
            {
                Compiler* compiler;
                if (inlineInfo != nullptr)
                {
                    // The inliner's one inlinee Compiler object, made in its arena at its first
                    // inline attempt (inside "Morph - Inlining"), made anew for each attempt.
                    Compiler* inliner = inlineInfo->InlinerCompiler;
                    if (inliner->InlineeCompiler == nullptr)
                    {
                        inliner->InlineeCompiler = static_cast<Compiler*>(
                            pAlloc->allocateMemory(sizeof(Compiler), jitarena_kind_slot_of(CMK_Unknown)));
                    }
                    compiler = new (inliner->InlineeCompiler) Compiler(pAlloc, source, compileFlags, inlineInfo, nullptr);
                }
                else
                {
                    if (!alloc.isInitialized())
                    {
                        alloc.initialize();
                    }
                    // An attempt's first allocations belong to no phase (not to the phase that failed).
                    jitarena_set_phase(alloc.handle(), JITARENA_NO_PHASE);
                    void* memory = alloc.allocateMemory(sizeof(Compiler), jitarena_kind_slot_of(CMK_Unknown));
                    noPhaseBytes += roundUp(sizeof(Compiler));
                    compiler = new (memory) Compiler(&alloc, source, compileFlags, nullptr, &noPhaseBytes);
                }
                compiler->compCompile(out);
                result = CORJIT_OK;
            }
            catch (const JitError& e)
            {
                result     = e.result;
                last_error = e.message;
            }
            catch (const std::bad_alloc&)
            {
                result     = CORJIT_OUTOFMEM;
                last_error = std::string("out of memory: ") + jitarena_last_error_message();
            }
        }
        catch (...)
        {
            // The traps were left by an exception they do not catch: it goes on through
            // jitNativeCode, and the method is done. Its arena and every page go back to the
            // host (an inline attempt's exception goes on to its inliner, whose arena it used).
            if (inlineInfo == nullptr)
            {
                alloc.destroy();
            }
            throw;
        }
        if (result == CORJIT_OK || inlineInfo != nullptr || jitFallbackCompile || !retriedInMinOpts(result))
        {
            break; // done, or every attempt failed
        }
        // Retry in MinOpts, in the same arena: the request's tier flags stay set.
        jitFallbackCompile = true;
        compileFlags->Set(JitFlags::JIT_FLAG_MIN_OPT);
    }
    if (inlineInfo == nullptr && isFailure(result) && alloc.isInitialized())
    {
        // Every attempt failed, and none wrote a record (compCompileFinish is the last step of a
        // compile that produces code): the log notes the context's failed compile in place of
        // a record, and memdiff counts it as SuperPMI counts a failing compile.
        jitarena_method method = JITARENA_METHOD_INIT;
        method.failed = 1;
        if (g_recordsWanted)
        {
            method.context = g_jitHost->get_int_config(g_jitHost->self, "SuperPMIMethodContextNumber", -1);
        }
        (void)jitarena_method_done(alloc.handle(), &method);
    }
    if (inlineInfo == nullptr)
    {
        if (out != nullptr)
        {
            out->no_phase_bytes = noPhaseBytes;
        }
        // The method is done: its arena and every page go back to the host.
        alloc.destroy();
    }
    return result;
}

}  // namespace

// ---- Start-up, compile, shutdown (the .NET JIT's ee_il_dll.cpp) -----------------------------

extern "C" {

int minijit_startup(const minijit_host* host)
{
    last_error.clear();
    if (host == nullptr)
    {
        last_error = "minijit_startup: no host";
        return 1;
    }
    g_jitHost = host;
    // As jitStartup, which reloads JitConfig from each host it is given.
    JitConfig.JitDoSsa       = host->get_int_config(host->self, "JitDoSsa", 1);
    JitConfig.JitDirectAlloc = host->get_int_config(host->self, "JitDirectAlloc", 0);
    if (g_jitInitialized)
    {
        // As jitStartup: a later call brings another host (SuperPMI's, when a context's
        // configuration changed); the log stays open.
        return 0;
    }
    // Compiler::compStartup: this JIT's own log, named by its own configuration (SuperPMI's
    // -jitoption for the baseline JIT, -jit2option for the diff JIT), so that two JITs loaded
    // side by side never share a file; "%p" in the name gives each replay process its own.
    const char* log = host->get_string_config(host->self, "JitArenaLog");
    if (log != nullptr)
    {
        if (jitarena_log_open(log) != 0)
        {
            last_error = std::string("JitArenaLog: ") + jitarena_last_error_message();
            return 1;
        }
        g_logOpen = true;
    }
    // Or JITARENA_LOG names the log, which the library opens at the first record: records are
    // wanted either way, and must carry their contexts and names.
    const char* env = std::getenv("JITARENA_LOG");
    g_recordsWanted = g_logOpen || (env != nullptr && *env != '\0');
    g_jitInitialized = true;
    return 0;
}

int minijit_shutdown(void)
{
    last_error.clear();
    if (!g_jitInitialized)
    {
        return 0;
    }
    g_jitInitialized = false;
    int rc           = 0;
    // Compiler::compShutdown: each record reached the file when it was written; this closes it.
    if (g_logOpen)
    {
        g_logOpen = false;
        if (jitarena_log_close() != 0)
        {
            last_error = std::string("closing the stats log: ") + jitarena_last_error_message();
            rc         = 1;
        }
    }
    unsigned lost = g_recordFailures.exchange(0);
    if (lost != 0)
    {
        last_error = std::to_string(lost) + " method records could not be written, the first: " + g_firstRecordFailure;
        rc         = 1;
    }
    return rc;
}

const char* minijit_error(void)
{
    return last_error.c_str();
}

int minijit_compile(const char* source, uint32_t flags, minijit_result* out)
{
    last_error.clear();
    if (!g_jitInitialized)
    {
        last_error = "minijit_compile before minijit_startup";
        return 1;
    }
    // The request's flags, as CILJit::compileMethod passes them; the MinOpts retry adds its own.
    JitFlags jitFlags(flags & (MINIJIT_FLAG_TIER0 | MINIJIT_FLAG_TIER1));
    try
    {
        return jitNativeCode(source, &jitFlags, out, nullptr) == CORJIT_OK ? 0 : 1;
    }
    catch (const EEMissingData& e)
    {
        // The host's exception came through the JIT, whose traps let it pass: it is caught
        // here, at the library's C boundary, where the runtime (or SuperPMI, in
        // JitInstance::CompileMethod) catches it. The compile left nothing behind.
        last_error = "the host has no answer to " + e.query;
        return 2;
    }
}

}  // extern "C"
