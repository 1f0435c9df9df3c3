/* What the store tells GET /metrics about itself: commits, their latency and
 * size, what waits for the next one, whether PostgreSQL is there. store.c
 * keeps them (a few adds per commit, nothing per message); the HTTP plane
 * reads them at scrape time (store_get_figures). Process counters: they
 * start at zero with the process, as Prometheus expects of counters. */
#ifndef STORE_FIGURES_H
#define STORE_FIGURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* Upper bounds of the commit latency histogram, in seconds: from a commit on
 * a fast local disk (half a millisecond) to one that a busy or remote server
 * makes wait (five seconds). */
#define STORE_COMMIT_SECONDS_NBOUNDS 13
extern const double store_commit_seconds_bounds[STORE_COMMIT_SECONDS_NBOUNDS];
/* Upper bounds of the batch size histogram: operations per commit, a
 * message of a merged send or settlement counting as one. */
#define STORE_BATCH_SIZE_NBOUNDS 12
extern const double store_batch_size_bounds[STORE_BATCH_SIZE_NBOUNDS];
/* The most bounds a histogram here has. */
#define STORE_HISTOGRAM_BOUNDS_MAX 16

/* Observations per bucket (not cumulative: the writer adds them up), the
 * last above every bound, and their sum. */
typedef struct store_histogram {
    uint64_t counts[STORE_HISTOGRAM_BOUNDS_MAX + 1];
    double sum;
} store_histogram;

/* Counts v into the first bucket whose bound is >= v (or the last). */
void store_histogram_observe(store_histogram *h, const double *bounds, size_t nbounds, double v);

typedef struct store_figures {
    uint64_t commits;         /* transactions committed */
    uint64_t commit_failures; /* transactions that did not commit (an error rolled them back, or the connection broke) */
    store_histogram commit_seconds; /* from the batch's Sync sent to its answer, committed ones */
    store_histogram batch_size;     /* operations per committed transaction */
    size_t pending_ops;   /* operations waiting for the next commit */
    size_t inflight_ops;  /* operations of the commit in flight */
    size_t held_bytes;    /* bytes of every operation not yet settled (store_pending_bytes) */
    bool up;              /* connected to PostgreSQL */
} store_figures;

/* A copy of the store's figures now; the gauges are counted here, at the
 * scrape, not kept up to date per operation. */
void store_get_figures(const store *s, store_figures *out);

#endif
