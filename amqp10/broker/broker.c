/* The broker object: its life with the loop, and what follows a commit
 * (telling the receivers' holder, routing a dead letter that went to a
 * topic). Publishing, the topic pump, the sweep and the entity cache have a
 * file each. */
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
    }
    ent_free(b);
}

void broker_set_receivers(broker *b, const broker_receivers *r) { b->receivers = *r; }

void broker_attach_loop(broker *b, struct lws_context *ctx)
{
    b->lws = ctx;
    broker_refresh_entities(b); /* fill the entity cache before the first attach needs it */
    broker_sweep_start(b);
}

void broker_detach_loop(broker *b)
{
    if (!b || !b->lws)
        return;
    lws_sul_cancel(&b->sweep_timer);
    b->lws = NULL;
}

store *broker_store(const broker *b) { return b->store; }

const broker_settings *broker_settings_of(const broker *b) { return &b->settings; }

const ent_cache *broker_cache(const broker *b) { return b->cache; }

void broker_wake(broker *b, int64_t entity_id)
{
    if (b->receivers.wake)
        b->receivers.wake(b->receivers.ctx, entity_id);
}

void broker_rewind(broker *b, int64_t entity_id)
{
    if (b->receivers.rewind)
        b->receivers.rewind(b->receivers.ctx, entity_id);
}

void broker_after_settle(broker *b, int64_t entity_id, int64_t dead_letter_target, ent_settle_kind kind)
{
    ent_settle_after then = ent_settle_after_commit(kind);
    if (then.redeliver) {
        broker_rewind(b, entity_id);
        broker_wake(b, entity_id);
    }
    if (then.dead_lettered) {
        if (dead_letter_target) {
            broker_wake(b, dead_letter_target);       /* a queue's receivers */
            broker_topic_pump(b, dead_letter_target); /* a topic routes it now (no-op for a queue) */
        } else {
            broker_wake(b, entity_id); /* its dead-letter subqueue's receivers */
        }
    }
}
