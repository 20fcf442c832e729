/* Methods recorded in parts, driven by tools/tests/trace_parts.rs, which sets JITARENA_TRACE
 * and JITARENA_LOG. Pages come from one static buffer (the host's page_alloc), so that the
 * program's resident size is the library's own: the trace's buffers, not the arena's pages.
 *   trace_parts long N      one method of N iterations (context 1); prints "peak <bytes>", the
 *                           peak resident size (getrusage) after the method's end
 *   trace_parts two N       two threads at once, each with its arena, a method of N iterations
 *                           (contexts 1 and 2), their parts interleaved in the trace
 *   trace_parts end N       a small method (context 1), then one of N iterations (context 2)
 *   trace_parts die N       the same, but the process ends (_exit) before the long method's end
 * An iteration switches to a child phase and back (two events), allocating every 16th; every
 * 2M iterations, a run of 70,000 allocations (more than a part holds) ends with a child phase
 * ended inside its parent, never begun: the run's bytes are the child's. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "jitarena.h"

static const char* const KINDS[] = {"ASTNode", "LSRA", "Generic"};
static const char* const PHASES[] = {"Import", "Morph", "Inline"};

/* Every page is this buffer: the program never reads or writes what it allocates. */
static unsigned char page[1 << 20];

static void* page_alloc(void* host, size_t size) {
    (void)host;
    return size <= sizeof page ? page : NULL;
}

static void page_free(void* host, void* p, size_t size) {
    (void)host;
    (void)p;
    (void)size;
}

static jitarena* make_arena(void) {
    jitarena_config cfg;
    jitarena* a;
    jitarena_config_init(&cfg);
    cfg.kind_names = KINDS;
    cfg.kind_count = 3;
    cfg.phase_names = PHASES;
    cfg.phase_count = 3;
    cfg.page_alloc = page_alloc;
    cfg.page_free = page_free;
    a = jitarena_create(&cfg);
    if (!a) {
        fprintf(stderr, "create: %s\n", jitarena_last_error_message());
        exit(1);
    }
    return a;
}

static void alloc(jitarena* a, size_t size, uint32_t kind) {
    if (!jitarena_alloc(a, size, kind)) {
        fprintf(stderr, "alloc: %s\n", jitarena_last_error_message());
        exit(1);
    }
}

/* The events of one method of n iterations. */
static void events(jitarena* a, long n, long seed) {
    long i;
    int k;
    jitarena_phase_begin(a, 0);
    for (i = 0; i < n; i++) {
        if (i % 16 == 0)
            alloc(a, 8 + (size_t)((i + seed) % 40), (uint32_t)(i % 3));
        jitarena_phase_begin(a, 1);
        if (i % 16 == 8)
            alloc(a, 16, 1);
        jitarena_phase_end(a, 1);
        if (i % 2000000 == 1000000) {
            for (k = 0; k < 70000; k++)
                alloc(a, 24, 2);
            jitarena_phase_end(a, 2);
        }
    }
    jitarena_phase_end(a, 0);
}

static void done(jitarena* a, long context, const char* name) {
    jitarena_method m = JITARENA_METHOD_INIT;
    m.name = name;
    m.context = context;
    m.tier = "FullOpts";
    if (jitarena_method_done(a, &m) != 0) {
        fprintf(stderr, "method_done: %s\n", jitarena_last_error_message());
        exit(1);
    }
    jitarena_reset(a);
}

struct job {
    long n;
    long context;
};

static void* thread_method(void* arg) {
    struct job* job = arg;
    jitarena* a = make_arena();
    events(a, job->n, job->context);
    done(a, job->context, job->context == 1 ? "Ns.A:first()" : "Ns.B:second()");
    jitarena_destroy(a);
    return NULL;
}

int main(int argc, char** argv) {
    long n;
    jitarena* a;
    if (argc != 3) {
        fprintf(stderr, "usage: trace_parts long|two|end|die N\n");
        return 2;
    }
    n = atol(argv[2]);
    if (strcmp(argv[1], "two") == 0) {
        pthread_t t[2];
        struct job jobs[2] = {{n, 1}, {n, 2}};
        int i;
        for (i = 0; i < 2; i++)
            pthread_create(&t[i], NULL, thread_method, &jobs[i]);
        for (i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
        return 0;
    }
    a = make_arena();
    if (strcmp(argv[1], "long") == 0) {
        struct rusage usage;
        events(a, n, 0);
        done(a, 1, "Ns.Big:method()");
        getrusage(RUSAGE_SELF, &usage);
        printf("peak %ld\n", usage.ru_maxrss * 1024L);
    } else {
        events(a, 10, 0);
        done(a, 1, "Ns.Small:method()");
        events(a, n, 1);
        if (strcmp(argv[1], "die") == 0) {
            fflush(stdout);
            _exit(0);
        }
        done(a, 2, "Ns.Long:method()");
    }
    jitarena_destroy(a);
    return 0;
}
