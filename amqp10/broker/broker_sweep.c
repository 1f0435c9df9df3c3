/* The background sweep: once a second (and at once when a clock is moved)
 * the store expires messages, dead-letters lapsed locks past MaxDeliveryCount,
 * deletes idle queues and forgets old MessageIds; receivers of the queues it
 * touched are woken. Each step walks an index from its oldest deadline, so an
 * idle emulator pays a few index probes per sweep however much it holds.
 *
 * Each namespace's deadlines are on its own clock (ent_clock.h): while no
 * clock has moved, a sweep is one op at the wall time, as it always was; else
 * one op per clock, each scoped to its namespaces' entities (the rest: the
 * entities of every namespace at real time). */
#include <stdlib.h>

#include "broker_internal.h"
#include "ent_alloc.h"
#include "ent_clock.h"
#include "ent_dead_letter.h"
#include "ent_log.h"
#include "ent_story.h"
#include "ent_sweep.h"
#include "store_namespace.h"

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

/* One part of the sweep (one clock's entities) is done; the sweep is, once
 * every part is. */
static void on_swept(void *ctx, sb_status st, const int64_t *touched, size_t n)
{
    broker *b = ctx;
    if (st != SB_OK && b->sweep_worst == SB_OK)
        b->sweep_worst = st;
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
    if (--b->sweep_parts > 0)
        return;
    st = b->sweep_worst;
    b->sweeping = false;
    if (st == SB_ERR_SERVER_BUSY)
        LOG_DEBUG("sweep: %s", sb_status_name(st)); /* the store said why, once */
    else if (st != SB_OK)
        LOG_WARN("sweep: %s", sb_status_name(st));
    if (st == SB_OK && ++b->sweeps % BROKER_TOPIC_PUMP_SWEEPS == 0)
        broker_topic_pump(b, 0);
    if (b->sweep_again) {
        b->sweep_again = false;
        broker_sweep_now(b);
    }
}

/* Whether offsets[k] is the first of its value in offsets[0..k]. */
static bool first_of_offset(const int64_t *offsets, size_t k)
{
    for (size_t j = 0; j < k; j++)
        if (offsets[j] == offsets[k])
            return false;
    return true;
}

/* The entities (from the cache) of the moved namespaces ids[0..n) whose
 * offset is offset, or of all of them (all); *count of them. NULL with
 * *count 0 for none (or out of memory: a part that sweeps nothing). */
static int64_t *entities_at(const broker *b, const int32_t *ids, const int64_t *offsets, size_t n, bool all,
                            int64_t offset, size_t *count)
{
    *count = 0;
    size_t total = b->cache ? ent_cache_count(b->cache) : 0;
    int64_t *out = total ? ent_malloc(total * sizeof *out) : NULL;
    for (size_t i = 0; out && i < total; i++) {
        const ent_entity *e = ent_cache_at(b->cache, i);
        for (size_t k = 0; k < n; k++)
            if (ids[k] == e->namespace_id && (all || offsets[k] == offset)) {
                out[(*count)++] = e->id;
                break;
            }
    }
    return out;
}

/* Namespaces idle past their AutoDeleteOnIdle were deleted (their NOTIFY
 * refills every emulator's entities). */
static void on_namespaces_swept(void *ctx, sb_status st, const char *const *names, size_t n)
{
    (void)ctx;
    if (st != SB_OK && st != SB_ERR_SERVER_BUSY)
        LOG_WARN("sweep: idle namespaces: %s", sb_status_name(st));
    for (size_t i = 0; i < n; i++)
        LOG_INFO("namespace '%s' was idle for its AutoDeleteOnIdle and is deleted, with everything in it", names[i]);
}

/* Whether a namespace this emulator knows may be deleted when idle: only then
 * does a sweep look (the default namespace never is). */
static bool any_idle_policy(const broker *b)
{
    const ent_namespaces *known = broker_namespaces(b);
    for (size_t i = 0; i < ent_namespaces_count(known); i++)
        if (ent_namespaces_at(known, i)->auto_delete_on_idle_ms > 0)
            return true;
    return false;
}

void broker_sweep_now(broker *b)
{
    if (b->sweeping || b->replacing) { /* (replacing: broker_replace_begin) */
        b->sweep_again = true;
        return;
    }
    if (any_idle_policy(b))
        store_namespace_sweep(b->store, ent_clock_wall_ms(), on_namespaces_swept, b);
    b->sweeping = true;
    b->sweep_worst = SB_OK;
    /* what expired and lapsed messages become: entities/ent_sweep.h decides */
    ent_sweep_plan plan;
    if (ent_sweep_plan_make(b->cache, &plan)) {
        b->sweep_parts = 1;
        on_swept(b, SB_ERR_INTERNAL, NULL, 0);
        return;
    }
    const int32_t *ids;
    const int64_t *offsets;
    size_t moved = ent_clock_moved(&ids, &offsets);
    b->sweep_now_ms = ent_clock_wall_ms();
    store_sweep_policy policy = {plan.dead_letter_on_expiry, plan.n_dead_letter_on_expiry, plan.forward_from,
                                 plan.forward_to, plan.n_forward, on_counted, NULL, 0, false, 0, 0};
    /* part k < moved sweeps the namespaces at offsets[k] (once per distinct
     * offset), part `moved` those at real time; every part is counted before
     * the first is submitted (a failing one may answer at once) */
    b->sweep_parts = 1;
    for (size_t k = 0; k < moved; k++)
        b->sweep_parts += first_of_offset(offsets, k);
    static const int64_t none[1] = {0}; /* an empty scope: no entity (NULL would be every one) */
    for (size_t k = 0; k <= moved; k++) {
        bool rest = k == moved; /* every entity but the moved namespaces' */
        if (!rest && !first_of_offset(offsets, k))
            continue;
        int64_t offset = rest ? 0 : offsets[k];
        size_t n = 0;
        int64_t *scope = moved ? entities_at(b, ids, offsets, moved, rest, offset, &n) : NULL;
        policy.scope = moved ? (scope ? scope : none) : NULL;
        policy.n_scope = n;
        policy.scope_in = !rest;
        policy.clock_offset_ms = offset;
        /* each message's story, kept on its namespace's clock */
        policy.story_before_ms = b->settings.story_retention_ms > 0
                                     ? ent_story_prune_before(b->sweep_now_ms + offset, b->settings.story_retention_ms)
                                     : 0;
        store_sweep(b->store, b->sweep_now_ms + offset, &policy, on_swept, b); /* copies the policy */
        ent_free(scope);
    }
    ent_sweep_plan_free(&plan);
}

static void sweep_timer(lws_sorted_usec_list_t *sul)
{
    broker *b = lws_container_of(sul, broker, sweep_timer);
    broker_sweep_now(b);
    schedule(b, BROKER_SWEEP_INTERVAL_MS);
}

void broker_sweep_start(broker *b) { schedule(b, BROKER_SWEEP_INTERVAL_MS); }

void broker_clock_moved(broker *b, int32_t ns, void (*cb)(void *ctx, sb_status st), void *ctx)
{
    store_clock_publish(b->store, ns, ent_clock_offset_ms_in(ns), cb, ctx);
    broker_sweep_now(b);
    broker_wake(b, 0);
}
