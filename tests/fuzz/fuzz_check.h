/* What every fuzz target checks beyond "no crash": a failed CHECK aborts, so
 * libFuzzer reports it (and keeps the input) like a crash. */
#ifndef FUZZ_CHECK_H
#define FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                          \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);         \
            abort();                                                                         \
        }                                                                                    \
    } while (0)

#endif
