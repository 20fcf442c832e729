/* A stats log or trace that is a FIFO, driven by tests/fifo_writes.rs.
 *   fifo_writes log FIFO [handler|pending]   jitarena_log_open(FIFO), one record, then "opened";
 *                                            waits for a line on standard input (the test's
 *                                            reader has gone by then); three more records, each
 *                                            of which must fail with JITARENA_E_IO: prints
 *                                            "io <context>: <message>" for each, then "alive"
 *   fifo_writes env FIFO [handler|pending]   the same through JITARENA_LOG (set by the test)
 *   fifo_writes trace FIFO [handler|pending] the same for jitarena_trace_open(FIFO)
 *   fifo_writes noreader FIFO                jitarena_log_open(FIFO) with no reader: fails with
 *                                            JITARENA_E_IO at once ("refused: <message>")
 * "handler": the program's own SIGPIPE handler must never run for the library's writes.
 * "pending": the program blocks SIGPIPE and has one pending before the writes: it must still
 * be pending, and blocked, after them. In every case the thread's signal mask is checked to be
 * as it was after each call. Without either, SIGPIPE keeps its default action (death). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitarena.h"
#include "check.h"

static const char* const KINDS[] = {"ASTNode", "LSRA"};
static const char* const PHASES[] = {"A"};
static volatile sig_atomic_t handled = 0;

static void on_sigpipe(int sig) {
    (void)sig;
    handled++;
}

static jitarena* make_arena(void) {
    jitarena_config cfg;
    jitarena* a;
    jitarena_config_init(&cfg);
    cfg.kind_names = KINDS;
    cfg.kind_count = 2;
    cfg.phase_names = PHASES;
    cfg.phase_count = 1;
    a = jitarena_create(&cfg);
    CHECK(a != NULL);
    return a;
}

static int method(jitarena* a, int64_t context) {
    char name[64];
    jitarena_method m = JITARENA_METHOD_INIT;
    int i, rc;
    snprintf(name, sizeof name, "Fifo:M%lld()", (long long)context);
    for (i = 0; i < 5; i++) CHECK(jitarena_alloc(a, 24, (uint32_t)(i % 2)) != NULL);
    m.name = name;
    m.context = context;
    m.tier = "Tier0";
    rc = jitarena_method_done(a, &m);
    jitarena_reset(a);
    return rc;
}

static sigset_t current_mask(void) {
    sigset_t mask;
    sigemptyset(&mask);
    CHECK(pthread_sigmask(SIG_BLOCK, NULL, &mask) == 0);
    return mask;
}

/* Whether two masks block the same signals. */
static int same_mask(const sigset_t* x, const sigset_t* y) {
    int sig;
    for (sig = 1; sig < 65; sig++) {
        if (sigismember(x, sig) != sigismember(y, sig)) return 0;
    }
    return 1;
}

static int sigpipe_pending(void) {
    sigset_t pending;
    CHECK(sigpending(&pending) == 0);
    return sigismember(&pending, SIGPIPE) == 1;
}

int main(int argc, char** argv) {
    const char* mode;
    const char* fifo;
    const char* how;
    jitarena* a = NULL;
    sigset_t before, after;
    char line[16];
    int64_t c;
    int rc;
    CHECK(argc >= 3);
    mode = argv[1];
    fifo = argv[2];
    how = argc > 3 ? argv[3] : "";
    setvbuf(stdout, NULL, _IONBF, 0);
    if (strcmp(how, "handler") == 0 || strcmp(how, "pending") == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_sigpipe;
        sigemptyset(&sa.sa_mask);
        CHECK(sigaction(SIGPIPE, &sa, NULL) == 0);
    }
    if (strcmp(how, "pending") == 0) {
        sigset_t pipe;
        sigemptyset(&pipe);
        sigaddset(&pipe, SIGPIPE);
        CHECK(pthread_sigmask(SIG_BLOCK, &pipe, NULL) == 0);
        CHECK(pthread_kill(pthread_self(), SIGPIPE) == 0);
        CHECK(sigpipe_pending());
    }
    before = current_mask();
    if (strcmp(mode, "noreader") == 0) {
        rc = jitarena_log_open(fifo);
        CHECK(rc == JITARENA_E_IO);
        printf("refused: %s\n", jitarena_last_error_message());
        return 0;
    }
    if (strcmp(mode, "log") == 0) {
        CHECK(jitarena_log_open(fifo) == 0);
    } else if (strcmp(mode, "trace") == 0) {
        CHECK(jitarena_trace_open(fifo) == 0);
    } else {
        CHECK(strcmp(mode, "env") == 0);
    }
    a = make_arena();
    CHECK(method(a, 0) == 0);
    printf("opened\n");
    CHECK(fgets(line, sizeof line, stdin) != NULL);
    for (c = 1; c <= 3; c++) {
        rc = method(a, c);
        after = current_mask();
        CHECK(same_mask(&before, &after));
        CHECK(rc == JITARENA_E_IO);
        printf("io %lld: %s\n", (long long)c, jitarena_last_error_message());
    }
    CHECK(handled == 0);
    if (strcmp(how, "pending") == 0) {
        sigset_t pipe;
        CHECK(sigpipe_pending()); /* the program's own, still there */
        sigemptyset(&pipe);
        sigaddset(&pipe, SIGPIPE);
        CHECK(pthread_sigmask(SIG_UNBLOCK, &pipe, NULL) == 0);
        CHECK(handled == 1); /* delivered once unblocked, to the program's handler */
    } else {
        CHECK(!sigpipe_pending());
    }
    jitarena_destroy(a);
    printf("alive\n");
    return 0;
}
