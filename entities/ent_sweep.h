/* What the background sweep does to messages whose time is up, decided per
 * entity from the cache (Service Bus "Message expiration", "Dead-letter
 * queues"): an expired message is dead-lettered (TTLExpiredException) where
 * its entity has DeadLetteringOnMessageExpiration, else dropped; and every
 * dead letter the sweep makes (expiry, a lock that lapsed on the last
 * delivery MaxDeliveryCount allows) goes where its entity's
 * ForwardDeadLetteredMessagesTo says. The store carries the plan out in one
 * statement per step (sql/store_sweep.c). */
#ifndef ENT_SWEEP_H
#define ENT_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "ent_cache.h"

/* Owned by its maker; free with ent_sweep_plan_free. */
typedef struct ent_sweep_plan {
    int64_t *dead_letter_on_expiry; /* entity ids */
    size_t n_dead_letter_on_expiry;
    int64_t *forward_from, *forward_to; /* forward_from[i]'s dead letters go to forward_to[i] */
    size_t n_forward;
} ent_sweep_plan;

/* The plan for every entity in c (NULL: an empty plan). 0, or -1 out of
 * memory (out is then empty). */
int ent_sweep_plan_make(const ent_cache *c, ent_sweep_plan *out);
void ent_sweep_plan_free(ent_sweep_plan *p);

#endif
