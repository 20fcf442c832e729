/* jitarena_method's initializer, from C99 and from C++11 (method_init.cpp compiles this file):
 * JITARENA_METHOD_INIT and jitarena_method_init() make a method jitarena_method_done()
 * takes, while `= {0}` is refused with a message worded for methods; the last error is
 * errno's contract (a success leaves it as it was).
 *   method_init LOG */
#include <stdio.h>
#include <string.h>

#include "jitarena.h"

static int failed = 0;

static void check(int ok, const char* what) {
    if (!ok) {
        fprintf(stderr, "method_init: FAILED: %s (%s)\n", what, jitarena_last_error_message());
        failed++;
    }
}

int main(int argc, char** argv) {
    static const char* const KINDS[] = {"ASTNode"};
    jitarena_config cfg;
    jitarena* a;
    jitarena_method by_macro = JITARENA_METHOD_INIT;
    jitarena_method by_call;
    jitarena_method zeroed;
    const char* message;
    if (argc != 2) {
        fprintf(stderr, "usage: method_init LOG\n");
        return 2;
    }
    memset(&zeroed, 0, sizeof zeroed);
    memset(&by_call, 0xAB, sizeof by_call);
    jitarena_method_init(&by_call);
    check(by_macro.struct_size == sizeof(jitarena_method), "the macro sets struct_size");
    check(by_macro.context == -1 && by_macro.name == NULL && by_macro.tier == NULL,
          "the macro leaves the method unknown");
    check(by_call.struct_size == by_macro.struct_size && by_call.context == -1 &&
              by_call.name == NULL && by_call.tier == NULL,
          "jitarena_method_init() fills as the macro does");
    check(jitarena_log_open(argv[1]) == 0, "log_open");
    jitarena_config_init(&cfg);
    cfg.kind_names = KINDS;
    cfg.kind_count = 1;
    a = jitarena_create(&cfg);
    check(a != NULL, "create");
    if (a == NULL) return 1;
    check(jitarena_alloc(a, 48, 0) != NULL, "alloc");
    by_macro.name = "Program:Main()";
    by_macro.context = 7;
    check(jitarena_method_done(a, &by_macro) == 0, "method_done with JITARENA_METHOD_INIT");
    jitarena_reset(a);
    check(jitarena_method_done(a, &by_call) == 0, "method_done with jitarena_method_init()");
    jitarena_reset(a);
    check(jitarena_method_done(a, &zeroed) == JITARENA_E_CONFIG, "= {0} is refused");
    message = jitarena_last_error_message();
    check(strstr(message, "jitarena_method has struct_size 0") != NULL &&
              strstr(message, "JITARENA_METHOD_INIT") != NULL,
          "the refusal speaks of methods");
    /* errno's contract: a later success leaves the message as it was. */
    check(jitarena_method_done(a, &by_call) == 0, "method_done after a refusal");
    check(strstr(jitarena_last_error_message(), "struct_size 0") != NULL,
          "a success leaves the last message");
    jitarena_destroy(a);
    check(jitarena_log_close() == 0, "log_close");
    printf("method_init: %s\n", failed == 0 ? "all passed" : "FAILED");
    return failed != 0;
}
