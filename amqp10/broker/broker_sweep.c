/* The background sweep: once a second (and at once when the clock is moved)
 * the store expires messages, dead-letters lapsed locks past MaxDeliveryCount,
 * deletes idle queues and forgets old MessageIds; receivers of the queues it
 * touched are woken. Each step walks an index from its oldest deadline, so an
 * idle emulator pays a few index probes per sweep however much it holds. */
#include <stdlib.h>

#include "broker_internal.h"
#include "ent_alloc.h"
#include "ent_clock.h"
#include "ent_dead_letter.h"
#include "ent_log.h"
#include "ent_sweep.h"

static void sweep_timer(lws_sorted_usec_list_t *sul);

static void schedule(broker *b, int64_t ms)
{
    lws_sul_schedule(b->lws, 0, &b->sweep_timer, sweep_timer, (lws_usec_t)ms * LWS_US_PER_MS);
}

/* What the sweep did to messages, for GET /metrics (once per entity a sweep touched). */
static void on_counted(void *ctx, const store_sweep_count *counts, size_t n)
{
    broker *b = ctx;
    for (size_t i = 0; i < n; i++) {
        broker_count(b, counts[i].entity, BROKER_EV_EXPIRED, counts[i].expired);
        broker_count_dead_letters(b, counts[i].entity, ent_dead_letter_expired().reason,
                                  counts[i].expired_dead_lettered);
        broker_count_dead_letters(b, counts[i].entity, ent_dead_letter_max_delivery().reason, counts[i].exhausted);
    }
}

static void on_swept(void *ctx, sb_status st, const int64_t *touched, size_t n)
{
    broker *b = ctx;
    b->sweeping = false;
    if (st == SB_ERR_SERVER_BUSY)
        LOG_DEBUG("sweep: %s", sb_status_name(st)); /* the store said why, once */
    else if (st != SB_OK)
        LOG_WARN("sweep: %s", sb_status_name(st));
    if (st == SB_OK)
        b->lapsed_swept_ms = ++b->sweeps % BROKER_LAPSE_FULL_SCAN_SWEEPS && !b->sweep_stale ? b->sweep_now_ms : 0;
    b->sweep_stale = false;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || touched[i] != touched[i - 1]) {
            broker_rewind(b, touched[i]); /* lapsed locks went back: look from the start */
            broker_wake(b, touched[i]);
            broker_topic_pump(b, touched[i]); /* a scheduled topic message came due (no-op for others) */
            /* an expired or lapsed message may have been dead-lettered into a topic */
            const ent_entity *e = b->cache ? ent_cache_get(b->cache, touched[i]) : NULL;
            const ent_entity *dl = e ? ent_cache_dead_letter_target(b->cache, e) : NULL;
            if (dl)
                broker_topic_pump(b, dl->id);
        }
    if (st == SB_OK && b->sweeps % BROKER_TOPIC_PUMP_SWEEPS == 0)
        broker_topic_pump(b, 0);
    if (b->sweep_again) {
        b->sweep_again = false;
        broker_sweep_now(b);
    }
}

void broker_sweep_now(broker *b)
{
    if (b->sweeping) {
        b->sweep_again = true;
        return;
    }
    b->sweeping = true;
    /* what expired and lapsed messages become: entities/ent_sweep.h decides */
    ent_sweep_plan plan;
    if (ent_sweep_plan_make(b->cache, &plan)) {
        on_swept(b, SB_ERR_INTERNAL, NULL, 0);
        return;
    }
    /* Locks that lapsed since the last sweep (and a little before, for rows
     * that were busy then); every BROKER_LAPSE_FULL_SCAN_SWEEPS sweeps, all. */
    b->sweep_now_ms = ent_clock_now_ms();
    int64_t since = b->lapsed_swept_ms ? b->lapsed_swept_ms - BROKER_LAPSE_RECHECK_MS : 0;
    store_sweep_policy policy = {plan.dead_letter_on_expiry, plan.n_dead_letter_on_expiry, plan.forward_from,
                                 plan.forward_to, plan.n_forward, since > 0 ? since : 0, on_counted};
    store_sweep(b->store, b->sweep_now_ms, &policy, on_swept, b); /* copies the policy */
    ent_sweep_plan_free(&plan);
}

static void sweep_timer(lws_sorted_usec_list_t *sul)
{
    broker *b = lws_container_of(sul, broker, sweep_timer);
    broker_sweep_now(b);
    schedule(b, BROKER_SWEEP_INTERVAL_MS);
}

void broker_sweep_start(broker *b) { schedule(b, BROKER_SWEEP_INTERVAL_MS); }
