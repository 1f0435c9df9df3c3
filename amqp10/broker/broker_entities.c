/* The server's entity cache (entities/ent_cache.h) and what keeps it true.
 *
 * Links find their entity here, with no round trip to the database. The
 * cache is refilled whole at start and whenever the entity tables change
 * (sbemu_entities: plain SQL, the management plane, Config.json, another
 * emulator deleting an idle queue); after each refill every attached entity
 * link takes its entity's new properties (status, TTL, ForwardTo, lock
 * duration), and a link whose entity is gone, or was replaced by a new one of
 * the same name, is detached with MessagingEntityNotFound, as Service Bus does.
 *
 * A look-up that misses waits for a refill (one for all that wait) and looks
 * again: the NOTIFY of an entity created a moment ago may not have arrived
 * yet. Changes that arrive during a refill are folded into one more refill.
 * Message traffic never fires the trigger, so this runs only when entities
 * change. */
#include <proton/connection.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amqp_internal.h"
#include "ent_alloc.h"
#include "ent_log.h"

/* A look-up waiting for a refill; freed when answered. */
typedef struct entity_waiter {
    struct entity_waiter *next;
    bool any;  /* amqp_entities_after_refill: no name to look up, only the refill to wait for */
    char name[ENT_ENTITY_PATH_MAX + 1];
    amqp_entity_cb cb;
    void *ctx;
    uint64_t need; /* the first refill that started after this look-up missed */
} entity_waiter;

static void refill(amqp_server *srv);

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
static void refresh_links(amqp_server *srv)
{
    for (amqp_conn *c = srv->conns; c; c = c->next) {
        if (!c->wsi)
            continue;
        bool touched = false;
        for (amqp_link *lk = c->links; lk; lk = lk->next) {
            if (!has_entity(lk))
                continue;
            const ent_entity *e = ent_cache_find(srv->cache, lk->address.entity);
            if (!e || e->id != lk->entity.id) {
                detach_gone(lk);
            } else {
                lk->entity = *e;
                ent_cache_route(srv->cache, e, &lk->route);
                if (lk->role == LINK_ENTITY_OUT && lk->parked)
                    amqp_link_pump(lk); /* it may receive now (status) */
            }
            touched = true;
        }
        if (touched)
            amqp_conn_pump(c);
    }
}

static void answer(amqp_server *srv, const char *name, amqp_entity_cb cb, void *ctx)
{
    const ent_entity *e = srv->cache ? ent_cache_find(srv->cache, name) : NULL;
    if (!e) {
        cb(ctx, SB_ERR_NOT_FOUND, NULL, NULL);
        return;
    }
    ent_route route;
    ent_cache_route(srv->cache, e, &route);
    cb(ctx, SB_OK, e, &route);
}

static void on_loaded(void *ctx, sb_status st, const ent_entity *list, size_t n, const ent_rule_def *rules,
                      size_t nrules)
{
    amqp_server *srv = ctx;
    srv->loading = false;
    if (st != SB_OK || ent_cache_replace(srv->cache, list, n, rules, nrules))
        LOG_WARN("entities: the cache could not be refilled (%s); links keep what they had",
                 sb_status_name(st == SB_OK ? SB_ERR_INTERNAL : st));
    else
        refresh_links(srv);
    /* those who missed before this refill started look again, whatever it
     * found; later ones wait for the next (load_again is set for them) */
    entity_waiter *w = srv->waiters, **keep = &srv->waiters;
    srv->waiters = NULL;
    while (w) {
        entity_waiter *next = w->next;
        if (w->need > srv->refills) {
            w->next = NULL;
            *keep = w;
            keep = &w->next;
        } else {
            if (st == SB_OK && w->any)
                w->cb(w->ctx, SB_OK, NULL, NULL);
            else if (st == SB_OK)
                answer(srv, w->name, w->cb, w->ctx);
            else
                w->cb(w->ctx, st, NULL, NULL);
            ent_free(w);
        }
        w = next;
    }
    if (srv->load_again) {
        srv->load_again = false;
        refill(srv);
    }
}

static void refill(amqp_server *srv)
{
    if (srv->loading) {
        srv->load_again = true;
        return;
    }
    if (!srv->cache && !(srv->cache = ent_cache_new())) {
        LOG_ERROR("entities: out of memory");
        return;
    }
    srv->loading = true;
    srv->refills++;
    store_load_entities(srv->store, on_loaded, srv);
}

static void wait_for_refill(amqp_server *srv, bool any, const char *name, amqp_entity_cb cb, void *ctx)
{
    entity_waiter *w = ent_calloc(1, sizeof *w);
    if (!w) {
        cb(ctx, SB_ERR_INTERNAL, NULL, NULL);
        return;
    }
    w->any = any;
    snprintf(w->name, sizeof w->name, "%s", name);
    w->cb = cb;
    w->ctx = ctx;
    w->need = srv->refills + 1;
    w->next = srv->waiters;
    srv->waiters = w;
    if (srv->loading)
        srv->load_again = true; /* the refill under way may have been read before this change */
    else
        refill(srv);
}

void amqp_entity_lookup(amqp_server *srv, const char *name, amqp_entity_cb cb, void *ctx)
{
    if (srv->cache && ent_cache_generation(srv->cache) && ent_cache_find(srv->cache, name)) {
        answer(srv, name, cb, ctx);
        return;
    }
    wait_for_refill(srv, false, name, cb, ctx);
}

void amqp_entities_after_refill(amqp_server *srv, amqp_entity_cb cb, void *ctx)
{
    wait_for_refill(srv, true, "", cb, ctx);
}

void amqp_server_refresh_entities(amqp_server *srv) { refill(srv); }

void amqp_entities_free(amqp_server *srv)
{
    /* the store already failed every load in flight, answering the waiters */
    ent_cache_free(srv->cache);
    srv->cache = NULL;
}
