/* The broker object: its life with the loop and what it lends. Publishing,
 * routing, the topic pump, the sweep, the entity cache and what follows a
 * commit have a file each. */
#include <stdlib.h>

#include "broker_internal.h"
#include "ent_alloc.h"

broker *broker_new(store *st, const broker_settings *settings)
{
    broker *b = ent_calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->store = st;
    b->settings = *settings;
    return b;
}

void broker_free(broker *b)
{
    if (b) {
        broker_topic_pumps_free(b);
        broker_entities_free(b);
        broker_namespaces_free(b);
        broker_counts_free(&b->counts);
        broker_faults_free(b);
    }
    ent_free(b);
}

void broker_set_receivers(broker *b, const broker_receivers *r) { b->receivers = *r; }

void broker_attach_loop(broker *b, struct lws_context *ctx)
{
    b->lws = ctx;
    broker_refresh_entities(b); /* fill the entity cache before the first attach needs it */
    broker_faults_reload(b, NULL, NULL);
    broker_sweep_start(b);
}

void broker_detach_loop(broker *b)
{
    if (!b || !b->lws)
        return;
    lws_sul_cancel(&b->sweep_timer);
    broker_faults_stop(b);
    b->lws = NULL;
}

store *broker_store(const broker *b) { return b->store; }

const broker_settings *broker_settings_of(const broker *b) { return &b->settings; }

const ent_cache *broker_cache(const broker *b) { return b->cache; }

