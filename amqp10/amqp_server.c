/* The server: every connection of this process, and what walks all of them.
 * The poll timer (parked receivers, session lock ticks, the periodic rewind),
 * what the broker tells its receivers' holder (wake, rewind, the entity
 * cache refilled), and the shutdown close. Connections themselves live in
 * amqp_conn.c; how bytes reach them, in amqp_bind_*.c. */
#include <proton/condition.h>
#include <proton/connection.h>
#include <stdio.h>
#include <stdlib.h>

#include "amqp_internal.h"
#include "ent_alloc.h"
#include "ent_clock.h"

static void wake_all(amqp_server *srv);

/* A claim in the store when the rewind comes was read before it: what it
 * found must not move claim_from past messages the rewind is about. */
static void rewind_link(amqp_link *lk)
{
    lk->claim_from = 0;
    lk->rewound = lk->claims > 0;
}

/* Both hints of entity_id (0: of every entity) go back to the start: a
 * message below them may be claimable again (amqp_hint.h). */
static void rewind_hints(amqp_server *srv, int64_t entity_id)
{
    amqp_hint_rewind(&srv->session_picks, entity_id);
    amqp_hint_rewind(&srv->claim_hints, entity_id);
}

static void poll_parked(lws_sorted_usec_list_t *sul)
{
    amqp_server *srv = lws_container_of(sul, amqp_server, poll_timer);
    int64_t now = ent_clock_wall_ms();
    if (now - srv->rewound_ms >= AMQP_CLAIM_REWIND_MS) {
        srv->rewound_ms = now;
        rewind_hints(srv, 0);
        for (amqp_conn *c = srv->conns; c; c = c->next)
            for (amqp_link *lk = c->links; lk; lk = lk->next)
                rewind_link(lk);
    }
    /* A connection whose links have nothing to do only needs its heartbeat
     * when it is due: thousands of idle connections must cost (almost) nothing. */
    for (amqp_conn *c = srv->conns; c; c = c->next) {
        bool touched = false;
        for (amqp_link *lk = c->links; lk; lk = lk->next)
            if (lk->session) {
                amqp_session_tick(lk);
                touched = true;
            }
        if (touched || now >= c->next_tick_ms)
            amqp_conn_pump(c);
    }
    wake_all(srv);
    lws_sul_schedule(srv->lws, 0, &srv->poll_timer, poll_parked, AMQP_POLL_INTERVAL_MS * LWS_US_PER_MS);
}

/* ---- what the broker tells us (broker_receivers) ---- */

static void wake_all(amqp_server *srv)
{
    for (amqp_conn *c = srv->conns; c; c = c->next) {
        bool touched = false; /* only a connection whose links did something has events to send */
        for (amqp_link *lk = c->links; lk; lk = lk->next) {
            if (lk->parked)
                amqp_link_pump(lk), touched = true;
            if (lk->session_waiting)
                amqp_session_retry(lk), touched = true;
            if (lk->starved) /* a starved link whose last sends were refused has no on_sent to wait for */
                amqp_link_top_up(lk), touched = true;
        }
        if (touched)
            amqp_conn_pump(c);
    }
}

static void on_rewind(void *ctx, int64_t entity_id)
{
    amqp_server *srv = ctx;
    rewind_hints(srv, entity_id);
    for (amqp_conn *c = srv->conns; c; c = c->next)
        for (amqp_link *lk = c->links; lk; lk = lk->next)
            if (lk->role == LINK_ENTITY_OUT && lk->entity.id == entity_id)
                rewind_link(lk);
}

/* The namespace was reset or restored (broker_replaced): every receiver looks
 * from the start (restored messages have lower sequence numbers than what it
 * claimed past), and one holding a session loses it: the reset deleted the
 * session's lock, which another receiver may take from now on. A receiver
 * whose lock attempt is in the store finds out at its next claim or tick. The
 * broker wakes every receiver next. */
static void on_replaced(void *ctx, int32_t ns)
{
    amqp_server *srv = ctx;
    rewind_hints(srv, 0); /* (every entity's: restored messages are below any hint) */
    for (amqp_conn *c = srv->conns; c; c = c->next) {
        bool touched = false;
        for (amqp_link *lk = c->links; lk; lk = lk->next) {
            if (lk->role != LINK_ENTITY_OUT || lk->entity.namespace_id != ns)
                continue;
            rewind_link(lk);
            if (lk->session_held && !lk->closed) {
                char desc[ENT_SESSION_ID_SIZE + 160];
                snprintf(desc, sizeof desc,
                         "The session lock was lost: the namespace was reset or restored, and the session '%s' "
                         "with it. Accept a new session.",
                         lk->session_id);
                lk->session_held = false; /* nothing to release: the row is gone */
                lk->parked = false;
                amqp_link_detach_error(lk, SB_ERR_SESSION_LOCK_LOST, desc);
                touched = true;
            }
        }
        if (touched)
            amqp_conn_pump(c);
    }
}

static void on_wake(void *ctx, int64_t entity_id)
{
    amqp_server *srv = ctx;
    if (!entity_id) {
        wake_all(srv);
        return;
    }
    for (amqp_conn *c = srv->conns; c; c = c->next) {
        bool any = false;
        for (amqp_link *lk = c->links; lk; lk = lk->next)
            /* a topic's commit (a publish) names the topic: its subscriptions' receivers wake */
            if (lk->role == LINK_ENTITY_OUT && (lk->parked || lk->session_waiting) &&
                (lk->entity.id == entity_id || lk->entity.topic_id == entity_id)) {
                if (lk->parked)
                    amqp_link_pump(lk);
                else
                    amqp_session_retry(lk);
                any = true;
            }
        if (any)
            amqp_conn_pump(c);
    }
}

static bool has_entity(const amqp_link *lk)
{
    return lk->open && !lk->closed &&
           (lk->role == LINK_ENTITY_IN || lk->role == LINK_ENTITY_OUT || lk->role == LINK_MGMT_REQUESTS);
}

static void detach_gone(amqp_link *lk)
{
    amqp_conn *c = lk->conn;
    const char *host = pn_connection_remote_hostname(c->driver.connection);
    /* the wording of an attach to a missing entity: the SDKs read "could not be found" */
    char desc[600];
    snprintf(desc, sizeof desc,
             "The messaging entity 'sb://%s/%s' could not be found (it was deleted). To know more visit "
             "https://aka.ms/sbResourceMgrExceptions.",
             host && *host ? host : "localhost", lk->address.entity);
    amqp_link_detach_error(lk, SB_ERR_NOT_FOUND, desc);
}

/* Every attached entity link takes what the cache now says. */
static void on_refreshed(void *ctx, const ent_cache *cache)
{
    amqp_server *srv = ctx;
    for (amqp_conn *c = srv->conns; c; c = c->next) {
        if (!c->wsi)
            continue;
        bool touched = false;
        for (amqp_link *lk = c->links; lk; lk = lk->next) {
            if (!has_entity(lk))
                continue;
            const ent_entity *e = ent_cache_find(cache, lk->entity.namespace_id, lk->address.entity);
            if (!e || e->id != lk->entity.id) {
                detach_gone(lk);
            } else {
                lk->entity = *e;
                ent_cache_route(cache, e, &lk->route);
                if (lk->role == LINK_ENTITY_OUT && lk->parked)
                    amqp_link_pump(lk); /* it may receive now (status) */
            }
            touched = true;
        }
        if (touched)
            amqp_conn_pump(c);
    }
}

amqp_server *amqp_server_new(broker *b, const amqp_settings *settings)
{
    amqp_server *srv = ent_calloc(1, sizeof *srv);
    if (!srv)
        return NULL;
    srv->events = &amqp_events;
    srv->broker = b;
    srv->store = broker_store(b);
    srv->settings = broker_settings_of(b);
    srv->faults = broker_faults(b);
    srv->wire = *settings;
    const char *ops[BROKER_DOOR_OPS_MAX];
    amqp_figures_init(srv, ops, amqp_mgmt_operation_names(ops, BROKER_DOOR_OPS_MAX));
    broker_set_receivers(b, &(broker_receivers){srv, on_wake, on_rewind, on_refreshed, on_replaced});
    return srv;
}

void amqp_server_attach_loop(amqp_server *srv, struct lws_context *ctx)
{
    srv->lws = ctx;
    lws_sul_schedule(ctx, 0, &srv->poll_timer, poll_parked, AMQP_POLL_INTERVAL_MS * LWS_US_PER_MS);
}

void amqp_server_detach_loop(amqp_server *srv)
{
    if (!srv || !srv->lws)
        return;
    lws_sul_cancel(&srv->poll_timer);
    srv->lws = NULL;
}

void amqp_server_free(amqp_server *srv)
{
    if (srv)
        broker_set_receivers(srv->broker, &(broker_receivers){0});
    ent_free(srv);
}

int amqp_server_connection_count(const amqp_server *srv) { return srv->nconns; }

void amqp_server_close_all(amqp_server *srv)
{
    for (amqp_conn *c = srv->conns; c; c = c->next) {
        pn_condition_t *cond = pn_connection_condition(c->driver.connection);
        amqp_condition_set(cond, sb_status_condition(SB_ERR_CONNECTION_FORCED), "The emulator is shutting down.");
        pn_connection_close(c->driver.connection);
        amqp_conn_pump(c);
    }
}

void amqp_server_protocols(amqp_server *srv, struct lws_protocols *raw, struct lws_protocols *ws,
                           struct lws_protocols *ws_amqp)
{
    *raw = amqp_bind_raw_protocol;
    *ws = amqp_bind_ws_protocol;
    *ws_amqp = amqp_bind_ws_amqp_protocol;
    raw->user = ws->user = ws_amqp->user = srv; /* conn_accept finds the server here */
}
