/* The cost of jitarena_method_done per method, with no log and with a stats log open, on
 * JIT-like methods (55 kinds, about 30 of them used, 10 phases). Counted by callgrind
 * (scripts/callgrind.sh, --toggle-collect=jitarena_method_done, or =jitarena_phase_mark_slow
 * for the out-of-line part of a phase switch); also prints wall time. "-kbp" turns
 * kinds_by_phase on.
 *   method_done nolog|log|nolog-kbp|log-kbp [LOG_PATH] */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "jitarena.h"

#define METHODS 20000
#define KINDS 55
#define PHASES 10

static const char* kind_names[KINDS];
static char kind_text[KINDS][16];
static const char* const phase_names[PHASES] = {"Importer", "Morph",    "FlowGraph", "SSA",     "ValueNumbering",
                                                "Optimizer", "Lowering", "LSRA",      "Codegen", "Emit"};

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
    jitarena_config cfg;
    jitarena* a;
    int m, k, p;
    double spent = 0;
    char name[96];
    const char* mode = argc > 1 ? argv[1] : "nolog";
    int with_log = strncmp(mode, "log", 3) == 0;
    int kinds_by_phase = strstr(mode, "-kbp") != NULL;
    for (k = 0; k < KINDS; k++) {
        snprintf(kind_text[k], sizeof kind_text[k], "Kind%d", k);
        kind_names[k] = kind_text[k];
    }
    if (with_log && jitarena_log_open(argc > 2 ? argv[2] : "method_done.jas") != 0) {
        fprintf(stderr, "method_done: %s\n", jitarena_last_error_message());
        return 2;
    }
    jitarena_config_init(&cfg);
    cfg.kind_names = kind_names;
    cfg.kind_count = KINDS;
    cfg.phase_names = phase_names;
    cfg.phase_count = PHASES;
    cfg.kinds_by_phase = (uint32_t)kinds_by_phase;
    a = jitarena_create(&cfg);
    if (a == NULL) {
        fprintf(stderr, "method_done: %s\n", jitarena_last_error_message());
        return 2;
    }
    for (m = 0; m < METHODS; m++) {
        jitarena_method method = {sizeof(jitarena_method), name, m, (m % 2) ? "FullOpts" : "MinOpts", 0, 0};
        double t0;
        snprintf(name, sizeof name, "System.Collections.Generic.List`1[int]:Method%d(int)", m);
        for (p = 0; p < PHASES; p++) {
            jitarena_set_phase(a, (uint32_t)p);
            for (k = p; k < KINDS; k += 2) {
                (void)jitarena_alloc(a, (size_t)(16 + (m + k) % 200), (uint32_t)k);
            }
        }
        t0 = now();
        if (jitarena_method_done(a, &method) != 0) return 3;
        spent += now() - t0;
        jitarena_reset(a);
    }
    jitarena_destroy(a);
    if (with_log) jitarena_log_close();
    printf("%s: %.0f ns per jitarena_method_done (wall)\n", mode, spent / METHODS * 1e9);
    return 0;
}
