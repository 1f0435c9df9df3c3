/* The histogram bounds and arithmetic of store_figures.h; store.c keeps the figures. */
#include "store_figures.h"

const double store_commit_seconds_bounds[STORE_COMMIT_SECONDS_NBOUNDS] = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
};

const double store_batch_size_bounds[STORE_BATCH_SIZE_NBOUNDS] = {
    1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000,
};

void store_histogram_observe(store_histogram *h, const double *bounds, size_t nbounds, double v)
{
    size_t i = 0;
    while (i < nbounds && v > bounds[i])
        i++;
    h->counts[i]++;
    h->sum += v;
}

_Static_assert(STORE_COMMIT_SECONDS_NBOUNDS <= STORE_HISTOGRAM_BOUNDS_MAX, "a histogram holds its buckets");
_Static_assert(STORE_BATCH_SIZE_NBOUNDS <= STORE_HISTOGRAM_BOUNDS_MAX, "a histogram holds its buckets");
