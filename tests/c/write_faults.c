/* Faults while writing the stats log, driven by tests/write_faults.rs, which reads the logs back.
 *   write_faults enospc LOG     the log's descriptor points at /dev/full for two records
 *   write_faults devfull        JITARENA_LOG=/dev/full: every record must fail
 *   write_faults accept         JITARENA_LOG names a device or a FIFO: every record must pass
 *   write_faults fsize LOG      RLIMIT_FSIZE cuts records short (SIGXFSZ ignored)
 *   write_faults fork LOG DIR   forks while 3 threads write; children must not hang or write
 *                               to LOG (with %p in LOG, each child writes its own file)
 *   write_faults threads LOG N  4 threads write until killed (-9); "ready" after N records
 * Prints "ok <context>" for every record jitarena_method_done accepted, "parent <n>" etc. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jitarena.h"
#include "check.h"

static const char* const KINDS_A[] = {"ASTNode", "LSRA", "Generic"};
static const char* const KINDS_B[] = {"BasicBlock", "ValueNumber"};
static const char* const PHASES[] = {"A", "B"};

static jitarena* make_arena(const char* const* kinds, uint32_t count) {
    jitarena_config cfg;
    jitarena* a;
    jitarena_config_init(&cfg);
    cfg.kind_names = kinds;
    cfg.kind_count = count;
    cfg.phase_names = PHASES;
    cfg.phase_count = 2;
    a = jitarena_create(&cfg);
    CHECK(a != NULL);
    return a;
}

/* Thread t's method j: a name of varying length, and allocations that encode t and j (the
 * test recomputes them from the record's context). */
static int method(jitarena* a, int t, int64_t j, const char* tier) {
    static const char pad[] = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";
    char name[4096];
    int n = snprintf(name, sizeof name, "T%d:M%lld:", t, (long long)j);
    int len = (int)((j * 37) % 3000), i;
    jitarena_method m;
    for (i = 0; i < len && n + 1 < (int)sizeof name; i++) name[n++] = pad[i % 64];
    name[n] = 0;
    jitarena_set_phase(a, (uint32_t)(j % 2));
    for (i = 0; i < (int)(j % 50) + 1; i++) CHECK(jitarena_alloc(a, 8u * (size_t)(t + 1), (uint32_t)(t % 2)) != NULL);
    jitarena_method_init(&m);
    m.name = name;
    m.context = (int64_t)t * 1000000 + j;
    m.tier = tier;
    n = jitarena_method_done(a, &m);
    jitarena_reset(a);
    return n;
}

/* The descriptor the library opened for `path`. */
static int find_fd(const char* path) {
    char want[PATH_MAX], link[PATH_MAX], entry[320];
    DIR* d = opendir("/proc/self/fd");
    struct dirent* e;
    int found = -1;
    CHECK(realpath(path, want) != NULL);
    CHECK(d != NULL);
    while ((e = readdir(d)) != NULL) {
        ssize_t n;
        snprintf(entry, sizeof entry, "/proc/self/fd/%s", e->d_name);
        n = readlink(entry, link, sizeof link - 1);
        if (n <= 0) continue;
        link[n] = 0;
        if (strcmp(link, want) == 0) found = atoi(e->d_name);
    }
    closedir(d);
    CHECK(found >= 0);
    return found;
}

static int enospc(const char* log) {
    jitarena *a = make_arena(KINDS_A, 3), *b;
    int fd, saved, full, i;
    CHECK(jitarena_log_open(log) == 0);
    for (i = 0; i < 3; i++) CHECK(method(a, 0, i, "MinOpts") == 0);
    fd = find_fd(log);
    saved = dup(fd);
    full = open("/dev/full", O_WRONLY);
    CHECK(saved >= 0 && full >= 0);
    CHECK(dup2(full, fd) == fd);
    /* A new schema and a new tier: their frames never reach the file. */
    b = make_arena(KINDS_B, 2);
    CHECK(method(b, 1, 3, "Tier1") == JITARENA_E_IO);
    CHECK(strstr(jitarena_last_error_message(), log) != NULL);
    CHECK(method(a, 0, 4, "Tier1") == JITARENA_E_IO);
    CHECK(dup2(saved, fd) == fd);
    /* The disk has room again: the same schema and tier are written in full this time. */
    CHECK(method(b, 1, 5, "Tier1") == 0);
    CHECK(method(a, 0, 6, "Tier1") == 0);
    CHECK(method(a, 0, 7, "MinOpts") == 0);
    CHECK(jitarena_log_close() == 0);
    jitarena_destroy(a);
    jitarena_destroy(b);
    return 0;
}

static int devfull(void) {
    jitarena* a = make_arena(KINDS_A, 3);
    int i;
    for (i = 0; i < 4; i++) {
        CHECK(method(a, 0, i, "MinOpts") == JITARENA_E_IO);
        CHECK(strstr(jitarena_last_error_message(), "/dev/full") != NULL);
    }
    jitarena_destroy(a);
    return 0;
}

static int accept(void) {
    jitarena* a = make_arena(KINDS_A, 3);
    int i;
    for (i = 0; i < 4; i++) {
        CHECK(method(a, 0, i, "MinOpts") == JITARENA_OK);
    }
    jitarena_destroy(a);
    CHECK(jitarena_log_close() == JITARENA_OK);
    return 0;
}

static int fsize(const char* log) {
    jitarena* a = make_arena(KINDS_A, 3);
    struct rlimit lim, old;
    struct stat st;
    int i, rc, failed = 0;
    int64_t j = 0;
    signal(SIGXFSZ, SIG_IGN);
    CHECK(jitarena_log_open(log) == 0);
    for (i = 0; i < 5; i++, j++) { /* short names */
        CHECK(method(a, 0, j * 3000, "MinOpts") == 0);
        printf("ok %lld\n", (long long)(j * 3000));
    }
    CHECK(stat(log, &st) == 0);
    CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
    lim = old;
    lim.rlim_cur = (rlim_t)st.st_size + 100;
    CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
    /* A long name and a new tier: 100 bytes of it fit, then EFBIG. */
    CHECK(method(a, 0, 2999, "Big") == JITARENA_E_IO);
    CHECK(strstr(jitarena_last_error_message(), log) != NULL);
    /* Short records with that tier fit after the torn one is removed, until the limit. */
    for (i = 0; i < 20 && !failed; i++, j++) {
        rc = method(a, 0, j * 3000, "Big");
        if (rc == 0) printf("ok %lld\n", (long long)(j * 3000));
        else failed = 1;
    }
    CHECK(failed && i > 1);
    CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
    CHECK(method(a, 0, 1, "Big") == 0);
    CHECK(method(a, 0, 2, "Tier1") == 0);
    printf("ok 1\nok 2\n");
    CHECK(jitarena_log_close() == 0);
    jitarena_destroy(a);
    return 0;
}

static volatile int stop_threads = 0;
static int64_t written[4];
static int64_t limit_ready = 0;

static void* writer(void* arg) {
    int t = (int)(intptr_t)arg;
    jitarena* a = make_arena(KINDS_A, 3);
    int64_t j;
    char tier[32];
    for (j = 0; !__atomic_load_n(&stop_threads, __ATOMIC_ACQUIRE); j++) {
        snprintf(tier, sizeof tier, "P%d-%lld", t, (long long)(j / 64)); /* new tiers keep coming */
        if (method(a, t, j, tier) == 0) __atomic_add_fetch(&written[t], 1, __ATOMIC_RELEASE);
    }
    jitarena_destroy(a);
    return NULL;
}

static int forks(const char* log, const char* dir) {
    pthread_t th[3];
    int i, t;
    int64_t total = 0;
    int per_process = strstr(log, "%p") != NULL;
    CHECK(jitarena_log_open(log) == 0);
    for (t = 0; t < 3; t++) CHECK(pthread_create(&th[t], NULL, writer, (void*)(intptr_t)t) == 0);
    for (i = 0; i < 40; i++) {
        struct timespec pause = {0, 2000000};
        int status = 0;
        pid_t pid;
        nanosleep(&pause, NULL);
        fflush(stdout);
        pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            char own[PATH_MAX];
            jitarena* a;
            alarm(20); /* a deadlocked child dies of SIGALRM, which the parent reports */
            a = make_arena(KINDS_B, 2);
            if (per_process) {
                /* The log's name has %p: this child gets a file of its own. */
                if (method(a, 3, i, "ChildTier") != 0) _exit(8);
            } else {
                if (method(a, 3, i, "ChildTier") != JITARENA_E_STATE) _exit(3);
                if (strstr(jitarena_last_error_message(), "fork") == NULL) _exit(4);
                snprintf(own, sizeof own, "%s/child-%%p.jas", dir);
                if (jitarena_log_open(own) != 0) _exit(5);
                if (method(a, 3, i, "ChildTier") != 0) _exit(6);
            }
            if (jitarena_log_close() != 0) _exit(7);
            jitarena_destroy(a);
            _exit(0);
        }
        CHECK(waitpid(pid, &status, 0) == pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "child %d: %s %d\n", (int)pid,
                    WIFEXITED(status) ? "exit" : "signal",
                    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
            return 1;
        }
    }
    __atomic_store_n(&stop_threads, 1, __ATOMIC_RELEASE);
    for (t = 0; t < 3; t++) CHECK(pthread_join(th[t], NULL) == 0);
    CHECK(jitarena_log_close() == 0);
    for (t = 0; t < 3; t++) total += written[t];
    printf("parent %lld\n", (long long)total);
    return 0;
}

static void* until_killed(void* arg) {
    int t = (int)(intptr_t)arg;
    jitarena* a = make_arena(KINDS_A, 3);
    int64_t j;
    for (j = 0;; j++) {
        if (method(a, t, j, j % 3 ? "FullOpts" : "MinOpts") == 0 &&
            __atomic_add_fetch(&written[0], 1, __ATOMIC_ACQ_REL) == limit_ready) {
            printf("ready\n");
            fflush(stdout);
        }
    }
    return NULL;
}

static int threads(const char* log, const char* n) {
    pthread_t th[4];
    int t;
    limit_ready = atoll(n);
    alarm(60); /* the test kills it long before, unless it hangs before "ready" */
    CHECK(jitarena_log_open(log) == 0);
    for (t = 0; t < 4; t++) CHECK(pthread_create(&th[t], NULL, until_killed, (void*)(intptr_t)t) == 0);
    for (;;) pause();
    return 0;
}

int main(int argc, char** argv) {
    if (argc == 3 && strcmp(argv[1], "enospc") == 0) return enospc(argv[2]);
    if (argc == 2 && strcmp(argv[1], "devfull") == 0) return devfull();
    if (argc == 2 && strcmp(argv[1], "accept") == 0) return accept();
    if (argc == 3 && strcmp(argv[1], "fsize") == 0) return fsize(argv[2]);
    if (argc == 4 && strcmp(argv[1], "fork") == 0) return forks(argv[2], argv[3]);
    if (argc == 4 && strcmp(argv[1], "threads") == 0) return threads(argv[2], argv[3]);
    fprintf(stderr, "usage: write_faults enospc|devfull|accept|fsize|fork|threads ...\n");
    return 2;
}
