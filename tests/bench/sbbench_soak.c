/* sbbench_soak: pacing and per-interval figures of `sbbench --mode soak`
 * (see sbbench_soak.h). Latencies are kept one by one for the current
 * interval and sorted when it is printed: exact percentiles, and at the rates
 * a soak runs (thousands per second) a minute is a few hundred kilobytes. */
#include "sbbench_soak.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NS_PER_S  1000000000ULL
#define NS_PER_US 1000ULL
#define LAT_MAX_US UINT32_MAX  /* a latency beyond ~71 minutes is kept as that */

/* Every latency of one kind in the current interval, in microseconds.
 * Owned by this file; emptied after each interval is printed. */
struct lat {
    uint32_t *us;
    size_t n, cap;
};

/* Counters of one interval, or of the whole run. */
struct tally {
    uint64_t accepted, completed, unconfirmed;
};

static struct {
    const char *label;
    uint64_t rate;
    uint64_t duration_ns, every_ns;
    uint64_t start_ns, interval_start_ns, end_ns;
    unsigned interval;          /* intervals printed so far */
    struct tally now, total;    /* now: the current interval */
    struct lat send, complete;
    bool over;
} soak;

uint64_t soak_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * NS_PER_S + (uint64_t)t.tv_nsec;
}

void soak_init(const char *label, uint64_t rate, int duration_s, int report_every_s)
{
    memset(&soak, 0, sizeof soak);
    soak.label = label;
    soak.rate = rate;
    soak.duration_ns = (uint64_t)duration_s * NS_PER_S;
    soak.every_ns = (uint64_t)report_every_s * NS_PER_S;
}

void soak_start(uint64_t now_ns)
{
    soak.start_ns = soak.interval_start_ns = now_ns;
    soak.end_ns = now_ns + soak.duration_ns;
}

uint64_t soak_due(uint64_t now_ns)
{
    if (soak.rate == 0)
        return UINT64_MAX;
    uint64_t t = now_ns < soak.end_ns ? now_ns : soak.end_ns;
    uint64_t ns = t - soak.start_ns;
    /* rate * ns / 1e9, the seconds split off first so that nothing overflows
     * (rate * 1e9 fits in 64 bits for any rate below 1.8e10/s). */
    return soak.rate * (ns / NS_PER_S) + soak.rate * (ns % NS_PER_S) / NS_PER_S;
}

static void lat_add(struct lat *l, uint64_t ns)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 4096;
        uint32_t *us = realloc(l->us, cap * sizeof *us);
        if (!us) {
            fprintf(stderr, "sbbench: %s: out of memory for latencies\n", soak.label);
            exit(1);
        }
        l->us = us;
        l->cap = cap;
    }
    uint64_t us = ns / NS_PER_US;
    l->us[l->n++] = us > LAT_MAX_US ? LAT_MAX_US : (uint32_t)us;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Nearest rank: the smallest latency with at least p % of them at or below it.
 * Sorted before the first call. "-" when there are none. */
static void lat_pct(const struct lat *l, unsigned p, char *out, size_t cap)
{
    if (l->n == 0) {
        snprintf(out, cap, "-");
        return;
    }
    size_t rank = (l->n * p + 99) / 100;  /* ceil(n * p / 100): at least 1 for n, p >= 1 */
    snprintf(out, cap, "%.2f", l->us[rank - 1] / 1000.0);
}

void soak_accepted(uint64_t sent_ns, uint64_t now_ns)
{
    soak.now.accepted++;
    lat_add(&soak.send, now_ns - sent_ns);
}

void soak_completed(uint64_t complete_ns, uint64_t now_ns)
{
    soak.now.completed++;
    if (complete_ns == 0)
        soak.now.unconfirmed++;
    else
        lat_add(&soak.complete, now_ns - complete_ns);
}

/* One line for the interval that ends at end_ns; counters and samples start again. */
static void print_interval(uint64_t end_ns)
{
    char s50[32], s99[32], c50[32], c99[32];
    double secs = (double)(end_ns - soak.interval_start_ns) / NS_PER_S;
    qsort(soak.send.us, soak.send.n, sizeof *soak.send.us, cmp_u32);
    qsort(soak.complete.us, soak.complete.n, sizeof *soak.complete.us, cmp_u32);
    lat_pct(&soak.send, 50, s50, sizeof s50);
    lat_pct(&soak.send, 99, s99, sizeof s99);
    lat_pct(&soak.complete, 50, c50, sizeof c50);
    lat_pct(&soak.complete, 99, c99, sizeof c99);
    soak.total.accepted += soak.now.accepted;
    soak.total.completed += soak.now.completed;
    soak.total.unconfirmed += soak.now.unconfirmed;
    soak.interval++;
    /* queued: accepted and not yet completed, over the run so far (in the
     * queue, or delivered and not yet settled); below 0 if the queue held
     * messages before the run. */
    printf("%s soak interval=%u t=%.0f secs=%.1f sent/s=%.0f completed/s=%.0f send_ms=%s/%s complete_ms=%s/%s"
           " queued=%" PRId64 "\n",
           soak.label, soak.interval, (double)(end_ns - soak.start_ns) / NS_PER_S, secs,
           secs > 0 ? soak.now.accepted / secs : 0.0, secs > 0 ? soak.now.completed / secs : 0.0, s50, s99, c50,
           c99, (int64_t)(soak.total.accepted - soak.total.completed));
    fflush(stdout);
    memset(&soak.now, 0, sizeof soak.now);
    soak.send.n = soak.complete.n = 0;
    soak.interval_start_ns = end_ns;
}

bool soak_tick(uint64_t now_ns)
{
    if (soak.over)
        return true;
    while (soak.interval_start_ns + soak.every_ns <= now_ns && soak.interval_start_ns + soak.every_ns <= soak.end_ns)
        print_interval(soak.interval_start_ns + soak.every_ns);
    if (now_ns < soak.end_ns)
        return false;
    if (soak.interval_start_ns < soak.end_ns)  /* a last interval shorter than --report-every */
        print_interval(soak.end_ns);
    soak.over = true;
    return true;
}

void soak_print_total(uint64_t now_ns, int window, const char *note)
{
    uint64_t end = soak.over ? soak.end_ns : now_ns;
    double secs = soak.start_ns > 0 && end > soak.start_ns ? (double)(end - soak.start_ns) / NS_PER_S : 0.0;
    /* What was counted in the interval under way when the run was cut short. */
    uint64_t accepted = soak.total.accepted + soak.now.accepted;
    uint64_t completed = soak.total.completed + soak.now.completed;
    uint64_t unconfirmed = soak.total.unconfirmed + soak.now.unconfirmed;
    double send_rate = secs > 0 ? accepted / secs : 0.0, complete_rate = secs > 0 ? completed / secs : 0.0;
    printf("%s mode=soak count=%" PRIu64 " conns=2 window=%d target=%" PRIu64 "/s sent=%" PRIu64
           " complete=%s secs=%.3f send_rate=%.0f complete_rate=%.0f rate=%.0f msg/s",
           soak.label, completed, window, soak.rate, accepted,
           unconfirmed == 0 ? "confirmed" : unconfirmed == completed ? "sent" : "mixed", secs, send_rate,
           complete_rate, send_rate < complete_rate ? send_rate : complete_rate);
    if (note)
        printf(" %s", note);
    printf("\n");
    fflush(stdout);
}

void soak_free(void)
{
    free(soak.send.us);
    free(soak.complete.us);
    memset(&soak.send, 0, sizeof soak.send);
    memset(&soak.complete, 0, sizeof soak.complete);
}
