/* A JIT whose compiles fail now and then: each failed context is noted in the stats log with
 * jitarena_method.failed, in place of a record; a jitarena_method of the size before that field
 * (an older header) is accepted and reads as not failed. argv[1]: the log's path. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "jitarena.h"

static const char* const KINDS[] = {"ASTNode", "LSRA"};

int main(int argc, char** argv) {
    jitarena_config cfg;
    int i;
    if (argc < 2 || jitarena_log_open(argv[1]) != 0) {
        fprintf(stderr, "log: %s\n", jitarena_last_error_message());
        return 1;
    }
    jitarena_config_init(&cfg);
    cfg.kind_names = KINDS;
    cfg.kind_count = 2;
    for (i = 0; i < 6; i++) {
        jitarena* a = jitarena_create(&cfg);
        jitarena_method m = JITARENA_METHOD_INIT;
        if (a == NULL || jitarena_alloc(a, 40, (uint32_t)i % 2) == NULL) return 1;
        m.name = "Ns.C:M()";
        m.context = i + 1;
        m.tier = i % 2 ? "MinOpts" : "FullOpts";
        m.failed = i == 2 || i == 4; /* contexts 3 and 5 fail */
        if (i == 5) m.struct_size = offsetof(jitarena_method, failed); /* an older header's */
        if (jitarena_method_done(a, &m) != 0) {
            fprintf(stderr, "method_done: %s\n", jitarena_last_error_message());
            return 1;
        }
        jitarena_destroy(a);
    }
    return jitarena_log_close() == 0 ? 0 : 1;
}
