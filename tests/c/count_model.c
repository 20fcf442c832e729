/* Counting against a model, through every C path: the inline jitarena_alloc (uint32 kinds,
 * clamped), the inline jitarena_alloc_slot (any uint8 slot), the out-of-line
 * jitarena_alloc_slow; random sizes (0, small, around and past the quarter page, several
 * pages, and sizes too large to serve, which fail and count nothing), random kinds in and out
 * of range (>= kind_count, 254, 255, 256, UINT32_MAX), phase switches (out-of-range phases
 * too) and resets. At each checkpoint every reader must equal the model: per-kind bytes and
 * counts, the invalid-kind bucket, totals, per-phase bytes and, with kinds_by_phase on, bytes
 * per (phase, kind), whose sums over kinds and over phases must equal the phase and kind
 * totals. Run by tests/c_api.rs:  count_model SEEDS */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitarena.h"
#include "check.h"

#define MAX_NAMES 255u
#define PAGE 4096u

static uint64_t rng_state;
static uint64_t next_random(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static uint64_t below(uint64_t n) { return next_random() % n; }

static char name_text[MAX_NAMES][8];
static const char* names[MAX_NAMES];

/* The model: buckets 0..kinds-1 and `kinds` (invalid); phases 0..phases-1 and `phases`. */
static uint32_t kinds, phases, phase;
static uint64_t bytes[MAX_NAMES + 1], count[MAX_NAMES + 1];
static uint64_t phase_bytes[17];
static uint64_t phase_kind[17][MAX_NAMES + 1];

static void model_clear(void) {
    memset(bytes, 0, sizeof bytes);
    memset(count, 0, sizeof count);
    memset(phase_bytes, 0, sizeof phase_bytes);
    memset(phase_kind, 0, sizeof phase_kind);
    phase = phases;
}

static uint32_t bucket_of(uint32_t kind) { return kind < kinds ? kind : kinds; }

static size_t random_size(void) {
    switch (below(10)) {
    case 0: return 0;
    case 1: return PAGE / 4 - 16 + (size_t)below(33); /* around the quarter page */
    case 2: return PAGE / 4 + (size_t)below(3 * PAGE); /* past it: a page of its own */
    case 3: return below(2) ? (size_t)-1 : ((size_t)1 << (sizeof(size_t) * 8 - 2)); /* fails */
    default: return 1 + (size_t)below(200);
    }
}

static uint32_t random_kind(void) {
    static const uint32_t odd[] = {254u, 255u, 256u, 0xFFFFFFFFu, 1000u};
    switch (below(8)) {
    case 0: return odd[below(5)];
    case 1: return kinds + (uint32_t)below(300); /* >= kind_count */
    default: return kinds == 0 ? 0 : (uint32_t)below(kinds);
    }
}

static void check_all(jitarena* a, int by_phase) {
    uint64_t total = 0, total_count = 0, phase_total = 0;
    uint32_t k, p;
    for (k = 0; k <= kinds; k++) {
        uint32_t id = k < kinds ? k : JITARENA_INVALID_KIND;
        CHECK(jitarena_kind_bytes(a, id) == bytes[k]);
        CHECK(jitarena_kind_count(a, id) == count[k]);
        total += bytes[k];
        total_count += count[k];
    }
    if (kinds < JITARENA_MAX_KINDS) CHECK(jitarena_kind_bytes(a, kinds) == 0); /* no such kind */
    CHECK(jitarena_total_bytes(a) == total);
    CHECK(jitarena_total_count(a) == total_count);
    for (p = 0; p <= phases; p++) {
        uint32_t pid = p < phases ? p : JITARENA_NO_PHASE;
        uint64_t over_kinds = 0;
        CHECK(jitarena_phase_bytes(a, pid) == phase_bytes[p]);
        phase_total += phase_bytes[p];
        for (k = 0; k <= kinds; k++) {
            uint32_t id = k < kinds ? k : JITARENA_INVALID_KIND;
            uint64_t got = jitarena_phase_kind_bytes(a, pid, id);
            CHECK(got == (by_phase ? phase_kind[p][k] : 0));
            over_kinds += got;
        }
        if (by_phase) CHECK(over_kinds == phase_bytes[p]);
    }
    CHECK(phase_total == (by_phase ? total : jitarena_used_bytes(a)));
    if (by_phase) {
        for (k = 0; k <= kinds; k++) {
            uint32_t id = k < kinds ? k : JITARENA_INVALID_KIND;
            uint64_t over_phases = 0;
            for (p = 0; p <= phases; p++) {
                over_phases += jitarena_phase_kind_bytes(a, p < phases ? p : JITARENA_NO_PHASE, id);
            }
            CHECK(over_phases == bytes[k]);
        }
    }
}

static void run(uint64_t seed) {
    jitarena_config cfg;
    jitarena* a;
    int by_phase, old_size, i;
    static const char* const phase_names[16] = {"P0", "P1", "P2", "P3", "P4", "P5", "P6", "P7",
                                                "P8", "P9", "P10", "P11", "P12", "P13", "P14", "P15"};
    rng_state = seed * 0x2545F4914F6CDD1Dull + 1;
    kinds = below(4) == 0 ? (uint32_t)below(MAX_NAMES + 1) : 1 + (uint32_t)below(60);
    phases = (uint32_t)below(17);
    by_phase = (int)below(2);
    old_size = !by_phase && below(2); /* a config from before kinds_by_phase: the field off */
    jitarena_config_init(&cfg);
    cfg.kind_names = names;
    cfg.kind_count = kinds;
    cfg.phase_names = phases ? phase_names : NULL;
    cfg.phase_count = phases;
    cfg.page_size = PAGE;
    cfg.kinds_by_phase = (uint32_t)by_phase;
    if (old_size) {
        cfg.struct_size = offsetof(jitarena_config, reserved);
        cfg.kinds_by_phase = 1; /* past the old struct's end: must not be read */
    }
    a = jitarena_create(&cfg);
    CHECK(a != NULL);
    model_clear();
    for (i = 0; i < 4000; i++) {
        uint32_t op = (uint32_t)below(100), kind = random_kind(), b;
        size_t size = random_size();
        void* p;
        if (op < 3) {
            uint32_t next = below(4) == 0 ? (uint32_t)below(1u << 31) : (uint32_t)below(phases + 1u);
            jitarena_set_phase(a, next);
            phase = next < phases ? next : phases;
            continue;
        }
        if (op == 3) {
            check_all(a, by_phase);
            jitarena_reset(a);
            model_clear();
            continue;
        }
        if (op < 40) {
            p = jitarena_alloc(a, size, kind);
            b = bucket_of(kind);
        } else if (op < 80) {
            jitarena_kind_slot slot = below(3) == 0 ? (jitarena_kind_slot)below(256)
                                                    : jitarena_kind_slot_of(kind);
            p = jitarena_alloc_slot(a, size, slot);
            b = bucket_of(slot);
        } else {
            p = jitarena_alloc_slow(a, size, kind);
            b = bucket_of(kind);
        }
        if (size > (size_t)PTRDIFF_MAX / 2) {
            CHECK(p == NULL);
            CHECK(jitarena_failure(a) == JITARENA_E_SIZE_OVERFLOW);
            continue;
        }
        CHECK(p != NULL);
        if (size > 0) ((unsigned char*)p)[size - 1] = (unsigned char)i;
        bytes[b] += size;
        count[b] += 1;
        /* Phases count bytes used (rounded up to 8), or requested with kinds by phase on. */
        phase_bytes[phase] += by_phase ? size : (size == 0 ? JITARENA_ALIGN : (size + JITARENA_ALIGN - 1) / JITARENA_ALIGN * JITARENA_ALIGN);
        phase_kind[phase][b] += size;
        if (i % 97 == 0) check_all(a, by_phase);
    }
    check_all(a, by_phase);
    jitarena_destroy(a);
}

int main(int argc, char** argv) {
    uint64_t seeds = argc > 1 ? strtoull(argv[1], NULL, 10) : 20, s;
    uint32_t k;
    for (k = 0; k < MAX_NAMES; k++) {
        snprintf(name_text[k], sizeof name_text[k], "K%u", k);
        names[k] = name_text[k];
    }
    for (s = 0; s < seeds; s++) run(s);
    printf("count_model: %d passed, 0 failed\n", checks_passed);
    return 0;
}
