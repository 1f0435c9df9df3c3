/* The background sweep: once a second (and at once when the clock is moved)
 * the store expires messages, dead-letters lapsed locks past MaxDeliveryCount,
 * deletes idle queues and forgets old MessageIds; receivers of the queues it
 * touched are woken. Each step walks an index from its oldest deadline, so an
 * idle emulator pays a few index probes per sweep however much it holds. */
#include <stdlib.h>

#include "amqp_internal.h"
#include "ent_alloc.h"
#include "ent_clock.h"
#include "ent_log.h"

static void sweep_timer(lws_sorted_usec_list_t *sul);

static void schedule(amqp_server *srv, int64_t ms)
{
    lws_sul_schedule(srv->lws, 0, &srv->sweep_timer, sweep_timer, (lws_usec_t)ms * LWS_US_PER_MS);
}

static void on_swept(void *ctx, sb_status st, const int64_t *touched, size_t n)
{
    amqp_server *srv = ctx;
    srv->sweeping = false;
    if (st == SB_ERR_SERVER_BUSY)
        LOG_DEBUG("sweep: %s", sb_status_name(st)); /* the store said why, once */
    else if (st != SB_OK)
        LOG_WARN("sweep: %s", sb_status_name(st));
    if (st == SB_OK)
        srv->lapsed_swept_ms = ++srv->sweeps % AMQP_LAPSE_FULL_SCAN_SWEEPS ? srv->sweep_now_ms : 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || touched[i] != touched[i - 1]) {
            amqp_server_rewind(srv, touched[i]); /* lapsed locks went back: look from the start */
            amqp_server_wake(srv, touched[i]);
            amqp_topic_pump(srv, touched[i]); /* a scheduled topic message came due (no-op for others) */
            /* an expired or lapsed message may have been dead-lettered into a topic */
            const ent_entity *e = srv->cache ? ent_cache_get(srv->cache, touched[i]) : NULL;
            const ent_entity *dl = e ? ent_cache_dead_letter_target(srv->cache, e) : NULL;
            if (dl)
                amqp_topic_pump(srv, dl->id);
        }
    if (st == SB_OK && srv->sweeps % AMQP_TOPIC_PUMP_SWEEPS == 0)
        amqp_topic_pump(srv, 0);
    if (srv->sweep_again) {
        srv->sweep_again = false;
        amqp_sweep_now(srv);
    }
}

void amqp_sweep_now(amqp_server *srv)
{
    if (srv->sweeping) {
        srv->sweep_again = true;
        return;
    }
    srv->sweeping = true;
    /* what expired and lapsed messages become is decided here, from the cache */
    size_t n = srv->cache ? ent_cache_count(srv->cache) : 0, ndl = 0, nfw = 0;
    int64_t *dl = ent_malloc((n ? n : 1) * sizeof *dl), *from = ent_malloc((n ? n : 1) * sizeof *from),
            *to = ent_malloc((n ? n : 1) * sizeof *to);
    if (!dl || !from || !to) {
        ent_free(dl);
        ent_free(from);
        ent_free(to);
        on_swept(srv, SB_ERR_INTERNAL, NULL, 0);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const ent_entity *e = ent_cache_at(srv->cache, i);
        const ent_entity *t = ent_cache_dead_letter_target(srv->cache, e);
        if (e->dead_lettering_on_expiration)
            dl[ndl++] = e->id;
        if (t) {
            from[nfw] = e->id;
            to[nfw++] = t->id;
        }
    }
    /* Locks that lapsed since the last sweep (and a little before, for rows
     * that were busy then); every AMQP_LAPSE_FULL_SCAN_SWEEPS sweeps, all. */
    srv->sweep_now_ms = ent_clock_now_ms();
    int64_t since = srv->lapsed_swept_ms ? srv->lapsed_swept_ms - AMQP_LAPSE_RECHECK_MS : 0;
    store_sweep_policy policy = {dl, ndl, from, to, nfw, since > 0 ? since : 0};
    store_sweep(srv->store, srv->sweep_now_ms, &policy, on_swept, srv); /* copies the policy */
    ent_free(dl);
    ent_free(from);
    ent_free(to);
}

static void sweep_timer(lws_sorted_usec_list_t *sul)
{
    amqp_server *srv = lws_container_of(sul, amqp_server, sweep_timer);
    amqp_sweep_now(srv);
    schedule(srv, AMQP_SWEEP_INTERVAL_MS);
}

void amqp_sweep_start(amqp_server *srv) { schedule(srv, AMQP_SWEEP_INTERVAL_MS); }
