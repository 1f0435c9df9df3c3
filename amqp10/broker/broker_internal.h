/* What the files of amqp10/broker/ share. Nothing outside the broker
 * includes this; its face is broker.h. */
#ifndef BROKER_INTERNAL_H
#define BROKER_INTERNAL_H

#include <libwebsockets.h>

#include "broker.h"

/* How often the background sweep runs (expiry, lapsed locks, idle queues). */
#define BROKER_SWEEP_INTERVAL_MS 1000
/* Messages at rest in a topic (scheduled and due, or forwarded there by a
 * dead-letter) are routed this many at a time, under a lock this long (a
 * crash mid-route leaves them to the next try once it lapses); every topic
 * is looked at every this many sweeps besides when the sweep touched it. */
#define BROKER_TOPIC_PUMP_MAX 100
#define BROKER_TOPIC_PUMP_LOCK_MS 60000
#define BROKER_TOPIC_PUMP_SWEEPS 5

/* Ownership: created by broker_new, freed by broker_free; owns the cache,
 * the look-ups waiting for a refill and the topic pumps under way. */
struct broker {
    store *store; /* borrowed */
    broker_settings settings;
    broker_receivers receivers; /* all NULL until the wire sets them */
    struct lws_context *lws;
    lws_sorted_usec_list_t sweep_timer;
    bool sweeping, sweep_again;
    int64_t sweep_now_ms;    /* the wall time the running sweep looks at (each namespace adds its offset) */
    int sweep_parts;         /* of the running sweep, the parts (one per clock) still in the store */
    sb_status sweep_worst;   /* SB_OK, or what one of its parts failed with */
    int64_t replaced_generation; /* the last reset or restore made good here (broker_reset.c) */
    int replacing;               /* resets or restores of ours in the store: no sweep starts (broker.h) */
    uint64_t sweeps;
    ent_cache *cache;              /* every entity, refilled on sbemu_entities (broker_entities.c) */
    bool loading;                  /* a refill is in the store */
    uint64_t refills;              /* refills started so far */
    uint64_t clocks_stale_refill;  /* the refill that was in the store at the last reset or restore (0: none):
                                      it read the clocks from before, which it must not follow */
    bool load_again;               /* entities changed again while it was */
    struct entity_waiter *waiters; /* look-ups that missed, answered after the refill */
    ent_namespaces *namespaces;    /* every namespace, refilled with the cache (broker_namespaces.c) */
    struct topic_pump *pumps;      /* topics being routed now (broker_topic_pump.c) */
    broker_counts counts;          /* what happened to each entity's messages (GET /metrics) */
    /* faults on demand (broker_fault.c) */
    ent_fault_list faults;                            /* the rules in force (owned) */
    bool faults_loading, faults_load_again;
    uint64_t fault_reloads;                           /* reloads started so far */
    struct fault_reload_waiter *fault_reload_waiters; /* answered after a later reload */
    struct fault_wait *fault_waits;                   /* operations whose rule is firing or delaying */
};

/* Topics one publish may leave copies resting in, to be routed at once
 * after its commit; more wait for the periodic pump. */
#define BROKER_ROUTE_RESTING_MAX 8

/* broker_route.c: routes n messages into topic_id's subscriptions and
 * commits every copy (broker_publish's arguments). cb gets the topics that
 * copies now rest in (a ForwardTo chain ending in a topic), for the caller
 * to pump; none unless st is SB_OK. */
typedef void (*broker_routed_cb)(void *ctx, sb_status st, const int64_t *resting, size_t nresting);
void broker_route(broker *b, int64_t topic_id, const store_new_message *msgs, const amqp_msg *parsed, size_t n,
                  const uint8_t (*consume)[16], broker_routed_cb cb, void *ctx);

/* broker_sweep.c */
void broker_sweep_start(broker *b);
/* broker_topic_pump.c */
void broker_topic_pumps_free(broker *b);
/* broker_entities.c */
void broker_entities_free(broker *b);
/* broker_fault.c: stop ends the delays running (answered as cancelled) before
 * the loop goes; free lets go of the rules. */
void broker_faults_stop(broker *b);
void broker_faults_free(broker *b);
/* broker_namespaces.c */
void broker_namespaces_free(broker *b);

#endif
