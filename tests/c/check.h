/* A minimal check macro for the C and C++ test programs: counts checks, stops at the first
 * failure with its file, line and expression. */
#ifndef JITARENA_TEST_CHECK_H
#define JITARENA_TEST_CHECK_H
#include <stdio.h>
#include <stdlib.h>

static int checks_passed = 0;
#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                             \
        }                                                                        \
        checks_passed++;                                                         \
    } while (0)
#endif
