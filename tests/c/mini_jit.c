/* A stand-in JIT, built twice as a shared library that links its own copy of libjitarena.a
 * (baseline: HEAVY 0; diff: HEAVY 1, whose "LSRA" structure is twice as large). The host in
 * two_jits_host.c loads both into one process, as the .NET JIT's replay tool does. Given "-"
 * as its log, the JIT opens none: its copy of the library opens JITARENA_LOG at the first
 * method. */
#include <stdint.h>
#include <stdio.h>

#include "jitarena.h"

#ifndef HEAVY
#define HEAVY 0
#endif

static const char* const KINDS[] = {"ASTNode", "BasicBlock", "LSRA"};
static const char* const PHASES[] = {"Import", "RegAlloc"};

__attribute__((visibility("default"))) int jit_compile(const char* log_path, int methods);

int jit_compile(const char* log_path, int methods) {
    jitarena_config cfg;
    jitarena* a;
    int m, i, rc;
    int own_log = log_path[0] != '-';
    if (own_log && (rc = jitarena_log_open(log_path)) != 0) {
        fprintf(stderr, "mini_jit: %s\n", jitarena_last_error_message());
        return rc;
    }
    jitarena_config_init(&cfg);
    cfg.kind_names = KINDS;
    cfg.kind_count = 3;
    cfg.phase_names = PHASES;
    cfg.phase_count = 2;
    a = jitarena_create(&cfg);
    if (a == NULL) return -1;
    for (m = 0; m < methods; m++) {
        char name[64];
        jitarena_method method = {sizeof(jitarena_method), name, m, (m % 2) ? "FullOpts" : "MinOpts", 0, 0};
        snprintf(name, sizeof name, "Mini:Method%d()", m);
        jitarena_set_phase(a, 0);
        for (i = 0; i < 100 + m; i++) {
            if (jitarena_alloc(a, 48, 0) == NULL) return -2;
        }
        (void)jitarena_alloc(a, 176, 1);
        jitarena_set_phase(a, 1);
        for (i = 0; i < 10 * (m % 7 + 1); i++) {
            if (jitarena_alloc(a, HEAVY ? 128 : 64, 2) == NULL) return -2;
        }
        if ((rc = jitarena_method_done(a, &method)) != 0) {
            fprintf(stderr, "mini_jit: %s\n", jitarena_last_error_message());
            return rc;
        }
        jitarena_reset(a);
    }
    jitarena_destroy(a);
    return own_log ? jitarena_log_close() : 0;
}
