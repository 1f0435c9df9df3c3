/* The broker's entity cache (entities/ent_cache.h) and what keeps it true.
 *
 * Links find their entity here, with no round trip to the database. The
 * cache is refilled whole at start and whenever the entity tables change
 * (sbemu_entities: plain SQL, the management plane, Config.json, another
 * emulator deleting an idle queue); after each refill the receivers' holder
 * is told (broker_receivers.refreshed): every attached entity link takes its
 * entity's new properties, and a link whose entity is gone is detached.
 *
 * A look-up that misses waits for a refill (one for all that wait) and looks
 * again: the NOTIFY of an entity created a moment ago may not have arrived
 * yet. Changes that arrive during a refill are folded into one more refill.
 * Message traffic never fires the trigger, so this runs only when entities
 * change. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker_internal.h"
#include "ent_alloc.h"
#include "ent_clock.h"
#include "ent_log.h"

/* A look-up waiting for a refill; freed when answered. */
typedef struct entity_waiter {
    struct entity_waiter *next;
    bool any;  /* broker_after_refill: no name to look up, only the refill to wait for */
    int32_t ns;
    char name[ENT_ENTITY_PATH_MAX + 1];
    broker_entity_cb cb;
    void *ctx;
    uint64_t need; /* the first refill that started after this look-up missed */
} entity_waiter;

static void refill(broker *b);

static ent_namespaces *namespaces_of(broker *b)
{
    if (!b->namespaces)
        b->namespaces = ent_namespaces_new();
    return b->namespaces;
}

/* The clocks follow what the store read: an offset only grows (one that
 * went back came with its reset's NOTIFY, broker_replaced, which sets it),
 * and a namespace that is gone has none. A refill in the store when a reset
 * or restore came read the clocks from before it: following that read would
 * move a clock the restore set back forward again (and expire what it
 * restored); the refill broker_replaced asked for reads them after. */
static void follow_clocks(const ent_namespace *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (list[i].clock_offset_ms > ent_clock_offset_ms_in(list[i].id))
            ent_clock_set_offset_in(list[i].id, list[i].clock_offset_ms);
    const int32_t *ids;
    const int64_t *offsets;
    size_t moved = ent_clock_moved(&ids, &offsets);
    for (size_t k = moved; k-- > 0;) {
        bool known = false;
        for (size_t i = 0; i < n && !known; i++)
            known = list[i].id == ids[k];
        if (!known)
            ent_clock_set_offset_in(ids[k], 0);
    }
}

/* The namespaces and keys a refill read (-1: out of memory, the old ones stay). */
static int namespaces_replace(broker *b, const ent_namespace *list, size_t n, const ent_namespace_key *keys,
                              size_t nkeys, bool clocks_stale)
{
    ent_namespaces *r = namespaces_of(b);
    if (!r || ent_namespaces_replace(r, list, n) || ent_namespaces_set_keys(r, keys, nkeys))
        return -1;
    if (!clocks_stale)
        follow_clocks(list, n);
    return 0;
}


static int in_cache(void *ctx, int64_t id) { return ent_cache_get(ctx, id) != NULL; }

static void answer(broker *b, int32_t ns, const char *name, broker_entity_cb cb, void *ctx)
{
    const ent_entity *e = b->cache ? ent_cache_find(b->cache, ns, name) : NULL;
    if (!e) {
        cb(ctx, SB_ERR_NOT_FOUND, NULL, NULL);
        return;
    }
    ent_route route;
    ent_cache_route(b->cache, e, &route);
    cb(ctx, SB_OK, e, &route);
}

static void on_loaded(void *ctx, sb_status st, const ent_entity *list, size_t n, const ent_rule_def *rules,
                      size_t nrules, const ent_namespace *namespaces, size_t nnamespaces, const ent_namespace_key *keys,
                      size_t nkeys)
{
    broker *b = ctx;
    b->loading = false;
    bool clocks_stale = b->clocks_stale_refill == b->refills;
    if (st == SB_OK && namespaces_replace(b, namespaces, nnamespaces, keys, nkeys, clocks_stale))
        LOG_WARN("entities: the namespaces could not be refilled (out of memory); the old ones are kept");
    if (st != SB_OK || ent_cache_replace(b->cache, list, n, rules, nrules))
        LOG_WARN("entities: the cache could not be refilled (%s); links keep what they had",
                 sb_status_name(st == SB_OK ? SB_ERR_INTERNAL : st));
    else {
        if (b->receivers.refreshed)
            b->receivers.refreshed(b->receivers.ctx, b->cache);
        broker_counts_keep(&b->counts, in_cache, b->cache); /* a deleted entity's counters go with it */
    }
    /* those who missed before this refill started look again, whatever it
     * found; later ones wait for the next (load_again is set for them) */
    entity_waiter *w = b->waiters, **keep = &b->waiters;
    b->waiters = NULL;
    while (w) {
        entity_waiter *next = w->next;
        if (w->need > b->refills) {
            w->next = NULL;
            *keep = w;
            keep = &w->next;
        } else {
            if (st == SB_OK && w->any)
                w->cb(w->ctx, SB_OK, NULL, NULL);
            else if (st == SB_OK)
                answer(b, w->ns, w->name, w->cb, w->ctx);
            else
                w->cb(w->ctx, st, NULL, NULL);
            ent_free(w);
        }
        w = next;
    }
    if (b->load_again) {
        b->load_again = false;
        refill(b);
    }
}

static void refill(broker *b)
{
    if (b->loading) {
        b->load_again = true;
        return;
    }
    if (!b->cache && !(b->cache = ent_cache_new())) {
        LOG_ERROR("entities: out of memory");
        return;
    }
    b->loading = true;
    b->refills++;
    store_load_entities(b->store, on_loaded, b);
}

static void wait_for_refill(broker *b, bool any, int32_t ns, const char *name, broker_entity_cb cb, void *ctx)
{
    entity_waiter *w = ent_calloc(1, sizeof *w);
    if (!w) {
        cb(ctx, SB_ERR_INTERNAL, NULL, NULL);
        return;
    }
    w->any = any;
    w->ns = ns;
    snprintf(w->name, sizeof w->name, "%s", name);
    w->cb = cb;
    w->ctx = ctx;
    w->need = b->refills + 1;
    w->next = b->waiters;
    b->waiters = w;
    if (b->loading)
        b->load_again = true; /* the refill under way may have been read before this change */
    else
        refill(b);
}

void broker_entity_lookup(broker *b, int32_t ns, const char *name, broker_entity_cb cb, void *ctx)
{
    if (b->cache && ent_cache_generation(b->cache) && ent_cache_find(b->cache, ns, name)) {
        answer(b, ns, name, cb, ctx);
        return;
    }
    wait_for_refill(b, false, ns, name, cb, ctx);
}

void broker_after_refill(broker *b, broker_entity_cb cb, void *ctx)
{
    wait_for_refill(b, true, 0, "", cb, ctx);
}

void broker_refresh_entities(broker *b) { refill(b); }

void broker_entities_free(broker *b)
{
    /* the store already failed every load in flight, answering the waiters */
    ent_cache_free(b->cache);
    b->cache = NULL;
}
