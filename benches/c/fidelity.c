/* Fidelity: whether a throughput diff taken on jitarena reads as on the JIT's own arena. One
 * program, two builds: -DPLAIN_ARENA for a plain arena written from the public description of
 * the .NET JIT's (pages with a descriptor of three pointer-sized words at their start, blocks
 * bumped upward from just past it, requests rounded to pointer size, a request that does not
 * fit takes a new page of roundUp(descriptor + request, 64 KiB), the old page's tail
 * abandoned, every page back to the host at the end), and without it jitarena, with the same
 * host (malloc and free, as the replay host's slabs, which cache nothing) through
 * jitarena_config's page_alloc and page_free, kinds counted at every allocation, phases marked,
 * jitarena_method_done with no log and an arena created and destroyed per method.
 *
 * The workload does over its arena blocks what the JIT does: each method imports statements
 * into trees of fixed-size nodes (their fields written) with an ArrayStack, grows its local
 * table and lists as jitstd::vector and ArrayStack grow (a new block, the old contents copied
 * with memcpy), copies callee and field names into arena blocks (strlen and memcpy) and interns
 * them in a symbol table and a sorted list (strcmp of names against each other, of many lengths
 * at many offsets, and against a table of intrinsic classes), clears tables and bit sets with
 * memset and copies them with memcpy (16 bytes to several KiB), then morphs, runs liveness,
 * value numbering, assertion propagation and register allocation over them and emits
 * instruction groups (memcpy of the emitter's buffer) and GC info. Methods are heavy-tailed:
 * most have a few statements, a few thousands.
 *
 *   fidelity CHANGE [METHODS]
 *     CHANGE: base | grow | shrink. `grow` is a change to the JIT that makes its fixed sizes
 *             (nodes, blocks, descriptors, table entries) about 20% larger and interns more
 *             names: 18% more bytes requested; `shrink` one that requests 16% fewer. Every
 *             change compiles the same methods (the same random streams), with its sizes as
 *             constants.
 *     METHODS: how many methods (default 1000).
 *
 * Deterministic (fixed seeds) and independent of addresses: both builds print the same pages
 * obtained from the host and the same checksum. With -DFIDELITY_STATS (not in the measured
 * builds), the program also prints the allocations, the bytes requested and a hash of where
 * each block lies in its page, the same in both builds, and jitarena's build its kinds.
 * tests/fidelity.rs compares those, and runs both builds under callgrind to compare the
 * throughput diffs of `grow` and `shrink`. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PLAIN_ARENA
#include "jitarena.h"
#endif

#define NOINLINE __attribute__((noinline))
#define ALWAYS_INLINE inline __attribute__((always_inline))

/* ---- Kinds and phases (the JIT's CMK_* and PHASE_* names) ------------------------------------ */

enum {
    CMK_Generic,
    CMK_ASTNode,
    CMK_BasicBlock,
    CMK_CallArgs,
    CMK_FlowEdge,
    CMK_LvaTable,
    CMK_bitset,
    CMK_ArrayStack,
    CMK_ValueNumber,
    CMK_AssertionProp,
    CMK_LSRA_Interval,
    CMK_LSRA_RefPosition,
    CMK_InstDesc,
    CMK_GC,
    CMK_DebugOnly,
    KINDS
};

enum { PH_IMPORT, PH_MORPH, PH_LIVENESS, PH_VN, PH_ASSERTION, PH_LSRA, PH_EMIT, PHASES };

#ifndef PLAIN_ARENA
static const char* const kind_names[KINDS] = {
    "Generic",       "ASTNode",          "BasicBlock",
    "CallArgs",      "FlowEdge",         "LvaTable",
    "bitset",        "ArrayStack",       "ValueNumber",
    "AssertionProp", "LSRA_Interval",    "LSRA_RefPosition",
    "InstDesc",      "GC",               "DebugOnly"};
static const char* const phase_names[PHASES] = {
    "Importation",    "Morph - Global",             "Compute liveness", "Do value numbering",
    "Assertion prop", "Linear scan register alloc", "Emit code"};
#endif

/* ---- The stats build ------------------------------------------------------------------------- */

#ifdef FIDELITY_STATS
/* Counts of the stats build: allocations, bytes requested, and where each block lies in its page
 * (every block lies in the page the host gave last, the old page's tail being abandoned). */
static uint64_t stat_allocations, stat_bytes, stat_placement;
static uint64_t stat_first_page; /* the first page's offset in its 4 KiB page */
static uintptr_t stat_page;
#ifndef PLAIN_ARENA
static uint64_t stat_kind_bytes[KINDS], stat_kind_count[KINDS];
#endif
static ALWAYS_INLINE void* counted(void* block, size_t size) {
    stat_allocations++;
    stat_bytes += size;
    stat_placement = stat_placement * 31 + ((uintptr_t)block - stat_page);
    return block;
}
#else
#define counted(block, size) (block)
#endif

/* ---- The host: the replay host's slabs, malloc and free, out of line ------------------------- */

static uint64_t host_pages, host_bytes;
static NOINLINE void* host_alloc_page(void* host, size_t size) {
    void* page = malloc(size);
    (void)host;
    host_pages++;
    host_bytes += size;
#ifdef FIDELITY_STATS
    if (stat_page == 0) stat_first_page = (uintptr_t)page % 4096;
    stat_page = (uintptr_t)page;
#endif
    return page;
}
static NOINLINE void host_free_page(void* host, void* page, size_t size) {
    (void)host;
    (void)size;
    free(page);
}
static NOINLINE void out_of_memory(void) {
    fputs("fidelity: out of memory\n", stderr);
    abort();
}

/* ---- The arena ------------------------------------------------------------------------------- */

#ifdef PLAIN_ARENA
#define ARENA_PAGE_SIZE 65536u
/* The JIT's PageDescriptor: the next page, the page's bytes, its bytes used. */
typedef struct page_descriptor {
    struct page_descriptor* next;
    size_t bytes;
    size_t used;
} page_descriptor;
/* The JIT's ArenaAllocator: its bump pointers (integers, so that the first bump from none is
 * defined C) and its page list. */
typedef struct arena {
    uintptr_t next_free;
    uintptr_t last_free;
    page_descriptor* first;
    page_descriptor* last;
} arena;
/* allocateNewPage: the request lies at the new page's first block. */
static NOINLINE void* arena_new_page(arena* a, size_t size) {
    size_t bytes = sizeof(page_descriptor) + size;
    page_descriptor* page;
    if (a->last != NULL) {
        a->next_free -= size;
        a->last->used = a->next_free - (uintptr_t)(a->last + 1);
    }
    bytes = (bytes + ARENA_PAGE_SIZE - 1) / ARENA_PAGE_SIZE * ARENA_PAGE_SIZE;
    page = (page_descriptor*)host_alloc_page(NULL, bytes);
    if (page == NULL) out_of_memory();
    page->next = NULL;
    page->bytes = bytes;
    page->used = 0;
    if (a->last != NULL) a->last->next = page;
    else a->first = page;
    a->last = page;
    a->next_free = (uintptr_t)(page + 1) + size;
    a->last_free = (uintptr_t)page + bytes;
    return page + 1;
}
/* allocateMemory: round to pointer size, bump, compare the bumped pointer with the page's end. */
static ALWAYS_INLINE void* arena_alloc(arena* a, size_t size) {
    uintptr_t block = a->next_free;
    size = (size + sizeof(void*) - 1) & ~(sizeof(void*) - 1);
    a->next_free = block + size;
    if (a->next_free > a->last_free) return arena_new_page(a, size);
    return (void*)block;
}
static void arena_init(arena* a) {
    a->next_free = a->last_free = 0;
    a->first = a->last = NULL;
}
/* destroy: every page back to the host. */
static NOINLINE void arena_destroy(arena* a) {
    page_descriptor* page = a->first;
    while (page != NULL) {
        page_descriptor* next = page->next;
        host_free_page(NULL, page, page->bytes);
        page = next;
    }
    arena_init(a);
}
typedef arena* arena_ref;
/* The JIT's Release CompAllocator, held by containers: the arena alone. */
typedef struct allocator {
    arena* arena;
} allocator;
static ALWAYS_INLINE allocator allocator_of(arena_ref a, unsigned kind) {
    allocator al;
    (void)kind;
    al.arena = a;
    return al;
}
static ALWAYS_INLINE void* held_alloc(allocator al, size_t size) {
    return counted(arena_alloc(al.arena, size), size);
}
/* `new (compiler, CMK_...)`: a call site naming its kind. */
#define NEW(comp, size, kind) counted(arena_alloc((comp)->arena, (size)), (size))
#else
static jitarena_config cfg;
typedef jitarena* arena_ref;
/* The guide's CompAllocator: the jitarena and the kind's slot. */
typedef struct allocator {
    jitarena* arena;
    jitarena_kind_slot slot;
} allocator;
static ALWAYS_INLINE allocator allocator_of(arena_ref a, unsigned kind) {
    allocator al;
    al.arena = a;
    al.slot = jitarena_kind_slot_of(kind);
    return al;
}
static ALWAYS_INLINE void* held_alloc(allocator al, size_t size) {
    void* p = jitarena_alloc_slot(al.arena, size, al.slot);
    if (p == NULL) out_of_memory();
    return counted(p, size);
}
static ALWAYS_INLINE void* new_of_kind(jitarena* a, size_t size, unsigned kind) {
    void* p = jitarena_alloc(a, size, kind);
    if (p == NULL) out_of_memory();
    return counted(p, size);
}
#define NEW(comp, size, kind) new_of_kind((comp)->arena, (size), (kind))
#endif

/* ---- The changes: the JIT's fixed sizes in the baseline and in two changed JITs -------------- */

enum { CH_BASE, CH_GROW, CH_SHRINK, CHANGES };
#define SZ(c, b, g, s) ((size_t)((c) == CH_GROW ? (g) : (c) == CH_SHRINK ? (s) : (b)))
#define LEAF_SIZE(c) SZ(c, 48, 56, 40)
#define OP_SIZE(c) SZ(c, 64, 80, 56)
#define IND_SIZE(c) SZ(c, 56, 64, 48)
#define CALL_SIZE(c) SZ(c, 160, 192, 128)
#define ARG_SIZE(c) SZ(c, 48, 56, 40)
#define STMT_SIZE(c) SZ(c, 48, 56, 40)
#define BLOCK_SIZE(c) SZ(c, 232, 280, 192)
#define EDGE_SIZE(c) SZ(c, 40, 48, 32)
#define LCL_SIZE(c) SZ(c, 72, 88, 56)
#define VN_SIZE(c) SZ(c, 40, 48, 32)
#define ASSERTION_SIZE(c) SZ(c, 64, 80, 56)
#define INTERVAL_SIZE(c) SZ(c, 96, 112, 80)
#define REFPOS_SIZE(c) SZ(c, 56, 64, 48)
#define IDESC_SIZE(c) SZ(c, 32, 40, 24)
#define IDESC_CALL_SIZE(c) SZ(c, 56, 64, 48)
#define IG_SIZE(c) SZ(c, 72, 88, 56)
/* Percent of calls and field accesses whose names are interned. */
#define NAME_PERCENT(c) ((unsigned)SZ(c, 60, 72, 50))

/* ---- The compiler's objects ------------------------------------------------------------------ */

enum { N_LCL, N_CNS, N_OP, N_IND, N_CALL, N_STORE, N_COMMA };

typedef struct node {
    uint8_t kind;
    uint8_t oper;
    uint16_t flags;
    uint32_t aux; /* the local, the constant, the symbol */
    struct node* op1;
    struct node* op2;
    struct node* next; /* execution order */
    uint32_t vn;
    uint32_t reg;
    uint64_t extra[]; /* further fields, to the node's size */
} node;

typedef struct call_arg {
    struct call_arg* next;
    node* value;
    uint32_t reg;
    uint32_t flags;
    uint64_t extra[];
} call_arg;

typedef struct stmt {
    struct stmt* next;
    node* root;
    node* first;
    uint32_t nodes;
    uint32_t num;
    uint64_t extra[];
} stmt;

struct edge;
typedef struct block {
    struct block* next;
    stmt* first;
    stmt* last;
    struct edge* succs;
    uint64_t* use;
    uint64_t* def;
    uint64_t* live_in;
    uint64_t* live_out;
    uint64_t* a_gen;
    uint64_t* a_in;
    uint64_t* a_out;
    uint32_t* var_reg;
    uint32_t num;
    uint32_t nsucc;
    uint32_t target;
    uint32_t weight;
    uint64_t extra[];
} block;

typedef struct edge {
    struct edge* next;
    block* to;
    uint32_t weight;
    uint32_t flags;
    uint64_t extra[];
} edge;

typedef struct lcl {
    uint32_t refs;
    uint32_t sym;
    uint32_t flags;
    uint32_t reg;
    uint64_t weight;
} lcl;

typedef struct sym {
    struct sym* next;
    const char* name;
    uint64_t hash;
    uint32_t count;
    uint32_t num;
} sym;

typedef struct vn_entry {
    struct vn_entry* next;
    uint64_t key;
    uint32_t num;
    uint32_t pad;
    uint64_t extra[];
} vn_entry;

typedef struct refpos {
    struct refpos* next;
    node* at;
    uint32_t loc;
    uint32_t type;
    uint64_t extra[];
} refpos;

typedef struct interval {
    refpos* first;
    refpos* last;
    uint32_t lcl;
    uint32_t reg;
    uint64_t extra[];
} interval;

typedef struct insgroup {
    struct insgroup* next;
    unsigned char* data;
    uint32_t size;
    uint32_t count;
    uint32_t num;
    uint32_t pad;
    uint64_t extra[];
} insgroup;

/* jitstd::vector and ArrayStack: elements in one block of the held allocator; growing takes a
 * new block twice as large and copies the old contents into it. */
typedef struct vec {
    allocator alloc;
    unsigned char* data;
    uint32_t size;
    uint32_t cap;
    uint32_t elem;
} vec;

static void vec_init(vec* v, allocator al, uint32_t elem, uint32_t cap) {
    v->alloc = al;
    v->size = 0;
    v->cap = cap;
    v->elem = elem;
    v->data = cap != 0 ? (unsigned char*)held_alloc(al, (size_t)cap * elem) : NULL;
}
static NOINLINE void vec_grow(vec* v) {
    uint32_t cap = v->cap != 0 ? v->cap * 2 : 4;
    unsigned char* data = (unsigned char*)held_alloc(v->alloc, (size_t)cap * v->elem);
    if (v->size != 0) memcpy(data, v->data, (size_t)v->size * v->elem);
    v->data = data;
    v->cap = cap;
}
static ALWAYS_INLINE void* vec_push(vec* v) {
    if (v->size == v->cap) vec_grow(v);
    return v->data + (size_t)v->size++ * v->elem;
}
static ALWAYS_INLINE void* vec_at(const vec* v, uint32_t i) {
    return v->data + (size_t)i * v->elem;
}

/* The Compiler object, as far as this workload goes. */
typedef struct compiler {
    arena_ref arena;
    uint32_t phase;
    uint32_t nstmts;
    uint64_t rng;
    uint64_t check;
    block* first_block;
    block* last_block;
    block** blocks;
    uint32_t nblocks;
    uint32_t nnodes;
    uint32_t nstores;
    vec lvas;    /* lcl, the LvaTable */
    vec sorted;  /* const char*, the interned names in order */
    sym** buckets;
    uint32_t nbuckets;
    uint32_t nsyms;
    uint32_t bitset_words;
    uint32_t nassertions;
    unsigned char* gc_info;
    uint32_t gc_size;
    uint32_t gc_cap;
} compiler;

static ALWAYS_INLINE uint64_t rnd(compiler* comp) {
    uint64_t z = (comp->rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* BeginPhase and EndPhase: functions of their own that store the phase; jitarena's build marks
 * the phase too. The empty asm stands for effects the compiler cannot see. */
static NOINLINE void begin_phase(compiler* comp, uint32_t phase) {
    __asm__ __volatile__("" ::: "memory");
    comp->phase = phase;
#ifndef PLAIN_ARENA
    jitarena_phase_begin(comp->arena, phase);
#endif
}
static NOINLINE void end_phase(compiler* comp, uint32_t phase) {
    __asm__ __volatile__("" ::: "memory");
    comp->phase = phase;
#ifndef PLAIN_ARENA
    jitarena_phase_end(comp->arena, phase);
#endif
}

/* ---- Names: copied into arena blocks, interned, sorted --------------------------------------- */

/* The runtime's pieces of names, with their lengths (the runtime hands out both). */
typedef struct piece {
    const char* text;
    size_t len;
} piece;
#define PIECE(s) {s, sizeof(s) - 1}
static const piece namespaces[] = {
    PIECE("System"),
    PIECE("System.Collections.Generic"),
    PIECE("System.Collections.Concurrent"),
    PIECE("System.Runtime.CompilerServices"),
    PIECE("System.Runtime.Intrinsics"),
    PIECE("System.Runtime.Intrinsics.X86"),
    PIECE("System.Numerics"),
    PIECE("System.Linq"),
    PIECE("System.Text"),
    PIECE("System.Threading.Tasks"),
    PIECE("Microsoft.Extensions.DependencyInjection"),
    PIECE("Microsoft.AspNetCore.Http.Features"),
    PIECE("BenchmarksGame")};
static const piece classes[] = {
    PIECE("List`1"),        PIECE("Dictionary`2"),  PIECE("Vector128`1"),
    PIECE("Vector256`1"),   PIECE("Span`1"),        PIECE("ReadOnlySpan`1"),
    PIECE("String"),        PIECE("Math"),          PIECE("Unsafe"),
    PIECE("MemoryMarshal"), PIECE("Avx2"),          PIECE("Sse2"),
    PIECE("Enumerable"),    PIECE("StringBuilder"), PIECE("Task`1"),
    PIECE("HashSet`1"),     PIECE("ConcurrentDictionary`2"), PIECE("BitOperations"),
    PIECE("Buffer"),        PIECE("Array")};
#define METHOD_MEMBERS 23
static const piece members[] = {
    PIECE("get_Item"),    PIECE("set_Item"),    PIECE("Add"),         PIECE("TryGetValue"),
    PIECE("op_Addition"), PIECE("op_Multiply"), PIECE("Create"),      PIECE("Load"),
    PIECE("Store"),       PIECE("AsSpan"),      PIECE("get_Length"),  PIECE("Append"),
    PIECE("ToString"),    PIECE("Equals"),      PIECE("GetHashCode"), PIECE("CompareTo"),
    PIECE("Max"),         PIECE("Min"),         PIECE("PopCount"),    PIECE("Invoke"),
    PIECE("MoveNext"),    PIECE("get_Current"), PIECE("Dispose"),
    /* fields */
    PIECE("_items"),      PIECE("_size"),       PIECE("_version"),    PIECE("m_value"),
    PIECE("_buckets"),    PIECE("_entries"),    PIECE("_firstChar")};
static const piece signatures[] = {
    PIECE("(int,int):int"),
    PIECE("():void"),
    PIECE("(ref ubyte,ulong):bool"),
    PIECE("(System.__Canon):System.__Canon"),
    PIECE("(long):this"),
    PIECE("(System.ReadOnlySpan`1[ushort],int,System.StringComparison):int"),
    PIECE("():int"),
    PIECE("(double,double):double")};
static const piece separators[] = {PIECE("."), PIECE(":"), PIECE("::")};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Memory outside the arena that the string functions read lies at the start of a 4 KiB page,
 * so that where the two builds' linkers put their data changes none of those functions' paths:
 * only the arena blocks' places can. The runtime's buffer a name is built in, and the classes
 * whose methods the JIT may expand as intrinsics (lookupNamedIntrinsic compares with them). */
static char runtime_text[256] __attribute__((aligned(4096)));
static const char intrinsic_classes[6][16] __attribute__((aligned(4096))) = {
    "Vector128`1", "Vector256`1", "Math", "Unsafe", "BitOperations", "Span`1"};

/* A pick that favours the first entries, so that names repeat within a method. */
static ALWAYS_INLINE uint32_t skewed(uint64_t r, uint32_t n) {
    uint32_t a = (uint32_t)(r % n), b = (uint32_t)((r >> 16) % n);
    return a < b ? a : b;
}

static ALWAYS_INLINE char* append(char* out, const piece* p) {
    memcpy(out, p->text, p->len);
    return out + p->len;
}

/* FNV-1a over the name's bytes. */
static uint64_t hash_name(const char* s, size_t len) {
    uint64_t h = 0xCBF29CE484222325ull;
    size_t i;
    for (i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001B3ull;
    return h;
}

/* Inserts a new symbol's name into the sorted list: a binary search with strcmp, then a move
 * of the later entries. */
static NOINLINE void sorted_insert(compiler* comp, const char* name) {
    uint32_t lo = 0, hi = comp->sorted.size;
    const char** items;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (strcmp(*(const char**)vec_at(&comp->sorted, mid), name) < 0) lo = mid + 1;
        else hi = mid;
    }
    (void)vec_push(&comp->sorted);
    items = (const char**)comp->sorted.data;
    memmove(items + lo + 1, items + lo, (size_t)(comp->sorted.size - 1 - lo) * sizeof(*items));
    items[lo] = name;
    comp->check += lo;
}

/* The symbol table: a name already in it is found by strcmp along its bucket's chain; a new one
 * gets an entry and a place in the sorted list. The table doubles (new buckets, cleared) as it
 * fills. */
static NOINLINE uint32_t intern(compiler* comp, const char* name) {
    size_t len = strlen(name);
    uint64_t h = hash_name(name, len);
    sym* e;
    for (e = comp->buckets[h & (comp->nbuckets - 1)]; e != NULL; e = e->next) {
        if (strcmp(e->name, name) == 0) {
            e->count++;
            return e->num;
        }
    }
    if (comp->nsyms >= comp->nbuckets * 2) {
        uint32_t nb = comp->nbuckets * 2, i;
        sym** buckets = (sym**)NEW(comp, nb * sizeof(sym*), CMK_DebugOnly);
        memset(buckets, 0, nb * sizeof(sym*));
        for (i = 0; i < comp->nbuckets; i++) {
            sym* s = comp->buckets[i];
            while (s != NULL) {
                sym* next = s->next;
                s->next = buckets[s->hash & (nb - 1)];
                buckets[s->hash & (nb - 1)] = s;
                s = next;
            }
        }
        comp->buckets = buckets;
        comp->nbuckets = nb;
    }
    e = (sym*)NEW(comp, sizeof(sym), CMK_DebugOnly);
    e->name = name;
    e->hash = h;
    e->count = 1;
    e->num = comp->nsyms++;
    e->next = comp->buckets[h & (comp->nbuckets - 1)];
    comp->buckets[h & (comp->nbuckets - 1)] = e;
    sorted_insert(comp, name);
    return e->num;
}

/* eeGetMethodFullName or a field's name: built from the runtime's pieces, copied into an arena
 * block, interned. A callee's class is then looked up among the intrinsic classes, from where
 * it lies in the copied name. */
static NOINLINE uint32_t name_of(compiler* comp, uint64_t r, int field) {
    char* end = runtime_text;
    char* name;
    size_t len, ns_len;
    uint32_t num, i;
    end = append(end, &namespaces[skewed(r, (uint32_t)COUNT(namespaces))]);
    end = append(end, &separators[0]);
    ns_len = (size_t)(end - runtime_text);
    end = append(end, &classes[skewed(r >> 8, (uint32_t)COUNT(classes))]);
    if (field) {
        end = append(end, &separators[2]);
        end = append(end, &members[METHOD_MEMBERS + (r >> 24) % (COUNT(members) - METHOD_MEMBERS)]);
    } else {
        end = append(end, &separators[1]);
        end = append(end, &members[skewed(r >> 24, METHOD_MEMBERS)]);
        end = append(end, &signatures[skewed(r >> 40, (uint32_t)COUNT(signatures))]);
    }
    *end = '\0';
    len = strlen(runtime_text);
    name = (char*)NEW(comp, len + 1, CMK_DebugOnly);
    memcpy(name, runtime_text, len + 1);
    num = intern(comp, name);
    if (!field) {
        for (i = 0; i < COUNT(intrinsic_classes); i++) {
            comp->check += strcmp(name + ns_len, intrinsic_classes[i]) < 0;
        }
    }
    return num;
}

/* ---- Phases, each compiled once per change with that change's sizes as constants ------------- */

static ALWAYS_INLINE node* new_node(compiler* comp, size_t size, unsigned kind, unsigned oper,
                                    node* op1, node* op2, uint32_t aux) {
    node* n = (node*)NEW(comp, size, CMK_ASTNode);
    size_t i;
    n->kind = (uint8_t)kind;
    n->oper = (uint8_t)oper;
    n->flags = 0;
    n->aux = aux;
    n->op1 = op1;
    n->op2 = op2;
    n->next = NULL;
    n->vn = 0;
    n->reg = 0;
    for (i = 0; i < (size - sizeof(node)) / 8; i++) n->extra[i] = aux + i;
    return n;
}

static ALWAYS_INLINE block* new_block(compiler* comp, size_t size) {
    block* b = (block*)NEW(comp, size, CMK_BasicBlock);
    size_t i;
    memset(b, 0, sizeof(block));
    b->num = comp->nblocks++;
    for (i = 0; i < (size - sizeof(block)) / 8; i++) b->extra[i] = i;
    if (comp->last_block != NULL) comp->last_block->next = b;
    else comp->first_block = b;
    comp->last_block = b;
    return b;
}

static ALWAYS_INLINE uint32_t new_local(compiler* comp, size_t size) {
    lcl* l = (lcl*)vec_push(&comp->lvas);
    memset(l, 0, size);
    l->flags = comp->lvas.size;
    return comp->lvas.size - 1;
}

/* The importer: each statement's IL ops push and pop trees on an ArrayStack; a store ends it. */
static ALWAYS_INLINE void import_body(compiler* comp, const int c) {
    vec stack;
    block* b;
    uint32_t s, i, nargs = 1 + (uint32_t)(rnd(comp) % 6);
    vec_init(&comp->lvas, allocator_of(comp->arena, CMK_LvaTable), (uint32_t)LCL_SIZE(c), 8);
    for (i = 0; i < nargs; i++) (void)new_local(comp, LCL_SIZE(c));
    vec_init(&stack, allocator_of(comp->arena, CMK_ArrayStack), sizeof(node*), 8);
    b = new_block(comp, BLOCK_SIZE(c));
    for (s = 0; s < comp->nstmts; s++) {
        uint64_t r = rnd(comp);
        uint32_t ops = 2 + (uint32_t)(r % 13), nodes = 0;
        node *first = NULL, *last = NULL, *value;
        stmt* st;
        stack.size = 0;
        for (i = 0; i < ops; i++) {
            uint64_t q = rnd(comp), name_roll = rnd(comp);
            uint32_t depth = stack.size, nlocals = comp->lvas.size;
            node** top = (node**)stack.data + depth;
            node* n;
            switch (q % 12) {
            case 0:
            case 1:
            case 2:
            case 3:
                n = new_node(comp, LEAF_SIZE(c), N_LCL, 0, NULL, NULL,
                             (uint32_t)((q >> 8) % nlocals));
                break;
            case 4:
                n = new_node(comp, LEAF_SIZE(c), N_CNS, 1, NULL, NULL, (uint32_t)(q >> 8) & 0xFFFF);
                break;
            case 5:
            case 6:
            case 7:
                if (depth >= 2) {
                    stack.size -= 2;
                    n = new_node(comp, OP_SIZE(c), N_OP, 2 + (uint32_t)(q >> 8) % 8, top[-2],
                                 top[-1], 0);
                } else {
                    n = new_node(comp, LEAF_SIZE(c), N_LCL, 0, NULL, NULL,
                                 (uint32_t)((q >> 8) % nlocals));
                }
                break;
            case 8:
            case 9:
                if (depth >= 1) {
                    uint32_t field = 0;
                    if (name_roll % 100 < NAME_PERCENT(c)) field = 1 + name_of(comp, q >> 8, 1);
                    stack.size -= 1;
                    n = new_node(comp, IND_SIZE(c), N_IND, 10, top[-1], NULL, field);
                } else {
                    n = new_node(comp, LEAF_SIZE(c), N_CNS, 1, NULL, NULL,
                                 (uint32_t)(q >> 12) & 0xFF);
                }
                break;
            default: {
                uint32_t argc = (uint32_t)((q >> 8) % 4), a, callee = 0;
                call_arg* args = NULL;
                if (argc > depth) argc = depth;
                for (a = 0; a < argc; a++) {
                    call_arg* arg = (call_arg*)NEW(comp, ARG_SIZE(c), CMK_CallArgs);
                    size_t k;
                    arg->value = top[-1 - (int)a];
                    arg->reg = a;
                    arg->flags = 0;
                    arg->next = args;
                    for (k = 0; k < (ARG_SIZE(c) - sizeof(call_arg)) / 8; k++) arg->extra[k] = k;
                    args = arg;
                }
                stack.size -= argc;
                if (name_roll % 100 < NAME_PERCENT(c)) callee = 1 + name_of(comp, q >> 12, 0);
                n = new_node(comp, CALL_SIZE(c), N_CALL, 11, NULL, NULL, callee);
                n->extra[0] = argc;
                n->extra[1] = (uint64_t)(uintptr_t)args;
                break;
            }
            }
            *(node**)vec_push(&stack) = n;
            if (last != NULL) last->next = n;
            else first = n;
            last = n;
            nodes++;
        }
        /* A store of the value left on top into a local, new 1 time in 3; what is left under
         * it is kept in commas. */
        value = ((node**)stack.data)[--stack.size];
        {
            uint32_t target = r % 3 == 0 ? new_local(comp, LCL_SIZE(c))
                                         : (uint32_t)((r >> 8) % comp->lvas.size);
            value = new_node(comp, OP_SIZE(c), N_STORE, 12, value, NULL, target);
            last->next = value;
            last = value;
            nodes++;
            comp->nstores++;
        }
        while (stack.size != 0) {
            node* side = ((node**)stack.data)[--stack.size];
            value = new_node(comp, OP_SIZE(c), N_COMMA, 13, side, value, 0);
            last->next = value;
            last = value;
            nodes++;
        }
        st = (stmt*)NEW(comp, STMT_SIZE(c), CMK_ASTNode);
        st->next = NULL;
        st->root = value;
        st->first = first;
        st->nodes = nodes;
        st->num = s;
        for (i = 0; i < (STMT_SIZE(c) - sizeof(stmt)) / 8; i++) st->extra[i] = i;
        if (b->last != NULL) b->last->next = st;
        else b->first = st;
        b->last = st;
        b->target = (uint32_t)(r >> 32);
        comp->nnodes += nodes;
        if ((r >> 20) % 4 == 0 && s + 1 < comp->nstmts) b = new_block(comp, BLOCK_SIZE(c));
    }
}

static ALWAYS_INLINE node* clone_node(compiler* comp, const node* n, size_t size) {
    node* m = (node*)NEW(comp, size, CMK_ASTNode);
    memcpy(m, n, size);
    return m;
}
static ALWAYS_INLINE node* clone_any(compiler* comp, const node* n, const int c) {
    switch (n->kind) {
    case N_LCL:
    case N_CNS: return clone_node(comp, n, LEAF_SIZE(c));
    case N_IND: return clone_node(comp, n, IND_SIZE(c));
    case N_CALL: return clone_node(comp, n, CALL_SIZE(c));
    default: return clone_node(comp, n, OP_SIZE(c));
    }
}

/* Morph: one node in eight is rebuilt (a copy replaces it), one statement in sixteen is cloned
 * whole (loop cloning's copies), constants folded into new leaves. */
static ALWAYS_INLINE void morph_body(compiler* comp, const int c) {
    block* b;
    for (b = comp->first_block; b != NULL; b = b->next) {
        stmt* st;
        for (st = b->first; st != NULL; st = st->next) {
            node *n, *prev = NULL;
            uint64_t r = rnd(comp);
            for (n = st->first; n != NULL; prev = n, n = n->next) {
                uint64_t q = rnd(comp);
                node* m = NULL;
                if (q % 8 == 0) m = clone_any(comp, n, c);
                else if (q % 64 == 1 && n->kind == N_OP)
                    m = new_node(comp, LEAF_SIZE(c), N_CNS, 1, NULL, NULL, n->oper);
                if (m != NULL) {
                    m->next = n->next;
                    m->flags |= 1;
                    if (prev != NULL) prev->next = m;
                    else st->first = m;
                    if (st->root == n) st->root = m;
                    n = m;
                }
                comp->check += n->kind;
            }
            if (r % 16 == 0) {
                stmt* copy = (stmt*)NEW(comp, STMT_SIZE(c), CMK_ASTNode);
                node* tail = NULL;
                size_t i;
                memcpy(copy, st, STMT_SIZE(c));
                copy->first = NULL;
                for (n = st->first; n != NULL; n = n->next) {
                    node* m = clone_any(comp, n, c);
                    m->next = NULL;
                    if (tail != NULL) tail->next = m;
                    else copy->first = m;
                    tail = m;
                }
                copy->root = tail;
                for (i = 0; i < (STMT_SIZE(c) - sizeof(stmt)) / 8; i++) copy->extra[i] += 1;
                copy->next = st->next;
                st->next = copy;
                if (b->last == st) b->last = copy;
                comp->nnodes += st->nodes;
                st = copy;
            }
        }
    }
}

/* The flow graph's edges and liveness: four bit sets a block (cleared), filled from the nodes,
 * then three backward passes (a successor's set copied, another's or'ed in). */
static ALWAYS_INLINE void liveness_body(compiler* comp, const int c) {
    uint32_t words = (comp->lvas.size + 63) / 64, pass, i;
    size_t bytes = words * sizeof(uint64_t);
    block* b;
    comp->bitset_words = words;
    comp->blocks = (block**)NEW(comp, comp->nblocks * sizeof(block*), CMK_BasicBlock);
    for (b = comp->first_block; b != NULL; b = b->next) comp->blocks[b->num] = b;
    for (b = comp->first_block; b != NULL; b = b->next) {
        stmt* st;
        uint32_t k, nsucc = b->next == NULL ? 0 : 1 + (b->target % 3 == 0);
        for (k = 0; k < nsucc; k++) {
            edge* e = (edge*)NEW(comp, EDGE_SIZE(c), CMK_FlowEdge);
            size_t j;
            e->to = k == 0 ? b->next : comp->blocks[(b->target >> 4) % comp->nblocks];
            e->weight = 100;
            e->flags = k;
            e->next = b->succs;
            for (j = 0; j < (EDGE_SIZE(c) - sizeof(edge)) / 8; j++) e->extra[j] = j;
            b->succs = e;
        }
        b->nsucc = nsucc;
        b->use = (uint64_t*)NEW(comp, bytes, CMK_bitset);
        b->def = (uint64_t*)NEW(comp, bytes, CMK_bitset);
        b->live_in = (uint64_t*)NEW(comp, bytes, CMK_bitset);
        b->live_out = (uint64_t*)NEW(comp, bytes, CMK_bitset);
        memset(b->use, 0, bytes);
        memset(b->def, 0, bytes);
        memset(b->live_in, 0, bytes);
        memset(b->live_out, 0, bytes);
        for (st = b->first; st != NULL; st = st->next) {
            node* n;
            for (n = st->first; n != NULL; n = n->next) {
                uint32_t v = n->aux;
                uint64_t bit = 1ull << (v % 64);
                if (n->kind == N_LCL && !(b->def[v / 64] & bit)) b->use[v / 64] |= bit;
                else if (n->kind == N_STORE) b->def[v / 64] |= bit;
            }
        }
    }
    for (pass = 0; pass < 3; pass++) {
        for (i = comp->nblocks; i-- > 0;) {
            edge* e;
            b = comp->blocks[i];
            if (b->succs != NULL) memcpy(b->live_out, b->succs->to->live_in, bytes);
            for (e = b->succs != NULL ? b->succs->next : NULL; e != NULL; e = e->next) {
                uint32_t w;
                for (w = 0; w < words; w++) b->live_out[w] |= e->to->live_in[w];
            }
            {
                uint32_t w;
                for (w = 0; w < words; w++)
                    b->live_in[w] = b->use[w] | (b->live_out[w] & ~b->def[w]);
            }
        }
    }
    comp->check += comp->blocks[0]->live_in[0] & 0xFFFF;
}

/* Value numbering: a cleared table of buckets, a chained entry per distinct (operator,
 * operands). */
static ALWAYS_INLINE void vn_body(compiler* comp, const int c) {
    uint32_t nb = 16, count = 0;
    vn_entry** buckets;
    block* b;
    while (nb < comp->nnodes / 2) nb *= 2;
    buckets = (vn_entry**)NEW(comp, nb * sizeof(vn_entry*), CMK_ValueNumber);
    memset(buckets, 0, nb * sizeof(vn_entry*));
    for (b = comp->first_block; b != NULL; b = b->next) {
        stmt* st;
        for (st = b->first; st != NULL; st = st->next) {
            node* n;
            for (n = st->first; n != NULL; n = n->next) {
                uint64_t key = ((uint64_t)n->kind << 56) ^ ((uint64_t)n->oper << 48) ^
                               ((uint64_t)n->aux << 20);
                uint64_t h;
                vn_entry* e;
                if (n->op1 != NULL) key ^= (uint64_t)n->op1->vn * 0x9E3779B1u;
                if (n->op2 != NULL) key ^= (uint64_t)n->op2->vn << 1;
                if (n->kind == N_STORE || n->kind == N_CALL) key ^= (uint64_t)count << 8;
                h = key * 0x9E3779B97F4A7C15ull >> 40;
                for (e = buckets[h & (nb - 1)]; e != NULL && e->key != key; e = e->next) {
                }
                if (e == NULL) {
                    size_t i;
                    e = (vn_entry*)NEW(comp, VN_SIZE(c), CMK_ValueNumber);
                    e->key = key;
                    e->num = ++count;
                    e->pad = 0;
                    for (i = 0; i < (VN_SIZE(c) - sizeof(vn_entry)) / 8; i++) e->extra[i] = key;
                    e->next = buckets[h & (nb - 1)];
                    buckets[h & (nb - 1)] = e;
                }
                n->vn = e->num;
            }
        }
    }
    comp->check += count;
}

/* Assertion propagation: a cleared table of assertions, three bit sets a block (cleared, then
 * a predecessor's copied and the block's own or'ed in). */
static ALWAYS_INLINE void assertion_body(compiler* comp, const int c) {
    uint32_t max = 64 + comp->nstores / 4 > 256 ? 256 : (64 + comp->nstores / 4 + 63) / 64 * 64;
    uint32_t words = max / 64, count = 0, w;
    size_t bytes = words * sizeof(uint64_t);
    unsigned char* table = (unsigned char*)NEW(comp, max * ASSERTION_SIZE(c), CMK_AssertionProp);
    block* b;
    const uint64_t* prev_out = NULL;
    memset(table, 0, max * ASSERTION_SIZE(c));
    for (b = comp->first_block; b != NULL; b = b->next) {
        stmt* st;
        b->a_gen = (uint64_t*)NEW(comp, bytes, CMK_AssertionProp);
        b->a_in = (uint64_t*)NEW(comp, bytes, CMK_AssertionProp);
        b->a_out = (uint64_t*)NEW(comp, bytes, CMK_AssertionProp);
        memset(b->a_gen, 0, bytes);
        if (prev_out != NULL) memcpy(b->a_in, prev_out, bytes);
        else memset(b->a_in, 0, bytes);
        for (st = b->first; st != NULL; st = st->next) {
            if (st->root->kind == N_STORE && count < max) {
                uint32_t* a = (uint32_t*)(table + (size_t)count * ASSERTION_SIZE(c));
                a[0] = st->root->aux;
                a[1] = st->root->op1->vn;
                b->a_gen[count / 64] |= 1ull << (count % 64);
                count++;
            }
        }
        for (w = 0; w < words; w++) b->a_out[w] = b->a_in[w] | b->a_gen[w];
        prev_out = b->a_out;
    }
    comp->nassertions = count;
    comp->check += count + (prev_out != NULL ? prev_out[0] % 7 : 0);
}

/* LSRA: an Interval a local, a RefPosition a local's use or definition, and at each join a map
 * of locals to registers copied from the block before. */
static ALWAYS_INLINE void lsra_body(compiler* comp, const int c) {
    uint32_t nlocals = comp->lvas.size, i;
    size_t map_bytes = nlocals * sizeof(uint32_t);
    interval** intervals = (interval**)NEW(comp, nlocals * sizeof(interval*), CMK_LSRA_Interval);
    const uint32_t* prev_map = NULL;
    block* b;
    for (i = 0; i < nlocals; i++) {
        interval* iv = (interval*)NEW(comp, INTERVAL_SIZE(c), CMK_LSRA_Interval);
        size_t k;
        iv->first = iv->last = NULL;
        iv->lcl = i;
        iv->reg = ((lcl*)vec_at(&comp->lvas, i))->flags % 16;
        for (k = 0; k < (INTERVAL_SIZE(c) - sizeof(interval)) / 8; k++) iv->extra[k] = k;
        intervals[i] = iv;
    }
    for (b = comp->first_block; b != NULL; b = b->next) {
        stmt* st;
        uint32_t loc = 0;
        if (b->num % 4 == 0 || prev_map == NULL) {
            b->var_reg = (uint32_t*)NEW(comp, map_bytes, CMK_LSRA_Interval);
            if (prev_map != NULL) memcpy(b->var_reg, prev_map, map_bytes);
            else memset(b->var_reg, 0, map_bytes);
            prev_map = b->var_reg;
        }
        for (st = b->first; st != NULL; st = st->next) {
            node* n;
            for (n = st->first; n != NULL; n = n->next, loc += 2) {
                if (n->kind == N_LCL || n->kind == N_STORE) {
                    interval* iv = intervals[n->aux];
                    refpos* rp = (refpos*)NEW(comp, REFPOS_SIZE(c), CMK_LSRA_RefPosition);
                    size_t k;
                    rp->next = NULL;
                    rp->at = n;
                    rp->loc = loc;
                    rp->type = n->kind;
                    for (k = 0; k < (REFPOS_SIZE(c) - sizeof(refpos)) / 8; k++) rp->extra[k] = loc;
                    if (iv->last != NULL) iv->last->next = rp;
                    else iv->first = rp;
                    iv->last = rp;
                    n->reg = iv->reg;
                }
            }
        }
    }
    comp->check += prev_map != NULL ? prev_map[0] : 0;
}

/* The emitter: instruction descriptors written into its buffer, each group saved into a block
 * of its own (memcpy) at a block's end or when the buffer is full; then the GC info, a byte
 * buffer grown as a vector, with the live locals' bit set appended at each call. */
static NOINLINE void gc_append(compiler* comp, const void* bits, uint32_t bytes) {
    if (comp->gc_size + bytes > comp->gc_cap) {
        uint32_t cap = comp->gc_cap * 2;
        unsigned char* data;
        while (cap < comp->gc_size + bytes) cap *= 2;
        data = (unsigned char*)NEW(comp, cap, CMK_GC);
        memcpy(data, comp->gc_info, comp->gc_size);
        comp->gc_info = data;
        comp->gc_cap = cap;
    }
    memcpy(comp->gc_info + comp->gc_size, bits, bytes);
    comp->gc_size += bytes;
}

/* The emitter's state: its buffer of instruction descriptors and the groups saved so far. */
typedef struct emitter {
    unsigned char* buffer;
    size_t used;
    uint32_t count;
    uint32_t groups;
    insgroup* first;
    insgroup* last;
} emitter;

/* emitSavIG: the buffer's descriptors copied into a block of their own. */
static ALWAYS_INLINE void save_group(compiler* comp, emitter* em, const int c) {
    insgroup* ig = (insgroup*)NEW(comp, IG_SIZE(c), CMK_InstDesc);
    size_t k;
    ig->data = (unsigned char*)NEW(comp, em->used, CMK_InstDesc);
    memcpy(ig->data, em->buffer, em->used);
    ig->size = (uint32_t)em->used;
    ig->count = em->count;
    ig->num = em->groups++;
    ig->next = NULL;
    for (k = 0; k < (IG_SIZE(c) - sizeof(insgroup)) / 8; k++) ig->extra[k] = k;
    if (em->last != NULL) em->last->next = ig;
    else em->first = ig;
    em->last = ig;
    em->used = 0;
    em->count = 0;
}

static ALWAYS_INLINE void emit_body(compiler* comp, const int c) {
    size_t capacity = 50 * IDESC_CALL_SIZE(c);
    size_t live_bytes = comp->bitset_words * sizeof(uint64_t);
    uint32_t code = 0;
    const insgroup* ig;
    emitter em;
    block* b;
    memset(&em, 0, sizeof em);
    em.buffer = (unsigned char*)NEW(comp, capacity, CMK_InstDesc);
    comp->gc_cap = 64;
    comp->gc_size = 0;
    comp->gc_info = (unsigned char*)NEW(comp, comp->gc_cap, CMK_GC);
    for (b = comp->first_block; b != NULL; b = b->next) {
        stmt* st;
        for (st = b->first; st != NULL; st = st->next) {
            node* n;
            for (n = st->first; n != NULL; n = n->next) {
                size_t size = n->kind == N_CALL ? IDESC_CALL_SIZE(c) : IDESC_SIZE(c);
                uint32_t* id;
                if (em.used + size > capacity) save_group(comp, &em, c);
                id = (uint32_t*)(em.buffer + em.used);
                id[0] = n->kind | (uint32_t)n->oper << 8;
                id[1] = n->reg;
                id[2] = n->vn;
                id[3] = (uint32_t)size;
                em.used += size;
                em.count++;
                if (n->kind == N_CALL) gc_append(comp, b->live_out, (uint32_t)live_bytes);
            }
        }
        if (em.used != 0) save_group(comp, &em, c);
    }
    /* The encoder reads every group back. */
    for (ig = em.first; ig != NULL; ig = ig->next) {
        const unsigned char* p = ig->data;
        while (p < ig->data + ig->size) {
            const uint32_t* id = (const uint32_t*)p;
            code += id[0] + id[2];
            p += id[3];
        }
    }
    comp->check += code + em.groups + comp->gc_size;
}

#define INSTANCE(C, name)                                                               \
    static NOINLINE void import_##name(compiler* comp) { import_body(comp, C); }        \
    static NOINLINE void morph_##name(compiler* comp) { morph_body(comp, C); }          \
    static NOINLINE void liveness_##name(compiler* comp) { liveness_body(comp, C); }    \
    static NOINLINE void vn_##name(compiler* comp) { vn_body(comp, C); }                \
    static NOINLINE void assertion_##name(compiler* comp) { assertion_body(comp, C); }  \
    static NOINLINE void lsra_##name(compiler* comp) { lsra_body(comp, C); }            \
    static NOINLINE void emit_##name(compiler* comp) { emit_body(comp, C); }
INSTANCE(CH_BASE, base)
INSTANCE(CH_GROW, grow)
INSTANCE(CH_SHRINK, shrink)

typedef void (*phase_function)(compiler*);
#define PHASE_FUNCTIONS(name)                                                              \
    {import_##name, morph_##name,     liveness_##name, vn_##name, assertion_##name, lsra_##name, \
     emit_##name}
static const phase_function phase_run[CHANGES][PHASES] = {
    PHASE_FUNCTIONS(base), PHASE_FUNCTIONS(grow), PHASE_FUNCTIONS(shrink)};

/* ---- A method: its arena, its phases, its end ------------------------------------------------ */

static NOINLINE uint64_t compile_method(int change, long index, uint64_t seed, uint32_t stmts) {
    compiler comp;
    uint32_t p;
#ifdef PLAIN_ARENA
    arena a;
    arena_init(&a);
    memset(&comp, 0, sizeof comp);
    comp.arena = &a;
#else
    jitarena_method method = JITARENA_METHOD_INIT;
    memset(&comp, 0, sizeof comp);
    comp.arena = jitarena_create(&cfg);
    if (comp.arena == NULL) out_of_memory();
#endif
    comp.rng = seed;
    comp.nstmts = stmts;
    comp.nbuckets = 16;
    comp.buckets = (sym**)NEW(&comp, comp.nbuckets * sizeof(sym*), CMK_DebugOnly);
    memset(comp.buckets, 0, comp.nbuckets * sizeof(sym*));
    vec_init(&comp.sorted, allocator_of(comp.arena, CMK_Generic), sizeof(const char*), 4);
    for (p = 0; p < PHASES; p++) {
        begin_phase(&comp, p);
        phase_run[change][p](&comp);
        end_phase(&comp, p);
    }
#ifdef PLAIN_ARENA
    arena_destroy(&a);
#else
#ifdef FIDELITY_STATS
    for (p = 0; p < KINDS; p++) {
        stat_kind_bytes[p] += jitarena_kind_bytes(comp.arena, p);
        stat_kind_count[p] += jitarena_kind_count(comp.arena, p);
    }
#endif
    method.context = index;
    (void)jitarena_method_done(comp.arena, &method);
    jitarena_destroy(comp.arena);
#endif
    (void)index;
    return comp.check + comp.nsyms;
}

/* Statements of a method: most a few, some hundreds, one in a hundred thousands. */
static uint32_t method_statements(uint64_t r) {
    uint32_t u = (uint32_t)(r % 1000), v = (uint32_t)(r >> 20);
    if (u < 650) return 4 + v % 20;
    if (u < 900) return 24 + v % 120;
    if (u < 990) return 144 + v % 540;
    return 664 + v % 2000;
}

static uint64_t rng = 0x5DEECE66Dull;
static uint64_t next(void) {
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int main(int argc, char** argv) {
    const char* name = argc > 1 ? argv[1] : "base";
    long methods = argc > 2 ? atol(argv[2]) : 1000, m;
    int change = strcmp(name, "base") == 0     ? CH_BASE
                 : strcmp(name, "grow") == 0   ? CH_GROW
                 : strcmp(name, "shrink") == 0 ? CH_SHRINK
                                               : -1;
    uint64_t check = 0, statements = 0;
    if (change < 0 || methods < 1) {
        fputs("usage: fidelity base|grow|shrink [METHODS]\n", stderr);
        return 2;
    }
#ifndef PLAIN_ARENA
    if (jitarena_abi_version() != JITARENA_ABI_VERSION) {
        fputs("fidelity: the library's ABI is not the header's\n", stderr);
        return 1;
    }
    jitarena_config_init(&cfg);
    cfg.kind_names = kind_names;
    cfg.kind_count = KINDS;
    cfg.phase_names = phase_names;
    cfg.phase_count = PHASES;
    cfg.page_alloc = host_alloc_page;
    cfg.page_free = host_free_page;
#endif
    for (m = 0; m < methods; m++) {
        uint64_t r = next(), seed = next();
        uint32_t stmts = method_statements(r);
        statements += stmts;
        check = check * 31 + compile_method(change, m, seed, stmts);
    }
    printf("change %s methods %ld statements %llu pages %llu page_bytes %llu checksum %016llx\n",
           name, methods, (unsigned long long)statements, (unsigned long long)host_pages,
           (unsigned long long)host_bytes, (unsigned long long)check);
#ifdef FIDELITY_STATS
    printf("allocations %llu bytes %llu per_method %.0f per_allocation %.1f placement %016llx\n",
           (unsigned long long)stat_allocations, (unsigned long long)stat_bytes,
           (double)stat_allocations / (double)methods,
           (double)stat_bytes / (double)stat_allocations,
           (unsigned long long)stat_placement);
    printf("first_page_offset %llu\n", (unsigned long long)stat_first_page);
#ifndef PLAIN_ARENA
    for (m = 0; m < KINDS; m++) {
        printf("  %-18s %10llu allocations %11llu bytes (%4.1f%%)\n", kind_names[m],
               (unsigned long long)stat_kind_count[m], (unsigned long long)stat_kind_bytes[m],
               100.0 * (double)stat_kind_bytes[m] / (double)stat_bytes);
    }
#endif
#endif
    return 0;
}
