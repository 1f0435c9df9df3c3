/* The server: every connection of this process, and what walks all of them.
 * The poll timer (parked receivers, session lock ticks, the periodic rewind),
 * wakes after a commit or a clock move, and the shutdown close. Connections
 * themselves live in amqp_conn.c; how bytes reach them, in amqp_bind_*.c. */
#include <proton/condition.h>
#include <proton/connection.h>
#include <stdlib.h>

#include "amqp_internal.h"
#include "ent_alloc.h"
#include "ent_clock.h"

static void poll_parked(lws_sorted_usec_list_t *sul)
{
    amqp_server *srv = lws_container_of(sul, amqp_server, poll_timer);
    int64_t now = ent_clock_wall_ms();
    if (now - srv->rewound_ms >= AMQP_CLAIM_REWIND_MS) {
        srv->rewound_ms = now;
        for (amqp_conn *c = srv->conns; c; c = c->next)
            for (amqp_link *lk = c->links; lk; lk = lk->next)
                lk->claim_from = 0;
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
    amqp_server_wake_all(srv);
    lws_sul_schedule(srv->lws, 0, &srv->poll_timer, poll_parked, AMQP_POLL_INTERVAL_MS * LWS_US_PER_MS);
}

amqp_server *amqp_server_new(store *st, const amqp_settings *settings)
{
    amqp_server *srv = ent_calloc(1, sizeof *srv);
    if (!srv)
        return NULL;
    srv->store = st;
    srv->settings = *settings;
    return srv;
}

void amqp_server_attach_loop(amqp_server *srv, struct lws_context *ctx)
{
    srv->lws = ctx;
    amqp_server_refresh_entities(srv); /* fill the entity cache before the first attach needs it */
    lws_sul_schedule(ctx, 0, &srv->poll_timer, poll_parked, AMQP_POLL_INTERVAL_MS * LWS_US_PER_MS);
    amqp_sweep_start(srv);
}

void amqp_server_wake_all(amqp_server *srv)
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

void amqp_server_detach_loop(amqp_server *srv)
{
    if (!srv || !srv->lws)
        return;
    lws_sul_cancel(&srv->poll_timer);
    lws_sul_cancel(&srv->sweep_timer);
    srv->lws = NULL;
}

void amqp_server_free(amqp_server *srv)
{
    if (srv) {
        amqp_topic_pumps_free(srv);
        amqp_entities_free(srv);
    }
    ent_free(srv);
}

int amqp_server_connection_count(const amqp_server *srv) { return srv->nconns; }

void amqp_server_rewind(amqp_server *srv, int64_t entity_id)
{
    for (amqp_conn *c = srv->conns; c; c = c->next)
        for (amqp_link *lk = c->links; lk; lk = lk->next)
            if (lk->role == LINK_ENTITY_OUT && lk->entity.id == entity_id)
                lk->claim_from = 0;
}

void amqp_server_after_settle(amqp_server *srv, int64_t entity_id, int64_t dead_letter_target, ent_settle_kind kind)
{
    ent_settle_after then = ent_settle_after_commit(kind);
    if (then.redeliver) {
        amqp_server_rewind(srv, entity_id);
        amqp_server_wake(srv, entity_id);
    }
    if (then.dead_lettered) {
        if (dead_letter_target) {
            amqp_server_wake(srv, dead_letter_target); /* a queue's receivers */
            amqp_topic_pump(srv, dead_letter_target);  /* a topic routes it now (no-op for a queue) */
        } else {
            amqp_server_wake(srv, entity_id); /* its dead-letter subqueue's receivers */
        }
    }
}

void amqp_server_wake(amqp_server *srv, int64_t entity_id)
{
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

void amqp_server_close_all(amqp_server *srv)
{
    for (amqp_conn *c = srv->conns; c; c = c->next) {
        pn_condition_t *cond = pn_connection_condition(c->driver.connection);
        amqp_condition_set(cond, "amqp:connection:forced", "The emulator is shutting down.");
        pn_connection_close(c->driver.connection);
        amqp_conn_pump(c);
    }
}
