/* The namespaces the broker knows (broker.h), and a namespace's first use.
 *
 * The list is refilled with the entity cache (one load reads both, and
 * broker_entities.c puts them in place), so a
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
#include "ent_log.h"
#include "store_namespace.h"

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
        if (!q->b->namespaces)
            q->b->namespaces = ent_namespaces_new();
        ent_namespaces *r = q->b->namespaces;
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
