/* Compiles a few deterministic "methods" and ends each with jitarena_method_done. Run with
 * JITARENA_LOG and JITARENA_TRACE set: the log and the trace it records are then compared by
 * tests/method_log.rs (replaying the trace must give the logged counters). Also checks the
 * process-wide aggregate. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "jitarena.h"
#include "check.h"

static const char* const KINDS[] = {"ASTNode", "BasicBlock", "LSRA", "Generic"};
static const char* const PHASES[] = {"Import", "Morph", "RegAlloc"};

int main(void) {
    jitarena_config cfg;
    jitarena* a;
    int m, i;
    uint64_t total = 0, lsra = 0;
    uint32_t seed = 12345u;
    jitarena_config_init(&cfg);
    cfg.kind_names = KINDS;
    cfg.kind_count = 4;
    cfg.phase_names = PHASES;
    cfg.phase_count = 3;
    a = jitarena_create(&cfg);
    CHECK(a != NULL);
    /* The aggregate is off by default; on from here. */
    CHECK(jitarena_aggregate_enable(1) == 0);
    for (m = 0; m < 25; m++) {
        char name[64];
        jitarena_method method;
        jitarena_method_init(&method);
        method.name = name;
        method.context = m;
        method.tier = m % 3 ? "FullOpts" : "MinOpts";
        snprintf(name, sizeof name, "Rec:M%d(int)", m);
        for (i = 0; i < 300 * (m % 5 + 1); i++) {
            size_t size;
            uint32_t kind;
            seed = seed * 1103515245u + 12345u;
            size = (seed >> 8) % 200u;
            kind = (seed >> 4) % 5u; /* kind 4 is invalid on purpose */
            if (i % 100 == 0) jitarena_set_phase(a, (uint32_t)(i / 100) % 4u); /* 3: no phase */
            if (i % 250 == 0) size = 70000; /* a large request */
            CHECK(jitarena_alloc(a, size, kind) != NULL);
            total += size;
            if (kind == 2) lsra += size;
        }
        CHECK(jitarena_method_done(a, &method) == 0);
        jitarena_reset(a);
    }
    CHECK(jitarena_method_done(a, NULL) == 0); /* an unknown, empty method */
    jitarena_destroy(a);
    CHECK(jitarena_method_done(NULL, NULL) == JITARENA_E_NULL);
    CHECK(jitarena_aggregate_methods() == 26);
    CHECK(jitarena_aggregate_total_bytes() == total);
    CHECK(jitarena_aggregate_kind_bytes("LSRA") == lsra);
    CHECK(jitarena_aggregate_kind_count("(invalid kind)") > 0);
    CHECK(jitarena_aggregate_kind_bytes("NoSuchKind") == 0);
    CHECK(jitarena_aggregate_kind_bytes(NULL) == 0);
    jitarena_aggregate_reset();
    CHECK(jitarena_aggregate_methods() == 0);
    CHECK(jitarena_log_close() == 0);
    CHECK(jitarena_log_close() == JITARENA_E_STATE);
    CHECK(jitarena_trace_close() == 0);
    /* Off again: a method ended now is not folded in. */
    CHECK(jitarena_aggregate_enable(0) == 1);
    a = jitarena_create(&cfg);
    CHECK(a != NULL);
    CHECK(jitarena_alloc(a, 40, 0) != NULL);
    CHECK(jitarena_method_done(a, NULL) == 0);
    CHECK(jitarena_aggregate_methods() == 0);
    CHECK(jitarena_aggregate_enable(0) == 0);
    jitarena_destroy(a);
    CHECK(jitarena_log_open(NULL) == JITARENA_E_NULL);
    CHECK(jitarena_log_open("/nonexistent-dir/x.jas") == JITARENA_E_IO);
    CHECK(strstr(jitarena_last_error_message(), "/nonexistent-dir/x.jas") != NULL);
    printf("record_test: %d passed, 0 failed\n", checks_passed);
    return 0;
}
