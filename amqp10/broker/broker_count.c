/* The broker's counters for /metrics (broker_figures.h holds the table):
 * what its own files and the front doors add after each commit. A leaf of
 * its own, below the files that count, so that counting ties no circle
 * between them and broker.c. */
#include "broker_internal.h"

void broker_count(broker *b, int64_t entity_id, broker_event ev, uint64_t n)
{
    broker_counts_add(&b->counts, entity_id, ev, n);
}

void broker_count_dead_letters(broker *b, int64_t entity_id, const char *reason, uint64_t n)
{
    broker_counts_add_dead_letters(&b->counts, entity_id, reason, n);
}

void broker_count_tally(broker *b, const broker_counts *tally) { broker_counts_merge(&b->counts, tally); }

const broker_counts *broker_counts_of(const broker *b) { return &b->counts; }
