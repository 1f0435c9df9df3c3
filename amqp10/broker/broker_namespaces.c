/* The namespaces the broker knows (broker.h), and a namespace's first use.
 *
 * The list is refilled with the entity cache (one load reads both), so a
 * namespace made by another emulator, by the HTTP API or with plain SQL is
 * known after the next refill. A name not known yet is made in the store
 * (sbemu_namespace_ensure: one row, no entities; two emulators that make it
 * at once get the same row) and added here at once, so the client that named
 * it goes on without waiting for the refill its NOTIFY brings. Nothing here
 * runs per message: a connection resolves its namespace once. */
#include <stdio.h>
#include <string.h>

#include "broker_internal.h"
#include "ent_alloc.h"
#include "ent_clock.h"
#include "ent_log.h"
#include "store_namespace.h"

static ent_namespaces *namespaces_of(broker *b)
{
    if (!b->namespaces)
        b->namespaces = ent_namespaces_new();
    return b->namespaces;
}

/* The clocks follow what the store read: an offset only grows (one that
 * went back came with its reset's NOTIFY, broker_replaced, which sets it),
 * and a namespace that is gone has none. */
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

int broker_namespaces_replace(broker *b, const ent_namespace *list, size_t n, const ent_namespace_key *keys,
                              size_t nkeys)
{
    ent_namespaces *r = namespaces_of(b);
    if (!r || ent_namespaces_replace(r, list, n) || ent_namespaces_set_keys(r, keys, nkeys))
        return -1;
    follow_clocks(list, n);
    return 0;
}

void broker_namespaces_free(broker *b)
{
    ent_namespaces_free(b->namespaces);
    b->namespaces = NULL;
}

const ent_namespaces *broker_namespaces(const broker *b)
{
    static ent_namespaces *none; /* before the first refill, or out of memory: knows nothing */
    if (b->namespaces)
        return b->namespaces;
    if (!none)
        none = ent_namespaces_new();
    return none;
}

const char *broker_default_namespace_name(const broker *b)
{
    return b->settings.namespace_name && *b->settings.namespace_name ? b->settings.namespace_name
                                                                      : ENT_NAMESPACE_DEFAULT_NAME;
}

/* A first use waiting for the store. */
typedef struct ensure_req {
    broker *b;
    char name[ENT_NAMESPACE_NAME_SIZE];
    broker_namespace_cb cb;
    void *ctx;
} ensure_req;

static void on_ensured(void *ctx, sb_status st, int32_t id)
{
    ensure_req *q = ctx;
    if (st == SB_OK) {
        ent_namespaces *r = namespaces_of(q->b);
        if (r && !ent_namespaces_get(r, id)) {
            LOG_INFO("namespace '%s' (id %d) is in use", q->name, (int)id);
            if (ent_namespaces_add(r, id, q->name))
                LOG_WARN("namespace '%s': out of memory; it is known after the next refill", q->name);
        }
    } else {
        LOG_WARN("namespace '%s' could not be made: %s", q->name, sb_status_name(st));
    }
    q->cb(q->ctx, st, st == SB_OK ? id : 0);
    ent_free(q);
}

/* A look-up waiting for a refill. */
typedef struct find_req {
    broker *b;
    char name[ENT_NAMESPACE_NAME_SIZE];
    broker_namespace_cb cb;
    void *ctx;
} find_req;

static void on_refilled(void *ctx, sb_status st, const ent_entity *e, const ent_route *route)
{
    (void)e, (void)route;
    find_req *q = ctx;
    const ent_namespace *known =
        st == SB_OK && q->b->namespaces
            ? ent_namespaces_find(q->b->namespaces, q->name, broker_default_namespace_name(q->b))
            : NULL;
    if (known)
        q->cb(q->ctx, SB_OK, known->id);
    else
        q->cb(q->ctx, st == SB_OK ? SB_ERR_NOT_FOUND : st, 0);
    ent_free(q);
}

void broker_namespace_find(broker *b, const char *name, broker_namespace_cb cb, void *ctx)
{
    const char *own = broker_default_namespace_name(b);
    if (ent_namespace_is_default(name, own)) {
        cb(ctx, SB_OK, ENT_NAMESPACE_DEFAULT_ID);
        return;
    }
    const ent_namespace *known = b->namespaces ? ent_namespaces_find(b->namespaces, name, own) : NULL;
    if (known) {
        cb(ctx, SB_OK, known->id);
        return;
    }
    find_req *q = ent_calloc(1, sizeof *q);
    if (!q) {
        cb(ctx, SB_ERR_INTERNAL, 0);
        return;
    }
    q->b = b;
    snprintf(q->name, sizeof q->name, "%s", name);
    q->cb = cb;
    q->ctx = ctx;
    broker_after_refill(b, on_refilled, q); /* made a moment ago by another emulator, or with SQL */
}

void broker_namespace_resolve(broker *b, const char *name, broker_namespace_cb cb, void *ctx)
{
    const char *own = broker_default_namespace_name(b);
    if (ent_namespace_is_default(name, own)) {
        cb(ctx, SB_OK, ENT_NAMESPACE_DEFAULT_ID);
        return;
    }
    const ent_namespace *known = b->namespaces ? ent_namespaces_find(b->namespaces, name, own) : NULL;
    if (known) {
        cb(ctx, SB_OK, known->id);
        return;
    }
    ensure_req *q = ent_calloc(1, sizeof *q);
    if (!q) {
        cb(ctx, SB_ERR_INTERNAL, 0);
        return;
    }
    q->b = b;
    snprintf(q->name, sizeof q->name, "%s", name);
    q->cb = cb;
    q->ctx = ctx;
    store_namespace_ensure(b->store, q->name, on_ensured, q);
}
